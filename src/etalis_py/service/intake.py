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

from ..errors import Rejection

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

    def take(self, item: Any, position: int) -> None:
        """Add the JSON value ``item`` found at ``position``: an object
        with a key an event does not have is rejected here, as the engine
        would ignore that key and lose its value (a column of a table
        written by ``DataFrame.to_json(orient="records")``)."""
        if type(item) is dict and not item.keys() <= _KEYS:
            unknown = ", ".join(repr(k) for k in item if k not in _KEYS)
            self.rejected.append(Rejection(position, f"unknown key {unknown[:200]}: an event has event, args and "
                                           "time (or start and end); put the values in args"))
        else:
            self.items.append(plain(item))
            self.positions.append(position)

    def position(self, index: int) -> int:
        """The position of the 1-based ``index``-th item."""
        return self.positions[index - 1]


def read_events(body: bytes, content_type: str = "") -> Intake:
    """The events of a request body; BodyError if it is not UTF-8 (JSON
    lines: a line that is not is rejected alone), or is neither a JSON
    event, an array nor JSON lines."""
    media = content_type.split(";")[0].strip().lower()
    if media in LINES_TYPES:
        return _lines(body)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BodyError(f"the body is not UTF-8 ({_place(body, e.start)})", "send events as UTF-8 JSON") from None
    try:
        value = json.loads(text)
    except ValueError as e:
        lines = [line for line in body.splitlines() if line.strip()]
        if len(lines) > 1:
            return _lines(body)
        where = f" at line {e.lineno}, column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
        raise BodyError(f"malformed JSON{where}: {_reason(e)}",
                        'send an event {"event": "a", "args": [1], "time": 5}, an array of them, '
                        "or JSON lines (Content-Type: application/x-ndjson)") from None
    if isinstance(value, (dict, list)):
        intake = Intake([], [])
        for position, item in enumerate(value if isinstance(value, list) else [value], start=1):
            intake.take(item, position)
        return intake
    raise BodyError(f"the body is a JSON {_KINDS.get(type(value), 'value')}, not an event",
                    'send an event {"event": "a", "args": [1], "time": 5}, an array of them, or JSON lines')


_KINDS: Mapping[type, str] = MappingProxyType(
    {bool: "boolean", int: "number", float: "number", str: "string", type(None): "null"})


def place(data: bytes, offset: int) -> tuple[int, int]:
    """The line and column (in characters, from 1) of byte ``offset`` of ``data``."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, len(data[line_start:offset].decode("utf-8", errors="replace")) + 1


def _place(data: bytes, offset: int) -> str:
    line, column = place(data, offset)
    return f"line {line}, column {column}: byte 0x{data[offset]:02x}"


def _lines(body: bytes) -> Intake:
    intake = Intake([], [])
    for number, line in enumerate(body.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            intake.take(json.loads(line.decode("utf-8")), number)
        except UnicodeDecodeError as e:
            intake.rejected.append(Rejection(number, f"not UTF-8 ({_place(line, e.start).partition(', ')[2]})"))
        except ValueError as e:
            intake.rejected.append(Rejection(number, f"not JSON: {_reason(e)}"))
    return intake


def plain(item: Any) -> Any:
    """An event ``{"event": .., "args": .., "time": ..}`` as the tuple
    ``(event, args, time)``, which :meth:`Engine.emit_many` reads several
    times faster (and judges the same); anything else as it is."""
    if type(item) is dict and "event" in item and "time" in item and item.keys() <= _PLAIN:
        return (item["event"], item.get("args", ()), item["time"])
    return item


_PLAIN = frozenset(("event", "args", "time"))
_KEYS = frozenset(("event", "args", "time", "start", "end"))


def _reason(e: ValueError) -> str:
    return e.msg if isinstance(e, json.JSONDecodeError) else str(e).split(";")[0]
