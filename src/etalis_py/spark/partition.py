"""Running a stage on one partition (Python workers): its events, sorted by
key, time, row and path, through one engine compiled once per worker
process and reset for each key."""

from __future__ import annotations

import base64
import bisect
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Protocol, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..bridge.columns import Packed
from ..bridge.engine import Engine, KeyState
from ..events import batch_list, event_term
from ..bridge.prolog_text import compound_text, input_line, interval_text, number_text
from .mapping import MapSpec, _key_text, _type_code, mapped_batches
from .names import (
    BATCH_ROWS, FEED_LINES, KEY1, KIND, LINE, MAX_ENGINES, PACKED, REASON, ROW, S_KEY, S_KEYS, S_KIND, S_LINE, S_N,
    S_PATH, S_REASON, S_ROW, S_SIG, S_T, S_TKIND, TIME, TKIND, TK_DATE, TK_NUMBER, TRANSFER,
)


@dataclass(frozen=True)
class StageSpec:
    """What a stage's tasks need, shipped to the workers."""

    number: int
    rules_text: str
    source: str
    only_rules: tuple[int, ...]
    report: tuple[str, ...]
    policy: Optional[str]
    max_age: Optional[float]
    keyed_by_input: bool
    first: bool
    originals: Optional[pa.Schema] = None           # stage 1: the input's columns, for rejected rows
    knowledge: tuple[tuple[str, str], ...] = ()     # ontology files: (name, text)
    entailment: Optional[str] = None
    trusted: bool = False                           # the rules may run any Prolog (no sandbox)
    explain: bool = False                           # detections (and passed on events) carry provenance
    static: tuple[tuple[str, str], ...] = ()        # static knowledge files (--static): (name, text)
    lateness: Optional[float] = None                # a key's events may come this late (streaming)
    save_state: bool = False                        # give each key's final state (replay --save-state)

    def engine_key(self) -> tuple[Any, ...]:
        return (self.rules_text, self.source, self.only_rules, self.report, self.policy, self.max_age,
                self.knowledge, self.entailment, self.trusted, self.explain, self.static, self.lateness)


# Compiled engines of this Python worker process, by what they were compiled
# from.  A worker process runs many tasks (Spark reuses Python workers), and
# compiling per task or per key would cost more than the events; so this
# per-process cache is inherent to running in Spark's workers.  Engines are
# reset before each key, so nothing carries over between keys or tasks.
_ENGINES: dict[tuple[Any, ...], Engine] = {}


def _engine_for(spec: StageSpec) -> tuple[Engine, bool]:
    """The worker process's engine for ``spec``, and whether it was compiled
    now.  (Called from tasks by reference, so that the cache is this
    module's: a closure would carry a copy of it.)"""
    key = spec.engine_key()
    engine = _ENGINES.get(key)
    if engine is not None:
        return engine, False
    engine = Engine.from_string(spec.rules_text, policy=spec.policy, source=spec.source, trusted=spec.trusted,
                                max_age=spec.max_age, only_rules=spec.only_rules, report=spec.report,
                                explain=spec.explain, static_texts=spec.static, lateness=spec.lateness)
    if spec.knowledge or spec.entailment:
        _load_knowledge(engine, spec.knowledge, spec.entailment)
    while len(_ENGINES) >= MAX_ENGINES:     # a long-lived worker that ran many replays: free the oldest
        _ENGINES.pop(next(iter(_ENGINES))).close()
    _ENGINES[key] = engine
    return engine, True


def _load_knowledge(engine: Engine, knowledge: Sequence[tuple[str, str]], entailment: Optional[str]) -> None:
    """Load ontologies given as (file name, text) into ``engine``."""
    # rdflib loads in the workers of a stage with knowledge only
    from rdflib import Graph
    from rdflib.util import guess_format

    graphs = [Graph().parse(data=text, format=guess_format(name) or "turtle") for name, text in knowledge]
    engine.load_ontology(graphs, entailment or "rdfs")


