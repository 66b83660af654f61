"""``etalis run``: a rule file over a stream file, standard input or a
growing file, with checkpoints, signals and the summary."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterator
from itertools import chain
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from types import FrameType
from typing import Any, BinaryIO, Optional, TextIO

from ..bridge.checkpoint import (STATE, Base, Checkpoint, CheckpointError, CheckpointWriter, Counters, Position,
                                 check_again, check_input, hash_bytes, lock_directory, remove_states, resume_output, rules_hash,
                                 save_state, seen_hash)
from ..bridge.engine import Engine
from ..errors import EtalisError, InferenceLimitError, Rejection, unreadable
from ..events import format_time
from ..inputs.batch import BATCH_LINES, Batch
from ..inputs.delimited import csv_header
from ..inputs.lines import LineOffsets, line_chunks, ticking_chunks
from ..inputs.lines import whole_lines as lines_of
from ..inputs.mapping import Mapping
from ..inputs.registry import Reading, by_name
from ..inputs.streams import input_format, read_live, resumed_batches, times_are_dates
from ..outputs.output import OUT_FORMATS, DetectionWriter, flushed, max_arity, open_writer, out_format, whole_lines
from ..outputs.progress import ProgressLine, wanted
from .checking import report_findings, report_unused_event
from .options import (EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_LIMIT, EXIT_OK, EXIT_TERMINATED, add_engine_options,
                      add_input_options, add_live_options, add_mapping_options, add_quiet_option, add_static_option,
                      add_time_options, add_trust_options, mapping_from, readable_of, said, time_style)


def add_run_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis run``: a rule file over a stream file, standard input or a growing file."""
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
    mapping = _mapping(ns, at, header)
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


def _mapping(ns: argparse.Namespace, at: Position, header: Optional[list[str]]) -> Mapping:
    """How ``run`` reads its input's rows, from ``at`` on (a CSV stream's
    columns are then ``header``)."""
    mapping = mapping_from(ns)
    if ns.stream is not None:
        kind = ns.input_format or (None if str(ns.events) == "-" else input_format(ns.events).name)
        if ns.graph_col is None and kind is not None and not by_name(kind).graphs:
            raise ValueError(f"--stream names the stream of graph events (.nq, .trig, .jsonld or --graph-col); "
                             f"{ns.events} is read as {kind}, whose events are not graphs")
        mapping = replace(mapping, stream=ns.stream)
    if header is not None and at.line > 1:
        mapping = replace(mapping, columns=tuple(header))
    return mapping


def replayed_batches(ns: argparse.Namespace, base: Position, until: Position, packed: bool,
                     header: Optional[list[str]], batch_lines: int) -> Iterator[Batch]:
    """The batches of ``run``'s input file from ``base`` to ``until`` (a
    resumed run reads them again), the last one ending at ``until``
    exactly, however the run before cut its batches: its
    ``--checkpoint-every`` may have been another, and a followed file is
    cut where it had grown to."""
    mapping = _mapping(ns, base, header)
    if base.offset is not None and until.offset is not None:
        fmt, start, end = input_format(ns.events, ns.input_format), base.offset, until.offset

        def chunks() -> Iterator[bytes]:
            with ns.events.open("rb") as f:
                f.seek(start)
                pending = b""
                while f.tell() < end and (data := f.read(min(fmt.chunk_bytes, end - f.tell()))):
                    whole, pending = lines_of(pending + data)
                    if whole:
                        yield whole
                if pending:
                    yield pending

        tracker = LineOffsets(chunks(), base.line, base.offset)
        reading = Reading(batch_lines, str(ns.events), packed)
        yield from (b.shifted(base.line - 1) for b in fmt.reader()(tracker, mapping, reading))
        return
    # a file read by rows (Parquet) or graphs (TriG): batches of the rows
    # asked for, the last one cut to end at ``until``
    line = base.line
    while line < until.line:
        size = min(batch_lines, until.line - line)
        batches = resumed_batches(ns.events, mapping, ns.input_format, packed, line, 0, False, None, False, size)[0]
        for batch in batches:
            yield batch
            line = batch.end_line
            if until.line - line < size:
                break
        else:
            return


