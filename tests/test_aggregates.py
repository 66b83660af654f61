"""Iteration and sliding-window aggregates."""

from __future__ import annotations

import pytest

from conftest import detect

from etalis_py import Engine, RuleError


def test_iteration_is_n_occurrences_in_sequence_sharing_named_variables() -> None:
    events = [("t", ("a", 1), 1), ("t", ("b", 9), 2), ("t", ("a", 2), 3), ("t", ("a", 3), 4)]
    assert detect("h(S) <- iteration(t(S, _), 3).", events) == [("h", ("a",), 1, 4)]


def test_iteration_under_recent_uses_the_newest_occurrences() -> None:
    events = [("t", (), i) for i in range(1, 6)]
    assert detect("h <- iteration(t, 3).", events, policy="recent") == [
        ("h", (), 1, 3), ("h", (), 2, 4), ("h", (), 3, 5)]


TEMP_RULES = """
:- policy(recent).
:- policy(first, chronological).
:- print_events([temp_increase/1, temp_alarm/1]).
first : temp_increase(T) <- monitoring seq temp(T).
next_temp(T1, T2) <- temp_increase(T1) seq temp(T2).
temp_increase(T2) <- next_temp(T1, T2) where T2 > T1.
temp_alarm(T) <- temp_increase(T) where T > 100.
"""


def test_the_papers_temp_increase_carries_the_maximum_and_temp_alarm_fires_over_100() -> None:
    # ETALIS paper, "Iterative and Aggregation Patterns": an increase at every
    # new maximum (the newest increase is the maximum so far), an alarm when
    # it is over 100 F; the first reading after monitoring starts the chain.
    # The reading is paired with the newest increase first, then filtered: a
    # where directly on the seq would be part of recent's choice (the newest
    # increase the reading exceeds, not the newest one)
    temps = [70, 75, 72, 80, 99, 101, 100, 103]
    events = [("monitoring", (), 0)] + [("temp", (v,), t) for t, v in enumerate(temps, start=1)]
    assert detect(TEMP_RULES, events) == [
        ("temp_increase", (70,), 0, 1), ("temp_increase", (75,), 0, 2), ("temp_increase", (80,), 0, 4),
        ("temp_increase", (99,), 0, 5), ("temp_increase", (101,), 0, 6), ("temp_alarm", (101,), 0, 6),
        ("temp_increase", (103,), 0, 8), ("temp_alarm", (103,), 0, 8)]


def test_with_the_where_on_the_seq_recent_takes_the_newest_increase_the_reading_exceeds() -> None:
    rules = TEMP_RULES.replace("next_temp(T1, T2) <- temp_increase(T1) seq temp(T2).\n", "").replace(
        "next_temp(T1, T2) where", "(temp_increase(T1) seq temp(T2)) where")
    events = [("monitoring", (), 0)] + [("temp", (v,), t) for t, v in enumerate([70, 75, 72], start=1)]
    assert detect(rules, events) == [
        ("temp_increase", (70,), 0, 1), ("temp_increase", (75,), 0, 2), ("temp_increase", (72,), 0, 3)]


COUNTER = "s(1) <- r(V) where V > 0.\ns(C1) <- (s(C) seq r(V)) where (V > 0, C1 is C + 1).\n"


@pytest.mark.parametrize("policy,expected", [
    # a new start replaces the count under recent (the last to arrive)...
    ("recent", [("s", (1,), 1, 1), ("s", (2,), 1, 2), ("s", (1,), 2, 2), ("s", (2,), 2, 3), ("s", (1,), 3, 3)]),
    # ...and the count goes on under recent(longer): it started earlier
    ("recent(longer)", [("s", (1,), 1, 1), ("s", (2,), 1, 2), ("s", (1,), 2, 2), ("s", (3,), 1, 3), ("s", (1,), 3, 3)]),
    ("chronological", [("s", (1,), 1, 1), ("s", (2,), 1, 2), ("s", (1,), 2, 2), ("s", (3,), 1, 3), ("s", (1,), 3, 3)]),
])
def test_a_counter_carried_by_recursion_sees_the_count_before_the_event_that_restarts_it(
        policy: str, expected: list[tuple[object, ...]]) -> None:
    # r@2 first continues the count pending since r@1, then starts a new one
    assert detect(COUNTER, [("r", (1,), t) for t in (1, 2, 3)], policy=policy) == expected


def test_a_counting_rule_written_before_a_start_that_the_same_event_completes_counts() -> None:
    # docs/language.md: derived events are processed depth first, so under
    # recent the counting rule comes first and its goals run first
    rules = "s(C1) <- (s(C) seq r(V)) where C1 is C + 1.\ns(1) <- go seq r(V).\n"
    events = [("go", (), 0)] + [("r", (1,), t) for t in (1, 2, 3)]
    assert detect(rules, events, policy="recent(longer)") == [
        ("s", (1,), 0, 1), ("s", (2,), 0, 2), ("s", (1,), 0, 2), ("s", (3,), 0, 3), ("s", (1,), 0, 3)]


