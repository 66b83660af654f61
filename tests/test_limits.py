"""Resource limits: an event whose processing does not end stops with a clear
error; Ctrl-C stops ``etalis run`` cleanly with its summary."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from etalis_py import EtalisError, Engine, InferenceLimitError, MemoryLimitError, RuleError
from etalis_py.errors import byte_size
from etalis_py.events import Rejection
from etalis_py.cli import main

LOOP = "c(X) <- a(X) where loop(X).\nloop(X) :- loop(X).\nd(X) <- b(X).\n"
DOUBLING = "b <- a.\nb <- b seq a.\n"
HINT = ("check the rules that use this event: a where condition must end, and under the unrestricted policy "
        "a pattern such as `b <- b seq a` doubles its detections with each event (use a window or a consuming "
        "policy); or raise the limit (inference_limit=, etalis run --inference-limit N)")


def found(engine: Engine) -> list[tuple[str, tuple[object, ...], float, float]]:
    return [(d.event, d.args, d.start, d.end) for d in engine.detections()]


def test_a_where_condition_that_loops_stops_at_its_event_naming_the_condition() -> None:
    with Engine.from_string(LOOP, inference_limit=100_000) as engine:
        with pytest.raises(InferenceLimitError) as info:
            engine.emit_many([("b", (1,), 1), ("a", (1,), 2), ("b", (2,), 3)])
        e = info.value
        assert (e.line, e.event, e.limit, e.where) == (2, "a(1)", 100_000, "loop(1)")
        assert str(e) == ("event a(1) (line 2) took more than 100,000 inferences, the limit per event, "
                          f"in the where condition loop(1)\n  hint: {HINT}")
        assert found(engine) == [("d", (1,), 1, 1)]          # the detections before it are delivered
        assert [(d.event, d.args, d.start, d.end) for d in engine.emit("b", 3, at=4)] == [("d", (3,), 4, 4)]


@pytest.mark.parametrize("batch_size", [1, 10_000])
def test_the_items_rejected_before_the_stop_keep_their_reasons(batch_size: int) -> None:
    with Engine.from_string(LOOP, inference_limit=100_000) as engine:
        with pytest.raises(InferenceLimitError) as info:
            engine.emit_many([("b", (1,), 2), ("b", "x", 3), ("b", (2,), 1), ("a", (1,), 4), ("", (), 5)],
                             batch_size=batch_size)
        assert info.value.line == 4
        assert info.value.rejected == [
            Rejection(2, "args 'x' is not a list"),
            Rejection(3, "time 1 is earlier than the last accepted time 2 (events must arrive in time order)")]


def test_emit_of_an_event_over_the_limit_raises() -> None:
    with Engine.from_string(LOOP, inference_limit=50_000) as engine:
        with pytest.raises(InferenceLimitError) as info:
            engine.emit("a", 7, at=1)
        assert (info.value.line, info.value.event, info.value.where) == (1, "a(7)", "loop(7)")


def test_detections_that_double_with_each_event_stop_at_the_limit() -> None:
    with Engine.from_string(DOUBLING, inference_limit=100_000) as engine:
        with pytest.raises(InferenceLimitError) as info:
            engine.emit_many([("a", (), t) for t in range(1, 41)])
        line = info.value.line
        assert (info.value.event, info.value.where) == ("a", None)
        assert 5 < line < 40
        # event k derives 2**(k-1) b's: all of those of the events before the stopped one were delivered
        assert len(found(engine)) == 2 ** (line - 1) - 1


def test_the_default_limit_is_ten_million_inferences() -> None:
    with Engine.from_string(LOOP) as engine:
        with pytest.raises(InferenceLimitError) as info:
            engine.emit("a", 1, at=1)
        assert info.value.limit == 10_000_000


def test_an_event_held_back_by_a_lateness_is_limited_when_flushed() -> None:
    with Engine.from_string(LOOP, lateness=10, inference_limit=100_000) as engine:
        assert engine.emit_many([("b", (1,), 1), ("a", (2,), 3)]).detections == []
        with pytest.raises(InferenceLimitError) as info:
            engine.flush()
        assert (info.value.line, info.value.event, info.value.where) == (2, "a(2)", "loop(2)")


# a where condition of few inferences, each a long built-in: 2 * 10^4 sorts of 10^5 numbers, minutes
SORTING = ("c(X) <- a(X) where (numlist(1, 100000, L), forall(between(1, 20000, _), msort(L, _))).\n"
           "d(X) <- b(X).\n")


def test_an_event_that_runs_longer_than_its_limit_allows_stops_naming_the_time() -> None:
    """A built-in can run long within one inference: an event still
    running after a microsecond an inference of its limit (a second at
    least) is stopped as one over the limit, within twice that time."""
    with Engine.from_string(SORTING, inference_limit=1_000_000) as engine:
        with pytest.raises(InferenceLimitError) as info:
            engine.emit_many([("b", (1,), 1), ("a", (1,), 2), ("b", (2,), 3)])
        e = info.value
        assert (e.line, e.event, e.limit, e.seconds) == (2, "a(1)", 1_000_000, 1.0)
        assert e.where is not None and e.where.startswith("numlist(1,100000,")
        assert str(e).startswith("event a(1) (line 2) ran for more than 1 seconds, the time that the limit of "
                                 "1,000,000 inferences per event allows, in the where condition numlist(1,100000,")
        assert found(engine) == [("d", (1,), 1, 1)]
        # the engine goes on with the next event, and an event that ends is not stopped
        assert [(d.event, d.args, d.start, d.end) for d in engine.emit("b", 3, at=4)] == [("d", (3,), 4, 4)]


def test_etalis_run_stops_an_event_that_runs_too_long(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text(SORTING)
    events = tmp_path / "s.events"
    events.write_text("b(1).\na(1).\nb(2).\n")
    code = main(["run", str(rules), "--events", str(events), "--inference-limit", "2000000", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 3
    assert [json.loads(line) for line in out.splitlines()] == [{"event": "d", "args": [1], "start": 1, "end": 1}]
    assert err.splitlines()[0].startswith(f"{events}:2: error: event a(1) (line 2) ran for more than 2 seconds, "
                                          "the time that the limit of 2,000,000 inferences per event allows")
    assert err.splitlines()[-1].startswith("events read: 2, accepted: 1, rejected: 1, detections: 1,")


def test_with_no_inference_limit_there_is_no_time_limit_either() -> None:
    """inference_limit=0 takes both limits off: an event of two seconds and
    more (past the second and its check) ends."""
    rules = "c(X) <- a(X) where (numlist(1, 100000, L), forall(between(1, 2500, _), msort(L, _))).\n"
    with Engine.from_string(rules, inference_limit=0) as engine:
        assert [(d.event, d.args) for d in engine.emit_many([("a", (1,), 1)]).detections] == [("c", (1,))]


@pytest.mark.parametrize("limit", [-1, 1.5, True, "10"])
def test_an_inference_limit_must_be_a_whole_number(limit: object) -> None:
    with pytest.raises(ValueError, match=r"inference_limit must be a whole number >= 0 \(0: no limit\), not "):
        Engine.from_string(LOOP, inference_limit=limit)  # type: ignore[arg-type]


def test_run_stops_at_an_event_over_the_limit_with_its_line_and_the_summary(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "loop.etl"
    rules.write_text(LOOP)
    events = tmp_path / "s.events"
    events.write_text("b(1).\nb(2).\na(1).\nb(3).\n")
    assert main(["run", str(rules), "--events", str(events), "--inference-limit", "100000"]) == 3
    out, err = capsys.readouterr()
    assert out == ('{"event": "d", "args": [1], "start": 1, "end": 1}\n'
                   '{"event": "d", "args": [2], "start": 2, "end": 2}\n')
    lines = err.splitlines()
    assert lines[:2] == [
        f"{events}:3: error: event a(1) (line 3) took more than 100,000 inferences, the limit per event, "
        "in the where condition loop(1)",
        f"  hint: {HINT}",
    ]
    assert re.fullmatch(r"events read: 3, accepted: 2, rejected: 1, detections: 2, warnings: 0, seconds: [0-9.]+, "
                        r"pending: 0, cpu seconds: [0-9.]+", lines[2])
    assert len(lines) == 3


def test_ctrl_c_stops_run_after_a_batch_with_the_summary_and_exit_130(tmp_path: Path) -> None:
    rules = tmp_path / "slow.etl"
    rules.write_text("c(X) <- a(X) where (between(1, 400, _), fail ; true).\n")
    events = tmp_path / "s.events"
    n = 100_000
    events.write_text("".join(f"a({i}).\n" for i in range(n)))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    with (tmp_path / "err.txt").open("w") as err_file:
        proc = subprocess.Popen([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(events)],
                                stdout=subprocess.PIPE, stderr=err_file, text=True, env=env)
        assert proc.stdout is not None
        first = proc.stdout.readline()              # the first batch is processed: the engine runs
        assert first == '{"event": "c", "args": [0], "start": 1, "end": 1}\n'
        proc.send_signal(signal.SIGINT)
        rest = proc.stdout.read()
        assert proc.wait(timeout=120) == 130
    err = (tmp_path / "err.txt").read_text()
    detected = 1 + rest.count("\n")
    lines = err.splitlines()
    assert len(lines) == 2, err
    m = re.fullmatch(r"events read: (\d+), accepted: (\d+), rejected: 0, detections: (\d+), warnings: 0, "
                     r"seconds: [0-9.]+, pending: 0, cpu seconds: [0-9.]+", lines[1])
    assert m is not None, lines[1]
    read, accepted, detections = map(int, m.groups())
    # whole batches of 20,000 lines were processed, each event detected once, and not the whole stream
    assert read == accepted == detections == detected
    assert accepted % 20_000 == 0 and 0 < accepted < n
    assert lines[0] == f"etalis: interrupted: stopped after {accepted} events"
    assert rest.splitlines()[-1] == f'{{"event": "c", "args": [{accepted - 1}], "start": {accepted}, "end": {accepted}}}'


DEEP = "deep(0, z) :- !.\ndeep(N, f(X)) :- M is N - 1, deep(M, X).\n"


def test_a_term_nested_deeper_than_1000_levels_is_written_cut_there_not_crashing_the_process(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Writing a term 30,000 levels deep overflows the C stack of the process
    # (pyswip starts SWI-Prolog without its signal handling: a segmentation
    # fault, not an error).  A detection's argument, and the term in a
    # warning, are cut at 1,000 levels with "...".
    rules = "c(X) <- a where deep(30000, X).\nd <- b where deep(30000, X), atom_length(X, _).\n" + DEEP
    cut = "f(" * 1000 + "..." + ")" * 1000
    with Engine.from_string(rules) as engine:
        assert found(engine) == []
        assert [(d.event, d.args, d.start, d.end) for d in engine.emit("a", at=1)] == [("c", (cut,), 1, 1)]
        result = engine.feed_text("b.\n")
        assert (result.accepted, result.rejected, result.detection_lines) == (1, [], "")
        [warning] = result.warnings
        assert warning.line == 1
        assert re.fullmatch(re.escape("where condition deep(30000,") + r"(_\d+)" + re.escape("),atom_length(")
                            + r"\1,_\d+" + re.escape(") of d (<string>:2:1) raised: error(type_error(text," + "f(" * 998 + "..."
                                                     + ")" * 998 + "),context(system:atom_length/2,")
                            + r"_\d+\)\)", warning.reason)
        assert [(d.event, d.args) for d in engine.emit("a", at=2)] == [("c", (cut,))]    # the engine goes on
    path = tmp_path / "deep.etl"
    path.write_text(rules, encoding="utf-8")
    events = tmp_path / "a.events"
    events.write_text("a.\nb.\n", encoding="utf-8")
    assert main(["run", str(path), "--events", str(events)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ['{"event": "c", "args": ["' + cut + '"], "start": 1, "end": 1}']
    assert err.startswith(f"{events}:2: warning: where condition deep(30000,")
    assert err.splitlines()[-1].startswith("events read: 2, accepted: 2, rejected: 0, detections: 1, warnings: 1, ")


def test_a_long_text_argument_costs_no_inference_a_character(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # The detection writer checked each character of a text in Prolog: an
    # event with a 10 MB argument took more than the 10,000,000 inferences
    # of an event, and stopped `etalis run` there.  Here 2 MB against a limit
    # of 1,000,000.
    long = "x" * 2_000_000 + '"\\é'
    with Engine.from_string("c(X) <- a(X).\n", inference_limit=1_000_000) as engine:
        assert [(d.event, d.args, d.start) for d in engine.emit("a", long, at=1)] == [("c", (long,), 1)]
    path = tmp_path / "pass.etl"
    path.write_text("c(X) <- a(X).\n", encoding="utf-8")
    events = tmp_path / "long.jsonl"
    events.write_text(json.dumps({"event": "a", "args": [long], "time": 1}) + "\n"
                      + json.dumps({"event": "a", "args": ["y"], "time": 2}) + "\n", encoding="utf-8")
    assert main(["run", str(path), "--events", str(events), "--inference-limit", "1000000"]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line) for line in out.splitlines()] == [
        {"event": "c", "args": [long], "start": 1, "end": 1}, {"event": "c", "args": ["y"], "start": 2, "end": 2}]
    assert err.splitlines()[-1].startswith("events read: 2, accepted: 2, rejected: 0, detections: 2, warnings: 0, ")


@pytest.mark.parametrize("goal,predicate", [
    ("write(X)", "write/1"),
    ("print(X)", "print/1"),
    ("writeq(f(X))", "writeq/1"),
    ("format(\"~w\", [X])", "format/2"),
    ("format(atom(_), \"~q\", [X])", "format/3"),
    ("term_to_atom(X, _)", "term_to_atom/2"),
    ("call(write_canonical, X)", "write_canonical/1"),
    ("helper(X)", "writeln/1"),
])
def test_a_rule_that_prints_a_term_nested_too_deep_loses_its_occurrence_with_a_warning(goal: str,
                                                                                       predicate: str) -> None:
    # Printed whole, the term would overflow the C stack: a segmentation
    # fault of the process.  In an untrusted rule file the printing
    # predicates check the depth first.
    rules = f"c <- a where deep(30000, X), {goal}.\nok <- a.\nhelper(X) :- writeln(X).\n" + DEEP
    with Engine.from_string(rules) as engine:
        result = engine.feed_text("a.\n")
        assert (result.accepted, result.rejected, result.detection_lines) == (
            1, [], '{"event": "ok", "args": [], "start": 1, "end": 1}\n')
        [warning] = result.warnings
        assert warning.reason.endswith(
            f" raised: {predicate}: Not enough resources: a term nested deeper than 1,000 levels")
        assert [(d.event, d.start) for d in engine.emit("a", at=2)] == [("ok", 2)]    # the engine goes on


@pytest.mark.parametrize("concat,predicate", [
    ("atom_concat(A, A, B)", "atom_concat/3"),
    ("atomic_list_concat([A, A], B)", "atomic_list_concat/2"),
    ("atomic_list_concat([A, A], '', B)", "atomic_list_concat/3"),
    ("format(atom(B), '~a~a', [A, A])", "format/3"),
])
def test_a_text_doubled_past_ten_million_characters_is_a_resource_error(concat: str, predicate: str) -> None:
    # Atoms live outside the Prolog stacks: 40 doublings would ask for a
    # terabyte in 120 inferences.
    rules = (f"c(L) <- a where dbl(x, 40, A), atom_length(A, L).\nd(L) <- b where dbl(x, 10, A), atom_length(A, L).\n"
             f"dbl(A, 0, A) :- !.\ndbl(A, N, R) :- {concat}, N1 is N - 1, dbl(B, N1, R).\n")
    with Engine.from_string(rules) as engine:
        result = engine.feed_text("a.\nb.\n")
        assert (result.accepted, result.detection_lines) == (2, '{"event": "d", "args": [1024], "start": 2, "end": 2}\n')
        [warning] = result.warnings
        assert (warning.line, warning.reason.split(" raised: ")[1]) == (
            1, f"{predicate}: Not enough resources: a text of more than 10,000,000 characters")


@pytest.mark.parametrize("make,predicate,lengths", [
    # library(backcomp)'s, which call the system's predicates from their own module
    ("concat_atom([A, A], B)", "concat_atom/2", [2, 4, 8]),
    ("concat_atom([A, A], '', B)", "concat_atom/3", [2, 4, 8]),
    ("concat(A, A, B)", "concat/3", [2, 4, 8]),
    ("atomic_concat(A, A, B)", "atomic_concat/3", [2, 4, 8]),
    ("with_output_to(atom(B), (write_ln(A), write(A)))", "write/1", [3, 7, 15]),
    ("sformat(S, \"~w~w\", [A, A]), atom_string(B, S)", "sformat/3", [2, 4, 8]),
    # a text written from a compound term: its atoms count at any depth
    ("format(atom(B), '~w', [A-A])", "format/3", [3, 7, 15]),
    ("term_to_atom(A-A, B)", "term_to_atom/2", [3, 11, 35]),
    # the same text written twice into a text being made
    ("with_output_to(atom(B), (write(A), write(A)))", "write/1", [2, 4, 8]),
    ("with_output_to(atom(B), (print(A), writeq(A)))", "writeq/1", [2, 4, 8]),
    ("format(atom(B), '~@~@', [write(A), write(A)])", "format/3", [2, 4, 8]),
])
def test_a_text_doubled_outside_the_stacks_past_ten_million_characters_is_a_resource_error(
        make: str, predicate: str, lengths: list[int]) -> None:
    # Each was a text doubled per step outside the Prolog stacks: the
    # process grew to gigabytes, and concat_atom/2 and sformat/3 ended it
    # with "FATAL ERROR: Could not allocate memory" (an abort).
    rules = ("c(L) <- a where dbl(x, 40, A), atom_length(A, L).\n"
             "d(L) <- b(N) where dbl(x, N, A), atom_length(A, L).\n"
             f"dbl(A, 0, A) :- !.\ndbl(A, N, R) :- {make}, N1 is N - 1, dbl(B, N1, R).\n")
    with Engine.from_string(rules) as engine:
        result = engine.feed_text("a.\nb(1).\nb(2).\nb(3).\n")
        assert (result.accepted, [json.loads(line) for line in result.detection_lines.splitlines()]) == (
            4, [{"event": "d", "args": [n], "start": t, "end": t} for t, n in zip((2, 3, 4), lengths)])
        [warning] = result.warnings
        assert (warning.line, warning.reason.split(" raised: ")[1]) == (
            1, f"{predicate}: Not enough resources: a text of more than 10,000,000 characters")


@pytest.mark.parametrize("make,predicate", [
    ("atom_string(A, S)", "atom_string/2"),
    ("string_codes(S, Cs), atom_codes(A, Cs)", "atom_codes/2"),
    ("string_chars(S, Cs), atom_chars(A, Cs)", "atom_chars/2"),
    ("string_to_atom(S, A)", "string_to_atom/2"),
    ("upcase_atom(S, A)", "upcase_atom/2"),
    ("normalize_space(atom(A), S)", "normalize_space/2"),
])
def test_an_atom_of_a_text_past_ten_million_characters_is_a_resource_error(make: str, predicate: str) -> None:
    # A string lives on the stacks (up to a gigabyte), the atom made of it
    # outside: forty atoms of a 131,072,000-character string aborted the
    # process ("Could not allocate memory") under a 3 GB limit.
    rules = ("c(N) <- a(K) where length(L, 1000), maplist(=(0'x), L), string_codes(S0, L), grow(S0, K, S), "
             f"{make}, atom_length(A, N).\n"
             "grow(S, 0, S) :- !.\ngrow(S, K, R) :- string_concat(S, S, S1), K1 is K - 1, grow(S1, K1, R).\n")
    with Engine.from_string(rules) as engine:
        result = engine.feed_text("a(14).\na(3).\n")   # 16,384,000 and 8,000 characters
        assert (result.accepted, result.detection_lines) == (2, '{"event": "c", "args": [8000], "start": 2, "end": 2}\n')
        [warning] = result.warnings
        assert (warning.line, warning.reason.split(" raised: ")[1]) == (
            1, f"{predicate}: Not enough resources: a text of more than 10,000,000 characters")


def test_tab_into_a_text_being_made_stops_at_ten_million_characters() -> None:
    # tab/1 writes at most 1,000 spaces a step, but 10,000,000 steps fill
    # a text with 10^10 of them
    rules = ("c(L) <- a(N) where with_output_to(string(S), forall(between(1, N, _), tab(1000))), "
             "string_length(S, L).\n")
    with Engine.from_string(rules) as engine:
        result = engine.feed_text("a(100000).\na(3).\n")
        assert (result.accepted, result.detection_lines) == (2, '{"event": "c", "args": [3000], "start": 2, "end": 2}\n')
        [warning] = result.warnings
        assert (warning.line, warning.reason.split(" raised: ")[1]) == (
            1, "tab/1: Not enough resources: a text of more than 10,000,000 characters")


def test_dynamic_facts_past_a_hundred_million_bytes_are_a_resource_error() -> None:
    # A fact is one step: the 10,000,000 steps of an event added 370 MB of
    # clauses, outside the stacks, and a few events ended the process.
    rules = (":- dynamic(mine/1).\n"
             "c(N) <- a where forall(between(1, 400000, X), assertz(mine(X))), aggregate_all(count, mine(_), N).\n"
             "d <- r where retractall(mine(_)).\n")
    with Engine.from_string(rules) as engine:
        result = engine.feed_text("a.\na.\na.\nr.\na.\n")
        assert (result.accepted, [json.loads(line) for line in result.detection_lines.splitlines()]) == (5, [
            {"event": "c", "args": [400000], "start": 1, "end": 1},
            {"event": "c", "args": [800000], "start": 2, "end": 2},
            {"event": "d", "args": [], "start": 4, "end": 4},
            {"event": "c", "args": [400000], "start": 5, "end": 5}])    # what retractall freed counts again
        [warning] = result.warnings
        assert (warning.line, warning.reason.split(" raised: ")[1]) == (
            3, "assertz/1: Not enough resources: dynamic facts of more than 100,000,000 bytes")
    with Engine.from_string(rules, trusted=True) as engine:    # a trusted file is not bounded so
        assert engine.feed_text("a.\na.\na.\n").detection_lines.count('"event": "c"') == 3


def test_print_trigger_printing_a_term_nested_too_deep_is_refused_at_its_clause() -> None:
    with pytest.raises(RuleError) as info:
        Engine.from_string("c <- a.\nprint_trigger(all_defined_events) :- deep(30000, X), write(X).\n" + DEEP,
                           source="p.etl")
    e = info.value
    assert (e.file, e.line, e.column, e.message, e.hint) == (
        "p.etl", 2, 1,
        "print_trigger(all_defined_events) raised the error resource_error('a term nested deeper than 1,000 levels')",
        "make the clauses it calls succeed or fail for this argument")


def test_an_event_raised_by_event_1_over_the_limit_stops_the_feed_at_the_input_event_that_raised_it() -> None:
    rules = ("c(X) <- a(X) do event(r(X)).\nd(X) <- r(X) where slow(X).\ne(X) <- a(X) seq b(X).\n"
             "slow(X) :- X =:= 2 -> loop(X) ; true.\nloop(X) :- loop(X).\n")
    with Engine.from_string(rules, inference_limit=50_000) as engine:
        with pytest.raises(InferenceLimitError) as info:
            engine.emit_many([("a", (1,), 1), ("b", (1,), 2), ("a", (2,), 3), ("b", (2,), 4)])
        assert (info.value.line, info.value.event, info.value.where) == (3, "r(2)", "slow(2)")
        # the detections of a(1) and b(1) are delivered; those of a(2) (its c(2)) are dropped
        assert found(engine) == [("c", (1,), 1, 1), ("d", (1,), 1, 1), ("e", (1,), 1, 2)]
        # the goal a(2) stored before the limit stays: b(2) completes it
        assert [(d.event, d.args, d.start, d.end) for d in engine.emit("b", 2, at=4)] == [("e", (2,), 3, 4)]


def test_the_detections_an_event_wrote_before_its_limit_are_cut_by_characters_after_non_ascii_text(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "loop.etl"
    rules.write_text("e(X) <- a(X).\n" + LOOP)         # e(X) is written before the where condition loops
    events = tmp_path / "s.events"
    events.write_text("b('é').\na('ü日').\nb(3).\n")
    assert main(["run", str(rules), "--events", str(events), "--inference-limit", "100000"]) == 3
    out, err = capsys.readouterr()
    assert out == '{"event": "d", "args": ["é"], "start": 1, "end": 1}\n'
    assert err.startswith(f"{events}:2: error: event a(ü日) (line 2) took more than 100,000 inferences")


def test_each_kind_of_limit_in_a_reply_is_its_own_error() -> None:
    """The engine replies with one kind per limit: inferences (`limit`),
    the time they allow (`time`) and memory; none is taken for another."""
    inferences = EtalisError.from_reply({"kind": "limit", "line": 2, "event": "a(1)", "limit": 1000, "where": "loop(1)"})
    time = EtalisError.from_reply({"kind": "time", "line": 3, "event": "b", "limit": 2_000_000, "where": None,
                                   "seconds": 2})
    memory = EtalisError.from_reply({"kind": "memory", "line": 4, "event": "c(x)", "limit": 2**30})
    assert [type(e) for e in (inferences, time, memory)] == [InferenceLimitError, InferenceLimitError, MemoryLimitError]
    assert str(inferences) == ("event a(1) (line 2) took more than 1,000 inferences, the limit per event, "
                               f"in the where condition loop(1)\n  hint: {HINT}")
    assert str(time) == ("event b (line 3) ran for more than 2 seconds, the time that the limit of 2,000,000 "
                         f"inferences per event allows\n  hint: {HINT}")
    assert str(memory).split("\n")[0] == ("event c(x) (line 4) ran out of memory: the engine's stacks reached their "
                                          "limit of 1 GiB")


def test_a_stack_limit_is_shown_as_given_to_a_tenth() -> None:
    # ETALIS_STACK_LIMIT=22.5m reaches its limit at 22.5 MiB, not at the 22 that a rounding down showed
    assert [byte_size(n) for n in (22 * 2**20 + 2**19, 28 * 2**20, 29440 * 2**10, 2**30, 3 * 2**29, 16 * 2**30)] == \
        ["22.5 MiB", "28 MiB", "28.8 MiB", "1 GiB", "1.5 GiB", "16 GiB"]


@pytest.mark.parametrize("text_path", ["1", "0"])
def test_the_note_of_the_event_running_is_kept_alike_with_and_without_the_foreign_library(
        tmp_path: Path, text_path: str) -> None:
    """The feed notes each event's line and the output before it, in the
    foreign library when it is loaded, else in a term set in place (text
    crossing leaves the library unloaded): the detections of the event
    stopped are cut, those before it and after a raised event are kept, and
    the line is the input event's, both ways."""
    rules = tmp_path / "r.etl"
    rules.write_text("h(X) <- b(X) where X > 0.\nz(X) <- b(X) where slow(X).\n"     # h(3) is written, then z loops
                     "e(X) <- a(X).\nc(X) <- a(X) do event(r(X)).\nf(X) <- r(X).\n"
                     "slow(X) :- X =:= 3 -> loop(X) ; true.\nloop(X) :- loop(X).\n")
    events = tmp_path / "s.events"
    events.write_text("a(1).\nb(1).\nb(2).\na(2).\nb(3).\nb(4).\n")
    env = {**os.environ, "ETALIS_TEXT_PATH": text_path}
    done = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(events),
                           "--inference-limit", "100000"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 3
    assert [tuple(json.loads(line).values()) for line in done.stdout.splitlines()] == [
        ("c", [1], 1, 1), ("e", [1], 1, 1), ("f", [1], 1, 1), ("h", [1], 2, 2), ("z", [1], 2, 2),
        ("h", [2], 3, 3), ("z", [2], 3, 3), ("c", [2], 4, 4), ("e", [2], 4, 4), ("f", [2], 4, 4)]
    assert done.stderr.splitlines()[0] == (f"{events}:5: error: event b(3) (line 5) took more than 100,000 "
                                           "inferences, the limit per event, in the where condition slow(3)")
