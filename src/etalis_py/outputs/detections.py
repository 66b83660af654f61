"""Detections as a collection: a list, a pandas DataFrame, a text table,
a timeline picture and an HTML table for Jupyter."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Optional, Union

from ..events import Detection, Time, Zone, html_table, zone
from ..inputs.lines import not_text
from .plot import Signal, Timeline
from .report import Readable

if TYPE_CHECKING:  # pandas and matplotlib are imported only when a frame or a picture is made
    import os

    import pandas as pd
    from matplotlib.figure import Figure


class Detections(list[Detection]):
    """Detections in the order they were made: a list, and a table for
    pandas (:meth:`to_frame`) and Jupyter (an HTML table)."""

    def to_frame(self, tz: Zone = None, args: Sequence[str] = ()) -> "pd.DataFrame":
        """A DataFrame with a row per detection: ``event``, one column per
        argument (named by ``args``, else ``arg1``, ``arg2``, ..., as the
        CSV and Parquet files of ``etalis run`` and ``replay`` name them;
        empty where a detection has fewer), ``start`` and ``end`` as
        datetimes in ``tz`` (default UTC) and ``duration`` as a timedelta."""
        import pandas as pd  # pandas loads when a frame is made, not with every engine

        width = max(max((len(d.args) for d in self), default=0), len(args))
        names = [*args, *(f"arg{i}" for i in range(len(args) + 1, width + 1))]
        clash = [n for n in names if n in ("event", "start", "end", "duration")] or \
            [n for i, n in enumerate(names) if n in names[:i]]
        if clash:
            raise ValueError(f"argument column {clash[0]!r} would be there twice: name the arguments otherwise")
        columns: dict[str, Any] = {"event": pd.Series([d.event for d in self], dtype=object)}
        for i, name in enumerate(names):
            columns[name] = pd.Series([d.args[i] if i < len(d.args) else None for d in self], dtype=object)
        for end in ("start", "end"):
            seconds = pd.Series([getattr(d, end) for d in self], dtype="float64")
            columns[end] = pd.to_datetime(seconds, unit="s", utc=True).dt.tz_convert(zone(tz))
        columns["duration"] = columns["end"] - columns["start"]
        return pd.DataFrame(columns)

    def table(self, tz: Optional[str] = None, names: Optional[Mapping[str, str]] = None,
              zones: Optional[Mapping[str, str]] = None) -> str:
        """A text table, a row per detection: the event, its arguments
        (``names`` maps values, as text, to names), start and end in ``tz``
        (an IANA name; default UTC) and duration (``etalis table``);
        ``zones`` (values, as text, to IANA zones: a station's own) shows
        each row in the zone of its first argument that has one, with a
        ``zone`` column (``etalis table`` with a names file's tz column)."""
        return Readable(tz or "UTC", names or {}, zones=zones or {}).table(self)

    def plot(self, path: Union[str, "os.PathLike[str]", None] = None, *, tz: Optional[str] = None,
             names: Optional[Mapping[str, str]] = None, title: Optional[str] = None,
             signals: Sequence["Signal"] = (), quantity: str = "value",
             zones: Optional[Mapping[str, str]] = None) -> "Figure":
        """A timeline: a bar per detection over its interval, one lane per
        event and arguments, and ``signals`` as lines above; written as a
        PNG to ``path`` when given (``etalis plot``).  Returns the matplotlib
        Figure, whose last axes hold the bars.  ``zones`` as for
        :meth:`table`: the time axis is in the zone of every detection if
        they share one, else in ``tz`` with each lane's zone beside it and
        each bar's local start on it."""
        timeline = Timeline(self, signals, Readable(tz or "UTC", names or {}, zones=zones or {}), title, quantity)
        return timeline.save(path) if path is not None else timeline.figure()

    def compact(self, prefixes: Mapping[str, str]) -> "Detections":
        """Each detection with its IRIs as prefixed names (see :meth:`Detection.compact`)."""
        return Detections(d.compact(prefixes) for d in self)

    def _repr_html_(self) -> str:
        return html_table(self)


def read_detections(lines: Iterable[str], source: str = "<detections>") -> Detections:
    """The detections of JSON lines as ``etalis run`` prints them (with
    their provenance, from ``--explain``); blank lines are skipped, a line
    that is not a detection is an error naming it (a line that is not
    UTF-8 too, when ``lines`` were decoded with surrogateescape)."""
    found = Detections()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if number == 1 and line.startswith(("PAR1", "event,")):   # a file's magic or header is its first line
            kind = "Parquet" if line.startswith("PAR1") else "CSV"
            raise ValueError(f"{source}: a {kind} file, not the JSON lines of detections: give those that etalis run "
                             "and replay write with --format jsonl (their default)")
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
