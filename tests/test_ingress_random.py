"""Every way in gives exactly the detections of `etalis run` on a .events
file, on the random rule sets and streams of the differential tests
(reference/generate.py, as tests/fuzz_semantics.py draws them): emit_many
and emit_frame, with events crossing as packed columns and as text, and
`etalis run` on JSON lines, CSV and Parquet.  CSV and Parquet hold one
argument mapping a file, so they get the points of the stream's most
common arity (the same sub-stream through every other way too)."""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etalis_py import Engine, cli
from etalis_py.bridge.engine import BatchResult
from etalis_py.events import Event
from reference.check import Case
from reference.generate import RandomChoices, random_case, random_policy

Found = list[tuple[str, tuple[Any, ...], Any, Any]]

SEEDS = range(80)


def drawn(seed: int) -> tuple[Case, str]:
    ch = RandomChoices(random.Random(seed))
    return random_case(ch), random_policy(ch)


def tabular(stream: tuple[Event, ...]) -> tuple[Event, ...]:
    """The points of the stream's most common arity."""
    points = [e for e in stream if e.start == e.end]
    if not points:
        return ()
    arity = Counter(len(e.args) for e in points).most_common(1)[0][0]
    return tuple(e for e in points if len(e.args) == arity)


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: Case, policy: str, suffix: str,
        stream: tuple[Event, ...]) -> Found:
    rules = tmp_path / "rules.etl"
    rules.write_text(case.text(), encoding="utf-8")
    path = tmp_path / f"stream{suffix}"
    options: list[str] = []
    if suffix == ".events":
        path.write_text("".join(e.to_prolog() for e in stream), encoding="utf-8")
    elif suffix == ".jsonl":
        path.write_text("".join(json.dumps({"event": e.name, "args": list(e.args), "start": e.start,
                                            "end": e.end}) + "\n" for e in stream), encoding="utf-8")
    else:
        arity = len(stream[0].args) if stream else 0
        header = ["name", *(f"x{i}" for i in range(arity)), "t"]
        rows = [[e.name, *(str(a) for a in e.args), repr(e.end)] for e in stream]
        if suffix == ".csv":
            with path.open("w", newline="", encoding="utf-8") as f:
                writer = csv.writer(f)
                writer.writerow(header)
                writer.writerows(rows)
        else:
            pq.write_table(pa.table({h: pa.array([r[i] for r in rows], pa.string())
                                     for i, h in enumerate(header)}), path)
        options = ["--event-col", "name", "--time", "t"] + (["--args", ",".join(header[1:-1])] if arity else [])
    code = cli.main(["run", str(rules), "--events", str(path), "--policy", policy, "--quiet", *options])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_OK, err
    assert ", rejected: 0," in err.splitlines()[-1], err
    return [(d["event"], tuple(d["args"]), d["start"], d["end"]) for d in map(json.loads, out.splitlines())]


def emitted(case: Case, policy: str, emit: Callable[[Engine], list[BatchResult]]) -> Found:
    """The detections of the results of ``emit`` on a new engine."""
    with Engine.from_string(case.text(), policy=policy) as engine:
        results = emit(engine)
    assert [r.rejected for r in results if r.rejected] == []
    return [(d.event, d.args, d.start, d.end) for r in results for d in r.detections]


def frames(engine: Engine, stream: tuple[Event, ...]) -> list[BatchResult]:
    """The stream as DataFrames, one for each run of events of one arity,
    in order."""
    runs: list[list[Event]] = []
    for e in stream:
        if runs and len(runs[-1][0].args) == len(e.args):
            runs[-1].append(e)
        else:
            runs.append([e])
    results = []
    for events in runs:
        arity = len(events[0].args)
        frame = pd.DataFrame({"name": [e.name for e in events],
                              **{f"x{i}": [e.args[i] for e in events] for i in range(arity)},
                              "start": [e.start for e in events], "end": [e.end for e in events]})
        results.append(engine.emit_frame(frame, event_col="name", args=[f"x{i}" for i in range(arity)],
                                         start="start", end="end"))
    return results


@pytest.mark.parametrize("hand_over", ["columns", "text"])
@pytest.mark.parametrize("seed", SEEDS)
def test_every_way_in_detects_what_etalis_run_does_on_random_rules_and_streams(
        seed: int, hand_over: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    if hand_over == "text":
        monkeypatch.setenv("ETALIS_TEXT_PATH", "1")
    else:
        monkeypatch.delenv("ETALIS_TEXT_PATH", raising=False)
    case, policy = drawn(seed)
    for stream in (case.stream, tabular(case.stream)):
        expected = run(tmp_path, capsys, case, policy, ".events", stream)
        assert emitted(case, policy, lambda engine: [engine.emit_many(stream)]) == expected
        assert emitted(case, policy, lambda engine: [engine.emit_many(stream, 3)]) == expected
        assert emitted(case, policy, lambda engine: frames(engine, stream)) == expected
        assert run(tmp_path, capsys, case, policy, ".jsonl", stream) == expected
    stream = tabular(case.stream)
    expected = run(tmp_path, capsys, case, policy, ".events", stream)
    assert run(tmp_path, capsys, case, policy, ".csv", stream) == expected
    assert run(tmp_path, capsys, case, policy, ".parquet", stream) == expected


def test_the_random_cases_are_not_empty_ones() -> None:
    """Of the 80 cases, 53 detect something on their whole stream (627
    detections in all) and 30 on their tabular points: the comparisons
    above compare detections, not empty lists."""
    whole = [emitted(case, policy, lambda engine: [engine.emit_many(case.stream)])
             for case, policy in map(drawn, SEEDS)]
    points = [emitted(case, policy, lambda engine: [engine.emit_many(tabular(case.stream))])
              for case, policy in map(drawn, SEEDS)]
    assert (sum(map(bool, whole)), sum(map(len, whole)), sum(map(bool, points))) == (53, 627, 30)
