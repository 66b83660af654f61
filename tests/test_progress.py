"""Engine.pending(rule): how much of a rule's pattern is fulfilled."""

from __future__ import annotations

import pytest

from etalis_py import Engine, EtalisError, PendingPart


def test_pending_shows_matched_parts_with_bindings_and_intervals() -> None:
    rules = "r : alarm(S) <- ((hot(S) and smoke(S)) seq evacuated(S)) within 60."
    with Engine.from_string(rules) as engine:
        engine.emit_many([("hot", ["r1"], 1), ("smoke", ["r1"], 2), ("hot", ["r2"], 3)])
        parts = sorted(engine.pending("r"), key=lambda p: (p.goal, p.start))
        assert parts == [
            PendingPart(1, "hot(A) and smoke(A)", "hot(r1)", "left", "the right operand", 1, 1),
            PendingPart(1, "hot(A) and smoke(A)", "smoke(r1)", "right", "the left operand", 2, 2),
            PendingPart(1, "hot(A) and smoke(A)", "hot(r2)", "left", "the right operand", 3, 3),
            PendingPart(2, "(hot(A) and smoke(A)) seq evacuated(A)", "hot(r1) and smoke(r1)", "left",
                        "the right operand", 1, 2),
        ]


def test_pending_of_an_unlabelled_rule_by_its_line_and_of_negations() -> None:
    rules = "c <- a seq b.\nd <- (a seq b) cnot x(_)."
    with Engine.from_string(rules) as engine:
        engine.emit_many([("a", [], 1), ("x", ["k"], 2)])
        assert engine.pending("line 1") == [PendingPart(1, "a seq b", "a", "left", "the right operand", 1, 1)]
        assert sorted(engine.pending("line 2"), key=lambda p: p.start) == [
            PendingPart(2, "a seq b cnot x(_)", "a", "left", "the right operand", 1, 1),
            PendingPart(2, "a seq b cnot x(_)", "x(k)", "right", "blocks the sequence", 2, 2),
        ]


def test_pending_of_an_unknown_rule_is_an_error_that_names_the_rules() -> None:
    # the name of a rule's event is no rule's name: the error says which names there are
    with Engine.from_string("c <- a seq b.\nfire : d <- a seq e.") as engine:
        with pytest.raises(EtalisError) as e:
            engine.pending("c")
        assert str(e.value) == "no rule is named c; the rules are named fire, line 1 (a rule without a label by its line)"
