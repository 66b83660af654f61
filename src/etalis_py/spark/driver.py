"""``replay()`` (the driver): the mapping pass, the stages and the result."""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter
from typing import IO, Any, Optional, Union, Unpack

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import ArrayType, DoubleType, IntegerType, StringType, StructField, StructType

from ..rules.analysis import RuleFile, Sig
from ..bridge.engine import Engine, check_policy
from ..errors import RuleFileNotFound, unreadable, utf8_text
from ..rdf.knowledge import OntologyNotFound
from ..outputs.output import TimeStyle, csv_table, formatted, max_arity
from ..outputs.progress import ProgressLine
from ..inputs.mapping import Mapping, MappingOptions, missing_column
from ..inputs.registry import by_name
from .mapping import MapSpec, _map_rows
from .names import (
    CORRUPT, EVENT_LINE, FORMATS, KEY1, KEYS, KIND, LINE, REASON, ROW, SIG, STAGE_SCHEMA, S_KEY, S_KEYS, S_KIND,
    S_LINE, S_PATH, S_REASON, S_ROW, S_SIG, S_T, S_TKIND, TIME, TKIND, TK_DATE, TRANSFER,
)
from .partition import StageSpec, _load_knowledge, _map_and_run, _run_stage
from .planning import (Plan, Stage, _transfer_rules, refuse_strict, refuse_timers, refuse_unbound_transfers,
                       replay_plan)
from .reading import format_of, read_input
from .session import session
from .writing import _OutputDir, _table_spec, _typed


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
    states: Optional["DataFrame"] = field(default=None, repr=False)   # save_state: stage, key, snapshot

    def save_states(self, out: str | os.PathLike[str]) -> None:
        """Write every key's final engine state (``replay(..., save_state=True)``)
        into the directory ``out`` as Parquet (``stage``, ``key``, ``snapshot``):
        ``etalis stream --initial-state`` starts from it."""
        if self.states is None:
            raise ValueError("the replay kept no states: give save_state=True (--save-state)")
        self.states.write.parquet(os.fspath(out))

    def detection_lines(self) -> Iterator[str]:
        """The detections as JSON lines, exactly as ``etalis run`` prints
        them, in its order."""
        for r in self.lines.toLocalIterator():
            yield str(r[0])

    def summary(self, errors: int = 0) -> str:
        """Rows, events, rejected, detections and time per stage; ``errors``
        (the rule file's, which ``etalis replay`` printed first) are said when
        there are any."""
        out = [f"rows: {self.rows}, events: {self.events}, rejected: {self.rejected_rows}, "
               f"detections: {self.detection_count}, {f'errors: {errors}, ' if errors else ''}"
               f"warnings: {self.warnings}, seconds: {self.seconds:.3f}"]
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
                    staging.write_lines("rejected.jsonl", (
                        str(r[0]) + "\n" for r in self.rejected.select(F.to_json(F.struct("*"))).toLocalIterator()))
                else:
                    staging.write_lines("rejected.csv", csv_table(self.rejected.columns,
                                                                  self.rejected.toLocalIterator()))
            else:
                detections = self.detections
                if style.dates:
                    for end in ("start", "end"):
                        if dict(detections.dtypes)[end] == "double":
                            detections = detections.withColumn(end, F.timestamp_seconds(F.col(end)))
                # the Parquet schema of etalis run's: timestamps as microseconds adjusted to UTC,
                # not Spark's default INT96, which readers take for naive times
                conf = self.detections.sparkSession.conf
                before = conf.get(_TIMESTAMP_TYPE, None)
                conf.set(_TIMESTAMP_TYPE, "TIMESTAMP_MICROS")
                try:
                    for name, table in (("detections", detections), ("rejected", self.rejected)):
                        if single_file:
                            staging.write_single(table, format, name)
                        else:
                            table.write.format(format).save(staging.child(name))
                finally:
                    if before is None:
                        conf.unset(_TIMESTAMP_TYPE)
                    else:
                        conf.set(_TIMESTAMP_TYPE, before)
            staging.write_lines("summary.json", [json.dumps(self.summary_dict(), indent=1) + "\n"])
            target.replace_with(staging, overwrite)
        except BaseException:
            staging.remove()
            raise

    def unpersist(self) -> None:
        """Free the cached intermediate tables."""
        for df in self._cached:
            df.unpersist()