# How often a live source that has nothing says so, for --clock wall (seconds)
_TICK = 0.1


@dataclass
class _Run(Counters):
    """What ``run`` counts, and where it is: the summary's counters and the
    position after the last batch processed."""

    line: int = 1           # the first line of the input not processed
    since: int = 0          # events read since the last checkpoint


def reading_options(ns: argparse.Namespace) -> dict[str, Any]:
    """The options given that decide how ``run`` reads its input into
    events (a run resumed with others would read the rest otherwise)."""
    given = {"input_format": ns.input_format, "event": ns.event, "event_col": ns.event_col,
             "args": list(ns.args) if ns.args else None, "time": ns.time, "time_format": ns.time_format,
             "time_zone": ns.time_zone, "columns": list(ns.columns) if ns.columns else None,
             "graph_col": ns.graph_col, "stream": ns.stream}
    return {k: v for k, v in given.items() if v is not None}


# The share of a run's time that its snapshots may take when its input can
# be read again: a checkpoint takes a snapshot only while they stay within
# it, and else records its positions over the last snapshot (a resumed run
# reads the events since that snapshot again).
SNAPSHOT_SHARE = 0.02


class _Checkpoints:
    """``run --checkpoint DIR``: the checkpoint to resume from, and taking
    new ones: the positions, and the engine's snapshot when it is due (see
    :meth:`due`), are taken between two batches, then, on the writer's
    thread while the engine goes on, the output is synced up to (at
    least) the size it had and the checkpoint replaced."""

    def __init__(self, ns: argparse.Namespace) -> None:
        self.directory: Path = ns.checkpoint
        self.events: Optional[Path] = None if str(ns.events) == "-" else ns.events
        self.kind = ns.input_format or (input_format(self.events).name if self.events is not None else
                                        "csv" if ns.time is not None else None)
        self.run = {"rules": str(ns.rules), "rules_sha256": rules_hash([*ns.static, ns.rules]),
                    "events": str(ns.events), "out": None if ns.out is None else str(ns.out),
                    "format": out_format(ns.format, ns.out), "reading": reading_options(ns)}
        if self.run["format"] not in ("jsonl", "csv"):
            raise ValueError(f"--checkpoint resumes output written as it goes: --format jsonl or csv, not "
                             f"{self.run['format']} (written at the end)")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise ValueError(f"--checkpoint {self.directory}: not a directory (a file is in its place): give a "
                             "directory, which the run makes if it is missing") from None
        self.lock = lock_directory(self.directory)
        try:
            self._load(ns)
        except BaseException:
            self.lock.close()
            raise

    def _load(self, ns: argparse.Namespace) -> None:
        """The checkpoint to resume from, checked against this run, and
        what taking new ones starts from."""
        loaded = Checkpoint.load(self.directory)
        self.resumed: Optional[Checkpoint] = loaded[0] if loaded is not None else None
        self.state = loaded[1] if loaded is not None else b""
        """The snapshot of the resumed checkpoint's base."""
        self.header: Optional[list[str]] = list(ns.columns) if ns.columns else None
        self.again = hashlib.sha256()
        """The SHA-256 of the input's bytes from the base's position to the
        last checkpoint's (the writer's thread updates it)."""
        self.hashed = self.resumed.input.offset or 0 if self.resumed is not None else 0
        """Where the bytes of ``again`` end."""
        if self.resumed is not None:
            self.resumed.check_run(self.run, self.directory)
            if self.events is not None:
                check_input(self.events, self.resumed.input, self.directory)
                self.again = check_again(self.events, self.resumed, self.directory)
            elif self.resumed.base.input != self.resumed.input:     # standard input is not read again
                raise CheckpointError(f"{self.directory / 'checkpoint'}: not a checkpoint of standard input "
                                      "(its snapshot is not at its position): remove it to start afresh")
            if self.header is None:
                self.header = self.resumed.header
        # standard input cannot be read again, nor the machine's clock
        # read as it was, nor what trusted rules do outside the engine:
        # there every checkpoint takes a snapshot (and see replayable())
        self.replayable = self.events is not None and ns.clock != "wall" and not ns.trusted
        # with --clock wall the engine's time, its timers and what they
        # detect go on while no line is read
        self.moves = ns.clock == "wall"
        self.base: Optional[Base] = self.resumed.base if self.resumed is not None else None
        self.writer = CheckpointWriter()
        self.line = 0
        """The input line of the checkpoint taken last (what a failure names)."""
        self.started = time.perf_counter()
        self.spent = 0.0                # on snapshots, in this run
        self.last = 0.0                 # on the latest snapshot

    def close(self) -> None:
        """Let another run take up the directory."""
        self.lock.close()

    def rules_are(self, engine: Engine) -> None:
        """Take every snapshot for rules whose results depend on more than
        their input (read again, it would give other results)."""
        self.replayable = self.replayable and engine.input_determined

    def due(self, line: int, final: bool) -> bool:
        """Whether a checkpoint at input ``line`` takes a snapshot: at the
        first and the last checkpoint, on an input that cannot be read
        again, and while the snapshots keep within SNAPSHOT_SHARE of the
        run's time; not when the snapshot there is taken already (with
        ``--clock wall``, the engine's time has moved on since)."""
        if self.base is not None and self.base.input.line == line and not self.moves:
            return False
        return final or not self.replayable or self.base is None or \
            self.spent + self.last <= SNAPSHOT_SHARE * (time.perf_counter() - self.started)

    def save(self, engine: Engine, counts: _Run, sink: "DetectionWriter", offsets: Optional[LineOffsets],
             final: bool = False) -> None:
        """Take a checkpoint and hand it to the writer, once the one before
        it is durable (a failure of either is raised)."""
        self.writer.wait()
        self.line = counts.line
        if self.kind == "csv" and self.header is None and offsets is not None and offsets.head is not None:
            self.header = csv_header(offsets.head)
        at = Position(counts.line, None if offsets is None or self.events is None else offsets.offset(counts.line))
        state = None
        if self.due(counts.line, final):
            started = time.perf_counter()
            state = engine.snapshot_parts()
            self.last = time.perf_counter() - started
            self.spent += self.last
        try:
            out = flushed(sink)
        except BaseException:
            if state is not None:
                state.release()
            raise
        size, fd = out if out is not None else (counts.detections, None)
        counters = Counters(counts.accepted, counts.rejected, counts.raised, counts.detections, counts.warnings)
        events, directory, run, header, base = self.events, self.directory, self.run, self.header, self.base

        def durable() -> None:
            try:
                if fd is not None:
                    try:
                        os.fsync(fd)
                    finally:
                        os.close(fd)
                seen = "" if events is None or at.offset is None else seen_hash(events, at.offset)
                here = replace(at, seen=seen)
                taken, again = base, self.again
                if state is not None:
                    # not the name of the snapshot the checkpoint on disk
                    # still needs (a second one at its line: --clock wall)
                    name = f"{STATE}{at.line}"
                    if base is not None and base.file == name:
                        name += "-1"
                    taken = Base(name, here, size, counters, *save_state(directory, name, state))
                    again = hashlib.sha256()
                elif events is not None and at.offset is not None and base is not None and \
                        base.input.offset is not None:
                    again = hash_bytes(events, self.hashed, at.offset, again.copy())
                assert taken is not None
                Checkpoint(run, here, size, counters, taken, header, again.hexdigest()).save(directory)
                self.again, self.hashed = again, at.offset or 0
                if state is not None:
                    self.base = taken
                    remove_states(directory, taken.file)
            finally:
                if state is not None:
                    state.release()

        self.writer.submit(durable)
        counts.since = 0


