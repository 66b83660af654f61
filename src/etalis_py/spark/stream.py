"""Live detection on Spark Structured Streaming (``detect_stream``, ``etalis stream``).

A stream runs replay's plan (:mod:`~etalis_py.spark.planning`) stage after
stage in one streaming query: each stage is a
``groupBy(key).transformWithStateInPandas`` whose processor
(:class:`~etalis_py.spark.live.LiveProcessor`) keeps every key's engine
state in Spark's state store (RocksDB) as a snapshot, and feeds the rows
of each micro-batch to the worker's engine of the stage in the order
replay feeds them.  The last stage's rows go to a file sink, which with a
checkpoint writes each micro-batch exactly once.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union, Unpack
from urllib.parse import unquote, urlparse

import pyarrow.parquet as pq
import pyspark
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery
from pyspark.sql.types import NumericType, StringType, StructField, StructType, TimestampNTZType, TimestampType

from ..bridge.engine import check_policy
from ..errors import RuleError
from ..inputs.mapping import Mapping, MappingOptions, missing_column
from ..inputs.registry import InputFormat, by_name
from ..rules.analysis import RuleInfo
from .driver import CheckedRules, _arrow_schema, _coarse_key, _rule_text, checked_rules, stage_specs
from .live import (
    BUCKETS, FILE, GKEY, GROUP, PACKED_DDL, PASS, PASS_GROUPS, ROWS_DDL, LiveProcessor, LiveStage, packed_groups,
)
from .mapping import MapSpec
from .names import CORRUPT, DEFAULT_MASTER, EVENT_LINE
from .planning import Plan, refuse_strict, refuse_timers, refuse_unbound_transfers, replay_plan
from .reading import format_of, read_input
from .session import session


ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
STATE_PROVIDER = "spark.sql.streaming.stateStore.providerClass"
WATERMARK = "__etalis_watermark"   # the rows' event time, for the watermark only
OUTPUT_FORMATS = ("parquet", "jsonl", "csv", "json")
KAFKA_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.13"

# what the sink holds: the rows of the last stage, each with the part of the
# output it belongs to (the sink's partition column)
_OUTPUT = {"d": "detections", "m": "rejected", "r": "rejected", "s": "counts"}


@dataclass(frozen=True)
class LiveDetection:
    """The streaming DataFrames of :func:`detect_stream` and the plan they run.

    ``output`` has one row per detection, rejected row and stage count of a
    micro-batch, told apart by its ``output`` column (detections, rejected,
    counts); ``detections`` and ``rejected`` are its parts with replay's
    columns (``key``, ``event``, ``args`` as a JSON array, ``start``,
    ``end``; a rejected row's original columns as JSON in ``record``,
    ``reason``).
    """

    output: "DataFrame"
    plan: Plan
    printed: tuple[str, ...]

    @property
    def detections(self) -> "DataFrame":
        return self.output.filter(F.col("output") == "detections").select("key", "event", "args", "start", "end",
                                                                          "line")

    @property
    def rejected(self) -> "DataFrame":
        return self.output.filter(F.col("output") == "rejected").select("record", "reason", "stage")

    def start(self, out: Union[str, "os.PathLike[str]"], checkpoint: Union[str, "os.PathLike[str]"],
              format: str = "parquet", available_now: bool = False,
              trigger_seconds: Optional[float] = None) -> "StreamingQuery":
        """Write the output into ``out`` (``detections/``, ``rejected/``,
        ``counts/`` under ``output=...`` partitions), keeping the query's
        progress and the engines' state in ``checkpoint``; a query started
        again on the same checkpoint goes on where the last one stopped,
        and each micro-batch is written exactly once.  ``format`` jsonl
        writes the lines of ``etalis run`` (a detection's JSON line; a
        rejected row's columns with its reason); parquet, csv and json
        write the columns.  ``available_now`` processes the files there
        are and stops; ``trigger_seconds`` starts a micro-batch at most
        that often."""
        if format not in OUTPUT_FORMATS:
            raise ValueError(f"unknown output format {format!r}: use one of {', '.join(OUTPUT_FORMATS)}")
        table = self.output
        if format == "jsonl":
            table = table.select(F.col("line").alias("value"), "output")
            format = "text"
        writer = (table.writeStream.format(format).partitionBy("output").outputMode("append")
                  .option("checkpointLocation", os.fspath(checkpoint)).option("path", os.fspath(out)))
        if available_now:
            writer = writer.trigger(availableNow=True)
        elif trigger_seconds is not None:
            writer = writer.trigger(processingTime=f"{trigger_seconds} seconds")
        return writer.start()


def read_stream(spark: "SparkSession", source: str, mapping: Mapping, input_format: Optional[str] = None,
                max_files: Optional[int] = None) -> "DataFrame":
    """The rows of ``source`` as a streaming DataFrame: a directory whose
    new files are read as they land (CSV, JSON lines or Parquet, as
    replay reads a file), ``socket://HOST:PORT`` (a CSV row a line, with
    ``columns``), or ``kafka://SERVERS/TOPIC`` (a CSV row a message, with
    Spark's Kafka connector on the class path)."""
    if source.startswith(("socket://", "kafka://")):
        if not mapping.columns:
            raise ValueError(f"{source.split(':')[0]} rows are CSV lines without a header: name their columns "
                             "with --columns")
        schema = StructType([StructField(c, StringType()) for c in mapping.columns])
        if source.startswith("socket://"):
            host, _, port = source[len("socket://"):].rstrip("/").rpartition(":")
            if not host or not port.isdigit():
                raise ValueError(f"{source}: give socket://HOST:PORT")
            lines = spark.readStream.format("socket").option("host", host).option("port", int(port)).load()
            value = F.col("value")
        else:
            servers, _, topic = source[len("kafka://"):].partition("/")
            if not servers or not topic:
                raise ValueError(f"{source}: give kafka://HOST:PORT[,HOST:PORT...]/TOPIC")
            lines = _kafka(spark, servers, topic)
            value = F.col("value").cast("string")
        parsed = F.from_csv(value, schema.simpleString(), {"escape": '"', "mode": "PERMISSIVE"})
        return lines.select(parsed.alias("r")).select("r.*")
    path = source[len("file://"):] if source.startswith("file://") else source
    fmt = by_name(input_format) if input_format else _dir_format(path)
    # the schema of a stream is fixed at its start: that of the files there
    # are (every column as text for CSV, as replay reads it)
    table = read_input(spark, path, mapping, fmt.name)
    reader = spark.readStream.schema(table.schema)
    if max_files is not None:
        reader = reader.option("maxFilesPerTrigger", max_files)
    if fmt.spark == "csv":
        return (reader.option("header", mapping.columns is None).option("escape", '"').option("mode", "PERMISSIVE")
                .option("columnNameOfCorruptRecord", CORRUPT).csv(path))
    if fmt.spark == "parquet":
        return reader.parquet(path)
    if fmt.spark == "text":
        return reader.text(path)
    return reader.option("allowNonNumericNumbers", False).option("columnNameOfCorruptRecord", CORRUPT).json(path)


