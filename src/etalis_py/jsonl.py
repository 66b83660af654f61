"""JSON lines: one JSON object a line, ``{"event": "a", "args": [1],
"time": 5}`` (or ``start`` and ``end``, as :meth:`Event.coerce` reads an
event).

A chunk of lines is read in bulk when it can be (:func:`bulk_packed`):
pyarrow's JSON reader makes columns of the whole chunk, which cross as
packed columns without a Python object per line.  A chunk that pyarrow
cannot read in one piece (a line that is not JSON, arguments of more than
one kind of value, a field other than the event's) goes line by line, so
that each bad line is rejected with its number and reason, and counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Optional

from .batch import Batch, Item, batched
from .columns import items_packed
from .events import MAX_NESTING, NOTHING, Event, InvalidEvent, Rejection, plain_element
from .registry import Reading
from .lines import Lines, not_text
from .mapping import Mapping, is_date


def read_jsonl(chunks: Iterable[bytes], mapping: Optional[Mapping], reading: Reading) -> Iterator[Batch]:
    """Batches of the JSON lines of ``chunks``: packed columns if
    ``reading.packed``, else batch lists."""
    if reading.packed:
        return _jsonl_packed(Lines(chunks), reading.batch_lines)
    return _jsonl_batches(Lines(chunks), reading.batch_lines)


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


def _jsonl_packed(source: Lines, batch_lines: int) -> Iterator[Batch]:
    """The batches of :func:`_jsonl_batches` as packed columns: the lines
    decoded and checked as there, the events packed by
    :func:`~etalis_py.columns.items_packed` with the same reasons."""
    bad = source.bad
    decode = json.JSONDecoder(parse_constant=_not_a_number).decode
    names: dict[str, str] = {}
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
