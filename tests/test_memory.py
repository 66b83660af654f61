"""Bounded memory: windows and max_age drop pending goals; stats per rule."""

from __future__ import annotations

from conftest import detect

from etalis_py import Detection, Engine


def test_pending_goals_per_rule_count_shared_goals_for_each_rule() -> None:
    rules = "r1 : c(X) <- a(X) seq b(X).\nd(X) <- (a(X) seq b(X)) seq e(X)."
    with Engine.from_string(rules) as engine:
        engine.emit_many([("a", [1], 1), ("a", [2], 2), ("b", [1], 3)])
        stats = engine.stats()
        # goal 1 (a seq b) holds a(1), a(2); goal 2 holds the derived (a seq b)(1)
        assert stats.pending == 3
        assert stats.pending_by_rule == {"r1": 2, "line 2": 3}


def test_keys_that_never_recur_do_not_pile_up_under_a_window() -> None:
    with Engine.from_string("c(X) <- (a(X) seq b(X)) within 10.") as engine:
        engine.emit_many([("a", [k], k) for k in range(20_000)])
        pending = engine.stats().pending
        assert pending < 1000


def test_max_age_makes_a_pattern_without_window_forget_old_goals() -> None:
    events = [("a", [1], 0), ("a", [1], 50), ("b", [1], 100)]
    assert detect("c(X) <- a(X) seq b(X).", events) == [("c", (1,), 0, 100), ("c", (1,), 50, 100)]
    with Engine.from_string("c(X) <- a(X) seq b(X).", max_age=60) as engine:
        assert engine.emit_many(events).detections == [Detection("c", (1,), 50, 100)]


def test_max_age_directive_and_its_own_window_narrower_wins() -> None:
    rules = ":- max_age(minutes(1)).\nc <- a seq b.\nd <- (a seq b) within 10."
    events: list[tuple[str, list[object], int]] = [("a", [], 0), ("a", [], 45), ("b", [], 50)]
    assert detect(rules, events) == [("c", (), 0, 50), ("c", (), 45, 50), ("d", (), 45, 50)]
    with Engine.from_string(rules) as engine:
        engine.emit_many(events + [("a", [], 200)])
        # a@0 and a@45 are older than either window when a@200 arrives
        assert engine.stats().pending_by_rule == {"line 2": 1, "line 3": 1}


def test_the_goal_store_grows_a_few_buckets_an_event_keeping_every_goal() -> None:
    # 20,000 keys take the table through five sweeps and moves; a rebuild
    # of the whole table in one event took far more than 3,000 inferences
    with Engine.from_string("c(K) <- a(K) seq b(K).\n", inference_limit=3000) as engine:
        result = engine.emit_many(("a", (i,), i + 1) for i in range(20_000))
        assert (result.accepted, result.rejected, engine.stats().pending) == (20_000, [], 20_000)
        found = engine.emit_many(("b", (i,), 20_001 + i) for i in range(0, 20_000, 997)).detections
        assert found == [Detection("c", (i,), i + 1, 20_001 + i) for i in range(0, 20_000, 997)]
        assert engine.stats().pending == 20_000
