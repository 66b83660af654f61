"""ETALIS's pattern operators: read with ETALIS's documented
meaning through the operator table, or refused with a positioned message
that names the construct, says why and gives the etalis-py equivalent.
Nothing of them is read as an input event."""

from __future__ import annotations

import pytest

from conftest import detect
from etalis_py import Engine, RuleError
from etalis_py.bridge.engine import check_policy, compile_listing
from etalis_py.rules.findings import check_text
from reference.evaluate import Fact, evaluate
from reference.terms import RuleSet


@pytest.mark.parametrize("op", ["check", "timestamp"])
def test_check_and_timestamp_filter_with_the_patterns_interval(op: str) -> None:
    rules = f"d(X) <- a(X) seq b(X) {op} (t1(T1), t2(T2), T2 - T1 < 2)."
    events = [("a", (1,), 1), ("b", (1,), 2), ("a", (2,), 3), ("b", (2,), 6)]
    assert detect(rules, events) == [("d", (1,), 1, 2)]


def test_timestamp_binds_the_interval_for_the_head() -> None:
    rules = "d(X, S, E) <- (a(X) seq b(X) timestamp (t1(S), t2(E))) seq c(X)."
    events = [("a", (1,), 1), ("b", (1,), 2), ("c", (1,), 5)]
    assert detect(rules, events) == [("d", (1, 1, 2), 1, 5)]


def test_check_binds_tighter_than_or() -> None:
    rules = "d <- a seq b check (t2(T), T > 3) or c."
    events = [("a", (), 1), ("b", (), 2), ("c", (), 3), ("a", (), 4), ("b", (), 5)]
    assert detect(rules, events) == [("d", (), 3, 3), ("d", (), 1, 5), ("d", (), 4, 5)]


def test_event_multiply_fires_once_per_solution_of_its_goal() -> None:
    rules = "b(Y) <- a(X) event_multiply p(X, Y).\np(1, 2).\np(1, 3).\np(2, 4)."
    assert detect(rules, [("a", (1,), 7)]) == [("b", (2,), 7, 7), ("b", (3,), 7, 7)]


def test_iff_is_an_event_rule() -> None:
    rules = "ce1 iff a seq b.\nce2 iff ce1 seq d."
    events = [("a", (), 1), ("b", (), 2), ("d", (), 3)]
    assert detect(rules, events) == [("ce1", (), 1, 2), ("ce2", (), 1, 3)]


def test_prolog_step_after_a_sequence_is_its_condition() -> None:
    rules = "m(Min) <- m0(M0) seq a(X) seq prolog(Min is min(X, M0))."
    events = [("m0", (5,), 1), ("a", (7,), 2), ("a", (3,), 3)]
    assert detect(rules, events) == [("m", (5,), 1, 2), ("m", (3,), 1, 3)]


@pytest.mark.parametrize("step", ["query", "db"])
def test_query_and_db_steps_are_prolog_steps(step: str) -> None:
    rules = f"big(X) <- a(X) seq {step}(limit(L)) where X > L.\nlimit(10)."
    assert detect(rules, [("a", (5,), 1), ("a", (12,), 2)]) == [("big", (12,), 2, 2)]


def test_prolog_step_before_a_pattern_is_its_condition() -> None:
    rules = "big(X) <- prolog(limit(L)) seq a(X) where X > L.\nlimit(10)."
    assert detect(rules, [("a", (5,), 1), ("a", (12,), 2)]) == [("big", (12,), 2, 2)]


def test_nested_sub_pattern_rule_defines_its_head_and_stands_for_it() -> None:
    rules = "final <- a seq (sub <- b0(X) seq b1(Y) where X < Y)."
    events = [("a", (), 1), ("b0", (1,), 2), ("b1", (2,), 3), ("b0", (5,), 4), ("b1", (4,), 5)]
    assert detect(rules, events) == [("sub", (), 2, 3), ("final", (), 1, 3), ("sub", (), 2, 5), ("final", (), 1, 5)]


def test_nested_rule_shares_the_variables_it_passes_on() -> None:
    rules = "final(X) <- a(X) seq (sub(X) <- b(X) and c(X))."
    events = [("a", (1,), 1), ("b", (1,), 2), ("c", (2,), 3), ("c", (1,), 4)]
    assert detect(rules, events) == [("sub", (1,), 2, 4), ("final", (1,), 1, 4)]


