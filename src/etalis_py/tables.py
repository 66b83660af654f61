"""Tables as ``etalis run``'s input, converted a column at a time.

A Parquet file is read in record batches with pyarrow, and its rows become
events exactly as the rows of the same table written as CSV would (and as
``etalis replay`` maps them): each value is taken as the text a CSV field
would hold, a number if it reads as one, else an atom; the same checks give
the same reasons.  Row numbers (from 1) stand for line numbers.  The rows of
a CSV file are converted the same way (:func:`column_terms`).  The work is
done per column rather than per row: a column of integers or floats is
converted in one pass, any other column once per distinct value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from .prolog_text import input_term, quote_atom
from .events import NOTHING, NUMERAL, InvalidEvent, Rejection, batch_list, prolog_value, read_number, to_time
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
    import pyarrow as pa

    def values(col: str) -> tuple[list[Any], bool]:
        array = records.column(col)
        return array.to_pylist(), pa.types.is_integer(array.type) or pa.types.is_floating(array.type)

    return column_terms(values, mapping, lambda i: _blank_row(records, i))


def column_terms(values: Callable[[str], tuple[Sequence[Any], bool]], mapping: Mapping,
                 blank: Callable[[int], bool]) -> tuple[list[str], list[tuple[int, str]]]:
    """The input terms of rows given by columns (NOTHING for a row without
    an event) and the rejections, by 0-based row.  ``values(col)`` is a
    column's values, and whether they are all ints or floats (or None);
    ``blank(i)`` says whether row ``i`` has no field at all (no event, no
    rejection)."""
    return joined_terms(row_columns(values, mapping), mapping, blank)


def row_columns(values: Callable[[str], tuple[Sequence[Any], bool]], mapping: Mapping) -> list[Column]:
    """The texts and reasons of the columns that make a row's event, in the
    order ``etalis run`` checks a row's fields: the event name (if a column
    holds it), the arguments, the time (its texts are the seconds as
    Python's int() or float() reads them).  ``values`` as for
    :func:`column_terms`."""

    def arg_text(text: str, col: str) -> str:
        return prolog_value(parse_cell(text, col))

    fmt = mapping.time_format
    columns: list[Column] = []
    if mapping.event_col is not None:
        columns.append(_column(values(mapping.event_col)[0], False, mapping.event_col, _name_text, False))
    for a in mapping.args:
        if a == mapping.graph_col:  # an RDF graph: the term of graph(G)
            columns.append(_column(values(a)[0], False, a, _cell_reader(mapping.arg_reader(a)), False))
        else:
            columns.append(_column(*values(a), a, arg_text, True))
    time_col = mapping.time or ""
    times, numeric = values(time_col)

    def time_text(text: str, col: str) -> str:
        if fmt is None and ("." in text or "e" in text or "E" in text):
            # no int: what parse_time reads as a float, if it is a numeral
            t = read_number(text)
            if t is not None and math.isfinite(t):
                return repr(float(t))
        return repr(parse_time(text, fmt, mapping.time_zone))

    columns.append(_column(times, numeric and fmt is None, time_col, time_text, fmt is None))
    return columns


def joined_terms(columns: Sequence[Column], mapping: Mapping,
                 blank: Callable[[int], bool]) -> tuple[list[str], list[tuple[int, str]]]:
    """The input terms and rejections of :func:`column_terms` from the
    columns of :func:`row_columns`: a row's reason is that of its first
    column with one."""
    name = quote_atom(mapping.event) if mapping.event is not None else "{}"
    head = name.replace("{", "{{").replace("}", "}}") if mapping.event is not None else name
    if mapping.args:
        head += "(" + ",".join("{}" for _ in mapping.args) + ")"
    terms = list(map(input_term(head, "{}").format, *(texts for texts, _ in columns)))
    rejected: list[tuple[int, str]] = []
    for texts, reasons in columns:
        if reasons.count(None) == len(reasons):  # no row of this column is rejected
            continue
        for i, reason in enumerate(reasons):
            if reason is not None and terms[i] is not NOTHING:
                terms[i] = NOTHING
                if not blank(i):
                    rejected.append((i, reason))
    rejected.sort()
    return terms, rejected


def _cell_reader(read: Callable[[str], str]) -> Callable[[str, str], str]:
    return lambda text, col: read(text)


def _name_text(text: str, col: str) -> str:
    return quote_atom(text)


# A plain decimal number: Prolog reads it as the number that Python's
# int() or float() makes of it (floats are correctly rounded both ways).
_PLAIN_NUMBER = re.compile(r"-?[0-9]{1,300}(?:\.[0-9]{1,300})?")


def _column(values: Sequence[Any], numeric: bool, col: str, convert: Callable[[str, str], str],
            plain: bool) -> Column:
    """The texts and reasons of a column: its values as CSV fields (see
    :func:`value_text`), stripped, converted by ``convert``; an empty
    field is rejected as by ``etalis run`` on a CSV file.  ``numeric``: the
    values are ints and floats, and ``convert`` makes of a finite number's
    text that text; each other value is converted once.  ``plain``:
    ``convert`` makes of a plain decimal number a term that reads as the
    same number, so such a text stands for itself."""
    if numeric:
        return _numbers(values, col, convert)
    # a column holds values of one type (Arrow's, or the texts of CSV), so
    # equal values are the same value
    text_of: dict[Any, str] = {}
    reason_of: dict[Any, Optional[str]] = {}
    for v in dict.fromkeys(values):
        if plain and v.__class__ is str and _PLAIN_NUMBER.fullmatch(v):
            text_of[v], reason_of[v] = v, None
        else:
            text_of[v], reason_of[v] = _converted(value_text(v).strip(), col, convert)
    return list(map(text_of.__getitem__, values)), list(map(reason_of.__getitem__, values))


def _numbers(values: Sequence[Any], col: str, convert: Callable[[str, str], str]) -> Column:
    """A column of ints or floats: a finite value's text is its repr (what
    the general way makes of it, much faster): in one pass over the column
    when every value is a finite number."""
    try:
        if all(map(math.isfinite, values)):
            return list(map(repr, values)), [None] * len(values)
    except (TypeError, OverflowError):  # a None; an int too large for a float
        pass
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
    return all(not value_text(records.column(c)[i].as_py()).strip() for c in range(records.num_columns))


def value_text(value: Any) -> str:
    """A typed table value as the text a CSV field would hold."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime):
        return repr(to_time(value))
    if isinstance(value, (date, Decimal)):
        return str(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, default=str)
    return str(value)


def parse_cell(text: str, col: str) -> Any:
    """:func:`~etalis_py.streams.parse_value` of a stripped, non-empty
    text, with two exact shortcuts: a text that starts with a letter
    other than i or n (inf, nan) is no numeral; one with a dot or an e is
    no int."""
    first = text[0]
    if first.isalpha() and first not in "iInN":
        return text
    if "." not in text and "e" not in text and "E" not in text:
        return parse_value(text, col)
    if not NUMERAL.fullmatch(text):
        return text
    f = float(text)
    if f != f or f in (math.inf, -math.inf):
        raise InvalidEvent(f"column {col!r}: {text!r} is not a finite number")
    return f
