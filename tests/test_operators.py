"""Every operator, with the exact detections it must give."""

from __future__ import annotations

from collections import Counter

import pytest

from conftest import detect, points


def test_seq_joins_on_shared_variable_and_needs_strict_order() -> None:
    rules = "c(X) <- a(X) seq b(X)."
    events = [("a", (1,), 1), ("a", (2,), 2), ("b", (1,), 2), ("b", (1,), 3), ("b", (2,), 4)]
    assert detect(rules, events) == [
        ("c", (1,), 1, 2),
        ("c", (1,), 1, 3),
        ("c", (2,), 2, 4),
    ]


def test_seq_at_equal_timestamps_does_not_fire() -> None:
    assert detect("c <- a seq b.", [("a", (), 5), ("b", (), 5)]) == []


def test_and_fires_in_both_orders_with_the_spanning_interval() -> None:
    rules = "c(X) <- a(X) and b(X)."
    events = [("b", (1,), 1), ("a", (1,), 3), ("a", (2,), 4), ("b", (2,), 4)]
    assert detect(rules, events) == [("c", (1,), 1, 3), ("c", (2,), 4, 4)]


def test_and_of_an_event_with_itself_holds_at_its_point() -> None:
    assert detect("c <- a and a.", [("a", (), 7)]) == [("c", (), 7, 7)]


def test_par_needs_a_nonzero_overlap() -> None:
    rules = "c <- a par b."
    events = [("a", (), 1, 5), ("b", (), 4, 6), ("b", (), 5, 7), ("b", (), 8, 8)]
    # [1,5] overlaps [4,6]; [5,7] only touches [1,5]; a point overlaps nothing
    assert detect(rules, events) == [("c", (), 1, 6)]


def test_or_passes_either_operand_on() -> None:
    assert detect("c(X) <- a(X) or b(X).", [("a", (1,), 1), ("b", (2,), 2)]) == [
        ("c", (1,), 1, 1),
        ("c", (2,), 2, 2),
    ]


def test_where_filters_with_prolog_arithmetic_and_binds_head_variables() -> None:
    rules = "hot(S, F) <- reading(S, C) where C > 30, F is C * 9 / 5 + 32."
    events = [("reading", ("x", 20), 1), ("reading", ("y", 35), 2)]
    assert detect(rules, events) == [("hot", ("y", 95), 2, 2)]


def test_star_keeps_its_arithmetic_meaning_in_where() -> None:
    rules = "rise(W2) <- w(W1) seq w(W2) where W2 >= W1 * 1.1."
    events = [("w", (10,), 1), ("w", (10.5,), 2), ("w", (11,), 3)]
    assert detect(rules, events) == [("rise", (11,), 1, 3)]


def test_where_reads_the_interval_of_its_pattern() -> None:
    rules = "long(S, E, D) <- (a seq b) where start(S), end(E), duration(D), D >= 3."
    events = [("a", (), 1), ("a", (), 3), ("b", (), 5)]
    assert detect(rules, events) == [("long", (1, 5, 4), 1, 5)]


def test_etalis_check_form_reads_the_interval() -> None:
    rules = "span(T1, T2) <- (a seq b) where check(t1(T1), t2(T2))."
    assert detect(rules, [("a", (), 2), ("b", (), 9)]) == [("span", (2, 9), 2, 9)]


def test_within_bounds_the_whole_pattern() -> None:
    rules = "c <- (a seq b seq d) within 5."
    events = [("a", (), 1), ("a", (), 3), ("b", (), 4), ("d", (), 7)]
    assert detect(rules, events) == [("c", (), 3, 7)]


def test_within_accepts_time_units() -> None:
    rules = "c <- (a seq b) within minutes(2)."
    assert detect(rules, [("a", (), 0), ("b", (), 120), ("a", (), 121), ("b", (), 242)]) == [("c", (), 0, 120)]


def test_within_on_an_interval_event() -> None:
    assert detect("c <- a within 3.", [("a", (), 1, 4), ("a", (), 5, 9)]) == [("c", (), 1, 4)]


def test_nested_patterns() -> None:
    rules = "c(X) <- (a(X) and b(X)) seq (d(X) or e(X))."
    events = [("a", (1,), 1), ("b", (1,), 2), ("e", (1,), 3), ("d", (2,), 4)]
    assert detect(rules, events) == [("c", (1,), 1, 3)]


def test_recursive_rules_compute_reachability() -> None:
    rules = "reach(X,Y) <- edge(X,Y).\nreach(X,Y) <- reach(X,Z) seq edge(Z,Y)."
    events = [("edge", (1, 2), 1), ("edge", (2, 3), 2), ("edge", (3, 4), 3)]
    found = [(args, s, e) for _, args, s, e in detect(rules, events)]
    assert found == [
        ((1, 2), 1, 1),
        ((1, 3), 1, 2),
        ((2, 3), 2, 2),
        ((1, 4), 1, 3),
        ((2, 4), 2, 3),
        ((3, 4), 3, 3),
    ]


def test_intermediate_events_are_never_reported() -> None:
    rules = "c <- (a seq b) seq d."
    assert [name for name, *_ in detect(rules, points("a b d"))] == ["c"]