def test_nested_rule_is_listed_before_its_rule() -> None:
    with Engine.from_string("final <- a seq (sub <- b seq c).") as engine:
        assert engine.rule_count == 2


START_AND_AS = [("start_aggr", (), 1), ("a", (1,), 2), ("a", (2,), 3), ("a", (0,), 4),
                ("start_aggr", (), 5), ("a", (5,), 6)]


# the run from start_aggr@1, then from start_aggr@5; a(5)@6 extends both under unrestricted (ETALIS's
# compiler keeps one run per start), the newer under recent, the older under chronological
@pytest.mark.parametrize("fun,values,at6", [
    ("count", [(0, 1, 1), (1, 1, 2), (2, 1, 3), (3, 1, 4), (0, 5, 5)], [(4, 1, 6), (1, 5, 6)]),
    ("sum(Y)", [(0, 1, 1), (1, 1, 2), (3, 1, 3), (3, 1, 4), (0, 5, 5)], [(8, 1, 6), (5, 5, 6)]),
    ("min(Y)", [(1, 1, 2), (1, 1, 3), (0, 1, 4)], [(0, 1, 6), (5, 5, 6)]),
    ("max(Y)", [(1, 1, 2), (2, 1, 3), (2, 1, 4)], [(5, 1, 6), (5, 5, 6)]),
])
@pytest.mark.parametrize("policy", ["unrestricted", "recent", "chronological"])
def test_etalis_aggregate_runs_from_each_start(fun: str, values: list[tuple[int, int, int]],
                                               at6: list[tuple[int, int, int]], policy: str) -> None:
    rules = f"d(R) <- start_aggr seq aggregate({fun}, a(Y), R)."
    last = {"unrestricted": at6, "recent": at6[1:], "chronological": at6[:1]}[policy]
    assert detect(rules, START_AND_AS, policy=policy) == [("d", (v,), s, e) for v, s, e in values + last]


def test_etalis_aggregate_keeps_one_running_value_per_start_key() -> None:
    rules = "d(X, C) <- s(X) seq aggregate(count, a(X, _), C)."
    events = [("s", (1,), 1), ("a", (1, 7), 2), ("s", (2,), 3), ("a", (2, 7), 4), ("a", (1, 8), 5)]
    assert detect(rules, events) == [("d", (1, 0), 1, 1), ("d", (1, 1), 1, 2), ("d", (2, 0), 3, 3),
                                      ("d", (2, 1), 3, 4), ("d", (1, 2), 1, 5)]


def test_etalis_aggregate_within_a_window_stops_when_it_closes() -> None:
    rules = "d(C) <- (s seq aggregate(count, a(_), C)) within 3."
    events = [("s", (), 1), ("a", (1,), 2), ("a", (2,), 3), ("a", (3,), 4), ("a", (4,), 5)]
    assert detect(rules, events) == [("d", (0,), 1, 1), ("d", (1,), 1, 2), ("d", (2,), 1, 3), ("d", (3,), 1, 4)]


def test_star_times_reports_the_start_and_each_extension_of_its_run() -> None:
    rules = "d(X) <- a(X) seq b(X) star_times."
    events = [("a", (1,), 1), ("b", (1,), 2), ("b", (1,), 3), ("b", (2,), 4), ("a", (2,), 5), ("b", (2,), 6)]
    assert detect(rules, events) == [("d", (1,), 1, 1), ("d", (1,), 1, 2), ("d", (1,), 1, 3),
                                      ("d", (2,), 5, 5), ("d", (2,), 5, 6)]


@pytest.mark.parametrize("policy,at4", [("unrestricted", [(1, 4), (3, 4)]), ("recent", [(3, 4)]),
                                        ("chronological", [(1, 4)])])
def test_star_times_goes_on_from_each_start_as_its_policy_says(policy: str, at4: list[tuple[int, int]]) -> None:
    events = [("s", (), 1), ("b", (), 2), ("s", (), 3), ("b", (), 4)]
    assert detect("d <- s seq b star_times.", events, policy=policy) == [
        ("d", (), s, e) for s, e in [(1, 1), (1, 2), (3, 3), *at4]]


