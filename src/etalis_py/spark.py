"""Batch replay over Spark (DESIGN section 7).

``replay(data, rules, ...)`` maps the rows of a DataFrame (or a CSV,
Parquet or JSON path) to events with the same options as ``etalis run``,
and runs the rules over them on Spark, in stages (see
:mod:`etalis_py.analysis`):

1. *Mapping.*  A Python pass (``mapInArrow``) turns each row into the
   engine's input line exactly as ``etalis run`` does, or into a rejection
   with the reason.  Each row keeps its number in the input (``row``), so
   that ties in time are broken as ``etalis run`` breaks them: by input
   order.
2. *Stages.*  Each stage repartitions the events it consumes by its key
   (or into one partition), sorts each partition by key, time, row and
   derivation path, and feeds each key's events in order to an engine
   compiled once per Python worker process and reset for each key.  Events
   derived in a stage that later stages consume leave it as exact Prolog
   text (through a hidden transfer rule), with the row and derivation
   path of the input event that caused them, so later stages see them in
   the order one engine over all the data would have derived them.
3. *Output.*  Detections as JSON lines exactly as ``etalis run`` prints
   them (in its order), or as a typed table; rejected rows with their
   original values and the reason.  ``rows = events + rejected``.

Every task is deterministic given its input, so a task that Spark retries
gives identical output, and Spark's output commit protocol keeps a failed
attempt's output out.  ``ReplayResult.write`` writes into a staging
directory that is renamed into place only when everything succeeded.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from time import perf_counter
from typing import IO, TYPE_CHECKING, Any, Optional, Union

import pyarrow as pa

from ._prolog import quote_atom
from .analysis import InputEvents, Plan, Sig, Stage, plan as make_plan, read_rules
from .engine import Engine, check_policy
from .errors import EtalisError, RuleFileNotFound
from .events import InvalidEvent, prolog_value, to_time
from .streams import Mapping, parse_time, parse_value

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

DEFAULT_MASTER = "local[*,4]"       # local mode on all cores, up to 4 attempts per task
TRANSFER = "etalis__transfer"      # the hidden event that carries derived events between stages
FORMATS = ("parquet", "csv", "json", "jsonl")
FEED_LINES = 20_000                 # events per crossing into Prolog

# column names of the internal tables, unlikely to clash with a user's
ROW = "__etalis_row"
KIND = "__etalis_kind"
SIG = "__etalis_sig"
LINE = "__etalis_line"
TIME = "__etalis_t"
KEYS = "__etalis_keys"
REASON = "__etalis_reason"
TKIND = "__etalis_tkind"
CORRUPT = "_corrupt_record"

# type codes of values, OR-ed to find a column's type
T_INT, T_FLOAT, T_TEXT, T_OTHER = 1, 2, 4, 8
# kinds of input time: a number of seconds, or a date
TK_NUMBER, TK_DATE = 1, 2

STAGE_SCHEMA = ("kind string, sig string, line string, t double, row long, path array<int>, "
                "keys array<string>, key string, n long")


# -- sessions ---------------------------------------------------------------------


def session(master: Optional[str] = None, conf: Optional[dict[str, str]] = None) -> "SparkSession":
    """A SparkSession for replay: the active one if there is one, else a new
    one on ``master`` (default ``local[*,4]``: local mode on all cores, with
    up to 4 attempts per task).  Unless PYSPARK_PYTHON is set, the Python
    workers run this interpreter (it sets PYSPARK_PYTHON for that); on a
    cluster whose nodes have it elsewhere, see docs/spark.md."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    chosen = master or DEFAULT_MASTER
    builder = SparkSession.builder.master(chosen).appName("etalis replay")
    settings = {
        "spark.ui.showConsoleProgress": "false",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.adaptive.enabled": "true",
    }
    if chosen.startswith("local"):
        settings["spark.driver.host"] = "127.0.0.1"
        settings["spark.driver.bindAddress"] = "127.0.0.1"
    if not os.environ.get("PYSPARK_PYTHON") and "spark.pyspark.python" not in (conf or {}):
        # PySpark takes the workers' interpreter from the environment of
        # the process that makes the SparkContext
        os.environ["PYSPARK_PYTHON"] = sys.executable
    settings.update(conf or {})
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# -- reading input ----------------------------------------------------------------


def read_input(spark: "SparkSession", path: str, mapping: Mapping, input_format: Optional[str] = None) -> "DataFrame":
    """The table at ``path`` (a file or a directory of files): CSV (every
    column read as text, as ``etalis run`` reads it; rows with the wrong
    number of fields keep their line in ``_corrupt_record``), Parquet or
    JSON lines."""
    fmt = (input_format or _format_of(path)).lower()
    if fmt == "csv":
        from pyspark.sql.types import StringType, StructField, StructType

        names = list(mapping.columns) if mapping.columns else _csv_header(spark, path)
        if len(set(names)) != len(names):
            raise ValueError(f"the header of {path} names a column twice: {', '.join(names)}")
        schema = StructType([StructField(n, StringType()) for n in names] + [StructField(CORRUPT, StringType())])
        return (spark.read.schema(schema)
                .option("header", mapping.columns is None)
                .option("escape", '"')
                .option("mode", "PERMISSIVE")
                .option("columnNameOfCorruptRecord", CORRUPT)
                .csv(path))
    if fmt == "parquet":
        return spark.read.parquet(path)
    if fmt in ("json", "jsonl"):
        return spark.read.json(path)
    raise ValueError(f"unknown input format {fmt!r}: use csv, parquet or json")


