"""Tables as ``etalis run``'s input, converted a column at a time.

The rows of a Parquet file (:mod:`etalis_py.inputs.parquet`) become events
exactly as the rows of the same table written as CSV would (and as
``etalis replay`` maps them): each value is taken as the text a CSV field
would hold, a number if it reads as one, else an atom; the same checks
give the same reasons.  The rows of a CSV file are converted the same way
(:func:`column_terms`).  The work is
done per column rather than per row: a column of integers or floats is
converted in one pass, any other column once per distinct value.
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from collections.abc import Callable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..bridge.columns import Packed, head_text, number_cells, value_cells
from ..bridge.prolog_text import input_term, quote_atom
from ..events import NOTHING, NUMERAL, InvalidEvent, prolog_value, read_number, to_time
from .mapping import Mapping, parse_time, parse_value


# A column's texts (Prolog text of each row's value) and reasons (why a
# row's value cannot be taken, None where it can).
Column = tuple[list[str], list[Optional[str]]]


def batch_terms(records: "pa.RecordBatch", mapping: Mapping) -> tuple[list[str], list[tuple[int, str]]]:
    """The input terms of a record batch's rows (NOTHING for a row without
    an event) and the rejections, by 0-based row."""
    return column_terms(_arrow_values(records), mapping, lambda i: _blank_row(records, i))


def batch_packed(records: "pa.RecordBatch", mapping: Mapping) -> tuple[Packed, list[tuple[int, str]]]:
    """:func:`batch_terms` as packed columns: a column of numbers (see
    :func:`number_array`) as itself, without its texts."""
    columns = row_columns(_arrow_values(records), mapping, lambda col: number_array(records.column(col)), typed=True)
    return joined_packed(columns, mapping, lambda i: _blank_row(records, i))


def number_array(array: "pa.Array") -> Optional["np.ndarray[Any, Any]"]:
    """The numbers of an Arrow column, as numpy's int64 or float64, if each
    value stands for itself as a number (see :func:`row_columns`): a column
    of int64 or finite float64 numbers without a null, or of texts that are
    all plain decimal numerals, all with a fraction (float64) or all
    without and of at most 18 digits (int64), read as Python's float() and
    int() read them (Arrow's reading of a numeral is correctly rounded, as
    Python's); else None."""
    if array.null_count or not len(array):
        return None
    if pa.types.is_int64(array.type) or pa.types.is_float64(array.type):
        values = _buffer_numbers(array)
        return values if values.dtype.kind == "i" or np.isfinite(values).all() else None
    if not pa.types.is_string(array.type):
        return None
    try:
        # at most one of the two holds for every value: the first value's kind is tried first
        kinds = [(_PLAIN_FLOAT, pa.float64()), (_PLAIN_INT64, pa.int64())]
        if b"." not in array.slice(0, 1).cast(pa.binary())[0].as_py():
            kinds.reverse()
        for pattern, kind in kinds:
            if pc.all(pc.match_substring_regex(array, pattern)).as_py():
                return _buffer_numbers(pc.cast(array, kind))
    except pa.ArrowInvalid:     # text that is not UTF-8
        pass
    return None


def _buffer_numbers(array: "pa.Array") -> "np.ndarray[Any, Any]":
    """An int64 or float64 Arrow column without a null as numpy's view of
    its data buffer (Array.to_numpy would import pandas: 0.3 s a run)."""
    dtype = np.int64 if pa.types.is_int64(array.type) else np.float64
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * 8)


def _arrow_values(records: "pa.RecordBatch") -> Callable[[str], tuple[Sequence[Any], bool]]:
    def values(col: str) -> tuple[list[Any], bool]:
        array = records.column(col)
        return array.to_pylist(), pa.types.is_integer(array.type) or pa.types.is_floating(array.type)

    return values


def column_terms(values: Callable[[str], tuple[Sequence[Any], bool]], mapping: Mapping,
                 blank: Callable[[int], bool]) -> tuple[list[str], list[tuple[int, str]]]:
    """The input terms of rows given by columns (NOTHING for a row without
    an event) and the rejections, by 0-based row.  ``values(col)`` is a
    column's values, and whether they are all ints or floats (or None);
    ``blank(i)`` says whether row ``i`` has no field at all (no event, no
    rejection)."""
    return joined_terms(row_columns(values, mapping), mapping, blank)


