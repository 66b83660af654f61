"""`where` conditions: a test, not a generator, and the
reference evaluator held to the same meaning."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from conftest import detect

from reference.evaluate import Fact, evaluate
from reference.selection import filtered_sequence
from reference.terms import RuleSet

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


# A where that fails consumes nothing: under a policy that
# chooses, a filter directly on a temporal operator is part of the choice.

def test_chronological_a_rejected_pair_consumes_nothing() -> None:
    rules = "raise(X, Y) <- bid(X) seq bid2(Y) where Y > X."
    stream = [("bid", (5,), 1), ("bid2", (1,), 2), ("bid2", (9,), 3)]
    assert detect(rules, stream, policy="chronological") == [("raise", (5, 9), 1, 3)]


def test_recent_chooses_the_newest_eligible_initiator() -> None:
    rules = "p(K, K2) <- (a(K) seq b(K2)) where K =:= K2."
    stream = [("a", (1,), 1), ("a", (2,), 2), ("b", (2,), 3), ("b", (1,), 4)]
    assert detect(rules, stream, policy="recent") == [("p", (2, 2), 2, 3), ("p", (1, 1), 1, 4)]


def test_interval_variants_choose_among_the_eligible() -> None:
    rules = "c(S) <- (a(S, V) seq b) where V > 5."
    stream = [("a", ("x", 10), 1, 30), ("a", ("y", 1000), 15, 30), ("a", ("z", 1), 20, 30), ("b", (), 35, 50)]
    assert detect(rules, stream, policy="recent(longer)") == [("c", ("x",), 1, 50)]
    assert detect(rules, stream, policy="recent(shorter)") == [("c", ("y",), 15, 50)]
    stream = [("a", ("z", 1), 1, 20), ("a", ("y", 1000), 1, 25), ("a", ("x", 10), 1, 30),
              ("b", (), 35, 36), ("b", (), 37, 38)]
    assert detect(rules, stream, policy="chronological(shorter)") == [
        ("c", ("y",), 1, 36), ("c", ("x",), 1, 38)]


def test_chronological_a_sequence_that_fnot_blocks_consumes_nothing() -> None:
    rules = "quiet(S) <- (start(S) seq stop(S)) fnot alarm(S)."
    stream = [("start", (1,), 1), ("alarm", (1,), 2), ("start", (1,), 3), ("stop", (1,), 4), ("stop", (1,), 5)]
    assert detect(rules, stream, policy="chronological") == [("quiet", (1,), 3, 4)]
    assert detect(rules, stream, policy="recent") == [("quiet", (1,), 3, 4), ("quiet", (1,), 3, 5)]


def test_recent_an_occurrence_completes_goals_before_it_replaces_the_initiator() -> None:
    stream = [("b", (0,), 1), ("b", (6,), 2), ("b", (7,), 3)]
    assert detect("m <- b(_) seq (b(V) where V > 4).", stream, policy="recent") == [
        ("m", (), 1, 2), ("m", (), 2, 3)]
    four = [("b", (), t) for t in (1, 2, 3, 4)]
    assert detect("m <- b seq (b or a) seq b.", four, policy="recent") == [("m", (), 1, 3), ("m", (), 2, 4)]
    assert detect("m <- b seq (b or a) seq b.", four, policy="chronological") == [
        ("m", (), 1, 3), ("m", (), 2, 4)]


CONDITIONS: dict[str, Callable[[tuple[Any, ...], tuple[Any, ...]], bool]] = {
    "X < Y": lambda a, b: a[0] < b[0],
    "X =:= Y": lambda a, b: a[0] == b[0],
    "X > Y + 1": lambda a, b: a[0] > b[0] + 1,
}


@pytest.mark.parametrize("policy", ["recent", "chronological"])
@pytest.mark.parametrize("goal", sorted(CONDITIONS))
def test_choosing_policies_follow_their_definitions_on_random_streams(policy: str, goal: str) -> None:
    rules = f"h(X, Y) <- (a(X) seq b(Y)) where {goal}."
    rng = random.Random(f"{policy}:{goal}")
    for _ in range(60):
        t, stream = 0, []
        for _ in range(rng.randint(0, 12)):
            t += rng.choice((0, 1, 1, 2))
            start = t - rng.choice((0, 0, 0, 1))
            stream.append((rng.choice("ab"), (rng.randint(0, 3),), start, t))
        expected = [(f.event, f.args, f.start, f.end) for f in filtered_sequence(policy, stream, CONDITIONS[goal])]
        assert detect(rules, stream, policy=policy) == expected, stream