def _format_of(path: str) -> str:
    p = Path(path.split("://", 1)[-1])
    if p.is_dir():
        suffixes = {f.suffix.lower() for f in p.iterdir() if f.is_file() and not f.name.startswith((".", "_"))}
        if len(suffixes) == 1:
            return suffixes.pop().lstrip(".")
        raise ValueError(f"cannot tell the format of the files in {path}: give --input-format")
    suffix = p.suffix.lower().lstrip(".")
    if suffix in ("csv", "parquet", "json", "jsonl"):
        return suffix
    raise ValueError(f"cannot tell the format of {path} from its name: give --input-format csv, parquet or json")


def _csv_header(spark: "SparkSession", path: str) -> list[str]:
    local = Path(path[len("file://"):] if path.startswith("file://") else path)
    if "://" not in path or path.startswith("file://"):
        first = local
        if local.is_dir():
            files = sorted(f for f in local.iterdir() if f.is_file() and not f.name.startswith((".", "_")))
            if not files:
                raise ValueError(f"no files in {path}")
            first = files[0]
        with first.open(encoding="utf-8", newline="") as f:
            row = next(csv.reader(f), None)
        if row is None:
            raise ValueError(f"{first} is empty: it has no header (give --columns)")
        return [h.strip() for h in row]
    return [h.strip() for h in spark.read.option("header", True).option("escape", '"').csv(path).columns]


# -- the mapping pass (Python workers) ---------------------------------------------


