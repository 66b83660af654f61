"""Events and detections as Python values, and their Prolog text form.

Time is numeric: seconds, integer or float.  :func:`to_time` is the one
reader of times at the boundary (``emit(at=...)``, JSONL and CSV files,
``emit_frame``): numbers, ISO 8601 text, datetimes, pandas Timestamps and
numpy datetime64 values.  A time without a zone is taken as UTC (or as the
zone given) so that the same data gives the same times on every machine.
Detections give their times back as numbers (``start``, ``end``) and as
UTC datetimes (``start_time``, ``end_time``).
"""

from __future__ import annotations

import html
import json
import math
import numbers
import re
import reprlib
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from itertools import repeat
from typing import Any, Optional, Union
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .bridge.prolog_text import compound_text, input_term, interval_text, number_text, quote_atom
from .errors import EventError
from .errors import Rejection as Rejection  # defined with the errors, which carry rejections; read here by every input

Time = Union[int, float]
Zone = Union[str, tzinfo, None]

InvalidEvent = EventError
"""The former name of :class:`~etalis_py.errors.EventError`, kept as an alias."""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def zone(tz: Zone) -> tzinfo:
    """The time zone ``tz`` names: a tzinfo, an IANA name such as
    ``"Europe/Berlin"``, ``"UTC"``, or None for UTC."""
    if tz is None:
        return timezone.utc
    if isinstance(tz, tzinfo):
        return tz
    if tz.upper() in ("UTC", "Z"):
        return timezone.utc
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {tz!r}: give an IANA name such as 'Europe/Berlin', or 'UTC'") from None


def to_time(value: Any, tz: Zone = None) -> Time:
    """Seconds since 1970-01-01 UTC of a time given as a number (seconds,
    kept as it is), a numeric text, ISO 8601 text (``2010-12-26T20:51:00Z``,
    ``2010-12-26 20:51``, ``...+01:00``), a :class:`datetime.datetime`
    (pandas Timestamps are ones) or a numpy datetime64.

    A time without a zone is in ``tz`` (default UTC).  Raises
    :class:`~etalis_py.errors.EventError` saying why a value is no time."""
    if isinstance(value, datetime):
        if value != value:  # pandas NaT
            raise InvalidEvent("time is missing (NaT)")
        if value.tzinfo is None:
            value = value.replace(tzinfo=zone(tz))
        return float(value.timestamp())
    if isinstance(value, str):
        return _text_time(value, tz)
    if isinstance(value, bool):
        raise InvalidEvent(f"time {value!r} is not a number or a date")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise InvalidEvent(f"time {value!r} is not finite")
        return f
    if type(value).__name__ == "datetime64":  # numpy, imported by whoever made it
        if value != value:
            raise InvalidEvent("time is missing (NaT)")
        nanoseconds = value.astype("datetime64[ns]").astype("int64")
        return to_time(_EPOCH + timedelta(microseconds=int(nanoseconds) // 1000), tz)
    raise InvalidEvent(f"time {value!r} is not a number, an ISO 8601 text or a datetime")


# A number written in a text field (CSV, Parquet, JSONL times, ...): ASCII
# decimal digits only, as JSON, pandas and Spark read them, with a sign, a
# dot at either end, an exponent, or a spelling of infinity or NaN.  Python's
# int() and float() take more (other scripts' digits such as '١٢٣', and
# '1_000'), which are texts here.
NUMERAL = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE)


def read_number(text: str) -> Optional[Time]:
    """``text`` (stripped) as an int, or else a float (maybe infinite or
    NaN), or None if it is no ASCII numeral (:data:`NUMERAL`)."""
    text = text.strip()
    if not NUMERAL.fullmatch(text):
        return None
    try:
        return int(text)
    except ValueError:
        return float(text)


def _text_time(value: str, tz: Zone) -> Time:
    text = value.strip()
    number = read_number(text)
    if number is not None:
        if not math.isfinite(number):
            raise InvalidEvent(f"time {text!r} is not finite")
        return number
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidEvent(f"time {text!r} is not a number or an ISO 8601 date") from None
    return to_time(dt, tz)


def to_datetime(t: Time, tz: Zone = None) -> datetime:
    """The aware datetime of ``t`` seconds since 1970-01-01 UTC, in ``tz``
    (default UTC)."""
    return (_EPOCH + timedelta(seconds=t)).astimezone(zone(tz))


def format_time(t: Time, fmt: Optional[str] = None, tz: Zone = None) -> str:
    """``t`` seconds as text: ISO 8601 (``2010-12-26T20:51:00Z``; with its
    offset in another zone) or, with ``fmt``, a strftime format; in ``tz``
    (default UTC)."""
    dt = to_datetime(t, tz)
    if fmt is not None:
        return dt.strftime(fmt)
    text = dt.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") and dt.tzinfo is timezone.utc else text


def format_duration(seconds: Time) -> str:
    """A duration for people: ``45s``, ``12m 05s``, ``3h 00m``, ``2d 03h 00m``."""
    if seconds < 60:
        return f"{seconds:g}s"
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h {minutes:02d}m"
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s"


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
            f"{reprlib.repr(item)} is not an event: give an Event, a dict with event/args/time, "
            "or a tuple (name, args, time) or (name, args, start, end)"
        )

    def to_prolog(self) -> str:
        """The line ``event(Term, [Start, End]).`` that the engine reads."""
        return self.to_term() + ".\n"

    def to_term(self) -> str:
        """The term ``event(Term, [Start, End])`` of :meth:`to_prolog`,
        without its full stop (an element of a batch list)."""
        return input_term(event_term(_name(self.name), _args(self.args)), interval_text(self.start, self.end))