@dataclass(frozen=True)
class CheckedRules:
    """A rule file read and compiled once on the driver: the ontologies and
    static files as (name, text) for the workers, the events the rules
    print, and the reading itself, which the plan (its ``rules``) and the
    findings of ``etalis check`` are made from."""

    knowledge: tuple[tuple[str, str], ...]
    statics: tuple[tuple[str, str], ...]
    printed: tuple[str, ...]
    rule_file: RuleFile


def checked_rules(rules: Union[str, os.PathLike[str]], *, policy: Optional[str], max_age: Optional[float],
                  trusted: bool, ontology: Sequence[Union[str, os.PathLike[str]]],
                  static: Sequence[Union[str, os.PathLike[str]]], entailment: Optional[str],
                  lateness: Optional[float] = None) -> CheckedRules:
    """The rules (a file, read as ``etalis run`` reads it, or a rule text)
    compiled once on the driver, so that a bad rule, ontology or static
    file is refused before Spark starts (a file missing or not UTF-8 is
    named)."""
    options: dict[str, Any] = dict(policy=policy, max_age=max_age, trusted=trusted, lateness=lateness, analysis=True)
    if _is_file(rules):
        checked = Engine.from_file(rules, static=static, **options)
        try:
            knowledge, statics = _shipped_files(ontology, static)
        except BaseException:
            checked.close()
            raise
    else:
        knowledge, statics = _shipped_files(ontology, static)
        text, source = _rule_text(rules)
        checked = Engine.from_string(text, source=source, static_texts=statics, **options)
    try:
        if knowledge or entailment:
            _load_knowledge(checked, knowledge, entailment)
        return CheckedRules(knowledge, statics, tuple(checked.printed), checked.rule_file())
    finally:
        checked.close()


