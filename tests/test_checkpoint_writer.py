"""The durable part of `etalis run --checkpoint`, on the writer's thread:
jobs one at a time, a failure raised where the run waits for it, a
SIGKILL between a snapshot and its rename, a checkpoint file that cannot
be written."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from etalis_py import Engine
from etalis_py.bridge._prolog import Recorded
from etalis_py.bridge.checkpoint import Checkpoint, CheckpointWriter, Counters, Position
from etalis_py.cli import EXIT_LIMIT, main

ETALIS = [sys.executable, "-m", "etalis_py.cli"]

RULES = """alarm(X) <- (hot(X) seq smoke(X)) within 3600.
exceptionAlarm(check(S), 40) <- reading(S).
silent(S) <- (check(S) fnot reading(S)) within 100.
"""

# The command line of a run in a child process whose second rename of its
# checkpoint holds (the snapshot taken, the file written and synced): it
# writes the file named first, then waits to be killed.
HELD_RENAME = """
import os, sys, time
from pathlib import Path
from etalis_py.cli import main
real, renames = os.replace, []
def held(src, dst):
    if Path(dst).name == "checkpoint":
        renames.append(dst)
        if len(renames) == 2:
            Path(sys.argv[1]).write_text("held")
            time.sleep(600)
    real(src, dst)
os.replace = held
sys.exit(main(sys.argv[2:]))
"""


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
    proc = subprocess.Popen([sys.executable, "-c", HELD_RENAME, str(held), *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
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
    before = Checkpoint.load(ck)
    assert before is not None
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
        taken = Checkpoint({"rules": "r.etl"}, Position(4, 30, "00"), 12, Counters(3, 0, 0, 0, 0), parts)
        taken.save(tmp_path)
        parts.release()
        with pytest.raises(ValueError, match="^the recorded bytes were freed$"):
            parts.view()
        parts.release()                 # once: a second release does nothing
    loaded = Checkpoint.load(tmp_path)
    assert loaded is not None
    assert loaded.snapshot() == whole
    assert (loaded.run, loaded.input, loaded.output, loaded.counters) == (
        {"rules": "r.etl"}, Position(4, 30, "00"), 12, Counters(3, 0, 0, 0, 0))
    meta = json.loads((tmp_path / "checkpoint").read_bytes().split(b"\n")[1])
    assert meta["state_bytes"] == len(whole)
    loaded.save(tmp_path)               # a loaded checkpoint (its bytes) is saved as it was read
    again = Checkpoint.load(tmp_path)
    assert again is not None and again.snapshot() == whole
