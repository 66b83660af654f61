"""Negation.

`(A seq B) cnot C`: A then B with no C strictly between A's end and B's start.
`P fnot C`: P over [t1, t2] with no C strictly inside (t1 < c1, c2 < t2).
"""

from __future__ import annotations

from conftest import detect

from etalis_py import Engine


def test_a_c_between_blocks_only_the_sequences_it_separates() -> None:
    events = [("a", (), 1), ("x", (), 2), ("a", (), 3), ("b", (), 4)]
    assert detect("c <- (a seq b) cnot x.", events) == [("c", (), 3, 4)]


def test_a_c_at_the_ends_does_not_block() -> None:
    # x@1 is not after a's end; x@3 is not before b@3's start; both do block b@5
    events = [("a", (), 1), ("x", (), 1), ("b", (), 3), ("x", (), 3), ("b", (), 5)]
    assert detect("c <- (a seq b) cnot x.", events) == [("c", (), 1, 3)]


def test_a_c_after_b_does_not_retract_the_detection() -> None:
    events = [("a", (), 1), ("b", (), 2), ("x", (), 3)]
    assert detect("c <- (a seq b) cnot x.", events) == [("c", (), 1, 2)]


def test_negated_event_joins_on_variables_shared_with_the_first_operand() -> None:
    rules = "c(K) <- (a(K) seq b(K)) cnot x(K)."
    events = [("a", (1,), 1), ("a", (2,), 1), ("x", (1,), 2), ("b", (1,), 4), ("b", (2,), 5)]
    assert detect(rules, events) == [("c", (2,), 1, 5)]


def test_negated_event_joins_on_variables_shared_with_the_second_operand() -> None:
    rules = "c(Y) <- (a seq b(Y)) cnot x(Y)."
    events = [("a", (), 1), ("x", (7,), 2), ("b", (7,), 3), ("b", (8,), 4)]
    assert detect(rules, events) == [("c", (8,), 1, 4)]


def test_unshared_variables_of_the_negated_event_mean_any_value() -> None:
    rules = "c <- (a seq b) cnot x(_)."
    assert detect(rules, [("a", (), 1), ("x", ("anything",), 2), ("b", (), 3)]) == []


def test_negation_with_a_window_and_complex_operands() -> None:
    rules = "alarm(S) <- ((hot(S) and smoke(S)) seq evacuated(S)) cnot sprinkler(S) within 10."
    events = [
        ("hot", ("r1",), 1), ("smoke", ("r1",), 2), ("hot", ("r2",), 2), ("smoke", ("r2",), 3),
        ("sprinkler", ("r2",), 4), ("evacuated", ("r1",), 5), ("evacuated", ("r2",), 6), ("evacuated", ("r1",), 20),
    ]
    assert detect(rules, events) == [("alarm", ("r1",), 1, 5)]


def test_negation_under_chronological_takes_the_oldest_unblocked_initiator() -> None:
    rules = "c(A) <- (a(A) seq b) cnot x(A)."
    events = [("a", (1,), 1), ("a", (2,), 2), ("x", (1,), 3), ("b", (), 4), ("b", (), 5)]
    assert detect(rules, events, policy="chronological") == [("c", (2,), 2, 4)]


def test_cnot_needs_a_sequence() -> None:
    import pytest

    from etalis_py import RuleError

    with pytest.raises(RuleError, match="cnot negates an event between the two parts of a sequence"):
        Engine.from_string("c <- (a and b) cnot x.")


# ---------------------------------------------------------------------------
# P fnot C: negation over the interval of any pattern
# ---------------------------------------------------------------------------

QUIET = "q : quiet(S) <- (start(S) seq stop(S)) fnot alarm(S)."


def test_fnot_blocks_what_lies_strictly_inside_and_joins_on_shared_variables() -> None:
    events = [
        ("start", (1,), 1), ("start", (2,), 1), ("start", (3,), 1),
        ("alarm", (1,), 2),                       # inside 1's window
        ("alarm", (3,), 4), ("stop", (3,), 4),    # ends with 3's window: no block
        ("stop", (1,), 5), ("stop", (2,), 6),
    ]
    assert detect(QUIET, events) == [("quiet", (3,), 1, 4), ("quiet", (2,), 1, 6)]


def test_fnot_is_not_blocked_at_the_start_nor_retracted_after_the_end() -> None:
    events = [("start", (1,), 1), ("alarm", (1,), 1), ("stop", (1,), 3), ("alarm", (1,), 4)]
    assert detect(QUIET, events) == [("quiet", (1,), 1, 3)]


