"""The mapping pass of a replay (Python workers): input rows to the
engine's input lines exactly as ``etalis run`` makes them, or to
rejections with the reason."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Optional

import pyarrow as pa
import pyarrow.compute as pc

from .._prolog import quote_atom
from ..events import InvalidEvent, prolog_value, to_time
from ..graphs import graph_cell
from ..streams import Mapping, json_line_reason, parse_formatted_time, parse_time, parse_value
from .names import (
    CORRUPT, KEY1, KEYS, KIND, LINE, REASON, ROW, SIG, TIME, TKIND, TK_DATE, TK_NUMBER, T_FLOAT, T_INT, T_OTHER,
    T_TEXT,
)


@dataclass(frozen=True)
class MapSpec:
    """What the mapping pass needs, shipped to the workers."""

    mapping: Mapping
    original: tuple[str, ...]          # the input's columns (they come back for rejected rows)
    header_width: int                  # fields a CSV row should have
    has_corrupt: bool
    first: tuple[tuple[str, int], ...]  # events stage 1 consumes, with their key's argument (-1: global)
    raw_later: bool = False            # later stages consume input events: write SIG and KEYS
    later: tuple[int, ...] = ()        # the arguments that key them there
    json_lines: bool = False           # _corrupt_record holds JSON lines (else CSV rows)


def _value_text(value: Any) -> str:
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


def _parse_value(text: str, col: str) -> Any:
    """:func:`~etalis_py.streams.parse_value` of a stripped, non-empty
    text, with two exact shortcuts: a text that starts with a letter
    other than i or n (inf, nan) is no number for int() or float(); one
    with a dot or an e is no int."""
    first = text[0]
    if first.isalpha() and first not in "iInN":
        return text
    if "." not in text and "e" not in text and "E" not in text:
        return parse_value(text, col)
    try:
        f = float(text)
    except ValueError:
        return text
    if f != f or f in (math.inf, -math.inf):
        raise InvalidEvent(f"column {col!r}: {text!r} is not a finite number")
    return f


def _parse_time(text: str, fmt: Optional[str], tz: Optional[str] = None) -> float | int:
    """:func:`~etalis_py.streams.parse_time` of a stripped, non-empty text."""
    return parse_formatted_time(text, fmt, tz) if fmt else parse_time(text, None, tz)


def _key_text(value: Any) -> str:
    """A canonical text of an argument value: equal terms, equal texts."""
    kind = type(value)
    if kind is int:
        return str(value)
    if kind is float:
        return repr(value)
    return json.dumps(value)


def _type_code(value: Any) -> int:
    kind = type(value)
    if kind is int:
        return T_INT if -(2 ** 63) <= value < 2 ** 63 else T_OTHER
    if kind is float:
        return T_FLOAT
    if kind is str:
        return T_TEXT
    return T_OTHER


def _map_rows(spec: MapSpec) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapping pass: rows to engine input lines, exactly as
    :meth:`Mapping.row_reader` makes them (the same checks in the same
    order, so the same reasons), or to rejections.  Each event gets the
    canonical text of its stage-1 key (``KEY1``) and its kind: e (stage 1
    consumes it), u (it does not), r (rejected)."""
    m = spec.mapping
    fixed_name = quote_atom(m.event) if m.event is not None else None
    arity = len(m.args)
    first = dict(spec.first)
    later_slot = {p: i for i, p in enumerate(spec.later)}
    n_later = len(spec.later)
    with_later = spec.raw_later
    key_args = set(first.values()) | set(spec.later)
    time_col = m.time or ""
    graph_pos = list(m.args).index(m.graph_col) if m.graph_col is not None else -1
    names = [*spec.original, ROW, KIND, KEY1, LINE, TIME, REASON, TKIND] + ([SIG, KEYS] if with_later else [])

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        fixed_sig = f"{m.event}/{arity}"
        fixed_first = first.get(fixed_sig) if m.event is not None else None
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            time_values = _values(batch.column(time_col))
            time_is_date = pa.types.is_timestamp(batch.schema.field(time_col).type)
            event_names = _values(batch.column(m.event_col)) if m.event_col is not None else None
            arg_cols = [(p, c, _values(batch.column(c)), p in key_args) for p, c in enumerate(m.args)]
            corrupt = _values(batch.column(CORRUPT)) if spec.has_corrupt else None
            ok: list[int] = []
            kinds: list[str] = []
            key1: list[str] = []
            lines: list[str] = []
            times: list[float] = []
            tkinds: list[int] = []
            sigs: list[str] = []
            keys: list[Optional[str]] = []
            bad: list[int] = []
            reasons: list[str] = []
            fixed_tk = TK_DATE if (m.time_format or time_is_date) else 0
            replaced = _replaced_bytes(batch, spec) if spec.has_corrupt and not spec.json_lines else {}
            for i in range(n):
                try:
                    if corrupt is not None and corrupt[i] is not None:
                        raise InvalidEvent(_corrupt_reason(corrupt[i], spec))
                    if replaced and i in replaced:
                        raise InvalidEvent(replaced[i])
                    if event_names is not None:
                        raw_name = _text(event_names[i], m.event_col or "", batch, i, spec)
                        if raw_name.startswith("$"):
                            raise InvalidEvent(f"event names starting with $ are reserved ({quote_atom(raw_name)})")
                        functor = quote_atom(raw_name)
                        sig = f"{raw_name}/{arity}"
                        key_pos = first.get(sig)
                    else:
                        functor = fixed_name or ""
                        sig = fixed_sig
                        key_pos = fixed_first
                    parts: list[str] = []
                    texts: dict[int, str] = {}
                    for p, c, values, keyed in arg_cols:
                        v = values[i]
                        text = (v if v.__class__ is str else _value_text(v)).strip()
                        if not text:
                            _empty(c, batch, i, spec)
                        if p == graph_pos:  # an RDF graph: the term of graph(G)
                            parts.append(graph_cell(text))
                            if keyed:
                                texts[p] = _key_text(text)
                            continue
                        value = _parse_value(text, c)
                        parts.append(prolog_value(value))
                        if keyed:
                            texts[p] = _key_text(value)
                    tv = time_values[i]
                    if time_is_date and isinstance(tv, datetime):
                        t: float | int = to_time(tv)
                    else:
                        text = (tv if tv.__class__ is str else _value_text(tv)).strip()
                        if not text:
                            _empty(time_col, batch, i, spec)
                        t = _parse_time(text, m.time_format, m.time_zone)
                except InvalidEvent as e:
                    bad.append(i)
                    reasons.append(str(e))
                    continue
                ok.append(i)
                if key_pos is None:
                    kinds.append("u")
                    key1.append("")
                else:
                    kinds.append("e")
                    key1.append(texts[key_pos] if key_pos >= 0 else "")
                lines.append(f"event({functor}({','.join(parts)}), {t!r}).\n" if parts else f"event({functor}, {t!r}).\n")
                times.append(float(t))
                tkinds.append(fixed_tk or (TK_NUMBER if isinstance(tv, (int, float)) or _is_number(str(tv)) else TK_DATE))
                if with_later:
                    sigs.append(sig)
                    keys.extend(texts.get(p) for p in spec.later)
            rows = batch.column(ROW)
            if ok:
                k = len(ok)
                extra = [pa.array(sigs, pa.string()),
                         pa.ListArray.from_arrays(pa.array([j * n_later for j in range(k + 1)], pa.int32()),
                                                  pa.array(keys, pa.string()))] if with_later else []
                yield pa.RecordBatch.from_arrays(
                    [*(pa.nulls(k, batch.schema.field(c).type) for c in spec.original),
                     rows.take(pa.array(ok, pa.int64())), pa.array(kinds, pa.string()), pa.array(key1, pa.string()),
                     pa.array(lines, pa.string()), pa.array(times, pa.float64()), pa.nulls(k, pa.string()),
                     pa.array(tkinds, pa.int32()), *extra],
                    names=names)
            if bad:
                idx = pa.array(bad, pa.int64())
                k = len(bad)
                extra = [pa.nulls(k, pa.string()), pa.nulls(k, pa.list_(pa.string()))] if with_later else []
                yield pa.RecordBatch.from_arrays(
                    [*(batch.column(c).take(idx) for c in spec.original), rows.take(idx),
                     pa.array(["r"] * k, pa.string()), pa.nulls(k, pa.string()), pa.nulls(k, pa.string()),
                     pa.nulls(k, pa.float64()), pa.array(reasons, pa.string()), pa.nulls(k, pa.int32()), *extra],
                    names=names)

    return run


