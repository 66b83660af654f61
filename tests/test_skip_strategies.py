"""Skip strategies (docs/language.md, "Skip strategies"): what a rule's
match skips after it, Flink's ``AfterMatchSkipStrategy``.

Examples with exact detections (each with the times of its events), the
examples of Flink's CEP documentation for each strategy (``b+ c`` on b1
b2 b3 c, ``(a | b | c) (b | c) c+ d`` on a b c1 c2 c3 d, ``a b+`` on a b1
b2 b3) as rule files of this language, and the
reference definition (reference.selection.skipped) on the same streams.
"""

from __future__ import annotations

from typing import Any

import pytest

from etalis_py import Engine, RuleError
from etalis_py.events import Event, Time
from reference.evaluate import PrologGoals
from reference.selection import chain_of, engine_matches, reference_matches


def times(rules: str, policy: str, stream: list[tuple[str, list[Any], int]]) -> list[tuple[Time, ...]]:
    """The detections of ``rules``, each as the times of its events, in order."""
    with Engine.from_string(rules, policy=policy, explain=True) as engine:
        found = engine.emit_many(stream)
    assert found.rejected == [] and found.warnings == []
    return [tuple(p.start for p in d.provenance) for d in found.detections]


def reference_times(rules: str, policy: str, stream: list[tuple[str, list[Any], int]],
                    skip: str) -> list[tuple[int, ...]]:
    events = [Event(n, tuple(a), t, t) for n, a, t in stream]
    with PrologGoals(rules) as solver:
        found = reference_matches(policy, chain_of(rules), events, solver, skip)
    return [tuple(stream[p][2] for p in m.positions) for m in found]


# three hot readings within 6 at one station; six of them, at 1 .. 6
HOT = ("hot(S) <- ((temp(S, A) where A > 30) seq (temp(S, B) where B > 30) seq (temp(S, C) where C > 30))"
       " within 6.")
SIX = [("temp", ["s1", 31], t) for t in range(1, 7)]


@pytest.mark.parametrize("policy", ["unrestricted", "strict", "nxt", "last", "max", "stn", "continuous"])
def test_skip_past_last_event_gives_one_detection_per_episode(policy: str) -> None:
    rules = ":- skip(skip_past_last_event).\n" + HOT
    assert times(rules, policy, SIX) == [(1, 2, 3), (4, 5, 6)]
    assert reference_times(rules, policy, SIX, "skip_past_last_event") == [(1, 2, 3), (4, 5, 6)]


def test_skip_to_next_starts_no_other_match_at_the_first_event_of_one() -> None:
    rules = ":- skip(skip_to_next).\n" + HOT
    assert times(rules, "unrestricted", SIX) == [(1, 2, 3), (2, 3, 4), (3, 4, 5), (4, 5, 6)]
    assert reference_times(rules, "unrestricted", SIX, "skip_to_next") == [
        (1, 2, 3), (2, 3, 4), (3, 4, 5), (4, 5, 6)]
    # under nxt the match at 4 would take the readings at 1 and 2 again: it is discarded, and nxt
    # selects among the others, those that start at 2
    assert times(rules, "nxt", SIX) == [(1, 2, 3), (2, 3, 4), (3, 4, 5), (4, 5, 6)]


def test_no_skip_is_the_default() -> None:
    assert len(times(HOT, "unrestricted", SIX)) == 20
    assert times(":- skip(no_skip).\n" + HOT, "strict", SIX) == [(1, 2, 3), (2, 3, 4), (3, 4, 5), (4, 5, 6)]


# Flink's CEP documentation, "After Match Skip Strategy": the pattern b+ c on the stream b1 b2 b3 c
# (its looping b+ takes consecutive b's: strict here)
B_PLUS_C = "m <- b(_)+ seq c."
B1_B2_B3_C = [("b", [1], 1), ("b", [2], 2), ("b", [3], 3), ("c", [], 4)]


