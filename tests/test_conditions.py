"""`where` conditions: a test, not a generator, and the
reference evaluator held to the same meaning."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import detect
from etalis_py import Engine, RuleError

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


def refusal(rule: str) -> tuple[int, int, str, str]:
    """The line, column, message and hint of the error that refuses rule."""
    with pytest.raises(RuleError) as info:
        Engine.from_string(rule, source="r.etl")
    assert info.value.file == "r.etl"
    return (info.value.line, info.value.column, info.value.message, info.value.hint)


OUTSIDE = ("`{goal}` in a where condition reads {read}, which only an event outside the pattern it filters binds: "
           "a condition runs on that pattern's own bindings")
OUTSIDE_HINT = ("put the condition on a pattern that binds every variable it reads: (a(X) seq b(Y)) where Y > X, "
                "not a(X) seq (b(Y) where Y > X)")


@pytest.mark.parametrize("rule, column, goal, read", [
    # the condition of a later part of a sequence reads a variable of an earlier one
    ("c(X, Y) <- a(X) seq (b(Y) where Y > X).", 33, "Y>X", "X"),
    ("c(X, Y) <- (a(Y) where Y > X) and b(X).", 24, "Y>X", "X"),
    # an `or` whose branches bind different variables: the condition of one reads the other's
    ("h <- (a(X) where X > Y) or b(Y).", 18, "X>Y", "Y"),
    ("h(Y) <- ((a(X) where X > Y) or b(Y)) seq c(Y).", 22, "X>Y", "Y"),
    # inside a negated part, but deeper than directly on it (an `or`, a `seq` of it)
    ("c(R) <- (s(R, S) seq e(R)) fnot ((t(R, T) where T =< S) or u(R)).", 49, "T=<S", "S"),
    ("c(R) <- (s(R, S) seq e(R)) fnot (t(R, S) seq (u(R, T) where T > S)).", 61, "T>S", "S"),
    # the pattern of an aggregate is read alone, as is the step of an ETALIS run
    ("h(R) <- l(L) seq aggregate(count, t(V) where V > L, count(3), R).", 46, "V>L", "L"),
    ("h(C) <- s(X) seq aggregate(count, a(Y) where Y > X, C).", 46, "Y>X", "X"),
    # ... and the result of an aggregate is bound where the aggregate is
    ("h <- (a(X) where X > N) seq aggregate(count, b, count(3), N).", 18, "X>N", "N"),
    # a rule nested in a pattern
    ("h <- a(X) seq (n(X) <- b(X) seq (c(Y) where Y > X)).", 45, "Y>X", "X"),
])
def test_a_condition_that_reads_what_only_another_event_binds_is_refused(
        rule: str, column: int, goal: str, read: str) -> None:
    assert refusal(rule) == (1, column, OUTSIDE.format(goal=goal, read=read), OUTSIDE_HINT)


@pytest.mark.parametrize("rule, column, read", [
    ("h <- a(X) seq ((b(Y) or c(Z)) where Z > Y).", 1, "Y"),
    ("h <- (a(X) or b(Y)) where Y > 0.", 1, "Y"),
    ("c(R) <- (s(R) seq e(R)) fnot ((t(R, T) or u(R, Y)) where T > Y).", 1, "T"),
])
def test_a_condition_on_an_or_that_reads_a_variable_of_one_branch_is_refused(rule: str, column: int, read: str) -> None:
    assert refusal(rule) == (1, column, f"variable {read} is bound by only one branch of `or` but used outside it",
                             "bind the variable in both branches, or use it only inside its branch")


def test_check_reports_such_a_condition_as_the_error_of_its_rule(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("b_after(X) <- a(X).\nc(X, Y) <- a(X) seq (b(Y) where Y > X).\n")
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "check", str(rules), "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert json.loads(r.stdout)["findings"] == [
        {"severity": "error", "code": "rule-error", "message": OUTSIDE.format(goal="Y>X", read="X"),
         "file": str(rules), "line": 2, "column": 33, "hint": OUTSIDE_HINT, "data": {}}]


def test_the_condition_moved_to_the_pattern_that_binds_both_is_detected() -> None:
    events = [("a", (1,), 1), ("b", (0,), 2), ("b", (2,), 3), ("a", (5,), 4), ("b", (3,), 5)]
    assert detect("c(X, Y) <- (a(X) seq b(Y)) where Y > X.", events) == [
        ("c", (1, 2), 1, 3), ("c", (1, 3), 1, 5)]


@pytest.mark.parametrize("rule, events, expected", [
    # a condition may bind a variable that an event outside joins on
    ("c(X, Y) <- a(X) seq (b(Y) where X is Y + 1).", [("a", (3,), 1), ("b", (2,), 2), ("b", (4,), 3)],
     [("c", (3, 2), 1, 2)]),
    # directly on a negated part it sees what the other parts bind
    ("c(R) <- (s(R, S) seq e(R)) fnot (t(R, T) where T =< S).",
     [("s", (1, 30), 1), ("s", (2, 30), 2), ("t", (1, 29), 3), ("t", (2, 31), 4), ("e", (1,), 5), ("e", (2,), 6)],
     [("c", (2,), 2, 6)]),
    # inside P+ it may read an event before the +
    ("h(X, Ys) <- a(X) seq ((b(Ys) where Ys > X)+) seq c.",
     [("a", (1,), 1), ("b", (0,), 2), ("b", (2,), 3), ("c", (), 4)], [("h", (1, [2]), 1, 4)]),
])
def test_conditions_that_read_only_what_is_bound_where_they_run_are_kept(
        rule: str, events: list[Any], expected: list[Any]) -> None:
    assert detect(rule, events) == expected


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


def test_a_condition_that_raises_names_its_rule_and_says_what_went_wrong_with_a_hint(tmp_path: Path) -> None:
    """The warning of the input line: the condition as it ran, the rule's head and position (the first of the
    rules sharing the condition, and how many more), what went wrong in plain words and what to do; the
    occurrence is dropped and counted as before."""
    rules = tmp_path / "w.etl"
    rules.write_text("% temperatures\n"
                     "hot(S) <- temp(S, T)\n"
                     "    where T > warm.\n"
                     "warm(S) <- temp(S, T) where T > warm.\n"
                     "ratio(S, R) <- temp(S, T) where R is 10 / T.\n"
                     "odd(S) <- temp(S, T) where T > 0, no_such_check(T).\n"
                     "runs(S) <- (temp(S, T) where T >= 1 / 0)+ .\n"
                     "unbound(S) <- temp(S, T) where T > _U.\n"
                     "fine(S) <- temp(S, T) where T > 1.\n")
    with Engine.from_file(rules) as engine:
        result = engine.emit_many([("temp", ("a", 0), 1), ("temp", ("a", 2), 2)])
    zero = "division by zero\n  hint: test the divisor first, e.g. D =\\= 0, Q is N / D"
    unbound = ("a variable it reads is unbound when it runs\n  hint: bind every variable the condition reads in the "
               "pattern it filters (an argument of an event) or earlier in the condition")
    assert [(w.line, re.sub(r"_[0-9]+", "_", w.reason)) for w in result.warnings] == [
        (1, f"where condition 0>warm of hot(A) ({rules}:2:1, and of 1 more rule with this condition) raised: warm "
            "is an atom, not a number, and arithmetic compares numbers\n"
            "  hint: compare an atom with == or \\== (X == warm), or use a number"),
        (1, f"where condition _ is 10/0 of ratio(A,B) ({rules}:5:1) raised: {zero}"),
        (1, f"where condition 0>=1/0 of the rule ({rules}:7:12) raised: {zero}"),
        (1, f"where condition 0>_ of unbound(A) ({rules}:8:1) raised: {unbound}"),
        (2, f"where condition 2>warm of hot(A) ({rules}:2:1, and of 1 more rule with this condition) raised: warm "
            "is an atom, not a number, and arithmetic compares numbers\n"
            "  hint: compare an atom with == or \\== (X == warm), or use a number"),
        (2, f"where condition 2>0,no_such_check(2) of odd(A) ({rules}:6:1) raised: no_such_check/1 is not defined\n"
            "  hint: define it in the rule file (a static clause), load it with --static, or check its spelling"),
        (2, f"where condition 2>=1/0 of the rule ({rules}:7:12) raised: {zero}"),
        (2, f"where condition 2>_ of unbound(A) ({rules}:8:1) raised: {unbound}"),
    ]
    assert (result.accepted, [(d.event, d.args) for d in result.detections]) == (
        2, [("ratio", ("a", 5)), ("fine", ("a",))])
