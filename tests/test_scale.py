"""Large rule sets compile (in time linear in their size) and detect exactly.

No test here asserts a wall-clock time (benchmarks/compile_scale.py
measures it); they hold that large patterns and long chains of rules
compile at all and still give exactly the expected detections.
"""

from __future__ import annotations

from etalis_py import Engine, RuleError

import pytest


def seq_chain(n: int) -> str:
    """``c <- a0 seq a1 seq ... seq a(n-1).``: one rule, an n-deep pattern."""
    return "c <- " + " seq ".join(f"a{i}" for i in range(n)) + ".\n"


def rule_chain(n: int) -> str:
    """``e1 <- a0 seq a1. e2 <- e1 seq a2. ...``: each rule uses the head of the one before."""
    return "e1 <- a0 seq a1.\n" + "".join(f"e{i} <- e{i - 1} seq a{i}.\n" for i in range(2, n + 1))


def test_a_seq_of_2000_operands_detects_once_over_its_interval() -> None:
    with Engine.from_string(seq_chain(2000)) as engine:
        assert (engine.rule_count, engine.goal_count) == (1, 1999)
        result = engine.emit_many((f"a{i}", (), i + 1) for i in range(2000))
        assert result.accepted == 2000
        assert [(d.event, d.args, d.start, d.end) for d in result.detections] == [("c", (), 1, 2000)]


def test_a_seq_of_2000_operands_out_of_order_detects_nothing() -> None:
    events = [(f"a{i}", (), i + 1) for i in range(2000)]
    events[1000], events[1001] = ("a1001", (), 1001), ("a1000", (), 1002)
    with Engine.from_string(seq_chain(2000)) as engine:
        assert engine.emit_many(events).detections == []


def test_a_chain_of_1000_rules_derives_each_head_and_the_last_over_the_whole_stream() -> None:
    with Engine.from_string(rule_chain(1000)) as engine:
        assert (engine.rule_count, engine.goal_count) == (1000, 1000)
        result = engine.emit_many((f"a{i}", (), i + 1) for i in range(1001))
        found = [(d.event, d.args, d.start, d.end) for d in result.detections]
        assert found == [(f"e{k}", (), 1, k + 1) for k in range(1, 1001)]
        assert found[-1] == ("e1000", (), 1, 1001)
        # each rule keeps its left operand (unrestricted): one pending goal per rule
        stats = engine.stats()
        assert (stats.pending, stats.pending_by_rule) == (1000, {f"line {k}": 1 for k in range(1, 1001)})


def test_the_pending_goals_of_a_seq_of_2000_operands_half_way() -> None:
    with Engine.from_string(seq_chain(2000)) as engine:
        engine.emit_many((f"a{i}", (), i + 1) for i in range(1000))
        stats = engine.stats()
        assert (stats.pending, stats.pending_by_rule) == (1000, {"line 1": 1000})


def test_a_chain_of_1000_rules_through_the_right_operand_with_a_shared_variable() -> None:
    rules = "e1(X) <- a0(X) seq a1(X).\n" + "".join(
        f"e{i}(X) <- a{i}(X) seq e{i - 1}(X).\n" for i in range(2, 1001))
    # e_k needs a_k before e_(k-1): a1000, a999, ..., a2, then a0, a1
    events = [(f"a{i}", (7,), 1001 - i) for i in range(1000, 1, -1)]
    events += [("a0", (7,), 1000), ("a1", (7,), 1001), ("a1", (8,), 1002)]
    with Engine.from_string(rules) as engine:
        found = [(d.event, d.args, d.start, d.end) for d in engine.emit_many(events).detections]
    assert found == [("e1", (7,), 1000, 1001)] + [(f"e{k}", (7,), 1001 - k, 1001) for k in range(2, 1001)]


def test_an_or_of_1000_operands_detects_each_one() -> None:
    rules = "c(X) <- " + " or ".join(f"a{i}(X)" for i in range(1000)) + ".\n"
    with Engine.from_string(rules) as engine:
        result = engine.emit_many([("a999", (1,), 1), ("a0", (2,), 2), ("a500", (3,), 3)])
    assert [(d.event, d.args, d.start, d.end) for d in result.detections] == [
        ("c", (1,), 1, 1), ("c", (2,), 2, 2), ("c", (3,), 3, 3)]


def test_a_seq_of_10000_operands_compiles() -> None:
    with Engine.from_string(seq_chain(10_000)) as engine:
        assert (engine.rule_count, engine.goal_count, engine.printed) == (1, 9999, ["c/0"])


def test_a_label_used_twice_among_many_rules_is_refused_at_its_second_use() -> None:
    rules = "".join(f"r{i} : h{i} <- a{i} seq b.\n" for i in range(500)) + "r7 : x <- y seq z.\nr3 : w <- y.\n"
    with pytest.raises(RuleError) as info:
        Engine.from_string(rules, source="many.etl")
    assert (info.value.line, info.value.column, info.value.message) == (
        502, 1, "the label r3 is used by more than one rule")
