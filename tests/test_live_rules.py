"""Adding and removing rules while events flow."""

from __future__ import annotations

import pytest

from etalis_py import Detection, Engine, EtalisError, RuleError


def test_added_rule_detects_from_then_on_and_others_keep_their_goals() -> None:
    with Engine.from_string("r1 : c(X) <- a(X) seq b(X).") as engine:
        engine.emit("a", 1, at=1)
        engine.add_rules("r2 : d(X) <- e(X) seq f(X).")
        assert engine.rule_count == 2
        engine.emit("e", 7, at=2)
        assert engine.emit_many([("b", [1], 3), ("f", [7], 4)]).detections == [
            Detection("c", (1,), 1, 3),
            Detection("d", (7,), 2, 4),
        ]


def test_an_added_rule_shares_an_identical_goal_and_its_pending_goals() -> None:
    with Engine.from_string("r1 : c(X) <- a(X) seq b(X).") as engine:
        engine.emit("a", 1, at=1)
        engine.add_rules("r2 : d(X) <- (a(X) seq b(X)) seq g(X).")
        assert engine.goal_count == 2
        # a(1) was pending before r2 came: r2 uses it through the shared goal
        assert engine.emit_many([("b", [1], 2), ("g", [1], 3)]).detections == [
            Detection("c", (1,), 1, 2),
            Detection("d", (1,), 1, 3),
        ]


def test_removing_a_rule_keeps_goals_other_rules_share() -> None:
    with Engine.from_string("r1 : c(X) <- a(X) seq b(X).\nr2 : d(X) <- (a(X) seq b(X)) seq g(X).") as engine:
        engine.emit("a", 1, at=1)
        engine.remove_rule("r1")
        assert (engine.rule_count, engine.goal_count) == (1, 2)
        assert engine.emit_many([("b", [1], 2), ("g", [1], 3)]).detections == [Detection("d", (1,), 1, 3)]
        engine.remove_rule("r2")
        assert (engine.rule_count, engine.goal_count) == (0, 0)
        assert engine.stats().pending == 0
        assert engine.emit_many([("a", [2], 4), ("b", [2], 5), ("g", [2], 6)]).detections == []


def test_removing_a_rule_frees_its_pending_goals() -> None:
    with Engine.from_string("r1 : c(X) <- a(X) seq b(X).\nr2 : d(X) <- e(X) seq f(X).") as engine:
        engine.emit_many([("a", [1], 1), ("e", [1], 2)])
        assert engine.stats().pending_by_rule == {"r1": 1, "r2": 1}
        engine.remove_rule("r1")
        assert engine.stats().pending_by_rule == {"r2": 1}
        assert engine.emit("f", 1, at=3) == [Detection("d", (1,), 2, 3)]


def test_an_added_fnot_rule_shares_the_pattern_and_its_removal_frees_its_blockers() -> None:
    with Engine.from_string("r1 : c(X) <- a(X) seq b(X).") as engine:
        engine.emit("a", 1, at=1)
        engine.add_rules("r2 : q(X) <- (a(X) seq b(X)) fnot z(X).")
        assert engine.goal_count == 2
        engine.emit_many([("z", [1], 2), ("a", [2], 3)])
        assert engine.stats().pending_by_rule == {"r1": 2, "r2": 3}
        # a(1) waited before r2 came; z(1) lies inside [1,4] and blocks q(1)
        assert engine.emit_many([("b", [1], 4), ("b", [2], 5)]).detections == [
            Detection("c", (1,), 1, 4), Detection("q", (2,), 3, 5), Detection("c", (2,), 3, 5)]
        engine.remove_rule("r2")
        assert (engine.goal_count, engine.stats().pending_by_rule) == (1, {"r1": 2})


def test_a_bad_added_rule_changes_nothing() -> None:
    with Engine.from_string("r1 : c(X) <- a(X) seq b(X).") as engine:
        engine.emit("a", 1, at=1)
        with pytest.raises(RuleError) as info:
            engine.add_rules("ok : d <- e.\nbad(X) <- e seq.", source="more.etl")
        assert (info.value.file, info.value.line) == ("more.etl", 2)
        with pytest.raises(RuleError, match="the label r1 is used by a rule already loaded"):
            engine.add_rules("r1 : z <- y.")
        assert engine.rule_count == 1
        assert engine.emit("b", 1, at=2) == [Detection("c", (1,), 1, 2)]


def test_removing_an_unknown_label_is_an_error() -> None:
    with Engine.from_string("r1 : c <- a seq b.") as engine:
        with pytest.raises(EtalisError, match="no rule is labelled nope"):
            engine.remove_rule("nope")


def test_added_rules_are_checked_in_a_sandboxed_engine() -> None:
    with Engine.from_string("c <- a seq b.", sandbox=True) as engine:
        with pytest.raises(RuleError, match="sandbox: shell"):
            engine.add_rules("d <- e where shell(ls).")
        assert engine.rule_count == 1