def _shipped_files(ontology: Sequence[Union[str, os.PathLike[str]]], static: Sequence[Union[str, os.PathLike[str]]],
                   ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """The ontologies and static files as (name, text) for the workers."""
    for o in ontology:
        if problem := unreadable("ontology file", Path(o)):
            raise OntologyNotFound(problem, file=str(o))
    for f in static:
        if problem := unreadable("static file", Path(f)):
            raise RuleFileNotFound(problem)
    return (tuple((Path(o).name, utf8_text("ontology file", Path(o))) for o in ontology),
            tuple((str(Path(f)), utf8_text("static file", Path(f))) for f in static))


def replay(
    data: Union["DataFrame", str, "os.PathLike[str]"],
    rules: Union[str, "os.PathLike[str]"],
    *,
    partition_by: Optional[str] = None,
    policy: Optional[str] = None,
    max_age: Optional[float] = None,
    ontology: Sequence[Union[str, "os.PathLike[str]"]] = (),
    entailment: Optional[str] = None,
    spark: Optional["SparkSession"] = None,
    input_format: Optional[str] = None,
    partitions: Optional[int] = None,
    progress: bool = False,
    trusted: bool = False,
    explain: bool = False,
    static: Sequence[Union[str, "os.PathLike[str]"]] = (),
    save_state: bool = False,
    checked: Optional[CheckedRules] = None,
    **mapping_options: Unpack[MappingOptions],
) -> ReplayResult:
    """Replay ``data`` through ``rules`` on Spark.

    ``data`` is a DataFrame or the path of a CSV, Parquet or JSON-lines
    table, or of a stream file of ``etalis run`` read an event a line (JSON
    lines given without a mapping, ``.events`` lines; see
    :func:`event_lines`); ``rules`` the path of an ``.etl`` file or rule
    text.  Rows map to events as in ``etalis run``, by the keywords of
    :class:`~etalis_py.inputs.mapping.MappingOptions`: ``event`` names every row's event (or
    ``event_col`` gives the column that does), ``args`` are the argument
    columns, ``time`` the time column (seconds, or dates in
    ``time_format`` or ISO 8601; a date without a zone is in ``time_zone``,
    an IANA name, default UTC), ``columns`` names a headerless CSV's
    columns; ``graph_col`` instead of ``event``/``args`` makes each row the
    graph event ``graph(G)`` with G the RDF graph (N-Triples or JSON-LD)
    in that column, on the stream ``stream`` (an IRI, asked with
    ``graph_stream(G, S)``) if given.  ``partition_by`` is the key column: rules whose events all
    carry the key run partitioned by it (see :func:`replay_plan`).  ``policy``,
    ``max_age``, ``ontology`` (files of background knowledge, read here
    and shipped to the workers) and ``entailment`` are those of ``etalis
    run``.  ``partitions`` is the
    number of partitions of keyed stages (default: 4 per core).  The rules
    are sandboxed, on the driver and in every worker, unless ``trusted``.
    ``explain`` gives each detection its provenance (the input events it
    was built from, across stages), as ``etalis run --explain`` does: in
    its detection lines, and as a ``provenance`` column of JSON.
    ``static`` names files of static knowledge (UTF-8 Prolog facts and
    rules), as for ``etalis run --static``: read here and shipped to the
    workers.  ``save_state`` keeps each key's final engine state, for
    :meth:`ReplayResult.save_states` (a stream goes on from it).
    ``checked`` is what :func:`checked_rules` made of the same rules and
    options, for a caller that read them already (``etalis replay``
    prints their findings first): they are not read again.

    Raises :class:`~etalis_py.errors.RuleError` for a rule file with
    errors, ValueError for a mapping that does not fit the data or a
    streaming DataFrame, and FileNotFoundError for a local input, an
    ontology or a static file that does not exist.
    """
    started = perf_counter()
    text, source = _rule_text(rules)
    mapping = Mapping.of(**mapping_options)
    lines = isinstance(data, (str, os.PathLike)) and event_lines(os.fspath(data), mapping, input_format,
                                                                 partition_by)
    if not lines:
        mapping.check()
    if policy is not None:
        check_policy(policy)
    if isinstance(data, (str, os.PathLike)):
        _check_local_input(os.fspath(data))
    elif data.isStreaming:
        raise ValueError("replay reads a table (spark.read), not a stream (spark.readStream): write the stream's "
                         "rows to files and replay those, or feed a live stream to Engine.emit or etalis run --events -")
    checked = checked or checked_rules(rules, policy=policy, max_age=max_age, trusted=trusted, ontology=ontology,
                                       static=static, entailment=entailment)
    knowledge, statics, printed = checked.knowledge, checked.statics, checked.printed
    the_plan = replay_plan(checked.rule_file.rules, source, mapping, partition_by, lines)
    refuse_timers(the_plan, source)
    refuse_unbound_transfers(the_plan, source)
    refuse_strict(the_plan, source, policy)


    if isinstance(data, (str, os.PathLike)):
        spark = spark or session()
        if lines:
            df = spark.read.text(os.fspath(data)).filter(~F.col(EVENT_LINE).rlike(_skipped_lines(input_format,
                                                                                               os.fspath(data))))
        else:
            df = read_input(spark, os.fspath(data), mapping, input_format)
    else:
        df = data
        spark = df.sparkSession
    needed = [c for c in (mapping.event_col, mapping.time, *mapping.args) if c is not None]
    error = missing_column(needed + ([partition_by] if partition_by else []),
                           [c for c in df.columns if c != CORRUPT], "the data")
    if error is not None:
        raise error
    n_parts = partitions or max(1, 4 * spark.sparkContext.defaultParallelism)
    reporter = _Progress(spark, progress)
    cached: list["DataFrame"] = []
    try:
        # rows to events: in stage 1's tasks, after its shuffle; or, when
        # later stages consume input events too, a Python pass of its own
        # (in the same tasks as the scan) whose events all stages read
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
            by_name(input_format) if input_format else format_of(os.fspath(data))).spark == "json"
        mspec = MapSpec(mapping, original, len(original) - (1 if CORRUPT in original else 0), CORRUPT in original,
                        first_keys, raw_later, later, json_lines, lines)
        mapped = numbered.mapInArrow(_map_rows(mspec),
                                     _mapped_schema(numbered, raw_later))
        if raw_later or not the_plan.stages:
            mapped = mapped.persist(StorageLevel.MEMORY_AND_DISK)    # read by more than one stage
            cached.append(mapped)

        specs = stage_specs(the_plan, text, source, printed, _arrow_schema(spark, numbered, original),
                            policy=policy, max_age=max_age, knowledge=knowledge, entailment=entailment,
                            trusted=trusted, explain=explain, statics=statics, save_state=save_state)
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
            spec = specs[st.number - 1]
            schema = _stage_schema(numbered if st.number == 1 else None, original)
            if st.number == 1 and not raw_later:
                # the input rows cross into Python once: shuffled by a coarse key,
                # mapped to events and sorted in the worker, run, and back
                rows_in = (numbered.repartition(1) if st.key is None
                           else numbered.repartition(n_parts, _coarse_key(numbered, partition_by or "")))
                out = rows_in.mapInArrow(_map_and_run(mspec, spec), schema)
            else:
                stage_in = _stage_input(the_plan, st, mapped, outputs, raw_slot)
                if st.key is None:
                    arranged = stage_in.repartition(1).sortWithinPartitions(S_T, S_ROW, S_PATH)
                else:
                    arranged = stage_in.repartition(n_parts, S_KEY).sortWithinPartitions(S_KEY, S_T, S_ROW, S_PATH)
                out = arranged.mapInArrow(_run_stage(spec), schema)
            out = out.persist(StorageLevel.MEMORY_AND_DISK)
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
        states = None
        if save_state:
            for st, out in zip(the_plan.stages, outputs):
                k = out.filter(F.col(S_KIND) == "k").select(F.lit(st.number).alias("stage"), F.col(S_KEY).alias("key"),
                                                            F.unbase64(F.col(S_LINE)).alias("snapshot"))
                states = k if states is None else states.unionByName(k)
        return ReplayResult(detections, rejected.orderBy(row_name), rows, events, rejected_rows, detection_count,
                            totals["warnings"], tuple(sample), tuple(reports), the_plan, printed,
                            perf_counter() - started, ordered.select(S_LINE), tuple(cached), explain, states)
    except BaseException:
        for c in cached:
            c.unpersist()
        raise
    finally:
        reporter.stop()


