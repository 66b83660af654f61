"""`etalis check` on broken rule files that the cases of
tests/test_paper_cases.py suggest: each mistake gets a positioned finding
with a hint (docs/language.md, "Checking rules")."""

from __future__ import annotations

from typing import Any

import pytest

from etalis_py import Engine, RuleError
from etalis_py.rules.findings import check_text

NEVER_HINT = ("give a window greater than 0; for events at the same time use `and` or `equals`, which allow it")
NEGATION_HINT = ("negation is an operator: (A seq B) cnot X for no X between A and B, P fnot X for no X while "
                 "P lasts")


def found(text: str, code: str) -> list[tuple[Any, ...]]:
    return [(f.severity, f.line, f.column, f.message, f.hint, dict(f.data))
            for f in check_text(text, "r.etl", max_age=60) if f.code == code]


def never(line: int, pattern: str, inner: str) -> tuple[Any, ...]:
    return ("warning", line, 1,
            f"`{pattern}` can never hold: every occurrence of `{inner}` lasts longer than 0 seconds (its parts "
            "cannot all occur at one time), so no window of 0 fits it", NEVER_HINT, {"pattern": inner})


def test_a_window_of_0_around_a_pattern_that_needs_time_is_never_met() -> None:
    # seq needs a2 < b1, during b1 < a1, par a nonzero overlap: each
    # occurrence lasts longer than 0; and, meets, equals and or of events
    # may occur at one point
    text = ("c <- (a seq b) within 0.\n"
            "d <- (a and b) within 0.\n"
            "e <- ((a during b) within 0) where true.\n"
            "ie <- x seq y.\n"
            "f <- (ie and z) within 0.\n"
            "g <- (x or ie) within 0.\n"
            "h <- (ie or (x par y)) within 0.\n"
            "m <- (a meets b) within 0.\n"
            "n <- iteration(a, 2) within 0.\n"
            "k <- (a seq b) within 1.\n")
    assert found(text, "window-never-met") == [
        never(1, "a seq b within 0", "a seq b"),
        never(3, "a during b within 0", "a during b"),
        never(5, "ie and z within 0", "ie and z"),
        never(7, "ie or x par y within 0", "ie or x par y"),
        never(9, "a seq a within 0", "a seq a"),
    ]


def test_the_engine_indeed_never_detects_what_the_finding_says() -> None:
    with Engine.from_string("c <- (a seq b) within 0.\nd <- (a and b) within 0.\n") as engine:
        result = engine.emit_many([("a", (), 1), ("b", (), 1), ("b", (), 2)])
        assert [(d.event, d.start, d.end) for d in result.detections] == [("d", 1, 1)]


@pytest.mark.parametrize("pattern, sig", [
    ("a seq not(x) seq b", "not/1"),
    ("fnot(x)", "fnot/1"),
    ("(a seq b) and cnot(x)", "cnot/1"),
])
def test_a_negation_written_as_an_event_is_a_warning(pattern: str, sig: str) -> None:
    text = f"c <- {pattern}.\n"
    name = sig.split("/")[0]
    assert found(text, "negation-as-event") == [
        ("warning", 1, 1, f"{name}(...) in this pattern is an event named {sig}, not a negation: it matches only "
         f"input or derived events called {name}", NEGATION_HINT, {"event": sig})]


def test_the_negation_operators_are_no_finding() -> None:
    # `a fnot(x)` is the operator fnot: Prolog reads it as `a fnot x`
    assert found("c <- (a seq b) cnot x.\nd <- (a seq b) fnot(x).\ne(X) <- a(X) where \\+ X < 1.\n",
                 "negation-as-event") == []


UNBOUND_HINT = "bind {v} in an event of the pattern or an earlier goal of the condition, or correct the variable's name"


def unbound(goal: str, v: str) -> tuple[Any, ...]:
    return ("warning", 1, 1,
            f"`{goal}` in a where condition uses {v}, which is unbound when it runs (bound neither by the pattern "
            "nor by an earlier goal): the comparison raises an error and the occurrence is dropped",
            UNBOUND_HINT.format(v=v), {"goal": goal, "variables": [v]})


@pytest.mark.parametrize("rule, expected", [
    # a condition inside another operator is checked with what is bound there
    ("c <- (a(X) where Y > 1) seq b.", [unbound("Y>1", "Y")]),
    ("c <- (a seq b) fnot (x(T) where T > Y).", [unbound("T>Y", "Y")]),
    # a condition on the negated part sees what the operands bind
    ("c(R) <- (s(R, S) seq e(R)) fnot (t(R, T) where T =< S).", []),
    ("c(R) <- (s(R, S) seq e(R)) cnot (t(R, T) where T =< S).", []),
    # ... but not inside an `or` of it, where it runs on its own: such a rule is refused
    # (tests/test_conditions.py); a variable that no event binds is warned of
    ("c(R) <- (s(R, S) seq e(R)) fnot ((t(R, T) where T =< Y) or u(R)).", [unbound("T=<Y", "Y")]),
])
def test_conditions_inside_operators_are_checked_with_what_is_bound(rule: str, expected: list[Any]) -> None:
    assert found(rule + "\n", "unbound-where-variable") == expected


def test_a_condition_in_etalis_check_form_is_checked_goal_by_goal() -> None:
    # (its goals were once not walked, and the rule was left out of the findings)
    rule = "span(T1, T2) <- (a seq b) where check(t1(T1), t2(T2), T2 > X).\n"
    assert found(rule, "unbound-where-variable") == [unbound("T2>X", "X")]
    assert found(rule, "no-event-rules") == []


@pytest.mark.parametrize("call, near", [
    ("too_hott(T)", "too_hot/1"),          # a typo in the name
    ("too_hot(T, 1)", "too_hot/1"),        # the wrong arity
])
def test_a_call_of_an_undefined_predicate_names_the_one_the_file_defines(call: str, near: str) -> None:
    text = f"too_hot(T) :- T > 40.\nc(T) <- a(T) where {call}.\n"
    name = call.split("(")[0] + "/" + str(call.count(",") + 1)
    assert [(f.line, f.column, f.data["predicate"], f.hint) for f in check_text(text, "r.etl")
            if f.code == "undefined-predicate"] == [(2, 1, name, f"did you mean {near}? (the rule file defines it)")]
