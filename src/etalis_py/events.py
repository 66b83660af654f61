"""Events and detections as Python values, and their Prolog text form.

Time is numeric: seconds, integer or float.  A :class:`datetime.datetime`
becomes epoch seconds at the boundary; a naive datetime is taken as UTC so
that the same data gives the same times on every machine.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Union

from ._prolog import quote_atom

Time = Union[int, float]


class InvalidEvent(ValueError):
    """An event that cannot be sent to the engine; the message is the reason."""


def to_time(value: Any) -> Time:
    """A time in seconds from a number or a datetime."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return float(value.timestamp())
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidEvent(f"time {value!r} is not a number or a datetime")
    if isinstance(value, numbers.Integral):
        return int(value)
    f = float(value)
    if not math.isfinite(f):
        raise InvalidEvent(f"time {value!r} is not finite")
    return f


@dataclass(frozen=True)
class Event:
    """An occurrence of event ``name(*args)`` over ``[start, end]``."""

    name: str
    args: tuple[Any, ...] = ()
    start: Time = 0
    end: Time = 0

    @classmethod
    def at(cls, name: str, *args: Any, time: Any) -> "Event":
        t = to_time(time)
        return cls(name, tuple(args), t, t)

    @classmethod
    def coerce(cls, item: Any) -> "Event":
        """An Event from an Event, a mapping with ``event``, ``args`` and
        ``time`` (or ``start`` and ``end``), or a tuple ``(name, args, time)``
        or ``(name, args, start, end)``."""
        if isinstance(item, Event):
            return item
        if isinstance(item, Mapping):
            return _from_mapping(item)
        if isinstance(item, Sequence) and not isinstance(item, str):
            if len(item) == 3:
                name, args, time = item
                t = to_time(time)
                return cls(_name(name), _args(args), t, t)
            if len(item) == 4:
                name, args, start, end = item
                return cls(_name(name), _args(args), to_time(start), to_time(end))
        raise InvalidEvent(
            f"{item!r} is not an event: give an Event, a dict with event/args/time, "
            "or a tuple (name, args, time) or (name, args, start, end)"
        )

    def to_prolog(self) -> str:
        """The line ``event(Term, [Start, End]).`` that the engine reads."""
        return f"event({event_term(self.name, self.args)}, [{_number(self.start)}, {_number(self.end)}]).\n"


def event_line(item: Any, names: dict[str, str]) -> str:
    """The engine's input line for one item of :meth:`Engine.emit_many`;
    a fast path for ``(name, args, time)`` tuples of plain values, the
    general one (:meth:`Event.coerce`) for everything else.  ``names``
    caches quoted event names."""
    if type(item) is tuple and len(item) == 3:
        name, args, time = item
        kind = type(time)
        if type(name) is str and type(args) in (tuple, list) and (
            kind is int or (kind is float and math.isfinite(time))
        ):
            functor = names.get(name)
            if functor is None:
                functor = names[name] = quote_atom(name) if name else ""
            if functor:
                if args:
                    return f"event({functor}({','.join(map(prolog_value, args))}), {time!r}).\n"
                return f"event({functor}, {time!r}).\n"
    return Event.coerce(item).to_prolog()


def _from_mapping(item: Mapping[str, Any]) -> Event:
    if "event" not in item:
        raise InvalidEvent('missing "event"')
    name = _name(item["event"])
    args = _args(item.get("args", ()))
    if "time" in item:
        t = to_time(item["time"])
        return Event(name, args, t, t)
    if "start" in item and "end" in item:
        return Event(name, args, to_time(item["start"]), to_time(item["end"]))
    raise InvalidEvent('missing "time" (or "start" and "end")')


def _name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidEvent(f"event name {name!r} is not a non-empty string")
    return name


def _args(args: Any) -> tuple[Any, ...]:
    if isinstance(args, (list, tuple)):
        return tuple(args)
    raise InvalidEvent(f"args {args!r} is not a list")


def event_term(name: str, args: Sequence[Any]) -> str:
    """``name(args...)`` in Prolog syntax."""
    functor = quote_atom(name)
    if not args:
        return functor
    return f"{functor}({','.join(prolog_value(a) for a in args)})"


def prolog_value(value: Any) -> str:
    """A Python value as Prolog text: str becomes an atom, bool the atoms
    true/false, numbers numbers, lists and tuples lists."""
    kind = type(value)
    if kind is int:
        return str(value)
    if kind is float and math.isfinite(value):
        return repr(value)
    if isinstance(value, str):
        return quote_atom(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise InvalidEvent(f"argument {value!r} is not a finite number")
        return repr(f)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(prolog_value(v) for v in value) + "]"
    if isinstance(value, datetime):
        return _number(to_time(value))
    if value is None:
        raise InvalidEvent("an argument is missing (None)")
    raise InvalidEvent(f"argument {value!r} of type {type(value).__name__} cannot be an event argument")


def _number(t: Time) -> str:
    return str(t) if isinstance(t, int) else repr(t)


@dataclass(frozen=True)
class Detection:
    """A complex event that a rule detected over ``[start, end]``.

    Arguments come back as Python values: atoms and strings as ``str``,
    numbers as ``int`` or ``float``, lists as ``list``, other compound terms
    as their Prolog text.  With ``explain=True``, ``provenance`` holds the
    input events it was built from (as Detection values of those events).
    """

    event: str
    args: tuple[Any, ...]
    start: Time
    end: Time
    provenance: tuple["Detection", ...] = ()

    @classmethod
    def from_json(cls, line: str) -> "Detection":
        return cls.from_dict(json.loads(line))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Detection":
        provenance = tuple(cls.from_dict(p) for p in d.get("provenance", ()))
        return cls(d["event"], tuple(d["args"]), d["start"], d["end"], provenance)

    def __repr__(self) -> str:
        text = f"Detection(event={self.event!r}, args={self.args!r}, start={self.start!r}, end={self.end!r}"
        return text + (f", provenance={self.provenance!r})" if self.provenance else ")")

    def to_json(self) -> str:
        """The line format of ``etalis run``."""
        return json.dumps(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"event": self.event, "args": list(self.args), "start": self.start, "end": self.end}
        if self.provenance:
            d["provenance"] = [p.to_dict() for p in self.provenance]
        return d


@dataclass(frozen=True)
class Rejection:
    """An input item that was not processed, and why.

    ``line`` is the line number in a file, or the 1-based position in an
    iterable given to :meth:`Engine.emit_many`.
    """

    line: int
    reason: str