@dataclass
class _Replay:
    """What a resumed run reads again: the events between its checkpoint's
    snapshot and its position (see SNAPSHOT_SHARE), whose detections were
    written and whose rejections and warnings were said before it; they
    rebuild the engine's state and counters, and nothing is written or
    said twice.  ``until`` is the checkpoint's first line not read,
    ``skip`` the detections still to leave out, ``expected`` the counters
    the checkpoint had."""

    until: int = 0
    skip: int = 0
    expected: Optional[Counters] = None

    def before(self, line: int) -> bool:
        """Whether ``line`` was read before the checkpoint (and, as the next
        line to read, whether the run is reading again)."""
        return line < self.until

    def new(self, text: str) -> str:
        """The detection lines of ``text`` that were not written before."""
        if self.skip == 0 or not text:
            return text
        end = 0
        while self.skip > 0 and end < len(text):
            end = text.index("\n", end) + 1
            self.skip -= 1
        return text[end:]

    def differs(self, counts: Counters, line: int) -> bool:
        """Whether reading again up to ``line``, the next line to read, gave
        other counts than the checkpoint had: its counters when ``line`` is
        its position; past it (a batch of rows or graphs read again may
        hold lines on both sides, see replayed_batches), fewer detections
        than it had written."""
        if self.skip != 0:
            return True
        return line == self.until and self.expected is not None and asdict(self.expected) != {
            k: v for k, v in asdict(counts).items() if k in asdict(self.expected)}


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
    try:
        return _run(ns, out, err, clock, wall, source, checkpoints)
    finally:
        if checkpoints is not None:
            checkpoints.close()