def _map_and_run(mapping: MapSpec, spec: StageSpec) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Stage 1 with the mapping pass in the same task: a partition's input
    rows (shuffled by a coarse key, so that each exact key's rows are in
    one partition) become events (:func:`~etalis_py.spark.mapping.mapped_batches`;
    as packed columns, as ``etalis run`` hands a table's rows to the
    engine, when the engine takes them), sorted by key, time and row here
    rather than by Spark, and run (:func:`_run_stage`)."""
    originals = list(spec.originals) if spec.originals is not None else []

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        engine, compiled = _engine_for(spec)
        packed = engine.columnar()
        mapped: list[pa.RecordBatch] = []
        parts: list[Packed] = []
        for batch, events in mapped_batches(mapping, batches, packed):
            mapped.append(batch)
            if events is not None:
                parts.append(events)
        if not mapped:
            yield from _stage_rows(spec, engine, compiled, iter(()))
            return
        table = pa.Table.from_batches(mapped).sort_by([(KEY1, "ascending"), (TIME, "ascending"), (ROW, "ascending")])
        n = table.num_rows
        staged = pa.Table.from_arrays(
            [table.column(KEY1), table.column(TIME), table.column(ROW), pa.array([""] * n, pa.string()),
             table.column(LINE), table.column(KIND), table.column(REASON), table.column(TKIND),
             *(table.column(f.name) for f in originals), *([table.column(PACKED)] if packed else [])],
            names=[S_KEY, S_T, S_ROW, S_PATH, S_LINE, S_KIND, S_REASON, S_TKIND, *(f.name for f in originals),
                   *([PACKED] if packed else [])])
        del mapped, table
        events = Packed.joined(parts) if parts else None
        del parts
        yield from _stage_rows(spec, engine, compiled, iter(staged.to_batches(max_chunksize=BATCH_ROWS)), events)

    return run


class _StageOutput:
    """Rows of a stage's output table, gathered column by column."""

    NAMES = [S_KIND, S_SIG, S_LINE, S_T, S_ROW, S_PATH, S_KEYS, S_KEY, S_N]

    def __init__(self) -> None:
        self.kind: list[str] = []
        self.sig: list[Optional[str]] = []
        self.line: list[Optional[str]] = []
        self.t: list[Optional[float]] = []
        self.row: list[Optional[int]] = []
        self.path: list[Optional[str]] = []
        self.keys: list[Optional[list[str]]] = []
        self.key: list[Optional[str]] = []
        self.n: list[Optional[int]] = []

    def add(self, kind: str, sig: Optional[str] = None, line: Optional[str] = None, t: Optional[float] = None,
            row: Optional[int] = None, path: Optional[str] = None, keys: Optional[list[str]] = None,
            key: Optional[str] = None, n: Optional[int] = None) -> None:
        self.kind.append(kind)
        self.sig.append(sig)
        self.line.append(line)
        self.t.append(t)
        self.row.append(row)
        self.path.append(path)
        self.keys.append(keys)
        self.key.append(key)
        self.n.append(n)

    def __len__(self) -> int:
        return len(self.kind)

    def arrays(self) -> list[pa.Array]:
        out = [pa.array(self.kind, pa.string()), pa.array(self.sig, pa.string()), pa.array(self.line, pa.string()),
               pa.array(self.t, pa.float64()), pa.array(self.row, pa.int64()), pa.array(self.path, pa.string()),
               pa.array(self.keys, pa.list_(pa.string())), pa.array(self.key, pa.string()),
               pa.array(self.n, pa.int64())]
        self.__init__()  # type: ignore[misc]
        return out


def _passed_on(term: str, d: dict[str, Any]) -> str:
    """The input line of a later stage for a derived event (``term`` its
    Prolog text, ``d`` its transfer detection): with ``--explain`` it
    carries the input events it was built from, so that the later
    stage's detections name those, as one engine's would."""
    when = interval_text(d["start"], d["end"])
    if "provenance" not in d:
        return input_line(term, when)
    prov = ", ".join(compound_text("det", (event_term(p["event"], p["args"]), number_text(p["start"]),
                                           number_text(p["end"])))
                     for p in d["provenance"])
    return input_line(term, when, f"[{prov}]")


def _path_step(stage: int, index: int) -> str:
    """One step of a derivation path.  Paths are strings of fixed-width
    steps, so that comparing them as strings orders detections as one
    engine would have made them: by the input row that caused them, then
    depth first."""
    return f"{stage:04x}{index:08x}"


