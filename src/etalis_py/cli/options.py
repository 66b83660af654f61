"""The options that several commands share, their checks, and the exit
statuses of every command."""

from __future__ import annotations

import argparse
import difflib
import re
from pathlib import Path
from typing import NoReturn, Optional

from ..bridge.engine import POLICIES, STRATEGIES, check_policy
from ..inputs.mapping import Mapping
from ..inputs.registry import by_name, names
from ..outputs.output import TimeStyle
from ..outputs.report import Readable, read_names, read_zones


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
    wrong and where the options are listed, not with the whole usage; a
    value that is not one of its choices (a command) with the closest
    ones."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {_choice(message)}\n  hint: {self.prog} --help lists the options\n")


def _choice(message: str) -> str:
    """argparse's message of a value that is not one of its choices
    (``argument COMMAND: invalid choice: 'ruun' (choose from 'run', ...)``)
    in words, with the choices closest to it; other messages as they are."""
    invalid = re.fullmatch(r"argument (\S+): invalid choice: '(.*)' \(choose from (.*)\)", message, re.DOTALL)
    if invalid is None:
        return message
    name, given = invalid[1], invalid[2]
    choices = [c.strip().strip("'") for c in invalid[3].split(",")]
    close = difflib.get_close_matches(given, choices, n=2)
    hint = f" (did you mean {' or '.join(map(_quoted, close))}?)" if close else \
        f": choose from {', '.join(map(_quoted, choices))}"
    return f"unknown command {_quoted(given)}{hint}" if name == "COMMAND" else \
        f"argument {name}: unknown value {_quoted(given)}{hint}"


def _quoted(text: str) -> str:
    return f'"{text}"'


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
