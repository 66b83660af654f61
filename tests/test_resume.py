"""Resuming `etalis run --checkpoint` from checkpoints without a snapshot
of their own (reading the input again from the snapshot they name), after
crashes, signals and changes to the input, the options or the checkpoint's
files; and what a damaged or foreign checkpoint is told."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import pytest

from etalis_py import Engine
from etalis_py.bridge.checkpoint import lock_directory
from etalis_py.cli import main, running
from etalis_py.cli.entry import parse

from live_streams import ETALIS, SILENT, STATEFUL, mapping, stateful_files, stream, summary, write_stream


class Crash(BaseException):
    """A run that stops as a SIGKILL would stop it, between two checkpoints."""


def crash_at(monkeypatch: pytest.MonkeyPatch, nth: int) -> tuple[list[int], Callable[[], None]]:
    """Make `etalis run` take a snapshot at its first and last checkpoint
    only, and stop as a SIGKILL would at its ``nth`` checkpoint, once the
    one before is durable (the output after it half written).  Returns
    the lines of its checkpoints, as they are taken, and what puts the
    checkpoints back for the run that resumes."""
    monkeypatch.setattr(running, "SNAPSHOT_SHARE", 0.0)
    save, lines = running._Checkpoints.save, []

    def crashing(self: running._Checkpoints, *args: Any) -> None:
        lines.append(args[1].line)
        if len(lines) == nth:
            self.writer.wait()
            raise Crash
        save(self, *args)

    monkeypatch.setattr(running._Checkpoints, "save", crashing)
    return lines, lambda: monkeypatch.setattr(running._Checkpoints, "save", save)


def crashed_then_resumed(capsys: pytest.CaptureFixture[str], resume: Callable[[], None], args: list[str],
                         again: Optional[list[str]] = None) -> list[str]:
    """The lines on standard error of the run of ``args`` started again
    (as ``again``, if given) after it crashed (see :func:`crash_at`,
    whose ``resume`` puts the checkpoints back)."""
    with pytest.raises(Crash):
        main(args)
    capsys.readouterr()
    resume()
    assert main(again or args) == 0
    return capsys.readouterr().err.splitlines()

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

    saved, resume = crash_at(monkeypatch, crash)
    args = ["run", str(rules), str(events), "--out", str(out), "--lateness", "2", "--checkpoint",
            str(tmp_path / "ck"), "--checkpoint-every", "250", *mapping(events)]
    resumed = crashed_then_resumed(capsys, resume, args)
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
    rules, events = stateful_files(tmp_path, 3000)
    out = tmp_path / "out.jsonl"
    assert main(["run", str(rules), str(events), "--out", str(tmp_path / "ref.jsonl"), "--lateness", "2"]) == 0
    expected = capsys.readouterr().err.splitlines()

    saved, resume = crash_at(monkeypatch, 7)  # the checkpoint at line 1501 is durable, its snapshot at 251
    args = ["run", str(rules), str(events), "--out", str(out), "--lateness", "2", "--checkpoint", str(tmp_path / "ck")]
    # read again in batches of lines 251-650, ..., 1451-1850
    resumed = crashed_then_resumed(capsys, resume, [*args, "--checkpoint-every", "250"],
                                   [*args, "--checkpoint-every", "400"])
    assert resumed[0].endswith("; the state is rebuilt from its snapshot at line 251 by reading the 1,250 lines "
                               "after it again, without writing their detections twice")
    assert summary(resumed[-1]) == summary(expected[-1])
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()


def flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]


def state_at(data: bytes, line: int) -> int:
    """Where line ``line`` (from 0) of the snapshot ``data`` starts."""
    at = 0
    for _ in range(line):
        at = data.index(b"\n", at) + 1
    return at


def run_to_its_end_with_a_checkpoint(tmp_path: Path) -> tuple[list[str], Path]:
    rules, events = stateful_files(tmp_path, 100)
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
    rules, events = stateful_files(tmp_path, 100)
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
    rules, events = stateful_files(tmp_path, 100, "e.csv")
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

    saved, resume = crash_at(monkeypatch, 3)  # a batch holds several graphs: the third checkpoint is one of the last
    out = tmp_path / "out.jsonl"
    args = ["run", str(rules), str(events), "--out", str(out), "--checkpoint", str(tmp_path / "ck"),
            "--checkpoint-every", "7"]
    err = crashed_then_resumed(capsys, resume, args)
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
    rules, events = stateful_files(tmp_path, 3000, f"e{suffix}")
    assert main(["run", str(rules), str(events), "--out", str(tmp_path / "ref.jsonl"), *mapping(events)]) == 0
    expected = capsys.readouterr().err.splitlines()

    saved, resume = crash_at(monkeypatch, 7)
    out = tmp_path / "out.jsonl"
    args = ["run", str(rules), str(events), "--out", str(out), "--checkpoint", str(tmp_path / "ck"), *mapping(events)]
    # the batches of 100 or 400 lines from the snapshot's line do not end
    # at the checkpoint's: the last one read again is cut there
    resumed = crashed_then_resumed(capsys, resume, [*args, "--checkpoint-every", "250"],
                                   [*args, "--checkpoint-every", str(every)])
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
    rules, events = stateful_files(tmp_path, 3000)
    assert main(["run", str(rules), str(events), "--out", str(tmp_path / "ref.jsonl"), "--quiet"]) == 0
    expected = capsys.readouterr().err

    saved, resume = crash_at(monkeypatch, 7)
    out, ck = tmp_path / "out.jsonl", tmp_path / "ck"
    args = ["run", str(rules), str(events), "--out", str(out), "--checkpoint", str(ck), "--checkpoint-every", "250",
            "--quiet"]
    with pytest.raises(Crash):
        main(args)
    resume()
    checkpoint, written = (ck / "checkpoint").read_bytes(), out.read_bytes()
    capsys.readouterr()
    feeds, fed = (Engine.feed_text, Engine.feed_packed), []

    def terminating(feed: Any) -> Any:
        def terminated(self: Engine, *a: Any, **kw: Any) -> Any:
            fed.append(a[1])
            if len(fed) == 2:          # the second batch of the lines 251 to 1,500 read again
                os.kill(os.getpid(), signal.SIGTERM)
            return feed(self, *a, **kw)
        return terminated

    monkeypatch.setattr(Engine, "feed_text", terminating(feeds[0]))     # a .events file's batches: text or packed
    monkeypatch.setattr(Engine, "feed_packed", terminating(feeds[1]))
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
    monkeypatch.setattr(Engine, "feed_text", feeds[0])
    monkeypatch.setattr(Engine, "feed_packed", feeds[1])
    assert main(args) == 0
    assert summary(capsys.readouterr().err) == summary(expected)
    assert out.read_bytes() == (tmp_path / "ref.jsonl").read_bytes()


def test_a_followed_run_crashed_after_checkpoints_without_a_snapshot_resumes_where_its_batches_ended(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    rules, whole = stateful_files(tmp_path, 1500, "whole.events")
    assert main(["run", str(rules), str(whole), "--out", str(tmp_path / "ref.jsonl"), "--quiet"]) == 0
    expected = capsys.readouterr().err
    lines = whole.read_text().splitlines(keepends=True)
    events = tmp_path / "e.events"
    events.write_text("".join(lines[:330]))
    feed = Engine.feed_text

    def growing(self: Engine, text: str, first: int, *a: Any) -> Any:
        if first == 251:        # the file as it was: a batch of 80 lines, then the rest is appended
            with events.open("a") as f:
                f.write("".join(lines[330:]))
        return feed(self, text, first, *a)

    monkeypatch.setattr(Engine, "feed_text", growing)
    saved, resume = crash_at(monkeypatch, 4)
    out = tmp_path / "out.jsonl"
    args = ["run", str(rules), str(events), "--follow", "--follow-timeout", "0.3", "--out", str(out), "--checkpoint",
            str(tmp_path / "ck"), "--checkpoint-every", "250"]
    with pytest.raises(Crash):
        main(args)
    assert saved == [251, 581, 831, 1081]
    capsys.readouterr()
    resume()
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


def test_a_checkpoint_directory_that_is_a_file_is_refused_with_what_to_give(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "alarm.etl"
    rules.write_text(STATEFUL)
    events = tmp_path / "e.events"
    write_stream(events, stream(10))
    (tmp_path / "ck").write_text("")
    assert main(["run", str(rules), str(events), "--checkpoint", str(tmp_path / "ck"), "--quiet"]) == 1
    assert capsys.readouterr().err == (f"etalis: --checkpoint {tmp_path / 'ck'}: not a directory (a file is in its "
                                       "place): give a directory, which the run makes if it is missing\n")
