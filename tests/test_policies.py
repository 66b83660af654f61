"""Consumption policies, with the ETALIS paper's example and per-rule overrides."""

from __future__ import annotations

from collections import Counter

from conftest import detect, points

from etalis_py import Engine

PAPER_RULES = "ie <- a seq b.\ne <- ie seq c."
PAPER_STREAM = points("a a a b b c")  # a(1) a(2) a(3) b(4) b(5) c(6)


def test_recent_policy_uses_the_newest_initiator_and_keeps_it() -> None:
    assert detect(PAPER_RULES, PAPER_STREAM, policy="recent") == [
        ("ie", (), 3, 4),
        ("ie", (), 3, 5),
        ("e", (), 3, 6),
    ]


def test_chronological_policy_consumes_the_oldest_first() -> None:
    assert detect(PAPER_RULES, PAPER_STREAM, policy="chronological") == [
        ("ie", (), 1, 4),
        ("ie", (), 2, 5),
        ("e", (), 1, 6),
    ]


def test_unrestricted_policy_fires_every_derivation_once() -> None:
    found = detect(PAPER_RULES, PAPER_STREAM, policy="unrestricted")
    assert Counter(found) == Counter(
        [("ie", (), s, e) for e in (4, 5) for s in (1, 2, 3)]
        + [("e", (), s, 6) for s in (1, 2, 3) for _ in range(2)]
    )
    assert found[:6] == [("ie", (), 1, 4), ("ie", (), 2, 4), ("ie", (), 3, 4),
                         ("ie", (), 1, 5), ("ie", (), 2, 5), ("ie", (), 3, 5)]


def test_default_policy_is_unrestricted() -> None:
    assert len(detect(PAPER_RULES, PAPER_STREAM)) == 12


def test_file_directive_sets_the_default_policy() -> None:
    assert detect(":- policy(chronological).\n" + PAPER_RULES, PAPER_STREAM) == [
        ("ie", (), 1, 4), ("ie", (), 2, 5), ("e", (), 1, 6)]


def test_api_argument_overrides_the_file_directive() -> None:
    assert detect(":- policy(chronological).\n" + PAPER_RULES, PAPER_STREAM, policy="recent") == [
        ("ie", (), 3, 4), ("ie", (), 3, 5), ("e", (), 3, 6)]


def test_labelled_rule_overrides_the_default_policy() -> None:
    rules = """
    :- policy(recent).
    first : ie <- a seq b.
    e <- ie seq c.
    :- policy(first, chronological).
    """
    # ie chronologically (1,4), (2,5); e takes the newest ie, (2,5)
    assert detect(rules, PAPER_STREAM) == [("ie", (), 1, 4), ("ie", (), 2, 5), ("e", (), 2, 6)]


def test_recent_keeps_the_newest_occurrence_per_join_key() -> None:
    rules = "c(X, V) <- a(X, V) seq b(X)."
    events = [("a", (1, "old"), 1), ("a", (2, "other"), 2), ("a", (1, "new"), 3), ("b", (1,), 4), ("b", (2,), 5)]
    assert detect(rules, events, policy="recent") == [("c", (1, "new"), 3, 4), ("c", (2, "other"), 2, 5)]


def test_chronological_and_consumes_both_operands() -> None:
    rules = "c <- a and b."
    # b(3) takes a(1); a(2) waits; b(4) takes a(2); b(5) waits; a(6) takes b(5)
    events = points("a a b b b a")[:2] + [("b", (), 3), ("b", (), 4), ("b", (), 5), ("a", (), 6)]
    assert detect(rules, events, policy="chronological") == [("c", (), 1, 3), ("c", (), 2, 4), ("c", (), 5, 6)]


def test_chronological_takes_the_oldest_that_fits_the_window() -> None:
    rules = "c <- (a seq b) within 3."
    events = [("a", (), 1), ("a", (), 4), ("b", (), 5), ("b", (), 6)]
    # a(1) is too old for b(5): a(4) is taken; b(6) finds nothing left
    assert detect(rules, events, policy="chronological") == [("c", (), 4, 5)]


def test_policies_only_select_among_unrestricted_detections() -> None:
    stream = [("a", (1,), 1), ("b", (1,), 2), ("a", (1,), 3), ("a", (2,), 3), ("b", (2,), 4), ("b", (1,), 5)]
    rules = "c(X) <- (a(X) seq b(X)) within 3.\nd(X) <- a(X) and b(X)."
    every = set(detect(rules, stream, policy="unrestricted"))
    for policy in ("recent", "chronological"):
        assert set(detect(rules, stream, policy=policy)) <= every


def test_unknown_policy_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="unknown policy 'fast'"):
        Engine.from_string("c <- a seq b.", policy="fast")


def test_rules_with_one_sub_pattern_consume_each_for_itself() -> None:
    # the two rules share `a(X) seq b(Y)` but not its condition: under a policy that consumes, b(0), which
    # completes h2, must not take the a(1) that h1 waits for (each rule detects what it detects alone)
    rules = "h1(X, Y) <- (a(X) seq b(Y)) where Y > X.\nh2(X, Y) <- (a(X) seq b(Y)) where Y < X.\n"
    stream = [("a", [1], 1), ("b", [0], 2), ("b", [2], 3)]
    for policy in ("chronological", "continuous", "stn", "recent"):
        with Engine.from_string(rules, policy=policy) as engine:
            found = engine.emit_many(stream)
        assert [(d.event, d.args, d.start, d.end) for d in found.detections] == [
            ("h2", (1, 0), 1, 2), ("h1", (1, 2), 1, 3)], policy
