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
