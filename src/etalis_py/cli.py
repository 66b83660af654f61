"""The ``etalis`` command: run | replay | stream | check | compile | table | plot | import-etalis | serve."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import signal
import sys
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn, Optional, TextIO, cast

from . import __version__
from .bridge.engine import POLICIES, STRATEGIES, Engine, check_policy, compile_listing
from .errors import EtalisError, EtalisWarning, InferenceLimitError, Rejection, RuleError, RuleFileNotFound, unreadable
from .inputs.etalis_import import add_import_parser, import_etalis
from .events import format_time
from .rules.analysis import RuleFile, Sig
from .rules.findings import Finding, counts, dot, findings
from .bridge.checkpoint import Checkpoint, CheckpointWriter, Counters, Position, check_input, resume_output, rules_hash, seen_hash
from .outputs.output import OUT_FORMATS, TableWriter, TimeStyle, flushed, formatted, max_arity, open_writer, out_format, whole_lines
from .outputs.progress import ProgressLine, wanted
from .inputs.batch import BATCH_LINES, Batch
from .inputs.delimited import csv_header
from .inputs.lines import LineOffsets, line_chunks, ticking_chunks
from .inputs.mapping import Mapping
from .inputs.registry import by_name, names
from .inputs.streams import header_of, input_format, read_live, resumed_batches, times_are_dates

if TYPE_CHECKING:
    from .events import Detection
    from .outputs.output import DetectionWriter
    from .outputs.report import Readable

# the exit statuses, as README.md's table gives them
EXIT_OK = 0
EXIT_FAILURE = 1        # an input, an output or Spark failed
EXIT_RULES = 2          # the rule file (or a file read with it), or the command line
EXIT_USAGE = EXIT_RULES
EXIT_LIMIT = 3          # an event took more than the inference limit
EXIT_BUG = 70           # an error that etalis does not know: a bug to report
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


def said(e: BaseException) -> str:
    """An error in words: a system's error on a file as the file and the
    system's reason (not ``[Errno 2] ...: 'x'``), others as their text."""
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}"
    return re.sub(r"^\[Errno \d+\] ", "", str(e))