def row_columns(values: Callable[[str], tuple[Sequence[Any], bool]], mapping: Mapping,
                numbers: Optional[Callable[[str], Any]] = None, typed: bool = False) -> list[Column]:
    """The texts and reasons of the columns that make a row's event, in the
    order ``etalis run`` checks a row's fields: the event name (if a column
    holds it), the arguments, the time (its texts are the seconds as
    Python's int() or float() reads them).  ``values`` as for
    :func:`column_terms`; ``numbers(col)``, if given, is the numpy array
    of a column of numbers that each stand for themselves (texts are not
    needed), or None.  ``typed``: a number that stands for itself is the
    Python int or float, not its text (for packed columns)."""

    def array(col: str) -> Optional[Column]:
        array = numbers(col) if numbers is not None else None
        return None if array is None else (array, [None] * len(array))

    def arg_text(text: str, col: str) -> str:
        return prolog_value(parse_cell(text, col))

    fmt = mapping.time_format
    columns: list[Column] = []
    if mapping.event_col is not None:
        columns.append(_column(values(mapping.event_col)[0], False, mapping.event_col, _name_text, False))
    for a in mapping.args:
        if a == mapping.graph_col:  # an RDF graph: the term of graph(G)
            columns.append(_column(values(a)[0], False, a, _cell_reader(arg_reader(mapping, a)), False))
        else:
            columns.append(array(a) or _column(*values(a), a, arg_text, True, typed))
    time_col = mapping.time or ""
    if mapping.time_format is None and (column := array(time_col)) is not None:
        columns.append(column)
        return columns
    times, numeric = values(time_col)

    def time_text(text: str, col: str) -> str:
        if fmt is None and ("." in text or "e" in text or "E" in text):
            # no int: what parse_time reads as a float, if it is a numeral
            t = read_number(text)
            if t is not None and math.isfinite(t):
                return repr(float(t))
        return repr(parse_time(text, fmt, mapping.time_zone))

    columns.append(_column(times, numeric and fmt is None, time_col, time_text, fmt is None, typed))
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
    terms = list(map(input_term(head, "{}").format, *(_texts(texts) for texts, _ in columns)))
    nothing, rejected = _reasons(columns, blank)
    for i in nothing:
        terms[i] = NOTHING
    return terms, rejected


def joined_packed(columns: Sequence[Column], mapping: Mapping,
                  blank: Callable[[int], bool]) -> tuple[Packed, list[tuple[int, str]]]:
    """:func:`joined_terms` as packed columns (see :mod:`etalis_py.bridge.columns`)."""
    arity = len(mapping.args)
    nothing, rejected = _reasons(columns, blank)
    if mapping.event is not None:
        codes = np.zeros(len(columns[-1][0]), dtype=np.int32)
        heads = [head_text(quote_atom(mapping.event), arity)]
    else:
        names = columns[0][0]
        # each name's code: its place among the names in the order they first come
        code_of = {name: i for i, name in enumerate(dict.fromkeys(names))}
        codes = np.fromiter(map(code_of.__getitem__, names), dtype=np.int32, count=len(names))
        codes[nothing] = -1
        # a rejected row's name may be no name
        used = np.unique(codes[codes >= 0]).tolist()
        renumber = np.full(len(code_of) + 1, -1, dtype=np.int32)
        renumber[used] = np.arange(len(used), dtype=np.int32)
        codes = renumber[codes]
        distinct = list(code_of)
        heads = [head_text(distinct[i], arity) for i in used]
        columns = columns[1:]
    codes[nothing] = -1
    cells = [number_cells(texts) if isinstance(texts, np.ndarray) else value_cells(texts, _cell_text)
             for texts, _ in columns]
    return Packed(codes, heads, cells), rejected


def _cell_text(value: Any) -> str:
    """The Prolog text of a typed column's value that is not an int64 or
    a float: its text, or an int's digits (a row without an event has the
    empty text: it is never used, but must read)."""
    if value.__class__ is str:
        return value or "[]"
    return repr(value)


def _texts(texts: Any) -> Sequence[str]:
    """The texts of a column (of its numbers, for an array of :func:`row_columns`)."""
    return texts if isinstance(texts, list) else list(map(repr, texts.tolist()))


