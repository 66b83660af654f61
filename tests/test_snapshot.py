"""Snapshots: an engine's state as bytes, taken up by an engine of the same rules.

Each family of constructs is run once without a break and, for every cut
point of its stream, as prefix, snapshot, restore into a new engine and
suffix: the detections (with their provenance), warnings, rejections and
stats are the same.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import subprocess
import sys
import textwrap
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from etalis_py import Detection, Engine, EngineStats, EtalisError, SnapshotError
from etalis_py.bridge.engine import STRATEGIES
from etalis_py.bridge.results import SNAPSHOT_COUNTERS, snapshot_bytes

Stream = list[tuple[str, list[Any], Any]]


@dataclass(frozen=True)
class Outcome:
    """What a run gave: detections (event, args, start, end, provenance), the
    warnings and rejections (line, text), and the stats at its end."""

    detections: list[tuple[Any, ...]]
    warnings: list[tuple[int, str]]
    rejected: list[tuple[int, str]]
    stats: EngineStats


def found(detections: list[Detection]) -> list[tuple[Any, ...]]:
    return [(d.event, d.args, d.start, d.end,
             None if d.provenance is None else tuple((p.event, p.args, p.start, p.end) for p in d.provenance))
            for d in detections]


def run(rules: str, stream: Stream, cut: int, restore: bool, **options: Any) -> Outcome:
    """Feed ``stream`` in two batches, cut before element ``cut``; with
    ``restore`` the second batch goes to a new engine that took up a
    snapshot of the first after the first batch."""
    engine = Engine.from_string(rules, **options)
    detections: list[Detection] = []
    warned: list[tuple[int, str]] = []
    rejected: list[tuple[int, str]] = []
    for i, part in enumerate((stream[:cut], stream[cut:])):
        if i == 1 and restore:
            data = engine.snapshot()
            engine.close()
            engine = Engine.from_string(rules, state=data, **options)
        result = engine.emit_many(part)
        detections += result.detections
        warned += [(w.line, w.reason) for w in result.warnings]
        rejected += [(r.line, r.reason) for r in result.rejected]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a flush's warnings are compared by neither outcome
        detections += engine.flush()
    stats = replace(engine.stats(), queued=0)
    engine.close()
    return Outcome(found(detections), warned, rejected, stats)


def same_at_every_cut(rules: str, stream: Stream, **options: Any) -> Outcome:
    """The outcome of ``stream`` without a break, after checking that a
    snapshot and restore at any cut point gives the same."""
    whole = run(rules, stream, len(stream), False, **options)
    for cut in range(len(stream) + 1):
        unbroken = run(rules, stream, cut, False, **options)
        assert run(rules, stream, cut, True, **options) == unbroken, cut
        assert unbroken.detections == whole.detections, cut
    return whole


def plain(outcome: Outcome) -> list[tuple[Any, ...]]:
    return [d[:4] for d in outcome.detections]


A2B2 = [("a", [1], 1), ("a", [1], 2), ("b", [1], 3), ("b", [1], 4)]

CASES: list[tuple[str, str, dict[str, Any], Stream, list[tuple[Any, ...]]]] = [
    ("seq unrestricted", "c(X) <- a(X) seq b(X).", {}, A2B2,
     [("c", (1,), 1, 3), ("c", (1,), 2, 3), ("c", (1,), 1, 4), ("c", (1,), 2, 4)]),
    ("seq recent", "c(X) <- a(X) seq b(X).", {"policy": "recent"}, A2B2,
     [("c", (1,), 2, 3), ("c", (1,), 2, 4)]),
    ("seq chronological", "c(X) <- a(X) seq b(X).", {"policy": "chronological"}, A2B2,
     [("c", (1,), 1, 3), ("c", (1,), 2, 4)]),
    ("and", "c(X) <- a(X) and b(X).", {}, [("a", [1], 1), ("b", [1], 2), ("a", [1], 3)],
     [("c", (1,), 1, 2), ("c", (1,), 2, 3)]),
    ("or", "c(X) <- (a(X) or d(X)) seq b(X).", {}, [("a", [1], 1), ("d", [1], 2), ("b", [1], 3)],
     [("c", (1,), 1, 3), ("c", (1,), 2, 3)]),
    ("fnot", "q(X) <- (a(X) seq b(X)) fnot z(X).", {},
     [("a", [1], 1), ("a", [2], 2), ("z", [1], 3), ("b", [1], 4), ("b", [2], 5)], [("q", (2,), 2, 5)]),
    ("cnot", "q(X) <- (a(X) seq b(X)) cnot z(X).", {},
     [("a", [1], 1), ("a", [2], 2), ("z", [1], 3), ("b", [1], 4), ("b", [2], 5)], [("q", (2,), 2, 5)]),
    ("Kleene+", "h(X) <- (a(X)+ seq b) within 10.", {}, [("a", [1], 1), ("a", [2], 2), ("b", [], 3)],
     [("h", ([1],), 1, 3), ("h", ([1, 2],), 1, 3), ("h", ([2],), 2, 3)]),
    ("Kleene+ under stn", "h(X) <- (a(X)+ seq b) within 10.", {"policy": "stn"},
     [("a", [1], 1), ("a", [2], 2), ("b", [], 3), ("a", [3], 4), ("b", [], 5)],
     [("h", ([1],), 1, 3), ("h", ([1, 2],), 1, 3), ("h", ([2],), 2, 3), ("h", ([1, 2, 3],), 1, 5),
      ("h", ([2, 3],), 2, 5), ("h", ([3],), 4, 5)]),
    ("aggregate over a count window", "avg_temp(S, A) <- aggregate(avg(T), temp(S, T), count(3), A).", {},
     [("temp", ["x", 1], 1), ("temp", ["x", 2], 2), ("temp", ["x", 6], 3), ("temp", ["x", 7], 4)],
     [("avg_temp", ("x", 3), 1, 3), ("avg_temp", ("x", 5), 2, 4)]),
    ("aggregate over a time window", "peak(S, M) <- aggregate(max(T), temp(S, T), time(5), M).", {},
     [("temp", ["x", 9], 1), ("temp", ["x", 2], 2), ("temp", ["x", 6], 7), ("temp", ["x", 1], 8)],
     [("peak", ("x", 9), 1, 1), ("peak", ("x", 9), 1, 2), ("peak", ("x", 6), 2, 7), ("peak", ("x", 6), 7, 8)]),
    ("running aggregate", "d(C) <- s seq aggregate(count, a(_), C).", {},
     [("s", [], 1), ("a", [1], 2), ("a", [2], 3)], [("d", (0,), 1, 1), ("d", (1,), 1, 2), ("d", (2,), 1, 3)]),
    ("timers", ":- print_events([reminder/1]).\nexceptionAlarm(reminder(O), 5) <- order(O).", {},
     [("order", [1], 1), ("order", [2], 3), ("x", [], 7), ("x", [], 20)],
     [("reminder", (1,), 1, 6), ("reminder", (2,), 3, 8)]),
    ("timers pending at the cut, fired by flush", ":- print_events([reminder/1]).\n"
     "exceptionAlarm(reminder(O), 5) <- order(O).", {}, [("order", [1], 1), ("order", [2], 3)],
     [("reminder", (1,), 1, 6), ("reminder", (2,), 3, 8)]),
    ("lateness", "c(X) <- a(X) seq b(X).", {"lateness": 2},
     [("a", [1], 2), ("a", [1], 1), ("b", [1], 4), ("b", [1], 3), ("z", [], 10)],
     [("c", (1,), 1, 3), ("c", (1,), 2, 3), ("c", (1,), 1, 4), ("c", (1,), 2, 4)]),
    ("provenance", "c(X) <- a(X) seq b(X).", {"explain": True}, A2B2,
     [("c", (1,), 1, 3), ("c", (1,), 2, 3), ("c", (1,), 1, 4), ("c", (1,), 2, 4)]),
    ("recursion at the same time", "p <- b.\np <- p and a.", {}, [("b", [], 1), ("a", [], 2), ("a", [], 3)],
     [("p", (), 1, 1), ("p", (), 1, 2), ("p", (), 1, 3)]),
    ("events raised by rules", "c <- a where event(b).\nd <- b.", {}, [("a", [], 1), ("a", [], 2)],
     [("c", (), 1, 1), ("d", (), 1, 1), ("c", (), 2, 2), ("d", (), 2, 2)]),
    ("facts asserted by rules", ":- dynamic count/1.\ncount(0).\n"
     "c(N1) <- a where (retract(count(N)), N1 is N + 1, assertz(count(N1))).", {},
     [("a", [], 1), ("a", [], 2), ("a", [], 3)], [("c", (1,), 1, 1), ("c", (2,), 2, 2), ("c", (3,), 3, 3)]),
    ("a window and max_age", "c(X) <- (a(X) seq b(X)) within 2.", {"max_age": 5},
     [("a", [1], 1), ("a", [1], 2), ("b", [1], 3.5), ("b", [1], 4)], [("c", (1,), 2, 3.5), ("c", (1,), 2, 4)]),
]


@pytest.mark.parametrize(("name", "rules", "options", "stream", "expected"), CASES, ids=[c[0] for c in CASES])
def test_restore_at_any_cut_gives_the_uninterrupted_run(
        name: str, rules: str, options: dict[str, Any], stream: Stream, expected: list[tuple[Any, ...]]) -> None:
    assert plain(same_at_every_cut(rules, stream, **options)) == expected


def test_facts_and_etalis_flags_of_the_files_own_predicates_carry_over() -> None:
    rules = (Path(__file__).parent / "etalis_compat" / "own_facts.etl").read_text()
    stream: Stream = [("answer", ["ann", "right"], 1), ("register", ["ann"], 2), ("register", ["ann"], 3),
                      ("answer", ["ann", "right"], 4), ("reprice", ["wrong", -1], 5), ("answer", ["ann", "wrong"], 6),
                      ("answer", ["ann", "wrong"], 7), ("leave", ["ann"], 8), ("answer", ["ann", "right"], 9)]
    assert plain(same_at_every_cut(rules, stream)) == [
        ("registered", ("ann",), 2, 2), ("scored", ("ann", 10), 4, 4), ("repriced", ("wrong", -1), 5, 5),
        ("scored", ("ann", 9), 6, 6), ("flagged", ("ann",), 6, 6), ("scored", ("ann", 8), 7, 7),
        ("left", ("ann",), 8, 8)]


STRATEGY_EXPECTED = {
    "strict": [("h", (3, 6), 5, 6)],
    # the rule's events share no variable: one partition, of a and b (x is none of its events)
    "strict(partition)": [("h", (2, 5), 2, 4), ("h", (3, 6), 5, 6)],
    "nxt": [("h", (1, 5), 1, 4), ("h", (1, 6), 1, 6)],
    "last": [("h", (2, 5), 2, 4), ("h", (3, 6), 5, 6)],
    "max": [("h", (1, 5), 1, 4), ("h", (2, 5), 2, 4), ("h", (1, 6), 1, 6), ("h", (2, 6), 2, 6), ("h", (3, 6), 5, 6)],
    "stn": [("h", (1, 5), 1, 4), ("h", (2, 5), 2, 4), ("h", (3, 6), 5, 6)],
    "continuous": [("h", (1, 5), 1, 4), ("h", (2, 5), 2, 4), ("h", (3, 6), 5, 6)],
    "cumulative": [("h", ([1, 2], 5), 1, 4), ("h", ([3], 6), 5, 6)],
}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_selection_strategies_carry_their_positions_across_a_restore(strategy: str) -> None:
    rules = "h(X, Y) <- (a(X) seq b(Y)) within 10."
    stream: Stream = [("a", [1], 1), ("a", [2], 2), ("x", [], 3), ("b", [5], 4), ("a", [3], 5), ("b", [6], 6)]
    outcome = same_at_every_cut(rules, stream, policy=strategy, explain=True)
    assert plain(outcome) == STRATEGY_EXPECTED[strategy]


def test_the_stats_and_warnings_carry_over() -> None:
    rules = "c(X) <- a(X) seq b(X) where X > 1 / 0."
    stream: Stream = [("a", [1], 1), ("a", [1], 2), ("b", [1], 3), ("b", ["x"], "bad time"), ("b", [1], 4)]
    outcome = same_at_every_cut(rules, stream)
    assert outcome.detections == []
    raised = ("where condition 1>1/0 of c(A) (<string>:1:1) raised: division by zero\n"
              "  hint: test the divisor first, e.g. D =\\= 0, Q is N / D")
    assert outcome.warnings == [(3, raised), (3, raised), (5, raised), (5, raised)]
    assert outcome.rejected == [(4, "time 'bad time' is not a number or an ISO 8601 date")]
    assert (outcome.stats.accepted, outcome.stats.rejected, outcome.stats.detections, outcome.stats.pending,
            outcome.stats.pending_by_rule) == (4, 1, 0, 2, {"line 1": 2})


def test_rules_added_and_removed_while_running_are_made_again_by_restore() -> None:
    rules = "r1 : c(X) <- a(X) seq b(X)."
    with Engine.from_string(rules) as engine:
        engine.emit("a", 1, at=1)
        engine.add_rules("r2 : d(X) <- e(X) seq f(X).")
        engine.emit("e", 7, at=2)
        engine.remove_rule("r1")
        data = engine.snapshot()
    with Engine.from_string(rules, state=data) as restored:
        assert (restored.rule_count, restored.goal_count, restored.printed) == (1, 1, ["d/1"])
        assert restored.emit_many([("b", [1], 3), ("f", [7], 4)]).detections == [Detection("d", (7,), 2, 4)]
        # a second restore of the same snapshot needs no change of the rules
        restored.restore(data)
        assert restored.emit("f", 7, at=5) == [Detection("d", (7,), 2, 5)]


def test_facts_of_a_dynamic_predicate_of_added_rules_are_restored() -> None:
    rules = "c(X) <- a(X) seq b(X)."
    added = ":- dynamic seen/1.\nnote(X) <- z(X) where assertz(seen(X)).\nknown(X) <- q(X) where seen(X)."
    with Engine.from_string(rules) as engine:
        engine.add_rules(added)
        engine.emit_many([("z", [1], 1), ("z", [2], 2)])
        data = engine.snapshot()
    with Engine.from_string(rules, state=data) as restored:
        assert restored.emit_many([("q", [2], 3), ("q", [3], 4)]).detections == [Detection("known", (2,), 3, 3)]


def test_rules_that_rules_insert_are_made_again_by_restore() -> None:
    rules = "c(X) <- a(X) do ins_event_rule(d(Y) <- (e(Y) seq f(Y))).\n"
    stream: Stream = [("a", [1], 1), ("e", [2], 2), ("f", [2], 3), ("e", [3], 4), ("f", [3], 5)]
    assert plain(same_at_every_cut(rules, stream, trusted=True)) == [
        ("c", (1,), 1, 1), ("d", (2,), 2, 3), ("d", (3,), 4, 5)]


def test_rules_inserted_after_a_restore_get_hidden_names_of_their_own() -> None:
    # each inserted P+ has a hidden event of its own, numbered on after a
    # restore as without it (the first and the second insertion must not share runs)
    rules = "c(X) <- a(X) do ins_event_rule(d(X, Y) <- (e(Y)+ seq f) within 5).\n"
    stream: Stream = [("a", [1], 1), ("e", [1], 2), ("a", [2], 3), ("e", [2], 4), ("f", [], 5)]
    assert plain(same_at_every_cut(rules, stream, trusted=True)) == [
        ("c", (1,), 1, 1), ("c", (2,), 3, 3), ("d", (1, [1]), 2, 5), ("d", (1, [1, 2]), 2, 5), ("d", (1, [2]), 4, 5),
        ("d", (2, [2]), 4, 5)]


def test_an_engine_that_changed_its_rules_otherwise_goes_back_to_its_file_first() -> None:
    rules = "r1 : c(X) <- a(X) seq b(X)."
    with Engine.from_string(rules) as engine:
        engine.add_rules("r2 : d(X) <- e(X) seq f(X).\nhelper(1).")
        engine.emit("e", 7, at=1)
        data = engine.snapshot()
        fresh = Engine.from_string(rules)
        empty = fresh.snapshot()
        fresh.close()
    with Engine.from_string(rules) as other:
        other.add_rules("r3 : g(X) <- e(X) seq f(X).\nhelper(3).")
        other.emit("a", 1, at=1)
        other.restore(data)
        assert (other.rule_count, other.printed) == (2, ["c/1", "d/1"])
        assert other.emit_many([("b", [1], 2), ("f", [7], 3)]).detections == [Detection("d", (7,), 1, 3)]
        with pytest.raises(EtalisError, match="no rule is labelled r3"):
            other.remove_rule("r3")
        # a snapshot of a new engine of the file: its rules and a fresh state
        other.restore(empty)
        assert (other.rule_count, other.printed, other.stats().pending) == (1, ["c/1"], 0)
        assert other.emit_many([("e", [7], 4), ("f", [7], 5), ("a", [1], 6), ("b", [1], 7)]).detections == [
            Detection("c", (1,), 6, 7)]


def test_one_engine_moves_many_keys_states_in_and_out() -> None:
    rules = "c(X, N) <- a(X) seq b(X) where N = 1.\ns(X, T) <- aggregate(sum(V), v(X, V), count(2), T)."
    with Engine.from_string(rules) as engine:
        fresh = engine.snapshot()
        engine.emit_many([("a", ["k1"], 1), ("v", ["k1", 5], 2)])
        key1 = engine.snapshot()
        engine.restore(fresh)
        assert engine.stats().pending == 0
        engine.emit_many([("a", ["k2"], 1), ("v", ["k2", 1], 2), ("v", ["k2", 2], 3)])
        key2 = engine.snapshot()
        engine.restore(key1)
        assert engine.emit_many([("v", ["k1", 6], 3), ("b", ["k1"], 4)]).detections == [
            Detection("s", ("k1", 11), 2, 3), Detection("c", ("k1", 1), 1, 4)]
        engine.restore(key2)
        assert engine.emit_many([("b", ["k2"], 4), ("b", ["k1"], 5)]).detections == [
            Detection("c", ("k2", 1), 1, 4)]
        assert engine.stats().accepted == 5


TWO = "c(X) <- a(X) seq b(X)."


def damaged(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d[:-10], "cannot restore the snapshot: it is truncated: "),
    (lambda d: d[:30], "cannot restore the snapshot: its header is cut off or damaged"),
    (lambda d: damaged(d, len(d) - 20), "cannot restore the snapshot: it is damaged: its checksum does not match"),
    (lambda d: d.replace(b"snapshot(2,", b"snapshot(7,", 1),
     "cannot restore the snapshot: it is of snapshot format 7, and this etalis-py reads format 2"),
    (lambda d: d.replace(b"snapshot(2,", b"snapshot(1,", 1),
     "cannot restore the snapshot: it is of snapshot format 1, and this etalis-py reads format 2"),
    (lambda d: d.replace(b"'9.", b"'8.", 1), "cannot restore the snapshot: it was written by SWI-Prolog 8."),
    (lambda d: d.replace(b"snapshot(", b"snapshot[", 1), "cannot restore the snapshot: its header is damaged"),
    (lambda d: b"PK\x03\x04" + d, "cannot restore the snapshot: it does not start as an etalis-py snapshot does"),
    (lambda d: b"", "cannot restore the snapshot: it does not start as an etalis-py snapshot does"),
])
def test_damaged_bytes_are_refused_and_leave_the_engine_as_it_was(change: Any, message: str) -> None:
    with Engine.from_string(TWO) as source:
        source.emit("a", 1, at=1)
        data = source.snapshot()
    with Engine.from_string(TWO) as engine:
        engine.emit("a", 2, at=5)
        before = engine.snapshot()
        with pytest.raises(SnapshotError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
            engine.restore(change(data))
        assert engine.snapshot() == before
        assert engine.emit("b", 2, at=6) == [Detection("c", (2,), 5, 6)]


@pytest.mark.parametrize(("rules", "options"), [
    ("c(X) <- a(X) seq b(X) seq d(X).", {}),
    (TWO, {"policy": "recent"}),
    (TWO, {"lateness": 1}),
    (TWO, {"explain": True}),
])
def test_a_snapshot_of_other_rules_or_options_is_refused(rules: str, options: dict[str, Any]) -> None:
    with Engine.from_string(TWO) as source:
        source.emit("a", 1, at=1)
        data = source.snapshot()
    with Engine.from_string(rules, **options) as engine:
        before = engine.snapshot()
        with pytest.raises(SnapshotError) as caught:
            engine.restore(data)
        assert str(caught.value) == ("cannot restore the snapshot: it is a snapshot of other rules (or of other "
                                     "options: lateness, explain, policy, max_age) than this engine's")
        assert engine.snapshot() == before


def test_the_same_rules_from_a_file_or_as_text_are_the_same_rules(tmp_path: Path) -> None:
    path = tmp_path / "two.etl"
    path.write_text(TWO + "\n")
    with Engine.from_string(TWO + "\n", source="elsewhere.etl") as source:
        source.emit("a", 1, at=1)
        data = source.snapshot()
    with Engine.from_file(path, state=data) as engine:
        assert engine.emit("b", 1, at=2) == [Detection("c", (1,), 1, 2)]


def test_from_file_refusing_the_state_raises() -> None:
    with pytest.raises(SnapshotError, match="it does not start as an etalis-py snapshot does"):
        Engine.from_string(TWO, state=b"not a snapshot")
    with pytest.raises(TypeError, match="restore\\(\\) takes the bytes of a snapshot, not str"):
        Engine.from_string(TWO, state="text")  # type: ignore[arg-type]


def test_an_untrusted_engine_refuses_rules_that_a_trusted_one_added() -> None:
    # the changes of the rules that a snapshot holds are proven safe again
    rules = "c(X) <- a(X) seq b(X)."
    with Engine.from_string(rules, trusted=True) as trusted:
        trusted.add_rules("go :- shell(ls).")
        data = trusted.snapshot()
    with Engine.from_string(rules) as untrusted:
        before = untrusted.snapshot()
        with pytest.raises(SnapshotError, match="^cannot restore the snapshot: a change of the rules it holds "
                                                "cannot be made here: .*shell"):
            untrusted.restore(data)
        assert untrusted.snapshot() == before


def test_a_state_holding_a_blob_takes_no_snapshot() -> None:
    # only a trusted rule can put a stream into an event that waits
    rules = "c(S) <- a where current_output(S).\nd(S) <- c(S) seq b."
    with Engine.from_string(rules, trusted=True, report=["d/1"]) as engine:
        engine.emit("a", at=1)
        with pytest.raises(SnapshotError, match=r"^cannot take a snapshot: the state holds <stream>\(0x[0-9a-f]+\), "
                                                r"which is no term that can be written"):
            engine.snapshot()


def test_a_snapshot_is_the_bytes_that_prolog_serializes() -> None:
    # the content's bytes are made outside Prolog's stacks (PL_record_external), and must be those
    # of fast_term_serialized/2, which a restore reads
    with Engine.from_string("c(X) <- a(X) seq b(X) within 100.") as engine:
        engine.feed_text("".join(f"event(a(k{i % 7}), {i}).\n" for i in range(40)))
        data = engine.snapshot()
        counters = ", ".join(str(getattr(engine.stats(), c)) for c in SNAPSHOT_COUNTERS)
        info, payload = engine._prolog.request_bytes(f"snapshot({engine._name}, [{counters}])")
    assert data == snapshot_bytes(info["snapshot_head"], payload)


def test_pickling_an_engine_points_to_snapshot() -> None:
    with Engine.from_string(TWO) as engine:
        with pytest.raises(TypeError, match=r"an Engine cannot be pickled: .* engine\.snapshot\(\)"):
            pickle.dumps(engine)


def test_a_closed_engine_takes_no_snapshot() -> None:
    engine = Engine.from_string(TWO)
    engine.close()
    with pytest.raises(EtalisError, match="the engine is closed"):
        engine.snapshot()


def test_restore_in_a_fresh_process(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text(":- policy(stn).\nh(X) <- (a(X)+ seq b) within 10.\n"
                     ":- print_events([h/1, reminder/1]).\nexceptionAlarm(reminder(O), 5) <- order(O).\n")
    stream: Stream = [("a", [1], 1), ("order", [7], 2), ("a", [2], 3), ("b", [], 4), ("a", [3], 5), ("b", [], 9)]
    with Engine.from_file(rules) as engine:
        engine.emit_many(stream[:3])
        (tmp_path / "state.bin").write_bytes(engine.snapshot())
        whole = engine.emit_many(stream[3:]).detections
    script = textwrap.dedent("""
        import json, sys
        from etalis_py import Engine
        data = open(sys.argv[2], "rb").read()
        with Engine.from_file(sys.argv[1], state=data) as engine:
            found = engine.emit_many(json.loads(sys.argv[3])).detections
            print(json.dumps([[d.event, d.args, d.start, d.end] for d in found]))
    """)
    done = subprocess.run([sys.executable, "-c", script, str(rules), str(tmp_path / "state.bin"),
                           json.dumps(stream[3:])], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == json.loads(json.dumps([[d.event, d.args, d.start, d.end] for d in whole]))
    assert [(d.event, d.args, d.start, d.end) for d in whole] == [
        ("h", ([1],), 1, 4), ("h", ([1, 2],), 1, 4), ("h", ([2],), 3, 4), ("reminder", (7,), 2, 7),
        ("h", ([1, 2, 3],), 1, 9), ("h", ([2, 3],), 3, 9), ("h", ([3],), 5, 9)]


def test_snapshot_parts_are_the_snapshot_its_content_read_where_the_engine_made_it() -> None:
    with Engine.from_string(TWO) as engine:
        engine.emit("a", 1, at=1)
        data = engine.snapshot()
        parts = engine.snapshot_parts()
        try:
            header = parts.header()
            content = bytes(parts.view())
            assert header + content == data == parts.to_bytes()
            assert header == data[:data.index(b"\n", data.index(b"\n") + 1) + 1]
            assert parts.head == header[:header.rindex(b",'") + 1]
            assert header.endswith(b",'" + hashlib.sha256(content).hexdigest().encode("ascii") + b"').\n")
            assert parts.head.endswith(f",{len(content)},".encode("ascii"))
        finally:
            parts.release()
        assert engine.snapshot() == data    # the engine's state is as it was
