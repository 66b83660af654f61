"""Blocks of input lines (JSON lines, CSV) read into packed columns by C
(``etalis_read.c``, called through ctypes).

The C reader takes the common shape of a block only, and says so when a
block is not of it; then the caller reads the block the general way,
which gives the same batch.  The library is built beside its source by
``make native``, or at first use into the cache directory; without a C
compiler every block is read the general way.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from ..bridge.columns import FLOAT, INT, TABLE, Cells, Packed, built_library, compile_library, head_text, name_heads
from ..bridge.prolog_text import quote_atom
from ..events import prolog_value
from .mapping import Mapping

SOURCE = Path(__file__).with_name("etalis_read.c")

_NOT_MINE, _NO_ROOM, _NO_ARGS = -1, -2, -3
_SEEN_INT, _SEEN_FLOAT, _SEEN_TEXT = 1 << INT, 1 << FLOAT, 1 << TABLE
_ROOM = 4
"""Argument columns made room for before the first line's arity is known
(a block of more is read again with room for them)."""
_MOST_ARGS = 64
"""More arguments than these are left to the general way."""


@dataclass(frozen=True)
class BlockReader:
    """The C reader's functions (see :meth:`load`)."""

    jsonl_block: Any
    lines: Any
    csv_block: Any

    @staticmethod
    def load() -> Optional["BlockReader"]:
        """The reader, from the library built now if need be; None if it
        cannot be built or loaded (no C compiler)."""
        path, _ = built_library(SOURCE, "", lambda target: compile_library(SOURCE, target, ["-std=c99"]))
        if path is None:
            return None
        try:
            library = ctypes.CDLL(str(path))
            function, lines, csv = library.etalis_jsonl_block, library.etalis_lines, library.etalis_csv_block
        except (OSError, AttributeError):
            return None
        function.restype = lines.restype = csv.restype = ctypes.c_int64
        function.argtypes = (ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, *[ctypes.c_void_p] * 9)
        lines.argtypes = (ctypes.c_char_p, ctypes.c_int64)
        csv.argtypes = (ctypes.c_char_p, *[ctypes.c_int64] * 4, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                        *[ctypes.c_void_p] * 6)
        return BlockReader(function, lines, csv)

    def jsonl(self, data: bytes, names: dict[str, str]) -> Optional[Packed]:
        """The packed batch of the JSON lines ``data`` that
        :func:`~etalis_py.inputs.jsonl._bulk_block` gives, if every line
        is an object of a plain ``event`` name (ASCII, no escapes), a
        number ``time`` and ``args`` of one length (or none in any line)
        whose columns are numbers or plain texts; else None."""
        rows = self.lines(data, len(data))
        room = _ROOM
        while True:
            codes = np.empty(rows, dtype=np.int32)
            values = np.empty((room + 1, rows), dtype=np.int64)
            tags = np.empty((room + 1, rows), dtype=np.uint8)
            name_spans = np.empty((rows, 2), dtype=np.int64)
            text_spans = np.empty((room, rows, 2), dtype=np.int64)
            text_counts = np.zeros(room + 1, dtype=np.int64)
            seen = np.zeros(room + 1, dtype=np.uint8)
            counts = np.zeros(2, dtype=np.int64)      # the distinct names; the arity wanted
            arity = self.jsonl_block(data, len(data), rows, room, codes.ctypes.data, values.ctypes.data,
                                     tags.ctypes.data, name_spans.ctypes.data, counts.ctypes.data,
                                     text_spans.ctypes.data, text_counts.ctypes.data, seen.ctypes.data,
                                     counts[1:].ctypes.data)
            if arity != _NO_ROOM:
                break
            room = int(counts[1])
            if room > _MOST_ARGS:
                return None
        if arity == _NOT_MINE or (arity == _NO_ARGS and _whole_float_times(values[0], tags[0], int(seen[0]))):
            return None
        arity = max(0, arity)
        spans = name_spans[:int(counts[0])].tolist()
        heads = name_heads([data[at:at + n].decode("ascii") for at, n in spans], arity, names)
        if heads is None:
            return None
        columns = []
        for j in range(arity + 1):
            kinds = int(seen[j])
            if kinds != _SEEN_TEXT:
                columns.append(_number_cells(values[j], tags[j], kinds))
            else:
                texts = text_spans[j, :int(text_counts[j])].tolist()
                try:
                    table = [prolog_value(data[at:at + n].decode("ascii")) for at, n in texts]
                except (ValueError, RecursionError):
                    return None     # a text the general way rejects its row for
                columns.append(Cells(values[j], TABLE, table))
        return Packed(codes, heads, columns)

    def csv(self, data: bytes, header: Sequence[str], mapping: Mapping) -> Optional[Packed]:
        """The packed batch of the CSV lines ``data`` (plain: no quote, no
        carriage return) that :func:`~etalis_py.inputs.delimited._bulk_block`
        gives, if every line has the header's number of fields, its name
        (if a column holds it) printable ASCII without a blank, and its
        arguments and time plain decimal numerals (an int of at most 18
        digits, or one with a fraction); else None."""
        if mapping.time is None or mapping.time_format is not None or mapping.graph_col is not None:
            return None
        position: dict[str, int] = {}
        for i, column in enumerate(header):
            position.setdefault(column, i)
        wanted = [*mapping.args, mapping.time] + ([mapping.event_col] if mapping.event_col is not None else [])
        if any(column not in position for column in wanted) or (mapping.event_col is None) == (mapping.event is None):
            return None
        rows = self.lines(data, len(data))
        arity = len(mapping.args)
        codes = np.zeros(rows, dtype=np.int32)
        values = np.empty((arity + 1, rows), dtype=np.int64)
        tags = np.empty((arity + 1, rows), dtype=np.uint8)
        name_spans = np.empty((rows, 2), dtype=np.int64)
        fields = np.array([position[a] for a in mapping.args] or [0], dtype=np.int64)
        seen = np.zeros(arity + 1, dtype=np.uint8)
        count = np.zeros(1, dtype=np.int64)
        name_field = position[mapping.event_col] if mapping.event_col is not None else -1
        if self.csv_block(data, len(data), rows, len(header), name_field, fields.ctypes.data, arity,
                          position[mapping.time], codes.ctypes.data, values.ctypes.data, tags.ctypes.data,
                          name_spans.ctypes.data, count.ctypes.data, seen.ctypes.data) != 0:
            return None
        try:
            if mapping.event is not None:
                heads = [head_text(quote_atom(mapping.event), arity)]
            else:
                heads = [head_text(quote_atom(data[at:at + n].decode("ascii")), arity)
                         for at, n in name_spans[:int(count[0])].tolist()]
        except ValueError:
            return None     # a name the general way rejects its row for
        return Packed(codes, heads, [_number_cells(values[j], tags[j], int(seen[j])) for j in range(arity + 1)])


def _number_cells(values: "np.ndarray[Any, Any]", tags: "np.ndarray[Any, Any]", kinds: int) -> Cells:
    """A column of the C reader's numbers: int64s, float64s, or both by their tags."""
    if kinds == _SEEN_INT:
        return Cells(values, INT)
    if kinds == _SEEN_FLOAT:
        return Cells(values.view(np.float64), FLOAT)
    return Cells(values, tags)


def _whole_float_times(values: "np.ndarray[Any, Any]", tags: "np.ndarray[Any, Any]", kinds: int) -> bool:
    """Times that pyarrow reads as whole floats (ints among floats, or
    floats such as 5.0): in lines without ``args`` the general way reads
    them again as objects, which it packs as events over an interval."""
    if not kinds & _SEEN_FLOAT:
        return False
    if kinds & _SEEN_INT:
        return True
    floats = values.view(np.float64)
    return bool((floats == np.floor(floats)).any())