def _values(column: pa.Array) -> list[Any]:
    """The values of a column.  Spark passes the bytes of a line it cannot
    read through as they are: text that is not UTF-8 comes with its bad
    bytes as lone surrogates (as etalis run reads it)."""
    try:
        values: list[Any] = column.to_pylist()
        return values
    except UnicodeDecodeError:
        return [None if b is None else b.decode("utf-8", "surrogateescape")
                for b in column.cast(pa.binary()).to_pylist()]


def _replaced_bytes(batch: pa.RecordBatch, spec: MapSpec) -> dict[int, str]:
    """The rows of a batch read by Spark's CSV reader in which it replaced
    bytes that are not UTF-8 by U+FFFD, with the reason."""
    out: dict[int, str] = {}
    for col in spec.original:
        column = batch.column(col)
        if col == CORRUPT or not pa.types.is_string(column.type):
            continue
        hits = pc.fill_null(pc.match_substring(column, "\ufffd"), False)
        if pc.any(hits).as_py():
            for i in pc.indices_nonzero(hits).to_pylist():
                out.setdefault(i, f"line is not UTF-8: Spark read a byte of column {col!r} as U+FFFD")
    return out


def _corrupt_reason(record: str, spec: MapSpec) -> str:
    """Why the row Spark could not read (``_corrupt_record``) is rejected."""
    if spec.json_lines:
        return json_line_reason(record) or "Spark cannot read this JSON line"
    fields = next(csv.reader([record]), [])
    return f"{len(fields)} fields where the header has {spec.header_width}"


def _text(value: Any, col: str, batch: pa.RecordBatch, i: int, spec: MapSpec) -> str:
    text = (value if value.__class__ is str else _value_text(value)).strip()
    if not text:
        _empty(col, batch, i, spec)
    return text


def _empty(col: str, batch: pa.RecordBatch, i: int, spec: MapSpec) -> None:
    """Reject a row for an empty field (a row whose fields are all empty is
    rejected as an empty row)."""
    if all(not _value_text(batch.column(c)[i].as_py()).strip() for c in spec.original if c != CORRUPT):
        raise InvalidEvent("the row is empty")
    raise InvalidEvent(f"column {col!r} is empty")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
