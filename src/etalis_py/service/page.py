"""The live page at ``/``: plain HTML and a small script that lists the
rule sets, shows detections as they arrive (over Server-Sent Events) in
local times with durations, as ``etalis table`` prints them, the timeline
of them, and the pending goals per rule."""

from __future__ import annotations

from importlib.resources import files


def page_html() -> str:
    return files(__package__).joinpath("page.html").read_text(encoding="utf-8")
