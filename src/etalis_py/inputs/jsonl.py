"""JSON lines: one JSON object a line, ``{"event": "a", "args": [1],
"time": 5}`` (or ``start`` and ``end``, as :meth:`Event.coerce` reads an
event).

A block of a batch's lines is read in bulk when it can be: by C
(:class:`~etalis_py.inputs.native.BlockReader`) when each line is a plain
event of the usual shape, else by :func:`_bulk_block`: pyarrow's JSON
reader makes columns of the whole block, which cross as packed columns
without a Python object per line.  Both give the same batch.  A block
that pyarrow cannot read in one piece (a line that is not JSON, arguments
of more than one kind of value, a field other than the event's) goes line
by line, so that each bad line is rejected with its number and reason,
and counted.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from .batch import Batch, Item, batched
from ..bridge.columns import Cells, Packed, items_packed, name_heads, number_cells, value_cells
from ..events import MAX_NESTING, NOTHING, Event, InvalidEvent, Rejection, plain_element, prolog_value
from .native import BlockReader
from .registry import Reading
from .lines import Lines, decode_lines, line_blocks, line_starts, not_text
from .mapping import Mapping, is_date
from ..bridge.prolog_text import number_text


def read_jsonl(chunks: Iterable[bytes], mapping: Optional[Mapping], reading: Reading) -> Iterator[Batch]:
    """Batches of the JSON lines of ``chunks``: packed columns if
    ``reading.packed`` (in bulk where a block of lines allows it), else
    batch lists."""
    if not reading.packed:
        yield from _jsonl_batches(Lines(chunks), reading.batch_lines)
        return
    names: dict[str, str] = {}
    reader = BlockReader.load()
    for first, block in line_blocks(chunks, max(1, reading.batch_lines)):
        packed = reader.jsonl(block, names) if reader is not None else None
        if packed is not None:
            yield Batch("", first, [], len(packed), packed)
            continue
        bulk = _bulk_block(block, first, names)
        if bulk is not None:
            yield bulk
        else:
            lines = Lines([block], at_start=False)
            yield from (b.shifted(first - 1) for b in _jsonl_packed(lines, reading.batch_lines, names))


_FIELDS = {"event", "args", "time"}
_OBJECT_FIRST = re.compile(rb"[ \t\r\n]*\{")
"""A block that pyarrow's JSON reader is given starts with an object
(pyarrow 26 crashes on a block whose first value is ``null``)."""


def _bulk_block(data: bytes, first: int, names: dict[str, str]) -> Optional[Batch]:
    """The batch of the JSON lines ``data`` (from line ``first`` on), read
    by pyarrow's JSON reader, when each line is an object of ``event`` (a
    text), ``time`` (a number) and perhaps ``args`` (a list of numbers,
    texts or booleans), else None (then line by line).  pyarrow reads a
    column of ints and floats as floats: a line whose float is a whole
    number (or not finite), or that lacks a field, is decoded again by
    Python's JSON reader, so that each value is the one ``json.loads``
    gives."""
    if decode_lines(data)[1] or not _OBJECT_FIRST.match(data):
        return None
    try:
        table = pa_json.read_json(io.BytesIO(data), read_options=pa_json.ReadOptions(use_threads=False,
                                                                                     block_size=len(data) + 1))
    except (pa.ArrowInvalid, ValueError):
        return None
    starts = line_starts(data)
    n = len(starts) - 1
    fields = set(table.column_names)
    if table.num_rows != n or not fields <= _FIELDS or "event" not in fields or "time" not in fields:
        return None
    event, time = table.column("event").combine_chunks(), table.column("time").combine_chunks()
    args = table.column("args").combine_chunks() if "args" in fields else None
    if not pa.types.is_string(event.type) or not (pa.types.is_int64(time.type) or pa.types.is_float64(time.type)):
        return None
    if args is not None and not (pa.types.is_list(args.type) and _flat(args.type.value_type)):
        return None
    again = np.zeros(n, dtype=bool)     # the lines to decode again
    for column in (event, time):
        if column.null_count:
            again |= _mask(pc.is_null(column))
    if pa.types.is_float64(time.type):
        again |= _not_plain_float(time)
    if args is not None:
        if args.null_count:
            again |= _mask(pc.is_null(args))
        values = pc.list_flatten(args)
        odd = _mask(pc.is_null(values))
        if pa.types.is_float64(values.type):
            odd |= _not_plain_float(values)
        if odd.any():
            again[_mask(pc.list_parent_indices(args), np.int64)[odd]] = True
    decode = json.JSONDecoder(parse_constant=_not_a_number).decode
    patched: dict[int, Any] = {}
    for i in np.flatnonzero(again).tolist():
        try:
            item = decode(data[starts[i]:starts[i + 1]].decode("utf-8"))
        except (ValueError, RecursionError):
            return None
        if not isinstance(item, dict):
            return None
        patched[i] = _plain_item(item)
    rejected: list[Rejection] = []
    packed = _columns_packed(event, args, time, patched, names, first, rejected)
    if packed is None:
        items: list[Any] = list(zip(event.to_pylist(), args.to_pylist() if args is not None else [()] * n,
                                    time.to_pylist()))
        for i, item in patched.items():
            items[i] = item
        rejected = []
        packed = items_packed(items, first, names, rejected, _reason, json_points=True)
    rejected.sort(key=lambda r: r.line)
    return Batch("", first, rejected, n, packed)


def _columns_packed(event: pa.Array, args: Optional[pa.Array], time: pa.Array, patched: dict[int, Any],
                    names: dict[str, str], first: int, rejected: list[Rejection]) -> Optional[Packed]:
    """The packed batch of plain events of one arity, from pyarrow's
    columns a column at a time (the values of the lines decoded again,
    ``patched``, in place of pyarrow's), as
    :func:`~etalis_py.bridge.columns.items_packed` packs them; None for other
    events."""
    n = len(event)
    if any(type(item) is not tuple for item in patched.values()):
        return None
    arity = 0
    if args is not None and n:
        lengths = _mask(pc.list_value_length(args), np.int32)
        arity = int(lengths[0])
        if int(lengths.min()) != arity or int(lengths.max()) != arity or any(
                len(item[1]) != arity for item in patched.values()):
            return None
    encoded = pc.dictionary_encode(event)
    heads = name_heads(encoded.dictionary.to_pylist(), arity, names)
    if heads is None:
        return None
    codes = _mask(encoded.indices, np.int32).copy()
    bad: dict[int, str] = {}
    columns: list[Cells] = []
    if arity:
        flat = pc.list_flatten(args)
        for j in range(arity):
            values = flat.take(pa.array(np.arange(j, n * arity, arity)))
            columns.append(_cells(values, {i: item[1][j] for i, item in patched.items()}, prolog_value, bad))
    columns.append(_cells(time, {i: item[2] for i, item in patched.items()}, number_text, bad))
    for i in sorted(bad):
        codes[i] = -1
        rejected.append(Rejection(first + i, bad[i]))
    return Packed(codes, heads, columns)


def _cells(values: pa.Array, patched: dict[int, Any], text: Any, bad: dict[int, str]) -> Cells:
    """A column's cells: int64s and finite floats as they are, any other
    values (and those of a column with lines decoded again) as Python's
    values (:func:`~etalis_py.bridge.columns.value_cells`)."""
    if not values.null_count:
        # the values decoded again, if they are all of the column's kind, written over pyarrow's
        if pa.types.is_int64(values.type) and all(
                type(v) is int and -(1 << 63) <= v < (1 << 63) for v in patched.values()):
            return number_cells(_patched(_mask(values, np.int64), patched))
        if pa.types.is_float64(values.type) and all(
                type(v) is float and math.isfinite(v) for v in patched.values()):
            return number_cells(_patched(_mask(values, np.float64), patched))
    python = values.to_pylist()
    for i, value in patched.items():
        python[i] = value
    return value_cells(python, text, bad, _reason)


def _patched(array: "np.ndarray[Any, Any]", patched: dict[int, Any]) -> "np.ndarray[Any, Any]":
    """``array`` with the values ``patched`` at their rows (a copy if there are any)."""
    if not patched:
        return array
    array = array.copy()
    array[list(patched)] = list(patched.values())
    return array


def _plain_item(item: dict[str, Any]) -> Any:
    """A JSON object as the tuple ``(event, args, time)`` if it is a plain
    event (a text, a list, a finite number), which is packed as the
    object would be, else as it is."""
    if item.keys() != _FIELDS:
        return item
    name, args, time = item["event"], item["args"], item["time"]
    if type(name) is str and type(args) is list and (type(time) is int or (type(time) is float
                                                                            and math.isfinite(time))):
        return name, args, time
    return item


def _flat(kind: pa.DataType) -> bool:
    """Arguments of this type are read by pyarrow as Python's JSON reader reads them."""
    return bool(pa.types.is_int64(kind) or pa.types.is_float64(kind) or pa.types.is_string(kind)
                or pa.types.is_boolean(kind) or pa.types.is_null(kind))


def _not_plain_float(values: pa.Array) -> "np.ndarray[Any, Any]":
    """The floats that pyarrow may have read from an int (a whole number),
    or that are not finite (a null's value is any: its line is decoded
    again anyway)."""
    floats = _mask(values, np.float64)
    with np.errstate(invalid="ignore"):
        result: np.ndarray[Any, Any] = ~np.isfinite(floats) | (floats == np.floor(floats))
    return result


def _mask(values: pa.Array, dtype: Any = np.bool_) -> "np.ndarray[Any, Any]":
    """An Arrow array of booleans or numbers of ``dtype``, without nulls,
    as a numpy array (from its buffers: Array.to_numpy would import
    pandas)."""
    if dtype is np.bool_:
        bits = np.frombuffer(values.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, bitorder="little")[values.offset:values.offset + len(values)].astype(bool)
    return np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values),
                         offset=values.offset * np.dtype(dtype).itemsize)