def _run_stage(spec: StageSpec) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A stage's task: the events of a partition, sorted by key, time, row
    and path, through one engine reset for each key.

    Stage 1 also sees every other input row: rejected ones (``kind`` r)
    pass through with their original columns (``originals``), and events
    that no rule of any stage uses (``kind`` u) are counted."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from _stage_rows(spec, *_engine_for(spec), batches)

    return run


class KeySwap(Protocol):
    """Where a stream keeps its keys' states: each key's events are fed
    into its own state, which the engine takes up and gives back in the
    crossing that feeds them (:class:`~etalis_py.bridge.engine.KeyState`)."""

    def enter(self, key: Any) -> Optional[bytes]:
        """The snapshot of ``key``'s state (None: the engine holds it)."""

    def leave(self, key: Any, snapshot: Optional[bytes], due: Optional[float]) -> None:
        """After ``key``'s events: its new state and when it waits for
        time to move on (``snapshot`` None: its events did not change it)."""


def _stage_rows(spec: StageSpec, engine: Engine, compiled: bool, batches: Iterator[pa.RecordBatch],
                packed: Optional[Packed] = None, swap: Optional[KeySwap] = None) -> Iterator[pa.RecordBatch]:
    """The rows of :func:`_run_stage`'s task, by ``engine`` (``compiled``
    for it).  With ``packed``, the events are its rows (an event's row in
    its column ``PACKED``), not lines.  With ``swap``, no key is reset:
    each key's events go into its state, as ``swap`` keeps it."""
    out = _StageOutput()
    stats: dict[str, Any] = {"fed": 0, "accepted": 0, "warnings": 0, "rejected": 0, "unused": 0,
                             "mapping_rejected": 0, "tkind": 0, "masks": [], "kmask": 0, "compiled": compiled,
                             "sample": []}
    masks: list[int] = stats["masks"]
    sample: list[str] = stats["sample"]
    nothing = current = object()            # the key being fed (no key yet)
    originals: list[pa.Field] = list(spec.originals) if spec.originals is not None else []

    def feed(events: Union[list[str], Packed], ts: list[float], rows: pa.Array, paths: pa.Array,
             segments: list[tuple[int, int, bool, Any]]) -> None:
        """Feed segments (a, b, reset, key) of events a..b-1 (lines, or
        the rows of packed columns), each of one key and distinct times,
        so that each detection is attributed to the event that completed
        it (the one at its end time)."""
        if not segments:
            return
        resets = [reset for _, _, reset, _ in segments]
        counts = [b - a for a, b, _, _ in segments]
        states = None
        if swap is not None:        # a key's state in before its first segment, out after its last
            keys = [key for _, _, _, key in segments]
            states = [KeyState(swap.enter(k) if i == 0 or keys[i - 1] != k else None,
                               i == len(keys) - 1 or keys[i + 1] != k) for i, k in enumerate(keys)]
        if isinstance(events, Packed):
            lo, hi = segments[0][0], segments[-1][1]
            part = events if (lo, hi) == (0, len(events)) else events.rows(np.arange(lo, hi))
            results = engine.feed_packed_segments(part, resets, counts, states)
        else:
            # each line less its full stop and newline: a batch list, read at once
            results = engine.feed_segments([batch_list([line[:-2] for line in events[a:b]])
                                            for a, b, _, _ in segments], resets, counts, states)
        for i, ((a, b, _, key_text), result) in enumerate(zip(segments, results)):
            if swap is not None and states is not None and states[i].take:
                swap.leave(key_text, result.snapshot, result.due)
            stats["fed"] += b - a
            stats["accepted"] += result.accepted
            for r in result.rejected:
                stats["rejected"] += 1
                out.add("r", line=r.reason, row=rows[a + r.line - 1].as_py())
            for w in result.warnings:
                stats["warnings"] += 1
                if len(sample) < 5:
                    sample.append(w.reason)
            if result.detection_lines:
                attribute(result.detection_lines, ts, rows, paths, a, b, key_text)

    def attribute(detections: str, ts: list[float], rows: pa.Array, paths: pa.Array, a: int, b: int,
                  key_text: Any) -> None:
        counters: dict[int, int] = {}
        for text in detections.splitlines():
            d = json.loads(text)
            end = float(d["end"])
            j = max(bisect.bisect_right(ts, end, a, b) - 1, a)
            c = counters.get(j, 0)
            counters[j] = c + 1
            path = (paths[j].as_py() or "") + _path_step(spec.number, c)
            row = rows[j].as_py()
            args = d["args"]
            if d["event"] == TRANSFER:
                name, arity, term, values = args
                out.add("x", sig=f"{name}/{arity}", t=end, row=row, path=path, line=_passed_on(term, d),
                        keys=[_key_text(v) for v in values])
                continue
            key = key_text if spec.keyed_by_input else None
            out.add("d", sig=f"{d['event']}/{len(args)}", line=text + "\n", t=end, row=row, path=path, key=key)
            for p, v in enumerate(args):
                if p == len(masks):
                    masks.append(0)
                masks[p] |= _type_code(v)
            if key is not None:
                stats["kmask"] |= _type_code(json.loads(key))

    def save(key_text: Any) -> None:
        """The state of the key just fed, as a snapshot (``replay --save-state``)."""
        out.add("k", line=base64.b64encode(engine.snapshot()).decode("ascii"), key=key_text)

    def emit(extra: Optional[pa.RecordBatch] = None) -> Iterator[pa.RecordBatch]:
        if len(out):
            arrays = out.arrays()
            n = len(arrays[0])
            yield pa.RecordBatch.from_arrays(arrays + [pa.nulls(n, f.type) for f in originals],
                                             names=_StageOutput.NAMES + [f.name for f in originals])
        if extra is not None and extra.num_rows:
            yield extra

    for batch in batches:
        passed: Optional[pa.RecordBatch] = None
        if spec.first:
            kind = batch.column(S_KIND)
            tk = batch.column(S_TKIND)
            for code in (TK_NUMBER, TK_DATE):
                if pc.any(pc.equal(tk, code)).as_py():
                    stats["tkind"] |= code
            stats["unused"] += pc.sum(pc.equal(kind, "u")).as_py() or 0
            bad = batch.filter(pc.equal(kind, "r"))
            if bad.num_rows:
                stats["mapping_rejected"] += bad.num_rows
                k = bad.num_rows
                passed = pa.RecordBatch.from_arrays(
                    [pa.array(["m"] * k, pa.string()), pa.nulls(k, pa.string()), bad.column(S_REASON),
                     pa.nulls(k, pa.float64()), bad.column(S_ROW), pa.nulls(k, pa.string()),
                     pa.nulls(k, pa.list_(pa.string())), pa.nulls(k, pa.string()), pa.nulls(k, pa.int64()),
                     *(bad.column(f.name) for f in originals)],
                    names=_StageOutput.NAMES + [f.name for f in originals])
            batch = batch.filter(pc.equal(kind, "e"))
        n = batch.num_rows
        if n:
            ks = batch.column(S_KEY).to_pylist()
            ts = batch.column(S_T).to_pylist()
            events: Union[list[str], Packed] = (batch.column(S_LINE).to_pylist() if packed is None
                                                else packed.rows(batch.column(PACKED).to_numpy()))
            rows = batch.column(S_ROW)
            paths = batch.column(S_PATH)
            segments: list[tuple[int, int, bool, Any]] = []
            a = 0
            reset = False
            for i in range(n):
                k = ks[i]
                if k != current:
                    if i > a:
                        segments.append((a, i, reset, current))
                    if spec.save_state and current is not nothing:
                        feed(events, ts, rows, paths, segments)     # the key's final state, before the next
                        segments = []
                        save(current)
                    current, a, reset = k, i, swap is None
                elif i > a and (ts[i] == ts[i - 1] or i - a >= FEED_LINES):
                    segments.append((a, i, reset, current))
                    a, reset = i, False
            segments.append((a, n, reset, current))
            feed(events, ts, rows, paths, segments)
        yield from emit(passed)
    if spec.save_state and current is not nothing:
        save(current)
    out.add("s", line=json.dumps(stats))
    yield from emit()