def _run(ns: argparse.Namespace, out: TextIO, err: TextIO, clock: Optional[Callable[[], float]],
         wall: Callable[[], float], source: str, checkpoints: Optional[_Checkpoints]) -> int:
    resumed = checkpoints.resumed if checkpoints is not None else None
    base = resumed.base if resumed is not None else None
    # the rule file is read once: the engine keeps what the checks below need
    engine = Engine.from_file(ns.rules, policy=ns.policy, static=ns.static, trusted=ns.trusted, max_age=ns.max_age,
                              lateness=ns.lateness, explain=ns.explain,
                              inference_limit=ns.inference_limit, analysis=not ns.quiet)
    try:
        if ns.ontology or ns.entailment:
            engine.load_ontology(ns.ontology, ns.entailment or "rdfs")
        if checkpoints is not None:
            checkpoints.rules_are(engine)
        if resumed is not None and checkpoints is not None:
            try:
                engine.restore(checkpoints.state)
            except ValueError as e:     # the snapshot is whole (checked on loading): the options differ
                raise ValueError(f"{checkpoints.directory / resumed.base.file}: {e}: resume with the options of "
                                 f"the run that took it (--policy, --lateness, --max-age, --explain), or remove "
                                 f"{checkpoints.directory} to start afresh") from None
            if ns.out is not None:
                resume_output(ns.out, resumed.output, checkpoints.directory)
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
        if resumed is not None and checkpoints is not None:
            print(resuming_line(checkpoints.directory, resumed), file=err)
    started = time.perf_counter()
    cpu_started = time.process_time()
    counts = _Run()
    replay = _Replay()
    if resumed is not None and base is not None:
        counts = _Run(**asdict(base.counters), line=base.input.line)
        replay = _Replay(resumed.input.line, resumed.counters.detections - base.counters.detections,
                         resumed.counters)
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

    def checkpoint(final: bool = False) -> bool:
        """Take a checkpoint; whether it and the one before it were taken
        (when the engine has no room to write its state, or a file cannot
        be written, the one before stays as it was).  While the events
        read before are read again, the checkpoint resumed from stays."""
        return checkpoints is None or replay.before(counts.line) or \
            said_failure(lambda: checkpoints.save(engine, counts, sink, source_input.offsets, final))

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

    stopped = unwritten = refused = False
    interrupt = _Interrupt()
    repeated = _Repeated()
    try:
        with interrupt:
            batch_lines = min(BATCH_LINES, ns.checkpoint_every) if checkpoints is not None else BATCH_LINES
            header = checkpoints.header if checkpoints is not None else None
            source_input = event_batches(ns, packed=engine.columnar(),
                                         at=resumed.input if resumed is not None else Position(),
                                         header=header, batch_lines=batch_lines)
            if resumed is not None and replay.before(resumed.base.input.line):
                again = replayed_batches(ns, resumed.base.input, resumed.input, engine.columnar(), header,
                                         batch_lines)
                source_input = _Input(chain(again, source_input.batches), source_input.offsets)
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
                sink.write(replay.new(result.detection_lines))
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
                        if not replay.before(r.line):
                            print(f"{source}:{r.line}: rejected: {in_input_times(r.reason, dates, ns)}", file=err)
                    for w in result.warnings:
                        if repeated.seen(w) and not replay.before(w.line):
                            print(f"{source}:{w.line}: warning: {w.reason}", file=err)
                if result.stopped:
                    progress.clear()
                    print(f"{source}:{result.stopped.line}: error: {result.stopped}", file=err)
                    stopped = True
                    break
                if checkpoints is not None:
                    replaying = replay.before(counts.line)
                    counts.line = batch.end_line
                    counts.since += len(bad) + result.accepted
                    if replaying and not replay.before(counts.line):
                        counts.since = 0
                        if replay.differs(counts, counts.line):
                            progress.clear()
                            print(replay_differs(source, checkpoints.directory, base, replay), file=err)
                            stopped = refused = True
                            break
                    if counts.since >= ns.checkpoint_every and not checkpoint():
                        stopped = True
                        break
                progress.show(status)
            if not stopped and replay.before(counts.line) and not interrupt.requested:
                progress.clear()
                print(replay_differs(source, checkpoints.directory if checkpoints else Path(), base, replay),
                      file=err)
                stopped = refused = True
            if not stopped and not checkpoint(final=True):  # before the end: a resumed run goes on from here
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
    unfinished = resumed is not None and (refused or replay.before(counts.line))
    if unfinished and resumed is not None:
        # stopped before the checkpoint's position: what stays is the
        # checkpoint, and the summary is its
        counts = _Run(**asdict(resumed.counters), line=resumed.input.line)
    if interrupt.requested:
        what = "terminated (SIGTERM)" if interrupt.signum == signal.SIGTERM else "interrupted"
        n = counts.accepted + counts.rejected
        print(f"etalis: {what}: stopped after {n} event{'' if n == 1 else 's'}" +
              (f", while reading again the lines its checkpoint had read: the checkpoint in "
               f"{checkpoints.directory} stays as it was" if unfinished and checkpoints is not None else ""), file=err)
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
    if refused:
        return EXIT_FAILURE
    if stopped:
        return EXIT_LIMIT
    if interrupt.requested:
        return EXIT_TERMINATED if interrupt.signum == signal.SIGTERM else EXIT_INTERRUPTED
    return EXIT_FAILURE if unwritten else EXIT_OK


