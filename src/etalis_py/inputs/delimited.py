"""CSV files: a row an event, mapped by the table options (``--event`` or
``--event-col``, ``--args``, ``--time``, see :class:`~etalis_py.inputs.mapping.Mapping`).

The rows that are not rejected on their own (not UTF-8, a wrong number of
fields) are converted a column at a time (:mod:`etalis_py.inputs.tables`), as the
reference's row mapper (``reference/mapping.py``) converts a row.  The
lines are read in bulk by pyarrow's CSV reader (:func:`_bulk_block`), a
batch's lines at a time, up to the first chunk with a quote (a field may
span lines), a carriage return or a line that is not text; from there on
row by row with Python's csv module, which numbers each row's lines.  A
block of rows whose arguments and time are plain decimal numerals is read
by C (:class:`~etalis_py.inputs.native.BlockReader`) into the same
packed batch.
"""

from __future__ import annotations

import _csv
import csv
import io
import itertools
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from .batch import Batch
from ..events import NOTHING, InvalidEvent, Rejection, batch_list
from .native import BlockReader
from .registry import Reading
from .lines import BOM, Lines, decode_lines
from .mapping import Mapping, is_date, missing_column
from .tables import column_terms, joined_packed, joined_terms, number_array, row_columns


def read_csv(chunks: Iterable[bytes], mapping: Optional[Mapping], reading: Reading) -> Iterator[Batch]:
    """Batches of the CSV rows of ``chunks``, mapped by ``mapping``: in
    bulk (:func:`_bulk_block`) up to the first chunk that holds a quote,
    a carriage return or a line that is not text, from there on row by
    row."""
    assert mapping is not None     # a format with TABLE_OPTIONS is given its checked mapping
    batch_lines = max(1, reading.batch_lines)
    chunks = iter(chunks)
    header = list(mapping.columns) if mapping.columns else None
    pending = b""       # whole lines not yet read, from line ``line``
    reader = BlockReader.load() if reading.packed else None
    line = 1
    for data in chunks:
        if line == 1 and not pending:
            data = data.removeprefix(BOM)
        if not _plain(data):
            rest = Lines(itertools.chain([pending + data], chunks), keepends=True, at_start=False)
            named = mapping if header is None else replace(mapping, columns=tuple(header))
            batches = _csv_batches(rest, named, batch_lines, reading.packed)
            yield from (b.shifted(line - 1) for b in batches)
            return
        pending += data
        if header is None:
            if b"\n" not in pending:
                continue        # the header line goes on in the next chunk
            header, pending = _header(pending, mapping)
            line = 2
        newlines = np.flatnonzero(np.frombuffer(pending, dtype=np.uint8) == _NEWLINE)
        cut = 0
        for at in range(batch_lines, len(newlines) + 1, batch_lines):
            end = int(newlines[at - 1]) + 1
            yield _block(reader, pending[cut:end], line, header, mapping, reading.packed)
            cut, line = end, line + batch_lines
        pending = pending[cut:]
    if header is None and pending:
        header, pending = _header(pending, mapping)
        line = 2
    if pending:
        yield _block(reader, pending, line, header or [], mapping, reading.packed)


_NEWLINE = ord("\n")


def _blank(line: bytes) -> bool:
    """Whether a line of a plain chunk is a blank row: its fields, joined, are blanks."""
    return not line.decode("utf-8").replace(",", "").strip()


def _plain(data: bytes) -> bool:
    """Whether a chunk of lines can be read in bulk: no quote (so each line
    is one row, its fields what lies between its commas), no carriage
    return, and all of it text (see :func:`~etalis_py.inputs.lines.decode_lines`)."""
    if b'"' in data or b"\r" in data:
        return False
    return not decode_lines(data)[1]


def _header(data: bytes, mapping: Mapping) -> tuple[list[str], bytes]:
    """The column names of the first line of ``data``, checked against
    the mapping, and the lines after it."""
    end = data.find(b"\n") + 1 or len(data)
    header = [h.strip() for h in next(csv_rows([data[:end].decode("utf-8")]), [])]
    error = missing_column((mapping.event_col, mapping.time, *mapping.args), header, "the header")
    if error is not None:
        raise error
    return header, data[end:]


def _block(reader: Optional[BlockReader], data: bytes, first: int, header: Sequence[str], mapping: Mapping,
           packed: bool) -> Batch:
    """The batch of the lines ``data`` (plain), by the C reader if it
    takes them (the same batch), else by :func:`_bulk_block`."""
    cells = reader.csv(data, header, mapping) if reader is not None and packed and header else None
    if cells is not None:
        return Batch("", first, [], len(cells), cells)
    return _bulk_block(data, first, header, mapping, packed)


