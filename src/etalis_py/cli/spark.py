"""``etalis replay`` and ``etalis stream``: the rules on Spark.  Spark
(:mod:`etalis_py.spark`, which imports pyspark) is imported by these
commands only, so that the others start without it."""

from __future__ import annotations

import argparse
import json
import signal
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Optional, TextIO

from ..errors import EtalisError
from ..inputs.registry import InputFormat, by_name
from ..outputs.detections import read_detections
from ..outputs.output import TableWriter, formatted
from ..outputs.progress import wanted
from ..outputs.report import Readable
from .checking import report_findings
from .options import (EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, _count, _stream_iri, add_engine_options,
                      add_mapping_options, add_quiet_option, add_static_option, add_time_options, add_trust_options,
                      mapping_from, readable_of, said, spark_format_option, time_style)

if TYPE_CHECKING:  # pyspark loads with these commands only (see above)
    from ..spark.driver import CheckedRules


def _plan_rules(ns: argparse.Namespace) -> "CheckedRules":
    """``--plan``'s rule file read once: the rules the plan is made of and
    the events they print (the knowledge is not loaded)."""
    # pyspark loads with the command that runs on Spark, not with every command
    from ..spark.driver import checked_rules

    return checked_rules(ns.rules, policy=ns.policy, max_age=None, trusted=ns.trusted, ontology=(),
                         static=ns.static, entailment=None)


def add_replay_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis replay``: the same rules and mapping as ``run``, over a data
    set on Spark (docs/spark.md)."""
    rp = sub.add_parser("replay", help="replay a data set through the rules on Spark")
    _add_spark_input(rp, "--events", "PATH",
                     "the data: a CSV, Parquet or JSON-lines file or directory (local or a Hadoop URI); "
                     "JSON lines without a mapping, and .events files, are an event a line, as etalis run reads them",
                     "the data's format: csv, parquet, jsonl or events (default: from the file name)",
                     "the key column: rules whose events all carry the key run partitioned by it")
    rp.add_argument("--stream", type=_stream_iri, metavar="IRI",
                    help="the graphs of --graph-col are on the stream IRI, asked with graph_stream(G, S)")
    rp.add_argument("--out", metavar="DIR",
                    help="write detections, rejected rows and summary.json here (atomically); "
                    "default: print the detections as run does")
    rp.add_argument("--format", choices=("parquet", "csv", "json", "jsonl", "table"), default="parquet",
                    help="the format of --out (jsonl and csv: exactly the files of run --format jsonl or csv); "
                    "table, without --out: print etalis table's table, in --tz")
    rp.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    rp.add_argument("--single-file", action="store_true",
                    help="parquet and json: one file each (detections.parquet, ...) instead of a directory of parts "
                    "(jsonl and csv are single files anyway)")
    add_engine_options(rp)
    add_time_options(rp)
    rp.add_argument("--master", help="Spark master URL (default local[*,4]: local mode on all cores)")
    rp.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting; may be repeated")
    rp.add_argument("--partitions", type=_count, metavar="N", help="partitions of keyed stages (default: 4 per core)")
    rp.add_argument("--plan", action="store_true",
                    help="print the plan (which rules run in which stage, partitioned by what) and stop")
    rp.add_argument("--save-state", metavar="DIR",
                    help="write every key's final engine state here (Parquet): etalis stream --initial-state DIR "
                    "goes on from it")
    add_quiet_option(rp, progress=True)
    add_trust_options(rp)
    add_static_option(rp)
    add_mapping_options(rp)


def replay(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``etalis replay``: see :func:`etalis_py.spark.replay`."""
    # pyspark loads with the command that runs on Spark, not with every command
    from .. import spark as sp
    from ..spark.driver import event_lines
    from ..spark.failures import spark_failure
    from ..spark.planning import refuse_strict, refuse_timers, refuse_unbound_transfers

    try:
        mapping = mapping_from(ns, ns.stream)
        lines = event_lines(str(ns.events), mapping, ns.input_format, ns.partition_by)
        if not lines:
            mapping.check()
        if ns.format == "table" and ns.out:
            raise ValueError("--format table is printed: leave out --out (or write jsonl there and use etalis table)")
        readable = readable_of(ns)
    except (ValueError, OSError) as e:
        print(f"etalis: {e}", file=err)
        return EXIT_FAILURE
    if ns.plan:
        planned = _plan_rules(ns)
        the_plan = sp.replay_plan(planned.rule_file.rules, str(ns.rules), mapping, ns.partition_by, lines)
        out.write(the_plan.explain(list(planned.printed)))
        # what replay refuses after planning, the plan refuses too (exit 2)
        refuse_timers(the_plan, str(ns.rules))
        refuse_unbound_transfers(the_plan, str(ns.rules))
        refuse_strict(the_plan, str(ns.rules), ns.policy)
        return EXIT_OK
    # the summary counts the rule file's errors and warnings printed here
    started = spark_start(ns, err)
    if started is None:
        return EXIT_FAILURE
    checked, errors, warnings, conf = started
    progress = wanted(ns.progress, err, ns.quiet)
    try:
        style = time_style(ns)
        spark = sp.session(ns.master, conf)
        result = sp.replay(ns.events, ns.rules, event=ns.event, event_col=ns.event_col,  # the options as given
                           args=ns.args, time=ns.time, time_format=ns.time_format, time_zone=ns.time_zone,
                           columns=ns.columns, graph_col=ns.graph_col, stream=ns.stream,
                           partition_by=ns.partition_by, policy=ns.policy,
                           max_age=ns.max_age, ontology=ns.ontology, entailment=ns.entailment,
                           spark=spark, input_format=ns.input_format, partitions=ns.partitions,
                           progress=progress, trusted=ns.trusted, explain=ns.explain, static=ns.static,
                           save_state=ns.save_state is not None, checked=checked)
        if ns.save_state is not None:
            result.save_states(ns.save_state)
        if ns.out:
            result.write(ns.out, ns.format, ns.overwrite, style, ns.single_file)
        elif ns.format == "table":
            table = TableWriter(out, readable)
            table.write("".join(result.detection_lines()))
            table.close()
        else:
            for text in formatted("jsonl", result.detection_lines(), style, 0, chunk=1000):
                out.write(text)
            out.flush()
    except EtalisError:
        raise
    except (ValueError, OSError) as e:
        print(f"etalis: {said(e)}", file=err)
        return EXIT_FAILURE
    except Exception as e:
        failure = spark_failure(e)
        if failure is None:
            raise
        print(f"etalis: {failure}", file=err)
        return EXIT_FAILURE
    err.write(replace(result, warnings=result.warnings + warnings).summary(errors))
    return EXIT_OK


