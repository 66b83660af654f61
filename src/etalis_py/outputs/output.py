"""Writing detections: JSON lines, CSV and Parquet, with times as seconds
or as readable dates.  ``etalis run`` and ``etalis replay`` write through the
same writers, so their files are identical.

The input is the engine's detection lines (``{"event": .., "args": [..],
"start": .., "end": ..}``, one a line, as ``etalis run`` prints them).
"""

from __future__ import annotations

import csv
import io
import json
import os
import select
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Optional, Protocol, cast

import pyarrow as pa
import pyarrow.parquet as pq

from ..events import Time, format_time, zone
from .detections import read_detections
from .report import Readable

OUT_FORMATS = ("jsonl", "csv", "parquet", "table")


@dataclass(frozen=True)
class TimeStyle:
    """How ``start`` and ``end`` are written: seconds as the events gave
    them (the default), ISO 8601 with the zone's offset (``iso``), or a
    strftime format (``strftime``), in the IANA zone ``tz`` (default UTC)."""

    iso: bool = False
    strftime: Optional[str] = None
    tz: Optional[str] = None

    def __post_init__(self) -> None:
        zone(self.tz)   # an unknown zone is an error now, not at the first detection

    @property
    def dates(self) -> bool:
        """Whether times are written as dates rather than seconds."""
        return self.iso or self.strftime is not None

    def time(self, t: Time) -> Any:
        """``t`` in this style; a time that is no date (beyond the years 1
        to 9999) stays its seconds, as ``str(Detection)`` shows it."""
        if not self.dates:
            return t
        try:
            return format_time(t, self.strftime, self.tz)
        except (OverflowError, ValueError, OSError):
            return t

    def restyle(self, d: dict[str, Any]) -> dict[str, Any]:
        """A detection's dict (provenance too) with its times in this style."""
        if not self.dates:
            return d
        out = {**d, "start": self.time(d["start"]), "end": self.time(d["end"])}
        if "provenance" in d:
            out["provenance"] = [self.restyle(p) for p in d["provenance"]]
        return out


def max_arity(printed: Iterable[str]) -> int:
    """The largest arity among event signatures such as ``c/1``."""
    return max((int(sig.rpartition("/")[2]) for sig in printed), default=0)


class DetectionWriter(Protocol):
    def write(self, lines: str) -> None:
        """Write detection lines (each ending in a newline)."""

    def close(self) -> None:
        """Finish the output (the caller closes the stream it gave)."""


class JsonlWriter:
    """The lines as they are; with dates, each line with its times restyled."""

    def __init__(self, out: IO[str], style: TimeStyle) -> None:
        self.out = out
        self.style = style

    def write(self, lines: str) -> None:
        if self.style.dates:
            lines = "".join(json.dumps(self.style.restyle(json.loads(line))) + "\n" for line in lines.splitlines())
        self.out.write(lines)
        self.out.flush()        # a live stream's detections as they happen

    def close(self) -> None:
        self.out.flush()


class CsvWriter:
    """RFC 4180 CSV (the csv module's quoting) with a header: ``event``,
    ``arg1`` ... ``argN`` (N the largest arity of the reported events; a
    shorter event leaves the rest empty), ``start``, ``end``, and with
    ``provenance`` a column of its JSON.  A list argument is written as
    its JSON text."""

    def __init__(self, out: IO[str], style: TimeStyle, arity: int, provenance: bool = False,
                 header: bool = True) -> None:
        self.out = out
        self.style = style
        self.arity = arity
        self.provenance = provenance
        self.csv = csv.writer(out, lineterminator="\n")
        if header:
            self.csv.writerow(csv_header(arity, provenance))

    def write(self, lines: str) -> None:
        for line in lines.splitlines():
            d = json.loads(line)
            args = [_cell(a) for a in d["args"]]
            if len(args) > self.arity:      # an event the rules do not report, e.g. a replay's transfer
                raise ValueError(f"{d['event']}/{len(args)} has more arguments than the {self.arity} columns")
            row = [d["event"], *args, *([""] * (self.arity - len(args))),
                   self.style.time(d["start"]), self.style.time(d["end"])]
            if self.provenance:
                row.append(json.dumps([self.style.restyle(p) for p in d.get("provenance", ())]))
            self.csv.writerow(row)
        self.out.flush()

    def close(self) -> None:
        self.out.flush()


def csv_header(arity: int, provenance: bool = False) -> list[str]:
    return ["event", *(f"arg{i}" for i in range(1, arity + 1)), "start", "end"] + (
        ["provenance"] if provenance else [])


