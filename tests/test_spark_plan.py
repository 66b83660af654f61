"""Replay without Spark: the stratification of rule sets, and the mapping of
rows to events (it must make exactly the lines `etalis run` makes)."""

from __future__ import annotations

from pathlib import Path

from io import StringIO
from typing import Any

import pyarrow as pa
import pytest

from etalis_py import Engine
from etalis_py.rules.analysis import Sig, read_rules
from etalis_py.cli import main, parser, replay
from etalis_py.events import InvalidEvent
from etalis_py.spark.mapping import MapSpec, _map_rows
from etalis_py.spark.names import KIND, LINE, REASON, ROW
from etalis_py.spark.planning import InputEvents, plan
from etalis_py.inputs.mapping import Mapping, parse_value
from etalis_py.inputs.tables import column_terms, parse_cell

ROOT = Path(__file__).resolve().parents[1]
CHARLEY = ROOT / "examples" / "charley" / "charley.etl"
BLIZZARD = ROOT / "examples" / "blizzard" / "blizzard.etl"


def stages(rules_text: str, inp: InputEvents) -> list[tuple[list[str], object]]:
    """(rule heads, key) per stage; key None is global, else {event: argument}."""
    infos, _ = read_rules(rules_text, "test.etl")
    p = plan(infos, inp)
    return [([p.rule(r).head_text() for r in st.rules],
             None if st.key is None else {str(s): pos for s, pos in st.key})
            for st in p.stages]


def test_plan_runs_per_station_rules_by_station_then_area_then_globally() -> None:
    infos, _ = read_rules(CHARLEY.read_text(), str(CHARLEY))
    p = plan(infos, InputEvents("obs", 4, 0, "STATIONID"))
    assert [(st.number, [p.rule(r).head_text() for r in st.rules]) for st in p.stages] == [
        (1, ["jump(S, A, T1, T2)", "windy(S, W)"]),
        (2, ["area_jump(A, S1, S2)"]),
        (3, ["widespread(A1, A2)"]),
    ]
    first, second, third = p.stages
    assert first.by_input_key and first.key == ((Sig("obs", 4), 0),)
    assert first.exports == (Sig("jump", 4),)
    assert second.key == ((Sig("jump", 4), 1),) and second.consumes == (Sig("jump", 4),)
    assert third.key is None and third.consumes == (Sig("area_jump", 3),)


def test_plan_without_a_partition_key_is_one_global_stage() -> None:
    assert stages(BLIZZARD.read_text(), InputEvents("reading", 2)) == [
        (["blizzard_reading(T)", "spell(S, S)", "spell(S, T)", "blizzard(S, T)"], None)]


def test_plan_follows_the_key_through_rule_heads_and_recursion() -> None:
    rules = (
        "start(S, T) <- r(S, V) where V > 10, end(T).\n"
        "spell(S, T0, T) <- start(S, T0) where T = T0.\n"
        "spell(S, T0, T) <- spell(S, T0, _) seq r(S, V) where V > 10, end(T).\n"
        "long(S, T0) <- spell(S, T0, T) where T - T0 > 100.\n"
    )
    assert stages(rules, InputEvents("r", 2, 0, "station")) == [
        (["start(S, T)", "spell(S, T0, T)", "spell(S, T0, T)", "long(S, T0)"], {"r/2": 0})]


def test_plan_moves_rules_that_lose_the_key_to_a_later_stage() -> None:
    rules = (
        "hot(T) <- r(S, T) where T > 30.\n"             # stateless: safe anywhere, but its head has no key
        "two_hot(T1, T2) <- hot(T1) seq hot(T2).\n"     # joins hot events of any station
        "pair(S) <- r(S, _) seq r(S, _).\n"
    )
    assert stages(rules, InputEvents("r", 2, 0, "station")) == [
        (["hot(T)", "pair(S)"], {"r/2": 0}),
        (["two_hot(T1, T2)"], None),
    ]


def test_plan_partitions_an_aggregate_only_when_it_is_grouped_by_the_key() -> None:
    rules = (
        "avg(S, A) <- aggregate(avg(V), r(S, V), count(3), A).\n"
        "total(N) <- aggregate(count, r(_, _), count(3), N).\n"
    )
    assert stages(rules, InputEvents("r", 2, 0, "station")) == [
        (["avg(S, A)"], {"r/2": 0}),
        (["total(N)"], None),
    ]


def test_plan_runs_globally_when_the_key_column_is_not_an_argument() -> None:
    rules = "pair(S) <- r(S, _) seq r(S, _).\n"
    assert stages(rules, InputEvents("r", 2, None, "other")) == [(["pair(S)"], None)]


def test_plan_with_event_names_from_a_column_keys_every_event_of_that_arity() -> None:
    rules = (
        "ab(K) <- a(K, _) seq b(K, _).\n"
        "cross(K1, K2) <- a(K1, X) seq b(K2, X).\n"
    )
    assert stages(rules, InputEvents(None, 2, 0, "k")) == [
        (["ab(K)"], {"a/2": 0, "b/2": 0}),
        (["cross(K1, K2)"], {"a/2": 1, "b/2": 1}),
    ]


