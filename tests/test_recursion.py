"""Recursive rules: allowed when they move forward in time, refused when they cannot end."""

from __future__ import annotations

import pytest

from conftest import detect

from etalis_py import Engine, RuleError


@pytest.mark.parametrize(
    "rules,line",
    [
        ("p <- b.\np <- p and a.", 2),
        ("p <- p or a.", 1),
        ("q(X) <- p(X) and a.\np(X) <- q(X) or b(X).", 1),
        ("p <- b.\np <- a during p.", 2),
    ],
)
def test_recursion_that_derives_an_event_from_itself_at_once_is_refused(rules: str, line: int) -> None:
    with pytest.raises(RuleError) as info:
        Engine.from_string(rules, source="r.etl")
    assert (info.value.line, info.value.message) == (
        line, "these rules derive an event from itself at the same time, forever")
    assert "left of seq" in info.value.hint


def test_recursion_through_a_waiting_operand_or_a_where_guard_is_allowed() -> None:
    assert detect("p <- b.\np <- p during a.", [("b", (), 2, 3), ("a", (), 1, 5)]) == [
        ("p", (), 2, 3), ("p", (), 1, 5)]
    assert detect("p(0) <- a.\np(N1) <- (p(N) and a) where (N1 is N + 1, N1 < 3).", [("a", (), 1)]) == [
        ("p", (0,), 1, 1), ("p", (1,), 1, 1), ("p", (2,), 1, 1)]
    assert detect("p(1) <- p(2) and a.", [("a", (), 1)]) == []


def test_an_added_rule_that_closes_a_cycle_is_refused() -> None:
    with Engine.from_string("q <- p and a.\np <- b.") as engine:
        with pytest.raises(RuleError, match="derive an event from itself"):
            engine.add_rules("p <- q or c.")
        assert engine.rule_count == 2


def test_closed_engines_free_their_module() -> None:
    from etalis_py._prolog import bridge

    engine = Engine.from_string("c <- a seq b.")
    name = engine._name
    engine.close()
    header, _ = bridge().request("solve(user)", f"(current_module({name}) -> Found = yes ; Found = no)")
    assert header["solutions"] == [{"Found": "no"}]


def test_right_recursion_through_seq_widens_and_is_accepted() -> None:
    # each round takes a b that ends before the current start (issue 13.2)
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


@pytest.mark.parametrize("rules", ["p <- a starts p.", "p <- p contains a.", "p <- a meets p.", "p <- p par a."])
def test_recursion_that_can_repeat_the_same_interval_is_refused(rules: str) -> None:
    with pytest.raises(RuleError, match="derive an event from itself at the same time, forever"):
        Engine.from_string(rules)
