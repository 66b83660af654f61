"""Out-of-order events within a declared lateness."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from conftest import detect

from etalis_py import Detection, Engine, Rejection

RULES = "c(X) <- a(X) seq b(X).\nd(X) <- (a(X) and e(X)) within 3."


def test_late_events_are_matched_as_if_they_had_arrived_in_order() -> None:
    with Engine.from_string("c(X) <- a(X) seq b(X).", lateness=5) as engine:
        result = engine.emit_many([("a", [1], 10), ("b", [1], 12), ("a", [2], 9), ("b", [2], 11),
                                   ("a", [3], 3), ("b", [1], 20)])
        assert result.detections == [Detection("c", (2,), 9, 11), Detection("c", (1,), 10, 12)]
        assert result.rejected == [Rejection(5, "time 3 is more than the lateness (5 s) before the latest time 12")]
        assert engine.stats().buffered == 1
        assert engine.flush() == [Detection("c", (1,), 10, 20)]
        assert engine.stats().buffered == 0


def test_a_shuffled_stream_within_the_lateness_gives_the_in_order_detections() -> None:
    rng = random.Random(7)
    ordered = [(rng.choice("abe"), (rng.randrange(3),), t) for t in range(200)]
    shuffled = sorted(ordered, key=lambda e: e[2] + rng.uniform(0, 4))   # at most 4 late
    expected = detect(RULES, ordered)
    with Engine.from_string(RULES, lateness=4) as engine:
        result = engine.emit_many(shuffled)
        found = result.detections + engine.flush()
    assert result.rejected == []
    assert [(d.event, d.args, d.start, d.end) for d in found] == expected


def test_run_takes_lateness_and_flushes_at_the_end(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c(X) <- (a(X) seq b(X)) within 3600.\n")   # no warning of the rules on stderr
    stream = tmp_path / "s.jsonl"
    stream.write_text("".join(json.dumps({"event": n, "args": [1], "time": t}) + "\n"
                              for n, t in [("b", 5), ("a", 4), ("a", 1), ("b", 6)]))
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(stream),
                        "--lateness", "2"], capture_output=True, text=True, timeout=60)
    assert [json.loads(line) for line in r.stdout.splitlines()] == [
        {"event": "c", "args": [1], "start": 4, "end": 5}, {"event": "c", "args": [1], "start": 4, "end": 6}]
    assert r.stderr.splitlines()[0] == f"{stream}:3: rejected: time 1 is more than the lateness (2.0 s) before the latest time 5 (a larger --lateness accepts it)"
    assert r.stderr.splitlines()[-1].startswith("events read: 4, accepted: 3, rejected: 1, detections: 2,")


def test_run_says_times_out_of_order_as_the_input_writes_them(tmp_path: Path) -> None:
    """Dates in --time-format (in --time-zone), not seconds since 1970."""
    rules = tmp_path / "r.etl"
    rules.write_text("c(X) <- (a(X) seq b(X)) within 3600.\n")
    stream = tmp_path / "s.csv"
    stream.write_text("day,x\n01/07/2024 02:10,1\n01/07/2024 02:00,1\n01/07/2024 02:20,1\n")
    mapping = ["--event", "a", "--args", "x", "--time", "day", "--time-format", "%d/%m/%Y %H:%M",
               "--time-zone", "Europe/Berlin"]
    for options, reason in [
        ([], "time 01/07/2024 02:00 is earlier than the last accepted time 01/07/2024 02:10 "
             "(events must arrive in time order; --lateness SECONDS accepts events up to that late)"),
        (["--lateness", "300"], "time 01/07/2024 02:00 is more than the lateness (300.0 s) before the latest time "
                                "01/07/2024 02:10 (a larger --lateness accepts it)")]:
        r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), str(stream), *mapping, *options],
                           capture_output=True, text=True, timeout=60)
        assert r.stderr.splitlines()[0] == f"{stream}:3: rejected: {reason}"