def test_star_times_within_a_window() -> None:
    rules = "d <- (a seq b star_times) within 2."
    events = [("a", (), 1), ("b", (), 2), ("b", (), 3), ("b", (), 4)]
    assert detect(rules, events) == [("d", (), 1, 1), ("d", (), 1, 2), ("d", (), 1, 3)]


@pytest.mark.parametrize("policy", ["unrestricted", "recent", "chronological"])
def test_forall_seq_takes_every_pending_a_and_uses_them_up_under_any_policy(policy: str) -> None:
    rules = "d(X) <- a(X) forall_seq b(X)."
    events = [("a", (1,), 1), ("a", (1,), 2), ("a", (2,), 3), ("b", (1,), 4), ("b", (1,), 5), ("a", (1,), 6),
              ("b", (1,), 7)]
    assert detect(rules, events, policy=policy) == [("d", (1,), 1, 4), ("d", (1,), 2, 4), ("d", (1,), 6, 7)]


def test_forall_seq_is_listed_with_its_own_policy() -> None:
    listing = compile_listing("d(X) <- a(X) forall_seq b(X).")
    assert listing.splitlines()[4] == "1: '$ie1'(A) <- a(A) forall_seq b(A)    % window inf, continuous"


def test_etalis_aggregate_under_a_rule_window_property() -> None:
    rules = "r2([property(event_rule_window, 3)]) 'rule:' d(C) <- start_aggr seq aggregate(count, a(_), C)."
    events = [("start_aggr", (), 1), ("a", (1,), 2), ("a", (2,), 4), ("a", (3,), 5)]
    assert detect(rules, events) == [("d", (0,), 1, 1), ("d", (1,), 1, 2), ("d", (2,), 1, 4)]


def test_etalis_aggregate_with_a_do_action_and_print_trigger_of_every_event() -> None:
    rules = "print_trigger(_/_).\nd(C) do (C < 2) <- start_aggr seq aggregate(count, a(_), C)."
    events = [("start_aggr", (), 1), ("a", (1,), 2), ("a", (2,), 4)]
    with Engine.from_string(rules) as engine:
        assert engine.printed == ["d/1"]
        found = [(d.event, d.args, d.start, d.end) for d in engine.emit_many(events).detections]
    assert found == [("d", (0,), 1, 1), ("d", (1,), 1, 2)]


def test_etalis_aggregate_reports_only_the_rules_head() -> None:
    with Engine.from_string("d(C) <- s seq aggregate(count, a(_), C).") as engine:
        assert engine.printed == ["d/1"]


@pytest.mark.parametrize(
    "text,line,column,message,hint",
    [
        ("d(X) <- a(X) and b(X) star_times.", 1, 23,
         "ETALIS's star_times is not supported here: it is understood only as the whole body S seq P star_times "
         "(S, then each later P extending the run)",
         "write the rule as d(X) <- a(X) seq b(X) star_times, or a fixed count with iteration(b(X), 3)"),
        ("d(X) <- a(X) ntimes 3.", 1, 14,
         "ETALIS's ntimes is not supported here: ETALIS declares `P ntimes N` but its compiler has no rules for it, "
         "so it never detects anything",
         "write iteration(P, N) for P N times in sequence"),
        ("d(C) <- s and aggregate(count, a(Y), C).", 1, 15,
         "ETALIS's three-argument aggregate aggregate(count,a(Y),C) is understood only as the whole body "
         "Start seq aggregate(F, P, R), the running aggregate since Start",
         "write the rule as d(C) <- start seq aggregate(count, a(Y), C), or give the aggregate a window: "
         "aggregate(count, a(Y), count(100), C) or aggregate(sum(Y), a(Y), time(minutes(5)), S)"),
        ("d(C) <- s seq aggregate(avg(Y), a(Y), C).", 1, 15,
         "unknown aggregate avg(Y)",
         "ETALIS's aggregate(F, P, R) takes count, sum(X), min(X) or max(X)"),
        ("d(X) <- a(X) and prolog(X > 1).", 1, 18,
         "a prolog(Goal) step is only understood as an operand of seq: `P seq prolog(G)` or `prolog(G) seq P`",
         "write the goal as a condition: P where G"),
        ("d <- prolog(true).", 1, 6,
         "a prolog(Goal) step is only understood as an operand of seq: `P seq prolog(G)` or `prolog(G) seq P`",
         "write the goal as a condition: P where G"),
        ("d <- a or db(p(1)).", 1, 11,
         "a db(Goal) step is only understood as an operand of seq: `P seq db(G)` or `db(G) seq P`",
         "write the goal as a condition: P where G"),
    ],
)
def test_etalis_constructs_without_a_sound_meaning_are_refused_where_they_are(
        text: str, line: int, column: int, message: str, hint: str) -> None:
    with pytest.raises(RuleError) as info:
        Engine.from_string(text, source="r.etl")
    error = info.value
    assert (error.file, error.line, error.column, error.message, error.hint) == ("r.etl", line, column, message, hint)


