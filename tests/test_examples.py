"""The examples, run as a user runs them, on the real data they name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
DATA = ROOT.parent / "shared" / "data"


# 26 December 2010, 20:51 to 23:51 (the file's local times, read as UTC)
BOXING_DAY = {"start": 1293396660.0, "end": 1293407460.0}
ONE_DETECTION = "events read: 75083, accepted: 75083, rejected: 0, detections: 1, warnings: 0"


def run_on_jfk(example: str) -> tuple[list[dict[str, object]], str]:
    """`etalis run` of a blizzard example on the eight years of JFK
    observations: its detections and its summary line."""
    r = subprocess.run(
        [sys.executable, "-m", "etalis_py.cli", "run", str(ROOT / "examples/blizzard" / example),
         "--events", str(DATA / "weather/noaa-jfk-hourly-2010-2018.csv"),
         "--event", "reading", "--args", "VISIBILITY,WindSpeed",
         "--time", "DATE", "--time-format", "%d-%m-%Y %H:%M", "--quiet"],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()], r.stderr.splitlines()[-1]


def test_blizzard_example_finds_the_boxing_day_blizzard_in_eight_years_of_jfk_data() -> None:
    detections, summary = run_on_jfk("blizzard.etl")
    assert detections == [{"event": "blizzard", "args": [1293396660.0, 1293407460.0], **BOXING_DAY}]
    assert summary.startswith(ONE_DETECTION)


def test_the_papers_blizzard_settling_counter_warns_of_the_same_blizzard() -> None:
    # rules (39) and (40) of the ETALIS paper: a counter over blizzard
    # readings within 6 hours, a warning at 4 or more over 3 hours or more
    detections, summary = run_on_jfk("settling.etl")
    assert detections == [{"event": "blizzard_warning", "args": [4], **BOXING_DAY}]
    assert summary.startswith(ONE_DETECTION)


def test_the_blizzard_as_negation_over_a_window_finds_the_same_spell() -> None:
    # fnot: blizzard readings 3 to 6 hours apart with no clear reading between
    detections, summary = run_on_jfk("unbroken.etl")
    assert detections == [{"event": "blizzard", "args": [1293396660.0, 1293407460.0], **BOXING_DAY}]
    assert summary.startswith(ONE_DETECTION)
