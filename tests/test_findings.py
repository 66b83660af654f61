"""`etalis check`: the findings of rule files, exactly (docs/language.md,
"Checking rules")."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from etalis_py import Detection, Engine, RuleError
from etalis_py.errors import EtalisWarning
from etalis_py.rules.findings import Finding, check_file, check_text

ETALIS = [sys.executable, "-m", "etalis_py.cli"]
ROOT = Path(__file__).resolve().parents[1]
MEMORY_HINT = ("add a window to the pattern, e.g. (...) within hours(1), or :- max_age(D). to the file "
               "(--max-age D when running)")


def etalis(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ETALIS, *map(str, args)], capture_output=True, text=True, timeout=120)


def found(text: str, **options: Any) -> list[tuple[str, str, int, int, str]]:
    return [(f.severity, f.code, f.line, f.column, f.message) for f in check_text(text, "r.etl", **options)]


def test_a_colon_dash_clause_with_event_operators_is_an_error() -> None:
    # a `:-` written for a `<-` is no event rule: the file has none, and says so
    fs = check_text("alarm(R) :- hot(R) seq smoke(R).\n", "r.etl")
    assert [(f.severity, f.code, f.line, f.column, f.message, f.hint, dict(f.data)) for f in fs] == [
        ("error", "event-operators-in-static-clause", 1, 1,
         "the static clause alarm/1 uses the event operator seq: a Prolog clause (`:-` or `=>`) is no event "
         "rule and never sees an event", "write `<-` for an event rule: Head <- Pattern.",
         {"head": "alarm/1", "operators": ["seq"]}),
        ("warning", "no-event-rules", 1, 1, "the file has no event rules, so it detects nothing",
         "an event rule is written Head <- Pattern.", {}),
    ]
    # a static clause of plain Prolog is fine, also under control constructs
    assert found("ok(X) :- X > 1, ( X < 5 -> true ; fail ).\nc <- (a seq b) within 5.\n") == []
    assert found("c <- (a seq b) within 5.\nbad :- \\+ (x and y), (p ; q within 3).\n") == [
        ("error", "event-operators-in-static-clause", 2, 1,
         "the static clause bad/0 uses the event operators and, within: a Prolog clause (`:-` or `=>`) is "
         "no event rule and never sees an event")]
    # SWI-Prolog's => (single sided unification) is no event rule either
    for arrow in ("=>", ", R > 1 =>"):      # Head => Body and Head, Guard => Body
        assert found(f"alarm(R) {arrow} hot(R) seq smoke(R).\nc <- (a seq b) within 5.\n") == [
            ("error", "event-operators-in-static-clause", 1, 1,
             "the static clause alarm/1 uses the event operator seq: a Prolog clause (`:-` or `=>`) is no event "
             "rule and never sees an event")]


def test_a_typo_with_inputs_declared_is_an_unknown_event() -> None:
    fs = check_text(":- input([hot/1, smoke/1]).\nalarm(R) <- (hot(R) seq smok(R)) within 60.\n", "r.etl")
    assert [(f.severity, f.code, f.line, f.message, f.hint, dict(f.data)) for f in fs] == [
        ("error", "unknown-event", 2,
         "no rule derives smok/1 and it is not declared as input (line 2): the pattern can never match",
         "did you mean smoke/1?", {"event": "smok/1", "suggestions": ["smoke/1"]})]
    # a name near nothing: the hint says how to declare it
    [f] = check_text(":- input(hot/1).\nalarm(R) <- (hot(R) seq fire(R)) within 60.\n", "r.etl")
    assert (f.code, f.hint) == ("unknown-event", "declare it as an input event: :- input(fire/1).")
    # declared and derived events are known
    assert found(":- input(hot/1).\n:- input(smoke/1).\nalarm(R) <- (hot(R) seq smoke(R)) within 60.\n"
                 "big(R) <- (alarm(R) seq alarm(R)) within 60.\n") == []


def test_a_typo_without_inputs_declared_is_a_similar_name_warning() -> None:
    fs = check_text("alarm(R) <- (hot(R) seq smoke(R)) within 60.\nfire(R) <- (hot(R) seq smok(R)) within 60.\n",
                    "r.etl")
    assert [(f.severity, f.code, f.line, f.message, f.hint) for f in fs] == [
        ("warning", "similar-event-name", 2,
         "no rule derives smok/1, so it must come from the input (line 2); did you mean smoke/1?",
         "if smok/1 is an input event, declare the inputs: :- input([...]).")]
    # near a derived event; names far apart (b, b2: ratio 0.67) are not suspect
    assert found("alarms(R) <- hot(R).\nbig(R) <- (alarm(R) seq hot(R)) within 9.\n") == [
        ("warning", "similar-event-name", 2, 1,
         "no rule derives alarm/1, so it must come from the input (line 2); did you mean alarms/1?")]
    assert found("b2 <- b.\nc <- (a seq b2) within 5.\n") == []


def test_a_cnot_without_a_window_grows_without_bound() -> None:
    # without a window every a(K) waits for b(K), and every x(K) is kept, forever
    [f] = check_text("c(K) <- (a(K) seq b(K)) cnot x(K).\n", "r.etl")
    assert (f.severity, f.code, f.line, f.column, f.hint) == ("warning", "unbounded-memory", 1, 1, MEMORY_HINT)
    assert f.message == ("no window bounds this rule's pending goals: every `a(K)` waits for `b(K)` (one pending "
                         "goal per occurrence, forever); every `x(K)` is kept to block `a(K) seq b(K)` "
                         "(each occurrence, forever)")
    # a window, a file's max_age or the engine's bounds it
    assert found("c(K) <- ((a(K) seq b(K)) cnot x(K)) within 60.\n") == []
    assert found(":- max_age(60).\nc(K) <- (a(K) seq b(K)) cnot x(K).\n") == []
    assert found("c(K) <- (a(K) seq b(K)) cnot x(K).\n", max_age=60) == []


def test_unbounded_memory_says_how_each_policy_grows() -> None:
    assert found(":- policy(recent).\nc(K) <- a(K) and b(K, _).\nd <- a(_) seq e.\n") == [
        ("warning", "unbounded-memory", 2, 1,
         "no window bounds this rule's pending goals: every `a(K)` and every `b(K, _)` waits for the other "
         "(the newest per value of K, for every value ever seen)")]     # d: recent keeps one `a`
    assert found(":- policy(chronological).\nc <- a fnot x.\nd <- b after e.\n") == [
        ("warning", "unbounded-memory", 2, 1,
         "no window bounds this rule's pending goals: every `x` is kept to block `a` (each occurrence, forever)"),
        ("warning", "unbounded-memory", 3, 1,
         "no window bounds this rule's pending goals: every `e` waits for `b` (each until a match consumes it; "
         "those never matched stay forever)")]
    # a window inside bounds only its part
    assert found("c <- ((a seq b) within 5) seq d.\n") == [
        ("warning", "unbounded-memory", 1, 1,
         "no window bounds this rule's pending goals: every `a seq b within 5` waits for `d` "
         "(one pending goal per occurrence, forever)")]


def test_unbounded_memory_writes_lists_in_list_syntax() -> None:
    assert found("c(X) <- a([1, 2|X]) seq b([x, [y]]).\n") == [
        ("warning", "unbounded-memory", 1, 1,
         "no window bounds this rule's pending goals: every `a([1, 2|X])` waits for `b([x, [y]])` "
         "(one pending goal per occurrence, forever)")]


SINGLETON = "variable {} occurs only once in this rule: it matches any value and joins nothing"
SINGLETON_HINT = ("if it is meant to be another variable of the rule, correct its name; if any value will do, "
                  "write _ or _{}")


def test_a_where_condition_on_an_unbound_variable() -> None:
    fs = check_text("h(X) <- a(Y) where X > 1.\n", "r.etl")
    assert [(f.severity, f.code, f.line, f.column, f.message, f.hint, dict(f.data)) for f in fs] == [
        ("warning", "unbound-where-variable", 1, 1,
         "`X>1` in a where condition uses X, which is unbound when it runs (bound neither by the pattern nor "
         "by an earlier goal): the comparison raises an error and the occurrence is dropped",
         "bind X in an event of the pattern or an earlier goal of the condition, or correct the variable's name",
         {"goal": "X>1", "variables": ["X"]}),
        ("warning", "singleton-variable", 1, 11, SINGLETON.format("Y"), SINGLETON_HINT.format("Y"),
         {"variable": "Y"})]
    # bound by the pattern, or by an earlier goal of the condition
    assert found("h(Z) <- a(Y) where (W is Y * 2, start(T), Z is W + T, Z > 1).\n") == []
    assert found("h(X) <- a(X) where (X > 1 ; Y < 2).\n")[0][4].startswith("`Y<2` in a where condition uses Y,")


def test_cycles_are_told_apart_by_how_they_advance_in_time() -> None:
    assert found("p(X) <- (p(X) seq a(X)) within 9.\nq(N1) <- (q(N) and b) within 9 where N1 is N + 1.\n") == [
        ("info", "cycle", 1, 1,
         "recursion: p/1 -> p/1 (line 1); each round advances in time (the rule at line 1 waits for a later event)"),
        ("warning", "guarded-cycle", 2, 1,
         "recursion at the same time: q/1 -> q/1 (line 2); only the where condition of line 2 can stop it")]
    fs = check_text("x <- (y seq a) within 5.\ny <- x or b.\n", "r.etl")
    assert [(f.code, f.message, dict(f.data)) for f in fs] == [
        ("cycle", "recursion: x/0 -> y/0 (line 2) -> x/0 (line 1); each round advances in time (the rule at "
         "line 1 waits for a later event)", {"cycle": ["x/0", "y/0"], "lines": [2, 1], "kind": "waiting"})]
    [f] = check_text("p <- (p and a) within 5.\n", "r.etl")
    assert (f.severity, f.code, f.message, dict(f.data)) == (
        "info", "cycle",
        "recursion at the same time: p/0 -> p/0 (line 1); an occurrence identical to one already derived is "
        "dropped (each is derived once), so it ends", {"cycle": ["p/0"], "lines": [1], "kind": "repeating"})
    [f] = check_text("p(S) <- aggregate(sum(X), p(X) and a, count(2), S) within 5.\n", "r.etl")
    assert (f.severity, f.code, f.message, f.hint) == (
        "error", "endless-cycle",
        "these rules derive p/1 from itself at the same time, forever, through an aggregate: p/1 -> p/1 (line 1)",
        "put the recursive event on the left of seq (it must occur before), or guard the recursion with a "
        "where condition")


def test_negation_over_an_event_of_the_same_stratum_is_a_race() -> None:
    fs = check_text("b2 <- b.\nc <- ((a seq b) cnot b2) within 5.\n", "r.etl")
    assert [(f.severity, f.code, f.line, f.message, dict(f.data)) for f in fs] == [
        ("warning", "negation-race", 2,
         "the negated b2/0 is derived at stratum 1, not below this rule's c/0 (stratum 1): when one event leads "
         "to both, whether b2/0 blocks depends on the order in which the engine derives them",
         {"event": "b2/0", "strata": {"b2/0": 1, "c/0": 1}})]
    # a blocker of a lower stratum is fine (examples/blizzard/unbroken.etl)
    assert found("b2 <- b.\nb3 <- b2.\nc <- ((b3 seq b3) fnot b2) within 5.\n") == []


def test_derived_events_nothing_uses_nor_reports() -> None:
    assert found(":- print_events([c/0]).\nd <- a.\nc <- (a seq b) within 5.\n") == [
        ("warning", "unused-event", 2, 1,
         "d/0 is derived (line 2) but no rule uses it and it is not reported (print_events): "
         "its rules do work for nothing")]
    assert found("d <- a.\nc <- (a seq b) within 5.\n") == []        # every head is reported


def test_one_name_with_two_arities() -> None:
    assert found("c <- (a(1) seq b) within 5.\nd <- (a seq b) within 5.\n") == [
        ("warning", "arity-clash", 2, 1,
         "a is used with 2 arities: a/1 (line 1), a/0 (line 2); each is a different event")]


def test_the_input_directive_is_checked() -> None:
    with pytest.raises(RuleError) as e:
        check_text("c <- a.\n:- input(foo).\n", "r.etl")
    assert (e.value.line, e.value.message, e.value.hint) == (
        2, "input takes an event Name/Arity or a list of them",
        "write e.g. :- input(reading/3). or :- input([hot/1, smoke/1]).")
    # an engine accepts it and runs as without it
    with Engine.from_string(":- input(a/1).\nc(X) <- a(X).\n") as engine:
        assert [(d.event, d.args) for d in engine.emit("a", 1, at=1)] == [("c", (1,))]


def test_engine_findings_and_callbacks_for_unreported_events(tmp_path: Path) -> None:
    text = "c(K) <- (a(K) seq b(K)) cnot x(K).\n"
    with Engine.from_string(text, source="r.etl") as engine:
        assert engine.findings() == check_text(text, "r.etl")
        with pytest.warns(EtalisWarning, match=re.escape(
                "Engine.on('x'): no rule reports 'x' (reported: c), so the callback is never called")):
            engine.on("x", print)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            engine.on("c", print)
            engine.on(None, print)
        # rules added (or removed) change what is reported
        engine.add_rules("lbl : y(K) <- x(K).\n")
        assert engine.printed == ["c/1", "y/1"]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            engine.on("y", print)
        engine.remove_rule("lbl")
        assert engine.printed == ["c/1"]
    with Engine.from_string(text, max_age=5) as engine:
        assert engine.findings() == []
    path = tmp_path / "r.etl"
    path.write_text(text)
    with Engine.from_file(path) as engine:
        assert [f.code for f in engine.findings()] == ["unbounded-memory"]
        assert engine.findings()[0].file == str(path)


def test_check_text_json_dot_and_exit_codes(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c(K) <- (a(K) seq b(K)) cnot x(K).\nrec(X) <- (rec(X) seq a(X)) within 9.\n")
    r = etalis("check", rules, "--dot", tmp_path / "g.dot")
    assert r.returncode == 0
    assert r.stdout.splitlines() == [
        f"{rules}:1:1: warning: no window bounds this rule's pending goals: every `a(K)` waits for `b(K)` (one "
        "pending goal per occurrence, forever); every `x(K)` is kept to block `a(K) seq b(K)` (each occurrence, "
        "forever) [unbounded-memory]",
        f"  hint: {MEMORY_HINT}",
        f"{rules}:2:1: info: recursion: rec/1 -> rec/1 (line 2); each round advances in time (the rule at line 2 "
        "waits for a later event) [cycle]",
        f"{rules}: 1 warning, 1 info: 2 rules, 2 binary goals, policy unrestricted, reports c/1, rec/1",
    ]
    dot = (tmp_path / "g.dot").read_text()
    edges = re.findall(r'^  "([^"]+)" -> "([^"]+)" \[(.*)\];$', dot, re.M)
    assert edges == [("a/1", "c/1", 'label="line 1"'), ("b/1", "c/1", 'label="line 1"'),
                     ("x/1", "c/1", 'label="line 1", style=dashed'),
                     ("rec/1", "rec/1", 'label="line 2", color=red'), ("a/1", "rec/1", 'label="line 2"')]
    assert re.findall(r'^  "([^"]+)" \[shape=(\w+)\];$', dot, re.M) == [
        ("a/1", "ellipse"), ("b/1", "ellipse"), ("c/1", "box"), ("rec/1", "box"), ("x/1", "ellipse")]
    assert dot.startswith("digraph rules {\n") and dot.endswith("}\n")
    assert etalis("check", rules, "--strict").returncode == 1
    r = etalis("check", rules, "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["summary"] == {"error": 0, "warning": 1, "info": 1, "rules": 2, "goals": 2,
                              "policy": "unrestricted", "reports": ["c/1", "rec/1"]}
    assert [(f["severity"], f["code"], f["line"], f["column"]) for f in doc["findings"]] == [
        ("warning", "unbounded-memory", 1, 1), ("info", "cycle", 2, 1)]
    assert doc["findings"][1]["data"] == {"cycle": ["rec/1"], "lines": [2], "kind": "waiting"}
    # errors: exit 2; the compiler's refusal of an endless cycle is not said twice
    rules.write_text("p(S) <- aggregate(sum(X), p(X) and a, count(2), S) within 5.\n")
    r = etalis("check", rules)
    assert (r.returncode, r.stderr) == (2, "")
    assert r.stdout.splitlines()[-1] == f"{rules}: 1 error"
    # a reader error: positioned on stderr as before, or a rule-error finding in JSON
    rules.write_text("c <- a seq.\n")
    r = etalis("check", rules, "--format", "json")
    assert r.returncode == 2
    [f] = json.loads(r.stdout)["findings"]
    assert (f["severity"], f["code"], f["line"]) == ("error", "rule-error", 1)
    assert etalis("check", rules).stderr.startswith(f"{rules}:1:")


def test_run_prints_the_warnings_once_unless_quiet(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("h(X) <- a(Y) where X > 1.\n")
    events = tmp_path / "e.jsonl"
    events.write_text('{"event": "a", "args": [1], "time": 1}\n')
    err = etalis("run", rules, "--events", events).stderr.splitlines()
    assert err[0] == (f"{rules}:1:1: warning: `X>1` in a where condition uses X, which is unbound when it runs "
                      "(bound neither by the pattern nor by an earlier goal): the comparison raises an error and "
                      "the occurrence is dropped [unbound-where-variable]")
    assert err[2] == f"{rules}:1:11: warning: {SINGLETON.format('Y')} [singleton-variable]"
    assert err[4].startswith(f"{events}:1: warning: ")       # and so it does, at run time
    # --quiet: no per-line reports, of the rules or the events; the summary only
    assert etalis("run", rules, "--events", events, "--quiet").stderr.splitlines()[0].startswith("events read: 1,")


# The examples with findings, exactly; each warning is explained in the example's README.
# Every other example must have none.
EXAMPLES = {
    "blizzard/blizzard.etl": [("warning", "unbounded-memory", 15), ("info", "cycle", 15)],
    "blizzard/settling.etl": [("info", "cycle", 18)],
    "wind_area/wind_area.etl": [("info", "cycle", 33)],
}


def test_every_example_file_is_checked() -> None:
    files = sorted(str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").rglob("*.etl"))
    assert set(EXAMPLES) <= set(files) and len(files) >= 8
    got = {name: [(f.severity, f.code, f.line) for f in check_file(str(ROOT / "examples" / name))]
           for name in files}
    assert got == {name: EXAMPLES.get(name, []) for name in files}


def test_every_rule_file_of_the_tests_is_clean() -> None:
    # tests/rules_bad/ holds files the reader must refuse: they are its tests, not rules
    files = [p for p in sorted((ROOT / "tests").rglob("*.etl")) if "rules_bad" not in p.parts]
    # a file of static knowledge beside a rule file of the same name is given with it, as --static
    got = {str(p): [f.text() for f in check_file(str(p), static=[str(db) for db in [p.with_suffix(".db")] if db.exists()])
                    if f.severity != "info"] for p in files}
    assert got == {str(p): [] for p in files}


def test_replay_prints_the_warnings_before_it_starts(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("h(X) <- a(Y) where X > 1.\n")
    # a bad --conf stops replay before Spark starts, after the rules' warnings
    r = etalis("replay", rules, "--events", tmp_path / "none.csv", "--event", "a", "--args", "y", "--time", "t",
               "--conf", "bad")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        f"{rules}:1:1: warning: `X>1` in a where condition uses X, which is unbound when it runs (bound neither by "
        "the pattern nor by an earlier goal): the comparison raises an error and the occurrence is dropped "
        "[unbound-where-variable]",
        "  hint: bind X in an event of the pattern or an earlier goal of the condition, or correct the variable's name",
        f"{rules}:1:11: warning: {SINGLETON.format('Y')} [singleton-variable]",
        f"  hint: {SINGLETON_HINT.format('Y')}",
        "etalis: --conf bad: give KEY=VALUE",
    ]


def test_a_pattern_thousands_of_operators_deep_is_checked_without_its_tree() -> None:
    # a generated 3,000-operand seq: its events are known, its memory
    # warning names the start of its text (the JSON tree would be 3,000 deep)
    text = "h <- " + " seq ".join(f"a{i}" for i in range(3000)) + ".\n"
    start = " seq ".join(f"a{i}" for i in range(40))[:200]
    assert found(text) == [
        ("warning", "unbounded-memory", 1, 1,
         f"no window bounds this rule's pending goals: `{start} ...`, a pattern 2999 operators deep, "
         "was not analysed: without a window its pending goals may grow")]
    assert found(f"{text[:-2]} within 60.\n") == []


def test_near_names_among_a_thousand_generated_rules() -> None:
    # a chain of 1,000 rules is checked (in linear time: near names come
    # from an index, not from all pairs), and a typo among them is found
    rules = ["e0 <- (a seq b) within 5."] + [f"e{i} <- (e{i - 1} seq x) within 5." for i in range(1, 1000)]
    text = "\n".join(rules) + "\n:- print_events([e999/0]).\n"
    assert found(text) == []
    typo = text + "w <- (reading seq readingz) within 5.\nv <- (reading seq reading) within 5.\n"
    assert [(c, m) for _, c, _, _, m in found(typo + ":- print_events([e999/0, w/0, v/0]).\n")] == [
        ("similar-event-name",
         "no rule derives readingz/0, so it must come from the input (line 1002); did you mean reading/0?")]


def test_a_cycle_that_widens_the_interval_is_told_as_such() -> None:
    assert found("h1 <- (b(_) seq h1) within 5.\nh2(X) <- ((b(_) within 3) seq h2(X)) within 5.\n") == [
        ("info", "cycle", 1, 1, "recursion: h1/0 -> h1/0 (line 1); each round widens the interval (the rule at "
         "line 1 takes an earlier occurrence)"),
        ("info", "cycle", 2, 1, "recursion: h2/1 -> h2/1 (line 2); each round widens the interval (the rule at "
         "line 2 takes an earlier occurrence)")]


def test_under_recent_a_filtered_sequence_keeps_every_initiator() -> None:
    assert found(":- policy(recent).\nraise(X, Y) <- bid(X) seq bid2(Y) where Y > X.\nlast <- a seq b.\n") == [
        ("warning", "unbounded-memory", 2, 1, "no window bounds this rule's pending goals: every `bid(X)` waits "
         "for `bid2(Y)` (one pending goal per occurrence, forever)")]


def test_the_hidden_rules_of_kleene_plus_have_no_unbound_head_warning() -> None:
    text = "h(St, Ts) <- (t(St, T0) seq t(St, Ts)+) within 30 where T0 > 0.\nrun(X) <- (temp(X)+ seq stop) within 60.\n"
    assert check_text(text, "r.etl") == []


NEVER_HINT = "correct the condition (a comparison, a bound or a value may be mistyped)"


@pytest.mark.parametrize("rule,message", [
    ("c(X) <- a(X) where X > 5, X < 3.",
     "the where condition `X>5, X<3` can never hold: no number X satisfies `X>5` and `X<3`"),
    ("c(X) <- a(X) where X > 1, X =< 1.",
     "the where condition `X>1, X=<1` can never hold: no number X satisfies `X>1` and `X=<1`"),
    ("c(X) <- a(X) where 10 < X, X < 10.",
     "the where condition `10<X, X<10` can never hold: no number X satisfies `10<X` and `X<10`"),
    ("c(X) <- a(X) where X =:= 2, X > 2.",
     "the where condition `X=:=2, X>2` can never hold: no number X satisfies `X=:=2` and `X>2`"),
    ("c(X) <- a(X) where X =:= 2, X =\\= 2.",
     "the where condition `X=:=2, X=\\=2` can never hold: no number X satisfies `X=:=2` and `X=\\=2`"),
    ("c(X) <- a(X) where X = high, X > 1.",
     "the where condition `X=high, X>1` can never hold: X is high, which is not a number, but `X>1` needs one"),
    ("c(Y) <- a(X) where X == \"text\", Y is X * 2.",
     "the where condition `X==\"text\", Y is X*2` can never hold: X is \"text\", which is not a number, "
     "but `Y is X*2` needs one"),
    ("c <- a where 1 > 2.", "the where condition `1>2` can never hold: `1>2` is false"),
    ("c <- a where true, fail.", "the where condition `true, fail` can never hold: `fail` never succeeds"),
    ("c(X) <- (a(X) where X > 5, X < 3) seq b.",
     "the where condition `X>5, X<3` can never hold: no number X satisfies `X>5` and `X<3`"),
])
def test_a_where_condition_that_can_never_hold_is_a_warning(rule: str, message: str) -> None:
    fs = [f for f in check_text(rule + "\n", "r.etl") if f.code != "unbounded-memory"]
    assert [(f.severity, f.code, f.line, f.column, f.message, f.hint) for f in fs] == [
        ("warning", "where-never-holds", 1, 1, message + ", so the rule never detects anything", NEVER_HINT)]


@pytest.mark.parametrize("rule", [
    "c(X) <- a(X) where X >= 1, X =< 1.",             # one value
    "c(X) <- a(X) where X > 1, X < 2.",               # a real number between
    "c(X) <- a(X) where X = pi, X > 1.",              # pi is arithmetic
    "c(X) <- a(X) where X = 1 + 2, X > 1.",
    "c(X) <- a(X) where (X > 5 ; X < 3).",            # a disjunction is not a conjunction
    "c(X) <- a(X) where X > 5, Y is X - 10, Y < 0.",  # two variables
])
def test_a_where_condition_that_can_hold_is_no_finding(rule: str) -> None:
    assert [f.code for f in check_text(rule + "\n", "r.etl")] == []


def test_a_rule_written_twice_is_a_warning() -> None:
    fs = check_text("c(X) <- a(X).\nd <- b.\nc(X) <- a(X).\nc(Y) <- a(Y).\n", "r.etl")
    assert [(f.severity, f.code, f.line, f.column, f.message, f.hint) for f in fs] == [
        ("warning", "duplicate-rule", 3, 1,
         "this rule is the rule of line 1 again: each of its detections is derived twice",
         "remove one of the two rules"),
        ("warning", "duplicate-rule", 4, 1,
         "this rule is the rule of line 1 again: each of its detections is derived twice",
         "remove one of the two rules")]


def test_a_rule_with_operators_written_twice_with_other_variable_names_is_a_warning() -> None:
    # what the reader says beside the rule tree (each part's source text) does not tell the rules apart
    fs = check_text("c(X) <- (a(X) seq b(X)) within 5.\nc(Y) <- (a(Y) seq b(Y)) within 5.\n", "r.etl")
    assert [(f.severity, f.code, f.line, f.column, f.message, f.hint) for f in fs] == [
        ("warning", "duplicate-rule", 2, 1,
         "this rule is the rule of line 1 again: each of its detections is derived twice",
         "remove one of the two rules")]


def test_an_etalis_run_without_a_window_keeps_a_run_per_start() -> None:
    # the engine's reader says which rules derive the hidden event of an ETALIS run (the rules JSON's "run")
    fs = check_text(":- policy(continuous).\nh(X) <- s(X) seq p(X) star_times.\n", "r.etl")
    assert [(f.severity, f.code, f.line, f.column, f.message) for f in fs] == [
        ("warning", "unbounded-memory", 2, 1,
         "no window bounds this rule's pending goals: every start of the star_times keeps a run of its own "
         "(one per start, forever), which each later event extends")]


def test_a_where_of_a_later_part_using_a_variable_of_an_earlier_one_is_refused_by_check_and_run(tmp_path: Path) -> None:
    # The condition runs on b's bindings, where Y is unbound: the rule is
    # refused where the condition is written, by both commands alike.
    rules = tmp_path / "later.etl"
    rules.write_text("d(Y) <- a(Y) seq (b(Z) where Z > Y).\n", encoding="utf-8")
    error = [f"{rules}:1:30: error: `Z>Y` in a where condition reads Y, which only an event outside the pattern "
             "it filters binds: a condition runs on that pattern's own bindings",
             "  hint: put the condition on a pattern that binds every variable it reads: (a(X) seq b(Y)) where "
             "Y > X, not a(X) seq (b(Y) where Y > X)"]
    check = etalis("check", rules)
    assert (check.returncode, check.stdout, check.stderr.splitlines()) == (2, "", error)
    events = tmp_path / "ab.events"
    events.write_text("a(1).\nb(2).\n", encoding="utf-8")
    run = etalis("run", rules, "--events", events, "--quiet")
    assert (run.returncode, run.stdout, run.stderr.splitlines()) == (2, "", error)


def test_a_text_where_every_rule_deriving_the_event_makes_a_number_is_a_type_clash() -> None:
    rules = ("c(X) <- a(X) where X > 1.\n"
             "d <- c(foo) seq e.\n"
             "f <- c(\"text\").\n"
             "g <- c(3).\n"                                 # a number: fine
             "g <- c(pi).\n"                                # arithmetic takes pi for a number
             "h(X, 5) <- b(X) where X < 0.\n"
             "h(Y, Z) <- k(Y, Z) where Z >= 1, Y =:= 2.\n"
             "i <- h(low, high).\n"
             "j(X) <- b(X).\n"
             "j(1) <- k(_, _).\n"
             "m <- j(text).\n")                             # line 9 gives any value
    fs = [f for f in check_text(rules, "r.etl") if f.code == "type-clash"]
    assert [(f.line, f.column, f.message, f.hint, dict(f.data)) for f in fs] == [
        (2, 1, "c(foo) can never match: its argument 1 is foo, but the rule deriving c/1 (line 1) makes it a number",
         "give a number here, or correct the rule deriving c/1", {"event": "c/1", "argument": 1}),
        (3, 1, "c(\"text\") can never match: its argument 1 is \"text\", but the rule deriving c/1 (line 1) makes it "
         "a number", "give a number here, or correct the rule deriving c/1", {"event": "c/1", "argument": 1}),
        (8, 1, "h(low, high) can never match: its argument 1 is low, but the rules deriving h/2 (lines 6, 7) make it "
         "a number", "give a number here, or correct the rules deriving h/2", {"event": "h/2", "argument": 1}),
        (8, 1, "h(low, high) can never match: its argument 2 is high, but the rules deriving h/2 (lines 6, 7) make it "
         "a number", "give a number here, or correct the rules deriving h/2", {"event": "h/2", "argument": 2})]


def test_an_input_declared_event_is_no_type_clash() -> None:
    assert [f.code for f in check_text(":- input([a/1, c/1]).\nc(X) <- a(X) where X > 1.\nd <- c(foo).\n", "r.etl")
            if f.code == "type-clash"] == []


NEVER_FIRES = ("this rule never fires: its pattern needs {}, of which no occurrence can ever be derived: every rule "
               "deriving it ({}) needs an earlier occurrence of it, or of another event that never occurs")


def test_a_recursion_without_a_base_rule_never_fires() -> None:
    # x is derived only from y, y only from x: with the inputs declared, no
    # occurrence of either can ever be derived, nor of z, which needs x
    fs = check_text(":- input([b/0, c/0]).\nx <- (y and b) within 5.\ny <- (x seq c) within 5.\nz <- x.\n", "r.etl")
    assert [(f.severity, f.code, f.line, f.column, f.message, f.hint, dict(f.data)) for f in fs
            if f.code == "never-fires"] == [
        ("warning", "never-fires", 2, 1, NEVER_FIRES.format("y/0", "line 3"),
         "add a rule that derives y/0 from input events alone (the base case of the recursion), or declare it "
         "input: :- input([y/0]).", {"events": ["y/0"]}),
        ("warning", "never-fires", 3, 1, NEVER_FIRES.format("x/0", "line 2"),
         "add a rule that derives x/0 from input events alone (the base case of the recursion), or declare it "
         "input: :- input([x/0]).", {"events": ["x/0"]}),
        ("warning", "never-fires", 4, 1, NEVER_FIRES.format("x/0", "line 2"),
         "add a rule that derives x/0 from input events alone (the base case of the recursion), or declare it "
         "input: :- input([x/0]).", {"events": ["x/0"]})]
    # and it is so: the engine derives nothing from any of its inputs
    with Engine.from_string(":- input([b/0, c/0]).\nx <- (y and b) within 5.\ny <- (x seq c) within 5.\nz <- x.\n") \
            as engine:
        assert [engine.emit(e, at=t) for t, e in enumerate(["b", "c", "b", "c"], start=1)] == [[], [], [], []]


def test_a_self_recursion_without_a_base_rule_never_fires() -> None:
    assert found(":- input([a/1]).\ncount(N1) <- (count(N) seq a(_)) within 9 where N1 is N + 1.\n") == [
        ("warning", "never-fires", 2, 1, NEVER_FIRES.format("count/1", "line 2")),
        ("info", "cycle", 2, 1, "recursion: count/1 -> count/1 (line 2); each round advances in time "
                                "(the rule at line 2 waits for a later event)")]


@pytest.mark.parametrize("rules,never", [
    # a base rule starts the recursion
    (":- input([a/1]).\ncount(0) <- a(0).\ncount(N1) <- (count(N) seq a(_)) within 9 where N1 is N + 1.\n", []),
    # the event is also an input
    (":- input([a/1, count/1]).\ncount(N1) <- (count(N) seq a(_)) within 9 where N1 is N + 1.\n", []),
    # or needs one side; what cnot negates need not occur: only x's own rule never fires
    (":- input([a/0, b/0]).\nx <- (x seq a) within 9.\nc <- x or a.\nd <- ((a seq b) cnot x) within 9.\n", [2]),
    # no inputs declared: a derived event may come from the input too (no finding, as for unknown-event)
    ("p(X) <- (p(X) seq a(X)) within 9.\n", []),
    # an event raised by a where condition (ETALIS's event/1)
    (":- input([a/0]).\nx <- (x seq a) within 9.\nc <- a where event(x).\n", []),
])
def test_a_recursion_that_can_start_is_no_never_fires_finding(rules: str, never: list[int]) -> None:
    assert [f for f in found(rules) if f[1] == "never-fires"] == [
        ("warning", "never-fires", line, 1, NEVER_FIRES.format("x/0", f"line {line}")) for line in never]


def test_print_events_naming_an_event_no_rule_derives() -> None:
    rules = (":- input([smoke/1, heat/1, a/0]).\nalarm(R) <- smoke(R).\nfire(R) <- (alarm(R) seq heat(R)) within 9.\n"
             ":- print_events([alarm/1, fire/2, alarn/1, a/0]).\n")
    fs = check_text(rules, "r.etl")
    assert [(f.severity, f.code, f.line, f.column, f.message, f.hint, dict(f.data)) for f in fs] == [
        ("warning", "unused-event", 3, 1, "fire/1 is derived (line 3) but no rule uses it and it is not reported "
         "(print_events): its rules do work for nothing",
         "add fire/1 to :- print_events([...]), use it in a pattern, or remove its rules", {"event": "fire/1"}),
        *[("warning", "unknown-printed-event", 4, 1,
           f"print_events names {event}, which no rule derives: it is never reported (input events are not)",
           hint, {"event": event, "suggestions": near})
          for event, hint, near in [("a/0", "name events that rules derive, as Name/Arity", []),
                                    ("alarn/1", "did you mean alarm/1?", ["alarm/1"]),
                                    ("fire/2", "did you mean fire/1?", ["fire/1"])]]]
    # and it is so: the input a and the events the rules do not derive are not reported
    with Engine.from_string(rules) as engine:
        assert [engine.emit(e, *args, at=t) for t, (e, args) in enumerate([("a", ()), ("smoke", (1,)), ("heat", (1,))],
                                                                           start=1)] == [
            [], [Detection("alarm", (1,), 2, 2)], []]


def test_a_window_wider_than_max_age_is_cut_to_it() -> None:
    rules = ":- max_age(10).\nc <- (a seq b) within 60.\nd <- (((a seq b) within 5) seq x) within minutes(2).\ne <- (a seq b) within 9.\n"
    assert [f for f in found(rules) if f[1] == "window-beyond-max-age"] == [
        ("warning", "window-beyond-max-age", 2, 1,
         "`a seq b within 60` is wider than :- max_age(10): its pending goals are dropped 10 seconds after they "
         "start, so it matches only within 10 seconds, not 60"),
        ("warning", "window-beyond-max-age", 3, 1,
         "`(a seq b within 5) seq x within 120` is wider than :- max_age(10): its pending goals are dropped "
         "10 seconds after they start, so it matches only within 10 seconds, not 120")]
    # and it is so: a b 29 seconds after its a is no match
    with Engine.from_string(rules) as engine:
        assert (engine.emit("a", at=1), engine.emit("b", at=30), engine.emit("a", at=40), engine.emit("b", at=47)) == (
            [], [], [], [Detection("c", (), 40, 47), Detection("e", (), 40, 47)])
    # the engine's max_age is the one that applies
    with Engine.from_string(rules, max_age=200) as engine:
        assert [f.code for f in engine.findings() if f.code == "window-beyond-max-age"] == []
    with Engine.from_string(rules, max_age=5) as engine:
        assert [f.message.split(":")[0] for f in engine.findings() if f.code == "window-beyond-max-age"] == [
            "`a seq b within 60` is wider than the engine's max_age (5)",
            "`(a seq b within 5) seq x within 120` is wider than the engine's max_age (5)",
            "`a seq b within 9` is wider than the engine's max_age (5)"]


def test_a_named_variable_used_once_in_an_event_is_a_singleton() -> None:
    rules = ("c(X) <- (a(X) seq b(Y)) within 5.\n"                    # Y: a misspelt X?
             "d(X) <- ((a(X) seq b(X)) cnot e(Z)) within 5.\n"        # Z: any e blocks
             "f(X) <- (a(X) seq b(_Y, _)) within 5.\n"                # _Y and _ say so
             "g(X) <- (a(X) seq b(K)) within 5 where K > 1.\n"        # K is used twice
             "h(X) <- (a(X) seq ((t(V) where V > 0)+) seq c(X)) within 5.\n")  # V: in its condition
    fs = check_text(rules, "r.etl")
    assert [(f.severity, f.code, f.line, f.column, f.message, f.hint) for f in fs if f.code == "singleton-variable"] == [
        ("warning", "singleton-variable", line, column, SINGLETON.format(name), SINGLETON_HINT.format(name))
        for line, column, name in [(1, 21, "Y"), (2, 33, "Z")]]
    # at the variable's own line and column, in a rule over several lines, with a label, from a file
    fs = check_text("% readings\nlabelled : alarm(S) <-\n    temp(S, T)\n      seq smoke(S, 'T', [_, Level]).\n",
                    "r.etl")
    assert [(f.line, f.column, f.data["variable"]) for f in fs if f.code == "singleton-variable"] == [
        (3, 13, "T"), (4, 29, "Level")]