@dataclass(frozen=True)
class MapSpec:
    """What the mapping pass needs, shipped to the workers."""

    mapping: Mapping
    original: tuple[str, ...]          # the input's columns (they come back for rejected rows)
    key_positions: tuple[int, ...]     # arguments whose value keys some stage
    header_width: int                  # fields a CSV row should have
    has_corrupt: bool


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
    order, so the same reasons), or to rejections.  ``KEYS`` holds the
    canonical text of the arguments at ``spec.key_positions``, in that
    order."""
    m = spec.mapping
    fixed_name = quote_atom(m.event) if m.event is not None else None
    arity = len(m.args)
    key_slot = {p: i for i, p in enumerate(spec.key_positions)}
    n_keys = len(spec.key_positions)
    time_col = m.time or ""
    names = [*spec.original, ROW, KIND, SIG, LINE, TIME, KEYS, REASON, TKIND]

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            time_values = batch.column(time_col).to_pylist()
            time_is_date = pa.types.is_timestamp(batch.schema.field(time_col).type)
            event_names = batch.column(m.event_col).to_pylist() if m.event_col is not None else None
            arg_cols = [(c, batch.column(c).to_pylist(), key_slot.get(p, -1)) for p, c in enumerate(m.args)]
            corrupt = batch.column(CORRUPT).to_pylist() if spec.has_corrupt else None
            ok: list[int] = []
            sigs: list[str] = []
            lines: list[str] = []
            times: list[float] = []
            keys: list[Optional[str]] = []
            tkinds: list[int] = []
            bad: list[int] = []
            reasons: list[str] = []
            fixed_sig = f"{m.event}/{arity}"
            fixed_tk = TK_DATE if (m.time_format or time_is_date) else 0
            for i in range(n):
                try:
                    if corrupt is not None and corrupt[i] is not None:
                        fields = next(csv.reader([corrupt[i]]), [])
                        raise InvalidEvent(f"{len(fields)} fields where the header has {spec.header_width}")
                    if event_names is not None:
                        raw_name = _text(event_names[i], m.event_col or "", batch, i, spec)
                        if raw_name.startswith("$"):
                            raise InvalidEvent(f"event names starting with $ are reserved ({quote_atom(raw_name)})")
                        functor = quote_atom(raw_name)
                        sig = f"{raw_name}/{arity}"
                    else:
                        functor = fixed_name or ""
                        sig = fixed_sig
                    parts: list[str] = []
                    row_keys: list[Optional[str]] = [None] * n_keys
                    for c, values, slot in arg_cols:
                        v = values[i]
                        text = (v if v.__class__ is str else _value_text(v)).strip()
                        if not text:
                            _empty(c, batch, i, spec)
                        value = parse_value(text, c)
                        parts.append(prolog_value(value))
                        if slot >= 0:
                            row_keys[slot] = _key_text(value)
                    tv = time_values[i]
                    if time_is_date and isinstance(tv, datetime):
                        t: float | int = to_time(tv)
                    else:
                        text = (tv if tv.__class__ is str else _value_text(tv)).strip()
                        if not text:
                            _empty(time_col, batch, i, spec)
                        t = parse_time(text, m.time_format)
                except InvalidEvent as e:
                    bad.append(i)
                    reasons.append(str(e))
                    continue
                ok.append(i)
                sigs.append(sig)
                lines.append(f"event({functor}({','.join(parts)}), {t!r}).\n" if parts else f"event({functor}, {t!r}).\n")
                times.append(float(t))
                keys.extend(row_keys)
                tkinds.append(fixed_tk or (TK_NUMBER if isinstance(tv, (int, float)) or _is_number(str(tv)) else TK_DATE))
            rows = batch.column(ROW)
            if ok:
                k = len(ok)
                yield pa.RecordBatch.from_arrays(
                    [*(pa.nulls(k, batch.schema.field(c).type) for c in spec.original),
                     rows.take(pa.array(ok, pa.int64())), pa.array(["e"] * k, pa.string()),
                     pa.array(sigs, pa.string()), pa.array(lines, pa.string()), pa.array(times, pa.float64()),
                     pa.ListArray.from_arrays(pa.array([j * n_keys for j in range(k + 1)], pa.int32()),
                                              pa.array(keys, pa.string())),
                     pa.nulls(k, pa.string()), pa.array(tkinds, pa.int32())],
                    names=names)
            if bad:
                idx = pa.array(bad, pa.int64())
                k = len(bad)
                yield pa.RecordBatch.from_arrays(
                    [*(batch.column(c).take(idx) for c in spec.original), rows.take(idx),
                     pa.array(["r"] * k, pa.string()), pa.nulls(k, pa.string()), pa.nulls(k, pa.string()),
                     pa.nulls(k, pa.float64()), pa.nulls(k, pa.list_(pa.string())), pa.array(reasons, pa.string()),
                     pa.nulls(k, pa.int32())],
                    names=names)

    return run


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


# -- the stages (Python workers) ---------------------------------------------------


@dataclass(frozen=True)
class InjectedFailure:
    """For tests of retries: fail the first ``attempts`` attempts of the
    task for partition ``partition`` of stage ``stage`` (0 for the mapping
    pass), after it has produced some output; each failure appends a line
    to the file ``marker`` if given."""

    stage: int
    partition: int = 0
    attempts: int = 1
    marker: Optional[str] = None


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
    knowledge: tuple[tuple[str, str], ...] = ()     # ontology files: (name, text)
    entailment: Optional[str] = None
    failure: Optional[InjectedFailure] = None

    def engine_key(self) -> tuple[Any, ...]:
        return (self.rules_text, self.source, self.only_rules, self.report, self.policy, self.max_age,
                self.knowledge, self.entailment)


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
    engine = Engine.from_string(spec.rules_text, policy=spec.policy, source=spec.source,
                                max_age=spec.max_age, only_rules=spec.only_rules, report=spec.report)
    if spec.knowledge or spec.entailment:
        _load_knowledge(engine, spec.knowledge, spec.entailment)
    _ENGINES[key] = engine
    return engine, True


def _load_knowledge(engine: Engine, knowledge: Sequence[tuple[str, str]], entailment: Optional[str]) -> None:
    """Load ontologies given as (file name, text) into ``engine``."""
    from rdflib import Graph
    from rdflib.util import guess_format

    graphs = [Graph().parse(data=text, format=guess_format(name) or "turtle") for name, text in knowledge]
    engine.load_ontology(graphs, entailment or "rdfs")


def _maybe_fail(failure: Optional[InjectedFailure], stage: int) -> None:
    if failure is None or failure.stage != stage:
        return
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is not None and ctx.partitionId() == failure.partition and ctx.attemptNumber() < failure.attempts:
        if failure.marker:
            with open(failure.marker, "a", encoding="utf-8") as f:
                f.write(f"stage {stage} partition {failure.partition} attempt {ctx.attemptNumber()}\n")
        raise RuntimeError(f"injected failure in stage {stage}, partition {failure.partition}, "
                           f"attempt {ctx.attemptNumber()}")


def _map_with_failure(inner: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
                      failure: Optional[InjectedFailure]) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for number, out in enumerate(inner(batches)):
            yield out
            if number == 0:
                _maybe_fail(failure, 0)

    return run


class _StageOutput:
    """Rows of a stage's output table, gathered column by column."""

    def __init__(self) -> None:
        self.kind: list[str] = []
        self.sig: list[Optional[str]] = []
        self.line: list[Optional[str]] = []
        self.t: list[Optional[float]] = []
        self.row: list[Optional[int]] = []
        self.path: list[Optional[list[int]]] = []
        self.keys: list[Optional[list[str]]] = []
        self.key: list[Optional[str]] = []
        self.n: list[Optional[int]] = []

    def add(self, kind: str, sig: Optional[str] = None, line: Optional[str] = None, t: Optional[float] = None,
            row: Optional[int] = None, path: Optional[list[int]] = None, keys: Optional[list[str]] = None,
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

    def batch(self) -> pa.RecordBatch:
        out = pa.RecordBatch.from_arrays(
            [pa.array(self.kind, pa.string()), pa.array(self.sig, pa.string()), pa.array(self.line, pa.string()),
             pa.array(self.t, pa.float64()), pa.array(self.row, pa.int64()),
             pa.array(self.path, pa.list_(pa.int32())), pa.array(self.keys, pa.list_(pa.string())),
             pa.array(self.key, pa.string()), pa.array(self.n, pa.int64())],
            names=["kind", "sig", "line", "t", "row", "path", "keys", "key", "n"])
        self.__init__()  # type: ignore[misc]
        return out


def _number_text(x: Any) -> str:
    return str(x) if isinstance(x, int) else repr(float(x))


def _run_stage(spec: StageSpec) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A stage's task: the events of a partition, sorted by key, time, row
    and path, through one engine reset for each key."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        engine, compiled = _engine_for(spec)
        out = _StageOutput()
        accepted = fed = warnings = rejected = 0
        sample: list[str] = []
        masks: list[int] = []       # type codes of the detections' arguments, by position
        kmask = 0                   # ... and of their keys
        current: Optional[str] = None
        started = False
        # the events waiting to be fed: at most one per time, so that each
        # detection is attributed to the event that caused it (a detection
        # ends when the event that completes it does)
        lines: list[str] = []
        rows: list[int] = []
        paths: list[list[int]] = []
        times: list[float] = []
        by_time: dict[float, int] = {}

        def flush() -> None:
            nonlocal accepted, fed, warnings, rejected, kmask
            if not lines:
                return
            result = engine.feed_text("".join(lines), 1)
            fed += len(lines)
            accepted += result.accepted
            for r in result.rejected:
                rejected += 1
                out.add("r", line=r.reason, row=rows[r.line - 1])
            for w in result.warnings:
                warnings += 1
                if len(sample) < 5:
                    sample.append(w.reason)
            counters = [0] * len(lines)
            for text in result.detection_lines.splitlines():
                d = json.loads(text)
                end = d["end"]
                j = by_time.get(float(end))
                if j is None:
                    j = max((i for i, t in enumerate(times) if t <= float(end)), default=0)
                path = paths[j] + [spec.number, counters[j]]
                counters[j] += 1
                args = d["args"]
                if d["event"] == TRANSFER:
                    name, arity, term, values = args
                    out.add("x", sig=f"{name}/{arity}", t=float(end), row=rows[j], path=path,
                            line=f"event({term}, [{_number_text(d['start'])}, {_number_text(end)}]).\n",
                            keys=[_key_text(v) for v in values])
                else:
                    out.add("d", sig=f"{d['event']}/{len(args)}", line=text + "\n", t=float(end), row=rows[j],
                            path=path, key=current if spec.keyed_by_input else None)
                    for p, v in enumerate(args):
                        if p == len(masks):
                            masks.append(0)
                        masks[p] |= _type_code(v)
                    if spec.keyed_by_input and current is not None:
                        kmask |= _type_code(json.loads(current))
            lines.clear()
            rows.clear()
            paths.clear()
            times.clear()
            by_time.clear()

        for number, batch in enumerate(batches):
            ks = batch.column("k").to_pylist()
            ts = batch.column("t").to_pylist()
            rs = batch.column("row").to_pylist()
            ps = batch.column("path").to_pylist()
            ls = batch.column("line").to_pylist()
            for i in range(batch.num_rows):
                k = ks[i]
                if k != current or not started:
                    flush()
                    engine.reset()
                    current, started = k, True
                t = ts[i]
                if t in by_time or len(lines) >= FEED_LINES:
                    flush()
                by_time[t] = len(lines)
                lines.append(ls[i])
                rows.append(rs[i])
                paths.append(ps[i])
                times.append(t)
            if len(out):
                yield out.batch()
            if number == 0:
                _maybe_fail(spec.failure, spec.number)
        flush()
        out.add("s", n=accepted, line=json.dumps({"fed": fed, "warnings": warnings, "sample": sample,
                                                  "rejected": rejected, "masks": masks, "kmask": kmask,
                                                  "compiled": compiled}))
        yield out.batch()

    return run


# -- typed detections (Python workers) ---------------------------------------------


@dataclass(frozen=True)
class TableSpec:
    """The columns of the detections table."""

    key: Optional[str]                  # Spark type of the key column, None: no key column
    args: Optional[tuple[str, ...]]     # Spark types of arg1..argN, None: one JSON `args` column
    timestamps: bool                    # start and end as timestamps (else seconds)
    key_json: bool = False              # keys of several types: the key column holds JSON text

    def ddl(self) -> str:
        cols = [f"key {self.key}"] if self.key else []
        cols.append("event string")
        if self.args is None:
            cols.append("args string")
        else:
            cols += [f"arg{i} {t}" for i, t in enumerate(self.args, start=1)]
        kind = "timestamp" if self.timestamps else "double"
        cols += [f"start {kind}", f"end {kind}"]
        return ", ".join(cols)


_SPARK_TYPE = {T_INT: "long", T_FLOAT: "double", T_TEXT: "string"}
_ARROW_TYPE = {"long": pa.int64(), "double": pa.float64(), "string": pa.string()}


def _typed(spec: TableSpec) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def seconds_array(values: list[Any]) -> pa.Array:
        if spec.timestamps:
            return pa.array([None if v is None else round(float(v) * 1_000_000) for v in values],
                            pa.int64()).cast(pa.timestamp("us", tz="UTC"))
        return pa.array([None if v is None else float(v) for v in values], pa.float64())

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ds = [json.loads(x) for x in batch.column("line").to_pylist()]
            arrays: list[pa.Array] = []
            names: list[str] = []
            if spec.key:
                keys = [None if k is None else (k if spec.key_json else json.loads(k))
                        for k in batch.column("key").to_pylist()]
                arrays.append(pa.array(keys, _ARROW_TYPE[spec.key]))
                names.append("key")
            arrays.append(pa.array([d["event"] for d in ds], pa.string()))
            names.append("event")
            if spec.args is None:
                arrays.append(pa.array([json.dumps(d["args"]) for d in ds], pa.string()))
                names.append("args")
            else:
                for i, t in enumerate(spec.args):
                    arrays.append(pa.array([d["args"][i] if i < len(d["args"]) else None for d in ds],
                                           _ARROW_TYPE[t]))
                    names.append(f"arg{i + 1}")
            arrays += [seconds_array([d["start"] for d in ds]), seconds_array([d["end"] for d in ds])]
            names += ["start", "end"]
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    return run


# -- replay (driver) -----------------------------------------------------------------


@dataclass(frozen=True)
class StageReport:
    """What one stage did."""

    number: int
    partitioning: str
    rules: tuple[str, ...]
    events_in: int
    detections: int
    passed_on: int
    warnings: int
    seconds: float
    tasks: int = 0                  # partitions run
    compiled: int = 0               # of which compiled the rules (the others found them compiled)


@dataclass(frozen=True)
class ReplayResult:
    """The outcome of :func:`replay`.

    ``detections`` is a table with ``key`` (the partition key, for
    detections of rules run partitioned by it), ``event``, the arguments
    (``arg1``... typed where every value of an argument has one type, else
    one ``args`` column of JSON arrays), ``start`` and ``end`` (timestamps
    when the input time was a date, else seconds), in the order ``etalis
    run`` would print them.  ``rejected`` has the rejected rows' original
    columns, ``row`` (its number in the input order) and ``reason``.
    ``rows = events + rejected_rows`` always holds.
    """

    detections: "DataFrame"
    rejected: "DataFrame"
    rows: int
    events: int
    rejected_rows: int
    detection_count: int
    warnings: int
    warning_sample: tuple[str, ...]
    stages: tuple[StageReport, ...]
    plan: Plan
    printed: tuple[str, ...]
    seconds: float
    mapping_seconds: float
    lines: "DataFrame" = field(repr=False)            # the detections' JSON lines, ordered
    _cached: tuple["DataFrame", ...] = field(default=(), repr=False)

    def detection_lines(self) -> Iterator[str]:
        """The detections as JSON lines, exactly as ``etalis run`` prints
        them, in its order."""
        for r in self.lines.toLocalIterator():
            yield str(r[0])

    def summary(self) -> str:
        """Rows, events, rejected, detections and time per stage."""
        out = [f"rows: {self.rows}, events: {self.events}, rejected: {self.rejected_rows}, "
               f"detections: {self.detection_count}, warnings: {self.warnings}, seconds: {self.seconds:.3f}",
               f"  mapping rows to events: {self.mapping_seconds:.3f} s"]
        for s in self.stages:
            out.append(f"  stage {s.number} ({s.partitioning}; {len(s.rules)} rules): events in {s.events_in}, "
                       f"detections {s.detections}, passed on {s.passed_on}, {s.seconds:.3f} s "
                       f"({s.tasks} tasks, rules compiled in {s.compiled})")
        out += [f"  warning: {w}" for w in self.warning_sample]
        return "\n".join(out) + "\n"

    def summary_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows, "events": self.events, "rejected": self.rejected_rows,
            "detections": self.detection_count, "warnings": self.warnings, "seconds": self.seconds,
            "mapping_seconds": self.mapping_seconds,
            "stages": [{"stage": s.number, "partitioning": s.partitioning, "rules": list(s.rules),
                        "events_in": s.events_in, "detections": s.detections, "passed_on": s.passed_on,
                        "warnings": s.warnings, "seconds": s.seconds, "tasks": s.tasks,
                        "compiled": s.compiled} for s in self.stages],
        }

    def write(self, out: str | os.PathLike[str], format: str = "parquet", overwrite: bool = False) -> None:
        """Write ``detections`` and ``rejected`` (and ``summary.json``) into
        the directory ``out``, atomically: into a staging directory beside
        it, renamed into place once everything is written.

        ``format`` is parquet, csv or json (Spark writes ``detections/`` and
        ``rejected/``), or jsonl (``detections.jsonl`` exactly as ``etalis
        run`` prints, and ``rejected.jsonl``).
        """
        if format not in FORMATS:
            raise ValueError(f"unknown output format {format!r}: use one of {', '.join(FORMATS)}")
        target = _OutputDir(self.detections.sparkSession, str(out))
        if target.exists() and not overwrite:
            raise FileExistsError(f"{out} exists: remove it, or give overwrite=True (--overwrite)")
        staging = target.staging()
        try:
            if format == "jsonl":
                with staging.open("detections.jsonl") as f:
                    for line in self.detection_lines():
                        f.write(line)
                from pyspark.sql import functions as F

                with staging.open("rejected.jsonl") as f:
                    for r in self.rejected.select(F.to_json(F.struct("*"))).toLocalIterator():
                        f.write(str(r[0]) + "\n")
            else:
                options = {"header": "true"} if format == "csv" else {}
                self.detections.write.format(format).options(**options).save(staging.child("detections"))
                self.rejected.write.format(format).options(**options).save(staging.child("rejected"))
            with staging.open("summary.json") as f:
                json.dump(self.summary_dict(), f, indent=1)
                f.write("\n")
            target.replace_with(staging, overwrite)
        except BaseException:
            staging.remove()
            raise

    def unpersist(self) -> None:
        """Free the cached intermediate tables."""
        for df in self._cached:
            df.unpersist()


