"""Documented examples of other CEP engines, translated into rules.

Each case takes an example that another engine's documentation gives with
its input stream and its output, translates the pattern and the stream,
and asserts the documented output under the etalis-py policy or strategy
whose definition (docs/language.md, "Selection strategies";
docs/strategies.md) is that engine's semantics for the example:

- skip-till-any-match (Flink's followedByAny and allowCombinations,
  Esper's `every A -> every B`, Apama's all combinations) is `unrestricted`;
- skip-till-next-match (Flink's followedBy and a looping pattern's
  default, Esper's `every A -> B`, Apama's `all A -> B`, Siddhi's
  `every e1 -> e2`) is `stn`: each start takes the first later event
  that fits;
- strict contiguity (Flink's next, Siddhi's sequences `e1, e2`) is
  `strict`;
- Siddhi's greedy counting `<1:>` between two fixed events is `max`.

The examples are paraphrased; each names its source.  Where an example
cannot be expressed, docs/language.md ("Coming from other engines") says
why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from etalis_py import Engine

Row = tuple[Any, ...]


def detect(rules: str, stream: Sequence[Row], policy: str, flush: bool = False) -> list[Row]:
    with Engine.from_string(rules, policy=policy) as engine:
        result = engine.emit_many(stream)
        assert result.rejected == [] and result.warnings == []
        found = list(result.detections) + (list(engine.flush()) if flush else [])
        return sorted((d.event, d.args, d.start, d.end) for d in found)


def letters(spec: str) -> list[Row]:
    """'C1 A1 B1' -> c(1) at 1, a(1) at 2, b(1) at 3: an event per item,
    its letter the event, its number the argument, at its position."""
    return [(item[0].lower(), (int(item[1:]),) if item[1:] else (), t)
            for t, item in enumerate(spec.split(), start=1)]


# -- Flink CEP ----------------------------------------------------------------
# https://nightlies.apache.org/flink/flink-docs-stable/docs/libs/cep/
# (apache/flink, docs/content/docs/libs/cep.md, "Combining Patterns",
# "Contiguity within looping patterns", "allowCombinations()",
# "After Match Skip Strategy")

FLINK_AB = letters("A C B1 B2")


@pytest.mark.parametrize("policy, expected", [
    ("strict", []),                                   # next(): the c after a discards it
    ("stn", [("m", (1,), 1, 3)]),                     # followedBy(): the first b only
    ("unrestricted", [("m", (1,), 1, 3), ("m", (2,), 1, 4)]),   # followedByAny()
])
def test_flink_contiguity_between_two_patterns(policy: str, expected: list[Row]) -> None:
    assert detect("m(B) <- a seq b(B).", FLINK_AB, policy) == expected


def test_flink_non_deterministic_relaxed_loop_gives_every_subsequence() -> None:
    # "a b+ c" with followedByAny and allowCombinations over
    # a b1 d1 b2 d2 b3 c: the seven non-empty subsets of the b's
    stream = letters("A B1 D1 B2 D2 B3 C")
    assert detect("m(B) <- a seq b(B)+ seq c.", stream, "unrestricted") == sorted(
        ("m", (bs,), 1, 7) for bs in ([1], [1, 2], [1, 3], [1, 2, 3], [2], [2, 3], [3]))


FLINK_CAB = letters("C D A1 A2 A3 D A4 B")


def test_flink_relaxed_loop_takes_each_next_a_in_turn() -> None:
    # c followedBy a+ followedBy b, without allowCombinations:
    # {C A1 B}, {C A1 A2 B}, {C A1 A2 A3 B}, {C A1 A2 A3 A4 B}
    assert detect("m(A) <- c seq a(A)+ seq b.", FLINK_CAB, "stn") == [
        ("m", ([1],), 1, 8), ("m", ([1, 2],), 1, 8), ("m", ([1, 2, 3],), 1, 8), ("m", ([1, 2, 3, 4],), 1, 8)]


def test_flink_loop_with_combinations_takes_every_subset() -> None:
    # with allowCombinations(): the 15 non-empty subsets of A1..A4
    got = detect("m(A) <- c seq a(A)+ seq b.", FLINK_CAB, "unrestricted")
    assert len(got) == 15 and {row[1][0][0] for row in got} == {1, 2, 3, 4}
    assert ("m", ([1, 3],), 1, 8) in got and ("m", ([2, 3, 4],), 1, 8) in got


def test_flink_trailing_loop_with_no_skip_gives_each_prefix() -> None:
    # "a b+" over a b1 b2 b3, NO_SKIP: {a b1}, {a b1 b2}, {a b1 b2 b3}
    assert detect("m(B) <- a seq b(B)+ .", letters("A B1 B2 B3"), "stn") == [
        ("m", ([1],), 1, 2), ("m", ([1, 2],), 1, 3), ("m", ([1, 2, 3],), 1, 4)]


# -- Apama EPL ------------------------------------------------------------------
# https://documentation.softwareag.com/apama/v10-15/apama10-15/webhelp/pam-webhelp/re-ApaEplRef_the_all_operator.html
# and its "Temporal contexts" page: over C1 A1 F1 A2 C2 B1 D1 E1 B2 A3 G1 B3

APAMA = letters("C1 A1 F1 A2 C2 B1 D1 E1 B2 A3 G1 B3")
AB = "m(A, B) <- a(A) seq b(B)."


def test_apama_every_combination_of_an_a_then_a_b() -> None:
    # "in theory" A -> B holds for seven combinations
    assert [row[1] for row in detect(AB, APAMA, "unrestricted")] == sorted(
        [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3), (3, 3)])


@pytest.mark.parametrize("policy", ["stn", "continuous"])
def test_apama_all_a_followed_by_the_first_b(policy: str) -> None:
    # all A -> B: every A and the first B after it: {A1,B1} {A2,B1} {A3,B3}
    assert [row[1] for row in detect(AB, APAMA, policy)] == [(1, 1), (2, 1), (3, 3)]


# -- Esper ----------------------------------------------------------------------
# http://esper.espertech.com/release-7.0.0/esper-reference/html/event_patterns.html
# section 7.5.1 "Every": over A1 B1 C1 B2 A2 D1 A3 B3 E1 A4 F1 B4

ESPER = letters("A1 B1 C1 B2 A2 D1 A3 B3 E1 A4 F1 B4")


def test_esper_every_a_followed_by_b() -> None:
    # every A -> B: {A1,B1} {A2,B3} {A3,B3} {A4,B4}
    assert [row[1] for row in detect(AB, ESPER, "stn")] == [(1, 1), (2, 3), (3, 3), (4, 4)]


def test_esper_every_a_followed_by_every_b() -> None:
    # every A -> every B: the nine pairs of an A and a later B
    assert [row[1] for row in detect(AB, ESPER, "unrestricted")] == [
        (1, 1), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 3), (3, 4), (4, 4)]


# -- Siddhi -----------------------------------------------------------------------
# The pattern and sequence examples of Siddhi's documentation
# (https://siddhi.io/en/v5.1/docs/query-guide/#pattern, "Patterns and
# Trends"), as republished in Macrometacorp/docs,
# docs/cep/reference/patterns-n-trends.md


def test_siddhi_simple_pattern_temperature_rise_within_10_minutes() -> None:
    # every(e1=Temp) -> e2=Temp[e1.roomNo == roomNo and e1.temp + 5 <= temp] within 10 min
    rules = "alert(R, T1, T2) <- (temp(R, T1) seq temp(R, T2)) within minutes(10) where T1 + 5 =< T2."
    stream = [("temp", (2, 35.0), 0), ("temp", (2, 37.0), 60), ("temp", (2, 40.0), 120)]
    assert detect(rules, stream, "stn") == [("alert", (2, 35.0, 40.0), 0, 120)]


def test_siddhi_counting_pattern_between_two_regulator_events() -> None:
    # every e1=Regulator -> e2=Temp[e1.roomNo == roomNo]<1:> -> e3=Regulator[e1.roomNo == roomNo],
    # select e2[0].temp - e2[last].temp: the count takes every temperature between
    rules = ("diff(R, D) <- regulator(_, R, _, _) seq temp(_, R, T)+ seq regulator(_, R, _, _) "
             "where (T = [F|_], last(T, L), D is F - L).")
    stream = [("regulator", (21, 2, 25.0, "true"), 1), ("temp", (21, 2, 29.0), 2), ("temp", (21, 2, 26.0), 3),
              ("regulator", (21, 2, 30.0, "true"), 4)]
    assert detect(rules, stream, "max") == [("diff", (2, 3.0), 1, 4)]


def test_siddhi_logical_pattern_key_removed_before_the_regulator_is_off() -> None:
    # every e1=RegulatorState[action == 'on'] -> e2=RoomKey[removed] or e3=RegulatorState[off],
    # reporting 'stop' when the key was removed (e2 not null)
    rules = ("action(R, stop) <- reg_state(_, R, _, on) seq room_key(_, R, removed).\n"
             "action(R, none) <- reg_state(_, R, _, on) seq reg_state(_, R, _, off).\n")
    stream = [("reg_state", (10, 5, 30.0, "on"), 1), ("room_key", (10, 5, "removed"), 2)]
    assert detect(rules, stream, "stn") == [("action", (5, "stop"), 1, 2)]


def test_siddhi_non_occurrence_no_cool_down_30_seconds_after_the_regulator_starts() -> None:
    # e1=RegulatorState[action == 'on'] -> not Temp[e1.roomNo == roomNo and temp <= e1.tempSet] for 30 sec:
    # an alert 30 seconds after the regulator starts (a timer, then the absence over its interval)
    rules = (":- print_events([alert/1]).\n"
             "exceptionAlarm(due(R, Set), 30) <- reg_state(_, R, Set, on).\n"
             "alert(R) <- due(R, Set) fnot (temp(R, T) where T =< Set).\n")
    assert detect(rules, [("reg_state", (10, 5, 30.0, "on"), 0)], "unrestricted", flush=True) == [
        ("alert", (5,), 0, 30)]
    # a cool reading within the 30 seconds blocks it, a warm one does not
    assert detect(rules, [("reg_state", (10, 5, 30.0, "on"), 0), ("temp", (5, 29.0), 10)], "unrestricted",
                  flush=True) == []
    assert detect(rules, [("reg_state", (10, 5, 30.0, "on"), 0), ("temp", (5, 31.0), 10)], "unrestricted",
                  flush=True) == [("alert", (5,), 0, 30)]


def test_siddhi_simple_sequence_peak_price() -> None:
    # every e1=Stock, e2=Stock[e1.price < price], e3=Stock[e2.price > price] within 10 min
    rules = ("peak(S, P2) <- (stock(S, P1, _) seq stock(S, P2, _) seq stock(S, P3, _)) within minutes(10) "
             "where (P1 < P2, P2 > P3).")
    stream = [("stock", ("mint-leaves", 35, 20), 0), ("stock", ("mint-leaves", 40, 15), 60),
              ("stock", ("mint-leaves", 38, 20), 120)]
    assert detect(rules, stream, "strict") == [("peak", ("mint-leaves", 40), 0, 120)]


def test_siddhi_logical_sequence_both_sensors_in_either_order() -> None:
    # every e1=Regulator[isOn == true], e2=TempSensor and e3=HumidSensor
    rules = "notify(D, T, H) <- regulator(D, true) seq (temp_sensor(_, T) and humid_sensor(_, H))."
    stream = [("regulator", (2134, "true"), 1), ("humid_sensor", (124, "true"), 2),
              ("temp_sensor", (242, "false"), 3)]
    assert detect(rules, stream, "strict") == [("notify", (2134, "false", "true"), 1, 3)]