def test_policy_names_are_checked_by_the_engines_grammar() -> None:
    assert check_policy("chronological(greater(2))") == "chronological(greater(2))"
    with pytest.raises(ValueError) as info:
        check_policy("recent(newest)")
    assert str(info.value) == (
        "unknown policy 'recent(newest)': use unrestricted, recent or chronological, or for intervals "
        "recent(Pref) or chronological(Pref) with Pref longer, shorter or greater(N), or a selection strategy: "
        "strict, nxt, last, max, stn, continuous or cumulative")


def test_a_list_argument_is_checked_like_any_term() -> None:
    found = check_text("t([X, Y], []) <- (a(X) seq b(Y)) within 5.", source="r.etl")
    assert found == []
    assert detect("t([X, Y], []) <- (a(X) seq b(Y)) within 5.", [("a", (1,), 1), ("b", (2,), 2)]) == [
        ("t", ([1, 2], []), 1, 2)]


ETALIS_SPELLINGS = """\
d(X) <- a(X) seq b(X) check (t1(T1), t2(T2), T2 - T1 < 3).
e(Y) <- a(X) event_multiply p(X, Y).
f(X, S) iff (a(X) seq b(X) timestamp t1(S)) seq c(X).
g(Y) <- b(X) seq prolog(Y is X * 10).
h(X) <- a(X) seq (sub(X) <- b(X) and c(X)).
p(1, 2).
p(1, 3).
"""


def test_reference_evaluator_reads_the_etalis_spellings_as_the_engine_does() -> None:
    stream = [("a", (1,), 1), ("b", (1,), 2), ("c", (1,), 3), ("a", (2,), 4), ("b", (2,), 8), ("c", (2,), 9)]
    rule_set = RuleSet.from_text(ETALIS_SPELLINGS)
    expected = set(evaluate(rule_set, stream).reported(rule_set.heads()))
    with Engine.from_string(ETALIS_SPELLINGS) as engine:
        found = {Fact.from_detection(d) for d in engine.emit_many(stream).detections}
    assert found == expected
    assert found == {
        Fact("d", (1,), 1, 2), Fact("e", (2,), 1, 1), Fact("e", (3,), 1, 1), Fact("f", (1, 1), 1, 3),
        Fact("f", (2, 4), 4, 9), Fact("g", (10,), 2, 2), Fact("g", (20,), 8, 8), Fact("h", (1,), 1, 3),
        Fact("h", (2,), 4, 9), Fact("sub", (1,), 2, 3), Fact("sub", (2,), 8, 9)}


@pytest.mark.parametrize("policy,grows", [
    ("unrestricted", "which each later event extends"), ("chronological", "of which the oldest goes on"),
    ("recent", None)])
def test_the_hidden_recursion_of_a_run_is_not_a_finding_but_its_memory_is(policy: str, grows: str | None) -> None:
    rules = f":- policy({policy}).\nd(C) <- s seq aggregate(count, a(_), C).\ne <- s seq a(_) star_times."
    assert [(f.line, f.code, f.message) for f in check_text(rules, source="r.etl")] == [] if grows is None else [
        (line, "unbounded-memory", f"no window bounds this rule's pending goals: every start of the {kind} keeps a "
         f"run of its own (one per start, forever), {grows}") for line, kind in [(2, "aggregate"), (3, "star_times")]]


def test_a_run_keeps_only_its_newest_state() -> None:
    with Engine.from_string("d(C) <- s seq aggregate(sum(X), a(X), C).\ne <- s seq a(_) star_times.") as engine:
        result = engine.emit_many([("s", (), 0)] + [("a", (i,), i) for i in range(1, 501)])
        assert len(result.detections) == 1002
        assert result.detections[-2].args == (125250,)
        assert engine.stats().pending == 2