def replay(
    data: Union["DataFrame", str, "os.PathLike[str]"],
    rules: Union[str, "os.PathLike[str]"],
    *,
    event: Optional[str] = None,
    event_col: Optional[str] = None,
    args: Sequence[str] = (),
    time: Optional[str] = None,
    time_format: Optional[str] = None,
    columns: Optional[Sequence[str]] = None,
    partition_by: Optional[str] = None,
    policy: Optional[str] = None,
    max_age: Optional[float] = None,
    ontology: Sequence[Union[str, "os.PathLike[str]"]] = (),
    entailment: Optional[str] = None,
    spark: Optional["SparkSession"] = None,
    input_format: Optional[str] = None,
    partitions: Optional[int] = None,
    progress: bool = False,
    inject_failure: Optional[InjectedFailure] = None,
) -> ReplayResult:
    """Replay ``data`` through ``rules`` on Spark.

    ``data`` is a DataFrame or the path of a CSV, Parquet or JSON-lines
    table; ``rules`` the path of an ``.etl`` file or rule text.  Rows map to
    events as in ``etalis run``: ``event`` names every row's event (or
    ``event_col`` gives the column that does), ``args`` are the argument
    columns, ``time`` the time column (seconds, or dates in
    ``time_format`` or ISO 8601), ``columns`` names a headerless CSV's
    columns.  ``partition_by`` is the key column: rules whose events all
    carry the key run partitioned by it (see :func:`explain`).  ``policy``,
    ``max_age``, ``ontology`` (files of background knowledge, read here
    and shipped to the workers) and ``entailment`` are those of ``etalis
    run``.  ``partitions`` is the
    number of partitions of keyed stages (default: 4 per core).

    Raises :class:`~etalis_py.errors.RuleError` for a rule file with
    errors and ValueError for a mapping that does not fit the data.
    """
    started = perf_counter()
    text, source = _rule_text(rules)
    mapping = Mapping(event=event, event_col=event_col, args=tuple(args), time=time,
                      time_format=time_format, columns=tuple(columns) if columns else None)
    mapping.check()
    if policy is not None:
        check_policy(policy)
    knowledge = tuple((Path(o).name, Path(o).read_text(encoding="utf-8")) for o in ontology)
    checked = Engine.from_string(text, policy=policy, source=source, max_age=max_age)
    try:
        if knowledge or entailment:
            _load_knowledge(checked, knowledge, entailment)
        printed = tuple(checked.printed)
    finally:
        checked.close()
    the_plan = explain(text, source, mapping, partition_by)

    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    if isinstance(data, (str, os.PathLike)):
        spark = spark or session()
        df = read_input(spark, os.fspath(data), mapping, input_format)
    else:
        df = data
        spark = df.sparkSession
    needed = [c for c in (mapping.event_col, mapping.time, *mapping.args) if c is not None]
    missing = [c for c in needed + ([partition_by] if partition_by else []) if c not in df.columns]
    if missing:
        raise ValueError(f"no column {missing[0]!r} in the data: {', '.join(c for c in df.columns if c != CORRUPT)}")
    n_parts = partitions or max(1, 4 * spark.sparkContext.defaultParallelism)
    reporter = _Progress(spark, progress)
    cached: list["DataFrame"] = []
    try:
        # 1. rows to events
        reporter.label("mapping rows to events")
        t0 = perf_counter()
        original = tuple(df.columns)
        numbered = df.withColumn(ROW, F.monotonically_increasing_id())
        key_positions = sorted({p for st in the_plan.stages if st.key is not None
                                for s, p in st.key if the_plan.input.is_input(s)})
        mspec = MapSpec(mapping, original, tuple(key_positions),
                        len(original) - (1 if CORRUPT in original else 0), CORRUPT in original)
        mapped_schema = _mapped_schema(numbered)
        mapped = numbered.mapInArrow(_map_with_failure(_map_rows(mspec), inject_failure), mapped_schema)
        mapped = mapped.persist(StorageLevel.MEMORY_AND_DISK)
        cached.append(mapped)
        counts = {r[0]: (int(r[1]), int(r[2] or 0)) for r in
                  mapped.groupBy(KIND).agg(F.count(F.lit(1)), F.bit_or(TKIND)).collect()}
        rows = sum(c for c, _ in counts.values())
        mapping_rejected = counts.get("r", (0, 0))[0]
        tkinds = counts.get("e", (0, 0))[1]
        mapping_seconds = perf_counter() - t0
        events_df = mapped.filter(F.col(KIND) == "e")

        # 2. the stages
        transfer_sigs = sorted({s for st in the_plan.stages for s in st.exports})
        stage_text = text + "\n" + _transfer_rules(transfer_sigs)
        n_rules = len(the_plan.rules)
        transfer_index = {s: n_rules + i for i, s in enumerate(transfer_sigs, start=1)}
        outputs: list["DataFrame"] = []
        reports: list[StageReport] = []
        all_warnings = 0
        sample: list[str] = []
        any_engine_rejects = False
        masks: list[int] = []
        kmask = 0
        for st in the_plan.stages:
            t1 = perf_counter()
            reporter.label(f"stage {st.number} of {len(the_plan.stages)} ({the_plan._partitioning(st)})")
            spec = StageSpec(
                st.number, stage_text, source,
                tuple(sorted(st.rules)) + tuple(transfer_index[s] for s in st.exports),
                tuple(sorted({p for p in printed if Sig.parse(p) in st.produces}))
                + ((f"{TRANSFER}/4",) if st.exports else ()),
                policy, max_age, st.by_input_key, knowledge, entailment, inject_failure)
            stage_in = _stage_input(the_plan, st, events_df, outputs,
                                    {p: i for i, p in enumerate(key_positions)})
            if st.key is None:
                arranged = stage_in.repartition(1).sortWithinPartitions("t", "row", "path")
            else:
                arranged = stage_in.repartition(n_parts, "k").sortWithinPartitions("k", "t", "row", "path")
            out = arranged.mapInArrow(_run_stage(spec), STAGE_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)
            cached.append(out)
            summary = {r[0]: (int(r[1]), list(r[2])) for r in
                       out.groupBy("kind").agg(F.count(F.lit(1)),
                                               F.collect_list(F.when(F.col("kind") == "s", F.col("line"))))
                       .collect()}
            fed = warnings = compiled = 0
            for stats in summary.get("s", (0, []))[1]:
                info = json.loads(stats)
                fed += info["fed"]
                compiled += info["compiled"]
                warnings += info["warnings"]
                any_engine_rejects = any_engine_rejects or info["rejected"] > 0
                sample += info["sample"][: max(0, 5 - len(sample))]
                kmask |= info["kmask"]
                for p, m in enumerate(info["masks"]):
                    if p == len(masks):
                        masks.append(0)
                    masks[p] |= m
            all_warnings += warnings
            outputs.append(out)
            reports.append(StageReport(
                st.number, the_plan._partitioning(st), tuple(the_plan.rule(r).name for r in st.rules), fed,
                summary.get("d", (0, []))[0], summary.get("x", (0, []))[0], warnings, perf_counter() - t1,
                summary.get("s", (0, []))[0], compiled))

        # 3. results
        reporter.label("collecting results")
        rejected = (mapped.filter(F.col(KIND) == "r")
                    .select(*[F.col(f"`{c}`") for c in original], F.col(ROW).alias("row"),
                            F.col(REASON).alias("reason")))
        engine_rejected = 0
        if any_engine_rejects:     # the engine refused a line the mapping made: keep the row all the same
            engine_rejects = None
            for out in outputs:
                r = out.filter(F.col("kind") == "r").select(F.col("row").alias(ROW), F.col("line").alias(REASON))
                engine_rejects = r if engine_rejects is None else engine_rejects.unionByName(r)
            assert engine_rejects is not None
            first_reason = engine_rejects.groupBy(ROW).agg(F.min(REASON).alias(REASON))
            engine_rejected = first_reason.count()
            extra = (numbered.join(first_reason, on=ROW)
                     .select(*[F.col(f"`{c}`") for c in original], F.col(ROW).alias("row"),
                             F.col(REASON).alias("reason")))
            rejected = rejected.unionByName(extra)
        rejected_rows = mapping_rejected + engine_rejected
        events = rows - rejected_rows

        detected = None
        for out in outputs:
            d = out.filter(F.col("kind") == "d")
            detected = d if detected is None else detected.unionByName(d)
        if detected is None:
            detected = spark.createDataFrame([], STAGE_SCHEMA)
        ordered = detected.orderBy("row", "path")
        table = _table_spec(masks, kmask if partition_by is not None and the_plan.input.key is not None else None,
                            tkinds == TK_DATE)
        detections = ordered.select("line", "key").mapInArrow(_typed(table), table.ddl())
        detection_count = sum(r.detections for r in reports)
        lines = ordered.select("line")
        return ReplayResult(detections, rejected.orderBy("row"), rows, events, rejected_rows, detection_count,
                            all_warnings, tuple(sample), tuple(reports), the_plan, printed,
                            perf_counter() - started, mapping_seconds, lines, tuple(cached))
    except BaseException:
        for c in cached:
            c.unpersist()
        raise
    finally:
        reporter.stop()