def test_replay_plan_prints_the_plan() -> None:
    ns = parser().parse_args([
        "replay", str(CHARLEY), "--events", "unused.csv", "--event", "obs",
        "--args", "STATIONID,WINDSPEED,AIRTEMPERATURE,RELATIVEHUMIDITY", "--time", "SAMPLINGTIME",
        "--partition-by", "STATIONID", "--plan"])
    out, err = StringIO(), StringIO()
    assert replay(ns, out, err) == 0
    assert out.getvalue() == (
        "input: obs/4, partition key STATIONID (argument 1)\n"
        "stage 1: partitioned by STATIONID\n"
        "  line 16: jump(S, A, T1, T2) <- obs/4\n"
        "  line 21: windy(S, W) <- obs/4\n"
        "  consumes: obs/4 (input)\n"
        "  passes on: jump/4\n"
        "stage 2: partitioned by argument 2 of jump/4\n"
        "  line 26: area_jump(A, S1, S2) <- jump/4\n"
        "  consumes: jump/4 (stage 1)\n"
        "  passes on: area_jump/3\n"
        "stage 3: global (one partition: its rules join events that share no key)\n"
        "  line 31: widespread(A1, A2) <- area_jump/3\n"
        "  consumes: area_jump/3 (stage 2)\n"
        "reported: area_jump/3, jump/4, widespread/2, windy/2\n"
    )


# -- the mapping pass, without Spark ---------------------------------------------------

TRICKY = ["5", "05", "-5", "+5", "1_000", "5.0", ".5", "5.", "1e5", "1E5", "-1e-5", "inf", "-inf", "nan",
          "NaN", "Infinity", "iphone", "night", "s1", "e5", "E5", "1.2.3", "0x10", "١٢", "٥.٥", "1_0.5", "1e",
          "true", "5,0", "x.y", "2020-01-01", "2020-01-01T00:00:00", "1e400", "-0.0", "0", "'quoted'", "a b"]


def outcome(f: Any, *args: Any) -> tuple[str, Any]:
    try:
        value = f(*args)
        return "ok", (type(value).__name__, value)
    except InvalidEvent as e:
        return "rejected", str(e)


def test_fast_value_parsing_agrees_with_etalis_run() -> None:
    for text in TRICKY:
        assert outcome(parse_cell, text, "c") == outcome(parse_value, text, "c"), text


def test_mapping_pass_makes_the_lines_of_etalis_run_or_its_reasons() -> None:
    header = ["when", "name", "a", "b"]
    rows = [["2020-01-01 00:00", "x", "1", "s1"], [" 2020-01-01 01:00 ", "y", "2.5", "it's"],
            ["2020-01-01 02:00", "$z", "1", "2"], ["2020-01-01 03:00", "x", "", "2"],
            ["bad", "x", "1", "2"], ["2020-01-01 04:00", "x", "nan", "2"], [" ", "", " ", ""],
            ["2020-01-01 05:00", "w w", "1e3", "٥"]] + [["2020-01-01 06:00", "x", t, t] for t in TRICKY]
    mapping = Mapping(event_col="name", args=("a", "b"), time="when", time_format="%Y-%m-%d %H:%M")
    # etalis run's lines for these rows: its table mapper (which tests/test_ingress_paths.py
    # holds to reference.mapping.row_reader, the definition), then what its engine rejects
    terms, why = column_terms(lambda c: ([r[header.index(c)] for r in rows], False), mapping, lambda i: False)
    reasons = dict(why)
    expected = []
    with Engine.from_string("unused <- nothing.") as engine:     # it rejects what etalis run's engine rejects
        for i, r in enumerate(rows):
            if i in reasons:
                expected.append(("r", "the row is empty" if all(not c.strip() for c in r) else reasons[i]))
                continue
            line = terms[i] + ".\n"
            engine.reset()
            refused = engine.feed_text(line).rejected
            expected.append(("r", refused[0].reason) if refused else ("e", line))
    assert ("r", "event names starting with $ are reserved ('$z')") in expected
    batch = pa.RecordBatch.from_arrays(
        [pa.array([r[i] for r in rows], pa.string()) for i in range(4)] + [pa.array(range(len(rows)), pa.int64())],
        names=[*header, ROW])
    spec = MapSpec(mapping, tuple(header), 4, False, (("x/2", 1), ("y/2", 1)))
    got: dict[int, tuple[str, str]] = {}
    for out in _map_rows(spec)(iter([batch])):
        d = out.to_pydict()
        for row, kind, line, reason in zip(d[ROW], d[KIND], d[LINE], d[REASON]):
            got[row] = ("r", reason) if kind == "r" else ("e", line)
    assert [got[i] for i in range(len(rows))] == expected