def _cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, (list, dict)) else value


class ParquetWriter:
    """A Parquet file, written when closed (detections are kept until
    then): ``event``, then ``arg1`` ... ``argN`` typed (int64, double or
    string) where every value of an argument has one type, else one
    ``args`` column of JSON arrays (as ``etalis replay`` writes them);
    ``start`` and ``end`` as timestamps (microseconds, adjusted to UTC:
    pandas reads ``datetime64[us, UTC]``) when the times are ``dates``
    (the input wrote dates, or the style writes them), else as seconds
    (double), as ``etalis replay`` writes them; with ``provenance`` a
    column of its JSON."""

    def __init__(self, path: Path, style: TimeStyle, provenance: bool = False, dates: bool = False) -> None:
        self.path = path
        self.style = style
        self.provenance = provenance
        self.dates = dates or style.dates
        self.rows: list[dict[str, Any]] = []

    def write(self, lines: str) -> None:
        self.rows += map(json.loads, lines.splitlines())

    def close(self) -> None:
        rows = self.rows
        columns: dict[str, pa.Array] = {"event": pa.array([d["event"] for d in rows], pa.string())}
        types = _arg_types(rows)
        if types is None:
            columns["args"] = pa.array([json.dumps(d["args"]) for d in rows], pa.string())
        else:
            for i, kind in enumerate(types):
                columns[f"arg{i + 1}"] = pa.array([d["args"][i] if i < len(d["args"]) else None for d in rows], kind)
        for end in ("start", "end"):
            if self.dates:
                try:
                    micros = pa.array([round(float(d[end]) * 1_000_000) for d in rows], pa.int64())
                except OverflowError:
                    raise ValueError(f"a {end} time is too far from 1970 for a Parquet timestamp (microseconds in "
                                     "64 bits): write seconds, without --iso or --strftime") from None
                columns[end] = micros.cast(pa.timestamp("us", tz="UTC"))
            else:
                columns[end] = pa.array([float(d[end]) for d in rows], pa.float64())
        if self.provenance:
            columns["provenance"] = pa.array(
                [json.dumps([self.style.restyle(p) for p in d.get("provenance", ())]) for d in rows], pa.string())
        pq.write_table(pa.table(columns), self.path)


class TableWriter:
    """The table of ``etalis table``, written when closed, as ``readable``
    (a :class:`~etalis_py.outputs.report.Readable`: its zones and names) shows it."""

    def __init__(self, out: IO[str], readable: "Readable") -> None:
        self.out = out
        self.readable = readable
        self.lines: list[str] = []

    def write(self, lines: str) -> None:
        self.lines += lines.splitlines()

    def close(self) -> None:
        self.out.write(self.readable.table(read_detections(self.lines)))
        self.out.flush()


def _arg_types(rows: Sequence[dict[str, Any]]) -> Optional[list[Any]]:
    """The Arrow type of each argument position, or None when a position
    holds values of several types (or lists)."""
    kinds: list[set[type]] = []
    for d in rows:
        for i, a in enumerate(d["args"]):
            if i == len(kinds):
                kinds.append(set())
            kinds[i].add(type(a))
    arrow = {int: pa.int64(), float: pa.float64(), str: pa.string()}
    out = []
    for k in kinds:
        if len(k) != 1 or next(iter(k)) not in arrow:
            return None
        out.append(arrow[next(iter(k))])
    return out


def out_format(fmt: Optional[str], path: Optional[Path]) -> str:
    """The output format: ``fmt``, else by ``path``'s extension, else jsonl."""
    return fmt or (path.suffix.lower().lstrip(".") if path is not None and path.suffix.lower() in (".csv", ".parquet")
                   else "jsonl")


def open_writer(fmt: Optional[str], path: Optional[Path], stdout: IO[str], style: TimeStyle, arity: int,
                provenance: bool = False, readable: Optional["Readable"] = None,
                dates: bool = False, append: bool = False) -> DetectionWriter:
    """A writer of ``fmt`` (jsonl, csv, parquet or table; default: by
    ``path``'s extension, else jsonl) to the file ``path`` or else to
    ``stdout``.  ``arity`` is the number of argument columns of CSV;
    ``readable`` how a table shows detections (default: in the style's
    zone).  ``append``: go on writing a jsonl or csv file that a resumed
    run had begun (no CSV header: it is there)."""
    fmt = out_format(fmt, path)
    if fmt not in OUT_FORMATS:
        raise ValueError(f"unknown output format {fmt!r}: use one of {', '.join(OUT_FORMATS)}")
    if fmt == "parquet":
        if path is None:
            raise ValueError("parquet is written to a file: give --out FILE")
        return ParquetWriter(path, style, provenance, dates)
    out = stdout if path is None else path.open("a" if append else "w", encoding="utf-8", newline="")
    if fmt == "table" and readable is None:
        readable = Readable(style.tz or "UTC")
    text: DetectionWriter = (JsonlWriter(out, style) if fmt == "jsonl" else TableWriter(out, readable)
                             if readable is not None and fmt == "table" else
                             CsvWriter(out, style, arity, provenance, header=not append))
    return text if path is None else _Closing(text, out)