def explain(rules_text: str, source: str, mapping: Mapping, partition_by: Optional[str]) -> Plan:
    """The stages a replay with this mapping runs (``etalis replay --explain``)."""
    infos, _ = read_rules(rules_text, source)
    key = mapping.args.index(partition_by) if partition_by is not None and partition_by in mapping.args else None
    return make_plan(infos, InputEvents(mapping.event, len(mapping.args), key, partition_by))


def _rule_text(rules: Union[str, "os.PathLike[str]"]) -> tuple[str, str]:
    if isinstance(rules, os.PathLike) or (isinstance(rules, str) and "\n" not in rules
                                          and (rules.endswith(".etl") or Path(rules).is_file())):
        path = Path(rules)
        if not path.is_file():
            raise RuleFileNotFound(f"rule file {path} does not exist")
        return path.read_text(encoding="utf-8"), str(path)
    return str(rules), "<rules>"


def _transfer_rules(sigs: Sequence[Sig]) -> str:
    """One rule per event passed between stages: it reports the event's
    exact Prolog text and its arguments (JSON loses the difference between
    an atom and a compound term)."""
    out = []
    for s in sigs:
        vs = [f"X{i}" for i in range(1, s.arity + 1)]
        term = f"{quote_atom(s.name)}({', '.join(vs)})" if vs else quote_atom(s.name)
        out.append(f"{TRANSFER}({quote_atom(s.name)}, {s.arity}, Text, [{', '.join(vs)}]) <- {term} "
                   f"where format(atom(Text), '~q', [{term}]).\n")
    return "".join(out)