class _Parser(argparse.ArgumentParser):
    """A command line that does not parse is said in two lines, what is
    wrong and where the options are listed, not with the whole usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n  hint: {self.prog} --help lists the options\n")


def policy_option(text: str) -> str:
    """``--policy``: a policy the engine knows, or the engine's reason why not."""
    try:
        return check_policy(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _count(text: str) -> int:
    """An option's number that must be 1 or more."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"give 1 or more, not {n}")
    return n


def _columns(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def add_mapping_options(p: argparse.ArgumentParser) -> None:
    """The options that map table rows to events (shared with ``replay``)."""
    g = p.add_argument_group("mapping rows to events (.csv)")
    g.add_argument("--event", help="the event name of every row")
    g.add_argument("--event-col", metavar="COL", help="the column holding the event name")
    g.add_argument("--args", type=_columns, default=[], metavar="COL,COL,...", help="argument columns, in order")
    g.add_argument("--time", metavar="COL", help="the time column")
    g.add_argument("--time-format", metavar="FMT", help="strptime format of the time column (default: seconds or ISO 8601)")
    g.add_argument("--time-zone", metavar="ZONE",
                   help="the zone of times written without one, an IANA name such as America/New_York (default: UTC)")
    g.add_argument("--columns", type=_columns, metavar="COL,COL,...", help="column names of a file without a header")
    g.add_argument("--graph-col", metavar="COL",
                   help="each row is the event graph(G): G is the RDF graph in COL (N-Triples or JSON-LD)")


def mapping_from(ns: argparse.Namespace, stream: Optional[str] = None) -> Mapping:
    """The mapping of the options of ``ns`` (its graphs on ``stream``, if given)."""
    return Mapping.of(event=ns.event, event_col=ns.event_col, args=ns.args, time=ns.time, time_format=ns.time_format,
                      time_zone=ns.time_zone, columns=ns.columns, graph_col=ns.graph_col, stream=stream)


def input_format_option(text: str) -> str:
    """``--input-format``: the name of a format of the registry (see :mod:`etalis_py.inputs.registry`)."""
    try:
        return by_name(text).name
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def spark_format_option(text: str) -> str:
    """``--input-format`` of stream: a format that Spark reads."""
    name = input_format_option(text)
    if by_name(name).spark is None:
        spark = [n for n in names() if by_name(n).spark is not None]
        raise argparse.ArgumentTypeError(f"Spark does not read {name}: use one of {', '.join(spark)}")
    return name


def table_format_option(text: str) -> str:
    """``--input-format`` of replay: a table that Spark reads."""
    name = spark_format_option(text)
    if by_name(name).spark == "text":
        raise argparse.ArgumentTypeError(f"replay reads tables, not {name} (etalis stream reads them)")
    return name


def add_input_options(p: argparse.ArgumentParser) -> None:
    """Where ``run`` reads its events: a file, standard input, a growing file."""
    p.add_argument("events_file", type=Path, nargs="?", metavar="EVENTS", help="the stream file, as --events gives it")
    p.add_argument("--events", type=Path, metavar="FILE",
                   help="stream file: .jsonl, .csv, .parquet, .pl, .events, or graphs: .nq, .trig, .jsonld; "
                   "- reads standard input")
    p.add_argument("--input-format", type=input_format_option, metavar="FORMAT",
                   help="the stream's format (default: by the file's extension; for - csv when --time is given, "
                   "else jsonl when the first line starts with {, else events)")
    p.add_argument("--follow", action="store_true",
                   help="keep reading the file as it grows (tail -f), until Ctrl-C or --follow-timeout")
    p.add_argument("--follow-timeout", type=float, metavar="SECONDS",
                   help="with --follow: stop once the file has not grown for this long")
    p.add_argument("--stream", type=_stream_iri, metavar="IRI",
                   help="graphs (.nq, .trig, .jsonld, --graph-col) are on the stream IRI, asked with graph_stream(G, S), "
                   "unless a dcterms:isPartOf triple of the default graph names a graph's own")


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"give a number of events of at least 1, not {text}")
    return n


def add_live_options(p: argparse.ArgumentParser) -> None:
    """Checkpoints, the wall clock and the timers at the end (docs/live.md)."""
    g = p.add_argument_group("running live (docs/live.md)")
    g.add_argument("--checkpoint", type=Path, metavar="DIR",
                   help="keep the run's state and positions in DIR, every --checkpoint-every events, on Ctrl-C, "
                   "SIGTERM and at the end; the same command with the same DIR resumes where it stopped")
    g.add_argument("--checkpoint-every", type=_positive, default=10_000, metavar="N",
                   help="with --checkpoint: a checkpoint after every N events read (default 10,000)")
    g.add_argument("--clock", choices=("event", "wall"), default="event",
                   help="wall (--follow or standard input): while no event comes, time follows the machine's "
                   "clock less the lateness, so timers and fnot deadlines fire when due (events in epoch "
                   "seconds); event (default): time is the events' only")
    g.add_argument("--flush-timers", action="store_true",
                   help="at the end of the input, fire every timer still pending (by default they stay "
                   "pending: the end of a file is not the end of time)")


def _stream_iri(text: str) -> str:
    if not text or any(c in text for c in '<>"{}|^`\\ \t\n'):
        raise argparse.ArgumentTypeError(f"not an IRI: {text!r}")
    return text


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """What ``run`` and ``replay`` both give the engine, and what both
    write beside a detection."""
    p.add_argument("--policy", type=policy_option, metavar="POLICY",
                   help="default consumption policy (overrides the file's): " + ", ".join(POLICIES)
                   + ", or recent(P)/chronological(P) with P longer, shorter or greater(N), or a selection "
                   "strategy (" + ", ".join(STRATEGIES) + ")")
    p.add_argument("--max-age", type=float, metavar="SECONDS",
                   help="drop pending goals of patterns without a window once older than this")
    p.add_argument("--ontology", type=Path, action="append", default=[], metavar="FILE",
                   help="background knowledge for rdf/3 and isa/2 (Turtle, RDF/XML or N-Triples); may be repeated")
    p.add_argument("--entailment", choices=("rdfs", "owlrl", "none"), default=None,
                   help="what the ontologies are closed under (default rdfs)")
    p.add_argument("--explain", action="store_true",
                   help="give each detection its provenance: the input events it was built from")
    p.add_argument("--names", type=Path, metavar="CSV",
                   help="with --format table: names of argument values, a CSV file with the header value,name "
                   "(or value,name,tz: without --tz, each row in its first argument's zone, as etalis table)")


def add_time_options(p: argparse.ArgumentParser) -> None:
    """How the start and end of detections are written (``run`` and ``replay``)."""
    g = p.add_argument_group("times of detections (output)")
    one = g.add_mutually_exclusive_group()
    one.add_argument("--iso", action="store_true",
                     help="write start and end as ISO 8601 dates with their offset (default: seconds)")
    one.add_argument("--strftime", metavar="FMT",
                     help="write start and end in this strftime format (--time-format is the input's format)")
    g.add_argument("--tz", metavar="ZONE", help="the time zone of --iso and --strftime, and of --format table: an IANA "
                   "name (default UTC); alone, it means --iso in that zone")


def time_style(ns: argparse.Namespace) -> TimeStyle:
    """The times of the output: ``--tz`` alone means ISO 8601 dates in that zone."""
    return TimeStyle(ns.iso or (ns.tz is not None and ns.strftime is None), ns.strftime, ns.tz)


def readable_of(ns: argparse.Namespace) -> "Readable":
    """How ``table``, ``plot`` and ``--format table`` show detections: in
    ``--tz`` (default UTC), or, without it, each in the zone of its first
    argument that has one in a ``--names`` file with a tz column."""
    from .outputs.report import Readable, read_names, read_zones

    return Readable(tz=ns.tz or "UTC", names=read_names(ns.names) if ns.names else {},
                    args=getattr(ns, "show_args", True), zones=read_zones(ns.names) if ns.names and ns.tz is None else {})


def add_quiet_option(p: argparse.ArgumentParser, progress: bool = False) -> None:
    """``--quiet`` means the same on every command; ``--progress`` too."""
    p.add_argument("--quiet", action="store_true",
                   help="no per-line reports (rejected rows, warnings) and no progress line; "
                   "the summary and errors are still printed" if progress else
                   "only the errors and the summary, no warnings or notes")
    if progress:
        p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="a progress line on stderr once the command has run for a second "
                       "(default: when stderr is a terminal and not --quiet)")


def add_static_option(p: argparse.ArgumentParser) -> None:
    """``--static FILE``: static knowledge beside the rule file."""
    p.add_argument("--static", type=Path, action="append", default=[], metavar="FILE",
                   help="a file of Prolog facts and static rules read before the rule file (as an ETALIS "
                   "test driver consults its .db file), sandboxed as the rule file is; may be repeated")


def add_trust_options(p: argparse.ArgumentParser) -> None:
    """``--trusted`` lifts the sandbox that rule files run in by default;
    ``--sandbox`` (the default) is accepted for compatibility."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--trusted", action="store_true",
                   help="the rule file is trusted: let it run any Prolog (shell, files, assert, hooks); "
                   "by default rule files are sandboxed")
    g.add_argument("--sandbox", action="store_true",
                   help="refuse rules that could run shell, file, network or database goals (the default)")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="etalis", description="Complex event reasoning with ETALIS rules.")
    p.add_argument("--version", action="version", version=f"etalis {__version__}", help="print the version and exit")
    # the subcommands are _Parser too: they inherit its class
    sub = cast("argparse._SubParsersAction[argparse.ArgumentParser]",
               p.add_subparsers(dest="command", required=True, metavar="COMMAND", help="what to do"))

    run = sub.add_parser("run", help="process a stream file and print detections as JSON lines")
    run.add_argument("rules", type=Path, help="the .etl rule file")
    add_input_options(run)
    add_quiet_option(run, progress=True)
    run.add_argument("--out", type=Path, metavar="FILE", help="write the detections to FILE (default: stdout)")
    run.add_argument("--format", choices=OUT_FORMATS, default=None,
                     help="jsonl (default), csv (a column per argument), parquet (needs --out) or table "
                     "(etalis table's, at the end, in --tz; with --explain a line under each detection names its input "
                     "events); default: by --out's extension")
    add_engine_options(run)
    add_time_options(run)
    add_static_option(run)
    add_trust_options(run)
    run.add_argument("--lateness", type=float, metavar="SECONDS",
                     help="accept events up to this late and match them as if in time order")
    run.add_argument("--inference-limit", type=int, metavar="N",
                     help="stop with an error at an event that takes more than N Prolog inferences "
                     "(default 10,000,000; 0: no limit)")
    add_live_options(run)
    add_mapping_options(run)

    add_replay_parser(sub)
    add_stream_parser(sub)

    check = sub.add_parser("check", help="report problems in a rule file (docs/language.md, Checking rules)")
    check.add_argument("rules", type=Path, help="the .etl rule file")
    add_quiet_option(check)
    add_static_option(check)
    add_trust_options(check)
    check.add_argument("--format", choices=("text", "json"), default="text",
                       help="text: one finding a line, then a summary; json: one JSON document")
    check.add_argument("--dot", type=Path, metavar="FILE",
                       help="write the event dependency graph in Graphviz dot, cycles in red")
    check.add_argument("--strict", action="store_true", help="exit 1 when there are warnings")

    comp = sub.add_parser("compile", help="print the binary goals and generated clauses")
    comp.add_argument("rules", type=Path, help="the .etl rule file")
    comp.add_argument("--policy", type=policy_option, metavar="POLICY", help="as for run")
    add_static_option(comp)
    add_trust_options(comp)
    add_readable_parsers(sub)
    add_import_parser(sub)
    add_serve_parser(sub)
    return p