def event_lines(path: str, mapping: Mapping, input_format: Optional[str], partition_by: Optional[str]) -> bool:
    """Whether the data at ``path`` is read as ``etalis run`` reads a stream
    file, an event a line (JSON lines ``{"event": .., "args": [..],
    "time": t}``, or ``event(Term, Time)`` lines), rather than as a table
    mapped by ``mapping``: JSON lines without a mapping, and event lines.
    Raises ValueError for event lines with a mapping, and for a key column
    of events that are not rows of a table."""
    spark_format = (by_name(input_format) if input_format else format_of(path)).spark
    if spark_format == "text" and mapping != Mapping():
        raise ValueError("event lines are events as they are: give no mapping options (--event, --args, --time, ...)")
    lines = spark_format == "text" or (spark_format == "json" and mapping == Mapping())
    if lines and partition_by is not None:
        raise ValueError(f"--partition-by names a column of a table, and {path} is read an event a line: leave it "
                         "out (the rules run in one partition), or map its columns with --event, --args and --time")
    return lines


def _skipped_lines(input_format: Optional[str], path: str) -> str:
    """The lines of a file read an event a line that are no rows, as
    ``etalis run`` skips them: blank lines, and the comments of event
    lines (a JSON line starting with % is a line that is not JSON)."""
    json = (by_name(input_format) if input_format else format_of(path)).spark == "json"
    return r"^\s*$" if json else r"^\s*(%.*)?$"


def _check_local_input(path: str) -> None:
    """A local input (no URI scheme, or file://) that does not exist is said
    before Spark starts; Spark reads the others."""
    local = path[len("file://"):] if path.startswith("file://") else path
    if "://" not in local and not Path(local).exists():
        raise FileNotFoundError(f"events file {path} does not exist")


def _is_file(rules: Union[str, "os.PathLike[str]"]) -> bool:
    """``rules`` names a rule file (else it is a rule text)."""
    return isinstance(rules, os.PathLike) or (isinstance(rules, str) and "\n" not in rules
                                              and (rules.endswith(".etl") or Path(rules).is_file()))


def _rule_text(rules: Union[str, "os.PathLike[str]"]) -> tuple[str, str]:
    if _is_file(rules):
        path = Path(rules)
        if not path.is_file():
            raise RuleFileNotFound(f"rule file {path} does not exist")
        return path.read_text(encoding="utf-8"), str(path)
    return str(rules), "<rules>"


_TIMESTAMP_TYPE = "spark.sql.parquet.outputTimestampType"
_MAPPED_EXTRA = (ROW, KIND, KEY1, LINE, TIME, REASON, TKIND, SIG, KEYS)


def _mapped_schema(numbered: "DataFrame", with_later: bool) -> Any:
    return StructType(list(numbered.schema.fields) + [
        StructField(KIND, StringType()), StructField(KEY1, StringType()), StructField(LINE, StringType()),
        StructField(TIME, DoubleType()), StructField(REASON, StringType()), StructField(TKIND, IntegerType())]
        + ([StructField(SIG, StringType()), StructField(KEYS, ArrayType(StringType()))] if with_later else []))


