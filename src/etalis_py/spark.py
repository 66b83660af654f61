"""Batch replay over Spark (DESIGN section 7).

``replay(data, rules, ...)`` maps the rows of a DataFrame (or a CSV,
Parquet or JSON path) to events with the same options as ``etalis run``,
and runs the rules over them on Spark, in stages (see
:mod:`etalis_py.analysis`):

1. *Mapping.*  A Python pass (``mapInArrow``, in the same tasks as the
   scan, before stage 1's shuffle) turns each row into the engine's input
   line exactly as ``etalis run`` does, or into a rejection with the
   reason.  Each row keeps its number in the input (``row``), so that ties
   in time are broken as ``etalis run`` breaks them: by input order.
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

import bisect
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import threading
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from time import perf_counter
from typing import IO, TYPE_CHECKING, Any, Optional, Union, cast

import pyarrow as pa
import pyarrow.compute as pc

from ._prolog import quote_atom
from .analysis import InputEvents, Plan, Sig, Stage, plan as make_plan, read_rules
from .engine import Engine, check_policy
from .errors import RuleFileNotFound
from .events import InvalidEvent, batch_list, event_term, prolog_value, to_time
from .graphs import graph_cell
from .output import TimeStyle, csv_table, formatted, max_arity
from .progress import ProgressLine
from .streams import Lines, Mapping, json_line_reason, line_chunks, parse_formatted_time, parse_time, parse_value

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

DEFAULT_MASTER = "local[*,4]"       # local mode on all cores, up to 4 attempts per task
TRANSFER = "etalis__transfer"      # the hidden event that carries derived events between stages
FORMATS = ("parquet", "csv", "json", "jsonl")
FEED_LINES = 20_000                 # at most this many events of one key fed at once
MAX_ENGINES = 16                    # compiled engines kept by a worker process

# column names of the internal tables, unlikely to clash with a user's
ROW = "__etalis_row"
KIND = "__etalis_kind"
SIG = "__etalis_sig"
LINE = "__etalis_line"
TIME = "__etalis_t"
KEYS = "__etalis_keys"
KEY1 = "__etalis_key1"
REASON = "__etalis_reason"
TKIND = "__etalis_tkind"
CORRUPT = "_corrupt_record"

# type codes of values, OR-ed to find a column's type
T_INT, T_FLOAT, T_TEXT, T_OTHER = 1, 2, 4, 8
# kinds of input time: a number of seconds, or a date
TK_NUMBER, TK_DATE = 1, 2

# the columns of the stages' tables (prefixed: stage 1 carries the input's own columns too)
S_KIND, S_SIG, S_LINE, S_T, S_ROW, S_PATH, S_KEYS, S_KEY, S_N, S_REASON, S_TKIND = (
    f"__e_{n}" for n in ("kind", "sig", "line", "t", "row", "path", "keys", "key", "n", "reason", "tkind"))
STAGE_SCHEMA = (f"{S_KIND} string, {S_SIG} string, {S_LINE} string, {S_T} double, {S_ROW} long, "
                f"{S_PATH} string, {S_KEYS} array<string>, {S_KEY} string, {S_N} long")


# -- sessions ---------------------------------------------------------------------


def session(master: Optional[str] = None, conf: Optional[dict[str, str]] = None) -> "SparkSession":
    """A SparkSession for replay: the active one if there is one, else a new
    one on ``master`` (default ``local[*,4]``: local mode on all cores, with
    up to 4 attempts per task).  Unless PYSPARK_PYTHON is set, the Python
    workers run this interpreter (it sets PYSPARK_PYTHON for that); on a
    cluster whose nodes have it elsewhere, see docs/spark.md."""
    quiet_pyspark_on_pandas_3()
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
        settings.update({
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            # a replay is a few short jobs: the JVM's first tier of JIT
            # compilation costs far less CPU than the second, and on one
            # machine compressing shuffle files only costs CPU
            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC",
            "spark.shuffle.compress": "false",
            "spark.shuffle.spill.compress": "false",
            "spark.driver.memory": "2g",        # the executors' too, in local mode
        })
    # Spark's own log: errors only (its WARN lines are noise on a normal run)
    log = f"-Dlog4j2.configurationFile={(Path(__file__).parent / 'log4j2.properties').as_uri()}"
    settings["spark.driver.extraJavaOptions"] = f"{settings.get('spark.driver.extraJavaOptions', '')} {log}".strip()
    settings["spark.sql.execution.arrow.maxRecordsPerBatch"] = "50000"
    if not os.environ.get("PYSPARK_PYTHON") and "spark.pyspark.python" not in (conf or {}):
        # PySpark takes the workers' interpreter from the environment of
        # the process that makes the SparkContext
        os.environ["PYSPARK_PYTHON"] = sys.executable
    settings.update(conf or {})
    for k, v in settings.items():
        builder = builder.config(k, v)
    _start_jvm(chosen, settings)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def quiet_pyspark_on_pandas_3() -> None:
    """Silence PySpark's FutureWarning that it does not fully support
    pandas 3, here and in the Python workers: replay uses pandas only
    through Arrow batches of plain columns, which the tests hold exact."""
    message = "PySpark does not yet fully support pandas"
    warnings.filterwarnings("ignore", message=message, category=FutureWarning)
    quiet = f"ignore:{message}:FutureWarning"
    current = os.environ.get("PYTHONWARNINGS", "")
    if quiet not in current:
        os.environ["PYTHONWARNINGS"] = f"{current},{quiet}" if current else quiet


def _start_jvm(master: str, settings: dict[str, str]) -> None:
    """Start Spark's JVM (unless it runs) with its stderr through a filter
    that drops the one line no setting silences (Spark 4 loads the JDK's
    incubating vector module, and the JVM says so on every start)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or SparkContext._active_spark_context is not None:
        return
    conf = SparkConf().setMaster(master).setAppName("etalis replay").setAll(list(settings.items()))
    gateway = cast(Any, launch_gateway)(conf, popen_kwargs={"stderr": subprocess.PIPE})
    proc = getattr(gateway, "proc", None)
    if proc is not None and proc.stderr is not None:
        threading.Thread(target=_forward_stderr, args=(proc.stderr,), daemon=True).start()
    SparkContext(conf=conf, gateway=gateway)


