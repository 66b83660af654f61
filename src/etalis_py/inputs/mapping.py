"""How the rows of a table become events: the mapping options (``--event``,
``--event-col``, ``--args``, ``--time``, ...), and a cell's value and time."""

from __future__ import annotations

import calendar
import difflib
import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Optional, TypedDict, Unpack

from ..events import InvalidEvent, read_number, to_time, zone

_GRAPH_ROWS_ALONE = "--graph-col makes each row the event graph(G) by itself: give no --event, --event-col or --args"


class MappingOptions(TypedDict, total=False):
    """The options that map table rows to events, as ``etalis run``,
    ``etalis replay`` and :func:`etalis_py.spark.replay` take them (see
    :class:`Mapping`, and :meth:`Mapping.of`, which makes one of them)."""

    event: Optional[str]
    event_col: Optional[str]
    args: Sequence[str]
    time: Optional[str]
    time_format: Optional[str]
    time_zone: Optional[str]
    columns: Optional[Sequence[str]]
    graph_col: Optional[str]
    stream: Optional[str]


@dataclass(frozen=True)
class Mapping:
    """How rows of a table become events (``etalis run`` and ``etalis replay``).

    ``event`` names every row's event, or ``event_col`` gives the column that
    holds the name; ``args`` are the argument columns; ``time`` the time
    column (numbers are seconds; otherwise ``time_format``, a strptime
    format, or ISO 8601; a date without a zone is in ``time_zone``, an IANA
    name, default UTC); ``columns`` names the columns of a file without a
    header.  ``graph_col`` is an argument column that holds an RDF graph
    (see :func:`etalis_py.inputs.graphs.graph_cell`); :meth:`graph_rows` makes the
    mapping of the event ``graph(G)``.  ``stream`` is the IRI of the stream
    of the graphs read (a graph column's, or a graph stream file's, whose
    own ``dcterms:isPartOf`` triples name a graph's stream otherwise).
    """

    event: Optional[str] = None
    event_col: Optional[str] = None
    args: Sequence[str] = ()
    time: Optional[str] = None
    time_format: Optional[str] = None
    columns: Optional[Sequence[str]] = None
    graph_col: Optional[str] = None
    time_zone: Optional[str] = None
    stream: Optional[str] = None

    @staticmethod
    def graph_rows(graph_col: str, time: Optional[str], time_format: Optional[str] = None,
                   columns: Optional[Sequence[str]] = None, time_zone: Optional[str] = None,
                   stream: Optional[str] = None) -> "Mapping":
        """Rows that are the graph events ``graph(G)``, G in ``graph_col``
        (on ``stream``, an IRI, if given)."""
        return Mapping(event="graph", args=(graph_col,), time=time, time_format=time_format, columns=columns,
                       graph_col=graph_col, time_zone=time_zone, stream=stream)

    @staticmethod
    def of(**options: Unpack[MappingOptions]) -> "Mapping":
        """The mapping the options give: with ``graph_col``, the rows are
        the graph events ``graph(G)`` (see :meth:`graph_rows`, on the
        stream ``stream`` if given), and ``event``, ``event_col`` and
        ``args`` must be left out."""
        columns = options.get("columns")
        graph_col = options.get("graph_col")
        if graph_col is None and options.get("stream") is not None:
            raise ValueError("--stream names the stream of graph events: give the column of the graphs, --graph-col")
        if graph_col is None:
            return Mapping(event=options.get("event"), event_col=options.get("event_col"),
                           args=tuple(options.get("args", ())), time=options.get("time"),
                           time_format=options.get("time_format"), columns=tuple(columns) if columns else None,
                           time_zone=options.get("time_zone"))
        if options.get("event") is not None or options.get("event_col") is not None or options.get("args"):
            raise ValueError(_GRAPH_ROWS_ALONE)
        return Mapping.graph_rows(graph_col, options.get("time"), options.get("time_format"),
                                  tuple(columns) if columns else None, options.get("time_zone"), options.get("stream"))

    def check(self) -> None:
        if (self.event is None) == (self.event_col is None):
            raise ValueError("give the event name with --event NAME, or its column with --event-col COL")
        if self.time is None:
            raise ValueError("give the time column with --time COL")
        if self.graph_col is not None and (self.event != "graph" or tuple(self.args) != (self.graph_col,)):
            raise ValueError(_GRAPH_ROWS_ALONE)
        zone(self.time_zone)  # ValueError naming an unknown zone