NOTHING = "[]"
"""The term of a batch list for a line (or row) with no event to process."""


def batch_list(terms: Sequence[str]) -> str:
    """The text of a batch of input terms as the engine's ``feed`` request
    of a ``list`` takes it: one Prolog list, an element a line.  Each term is
    the text of an event term (``event(a(1), 5)``, no full stop) or
    NOTHING, and holds no newline."""
    return "[" + ",\n".join(terms) + "]"


def event_element(item: Any, names: dict[str, str]) -> str:
    """The engine's input term for one item of :meth:`Engine.emit_many`
    (``event(name(args), time)``, no full stop: an element of a batch
    list); a fast path for ``(name, args, time)`` tuples of plain values,
    the general one (:meth:`Event.coerce`) for everything else.  ``names``
    caches quoted event names."""
    if type(item) is tuple and len(item) == 3:
        term = plain_element(*item, names)
        if term is not None:
            return term
    return Event.coerce(item).to_term()


def plain_element(name: Any, args: Any, time: Any, names: dict[str, str]) -> Optional[str]:
    """The input term of event ``name(args)`` at ``time`` if the name is a
    non-empty str, the args a list or tuple and the time an int or a finite
    float, else None (the general way, :meth:`Event.coerce`, checks it and
    says why); it raises what the general way raises for a bad argument."""
    kind = type(time)
    if type(name) is str and type(args) in (tuple, list) and (
        kind is int or (kind is float and math.isfinite(time))
    ):
        functor = names.get(name)
        if functor is None:
            functor = names[name] = text_atom(name) if name else ""
        if functor:
            return input_term(compound_text(functor, map(prolog_value, args)), repr(time))
    return None


EVENT_KEYS = ("event", "args", "time", "start", "end")
"""The keys of an event given as a dict."""


def known_keys(item: Any) -> None:
    """Raise InvalidEvent naming the first key of the dict ``item`` that is
    not one of EVENT_KEYS (a misspelt ``time`` or ``args`` would otherwise
    be left aside, and the event read without it); other items pass."""
    if isinstance(item, Mapping):
        for key in item:
            if key not in EVENT_KEYS:
                raise InvalidEvent(f"unknown key {reprlib.repr(key)} (an event's keys are event, args, and time "
                                   "or start and end)")


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
        raise InvalidEvent(f"event name {reprlib.repr(name)} is not a non-empty string")
    return name


def _args(args: Any) -> tuple[Any, ...]:
    if isinstance(args, (list, tuple)):
        return tuple(args)
    raise InvalidEvent(f"args {reprlib.repr(args)} is not a list")


