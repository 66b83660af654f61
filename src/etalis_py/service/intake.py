"""The body of ``POST /rulesets/{id}/events``: one JSON event, a JSON
array of events, or JSON lines, each event as :meth:`Engine.emit_many`
takes it (``{"event": "reading", "args": [0.1, 40], "time": "2010-12-26T20:51:00-05:00"}``,
or ``start`` and ``end``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..events import Rejection

LINES_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines", "application/jsonlines")
"""The media types of JSON lines (any other body is read as one JSON value, or as lines if it is not one)."""


class BodyError(ValueError):
    """A body that holds no events at all: what is wrong, and what to send."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class Intake:
    """The events of a body, each with its position: its line for JSON
    lines, its 1-based index in an array (1 for a single event).  Lines
    that are not JSON are ``rejected`` at once, with their line."""

    items: list[Any]
    positions: list[int]
    rejected: list[Rejection] = field(default_factory=list)

    def position(self, index: int) -> int:
        """The position of the 1-based ``index``-th item."""
        return self.positions[index - 1]


def read_events(body: bytes, content_type: str = "") -> Intake:
    """The events of a request body; BodyError if it is not UTF-8, or is
    neither a JSON event, an array nor JSON lines."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BodyError(f"the body is not UTF-8 (byte {e.start})", "send events as UTF-8 JSON") from None
    media = content_type.split(";")[0].strip().lower()
    if media in LINES_TYPES:
        return _lines(text)
    try:
        value = json.loads(text)
    except ValueError as e:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1:
            return _lines(text)
        where = f" at line {e.lineno}, column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
        raise BodyError(f"malformed JSON{where}: {_reason(e)}",
                        'send an event {"event": "a", "args": [1], "time": 5}, an array of them, '
                        "or JSON lines (Content-Type: application/x-ndjson)") from None
    if isinstance(value, dict):
        return Intake([plain(value)], [1])
    if isinstance(value, list):
        return Intake([plain(v) for v in value], list(range(1, len(value) + 1)))
    raise BodyError(f"the body is a JSON {_KINDS.get(type(value), 'value')}, not an event",
                    'send an event {"event": "a", "args": [1], "time": 5}, an array of them, or JSON lines')


_KINDS: Mapping[type, str] = MappingProxyType(
    {bool: "boolean", int: "number", float: "number", str: "string", type(None): "null"})


def _lines(text: str) -> Intake:
    items: list[Any] = []
    positions: list[int] = []
    rejected: list[Rejection] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(plain(json.loads(line)))
            positions.append(number)
        except ValueError as e:
            rejected.append(Rejection(number, f"not JSON: {_reason(e)}"))
    return Intake(items, positions, rejected)


def plain(item: Any) -> Any:
    """An event ``{"event": .., "args": .., "time": ..}`` as the tuple
    ``(event, args, time)``, which :meth:`Engine.emit_many` reads several
    times faster (and judges the same); anything else as it is."""
    if type(item) is dict and "event" in item and "time" in item and item.keys() <= _PLAIN:
        return (item["event"], item.get("args", ()), item["time"])
    return item


_PLAIN = frozenset(("event", "args", "time"))


def _reason(e: ValueError) -> str:
    return e.msg if isinstance(e, json.JSONDecodeError) else str(e).split(";")[0]