def _add_spark_input(p: argparse.ArgumentParser, data: str, metavar: str, data_help: str, format_help: str,
                     key_help: str) -> None:
    """The rule file, the data (``data``, required), its format and its key
    column: what replay and stream both take first."""
    p.add_argument("rules", type=Path, help="the .etl rule file")
    p.add_argument(data, required=True, metavar=metavar, help=data_help)
    p.add_argument("--input-format", type=spark_format_option, metavar="FORMAT", help=format_help)
    p.add_argument("--partition-by", metavar="COL", help=key_help)


def add_stream_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis stream``: replay's rules, mapping and plan, live on Spark
    Structured Streaming (docs/spark.md, Streaming)."""
    sp = sub.add_parser("stream", help="detect live on Spark Structured Streaming, as files land in a folder")
    _add_spark_input(sp, "--source", "DIR|URL",
                     "a folder whose new files are read as they land (CSV, JSON lines or Parquet), "
                     "socket://HOST:PORT or kafka://HOST:PORT/TOPIC (CSV lines, named by --columns)",
                     "the files' format: csv, jsonl, parquet or events (default: from their names); JSON lines "
                     "without a mapping, and events, are an event a line, as etalis run reads them",
                     "the key column: rules whose events all carry the key run with a state per key")
    sp.add_argument("--checkpoint", required=True, metavar="DIR",
                    help="the stream's progress and its engines' state: start again with the same DIR to go on")
    sp.add_argument("--out", required=True, metavar="DIR",
                    help="the detections, rejected rows and counts, each micro-batch written exactly once")
    sp.add_argument("--format", choices=("parquet", "jsonl", "csv", "json"), default="parquet",
                    help="the format of --out (jsonl: the lines of etalis run)")
    when = sp.add_mutually_exclusive_group()
    when.add_argument("--available-now", action="store_true",
                      help="process every file there is, then stop (tests, catching up)")
    when.add_argument("--trigger", type=float, metavar="SECONDS",
                      help="start a micro-batch at most every SECONDS (default: as soon as the last one ends)")
    sp.add_argument("--max-files-per-trigger", type=int, metavar="N", help="read at most N new files a micro-batch")
    sp.add_argument("--initial-state", metavar="DIR",
                    help="start from the keys' states that etalis replay --save-state DIR wrote (same rules and options)")
    sp.add_argument("--lateness", type=float, metavar="SECONDS",
                    help="accept a key's rows up to this late and match them as if in time order; "
                    "later ones are rejected rows")
    sp.add_argument("--print", dest="print_as", choices=("jsonl", "lines"),
                    help="print the detections as each micro-batch commits them: the lines of etalis run, "
                    "or a sentence each (etalis table --lines: --names, --tz)")
    add_engine_options(sp)
    sp.add_argument("--tz", metavar="ZONE", help="with --print lines: the time zone (default: UTC, or each "
                    "station's of a --names file with a tz column)")
    sp.add_argument("--master", help="Spark master URL (default local[*,4]: local mode on all cores)")
    sp.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting; may be repeated")
    sp.add_argument("--plan", action="store_true",
                    help="print the plan (which rules run in which stage, keyed by what) and stop")
    add_quiet_option(sp)
    add_trust_options(sp)
    add_static_option(sp)
    add_mapping_options(sp)


def stream(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``etalis stream``: see :func:`etalis_py.spark.detect_stream`."""
    # pyspark loads with the command that runs on Spark, not with every command
    from .. import spark as sp
    from ..spark import stream as live
    from ..spark.driver import event_lines

    try:
        mapping = mapping_from(ns)
        fmt: Optional[InputFormat] = None
        if not ns.plan:
            fmt = live.source_format(ns.source, ns.input_format)
        elif ns.input_format:
            fmt = by_name(ns.input_format)
        else:
            try:    # a plan needs no files yet: those already there tell their format
                fmt = live.source_format(ns.source)
            except ValueError:
                fmt = None
        lines = fmt is not None and event_lines(ns.source, mapping, fmt.name, ns.partition_by)
        if not lines:
            mapping.check()
        readable = readable_of(ns) if ns.print_as == "lines" else None
    except (ValueError, OSError) as e:
        print(f"etalis: {e}", file=err)
        return EXIT_FAILURE
    if ns.plan:
        planned = _plan_rules(ns)
        out.write(live.live_plan(planned.rule_file.rules, str(ns.rules), mapping, ns.partition_by, ns.policy,
                                 lines).explain(list(planned.printed)))
        return EXIT_OK
    started = spark_start(ns, err)
    if started is None:
        return EXIT_FAILURE
    checked, errors, warnings, conf = started
    stopping = _Stop()
    with stopping:
        spark = live.stream_session(ns.master, conf)
        # event lines, JSON or not, are read as text: each line an event or a rejected line
        rows = live.read_stream(spark, ns.source, mapping, "events" if lines else fmt.name if fmt is not None else None,
                                ns.max_files_per_trigger)
        found = sp.detect_stream(rows, ns.rules, event=ns.event, event_col=ns.event_col, args=ns.args, time=ns.time,
                                 time_format=ns.time_format, time_zone=ns.time_zone, columns=ns.columns,
                                 graph_col=ns.graph_col, partition_by=ns.partition_by, policy=ns.policy,
                                 max_age=ns.max_age, lateness=ns.lateness, ontology=ns.ontology,
                                 entailment=ns.entailment, trusted=ns.trusted, explain=ns.explain, static=ns.static,
                                 initial_state=ns.initial_state, event_lines=lines,
                                 json_lines=lines and fmt is not None and fmt.spark == "json", checked=checked)
        query = found.start(ns.out, ns.checkpoint, ns.format, ns.available_now, ns.trigger)
        printer = _LivePrinter(out, ns.out, ns.format, ns.print_as, readable)
        failure: Optional[BaseException] = None
        try:
            while not query.awaitTermination(1):
                printer.show()
                if stopping.requested:
                    query.stop()
                    break
        except Exception as e:      # the query failed (StreamingQueryException): said below in one line
            failure = e
        finally:
            printer.show()
        if failure is not None and not stopping.requested:
            text = getattr(failure, "desc", None) or str(failure)
            print(f"etalis: the stream failed (what it committed stays; start again with the same --checkpoint): "
                  f"{text.strip().splitlines()[0] if text.strip() else type(failure).__name__}", file=err)
            return EXIT_FAILURE
    table = live.read_output(spark, ns.out, ns.format) if Path(ns.out, "_spark_metadata").is_dir() else None
    counted = live.stream_totals(table, ns.format) if table is not None else live.totals([], 0)
    print(f"rows: {counted['rows']}, events: {counted['events']}, rejected: {counted['rejected']}, "
          f"detections: {counted['detections']}, {f'errors: {errors}, ' if errors else ''}"
          f"warnings: {counted['warnings'] + warnings}"
          + (" (stopped: start again with the same --checkpoint to go on)" if stopping.requested else ""), file=err)
    return EXIT_INTERRUPTED if stopping.requested else EXIT_OK


