"""Parquet files as ``etalis run``'s input, read a column at a time.

A Parquet file is read in record batches with pyarrow, and its rows become
events exactly as the rows of the same table written as CSV would (and as
``etalis replay`` maps them): each value is taken as the text a CSV field
would hold, a number if it reads as one, else an atom; the same checks give
the same reasons.  The work is done per column rather than per row: a
column of integers or floats is converted in one pass, any other column
once per distinct value.  Row numbers (from 1) stand for line numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ._prolog import quote_atom
from .events import NOTHING, InvalidEvent, Rejection, batch_list, prolog_value
from .streams import Batch, Mapping, parse_time, parse_value

if TYPE_CHECKING:
    import pyarrow as pa

# A column's texts (Prolog text of each row's value) and reasons (why a
# row's value cannot be taken, None where it can).
Column = tuple[list[str], list[Optional[str]]]


def parquet_batches(path: Path, mapping: Mapping, batch_rows: int) -> Iterator[Batch]:
    """Batch lists of the rows of the Parquet file at ``path``."""
    import pyarrow.parquet as pq

    mapping.check()
    try:
        source = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises ArrowInvalid (a ValueError) or OSError
        raise ValueError(f"{path}: not a Parquet file ({e})") from None
    header = list(source.schema_arrow.names)
    missing = [c for c in (mapping.event_col, mapping.time, *mapping.args) if c is not None and c not in header]
    if missing:
        raise ValueError(f"no column {missing[0]!r} in the Parquet file: {', '.join(header)}")
    first = 1
    for records in source.iter_batches(batch_size=batch_rows):
        terms, rejected = batch_terms(records, mapping)
        yield Batch(batch_list(terms), first, [Rejection(first + i, r) for i, r in rejected], len(terms))
        first += records.num_rows


def batch_terms(records: "pa.RecordBatch", mapping: Mapping) -> tuple[list[str], list[tuple[int, str]]]:
    """The input terms of a record batch's rows (NOTHING for a row without
    an event) and the rejections, by 0-based row."""
    fmt = mapping.time_format
    columns: list[Column] = []    # in the order etalis run checks a CSV row's fields
    if mapping.event_col is not None:
        columns.append(_column(records.column(mapping.event_col), mapping.event_col, _name_text, False))
    for a in mapping.args:
        columns.append(_column(records.column(a), a, lambda text, col: prolog_value(parse_value(text, col)), True))
    time_col = mapping.time or ""
    columns.append(_column(records.column(time_col), time_col, lambda text, col: repr(parse_time(text, fmt)),
                           fmt is None))
    name = quote_atom(mapping.event) if mapping.event is not None else "{}"
    head = name.replace("{", "{{").replace("}", "}}") if mapping.event is not None else name
    if mapping.args:
        head += "(" + ",".join("{}" for _ in mapping.args) + ")"
    terms = list(map(f"event({head}, {{}})".format, *(texts for texts, _ in columns)))
    rejected: list[tuple[int, str]] = []
    for texts, reasons in columns:
        for i, reason in enumerate(reasons):
            if reason is not None and terms[i] is not NOTHING:
                terms[i] = NOTHING
                if not _blank_row(records, i):
                    rejected.append((i, reason))
    rejected.sort()
    return terms, rejected


def _name_text(text: str, col: str) -> str:
    return quote_atom(text)


def _column(array: "pa.Array", col: str, convert: Callable[[str, str], str], numeric: bool) -> Column:
    """The texts and reasons of a column: its values as CSV fields (see
    spark's ``_value_text``), stripped, converted by ``convert``; an empty
    field is rejected as by ``etalis run`` on a CSV file.  ``numeric``:
    ``convert`` makes of a finite number's text that text."""
    import pyarrow as pa

    from .spark import _value_text

    kind = array.type
    if numeric and (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        return _numbers(array.to_pylist(), col, convert)
    texts: list[str] = []
    reasons: list[Optional[str]] = []
    known: dict[Any, tuple[str, Optional[str]]] = {}
    for value in array.to_pylist():
        key = (type(value), value)
        got = known.get(key)
        if got is None:
            got = known[key] = _converted(_value_text(value).strip(), col, convert)
        texts.append(got[0])
        reasons.append(got[1])
    return texts, reasons


def _numbers(values: Sequence[Any], col: str, convert: Callable[[str, str], str]) -> Column:
    """A column of ints or floats: a finite value's text is its repr (what
    the general way makes of it, much faster)."""
    texts: list[str] = []
    reasons: list[Optional[str]] = []
    for v in values:
        if v is None:
            texts.append("")
            reasons.append(f"column {col!r} is empty")
        elif v.__class__ is int or math.isfinite(v):
            texts.append(repr(v))
            reasons.append(None)
        else:
            text, reason = _converted(repr(v), col, convert)
            texts.append(text)
            reasons.append(reason)
    return texts, reasons


def _converted(text: str, col: str, convert: Callable[[str, str], str]) -> tuple[str, Optional[str]]:
    if not text:
        return "", f"column {col!r} is empty"
    try:
        return convert(text, col), None
    except InvalidEvent as e:
        return "", str(e)


def _blank_row(records: "pa.RecordBatch", i: int) -> bool:
    """Whether every field of row ``i`` is empty (etalis run skips such a
    row of a CSV file without a word)."""
    from .spark import _value_text

    return all(not _value_text(records.column(c)[i].as_py()).strip() for c in range(records.num_columns))