def _forward_stderr(stream: IO[bytes]) -> None:
    for line in iter(stream.readline, b""):
        if not line.startswith(b"WARNING: Using incubator modules"):
            os.write(2, line)


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
        # NaN and Infinity are no JSON: such a line is rejected, as by etalis run
        return spark.read.option("allowNonNumericNumbers", False).json(path)
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
        with first.open("rb") as f:
            lines = Lines(line_chunks(f), keepends=True)
            reader = csv.reader(lines)
            row = next(reader, None)
        bad = [lines.bad[n] for n in range(1, reader.line_num + 1) if n in lines.bad]
        if bad:
            raise ValueError(f"the header of {first}: {bad[0]}")
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
    first: bool
    originals: Optional[pa.Schema] = None           # stage 1: the input's columns, for rejected rows
    knowledge: tuple[tuple[str, str], ...] = ()     # ontology files: (name, text)
    entailment: Optional[str] = None
    failure: Optional[InjectedFailure] = None
    trusted: bool = False                           # the rules may run any Prolog (no sandbox)
    explain: bool = False                           # detections (and passed on events) carry provenance

    def engine_key(self) -> tuple[Any, ...]:
        return (self.rules_text, self.source, self.only_rules, self.report, self.policy, self.max_age,
                self.knowledge, self.entailment, self.trusted, self.explain)


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
                                explain=spec.explain)
    if spec.knowledge or spec.entailment:
        _load_knowledge(engine, spec.knowledge, spec.entailment)
    while len(_ENGINES) >= MAX_ENGINES:     # a long-lived worker that ran many replays: free the oldest
        _ENGINES.pop(next(iter(_ENGINES))).close()
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


def _number_text(x: Any) -> str:
    return str(x) if isinstance(x, int) else repr(float(x))