MAX_NESTING = 100
"""How deep lists may nest in an event argument (and JSON in a line)."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def text_atom(text: str) -> str:
    """``text`` as a quoted Prolog atom; InvalidEvent if it holds a lone
    surrogate (text decoded from bytes that were not UTF-8, or a JSON
    escape such as \\udce9), which is no character."""
    if not text.isascii():
        bad = _SURROGATE.search(text)
        if bad:
            raise InvalidEvent(f"text {reprlib.repr(text)} holds a lone surrogate (U+{ord(bad.group()):04X}), "
                               "which is not a character")
    return quote_atom(text)


def event_term(name: str, args: Sequence[Any]) -> str:
    """``name(args...)`` in Prolog syntax."""
    return compound_text(text_atom(name), map(prolog_value, args))


def prolog_value(value: Any) -> str:
    """A Python value as Prolog text: str becomes an atom, bool the atoms
    true/false, numbers numbers, lists and tuples lists."""
    kind = type(value)
    if kind is int:
        return str(value)
    if kind is float and math.isfinite(value):
        return repr(value)
    if isinstance(value, str):
        return text_atom(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise InvalidEvent(f"argument {value!r} is not a finite number (NaN, infinite, or too large)")
        return repr(f)
    if isinstance(value, (list, tuple)):
        return _prolog_list(value, 1)
    if isinstance(value, datetime):
        return number_text(to_time(value))
    if value is None:
        raise InvalidEvent("an argument is missing (None)")
    raise InvalidEvent(f"argument {reprlib.repr(value)} of type {type(value).__name__} cannot be an event argument")


def _prolog_list(items: Sequence[Any], depth: int) -> str:
    """A list argument nested ``depth`` deep as Prolog text."""
    if depth > MAX_NESTING:
        raise InvalidEvent(f"an argument is nested deeper than {MAX_NESTING} levels")
    return "[" + ",".join(
        _prolog_list(v, depth + 1) if isinstance(v, (list, tuple)) else prolog_value(v) for v in items
    ) + "]"


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Detection:
    """A complex event that a rule detected over ``[start, end]``.

    Arguments come back as Python values: atoms and strings as ``str``,
    numbers as ``int`` or ``float``, lists as ``list``, other compound terms
    as their Prolog text.  ``start`` and ``end`` are seconds as the events
    gave them; ``start_time``, ``end_time`` and ``duration`` are the same as
    UTC datetimes and a timedelta, and ``str(d)`` reads
    ``blizzard(1.0) 2010-12-26 20:51 → 23:51 UTC (3h 00m)``.  With
    ``explain=True``, ``provenance`` holds the input events it was built
    from (as Detection values of those events).
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
        provenance = d.get("provenance")
        return cls(d["event"], tuple(d["args"]), d["start"], d["end"],
                   tuple(map(cls.from_dict, provenance)) if provenance else ())

    @classmethod
    def from_row(cls, row: list[Any]) -> "Detection":
        """The detection of a row as the engine writes it for Python,
        ``[event, args, start, end]`` and, with provenance, the rows of the
        input occurrences fifth.  The values are the engine's own, already
        checked: the slots are set directly, which costs two thirds of
        going through the frozen dataclass's ``__init__``."""
        made = object.__new__(cls)
        event, args, start, end, provenance = _SETTERS
        event(made, row[0])
        args(made, tuple(row[1]))
        start(made, row[2])
        end(made, row[3])
        provenance(made, tuple(map(cls.from_row, row[4])) if len(row) > 4 else ())
        return made

    @classmethod
    def made(cls, events: Sequence[str], args: Sequence[tuple[Any, ...]], starts: Sequence[Time],
             ends: Sequence[Time], provenance: Optional[Sequence[tuple["Detection", ...]]] = None,
             ) -> list["Detection"]:
        """The detections ``events[i](*args[i])`` over ``[starts[i], ends[i]]``
        (no provenance unless given), made field by field over the whole
        columns: the engine's values, already checked, so that a detection
        costs no Python call of its own (the frozen ``__init__`` costs three
        times as much).  ValueError if the columns differ in length."""
        columns = (events, args, starts, ends) + (() if provenance is None else (provenance,))
        if len(set(map(len, columns))) > 1:
            raise ValueError(f"the columns of Detection.made differ in length: {', '.join(str(len(c)) for c in columns)}")
        made = list(map(object.__new__, repeat(cls, len(events))))
        for setter, column in zip(_SETTERS, (events, args, starts, ends)):
            deque(map(setter, made, column), 0)
        deque(map(_SETTERS[4], made, repeat(()) if provenance is None else provenance), 0)
        return made

    def __getstate__(self) -> dict[str, Any]:
        """The fields by name: the state a pickle holds (as it did when a
        Detection kept its fields in a ``__dict__``, so that pickles of
        either kind load)."""
        return {"event": self.event, "args": self.args, "start": self.start, "end": self.end,
                "provenance": self.provenance}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    @property
    def start_time(self) -> datetime:
        """``start`` as an aware UTC datetime (``.astimezone(tz)`` for another zone)."""
        return to_datetime(self.start)

    @property
    def end_time(self) -> datetime:
        """``end`` as an aware UTC datetime."""
        return to_datetime(self.end)

    @property
    def duration(self) -> timedelta:
        """``end - start`` as a timedelta."""
        return timedelta(seconds=self.end - self.start)

    def __repr__(self) -> str:
        text = f"Detection(event={self.event!r}, args={self.args!r}, start={self.start!r}, end={self.end!r}"
        return text + (f", provenance={self.provenance!r})" if self.provenance else ")")

    def __str__(self) -> str:
        return self.format()

    def term(self) -> str:
        """``event(arg, ...)`` as people read it: texts unquoted."""
        return f"{self.event}({', '.join(map(_show, self.args))})" if self.args else self.event

    def format(self, tz: Zone = None, fmt: Optional[str] = None) -> str:
        """The detection as one line: its term, its interval in ``tz``
        (default UTC; ``fmt`` a strftime format for both ends) and its
        duration, e.g. ``blizzard(1.0) 2010-12-26 20:51 → 23:51 UTC (3h 00m)``.
        Times out of the datetime range are shown as numbers."""
        try:
            start, end = to_datetime(self.start, tz), to_datetime(self.end, tz)
        except (OverflowError, ValueError, OSError):
            return f"{self.term()} [{self.start!r}, {self.end!r}]"
        if fmt is not None:
            first, last = start.strftime(fmt), end.strftime(fmt)
        else:
            first, last = _readable(start, end)
        where = "UTC" if tz is None else start.tzname() or str(tz)
        if self.start == self.end:
            return f"{self.term()} {first} {where}"
        return f"{self.term()} {first} → {last} {where} ({format_duration(self.end - self.start)})"

    def _repr_html_(self) -> str:
        return html_table([self])

    def compact(self, prefixes: Mapping[str, str]) -> "Detection":
        """This detection with each argument that is an IRI in one of the
        ``prefixes`` (``{"wt": "http://...#"}``, e.g. :attr:`Engine.prefixes`)
        written as a prefixed name ``wt:o1`` (the longest namespace wins)."""
        by_length = sorted(((ns, p) for p, ns in prefixes.items()), key=lambda x: -len(x[0]))
        args = tuple(_compact(a, by_length) for a in self.args)
        provenance = tuple(p.compact(prefixes) for p in self.provenance)
        return Detection(self.event, args, self.start, self.end, provenance)

    def to_json(self) -> str:
        """The line format of ``etalis run``."""
        return json.dumps(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"event": self.event, "args": list(self.args), "start": self.start, "end": self.end}
        if self.provenance:
            d["provenance"] = [p.to_dict() for p in self.provenance]
        return d