def test_rule_heads_feed_other_rules() -> None:
    rules = "ab <- a seq b.\nabc <- ab seq c."
    assert detect(rules, points("a b c")) == [("ab", (), 1, 2), ("abc", (), 1, 3)]


def test_print_events_directive_limits_what_is_reported() -> None:
    rules = ":- print_events([abc/0]).\nab <- a seq b.\nabc <- ab seq c."
    assert detect(rules, points("a b c")) == [("abc", (), 1, 3)]


def test_static_rules_are_background_knowledge() -> None:
    rules = """
    alarm(R) <- reading(R, T) where too_hot(T).
    too_hot(T) :- limit(L), T > L.
    limit(40).
    """
    events = [("reading", ("r1", 39), 1), ("reading", ("r2", 41), 2)]
    assert detect(rules, events) == [("alarm", ("r2",), 2, 2)]


def test_constants_in_patterns_select_events() -> None:
    rules = "c(X) <- a(X, on) seq b(X, 1)."
    events = [("a", (1, "off"), 1), ("a", (1, "on"), 2), ("b", (1, 2), 3), ("b", (1, 1), 4)]
    assert detect(rules, events) == [("c", (1,), 2, 4)]


def test_identical_subpatterns_are_compiled_once() -> None:
    from etalis_py import Engine

    shared = Engine.from_string("c(X) <- a(X) seq b(X).\nd(Y) <- (a(Y) seq b(Y)) seq e(Y).")
    try:
        assert shared.goal_count == 2
        assert detect("c(X) <- a(X) seq b(X).\nd(Y) <- (a(Y) seq b(Y)) seq e(Y).",
                      [("a", (1,), 1), ("b", (1,), 2), ("e", (1,), 3)]) == [
            ("c", (1,), 1, 2),
            ("d", (1,), 1, 3),
        ]
    finally:
        shared.close()


# Allen relations: A = a over [a1,a2], B = b over [b1,b2]; each case gives a
# pair of intervals that holds and the spanning result, in the order the
# intervals complete.
ALLEN = [
    ("before", (1, 2), (3, 4), (1, 4)),
    ("after", (3, 4), (1, 2), (1, 4)),
    ("meets", (1, 3), (3, 5), (1, 5)),
    ("met_by", (3, 5), (1, 3), (1, 5)),
    ("overlaps", (1, 4), (2, 6), (1, 6)),
    ("overlapped_by", (2, 6), (1, 4), (1, 6)),
    ("starts", (1, 3), (1, 6), (1, 6)),
    ("started_by", (1, 6), (1, 3), (1, 6)),
    ("during", (2, 3), (1, 6), (1, 6)),
    ("contains", (1, 6), (2, 3), (1, 6)),
    ("finishes", (4, 6), (1, 6), (1, 6)),
    ("finished_by", (1, 6), (4, 6), (1, 6)),
    ("equals", (2, 5), (2, 5), (2, 5)),
]


@pytest.mark.parametrize("op,a,b,result", ALLEN, ids=[r[0] for r in ALLEN])
def test_allen_relation_holds_in_either_arrival_order(op: str, a: tuple[int, int], b: tuple[int, int], result: tuple[int, int]) -> None:
    rules = f"r(X) <- a(X) {op} b(X)."
    evs = sorted([("a", (1,), *a), ("b", (1,), *b), ("a", (2,), *b), ("b", (2,), *a)], key=lambda e: (e[3], e[0]))
    # key 1 is the pair that holds; key 2 swaps the intervals
    found = detect(rules, evs)
    expected = [("r", (1,), *result)] if a != b else [("r", (1,), *result), ("r", (2,), *result)]
    assert Counter(found) == Counter(expected)


@pytest.mark.parametrize("op", [r[0] for r in ALLEN])
def test_allen_relation_fails_on_disjoint_far_intervals(op: str) -> None:
    assert detect(f"r <- a {op} b.", [("a", (), 1, 2), ("b", (), 10, 20)]) == (
        [("r", (), 1, 20)] if op == "before" else []
    )


def test_nested_or_passes_every_alternative_through() -> None:
    # regression: a chain of intermediate events that only rename (or) was followed one step only
    assert detect("e <- (a or b) or c.\nf <- ((a or b) or c) seq d.", [("a", (), 1), ("c", (), 2), ("d", (), 3)]) == [
        ("e", (), 1, 1), ("e", (), 2, 2), ("f", (), 1, 3), ("f", (), 2, 3)]


def test_any_n_of_the_listed_events_in_any_order() -> None:
    rules = "two(X) <- any(2, [a(X), b(X), c(X)])."
    events = [("c", (1,), 1), ("a", (1,), 2), ("b", (2,), 3), ("b", (1,), 4), ("a", (1,), 5)]
    assert Counter(detect(rules, events)) == Counter([
        ("two", (1,), 1, 2), ("two", (1,), 2, 4), ("two", (1,), 1, 4),
        ("two", (1,), 1, 5), ("two", (1,), 4, 5)])


def test_any_rejects_a_count_larger_than_the_list() -> None:
    from etalis_py import Engine, RuleError

    with pytest.raises(RuleError, match=r"any needs a count from 1 to 2, not 3"):
        Engine.from_string("h <- any(3, [a, b]).")