def _reasons(columns: Sequence[Column], blank: Callable[[int], bool]) -> tuple[list[int], list[tuple[int, str]]]:
    """The rows with no event (a reason in a column), and the rejections
    of those that are not blank, each with its first column's reason."""
    nothing: dict[int, None] = {}
    rejected: list[tuple[int, str]] = []
    for _, reasons in columns:
        if reasons.count(None) == len(reasons):  # no row of this column is rejected
            continue
        for i, reason in enumerate(reasons):
            if reason is not None and i not in nothing:
                nothing[i] = None
                if not blank(i):
                    rejected.append((i, reason))
    rejected.sort()
    return list(nothing), rejected


def arg_reader(mapping: Mapping, col: str) -> Callable[[str], str]:
    """A function from a non-empty cell of argument column ``col`` to its
    Prolog text (an RDF graph's, for the mapping's graph column); it
    raises InvalidEvent with the reason."""
    if col == mapping.graph_col:
        # rdflib loads for a table with a graph column, not for every table
        from .graphs import graph_cell

        return lambda text: graph_cell(text, mapping.stream)
    return lambda text: prolog_value(parse_value(text, col))


def _cell_reader(read: Callable[[str], str]) -> Callable[[str, str], str]:
    return lambda text, col: read(text)


def _name_text(text: str, col: str) -> str:
    return quote_atom(text)


# A plain decimal number: Prolog reads it as the number that Python's
# int() or float() makes of it (floats are correctly rounded both ways).
_PLAIN_NUMBER = re.compile(r"-?[0-9]{1,300}(?:\.[0-9]{1,300})?")
# the same, as whole texts (Arrow's regular expressions): with a fraction, and an int64 without
_PLAIN_FLOAT = r"\A-?[0-9]{1,300}\.[0-9]{1,300}\z"
_PLAIN_INT64 = r"\A-?[0-9]{1,18}\z"


def _column(values: Sequence[Any], numeric: bool, col: str, convert: Callable[[str, str], str],
            plain: bool, typed: bool = False) -> Column:
    """The texts and reasons of a column: its values as CSV fields (see
    :func:`value_text`), stripped, converted by ``convert``; an empty
    field is rejected as by ``etalis run`` on a CSV file.  ``numeric``: the
    values are ints and floats, and ``convert`` makes of a finite number's
    text that text; each other value is converted once.  ``plain``:
    ``convert`` makes of a plain decimal number a term that reads as the
    same number, so such a text stands for itself (``typed``: as that
    number, an int or a float, rather than its text)."""
    if numeric:
        return _numbers(values, col, convert, typed)
    # a column holds values of one type (Arrow's, or the texts of CSV), so
    # equal values are the same value
    text_of: dict[Any, str] = {}
    reason_of: dict[Any, Optional[str]] = {}
    for v in dict.fromkeys(values):
        if plain and v.__class__ is str and _PLAIN_NUMBER.fullmatch(v):
            text_of[v], reason_of[v] = (_plain_number(v) if typed else v), None
        elif isinstance(v, bytes):  # a binary column: no text (str() would make its Python repr one)
            text_of[v] = ""
            reason_of[v] = f"column {col!r}: argument {reprlib.repr(v)} of type bytes cannot be an event argument"
        else:
            text_of[v], reason_of[v] = _converted(value_text(v).strip(), col, convert)
    return list(map(text_of.__getitem__, values)), list(map(reason_of.__getitem__, values))


def _plain_number(text: str) -> Any:
    """The number a plain decimal numeral stands for (as Prolog reads it)."""
    return float(text) if "." in text else int(text)


def _numbers(values: Sequence[Any], col: str, convert: Callable[[str, str], str], typed: bool = False) -> Column:
    """A column of ints or floats: a finite value's text is its repr (what
    the general way makes of it, much faster; ``typed``: the value
    itself): in one pass over the column when every value is a finite
    number."""
    try:
        if all(map(math.isfinite, values)):
            return (list(values) if typed else list(map(repr, values))), [None] * len(values)
    except (TypeError, OverflowError):  # a None; an int too large for a float
        pass
    texts: list[str] = []
    reasons: list[Optional[str]] = []
    for v in values:
        if v is None:
            texts.append("")
            reasons.append(f"column {col!r} is empty")
        elif v.__class__ is int or math.isfinite(v):
            texts.append(v if typed else repr(v))
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
    """:func:`~etalis_py.inputs.mapping.parse_value` of a stripped, non-empty
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
