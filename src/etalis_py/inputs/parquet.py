"""Parquet files: a row an event, mapped by the table options, read in
record batches with pyarrow, a buffer of
:data:`~etalis_py.inputs.lines.CHUNK_BYTES` at a time (memory does not grow with
the file nor with its row groups).  Row numbers (from 1) stand for line
numbers; the rows are converted as a CSV file's (:mod:`etalis_py.inputs.tables`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import pyarrow.parquet as pq

from .batch import Batch
from ..events import Rejection, batch_list
from .registry import Reading
from .lines import CHUNK_BYTES
from .mapping import Mapping, missing_column
from .tables import batch_packed, batch_terms


def read_parquet(path: Path, mapping: Optional[Mapping], reading: Reading, first_row: int = 1) -> Iterator[Batch]:
    """Batches of the rows of the Parquet file at ``path``, from its row
    ``first_row`` on (1-based: a resumed run's)."""
    assert mapping is not None     # a format with TABLE_OPTIONS is given its checked mapping
    return parquet_batches(path, mapping, reading.batch_lines, reading.packed, first_row)


def header(path: Path, mapping: Mapping) -> list[str]:
    """The column names of the Parquet file at ``path`` (none if the
    mapping names columns, which a Parquet file has of its own)."""
    if mapping.columns:
        return []
    return list(pq.read_schema(path).names)


def dates(path: Path, mapping: Mapping) -> bool:
    """Whether the Parquet file's time column holds dates (timestamps, or texts)."""
    if mapping.time is None:
        return False
    field = pq.read_schema(path).field(mapping.time)
    return str(field.type).startswith(("timestamp", "date", "string", "large_string"))


def parquet_batches(path: Path, mapping: Mapping, batch_rows: int, packed: bool = False,
                    first_row: int = 1) -> Iterator[Batch]:
    """Batch lists of the rows of the Parquet file at ``path`` (if
    ``packed``, batches of packed columns, see :mod:`etalis_py.bridge.columns`),
    from its row ``first_row`` on (1-based: a resumed run's)."""
    mapping.check()
    try:
        # a page at a time: pre-buffering reads every row group at once,
        # which made memory grow with the file
        source = pq.ParquetFile(path, pre_buffer=False, buffer_size=CHUNK_BYTES)
    except Exception as e:  # pyarrow raises ArrowInvalid (a ValueError) or OSError
        raise ValueError(f"{path}: not a Parquet file ({e})") from None
    header = list(source.schema_arrow.names)
    error = missing_column((mapping.event_col, mapping.time, *mapping.args), header, "the Parquet file")
    if error is not None:
        raise error
    first = 1
    for records in source.iter_batches(batch_size=batch_rows):
        if first < first_row:
            skipped = min(records.num_rows, first_row - first)
            first += skipped
            records = records.slice(skipped)
            if not records.num_rows:
                continue
        if packed:
            batch, rejected = batch_packed(records, mapping)
            yield Batch("", first, [Rejection(first + i, r) for i, r in rejected], len(batch), batch)
        else:
            terms, rejected = batch_terms(records, mapping)
            yield Batch(batch_list(terms), first, [Rejection(first + i, r) for i, r in rejected], len(terms))
        first += records.num_rows