def test_count_window_average_from_the_nth_occurrence_per_group() -> None:
    rules = "avg_temp(S, A) <- aggregate(avg(T), temp(S, T), count(3), A)."
    events = [("temp", ("a", v), t) for t, v in enumerate([1, 2, 3, 4, 10], start=1)] + [("temp", ("b", 5), 6)]
    assert detect(rules, events) == [
        ("avg_temp", ("a", 2), 1, 3),
        ("avg_temp", ("a", 3), 2, 4),
        ("avg_temp", ("a", 17 / 3), 3, 5),
    ]


def test_count_window_of_five_detects_on_every_fifth_and_later_occurrence() -> None:
    rules = "total(S) <- aggregate(sum(V), x(V), count(5), S)."
    events = [("x", (v,), t) for t, v in enumerate(range(1, 8), start=1)]
    assert detect(rules, events) == [("total", (15,), 1, 5), ("total", (20,), 2, 6), ("total", (25,), 3, 7)]


def test_a_sum_is_an_integer_again_once_the_floats_have_left_its_window() -> None:
    rules = "s(S) <- aggregate(sum(V), a(V), count(2), S)."
    values = [1, 2.5, 3, 4, 0.1, 0.2, 5]
    found = detect(rules, [("a", (v,), t) for t, v in enumerate(values, start=1)])
    # repr tells 7 from 7.0; 0.1 + 0.2 is a float sum, and 0.2 + 5 leaves no
    # rounding error of 0.1 behind
    assert [(repr(args[0]), start, end) for _, args, start, end in found] == [
        ("3.5", 1, 2), ("5.5", 2, 3), ("7", 3, 4), ("4.1", 4, 5), ("0.30000000000000004", 5, 6),
        ("5.2", 6, 7)]


def test_time_window_maximum_and_minimum_follow_what_leaves() -> None:
    values = [5, 1, 2, 3, 0]
    events = [("t", ("a", v), t) for t, v in enumerate(values, start=1)]
    assert detect("hi(S, M) <- aggregate(max(T), t(S, T), time(2), M).", events) == [
        ("hi", ("a", 5), 1, 1), ("hi", ("a", 5), 1, 2), ("hi", ("a", 5), 1, 3),
        ("hi", ("a", 3), 2, 4), ("hi", ("a", 3), 3, 5)]
    assert detect("lo(S, M) <- aggregate(min(T), t(S, T), time(seconds(2)), M).", events) == [
        ("lo", ("a", 5), 1, 1), ("lo", ("a", 1), 1, 2), ("lo", ("a", 1), 1, 3),
        ("lo", ("a", 1), 2, 4), ("lo", ("a", 0), 3, 5)]


def test_count_over_a_complex_pattern_and_a_where_on_the_result() -> None:
    rules = "busy(K, N) <- aggregate(count, (req(K) seq resp(K)), time(10), N) where N >= 2."
    events = [("req", ("k",), 1), ("resp", ("k",), 2), ("req", ("k",), 3), ("resp", ("k",), 4)]
    # (req seq resp) occurs over [1,2], [1,4] and [3,4]
    assert detect(rules, events) == [("busy", ("k", 2), 1, 4), ("busy", ("k", 3), 1, 4)]


def test_a_non_numeric_value_is_a_warning_and_is_left_out() -> None:
    with Engine.from_string("s(A) <- aggregate(sum(T), t(T), count(2), A).") as engine:
        result = engine.emit_many([("t", ["x"], 1), ("t", [2], 2), ("t", [3], 3)])
        assert [(d.args, d.start, d.end) for d in result.detections] == [((5,), 2, 3)]
        assert [w.line for w in result.warnings] == [1]
        assert result.warnings[0].reason.startswith("aggregate sum(x) raised: Type error")


@pytest.mark.parametrize(
    "rules,message",
    [
        ("h <- iteration(t, 0).", "iteration needs a count of 1 or more, not 0"),
        ("h(A) <- aggregate(median(T), t(T), count(2), A).", "unknown aggregate median(T)"),
        ("h(A) <- aggregate(sum(T), t(T), last(2), A).", "last(2) is not an aggregate window"),
        ("h <- aggregate(sum(T), t(T), count(2), 7).", "the result of an aggregate must be a variable"),
    ],
)
def test_bad_iterations_and_aggregates_are_positioned_errors(rules: str, message: str) -> None:
    with pytest.raises(RuleError) as info:
        Engine.from_string(rules, source="r.etl")
    assert info.value.message.startswith(message)
    assert (info.value.file, info.value.line) == ("r.etl", 1)
