"""Reading event stream files into batches of engine input.

Each batch is text with one Prolog term a line, and keeps the line numbers
of its file: a line that Python already rejected (bad JSON, an empty CSV
field) becomes an empty line, so the engine's own rejections carry the right
line numbers too.  ``read = accepted + rejected`` for every file.  Batches
of CSV and JSON lines, which Python writes itself, and batches of a
``.events`` file whose every line is a plain event (:data:`_PLAIN_EVENTS`)
are batch lists (:func:`~etalis_py.events.batch_list`), which the engine
reads at once; other ``.events`` batches are its lines.

Input is bytes, decoded a chunk at a time: a chunk that is all UTF-8 (the
common case) is decoded at once; in one that is not, each line that is not
UTF-8 is rejected with the first bad byte and its column, and the lines
around it are read.  A byte order mark at the start is dropped.
"""

from __future__ import annotations

import calendar
import _csv
import csv
import functools
import io
import itertools
import json
import math
import os
import re
import select
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Optional, TypedDict, Unpack

from ..bridge.prolog_text import MAX_TEXT
from ..bridge.columns import Packed
from ..events import (MAX_NESTING, NOTHING, Event, InvalidEvent, Rejection, batch_list, plain_element, prolog_value,
                     read_number, to_time, zone)

BATCH_LINES = 20_000

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

    def arg_reader(self, col: str) -> Callable[[str], str]:
        """A function from a non-empty cell of argument column ``col`` to
        its Prolog text; it raises InvalidEvent with the reason."""
        if col == self.graph_col:
            from .graphs import graph_cell  # graphs reads streams with this module's tools

            return lambda text: graph_cell(text, self.stream)
        return lambda text: prolog_value(parse_value(text, col))


def missing_column(wanted: Iterable[Optional[str]], header: Sequence[str], where: str) -> Optional[ValueError]:
    """The error for the first column of ``wanted`` (None: no column) that
    ``header`` lacks, naming the columns ``where`` has (``the header``) and
    the closest one (a typo, or another case), or else that ``header`` has
    twice (which of the two is meant cannot be told); None when each is
    there once."""
    import difflib

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


@dataclass
class Batch:
    """Engine input for lines ``first_line`` onwards, and the lines Python
    rejected on the way.  ``terms`` is None if ``text`` is event lines,
    else the number of terms of ``text``, a batch list."""

    text: str
    first_line: int
    rejected: list[Rejection] = field(default_factory=list)
    terms: Optional[int] = None
    packed: Optional[Packed] = None
    """The batch as packed columns (then ``text`` is empty), see :mod:`etalis_py.bridge.columns`."""
    idle: bool = False
    """No input: a live source that had nothing to read for a while (see :func:`read_live`)."""

    @property
    def end_line(self) -> int:
        """The number of the first line (or row) after the batch: each line
        of the source is a term of the batch, or a line of its text."""
        return self.first_line + (self.terms if self.terms is not None else self.text.count("\n"))


STREAM_KINDS = ("jsonl", "csv", "events", "parquet", "nquads", "trig", "jsonld")
_GRAPH_SUFFIXES = {".nq": "nquads", ".trig": "trig", ".jsonld": "jsonld"}
GRAPH_KINDS = tuple(_GRAPH_SUFFIXES.values())
"""The stream kinds whose events are RDF graphs."""


def stream_kind(path: Path) -> str:
    """The kind of stream file ``path`` is, by its extension: jsonl, csv,
    parquet, events (``.pl`` and ``.events``), or a graph stream (``.nq``,
    ``.trig``, ``.jsonld``, see :mod:`etalis_py.inputs.graphs`)."""
    suffix = path.suffix.lower()
    if suffix in (".pl", ".events"):
        return "events"
    if suffix in (".jsonl", ".csv", ".parquet"):
        return suffix[1:]
    if suffix in _GRAPH_SUFFIXES:
        return _GRAPH_SUFFIXES[suffix]
    raise ValueError(f"unknown stream file type {suffix!r}: use .jsonl, .csv, .parquet, .pl, .events, .nq, .trig "
                     "or .jsonld, "
                     "or give --input-format")


