"""CSV files: a row an event, mapped by the table options (``--event`` or
``--event-col``, ``--args``, ``--time``, see :class:`~etalis_py.mapping.Mapping`).

The rows that are not rejected on their own (not UTF-8, a wrong number of
fields) are converted a column at a time (:mod:`etalis_py.tables`), as the
reference's row mapper (``reference/mapping.py``) converts a row.  A
chunk of lines without a quote is read in bulk by pyarrow's CSV reader
(:func:`bulk_rows`); a chunk with quotes (a field may span lines) goes
row by row with Python's csv module, which numbers each row's lines.
"""

from __future__ import annotations

import _csv
import csv
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Optional

from .batch import Batch
from .events import NOTHING, InvalidEvent, Rejection, batch_list
from .registry import Reading
from .lines import Lines
from .mapping import Mapping, is_date, missing_column
from .tables import column_terms, joined_packed, row_columns


def read_csv(chunks: Iterable[bytes], mapping: Optional[Mapping], reading: Reading) -> Iterator[Batch]:
    """Batches of the CSV rows of ``chunks``, mapped by ``mapping``."""
    assert mapping is not None     # a format with TABLE_OPTIONS is given its checked mapping
    return _csv_batches(Lines(chunks, keepends=True), mapping, reading.batch_lines, reading.packed)


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
    converted a column at a time (:func:`~etalis_py.tables.column_terms`),
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