def _passed_on(term: str, d: dict[str, Any]) -> str:
    """The input line of a later stage for a derived event (``term`` its
    Prolog text, ``d`` its transfer detection): with ``--explain`` it
    carries the input events it was built from, so that the later
    stage's detections name those, as one engine's would."""
    when = f"[{_number_text(d['start'])}, {_number_text(d['end'])}]"
    if "provenance" not in d:
        return f"event({term}, {when}).\n"
    prov = ", ".join(f"det({event_term(p['event'], p['args'])}, {_number_text(p['start'])}, "
                     f"{_number_text(p['end'])})" for p in d["provenance"])
    return f"event({term}, {when}, [{prov}]).\n"


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
        engine, compiled = _engine_for(spec)
        out = _StageOutput()
        stats: dict[str, Any] = {"fed": 0, "accepted": 0, "warnings": 0, "rejected": 0, "unused": 0, "mapping_rejected": 0,
                 "tkind": 0, "masks": [], "kmask": 0, "compiled": compiled, "sample": []}
        masks: list[int] = stats["masks"]
        sample: list[str] = stats["sample"]
        current: Any = object()                 # the key being fed (no key yet)
        originals: list[pa.Field] = list(spec.originals) if spec.originals is not None else []

        def feed(lines: list[str], ts: list[float], rows: pa.Array, paths: pa.Array,
                 segments: list[tuple[int, int, bool, Any]]) -> None:
            """Feed segments (a, b, reset, key) of events a..b-1, each of one
            key and distinct times, so that each detection is attributed to
            the event that completed it (the one at its end time)."""
            # each line less its full stop and newline: a batch list, read at once
            results = engine.feed_segments([batch_list([line[:-2] for line in lines[a:b]])
                                            for a, b, _, _ in segments],
                                           [reset for _, _, reset, _ in segments],
                                           [b - a for a, b, _, _ in segments])
            for (a, b, _, key_text), result in zip(segments, results):
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

        def emit(extra: Optional[pa.RecordBatch] = None) -> Iterator[pa.RecordBatch]:
            if len(out):
                arrays = out.arrays()
                n = len(arrays[0])
                yield pa.RecordBatch.from_arrays(arrays + [pa.nulls(n, f.type) for f in originals],
                                                 names=_StageOutput.NAMES + [f.name for f in originals])
            if extra is not None and extra.num_rows:
                yield extra

        for number, batch in enumerate(batches):
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
                lines = batch.column(S_LINE).to_pylist()
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
                        current, a, reset = k, i, True
                    elif i > a and (ts[i] == ts[i - 1] or i - a >= FEED_LINES):
                        segments.append((a, i, reset, current))
                        a, reset = i, False
                segments.append((a, n, reset, current))
                feed(lines, ts, rows, paths, segments)
            yield from emit(passed)
            if number == 0:
                _maybe_fail(spec.failure, spec.number)
        out.add("s", line=json.dumps(stats))
        yield from emit()

    return run


# -- typed detections (Python workers) ---------------------------------------------


