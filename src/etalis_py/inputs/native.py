"""Blocks of input lines read into packed columns by C (``etalis_read.c``,
called through ctypes).

The C reader takes the common shape of a block only, and says so when a
block is not of it; then the caller reads the block the general way,
which gives the same batch.  The library is built beside its source by
``make native``, or at first use into the cache directory; without a C
compiler every block is read the general way.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from ..bridge.columns import FLOAT, INT, TABLE, Cells, Packed, built_library, compile_library, name_heads
from ..events import prolog_value

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
    """The C reader's entry point (see :meth:`load`)."""

    jsonl_block: Any
    lines: Any

    @staticmethod
    def load() -> Optional["BlockReader"]:
        """The reader, from the library built now if need be; None if it
        cannot be built or loaded (no C compiler)."""
        path, _ = built_library(SOURCE, "", lambda target: compile_library(SOURCE, target, ["-std=c99"]))
        if path is None:
            return None
        try:
            library = ctypes.CDLL(str(path))
            function, lines = library.etalis_jsonl_block, library.etalis_lines
        except (OSError, AttributeError):
            return None
        function.restype = lines.restype = ctypes.c_int64
        function.argtypes = (ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, *[ctypes.c_void_p] * 9)
        lines.argtypes = (ctypes.c_char_p, ctypes.c_int64)
        return BlockReader(function, lines)

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
            if kinds == _SEEN_INT:
                columns.append(Cells(values[j], INT))
            elif kinds == _SEEN_FLOAT:
                columns.append(Cells(values[j].view(np.float64), FLOAT))
            elif kinds == _SEEN_INT | _SEEN_FLOAT:
                columns.append(Cells(values[j], tags[j]))
            else:
                texts = text_spans[j, :int(text_counts[j])].tolist()
                try:
                    table = [prolog_value(data[at:at + n].decode("ascii")) for at, n in texts]
                except (ValueError, RecursionError):
                    return None     # a text the general way rejects its row for
                columns.append(Cells(values[j], TABLE, table))
        return Packed(codes, heads, columns)


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