def read_batches(path: Path, mapping: Optional[Mapping] = None, batch_lines: int = BATCH_LINES,
                 kind: Optional[str] = None, packed: bool = False) -> Iterator[Batch]:
    """Batches of the stream file at ``path``, of ``kind`` (default: by its
    extension, see :func:`stream_kind`); tables and JSON lines as packed
    columns if ``packed`` (see :mod:`etalis_py.bridge.columns`)."""
    kind = kind or stream_kind(path)
    if kind == "parquet":
        if mapping is None:
            raise ValueError("a .parquet stream needs a mapping: --event or --event-col, --args, --time")
        from .tables import parquet_batches

        yield from parquet_batches(path, mapping, batch_lines, packed)
        return
    yield from resumed_batches(path, mapping, kind, packed, batch_lines=batch_lines)[0]


def _batches(chunks: Iterable[bytes], kind: str, mapping: Optional[Mapping], batch_lines: int,
             name: str = "<stream>", packed: bool = False) -> Iterator[Batch]:
    """Batches of a stream of ``kind`` given in chunks of whole lines."""
    if kind in GRAPH_KINDS:
        from .graphs import graph_batches  # graphs reads streams with this module's tools

        yield from graph_batches(chunks, kind, batch_lines, name, mapping.stream if mapping is not None else None)
    elif kind == "jsonl":
        if packed:
            yield from _jsonl_packed(Lines(chunks), batch_lines)
        else:
            yield from _jsonl_batches(Lines(chunks), batch_lines)
    elif kind == "csv":
        if mapping is None:
            raise ValueError("a .csv stream needs a mapping: --event or --event-col, --args, --time")
        mapping.check()
        yield from _csv_batches(Lines(chunks, keepends=True), mapping, batch_lines, packed)
    elif kind == "events":
        yield from _term_batches(Lines(chunks), batch_lines)
    elif kind == "parquet":
        raise ValueError("a Parquet file is read as a whole file: not from standard input or with --follow")
    else:
        raise ValueError(f"unknown stream kind {kind!r}: use one of {', '.join(STREAM_KINDS)}")


# -- bytes to lines ---------------------------------------------------------------------