def _bulk_block(data: bytes, first: int, header: Sequence[str], mapping: Mapping, packed: bool) -> Batch:
    """The batch of the lines ``data`` (plain, see :func:`_plain`), from
    line ``first`` on, read by pyarrow's CSV reader: the same rows, blank
    rows and rejections as row by row (:func:`_csv_table_batches`), as
    long as every line is a row or is rejected (else row by row, to be
    sure)."""
    text = data.decode("utf-8")
    lines = text.count("\n") + (not text.endswith("\n"))
    wrong: dict[int, tuple[int, bytes]] = {}     # 1-based line of the block -> its number of fields, its text

    def invalid(row: Any) -> str:
        wrong[row.number] = row.actual_columns, row.text.encode("utf-8")
        return "skip"

    names = [f"c{i}" for i in range(len(header))]
    index = {c: names[i] for i, c in reversed(list(enumerate(header)))}
    wanted = list(dict.fromkeys(index[c] for c in (mapping.event_col, *mapping.args, mapping.time) if c is not None))
    try:
        table = pa_csv.read_csv(
            io.BytesIO(data),
            read_options=pa_csv.ReadOptions(column_names=names, use_threads=False, block_size=len(data) + 1),
            parse_options=pa_csv.ParseOptions(invalid_row_handler=invalid, ignore_empty_lines=False),
            convert_options=pa_csv.ConvertOptions(column_types={n: pa.string() for n in wanted},
                                                  strings_can_be_null=False, include_columns=wanted))
    except (pa.ArrowInvalid, ValueError):
        table = None
    if table is None or table.num_rows + len(wrong) != lines or any(n is None for n in wrong):
        return next(_fallback(data, first, header, mapping, packed, lines))
    row_lines = np.ones(lines, dtype=bool)
    row_lines[[n - 1 for n in wrong]] = False
    places = np.flatnonzero(row_lines)
    records = table.combine_chunks()
    # a blank row's fields are all blanks, its first wanted field too: only
    # the rows whose first wanted field has no printable ASCII character are
    # looked at, on their line
    maybe = pc.match_substring_regex(records.column(0), r"\A[^!-~]*\z")
    starts = np.concatenate(([0], np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _NEWLINE) + 1))
    blank_rows = {i for i in pc.indices_nonzero(maybe).to_pylist()
                  if _blank(data[starts[places[i]]:starts[places[i] + 1] if places[i] + 1 < len(starts) else None])}

    def values(col: str) -> tuple[list[Any], bool]:
        return records.column(index[col]).to_pylist(), False

    def numbers(col: str) -> Any:
        return number_array(records.column(index[col]).combine_chunks())

    columns = row_columns(values, mapping, numbers if packed else None, typed=packed)
    rejected = [Rejection(first + n - 1, f"{fields} fields where the header has {len(header)}")
                for n, (fields, line) in wrong.items() if not _blank(line)]
    if packed:
        cells, why = joined_packed(columns, mapping, blank_rows.__contains__)
        rejected += [Rejection(first + int(places[i]), reason) for i, reason in why]
        rejected.sort(key=lambda r: r.line)
        return Batch("", first, rejected, lines, cells.placed(places.tolist(), lines))
    converted, why = joined_terms(columns, mapping, blank_rows.__contains__)
    terms = [NOTHING] * lines
    for place, term in zip(places.tolist(), converted):
        terms[place] = term
    rejected += [Rejection(first + int(places[i]), reason) for i, reason in why]
    rejected.sort(key=lambda r: r.line)
    return Batch(batch_list(terms), first, rejected, lines)


def _fallback(data: bytes, first: int, header: Sequence[str], mapping: Mapping, packed: bool,
              lines: int) -> Iterator[Batch]:
    """The lines ``data`` read row by row, as one batch."""
    named = replace(mapping, columns=tuple(header))
    for batch in _csv_batches(Lines([data], keepends=True, at_start=False), named, lines, packed):
        yield batch.shifted(first - 1)


def header(path: Path, mapping: Mapping) -> list[str]:
    """The column names of the CSV file at ``path``."""
    if mapping.columns:
        return list(mapping.columns)
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
        return [h.strip() for h in next(csv_rows(f), [])]


def dates(path: Path, mapping: Mapping) -> bool:
    """Whether the first row of the CSV file at ``path`` writes its time
    as a date (a text that is no number)."""
    if mapping.time is None:
        return False
    with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
        rows = csv_rows(f)
        names = list(mapping.columns) if mapping.columns else [h.strip() for h in next(rows, [])]
        row = next((r for r in rows if any(c.strip() for c in r)), None)
    if row is None or mapping.time not in names or names.index(mapping.time) >= len(row):
        return False
    return is_date(row[names.index(mapping.time)])


def csv_header(line: bytes) -> Optional[list[str]]:
    """The column names of a CSV stream's first line."""
    row = next(csv_rows(Lines([line], keepends=True)), None)
    return [h.strip() for h in row] if row else None


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

