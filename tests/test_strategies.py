"""Selection strategies and contexts (docs/language.md, "Selection strategies").

Examples with the exact detections of each strategy, each with the input
events it combines (provenance), on streams where the strategies differ;
and properties: random sequence rules and streams (hypothesis), where
the engine under each strategy must detect exactly the matches of the
reference definitions in reference.selection.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import DataChoices, examples
from hypothesis import given
from hypothesis import strategies as st

from etalis_py import Detection, Engine, RuleError
from etalis_py.errors import InferenceLimitError
from etalis_py.events import Event
from etalis_py.rules.rules import Binary, EventP, term_vars
from reference.selection import (
    STRATEGIES,
    ChainCase,
    Match,
    chain_of,
    check_chain_case,
    continuous_matches,
    engine_matches,
    random_chain_case,
    reference_matches,
    sequence_of,
    stn_matches,
)
from reference.evaluate import PrologGoals
from reference.terms import RuleSet

RULE = "h(X, Y) <- a(X) seq b(Y) seq c."

# positions:   0        1        2        3        4     5        6        7
STREAM = [("a", [1], 1), ("a", [2], 2), ("b", [3], 3), ("b", [4], 4), ("c", [], 5),
          ("a", [5], 6), ("b", [6], 7), ("c", [], 8)]


def at(positions: tuple[int, ...]) -> tuple[Any, ...]:
    """The detection of RULE made of the events at ``positions``."""
    (a, b, c) = (STREAM[p] for p in positions)
    return ("h", (a[1][0], b[1][0]), a[2], c[2], tuple(STREAM[p][0] for p in positions),
            tuple(STREAM[p][2] for p in positions))


def detections(rules: str, policy: str, stream: list[tuple[str, list[Any], int]]) -> list[tuple[Any, ...]]:
    with Engine.from_string(rules, policy=policy, explain=True) as engine:
        found = engine.emit_many(stream)
    assert found.rejected == []
    return [(d.event, d.args, d.start, d.end, tuple(p.event for p in d.provenance),
             tuple(p.start for p in d.provenance)) for d in found.detections]


def test_unrestricted_is_skip_till_any_match_every_combination() -> None:
    assert sorted(detections(RULE, "unrestricted", STREAM), key=lambda d: (d[3], d[5])) == [
        at(p) for p in [(0, 2, 4), (0, 3, 4), (1, 2, 4), (1, 3, 4),
                        (0, 2, 7), (0, 3, 7), (0, 6, 7), (1, 2, 7), (1, 3, 7), (1, 6, 7), (5, 6, 7)]]


def test_strict_keeps_only_matches_of_adjacent_events() -> None:
    assert detections(RULE, "strict", STREAM) == [at((5, 6, 7))]


def test_nxt_takes_the_earliest_events_once_per_last_event() -> None:
    assert detections(RULE, "nxt", STREAM) == [at((0, 2, 4)), at((0, 2, 7))]


def test_last_takes_the_most_recent_events_once_per_last_event() -> None:
    assert detections(RULE, "last", STREAM) == [at((1, 3, 4)), at((5, 6, 7))]


def test_stn_runs_from_every_first_event_taking_the_next_that_fits() -> None:
    assert detections(RULE, "stn", STREAM) == [at((0, 2, 4)), at((1, 2, 4)), at((5, 6, 7))]


def test_continuous_combines_a_terminator_with_every_initiator_and_consumes_them() -> None:
    assert detections(RULE, "continuous", STREAM) == [at((0, 2, 4)), at((1, 2, 4)), at((5, 6, 7))]


def test_cumulative_combines_all_initiators_into_one_detection_whose_variables_hold_their_values() -> None:
    # step 1: b(3) takes a(1) and a(2): X = [1, 2]; b(4) finds none; step 2: c takes that one occurrence
    with Engine.from_string(RULE, policy="cumulative", explain=True) as engine:
        found = engine.emit_many(STREAM).detections
    assert [(d.event, d.args, d.start, d.end, tuple(p.start for p in d.provenance)) for d in found] == [
        ("h", ([[1, 2]], [3]), 1, 5, (1, 2, 3, 5)), ("h", ([[5]], [6]), 6, 8, (6, 7, 8))]


def test_recent_and_chronological_on_the_same_stream_for_comparison() -> None:
    assert detections(RULE, "recent", STREAM) == [at((1, 3, 4)), at((5, 6, 7))]
    assert detections(RULE, "chronological", STREAM) == [at((0, 2, 4)), at((1, 3, 7))]


MAX_RULE = "m <- (a(_) seq c) or c."


def test_max_drops_a_match_whose_events_another_match_holds_with_more() -> None:
    stream = [("a", [1], 1), ("c", [], 2)]
    assert detections(MAX_RULE, "unrestricted", stream) == [
        ("m", (), 1, 2, ("a", "c"), (1, 2)), ("m", (), 2, 2, ("c",), (2,))]
    assert detections(MAX_RULE, "max", stream) == [("m", (), 1, 2, ("a", "c"), (1, 2))]
    # of the two, {1, 2} is the greater in both of CEL's orders; both are contiguous
    assert detections(MAX_RULE, "nxt", stream) == [("m", (), 1, 2, ("a", "c"), (1, 2))]
    assert detections(MAX_RULE, "last", stream) == [("m", (), 1, 2, ("a", "c"), (1, 2))]
    assert detections(MAX_RULE, "strict", stream) == [
        ("m", (), 1, 2, ("a", "c"), (1, 2)), ("m", (), 2, 2, ("c",), (2,))]


def test_a_failed_condition_or_window_is_no_match_and_selects_nothing() -> None:
    rules = "h(X, Y) <- (a(X) seq b(Y)) where X < Y."
    stream = [("a", [1], 1), ("a", [5], 2), ("b", [3], 3)]
    # last would take a(5) but a(5), b(3) fails the condition: the next most recent match
    assert detections(rules, "last", stream) == [("h", (1, 3), 1, 3, ("a", "b"), (1, 3))]
    windowed = "h(X, Y) <- (a(X) seq b(Y)) within 1."
    assert detections(windowed, "nxt", stream) == [("h", (5, 3), 2, 3, ("a", "b"), (2, 3))]


def test_stn_skips_an_event_that_does_not_fit_and_takes_the_next() -> None:
    rules = "h(X, Y) <- a(X) seq (b(Y) where Y > 2)."
    stream = [("a", [1], 1), ("b", [2], 2), ("b", [3], 3), ("b", [4], 4)]
    assert detections(rules, "stn", stream) == [("h", (1, 3), 1, 3, ("a", "b"), (1, 3))]


def test_strategies_apply_per_rule_label_and_by_file_directive() -> None:
    rules = ":- policy(last).\n:- policy(first, nxt).\nfirst : f(X) <- a(X) seq c.\nh(X) <- a(X) seq c."
    stream = [("a", [1], 1), ("a", [2], 2), ("c", [], 3)]
    with Engine.from_string(rules) as engine:
        found = engine.emit_many(stream).detections
    assert found == [Detection("f", (1,), 1, 3), Detection("h", (2,), 2, 3)]


def test_a_selected_head_is_an_event_for_other_rules() -> None:
    rules = ":- policy(p, last).\np : p(X) <- a(X) seq c.\nq(X) <- p(X) seq d."
    stream = [("a", [1], 1), ("a", [2], 2), ("c", [], 3), ("d", [], 4)]
    with Engine.from_string(rules) as engine:
        found = engine.emit_many(stream).detections
    assert found == [Detection("p", (2,), 2, 3), Detection("q", (2,), 2, 4)]


def test_an_unknown_strategy_is_refused_with_its_position() -> None:
    with pytest.raises(RuleError) as err:
        Engine.from_string(":- policy(next).\nh <- a seq b.")
    assert (err.value.line, err.value.column) == (1, 1)
    assert err.value.message == "unknown consumption policy next"
    with pytest.raises(ValueError, match="unknown policy 'next'"):
        Engine.from_string("h <- a seq b.", policy="next")


def test_run_with_a_strategy_on_the_command_line(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text(RULE + "\n")
    stream = tmp_path / "s.events"
    stream.write_text("".join(f"event({n}({', '.join(map(str, a))}), {t}).\n" if a else f"event({n}, {t}).\n"
                              for n, a, t in STREAM))
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(stream),
                        "--policy", "nxt", "--quiet"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == [
        {"event": "h", "args": [1, 3], "start": 1, "end": 5}, {"event": "h", "args": [1, 3], "start": 1, "end": 8}]


def test_selectors_take_events_that_end_before_the_next_starts_on_intervals() -> None:
    # a(2) ends when b(3) starts, so it is not before it; b(5) over [2, 4] starts before a(4)
    rules = "h(X, Y) <- a(X) seq b(Y)."
    stream = [Event("a", (1,), 1, 1), Event("a", (2,), 1, 2), Event("b", (3,), 2, 2), Event("a", (4,), 3, 3),
              Event("b", (5,), 2, 4)]
    for strategy in ("nxt", "last"):
        with Engine.from_string(rules, policy=strategy) as engine:
            assert engine.emit_many(stream).detections == [Detection("h", (1, 3), 1, 2),
                                                           Detection("h", (1, 5), 1, 4)], strategy
    with Engine.from_string(rules, policy="strict") as engine:
        assert engine.emit_many(stream).detections == []


def test_selectors_on_a_sequence_keep_only_what_they_can_still_select() -> None:
    # 1,000 `a` wait for b(1), c(1): under a selector the engine keeps a bounded number of them,
    # not one pending match per `a`, and the window picks the oldest (nxt) or newest (last) in it
    rules = "h(K) <- (a seq b(K) seq c(K)) within 10."
    stream: list[tuple[str, list[Any], int]] = [("a", [], t) for t in range(1, 1001)]
    stream += [("b", [1], 1001), ("c", [1], 1002)]
    found = {}
    for strategy in ("strict", "nxt", "last"):
        with Engine.from_string(rules, policy=strategy, explain=True) as engine:
            found[strategy] = [(d.args, d.start, d.end, tuple(p.start for p in d.provenance))
                               for d in engine.emit_many(stream).detections]
            assert engine.stats().pending <= 32, strategy
    assert found == {"strict": [((1,), 1000, 1002, (1000, 1001, 1002))],
                     "nxt": [((1,), 992, 1002, (992, 1001, 1002))],
                     "last": [((1,), 1000, 1002, (1000, 1001, 1002))]}


def test_a_selector_on_a_sequence_compiles_to_one_goal_that_searches_in_its_order(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("h(X, Y) <- (a(X) seq b(Y)) where X < Y.\n")
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "compile", str(rules), "--policy", "last"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    goals = r.stdout.split("% Binary goals\n")[1].split("\n\n")[0]
    assert goals == "1: '$chain0'(_, A, B) <- a(A) seq b(B) where A<B    % window inf, last"
    assert "etalis_chains:newest_chain(last" in r.stdout


def test_pending_shows_what_a_selector_on_a_sequence_remembers() -> None:
    with Engine.from_string("r1 : h(X, Y) <- a(X) seq b(Y) seq c.", policy="last") as engine:
        engine.emit_many([("a", [1], 1), ("b", [2], 2)])
        assert [(p.matched, p.waiting, p.start, p.end) for p in engine.pending("r1")] == [
            ("a(1)", "the rest of the sequence", 1, 1), ("b(2)", "the rest of the sequence", 2, 2)]


def test_a_failing_condition_of_the_whole_makes_the_selector_search_on() -> None:
    rules = "h(X, Y) <- (a(X) seq b(Y) seq c) where X < Y."
    stream = [("a", [1], 1), ("a", [7], 2), ("b", [5], 3), ("b", [3], 4), ("c", [], 5)]
    # last: newest b(3) has no a below 3 but a(1); newest a for b(3) is a(7) (fails), then a(1)
    assert detections(rules, "last", stream) == [("h", (1, 3), 1, 5, ("a", "b", "c"), (1, 4, 5))]
    assert detections(rules, "nxt", stream) == [("h", (1, 5), 1, 5, ("a", "b", "c"), (1, 3, 5))]
    assert detections(rules, "strict", stream) == []
    assert detections(rules, "strict", stream[1:]) == []
    assert detections(rules, "strict", [("a", [1], 1), ("b", [3], 2), ("c", [], 3)]) == [
        ("h", (1, 3), 1, 3, ("a", "b", "c"), (1, 2, 3))]


def test_under_the_contexts_a_failing_condition_takes_and_consumes_nothing() -> None:
    rules = "h(X, Y) <- (a(X) seq b(Y)) where X < Y."
    stream = [("a", [5], 1), ("a", [1], 2), ("b", [3], 3), ("b", [6], 4)]
    # b(3) takes a(1) only: a(5) fails X < Y and waits for b(6)
    for strategy in ("continuous", "stn"):
        assert detections(rules, strategy, stream) == [
            ("h", (1, 3), 2, 3, ("a", "b"), (2, 3)), ("h", (5, 6), 1, 4, ("a", "b"), (1, 4))], strategy
    assert detections(rules, "cumulative", stream) == [
        ("h", ([1], 3), 2, 3, ("a", "b"), (2, 3)), ("h", ([5], 6), 1, 4, ("a", "b"), (1, 4))]
    with Engine.from_string(rules, policy="continuous") as engine:      # the same without provenance
        assert engine.emit_many(stream).detections == [Detection("h", (1, 3), 2, 3), Detection("h", (5, 6), 1, 4)]


def test_under_the_contexts_a_condition_of_the_whole_is_checked_once_its_variables_are_bound() -> None:
    rules = "h(X, Y) <- (a(X) seq b(Y) seq c) where X < Y."
    stream = [("a", [5], 1), ("b", [3], 2), ("b", [6], 3), ("c", [], 4)]
    for strategy in ("continuous", "stn"):
        assert detections(rules, strategy, stream) == [("h", (5, 6), 1, 4, ("a", "b", "c"), (1, 3, 4))], strategy
    assert detections(rules, "cumulative", stream) == [("h", ([[5]], [6]), 1, 4, ("a", "b", "c"), (1, 3, 4))]
    # a condition on the interval is checked on the whole sequence, when it completes: c@3 does not take
    # a(1) b(2) (2 seconds), which waits for c@5; a(1) went with b(2), so b(3) finds none
    timed = "h(X) <- (a(X) seq b(_) seq c) where (duration(D), D >= 3)."
    stream = [("a", [1], 1), ("b", [2], 2), ("c", [], 3), ("b", [3], 4), ("c", [], 5)]
    assert detections(timed, "continuous", stream) == [("h", (1,), 1, 5, ("a", "b", "c"), (1, 2, 5))]
    assert reference("continuous", timed, stream) == [(0, 1, 4)]


# ---------------------------------------------------------------------------
# The reference definitions, on their own
# ---------------------------------------------------------------------------


def reference(strategy: str, rules: str, stream: list[tuple[str, list[Any], int]]) -> list[tuple[int, ...]]:
    events = [Event(n, tuple(a), t, t) for n, a, t in stream]
    (rule,) = RuleSet.from_text(rules).rules
    with PrologGoals(rules) as solver:
        return [m.positions for m in reference_matches(strategy, sequence_of(rule), events, solver)]


@pytest.mark.parametrize(("strategy", "positions"), [
    ("unrestricted", [(0, 2, 4), (0, 3, 4), (1, 2, 4), (1, 3, 4), (0, 2, 7), (0, 3, 7), (0, 6, 7), (1, 2, 7),
                      (1, 3, 7), (1, 6, 7), (5, 6, 7)]),
    ("strict", [(5, 6, 7)]),
    ("nxt", [(0, 2, 4), (0, 2, 7)]),
    ("last", [(1, 3, 4), (5, 6, 7)]),
    ("max", [(0, 2, 4), (0, 3, 4), (1, 2, 4), (1, 3, 4), (0, 2, 7), (0, 3, 7), (0, 6, 7), (1, 2, 7),
             (1, 3, 7), (1, 6, 7), (5, 6, 7)]),
    ("stn", [(0, 2, 4), (1, 2, 4), (5, 6, 7)]),
    ("continuous", [(0, 2, 4), (1, 2, 4), (5, 6, 7)]),
    ("cumulative", [(0, 1, 2, 4), (5, 6, 7)]),
])
def test_reference_definitions_on_the_example(strategy: str, positions: list[tuple[int, ...]]) -> None:
    assert sorted(reference(strategy, RULE, STREAM), key=lambda p: (p[-1], p)) == \
        sorted(positions, key=lambda p: (p[-1], p))


def test_reference_stn_checks_a_condition_of_the_whole_as_soon_as_it_is_bound() -> None:
    # X < Y is bound once b is taken: the run of a(5) skips b(3) and takes b(6)
    rules = "h(X, Y) <- (a(X) seq b(Y) seq c) where X < Y."
    stream = [("a", [5], 1), ("b", [3], 2), ("b", [6], 3), ("c", [], 4)]
    assert reference("stn", rules, stream) == [(0, 2, 3)]
    assert reference("cumulative", rules, stream) == [(0, 2, 3)]
    assert reference("continuous", rules, stream) == [(0, 2, 3)]
    assert reference("nxt", rules, stream) == [(0, 2, 3)]


def test_reference_stn_and_continuous_are_computed_each_from_its_own_definition() -> None:
    events = [Event(n, tuple(a), t, t) for n, a, t in STREAM]
    (rule,) = RuleSet.from_text(RULE).rules
    with PrologGoals(RULE) as solver:
        assert stn_matches(sequence_of(rule), events, solver) == [
            Match("h", (1, 3), 1, 5, (0, 2, 4)), Match("h", (2, 3), 2, 5, (1, 2, 4)),
            Match("h", (5, 6), 6, 8, (5, 6, 7))]
        # continuous finds the same matches in the order of their last event
        assert continuous_matches(sequence_of(rule), events, solver) == stn_matches(sequence_of(rule), events, solver)


def test_engine_matches_reads_positions_from_provenance() -> None:
    events = [Event(n, tuple(a), t, t) for n, a, t in STREAM]
    assert engine_matches(RULE, "last", events) == [
        Match("h", (2, 4), 2, 5, (1, 3, 4)), Match("h", (5, 6), 6, 8, (5, 6, 7))]


# ---------------------------------------------------------------------------
# Properties: the engine against the reference definitions
# ---------------------------------------------------------------------------


@examples(60)
@given(st.data(), st.sampled_from(STRATEGIES))
def test_engine_detects_exactly_the_reference_matches(data: st.DataObject, strategy: str) -> None:
    case = random_chain_case(DataChoices(data), strategy)
    missing, unexpected = check_chain_case(case)
    assert not missing and not unexpected, case.report(missing, unexpected)


# ---------------------------------------------------------------------------
# Kleene+
# ---------------------------------------------------------------------------

PLUS = "h(X) <- (a(X)+ seq b) within 10."
PLUS_STREAM = [("a", [1], 1), ("a", [2], 2), ("a", [3], 3), ("b", [], 4)]


def args_and_times(rules: str, policy: str, stream: list[tuple[str, list[Any], int]]) -> list[tuple[Any, ...]]:
    return [(d[1], d[5]) for d in detections(rules, policy, stream)]


def test_plus_is_one_or_more_in_sequence_its_variable_the_list_of_their_values() -> None:
    assert sorted(args_and_times(PLUS, "unrestricted", PLUS_STREAM)) == [
        (([1],), (1, 4)), (([1, 2],), (1, 2, 4)), (([1, 2, 3],), (1, 2, 3, 4)), (([1, 3],), (1, 3, 4)),
        (([2],), (2, 4)), (([2, 3],), (2, 3, 4)), (([3],), (3, 4))]


def test_selectors_on_plus_max_keeps_the_longest_run_strict_the_adjacent_ones() -> None:
    assert args_and_times(PLUS, "max", PLUS_STREAM) == [(([1, 2, 3],), (1, 2, 3, 4))]
    assert args_and_times(PLUS, "nxt", PLUS_STREAM) == [(([1, 2, 3],), (1, 2, 3, 4))]
    assert args_and_times(PLUS, "last", PLUS_STREAM) == [(([1, 2, 3],), (1, 2, 3, 4))]
    assert sorted(args_and_times(PLUS, "strict", PLUS_STREAM)) == [
        (([1, 2, 3],), (1, 2, 3, 4)), (([2, 3],), (2, 3, 4)), (([3],), (3, 4))]


def test_plus_variable_shared_outside_keeps_its_value_in_every_iteration() -> None:
    rules = "h(K, X) <- (a(K) seq b(X)+ seq c(K)) within 10."
    stream = [("a", [1], 1), ("b", [5], 2), ("b", [6], 3), ("c", [2], 4), ("c", [1], 5)]
    assert sorted(args_and_times(rules, "unrestricted", stream)) == [
        ((1, [5]), (1, 2, 5)), ((1, [5, 6]), (1, 2, 3, 5)), ((1, [6]), (1, 3, 5))]
    rules = "h(K) <- (b(K)+ seq c(K)) within 10."
    stream = [("b", [1], 1), ("b", [2], 2), ("b", [1], 3), ("c", [1], 4)]
    assert sorted(args_and_times(rules, "max", stream)) == [((1,), (1, 3, 4))]


def test_a_condition_over_the_values_of_every_iteration() -> None:
    rules = ("rising([_]).\nrising([A, B|T]) :- A < B, rising([B|T]).\n"
             "run(X, S) <- ((a(X)+ seq b) within 10) where (rising(X), length(X, N), N >= 2, sum_list(X, S)).")
    stream = [("a", [3], 1), ("a", [1], 2), ("a", [4], 3), ("b", [], 4)]
    assert sorted(args_and_times(rules, "unrestricted", stream)) == [
        (([1, 4], 5), (2, 3, 4)), (([3, 4], 7), (1, 3, 4))]
    assert sorted(args_and_times(rules, "max", stream)) == [(([1, 4], 5), (2, 3, 4)), (([3, 4], 7), (1, 3, 4))]
    assert args_and_times(rules, "last", stream) == [(([1, 4], 5), (2, 3, 4))]


def test_plus_under_a_context_is_refused_at_its_rule_and_under_stn_outside_a_sequence() -> None:
    with pytest.raises(RuleError) as err:
        Engine.from_string(":- policy(continuous).\nh(X) <- a(X)+ seq b.", source="r.etl")
    assert (err.value.line, err.value.column, err.value.message, err.value.hint) == (
        2, 1, "P+ (one or more in sequence) is not defined under the policy continuous",
        "use unrestricted, or a selection strategy strict, nxt, last, max or stn")
    with pytest.raises(RuleError) as err:
        Engine.from_string("h(X) <- a(X)+ and b.", policy="stn")
    assert (err.value.message, err.value.hint) == (
        "P+ (one or more in sequence) under stn is implemented in a sequence of events only "
        "(e1 seq ... seq P+ seq ... seq en, with a where and a within around it)",
        "write the rule as such a sequence, or use unrestricted or a selection strategy strict, nxt, last or max")


def test_stn_with_plus_a_run_takes_the_next_element_and_another_iteration_each_the_first_that_fits() -> None:
    # the run from a takes b(1), then c@4 (a match) and b(2) (another iteration), which takes c@4 too,
    # and b(3), which takes c@6: every iteration goes on with the first c after it
    rules = "h(X) <- (a seq b(X)+ seq c) within 10."
    stream = [("a", [], 1), ("b", [1], 2), ("b", [2], 3), ("c", [], 4), ("b", [3], 5), ("c", [], 6)]
    assert sorted(args_and_times(rules, "stn", stream)) == [
        (([1],), (1, 2, 4)), (([1, 2],), (1, 2, 3, 4)), (([1, 2, 3],), (1, 2, 3, 5, 6))]
    # every a starts a run; a trailing + makes every iteration a match
    assert sorted(args_and_times("h(X) <- a(X)+ seq b.", "stn", PLUS_STREAM)) == [
        (([1],), (1, 4)), (([1, 2],), (1, 2, 4)), (([1, 2, 3],), (1, 2, 3, 4)), (([2],), (2, 4)),
        (([2, 3],), (2, 3, 4)), (([3],), (3, 4))]
    assert sorted(args_and_times("h(X) <- c seq a(X)+ .", "stn", [("c", [], 1), ("a", [1], 2), ("a", [2], 3)])) == [
        (([1],), (1, 2)), (([1, 2],), (1, 2, 3))]


def test_under_recent_an_event_terminates_through_its_own_condition_before_it_replaces_the_initiator() -> None:
    # fuzz seed 1 case 1551: b(2) is the terminator of (c seq b(Z)) seq (b(X) where X > 1) and, as b(Z),
    # makes a newer c seq b(Z); it must take the older one first
    rules = "h(X, Z) <- c seq b(Z) seq (b(X) where X > 1) seq c."
    stream = [("a", [2], 2), ("c", [], 4), ("b", [1], 5), ("a", [2], 6), ("b", [2], 8), ("c", [], 9), ("c", [], 10),
              ("b", [1], 11)]
    assert detections(rules, "recent", stream) == [("h", (2, 1), 4, 9, ("c", "b", "b", "c"), (4, 5, 8, 9)),
                                                   ("h", (2, 1), 4, 10, ("c", "b", "b", "c"), (4, 5, 8, 10))]


def test_stn_with_plus_keeps_the_condition_of_the_whole_on_its_variables() -> None:
    # fuzz seed 1 case 1504: the condition lost its variables when the rule was rewritten
    rules = "h(X, Z) <- (b(Z)+ seq a(X) seq a(Z)) where X =:= Z."
    stream = [("a", [2], 2), ("b", [0], 4), ("a", [0], 6), ("b", [2], 8), ("a", [0], 9), ("c", [], 11), ("a", [2], 12)]
    assert detections(rules, "stn", stream) == [("h", (0, 0), 4, 9, ("b", "a", "a"), (4, 6, 9))]


def test_stn_with_plus_skips_what_does_not_fit_an_iteration() -> None:
    # an iteration must join the outer K and pass its own condition: b(1, 0) and b(2, 9) are skipped
    rules = "h(K, V) <- a(K) seq (b(K, V) where V > 2)+ seq c(K)."
    stream = [("a", [1], 1), ("b", [1, 5], 2), ("b", [1, 0], 3), ("b", [2, 9], 4), ("b", [1, 7], 5), ("c", [1], 6)]
    assert sorted(args_and_times(rules, "stn", stream)) == [((1, [5]), (1, 2, 6)), ((1, [5, 7]), (1, 2, 5, 6))]
    events = [Event(n, tuple(a), t, t) for n, a, t in stream]
    with PrologGoals(rules) as solver:
        assert sorted(m.positions for m in reference_matches("stn", chain_of(rules), events, solver)) == [
            (0, 1, 4, 5), (0, 1, 5)]


@pytest.mark.parametrize(("strategy", "positions"), [
    ("unrestricted", [(0, 3), (0, 1, 3), (1, 3), (0, 2, 3), (0, 1, 2, 3), (1, 2, 3), (2, 3)]),
    ("max", [(0, 1, 2, 3)]),
    ("strict", [(0, 1, 2, 3), (1, 2, 3), (2, 3)]),
])
def test_reference_definitions_of_plus(strategy: str, positions: list[tuple[int, ...]]) -> None:
    events = [Event(n, tuple(a), t, t) for n, a, t in PLUS_STREAM]
    with PrologGoals(PLUS) as solver:
        assert sorted(m.positions for m in reference_matches(strategy, chain_of(PLUS), events, solver)) == \
            sorted(positions)


# a `_` in P+ and the `_`s of the rest of the rule are distinct variables
ANONYMOUS_PLUS = "h <- a(_) seq a(_) seq b(_)+ ."
# positions:          0                1                2                3                4
ANONYMOUS_STREAM = [("a", [1], 2), ("a", [0], 4), ("b", [0], 5), ("b", [0], 7), ("c", [], 8),
                    ("b", [1], 10), ("a", [0], 11), ("a", [0], 13), ("b", [1], 14)]


def test_strict_keeps_a_plus_at_the_end_of_adjacent_events_whatever_their_values() -> None:
    assert detections(ANONYMOUS_PLUS, "strict", ANONYMOUS_STREAM) == [
        ("h", (), 2, 5, ("a", "a", "b"), (2, 4, 5)),
        ("h", (), 2, 7, ("a", "a", "b", "b"), (2, 4, 5, 7)),
        ("h", (), 11, 14, ("a", "a", "b"), (11, 13, 14))]


def test_the_reference_reads_the_anonymous_variables_of_plus_apart_from_the_rules() -> None:
    seq = chain_of(ANONYMOUS_PLUS)
    variables = [v for e in seq.elements for v in sorted(term_vars(e.event))]
    assert len(variables) == 3 and len(set(variables)) == 3
    assert [(e.plus, e.own) for e in seq.elements] == [(False, ()), (False, ()), (True, (variables[2],))]
    events = [Event(n, tuple(a), t, t) for n, a, t in ANONYMOUS_STREAM]
    with PrologGoals(ANONYMOUS_PLUS) as solver:
        assert [m.positions for m in reference_matches("strict", seq, events, solver)] == [
            (0, 1, 2), (0, 1, 2, 3), (6, 7, 8)]
        # a(1) a(0) and then b(1), or b(1) after a(0) a(0): no join between them
        assert sorted(m.positions for m in reference_matches("unrestricted", seq, events, solver)) == [
            (0, 1, 2), (0, 1, 2, 3), (0, 1, 2, 3, 5), (0, 1, 2, 3, 5, 8), (0, 1, 2, 3, 8), (0, 1, 2, 5),
            (0, 1, 2, 5, 8), (0, 1, 2, 8), (0, 1, 3), (0, 1, 3, 5), (0, 1, 3, 5, 8), (0, 1, 3, 8), (0, 1, 5),
            (0, 1, 5, 8), (0, 1, 8), (0, 6, 8), (0, 7, 8), (1, 6, 8), (1, 7, 8), (6, 7, 8)]
    for strategy in ("unrestricted", "strict", "max", "nxt", "last", "stn"):
        case = ChainCase(strategy, ANONYMOUS_PLUS, tuple(events))
        assert check_chain_case(case) == (Counter(), Counter()), strategy


def test_an_event_stopped_at_the_inference_limit_leaves_no_match_to_the_next() -> None:
    rules = ":- policy(p, last).\np : h(X) <- a(X) seq b.\nz <- b where loop.\nloop :- loop.\ny <- c."
    with Engine.from_string(rules, inference_limit=100_000) as engine:
        engine.emit_many([("a", [1], 1)])
        with pytest.raises(InferenceLimitError):
            engine.emit_many([("b", [], 2)])
        assert engine.emit_many([("c", [], 3)]).detections == [Detection("y", (), 3, 3)]


def test_check_says_a_consuming_context_keeps_each_pending_goal_until_a_match(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text(":- policy(continuous).\nh(X) <- a(X) seq b.\n")
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "check", str(rules)],
                       capture_output=True, text=True, timeout=60)
    assert r.stdout.splitlines()[0] == (
        f"{rules}:2:1: warning: no window bounds this rule's pending goals: every `a(X)` waits for `b` "
        "(each until a match consumes it; those never matched stay forever) [unbounded-memory]")


# ---------------------------------------------------------------------------
# Correlation: a condition inside P+ that reads a variable bound before it
# ---------------------------------------------------------------------------

# CEL's correlation query [H AS x ; (T AS y FILTER y.id = x.id)+ ; H AS z]
# FILTER (x.value < 30 AND z.value > 60 AND x.id = z.id), on a stream of
# humidity h(Id, Value) and temperature t(Id, Value) readings
CEL_RULE = "m <- (h(X, V) seq ((t(Y, _) where Y =:= X)+) seq h(Z, W)) where (V < 30, W > 60, Z =:= X)."
# positions:     0                1                2                3
CEL_STREAM = [("t", [0, 45], 1), ("h", [0, 65], 2), ("t", [1, 40], 3), ("h", [1, 25], 4),
              ("t", [1, 42], 5), ("t", [0, 50], 6), ("t", [1, 44], 7), ("h", [1, 70], 8)]
#               4                  5                  6                  7


@pytest.mark.parametrize(("strategy", "positions"), [
    ("unrestricted", [(3, 4, 6, 7), (3, 4, 7), (3, 6, 7)]),
    ("nxt", [(3, 4, 6, 7)]),
    ("last", [(3, 4, 6, 7)]),
    ("max", [(3, 4, 6, 7)]),
    ("strict", []),
    ("stn", [(3, 4, 6, 7), (3, 4, 7)]),
])
def test_a_condition_inside_plus_joins_each_iteration_to_an_event_before_it(
        strategy: str, positions: list[tuple[int, ...]]) -> None:
    events = [Event(n, tuple(a), t, t) for n, a, t in CEL_STREAM]
    assert sorted(m.positions for m in engine_matches(CEL_RULE, strategy, events)) == sorted(positions)
    with PrologGoals(CEL_RULE) as solver:
        assert sorted(m.positions for m in reference_matches(strategy, chain_of(CEL_RULE), events, solver)) == \
            sorted(positions)


def test_a_correlated_plus_gives_its_list_to_a_later_condition_and_to_the_head() -> None:
    # from h(1, 25)@4 the iterations t(1, 42)@5 and t(1, 44)@7 make [42], [44] and [42, 44]; only the
    # last sums over 50 (t(1, 40)@3 comes before it, t(0, 50)@6 is another id)
    rules = ("m(X, Vs) <- h(X, _) seq ((t(Y, Vs) where Y =:= X)+) seq (h(Z, W) where (Z =:= X, W > 60, "
             "sum_list(Vs, S), S > 50)).")
    assert sorted(args_and_times(rules, "unrestricted", CEL_STREAM)) == [((1, [42, 44]), (4, 5, 7, 8))]


def test_a_correlated_plus_needs_the_event_it_reads_before_it() -> None:
    for rules, column in (("m <- ((t(Y) where Y > X)+) seq h(X).", 6),
                          ("m <- h(_) seq ((t(Y) where Y > X)+) seq h(X).", 15)):
        with pytest.raises(RuleError) as err:
            Engine.from_string(rules, source="r.etl")
        assert (err.value.line, err.value.column, err.value.message, err.value.hint) == (
            1, column, "a condition inside P+ reads X, which only another event binds, and P+ does not follow that "
            "event in a sequence", "write the event that binds it before the +, as in a(X) seq (b(Y) where Y > X)+")


# ---------------------------------------------------------------------------
# Partition contiguity (SASE's; Flink's next() on a keyed stream)
# ---------------------------------------------------------------------------

HOT3 = ("hot(S) <- (temp(S, A) where A > 30) seq (temp(S, B) where B > 30) seq (temp(S, C) where C > 30).")
# two stations interleaved; the cold reading of s2 at 4 breaks its run
STATIONS = [("temp", ["s1", 31], 1), ("temp", ["s2", 32], 2), ("temp", ["s1", 33], 3), ("temp", ["s2", 20], 4),
            ("temp", ["s1", 34], 5), ("temp", ["s2", 35], 6), ("temp", ["s2", 36], 7), ("temp", ["s2", 37], 8)]


def test_partition_contiguity_is_strict_among_the_events_with_the_rules_key() -> None:
    # strict counts the other station's readings too: s1's run, interleaved with s2's, is not found
    assert [(d[1], d[5]) for d in detections(HOT3, "strict", STATIONS)] == [(("s2",), (6, 7, 8))]
    assert [(d[1], d[5]) for d in detections(HOT3, "strict(partition)", STATIONS)] == [
        (("s1",), (1, 3, 5)), (("s2",), (6, 7, 8))]
    assert sorted((d[1], d[5]) for d in detections(HOT3, "unrestricted", STATIONS)) == [
        (("s1",), (1, 3, 5)), (("s2",), (2, 6, 7)), (("s2",), (2, 6, 8)), (("s2",), (2, 7, 8)),
        (("s2",), (6, 7, 8))]
    events = [Event(n, tuple(a), t, t) for n, a, t in STATIONS]
    with PrologGoals(HOT3) as solver:
        assert [m.positions for m in reference_matches("strict(partition)", chain_of(HOT3), events, solver)] == [
            (0, 2, 4), (5, 6, 7)]


def test_partition_contiguity_with_plus_and_a_skip_strategy() -> None:
    rules = "h(X) <- b(X)+ seq c(X)."
    stream = [("b", [1], 1), ("b", [2], 2), ("b", [1], 3), ("c", [2], 4), ("c", [1], 5)]
    assert sorted(args_and_times(rules, "strict(partition)", stream)) == [
        ((1,), (1, 3, 5)), ((1,), (3, 5)), ((2,), (2, 4))]
    assert args_and_times(":- skip(skip_past_last_event).\n" + rules, "strict(partition)", stream) == [
        ((2,), (2, 4)), ((1,), (1, 3, 5))]
    # a rule without a key (c has no argument): its partition is every event of its types
    assert args_and_times("h <- a(_) seq c.", "strict(partition)", [("a", [1], 1), ("b", [1], 2), ("c", [], 3),
                                                                  ("a", [2], 4), ("a", [3], 5), ("c", [], 6)]) == [
        ((), (1, 3)), ((), (5, 6))]


def test_the_rules_as_read_name_anonymous_variables_apart_from_a_users_named_like_them() -> None:
    """The reader's JSON of a rule names each `_` _G0, _G1, ...; a
    variable the user called _G0 keeps its name and the `_` gets the next
    free one, so no join appears that the rule does not write."""
    [rule] = RuleSet.from_text("h(_G0) <- a(_G0) seq b(_).\n").rules
    seq = rule.pattern
    assert isinstance(seq, Binary) and isinstance(seq.left, EventP) and isinstance(seq.right, EventP)
    assert (term_vars(rule.head), term_vars(seq.left.event), term_vars(seq.right.event)) == (
        {"_G0"}, {"_G0"}, {"_G1"})
    with Engine.from_string("h(_G0) <- a(_G0) seq b(_).\n") as engine:
        assert [(d.event, d.args, d.start, d.end) for d in engine.emit_many(
            [("a", (1,), 1), ("b", (2,), 2)]).detections] == [("h", (1,), 1, 2)]