def stage_specs(the_plan: Plan, text: str, source: str, printed: Sequence[str], originals: pa.Schema, *,
                policy: Optional[str], max_age: Optional[float], knowledge: tuple[tuple[str, str], ...],
                entailment: Optional[str], trusted: bool, explain: bool, statics: tuple[tuple[str, str], ...],
                lateness: Optional[float] = None, save_state: bool = False) -> list[StageSpec]:
    """What the workers of each stage of ``the_plan`` need (replay's and a
    stream's alike): the rules of the stage and the rules that pass its
    events on to later stages (appended to ``text``, numbered after the
    file's), the events it reports, the engine's options; stage 1 also
    the input's columns (``originals``), for its rejected rows."""
    transfer_sigs = sorted({s for st in the_plan.stages for s in st.exports})
    stage_text = text + "\n" + _transfer_rules(transfer_sigs)
    transfer_index = {s: len(the_plan.rules) + i for i, s in enumerate(transfer_sigs, start=1)}
    return [StageSpec(st.number, stage_text, source,
                      tuple(sorted(st.rules)) + tuple(transfer_index[s] for s in st.exports),
                      tuple(sorted({p for p in printed if Sig.parse(p) in st.produces}))
                      + ((f"{TRANSFER}/4",) if st.exports else ()),
                      policy, max_age, st.by_input_key, st.number == 1, originals if st.number == 1 else None,
                      knowledge, entailment, trusted, explain, statics, lateness, save_state)
            for st in the_plan.stages]


def _arrow_schema(spark: "SparkSession", numbered: "DataFrame", original: Sequence[str]) -> pa.Schema:
    """The Arrow types that Spark gives the input's columns in Python."""
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
    fields = list(StructType.fromDDL(STAGE_SCHEMA).fields)      # type: ignore[attr-defined]
    if numbered is not None:
        fields += [f for f in numbered.schema.fields if f.name in original]
    return StructType(fields)


@functools.lru_cache(maxsize=1)
def _key_chars() -> tuple[str, str]:
    """What a coarse key changes of a text, as ``translate``'s arguments:
    the decimal digits of every script but ASCII (int() and float() read
    them all), made ASCII, then whitespace (Python's and Unicode's) and
    underscores, dropped."""
    digits = "".join(chr(c) for c in range(0x80, 0x110000) if unicodedata.decimal(chr(c), None) is not None)
    space = "".join(chr(c) for c in range(0x110000)
                    if chr(c).isspace() or unicodedata.category(chr(c)) in ("Zs", "Zl", "Zp"))
    return digits + space + "_", "".join(str(unicodedata.decimal(c)) for c in digits)


_NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double", "timestamp", "timestamp_ntz")


def _coarse_key(df: "DataFrame", col: str) -> "Column":
    """A key to shuffle the input rows by before they are mapped, coarser
    than the exact key of the mapping pass: rows whose key values make the
    same term get the same coarse key (other rows may too).  Text loses its
    whitespace and underscores and has its digits made ASCII; then a text
    that Spark reads as a number is keyed by the number (so 7, 007, 7_0 /
    10 ... as Python's int() and float() read them)."""
    c = F.col(f"`{col}`")
    kind = dict(df.dtypes)[col]
    if kind in _NUMERIC or kind.startswith("decimal"):
        return c.cast("double").cast("string")
    if kind not in ("string", "boolean", "date"):
        return F.lit("")        # lists, maps, ...: one partition, correct if slow
    text = F.translate(c.cast("string"), *_key_chars())      # one pass, no regular expression
    coarse = F.coalesce(text.try_cast("double").cast("string"), text)
    if kind != "string":
        return coarse
    # the same key, at a third of the cost: a name of ASCII letters and
    # digits that starts with a letter other than i and n (Spark reads inf,
    # infinity and nan as numbers, Java no other text that starts with a
    # letter) has no character that translate changes and is no number
    return F.when(c.rlike(_PLAIN_NAME), c).otherwise(coarse)


_PLAIN_NAME = "^[A-HJ-MO-Za-hj-mo-z][A-Za-z0-9]*$"


def _stage_input(the_plan: Plan, st: Stage, mapped: "DataFrame", outputs: list["DataFrame"],
                 raw_slot: dict[int, int]) -> "DataFrame":
    """The events a stage consumes, with their key (k), time (t), row,
    derivation path and line: from the input (the keys of input events are
    at ``raw_slot[position]`` of their key texts) and from earlier stages.
    Stage 1 gets every input row (``kind``: e to feed, u unused, r
    rejected, with the row's own columns)."""
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


class _Progress:
    """The progress line of a replay (:class:`~etalis_py.outputs.progress.ProgressLine`),
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