def test_replay_plan_refuses_what_replay_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A timer: the plan is printed, then the refusal, with exit status 2."""
    rules = tmp_path / "alarm.etl"
    rules.write_text("exceptionAlarm(alarm(X), 10) <- a(X).\n")
    assert main(["replay", str(rules), "--events", "unused.csv", "--event", "a", "--args", "x", "--time", "t",
                 "--plan"]) == 2
    out, err = capsys.readouterr()
    assert out == ("input: a/1\n"
                   "stage 1: global (one partition: its rules join events that share no key)\n"
                   "  line 1: alarm(X) <- a/1\n"
                   "  consumes: a/1 (input)\n"
                   "reported: alarm/1\n")
    assert err == (
        f"{rules}:1:1: error: exceptionAlarm/2 (a timer) is not supported by replay on Spark: its event occurs after "
        "the pattern, and a stage feeds each partition's rows without a time past the last one at which pending "
        "timers could fire\n"
        "  hint: run the rule file with etalis run (or Engine.emit_many and Engine.flush), which fires the pending "
        "timers at the end of the stream\n")


def test_replay_plan_takes_the_stream_files_of_etalis_run_without_a_mapping(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """JSON lines without a mapping, and event lines, are an event a line, of any name, as etalis run reads
    them; a key column or a mapping of event lines is refused with what to do."""
    rules = tmp_path / "r.etl"
    rules.write_text("hot(S) <- temp(S, T) where T > 30.\npair(S) <- temp(S, A) seq temp(S, B) where A < B.\n")
    for events in ("s.jsonl", "s.events"):
        assert main(["replay", str(rules), "--events", events, "--plan"]) == 0
        assert capsys.readouterr().out == ("input: any event\n"
                                           "stage 1: global (one partition: its rules join events that share no key)\n"
                                           "  line 1: hot(S) <- temp/2\n"
                                           "  line 2: pair(S) <- temp/2\n"
                                           "  consumes: temp/2 (input)\n"
                                           "reported: hot/1, pair/1\n")
    assert main(["replay", str(rules), "--events", "s.jsonl", "--partition-by", "station", "--plan"]) == 1
    assert capsys.readouterr().err == (
        "etalis: --partition-by names a column of a table, and s.jsonl is read an event a line: leave it out (the "
        "rules run in one partition), or map its columns with --event, --args and --time\n")
    assert main(["replay", str(rules), "--events", "s.events", "--event", "temp", "--plan"]) == 1
    assert capsys.readouterr().err == (
        "etalis: event lines are events as they are: give no mapping options (--event, --args, --time, ...)\n")
    # a JSON table with part of a mapping is still a table: what it lacks is asked for
    assert main(["replay", str(rules), "--events", "s.jsonl", "--event", "temp", "--plan"]) == 1
    assert capsys.readouterr().err == "etalis: give the time column with --time COL\n"


STRICT_REFUSED = (
    "error: h/1 is derived under the policy strict, whose events are adjacent in the whole input stream, and replay "
    "feeds an engine only part of it (a partitioned stage the events of one key, every stage only the events its "
    "rules consume)\n"
    "  hint: use the policy strict(partition) (adjacent among the events of the rule's key, as next() on a keyed "
    "stream in Flink), or run the rule file with etalis run\n")


def test_replay_refuses_strict_where_an_engine_sees_part_of_the_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`strict` counts every input event (a c between a and b breaks a seq b under etalis run): replay takes it
    only in one global stage of one input event name; strict(partition) asks only for the events of a key."""
    rules = tmp_path / "ab.etl"
    rules.write_text("h(X) <- a(X) seq b(X).\n")
    by_name = ["replay", str(rules), "--events", "unused.csv", "--event-col", "kind", "--args", "x", "--time", "t",
               "--plan"]
    # the events of each name from a column: a stage consumes a and b, not c
    assert main([*by_name, "--policy", "strict"]) == 2
    assert capsys.readouterr().err == f"{rules}:1:1: {STRICT_REFUSED}"
    # partitioned by the key of a and b: a file's own policy, and a labelled rule's
    rules.write_text(":- policy(strict).\nh(X) <- a(X) seq a(X).\n")
    one_name = ["replay", str(rules), "--events", "unused.csv", "--event", "a", "--args", "x", "--time", "t", "--plan"]
    assert main([*one_name, "--partition-by", "x"]) == 2
    assert capsys.readouterr().err == f"{rules}:2:1: {STRICT_REFUSED}"
    rules.write_text(":- policy(p, strict).\np : h(X) <- a(X) seq a(X).\n")
    assert main([*one_name, "--partition-by", "x", "--policy", "unrestricted"]) == 2
    assert capsys.readouterr().err == f"{rules}:2:1: {STRICT_REFUSED}"
    # one global stage of every input event: the counts are those of etalis run
    assert main(one_name) == 0
    rules.write_text("h(X) <- a(X) seq a(X).\n")
    assert main([*one_name, "--policy", "strict"]) == 0
    for policy in ("strict(partition)", "nxt", "unrestricted"):
        assert main([*one_name, "--partition-by", "x", "--policy", policy]) == 0
    capsys.readouterr()