CHUNK_BYTES = 1 << 20
# Graph streams are read in chunks below glibc's fixed mmap threshold
# (see _prolog.fixed_mmap_threshold): a chunk of 1 MiB and its copies are
# each a mapping of their own, page-faulted in and unmapped again (N-Quads
# graph batches join the chunks of a segment anyway).
GRAPH_CHUNK_BYTES = 1 << 17
_BOM = b"\xef\xbb\xbf"
_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def decode_lines(data: bytes) -> tuple[str, dict[int, str]]:
    """``data`` (whole lines) as text, and for each line that is not text,
    by its index in ``data``, why: it is not UTF-8, holds a NUL (a binary
    file, or UTF-16 text), or starts with a byte order mark (files joined
    with cat: the mark of the whole input's start is dropped before).  Such
    a line keeps its place: bad bytes become lone surrogates.  A chunk
    that is all UTF-8, with no NUL or mark, is decoded at once; only one
    that is not is gone through line by line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "surrogateescape")
    else:
        if "\x00" not in text and "\ufeff" not in text:
            return text, {}
    bad = {}
    for i, line in enumerate(text.split("\n")):
        reason = not_text(line)
        if reason:
            bad[i] = reason
    return text, bad


def not_text(line: str) -> Optional[str]:
    """Why ``line`` is no line of text (see :func:`decode_lines`), or None."""
    m = _NOT_UTF8.search(line)
    if m:
        return f"line is not UTF-8: byte 0x{ord(m.group()) - 0xDC00:02x} at column {m.start() + 1}"
    nul = line.find("\x00")
    if nul >= 0:
        return f"line holds a NUL byte at column {nul + 1}: no text does (a binary file, or text in UTF-16?)"
    if line.startswith("\ufeff"):
        return ("line starts with a byte order mark (U+FEFF), as a file does: were two files joined "
                "(cat a b)? remove the mark")
    return None


class Lines:
    """The lines of a stream of bytes that arrives in chunks of whole lines
    (the last one may lack its newline), numbered from 1: without their
    newline, or with it if ``keepends``.  A byte order mark at the start is
    dropped.  ``bad`` gives, by line number, why a line already read is
    not UTF-8 (see :func:`decode_lines`); the readers reject those lines."""

    def __init__(self, chunks: Iterable[bytes], keepends: bool = False) -> None:
        self._chunks = chunks
        self._keepends = keepends
        self.bad: dict[int, str] = {}

    def __iter__(self) -> Iterator[str]:
        return itertools.chain.from_iterable(self._decoded())

    def _decoded(self) -> Iterator[Iterable[str]]:
        number = 0
        start = True
        for data in self._chunks:
            if not data:
                continue
            text, bad = decode_lines(data.removeprefix(_BOM) if start else data)
            start = False
            for i, reason in bad.items():
                self.bad[number + i + 1] = reason
            if self._keepends:
                number += text.count("\n") + (not text.endswith("\n"))
                yield io.StringIO(text, newline="\n")
            else:
                lines = text.split("\n")
                if text.endswith("\n"):
                    lines.pop()
                number += len(lines)
                yield lines


# -- live sources: standard input and a growing file ----------------------------------


def read_live(chunks: Iterable[bytes | str], kind: Optional[str], mapping: Optional[Mapping] = None,
              batch_lines: int = BATCH_LINES, first_line: int = 1) -> Iterator[Batch]:
    """Batches of a stream that arrives in ``chunks`` of whole lines (the
    last one may lack its newline), one or more batches per chunk as soon
    as it arrives, numbered as lines of one file from ``first_line`` on.
    An empty chunk (the source had nothing for a while) is an idle batch.

    ``kind`` None sniffs it: csv when ``mapping`` gives a time column, else
    jsonl when the first line that is not blank starts with ``{``, else
    events.
    """
    offset = first_line - 1
    if kind == "nquads":  # a graph spans lines: hand over whole graphs only
        from .graphs import whole_graphs

        chunks = whole_graphs(chunks)
    for chunk in chunks:
        if not chunk:
            yield Batch("", offset + 1, terms=0, idle=True)
            continue
        data = chunk.encode("utf-8", "surrogateescape") if isinstance(chunk, str) else chunk
        if not offset:
            data = data.removeprefix(_BOM)
        lines = data.count(b"\n") + (not data.endswith(b"\n"))
        if kind is None:
            if not data.strip():
                offset += lines
                continue
            kind = "csv" if mapping is not None and mapping.time is not None else (
                "jsonl" if data.lstrip().startswith(b"{") else "events")
        for batch in _batches([data], kind, mapping, batch_lines):
            yield _shifted(batch, offset)
        if kind == "csv" and mapping is not None and not mapping.columns:
            header = next(csv_rows(Lines([data], keepends=True)), None)
            if header:
                mapping = replace(mapping, columns=tuple(h.strip() for h in header))
        offset += lines


def _shifted(batch: Batch, offset: int) -> Batch:
    if not offset:
        return batch
    return replace(batch, first_line=batch.first_line + offset,
                   rejected=[replace(r, line=r.line + offset) for r in batch.rejected])


def line_chunks(stream: BinaryIO, size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Whole lines of ``stream`` (a file, or standard input as it arrives):
    each chunk is what one read gave, up to its last newline."""
    pending = b""
    read = getattr(stream, "read1", stream.read)
    while True:
        data = read(size)
        if not data:
            if pending:
                yield pending
            return
        whole, pending = whole_lines(pending + data)
        if whole:
            yield whole


def whole_lines(data: bytes) -> tuple[bytes, bytes]:
    """``data`` cut after its last newline: its whole lines, and the rest."""
    cut = data.rfind(b"\n") + 1
    return data[:cut], data[cut:]


def follow_chunks(path: Path, timeout: Optional[float] = None, poll: float = 0.1,
                  sleep: Callable[[float], None] = time.sleep,
                  clock: Callable[[], float] = time.monotonic, start: int = 0, ticks: bool = False) -> Iterator[bytes]:
    """Whole lines of the file at ``path`` as it grows (``tail -f``): what
    is there from byte ``start`` on, then what is appended, polled every
    ``poll`` seconds; until Ctrl-C or, with ``timeout``, until the file
    has not grown for that many seconds.  A last line without its newline
    is given at the end.  With ``ticks``, an empty chunk at each poll that
    found nothing new (for the wall clock of ``etalis run --clock wall``)."""
    pending = b""
    with path.open("rb") as f:
        if start:
            f.seek(start)
        idle_since = clock()
        try:
            while True:
                data = f.read(1 << 20)
                if data:
                    idle_since = clock()
                    whole, pending = whole_lines(pending + data)
                    if whole:
                        yield whole
                    continue
                if timeout is not None and clock() - idle_since >= timeout:
                    break
                if ticks:
                    yield b""
                sleep(poll)
        except KeyboardInterrupt:
            pass
    if pending:
        yield pending


def ticking_chunks(fd: int, tick: float, size: int = 1 << 16) -> Iterator[bytes]:
    """Whole lines of the file descriptor ``fd`` (standard input) as they
    arrive, as :func:`line_chunks` gives them, and an empty chunk whenever
    nothing came for ``tick`` seconds (for ``etalis run --clock wall``)."""
    pending = b""
    while True:
        ready, _, _ = select.select([fd], [], [], tick)
        if not ready:
            yield b""
            continue
        data = os.read(fd, size)
        if not data:
            if pending:
                yield pending
            return
        whole, pending = whole_lines(pending + data)
        if whole:
            yield whole


class LineOffsets:
    """Chunks of whole lines passed on as they are, remembering where each
    line starts in bytes (from line ``first_line`` at byte ``start``), so
    that a checkpoint can give the byte offset of the line after a batch
    (:meth:`offset`).  Only the chunks from the last line asked for on are
    kept."""

    def __init__(self, chunks: Iterable[bytes], first_line: int = 1, start: int = 0) -> None:
        self._chunks = chunks
        self._kept: list[tuple[int, int, bytes]] = []   # (first line, first byte, data)
        self._cursor = (first_line, 0)      # a line of the first kept chunk, and where it starts in it
        self._line = first_line
        self._offset = start
        self.head: Optional[bytes] = None
        """The first line of the stream, if it was read from its start."""

    def __iter__(self) -> Iterator[bytes]:
        for data in self._chunks:
            if data:
                if self.head is None and self._line == 1:
                    self.head = data[:data.find(b"\n") + 1 or len(data)].removeprefix(_BOM)
                self._kept.append((self._line, self._offset, data))
                self._line += data.count(b"\n")
                self._offset += len(data)
            yield data

    def offset(self, line: int) -> int:
        """The byte offset where line ``line`` starts (the end of what was
        read for a line past it); the chunks before it are forgotten.  The
        lines are asked for in order: each chunk is searched on from the
        line asked for last."""
        while len(self._kept) > 1 and line >= self._kept[1][0]:
            self._kept.pop(0)
            self._cursor = (self._kept[0][0], 0)
        if not self._kept:
            return self._offset
        first, start, data = self._kept[0]
        at, pos = self._cursor if self._cursor[0] <= line else (first, 0)
        if line > at:
            rest = data[pos:]
            parts = rest.split(b"\n", line - at)     # at C speed, where a loop of find() is not
            if len(parts) <= line - at:
                return start + len(data)
            pos += len(rest) - len(parts[-1])
            self._cursor = (line, pos)
        return start + pos


def resumed_batches(path: Path, mapping: Optional[Mapping], kind: Optional[str] = None, packed: bool = False,
                    line: int = 1, start: int = 0, follow: bool = False, timeout: Optional[float] = None,
                    ticks: bool = False,
                    batch_lines: int = BATCH_LINES) -> tuple[Iterator[Batch], Optional[LineOffsets]]:
    """The batches of the stream file at ``path`` (not Parquet) from its
    line ``line`` on, which starts at byte ``start`` (a run resumed from
    a checkpoint; a CSV file's ``mapping`` then names its columns), as
    it grows if ``follow`` (see :func:`follow_chunks`, whose ``timeout``
    and ``ticks`` these are), and what tells the byte offset of a line
    read: None for a TriG file, read whole, whose graphs are numbered
    (``line`` is then the first graph given)."""
    kind = kind or stream_kind(path)
    if kind == "trig" and not follow:
        from .graphs import graph_batches  # graphs reads streams with this module's tools

        with path.open("rb") as f:
            whole = f.read()
        return graph_batches([whole], kind, batch_lines, str(path), mapping.stream if mapping else None, line), None
    if follow:
        tracker = LineOffsets(follow_chunks(path, timeout, start=start, ticks=ticks), line, start)
        return read_live(tracker, kind, mapping, batch_lines, first_line=line), tracker

    def chunks() -> Iterator[bytes]:
        with path.open("rb") as f:
            if start:       # a pipe (/dev/fd/N) is read from its start, and cannot seek
                f.seek(start)
            yield from line_chunks(f, GRAPH_CHUNK_BYTES if kind in GRAPH_KINDS else CHUNK_BYTES)

    tracker = LineOffsets(chunks(), line, start)
    batches = _batches(tracker, kind, mapping, batch_lines, str(path), packed)
    return (_shifted(b, line - 1) for b in batches), tracker


def csv_header(line: bytes) -> Optional[list[str]]:
    """The column names of a CSV stream's first line."""
    row = next(csv_rows(Lines([line], keepends=True)), None)
    return [h.strip() for h in row] if row else None


# One item of a stream: the number of the line after it, the text it
# gives the engine (a line per line of the source, so line numbers hold:
# the line itself, or with listed batches its term, NOTHING for none),
# and the rejection of its line, if any.
Item = tuple[int, str, Optional[Rejection]]


def _batched(items: Iterable[Item], first_line: int, batch_lines: int, listed: bool = False,
             lister: Callable[[list[str]], str] = batch_list) -> Iterator[Batch]:
    """The items of a stream in batches of about ``batch_lines`` lines:
    batch lists (written by ``lister``) if ``listed``, else as lines (see
    :func:`_listed`).  An item with no text stands for no line (a second
    rejection of a line)."""
    batch = Batch("", first_line)
    parts: list[str] = []
    for next_line, text, rejected in items:
        if rejected is not None:
            batch.rejected.append(rejected)
        if text:
            parts.append(text)
        if len(parts) >= batch_lines:
            yield _filled(batch, parts, listed, lister)
            batch, parts = Batch("", next_line), []
    if parts or batch.rejected:
        yield _filled(batch, parts, listed, lister)


def _filled(batch: Batch, parts: list[str], listed: bool, lister: Callable[[list[str]], str]) -> Batch:
    if listed:
        batch.text, batch.terms = lister(parts), len(parts)
        return batch
    batch.text = "".join(parts)
    return _listed(batch, len(parts))


# A line that is certainly one event term, read alike on its own and as an
# element of a list: event(Name(Args), Time). or event(Name, [T1, T2]).,
# whose only brackets are these (so that no comma or full stop of the line
# can end the term early, nor the term go on into the next line), without
# quotes, comments or a bar.  What the brackets hold is read alike in both
# places, or is a syntax error in both (then the batch goes line by line).
_FREE = r"[^()\[\]{}\n'\"`%|]*"
_PLAIN_EVENTS = re.compile(
    rf"(?:event\([a-z]\w*(?:\({_FREE}\))?, ?(?:\[{_FREE}\]|{_FREE})\)\.\n)++"
)


def _listed(batch: Batch, lines: int) -> Batch:
    """``batch`` of event lines as a batch list if every line is a plain
    event (:data:`_PLAIN_EVENTS`, checked at once for the whole batch), else
    as it is."""
    text = batch.text
    if _PLAIN_EVENTS.fullmatch(text):
        return replace(batch, text="[" + text[:-2].replace(".\n", ",\n") + "]", terms=lines)
    return batch


def _term_batches(source: Lines, batch_lines: int) -> Iterator[Batch]:
    """Batches of ``batch_lines`` event lines: a run of lines that are all
    plain events (one regular expression over the run) becomes a batch
    list at once, any other run goes line by line (:func:`_term_items`)."""
    lines = iter(source)
    first = 1
    while run := list(itertools.islice(lines, max(1, batch_lines))):
        text = "\n".join(run) + "\n"
        if (_PLAIN_EVENTS.fullmatch(text) and not any(first <= n < first + len(run) for n in source.bad)
                and max(map(len, run)) <= MAX_DIGITS):
            yield Batch("[" + text[:-2].replace(".\n", ",\n") + "]", first, [], len(run))
        else:
            yield from _batched(_term_items(run, first, source.bad), first, len(run))
        first += len(run)


def _term_items(lines: Iterable[str], first: int, bad: dict[int, str]) -> Iterator[Item]:
    for number, line in enumerate(lines, start=first):
        text = line.strip()
        if bad and number in bad:
            yield number + 1, "\n", Rejection(number, bad[number])
        elif len(text) > MAX_TEXT:
            yield number + 1, "\n", Rejection(number, f"the line holds {len(text):,} characters, more than the "
                                                       f"{MAX_TEXT:,} a row may hold")
        elif len(text) > _SHALLOW and _bracket_depth(text) > _MAX_BRACKETS:
            yield number + 1, "\n", Rejection(number, f"nested deeper than {MAX_NESTING} levels")
        elif len(text) > MAX_DIGITS and (digits := _longest_number(text)) > MAX_DIGITS:
            yield number + 1, "\n", Rejection(number, f"an integer of {digits:,} digits: more than {MAX_DIGITS:,} "
                                                       "(as in JSON; reading one takes time that grows with the "
                                                       "square of its digits)")
        elif text and not text.startswith("%") and not text.endswith("."):
            yield number + 1, line.rstrip() + ".\n", None   # the leading blanks kept: columns count them
        else:
            yield number + 1, line.rstrip() + "\n", None


# Prolog's reader recurses on brackets, and deep enough (some 10,000 levels)
# it overflows the C stack of the embedded SWI-Prolog: an event line's
# brackets may nest as deep as an argument's lists may (MAX_NESTING) inside
# event(...) and the event's own; a line this short cannot be deeper.
_MAX_BRACKETS = MAX_NESTING + 2
_SHALLOW = 2 * _MAX_BRACKETS
_TOKENS = re.compile(r"""'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`(?:[^`\\]|\\.|``)*`|0'\\?.|%.*|[(\[{]|[)\]}]""")


# SWI-Prolog reads an integer in time that grows with the square of its
# digits (a million take 14 s): as JSON (Python's int) does, an event line
# may hold integers of at most MAX_DIGITS digits (quoted texts aside)
MAX_DIGITS = 4300
_NUMBERS = re.compile(r"""'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`(?:[^`\\]|\\.|``)*`|0'\\?.|%.*"""
                      r"|(?<![\w.])[0-9][0-9_]*")


def _longest_number(text: str) -> int:
    """The most digits of an integer of a Prolog term's text (outside
    quotes, character codes and comments; ``1_000`` is one integer)."""
    return max((len(t) - t.count("_") for t in (m.group() for m in _NUMBERS.finditer(text))
                if t[0].isdigit() and "'" not in t), default=0)


def _bracket_depth(text: str) -> int:
    """How deep the brackets of a Prolog term's text nest (outside quotes,
    character codes and comments)."""
    depth = deepest = 0
    for m in _TOKENS.finditer(text):
        token = m.group()
        if token in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in ")]}":
            depth -= 1
    return deepest


def _jsonl_batches(source: Lines, batch_lines: int) -> Iterator[Batch]:
    return _batched(_jsonl_items(source), 1, batch_lines, listed=True)


def _jsonl_items(source: Lines) -> Iterator[Item]:
    bad = source.bad
    decode = json.JSONDecoder(parse_constant=_not_a_number).decode
    names: dict[str, str] = {}
    for number, line in enumerate(source, start=1):
        if bad and number in bad:
            yield number + 1, NOTHING, Rejection(number, bad[number])
        elif line.strip():
            try:
                item = decode(line)
                text = _json_term(item, names) if isinstance(item, dict) else _not_object(item)
            except (ValueError, RecursionError) as e:  # JSONDecodeError and InvalidEvent are ValueErrors
                yield number + 1, NOTHING, Rejection(number, _reason(e))
            else:
                yield number + 1, text, None
        else:
            yield number + 1, NOTHING, None


def _jsonl_packed(source: Lines, batch_lines: int) -> Iterator[Batch]:
    """The batches of :func:`_jsonl_batches` as packed columns: the lines
    decoded and checked as there, the events packed by
    :func:`~etalis_py.bridge.columns.items_packed` with the same reasons."""
    from ..bridge.columns import items_packed

    bad = source.bad
    decode = json.JSONDecoder(parse_constant=_not_a_number).decode
    names: dict[str, str] = {}
    first = 1
    items: list[Any] = []
    skip: list[int] = []
    rejected: list[Rejection] = []

    def batch() -> Batch:
        packed = items_packed(items, first, names, rejected, _reason, json_points=True, skip=skip)
        rejected.sort(key=lambda r: r.line)
        return Batch("", first, rejected, len(items), packed)

    for number, line in enumerate(source, start=1):
        if bad and number in bad:
            rejected.append(Rejection(number, bad[number]))
            skip.append(len(items))
            items.append(None)
        elif line.strip():
            try:
                item = decode(line)
                if not isinstance(item, dict):
                    _not_object(item)
            except (ValueError, RecursionError) as e:  # JSONDecodeError and InvalidEvent are ValueErrors
                rejected.append(Rejection(number, _reason(e)))
                skip.append(len(items))
                items.append(None)
            else:
                items.append(item)
        else:
            skip.append(len(items))
            items.append(None)
        if len(items) >= batch_lines:
            yield batch()
            first, items, skip, rejected = number + 1, [], [], []
    if items or rejected:
        yield batch()


def _json_term(item: dict[str, Any], names: dict[str, str]) -> str:
    """The input term of a JSON object: the fast way for the usual
    ``{"event": name, "args": [...], "time": t}`` with plain values, else
    :meth:`Event.coerce` (the same terms, and the same reasons)."""
    if "event" in item and "time" in item:
        term = plain_element(item["event"], item.get("args", ()), item["time"], names)
        if term is not None:
            return term
    return Event.coerce(item).to_term()


def json_line_reason(line: str) -> Optional[str]:
    """Why ``etalis run`` rejects the JSON line ``line`` before it looks at
    its fields (not text, see :func:`decode_lines`: not UTF-8, with its bad
    bytes as lone surrogates; not JSON; not an object), or None.  Replay
    asks it of the lines that Spark's JSON reader cannot read."""
    reason = not_text(line)
    if reason:
        return reason
    try:
        item = json.JSONDecoder(parse_constant=_not_a_number).decode(line)
        if not isinstance(item, dict):
            _not_object(item)
    except (ValueError, RecursionError) as e:
        return _reason(e)
    return None


def _not_a_number(name: str) -> Any:
    raise InvalidEvent(f"not JSON: {name} (JSON has no NaN or infinity)")


def _not_object(item: Any) -> str:
    raise InvalidEvent(f"{json.dumps(item)[:60]} is not a JSON object")


def _reason(e: Exception) -> str:
    if isinstance(e, json.JSONDecodeError):
        return f"not JSON: {e.msg} at column {e.colno}"
    if isinstance(e, RecursionError):
        return f"nested deeper than {MAX_NESTING} levels"
    if isinstance(e, InvalidEvent):
        return str(e)
    return f"not readable: {str(e).split(';')[0]}"  # e.g. an integer of more than 4300 digits


def csv_rows(lines: Iterable[str]) -> "_csv.Reader":
    """The rows of CSV ``lines`` (csv.reader), with no bound on the size
    of a field but the line's: Python's default of 131,072 characters
    ended ``etalis run`` with a traceback (``field larger than field
    limit``) at a longer field."""
    csv.field_size_limit(sys.maxsize)
    return csv.reader(lines)


def _csv_batches(source: Lines, mapping: Mapping, batch_lines: int, packed: bool = False) -> Iterator[Batch]:
    reader = csv_rows(source)
    bad = source.bad
    if mapping.columns:
        header = list(mapping.columns)
        next_line = 1
    else:
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            return
        next_line = reader.line_num + 1
        if bad:
            try:
                _check_decoded(bad, 1, next_line)
            except InvalidEvent as e:
                raise ValueError(f"the header of the file: {e}") from None
    error = missing_column((mapping.event_col, mapping.time, *mapping.args), header, "the header")
    if error is not None:
        raise error
    yield from _csv_table_batches(reader, header, mapping, bad, next_line, batch_lines, packed)


def _csv_table_batches(reader: Any, header: Sequence[str], mapping: Mapping, bad: dict[int, str], next_line: int,
                       batch_lines: int, packed: bool = False) -> Iterator[Batch]:
    """Batch lists of the rows of ``reader``: the rows that are not
    rejected on their own (not UTF-8, a wrong number of fields) are
    converted a column at a time (:func:`~etalis_py.inputs.tables.column_terms`),
    as the reference's row mapper (``reference/mapping.py``) converts a row;
    a blank row is nothing."""
    from .tables import column_terms, joined_packed, row_columns

    index = {c: i for i, c in enumerate(header)}
    first = next_line
    terms: list[str] = []           # a term per line, from line ``first``
    rejected: list[Rejection] = []
    rows: list[Sequence[str]] = []  # the rows to convert, and their places in terms
    places: list[int] = []

    def batch() -> Batch:
        def values(col: str) -> tuple[list[str], bool]:
            i = index[col]
            return [row[i] for row in rows], False

        if packed:
            columns, why = joined_packed(row_columns(values, mapping, typed=True), mapping, lambda i: False)
        else:
            converted, why = column_terms(values, mapping, lambda i: False)
            for place, term in zip(places, converted):
                terms[place] = term
        rejected.extend(Rejection(first + places[i], reason) for i, reason in why)
        rejected.sort(key=lambda r: r.line)
        if packed:
            return Batch("", first, rejected, len(terms), columns.placed(places, len(terms)))
        return Batch(batch_list(terms), first, rejected, len(terms))

    for row in reader:
        start = next_line
        next_line = reader.line_num + 1
        if "".join(row).strip():    # not a blank row
            try:
                if bad:
                    _check_decoded(bad, start, next_line)
                if len(row) != len(header):
                    spans = (f" (a quoted field runs on to line {next_line - 1}: lines {start + 1} to "
                             f"{next_line - 1} are part of this row, not rows of their own)"
                             if next_line - start > 1 else "")
                    raise InvalidEvent(f"{len(row)} fields where the header has {len(header)}{spans}")
                rows.append(row)
                places.append(len(terms))
            except InvalidEvent as e:
                rejected.append(Rejection(start, str(e)))
        # a record may span lines (quoted newlines): a term for each line
        terms.extend([NOTHING] * (next_line - start))
        if len(terms) >= batch_lines:
            yield batch()
            first, terms, rejected, rows, places = next_line, [], [], [], []
    if terms or rejected:
        yield batch()


def _check_decoded(bad: dict[int, str], start: int, end: int) -> None:
    """Raise InvalidEvent if a line from ``start`` to before ``end`` is not UTF-8."""
    for number in range(start, end):
        if number in bad:
            raise InvalidEvent(bad[number])


def header_of(path: Path, kind: str, mapping: Mapping) -> list[str]:
    """The column names of a CSV or Parquet stream file; none for another
    kind, a pipe or a device (read once, by the run), or a file that cannot
    be read (its reader says why)."""
    if mapping.columns:
        return list(mapping.columns) if kind == "csv" else []
    if not path.is_file():
        return []
    try:
        if kind == "csv":
            with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
                return [h.strip() for h in next(csv_rows(f), [])]
        if kind == "parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
    except (OSError, ValueError):
        pass
    return []


def times_are_dates(path: Path, kind: str, mapping: Mapping) -> bool:
    """Whether the stream file writes its times as dates, as its first
    event does: with ``--time-format``, a time cell that is no number, a
    Parquet timestamp, or a JSON line's time text that is no number (a pipe
    or a device is not read ahead: no).  Its rejections then say times as
    dates, and its Parquet detections have timestamps."""
    if mapping.time_format is not None:
        return True
    if not path.is_file():      # a pipe or a device is read once, by the run
        return False
    try:
        if kind == "csv" and mapping.time is not None:
            with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
                rows = csv_rows(f)
                header = list(mapping.columns) if mapping.columns else [h.strip() for h in next(rows, [])]
                row = next((r for r in rows if any(c.strip() for c in r)), None)
            if row is None or mapping.time not in header or header.index(mapping.time) >= len(row):
                return False
            return _is_date(row[header.index(mapping.time)])
        if kind == "jsonl":
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                first = next((line for line in f if line.strip()), "{}")
            item = json.loads(first)
            value = item.get("time", item.get("start")) if isinstance(item, dict) else None
            return isinstance(value, str) and _is_date(value)
        if kind == "parquet" and mapping.time is not None:
            import pyarrow.parquet as pq

            field = pq.read_schema(path).field(mapping.time)
            return str(field.type).startswith(("timestamp", "date", "string", "large_string"))
    except (OSError, ValueError, KeyError):
        return False
    return False


def _is_date(text: str) -> bool:
    try:
        float(text.strip())
    except ValueError:
        return bool(text.strip())
    return False
