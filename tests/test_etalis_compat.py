"""Rule files written for original ETALIS load with ETALIS's meaning: its
quoted operators and capitalised aliases, `rule:` labels and `iff`, rule
properties, `do` actions, print_trigger declarations, and background
predicates named like operators; what etalis-py cannot take over is refused
with a positioned message that says what to write instead."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from etalis_py import Detection, Engine
from etalis_py.cli import main
from etalis_py.errors import EtalisWarning, RuleError
from etalis_py.rules.findings import check_file, check_text

HERE = Path(__file__).parent / "etalis_compat"


def refused(text: str, trusted: bool = False) -> tuple[int | None, int | None, str, str]:
    with pytest.raises(RuleError) as info:
        Engine.from_string(text, trusted=trusted)
    error = info.value
    return error.line, error.column, error.message, error.hint


def test_quoted_operators_and_capitalised_aliases_read_as_the_operators() -> None:
    with Engine.from_file(HERE / "quoted_operators.etl") as engine:
        assert engine.rule_count == 3
        result = engine.emit_many([("a", [1], 1), ("b", [1], 2), ("e", [1], 3), ("e", ["seq"], 4)])
        assert result.detections == [
            Detection("c", (1,), 1, 2),
            Detection("d", (1,), 1, 3),
            Detection("named", (1,), 3, 3),
        ]


def test_a_quoted_operator_name_as_an_argument_stays_an_atom() -> None:
    with Engine.from_string("c(X) <- e(X, 'seq') 'seq' f('SEQ').") as engine:
        assert engine.emit_many([("e", [1, "seq"], 1), ("f", ["SEQ"], 2)]).detections == [
            Detection("c", (1,), 1, 2)
        ]


def test_unquoting_keeps_the_columns_of_errors() -> None:
    quoted = refused("c <- a 'seq' b 'SEQ' c d.")
    assert quoted == refused("c <- a  seq  b  seq  c d.")
    assert quoted[:3] == (1, 23, "syntax error: operator expected")


def test_rule_properties_put_windows_on_the_rules() -> None:
    with Engine.from_file(HERE / "rule_properties.etl") as engine:
        result = engine.emit_many([("a", [1], 1), ("b", [1], 2), ("a", [2], 3), ("b", [2], 5), ("a", [3], 6), ("b", [3], 10)])
        assert result.detections == [
            Detection("c", (1,), 1, 2),
            Detection("d", (1,), 1, 2),
            Detection("d", (2,), 3, 5),
            Detection("e", (2,), 3, 5),
        ]


def test_an_unknown_rule_property_is_refused_at_the_label() -> None:
    line, column, message, hint = refused("\nr([property(ooo_window, 10)]) 'rule:' c <- a seq b.")
    assert (line, column, message) == (2, 1, "unknown rule property ooo_window")
    assert "lateness" in hint


def test_an_event_rule_property_of_no_rule_is_refused_at_the_fact() -> None:
    text = "r1 : c <- a seq b.\nevent_rule_property(r2, window, 1).\n"
    assert refused(text)[:3] == (2, 1, "event_rule_property/3 names r2, and no rule has that label")


def test_a_label_that_is_not_a_property_list_is_still_refused() -> None:
    assert refused("r(1) : h <- a seq b.")[:3] == (1, 1, "a rule label must be a non-empty atom")


def test_do_runs_its_action_when_the_pattern_is_detected_and_iff_is_a_rule() -> None:
    with Engine.from_file(HERE / "actions.etl") as engine:
        assert engine.emit_many([("a", [1], 1), ("b", [1], 2)]).detections == [
            Detection("double", (2,), 1, 2),
            Detection("ten", (10,), 1, 2),
            Detection("both", (), 1, 2),
        ]


def test_a_printing_action_prints_on_standard_error_never_into_the_detections(
    capfd: pytest.CaptureFixture[str],
) -> None:
    text = "c(X) do (write(got(X)), nl) <- a(X) seq b(X).\nd(X) <- c(X) where print(X), tab(1), writeq('A'), nl."
    for trusted in (False, True):
        with Engine.from_string(text, trusted=trusted) as engine:
            assert engine.emit_many([("a", [1], 1), ("b", [1], 2)]).detections == [
                Detection("c", (1,), 1, 2),
                Detection("d", (1,), 1, 2),
            ]
        assert capfd.readouterr() == ("", "got(1)\n1 'A'\n")


def test_writing_to_a_file_is_still_refused() -> None:
    line, column, message, _ = refused("c <- a where (open('x.txt', write, S), write(S, a), close(S)).")
    assert (line, column, message) == (1, 1, "sandbox: open/3 may not be called by rules from an untrusted source")


def test_print_trigger_facts_choose_the_reported_events() -> None:
    with Engine.from_file(HERE / "print_trigger.etl") as engine:
        assert engine.rule_count == 2
        assert engine.emit_many([("a", [1], 1), ("b", [1], 2)]).detections == [Detection("c", (1,), 1, 2)]


@pytest.mark.parametrize("spec", ["_/_", "all_defined_events"])
def test_print_trigger_of_all_events_reports_every_derived_event(spec: str) -> None:
    with Engine.from_string(f"print_trigger({spec}).\nc(X) <- a(X).\nd(X) <- c(X).") as engine:
        assert engine.emit("a", 1, at=1) == [Detection("c", (1,), 1, 1), Detection("d", (1,), 1, 1)]


def test_print_trigger_defined_by_a_rule_is_asked_at_load_for_each_derived_event() -> None:
    with Engine.from_file(HERE / "print_trigger_rule.etl") as engine:
        assert engine.printed == ["d/1", "e/1", "f/1", "z/1"]   # d/1: asked of each occurrence (and refused)
        assert engine.emit_many([("a", [1], 1), ("a", [1], 2)]).detections == [
            Detection("e", (1,), 1, 1),
            Detection("f", (1,), 1, 2),
            Detection("e", (1,), 2, 2),
        ]


def test_the_facts_the_files_directive_asserts_decide_print_trigger() -> None:
    text = (HERE / "print_trigger_rule.etl").read_text().replace("assert(printing(on))", "assert(printing(off))")
    with Engine.from_string(text) as engine:
        assert engine.printed == ["d/1", "e/1", "f/1", "z/1"]   # z/1 by a fact; the others asked of each one
        assert engine.emit("a", 1, at=1) == []


def test_print_trigger_defined_by_a_rule_is_asked_of_each_occurrence_as_etalis_does() -> None:
    rules = ("print_trigger(big(X)) :- X > 10.\nprint_trigger(E) :- E = pair(X, X).\n"
             "big(X) <- a(X).\nsmall(X) <- a(X).\npair(X, Y) <- a(X) seq b(Y).")
    stream = [("a", [5], 1), ("a", [20], 2), ("b", [20], 3)]
    expected = [Detection("big", (20,), 2, 2), Detection("pair", (20, 20), 2, 3)]
    with Engine.from_string(rules) as engine:
        assert engine.printed == ["big/1", "pair/2", "small/1"]
        assert engine.emit_many(stream).detections == expected
    with Engine.from_string(rules, report=["big/1", "pair/2"]) as engine:   # a stage of etalis replay
        assert engine.emit_many(stream).detections == expected


def test_print_trigger_of_all_defined_events_by_a_rule_reports_every_derived_event() -> None:
    with Engine.from_string("print_trigger(E) :- E == all_defined_events.\nc(X) <- a(X).\nd(X) <- c(X).") as engine:
        assert engine.emit("a", 1, at=1) == [Detection("c", (1,), 1, 1), Detection("d", (1,), 1, 1)]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("loop(E)", "print_trigger(all_defined_events) did not end within 1,000,000 inferences"),
        ("E > 0", "print_trigger(all_defined_events) raised the error "
                                               "type_error(evaluable,all_defined_events/0)"),
    ],
)
def test_a_print_trigger_rule_that_does_not_end_or_raises_is_refused_at_its_clause(body: str, message: str) -> None:
    text = f"c <- a.\nprint_trigger(E) :- {body}.\nloop(E) :- loop(E).\n"
    line, column, got, _ = refused(text)
    assert (line, column, got) == (2, 1, message)


def test_a_print_trigger_rule_is_sandboxed_even_in_a_trusted_file() -> None:
    line, column, message, _ = refused("c <- a.\nprint_trigger(_) :- shell(ls).\n", trusted=True)
    assert (line, column, message) == (2, 1, "sandbox: shell/1 may not be called by rules from an untrusted source (it calls shell/2)")


def test_a_static_predicate_named_like_an_operator_is_background_knowledge() -> None:
    with Engine.from_file(HERE / "operator_named_predicate.etl") as engine:
        result = engine.emit_many([("a", ["aba"], 1), ("b", ["b"], 2), ("b", ["c"], 3)])
        assert result.detections == [Detection("stop", ("aba", "b"), 1, 2)]


def test_dynamic_facts_of_the_file_may_be_asserted_and_retracted_by_its_rules() -> None:
    with Engine.from_file(HERE / "dynamic_facts.etl") as engine:
        result = engine.emit_many([("a", [1], 1), ("a", [1], 2), ("a", [3], 3), ("r", [], 4), ("a", [1], 5)])
        assert result.detections == [
            Detection("count_new", (1,), 1, 1),
            Detection("count_new", (3,), 3, 3),
            Detection("over", (3,), 3, 3),
            Detection("reset", (), 4, 4),
            Detection("count_new", (1,), 5, 5),
        ]
    with Engine.from_file(HERE / "dynamic_facts.etl") as other:     # each engine has its own facts
        assert other.emit("a", 1, at=1) == [Detection("count_new", (1,), 1, 1)]


def test_a_fact_the_directive_asserts_of_a_predicate_it_declares_dynamic_is_the_files_own() -> None:
    text = ":- dynamic(on/1), assert(on(yes)).\nc <- a where on(yes).\nstop <- b where retract(on(yes)).\n"
    with Engine.from_string(text) as engine:
        assert engine.emit("a", at=1) == [Detection("c", (), 1, 1)]
        assert engine.emit("b", at=2) == [Detection("stop", (), 2, 2)]
        assert engine.emit("a", at=3) == []


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("c <- a where assert(member(1, [])).", 1, 1,
         "sandbox: assert/1 may not be called by rules from an untrusted source"),
        (":- dynamic(seen/1).\nc <- a where retract(rdf(_, _, _)).", 2, 1,
         "sandbox: retract/1 may not be called by rules from an untrusted source"),
        ("c <- a where assertz((seen(1) :- true)).", 1, 1,
         "sandbox: assertz/1 may not be called by rules from an untrusted source"),
        ("c <- a where asserta(user:seen(1)).", 1, 1,
         "sandbox: asserta/1 may not be called by rules from an untrusted source"),
        (":- dynamic(rdf/3).\nc <- a.", 1, 1,
         "sandbox: rules from an untrusted source may not define rdf/3, the engine's own predicate"),
        (":- dynamic(member/2).\nc <- a.", 1, 1,
         "sandbox: rules from an untrusted source may not define member/2, a library predicate"),
        ("c <- a.\n:- dynamic(seen).", 2, 1, "dynamic takes predicates Name/Arity"),
        ("c <- a.\n:- dynamic(s/1), initialization(go).", 2, 1,
         "unknown directive ','(dynamic s/1, initialization go)"),
    ],
)
def test_database_changes_beyond_the_files_dynamic_facts_are_refused(
    text: str, line: int, column: int, message: str
) -> None:
    assert refused(text)[:3] == (line, column, message)


def test_a_fact_a_rule_asserts_makes_its_predicate_the_files_own() -> None:
    text = "registered(U) <- register(U) do assertz(users(U)).\nhello(U) <- ping(U) where users(U).\n"
    with Engine.from_string(text) as engine:
        result = engine.emit_many([("ping", [1], 1), ("register", [1], 2), ("ping", [1], 3)])
        assert result.detections == [Detection("registered", (1,), 2, 2), Detection("hello", (1,), 3, 3)]
        assert result.warnings == []


OWN_STREAM = [("answer", ["ann", "right"], 1), ("register", ["ann"], 2), ("register", ["ann"], 3),
              ("answer", ["ann", "right"], 4), ("reprice", ["wrong", -1], 5), ("answer", ["ann", "wrong"], 6),
              ("answer", ["ann", "wrong"], 7), ("leave", ["ann"], 8), ("answer", ["ann", "right"], 9)]


def test_a_rule_file_keeps_state_in_predicates_of_its_own_without_declaring_them() -> None:
    with Engine.from_file(HERE / "own_facts.etl") as engine:
        result = engine.emit_many(OWN_STREAM)
        assert result.detections == [
            Detection("registered", ("ann",), 2, 2),
            Detection("scored", ("ann", 10), 4, 4),
            Detection("repriced", ("wrong", -1), 5, 5),     # the fact to change is built when the rule runs
            Detection("scored", ("ann", 9), 6, 6),
            Detection("flagged", ("ann",), 6, 6),           # ETALIS's set_flag/2 and get_flag/2, the engine's own
            Detection("scored", ("ann", 8), 7, 7),
            Detection("left", ("ann",), 8, 8),
        ]
        assert result.warnings == []
    with Engine.from_file(HERE / "own_facts.etl") as other:     # each engine has its own facts and flags
        result = other.emit_many([("register", ["ann"], 1), ("answer", ["ann", "wrong"], 2)])
        assert result.detections == [Detection("registered", ("ann",), 1, 1), Detection("scored", ("ann", -5), 2, 2),
                                     Detection("flagged", ("ann",), 2, 2)]
    assert check_file(str(HERE / "own_facts.etl")) == []


def test_a_fact_known_only_when_the_rule_runs_may_change_only_the_files_own_predicates() -> None:
    with Engine.from_file(HERE / "own_facts.etl") as engine:
        result = engine.emit_many([("clear", ["member"], 1), ("clear", ["$on"], 2), ("clear", ["score"], 3),
                                   ("clear", ["set_flag"], 4), ("clear", ["points"], 5)])
        assert result.detections == [Detection("cleared", ("score",), 3, 3), Detection("cleared", ("points",), 5, 5)]
        assert [re.sub(r"_[0-9]+", "_", w.reason) for w in result.warnings] == [
            f"where condition functor(_,{name},2),retractall(_) of cleared(A) ({HERE / 'own_facts.etl'}:16:1) "
            "raised: retractall/1: "
            f"No permission to modify predicate `{name}/2' (not a predicate of the rule file)"
            for name in ("member", "'$on'", "set_flag")]


def test_etalis_library_predicates_db_facts_and_external_trigger() -> None:
    with Engine.from_file(HERE / "library.etl") as engine:
        result = engine.emit_many([("price", [7], 1), ("price", [5], 2), ("a", [], 3), ("c", [], 4), ("a", [], 5), ("c", [], 9)])
        assert result.detections == [
            Detection("low", (5,), 1, 2),
            Detection("high", (7,), 1, 2),
            Detection("b", (2,), 3, 3),
            Detection("b", (3,), 3, 3),
            Detection("quick", (), 3, 4),
            Detection("b", (2,), 5, 5),
            Detection("b", (3,), 5, 5),
        ]


def test_a_file_that_defines_a_library_predicate_keeps_its_own() -> None:
    with Engine.from_string("low(M) <- price(A) seq price(B) where min(A, B, M).\nmin(_, _, none).") as engine:
        assert engine.emit_many([("price", [7], 1), ("price", [5], 2)]).detections == [Detection("low", ("none",), 1, 2)]


def test_current_datime_in_a_static_rule_is_refused() -> None:
    assert refused("c <- a.\nlate(D) :- current_datime(N), D = N.")[:3] == (
        2, 1, "current_datime/1 (ETALIS's wall clock) is not supported in a static rule: a rule sees the time of its "
              "events, not of the machine, and a static rule has none")


def test_current_datime_in_a_where_is_the_time_of_the_detection() -> None:
    with Engine.from_file(HERE / "clock.etl") as engine:
        result = engine.emit_many([("a", [1], 3), ("b", [1], 7.5)])
        assert result.detections == [
            Detection("due", (1, 4), 3, 3),
            Detection("span", (1, 7.5), 3, 7.5),
        ]


def test_current_datime_in_a_static_rule_is_refused_with_the_hint() -> None:
    _, _, _, hint = refused("c <- a.\nlate(D) :- current_datime(D).")
    assert hint == ("call it in a where condition, where it is the detection's time (as end(T)), "
                    "and pass the time to the static rule as an argument")


def test_a_quoted_postfix_operator_is_read_as_the_operator() -> None:
    stream = [("a", [1], 1), ("b", [1], 2), ("b", [1], 3)]
    with Engine.from_string("d(X) <- a(X) 'seq' b(X) 'star_times'.") as quoted:
        with Engine.from_string("d(X) <- a(X)  seq  b(X)  star_times .") as plain:
            expected = [Detection("d", (1,), 1, 1), Detection("d", (1,), 1, 2), Detection("d", (1,), 1, 3)]
            assert quoted.emit_many(stream).detections == plain.emit_many(stream).detections == expected


def test_rules_change_the_rules_after_the_event_that_led_to_the_change() -> None:
    with Engine.from_file(HERE / "rule_updates.etl") as engine:
        assert engine.rule_count == 5
        result = engine.emit_many([("a", [1], 1), ("c", [2], 2), ("b", [1], 3), ("c", [2], 4), ("a", [3], 5)])
        assert result.detections == [
            Detection("noop", (), 1, 1),       # inserts s1 :- s2 after a(1)
            Detection("e", (1,), 1, 1),
            Detection("noop", (), 1, 3),       # inserts d(Y) <- c(Y) where s1 after b(1): c(2)@2 was too early
            Detection("noop", (), 3, 3),       # removes r1 after b(1)
            Detection("d", (2,), 4, 4),
            Detection("noop", (), 5, 5),       # a(3) inserts s1 :- s2 again; r1 is gone
        ]
        assert result.warnings == []
        # a rule added by a rule is checked as add_rules checks it: refused, a warning of its line
        result = engine.emit_many([("g", [], 6)])
        assert result.detections == [Detection("f", (), 6, 6)]
        assert [(w.line, w.reason) for w in result.warnings] == [(1,
            "ins_event_rule(r2:h(A) <- x(A) where shell(A)) failed: "
            "sandbox: shell/1 may not be called by rules from an untrusted source (it calls shell/2)")
        ]


def test_removing_a_static_clause_from_a_rule_is_refused() -> None:
    line, column, message, _ = refused("noop <- a do del_static_rule(s1 :- s2).")
    assert (line, column, message) == (
        1, 14, "del_static_rule/1 (original ETALIS's removal of a static clause by a running rule) is not supported"
    )


def test_an_unquoted_capitalised_alias_is_a_variable_and_the_hint_says_so() -> None:
    assert refused("d <- a SEQ b.") == (
        1, 7, "syntax error: operator expected",
        "SEQ is read as a variable: write the operator seq (or 'SEQ' in quotes, as original ETALIS files do)",
    )


def test_a_predicate_defined_nowhere_is_a_warning_with_where_to_define_it() -> None:
    text = "stop(X) <- a(X) where contains(X, 1).\n"
    assert [(f.severity, f.code, f.line, f.column, f.message, f.hint) for f in check_text(text)] == [(
        "warning", "undefined-predicate", 1, 1,
        "contains/2 is not defined: a call of it raises an existence error, and the occurrence that made the call "
        "is dropped",
        "define it in the rule file with static rules or facts (original ETALIS examples often load them from "
        "a separate .db or .P file: give it with --static FILE), or declare it with :- dynamic(Name/Arity) if it "
        "may have no clauses")]
    with Engine.from_string(text) as engine:                # calling it is safe: the sandbox lets it be
        result = engine.emit_many([("a", [1], 1)])
        assert result.detections == []
        assert [w.reason for w in result.warnings] == [
            "where condition contains(1,1) of stop(A) (<string>:1:1) raised: contains/2 is not defined\n"
            "  hint: define it in the rule file (a static clause), load it with --static, or check its spelling"]


def test_static_knowledge_in_a_file_of_its_own() -> None:
    rules, db = HERE / "static_knowledge.etl", HERE / "static_knowledge.db"
    with Engine.from_file(rules, static=[db]) as engine:
        result = engine.emit_many([("word", ["bergen"], 1), ("part", ["erg"], 2), ("part", ["xyz"], 3),
                                   ("part", ["bergen"], 4)])
        assert result.detections == [
            Detection("match", ("bergen", "erg"), 1, 2),
            Detection("match", ("bergen", "bergen"), 1, 4),
        ]
        assert [f.code for f in engine.findings()] == []


@pytest.mark.parametrize("policy", ["recent", "chronological"])
def test_a_static_predicate_in_a_condition_under_a_consuming_policy(policy: str) -> None:
    with Engine.from_string("c(X) <- a(X) seq b(Y) where q(X, Y).\nq(X, X).", policy=policy) as engine:
        result = engine.emit_many([("a", [1], 1), ("b", [2], 2), ("b", [1], 3)])
        assert result.detections == [Detection("c", (1,), 1, 3)]
        assert result.warnings == []


def test_static_knowledge_is_needed_and_sandboxed() -> None:
    assert [(f.code, f.line, f.data["predicate"]) for f in check_file(str(HERE / "static_knowledge.etl"))] == [
        ("undefined-predicate", 4, "inside/2")]
    unsafe = HERE / "static_unsafe.db"
    with pytest.raises(RuleError) as info:
        Engine.from_file(HERE / "static_knowledge.etl", static=[unsafe])
    assert (Path(str(info.value.file)).name, info.value.line, info.value.column) == ("static_unsafe.db", 2, 1)
    assert info.value.message == "sandbox: shell/1 may not be called by rules from an untrusted source (it calls shell/2)"


def test_an_event_rule_in_a_static_file_is_refused_at_the_rule() -> None:
    db = HERE / "static_with_rule.db"
    with pytest.raises(RuleError) as info:
        Engine.from_file(HERE / "static_knowledge.etl", static=[db])
    error = info.value
    assert (error.file, error.line, error.column) == (str(db), 3, 1)
    assert error.message == f"{db} is given as static knowledge (--static): it holds Prolog facts and rules, not event rules"
    assert error.hint == "give a file with event rules as the rule file"


def test_etalis_run_check_and_compile_take_static_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules, db = str(HERE / "static_knowledge.etl"), str(HERE / "static_knowledge.db")
    events = tmp_path / "s.events"
    events.write_text("event(word(bergen), 1).\nevent(part(erg), 2).\nevent(part(xyz), 3).\n")
    assert main(["run", rules, "--static", db, "--events", str(events), "--quiet"]) == 0
    assert capsys.readouterr().out == '{"event": "match", "args": ["bergen", "erg"], "start": 1, "end": 2}\n'
    assert main(["check", rules, "--static", db]) == 0
    assert capsys.readouterr().out == f"{rules}: ok: 1 rules, 2 binary goals, policy unrestricted, reports match/2\n"
    assert main(["compile", rules, "--static", db]) == 0
    assert capsys.readouterr().out.startswith("% default policy: unrestricted\n% reported events: [match/2]\n")
    assert main(["check", rules]) == 0
    assert capsys.readouterr().out.startswith(f"{rules}:4:1: warning: inside/2 is not defined: ")


UNBOUND_STREAM = [("canceled", [1, "q1", 10], 1), ("answer", [1, "q1", "hello"], 2), ("login", [1], 3),
                  ("canceled", [1, "q2", 20], 4), ("logout", [1], 5), ("login", [2], 6), ("logout", [2], 7),
                  ("canceled", [2, "q2", 40], 8), ("answer", [1, "q2", "bye"], 9), ("canceled", [1, "q1", 5], 10)]


@pytest.mark.parametrize("policy", ["unrestricted", "recent", "chronological"])
def test_a_head_variable_the_pattern_does_not_bind_is_derived_unbound_and_later_patterns_unify_with_it(
        policy: str) -> None:
    with Engine.from_file(HERE / "unbound_head.event", policy=policy) as engine:
        detections = engine.emit_many(UNBOUND_STREAM).detections
    expected = [
        Detection("question", (1, "q1", None), 1, 1),
        Detection("answered", (1, "q1", "hello"), 1, 2),
        Detection("known", (1,), 1, 3),
        Detection("question", (1, "q2", None), 4, 4),     # blocks quiet(1) over [3, 5]
        Detection("quiet", (2,), 6, 7),
        Detection("answered", (1, "q2", "bye"), 4, 9),
        Detection("question", (1, "q1", None), 10, 10),
        Detection("reasked", (1, "q1", "hello"), 2, 10),
    ] + ([] if policy == "chronological" else [Detection("known", (1,), 3, 10)])  # login(1) used up at 3
    assert detections == expected
    assert [str(d) for d in detections[:1]] == ["question(1, q1, _) 1970-01-01 00:00:01 UTC"]


def test_a_head_variable_the_pattern_does_not_bind_is_a_positioned_warning() -> None:
    found = [f for f in check_file(str(HERE / "unbound_head.event")) if f.code == "unbound-head-variable"]
    assert [(f.line, f.column, f.severity, f.message, f.hint) for f in found] == [(
        5, 1, "warning",
        "variable Text of the head question(U, Q, Text) is not bound by the pattern: the derived event carries an "
        "unbound argument, which stands for any value (a later pattern may bind it) and is written _ (null in JSON)",
        "if a value was meant, use Text in an event of the pattern, bind it in a where condition, or write the "
        "value (e.g. none) in its place")]
    negated = check_text("weak(D, M) <- (month(M) seq month(M1)) cnot busy(D, M1).")
    assert [(f.code, f.data) for f in negated if f.code == "unbound-head-variable"] == [
        ("unbound-head-variable", {"variable": "D"})]


@pytest.mark.parametrize("policy,answered", [("unrestricted", ["a", "b"]), ("recent", ["a", "b"]),
                                             ("chronological", ["a"])])
def test_an_occurrence_with_an_unbound_argument_is_consumed_and_derived_once_as_its_policy_says(
        policy: str, answered: list[str]) -> None:
    rules = ("d(X, Y) <- a(X).\nd(X, Y) <- d(X, Y) and c(X).\n"
             "answered(U, T) <- question(U, T) seq answer(U, T).\nquestion(U, T) <- ask(U).")
    with Engine.from_string(rules, policy=policy) as engine:
        detections = engine.emit_many([("a", [1], 1), ("c", [1], 2), ("ask", [1], 3), ("answer", [1, "a"], 4),
                                       ("answer", [1, "b"], 5)]).detections
    assert detections == [Detection("d", (1, None), 1, 1), Detection("d", (1, None), 1, 2),
                          Detection("question", (1, None), 3, 3)] + [
        Detection("answered", (1, t), 3, 4 + i) for i, t in enumerate(answered)]


@pytest.mark.parametrize("op", ["fnot", "cnot"])
def test_a_negated_or_blocks_by_either_branch_each_matching_its_own_variables(op: str) -> None:
    rules = f"score(U, Q) <- (answered(U, Q, D) seq next(U)) {op} (canceled(U, Q, D) or mfaa(U, Q))."
    stream = [("answered", [1, "q1", 5], 1), ("canceled", [1, "q1", 7], 2), ("next", [1], 3),
              ("answered", [1, "q2", 5], 4), ("canceled", [1, "q2", 5], 5), ("next", [1], 6),
              ("answered", [2, "q1", 1], 7), ("mfaa", [2, "q1"], 8), ("next", [2], 9)]
    with Engine.from_string(rules) as engine:
        assert engine.emit_many(stream).detections == [Detection("score", (1, "q1"), 1, 3),
                                                       Detection("score", (1, "q1"), 1, 6)]


def test_replay_refuses_an_event_with_an_unbound_argument_that_a_later_stage_uses(tmp_path: Path) -> None:
    from etalis_py.spark import replay
    rules = tmp_path / "open.etl"
    rules.write_text("q(S, T) <- reading(S, V) where V > 5.\nalarm(T) <- q(S, T) seq q(S2, T) where S \\= S2.\n")
    data = tmp_path / "r.csv"
    data.write_text("s,v,t\na,6,1\nb,7,2\n")
    with pytest.raises(RuleError) as info:
        replay(str(data), rules, event="reading", args=["s", "v"], time="t", partition_by="s")
    assert (info.value.line, info.value.column, info.value.message, info.value.hint) == (
        1, 1, "q/2 is derived with T unbound and used by a later stage of the replay, whose input is ground events",
        "run the rule file with etalis run, or write a value (e.g. none) in the place of T")


def test_a_predicate_a_file_beside_the_rules_defines_is_named_in_the_hint(tmp_path: Path) -> None:
    (tmp_path / "words.event").write_text("stop <- a(X) seq b(Z) where (contains(X, Z)).\n")
    (tmp_path / "test_01.db").write_text("% knowledge\ncontains(A, B) :- sub_atom(A, _, _, _, B).\n")
    (tmp_path / "other.P").write_text("unrelated(1).\n")
    assert [(f.line, f.data["predicate"], f.hint) for f in check_file(str(tmp_path / "words.event"))
            if f.code == "undefined-predicate"] == [(
        1, "contains/2",
        "test_01.db beside the rule file defines contains/2 (an original ETALIS test driver consults such a file): "
        "give it with --static test_01.db")]
    with Engine.from_file(tmp_path / "words.event", static=[tmp_path / "test_01.db"]) as engine:
        assert engine.emit_many([("a", ["aba"], 1), ("b", ["b"], 2)]).detections == [Detection("stop", (), 1, 2)]


def test_every_output_format_shows_an_unbound_argument(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = tmp_path / "u.events"
    events.write_text("event(ask(1), 1).\nevent(ask(f(2)), 2).\n")
    rules = tmp_path / "u.etl"
    rules.write_text("q(U, T, g(T, U)) <- ask(U).\n")
    assert main(["run", str(rules), "--events", str(events), "--quiet"]) == 0
    assert capsys.readouterr().out == (
        '{"event": "q", "args": [1, null, "g(_,1)"], "start": 1, "end": 1}\n'
        '{"event": "q", "args": ["f(2)", null, "g(_,f(2))"], "start": 2, "end": 2}\n')
    assert main(["run", str(rules), "--events", str(events), "--quiet", "--format", "csv"]) == 0
    assert capsys.readouterr().out == "event,arg1,arg2,arg3,start,end\nq,1,,\"g(_,1)\",1,1\nq,f(2),,\"g(_,f(2))\",2,2\n"
    assert main(["run", str(rules), "--events", str(events), "--quiet", "--format", "table"]) == 0
    assert capsys.readouterr().out.splitlines()[2:] == [
        "q      1, _, g(_,1)        01 Jan 1970 00:00:01  00:00:01  0s",
        "q      f(2), _, g(_,f(2))  01 Jan 1970 00:00:02  00:00:02  0s"]


def test_event_called_from_prolog_raises_an_event_fed_after_the_current_one() -> None:
    with Engine.from_file(HERE / "raise_events.etl") as engine:
        result = engine.emit_many([("measure", ["sensor1", 7], 1), ("measure", ["sensor2", 3], 2), ("reading", ["north", 3], 3)])
        assert result.detections == [
            Detection("seen", ("sensor1", 7), 1, 1),
            Detection("alert", ("north", 7), 1, 1),
            Detection("pair", (7,), 1, 1),
            Detection("alert", ("south", 7), 1, 1),
            Detection("seen", ("sensor2", 3), 2, 2),
            Detection("pair", (3,), 2, 3),
        ]
        assert result.warnings == []
        assert (engine.stats().accepted, engine.stats().raised) == (3, 3)


def test_an_event_that_raises_itself_stops_at_the_bound_with_a_warning() -> None:
    with Engine.from_string(":- max_age(10).\necho(X) <- ping(X) where event(ping(X)).\nnext <- a.") as engine:
        result = engine.emit_many([("ping", [1], 1), ("a", [], 2)])
        assert result.detections == [Detection("echo", (1,), 1, 1)] * 1001 + [Detection("next", (), 2, 2)]
        assert [(w.line, w.reason) for w in result.warnings] == [
            (1, "event/1 raised more than 1,000 events for one input event (does a rule raise an event that "
                "leads back to itself?): the rest are dropped"),
        ]
        assert engine.stats().raised == 1000


def test_event_given_no_event_is_a_warning_and_raises_nothing() -> None:
    with Engine.from_string(":- max_age(10).\nc(X) <- a(X) where event(b(_)).\nd <- b(_).") as engine:
        result = engine.emit_many([("a", [1], 1)])
        assert result.detections == [Detection("c", (1,), 1, 1)]
        assert [(w.line, w.reason) for w in result.warnings] == [
            (1, "event/1 was given b(_), which is not an event (a ground term with a name): nothing raised"),
        ]
        assert engine.stats().raised == 0


def test_etalis_run_counts_the_events_rules_raised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = tmp_path / "measures.jsonl"
    events.write_text('{"event": "measure", "args": ["sensor1", 7], "time": 1}\n')
    assert main(["run", str(HERE / "raise_events.etl"), "--events", str(events)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        '{"event": "seen", "args": ["sensor1", 7], "start": 1, "end": 1}',
        '{"event": "alert", "args": ["north", 7], "start": 1, "end": 1}',
        '{"event": "pair", "args": [7], "start": 1, "end": 1}',
        '{"event": "alert", "args": ["south", 7], "start": 1, "end": 1}',
    ]
    assert err.startswith("events read: 1, accepted: 1, raised by rules (event/1, timers): 2, rejected: 0, detections: 4,")


def test_a_windows_1252_rule_file_is_read_so_with_a_positioned_warning(tmp_path: Path) -> None:
    rules = tmp_path / "latin.etl"
    rules.write_bytes("% answers 1:00 \u2013 5:00\nh(\"caf\xe9\", X) <- a(X) seq b(X).\n".encode("cp1252"))
    with pytest.warns(EtalisWarning) as caught:
        engine = Engine.from_file(rules, max_age=10)
    assert [str(w.message) for w in caught] == [
        f"{rules}:1:16: the file is not UTF-8 (from here): it is read as Windows-1252, as original ETALIS reads "
        "source files"]
    with engine:
        assert engine.emit_many([("a", [1], 1), ("b", [1], 2)]).detections == [Detection("h", ("caf\xe9", 1), 1, 2)]
        assert [(f.code, f.line, f.column, f.hint) for f in engine.findings()] == [
            ("not-utf8", 1, 16, "save the file as UTF-8 text if it is not Windows-1252 or Latin-1")]


def test_an_error_in_a_windows_1252_rule_file_says_how_the_file_was_read(tmp_path: Path) -> None:
    rules = tmp_path / "latin.etl"
    rules.write_bytes("% caf\xe9\nc <- a seq .\n".encode("cp1252"))
    with pytest.raises(RuleError) as info:
        Engine.from_file(rules)
    assert (info.value.line, info.value.column, info.value.message, info.value.hint) == (
        2, 11, "syntax error: unbalanced operator",
        "check the operators and parentheses, and end each clause with a full stop (the file is not UTF-8 from "
        "line 1 column 6 on, and is read as Windows-1252)")


@pytest.mark.parametrize("data, line, column, byte", [
    (b"h <- a seq b. % \xe9 and \xc3\xa9\n", 1, 17, 0xE9),     # UTF-8 with one bad byte: damaged, not Windows-1252
    (b"h <- a seq b. % \xe9\x01\n", 1, 17, 0xE9),              # a control character: not text
    (b"h <- a seq b. % \x81\n", 1, 17, 0x81),                   # undefined in Windows-1252
    (b"\xef\xbb\xbfh <- caf\xe9.\n", 1, 9, 0xE9),              # a UTF-8 byte order mark
])
def test_damaged_utf8_and_binary_data_stay_refused(tmp_path: Path, data: bytes, line: int, column: int,
                                                   byte: int) -> None:
    rules = tmp_path / "bad.etl"
    rules.write_bytes(data)
    with pytest.raises(RuleError) as info:
        Engine.from_file(rules)
    assert (info.value.line, info.value.column, info.value.message) == (
        line, column, f"rule file is not UTF-8: byte 0x{byte:X} at line {line} column {column}")


def test_etalis_named_counters_count_per_name_from_zero_in_an_untrusted_file() -> None:
    rules = ("counted(X, N) <- a(X) where (incCounter(seen(X)), counter(seen(X), N)).\n"
             "reset(X) <- r(X) where resetCounter(seen(X)).\n"
             "untouched(N) <- u where counter(never, N).\n")
    with Engine.from_string(rules) as engine:
        result = engine.emit_many([("a", [1], 1), ("a", [1], 2), ("a", [2], 3), ("r", [1], 4), ("a", [1], 5), ("u", [], 6)])
        assert result.detections == [
            Detection("counted", (1, 1), 1, 1),
            Detection("counted", (1, 2), 2, 2),
            Detection("counted", (2, 1), 3, 3),
            Detection("reset", (1,), 4, 4),
            Detection("counted", (1, 1), 5, 5),
            Detection("untouched", (0,), 6, 6),
        ]
        assert result.warnings == []


def test_a_file_that_declares_the_counters_facts_itself_keeps_its_declaration() -> None:
    rules = ":- dynamic(counter_internal/2).\ncounter_internal(start, 5).\nc(N) <- a where (incCounter(start), counter(start, N))."
    with Engine.from_string(rules) as engine:
        assert engine.emit("a", at=1) == [Detection("c", (6,), 1, 1)]


def test_add_sec_datime_adds_seconds_to_a_number_or_to_an_etalis_datime() -> None:
    rules = "later(T2) <- due(T) where addSec_Datime(90, T, T2)."
    with Engine.from_string(rules) as engine:
        result = engine.feed_text("event(due(datime(2009, 12, 31, 23, 59, 0)), 1).\nevent(due(100), 2).\n")
        assert result.detection_lines.splitlines() == [
            '{"event": "later", "args": ["datime(2010,1,1,0,0,30)"], "start": 1, "end": 1}',
            '{"event": "later", "args": [190], "start": 2, "end": 2}',
        ]