def _size(text: str) -> int:
    """A number of bytes: ``1048576``, ``512K``, ``8M``."""
    scale = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:].upper(), 1)
    try:
        value = int(text[:-1] if scale > 1 else text) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size in bytes: {text!r} (e.g. 8M)") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a size must be at least 1 byte, not {text!r}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port (0 to 65535): {text!r}")
    return value


def _whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a whole number >= 1: {text!r}")
    return value


def add_serve_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis serve``: rule sets over HTTP (docs/service.md)."""
    srv = sub.add_parser("serve", help="serve rule sets over HTTP: events in, detections out (docs/service.md)")
    srv.add_argument("rules", type=Path, nargs="*", metavar="RULES",
                     help=".etl files registered at start under their file names (sandboxed)")
    srv.add_argument("--host", default="127.0.0.1",
                     help="the address to listen on (default 127.0.0.1; other than loopback only with --token-file)")
    srv.add_argument("--port", type=_port, default=8080, help="the port (default 8080; 0: any free port, printed)")
    srv.add_argument("--token-file", type=Path, metavar="FILE",
                     help="a file holding the bearer token that every write (POST, DELETE) must give")
    srv.add_argument("--checkpoint", type=Path, metavar="DIR",
                     help="keep rule sets, engine state and detections here: they survive a restart")
    srv.add_argument("--max-body", type=_size, default=8 * 1024 * 1024, metavar="BYTES",
                     help="the largest request body, e.g. 8M (default); a larger one gets 413")
    srv.add_argument("--buffer", type=_whole, default=10_000, metavar="N",
                     help="the detections each rule set keeps for subscribers that reconnect (default 10000)")


def parse(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line, or exit 2 with the command's usage: an unknown
    option is named with the command's closest options (``--polcy``:
    did you mean ``--policy``?)."""
    import difflib

    p = parser()
    ns, extras = p.parse_known_args(argv)
    commands = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    command: argparse.ArgumentParser = commands.choices[ns.command]
    if extras:
        options = [o for a in command._actions for o in a.option_strings if o.startswith("--")]
        unknown = [x.partition("=")[0] for x in extras if x.startswith("-")]
        close = difflib.get_close_matches(unknown[0], options, n=2) if unknown else []
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        command.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
    if ns.command == "run":
        _stream_argument(ns, command)
    return ns


def _stream_argument(ns: argparse.Namespace, command: argparse.ArgumentParser) -> None:
    """``run``'s stream: ``--events FILE`` or the second argument (``etalis
    run rules.etl -``), one of them."""
    if ns.events_file is not None and ns.events is not None:
        command.error(f"two streams: {ns.events_file} and --events {ns.events}; give one")
    if ns.events_file is None and ns.events is None:
        hint = " (--event names the event of every row: did you mean --events -?)" if ns.event == "-" else ""
        command.error(f"give the stream: etalis run RULES EVENTS, or --events EVENTS (- reads standard input){hint}")
    ns.events = ns.events if ns.events is not None else ns.events_file


