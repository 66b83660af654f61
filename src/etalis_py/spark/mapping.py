"""The mapping pass of a replay (Python workers): input rows to the
engine's input lines exactly as ``etalis run`` makes them, or to
rejections with the reason."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..bridge.columns import Packed
from ..events import InvalidEvent
from ..inputs.delimited import csv_rows
from ..inputs.events_text import event_time, too_costly
from ..inputs.jsonl import json_event_line, json_line_reason
from ..inputs.lines import not_text
from ..inputs.mapping import Mapping
from ..inputs.tables import Column, joined_packed, joined_terms, number_array, parse_cell, row_columns, value_text
from .names import (
    CORRUPT, EVENT_LINE, KEY1, KEYS, KIND, LINE, PACKED, REASON, ROW, SIG, TIME, TKIND, TK_DATE, TK_NUMBER, T_FLOAT,
    T_INT, T_OTHER, T_TEXT,
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
    event_lines: bool = False          # the rows are event lines (their one column, value), not mapped


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
    """The mapping pass (:func:`mapped_batches`), its events as lines."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch, _ in mapped_batches(spec, batches, packed=False):
            yield batch

    return run


def mapped_batches(spec: MapSpec, batches: Iterator[pa.RecordBatch],
                   packed: bool) -> Iterator[tuple[pa.RecordBatch, Optional[Packed]]]:
    """The mapping pass: rows to engine input lines, made by the mapper of
    ``etalis run`` for tables (:func:`~etalis_py.inputs.tables.row_columns`, a
    column at a time, so the same lines and the same reasons), or to
    rejections.  Replay adds what only it knows: rows that Spark could not
    read, and an empty row is rejected rather than skipped (every row is
    accounted for).  Each event gets the canonical text of its stage-1 key
    (``KEY1``) and its kind: e (stage 1 consumes it), u (it does not), r
    (rejected).

    If ``packed``, the events are not lines (``LINE`` is null) but packed
    columns, as ``etalis run`` packs a table's rows
    (:func:`~etalis_py.inputs.tables.joined_packed`): with each batch of events
    comes the :class:`~etalis_py.bridge.columns.Packed` of its input rows, and an
    event's ``PACKED`` is its row's index among the input rows of all the
    batches so far."""
    if spec.event_lines:
        yield from _event_lines(spec, batches, packed)
        return
    m = spec.mapping
    arity = len(m.args)
    first = dict(spec.first)
    n_later = len(spec.later)
    with_later = spec.raw_later
    key_args = sorted({p for p in first.values() if p >= 0} | set(spec.later))
    names = ([*spec.original, ROW, KIND, KEY1, LINE, TIME, REASON, TKIND] + ([SIG, KEYS] if with_later else [])
             + ([PACKED] if packed else []))
    offset = 0          # input rows of the batches before
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        got: dict[str, tuple[list[Any], bool]] = {}

        def values(col: str) -> tuple[list[Any], bool]:
            if col not in got:
                column = batch.column(col)
                got[col] = (_values(column), pa.types.is_integer(column.type) or pa.types.is_floating(column.type))
            return got[col]

        columns = row_columns(values, m, lambda col: number_array(batch.column(col)), typed=packed)
        if m.event_col is not None:
            _reserved_names(values(m.event_col)[0], columns[0])
        terms: list[str] = []
        cells: Optional[Packed] = None
        if packed:
            cells, rejected = joined_packed(columns, m, lambda i: False)
        else:
            terms, rejected = joined_terms(columns, m, lambda i: False)
        reasons = dict(rejected)
        for i in reasons:
            if _blank(batch, i, spec):
                reasons[i] = "the row is empty"
        reasons.update(_unread(batch, spec))
        every = not reasons     # each row is an event: its columns as they are, not row by row
        ok = range(n) if every else [i for i in range(n) if i not in reasons]
        texts = [value_text(v).strip() for v in values(m.event_col)[0]] if m.event_col is not None else None
        sigs = [f"{texts[i]}/{arity}" for i in ok] if texts is not None else [f"{m.event}/{arity}"] * len(ok)
        key_pos = [first.get(sig) for sig in sigs] if texts is not None else [first.get(sigs[0])] if ok else []
        keys = {p: _keys(values(m.args[p])[0], m.args[p], m.args[p] == m.graph_col) for p in key_args}
        time_texts = columns[-1][0]
        time_numbers = isinstance(time_texts, np.ndarray)
        dates = m.time_format is not None or pa.types.is_timestamp(batch.schema.field(m.time or "").type)
        tk = [TK_NUMBER] * n if time_numbers else _time_kinds(values(m.time or ""), dates)
        rows = batch.column(ROW)
        if ok:
            k = len(ok)
            extra: list[pa.Array] = []
            if with_later:
                later_keys = [keys[p][i] for i in ok for p in spec.later]
                extra = [pa.array(sigs, pa.string()),
                         pa.ListArray.from_arrays(pa.array([j * n_later for j in range(k + 1)], pa.int32()),
                                                  pa.array(later_keys, pa.string()))]
            events: Optional[Packed] = None
            if cells is not None:
                events = cells if every else cells.rows(np.array(ok, dtype=np.int64))
                extra.append(pa.array(np.arange(offset, offset + k, dtype=np.int64)))
                offset += k
            if len(key_pos) == 1:       # one event name: one kind and one key argument
                q = key_pos[0]
                kinds = pa.repeat("u" if q is None else "e", k)
                key1 = pa.repeat("", k) if q is None or q < 0 else pa.array(
                    keys[q] if every else [keys[q][i] for i in ok], pa.string())
            else:
                kinds = pa.array(["u" if q is None else "e" for q in key_pos], pa.string())
                key1 = pa.array(["" if q is None or q < 0 else keys[q][i] for i, q in zip(ok, key_pos)], pa.string())
            yield pa.RecordBatch.from_arrays(
                [*(pa.nulls(k, batch.schema.field(c).type) for c in spec.original),
                 rows if every else rows.take(pa.array(ok, pa.int64())), kinds, key1,
                 pa.nulls(k, pa.string()) if packed else pa.array([terms[i] + ".\n" for i in ok], pa.string()),
                 pa.array(np.asarray(time_texts)[np.asarray(ok)].astype(np.float64) if time_numbers
                          else [float(time_texts[i]) for i in ok], pa.float64()),
                 pa.nulls(k, pa.string()),
                 pa.repeat(pa.scalar(TK_NUMBER, pa.int32()), k) if time_numbers
                 else pa.array([tk[i] for i in ok], pa.int32()), *extra],
                names=names), events
        if reasons:
            bad = sorted(reasons)
            idx = pa.array(bad, pa.int64())
            k = len(bad)
            extra = [pa.nulls(k, pa.string()), pa.nulls(k, pa.list_(pa.string()))] if with_later else []
            if packed:
                extra.append(pa.nulls(k, pa.int64()))
            yield pa.RecordBatch.from_arrays(
                [*(batch.column(c).take(idx) for c in spec.original), rows.take(idx),
                 pa.array(["r"] * k, pa.string()), pa.nulls(k, pa.string()), pa.nulls(k, pa.string()),
                 pa.nulls(k, pa.float64()), pa.array([reasons[i] for i in bad], pa.string()),
                 pa.nulls(k, pa.int32()), *extra],
                names=names), None