def test_fnot_over_an_and_whichever_operand_came_first() -> None:
    events = [("b", (), 1), ("x", (), 2), ("a", (), 3), ("a", (), 5), ("b", (), 7)]
    assert detect("ok <- (a and b) fnot x.", events) == [("ok", (), 3, 7), ("ok", (), 5, 7)]


def test_fnot_over_an_interval_event() -> None:
    # events arrive when they end: restart(s1)@5 before outage(s1) over [1,10]
    events = [
        ("restart", ("s1",), 5), ("restart", ("s3",), 6), ("outage", ("s3",), 6, 8),
        ("outage", ("s1",), 1, 10), ("outage", ("s2",), 2, 12), ("restart", ("s2",), 12),
    ]
    rules = "unrecovered(S) <- outage(S) fnot restart(S)."
    assert detect(rules, events) == [("unrecovered", ("s3",), 6, 8), ("unrecovered", ("s2",), 2, 12)]


def test_fnot_of_a_complex_pattern_needs_all_of_it_inside() -> None:
    events = [("a", (), 1), ("x", (), 2), ("b", (), 3), ("y", (), 4),
              ("a", (), 5), ("x", (), 6), ("y", (), 7), ("b", (), 8)]
    assert detect("ok <- (a seq b) fnot (x seq y).", events) == [("ok", (), 1, 3)]


def test_fnot_within_a_window_and_inside_a_sequence() -> None:
    events = [("a", (), 1), ("x", (), 2), ("a", (), 3), ("b", (), 4), ("x", (), 5), ("b", (), 6), ("b", (), 9)]
    assert detect("ok <- ((a seq b) fnot x) within 5.", events) == [("ok", (), 3, 4)]
    events = [("a", (), 1), ("b", (), 3), ("a", (), 4), ("x", (), 5), ("b", (), 6), ("c", (), 7)]
    assert detect("w <- ((a seq b) fnot x) seq c.", events) == [("w", (), 1, 7)]


def test_fnot_under_recent_keeps_the_most_recent_initiator() -> None:
    events = [("start", (1,), 1), ("start", (1,), 3), ("alarm", (1,), 4), ("stop", (1,), 5),
              ("start", (1,), 6), ("stop", (1,), 7)]
    assert detect(QUIET, events, policy="recent") == [("quiet", (1,), 6, 7)]


def test_fnot_keeps_blockers_only_as_long_as_its_window_needs_them() -> None:
    rules = "ok(K) <- ((a(K) seq b(K)) fnot x(K)) within 5."
    with Engine.from_string(rules) as engine:
        engine.emit_many([("x", (1,), t) for t in range(1, 101)])
        # a blocker is dropped once it started more than 5 before the
        # newest one of its key: x(1) at 95..100 are left
        assert engine.stats().pending_by_goal == [{"goal": 2, "pending": 6, "side": "right"}]
        result = engine.emit_many([("a", (1,), 101), ("b", (1,), 102)])
        assert [(d.event, d.args, d.start, d.end) for d in result.detections] == [("ok", (1,), 101, 102)]


def test_pending_shows_the_blockers_of_fnot() -> None:
    with Engine.from_string(QUIET) as engine:
        engine.emit_many([("start", (1,), 1), ("alarm", (2,), 2)])
        assert [(p.pattern, p.matched, p.side, p.waiting, p.start, p.end) for p in engine.pending("q")] == [
            ("start(A) seq stop(A)", "start(1)", "left", "the right operand", 1, 1),
            ("start(A) seq stop(A) fnot alarm(A)", "alarm(2)", "right", "blocks the pattern", 2, 2),
        ]


def test_pending_shows_the_waiting_left_and_the_blockers_of_cnot() -> None:
    with Engine.from_string("r : h(X) <- (a(X) seq b(X)) cnot c(X).") as engine:
        engine.emit_many([("a", (1,), 1), ("c", (1,), 2)])
        assert [(p.pattern, p.matched, p.side, p.waiting, p.start, p.end) for p in engine.pending("r")] == [
            ("a(A) seq b(A) cnot c(A)", "a(1)", "left", "the right operand", 1, 1),
            ("a(A) seq b(A) cnot c(A)", "c(1)", "right", "blocks the sequence", 2, 2),
        ]