@dataclass(frozen=True)
class TableSpec:
    """The columns of the detections table."""

    key: Optional[str]                  # Spark type of the key column, None: no key column
    args: Optional[tuple[str, ...]]     # Spark types of arg1..argN, None: one JSON `args` column
    timestamps: bool                    # start and end as timestamps (else seconds)
    key_json: bool = False              # keys of several types: the key column holds JSON text
    provenance: bool = False            # a provenance column of JSON (replay with explain)

    def ddl(self) -> str:
        cols = [f"key {self.key}"] if self.key else []
        cols.append("event string")
        if self.args is None:
            cols.append("args string")
        else:
            cols += [f"arg{i} {t}" for i, t in enumerate(self.args, start=1)]
        kind = "timestamp" if self.timestamps else "double"
        cols += [f"start {kind}", f"end {kind}"]
        if self.provenance:
            cols.append("provenance string")
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
            if spec.provenance:
                arrays.append(pa.array([json.dumps(d.get("provenance", [])) for d in ds], pa.string()))
                names.append("provenance")
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
    columns, ``row`` (a number that orders the rows as the input does:
    Spark's ``monotonically_increasing_id``, the row's index within the
    first split of the input, larger numbers for later splits) and
    ``reason``.
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
    lines: "DataFrame" = field(repr=False)            # the detections' JSON lines, ordered
    _cached: tuple["DataFrame", ...] = field(default=(), repr=False)
    explain: bool = False                             # the detections carry their provenance

    def detection_lines(self) -> Iterator[str]:
        """The detections as JSON lines, exactly as ``etalis run`` prints
        them, in its order."""
        for r in self.lines.toLocalIterator():
            yield str(r[0])

    def summary(self) -> str:
        """Rows, events, rejected, detections and time per stage."""
        out = [f"rows: {self.rows}, events: {self.events}, rejected: {self.rejected_rows}, "
               f"detections: {self.detection_count}, warnings: {self.warnings}, seconds: {self.seconds:.3f}"]
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
            "plan": self.plan.explain(self.printed),
            "stages": [{"stage": s.number, "partitioning": s.partitioning, "rules": list(s.rules),
                        "events_in": s.events_in, "detections": s.detections, "passed_on": s.passed_on,
                        "warnings": s.warnings, "seconds": s.seconds, "tasks": s.tasks,
                        "compiled": s.compiled} for s in self.stages],
        }

    def write(self, out: str | os.PathLike[str], format: str = "parquet", overwrite: bool = False,
              style: TimeStyle = TimeStyle(), single_file: bool = False) -> None:
        """Write ``detections`` and ``rejected`` (and ``summary.json``) into
        the directory ``out``, atomically: into a staging directory beside
        it, renamed into place once everything is written.

        ``format`` jsonl writes ``detections.jsonl`` exactly as ``etalis
        run`` prints and ``rejected.jsonl``; csv writes ``detections.csv``
        exactly as ``etalis run --format csv`` does and ``rejected.csv``
        (RFC 4180, from the driver); parquet and json have Spark write
        ``detections/`` and ``rejected/``, or with ``single_file`` the
        single files ``detections.parquet`` and ``rejected.parquet``
        (``.json``).  ``style`` is how times are written (seconds, ISO
        8601 or a strftime format; for parquet and json, dates make
        seconds timestamps).
        """
        if format not in FORMATS:
            raise ValueError(f"unknown output format {format!r}: use one of {', '.join(FORMATS)}")
        target = _OutputDir(self.detections.sparkSession, str(out))
        if target.exists() and not overwrite:
            raise FileExistsError(f"{out} exists: remove it, or give overwrite=True (--overwrite)")
        staging = target.staging()
        try:
            if format in ("jsonl", "csv"):
                staging.write_lines(f"detections.{format}", formatted(
                    format, self.detection_lines(), style, max_arity(self.printed), provenance=self.explain))
                if format == "jsonl":
                    from pyspark.sql import functions as F

                    staging.write_lines("rejected.jsonl", (
                        str(r[0]) + "\n" for r in self.rejected.select(F.to_json(F.struct("*"))).toLocalIterator()))
                else:
                    staging.write_lines("rejected.csv", csv_table(self.rejected.columns,
                                                                  self.rejected.toLocalIterator()))
            else:
                detections = self.detections
                if style.dates:
                    from pyspark.sql import functions as F

                    for end in ("start", "end"):
                        if dict(detections.dtypes)[end] == "double":
                            detections = detections.withColumn(end, F.timestamp_seconds(F.col(end)))
                for name, table in (("detections", detections), ("rejected", self.rejected)):
                    if single_file:
                        staging.write_single(table, format, name)
                    else:
                        table.write.format(format).save(staging.child(name))
            staging.write_lines("summary.json", [json.dumps(self.summary_dict(), indent=1) + "\n"])
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
    time_zone: Optional[str] = None,
    columns: Optional[Sequence[str]] = None,
    graph_col: Optional[str] = None,
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
    trusted: bool = False,
    explain: bool = False,
) -> ReplayResult:
    """Replay ``data`` through ``rules`` on Spark.

    ``data`` is a DataFrame or the path of a CSV, Parquet or JSON-lines
    table; ``rules`` the path of an ``.etl`` file or rule text.  Rows map to
    events as in ``etalis run``: ``event`` names every row's event (or
    ``event_col`` gives the column that does), ``args`` are the argument
    columns, ``time`` the time column (seconds, or dates in
    ``time_format`` or ISO 8601; a date without a zone is in ``time_zone``,
    an IANA name, default UTC), ``columns`` names a headerless CSV's
    columns; ``graph_col`` instead of ``event``/``args`` makes each row the
    graph event ``graph(G)`` with G the RDF graph (N-Triples or JSON-LD)
    in that column.  ``partition_by`` is the key column: rules whose events all
    carry the key run partitioned by it (see :func:`replay_plan`).  ``policy``,
    ``max_age``, ``ontology`` (files of background knowledge, read here
    and shipped to the workers) and ``entailment`` are those of ``etalis
    run``.  ``partitions`` is the
    number of partitions of keyed stages (default: 4 per core).  The rules
    are sandboxed, on the driver and in every worker, unless ``trusted``.
    ``explain`` gives each detection its provenance (the input events it
    was built from, across stages), as ``etalis run --explain`` does: in
    its detection lines, and as a ``provenance`` column of JSON.

    Raises :class:`~etalis_py.errors.RuleError` for a rule file with
    errors and ValueError for a mapping that does not fit the data.
    """
    started = perf_counter()
    text, source = _rule_text(rules)
    if graph_col is not None:
        if event is not None or event_col is not None or args:
            raise ValueError("graph_col makes each row the event graph(G) by itself: give no event, event_col or args")
        mapping = Mapping.graph_rows(graph_col, time, time_format, tuple(columns) if columns else None, time_zone)
    else:
        mapping = Mapping(event=event, event_col=event_col, args=tuple(args), time=time,
                          time_format=time_format, columns=tuple(columns) if columns else None,
                          time_zone=time_zone)
    mapping.check()
    if policy is not None:
        check_policy(policy)
    knowledge = tuple((Path(o).name, Path(o).read_text(encoding="utf-8")) for o in ontology)
    checked = Engine.from_string(text, policy=policy, source=source, max_age=max_age, trusted=trusted)
    try:
        if knowledge or entailment:
            _load_knowledge(checked, knowledge, entailment)
        printed = tuple(checked.printed)
    finally:
        checked.close()
    the_plan = replay_plan(text, source, mapping, partition_by)

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
        # rows to events: a Python pass that Spark runs in the same tasks
        # as the scan, before stage 1's shuffle
        original = tuple(df.columns)
        numbered = df.withColumn(ROW, F.monotonically_increasing_id())
        first = the_plan.stages[0] if the_plan.stages else None
        first_keys = tuple((str(s), -1 if first.key is None else first.key_position(s))
                           for s in first.consumes if the_plan.input.is_input(s)) if first is not None else ()
        later = tuple(sorted({p for st in the_plan.stages[1:] if st.key is not None
                              for s, p in st.key if the_plan.input.is_input(s)}))
        raw_later = any(the_plan.input.is_input(s) for st in the_plan.stages[1:] for s in st.consumes)
        raw_slot = {p: i for i, p in enumerate(later)}
        json_lines = isinstance(data, (str, os.PathLike)) and (
            input_format or _format_of(os.fspath(data))).lower() in ("json", "jsonl")
        mspec = MapSpec(mapping, original, len(original) - (1 if CORRUPT in original else 0), CORRUPT in original,
                        first_keys, raw_later, later, json_lines)
        mapped = numbered.mapInArrow(_map_with_failure(_map_rows(mspec), inject_failure),
                                     _mapped_schema(numbered, raw_later))
        if raw_later or not the_plan.stages:
            mapped = mapped.persist(StorageLevel.MEMORY_AND_DISK)    # read by more than one stage
            cached.append(mapped)

        transfer_sigs = sorted({s for st in the_plan.stages for s in st.exports})
        stage_text = text + "\n" + _transfer_rules(transfer_sigs)
        n_rules = len(the_plan.rules)
        transfer_index = {s: n_rules + i for i, s in enumerate(transfer_sigs, start=1)}
        outputs: list["DataFrame"] = []
        reports: list[StageReport] = []
        totals = {"warnings": 0, "rejected": 0, "unused": 0, "mapping_rejected": 0, "tkind": 0, "kmask": 0,
                  "fed_first": 0}
        sample: list[str] = []
        masks: list[int] = []
        for st in the_plan.stages:
            t1 = perf_counter()
            what = the_plan._partitioning(st)
            reporter.label(f"stage {st.number}/{len(the_plan.stages)}, "
                           + ("global" if st.key is None else what.replace("partitioned ", "")))
            spec = StageSpec(
                st.number, stage_text, source,
                tuple(sorted(st.rules)) + tuple(transfer_index[s] for s in st.exports),
                tuple(sorted({p for p in printed if Sig.parse(p) in st.produces}))
                + ((f"{TRANSFER}/4",) if st.exports else ()),
                policy, max_age, st.by_input_key, st.number == 1,
                _arrow_schema(spark, numbered, original) if st.number == 1 else None,
                knowledge, entailment, inject_failure, trusted, explain)
            stage_in = _stage_input(the_plan, st, mapped, outputs, raw_slot)
            if st.key is None:
                arranged = stage_in.repartition(1).sortWithinPartitions(S_T, S_ROW, S_PATH)
            else:
                arranged = stage_in.repartition(n_parts, S_KEY).sortWithinPartitions(S_KEY, S_T, S_ROW, S_PATH)
            schema = _stage_schema(numbered if st.number == 1 else None, original)
            out = arranged.mapInArrow(_run_stage(spec), schema).persist(StorageLevel.MEMORY_AND_DISK)
            cached.append(out)
            summary = {r[0]: (int(r[1]), list(r[2])) for r in
                       out.groupBy(S_KIND).agg(F.count(F.lit(1)),
                                               F.collect_list(F.when(F.col(S_KIND) == "s", F.col(S_LINE))))
                       .collect()}
            fed = warnings = compiled = 0
            for stats in summary.get("s", (0, []))[1]:
                info = json.loads(stats)
                fed += info["fed"]
                compiled += int(info["compiled"])
                warnings += info["warnings"]
                sample += info["sample"][: max(0, 5 - len(sample))]
                for name in ("rejected", "unused", "mapping_rejected"):
                    totals[name] += info[name]
                for name in ("tkind", "kmask"):
                    totals[name] |= info[name]
                for p, m in enumerate(info["masks"]):
                    if p == len(masks):
                        masks.append(0)
                    masks[p] |= m
            if st.number == 1:
                totals["fed_first"] = fed
            totals["warnings"] += warnings
            outputs.append(out)
            reports.append(StageReport(
                st.number, what, tuple(the_plan.rule(r).name for r in st.rules), fed,
                summary.get("d", (0, []))[0], summary.get("x", (0, []))[0], warnings, perf_counter() - t1,
                summary.get("s", (0, []))[0], compiled))

        reporter.label("collecting results")
        row_name = _free_name("row", original)
        reason_name = _free_name("reason", original)
        if the_plan.stages:
            rows = totals["fed_first"] + totals["unused"] + totals["mapping_rejected"]
            rejected = (outputs[0].filter(F.col(S_KIND) == "m")
                        .select(*[F.col(f"`{c}`") for c in original], F.col(S_ROW).alias(row_name),
                                F.col(S_LINE).alias(reason_name)))
        else:   # no event rules: nothing runs, but every row is still read and accounted for
            counts: dict[str, int] = {str(r[0]): int(r[1]) for r in mapped.groupBy(KIND).count().collect()}
            rows = sum(counts.values())
            totals["mapping_rejected"] = int(counts.get("r", 0))
            rejected = (mapped.filter(F.col(KIND) == "r")
                        .select(*[F.col(f"`{c}`") for c in original], F.col(ROW).alias(row_name),
                                F.col(REASON).alias(reason_name)))
        engine_rejected = 0
        if totals["rejected"]:     # the engine refused a line that the mapping made: keep the row all the same
            refused = None
            for out in outputs:
                r = out.filter(F.col(S_KIND) == "r").select(F.col(S_ROW).alias(ROW), F.col(S_LINE).alias(REASON))
                refused = r if refused is None else refused.unionByName(r)
            assert refused is not None
            first_reason = refused.groupBy(ROW).agg(F.min(REASON).alias(REASON))
            engine_rejected = first_reason.count()
            extra = (numbered.join(first_reason, on=ROW)
                     .select(*[F.col(f"`{c}`") for c in original], F.col(ROW).alias(row_name),
                             F.col(REASON).alias(reason_name)))
            rejected = rejected.unionByName(extra)
        rejected_rows = totals["mapping_rejected"] + engine_rejected
        events = rows - rejected_rows

        detected = None
        for out in outputs:
            d = out.filter(F.col(S_KIND) == "d").select(S_LINE, S_KEY, S_ROW, S_PATH)
            detected = d if detected is None else detected.unionByName(d)
        if detected is None:
            detected = spark.createDataFrame([], f"{S_LINE} string, {S_KEY} string, {S_ROW} long, {S_PATH} string")
        ordered = detected.orderBy(S_ROW, S_PATH)
        table = _table_spec(masks, totals["kmask"] if the_plan.input.key is not None else None,
                            totals["tkind"] == TK_DATE, explain)
        detections = (ordered.select(F.col(S_LINE).alias("line"), F.col(S_KEY).alias("key"))
                      .mapInArrow(_typed(table), table.ddl()))
        detection_count = sum(r.detections for r in reports)
        return ReplayResult(detections, rejected.orderBy(row_name), rows, events, rejected_rows, detection_count,
                            totals["warnings"], tuple(sample), tuple(reports), the_plan, printed,
                            perf_counter() - started, ordered.select(S_LINE), tuple(cached), explain)
    except BaseException:
        for c in cached:
            c.unpersist()
        raise
    finally:
        reporter.stop()


