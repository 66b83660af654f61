"""Bounds and counts: every event is accepted or rejected (stats() and
etalis run), a callback that raises costs no detection, a time beyond the
horizon and a text beyond the largest row are bad rows, and an engine
whose stacks fill up stops with an error and its summary."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from etalis_py import CallbackError, Detection, Engine, EventError, InferenceLimitError, Rejection

HORIZON = ("is beyond the horizon of 253,402,300,799 seconds (the end of the year 9999): times are seconds, "
           "not milliseconds or nanoseconds")


def counts(engine: Engine) -> tuple[int, int, int, int]:
    s = engine.stats()
    return s.accepted, s.rejected, s.detections, s.pending


def test_emit_counts_every_event_it_refuses_as_rejected() -> None:
    with Engine.from_string("c(K) <- a(K) seq b(K).") as engine:
        engine.emit("a", 1, at=1)
        assert counts(engine) == (1, 0, 0, 1)
        with pytest.raises(EventError, match=r"^time nan is not finite$"):
            engine.emit("a", 2, at=float("nan"))
        assert counts(engine) == (1, 1, 0, 1)
        with pytest.raises(EventError, match=r"^event 'a': an argument is missing \(None\)$"):
            engine.emit("a", None, at=2)
        assert counts(engine) == (1, 2, 0, 1)
        with pytest.raises(EventError, match=r"^event 'b' rejected: time 0 is earlier than the last accepted time 1"):
            engine.emit("b", 1, at=0)
        assert counts(engine) == (1, 3, 0, 1)
        assert engine.emit("b", 1, at=3) == [Detection("c", (1,), 1, 3)]
        assert counts(engine) == (2, 3, 1, 1)


def test_an_event_stopped_at_the_inference_limit_counts_as_rejected() -> None:
    rules = "c(X) <- a(X) where loop(X).\nloop(X) :- loop(X).\nd(X) <- b(X)."
    with Engine.from_string(rules, inference_limit=100_000) as engine:
        with pytest.raises(InferenceLimitError):
            engine.emit_many([("b", [1], 1), ("a", [2], 2), ("b", [3], 3)])
        assert counts(engine) == (1, 1, 1, 0)
        with pytest.raises(InferenceLimitError):
            engine.emit("a", 4, at=4)
        assert counts(engine) == (1, 2, 1, 0)


def test_a_callback_that_raises_on_the_first_detection_of_a_batch_loses_none_of_the_others() -> None:
    seen: list[Detection] = []

    def first_fails(d: Detection) -> None:
        seen.append(d)
        if len(seen) == 1:
            raise RuntimeError("boom")

    with Engine.from_string("c(K) <- a(K) seq b(K).\nd(K) <- a(K) seq e(K).") as engine:
        engine.on("c", first_fails)
        events = [("a", (1,), 1), ("a", (2,), 2), ("a", (3,), 3), ("b", (1,), 4), ("b", (2,), 5), ("b", (3,), 6),
                  ("e", (1,), 7)]
        with pytest.raises(CallbackError) as info:
            engine.emit_many(events, collect=False)
        assert seen == [Detection("c", (k,), k, k + 3) for k in (1, 2, 3)]
        assert [(d, repr(e)) for d, e in info.value.errors] == [(seen[0], "RuntimeError('boom')")]
        assert repr(info.value.__cause__) == "RuntimeError('boom')"
        assert str(info.value).splitlines()[0] == f"a callback raised RuntimeError: boom on {seen[0]}"
        # d(1), which no callback takes, waits in the pull queue
        assert engine.detections() == [Detection("d", (1,), 1, 7)]
        assert counts(engine) == (7, 0, 4, 6)     # a(1..3) wait in both rules' goals


def test_a_callback_that_raises_in_emit_leaves_the_detection_for_the_pull_queue_if_unclaimed() -> None:
    with Engine.from_string("c(K) <- a(K) seq b(K).\nd(K) <- a(K) seq b(K).") as engine:
        engine.on("c", lambda d: 1 / 0)
        engine.emit("a", 1, at=1)
        with pytest.raises(CallbackError) as info:
            engine.emit("b", 1, at=2)
        assert [repr(e) for _, e in info.value.errors] == ["ZeroDivisionError('division by zero')"]
        assert engine.detections() == [Detection("d", (1,), 1, 2)]
        assert counts(engine) == (2, 0, 2, 1)


def test_a_time_beyond_the_horizon_is_a_bad_row_and_later_events_go_on() -> None:
    with Engine.from_string("c <- a seq b.") as engine:
        result = engine.emit_many([("a", (), 1), ("a", (), 1e308), ("a", (), 1.7e12), ("b", (), 3)])
        assert result.rejected == [Rejection(2, f"time 1.0e+308 {HORIZON}"),
                                   Rejection(3, f"time 1700000000000.0 {HORIZON}")]
        assert result.detections == [Detection("c", (), 1, 3)]
        with pytest.raises(EventError, match=re.escape(f"event 'a' rejected: time -1.0e+300 {HORIZON}")):
            engine.emit("a", start=-1e300, end=4)
        assert counts(engine) == (2, 3, 1, 1)
        assert engine.emit("b", at=253_402_300_799) == [Detection("c", (), 1, 253_402_300_799)]


def test_an_events_line_beyond_the_horizon_is_rejected(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c <- a seq b.\n")
    events = tmp_path / "s.events"
    events.write_text("event(a, 1).\nevent(b, 1.0e308).\nevent(b, [2, 1.0e20]).\nevent(b, 3).\n")
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(events), "--quiet"],
                       capture_output=True, text=True, timeout=120)
    assert r.stdout == '{"event": "c", "args": [], "start": 1, "end": 3}\n'
    assert r.stderr.splitlines()[-1].startswith("events read: 4, accepted: 2, rejected: 2, detections: 1,")


def test_a_text_longer_than_the_largest_row_is_a_bad_row() -> None:
    long = "x" * 10_000_001
    with Engine.from_string("c(X) <- a(X).") as engine:
        with pytest.raises(EventError, match="^event 'a': a text of 10,000,001 characters is longer than the "
                                             "10,000,000 a row may hold$"):
            engine.emit("a", long, at=1)
        result = engine.emit_many([("a", (long,), 1), ("a", ("y",), 2)])
        assert result.rejected == [
            Rejection(1, "a text of 10,000,001 characters is longer than the 10,000,000 a row may hold")]
        assert result.detections == [Detection("c", ("y",), 2, 2)]
        assert counts(engine) == (1, 2, 1, 0)


def test_an_events_line_longer_than_the_largest_row_is_a_bad_row(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c(X) <- a(X).\n")
    events = tmp_path / "s.events"
    events.write_text(f"event(a({'x' * 10_000_000}), 1).\nevent(a(y), 2).\n")
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(events)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    assert r.stdout == '{"event": "c", "args": ["y"], "start": 2, "end": 2}\n'
    assert r.stderr.splitlines()[0] == (f"{events}:1: rejected: the line holds 10,000,014 characters, more than "
                                        "the 10,000,000 a row may hold")
    assert r.stderr.splitlines()[-1].startswith("events read: 2, accepted: 1, rejected: 1, detections: 1,")


def test_when_the_stacks_are_full_run_stops_with_the_error_and_its_summary(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c(K) <- a(K) seq b(K).\n")
    events = tmp_path / "s.events"
    events.write_text("".join(f"event(a({i}), {i + 1}).\n" for i in range(200_000)))
    env = dict(os.environ, ETALIS_STACK_LIMIT="32m")
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(events), "--quiet"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert (r.returncode, r.stdout) == (3, "")
    lines = r.stderr.splitlines()
    stop = re.fullmatch(rf"{re.escape(str(events))}:(\d+): error: event a\((\d+)\) \(line (\d+)\) ran out of memory: "
                        r"the engine's stacks reached their limit of 32 MiB", lines[0])
    assert stop is not None, lines[0]
    line = int(stop[1])
    assert int(stop[2]) == line - 1 and int(stop[3]) == line and 10_000 < line < 200_000
    assert lines[1] == ("  hint: the pending goals fill the memory: bound them with a window (within), :- max_age(D). "
                        "or --max-age D, or a consuming policy; or raise the limit (ETALIS_STACK_LIMIT=bytes, "
                        "e.g. 16g)")
    # every goal stored before the stop stays (a store links a new cell only once it is whole): the
    # accepted events' and, if the stacks filled after it was stored (not while a store grew), the
    # stopped event's own; which of the two depends on where the stacks fill, so both are exact
    summary = re.fullmatch(rf"events read: {line}, accepted: {line - 1}, rejected: 1, detections: 0, warnings: 0, "
                           r"seconds: [0-9.]+, pending: (\d+), cpu seconds: [0-9.]+", lines[2])
    assert summary is not None and int(summary[1]) in (line - 1, line), lines[2]


@pytest.mark.parametrize(("limit", "shown"), [("25.5m", "25.5 MiB"), ("29m", "29 MiB"), ("28.5m", "28.5 MiB")])
def test_stacks_found_full_between_two_events_stop_the_run_as_inside_one(tmp_path: Path, limit: str,
                                                                          shown: str) -> None:
    # where the stacks fill depends on what the loop leaves on them: at these limits they fill at a
    # call of the feed loop between two events or inside an event; either way the run stops with the
    # engine's error and its summary, not a Prolog dump
    rules = tmp_path / "r.etl"
    rules.write_text("c(K) <- a(K) seq b(K).\n")
    events = tmp_path / "s.events"
    events.write_text("".join(f"event(a({i}), {i + 1}).\n" for i in range(100_000)))
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(events), "--quiet"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, ETALIS_STACK_LIMIT=limit))
    assert (r.returncode, r.stdout) == (3, "")
    lines = r.stderr.splitlines()
    assert len(lines) == 3, r.stderr[:2000]
    stop = re.fullmatch(rf"{re.escape(str(events))}:(\d+): error: event a\((\d+)\) \(line (\d+)\) ran out of memory: "
                        rf"the engine's stacks reached their limit of {re.escape(shown)}", lines[0])
    assert stop is not None, lines[0]
    line = int(stop[1])
    assert int(stop[2]) == line - 1 and int(stop[3]) == line and 10_000 < line < 100_000
    assert lines[1].startswith("  hint: the pending goals fill the memory: ")
    summary = re.fullmatch(rf"events read: {line}, accepted: {line - 1}, rejected: 1, detections: 0, warnings: 0, "
                           r"seconds: [0-9.]+, pending: (\d+), cpu seconds: [0-9.]+", lines[2])
    assert summary is not None and int(summary[1]) in (line - 1, line), lines[2]


def test_detections_whose_text_does_not_fit_in_the_full_stacks_are_all_printed(tmp_path: Path) -> None:
    # 40,000 pending goals and a batch of 200,000 detections: their text would not fit in the 16 MiB
    # the goals leave; the events that made them are processed, so they are handed over all the same
    rules = tmp_path / "r.etl"
    rules.write_text("c(X, Y) <- a(X) seq b(Y).\n")
    events = tmp_path / "s.events"
    events.write_text("".join(f"event(a({i}), {i + 1}).\n" for i in range(40_000))
                      + "".join(f"event(b({j}), {40_001 + j}).\n" for j in range(5)))
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(events), "--quiet"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, ETALIS_STACK_LIMIT="16m"))
    assert r.returncode == 0, r.stderr[:2000]
    out = r.stdout.splitlines()
    assert len(out) == 200_000
    assert out[0] == '{"event": "c", "args": [0, 0], "start": 1, "end": 40001}'
    assert out[-1] == '{"event": "c", "args": [39999, 4], "start": 40000, "end": 40005}'
    assert re.fullmatch(r"events read: 40005, accepted: 40005, rejected: 0, detections: 200000, warnings: 0, "
                        r"seconds: [0-9.]+, pending: 40000, cpu seconds: [0-9.]+", r.stderr.strip()), r.stderr[:2000]


def test_a_stack_limit_that_is_no_size_is_refused() -> None:
    env = dict(os.environ, ETALIS_STACK_LIMIT="lots")
    r = subprocess.run([sys.executable, "-c", "from etalis_py import Engine; Engine.from_string('c <- a.')"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 1
    assert r.stderr.splitlines()[-1] == ("etalis_py.errors.EtalisError: ETALIS_STACK_LIMIT='lots' is not a size of at "
                                         "least 16m (bytes, or a number with k, m or g)")


def test_when_the_stacks_are_full_the_last_checkpoint_stays_and_a_larger_limit_resumes_from_it(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c(K) <- a(K) seq b(K).\n")
    events = tmp_path / "s.events"
    events.write_text("".join(f"event(a({i}), {2 * i + 1}).\n" + (f"event(b({i}), {2 * i + 2}).\n" if i % 1000 == 0 else "")
                              for i in range(120_000)))
    whole, out = tmp_path / "whole.jsonl", tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(events), "--quiet"]
    run = subprocess.run([*command, "--out", str(whole)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and len(whole.read_text().splitlines()) == 120
    resumable = [*command, "--out", str(out), "--checkpoint", str(tmp_path / "ck"), "--checkpoint-every", "1000"]
    small = subprocess.run(resumable, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, ETALIS_STACK_LIMIT="32m"))
    assert small.returncode == 3
    lines = small.stderr.splitlines()
    # the stacks fill up at an event, or while the state is written at a checkpoint: either way the
    # run stops with its summary, and the checkpoint before it is whole
    assert re.fullmatch(rf"{re.escape(str(events))}:\d+: error: (event a\(\d+\) \(line \d+\) ran out of memory: the "
                        r"engine's stacks reached their limit of 32 MiB|the checkpoint could not be taken, the last "
                        rf"one in {re.escape(str(tmp_path / 'ck'))} stays: the engine ran out of memory in its "
                        r"request snapshot: its stacks reached their limit of 32 MiB)", lines[0]), lines[0]
    assert lines[1].startswith("  hint: ") and "ETALIS_STACK_LIMIT=bytes" in lines[1]
    assert lines[2].startswith("events read: ")
    assert 0 < len(out.read_text().splitlines()) < 120
    resumed = subprocess.run(resumable, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert out.read_bytes() == whole.read_bytes()
    assert re.fullmatch(r"events read: 120120, accepted: 120120, rejected: 0, detections: 120, warnings: 0, "
                        r"seconds: [0-9.]+, pending: 120000, cpu seconds: [0-9.]+", resumed.stderr.splitlines()[-1])