def formatted(fmt: str, lines: Iterable[str], style: TimeStyle, arity: int, chunk: int = 10_000,
              provenance: bool = False) -> Iterator[str]:
    """Detection lines as text of ``fmt`` (jsonl or csv), in pieces of up
    to ``chunk`` detections: for writers that take text (``etalis replay``);
    ``provenance``: CSV has a provenance column."""
    buffer = io.StringIO()
    out = JsonlWriter(buffer, style) if fmt == "jsonl" else CsvWriter(buffer, style, arity, provenance)
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= chunk:
            out.write("".join(batch))
            batch = []
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    out.write("".join(batch))
    yield buffer.getvalue()


def csv_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    """A table as RFC 4180 CSV text (None as an empty field), line by line."""
    buffer = io.StringIO()
    table = csv.writer(buffer, lineterminator="\n")
    table.writerow(header)
    yield buffer.getvalue()
    for row in rows:
        buffer.seek(0)
        buffer.truncate()
        table.writerow(["" if v is None else v for v in row])
        yield buffer.getvalue()


class _Closing:
    """A writer that closes the file it writes when it is closed."""

    def __init__(self, inner: DetectionWriter, stream: IO[str]) -> None:
        self.inner = inner
        self.stream = stream

    def write(self, lines: str) -> None:
        self.inner.write(lines)

    def flushed(self) -> tuple[int, int]:
        """Flush the file to the system; return its size in bytes and a new
        descriptor of it (which the caller closes), to sync it with."""
        self.stream.flush()
        fd = self.stream.fileno()
        return os.fstat(fd).st_size, os.dup(fd)

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.stream.close()


def flushed(writer: DetectionWriter) -> Optional[tuple[int, int]]:
    """The bytes written to the file of ``writer``, flushed to the system
    but not synced yet, and a new descriptor of the file to sync them
    with (see ``etalis run --checkpoint``); None if it writes no file of
    its own."""
    return writer.flushed() if isinstance(writer, _Closing) else None


class WholeLines(io.TextIOBase):
    """Text to a pipe a whole line at a time: each write(2) holds whole
    lines and at most PIPE_BUF bytes, which POSIX makes atomic, so that
    the reader never sees half a line, even of a writer killed with
    SIGKILL (a line longer than PIPE_BUF is written alone, without that
    guarantee).  Text is written on :meth:`flush`; its last line waits
    for its newline."""

    def __init__(self, stream: IO[str]) -> None:
        stream.flush()
        self._fd = stream.fileno()
        self._encoding = getattr(stream, "encoding", None) or "utf-8"
        self._errors = getattr(stream, "errors", None) or "strict"
        self._pending: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._pending.append(text)
        return len(text)

    def flush(self) -> None:
        data = "".join(self._pending).encode(self._encoding, self._errors)
        end = data.rfind(b"\n") + 1
        rest = data[end:]
        self._pending = [rest.decode(self._encoding, self._errors)] if rest else []
        pos = 0
        while pos < end:
            stop = end if end - pos <= select.PIPE_BUF else data.rfind(b"\n", pos, pos + select.PIPE_BUF) + 1
            if stop <= pos:
                stop = data.index(b"\n", pos) + 1
            piece = memoryview(data)[pos:stop]
            while piece:
                piece = piece[os.write(self._fd, piece):]
            pos = stop

    def close(self) -> None:
        self.flush()


def whole_lines(stream: IO[str]) -> IO[str]:
    """``stream``, written a whole line at a time (:class:`WholeLines`) if it is a pipe."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):    # not a file (io.UnsupportedOperation is an OSError)
        return stream
    if not stat.S_ISFIFO(os.fstat(fd).st_mode):
        return stream
    return cast(IO[str], WholeLines(stream))    # a text stream, whose unused methods are io.TextIOBase's
