"""Provenance: with explain=True each detection lists the input events it was built from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from etalis_py import Detection, Engine

RULES = "c(X) <- (a(X) seq b(X)) or d(X).\nf(X) <- c(X) and g(X).\nn <- (a(_) seq b(_)) cnot z."


def ev(name: str, arg: int, t: int) -> Detection:
    return Detection(name, (arg,), t, t)


def test_provenance_follows_every_rule_a_detection_depends_on() -> None:
    with Engine.from_string(RULES, explain=True) as engine:
        found = engine.emit_many([("a", [1], 1), ("b", [1], 2), ("d", [1], 3), ("g", [1], 4)]).detections
    assert found == [
        Detection("c", (1,), 1, 2, (ev("a", 1, 1), ev("b", 1, 2))),
        Detection("n", (), 1, 2, (ev("a", 1, 1), ev("b", 1, 2))),
        Detection("c", (1,), 3, 3, (ev("d", 1, 3),)),
        Detection("f", (1,), 1, 4, (ev("a", 1, 1), ev("b", 1, 2), ev("g", 1, 4))),
        Detection("f", (1,), 3, 4, (ev("d", 1, 3), ev("g", 1, 4))),
    ]


def test_provenance_of_fnot_is_that_of_its_pattern() -> None:
    rules = "q(X) <- (a(X) seq b(X)) fnot z(X)."
    with Engine.from_string(rules, explain=True) as engine:
        found = engine.emit_many([("a", [1], 1), ("a", [2], 1), ("z", [2], 2), ("b", [1], 3), ("b", [2], 3)]).detections
    assert found == [Detection("q", (1,), 1, 3, (ev("a", 1, 1), ev("b", 1, 3)))]


def test_without_explain_the_same_rules_give_the_same_detections_without_provenance() -> None:
    with Engine.from_string(RULES) as engine:
        plain = engine.emit_many([("a", [1], 1), ("b", [1], 2), ("d", [1], 3), ("g", [1], 4)]).detections
    assert [(d.event, d.args, d.start, d.end, d.provenance) for d in plain] == [
        ("c", (1,), 1, 2, ()), ("n", (), 1, 2, ()), ("c", (1,), 3, 3, ()), ("f", (1,), 1, 4, ()), ("f", (1,), 3, 4, ())]


def test_explain_with_print_events_and_an_aggregate() -> None:
    rules = ":- print_events([av/1]).\nav(A) <- aggregate(avg(V), a(V), count(2), A)."
    with Engine.from_string(rules, explain=True) as engine:
        found = engine.emit_many([("a", [1], 1), ("a", [3], 2)]).detections
    assert found == [Detection("av", (2,), 1, 2, ())]


def test_run_explain_writes_provenance_in_each_line(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c(X) <- a(X) seq b(X).\n")
    stream = tmp_path / "s.events"
    stream.write_text("event(a(1), 1).\nevent(b(1), 2).\n")
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(stream), "--explain"],
                       capture_output=True, text=True, timeout=60)
    assert [json.loads(line) for line in r.stdout.splitlines()] == [
        {"event": "c", "args": [1], "start": 1, "end": 2, "provenance": [
            {"event": "a", "args": [1], "start": 1, "end": 1}, {"event": "b", "args": [1], "start": 2, "end": 2}]}]


def test_an_event_line_may_give_its_provenance_as_replay_passes_derived_events_on() -> None:
    # event(E, Time, Prov): with explain, Prov stands for E's input events; without, it is ignored
    lines = ("event(a(1), [1, 2], [det(x(1), 1, 1), det(y(1), 2, 2)]).\nevent(b(1), 3).\n"
             "event(a(2), 4, foo).\nevent(a(2), 5, [det(_, 1, 1)]).\n")
    with Engine.from_string("c(X) <- a(X) seq b(X).\n", explain=True) as engine:
        result = engine.feed_text(lines)
    assert result.detection_lines == (
        '{"event": "c", "args": [1], "start": 1, "end": 3, "provenance": [{"event": "x", "args": [1], '
        '"start": 1, "end": 1}, {"event": "y", "args": [1], "start": 2, "end": 2}, '
        '{"event": "b", "args": [1], "start": 3, "end": 3}]}\n')
    assert [(r.line, r.reason) for r in result.rejected] == [
        (3, "provenance foo is not a list of ground det(Event, Start, End)"),
        (4, "provenance [det(_,1,1)] is not a list of ground det(Event, Start, End)")]
    with Engine.from_string("c(X) <- a(X) seq b(X).\n") as engine:
        assert engine.feed_text("".join(lines.splitlines(keepends=True)[:2])).detection_lines == '{"event": "c", "args": [1], "start": 1, "end": 3}\n'


def test_provenance_changes_no_choice_of_a_policy() -> None:
    # the provenance's append/3 only computes a value, as C1 is C + 1 does: it is no filter
    # in recent's choice, so with explain=True the settling counts as without (examples/wind_area,
    # station C1720's high winds at 11:45, 12:45, 13:00, 13:15, 13:30 and 14:00)
    rules = (":- policy(settling, recent(longer)).\n"
             "s(1) <- h(_).\n"
             "settling : s(C1) <- (s(C) seq h(_)) within 3600 where C1 is C + 1.\n"
             "w <- s(C) where C =:= 4.\n"
             ":- print_events([w/0]).\n")
    times = [0, 3600, 4500, 5400, 6300, 8100]
    found = []
    for explain in (False, True):
        with Engine.from_string(rules, explain=explain) as engine:
            found.append([(d.start, d.end) for d in engine.emit_many([("h", [i], t) for i, t in enumerate(times)])
                          .detections])
    assert found == [[(4500, 8100)], [(4500, 8100)]]