@pytest.mark.parametrize(("skip", "expected"), [
    ("no_skip", [(1, 2, 3, 4), (2, 3, 4), (3, 4)]),
    ("skip_to_next", [(1, 2, 3, 4), (2, 3, 4), (3, 4)]),
    ("skip_past_last_event", [(1, 2, 3, 4)]),
])
def test_flink_b_plus_c(skip: str, expected: list[tuple[int, ...]]) -> None:
    rules = f":- skip({skip}).\n{B_PLUS_C}"
    assert sorted(times(rules, "strict", B1_B2_B3_C)) == sorted(expected)
    assert sorted(reference_times(rules, "strict", B1_B2_B3_C, skip)) == sorted(expected)


# and the pattern a b+ on the stream a b1 b2 b3 (every iteration of a trailing + is a match)
A_B_PLUS = "m <- a seq b(_)+ ."
A_B1_B2_B3 = [("a", [], 1), ("b", [1], 2), ("b", [2], 3), ("b", [3], 4)]


@pytest.mark.parametrize("policy", ["strict", "stn"])
@pytest.mark.parametrize(("skip", "expected"), [
    ("no_skip", [(1, 2), (1, 2, 3), (1, 2, 3, 4)]),
    ("skip_to_next", [(1, 2)]),
    ("skip_past_last_event", [(1, 2)]),
])
def test_flink_a_b_plus(policy: str, skip: str, expected: list[tuple[int, ...]]) -> None:
    rules = f":- skip({skip}).\n{A_B_PLUS}"
    assert times(rules, policy, A_B1_B2_B3) == expected
    assert reference_times(rules, policy, A_B1_B2_B3, skip) == expected


# and the pattern (a | b | c) (b | c) c+.greedy d on the stream a b c1 c2 c3 d, each event e(Kind) with the
# kinds a, b, c, d as 1, 2, 3, 4 (Flink's documentation gives NO_SKIP, and SKIP_TO_FIRST, which is not offered
# here; SKIP_TO_NEXT and SKIP_PAST_LAST_EVENT follow from its definitions)
ABC_BC_C_PLUS_D = ("m <- (e(K1) where K1 < 4) seq (e(K2) where (K2 > 1, K2 < 4)) seq ((e(K3) where K3 =:= 3)+) "
                   "seq (e(K4) where K4 =:= 4).")
A_B_C1_C2_C3_D = [("e", [1], 1), ("e", [2], 2), ("e", [3], 3), ("e", [3], 4), ("e", [3], 5), ("e", [4], 6)]


@pytest.mark.parametrize(("skip", "expected"), [
    ("no_skip", [(1, 2, 3, 4, 5, 6), (2, 3, 4, 5, 6), (3, 4, 5, 6)]),
    ("skip_to_next", [(1, 2, 3, 4, 5, 6), (2, 3, 4, 5, 6), (3, 4, 5, 6)]),
    ("skip_past_last_event", [(1, 2, 3, 4, 5, 6)]),
])
def test_flink_abc_bc_c_plus_d(skip: str, expected: list[tuple[int, ...]]) -> None:
    rules = f":- skip({skip}).\n{ABC_BC_C_PLUS_D}"
    assert times(rules, "strict", A_B_C1_C2_C3_D) == expected
    assert reference_times(rules, "strict", A_B_C1_C2_C3_D, skip) == expected


def test_a_labelled_rule_has_its_own_skip_strategy() -> None:
    rules = (":- skip(episode, skip_past_last_event).\n"
             "episode : hot3(S) <- temp(S, _) seq temp(S, _) seq temp(S, _).\n"
             "pair(S) <- temp(S, _) seq temp(S, _).\n")
    stream = [("temp", ["s1", 31], t) for t in range(1, 5)]
    with Engine.from_string(rules, explain=True) as engine:
        found = engine.emit_many(stream)
    got = [(d.event, tuple(p.start for p in d.provenance)) for d in found.detections]
    assert [g for g in got if g[0] == "hot3"] == [("hot3", (1, 2, 3))]
    assert sorted(g[1] for g in got if g[0] == "pair") == [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]