def source_format(source: str, input_format: Optional[str] = None) -> Optional[InputFormat]:
    """The input format of a stream's source: ``input_format``, or that of
    the files in the directory; None for a socket or Kafka (CSV lines)."""
    if source.startswith(("socket://", "kafka://")):
        return None
    if input_format:
        return by_name(input_format)
    return _dir_format(source[len("file://"):] if source.startswith("file://") else source)


def _dir_format(path: str) -> InputFormat:
    p = Path(path)
    if not p.is_dir():
        raise ValueError(f"{path} is no directory: a stream reads the files that land in a directory")
    if not any(f.is_file() and not f.name.startswith((".", "_")) for f in p.iterdir()):
        raise ValueError(f"{path} is empty: give --input-format (and for CSV --columns or a first file with "
                         "its header), the stream's schema is taken from the files there")
    return format_of(path)


def _kafka(spark: "SparkSession", servers: str, topic: str) -> "DataFrame":
    """The records of a Kafka topic, or one line on a missing connector."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        jvm.java.lang.Class.forName("org.apache.spark.sql.kafka010.KafkaSourceProvider")
    except Exception:
        raise ValueError(f"the Kafka source needs Spark's Kafka connector, which is not on the class path: give "
                         f"--conf spark.jars.packages={KAFKA_PACKAGE}:{pyspark.__version__}") from None
    return (spark.readStream.format("kafka").option("kafka.bootstrap.servers", servers)
            .option("subscribe", topic).option("startingOffsets", "earliest").load())


def live_plan(rules: Union[str, Sequence[RuleInfo]], source: str, mapping: Mapping, partition_by: Optional[str],
              policy: Optional[str] = None, event_lines: bool = False) -> Plan:
    """The stages of a stream: replay's plan, with what a stream cannot run
    refused at its rule (timers without a watermark, unbound arguments
    passed on, `strict` where replay refuses it, input events that a later
    stage consumes); with ``event_lines``, its input is event lines."""
    the_plan = replay_plan(rules, source, mapping, partition_by, event_lines)
    if mapping.time is None or mapping.time_format is not None:
        # the watermark fires the timers of idle keys (see _event_time)
        refuse_timers(the_plan, source)
    refuse_unbound_transfers(the_plan, source)
    refuse_strict(the_plan, source, policy)
    for st in the_plan.stages[1:]:
        for r in st.rules:
            rule = the_plan.rule(r)
            raw = sorted({str(u.sig) for u in rule.events if the_plan.input.is_input(u.sig)})
            if raw:
                raise RuleError(f"{rule.name} runs in stage {st.number} of the plan and consumes the input event "
                                f"{raw[0]}: a stream passes only derived events from stage to stage",
                                file=source, line=rule.line, column=rule.column,
                                hint="derive an event from the input event in a rule of its own "
                                     f"(e.g. seen(...) <- {raw[0].split('/')[0]}(...)), and use it here; or run "
                                     "the rule file with etalis replay or etalis run")
    return the_plan


def detect_stream(
    data: "DataFrame",
    rules: Union[str, "os.PathLike[str]"],
    *,
    partition_by: Optional[str] = None,
    policy: Optional[str] = None,
    max_age: Optional[float] = None,
    lateness: Optional[float] = None,
    ontology: Sequence[Union[str, "os.PathLike[str]"]] = (),
    entailment: Optional[str] = None,
    trusted: bool = False,
    explain: bool = False,
    static: Sequence[Union[str, "os.PathLike[str]"]] = (),
    initial_state: Optional[Union[str, "os.PathLike[str]"]] = None,
    event_lines: bool = False,
    json_lines: bool = False,
    checked: Optional[CheckedRules] = None,
    **mapping_options: Unpack[MappingOptions],
) -> LiveDetection:
    """Run ``rules`` over the streaming DataFrame ``data`` (see
    :func:`read_stream`), its rows mapped to events as by
    :func:`~etalis_py.spark.replay` (the same keywords), stage after stage
    as replay plans them with ``partition_by``.  Each key's engine state
    lives in Spark's state store, so the session needs the RocksDB state
    store provider (``spark.sql.streaming.stateStore.providerClass``;
    :func:`~etalis_py.spark.stream_session` sets it).
    ``lateness`` (seconds) lets a key's rows come that much out of time
    order (later ones are rejected rows, with the reason).
    ``initial_state`` is a directory of ``replay --save-state``: the
    stream's first micro-batch starts from its keys' states (those of a
    replay of the same rules and options).  With ``event_lines``, the
    rows are event lines (``.events`` files, as :func:`read_stream` reads
    them: a text column ``value``), each ``event(Term, Time)`` line an
    event as ``etalis run`` reads it, all of one global key (no mapping
    options, no ``partition_by``); blank and comment lines are nothing.
    With ``json_lines`` too, those lines are JSON events (``{"event": ..,
    "args": [..], "time": t}``, as ``etalis run`` reads a ``.jsonl``
    file), and only blank lines are nothing.

    Raises :class:`~etalis_py.errors.RuleError` for a rule file with errors
    or rules a stream cannot run, ValueError for a mapping that does not
    fit the data.  ``checked`` is as for :func:`~etalis_py.spark.replay`."""
    spark = data.sparkSession
    provider = spark.conf.get(STATE_PROVIDER, "")
    if provider != ROCKSDB:
        raise ValueError(f"a stream keeps its engines' state with the RocksDB state store: set {STATE_PROVIDER}="
                         f"{ROCKSDB} (etalis_py.spark.stream_session() sets it)")
    text, source = _rule_text(rules)
    mapping = Mapping.of(**mapping_options)
    if event_lines:
        if partition_by is not None or mapping != Mapping():
            raise ValueError("event lines are events as they are: give no mapping options and no --partition-by")
        data = data.filter(~F.col(EVENT_LINE).rlike(r"^\s*$" if json_lines else r"^\s*(%.*)?$"))
    else:
        mapping.check()
    if policy is not None:
        check_policy(policy)
    checked = checked or checked_rules(rules, policy=policy, max_age=max_age, trusted=trusted, ontology=ontology,
                                       static=static, entailment=entailment, lateness=lateness)
    knowledge, statics, printed = checked.knowledge, checked.statics, checked.printed
    the_plan = live_plan(checked.rule_file.rules, source, mapping, partition_by, policy, event_lines)
    needed = [c for c in (mapping.event_col, mapping.time, *mapping.args) if c is not None]
    error = missing_column(needed + ([partition_by] if partition_by else []),
                           [c for c in data.columns if c != CORRUPT], "the data")
    if error is not None:
        raise error
    if not the_plan.stages:
        raise ValueError(f"{source} has no event rules: a stream has nothing to run")

    original = tuple(data.columns)
    numbered = data.withColumn(FILE, F.input_file_name())
    specs = stage_specs(the_plan, text, source, printed, _arrow_schema(spark, data, original), policy=policy,
                        max_age=max_age, knowledge=knowledge, entailment=entailment, trusted=trusted,
                        explain=explain, statics=statics, lateness=lateness)
    first = the_plan.stages[0]
    first_keys = tuple((str(s), -1 if first.key is None else first.key_position(s))
                       for s in first.consumes if the_plan.input.is_input(s))
    mspec = MapSpec(mapping, original, len(original) - (1 if CORRUPT in original else 0), CORRUPT in original,
                    first_keys, False, (), json_lines or "json" in _source_format(data), event_lines)
    clock = _event_time(data, mapping)
    # without a lateness or a timer an engine never waits for time to move on
    idle = clock is not None and (bool(lateness) or any(r.timer for r in the_plan.rules))
    table = numbered
    if idle and clock is not None:
        # The watermark (the latest event time less the lateness) moves idle
        # keys' time on.  Its column is dropped before the stages: a stage
        # whose input has it would drop the rows behind the watermark without
        # a trace, and the engines reject late rows with their reason.
        delay = f"{int(round((lateness or 0) * 1000))} milliseconds"
        table = table.withColumn(WATERMARK, clock).withWatermark(WATERMARK, delay).drop(WATERMARK)
    for st in the_plan.stages:
        later = {str(s) for other in the_plan.stages if other.number > st.number for s in other.consumes}
        stage = LiveStage(specs[st.number - 1], mspec if st.number == 1 else None, tuple(sorted(later)), idle)
        if st.number == 1:
            group = F.lit("") if st.key is None else _bucket(_coarse_key(data, partition_by or ""))
        else:
            table = table.withColumn(GKEY, _later_key(st))
            group = _later_group(st)
        initial = None
        if initial_state is not None:
            initial = _initial(spark.read.parquet(os.fspath(initial_state)), st.number, st.key is None, data,
                               partition_by)
        table = table.withColumn(GROUP, group)
        if st.number == 1:
            table = table.mapInArrow(packed_groups, PACKED_DDL)
        table = (table.groupBy(GROUP)
                 .transformWithStateInPandas(LiveProcessor(stage), ROWS_DDL, "Append",
                                             "EventTime" if idle else "None", initial))
    kind = F.col("kind")
    output = F.when(kind == "d", "detections").when(kind.isin("m", "r"), "rejected").when(kind == "s", "counts")
    result = (table.filter(kind != "x")
              .select(output.alias("output"), "key", "event", "args", "start", "end",
                      F.when(kind.isin("m", "r"), F.col("line")).alias("reason"), "record",
                      F.when(kind.isin("m", "r"), F.col("rejected_line")).otherwise(F.col("line")).alias("line"),
                      "stage"))
    return LiveDetection(result, the_plan, printed)


def _event_time(data: "DataFrame", mapping: Mapping) -> Optional["Column"]:
    """The rows' time as a Spark timestamp, read as the engines read it
    (numbers are seconds; ISO 8601 text, a date without a zone in the
    mapping's zone), for the watermark; None when the rows have no time
    column or their times are text in a strptime format."""
    if mapping.time is None or mapping.time not in data.columns:
        return None
    kind = data.schema[mapping.time].dataType
    c = F.col(mapping.time)
    zone = mapping.time_zone or "UTC"
    if isinstance(kind, NumericType):
        return F.timestamp_seconds(c.cast("double"))
    if isinstance(kind, TimestampType):
        return c
    if isinstance(kind, TimestampNTZType):
        return F.to_utc_timestamp(c.cast("timestamp"), zone)
    if isinstance(kind, StringType) and mapping.time_format is None:
        zoned = c.rlike(r"(Z|[+-][0-9][0-9](:?[0-9][0-9])?)$")
        return F.coalesce(F.timestamp_seconds(c.try_cast("double")),
                          F.when(zoned, F.to_timestamp(c)).otherwise(F.to_utc_timestamp(F.to_timestamp(c), zone)))
    return None


def _initial(states: "DataFrame", stage: int, whole: bool, data: "DataFrame", partition_by: Optional[str]) -> Any:
    """The saved states of a stage (``stage``, ``key``, ``snapshot``) grouped
    as the stage groups its rows: stage 1 by the coarse key of the key's
    value (a key text is the value as JSON), a later stage by "=" and its
    key."""
    rows = states.filter(F.col("stage") == stage)
    if stage > 1:
        group = F.lit("=") if whole else F.concat(F.lit("="), _bucket(F.col("key")))
    elif whole or partition_by is None:
        group = F.lit("")
    else:
        value = F.get_json_object(F.concat(F.lit('{"v":'), F.col("key"), F.lit("}")), "$.v")
        rows = rows.withColumn(partition_by, value.cast(data.schema[partition_by].dataType))
        group = _bucket(_coarse_key(data, partition_by))
    return rows.select(group.cast("string").alias(GROUP), "key", "snapshot").groupBy(GROUP)


def _bucket(key: "Column") -> "Column":
    """The group of a key: one of ``BUCKETS``, by its hash."""
    return F.pmod(F.hash(key), F.lit(BUCKETS)).cast("string")


def _later_key(st: Any) -> "Column":
    """A later stage's key of an event passed on to it (for the other rows,
    anything): its key argument's text, or "" when the stage is global."""
    sig, keys = F.col("sig"), F.col("keys")
    if st.key is None:
        return F.lit("")
    expr = None
    for s, p in st.key:
        value = keys.getItem(p)
        expr = F.when(sig == str(s), value) if expr is None else expr.when(sig == str(s), value)
    return F.lit("") if expr is None else expr.otherwise(F.lit(""))