def _mapped_schema(numbered: "DataFrame") -> Any:
    from pyspark.sql.types import ArrayType, DoubleType, IntegerType, StringType, StructField, StructType

    return StructType(list(numbered.schema.fields) + [
        StructField(KIND, StringType()), StructField(SIG, StringType()), StructField(LINE, StringType()),
        StructField(TIME, DoubleType()), StructField(KEYS, ArrayType(StringType())),
        StructField(REASON, StringType()), StructField(TKIND, IntegerType())])


def _stage_input(the_plan: Plan, st: Stage, events_df: "DataFrame", outputs: list["DataFrame"],
                 raw_slot: dict[int, int]) -> "DataFrame":
    """The events a stage consumes: from the input and from earlier stages,
    with their key (k), time (t), row, derivation path and line.  The keys
    of input events are at ``raw_slot[position]`` of their key texts."""
    from pyspark.sql import functions as F

    def key_of(keys: "Column", sig: "Column", raw: bool) -> "Column":
        if st.key is None:
            return F.lit("")
        expr = None
        for s, p in st.key:
            if raw and not the_plan.input.is_input(s):
                continue
            value = keys.getItem(raw_slot[p] if raw else p)
            expr = F.when(sig == str(s), value) if expr is None else expr.when(sig == str(s), value)
        assert expr is not None
        return expr

    parts: list["DataFrame"] = []
    raw = [str(s) for s in st.consumes if the_plan.input.is_input(s)]
    if raw:
        ev = events_df.filter(F.col(SIG).isin(raw))
        parts.append(ev.select(key_of(F.col(KEYS), F.col(SIG), True).alias("k"), F.col(TIME).alias("t"),
                               F.col(ROW).alias("row"), F.array().cast("array<int>").alias("path"),
                               F.col(LINE).alias("line")))
    derived = [str(s) for s in st.consumes]
    for out in outputs:
        x = out.filter((F.col("kind") == "x") & F.col("sig").isin(derived))
        parts.append(x.select(key_of(F.col("keys"), F.col("sig"), False).alias("k"), "t", "row", "path", "line"))
    result = parts[0]
    for p in parts[1:]:
        result = result.unionByName(p)
    return result


