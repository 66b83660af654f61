"""The durable part of `etalis run --checkpoint`, on the writer's thread:
jobs one at a time, a failure raised where the run waits for it, a
SIGKILL between a snapshot and its rename, a checkpoint file that cannot
be written."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from etalis_py import Engine
from etalis_py.bridge._prolog import Recorded
from etalis_py.bridge.checkpoint import (Base, Checkpoint, CheckpointWriter, Counters, Position, content_checksum,
                                         remove_states, save_state)
from etalis_py.cli import EXIT_FAILURE, EXIT_LIMIT, main
from etalis_py.cli import running
from etalis_py.cli.running import _Replay

ETALIS = [sys.executable, "-m", "etalis_py.cli"]

RULES = """alarm(X) <- (hot(X) seq smoke(X)) within 3600.
exceptionAlarm(check(S), 40) <- reading(S).
silent(S) <- (check(S) fnot reading(S)) within 100.
"""

# The command line of a run in a child process whose Nth rename of its
# checkpoint holds (the snapshot taken, the file written and synced): it
# writes the file named first, then waits to be killed.  Its arguments:
# that file, N, the share of the run's time its snapshots may take, and
# the command line.
HELD_RENAME = """
import os, sys, time
from pathlib import Path
from etalis_py.cli import main, running
real, renames = os.replace, []
def held(src, dst):
    if Path(dst).name == "checkpoint":
        renames.append(dst)
        if len(renames) == int(sys.argv[2]):
            Path(sys.argv[1]).write_text("held")
            time.sleep(600)
    real(src, dst)