def _later_group(st: Any) -> "Column":
    """The group of a row of the previous stage in stage ``st``: an event
    passed on to it goes to its key's bucket ("=" and the bucket; "=" when
    the stage is global), any other row to one of the groups that pass
    rows on."""
    consumed = [str(s) for s in st.consumes]
    mine = F.lit("=") if st.key is None else F.concat(F.lit("="), _bucket(F.col(GKEY)))
    passing = F.concat(F.lit(PASS), (F.abs(F.hash("kind", "row", "path", "line")) % PASS_GROUPS).cast("string"))
    return F.when((F.col("kind") == "x") & F.col("sig").isin(consumed), mine).otherwise(passing)


def _source_format(data: "DataFrame") -> str:
    """The format of a file source (json, csv, parquet), from its plan."""
    try:
        text = str(data._jdf.queryExecution().logical().toString()).lower()
    except Exception:       # not a JVM DataFrame (Spark Connect): CSV's reading of rows
        return ""
    return "json" if "json" in text else ""


def stream_session(master: Optional[str] = None, conf: Optional[dict[str, str]] = None) -> "SparkSession":
    """A SparkSession for streams: replay's, with the RocksDB state store."""
    # UTC: the watermark reads dates without a zone as the engines do (see _event_time)
    settings = {STATE_PROVIDER: ROCKSDB, "spark.sql.session.timeZone": "UTC",
                "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true"}
    cores = _local_cores(master or DEFAULT_MASTER)
    if cores is not None:
        # each partition of a stage is a task and a state store at every
        # micro-batch: on one machine, more of them than cores only cost time
        settings["spark.sql.shuffle.partitions"] = str(cores)
    settings.update(conf or {})
    spark = session(master, settings)
    if spark.conf.get(STATE_PROVIDER, "") != ROCKSDB:
        spark.conf.set(STATE_PROVIDER, ROCKSDB)
    return spark