def replay_plan(rules_text: str, source: str, mapping: Mapping, partition_by: Optional[str]) -> Plan:
    """The stages a replay with this mapping runs (``etalis replay --plan``)."""
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


_MAPPED_EXTRA = (ROW, KIND, KEY1, LINE, TIME, REASON, TKIND, SIG, KEYS)


def _mapped_schema(numbered: "DataFrame", with_later: bool) -> Any:
    from pyspark.sql.types import ArrayType, DoubleType, IntegerType, StringType, StructField, StructType

    return StructType(list(numbered.schema.fields) + [
        StructField(KIND, StringType()), StructField(KEY1, StringType()), StructField(LINE, StringType()),
        StructField(TIME, DoubleType()), StructField(REASON, StringType()), StructField(TKIND, IntegerType())]
        + ([StructField(SIG, StringType()), StructField(KEYS, ArrayType(StringType()))] if with_later else []))


def _arrow_schema(spark: "SparkSession", numbered: "DataFrame", original: Sequence[str]) -> pa.Schema:
    """The Arrow types that Spark gives the input's columns in Python."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    fields = [f for f in numbered.schema.fields if f.name in original]
    return to_arrow_schema(StructType(fields), timezone=spark.conf.get("spark.sql.session.timeZone"))


def _free_name(name: str, taken: Sequence[str]) -> str:
    """``name``, or with underscores in front if the input has such a column."""
    while name in taken:
        name = "_" + name
    return name


def _stage_schema(numbered: Optional["DataFrame"], original: Sequence[str]) -> Any:
    """A stage's output table; stage 1's carries the input's columns too
    (for the rows it passes through as rejected)."""
    from pyspark.sql.types import StructType

    fields = list(StructType.fromDDL(STAGE_SCHEMA).fields)      # type: ignore[attr-defined]
    if numbered is not None:
        fields += [f for f in numbered.schema.fields if f.name in original]
    return StructType(fields)


def _stage_input(the_plan: Plan, st: Stage, mapped: "DataFrame", outputs: list["DataFrame"],
                 raw_slot: dict[int, int]) -> "DataFrame":
    """The events a stage consumes, with their key (k), time (t), row,
    derivation path and line: from the input (the keys of input events are
    at ``raw_slot[position]`` of their key texts) and from earlier stages.
    Stage 1 gets every input row (``kind``: e to feed, u unused, r
    rejected, with the row's own columns)."""
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
        return F.lit("") if expr is None else expr.otherwise(F.lit(""))

    raw = [str(s) for s in st.consumes if the_plan.input.is_input(s)]
    common = [F.col(TIME).alias(S_T), F.col(ROW).alias(S_ROW), F.lit("").alias(S_PATH), F.col(LINE).alias(S_LINE)]
    parts: list["DataFrame"] = []
    if st.number == 1:
        originals = [F.col(f"`{f.name}`") for f in mapped.schema.fields if f.name not in _MAPPED_EXTRA]
        return mapped.select(F.col(KEY1).alias(S_KEY), *common, F.col(KIND).alias(S_KIND),
                             F.col(REASON).alias(S_REASON), F.col(TKIND).alias(S_TKIND), *originals)
    if raw:
        ev = mapped.filter((F.col(KIND) != "r") & F.col(SIG).isin(raw))
        parts.append(ev.select(key_of(F.col(KEYS), F.col(SIG), True).alias(S_KEY), *common))
    derived = [str(s) for s in st.consumes]
    for out in outputs:
        x = out.filter((F.col(S_KIND) == "x") & F.col(S_SIG).isin(derived))
        parts.append(x.select(key_of(F.col(S_KEYS), F.col(S_SIG), False).alias(S_KEY), S_T, S_ROW, S_PATH, S_LINE))
    result = parts[0]
    for p in parts[1:]:
        result = result.unionByName(p)
    return result


def _table_spec(masks: list[int], kmask: Optional[int], timestamps: bool, provenance: bool = False) -> TableSpec:
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
    return TableSpec(key, args, timestamps, key_json, provenance)


# -- output ------------------------------------------------------------------------------


class _OutputDir:
    """An output directory: a local path, or a URI of a Hadoop file system
    (hdfs://, s3a://, file://), handled through Spark's JVM."""

    def __init__(self, spark: "SparkSession", path: str) -> None:
        self.spark = spark
        self.path = path.rstrip("/") or path
        self.local = "://" not in path

    def _fs(self, path: str) -> tuple[Any, Any]:
        jvm = self.spark.sparkContext._jvm
        assert jvm is not None
        p = jvm.org.apache.hadoop.fs.Path(path)
        return p.getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration()), p

    def _local_path(self) -> Path:
        return Path(self.path)

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

    def write_lines(self, name: str, lines: Iterable[str]) -> None:
        """Write the file ``name`` (driver side)."""
        if self.target.local:
            with open(Path(self.where) / name, "w", encoding="utf-8") as f:
                f.writelines(lines)
            return
        fs, p = self.target._fs(self.child(name))
        stream = fs.create(p, True)
        try:
            chunk: list[str] = []
            size = 0
            for line in lines:
                chunk.append(line)
                size += len(line)
                if size >= 1 << 20:
                    stream.write(bytearray("".join(chunk).encode("utf-8")))
                    chunk, size = [], 0
            if chunk:
                stream.write(bytearray("".join(chunk).encode("utf-8")))
        finally:
            stream.close()

    def write_single(self, table: "DataFrame", format: str, name: str) -> None:
        """``table`` as the one file ``name.format``: written by one task
        (keeping its order), then its part file renamed."""
        parts = self.child(f".{name}.parts")
        table.coalesce(1).write.format(format).save(parts)
        single = self.child(f"{name}.{format}")
        if self.target.local:
            (part,) = Path(parts).glob("part-*")
            os.rename(part, single)
            shutil.rmtree(parts)
            return
        fs, p = self.target._fs(parts)
        (status,) = fs.globStatus(self.target._fs(f"{parts}/part-*")[1])
        _, dest = self.target._fs(single)
        if not fs.rename(status.getPath(), dest):
            raise OSError(f"cannot rename {status.getPath()} to {single}")
        fs.delete(p, True)

    def remove(self) -> None:
        if self.target.local:
            shutil.rmtree(self.where, ignore_errors=True)
        else:
            fs, p = self.target._fs(self.where)
            fs.delete(p, True)


# -- progress --------------------------------------------------------------------------


class _Progress:
    """The progress line of a replay (:class:`~etalis_py.progress.ProgressLine`),
    from Spark's status tracker, polled by a thread."""

    def __init__(self, spark: "SparkSession", enabled: bool, out: IO[str] = sys.stderr) -> None:
        self.spark = spark
        self.text = ""
        self.line = ProgressLine(out, enabled)
        self.done = threading.Event()
        self.thread: Optional[threading.Thread] = None
        if enabled:
            self.thread = threading.Thread(target=self._loop, daemon=True)
            self.thread.start()

    def label(self, text: str) -> None:
        self.text = text

    def _loop(self) -> None:
        while not self.done.wait(0.5):
            self.line.show(self._status)

    def _status(self, elapsed: float) -> str:
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
            bar = f"[{'#' * filled}{'.' * (20 - filled)}] {done}/{total} tasks, "
        return f"etalis replay {elapsed:.0f} s: {bar}{self.text}"

    def stop(self) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join()
        self.line.clear()