class _Stop:
    """Ctrl-C and SIGTERM during ``etalis stream``: the query is stopped
    between looks at its progress; what it committed stays, and a start
    with the same checkpoint goes on from there."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Optional[FrameType]) -> None:
        self.requested = True

    def __enter__(self) -> "_Stop":
        for s in (signal.SIGINT, signal.SIGTERM):
            try:
                self._previous[s] = signal.signal(s, self._handle)
            except ValueError:          # not the main thread
                pass
        return self

    def __exit__(self, *exc: object) -> None:
        for s, previous in self._previous.items():
            signal.signal(s, signal.SIG_DFL if previous is None else previous)


class _LivePrinter:
    """Prints the detections of each micro-batch the sink commits."""

    def __init__(self, out: TextIO, where: str, format: str, how: Optional[str], readable: Optional["Readable"]) -> None:
        self.out = out
        self.where = where
        self.format = format
        self.how = how
        self.readable = readable
        self.seen: set[str] = set()

    def show(self) -> None:
        # pyspark is loaded by now: the stream runs
        from ..spark.stream import committed_files, detection_lines

        if self.how is None:
            return
        lines: list[str] = []
        for f in committed_files(self.where, "detections", self.seen):
            lines += detection_lines(f, self.format)
        if not lines:
            return
        # a micro-batch's detections come from many tasks: in the order of their end, then start
        lines.sort(key=lambda line: (json.loads(line)["end"], json.loads(line)["start"]))
        if self.readable is not None:
            self.out.write(self.readable.lines(read_detections(lines)))
        else:
            self.out.write("".join(line + "\n" for line in lines))
        self.out.flush()


def spark_start(ns: argparse.Namespace,
                err: TextIO) -> Optional[tuple["CheckedRules", int, int, dict[str, str]]]:
    """Before ``replay`` or ``stream`` starts Spark: the rule file read and
    compiled once (what the plan and the workers are made from), its
    errors and warnings printed (none under ``--quiet``), and the
    ``--conf`` settings; None (said on ``err``) for a setting that is not
    KEY=VALUE."""
    from ..spark.driver import checked_rules   # as _plan_rules

    checked = checked_rules(ns.rules, policy=ns.policy, max_age=ns.max_age, trusted=ns.trusted, ontology=ns.ontology,
                            static=ns.static, entailment=ns.entailment, lateness=getattr(ns, "lateness", None))
    errors, warnings = report_findings(checked.rule_file, err, ns.max_age) if not ns.quiet else (0, 0)
    conf = {}
    for item in ns.conf:
        k, sep, v = item.partition("=")
        if not sep:
            print(f"etalis: --conf {item}: give KEY=VALUE", file=err)
            return None
        conf[k.strip()] = v.strip()
    return checked, errors, warnings, conf
