"""The ``etalis`` command line: its parser, and each command run with its
errors said in words and an exit status."""

from __future__ import annotations

import argparse
import difflib
import sys
import warnings
from collections.abc import Sequence
from typing import Optional, TextIO, cast

from .. import __version__
from ..errors import EtalisError, EtalisWarning, OntologyError, RuleError, RuleFileNotFound
from ..inputs.etalis_import import add_import_parser, import_etalis
from .checking import add_check_parser, add_compile_parser, check, compile_rules
from .options import EXIT_BUG, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_RULES, _Parser, said
from .readable import add_readable_parsers, readable_output
from .running import add_run_parser, run
from .serve import add_serve_parser, serve
from .spark import add_replay_parser, add_stream_parser, replay, stream


def parser() -> argparse.ArgumentParser:
    """The parser of the command line, each command's options given by its module."""
    p = _Parser(prog="etalis", description="Complex event reasoning with ETALIS rules.")
    p.add_argument("--version", action="version", version=f"etalis {__version__}", help="print the version and exit")
    # the subcommands are _Parser too: they inherit its class
    sub = cast("argparse._SubParsersAction[argparse.ArgumentParser]",
               p.add_subparsers(dest="command", required=True, metavar="COMMAND", help="what to do"))

    add_run_parser(sub)
    add_replay_parser(sub)
    add_stream_parser(sub)
    add_check_parser(sub)
    add_compile_parser(sub)
    add_readable_parsers(sub)
    add_import_parser(sub)
    add_serve_parser(sub)
    return p


def parse(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line, or exit 2 with the command's usage: an unknown
    option is named with the command's closest options (``--polcy``:
    did you mean ``--policy``?), an unknown command with the closest
    commands (see _Parser)."""
    p = parser()
    args = list(sys.argv[1:] if argv is None else argv)
    commands = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    if not args:
        p.error(f"give a command: {', '.join(commands.choices)}")
    if args[0].startswith("-"):        # argparse would say that the command is missing
        options = [o for a in p._actions for o in a.option_strings if o.startswith("--")]
        given = args[0].partition("=")[0]
        if given != "-h" and not any(o.startswith(given) for o in options):
            close = difflib.get_close_matches(given, options, n=2)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            p.error(f"unrecognized arguments: {args[0]}{hint}")
    ns, extras = p.parse_known_args(args)
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
        out, err = sys.stdout, sys.stderr
        match ns.command:
            case "run":
                return run(ns, out, err)
            case "check":
                return check(ns, out, err)
            case "compile":
                return compile_rules(ns, out)
            case "replay":
                return replay(ns, out, err)
            case "stream":
                return stream(ns, out, err)
            case "table" | "plot":
                return readable_output(ns, out, err)
            case "import-etalis":
                return import_etalis(ns, out, err)
            case _:
                return serve(ns, err)
    except RuleFileNotFound as e:
        print(f"etalis: {e}", file=sys.stderr)
        return EXIT_RULES
    except RuleError as e:
        print(e, file=sys.stderr)
        return EXIT_RULES
    except OntologyError as e:
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
