"""Recursive rules: forward in time, widening, or at the same time with each occurrence derived once;
refused only through an aggregate at the same time, which cannot end."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import detect

from etalis_py import Engine, RuleError
from reference.evaluate import Fact, evaluate
from reference.terms import RuleSet


@pytest.mark.parametrize(
    "rules,stream,found",
    [
        ("p <- b.\np <- p and a.", [("b", (), 1), ("a", (), 2), ("a", (), 3)],
         [("p", (), 1, 1), ("p", (), 1, 2), ("p", (), 1, 3)]),
        ("p <- p or a.", [("a", (), 1), ("a", (), 2)], [("p", (), 1, 1), ("p", (), 2, 2)]),
        ("q(X) <- p(X) and a.\np(X) <- q(X) or b(X).", [("b", (1,), 1), ("a", (), 2)],
         [("p", (1,), 1, 1), ("q", (1,), 1, 2), ("p", (1,), 1, 2)]),
        ("p <- b.\np <- a during p.", [("a", (), 2), ("a", (), 3), ("b", (), 1, 4)], [("p", (), 1, 4)]),
        ("p <- a starts p.", [("a", (), 1), ("p", (), 1, 3)], [("p", (), 1, 3)]),
        ("p <- p par a.", [("a", (), 1, 3), ("p", (), 2, 4)], [("p", (), 1, 4)]),
    ],
)
def test_recursion_at_the_same_time_derives_each_occurrence_once(
        rules: str, stream: list[tuple[object, ...]], found: list[tuple[Any, ...]]) -> None:
    # as in ETALIS's and_01: a derived occurrence identical to one already
    # derived is no new fact, so the cycle ends; the least model is finite
    assert detect(rules, stream) == found
    model = evaluate(RuleSet.from_text(rules), stream)
    assert dict(model.counts) == {Fact(e, args, s, t): 1 for e, args, s, t in found}


def test_etalis_and_01_gives_what_etalis_gives() -> None:
    # ETALIS's examples/and_01: a(1), b(1), c(1) -> d(1) over [1,2] and [1,3]
    rules = "d(X) <- a(X) and b(X).\nd(X) <- d(X) and c(X)."
    assert detect(rules, [("a", (1,), 1), ("b", (1,), 2), ("c", (1,), 3)]) == [
        ("d", (1,), 1, 2), ("d", (1,), 1, 3)]


def test_recursion_at_the_same_time_with_provenance_ends_too() -> None:
    with Engine.from_string("d(X) <- a(X) and b(X).\nd(X) <- d(X) and c(X).", explain=True) as engine:
        found = engine.emit_many([("a", (1,), 1), ("b", (1,), 2), ("c", (1,), 3)]).detections
    assert [(d.event, d.args, d.start, d.end, len(d.provenance or ())) for d in found] == [
        ("d", (1,), 1, 2, 2), ("d", (1,), 1, 3, 3)]


def test_recursion_at_the_same_time_through_an_aggregate_is_refused() -> None:
    with pytest.raises(RuleError) as info:
        Engine.from_string("p(S) <- aggregate(sum(X), p(X) and a, count(2), S).", source="r.etl")
    assert (info.value.line, info.value.message) == (
        1, "these rules derive an event from itself at the same time, forever, through an aggregate")
    assert "left of seq" in info.value.hint


def test_recursion_through_a_waiting_operand_or_a_where_guard_is_allowed() -> None:
    assert detect("p <- b.\np <- p during a.", [("b", (), 2, 3), ("a", (), 1, 5)]) == [
        ("p", (), 2, 3), ("p", (), 1, 5)]
    assert detect("p(0) <- a.\np(N1) <- (p(N) and a) where (N1 is N + 1, N1 < 3).", [("a", (), 1)]) == [
        ("p", (0,), 1, 1), ("p", (1,), 1, 1), ("p", (2,), 1, 1)]
    assert detect("p(1) <- p(2) and a.", [("a", (), 1)]) == []


def test_an_added_rule_that_closes_a_cycle_is_refused() -> None:
    with Engine.from_string("q(N) <- aggregate(count, p and a, count(1), N).\np <- b.") as engine:
        with pytest.raises(RuleError, match="derive an event from itself"):
            engine.add_rules("p <- q(_) or c.")
        assert engine.rule_count == 2


def test_closed_engines_free_their_module() -> None:
    from etalis_py.bridge._prolog import bridge

    engine = Engine.from_string("c <- a seq b.")
    name = engine._name
    engine.close()
    header, _ = bridge().request("solve(user)", f"(current_module({name}) -> Found = yes ; Found = no)")
    assert header["solutions"] == [{"Found": "no"}]


def test_right_recursion_through_seq_widens_and_is_accepted() -> None:
    # each round takes a b that ends before the current start
    stream = [("b", (1,), 1), ("b", (2,), 2), ("h1", (), 3)]
    assert detect("h1 <- b(_) seq h1.", stream) == [
        ("h1", (), 1, 3), ("h1", (), 2, 3), ("h1", (), 1, 3)]


def test_right_recursion_with_windows_is_accepted_and_held_to_them() -> None:
    rules = "h2(X) <- ((b(_) within 3) seq h2(X)) within 5."
    stream = [("b", (0,), 1), ("b", (0,), 2), ("h2", (7,), 4), ("b", (0,), 5), ("h2", (8,), 8)]
    assert detect(rules, stream) == [
        ("h2", (7,), 1, 4), ("h2", (7,), 2, 4), ("h2", (7,), 1, 4), ("h2", (8,), 5, 8)]


@pytest.mark.parametrize(
    "rules,stream,found",
    [
        ("p <- p after a.", [("a", (), 1), ("p", (), 2)], [("p", (), 1, 2)]),
        ("p <- a overlaps p.", [("a", (), 1, 3), ("p", (), 2, 4)], [("p", (), 1, 4)]),
        ("p <- p finishes a.", [("a", (), 1, 4), ("p", (), 2, 4)], [("p", (), 1, 4)]),
        ("p <- (a seq b) cnot c.\np <- (a seq p) cnot c.", [("a", (), 1), ("a", (), 2), ("b", (), 3)],
         [("p", (), 1, 3), ("p", (), 2, 3), ("p", (), 1, 3)]),
    ],
)
def test_recursion_through_any_operand_that_widens_is_accepted(
        rules: str, stream: list[tuple[object, ...]], found: list[tuple[object, ...]]) -> None:
    assert detect(rules, stream) == found