def _table_spec(masks: list[int], kmask: Optional[int], timestamps: bool) -> TableSpec:
    """Typed argument columns where every value of an argument has one
    type (``masks``: the OR of the type codes by position)."""
    args: Optional[tuple[str, ...]] = None
    if masks and all(m in _SPARK_TYPE for m in masks):
        args = tuple(_SPARK_TYPE[m] for m in masks)
    key = None
    key_json = False
    if kmask is not None:
        key = _SPARK_TYPE.get(kmask or T_TEXT, "string")
        key_json = (kmask or T_TEXT) not in _SPARK_TYPE
    return TableSpec(key, args, timestamps, key_json)


# -- output ------------------------------------------------------------------------------


class _OutputDir:
    """An output directory, local or on a Hadoop file system (hdfs://, s3a://)."""

    def __init__(self, spark: "SparkSession", path: str) -> None:
        self.spark = spark
        self.path = path.rstrip("/") or path
        self.local = "://" not in path or path.startswith("file://")

    def _fs(self, path: str) -> tuple[Any, Any]:
        jvm = self.spark.sparkContext._jvm
        assert jvm is not None
        p = jvm.org.apache.hadoop.fs.Path(path)
        return p.getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration()), p

    def _local_path(self) -> Path:
        return Path(self.path[len("file://"):] if self.path.startswith("file://") else self.path)

    def exists(self) -> bool:
        if self.local:
            return self._local_path().exists()
        fs, p = self._fs(self.path)
        return bool(fs.exists(p))

    def staging(self) -> "_Staging":
        if self.local:
            target = self._local_path().resolve()
            target.parent.mkdir(parents=True, exist_ok=True)
            local = target.parent / f".{target.name}.staging-{uuid.uuid4().hex[:12]}"
            local.mkdir()
            return _Staging(self, str(local))
        where = f"{self.path.rsplit('/', 1)[0]}/.{self.path.rsplit('/', 1)[-1]}.staging-{uuid.uuid4().hex[:12]}"
        return _Staging(self, where)

    def replace_with(self, staging: "_Staging", overwrite: bool) -> None:
        if self.local:
            target = self._local_path().resolve()
            old = None
            if target.exists():
                if not overwrite:
                    raise FileExistsError(f"{target} exists")
                old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:12]}"
                os.rename(target, old)
            os.rename(staging.where, target)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            return
        fs, p = self._fs(self.path)
        if fs.exists(p):
            if not overwrite:
                raise FileExistsError(f"{self.path} exists")
            fs.delete(p, True)
        _, sp = self._fs(staging.where)
        if not fs.rename(sp, p):
            raise OSError(f"cannot rename {staging.where} to {self.path}")