_FIELDS = ("event", "args", "start", "end", "provenance")

_SETTERS = tuple(getattr(Detection, name).__set__ for name in _FIELDS)
"""The slots' own setters, which a frozen Detection's ``__setattr__`` refuses."""


def _assign(self: Detection, name: str, value: Any) -> None:
    if type(self) is Detection or name in _FIELDS:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _delete(self: Detection, name: str) -> None:
    if type(self) is Detection or name in _FIELDS:
        raise FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


# A frozen dataclass with slots made by Python 3.11 gives a TypeError for an
# attribute that is no field (its methods name the class before the slots);
# these refuse every assignment as a frozen dataclass does.
setattr(Detection, "__setattr__", _assign)
setattr(Detection, "__delattr__", _delete)


def _compact(value: Any, namespaces: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        for ns, prefix in namespaces:
            if value.startswith(ns) and len(value) > len(ns):
                return f"{prefix}:{value[len(ns):]}"
    elif isinstance(value, list):
        return [_compact(v, namespaces) for v in value]
    return value


def _show(value: Any) -> str:
    if value is None:   # an unbound argument
        return "_"
    if isinstance(value, (list, tuple)):
        return f"[{', '.join(map(_show, value))}]"
    return str(value)


def _readable(start: datetime, end: datetime) -> tuple[str, str]:
    """Both ends to the minute, or the second (and fraction) if needed; the
    end without its date when it is the start's."""
    exact = any(t.second or t.microsecond for t in (start, end))
    clock = "%H:%M:%S" if exact else "%H:%M"

    def text(t: datetime, pattern: str) -> str:
        out = t.strftime(pattern)
        return out + f"{t.microsecond / 1e6:.6f}".rstrip("0")[1:] if t.microsecond else out

    last = text(end, clock if end.date() == start.date() else "%Y-%m-%d " + clock)
    return text(start, "%Y-%m-%d " + clock), last


HTML_ROWS = 50


def html_table(detections: Sequence[Detection]) -> str:
    """Detections as an HTML table (Jupyter shows it), the first :data:`HTML_ROWS` of them."""
    rows = [
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in _cells(d)) + "</tr>"
        for d in detections[:HTML_ROWS]
    ]
    if len(detections) > HTML_ROWS:
        rows.append(f'<tr><td colspan="5">… {len(detections) - HTML_ROWS} more</td></tr>')
    head = "".join(f"<th>{h}</th>" for h in ("event", "args", "start", "end", "duration"))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _cells(d: Detection) -> tuple[str, str, str, str, str]:
    args = ", ".join(map(_show, d.args))
    try:
        return d.event, args, format_time(d.start), format_time(d.end), format_duration(d.end - d.start)
    except (OverflowError, ValueError, OSError):
        return d.event, args, repr(d.start), repr(d.end), repr(d.end - d.start)
