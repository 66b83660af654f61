"""The event stream of an original ETALIS test driver, as an ``.events`` stream.

ETALIS programs come with drivers: scripts whose ``swipl -g "..."`` lines
load the rules and fire events (``event(a(1))``, ``event(b, [T1, T2])``,
``execute_event_stream_file(F)``), or stream files of such terms.
:func:`read_driver` asks the Prolog side (``prolog/etalis/dialect/driver.pl``),
which reads the driver without running any of it, for its events in
order with their times; ``etalis import-etalis`` prints them one a line,
for ``etalis run`` (docs/language.md, "Coming from ETALIS").
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, TextIO

from ..bridge._prolog import bridge
from ..bridge.prolog_text import quote_atom
from ..errors import EtalisError, unreadable

# ETALIS's names of its consumption policies and etalis-py's; ETALIS's
# default (no set_etalis_flag) is recent.
ETALIS_POLICIES = {"recent": "recent", "chronological": "chronological", "unrestricted": "unrestricted"}
ETALIS_DEFAULT_POLICY = "recent"


@dataclass(frozen=True)
class Skipped:
    """A goal or term of a driver that fires no event here, and why."""

    file: str
    line: int
    reason: str

    def text(self) -> str:
        return f"{os.path.relpath(self.file)}:{self.line}: left out: {self.reason}"


@dataclass(frozen=True)
class DriverStream:
    """One run of an ETALIS driver: its events as ``.events`` lines, the
    files it loads, the ETALIS flags it sets and what was left out."""

    events: str
    runs: int
    rules: tuple[str, ...]
    static: tuple[str, ...]
    database: tuple[str, ...]
    flags: tuple[str, ...]
    skipped: tuple[Skipped, ...]
    lateness: float = 0

    @property
    def count(self) -> int:
        """The number of events."""
        return self.events.count("\n")

    @property
    def etalis_policy(self) -> str:
        """The consumption policy ETALIS runs the rules under: the last
        ``event_consumption_policy`` flag the run sets, else ETALIS's
        default, ``recent``."""
        policy = ETALIS_DEFAULT_POLICY
        for flag in self.flags:
            name, _, value = flag.partition("=")
            if name == "event_consumption_policy":
                policy = value
        return policy

    @property
    def policy(self) -> Optional[str]:
        """etalis-py's name of :attr:`etalis_policy`, or None if it has none."""
        return ETALIS_POLICIES.get(self.etalis_policy)


def read_driver(path: Path, run: int = 1) -> DriverStream:
    """The events of run ``run`` (from 1) of the ETALIS driver at ``path``
    (a ``swipl -g`` script, or a stream file of event terms).

    Raises :class:`EtalisError` if the file does not exist or has no such run.
    """
    if problem := unreadable("the ETALIS driver", path):
        raise EtalisError(problem)
    header, events = bridge().request(f"etalis_driver({quote_atom(str(path.resolve()))}, {int(run)})")
    return DriverStream(
        events=events,
        runs=int(header["runs"]),
        rules=tuple(header["rules"]),
        static=tuple(header["static"]),
        database=tuple(header["database"]),
        flags=tuple(header["flags"]),
        skipped=tuple(Skipped(str(f), int(line), str(r)) for f, line, r in header["skipped"]),
        lateness=header["lateness"],
    )


def add_import_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis import-etalis``."""
    p = sub.add_parser("import-etalis",
                       help="print the event stream of an original ETALIS test driver as an .events stream")
    p.add_argument("driver", type=Path,
                   help="an ETALIS driver: a script with swipl -g \"...\" lines (test.sh.bat) or a stream file")
    p.add_argument("--run", type=int, default=1, metavar="N",
                   help="the run of a script with several swipl lines (default 1)")
    p.add_argument("--out", type=Path, metavar="FILE", help="write the stream to FILE (default: stdout)")


def import_etalis(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``etalis import-etalis``: the stream on ``out`` (or ``--out``), what
    was left out and how to run it on ``err``; exit 0."""
    if ns.run < 1:
        raise EtalisError(f"--run counts from 1, not {ns.run}")
    stream = read_driver(ns.driver, ns.run)
    if ns.out is not None:
        ns.out.write_text(stream.events, encoding="utf-8")
    else:
        out.write(stream.events)
    for s in stream.skipped:
        print(s.text(), file=err)
    print(summary(ns.driver, ns.run, stream, ns.out), file=err)
    return 0


def summary(driver: Path, run: int, stream: DriverStream, out: Optional[Path]) -> str:
    """What ``etalis import-etalis`` read, and the ``etalis run`` command
    that processes it as ETALIS would."""
    which = f"run {run} of {stream.runs}" if stream.runs > 1 else "the driver"
    text = f"{driver}: {stream.count} events from {which}"
    if stream.skipped:
        text += f", {len(stream.skipped)} left out"
    policy = stream.policy
    if policy is None:
        return text + f"; ETALIS's policy {stream.etalis_policy} has no equivalent here"
    rules = os.path.relpath(stream.rules[-1]) if stream.rules else "RULES"
    events = str(out) if out is not None else "-"
    late = f" --lateness {stream.lateness:g}" if stream.lateness else ""
    static = "".join(f" --static {os.path.relpath(f)}" for f in stream.static + stream.database)
    return text + f"; as ETALIS: etalis run {rules}{static} --events {events} --policy {policy}{late}"