def _local_cores(master: str) -> Optional[int]:
    """The cores of a local master (``local``, ``local[N]``, ``local[*,M]``), or None."""
    found = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\d+)?\])?", master)
    if found is None:
        return None
    n = found.group(1)
    return 1 if n is None else os.cpu_count() or 1 if n == "*" else max(1, int(n))


def read_output(spark: "SparkSession", out: Union[str, "os.PathLike[str]"], format: str = "parquet") -> "DataFrame":
    """What a stream wrote into ``out`` so far (its committed micro-batches)."""
    path = os.fspath(out)
    if format == "jsonl":
        return spark.read.format("text").load(path)
    if format == "csv":
        return spark.read.option("header", True).csv(path)
    return spark.read.format(format).load(path)


def totals(count_lines: Sequence[str], detections: int) -> dict[str, int]:
    """The totals of a stream's count lines (each a stage's counts of a
    group in a micro-batch): rows read, events, rejected rows,
    detections, warnings; ``rows = events + rejected``."""
    total = {"rows": 0, "events": 0, "rejected": 0, "detections": detections, "warnings": 0}
    for line in count_lines:
        info = json.loads(line)
        total["warnings"] += info["warnings"]
        if info["stage"] == 1:
            total["rows"] += info["fed"] + info["unused"] + info["mapping_rejected"]
            total["rejected"] += info["mapping_rejected"] + info["rejected"]
        else:                   # a derived event too late for a later stage's engine
            total["warnings"] += info["rejected"]
    total["events"] = total["rows"] - total["rejected"]
    return total