def test_a_skip_strategy_with_the_correlated_plus_of_cel() -> None:
    # one reading of humidity under 30, then readings of temperature of its id, then one over 60
    rules = (":- skip(skip_past_last_event).\n"
             "m <- (h(X, V) seq ((t(Y, _) where Y =:= X)+) seq h(Z, W)) where (V < 30, W > 60, Z =:= X).")
    stream = [("h", [1, 25], 1), ("t", [1, 42], 2), ("t", [1, 44], 3), ("h", [1, 70], 4), ("t", [1, 40], 5),
              ("h", [1, 20], 6), ("t", [1, 41], 7), ("h", [1, 61], 8), ("h", [1, 62], 9)]
    assert times(rules, "unrestricted", stream) == [(1, 2, 3, 4), (6, 7, 8)]
    events = [Event(n, tuple(a), t, t) for n, a, t in stream]
    assert [m.positions for m in engine_matches(rules, "unrestricted", events)] == [(0, 1, 2, 3), (5, 6, 7)]


def test_a_skip_strategy_is_refused_where_the_policy_chooses_initiators() -> None:
    for policy in ("recent", "chronological", "cumulative"):
        with pytest.raises(RuleError) as err:
            Engine.from_string(":- skip(skip_to_next).\nh <- a seq b.", policy=policy, source="r.etl")
        assert (err.value.line, err.value.column, err.value.message, err.value.hint) == (
            2, 1, f"the skip strategy skip_to_next is not defined under the policy {policy}: it chooses the "
            "initiator of each match (or combines them), so discarding partial matches would change which match "
            "it makes", "use unrestricted, a selector (strict, nxt, last, max), stn or continuous, or no_skip")


def test_an_unknown_skip_strategy_or_label_is_refused_at_its_directive() -> None:
    with pytest.raises(RuleError) as err:
        Engine.from_string("h <- a seq b.\n:- skip(skip_to_first).", source="r.etl")
    assert (err.value.line, err.value.message, err.value.hint) == (
        2, "unknown skip strategy skip_to_first",
        "write :- skip(S). or :- skip(Label, S). with S no_skip, skip_to_next or skip_past_last_event")
    with pytest.raises(RuleError) as err:
        Engine.from_string("h <- a seq b.\n:- skip(nothing, skip_to_next).", source="r.etl")
    assert (err.value.line, err.value.message, err.value.hint) == (
        2, "no rule is labelled nothing", "label the rule: Label : Head <- Pattern.")


def test_a_skip_strategy_keeps_apart_the_matches_of_each_key() -> None:
    # the variables every event of the rule has (the station) are its key, as a keyed stream's in Flink:
    # an episode at s1 discards nothing of s2's
    rules = ":- skip(skip_past_last_event).\n" + HOT
    stream = [("temp", ["s1", 31], 1), ("temp", ["s2", 31], 2), ("temp", ["s1", 32], 3), ("temp", ["s2", 32], 4),
              ("temp", ["s1", 33], 5), ("temp", ["s2", 33], 6), ("temp", ["s1", 34], 7)]
    assert times(rules, "unrestricted", stream) == [(1, 3, 5), (2, 4, 6)]
    assert reference_times(rules, "unrestricted", stream, "skip_past_last_event") == [(1, 3, 5), (2, 4, 6)]


