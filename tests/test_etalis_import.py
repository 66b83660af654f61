"""`etalis import-etalis`: the event stream of an original ETALIS test driver.

The drivers here are written for these tests, in the forms ETALIS's
drivers take: a script of `swipl -g "..."` lines and stream files read by
execute_event_stream_file/1.
"""

from __future__ import annotations

import calendar
import json
from pathlib import Path

import pytest

from etalis_py import Engine
from etalis_py.cli import main
from etalis_py.errors import EtalisError
from etalis_py.inputs.etalis_import import Skipped, read_driver

SCRIPT = """\
% swipl -g "event(commented_out), halt."
swipl -g "open('../results.txt',append,FH), ['../../src/etalis.P'], set_etalis_flag(store_fired_events,on), set_etalis_flag(event_consumption_policy,chronological), compile_event_file('rules.event'), event(a(1)), event(b(1)), sleep(5), event(a(2)), execute_event_stream_file('s.stream'), findall(E, stored_event(E), L), ( L = [] -> write(FH, failed) ; write(FH, passed) ), halt."
swipl -g "['../../src/etalis.P'], compile_event_file('rules.event'), event(c(9)), event(event(c(8), [3, 4])), halt."
"""

STREAM = """\
% application time: timestamps given by the producers
event(b(2), [datime(2011,11,17,12,55,0,1), datime(2011,11,17,12,55,0,1)]).
event(b(3), [datime(2011,11,17,12,55,0), datime(2011,11,17,12,55,0)]).
event(b(4), [datime(2011,11,17,12,55,0), datime(2011,11,17,12,55,0)]).
sleep(2).
event(long(x,
           'two words'),
      [datime(2012,2,29,23,59,59,1), datime(2012,3,1,0,0,1,3)]).
plain(7).
event(open_term(X)).
event(bad_time, datime(2011,11,17,12,55,0)).
event(bad_month, [datime(2011,13,1,0,0,0,1), datime(2011,13,1,0,0,0,1)]).
helper(X) :- X > 1.
event(after).
"""

T0 = calendar.timegm((2011, 11, 17, 12, 55, 0))
LEAP = calendar.timegm((2012, 2, 29, 23, 59, 59))


@pytest.fixture
def driver(tmp_path: Path) -> Path:
    (tmp_path / "test.sh.bat").write_text(SCRIPT)
    (tmp_path / "s.stream").write_text(STREAM)
    (tmp_path / "rules.event").write_text("c(X) <- a(X) seq b(X).\n")
    return tmp_path / "test.sh.bat"


def test_a_driver_run_gives_its_events_in_order_with_etalis_times(driver: Path) -> None:
    stream = read_driver(driver)
    assert stream.events.splitlines() == [
        "event(a(1),1).",                     # event(E): one second after the clock, from 1
        "event(b(1),2).",
        "event(a(2),8).",                     # after sleep(5)
        f"event(b(2),{T0}).",                 # datime/7 with counter 1: the epoch second (UTC)
        f"event(b(3),{T0}).",                 # datime/6: ETALIS's counter of that second's datime/6 events, 1
        f"event(b(4),{T0}.000001).",          # and 2
        f"event(long(x,'two words'),[{LEAP},{LEAP + 2}.000002]).",  # a leap day; counter 3
        f"event(plain(7),{LEAP + 3}).",       # a bare term is an event; the clock was at LEAP + 2.000002
        f"event(after,{LEAP + 4}).",
    ]
    assert stream.runs == 2
    assert stream.rules == (str(driver.parent / "rules.event"),)
    assert stream.flags == ("store_fired_events=on", "event_consumption_policy=chronological")
    assert (stream.etalis_policy, stream.policy) == ("chronological", "chronological")
    s = str(driver.parent / "s.stream")
    assert stream.skipped == (
        Skipped(s, 10, "event(open_term(A)): the event is not ground"),
        Skipped(s, 11, "event(bad_time,datime(2011,11,17,12,55,0)): the time is not a number or [Start, End]"),
        Skipped(s, 12, "event(bad_month,[datime(2011,13,1,0,0,0,1),datime(2011,13,1,0,0,0,1)]): "
                       "datime(2011,13,1,0,0,0,1) is not a datime(Y,M,D,H,Min,S[,Counter]) or a number"),
        Skipped(s, 13, "a clause for helper/1 is not an event (put background knowledge into the rule file)"),
    )


