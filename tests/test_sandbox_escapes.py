"""Rule files are sandboxed by default: every way out of the sandbox that a
rule file could try is refused when the file is loaded, at the clause at
fault, on every path that loads rules (the Engine API, ``etalis run``,
``check`` and ``compile``, and replay on the driver and in the workers),
and nothing of the file runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import pytest

from etalis_py import Detection, Engine, RuleError, cli
from etalis_py.rdf.knowledge import OntologyError
from etalis_py import spark as sp
from etalis_py.spark import partition
from etalis_py.bridge._prolog import bridge

CALL = "sandbox: {} may not be called by rules from an untrusted source"
VIA = CALL + " (it calls {})"
DEFINE = "sandbox: rules from an untrusted source may not define {}"
CONSTRUCTED = ("sandbox: the goal calls a goal that is only known when the rule runs "
               "(built with =.., read from text, or a variable), which cannot be proven safe")
SHELL = VIA.format("shell/1", "shell/2")
QUALIFIED = "a module-qualified term (M:G) cannot be a fact or the head of a rule"    # the reader's, in any mode
HINT = ("rule files are sandboxed: where conditions and static rules may use pure Prolog only "
        "(no shell, files, network, database, hooks or loading code); "
        "load a file you trust with --trusted (trusted=True in Python)")
TAB = ("sandbox: tab({}) may not be called by rules from an untrusted source: "
       "it writes a number of spaces not written out in the rule, or more than 1,000")
FORMAT = ("sandbox: format/{} with the directive {} may not be called by rules from an untrusted source: "
          "its count, column or precision is not written out in the rule, or is more than 1,000")
BOUND_HINT = "write the bound out in the rule (at most 1,000), or load a file you trust with --trusted (trusted=True in Python)"
CATCH = ("sandbox: {} may not be called by rules from an untrusted source with a catcher other than "
         "error(_, _): it would also catch the engine's inference limit")
THROW = ("sandbox: throw/1 may not be called by rules from an untrusted source with a ball not written out "
         "in the rule, or with '$aborted', unwind(_), time_limit_exceeded or inference_limit_exceeded")
PRINT = ("sandbox: print_message/2 may not be called by rules from an untrusted source with a format that calls "
         "a goal (~@) or is not written out in the rule")
PRINT_HINT = ("print values with ~w, ~q or ~p, as in print_message(warning, format(\"value ~w\", [X])); "
              "or load a file you trust with --trusted (trusted=True in Python)")
CATCH_HINT = ("catch only error(Formal, Context) terms and throw terms written out in the rule, such as "
              "throw(error(domain_error(positive, X), _)); or load a file you trust with --trusted (trusted=True in Python)")


def expected_hint(message: str) -> str:
    """The hint under a sandbox message: the bounds of output and the
    exceptions of the engine have their own."""
    if message.startswith("sandbox: tab(") or " with the directive " in message:
        return BOUND_HINT
    if "catcher other than" in message or message.startswith("sandbox: throw/1"):
        return CATCH_HINT
    if message == PRINT:
        return PRINT_HINT
    return HINT

# (name, rule file with {m} for the quoted marker file, line, column, message)
# Each would create the marker file if any of it ran.
ESCAPES: list[tuple[str, str, int, int, str]] = [
    ("shell", "c <- a where shell('touch '+{m}).", 1, 1, SHELL),
    ("shell_2", "c <- a.\nd <- b where shell({m}, _).", 2, 1, CALL.format("shell/2")),
    ("process_create", "c <- a where process_create(path(touch), [{m}], []).", 1, 1, CALL.format("process_create/3")),
    ("open_write", "c <- a where open({m}, write, S), close(S).", 1, 1, CALL.format("open/3")),
    ("open_4", "c <- a where open({m}, append, S, []), close(S).", 1, 1, CALL.format("open/4")),
    ("see", "c <- a where see({m}).", 1, 1, CALL.format("see/1")),
    ("tell", "c <- a where tell({m}), told.", 1, 1, CALL.format("tell/1")),
    ("append_1", "c <- a where append({m}), told.", 1, 1, CALL.format("append/1")),
    ("read_local_file", "c(X) <- a where open('/etc/hostname', read, S), read_term(S, X, []), open({m}, write, _).",
     1, 1, CALL.format("open/3")),
    ("read_file_to_string", "c(X) <- a where read_file_to_string('/etc/hostname', X, []), see({m}).",
     1, 1, CALL.format("read_file_to_string/3")),
    ("consult", "c <- a where consult({m}).", 1, 1, CALL.format("consult/1")),
    ("ensure_loaded", "c <- a where ensure_loaded({m}).", 1, 1, CALL.format("ensure_loaded/1")),
    ("use_module", "c <- a where use_module({m}).", 1, 1, CALL.format("use_module/1")),
    ("use_module_library", "c <- a where use_module(library(process), []), see({m}).", 1, 1, CALL.format("use_module/2")),
    ("load_files", "c <- a where load_files({m}, []).", 1, 1, CALL.format("load_files/2")),
    ("assert_user", "c <- a where assertz(user:(term_expansion(_, _) :- shell('touch '+{m}))).",
     1, 1, CALL.format("assertz/1")),
    ("assert_engine", "c <- a where asserta('$reported'(x)), see({m}).", 1, 1, CALL.format("asserta/1")),
    ("retract_engine", "c <- a where retractall('$on'(_, _, _, _)), see({m}).", 1, 1, CALL.format("retractall/1")),
    ("global_variable", "c <- a where nb_setval(etalis_engine_0, x), see({m}).", 1, 1, CALL.format("nb_setval/2")),
    ("other_engine_state", "c(S) <- a where nb_current(etalis_engine_0, S), see({m}).", 1, 1,
     CALL.format("nb_current/2")),
    ("other_engine_store", "c(S) <- a where nb_getval(etalis_engine_0, S), see({m}).", 1, 1,
     CALL.format("nb_getval/2")),
    ("engine_clause", "'$on'(a, T, T, det(c, T, T)) :- shell('touch '+{m}).", 1, 1,
     DEFINE.format("'$on'/4, the engine's own predicate")),
    ("engine_knowledge", "rdf(a, b, c) :- shell('touch '+{m}).", 1, 1,
     "rdf/3 answers from the background knowledge and cannot be redefined"),
    ("builtin_clause", "c <- a.\n  shell(X) :- see({m}), X = 1.", 2, 3, DEFINE.format("shell/1, a built-in predicate")),
    ("library_clause", "member(X, _) :- see({m}), X = 1.", 1, 1, DEFINE.format("member/2, a library predicate")),
    ("term_expansion", "term_expansion(_, _) :- shell('touch '+{m}), fail.", 1, 1,
     DEFINE.format("term_expansion/2, a hook of SWI-Prolog")),
    ("user_term_expansion", "user:term_expansion(_, _) :- shell('touch '+{m}), fail.", 1, 1,
     QUALIFIED),
    ("term_expansion_4", "c <- a.\n\nterm_expansion(_, _, _, _) :- see({m}), fail.", 3, 1,
     DEFINE.format("term_expansion/4, a hook of SWI-Prolog")),
    ("goal_expansion", "user:goal_expansion(_, _) :- shell('touch '+{m}), fail.", 1, 1,
     QUALIFIED),
    ("system_goal_expansion", "system:goal_expansion(_, _, _, _) :- see({m}), fail.", 1, 1,
     QUALIFIED),
    ("message_hook", "message_hook(_, _, _) :- shell('touch '+{m}), fail.", 1, 1,
     DEFINE.format("message_hook/3, a hook of SWI-Prolog")),
    ("message_hook_dcg", "user:message_hook(_, _, _) --> {{shell('touch '+{m})}}.", 1, 1,
     DEFINE.format("user:message_hook/5, a predicate of module user")),
    ("prolog_message_dcg", "prolog:message(_) --> {{shell('touch '+{m})}}, [].", 1, 1,
     DEFINE.format("prolog:message/3, a predicate of module prolog")),
    ("exception_hook", "user:exception(undefined_predicate, _, _) :- shell('touch '+{m}), fail.", 1, 1,
     QUALIFIED),
    ("prolog_load_file", "prolog_load_file(_, _) :- shell('touch '+{m}), fail.", 1, 1,
     DEFINE.format("prolog_load_file/2, a hook of SWI-Prolog")),
    ("portray", "portray(_) :- shell('touch '+{m}), fail.", 1, 1, DEFINE.format("portray/1, a hook of SWI-Prolog")),
    ("qualified_whole_clause", "user:(portray(_) :- shell('touch '+{m})).", 1, 1,
     QUALIFIED),
    ("qualified_clause", "lists:append(_, _, _) :- see({m}).", 1, 1,
     QUALIFIED),
    ("dcg_body", "c <- a.\ngreeting --> [hi], {{shell('touch '+{m})}}.", 2, 1, SHELL),
    ("initialization", ":- initialization(shell('touch '+{m})).", 1, 1,
     "unknown directive initialization(shell('touch '+{m}))"),
    ("directive", ":- shell('touch '+{m}).", 1, 1, "unknown directive shell('touch '+{m})"),
    ("at_halt", "c <- a where at_halt(shell('touch '+{m})).", 1, 1, CALL.format("at_halt/1")),
    ("halt", "c <- a where see({m}) ; halt.", 1, 1, CALL.format("see/1")),
    ("setenv", "c <- a where setenv({m}, 1).", 1, 1, CALL.format("setenv/2")),
    ("getenv", "c(V) <- a where getenv('HOME', V), see({m}).", 1, 1, CALL.format("getenv/2")),
    ("thread_create", "c <- a where thread_create(shell('touch '+{m}), _, []).", 1, 1, CALL.format("thread_create/3")),
    ("univ", "c <- a where G =.. [shell, 'touch '+{m}], call(G).", 1, 1, CONSTRUCTED),
    ("atom_to_term", "c <- a where atom_to_term('shell(X)', G, ['X'={m}]), call(G).", 1, 1, CONSTRUCTED),
    ("read_term_from_atom", "c <- a where read_term_from_atom('see(X)', G, []), G = see({m}), call(G).",
     1, 1, CALL.format("read_term_from_atom/3")),
    ("term_string", "c <- a where term_string(G, \"see(X)\"), G = see({m}), G.", 1, 1, CONSTRUCTED),
    ("qualified_call", "c <- a where system:shell('touch '+{m}).", 1, 1, SHELL),
    ("private_module_call", "c <- a where '$syspreds':shell('touch '+{m}).", 1, 1,
     SHELL),
    ("engine_module_call", "c <- a where etalis_runtime:engine_reset(etalis_engine_0), see({m}).", 1, 1,
     CONSTRUCTED),
    ("format_to_file", "c <- a where format({m}, \"x\", []).", 1, 1, CALL.format("format/3")),
    ("format_call", "c <- a where format(atom(_), \"~@\", [shell('touch '+{m})]).", 1, 1, SHELL),
    ("catch_wrapper", "c <- a where catch(shell('touch '+{m}), _, true).", 1, 1, SHELL),
    ("findall_wrapper", "c <- a where findall(x, shell('touch '+{m}), _).", 1, 1, SHELL),
    ("forall_wrapper", "c <- a where forall(member(X, [1]), shell('touch '+{m}+X)).", 1, 1, SHELL),
    ("call_n", "c <- a where call(shell, 'touch '+{m}).", 1, 1, SHELL),
    ("static_helper", "c <- a where helper.\nhelper :- shell('touch '+{m}).", 2, 1, SHELL),
    ("aggregate_where", "c(N) <- aggregate(count, a where shell('touch '+{m}), count(2), N).", 1, 1, SHELL),
    ("fnot_where", "c <- (a seq b) fnot (x where shell('touch '+{m})).", 1, 1, SHELL),
    # a goal the sandbox refuses, given as a closure for call/N or maplist/N to complete
    ("closure_nb_getval", "c(X) <- a where call(nb_getval, etalis_engine_0, X), see({m}).", 1, 1,
     CALL.format("nb_getval/2")),
    ("closure_b_getval", "c(X) <- a where call(b_getval, etalis_detections, X), see({m}).", 1, 1,
     CALL.format("b_getval/2")),
    ("closure_nb_current", "c(K) <- a where call(nb_current, K, _), see({m}).", 1, 1, CALL.format("nb_current/2")),
    ("closure_at_halt", "c <- a where call(at_halt, see({m})).", 1, 1, CALL.format("at_halt/1")),
    ("closure_assert_partial", "c <- a where call(assertz('$on'(a, T, T)), det(c, T, T)), see({m}).", 1, 1,
     CALL.format("assertz/1")),
    ("closure_through_static", "c(X) <- a where get(nb_getval, X).\nget(P, X) :- call(P, etalis_engine_0, X), see({m}).",
     1, 1, CALL.format("nb_getval/2")),
    # what would stop the engine without an inference: waiting, the stacks of the process, output in one step
    ("sleep", "c <- a where sleep(100000), see({m}).", 1, 1, CALL.format("sleep/1")),
    # how every engine of the process prints a list of codes
    ("portray_text", "c <- a where portray_text(true), see({m}).", 1, 1, CALL.format("portray_text/1")),
    ("closure_sleep", "c <- a where maplist(sleep, [100000]), see({m}).", 1, 1, CALL.format("sleep/1")),
    ("set_prolog_stack", "c <- a where set_prolog_stack(global, limit(100000)), see({m}).", 1, 1,
     CALL.format("set_prolog_stack/2")),
    ("tab_unbounded", "c <- a where tab(1000000000000), see({m}).", 1, 1, TAB.format("1000000000000")),
    ("tab_variable", "c(N) <- a(N) where tab(N), see({m}).", 1, 1, TAB.format("N")),
    ("tab_closure", "c(N) <- a(N) where call(tab, N), see({m}).", 1, 1, CALL.format("tab/1")),
    ("format_star", "c <- a where format(atom(_), \"~*c\", [1000000000000, 0'x]), see({m}).", 1, 1,
     FORMAT.format(3, "~*c")),
    ("format_column", "c <- a.\nd <- b where format(\"~t~1000000000|\", []), see({m}).", 2, 1,
     FORMAT.format(2, "~1000000000|")),
    ("format_precision", "c(A) <- a where format(atom(A), '~100000000e', [1.0]), see({m}).", 1, 1,
     FORMAT.format(3, "~100000000e")),
    # the engine's own exceptions: its inference limit caught (the rule would loop for ever), or an abort thrown
    # (it would stop the request); these are refused after what the other checks refuse
    ("catch_limit", "c <- a where catch(loop, _, true).\nloop :- loop.", 1, 1, CATCH.format("catch/3")),
    ("catch_backtrace", "c <- a where catch_with_backtrace(loop, limit, true).\nloop :- loop.", 1, 1,
     CATCH.format("catch_with_backtrace/3")),
    ("catch_closure", "c <- a where call(catch(loop), _, true).\nloop :- loop.", 1, 1, CONSTRUCTED),
    ("throw_aborted", "c <- a where throw('$aborted').", 1, 1, THROW),
    ("throw_built", "c <- a where atom_concat('$abor', ted, B), throw(B).", 1, 1, THROW),
    ("throw_limit", "c <- a where throw(inference_limit_exceeded).", 1, 1, THROW),
    # a message printed with a format whose ~@ calls a goal: library(sandbox) takes print_message/2 for safe
    ("print_message_format", "c <- a where print_message(error, format(\"~@\", [shell('touch '+{m})])).", 1, 1,
     PRINT),
    ("print_message_error", "c <- a.\nd <- b where print_message(error, error(format(\"x ~@\", [see({m})]), _)).",
     2, 1, PRINT),
    ("print_message_static", "c <- a where say(x).\nsay(_) :- print_message(warning, format(F, [see({m})])), F = x.",
     2, 1, PRINT),
    # an ontology read from the network (it was SWI-Prolog's "iri_scheme `http' does not exist", unpositioned)
    ("ontology_url", "c <- a.\n:- ontology('http://127.0.0.1:9/x.ttl').", 2, 1,
     "ontology http://127.0.0.1:9/x.ttl is not a file name (the engine reads no URL)"),
    ("ontology_file_url", ":- ontology(\"file:///etc/passwd\").\nc <- a.", 1, 1,
     "ontology file:///etc/passwd is not a file name (the engine reads no URL)"),
]


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "escaped"


def escape_text(template: str, marker: Path) -> str:
    return template.format(m="'" + str(marker).replace("'", "\\'") + "'")


def hooks_and_scratch() -> Any:
    """The clauses of SWI-Prolog's hooks and the sandbox's scratch modules
    left in this process: loading an escape must change neither."""
    hooks = ("[user:term_expansion(_,_), user:term_expansion(_,_,_,_), user:goal_expansion(_,_), "
             "user:goal_expansion(_,_,_,_), system:goal_expansion(_,_,_,_), user:message_hook(_,_,_), "
             "user:message_hook(_,_,_,_,_), user:exception(_,_,_), user:prolog_load_file(_,_), "
             "user:portray(_), prolog:message(_,_,_), lists:append(_,_,_)]")
    goal = (f"findall(N, (member(H, {hooks}), (predicate_property(H, number_of_clauses(N)) -> true ; N = 0)), Ns), "
            "findall(M, (current_module(M), sub_atom(M, 0, _, _, etalis_sandbox_)), Scratch)")
    with Engine.from_string("", trusted=True) as engine:
        header, _ = bridge().request(f"solve({engine._name})", goal)
    return header["solutions"]


def refused(load: Callable[[], Any]) -> RuleError:
    with pytest.raises(RuleError) as info:
        load()
    return info.value


def assert_refused(error: RuleError, file: str, line: int, column: int, message: str, marker: Path) -> None:
    assert (error.file, error.line, error.column, error.message) == (file, line, column, message)
    if message.startswith("sandbox:"):
        assert error.hint == expected_hint(message)
    assert not marker.exists()


IDS = [e[0] for e in ESCAPES]


@pytest.mark.parametrize("name,template,line,column,message", ESCAPES, ids=IDS)
def test_engine_api_refuses_escape(name: str, template: str, line: int, column: int, message: str,
                                   marker: Path, tmp_path: Path) -> None:
    text = escape_text(template, marker)
    expected = escape_text(message, marker)
    before = hooks_and_scratch()
    path = tmp_path / f"{name}.etl"
    path.write_text(text, encoding="utf-8")
    assert_refused(refused(lambda: Engine.from_file(path)), str(path), line, column, expected, marker)
    assert_refused(refused(lambda: Engine.from_string(text, source="x.etl")), "x.etl", line, column, expected, marker)
    with Engine.from_string("ok <- start_event.") as engine:
        assert_refused(refused(lambda: engine.add_rules(text, source="added.etl")),
                       "added.etl", line, column, expected, marker)
        assert engine.rule_count == 1
        assert engine.emit("start_event", at=1) == [Detection("ok", (), 1, 1)]
    assert hooks_and_scratch() == before
    assert not marker.exists()


@pytest.mark.parametrize("command", ["run", "check", "compile"])
@pytest.mark.parametrize("name,template,line,column,message", ESCAPES, ids=IDS)
def test_commands_refuse_escape(command: str, name: str, template: str, line: int, column: int, message: str,
                                marker: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"{name}.etl"
    path.write_text(escape_text(template, marker), encoding="utf-8")
    events = tmp_path / "events.events"
    events.write_text("a.\nb.\n", encoding="utf-8")
    argv = [command, str(path)] + (["--events", str(events)] if command == "run" else [])
    assert cli.main(argv) == cli.EXIT_RULES
    out, err = capsys.readouterr()
    expected = escape_text(message, marker)
    first, _, rest = err.partition("\n")
    assert first == f"{path}:{line}:{column}: error: {expected}"
    if command == "check" and out:      # the findings of the analysis, then its summary
        assert out.splitlines()[-1] in (f"{path}: 1 error", f"{path}: 1 error, 1 warning")
    else:
        assert out == ""
    if expected.startswith("sandbox:"):
        assert rest == f"  hint: {expected_hint(expected)}\n"
    assert not marker.exists()


@pytest.mark.parametrize("name,template,line,column,message", ESCAPES, ids=IDS)
def test_replay_refuses_escape_on_driver_and_workers(name: str, template: str, line: int, column: int, message: str,
                                                     marker: Path, tmp_path: Path) -> None:
    text = escape_text(template, marker)
    expected = escape_text(message, marker)
    path = tmp_path / f"{name}.etl"
    path.write_text(text, encoding="utf-8")
    data = tmp_path / "data.csv"
    data.write_text("t\n1\n", encoding="utf-8")
    # the driver checks the rules before it starts Spark
    assert_refused(refused(lambda: sp.replay(data, path, event="a", time="t")), str(path), line, column, expected,
                   marker)
    # a worker compiles its stage's engine from the text shipped to it
    spec = partition.StageSpec(1, text, str(path), (), (), None, None, False, True)
    assert_refused(refused(lambda: partition._engine_for(spec)), str(path), line, column, expected, marker)
    assert not marker.exists()


def test_trusted_lifts_the_sandbox_on_every_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "trusted.etl"
    path.write_text(escape_text("c <- a where open({m}, append, S), close(S).", marker), encoding="utf-8")
    events = tmp_path / "events.events"
    events.write_text("a.\n", encoding="utf-8")
    assert cli.main(["check", str(path), "--trusted"]) == cli.EXIT_OK
    assert capsys.readouterr().out.startswith(f"{path}: ok: 1 rules")
    assert cli.main(["compile", str(path), "--trusted"]) == cli.EXIT_OK
    assert "% Event-driven clauses" in capsys.readouterr().out
    assert not marker.exists()                          # checking and compiling run nothing
    assert cli.main(["run", str(path), "--events", str(events), "--trusted"]) == cli.EXIT_OK
    assert capsys.readouterr().out == '{"event": "c", "args": [], "start": 1, "end": 1}\n'
    assert marker.exists()
    spec = partition.StageSpec(1, path.read_text(), str(path), (1,), (), None, None, False, True, trusted=True)
    engine, fresh = partition._engine_for(spec)
    assert fresh and engine.rule_count == 1
    partition._ENGINES.pop(spec.engine_key()).close()
    with Engine.from_string("ok <- x.", trusted=True) as live:
        live.add_rules("user_defined(X) :- open(X, read, S), close(S).")
        assert live.rule_count == 1


def test_sandbox_false_is_the_deprecated_spelling_of_trusted(tmp_path: Path) -> None:
    rules = "c <- a where see(nothing)."
    with pytest.warns(DeprecationWarning, match="pass trusted=True"):
        engine = Engine.from_string(rules, sandbox=False)
    assert engine.rule_count == 1
    engine.close()
    with pytest.raises(ValueError, match="contradict"):
        Engine.from_string(rules, sandbox=True, trusted=True)
    assert refused(lambda: Engine.from_string(rules, sandbox=True)).message == CALL.format("see/1")


def test_sandbox_and_trusted_options_exclude_each_other(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.etl"
    path.write_text("c <- a.\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        cli.main(["check", str(path), "--sandbox", "--trusted"])
    assert "not allowed with argument" in capsys.readouterr().err
    assert cli.main(["check", str(path), "--sandbox"]) == cli.EXIT_OK


def test_safe_rules_load_by_default() -> None:
    rules = """
    :- prefix(wt, 'http://example.org/w#').
    hot(S, F) <- (reading(S, C) seq reading(S, C2)) where C2 > C, to_f(C2, F), isa(S, wt:'Station').
    to_f(C, F) :- F is C * 9 / 5 + 32, sum_list([C], _), format(atom(_), "~w", [C]).
    words --> [hello], rest.
    rest --> [].
    greeting(W) <- said(W) where phrase(words, W).
    """
    with Engine.from_string(rules) as engine:
        assert engine.emit("said", ["hello"], at=1) == [Detection("greeting", (["hello"],), 1, 1)]
        engine.emit("reading", "s1", 20, at=2)
        assert engine.emit("reading", "s1", 30, at=3) == []     # s1 is no wt:Station: isa/2 fails


def test_trusted_rules_still_cannot_redefine_iso_builtins() -> None:
    error = refused(lambda: Engine.from_string("c <- a.\natom(X) :- X = 1.", source="r.etl", trusted=True))
    assert (error.file, error.line, error.column, error.message) == (
        "r.etl", 2, 1, "cannot redefine the built-in predicate atom/1")


@pytest.mark.parametrize("rules,warning", [
    # the message built when the rule runs: print_message/2 checks it then
    ("c <- a where atom_concat('~', '@', F), M = format(F, [shell('touch '+{m})]), print_message(error, M).",
     "print_message/2: No permission to call sandboxed `format/2' (a format with ~@ calls a goal)"),
    ("c <- a where F = format(\"~@\", [shell('touch '+{m})]), print_message(error, error(F, _)).",
     "print_message/2: No permission to call sandboxed `format/2' (a format with ~@ calls a goal)"),
    # an error thrown with such a message: the engine's warning printed it, and so ran the goal
    ("c <- a where throw(error(format(\"~@\", [shell('touch '+{m})]), _)).",
     "error(format(\"~@\",[shell('touch '+{m})]),_)"),
])
def test_a_message_that_would_call_a_goal_as_it_is_printed_is_a_warning(rules: str, warning: str,
                                                                         marker: Path) -> None:
    text = escape_text(rules, marker)
    # a trusted file may print what it likes, but the engine's warning of its error runs nothing either
    for trusted in (False, True) if "throw" in rules else (False,):
        with Engine.from_string(text + "\nok <- a.\n", trusted=trusted) as engine:
            result = engine.feed_text("a.\n")
            assert (result.accepted, result.detection_lines) == (1, '{"event": "ok", "args": [], "start": 1, "end": 1}\n')
            [found] = result.warnings
            assert re.sub(r"_[0-9]+", "_", found.reason.split(" raised: ")[1]) == escape_text(warning, marker)
        assert not marker.exists()


def test_a_message_that_prints_values_is_printed(capfd: pytest.CaptureFixture[str]) -> None:
    rules = ("c(X) <- a(X) where say(X).\n"
             "say(X) :- print_message(warning, format(\"value ~w ~q ~p\", [X, X, X])), print_message(error, x(X)).\n")
    with Engine.from_string(rules) as engine:
        assert engine.emit("a", "it's", at=1) == [Detection("c", ("it's",), 1, 1)]
    err = capfd.readouterr().err
    assert err.endswith("Warning: value it's 'it\\'s' 'it\\'s'\nERROR: Unknown message: x('it\\'s')\n")


@pytest.mark.parametrize("context", [
    '"http://127.0.0.1:{port}/context.jsonld"',
    '["http://127.0.0.1:{port}/context.jsonld", {{"name": "http://e.org/name"}}]',
    '{{"@version": 1.1, "@import": "http://127.0.0.1:{port}/context.jsonld"}}',
])
def test_a_json_ld_context_by_reference_is_not_fetched(context: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # rdflib fetched it over the network (for an ontology of an untrusted
    # rule file, and for a graph event); a server that refused it ended
    # etalis check with a traceback (URLError)
    import http.server
    import threading

    requests: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        document = ('{"@context": ' + context.format(port=server.server_address[1])
                    + ', "@id": "http://e.org/g", "@graph": []}\n')
        (tmp_path / "o.jsonld").write_text(document, encoding="utf-8")
        rules = tmp_path / "r.etl"
        rules.write_text("c <- a.\n:- ontology('o.jsonld').\n", encoding="utf-8")
        message = ("a remote @context is not fetched: give the context inline "
                   f"(an ontology of {rules}, line 2)")
        with pytest.raises(OntologyError) as info:
            Engine.from_file(rules)
        assert (info.value.file, info.value.message) == (str(tmp_path / "o.jsonld"), message)
        assert cli.main(["check", str(rules)]) == cli.EXIT_RULES
        assert capsys.readouterr().err == f"{tmp_path / 'o.jsonld'}: error: {message}\n"
        events = tmp_path / "events.jsonld"
        events.write_text(document, encoding="utf-8")
        plain = tmp_path / "plain.etl"
        plain.write_text("c <- a.\n", encoding="utf-8")
        assert cli.main(["run", str(plain), "--events", str(events)]) == cli.EXIT_OK
        assert capsys.readouterr().err.splitlines()[0] == (
            f"{events}:1: rejected: a remote @context is not fetched: give the context inline")
    finally:
        server.shutdown()
    assert requests == []


def test_a_fact_built_when_the_rule_runs_reaches_neither_hooks_nor_the_engine_nor_libraries() -> None:
    before = hooks_and_scratch()
    with Engine.from_string("c(N, A) <- a(N, A) where (functor(F, N, A), assertz(F)).\n") as engine:
        result = engine.emit_many([("a", ["message_hook", 3], 1), ("a", ["term_expansion", 2], 2),
                                   ("a", ["$on", 4], 3), ("a", ["append", 3], 4), ("a", ["rdf", 3], 5),
                                   ("a", ["write", 1], 6), ("a", ["mine", 1], 7)])
        assert result.detections == [Detection("c", ("mine", 1), 7, 7)]
        assert [re.sub(r"_[0-9]+", "_", w.reason.split(" raised: ")[1]) for w in result.warnings] == [
            f"assertz/1: No permission to modify predicate `{pi}' (not a predicate of the rule file)"
            for pi in ("message_hook/3", "term_expansion/2", "'$on'/4", "append/3", "rdf/3", "write/1")]
    assert hooks_and_scratch() == before