class _Staging:
    def __init__(self, target: _OutputDir, where: str) -> None:
        self.target = target
        self.where = where

    def child(self, name: str) -> str:
        return f"{self.where}/{name}"

    def open(self, name: str) -> IO[str]:
        if not self.target.local:
            raise ValueError("jsonl output and summary.json need a local --out directory")
        return open(Path(self.where) / name, "w", encoding="utf-8")

    def remove(self) -> None:
        if self.target.local:
            shutil.rmtree(self.where, ignore_errors=True)
        else:
            fs, p = self.target._fs(self.where)
            fs.delete(p, True)


# -- progress --------------------------------------------------------------------------


class _Progress:
    """A progress line on stderr while a replay runs (after 2 seconds),
    from Spark's status tracker."""

    def __init__(self, spark: "SparkSession", enabled: bool, out: IO[str] = sys.stderr) -> None:
        self.spark = spark
        self.out = out
        self.text = ""
        self.started = perf_counter()
        self.done = threading.Event()
        self.tty = bool(getattr(out, "isatty", lambda: False)())
        self.shown = False
        self.thread: Optional[threading.Thread] = None
        if enabled:
            self.thread = threading.Thread(target=self._loop, daemon=True)
            self.thread.start()

    def label(self, text: str) -> None:
        self.text = text

    def _loop(self) -> None:
        last_line = 0.0
        while not self.done.wait(0.5):
            elapsed = perf_counter() - self.started
            if elapsed < 2:
                continue
            tracker = self.spark.sparkContext.statusTracker()
            total = done = 0
            for sid in tracker.getActiveStageIds():
                info = tracker.getStageInfo(sid)
                if info is not None:
                    total += info.numTasks
                    done += info.numCompletedTasks
            bar = ""
            if total:
                filled = int(20 * done / total)
                bar = f" [{'#' * filled}{'.' * (20 - filled)}] {done}/{total} tasks"
            line = f"etalis replay: {self.text}{bar}, {elapsed:.0f} s"
            if self.tty:
                self.out.write("\r" + line[:119].ljust(119))
                self.out.flush()
                self.shown = True
            elif elapsed - last_line >= 15:
                self.out.write(line + "\n")
                self.out.flush()
                last_line = elapsed

    def stop(self) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join()
        if self.shown:
            self.out.write("\r" + " " * 119 + "\r")
            self.out.flush()

