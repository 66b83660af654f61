"""`(A seq B) cnot C`: A then B with no C strictly between A's end and B's start."""

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