def test_a_skip_strategy_under_stn_with_a_correlated_plus_and_an_event_after_it() -> None:
    # the runs of the + (each reading within 1 of the first) and the rule (a reading after them) take the
    # same later events: each takes them for itself, so the matches offered to the skip strategy are stn's
    rule = "c(S, T0, T1) <- (obs(S, T0) seq ((obs(S, T) where T >= T0 - 1)+) seq obs(S, T1)) where T1 =< 87."
    stream = [("obs", [1, 90], 1), ("obs", [1, 90], 2), ("obs", [1, 89], 3), ("obs", [1, 88], 4), ("obs", [1, 87], 5)]
    assert sorted(times(rule, "stn", stream)) == [(1, 2, 3, 5), (1, 2, 5), (2, 3, 5), (3, 4, 5)]
    for skip, expected in (("skip_to_next", [(1, 2, 3, 5), (2, 3, 5), (3, 4, 5)]),
                           ("skip_past_last_event", [(1, 2, 3, 5)])):
        rules = f":- skip({skip}).\n{rule}"
        assert times(rules, "stn", stream) == expected
        assert reference_times(rules, "stn", stream, skip) == expected


# two stations taking turns, a reading a second; a pair of readings of one station within 5
PAIRS = ":- skip(skip_to_next).\npair(S) <- (temp(S, A) seq temp(S, B)) within 5."


def turns(start: int, end: int) -> list[tuple[str, list[Any], int]]:
    return [("temp", ["s1" if t % 2 == 0 else "s2", t], t) for t in range(start, end)]


def test_skip_to_next_keeps_only_the_first_positions_its_window_can_still_use() -> None:
    # each reading ends a match with each earlier reading of its station within 5 (two of them);
    # the one that starts two seconds before is kept, the other started where a kept one did
    n = 20_000
    with Engine.from_string(PAIRS) as engine:
        found = engine.emit_many(turns(0, n))
        kept = engine.stats().skip_kept
    assert found.rejected == [] and found.warnings == []
    assert [(d.event, d.args, d.start, d.end) for d in found.detections] == [
        ("pair", ("s1" if t % 2 == 0 else "s2",), t - 2, t) for t in range(2, n)]
    # a first position is kept while a match ending now could still hold its event: the match
    # kept at t holds the reading at t - 2, forgotten once now is after t + 5; per station, the
    # first positions of the matches kept at its last three readings
    assert kept == 6


def test_skip_to_next_state_goes_through_a_snapshot() -> None:
    with Engine.from_string(PAIRS) as whole:
        expected = [(d.start, d.end) for d in whole.emit_many(turns(0, 40)).detections]
    with Engine.from_string(PAIRS) as first:
        before = [(d.start, d.end) for d in first.emit_many(turns(0, 21)).detections]
        data = first.snapshot()
        kept = first.stats().skip_kept
    with Engine.from_string(PAIRS) as second:
        second.restore(data)
        assert second.stats().skip_kept == kept == 6
        after = [(d.start, d.end) for d in second.emit_many(turns(21, 40)).detections]
    assert before + after == expected == [(t - 2, t) for t in range(2, 40)]


@pytest.mark.parametrize(("skip", "expected"), [
    ("no_skip", [(1, 2, 3, 4, 5, 6), (2, 3, 4, 5, 6), (3, 4, 5, 6)]),
    ("skip_to_next", [(1, 2, 3, 4, 5, 6), (2, 3, 4, 5, 6), (3, 4, 5, 6)]),
    ("skip_past_last_event", [(1, 2, 3, 4, 5, 6)]),
])
def test_flink_abc_bc_c_plus_d_with_kinds_compared_as_atoms(skip: str, expected: list[tuple[int, ...]]) -> None:
    rules = (f":- skip({skip}).\n"
             "m <- (e(K1) where K1 \\== d) seq (e(K2) where (K2 == b ; K2 == c)) seq ((e(K3) where K3 == c)+) "
             "seq (e(K4) where K4 == d).")
    stream = [("e", [kind], t) for t, kind in enumerate(["a", "b", "c", "c", "c", "d"], 1)]
    assert times(rules, "strict", stream) == expected
    assert reference_times(rules, "strict", stream, skip) == expected