def committed_files(out: Union[str, "os.PathLike[str]"], part: str, seen: set[str]) -> list[Path]:
    """The files of ``part`` (detections, rejected, counts) that the file
    sink at ``out`` has committed and are not in ``seen`` (added to it), in
    the order of their micro-batches.  A file of a micro-batch that did not
    commit (its driver was killed) is in no log, and is never read."""
    log = Path(out) / "_spark_metadata"
    if not log.is_dir():
        return []
    entries = []
    for f in log.iterdir():
        stem = f.name.removesuffix(".compact")
        if stem.isdigit():
            entries.append((int(stem), f))
    new: list[Path] = []
    for _, f in sorted(entries):
        try:
            lines = f.read_text(encoding="utf-8").splitlines()[1:]
        except OSError:         # being written: read at the next look
            continue
        for line in lines:
            item = json.loads(line)
            path = str(item.get("path", ""))
            if item.get("action") != "add" or f"/output={part}/" not in path or path in seen:
                continue
            seen.add(path)
            new.append(Path(unquote(urlparse(path).path)))
    return new


def detection_lines(part: Path, format: str) -> list[str]:
    """The detections' JSON lines of one part file of a stream's output."""
    if format == "jsonl":
        return [line for line in part.read_text(encoding="utf-8").splitlines() if line]
    if format == "parquet":
        return [str(v) for v in pq.read_table(part, columns=["line"]).column("line").to_pylist()]
    if format == "json":
        return [str(json.loads(line)["line"]) for line in part.read_text(encoding="utf-8").splitlines() if line]
    with part.open(encoding="utf-8", newline="") as f:
        return [row["line"] for row in csv.DictReader(f)]


def stream_totals(table: "DataFrame", format: str) -> dict[str, int]:
    """:func:`totals` of what a stream wrote (``read_output``)."""
    line = F.col("value" if format == "jsonl" else "line")
    detections = table.filter(F.col("output") == "detections").count()
    count_lines = [str(r[0]) for r in table.filter(F.col("output") == "counts").select(line).collect()]
    return totals(count_lines, detections)