def dates(path: Path, mapping: Mapping) -> bool:
    """Whether the first JSON line of the file at ``path`` writes its time
    as a date (a text that is no number)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        first = next((line for line in f if line.strip()), "{}")
    item = json.loads(first)
    value = item.get("time", item.get("start")) if isinstance(item, dict) else None
    return isinstance(value, str) and is_date(value)


def _jsonl_batches(source: Lines, batch_lines: int) -> Iterator[Batch]:
    return batched(_jsonl_items(source), 1, batch_lines, listed=True)


def _jsonl_items(source: Lines) -> Iterator[Item]:
    bad = source.bad
    decode = json.JSONDecoder(parse_constant=_not_a_number).decode
    names: dict[str, str] = {}
    for number, line in enumerate(source, start=1):
        if bad and number in bad:
            yield number + 1, NOTHING, Rejection(number, bad[number])
        elif line.strip():
            try:
                item = decode(line)
                text = _json_term(item, names) if isinstance(item, dict) else _not_object(item)
            except (ValueError, RecursionError) as e:  # JSONDecodeError and InvalidEvent are ValueErrors
                yield number + 1, NOTHING, Rejection(number, _reason(e))
            else:
                yield number + 1, text, None
        else:
            yield number + 1, NOTHING, None


def _jsonl_packed(source: Lines, batch_lines: int, names: dict[str, str]) -> Iterator[Batch]:
    """The batches of :func:`_jsonl_batches` as packed columns: the lines
    decoded and checked as there, the events packed by
    :func:`~etalis_py.bridge.columns.items_packed` with the same reasons."""
    bad = source.bad
    decode = json.JSONDecoder(parse_constant=_not_a_number).decode
    first = 1
    items: list[Any] = []
    skip: list[int] = []
    rejected: list[Rejection] = []

    def batch() -> Batch:
        packed = items_packed(items, first, names, rejected, _reason, json_points=True, skip=skip)
        rejected.sort(key=lambda r: r.line)
        return Batch("", first, rejected, len(items), packed)

    for number, line in enumerate(source, start=1):
        if bad and number in bad:
            rejected.append(Rejection(number, bad[number]))
            skip.append(len(items))
            items.append(None)
        elif line.strip():
            try:
                item = decode(line)
                if not isinstance(item, dict):
                    _not_object(item)
            except (ValueError, RecursionError) as e:  # JSONDecodeError and InvalidEvent are ValueErrors
                rejected.append(Rejection(number, _reason(e)))
                skip.append(len(items))
                items.append(None)
            else:
                items.append(item)
        else:
            skip.append(len(items))
            items.append(None)
        if len(items) >= batch_lines:
            yield batch()
            first, items, skip, rejected = number + 1, [], [], []
    if items or rejected:
        yield batch()


def _json_term(item: dict[str, Any], names: dict[str, str]) -> str:
    """The input term of a JSON object: the fast way for the usual
    ``{"event": name, "args": [...], "time": t}`` with plain values, else
    :meth:`Event.coerce` (the same terms, and the same reasons)."""
    if "event" in item and "time" in item:
        term = plain_element(item["event"], item.get("args", ()), item["time"], names)
        if term is not None:
            return term
    return Event.coerce(item).to_term()


def json_event_line(line: str, names: dict[str, str]) -> tuple[Optional[str], Optional[str]]:
    """The input term of the stripped JSON line ``line`` and None, or None
    and the reason ``etalis run`` rejects it with (``names`` caches the
    event names' texts).  Replay asks it of JSON lines read as text."""
    reason = not_text(line)
    if reason:
        return None, reason
    try:
        item = json.JSONDecoder(parse_constant=_not_a_number).decode(line)
        return (_json_term(item, names) if isinstance(item, dict) else _not_object(item)), None
    except (ValueError, RecursionError) as e:  # JSONDecodeError and InvalidEvent are ValueErrors
        return None, _reason(e)


def json_line_reason(line: str) -> Optional[str]:
    """Why ``etalis run`` rejects the JSON line ``line`` before it looks at
    its fields (not text, see :func:`decode_lines`: not UTF-8, with its bad
    bytes as lone surrogates; not JSON; not an object), or None.  Replay
    asks it of the lines that Spark's JSON reader cannot read."""
    reason = not_text(line)
    if reason:
        return reason
    try:
        item = json.JSONDecoder(parse_constant=_not_a_number).decode(line)
        if not isinstance(item, dict):
            _not_object(item)
    except (ValueError, RecursionError) as e:
        return _reason(e)
    return None


def _not_a_number(name: str) -> Any:
    raise InvalidEvent(f"not JSON: {name} (JSON has no NaN or infinity)")


def _not_object(item: Any) -> str:
    raise InvalidEvent(f"{json.dumps(item)[:60]} is not a JSON object")


def _reason(e: Exception) -> str:
    if isinstance(e, json.JSONDecodeError):
        return f"not JSON: {e.msg} at column {e.colno}"
    if isinstance(e, RecursionError):
        return f"nested deeper than {MAX_NESTING} levels"
    if isinstance(e, InvalidEvent):
        return str(e)
    return f"not readable: {str(e).split(';')[0]}"  # e.g. an integer of more than 4300 digits