def test_added_static_rules_serve_added_rules_and_are_checked_in_a_sandbox() -> None:
    with Engine.from_string("c <- a seq b.", sandbox=True) as engine:
        engine.add_rules("d(X) <- e(X) where big(X).\nbig(X) :- X > 10.")
        assert engine.emit_many([("e", [5], 1), ("e", [50], 2)]).detections == [Detection("d", (50,), 2, 2)]
        with pytest.raises(RuleError, match="sandbox: delete_file"):
            engine.add_rules("f(X) <- g(X) where clean(X).\nclean(X) :- delete_file(X).")
        # the refused clean/1 clause was never loaded: a rule calling it raises
        engine.add_rules("h(X) <- g(X) where clean(X).")
        assert engine.rule_count == 3
        result = engine.emit_many([("g", ["f"], 3)])
        assert (result.detections, [w.reason.split(" raised: ")[1].split("\n")[0] for w in result.warnings]) == (
            [], ["clean/1 is not defined"])


def test_an_ontology_declared_in_added_rules_is_loaded(tmp_path: pytest.TempPathFactory) -> None:
    from pathlib import Path

    root = Path(__file__).parents[1]
    with Engine.from_string("c <- a.") as engine:
        engine.add_rules(
            ":- prefix(wt, 'http://example.org/etalis-py/weather#').\n"
            f":- ontology('{root / 'ontologies/weather.ttl'}').\n"
            "kind(K) <- obs(K) where rdf(K, rdfs:subClassOf, wt:'WeatherObservation')."
        )
        assert engine.emit("obs", "http://example.org/etalis-py/weather#Diablo", at=1) == [
            Detection("kind", ("http://example.org/etalis-py/weather#Diablo",), 1, 1)]
        assert engine.emit("obs", "http://example.org/etalis-py/weather#Blizzard", at=2) == []


def test_a_rule_added_within_a_batch_sets_timers_for_the_rest_of_the_batch() -> None:
    # the batch starts in an engine without timers; a(1) adds a timer rule, and the events after it in the
    # same batch set timers that fire before the first event due after them (and at the flush)
    rules = "c(X) <- a(X) do ins_event_rule(exceptionAlarm(t(Y), 5) <- b(Y)).\nd(Y) <- t(Y).\n"
    with Engine.from_string(rules) as engine:
        result = engine.emit_many([("b", [0], 0), ("a", [1], 1), ("b", [2], 2), ("b", [3], 3), ("z", [], 10),
                                   ("b", [4], 11)])
        assert (result.accepted, result.rejected) == (6, [])
        assert result.detections == [
            Detection("c", (1,), 1, 1),
            Detection("t", (2,), 2, 7),
            Detection("d", (2,), 2, 7),
            Detection("t", (3,), 3, 8),
            Detection("d", (3,), 3, 8),
        ]
        assert engine.flush() == [Detection("t", (4,), 11, 16), Detection("d", (4,), 11, 16)]


def test_a_rule_that_adds_rules_in_a_loop_adds_a_thousand_and_says_the_rest_are_dropped() -> None:
    """Each change compiles the rules again: at most 1,000 changes of the
    rules per input event (as at most 1,000 events raised by event/1), the
    rest dropped with a warning of the event's line, so that such a rule
    ends."""
    rules = "c(X) <- a(X) where forall(between(1, 5000, I), ins_event_rule(h(I) <- b(I))).\n"
    with Engine.from_string(rules) as engine:
        result = engine.emit_many([("a", [1], 1), ("b", [7], 2), ("b", [1000], 3), ("b", [1001], 4)])
        assert result.detections == [Detection("c", (1,), 1, 1), Detection("h", (7,), 2, 2),
                                     Detection("h", (1000,), 3, 3)]
        assert [(w.line, w.reason) for w in result.warnings] == [
            (1, "the rules asked for more than 1,000 changes of the rules (ins_event_rule/1, del_event_rule/1, "
                "ins_static_rule/1) for one input event: the rest are dropped")]


def test_a_rule_inserted_by_a_rule_with_a_kleene_plus_detects_from_the_next_event() -> None:
    # P+ carries the positions of its events: the batch counts them from the
    # insertion on, with no warning at the events after it
    rules = "c(X) <- a(X) do ins_event_rule(d(X, Y) <- (e(Y)+ seq f) within 5).\n"
    with Engine.from_string(rules, trusted=True) as engine:
        result = engine.emit_many([("a", [1], 1), ("e", [1], 2), ("e", [2], 3), ("f", [], 4)])
    assert result.warnings == []
    assert result.detections == [Detection("c", (1,), 1, 1), Detection("d", (1, [1]), 2, 4),
                                 Detection("d", (1, [1, 2]), 2, 4), Detection("d", (1, [2]), 3, 4)]