os.replace = held
running.SNAPSHOT_SHARE = float(sys.argv[3])
sys.exit(main(sys.argv[4:]))
"""


def killed_at_a_rename(held: Path, nth: int, share: float, args: list[str]) -> None:
    """Run ``etalis args`` in a child process, SIGKILLed while its ``nth``
    checkpoint is written and synced but not renamed."""
    proc = subprocess.Popen([sys.executable, "-c", HELD_RENAME, str(held), str(nth), str(share), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not held.exists():
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        proc.kill()


def write_events(path: Path, n: int) -> None:
    kinds = ("hot", "reading", "smoke", "reading")
    path.write_text("".join(f"event({kinds[(i // 7) % 4]}(k{i % 7}), {i}).\n" for i in range(n)))


def test_the_writer_runs_one_job_at_a_time_and_raises_a_failure_where_it_is_waited_for() -> None:
    writer = CheckpointWriter()
    release = threading.Event()
    done: list[str] = []

    def first() -> None:
        release.wait(60)
        done.append("first")

    def failing() -> None:
        done.append("second")
        raise OSError(28, "No space left on device", "ck/checkpoint.new")

    writer.submit(first)
    threading.Timer(0.05, release.set).start()
    writer.submit(failing)      # waits for the first
    assert done[0] == "first"
    with pytest.raises(OSError) as failed:
        writer.wait()
    assert (failed.value.filename, failed.value.strerror) == ("ck/checkpoint.new", "No space left on device")
    assert done == ["first", "second"]
    writer.wait()               # raised once: nothing waits any more
    writer.submit(lambda: done.append("third"))
    writer.wait()
    assert done == ["first", "second", "third"]


def test_a_sigkill_between_a_snapshot_and_its_rename_leaves_the_checkpoint_before_it(tmp_path: Path) -> None:
    rules = tmp_path / "rules.etl"
    rules.write_text(RULES)
    events = tmp_path / "e.events"
    write_events(events, 1000)
    reference = tmp_path / "ref.jsonl"
    whole = subprocess.run([*ETALIS, "run", str(rules), str(events), "--out", str(reference), "--quiet"],
                           capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr
    out, ck, held = tmp_path / "out.jsonl", tmp_path / "ck", tmp_path / "held"
    args = ["run", str(rules), str(events), "--out", str(out), "--quiet", "--checkpoint", str(ck),
            "--checkpoint-every", "100"]
    killed_at_a_rename(held, 2, 1.0, args)
    loaded = Checkpoint.load(ck)
    assert loaded is not None
    before = loaded[0]
    assert (before.input.line, before.counters.accepted) == (101, 100)
    assert out.stat().st_size >= before.output        # the output it names was synced before it
    new = json.loads((ck / "checkpoint.new").read_bytes().split(b"\n")[1])
    assert (new["input"]["line"], new["counters"]["accepted"]) == (201, 200)    # whole, never renamed
    resumed = subprocess.run([*ETALIS, "run", *args[1:]], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert out.read_bytes() == reference.read_bytes()
    assert resumed.stderr.split(", seconds:")[0] == whole.stderr.split(", seconds:")[0]


def test_a_checkpoint_file_that_cannot_be_written_stops_the_run_at_the_next_with_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.etl"
    rules.write_text(RULES)
    events = tmp_path / "e.events"
    write_events(events, 1000)
    ck = tmp_path / "ck"
    (ck / "checkpoint.new").mkdir(parents=True)     # where the file is written first
    code = main(["run", str(rules), str(events), "--out", str(tmp_path / "o.jsonl"), "--quiet",
                 "--checkpoint", str(ck), "--checkpoint-every", "100"])
    assert code == EXIT_LIMIT
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (f"{events}:101: error: the checkpoint could not be taken, the last one in {ck} stays: "
                      f"{ck / 'checkpoint.new'}: Is a directory")
    assert err[1].split(", seconds:")[0] == ("events read: 200, accepted: 200, raised by rules (event/1, timers): "
                                            "77, rejected: 0, detections: 273, warnings: 0")
    assert len((tmp_path / "o.jsonl").read_text().splitlines()) == 273
    assert len(err) == 2
    assert not (ck / "checkpoint").exists()


def test_a_checkpoint_of_snapshot_parts_holds_the_bytes_of_the_engines_snapshot_and_frees_them(
        tmp_path: Path) -> None:
    with Engine.from_string(RULES) as engine:
        engine.emit_many([("hot", ["k1"], 1), ("reading", ["s1"], 2), ("hot", ["k2"], 3)])
        whole = engine.snapshot()
        parts = engine.snapshot_parts()
        assert isinstance(parts.content, Recorded)
        length, head = save_state(tmp_path, "state-4", parts)
        parts.release()
        with pytest.raises(ValueError, match="^the recorded bytes were freed$"):
            parts.view()
        parts.release()                 # once: a second release does nothing
    assert (tmp_path / "state-4").read_bytes() == whole
    base = Base("state-4", Position(4, 30, "00"), 12, Counters(3, 0, 0, 0, 0), length, head)
    assert (length, head) == (len(whole), hashlib.sha256(whole[:content_checksum(whole)[0]]).hexdigest())
    taken = Checkpoint({"rules": "r.etl"}, Position(9, 70, "11"), 20, Counters(8, 0, 0, 1, 0), base)
    taken.save(tmp_path)
    loaded = Checkpoint.load(tmp_path)
    assert loaded == (taken, whole)
    assert (tmp_path / "checkpoint").read_bytes().count(b"\n") == 2
    save_state(tmp_path, "state-4", whole)      # a loaded snapshot (its bytes) is saved as it was read
    assert Checkpoint.load(tmp_path) == (taken, whole)
    (tmp_path / "state-1.new").write_bytes(b"half")
    remove_states(tmp_path, keep="state-4")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint", "state-4"]


def with_bad_lines(path: Path) -> None:
    """Make every 150th line of ``path`` one that is rejected."""
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join("event(hot(k1).\n" if i % 150 == 149 else line for i, line in enumerate(lines)))


@pytest.mark.parametrize("nth", [2, 4, 7])
def test_a_run_killed_after_checkpoints_without_a_snapshot_reads_again_from_its_snapshot_and_writes_nothing_twice(
        tmp_path: Path, nth: int) -> None:
    rules = tmp_path / "rules.etl"
    rules.write_text(RULES)
    events = tmp_path / "e.events"
    write_events(events, 1000)
    with_bad_lines(events)
    reference = tmp_path / "ref.jsonl"
    whole = subprocess.run([*ETALIS, "run", str(rules), str(events), "--out", str(reference)],
                           capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr
    out, ck, held = tmp_path / "out.jsonl", tmp_path / "ck", tmp_path / "held"
    args = ["run", str(rules), str(events), "--out", str(out), "--checkpoint", str(ck), "--checkpoint-every", "100"]
    killed_at_a_rename(held, nth, 0.0, args)    # a snapshot at the first checkpoint only
    loaded = Checkpoint.load(ck)
    assert loaded is not None
    before = loaded[0]
    line = 1 + 100 * (nth - 1)                      # a batch of 100 lines between two checkpoints
    assert (before.input.line, before.base.input.line) == (line, 101)
    assert [p.name for p in ck.glob("state-*")] == ["state-101"]
    resumed = subprocess.run([*ETALIS, "run", *args[1:]], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert out.read_bytes() == reference.read_bytes()
    said = resumed.stderr.splitlines()
    again = "" if line == 101 else (f"; the state is rebuilt from its snapshot at line 101 by reading the "
                                    f"{line - 101} lines after it again, without writing their detections twice")
    c = before.counters
    assert said[0] == (f"etalis: resuming from the checkpoint in {ck}: input from line {line} "
                       f"({c.accepted + c.rejected} events read before, {c.detections:,} detections){again}")
    # what the run said of the lines before the checkpoint is not said again
    rejected = [x for x in whole.stderr.splitlines() if ": rejected: " in x]
    assert [x for x in said if ": rejected: " in x] == [x for x in rejected if int(x.split(":")[1]) >= line]
    assert said[-1].split(", seconds:")[0] == whole.stderr.splitlines()[-1].split(", seconds:")[0]
    assert [p.name for p in ck.glob("state-*")] == ["state-1001"]       # the last checkpoint's snapshot, at the end


def killed_after_eight_checkpoints(tmp_path: Path) -> tuple[Path, Path, Path, list[str]]:
    """A run of 1,000 events killed after its checkpoint at line 801, whose
    snapshot is at line 101: its events, output, checkpoint directory and
    command line."""
    rules = tmp_path / "rules.etl"
    rules.write_text(RULES)
    events = tmp_path / "e.events"
    write_events(events, 1000)
    out, ck = tmp_path / "out.jsonl", tmp_path / "ck"
    args = ["run", str(rules), str(events), "--out", str(out), "--quiet", "--checkpoint", str(ck),
            "--checkpoint-every", "100"]
    killed_at_a_rename(tmp_path / "held", 9, 0.0, args)
    return events, out, ck, args


def test_a_resumed_run_whose_input_changed_between_its_snapshot_and_its_checkpoint_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events, out, ck, args = killed_after_eight_checkpoints(tmp_path)
    # the same bytes but one, more than 4,096 bytes before the checkpoint's
    # position; the same counts read again, but not the same state
    text = events.read_text()
    assert text.count("event(hot(k3), 339).") == 1
    events.write_text(text.replace("event(hot(k3), 339).", "event(hot(k9), 339)."))
    written, checkpoint = out.read_bytes(), (ck / "checkpoint").read_bytes()
    before = Checkpoint.load(ck)[0]     # type: ignore[index]
    assert (before.base.input.offset, before.input.offset) == (2232, 18682)
    assert main(args) == EXIT_FAILURE
    assert capsys.readouterr().err.splitlines() == [
        f"etalis: {events}: the bytes 2,232 to 18,682 (lines 101 to 800), which a resumed run reads again from "
        f"its checkpoint's snapshot, are not those read: the file was changed, not only appended to; remove {ck} "
        "to start afresh"]
    assert (out.read_bytes(), (ck / "checkpoint").read_bytes()) == (written, checkpoint)


def test_a_resumed_run_whose_rules_read_again_give_other_counts_says_so_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    events, out, ck, args = killed_after_eight_checkpoints(tmp_path)
    before = Checkpoint.load(ck)[0]     # type: ignore[index]
    committed = out.read_bytes()[:before.output]
    feed = Engine.feed_text

    def other(self: Engine, text: str, *a: Any) -> Any:
        """The engine of rules that give other results on the same input
        (what input_determined/1 would not see)."""
        return feed(self, text.replace("smoke(k3)", "smoke(k9)"), *a)

    monkeypatch.setattr(Engine, "feed_text", other)
    monkeypatch.setenv("ETALIS_TEXT_PATH", "1")     # the events as text, through feed_text
    assert main(args) == EXIT_FAILURE
    said = capsys.readouterr().err.splitlines()
    c = before.counters      # the summary is the checkpoint's, which stays
    assert said[0] == (
        f"{events}:801: error: reading lines 101 to 800 again did not give what the run had given before its "
        "checkpoint: the input changed before the checkpoint's position, or the rules' results depend on more "
        f"than their input (random numbers, the machine's clock); remove {ck} to start afresh")
    assert said[1].startswith(f"events read: 800, accepted: 800, raised by rules (event/1, timers): {c.raised}, "
                              f"rejected: 0, detections: {c.detections}, warnings: 0, ")
    assert len(said) == 2
    assert out.read_bytes() == committed


def test_replay_leaves_out_the_detections_written_before() -> None:
    replay = _Replay(until=10, skip=3)
    assert replay.new("a\nb\n") == ""
    assert replay.new("c\nd\ne\n") == "d\ne\n"
    assert replay.new("f\n") == "f\n"
    assert (replay.before(9), replay.before(10)) == (True, False)


@pytest.mark.parametrize(("rules", "determined"), [
    ("a(X) <- b(X) where X > 2.", True),
    ("a(X, S) <- b(X) where format(atom(S), '~w!', [X]).", True),
    ("a(X, T) <- b(X) where get_time(T).", False),
    ("a(X, R) <- b(X) where R is random(10).", False),
    ("a(X, R) <- b(X) where R is X * random_float.", False),
    ("a(X, R) <- b(X) where random_between(1, 6, R).", False),
    ("a(X, R) <- b(X) where random(1, 6, R).", False),
    ("a(X, R) <- b(X) where crypto_n_random_bytes(4, R).", False),
    ("a(X, D) <- b(X) where date(D).", False),
    ("a(X) <- b(X) where format('~w~n', [X]).", False),
    ("a(X) <- b(X) where writeln(X).", False),
    ("a(X) <- b(X) where seen(X).\nseen(X) :- nb_setval(last, X).", False),
    ("a(X, R) <- b(X) where randseq(3, 10, R).", False),
    ("a(X, R) <- b(X) where randset(3, 10, R).", False),
    ("a(X, R) <- b(X) where random_perm2(X, 2, R, _).", False),
    ("a(X) <- b(X) where call_with_time_limit(0.001, slow(X)).\nslow(X) :- between(1, 100000, X).", False),
    ("a(X) <- b(X) where time(X > 1).", False),
    ("a(X, N) <- b(X) where assertz(seen(X)), aggregate_all(count, seen(_), N).\n:- dynamic seen/1.", True),
    ("c(N) <- a(N) do (G =.. [N, T], ins_event_rule(t(T) <- b where G)).", False),
    ("c(N) <- a(N) do ins_static_rule(p :- (N, true)).", False),
    ("c(X) <- a(X) do ins_event_rule(t(Y) <- b(Y) where Y > X).\nd(Y) <- t(Y).", True),
], ids=["condition", "format-to-atom", "clock", "random-function", "random-float", "random-between", "random-3",
        "random-bytes", "date", "format", "writeln", "static-global-variable", "randseq", "randset", "random-perm2",
        "time-limit", "time-prints", "facts-in-the-snapshot", "rule-of-built-goal", "static-rule-of-event-goal",
        "rule-of-written-goals"])
def test_an_engine_tells_whether_its_rules_results_depend_on_their_input_alone(rules: str, determined: bool) -> None:
    with Engine.from_string(rules, trusted="nb_setval" in rules) as engine:    # which the sandbox refuses
        assert engine.input_determined is determined


@pytest.mark.parametrize(("rules", "options", "states"), [
    ("alarm(X) <- (hot(X) seq smoke(X)) within 3600.", [], ["state-101", "state-1001"]),
    ("alarm(X) <- (hot(X) seq smoke(X)) within 3600.", ["--trusted"], [f"state-{n}01" for n in range(1, 11)]),
    ("alarm(X, T) <- (hot(X) seq smoke(X)) within 3600 where get_time(T).", [],
     [f"state-{n}01" for n in range(1, 11)]),
], ids=["determined", "trusted", "clock"])
def test_every_checkpoint_takes_a_snapshot_where_reading_the_input_again_could_give_other_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rules: str, options: list[str], states: list[str]) -> None:
    (tmp_path / "rules.etl").write_text(rules + "\n")
    events = tmp_path / "e.events"
    write_events(events, 1000)
    saved: list[str] = []
    save = save_state

    def recorded(directory: Path, name: str, state: Any) -> tuple[int, str]:
        saved.append(name)
        return save(directory, name, state)

    monkeypatch.setattr(running, "SNAPSHOT_SHARE", 0.0)
    monkeypatch.setattr(running, "save_state", recorded)
    assert main(["run", str(tmp_path / "rules.etl"), str(events), "--out", str(tmp_path / "o.jsonl"), "--quiet",
                 "--checkpoint", str(tmp_path / "ck"), "--checkpoint-every", "100", *options]) == 0
    assert saved == states
