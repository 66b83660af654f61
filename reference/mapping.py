"""A table's row as the engine's input line, one row at a time: the
definition that the shipped column mapper (:mod:`etalis_py.inputs.tables`, used
by ``etalis run`` and Spark replay) is held to by the tests."""

from __future__ import annotations

from typing import Callable, Sequence

from etalis_py.events import InvalidEvent
from etalis_py.bridge.prolog_text import compound_text, input_line, quote_atom
from etalis_py.inputs.streams import Mapping, missing_column, parse_time


def row_reader(mapping: Mapping, header: Sequence[str]) -> Callable[[Sequence[str]], str]:
    """A function from a row of a table with this header to the engine's
    input line for it; it raises InvalidEvent with the reason."""
    error = missing_column((mapping.event_col, mapping.time, *mapping.args), header, "the header")
    if error is not None:
        raise error
    index = {c: i for i, c in enumerate(header)}
    arg_cols = [(index[c], c, mapping.arg_reader(c)) for c in mapping.args]
    time_col = index[mapping.time or ""]
    fixed_name = quote_atom(mapping.event) if mapping.event is not None else None
    name_col = index[mapping.event_col] if mapping.event_col is not None else -1

    def cell(row: Sequence[str], i: int, col: str) -> str:
        value = row[i].strip()
        if not value:
            raise InvalidEvent(f"column {col!r} is empty")
        return value

    def read(row: Sequence[str]) -> str:
        name = fixed_name if fixed_name is not None else quote_atom(cell(row, name_col, mapping.event_col or ""))
        term = compound_text(name, [text(cell(row, i, c)) for i, c, text in arg_cols])
        t = parse_time(cell(row, time_col, mapping.time or ""), mapping.time_format, mapping.time_zone)
        return input_line(term, repr(t))

    return read