def _event_lines(spec: MapSpec, batches: Iterator[pa.RecordBatch],
                 packed: bool) -> Iterator[tuple[pa.RecordBatch, Optional[Packed]]]:
    """The mapping pass of event lines (``.events`` files, read as text):
    each ``event(Term, Time)`` line is the engine's input line as it is, of
    the one global key at its time; a line the engine's reader is not
    given (see :func:`~etalis_py.inputs.events_text.too_costly`), or whose time
    is not a number (the stream orders a micro-batch's events by time),
    is rejected.  With ``spec.json_lines`` the lines are JSON events
    (``{"event": .., "args": [..], "time": t}``), each made the input term
    ``etalis run`` makes of it, or rejected with its reason."""
    columns = [*spec.original, ROW, KIND, KEY1, LINE, TIME, REASON, TKIND] + ([PACKED] if packed else [])
    names: dict[str, str] = {}      # the event names' texts, of JSON lines
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        kinds: list[str] = []
        lines: list[Optional[str]] = []
        times: list[Optional[float]] = []
        reasons: list[Optional[str]] = []
        for value in _values(batch.column(EVENT_LINE)):
            text = (value or "").strip()
            if spec.json_lines:
                term, reason = json_event_line(text, names)
                text = term or text
            else:
                reason = not_text(text) or too_costly(text)
            t = event_time(text) if reason is None else None
            if reason is None and t is None:
                reason = ("a stream reads lines event(Term, Time) with a number of seconds as the time (or an "
                          "interval [T1, T2] of them)")
            kinds.append("r" if reason else "e")
            lines.append(None if reason else text.removesuffix(".").rstrip() + ".\n")
            times.append(t)
            reasons.append(reason)
        yield pa.RecordBatch.from_arrays(
            [*(batch.column(c) for c in spec.original), batch.column(ROW), pa.array(kinds, pa.string()),
             pa.repeat("", n), pa.array(lines, pa.string()), pa.array(times, pa.float64()),
             pa.array(reasons, pa.string()), pa.repeat(pa.scalar(TK_NUMBER, pa.int32()), n),
             *([pa.nulls(n, pa.int64())] if packed else [])],
            names=columns), None


