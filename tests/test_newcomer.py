"""What a newcomer meets on the command line: summaries whose counts add up
to what was printed above them, errors with a position and a hint, and
messages without stray blank lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from etalis_py import cli


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, list[str]]:
    code = cli.main(["run", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


def warning_files(tmp_path: Path) -> tuple[Path, Path]:
    """Rules with a warning of their own (unbounded-memory at line 2),
    and events of which one raises an error in a where condition."""
    rules = tmp_path / "rules.etl"
    rules.write_text("big(X) <- a(X) where X > 2.\nalarm(X) <- hot(X) seq smoke(X).\n")
    events = tmp_path / "s.events"
    events.write_text("a(1).\na(x).\na(5).\n")
    return rules, events


def test_run_summary_counts_the_rule_files_warnings_printed_before_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules, events = warning_files(tmp_path)
    code, out, err = run(capsys, rules, "--events", events)
    assert code == cli.EXIT_OK
    assert [json.loads(line) for line in out.splitlines()] == [{"event": "big", "args": [5], "start": 3, "end": 3}]
    assert err[:-1] == [
        f"{rules}:2:1: warning: no window bounds this rule's pending goals: every `hot(X)` waits for `smoke(X)` "
        "(one pending goal per occurrence, forever) [unbounded-memory]",
        "  hint: add a window to the pattern, e.g. (...) within hours(1), or :- max_age(D). to the file "
        "(--max-age D when running)",
        f"{events}:2: warning: where condition x>2 of big(A) ({rules}:1:1) raised: x is an atom, not a number, and arithmetic compares numbers",
        "  hint: compare an atom with == or \\== (X == x), or use a number"]
    assert err[-1].startswith("events read: 3, accepted: 3, rejected: 0, detections: 1, warnings: 2, seconds: ")
    assert sum(": warning: " in line for line in err) == 2


def test_run_summary_counts_the_unused_event_warning_and_the_rule_files_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.etl"
    rules.write_text(":- input([a/0]).\nh <- (a seq b) within 10.\n")
    rows = tmp_path / "rows.csv"
    rows.write_text("t\n1\n")
    code, out, err = run(capsys, rules, "--events", rows, "--event", "aa", "--time", "t")
    assert code == cli.EXIT_OK
    assert out == ""
    assert err[:-1] == [
        f"{rules}:2:1: error: no rule derives b/0 and it is not declared as input (line 2): "
        "the pattern can never match [unknown-event]",
        "  hint: declare it as an input event: :- input(b/0).",
        "etalis: warning: no rule uses aa/0, the event --event makes of every row (the rules' input events: "
        "a/0, b/0); did you mean --event a with 0 --args?"]
    assert err[-1].startswith(
        "events read: 1, accepted: 1, rejected: 0, detections: 0, errors: 1, warnings: 1, seconds: ")


def test_run_quiet_counts_the_runs_own_warnings_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--quiet leaves the checks of the rule file out (they are not even
    made), and prints no warning line; the run's warnings are counted."""
    rules, events = warning_files(tmp_path)
    code, out, err = run(capsys, rules, "--events", events, "--quiet")
    assert code == cli.EXIT_OK
    assert len(err) == 1
    assert err[0].startswith("events read: 3, accepted: 3, rejected: 0, detections: 1, warnings: 1, seconds: ")


FORMS = ("an event line is a(1). or event(a(1), 5). or event(a(1), [5, 7]). with times in seconds; "
         "dates can be given in .jsonl or .csv files")


