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
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etalis_py import Detection, Engine
from etalis_py.cli import main

from live_streams import ETALIS, SILENT, STATEFUL, mapping, run_cli, stateful_files, stream, summary, write_stream

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
    rules, events = stateful_files(tmp_path, 2000, "all.events")
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


def test_checkpoints_need_output_written_as_it_goes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules, events = stateful_files(tmp_path, 10)
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


