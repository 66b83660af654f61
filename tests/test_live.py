"""Running live: the engine's time on an idle stream (advance_to, --clock
wall), timers at the end of an input, checkpoints and resuming after a
kill (etalis run --checkpoint), SIGTERM, whole lines into a pipe."""

from __future__ import annotations

import json
import os
import re
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etalis_py import Detection, Engine
from etalis_py.cli import main, running
from etalis_py.bridge.checkpoint import lock_directory
from etalis_py.cli.entry import parse

ETALIS = [sys.executable, "-m", "etalis_py.cli"]

SILENT = """exceptionAlarm(check(S), 7200) <- reading(S).
silent(S) <- check(S) fnot reading(S).
:- print_events([silent/1]).
"""

# A rule file whose state matters at every moment: pending hot readings
# (a window), a timer per reading and its fnot, a count.
STATEFUL = """alarm(X) <- (hot(X) seq smoke(X)) within 3600.
exceptionAlarm(check(S), 40) <- reading(S).
silent(S) <- (check(S) fnot reading(S)) within 100.
busy(X, N) <- aggregate(count, hot(X), count(5), N) where N >= 3.
:- print_events([alarm/1, silent/1, busy/2]).
"""


def stream(n: int, keys: int = 97) -> list[tuple[str, str, int]]:
    """n events (name, key, time): hot, smoke and readings of ``keys``
    keys, times a little out of order (by at most 2 seconds)."""
    kinds = ("hot", "reading", "smoke", "reading")
    return [(kinds[(i // keys) % 4], f"k{i % keys}", i - i % 3) for i in range(n)]


def write_stream(path: Path, events: list[tuple[str, str, int]]) -> None:
    kind = path.suffix
    if kind == ".events":
        text = "".join(f"event({name}({key}), {t}).\n" for name, key, t in events)
    elif kind == ".jsonl":
        text = "".join(json.dumps({"event": name, "args": [key], "time": t}) + "\n" for name, key, t in events)
    elif kind == ".csv":
        text = "name,key,time\n" + "".join(f"{name},{key},{t}\n" for name, key, t in events)
    elif kind == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        names, keys, times = zip(*events)
        pq.write_table(pa.table({"name": list(names), "key": list(keys), "time": list(times)}), path)
        return
    else:
        raise ValueError(kind)
    path.write_text(text, encoding="utf-8")


def mapping(path: Path) -> list[str]:
    return ["--event-col", "name", "--args", "key", "--time", "time"] if path.suffix in (".csv", ".parquet") else []


# -- the engine's time: advance_to -----------------------------------------------


def test_advance_to_fires_a_silent_station_when_it_is_due_with_no_later_event() -> None:
    with Engine.from_string(SILENT) as engine:
        assert engine.emit("reading", "a", at=0) == []
        assert engine.emit("reading", "b", at=100) == []
        assert engine.advance_to(3600) == []
        assert engine.advance_to(7250) == [Detection("silent", ("a",), 0, 7200)]
        assert engine.emit("reading", "b", at=7260) == []
        assert engine.advance_to(20000) == [Detection("silent", ("b",), 7260, 14460)]
        assert engine.flush(timers=False) == []
        with pytest.raises(Exception, match="earlier than"):
            engine.emit("reading", "c", at=19999)


def test_advance_to_releases_the_events_a_lateness_holds_back_up_to_its_time() -> None:
    with Engine.from_string("c <- a seq b.", lateness=5) as engine:
        assert engine.emit("b", at=2) == []
        assert engine.emit("a", at=1) == []
        assert engine.advance_to(1.5) == []
        assert engine.advance_to(2) == [Detection("c", (), 1, 2)]
        assert engine.stats().buffered == 0


def test_next_due_is_the_first_held_back_event_or_pending_timer_and_none_when_nothing_waits() -> None:
    with Engine.from_string(SILENT, lateness=10) as engine:
        assert engine.next_due() is None
        engine.emit("reading", "a", at=0)
        engine.emit("reading", "b", at=5)
        assert engine.next_due() == 0.0         # a's reading, held back
        assert engine.advance_to(6) == []
        assert engine.next_due() == 7200.0      # a's deadline; b's reading is released too
        assert engine.advance_to(7300) == [Detection("silent", ("a",), 0, 7200),
                                           Detection("silent", ("b",), 5, 7205)]
        assert engine.next_due() is None


def test_flush_without_timers_leaves_them_pending_in_the_snapshot() -> None:
    with Engine.from_string(SILENT) as engine:
        engine.emit("reading", "a", at=0)
        assert engine.flush(timers=False) == []
        state = engine.snapshot()
    with Engine.from_string(SILENT, state=state) as resumed:
        assert resumed.emit("tick", at=8000) == [Detection("silent", ("a",), 0, 7200)]


def test_run_clock_wall_fires_a_timer_on_an_idle_standard_input(tmp_path: Path) -> None:
    rules = tmp_path / "silent.etl"
    rules.write_text(SILENT.replace("7200", "1"))
    proc = subprocess.Popen([*ETALIS, "run", str(rules), "-", "--clock", "wall", "--quiet"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    now = int(time.time())
    proc.stdin.write(f"event(reading(a), {now}).\n")
    proc.stdin.flush()
    line = proc.stdout.readline()        # before standard input ends: the clock moved on
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    assert json.loads(line) == {"event": "silent", "args": ["a"], "start": now, "end": now + 1}


def test_run_clock_wall_fires_a_timer_on_an_idle_followed_file(tmp_path: Path) -> None:
    rules = tmp_path / "silent.etl"
    rules.write_text(SILENT.replace("7200", "1"))
    events = tmp_path / "live.events"
    now = int(time.time())
    events.write_text(f"event(reading(a), {now}).\nevent(reading(b), {now}).\n")
    proc = subprocess.run([*ETALIS, "run", str(rules), str(events), "--follow", "--follow-timeout", "3",
                           "--clock", "wall", "--quiet"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line) for line in proc.stdout.splitlines()] == [
        {"event": "silent", "args": ["a"], "start": now, "end": now + 1},
        {"event": "silent", "args": ["b"], "start": now, "end": now + 1}]


def test_run_clock_wall_is_refused_for_a_file_that_is_not_followed(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    events = tmp_path / "e.events"
    events.write_text("event(reading(a), 1).\n")
    rules = tmp_path / "silent.etl"
    rules.write_text(SILENT)
    assert main(["run", str(rules), str(events), "--clock", "wall", "--quiet"]) == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        "etalis: --clock wall is for a live stream: --follow a growing file, or standard input (-); "
        "a file's events carry their own times")


# -- checkpoints and resuming -------------------------------------------------------


def run_cli(*args: str) -> tuple[int, str]:
    proc = subprocess.run([*ETALIS, "run", *args, "--quiet"], capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stderr


def summary(err: str) -> str:
    """The summary line, without its times."""
    last = err.strip().splitlines()[-1]
    return last.split(", seconds:")[0]


@pytest.mark.parametrize("suffix", [".events", ".jsonl", ".csv", ".parquet"])
def test_a_run_resumed_on_a_file_appended_to_writes_what_one_run_on_the_whole_file_does(
        tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = stream(3000)
    whole = tmp_path / f"whole{suffix}"
    write_stream(whole, events)
    assert main(["run", str(rules), str(whole), "--out", str(tmp_path / "ref.jsonl"), "--lateness", "2",
                 "--quiet", *mapping(whole)]) == 0
    expected_summary = summary(capsys.readouterr().err)
    growing = tmp_path / f"growing{suffix}"
    out = tmp_path / "out.jsonl"
    common = ["--out", str(out), "--lateness", "2", "--quiet", "--checkpoint", str(tmp_path / "ck"),
              "--checkpoint-every", "250", *mapping(whole)]
    write_stream(growing, events[:1700])
    assert main(["run", str(rules), str(growing), *common]) == 0
    capsys.readouterr()
    write_stream(growing, events)
    assert main(["run", str(rules), str(growing), *common]) == 0
    assert summary(capsys.readouterr().err) == expected_summary
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()
    assert len(out.read_text().splitlines()) == int(expected_summary.split("detections: ")[1].split(",")[0])


class Crash(BaseException):
    """A run that stops as a SIGKILL would stop it, between two checkpoints."""


@pytest.mark.parametrize("suffix", [".events", ".jsonl", ".csv", ".parquet"])
@pytest.mark.parametrize("crash", [2, 7, 12])
def test_a_run_crashed_after_checkpoints_without_a_snapshot_resumes_to_what_one_run_writes(
        tmp_path: Path, suffix: str, crash: int, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = tmp_path / f"e{suffix}"
    # every 300th event too late: rejected
    write_stream(events, [(name, key, 0 if i % 300 == 299 else t) for i, (name, key, t) in enumerate(stream(3000))])
    out = tmp_path / "out.jsonl"
    assert main(["run", str(rules), str(events), "--out", str(tmp_path / "ref.jsonl"), "--lateness", "2",
                 *mapping(events)]) == 0
    expected = capsys.readouterr().err.splitlines()
    assert sum(": rejected: " in x for x in expected) == 10
    monkeypatch.setattr(running, "SNAPSHOT_SHARE", 0.0)    # the first and the last checkpoint take one
    save, saved = running._Checkpoints.save, []

    def crashing(self: running._Checkpoints, *args: Any) -> None:
        saved.append(self.line)
        if len(saved) == crash:
            self.writer.wait()          # the checkpoint before is durable; the output after it half written
            raise Crash
        save(self, *args)

    monkeypatch.setattr(running._Checkpoints, "save", crashing)
    args = ["run", str(rules), str(events), "--out", str(out), "--lateness", "2", "--checkpoint",
            str(tmp_path / "ck"), "--checkpoint-every", "250", *mapping(events)]
    with pytest.raises(Crash):
        main(args)
    capsys.readouterr()
    monkeypatch.setattr(running._Checkpoints, "save", save)
    assert main(args) == 0
    resumed = capsys.readouterr().err.splitlines()
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()
    assert summary(resumed[-1]) == summary(expected[-1])
    first = 2 if suffix == ".csv" else 1
    assert resumed[0].endswith("" if crash == 2 else f"; the state is rebuilt from its snapshot at line {251 + first - 1} "
                               f"by reading the {250 * (crash - 2):,} lines after it again, without writing their "
                               "detections twice")
    # what the first run said of the lines before its checkpoint is not said again
    line = first + 250 * (crash - 1)
    said = [x for x in expected[:-1] if ": rejected: " in x and int(x.split(":")[1]) >= line]
    assert resumed[1:-1] == said and len(said) == 10 - (line - first) // 300


def test_a_resumed_run_whose_batches_straddle_the_checkpoint_s_position_writes_what_one_run_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # batches end elsewhere when they are read again: here the resumed run's are of 400 lines, not
    # 250 (as a followed file's end where the file ended as it was read)
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = tmp_path / "e.events"
    write_stream(events, stream(3000))
    out = tmp_path / "out.jsonl"
    assert main(["run", str(rules), str(events), "--out", str(tmp_path / "ref.jsonl"), "--lateness", "2"]) == 0
    expected = capsys.readouterr().err.splitlines()
    monkeypatch.setattr(running, "SNAPSHOT_SHARE", 0.0)
    save, saved = running._Checkpoints.save, []

    def crashing(self: running._Checkpoints, *args: Any) -> None:
        saved.append(self.line)
        if len(saved) == 7:             # the checkpoint at line 1501 is durable, its snapshot at 251
            self.writer.wait()
            raise Crash
        save(self, *args)

    monkeypatch.setattr(running._Checkpoints, "save", crashing)
    args = ["run", str(rules), str(events), "--out", str(out), "--lateness", "2", "--checkpoint", str(tmp_path / "ck")]
    with pytest.raises(Crash):
        main([*args, "--checkpoint-every", "250"])
    capsys.readouterr()
    monkeypatch.setattr(running._Checkpoints, "save", save)
    assert main([*args, "--checkpoint-every", "400"]) == 0      # lines 251-650, ..., 1451-1850
    resumed = capsys.readouterr().err.splitlines()
    assert resumed[0].endswith("; the state is rebuilt from its snapshot at line 251 by reading the 1,250 lines "
                               "after it again, without writing their detections twice")
    assert summary(resumed[-1]) == summary(expected[-1])
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()


def test_a_resumed_run_says_where_it_takes_up_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "alarm.etl"
    rules.write_text("alarm(X) <- (hot(X) seq smoke(X)) within 3600.\n")
    events = tmp_path / "f.events"
    lines = [f"event({kind}(s{i}), {i * 10 + (5 if kind == 'smoke' else 0)}).\n"
             for i in range(10) for kind in ("hot", "smoke")]
    events.write_text("".join(lines[:8]))
    options = ["--out", str(tmp_path / "o.jsonl"), "--checkpoint", str(tmp_path / "ck")]
    assert main(["run", str(rules), str(events), *options]) == 0
    assert "resuming" not in capsys.readouterr().err
    events.write_text("".join(lines))
    assert main(["run", str(rules), str(events), *options]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (f"etalis: resuming from the checkpoint in {tmp_path / 'ck'}: input from line 9 "
                      "(8 events read before, 4 detections)")
    assert summary(err[-1]) == "events read: 20, accepted: 20, rejected: 0, detections: 10, warnings: 0"


def test_a_run_resumed_on_standard_input_reads_the_lines_after_those_consumed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = tmp_path / "all.events"
    write_stream(events, stream(2000))
    lines = events.read_text().splitlines(keepends=True)
    assert main(["run", str(rules), str(events), "--out", str(tmp_path / "ref.jsonl"), "--quiet",
                 "--lateness", "2"]) == 0
    out = tmp_path / "out.jsonl"
    ck = tmp_path / "ck"
    options = ["--out", str(out), "--checkpoint", str(ck), "--lateness", "2"]
    first = subprocess.run([*ETALIS, "run", str(rules), "-", *options], input="".join(lines[:1234]),
                           capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    consumed = json.loads((ck / "checkpoint").read_bytes().split(b"\n")[1])["input"]["line"] - 1
    assert consumed == 1234
    second = subprocess.run([*ETALIS, "run", str(rules), "-", *options], input="".join(lines[consumed:]),
                            capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()


def test_sigkill_at_five_random_moments_then_resuming_writes_the_uninterrupted_output(tmp_path: Path) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL.replace("busy(X, N)", "% busy(X, N)"))     # fewer detections: a faster test
    events = tmp_path / "big.events"
    write_stream(events, stream(100_000))
    reference = tmp_path / "ref.jsonl"
    started = time.monotonic()
    code, err = run_cli(str(rules), str(events), "--out", str(reference), "--lateness", "2")
    took = time.monotonic() - started
    assert code == 0, err
    out = tmp_path / "out.jsonl"
    command = [*ETALIS, "run", str(rules), str(events), "--out", str(out), "--lateness", "2", "--quiet",
               "--checkpoint", str(tmp_path / "ck"), "--checkpoint-every", "5000"]
    rng = random.Random(7)
    killed = 0
    checkpoint = tmp_path / "ck" / "checkpoint"
    for _ in range(5):
        done = json.loads(checkpoint.read_bytes().split(b"\n")[1])["input"]["line"] - 1 if checkpoint.exists() else 0
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.2, max(0.5, took * (1 - done / 100_000))))   # a moment of what is left to do
        proc.send_signal(signal.SIGKILL)
        killed += proc.wait() == -signal.SIGKILL
    final = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr
    assert killed >= 3      # most kills came while it ran (the rest after it had ended: resumed at the end)
    assert out.read_bytes() == reference.read_bytes()
    assert summary(final.stderr) == summary(err)


def test_sigterm_ends_a_followed_run_with_a_checkpoint_and_the_summary_exit_143(tmp_path: Path) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = stream(1000)
    whole = tmp_path / "whole.events"
    write_stream(whole, events)
    code, reference_err = run_cli(str(rules), str(whole), "--out", str(tmp_path / "ref.jsonl"))
    assert code == 0
    growing = tmp_path / "growing.events"
    write_stream(growing, events[:600])
    out = tmp_path / "out.jsonl"
    ck = tmp_path / "ck"
    options = ["--out", str(out), "--checkpoint", str(ck), "--checkpoint-every", "100", "--quiet"]
    proc = subprocess.Popen([*ETALIS, "run", str(rules), str(growing), "--follow", *options],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not ((ck / "checkpoint").exists() and b'"line": 601' in (ck / "checkpoint").read_bytes()):
            assert time.monotonic() < deadline
            time.sleep(0.05)     # until the file's 600 events are read
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143
    assert err.splitlines() == [
        "etalis: terminated (SIGTERM): stopped after 600 events",
        err.splitlines()[1]]
    assert err.splitlines()[1].startswith("events read: 600, accepted: 600, ")
    write_stream(growing, events)
    code, err = run_cli(str(rules), str(growing), "--follow", "--follow-timeout", "0.5", *options)
    assert code == 0, err
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()
    assert summary(err) == summary(reference_err)


def test_a_sigkilled_run_writes_only_whole_lines_into_a_pipe(tmp_path: Path) -> None:
    rules = tmp_path / "pairs.etl"
    rules.write_text("c(X, Y) <- a(X) seq b(Y).\n")    # every a before each b: many detections
    events = tmp_path / "e.events"
    events.write_text("".join(f"event(a({i}), {i}).\n" for i in range(40))
                      + "".join(f"event(b({i}), {40 + i}).\n" for i in range(1500)))
    proc = subprocess.Popen([*ETALIS, "run", str(rules), str(events), "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    received = proc.stdout.read(100_000)       # the writer blocks on the full pipe, mid-stream
    proc.send_signal(signal.SIGKILL)
    received += proc.stdout.read()
    proc.wait()
    text = received.decode("utf-8")
    assert text.endswith("\n")
    detections = [json.loads(line) for line in text.splitlines()]
    assert 1000 < len(detections) < 60_000
    assert detections[0] == {"event": "c", "args": [0, 0], "start": 0, "end": 40}


def flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]


def state_at(data: bytes, line: int) -> int:
    """Where line ``line`` (from 0) of the snapshot ``data`` starts."""
    at = 0
    for _ in range(line):
        at = data.index(b"\n", at) + 1
    return at


def run_to_its_end_with_a_checkpoint(tmp_path: Path) -> tuple[list[str], Path]:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = tmp_path / "e.events"
    write_stream(events, stream(100))
    ck = tmp_path / "ck"
    args = ["run", str(rules), str(events), "--out", str(tmp_path / "o.jsonl"), "--checkpoint", str(ck), "--quiet"]
    assert main(args) == 0
    return args, ck


@pytest.mark.parametrize("change", [
    lambda d: flip(d, len(d) - 10),                 # in the snapshot's content
    lambda d: flip(d, state_at(d, 1) + 12),         # in its header: the rules' identity
    lambda d: flip(d, state_at(d, 2) - 8),          # in its header: its content's checksum
    lambda d: d[:-1],                               # cut short
    lambda d: d + b"\0",                            # longer
], ids=["content", "header", "checksum", "truncated", "longer"])
def test_a_damaged_snapshot_of_a_checkpoint_is_refused_with_what_to_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Callable[[bytes], bytes]) -> None:
    args, ck = run_to_its_end_with_a_checkpoint(tmp_path)
    state, = ck.glob("state-*")
    state.write_bytes(change(state.read_bytes()))
    capsys.readouterr()
    assert main(args) == 1
    assert capsys.readouterr().err == (f"etalis: {state}: not the whole state of the checkpoint (damaged?): "
                                       f"remove {ck} to start afresh\n")


@pytest.mark.parametrize("change", [
    lambda d: d[:-2] + b"\n",                       # its JSON cut short
    lambda d: d.replace(b'"state-', b'"../state-'),  # its snapshot named outside its directory
    lambda d: d.replace(b"etalis-checkpoint 2", b"etalis-checkpoint x"),
    lambda d: re.sub(rb'"input": \{"line": (\d+)', rb'"input": {"line": "\1"', d, count=1),
    lambda d: re.sub(rb'"offset": (\d+)', rb'"offset": -\1', d, count=1),
    lambda d: re.sub(rb'"detections": (\d+)', rb'"detections": null', d, count=1),
    lambda d: d.replace(b'"header": null', b'"header": 5'),
    lambda d: re.sub(rb'"base": \{"file": "state-(\d+)", "input": \{"line": \d+',
                     rb'"base": {"file": "state-\1", "input": {"line": 9999', d),
], ids=["truncated", "outside", "first line", "line as text", "negative offset", "no count", "header",
        "snapshot after the checkpoint"])
def test_a_damaged_checkpoint_is_refused_with_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         change: Callable[[bytes], bytes]) -> None:
    args, ck = run_to_its_end_with_a_checkpoint(tmp_path)
    (ck / "checkpoint").write_bytes(change((ck / "checkpoint").read_bytes()))
    capsys.readouterr()
    assert main(args) == 1
    assert capsys.readouterr().err == (f"etalis: {ck / 'checkpoint'}: not a whole checkpoint of etalis run "
                                       "(damaged?): remove it to start afresh\n")


def test_a_checkpoint_whose_snapshot_is_missing_is_refused_with_what_to_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args, ck = run_to_its_end_with_a_checkpoint(tmp_path)
    state, = ck.glob("state-*")
    state.unlink()
    capsys.readouterr()
    assert main(args) == 1
    assert capsys.readouterr().err == (f"etalis: {state}: the checkpoint's state cannot be read (No such file or "
                                       f"directory): remove {ck} to start afresh\n")


def test_a_checkpoint_of_another_format_is_refused_with_what_to_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args, ck = run_to_its_end_with_a_checkpoint(tmp_path)
    (ck / "checkpoint").write_bytes(b"etalis-checkpoint 1\n{}\n")
    capsys.readouterr()
    assert main(args) == 1
    assert capsys.readouterr().err == (f"etalis: {ck / 'checkpoint'}: a checkpoint of format 1, and this "
                                       "etalis-py reads format 2: remove it to start afresh\n")


def test_a_checkpoint_of_other_rules_or_a_replaced_input_is_refused(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = tmp_path / "e.events"
    write_stream(events, stream(100))
    ck = tmp_path / "ck"
    args = ["run", str(rules), str(events), "--out", str(tmp_path / "o.jsonl"), "--checkpoint", str(ck), "--quiet"]
    assert main(args) == 0
    events.write_text(events.read_text().replace("k1)", "k2)"))
    capsys.readouterr()
    assert main(args) == 1
    assert capsys.readouterr().err == (f"etalis: {events}: the bytes before the checkpoint's position (2,087) are "
                                       f"not those read: the file was replaced, not appended to; remove {ck} to "
                                       "start afresh\n")
    rules.write_text(STATEFUL + "extra(X) <- hot(X).\n")
    assert main(args) == 1
    assert capsys.readouterr().err.startswith(f"etalis: {ck / 'checkpoint'}: a checkpoint of another run "
                                              "(the rule file's text: ")


def test_a_checkpoint_resumed_with_other_options_that_read_its_rows_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = tmp_path / "e.csv"
    write_stream(events, stream(100))
    ck = tmp_path / "ck"
    args = ["run", str(rules), str(events), "--out", str(tmp_path / "o.jsonl"), "--checkpoint", str(ck), "--quiet",
            "--event-col", "name", "--args", "key"]
    assert main([*args, "--time", "time"]) == 0
    capsys.readouterr()
    assert main([*args, "--time", "key"]) == 1
    assert capsys.readouterr().err == (
        f"etalis: {ck / 'checkpoint'}: a checkpoint of another run (the options that read its input into events: "
        "{'event_col': 'name', 'args': ['key'], 'time': 'time'}, now {'event_col': 'name', 'args': ['key'], "
        "'time': 'key'}): give another --checkpoint DIR, or remove this one to start afresh\n")


def test_checkpoints_need_output_written_as_it_goes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = tmp_path / "e.events"
    write_stream(events, stream(10))
    assert main(["run", str(rules), str(events), "--format", "table", "--checkpoint", str(tmp_path / "ck")]) == 1
    assert capsys.readouterr().err == ("etalis: --checkpoint resumes output written as it goes: --format jsonl or "
                                       "csv, not table (written at the end)\n")


def test_a_graph_stream_resumed_after_it_grew_writes_what_one_run_does(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).parent.parent / "examples" / "graph_weather"
    rules, whole = example / "graph_weather.etl", example / "observations.nq"
    assert main(["run", str(rules), str(whole), "--out", str(tmp_path / "ref.jsonl"), "--quiet"]) == 0
    capsys.readouterr()
    lines = whole.read_bytes().splitlines(keepends=True)
    graphs = [i for i, line in enumerate(lines) if b"generatedAtTime" in line]
    growing = tmp_path / "growing.nq"
    growing.write_bytes(b"".join(lines[:graphs[89]]))        # 89 whole graphs
    out = tmp_path / "out.jsonl"
    common = ["--out", str(out), "--quiet", "--checkpoint", str(tmp_path / "ck"), "--checkpoint-every", "7"]
    assert main(["run", str(rules), str(growing), *common]) == 0
    assert capsys.readouterr().err.startswith("events read: 89, accepted: 89, rejected: 0, detections: 91,")
    growing.write_bytes(b"".join(lines))
    assert main(["run", str(rules), str(growing), *common]) == 0
    assert capsys.readouterr().err.startswith("events read: 160, accepted: 160, rejected: 0, detections: 186,")
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()


def test_the_guide_s_commands_print_what_it_shows(tmp_path: Path) -> None:
    guide = (Path(__file__).parent.parent / "docs" / "live.md").read_text()
    fences = re.findall(r"^```(\w*)\n(.*?)^```\n", guide, re.S | re.M)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    ran = 0
    for i, (lang, body) in enumerate(fences):
        if lang != "sh":
            continue
        shown = fences[i + 1][1] if i + 1 < len(fences) and fences[i + 1][0] == "output" else ""
        proc = subprocess.run(["bash", "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert (proc.returncode, proc.stdout) == (0, shown), (body, proc.stderr)
        ran += 1
    assert ran == 5


# -- advance_to changes when detections come, never which ---------------------------

TIMED = [
    SILENT,
    """exceptionAlarm(remind(X), 3) <- order(X).
late(X) <- (remind(X) fnot pay(X)) within 10.
pair(X) <- (order(X) seq pay(X)) within 4.
""",
    """exceptionAlarm(t(X), 2) <- a(X) seq b(X).
c(X) <- t(X) seq a(X).
:- policy(recent).
""",
]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_advancing_the_clock_between_events_gives_the_same_detections_in_the_same_order(data: st.DataObject) -> None:
    rules = data.draw(st.sampled_from(TIMED))
    lateness = data.draw(st.sampled_from([None, 0, 2]))
    names = ["reading", "order", "pay", "a", "b", "tick"]
    n = data.draw(st.integers(1, 25))
    times = sorted(data.draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)))
    events = [(data.draw(st.sampled_from(names)), data.draw(st.sampled_from(["k1", "k2"])), t) for t in times]
    if lateness:    # out of order by at most the lateness
        events = [(name, key, max(0, t - data.draw(st.integers(0, lateness)))) for name, key, t in events]
    advances = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    timers = data.draw(st.booleans())

    def detections(advancing: bool) -> list[Detection]:
        with Engine.from_string(rules, lateness=lateness) as engine:
            found: list[Detection] = []
            for i, (name, key, t) in enumerate(events):
                found += engine.emit(name, key, at=t)
                later = [u for _, _, u in events[i + 1:]]
                if advancing and advances[i] and later:
                    found += engine.advance_to(data.draw(st.integers(t - (lateness or 0), min(later))))
            return found + engine.flush(timers=timers)

    assert detections(True) == detections(False)


def test_a_trig_stream_read_whole_resumes_after_the_graphs_it_had_read(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from rdflib import Dataset

    example = Path(__file__).parent.parent / "examples" / "graph_weather"
    rules = example / "graph_weather.etl"
    lines = (example / "observations.nq").read_bytes().splitlines(keepends=True)
    graphs = [i for i, line in enumerate(lines) if b"generatedAtTime" in line]

    def trig(quads: list[bytes], path: Path) -> None:
        dataset = Dataset()
        dataset.parse(data=b"".join(quads).decode(), format="nquads")
        dataset.serialize(path, format="trig")

    whole = tmp_path / "whole.trig"
    trig(lines, whole)
    assert main(["run", str(rules), str(whole), "--out", str(tmp_path / "ref.jsonl"), "--quiet"]) == 0
    capsys.readouterr()
    growing = tmp_path / "growing.trig"
    trig(lines[:graphs[89]], growing)
    out = tmp_path / "out.jsonl"
    common = ["--out", str(out), "--quiet", "--checkpoint", str(tmp_path / "ck"), "--checkpoint-every", "7"]
    assert main(["run", str(rules), str(growing), *common]) == 0
    assert capsys.readouterr().err.splitlines()[-1].startswith("events read: 89, accepted: 89, rejected: 0, detections: 91,")
    trig(lines, growing)
    assert main(["run", str(rules), str(growing), *common]) == 0
    assert capsys.readouterr().err.splitlines()[-1].startswith("events read: 160, accepted: 160, rejected: 0, detections: 186,")
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()


@pytest.mark.parametrize("kind", ["nquads", "trig"])
def test_a_graph_stream_crashed_after_checkpoints_without_a_snapshot_resumes_to_what_one_run_writes(
        tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from rdflib import Dataset

    example = Path(__file__).parent.parent / "examples" / "graph_weather"
    rules, events = example / "graph_weather.etl", example / "observations.nq"
    if kind == "trig":
        dataset = Dataset()
        dataset.parse(events, format="nquads")
        events = tmp_path / "observations.trig"
        dataset.serialize(events, format="trig")
    assert main(["run", str(rules), str(events), "--out", str(tmp_path / "ref.jsonl"), "--quiet"]) == 0
    capsys.readouterr()
    monkeypatch.setattr(running, "SNAPSHOT_SHARE", 0.0)    # the first and the last checkpoint take one
    save, saved = running._Checkpoints.save, []

    def crashing(self: running._Checkpoints, *args: Any) -> None:
        saved.append(args[1].line)     # the run's counts: where this checkpoint is
        if len(saved) == 3:              # a batch holds several graphs: the third checkpoint is one of the last
            self.writer.wait()
            raise Crash
        save(self, *args)

    monkeypatch.setattr(running._Checkpoints, "save", crashing)
    out = tmp_path / "out.jsonl"
    args = ["run", str(rules), str(events), "--out", str(out), "--checkpoint", str(tmp_path / "ck"),
            "--checkpoint-every", "7"]
    with pytest.raises(Crash):
        main(args)
    capsys.readouterr()
    monkeypatch.setattr(running._Checkpoints, "save", save)
    assert main(args) == 0
    err = capsys.readouterr().err.splitlines()
    first, second = saved[:2]
    assert err[0].endswith(f"; the state is rebuilt from its snapshot at line {first} by reading the "
                           f"{second - first} lines after it again, without writing their detections twice")
    assert err[-1].startswith("events read: 160, accepted: 160, rejected: 0, detections: 186,")
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()


@pytest.mark.parametrize("suffix", [".events", ".jsonl", ".csv", ".parquet"])
@pytest.mark.parametrize("every", [100, 400])
def test_a_run_resumed_with_another_checkpoint_every_reads_again_up_to_its_checkpoint_exactly(
        tmp_path: Path, suffix: str, every: int, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = tmp_path / f"e{suffix}"
    write_stream(events, stream(3000))
    assert main(["run", str(rules), str(events), "--out", str(tmp_path / "ref.jsonl"), *mapping(events)]) == 0
    expected = capsys.readouterr().err.splitlines()
    monkeypatch.setattr(running, "SNAPSHOT_SHARE", 0.0)    # the first and the last checkpoint take one
    save, saved = running._Checkpoints.save, []

    def crashing(self: running._Checkpoints, *args: Any) -> None:
        saved.append(args[1].line)
        if len(saved) == 7:
            self.writer.wait()
            raise Crash
        save(self, *args)

    monkeypatch.setattr(running._Checkpoints, "save", crashing)
    out = tmp_path / "out.jsonl"
    args = ["run", str(rules), str(events), "--out", str(out), "--checkpoint", str(tmp_path / "ck"), *mapping(events)]
    with pytest.raises(Crash):
        main([*args, "--checkpoint-every", "250"])
    capsys.readouterr()
    monkeypatch.setattr(running._Checkpoints, "save", save)
    # the batches of 100 or 400 lines from the snapshot's line do not end
    # at the checkpoint's: the last one read again is cut there
    assert main([*args, "--checkpoint-every", str(every)]) == 0
    resumed = capsys.readouterr().err.splitlines()
    assert resumed[0].endswith(f"; the state is rebuilt from its snapshot at line {saved[0]} by reading the "
                               "1,250 lines after it again, without writing their detections twice")
    assert summary(resumed[-1]) == summary(expected[-1])
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()


def test_a_timer_the_wall_clock_fired_after_resuming_is_in_the_next_checkpoint_and_not_fired_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "silent.etl"
    rules.write_text(SILENT.replace("7200", "5"))
    events = tmp_path / "live.events"
    events.write_text("event(reading(a), 1000).\n")
    out = tmp_path / "out.jsonl"
    args = ["run", str(rules), str(events), "--follow", "--follow-timeout", "0.3", "--clock", "wall", "--out",
            str(out), "--checkpoint", str(tmp_path / "ck"), "--quiet"]
    # the clock, as each run reads it: before the timer is due, then after
    for now in (1001.0, 1010.0, 1010.0):
        assert running.run(parse(args), sys.stdout, sys.stderr, wall=lambda: now) == 0
    assert [json.loads(x) for x in out.read_text().splitlines()] == [
        {"event": "silent", "args": ["a"], "start": 1000, "end": 1005}]
    assert [summary(x) for x in capsys.readouterr().err.splitlines()] == [
        "events read: 1, accepted: 1, rejected: 0, detections: 0, warnings: 0",
        *["events read: 1, accepted: 1, raised by rules (event/1, timers): 1, rejected: 0, detections: 1, "
          "warnings: 0"] * 2]
    # each run's final checkpoint took a snapshot at line 2 under another
    # name than the one before it (state-2, state-2-1, state-2)
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == ["checkpoint", "lock", "state-2"]


def test_sigterm_while_reading_again_leaves_the_checkpoint_as_it_was_and_says_its_counts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = tmp_path / "e.events"
    write_stream(events, stream(3000))
    assert main(["run", str(rules), str(events), "--out", str(tmp_path / "ref.jsonl"), "--quiet"]) == 0
    expected = capsys.readouterr().err
    monkeypatch.setattr(running, "SNAPSHOT_SHARE", 0.0)    # the first and the last checkpoint take one
    save, saved = running._Checkpoints.save, []

    def crashing(self: running._Checkpoints, *args: Any) -> None:
        saved.append(args[1].line)
        if len(saved) == 7:
            self.writer.wait()
            raise Crash
        save(self, *args)

    monkeypatch.setattr(running._Checkpoints, "save", crashing)
    out, ck = tmp_path / "out.jsonl", tmp_path / "ck"
    args = ["run", str(rules), str(events), "--out", str(out), "--checkpoint", str(ck), "--checkpoint-every", "250",
            "--quiet"]
    with pytest.raises(Crash):
        main(args)
    monkeypatch.setattr(running._Checkpoints, "save", save)
    checkpoint, written = (ck / "checkpoint").read_bytes(), out.read_bytes()
    capsys.readouterr()
    feed, fed = Engine.feed_text, []

    def terminated(self: Engine, *a: Any, **kw: Any) -> Any:
        fed.append(a[1])
        if len(fed) == 2:          # the second batch of the lines 251 to 1,500 read again
            os.kill(os.getpid(), signal.SIGTERM)
        return feed(self, *a, **kw)

    monkeypatch.setattr(Engine, "feed_text", terminated)
    assert main(args) == 143
    assert fed[:2] == [251, 501]
    said = capsys.readouterr().err.splitlines()
    assert said[0] == (f"etalis: terminated (SIGTERM): stopped after 1500 events, while reading again the lines its "
                       f"checkpoint had read: the checkpoint in {ck} stays as it was")
    assert summary(said[1]) == ("events read: 1500, accepted: 1500, raised by rules (event/1, timers): 682, "
                                "rejected: 0, detections: 1652, warnings: 0")
    assert len(said) == 2
    # the output cut back to what the checkpoint committed, as a resumed run does first
    committed = json.loads(checkpoint.splitlines()[1])["output"]
    assert ((ck / "checkpoint").read_bytes(), out.read_bytes()) == (checkpoint, written[:committed])
    monkeypatch.setattr(Engine, "feed_text", feed)
    assert main(args) == 0
    assert summary(capsys.readouterr().err) == summary(expected)
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()


def test_a_followed_run_crashed_after_checkpoints_without_a_snapshot_resumes_where_its_batches_ended(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    whole = tmp_path / "whole.events"
    write_stream(whole, stream(1500))
    assert main(["run", str(rules), str(whole), "--out", str(tmp_path / "ref.jsonl"), "--quiet"]) == 0
    expected = capsys.readouterr().err
    lines = whole.read_text().splitlines(keepends=True)
    events = tmp_path / "e.events"
    events.write_text("".join(lines[:330]))
    monkeypatch.setattr(running, "SNAPSHOT_SHARE", 0.0)    # the first and the last checkpoint take one
    save, saved = running._Checkpoints.save, []
    feed = Engine.feed_text

    def growing(self: Engine, text: str, first: int, *a: Any) -> Any:
        if first == 251:        # the file as it was: a batch of 80 lines, then the rest is appended
            with events.open("a") as f:
                f.write("".join(lines[330:]))
        return feed(self, text, first, *a)

    def crashing(self: running._Checkpoints, *args: Any) -> None:
        saved.append(args[1].line)
        if len(saved) == 4:
            self.writer.wait()
            raise Crash
        save(self, *args)

    monkeypatch.setattr(Engine, "feed_text", growing)
    monkeypatch.setattr(running._Checkpoints, "save", crashing)
    out = tmp_path / "out.jsonl"
    args = ["run", str(rules), str(events), "--follow", "--follow-timeout", "0.3", "--out", str(out), "--checkpoint",
            str(tmp_path / "ck"), "--checkpoint-every", "250"]
    with pytest.raises(Crash):
        main(args)
    assert saved == [251, 581, 831, 1081]
    capsys.readouterr()
    monkeypatch.setattr(running._Checkpoints, "save", save)
    monkeypatch.setattr(Engine, "feed_text", feed)
    # read again from line 251 in batches of 250: cut at line 831
    assert main(args) == 0
    resumed = capsys.readouterr().err.splitlines()
    assert resumed[0].endswith("; the state is rebuilt from its snapshot at line 251 by reading the 580 lines after "
                               "it again, without writing their detections twice")
    assert summary(resumed[-1]) == summary(expected)
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()


def test_a_checkpoint_resumed_with_other_options_is_refused_with_what_to_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args, ck = run_to_its_end_with_a_checkpoint(tmp_path)
    capsys.readouterr()
    assert main([*args, "--policy", "recent"]) == 1
    assert capsys.readouterr().err == (
        f"etalis: {ck / 'state-101'}: cannot restore the snapshot: it is a snapshot of other rules (or of other "
        "options: lateness, explain, policy, max_age) than this engine's: resume with the options of the run that "
        f"took it (--policy, --lateness, --max-age, --explain), or remove {ck} to start afresh\n")


def test_a_checkpoint_of_standard_input_whose_snapshot_is_not_at_its_position_is_refused(tmp_path: Path) -> None:
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    ck = tmp_path / "ck"
    options = ["--out", str(tmp_path / "out.jsonl"), "--checkpoint", str(ck), "--quiet"]
    text = "".join(f"event(hot(k{i}), {i}).\n" for i in range(10))
    first = subprocess.run([*ETALIS, "run", str(rules), "-", *options], input=text, capture_output=True, text=True,
                           timeout=600)
    assert first.returncode == 0, first.stderr
    magic, meta, _ = (ck / "checkpoint").read_bytes().split(b"\n")
    edited = json.loads(meta)
    edited["input"]["line"] = 20        # standard input cannot be read again from the snapshot's line 11
    (ck / "checkpoint").write_bytes(magic + b"\n" + json.dumps(edited).encode() + b"\n")
    second = subprocess.run([*ETALIS, "run", str(rules), "-", *options], input=text, capture_output=True, text=True,
                            timeout=600)
    assert (second.returncode, second.stderr) == (1, f"etalis: {ck / 'checkpoint'}: not a checkpoint of standard "
                                                     "input (its snapshot is not at its position): remove it to "
                                                     "start afresh\n")


def test_a_checkpoint_that_a_running_run_holds_is_refused_to_another(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    args, ck = run_to_its_end_with_a_checkpoint(tmp_path)
    capsys.readouterr()
    out = tmp_path / "o.jsonl"
    written = out.read_bytes()
    with lock_directory(ck):            # as a run still running holds it
        assert main(args) == 1
    assert capsys.readouterr().err == (f"etalis: {ck}: the checkpoint of a run that is still running: wait for it "
                                       "to end (or stop it), or give another --checkpoint DIR\n")
    assert out.read_bytes() == written
    assert main(args) == 0
