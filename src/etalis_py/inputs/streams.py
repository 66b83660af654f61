"""Reading event streams through their input formats (:mod:`etalis_py.inputs.registry`):
a file, standard input or a file as it grows, into batches of engine input
(:class:`~etalis_py.inputs.batch.Batch`) that keep the source's line numbers, so
that ``read = accepted + rejected`` for every source."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Optional

from .batch import BATCH_LINES, Batch
from .lines import BOM, LineOffsets, follow_chunks, line_chunks
from .mapping import Mapping
from .registry import InputFormat, Reading, by_name, of_path


def input_format(path: Optional[Path], kind: Optional[str] = None) -> InputFormat:
    """The format ``kind`` names, else that of the file at ``path`` by its suffix."""
    if kind is not None:
        return by_name(kind)
    if path is None:
        raise ValueError("give --input-format")
    return of_path(path)


def read_batches(path: Path, mapping: Optional[Mapping] = None, batch_lines: int = BATCH_LINES,
                 kind: Optional[str] = None, packed: bool = False) -> Iterator[Batch]:
    """Batches of the stream file at ``path``, of ``kind`` (default: by its
    suffix); tables and JSON lines as packed columns if ``packed`` (see
    :mod:`etalis_py.bridge.columns`)."""
    yield from resumed_batches(path, mapping, kind, packed, batch_lines=batch_lines)[0]


def resumed_batches(path: Path, mapping: Optional[Mapping], kind: Optional[str] = None, packed: bool = False,
                    line: int = 1, start: int = 0, follow: bool = False, timeout: Optional[float] = None,
                    ticks: bool = False,
                    batch_lines: int = BATCH_LINES) -> tuple[Iterator[Batch], Optional[LineOffsets]]:
    """The batches of the stream file at ``path`` from its line ``line``
    on, which starts at byte ``start`` (a run resumed from a checkpoint; a
    table's ``mapping`` then names its columns), as it grows if ``follow``
    (see :func:`~etalis_py.inputs.lines.follow_chunks`, whose ``timeout`` and
    ``ticks`` these are), and what tells the byte offset of a line read:
    None for a format read as a whole file (Parquet by rows, TriG by
    graphs: ``line`` is then the first row or graph given)."""
    fmt = input_format(path, kind)
    mapping = fmt.checked(mapping)
    reading = Reading(batch_lines, str(path), packed and not follow)
    whole = fmt.file_reader()
    if whole is not None and not follow:
        return whole(path, mapping, reading, line), None
    if follow:
        tracker = LineOffsets(follow_chunks(path, timeout, start=start, ticks=ticks), line, start)
        return read_live(tracker, fmt.name, mapping, batch_lines, first_line=line), tracker
    read = fmt.reader()

    def chunks() -> Iterator[bytes]:
        with path.open("rb") as f:
            if start:       # a pipe (/dev/fd/N) is read from its start, and cannot seek
                f.seek(start)
            yield from line_chunks(f, fmt.chunk_bytes)

    tracker = LineOffsets(chunks(), line, start)
    return (b.shifted(line - 1) for b in read(tracker, mapping, reading)), tracker


def read_live(chunks: Iterable[bytes | str], kind: Optional[str], mapping: Optional[Mapping] = None,
              batch_lines: int = BATCH_LINES, first_line: int = 1) -> Iterator[Batch]:
    """Batches of a stream that arrives in ``chunks`` of whole lines (the
    last one may lack its newline), one or more batches per chunk as soon
    as it arrives, numbered as lines of one file from ``first_line`` on.
    An empty chunk (the source had nothing for a while) is an idle batch.
    The chunks of a table after its first are read under its first line,
    the header (unless the mapping names the columns).

    ``kind`` None sniffs it: csv when ``mapping`` gives a time column, else
    jsonl when the first line that is not blank starts with ``{``, else
    events.
    """
    offset = first_line - 1
    fmt = None if kind is None else by_name(kind)
    read: Optional[Callable[..., Iterator[Batch]]] = None
    head = b""
    data_chunks = (c.encode("utf-8", "surrogateescape") if isinstance(c, str) else c for c in chunks)
    for data in fmt.live_chunks(data_chunks) if fmt is not None else data_chunks:
        if not data:
            yield Batch("", offset + 1, terms=0, idle=True)
            continue
        if not offset:
            data = data.removeprefix(BOM)
        lines = data.count(b"\n") + (not data.endswith(b"\n"))
        if fmt is None:
            if not data.strip():
                offset += lines
                continue
            fmt = by_name("csv" if mapping is not None and mapping.time is not None else
                          "jsonl" if data.lstrip().startswith(b"{") else "events")
        if read is None:
            read = fmt.reader()
            mapping = fmt.checked(mapping)
        for batch in read([head + data], mapping, Reading(batch_lines)):
            yield batch.shifted(offset - head.count(b"\n"))
        if fmt.mapped and not head and mapping is not None and not mapping.columns:
            head = data[:data.find(b"\n") + 1] or data + b"\n"
        offset += lines


def header_of(path: Path, kind: str, mapping: Mapping) -> list[str]:
    """The column names of a table stream file; none for another kind, a
    pipe or a device (read once, by the run), or a file that cannot be
    read (its reader says why)."""
    if not path.is_file() and not (mapping.columns and kind == "csv"):
        return []
    try:
        return by_name(kind).column_names(path, mapping)
    except (OSError, ValueError):
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
        return by_name(kind).writes_dates(path, mapping)
    except (OSError, ValueError, KeyError):
        return False