def _warning_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Optional[TextIO] = None, line: Optional[str] = None) -> None:
    """A Python warning on the command line: one line, not the source line
    that raised it."""
    print(f"etalis: warning: {message}", file=file or sys.stderr)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ns = parse(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _warning_line
        # the checks that run, replay and check print say it, with its hint
        warnings.filterwarnings("ignore", r".*: the file is not UTF-8 \(from here\)", EtalisWarning)
        return _command(ns)


def _command(ns: argparse.Namespace) -> int:
    try:
        if ns.command == "run":
            return run(ns, sys.stdout, sys.stderr)
        if ns.command == "check":
            return check(ns, sys.stdout, sys.stderr)
        if ns.command == "replay":
            return replay(ns, sys.stdout, sys.stderr)
        if ns.command == "stream":
            return stream(ns, sys.stdout, sys.stderr)
        if ns.command == "compile":
            sys.stdout.write(compile_listing("", path=str(ns.rules), policy=ns.policy, trusted=ns.trusted,
                                             static=ns.static))
            return EXIT_OK
        if ns.command in ("table", "plot"):
            return readable_output(ns, sys.stdout, sys.stderr)
        if ns.command == "import-etalis":
            return import_etalis(ns, sys.stdout, sys.stderr)
        if ns.command == "serve":
            from .service import ServeOptions, serve   # the HTTP stack, loaded by this command only

            return serve(ServeOptions(ns.rules, ns.host, ns.port, ns.token_file, ns.checkpoint, ns.max_body,
                                      ns.buffer), sys.stderr)
    except RuleFileNotFound as e:
        print(f"etalis: {e}", file=sys.stderr)
        return EXIT_RULES
    except RuleError as e:
        print(e, file=sys.stderr)
        return EXIT_RULES
    except _ontology_error() as e:  # evaluated only when an exception passes: rdflib loads lazily
        print(e, file=sys.stderr)
        return EXIT_RULES
    except BrokenPipeError:
        return EXIT_OK
    except EtalisError as e:  # the engine failed: say so in words, not with a traceback
        print(f"etalis: {e}", file=sys.stderr)
        return EXIT_FAILURE
    except (ValueError, OverflowError, OSError) as e:    # what a command did not say itself, still in words
        print(f"etalis: {said(e)}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:   # before a run reads events (loading the rules), or another command
        print(f"etalis: interrupted ({ns.command} did not finish)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:      # every known error has its message above: this one is a bug
        print(f"etalis: internal error: {type(e).__name__}: {e}\n  hint: please report it, with the command line "
              f"and its files (etalis {__version__})", file=sys.stderr)
        return EXIT_BUG
    return EXIT_FAILURE


def _ontology_error() -> type[Exception]:
    from .rdf.knowledge import OntologyError

    return OntologyError


@dataclass(frozen=True)
class _Input:
    """``run``'s input: its batches, and what tells where a batch ends in
    bytes (None for Parquet, read by rows)."""

    batches: Iterator[Batch]
    offsets: Optional[LineOffsets]


def event_batches(ns: argparse.Namespace, stdin: Optional[BinaryIO] = None, packed: bool = False,
                  at: Position = Position(), header: Optional[list[str]] = None,
                  batch_lines: int = BATCH_LINES) -> _Input:
    """The batches of ``run``'s input: the file, standard input (``-``), or
    the file as it grows (``--follow``); a file's tables and JSON lines as
    packed columns if ``packed``; from ``at`` on (a resumed run: a CSV
    stream's columns are then ``header``).  With ``--clock wall``, idle
    batches while a live source has nothing."""
    mapping = mapping_from(ns)
    if ns.stream is not None:
        kind = ns.input_format or (None if str(ns.events) == "-" else input_format(ns.events).name)
        if ns.graph_col is None and kind is not None and not by_name(kind).graphs:
            raise ValueError(f"--stream names the stream of graph events (.nq, .trig, .jsonld or --graph-col); "
                             f"{ns.events} is read as {kind}, whose events are not graphs")
        mapping = replace(mapping, stream=ns.stream)
    if header is not None and at.line > 1:
        mapping = replace(mapping, columns=tuple(header))
    wall = ns.clock == "wall"
    if str(ns.events) == "-":
        if ns.follow:
            raise ValueError("--follow follows a growing file; standard input (-) is read until it ends anyway")
        source = stdin or sys.stdin.buffer
        lines = LineOffsets(ticking_chunks(source.fileno(), _TICK) if wall else line_chunks(source, 1 << 16), at.line)
        return _Input(read_live(lines, ns.input_format, mapping, batch_lines, first_line=at.line), lines)
    if wall and not ns.follow:
        raise ValueError("--clock wall is for a live stream: --follow a growing file, or standard input (-); "
                         "a file's events carry their own times")
    batches, offsets = resumed_batches(ns.events, mapping, ns.input_format, packed, at.line, at.offset or 0,
                                       ns.follow, ns.follow_timeout, wall, batch_lines)
    return _Input(batches, offsets)


# How often a live source that has nothing says so, for --clock wall (seconds)
_TICK = 0.1


@dataclass
class _Run:
    """What ``run`` counts, and where it is: the summary's counters and the
    position after the last batch processed."""

    accepted: int = 0
    rejected: int = 0
    detections: int = 0
    warnings: int = 0
    raised: int = 0
    line: int = 1           # the first line of the input not processed
    since: int = 0          # events read since the last checkpoint


class _Checkpoints:
    """``run --checkpoint DIR``: the checkpoint to resume from, and taking
    new ones: the engine's snapshot and the positions are taken between
    two batches, then, on the writer's thread while the engine goes on,
    the output is synced up to (at least) the size it had and the
    checkpoint replaced."""

    def __init__(self, ns: argparse.Namespace) -> None:
        self.directory: Path = ns.checkpoint
        self.events: Optional[Path] = None if str(ns.events) == "-" else ns.events
        self.kind = ns.input_format or (input_format(self.events).name if self.events is not None else
                                        "csv" if ns.time is not None else None)
        self.run = {"rules": str(ns.rules), "rules_sha256": rules_hash([*ns.static, ns.rules]),
                    "events": str(ns.events), "out": None if ns.out is None else str(ns.out),
                    "format": out_format(ns.format, ns.out)}
        if self.run["format"] not in ("jsonl", "csv"):
            raise ValueError(f"--checkpoint resumes output written as it goes: --format jsonl or csv, not "
                             f"{self.run['format']} (written at the end)")
        self.directory.mkdir(parents=True, exist_ok=True)
        self.resumed = Checkpoint.load(self.directory)
        self.header: Optional[list[str]] = list(ns.columns) if ns.columns else None
        if self.resumed is not None:
            self.resumed.check_run(self.run, self.directory)
            if self.events is not None:
                check_input(self.events, self.resumed.input)
            if self.header is None:
                self.header = self.resumed.header
        self.writer = CheckpointWriter()
        self.line = 0
        """The input line of the checkpoint taken last (what a failure names)."""

    def save(self, engine: Engine, counts: _Run, sink: "DetectionWriter", offsets: Optional[LineOffsets]) -> None:
        """Take a checkpoint and hand it to the writer, once the one before
        it is durable (a failure of either is raised)."""
        self.writer.wait()
        self.line = counts.line
        if self.kind == "csv" and self.header is None and offsets is not None and offsets.head is not None:
            self.header = csv_header(offsets.head)
        at = Position(counts.line, None if offsets is None or self.events is None else offsets.offset(counts.line))
        state = engine.snapshot()
        out = flushed(sink)
        size, fd = out if out is not None else (counts.detections, None)
        taken = Checkpoint(self.run, at, size, Counters(counts.accepted, counts.rejected, counts.detections,
                                                        counts.warnings, counts.raised), state, self.header)
        events, directory = self.events, self.directory

        def durable() -> None:
            if fd is not None:
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            seen = "" if events is None or at.offset is None else seen_hash(events, at.offset)
            replace(taken, input=replace(at, seen=seen)).save(directory)

        self.writer.submit(durable)
        counts.since = 0


def run(ns: argparse.Namespace, out: TextIO, err: TextIO, clock: Optional[Callable[[], float]] = None,
        wall: Callable[[], float] = time.time) -> int:
    problem = None if str(ns.events) == "-" else unreadable("events file", ns.events)
    if problem:
        print(f"etalis: {problem}", file=err)
        return EXIT_FAILURE
    source = "<stdin>" if str(ns.events) == "-" else str(ns.events)
    try:
        checkpoints = _Checkpoints(ns) if ns.checkpoint is not None else None
    except (ValueError, OSError) as e:
        print(f"etalis: {e}", file=err)
        return EXIT_FAILURE
    resumed = checkpoints.resumed if checkpoints is not None else None
    # the rule file is read once: the engine keeps what the checks below need
    engine = Engine.from_file(ns.rules, policy=ns.policy, static=ns.static, trusted=ns.trusted, max_age=ns.max_age,
                              lateness=ns.lateness, explain=ns.explain,
                              inference_limit=ns.inference_limit, analysis=not ns.quiet)
    try:
        if ns.ontology or ns.entailment:
            engine.load_ontology(ns.ontology, ns.entailment or "rdfs")
        if resumed is not None:
            engine.restore(resumed.state)
            if ns.out is not None:
                resume_output(ns.out, resumed.output)
    except ValueError as e:
        engine.close()
        print(f"etalis: {e}", file=err)
        return EXIT_FAILURE
    except BaseException:
        engine.close()
        raise
    try:
        readable = readable_of(ns) if ns.format == "table" else None
        # with explain the engine's reported events carry their provenance
        # as one more argument, and engine.printed counts it
        arity = max_arity(engine.printed) - (1 if ns.explain else 0)
        dates = ns.time_format is not None or (str(ns.events) != "-" and times_are_dates(
            ns.events, input_format(ns.events, ns.input_format).name, mapping_from(ns)))
        sink = open_writer(ns.format, ns.out, whole_lines(out) if ns.out is None else out, time_style(ns), arity,
                           ns.explain, readable, dates, append=resumed is not None)
    except (ValueError, OSError) as e:
        engine.close()
        print(f"etalis: {said(e)}", file=err)
        return EXIT_FAILURE
    # the summary counts what was printed: the rule file's errors and
    # warnings (none under --quiet, which leaves the checks out), then the run's
    errors, warnings = (0, 0)
    if not ns.quiet:
        rule_file = engine.rule_file()
        errors, warnings = report_findings(rule_file, err, ns.max_age)
        warnings += report_unused_event(rule_file, mapping_from(ns), err,
                                        None if str(ns.events) == "-" else ns.events, ns.input_format)
    started = time.perf_counter()
    cpu_started = time.process_time()
    counts = _Run()
    if resumed is not None:
        c = resumed.counters
        counts = _Run(c.accepted, c.rejected, c.detections, c.warnings, c.raised, resumed.input.line)
    progress = ProgressLine(err, wanted(ns.progress, err, ns.quiet), clock=clock)
    lateness = ns.lateness or 0.0

    def status(elapsed: float) -> str:
        read = counts.accepted + counts.rejected
        return (f"etalis run {elapsed:.0f} s: rows read {read} ({read / max(elapsed, 1e-9):.0f} rows/s), "
                f"detections {counts.detections}, rejected {counts.rejected}")

    def warned(ws: list[Rejection], where: str) -> None:
        counts.warnings += len(ws)
        if ws and not ns.quiet:
            progress.clear()
            for w in ws:
                print(f"{source}: warning: {where}: {w.reason}", file=err)

    def checkpoint() -> bool:
        """Take a checkpoint; whether it and the one before it were taken
        (when the engine has no room to write its state, or a file cannot
        be written, the one before stays as it was)."""
        return checkpoints is None or said_failure(lambda: checkpoints.save(engine, counts, sink,
                                                                          source_input.offsets))

    def written() -> bool:
        """Wait until the checkpoint taken last is durable; whether it is."""
        return checkpoints is None or said_failure(checkpoints.writer.wait)

    def said_failure(step: Callable[[], None]) -> bool:
        """Run ``step`` of a checkpoint; whether it did not fail (else the
        error is said, with the line of the checkpoint that failed)."""
        assert checkpoints is not None
        try:
            step()
        except (EtalisError, OSError) as e:
            progress.clear()
            print(f"{source}:{checkpoints.line}: error: the checkpoint could not be taken, the last one in "
                  f"{checkpoints.directory} stays: {said(e)}", file=err)
            return False
        return True

    stopped = unwritten = False
    interrupt = _Interrupt()
    repeated = _Repeated()
    try:
        with interrupt:
            source_input = event_batches(ns, packed=engine.columnar(),
                                         at=resumed.input if resumed is not None else Position(),
                                         header=checkpoints.header if checkpoints is not None else None,
                                         batch_lines=min(BATCH_LINES, ns.checkpoint_every)
                                         if checkpoints is not None else BATCH_LINES)
            while (batch := interrupt.next_batch(source_input.batches)) is not None:
                if interrupt.requested and checkpoints is not None:
                    break       # read as the signal came: perhaps not whole; read again on resuming
                if batch.idle:
                    moved = engine.advance_lines(wall() - lateness)
                    sink.write(moved.detection_lines)
                    counts.detections += moved.detection_lines.count("\n")
                    counts.raised += moved.raised
                    warned(moved.warnings, "as the clock moved on")
                    continue
                if batch.packed is not None:
                    result = engine.feed_packed(batch.packed, batch.first_line)
                else:
                    result = engine.feed_text(batch.text, batch.first_line, batch.terms)
                sink.write(result.detection_lines)
                counts.detections += result.detection_lines.count("\n")
                counts.accepted += result.accepted
                counts.raised += result.raised
                bad = sorted(batch.rejected + result.rejected, key=lambda r: r.line)
                if result.stopped:      # the lines after the stopped one were read, not processed
                    bad = [r for r in bad if r.line < result.stopped.line]
                counts.rejected += len(bad) + (result.stopped is not None)  # the stopped event: read, not processed
                counts.warnings += len(result.warnings)
                if not ns.quiet and (bad or result.warnings):
                    progress.clear()
                    for r in bad:
                        print(f"{source}:{r.line}: rejected: {in_input_times(r.reason, dates, ns)}", file=err)
                    for w in result.warnings:
                        if repeated.seen(w):
                            print(f"{source}:{w.line}: warning: {w.reason}", file=err)
                if result.stopped:
                    progress.clear()
                    print(f"{source}:{result.stopped.line}: error: {result.stopped}", file=err)
                    stopped = True
                    break
                if checkpoints is not None:
                    counts.line = batch.end_line
                    counts.since += len(bad) + result.accepted
                    if counts.since >= ns.checkpoint_every and not checkpoint():
                        stopped = True
                        break
                progress.show(status)
            if not stopped and not checkpoint():    # before the end: a resumed run goes on from here
                stopped = True
            if not written():
                stopped = True
            raised_before = engine.stats().raised
            if not stopped and not (interrupt.requested and checkpoints is not None):
                try:
                    ws: list[Rejection] = []
                    tail = engine.flush_lines(ws, timers=ns.flush_timers)
                    warned(ws, "at the end of the stream")
                except InferenceLimitError as e:        # an event held back by a lateness
                    progress.clear()
                    print(f"{source}:{e.line}: error: {e}", file=err)
                    stopped, tail = True, ""
                sink.write(tail)
                counts.detections += tail.count("\n")
            seconds = time.perf_counter() - started
            cpu_seconds = time.process_time() - cpu_started
            stats = engine.stats()
            pending = stats.pending
            counts.raised += stats.raised - raised_before     # the timers the end of the stream fired
    except ValueError as e:
        print(f"etalis: {e}", file=err)
        return EXIT_FAILURE
    finally:
        progress.clear()
        if checkpoints is not None:
            try:     # a run that failed still ends the checkpoint being written, before the output is closed
                checkpoints.writer.wait()
            except (EtalisError, OSError):
                pass    # the one before it stays, and the run says why it failed
        try:
            sink.close()
        except (ValueError, OverflowError) as e:    # a table or Parquet file of times that are no dates
            print(f"etalis: the detections cannot be written: {e}", file=err)
            unwritten = True
        finally:
            engine.close()
    for line in repeated.counts(source):
        print(line, file=err)
    if interrupt.requested:
        what = "terminated (SIGTERM)" if interrupt.signum == signal.SIGTERM else "interrupted"
        print(f"etalis: {what}: stopped after {counts.accepted + counts.rejected} events", file=err)
    raised = counts.raised
    print(
        f"events read: {counts.accepted + counts.rejected}, accepted: {counts.accepted}, "
        f"{f'raised by rules (event/1, timers): {raised}, ' if raised else ''}rejected: {counts.rejected}, "
        f"detections: {counts.detections}, {f'errors: {errors}, ' if errors else ''}"
        f"warnings: {warnings + counts.warnings}, "
        f"seconds: {seconds:.3f}, pending: {pending}, "
        f"cpu seconds: {cpu_seconds:.3f}",
        file=err,
    )
    if stopped:
        return EXIT_LIMIT
    if interrupt.requested:
        return EXIT_TERMINATED if interrupt.signum == signal.SIGTERM else EXIT_INTERRUPTED
    return EXIT_FAILURE if unwritten else EXIT_OK


_LATE = re.compile(r"time (\S+) is earlier than the last accepted time (\S+) \(events must arrive in time order\)")
_TOO_LATE = re.compile(r"time (\S+) is more than the lateness \((\S+) s\) before the latest time (\S+)")


def _plan_rules(ns: argparse.Namespace) -> tuple[str, list[str]]:
    """The text of ``--plan``'s rule file and the events its rules print."""
    problem = unreadable("rule file", ns.rules)
    if problem:
        raise RuleFileNotFound(problem)
    engine = Engine.from_file(ns.rules, policy=ns.policy, trusted=ns.trusted, static=ns.static)
    try:
        return ns.rules.read_text(encoding="utf-8"), list(engine.printed)
    finally:
        engine.close()


def in_input_times(reason: str, dates: bool, ns: argparse.Namespace) -> str:
    """A rejection of an event out of time order, with its times as the
    input writes them (dates in ``--time-format`` or ISO 8601, in
    ``--time-zone``, when it writes dates) and what ``--lateness`` does;
    any other reason as it is."""
    def text(seconds: str) -> str:
        return format_time(float(seconds), ns.time_format, ns.time_zone) if dates else seconds

    if m := _LATE.fullmatch(reason):
        return (f"time {text(m[1])} is earlier than the last accepted time {text(m[2])} (events must arrive in "
                "time order; --lateness SECONDS accepts events up to that late)")
    if m := _TOO_LATE.fullmatch(reason):
        return (f"time {text(m[1])} is more than the lateness ({m[2]} s) before the latest time {text(m[3])} "
                "(a larger --lateness accepts it)")
    return reason


class _Repeated:
    """The warnings of a run, each text said once: at its first line, and
    at the end how often it came (the summary counts them all)."""

    def __init__(self) -> None:
        self._lines: dict[str, tuple[int, int, int]] = {}     # text: first line, last line, times

    def seen(self, warning: Rejection) -> bool:
        """Count ``warning``; whether it is the first of its text."""
        first, _, times = self._lines.get(warning.reason, (warning.line, 0, 0))
        self._lines[warning.reason] = (first, warning.line, times + 1)
        return times == 0

    def counts(self, source: str) -> list[str]:
        return [f"{source}:{first}: warning: the warning of line {first} came {times:,} times, the last at line {last}"
                for first, last, times in self._lines.values() if times > 1]


class _Interrupt:
    """Ctrl-C (SIGINT) and SIGTERM during ``etalis run``.  Both are blocked
    except while the next batch of events is read, so the engine is never
    interrupted in the middle of a batch (its state would be half updated
    and the batch's detections lost), nor is the writing of detections or
    of a checkpoint (a write to a pipe that a signal interrupts can lose
    text).  A signal that comes during a batch waits for its end; one
    during the reading stops it at once.  Then the run ends as at the end
    of its input (without a checkpoint, the events held back by a lateness
    are still processed), and the summary is printed."""

    _SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested = False
        self.signum: Optional[int] = None
        self._previous: dict[int, Any] = {}
        self._installed = False
        self._reading = False

    def _handle(self, signum: int, frame: Optional[FrameType]) -> None:
        self.requested = True
        self.signum = signum
        # Python runs handlers in the main thread even when the signal came
        # to a thread that does not block it (a reader's worker pool): only
        # the reading is stopped at once, the rest ends at the next batch
        if self._reading:
            raise KeyboardInterrupt

    def __enter__(self) -> "_Interrupt":
        try:
            for s in self._SIGNALS:
                self._previous[s] = signal.signal(s, self._handle)
        except ValueError:          # not the main thread: no signals here
            return self
        self._installed = True
        self._mask(signal.SIG_BLOCK)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            for s, previous in self._previous.items():
                signal.signal(s, signal.SIG_DFL if previous is None else previous)
            self._mask(signal.SIG_UNBLOCK)

    def _mask(self, how: int) -> None:
        if self._installed:
            signal.pthread_sigmask(how, set(self._SIGNALS))

    def next_batch(self, batches: Iterator[Batch]) -> Optional[Batch]:
        """The next batch, or None at the end of the stream or on a signal."""
        if self.requested:
            return None
        try:
            self._reading = True
            self._mask(signal.SIG_UNBLOCK)
            return next(batches)
        except (StopIteration, KeyboardInterrupt):
            return None
        finally:
            self._reading = False
            self._mask(signal.SIG_BLOCK)


def add_replay_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis replay``: the same rules and mapping as ``run``, over a data
    set on Spark (docs/spark.md)."""
    rp = sub.add_parser("replay", help="replay a data set through the rules on Spark")
    rp.add_argument("rules", type=Path, help="the .etl rule file")
    rp.add_argument("--events", required=True, metavar="PATH",
                    help="the data: a CSV, Parquet or JSON-lines file or directory (local or a Hadoop URI)")
    rp.add_argument("--input-format", type=table_format_option, metavar="FORMAT",
                    help="the data's format: csv, parquet or jsonl (default: from the file name)")
    rp.add_argument("--stream", type=_stream_iri, metavar="IRI",
                    help="the graphs of --graph-col are on the stream IRI, asked with graph_stream(G, S)")
    rp.add_argument("--partition-by", metavar="COL",
                    help="the key column: rules whose events all carry the key run partitioned by it")
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
    from . import spark as sp
    from .spark.failures import spark_failure
    from .spark.planning import refuse_strict, refuse_timers, refuse_unbound_transfers

    try:
        mapping = mapping_from(ns, ns.stream)
        mapping.check()
        if ns.format == "table" and ns.out:
            raise ValueError("--format table is printed: leave out --out (or write jsonl there and use etalis table)")
        readable = readable_of(ns)
    except (ValueError, OSError) as e:
        print(f"etalis: {e}", file=err)
        return EXIT_FAILURE
    if ns.plan:
        text, printed = _plan_rules(ns)
        the_plan = sp.replay_plan(text, str(ns.rules), mapping, ns.partition_by)
        out.write(the_plan.explain(printed))
        # what replay refuses after planning, the plan refuses too (exit 2)
        refuse_timers(the_plan, str(ns.rules))
        refuse_unbound_transfers(the_plan, str(ns.rules))
        refuse_strict(the_plan, str(ns.rules), ns.policy)
        return EXIT_OK
    # the summary counts the rule file's errors and warnings printed here
    started = spark_start(ns, err)
    if started is None:
        return EXIT_FAILURE
    errors, warnings, conf = started
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
                           save_state=ns.save_state is not None)
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


def add_stream_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis stream``: replay's rules, mapping and plan, live on Spark
    Structured Streaming (docs/spark.md, Streaming)."""
    sp = sub.add_parser("stream", help="detect live on Spark Structured Streaming, as files land in a folder")
    sp.add_argument("rules", type=Path, help="the .etl rule file")
    sp.add_argument("--source", required=True, metavar="DIR|URL",
                    help="a folder whose new files are read as they land (CSV, JSON lines or Parquet), "
                    "socket://HOST:PORT or kafka://HOST:PORT/TOPIC (CSV lines, named by --columns)")
    sp.add_argument("--input-format", type=spark_format_option, metavar="FORMAT",
                    help="the files' format: csv, jsonl, parquet or events (default: from their names)")
    sp.add_argument("--partition-by", metavar="COL",
                    help="the key column: rules whose events all carry the key run with a state per key")
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
    from . import spark as sp
    from .spark import stream as live

    try:
        mapping = mapping_from(ns)
        # a plan is made without looking at the files
        fmt = (live.source_format(ns.source, ns.input_format) if not ns.plan
               else by_name(ns.input_format) if ns.input_format else None)
        lines = fmt is not None and fmt.spark == "text"
        if not lines:
            mapping.check()
        readable = readable_of(ns) if ns.print_as == "lines" else None
    except (ValueError, OSError) as e:
        print(f"etalis: {e}", file=err)
        return EXIT_FAILURE
    if ns.plan:
        text, printed = _plan_rules(ns)
        out.write(live.live_plan(text, str(ns.rules), mapping, ns.partition_by, ns.policy, lines).explain(printed))
        return EXIT_OK
    started = spark_start(ns, err)
    if started is None:
        return EXIT_FAILURE
    errors, warnings, conf = started
    stopping = _Stop()
    with stopping:
        spark = live.stream_session(ns.master, conf)
        rows = live.read_stream(spark, ns.source, mapping, fmt.name if fmt is not None else None,
                                ns.max_files_per_trigger)
        found = sp.detect_stream(rows, ns.rules, event=ns.event, event_col=ns.event_col, args=ns.args, time=ns.time,
                                 time_format=ns.time_format, time_zone=ns.time_zone, columns=ns.columns,
                                 graph_col=ns.graph_col, partition_by=ns.partition_by, policy=ns.policy,
                                 max_age=ns.max_age, lateness=ns.lateness, ontology=ns.ontology,
                                 entailment=ns.entailment, trusted=ns.trusted, explain=ns.explain, static=ns.static,
                                 initial_state=ns.initial_state, event_lines=lines)
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
        from .spark.stream import committed_files, detection_lines

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
            from .outputs.detections import read_detections

            self.out.write(self.readable.lines(read_detections(lines)))
        else:
            self.out.write("".join(line + "\n" for line in lines))
        self.out.flush()


def add_readable_parsers(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis table`` and ``etalis plot``: detections (the JSON lines of
    ``run`` or ``replay``) for people."""
    table = sub.add_parser("table", help="print detections as a table: dates, names, durations")
    plot = sub.add_parser("plot", help="draw detections as a timeline PNG, with input signals as lines")
    for p in (table, plot):
        p.add_argument("detections", help="the JSON lines of etalis run or replay; - reads standard input")
        p.add_argument("--tz", metavar="ZONE",
                       help="show times in this zone, an IANA name such as America/New_York (default UTC; "
                       "without it, a --names file with a tz column shows each row in its first argument's zone, "
                       "and a plot's axis in theirs when they share one)")
        p.add_argument("--names", type=Path, metavar="CSV",
                       help="names of argument values: a CSV file with the header value,name "
                       "(or value,name,tz: with each value's IANA time zone)")
    table.add_argument("--lines", action="store_true", help="a sentence per detection instead of a table")
    table.add_argument("--no-args", dest="show_args", action="store_false", help="leave the arguments out")
    plot.add_argument("-o", "--output", type=Path, required=True, metavar="PNG", help="the picture to write")
    plot.add_argument("--title", help="a title over the picture")
    plot.add_argument("--ylabel", metavar="TEXT", help="what the signals measure (default: their columns)")
    plot.add_argument("--level", type=float, action="append", default=[], metavar="VALUE",
                      help="mark this value on the signals with a dashed line (a rule's threshold); may be repeated")
    g = plot.add_argument_group("input signals drawn as lines (a .csv file)")
    g.add_argument("--events", type=Path, metavar="CSV", help="the input data")
    g.add_argument("--signal", action="append", default=[], metavar="COL", help="a column to draw; may be repeated")
    g.add_argument("--key", metavar="COL", help="a line per value of this column (a station)")
    g.add_argument("--keys", type=_columns, metavar="V,V,...",
                   help="the key values to draw (default: those that are arguments of the detections)")
    g.add_argument("--time", metavar="COL", help="the time column, read as run reads it")
    g.add_argument("--time-format", metavar="FMT", help="strptime format of the time column")
    g.add_argument("--time-zone", metavar="ZONE", help="the zone of times written without one (default: UTC)")
    g.add_argument("--columns", type=_columns, metavar="COL,COL,...", help="column names of a file without a header")


def readable_output(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``etalis table`` and ``etalis plot``."""
    from .outputs.detections import read_detections

    try:
        readable = readable_of(ns)
        readable.zone()
        if ns.detections == "-":
            stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
            detections = read_detections(stdin, "<stdin>")
        else:
            with open(ns.detections, encoding="utf-8", errors="surrogateescape") as f:
                detections = read_detections(f, ns.detections)
        if ns.command == "table":
            out.write(readable.lines(detections) if ns.lines else readable.table(detections))
            return EXIT_OK
        return plot(ns, detections, readable, err)
    except (OSError, ValueError) as e:
        print(f"etalis: {said(e)}", file=err)
        return EXIT_FAILURE


def plot(ns: argparse.Namespace, detections: Sequence["Detection"], readable: "Readable", err: TextIO) -> int:
    from .outputs.plot import Signal, SignalFile, Timeline
    from .outputs.report import value_text

    signals: list[Signal] = []
    quantity = "value"
    if ns.events is not None:
        if not (ns.signal and ns.time):
            raise ValueError("with --events, give the columns to draw with --signal COL and the time with --time COL")
        keys = set(ns.keys) if ns.keys else {value_text(a) for d in detections for a in d.args}
        source = SignalFile(ns.time, ns.signal, ns.key, ns.time_format, ns.columns, ns.time_zone)
        signals, skipped = source.read(ns.events, keys if ns.key else None, readable)
        if skipped:
            print(f"etalis: {ns.events}: {skipped} values without a number or a time were not drawn", file=err)
        quantity = ns.ylabel or ", ".join(ns.signal)
    timeline = Timeline(detections, signals, readable, ns.title, quantity, ns.level)
    fig = timeline.save(ns.output)
    width, height = fig.get_size_inches() * fig.dpi
    bars = len(fig.axes[-1].patches)
    lanes = len(timeline.lanes())
    print(f"{ns.output}: {bars} bar{'s' * (bars != 1)} in {lanes} lane{'s' * (lanes != 1)}, "
          f"{len(signals)} signal{'s' * (len(signals) != 1)}, {width:.0f} x {height:.0f} pixels", file=err)
    return EXIT_OK


def spark_start(ns: argparse.Namespace, err: TextIO) -> Optional[tuple[int, int, dict[str, str]]]:
    """Before ``replay`` or ``stream`` starts Spark: the rule file's errors
    and warnings printed (none under ``--quiet``), and the ``--conf``
    settings; None (said on ``err``) for a setting that is not KEY=VALUE."""
    errors, warnings = report_findings(RuleFile.read(str(ns.rules), static=[str(s) for s in ns.static]), err,
                                       ns.max_age) if not ns.quiet else (0, 0)
    conf = {}
    for item in ns.conf:
        k, sep, v = item.partition("=")
        if not sep:
            print(f"etalis: --conf {item}: give KEY=VALUE", file=err)
            return None
        conf[k.strip()] = v.strip()
    return errors, warnings, conf


def report_findings(rule_file: RuleFile, err: TextIO, max_age: Optional[float] = None) -> tuple[int, int]:
    """Print the errors and warnings of the rule file (not the notes) on
    ``err``, before ``run`` or ``replay`` processes events; return how
    many errors and warnings were printed."""
    shown = [f for f in findings(rule_file, max_age) if f.severity != "info"]
    for f in shown:
        print(f.text(), file=err)
    errors = sum(f.severity == "error" for f in shown)
    return errors, len(shown) - errors


def report_unused_event(rule_file: RuleFile, mapping: Mapping, err: TextIO,
                        events: Optional[Path] = None, kind: Optional[str] = None) -> int:
    """Warn when the event that ``--event`` makes of every row is the name
    of a column of the ``events`` file (``--event-col`` was meant), or one
    that no rule uses (a typo, or ``--args`` giving another arity), with
    the closest event the rules use: the run would detect nothing.
    Return the number of warnings printed (0 or 1)."""
    import difflib

    if mapping.event is None:
        return 0
    if events is not None and mapping.event in header_of(events, input_format(events, kind).name, mapping) \
            and mapping.event not in (mapping.time, *mapping.args):
        print(f"etalis: warning: --event {mapping.event} makes every row the event {mapping.event}, but "
              f"{mapping.event} is a column of {events}: did you mean --event-col {mapping.event}?", file=err)
        return 1
    rules_read = rule_file.rules
    inputs = {s for r in rules_read for s in r.body_sigs()} - {r.head.sig for r in rules_read}
    sig = Sig(mapping.event, len(mapping.args))
    if not inputs or sig in inputs:
        return 0
    names = sorted(str(s) for s in inputs)
    close = difflib.get_close_matches(str(sig), names, n=1)
    hint = f"; did you mean --event {Sig.parse(close[0]).name} with {Sig.parse(close[0]).arity} --args?" \
        if close else ""
    print(f"etalis: warning: no rule uses {sig}, the event --event makes of every row "
          f"(the rules' input events: {', '.join(names)}){hint}", file=err)
    return 1


def check(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``etalis check``: the findings of a rule file (``--quiet``: only the
    errors, and the summary); exit 0 when there are no errors (and no
    warnings under ``--strict``), 1 with warnings under ``--strict``, 2
    with errors."""
    import json

    rules: Path = ns.rules
    as_json = ns.format == "json"
    try:
        rf = RuleFile.read(str(rules), static=[str(f) for f in ns.static])
    except RuleError as e:
        if not as_json:
            raise
        out.write(json.dumps({"file": str(rules), "findings": [_rule_error(e).to_json()],
                              "summary": counts([_rule_error(e)])}) + "\n")
        return EXIT_RULES
    found = findings(rf)
    if ns.dot:
        try:
            ns.dot.write_text(dot(rf), encoding="utf-8")
        except OSError as e:
            print(f"etalis: --dot {said(e)}", file=err)
            return EXIT_FAILURE
    summary: dict[str, object] = {}
    failed: Optional[RuleError] = None
    try:
        engine = Engine.from_file(rules, static=ns.static, trusted=ns.trusted)
    except RuleError as e:   # the compiler's refusal, unless a finding says it already
        if not any(f.severity == "error" and (f.file, f.line) == (e.file, e.line) for f in found):
            failed = e
            found.append(_rule_error(e))
    else:
        summary = {"rules": engine.rule_count, "goals": engine.goal_count, "policy": engine.policy,
                   "reports": list(engine.printed)}
        engine.close()
    n = counts(found)
    if as_json:
        out.write(json.dumps({"file": str(rules), "findings": [f.to_json() for f in found],
                              "summary": {**n, **summary}}) + "\n")
    else:
        for f in found:     # --quiet: the errors only
            if (f is not found[-1] or failed is None) and (f.severity == "error" or not ns.quiet):
                print(f.text(), file=out)
        if failed is not None:
            print(failed, file=err)
        print(_summary(rules, n, summary), file=out)
    if n["error"]:
        return EXIT_RULES
    return EXIT_FAILURE if ns.strict and n["warning"] else EXIT_OK


def _rule_error(e: RuleError) -> Finding:
    return Finding("error", "rule-error", e.message, e.file, e.line, e.column, e.hint)


def _summary(rules: Path, n: dict[str, int], summary: dict[str, object]) -> str:
    tally = ", ".join(f"{k} {sev}{'s' if k != 1 and sev != 'info' else ''}" for sev, k in n.items() if k)
    status = "ok" if not n["error"] and not n["warning"] else tally
    text = f"{rules}: {status}"
    if summary:
        reports = summary["reports"]
        assert isinstance(reports, list)
        text += (f": {summary['rules']} rules, {summary['goals']} binary goals, policy {summary['policy']}, "
                 f"reports {', '.join(reports) or 'nothing'}")
    if status == "ok" and tally:
        text += f" ({tally})"
    return text


if __name__ == "__main__":
    sys.exit(main())
