"""Interval variants of the consumption policies (occurrences that end or start together)."""

from __future__ import annotations

import pytest

from conftest import detect

from etalis_py import Engine, RuleError

RULE = "c(S) <- a(S, _) seq b."
# a over [1,30] and [15,30] end together; the first has the smaller second argument
ENDING_TOGETHER = [("a", ("x", 10), 1, 30), ("a", ("y", 1000), 15, 30), ("b", (), 35, 50)]
# three a's: x and y start together, y is longer and has the greater second argument
STARTING_TOGETHER = [("a", ("x", 5), 1, 10), ("a", ("y", 7), 1, 20), ("a", ("z", 1), 3, 25),
                     ("b", (), 30, 30), ("b", (), 31, 31)]


@pytest.mark.parametrize(
    "policy,kept",
    [("recent", "y"), ("recent(longer)", "x"), ("recent(shorter)", "y"), ("recent(greater(2))", "y")],
)
def test_recent_variants_choose_among_occurrences_that_end_together(policy: str, kept: str) -> None:
    start = 1 if kept == "x" else 15
    assert detect(f":- policy({policy}).\n{RULE}", ENDING_TOGETHER) == [("c", (kept,), start, 50)]


@pytest.mark.parametrize(
    "policy,order",
    [("chronological", "xy"), ("chronological(longer)", "yx"), ("chronological(shorter)", "xy"),
     ("chronological(greater(2))", "yx")],
)
def test_chronological_variants_take_the_first_start_and_choose_among_ties(policy: str, order: str) -> None:
    assert detect(f":- policy({policy}).\n{RULE}", STARTING_TOGETHER) == [
        ("c", (order[0],), 1, 30), ("c", (order[1],), 1, 31)]


def test_a_variant_per_labelled_rule_and_from_the_api() -> None:
    rules = f"r : {RULE}\n:- policy(r, recent(longer))."
    assert detect(rules, ENDING_TOGETHER) == [("c", ("x",), 1, 50)]
    assert detect(RULE, ENDING_TOGETHER, policy="recent(longer)") == [("c", ("x",), 1, 50)]


def test_unknown_variant_is_a_positioned_error() -> None:
    with pytest.raises(RuleError, match=r"unknown consumption policy recent\(newest\)"):
        Engine.from_string(f":- policy(recent(newest)).\n{RULE}")