def missing_column(wanted: Iterable[Optional[str]], header: Sequence[str], where: str) -> Optional[ValueError]:
    """The error for the first column of ``wanted`` (None: no column) that
    ``header`` lacks, naming the columns ``where`` has (``the header``) and
    the closest one (a typo, or another case), or else that ``header`` has
    twice (which of the two is meant cannot be told); None when each is
    there once."""
    columns = [c for c in wanted if c is not None]
    names = [str(h) for h in header]
    missing = [c for c in columns if c not in header]
    if not missing:
        twice = [c for c in columns if names.count(c) > 1]
        if not twice:
            return None
        at = [str(i) for i, h in enumerate(names, start=1) if h == twice[0]]
        return ValueError(f"column {twice[0]!r} appears {len(at)} times in {where} (columns {', '.join(at)}): "
                          "which is meant cannot be told; rename all but one")
    close = [h for h in names if h.lower() == missing[0].lower()] or difflib.get_close_matches(missing[0], names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return ValueError(f"no column {missing[0]!r} in {where}: {', '.join(names)}{hint}")


def parse_value(value: Any, col: str = "") -> Any:
    """A CSV field as a number if it reads as one, else as text."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    number = read_number(text)
    if number is None:
        return text
    if not math.isfinite(number):
        raise InvalidEvent(f"column {col!r}: {text!r} is not a finite number")
    return number


_FIELDS = {"Y": r"(?P<Y>[0-9]{4})", "m": r"(?P<m>[0-9]{1,2})", "d": r"(?P<d>[0-9]{1,2})",
           "H": r"(?P<H>[0-9]{1,2})", "M": r"(?P<M>[0-9]{1,2})", "S": r"(?P<S>[0-9]{1,2})",
           "f": r"(?P<f>[0-9]{1,6})", "%": "%"}


# A decimal digit that is not an ASCII one ('١', '٣'): no part of a time.
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")


@functools.lru_cache(maxsize=32)
def _format_regex(fmt: str) -> Optional[re.Pattern[str]]:
    """A regex for a strptime format made only of %Y %m %d %H %M %S %f,
    or None (then strptime itself is used)."""
    out: list[str] = []
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c == "%" and i + 1 < len(fmt):
            field = _FIELDS.get(fmt[i + 1])
            if field is None or (field != "%" and f"(?P<{fmt[i + 1]}>" in "".join(out)):
                return None
            out.append(field)
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def parse_formatted_time(text: str, fmt: str, tz: Optional[str] = None) -> float:
    """Epoch seconds of ``text`` in strptime format ``fmt``; a time without
    a zone is in ``tz`` (an IANA name, default UTC)."""
    rx = _format_regex(fmt) if tz is None else None
    match = rx.match(text) if rx is not None else None
    if match is not None:
        g = match.groupdict()
        y, mo, d = int(g.get("Y") or 1970), int(g.get("m") or 1), int(g.get("d") or 1)
        h, mi, sec = int(g.get("H") or 0), int(g.get("M") or 0), int(g.get("S") or 0)
        if 1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1] and h < 24 and mi < 60 and sec < 62:
            frac = float("0." + g["f"]) if g.get("f") else 0.0
            return float(_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) + frac
    try:
        if _OTHER_DIGIT.search(text):  # strptime reads other scripts' digits too
            raise ValueError(text)
        dt = datetime.strptime(text, fmt)
    except ValueError:
        raise InvalidEvent(f"time {text!r} does not match the format {fmt!r}") from None
    return float(to_time(dt, tz))


def parse_time(value: Any, fmt: Optional[str], tz: Optional[str] = None) -> float | int:
    """Seconds from a table's time cell: a strptime-formatted text with
    ``fmt``, else whatever :func:`~etalis_py.events.to_time` reads (numbers,
    ISO 8601).  A date without a zone is in ``tz`` (default UTC)."""
    if fmt and isinstance(value, str):
        return parse_formatted_time(value.strip(), fmt, tz)
    try:
        return to_time(value, tz)
    except InvalidEvent as e:
        if isinstance(value, str) and str(e).endswith("ISO 8601 date"):
            raise InvalidEvent(f"{e}; give --time-format") from None
        raise


def is_date(text: str) -> bool:
    """Whether a time cell's text is a date: not a number, nor blank."""
    try:
        float(text.strip())
    except ValueError:
        return bool(text.strip())
    return False
