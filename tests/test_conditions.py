"""`where` conditions: a test, not a generator (issue 16), and the
reference evaluator held to the same meaning."""

from __future__ import annotations

from conftest import detect

from etalis_py.testing import Fact, RuleSet, evaluate

CREDIT = """
credit_status(c1, ok). credit_status(c2, ok). credit_status(c3, ok).
approved(O) <- order(O) where credit_status(_, ok).
"""

LINKS = """
link(1, 2). link(1, 3). link(1, 2).
next(X, Y) <- a(X) where link(X, Y).
linked(X) <- a(X) where link(X, _).
"""


def test_a_condition_with_several_solutions_gives_one_detection() -> None:
    assert detect(CREDIT, [("order", ("o1",), 1)]) == [("approved", ("o1",), 1, 1)]


def test_distinct_bindings_of_head_variables_give_distinct_detections() -> None:
    assert detect(LINKS, [("a", (1,), 1)]) == [
        ("next", (1, 2), 1, 1), ("next", (1, 3), 1, 1), ("linked", (1,), 1, 1)]


def test_a_variable_passed_on_to_the_pattern_counts_as_used() -> None:
    rules = "link(1, 2). link(1, 3). link(1, 2).\nhop(X) <- (a(X) where link(X, Y)) seq b(Y)."
    assert detect(rules, [("a", (1,), 1), ("b", (2,), 2), ("b", (3,), 3)]) == [
        ("hop", (1,), 1, 2), ("hop", (1,), 1, 3)]


def test_the_reference_evaluator_counts_a_condition_once_per_binding() -> None:
    model = evaluate(RuleSet.from_text(CREDIT + LINKS), [("order", ("o1",), 1), ("a", (1,), 2)])
    assert dict(model.counts) == {
        Fact("approved", ("o1",), 1, 1): 1,
        Fact("next", (1, 2), 2, 2): 1,
        Fact("next", (1, 3), 2, 2): 1,
        Fact("linked", (1,), 2, 2): 1,
    }