def test_an_events_line_that_does_not_read_gets_its_column_and_the_forms_of_an_event_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The column counts a tab and the blanks before the event as one
    each; an error in a number gets its column only."""
    rules = tmp_path / "rules.etl"
    rules.write_text("h(X) <- a(X).\n")
    events = tmp_path / "s.events"
    events.write_text("a(1) @ 2024-01-01T10:00:00\n\ta(2) 5.\n  event(a(3), 2024-01-01T10:00:00).\n"
                      "event(a(4), 1e400).\na(5).\n")
    code, out, err = run(capsys, rules, "--events", events)
    assert code == cli.EXIT_OK
    assert [json.loads(line) for line in out.splitlines()] == [{"event": "h", "args": [5], "start": 5, "end": 5}]
    assert err[:-1] == [f"{events}:1: rejected: syntax error: operator expected at column 6 ({FORMS})",
                        f"{events}:2: rejected: syntax error: operator expected at column 7 ({FORMS})",
                        f"{events}:3: rejected: syntax error: operator expected at column 25 ({FORMS})",
                        f"{events}:4: rejected: syntax error: float overflow at column 13"]
    assert err[-1].startswith("events read: 5, accepted: 1, rejected: 4, detections: 1, warnings: 0, ")


def test_format_table_shows_the_provenance_of_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.etl"
    rules.write_text("alarm(X) <- (hot(X) seq smoke(X)) within hours(2).\n")
    events = tmp_path / "s.jsonl"
    events.write_text('{"event": "hot", "args": ["r1"], "time": "2024-01-01T23:59:30Z"}\n'
                      '{"event": "smoke", "args": ["r1"], "time": "2024-01-02T00:01:00Z"}\n')
    code, out, err = run(capsys, rules, "--events", events, "--explain", "--format", "table",
                         "--tz", "Europe/Berlin")
    assert code == cli.EXIT_OK, err
    assert out == ("times in Europe/Berlin\n"
                   "event  args  start                 end       duration\n"
                   "alarm  r1    02 Jan 2024 00:59:30  01:01:00  1m 30s\n"
                   "  from hot(r1) at 00:59:30, smoke(r1) at 01:01:00\n")
    # etalis table reads the provenance back from the JSON lines, in the zone of each row
    code, out, err = run(capsys, rules, "--events", events, "--explain")
    lines = tmp_path / "d.jsonl"
    lines.write_text(out)
    names = tmp_path / "names.csv"
    names.write_text("value,name,tz\nr1,Room 1,America/New_York\n")
    assert cli.main(["table", str(lines), "--names", str(names), "--lines"]) == cli.EXIT_OK
    assert capsys.readouterr().out == (
        "alarm(Room 1), 01 Jan 2024 18:59:30 to 19:01:00 EST (1m 30s)\n"
        "  from hot(Room 1) at 18:59:30, smoke(Room 1) at 19:01:00\n")
    assert cli.main(["table", str(lines), "--tz", "UTC"]) == cli.EXIT_OK
    assert capsys.readouterr().out == (
        "times in UTC\n"
        "event  args  start                 end                   duration\n"
        "alarm  r1    01 Jan 2024 23:59:30  02 Jan 2024 00:01:00  1m 30s\n"
        "  from hot(r1) at 23:59:30, smoke(r1) at 02 Jan 2024 00:01:00\n")


STORM_RULES = "storm(S) <- (gust(S) seq gust(S)) within hours(4).\n"
GUSTS = ('{"event": "gust", "args": [7], "time": 1293396660}\n{"event": "gust", "args": [9], "time": 1293400000}\n'
         '{"event": "gust", "args": [9], "time": 1293403600}\n{"event": "gust", "args": [7], "time": 1293407460}\n')


def storm_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    rules = tmp_path / "storm.etl"
    rules.write_text(STORM_RULES)
    events = tmp_path / "gusts.jsonl"
    events.write_text(GUSTS)
    zones = tmp_path / "zones.csv"
    zones.write_text("value,name,tz\n7,KJFK,America/New_York\n9,KDEN,America/Denver\n")
    return rules, events, zones


def test_tz_alone_writes_iso_dates_which_etalis_table_reads_back(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    rules, events, _ = storm_files(tmp_path)
    code, out, err = run(capsys, rules, "--events", events, "--tz", "America/New_York")
    assert code == cli.EXIT_OK, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"event": "storm", "args": [9], "start": "2010-12-26T16:46:40-05:00", "end": "2010-12-26T17:46:40-05:00"},
        {"event": "storm", "args": [7], "start": "2010-12-26T15:51:00-05:00", "end": "2010-12-26T18:51:00-05:00"}]
    lines = tmp_path / "storms.jsonl"
    lines.write_text(out)
    assert cli.main(["table", str(lines), "--lines", "--tz", "UTC"]) == cli.EXIT_OK
    assert capsys.readouterr().out == ("storm(9), 26 Dec 2010 21:46:40 to 22:46:40 (1h 00m)\n"
                                       "storm(7), 26 Dec 2010 20:51:00 to 23:51:00 (3h 00m)\n")
    # --strftime writes no zone: such a line is refused, not misread as UTC
    code, out, err = run(capsys, rules, "--events", events, "--tz", "America/New_York", "--strftime", "%H:%M")
    lines.write_text(out)
    assert cli.main(["table", str(lines)]) == cli.EXIT_FAILURE
    assert capsys.readouterr().err.startswith(
        f"etalis: {lines}:1: not a detection (time '16:46' is not a number of seconds or an ISO 8601 date with its "
        "offset (as --iso writes it)):")


def test_run_format_table_shows_the_zones_of_a_names_file_as_etalis_table_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules, events, zones = storm_files(tmp_path)
    code, out, err = run(capsys, rules, "--events", events, "--format", "table", "--names", zones)
    assert code == cli.EXIT_OK, err
    table = ("local times: each row in the zone of its first argument that has one (else UTC)\n"
             "event  args  start                 end       zone  duration\n"
             "storm  KDEN  26 Dec 2010 14:46:40  15:46:40  MST   1h 00m\n"
             "storm  KJFK  26 Dec 2010 15:51:00  18:51:00  EST   3h 00m\n")
    assert out == table
    code, out, err = run(capsys, rules, "--events", events)
    lines = tmp_path / "storms.jsonl"
    lines.write_text(out)
    assert cli.main(["table", str(lines), "--names", str(zones)]) == cli.EXIT_OK
    assert capsys.readouterr().out == table


def test_plot_shows_times_in_the_zones_the_table_shows_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from etalis_py.outputs.plot import Timeline
    from etalis_py.outputs.detections import read_detections
    from etalis_py.outputs.report import Readable

    rules, events, zones = storm_files(tmp_path)
    code, out, err = run(capsys, rules, "--events", events)
    storms = read_detections(out.splitlines())
    readable = Readable(names={"7": "KJFK", "9": "KDEN"}, zones={"7": "America/New_York", "9": "America/Denver"})
    # in two zones: the axis in UTC; each lane says its zone, each bar its local start (the table's start)
    bars = Timeline(storms, readable=readable).figure().axes[-1]
    assert bars.get_xlabel() == "times in UTC (on a bar: its local start, in the zone by its lane)"
    assert [t.get_text() for t in bars.get_yticklabels()] == ["storm(KDEN) · MST", "storm(KJFK) · EST"]
    assert [t.get_text() for t in bars.texts] == [" 14:46:40", " 15:51:00"]
    # one zone for all: the axis is in it, as the table's rows are
    one = Timeline(storms[1:], readable=readable).figure().axes[-1]
    assert one.get_xlabel() == "times in America/New_York"
    assert [t.get_text() for t in one.get_yticklabels()] == ["storm(KJFK)"]
    assert len(one.texts) == 0
    # etalis plot reads the zones of --names as etalis table does, unless --tz
    lines = tmp_path / "storms.jsonl"
    lines.write_text(out)
    png = tmp_path / "t.png"
    assert cli.main(["plot", str(lines), "--names", str(zones), "-o", str(png)]) == cli.EXIT_OK
    assert capsys.readouterr().err == f"{png}: 2 bars in 2 lanes, 0 signals, 1200 x 210 pixels\n"
    fig = read_detections(lines.read_text().splitlines()).plot(png, names={"7": "KJFK"}, tz="Europe/Berlin",
                                                               zones={"7": "America/New_York"})
    assert fig.axes[-1].get_xlabel() == "times in Europe/Berlin (on a bar: its local start, in the zone by its lane)"


def test_run_takes_the_stream_as_its_second_argument_and_says_what_is_missing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    rules, events, _ = storm_files(tmp_path)
    code, out, err = run(capsys, rules, events)
    assert (code, [json.loads(line)["args"] for line in out.splitlines()]) == (cli.EXIT_OK, [[9], [7]])
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(GUSTS.encode())))
    code, out, err = run(capsys, rules, "-")           # cat gusts.jsonl | etalis run storm.etl -
    assert (code, [json.loads(line)["args"] for line in out.splitlines()]) == (cli.EXIT_OK, [[9], [7]])
    cases: list[tuple[list[object], str]] = [
        ([rules], "give the stream: etalis run RULES EVENTS, or --events EVENTS (- reads standard input)"),
        ([rules, "--event", "-"], "give the stream: etalis run RULES EVENTS, or --events EVENTS (- reads "
                                  "standard input) (--event names the event of every row: did you mean "
                                  "--events -?)"),
        ([rules, events, "--events", events], f"two streams: {events} and --events {events}; give one")]
    for args, message in cases:
        with pytest.raises(SystemExit) as exit:
            cli.main(["run", *map(str, args)])
        assert exit.value.code == 2
        assert capsys.readouterr().err.splitlines() == [f"etalis run: error: {message}",
                                                        "  hint: etalis run --help lists the options"]


def test_a_missing_rule_file_is_named_as_a_missing_events_file_is(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    rules, events, _ = storm_files(tmp_path)
    assert run(capsys, tmp_path / "nope.etl", events)[::2] == (
        cli.EXIT_RULES, [f"etalis: rule file {tmp_path / 'nope.etl'} does not exist"])
    assert run(capsys, rules, tmp_path / "nope.jsonl")[::2] == (
        cli.EXIT_FAILURE, [f"etalis: events file {tmp_path / 'nope.jsonl'} does not exist"])


def test_a_directory_is_named_as_such_and_a_device_or_pipe_is_read(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # a directory was "does not exist", and so was /dev/null or a pipe (<(zcat events.gz)), which can be read
    from etalis_py import Engine, RuleFileNotFound
    from etalis_py.rdf.knowledge import OntologyNotFound

    rules, events, _ = storm_files(tmp_path)
    folder = tmp_path / "folder.etl"
    folder.mkdir()
    assert run(capsys, folder, events)[::2] == (
        cli.EXIT_RULES, [f"etalis: rule file {folder} is a directory, not a file"])
    assert run(capsys, rules, folder)[::2] == (
        cli.EXIT_FAILURE, [f"etalis: events file {folder} is a directory, not a file"])
    assert run(capsys, rules, events, "--static", folder)[::2] == (
        cli.EXIT_RULES, [f"etalis: rule file {folder} is a directory, not a file"])
    with pytest.raises(RuleFileNotFound) as missing:
        Engine.from_file(folder)
    assert str(missing.value) == f"rule file {folder} is a directory, not a file"
    with Engine.from_string(STORM_RULES) as engine, pytest.raises(OntologyNotFound) as no_ontology:
        engine.load_ontology(folder)
    assert no_ontology.value.message == f"ontology file {folder} is a directory, not a file"
    code, out, err = run(capsys, rules, "/dev/null", "--input-format", "jsonl")
    assert (code, out, len(err), err[-1].split(", seconds")[0]) == (
        cli.EXIT_OK, "", 1, "events read: 0, accepted: 0, rejected: 0, detections: 0, warnings: 0")
    read, write = os.pipe()
    os.write(write, GUSTS.encode())
    os.close(write)
    try:
        code, out, _ = run(capsys, rules, f"/dev/fd/{read}", "--input-format", "jsonl")
    finally:
        os.close(read)
    assert (code, [json.loads(line)["args"] for line in out.splitlines()]) == (cli.EXIT_OK, [[9], [7]])


def test_a_column_named_twice_in_the_header_is_refused_when_it_is_used(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # the second of the two was taken, silently
    import pandas as pd

    from etalis_py import Detection, Engine

    rules, _, _ = storm_files(tmp_path)
    rows = tmp_path / "rows.csv"
    rows.write_text("station,station,time,time2,time2\n7,8,1,5,6\n")
    message = ("column 'station' appears 2 times in the header (columns 1, 2): which is meant cannot be told; "
               "rename all but one")
    assert run(capsys, rules, rows, "--event", "gust", "--args", "station", "--time", "time")[::2] == (
        cli.EXIT_FAILURE, [f"etalis: {message}"])
    frame = pd.DataFrame([[7, 8, 1]], columns=["station", "station", "time"])
    with Engine.from_string(STORM_RULES) as engine:
        with pytest.raises(ValueError) as error:
            engine.emit_frame(frame, event="gust", args=["station"], time="time")
        assert str(error.value) == message.replace("the header", "the frame")
        # a column named twice that is not used is no matter
        assert engine.emit_frame(pd.DataFrame([[7, 1, 0, 0], [7, 2, 0, 0]], columns=["station", "time", "x", "x"]),
                                 event="gust", args=["station"], time="time").detections == [
            Detection("storm", (7,), 1, 2)]
    code, out, err = run(capsys, rules, rows, "--event", "gust", "--args", "time", "--time", "time")
    assert (code, err[-1].split(", seconds")[0]) == (
        cli.EXIT_OK, "events read: 1, accepted: 1, rejected: 0, detections: 0, warnings: 0")


def test_a_mistyped_column_gets_the_closest_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pandas as pd

    from etalis_py import Engine

    rules, _, _ = storm_files(tmp_path)
    rows = tmp_path / "rows.csv"
    rows.write_text("Station,Time\n7,1\n")
    for options, message in [(["--args", "station", "--time", "Time"], "no column 'station' in the header: Station, "
                                                                         "Time; did you mean 'Station'?"),
                             (["--args", "Staton", "--time", "Time"], "no column 'Staton' in the header: Station, "
                                                                        "Time; did you mean 'Station'?"),
                             (["--args", "Station", "--time", "when"], "no column 'when' in the header: Station, "
                                                                        "Time")]:
        assert run(capsys, rules, rows, "--event", "gust", *options)[::2] == (cli.EXIT_FAILURE, [f"etalis: {message}"])
    with Engine.from_string(STORM_RULES) as engine, pytest.raises(ValueError) as error:
        engine.emit_frame(pd.DataFrame({"station": [7], "time": [1]}), event="gust", args=["staton"], time="time")
    assert str(error.value) == "no column 'staton' in the frame: station, time; did you mean 'station'?"


def test_ctrl_c_while_the_rules_load_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from etalis_py import Engine

    rules, events, _ = storm_files(tmp_path)

    def interrupted(*args: object, **kwargs: object) -> Engine:
        raise KeyboardInterrupt

    monkeypatch.setattr(Engine, "from_file", interrupted)
    assert run(capsys, rules, events) == (cli.EXIT_INTERRUPTED, "", ["etalis: interrupted (run did not finish)"])


def test_etalis_table_says_no_detections_and_names_an_input_stream_given_for_detections(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "none.jsonl"
    empty.write_text("")
    assert cli.main(["table", str(empty)]) == cli.EXIT_OK
    assert capsys.readouterr().out == "times in UTC\nno detections\n"
    _, events, _ = storm_files(tmp_path)
    assert cli.main(["table", str(events)]) == cli.EXIT_FAILURE
    assert capsys.readouterr().err == (
        f"etalis: {events}:1: not a detection (missing 'start'; it is an input event: give the detections that "
        'etalis run writes): {"event": "gust", "args": [7], "time": 1293396660}\n')


def test_times_that_are_no_dates_are_written_as_seconds_or_refused_in_words(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.etl"
    rules.write_text("alarm(X) <- hot(X) seq smoke(X).\n")
    events = tmp_path / "ancient.events"
    events.write_text("event(hot(r1), -1.0e11).\nevent(smoke(r1), -5.0e10).\n")    # before the year 1
    code, out, err = run(capsys, rules, events, "--quiet", "--iso")
    assert (code, out) == (cli.EXIT_OK, '{"event": "alarm", "args": ["r1"], "start": -100000000000.0, '
                                        '"end": "0385-07-25T07:06:40Z"}\n')
    code, out, err = run(capsys, rules, events, "--quiet", "--format", "table")
    assert (code, out, err[0]) == (cli.EXIT_FAILURE, "", "etalis: the detections cannot be written: time "
                                   "-100000000000.0 is not a date (seconds since 1970 within the years 1 to 9999)")
    assert err[1].startswith("events read: 2, accepted: 2, rejected: 0, detections: 1,")
    # times beyond the horizon (the end of the year 9999) are refused as rows
    events = tmp_path / "huge.events"
    events.write_text("event(hot(r1), 1e20).\nevent(smoke(r1), 2e20).\n")
    code, out, err = run(capsys, rules, events)
    assert (code, out) == (cli.EXIT_OK, "")
    assert [line for line in err if ": rejected: " in line] == [
        f"{events}:{n}: rejected: time {t} is beyond the horizon of 253,402,300,799 seconds (the end of the year "
        "9999): times are seconds, not milliseconds or nanoseconds" for n, t in ((1, "1.0e+20"), (2, "2.0e+20"))]
    assert err[-1].startswith("events read: 2, accepted: 0, rejected: 2, detections: 0,")