_LATE = re.compile(r"time (\S+) is earlier than the last accepted time (\S+) \(events must arrive in time order\)")
_TOO_LATE = re.compile(r"time (\S+) is more than the lateness \((\S+) s\) before the latest time (\S+)")


def resuming_line(directory: Path, resumed: Checkpoint) -> str:
    """What a resumed run says first: where it takes up its input and what
    it had done before, so that a restart is not mistaken for a new run."""
    c = resumed.counters
    read, found = c.accepted + c.rejected, c.detections
    again = resumed.input.line - resumed.base.input.line
    return (f"etalis: resuming from the checkpoint in {directory}: input from line {resumed.input.line:,} "
            f"({read:,} event{'s' * (read != 1)} read before, {found:,} detection{'s' * (found != 1)})"
            + (f"; the state is rebuilt from its snapshot at line {resumed.base.input.line:,} by reading the "
               f"{again:,} line{'s' * (again != 1)} after it again, without writing their detections twice"
               if again else ""))


def replay_differs(source: str, directory: Path, base: Optional[Base], replay: _Replay) -> str:
    """The error of a resumed run whose input, read again from the
    checkpoint's snapshot to its position, gave other counts than before."""
    since = base.input.line if base is not None else 1
    return (f"{source}:{replay.until}: error: reading lines {since:,} to {replay.until - 1:,} again did not give "
            "what the run had given before its checkpoint: the input changed before the checkpoint's position, "
            "or the rules' results depend on more than their input (random numbers, the machine's clock); "
            f"remove {directory} to start afresh")


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
