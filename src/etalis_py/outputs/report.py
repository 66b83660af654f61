"""Detections for people: a table (or one line each) with dates in a time
zone, names for the values a data set codes (station numbers), and
durations.  ``etalis table`` prints it; ``etalis run`` keeps its JSON
lines, which this reads back."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from ..errors import utf8_text
from ..events import Detection, Detections, Time, format_duration, to_datetime, zone
from ..inputs.streams import csv_rows, not_text

DAY = "%d %b %Y"


def read_names(path: str | Path) -> dict[str, str]:
    """A CSV file ``value,name`` or ``value,name,tz`` (with that header) as
    a mapping from a value, as text, to its name."""
    return {value: name for value, name, _ in _names_rows(path)}


def read_zones(path: str | Path) -> dict[str, str]:
    """The ``tz`` column of a names file (``value,name,tz``): a mapping from
    a value, as text, to its IANA time zone (empty without the column)."""
    return {value: tz for value, _, tz in _names_rows(path) if tz}


def _names_rows(path: str | Path) -> list[tuple[str, str, str]]:
    with io.StringIO(utf8_text("names file", Path(path)), newline="") as f:
        reader = csv_rows(f)
        header = [h.strip() for h in next(reader, [])]
        if header not in (["value", "name"], ["value", "name", "tz"]):
            raise ValueError(f"{path}: a names file starts with the header 'value,name' or 'value,name,tz'")
        rows = []
        for number, row in enumerate(reader, start=2):
            if len(row) != len(header):
                raise ValueError(f"{path}:{number}: {len(row)} fields where {','.join(header)!r} has {len(header)}")
            if len(row) == 3 and row[2]:
                try:
                    zone(row[2])
                except ValueError as e:
                    raise ValueError(f"{path}:{number}: {e}") from None
            rows.append((row[0], row[1], row[2] if len(row) == 3 else ""))
    return rows


def read_detections(lines: Iterable[str], source: str = "<detections>") -> Detections:
    """The detections of JSON lines as ``etalis run`` prints them (with
    their provenance, from ``--explain``); blank lines are skipped, a line
    that is not a detection is an error naming it (a line that is not
    UTF-8 too, when ``lines`` were decoded with surrogateescape)."""
    found = Detections()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if bad := not_text(line):
            raise ValueError(f"{source}:{number}: not a detection ({bad})")
        item: Any = None
        try:
            item = json.loads(line)
            found.append(_detection(item))
        except (ValueError, KeyError, TypeError) as e:
            reason = f"missing {e}" if isinstance(e, KeyError) else str(e)
            if isinstance(e, KeyError) and isinstance(item, dict) and "time" in item:
                reason += "; it is an input event: give the detections that etalis run writes"
            raise ValueError(f"{source}:{number}: not a detection ({reason}): {line.strip()[:80]}") from None
    return found


def _detection(d: dict[str, Any]) -> Detection:
    provenance = tuple(map(_detection, d.get("provenance") or ()))
    return Detection(d["event"], tuple(d["args"]), _seconds(d["start"]), _seconds(d["end"]), provenance)


def value_text(value: Any) -> str:
    """An argument as text: a string as it is, an unbound argument (JSON
    null) as ``_``, anything else as JSON."""
    if value is None:
        return "_"
    return value if isinstance(value, str) else json.dumps(value)


def _seconds(value: Any) -> Time:
    """Seconds of a detection's time: a number, or an ISO 8601 date with its
    offset as ``--iso`` writes it (a date without one could be in any zone)."""
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            when = None
        if when is not None and when.tzinfo is not None:
            return when.timestamp()
    elif not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value):
        return value
    raise ValueError(f"time {value!r} is not a number of seconds or an ISO 8601 date with its offset (as --iso "
                     "writes it)")


@dataclass(frozen=True)
class Readable:
    """How detections are shown: in time zone ``tz`` (an IANA name or
    UTC), with ``names`` for argument values, and with or without their
    arguments.  With ``zones`` (argument values, as text, to IANA zones:
    the stations' own), a table or line shows each detection in the zone
    of its first argument that has one, and names the zone."""

    tz: str = "UTC"
    names: Mapping[str, str] = field(default_factory=dict)
    args: bool = True
    zones: Mapping[str, str] = field(default_factory=dict)

    def zone(self) -> tzinfo:
        return zone(self.tz)

    def when(self, t: Time, tz: str | None = None) -> datetime:
        """``t`` seconds since 1970 as a date in the zone ``tz`` (default:
        this one); ValueError past the years 1 to 9999."""
        try:
            return to_datetime(t, tz or self.tz)
        except (OverflowError, OSError):
            raise ValueError(f"time {t!r} is not a date (seconds since 1970 within the years 1 to 9999)") from None

    def zone_of(self, d: Detection) -> str:
        """The zone ``d`` is shown in: that of its first argument in
        ``zones``, else ``tz``."""
        for a in d.args:
            tz = self.zones.get(value_text(a))
            if tz:
                return tz
        return self.tz

    def label(self, d: Detection) -> str:
        """``event(name, ...)``: the event and its arguments, named."""
        if not (self.args and d.args):
            return d.event
        return f"{d.event}({', '.join(self.arg(a) for a in d.args)})"

    def arg(self, value: Any) -> str:
        text = value_text(value)
        return self.names.get(text, text)

    def times(self, d: Detection, clock: str) -> tuple[str, str]:
        """Start with its date, and end without it when on the same day."""
        tz = self.zone_of(d)
        start, end = self.when(d.start, tz), self.when(d.end, tz)
        shown_end = end.strftime(clock) if end.date() == start.date() else end.strftime(f"{DAY} {clock}")
        return start.strftime(f"{DAY} {clock}"), shown_end

    def zone_label(self, d: Detection) -> str:
        """The abbreviation of ``d``'s zone at its start (EDT, CST, UTC)."""
        return self.when(d.start, self.zone_of(d)).strftime("%Z")

    def clock(self, detections: Sequence[Detection]) -> str:
        """``%H:%M``, or ``%H:%M:%S`` when a time (of a detection or of
        the input events of its provenance) has seconds."""
        exact = all(float(t) % 60 == 0 for d in detections for e in (d, *d.provenance) for t in (e.start, e.end))
        return "%H:%M" if exact else "%H:%M:%S"

    def sources(self, d: Detection, clock: str) -> list[str]:
        """The line under ``d`` that names the input events of its
        provenance (``--explain``) with their times in ``d``'s zone (the
        date only when not ``d``'s start date); none without provenance."""
        if not d.provenance:
            return []
        tz = self.zone_of(d)
        day = self.when(d.start, tz).date()

        def at(t: Time) -> str:
            when = self.when(t, tz)
            return when.strftime(clock if when.date() == day else f"{DAY} {clock}")

        inputs = [f"{self.label(e)} "
                  + (f"at {at(e.start)}" if e.start == e.end else f"{at(e.start)} to {at(e.end)}")
                  for e in d.provenance]
        return ["  from " + ", ".join(inputs)]

    def caption(self) -> str:
        if self.zones:
            return f"local times: each row in the zone of its first argument that has one (else {self.tz})"
        return f"times in {self.tz}"

    def table(self, detections: Sequence[Detection]) -> str:
        """One row per detection, in columns: event, arguments (named),
        start, end, duration; under a line that says the time zone."""
        clock = self.clock(detections)
        local = bool(self.zones)
        rows: list[tuple[str, ...]] = [("event", *(("args",) if self.args else ()), "start", "end",
                                        *(("zone",) if local else ()), "duration")]
        for d in detections:
            start, end = self.times(d, clock)
            named = [", ".join(self.arg(a) for a in d.args)] if self.args else []
            rows.append((d.event, *named, start, end, *((self.zone_label(d),) if local else ()),
                         format_duration(d.end - d.start)))
        if not detections:
            return f"{self.caption()}\nno detections\n"
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(rows[0], widths)).rstrip()]
        for d, r in zip(detections, rows[1:]):
            lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
            lines += self.sources(d, clock)
        return "\n".join([self.caption(), *lines]) + "\n"

    def lines(self, detections: Sequence[Detection]) -> str:
        """A sentence per detection: ``blizzard, 26 Dec 2010 20:51 to
        23:51 (3h 00m)``."""
        clock = self.clock(detections)
        out = []
        for d in detections:
            start, end = self.times(d, clock)
            named = f" {self.zone_label(d)}" if self.zones else ""
            span = f"at {start}{named}" if d.start == d.end else \
                f"{start} to {end}{named} ({format_duration(d.end - d.start)})"
            out.append(f"{self.label(d)}, {span}\n")
            out += [f"{line}\n" for line in self.sources(d, clock)]
        return "".join(out)