def _reserved_names(names: Sequence[Any], column: Column) -> None:
    """Reject the rows of an event name starting with $ (the engine would
    reject them, but replay never shows it an event that no rule uses)."""
    texts, reasons = column
    reserved = {v for v in dict.fromkeys(names) if value_text(v).strip().startswith("$")}
    if reserved:
        for i, v in enumerate(names):
            if v in reserved and reasons[i] is None:
                reasons[i] = f"event names starting with $ are reserved ({texts[i]})"


def _keys(values: Sequence[Any], col: str, graph: bool) -> list[str]:
    """The canonical key texts of a column's values (those of rows that
    are events: the others get any text)."""
    known: dict[Any, str] = {}
    for v in dict.fromkeys(values):
        text = value_text(v).strip()
        try:
            known[v] = _key_text(text if graph or not text else parse_cell(text, col))
        except InvalidEvent:
            known[v] = ""
    return [known[v] for v in values]


def _time_kinds(column: tuple[Sequence[Any], bool], dates: bool) -> list[int]:
    """Whether each time is a number of seconds or a date."""
    values, numeric = column
    if dates or numeric:
        return [TK_DATE if dates else TK_NUMBER] * len(values)
    known = {v: TK_NUMBER if isinstance(v, (int, float)) or _is_number(value_text(v)) else TK_DATE
             for v in dict.fromkeys(values)}
    return [known[v] for v in values]


def _blank(batch: pa.RecordBatch, i: int, spec: MapSpec) -> bool:
    """Whether every field of row ``i`` is empty."""
    return all(not value_text(batch.column(c)[i].as_py()).strip() for c in spec.original if c != CORRUPT)


def _unread(batch: pa.RecordBatch, spec: MapSpec) -> dict[int, str]:
    """The rows that Spark could not read, with the reason: a CSV row with
    the wrong number of fields or a JSON line it cannot read
    (``_corrupt_record``), a CSV row in which it replaced bytes that are
    not UTF-8."""
    out: dict[int, str] = {}
    if not spec.has_corrupt:
        return out
    if not spec.json_lines:
        out.update(_replaced_bytes(batch, spec))
    for i, record in enumerate(_values(batch.column(CORRUPT))):
        if record is not None:
            out[i] = _corrupt_reason(record, spec)
    return out


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
    bytes that are not UTF-8 by U+FFFD, or that hold a NUL byte (which
    ``etalis run`` rejects too: no text holds one), with the reason."""
    out: dict[int, str] = {}
    for col in spec.original:
        column = batch.column(col)
        if col == CORRUPT or not pa.types.is_string(column.type):
            continue
        for bad, reason in (("\ufffd", f"line is not UTF-8: Spark read a byte of column {col!r} as U+FFFD"),
                            ("\x00", f"line holds a NUL byte in column {col!r}: no text does (a binary file, or "
                                     "text in UTF-16?)")):
            hits = pc.fill_null(pc.match_substring(column, bad), False)
            if pc.any(hits).as_py():
                for i in pc.indices_nonzero(hits).to_pylist():
                    out.setdefault(i, reason)
    return out


def _corrupt_reason(record: str, spec: MapSpec) -> str:
    """Why the row Spark could not read (``_corrupt_record``) is rejected."""
    if spec.json_lines:
        return json_line_reason(record) or "Spark cannot read this JSON line"
    fields = next(csv_rows([record]), [])
    return f"{len(fields)} fields where the header has {spec.header_width}"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