def test_the_second_run_of_a_script_and_etalis_default_policy(driver: Path) -> None:
    stream = read_driver(driver, run=2)
    assert stream.events.splitlines() == ["event(c(9),1).", "event(c(8),[3,4])."]
    assert stream.flags == ()
    assert (stream.etalis_policy, stream.policy) == ("recent", "recent")
    with pytest.raises(EtalisError, match=r"test.sh.bat has 2 runs \(swipl -g lines\), not 3"):
        read_driver(driver, run=3)


def test_a_stream_file_that_does_not_read_is_left_out_term_by_term(tmp_path: Path) -> None:
    f = tmp_path / "bad.stream"
    f.write_text("event(a).\nevent(b(.\nevent(c).\n")
    stream = read_driver(f)
    assert stream.events.splitlines() == ["event(a,1).", "event(c,2)."]
    assert stream.skipped == (Skipped(str(f), 2, "does not read: syntax error: end_of_clause"),)
    assert stream.runs == 0


def test_import_etalis_then_run_gives_etalis_detections(driver: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["import-etalis", "test.sh.bat", "--out", "s.events"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "s.stream:10: left out: event(open_term(A)): the event is not ground",
        "s.stream:11: left out: event(bad_time,datime(2011,11,17,12,55,0)): the time is not a number or [Start, End]",
        "s.stream:12: left out: event(bad_month,[datime(2011,13,1,0,0,0,1),datime(2011,13,1,0,0,0,1)]): "
        "datime(2011,13,1,0,0,0,1) is not a datime(Y,M,D,H,Min,S[,Counter]) or a number",
        "s.stream:13: left out: a clause for helper/1 is not an event (put background knowledge into the rule file)",
        "test.sh.bat: 9 events from run 1 of 2, 4 left out; "
        "as ETALIS: etalis run rules.event --events s.events --policy chronological",
    ]
    engine = Engine.from_file(tmp_path / "rules.event", policy="chronological")
    result = engine.feed_text((tmp_path / "s.events").read_text())
    found = [(d["event"], d["args"], d["start"], d["end"]) for d in map(json.loads, result.detection_lines.splitlines())]
    assert found == [("c", [1], 1, 2), ("c", [2], 8, T0)]
    engine.close()


def test_import_etalis_of_a_missing_driver_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import-etalis", str(tmp_path / "none.sh")]) == 1
    assert capsys.readouterr().err == f"etalis: the ETALIS driver {tmp_path / 'none.sh'} does not exist\n"


def test_a_driver_out_of_time_order_says_the_lateness_it_needs(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rules.event").write_text("d(X) <- a(X) seq b(X).\n")
    driver = tmp_path / "test.sh.bat"
    driver.write_text('swipl -g "[\'../../src/etalis.P\'], set_etalis_flag(out_of_order,on), '
                      "compile_event_file('rules.event'), event(b(1),[5,5]), event(c,[2,3]), event(a(1),[1,1]), halt.\"\n")
    stream = read_driver(driver)
    assert stream.lateness == 4
    assert main(["import-etalis", str(driver), "--out", str(tmp_path / "s.events")]) == 0
    assert capsys.readouterr().err.endswith("--policy recent --lateness 4\n")
    engine = Engine.from_file(tmp_path / "rules.event", policy="recent", lateness=stream.lateness)
    result = engine.feed_text(stream.events)
    lines = result.detection_lines + engine.flush_lines()
    assert [(d["event"], d["args"], d["start"], d["end"]) for d in map(json.loads, lines.splitlines())] == [
        ("d", [1], 1, 5)]
    engine.close()


def test_a_file_the_driver_consults_is_static_knowledge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rules.event").write_text("c(X) <- a(X) seq b(Y) where near(X, Y).\n")
    (tmp_path / "kb.db").write_text("near(X, Y) :- Y =:= X + 1.\n")
    (tmp_path / "test.sh.bat").write_text(
        "swipl -g \"['../../src/etalis.P'], ['kb.db'], compile_event_file('rules.event'), "
        "event(a(1)), event(b(3)), event(b(2)), halt.\"\n")
    assert read_driver(tmp_path / "test.sh.bat").static == (str(tmp_path / "kb.db"),)
    assert main(["import-etalis", "test.sh.bat", "--out", "s.events"]) == 0
    assert capsys.readouterr().err == ("test.sh.bat: 3 events from the driver; as ETALIS: "
                                       "etalis run rules.event --static kb.db --events s.events --policy recent\n")
    assert main(["run", "rules.event", "--static", "kb.db", "--events", "s.events", "--policy", "recent",
                 "--quiet"]) == 0
    assert capsys.readouterr().out == '{"event": "c", "args": [1], "start": 1, "end": 3}\n'
