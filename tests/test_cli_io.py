"""`etalis run` on standard input and on a growing file, the command line's
shape (help, --version, --quiet), and replay's --plan and --explain."""

from __future__ import annotations

import argparse
import io
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from etalis_py import cli
from etalis_py.inputs.mapping import Mapping
from etalis_py.inputs.streams import read_live

# the forms of an event line, in the reason of a .events line that does not read
FORMS = ("an event line is a(1). or event(a(1), 5). or event(a(1), [5, 7]). with times in seconds; "
         "dates can be given in .jsonl or .csv files")

ETALIS = [sys.executable, "-m", "etalis_py.cli"]
# windowed, so that run has no warning of the rules (etalis check) to print before the events
RULES = "c(X) <- (a(X) seq b(X)) within 3600.\n"


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    path = tmp_path / "c.etl"
    path.write_text(RULES)
    return path


def run_stdin(rules: Path, text: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ETALIS, "run", str(rules), "--events", "-", *options], input=text,
                          capture_output=True, text=True, timeout=120)


STDIN_CASES = {
    "events": ("a(1).\nb(.\nb(1).\n", [], "<stdin>:2: rejected: syntax error: unexpected end of clause at column 3 (" + FORMS + ")",
               '{"event": "c", "args": [1], "start": 1, "end": 3}\n'),
    "jsonl": ('{"event": "a", "args": [1], "time": 5}\nxx\n{"event": "b", "args": [1], "time": 7}\n', [],
              "<stdin>:2: rejected: not JSON: Expecting value at column 1",
              '{"event": "c", "args": [1], "start": 5, "end": 7}\n'),
    "csv": ("k,x,t\na,1,1\nb,,2\nb,1,3\n", ["--event-col", "k", "--args", "x", "--time", "t"],
            "<stdin>:3: rejected: column 'x' is empty", '{"event": "c", "args": [1], "start": 1, "end": 3}\n'),
    "explicit jsonl": ('\n{"event": "a", "args": [1], "time": 5}\n[]\n{"event": "b", "args": [1], "time": 7}\n',
                       ["--input-format", "jsonl"], "<stdin>:3: rejected: [] is not a JSON object",
                       '{"event": "c", "args": [1], "start": 5, "end": 7}\n'),
}


@pytest.mark.parametrize("case", sorted(STDIN_CASES))
def test_run_reads_events_from_stdin(rules: Path, case: str) -> None:
    text, options, rejection, detections = STDIN_CASES[case]
    r = run_stdin(rules, text, *options)
    assert r.returncode == 0, r.stderr
    assert r.stdout == detections
    assert r.stderr.splitlines()[0] == rejection
    assert r.stderr.splitlines()[1].startswith("events read: 3, accepted: 2, rejected: 1, detections: 1,")


def test_run_on_stdin_prints_each_detection_as_it_happens(rules: Path) -> None:
    """The detection of the first two lines comes out while stdin is still
    open; later lines are numbered on from them (a bare term occurs at its
    line's number)."""
    proc = subprocess.Popen([*ETALIS, "run", str(rules), "--events", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write("a(1).\nb(1).\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == '{"event": "c", "args": [1], "start": 1, "end": 2}\n'
        proc.stdin.write("a(2).\nb(2).\n")
        proc.stdin.close()
        out, err = proc.stdout.read(), proc.stderr.read()
        assert proc.wait(timeout=120) == 0
    finally:
        proc.kill()
    assert out == '{"event": "c", "args": [2], "start": 3, "end": 4}\n'
    assert err.startswith("events read: 4, accepted: 4, rejected: 0, detections: 2,")


def test_run_follows_a_growing_file_until_the_timeout(rules: Path, tmp_path: Path) -> None:
    stream = tmp_path / "grow.jsonl"
    stream.write_text('{"event": "a", "args": [1], "time": 1}\n')

    def append() -> None:
        for line in ('{"event": "b", "args": [1], "time": 2}\n', "oops\n",
                     '{"event": "a", "args": [2], "time": 3}\n{"event": "b", "args": [2],', ' "time": 4}\n'):
            time.sleep(0.3)
            with stream.open("a") as f:
                f.write(line)

    writer = threading.Thread(target=append)
    started = time.monotonic()
    proc = subprocess.Popen([*ETALIS, "run", str(rules), "--events", str(stream), "--follow", "--follow-timeout", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    writer.start()
    out, err = proc.communicate(timeout=120)
    writer.join()
    assert proc.returncode == 0, err
    assert out == ('{"event": "c", "args": [1], "start": 1, "end": 2}\n'
                   '{"event": "c", "args": [2], "start": 3, "end": 4}\n')
    assert err.splitlines()[0] == "{}:3: rejected: not JSON: Expecting value at column 1".format(stream)
    assert err.splitlines()[1].startswith("events read: 5, accepted: 4, rejected: 1, detections: 2,")
    assert time.monotonic() - started >= 3.2       # 4 appends 0.3 s apart, then 2 s without growth


def test_follow_on_stdin_is_an_error(rules: Path) -> None:
    r = run_stdin(rules, "a(1).\n", "--follow")
    assert r.returncode == 1
    assert r.stderr == "etalis: --follow follows a growing file; standard input (-) is read until it ends anyway\n"


def test_live_csv_keeps_the_header_and_the_line_numbers_across_chunks() -> None:
    mapping = Mapping(event_col="k", args=("x",), time="t")
    batches = list(read_live(["k,x,t\na,1,1\n", "\nb,,2\n", "b,1,3"], None, mapping))
    assert [(b.text, b.first_line, [(r.line, r.reason) for r in b.rejected]) for b in batches] == [
        ("[event(a(1), 1)]", 2, []),
        ("[[],\n[]]", 3, [(4, "column 'x' is empty")]),
        ("[event(b(1), 3)]", 5, []),
    ]


def test_live_stream_kind_is_sniffed_after_blank_lines() -> None:
    batches = list(read_live(["\n", '{"event": "a", "time": 1}\n'], None, Mapping()))
    assert [(b.text, b.first_line) for b in batches] == [("[event(a, 1)]", 2)]


def walk(parser: argparse.ArgumentParser, path: str = "etalis") -> list[tuple[str, argparse.Action]]:
    found = []
    for action in parser._actions:
        found.append((path, action))
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += walk(sub, f"{path} {name}")
    return found


def test_every_argument_of_every_command_has_help() -> None:
    actions = walk(cli.parser())
    assert {path for path, _ in actions} >= {"etalis", "etalis run", "etalis replay", "etalis check",
                                             "etalis compile"}
    missing = [f"{path} {a.option_strings or a.dest}" for path, a in actions
               if not a.help or a.help == argparse.SUPPRESS]
    assert missing == []


def test_version_is_the_installed_packages() -> None:
    from importlib.metadata import version

    r = subprocess.run([*ETALIS, "--version"], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, f"etalis {version('etalis-py')}\n")


def test_a_mistyped_option_is_named_with_the_commands_closest_options(
        rules: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in [
        (["run", str(rules), "--events", "-", "--polcy", "recent"],
         "etalis run: error: unrecognized arguments: --polcy recent (did you mean --policy?)"),
        (["replay", str(rules), "--events", "x.csv", "--partiton-by=s"],
         "etalis replay: error: unrecognized arguments: --partiton-by=s (did you mean --partition-by or --partitions?)"),
        (["run", str(rules), "--events", "-", "extra"], "etalis run: error: unrecognized arguments: extra"),
        (["check", str(rules), "--format", "jsn"],
         'etalis check: error: argument --format: unknown value "jsn" (did you mean "json"?)'),
    ]:
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        err = capsys.readouterr().err
        assert (e.value.code, err) == (2, f"{message}\n  hint: etalis {argv[0]} --help lists the options\n")


def test_a_mistyped_command_or_option_before_it_is_named_with_the_closest_ones(
        capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in [
        (["ruun", "r.etl"], 'etalis: error: unknown command "ruun" (did you mean "run"?)'),
        (["tabel"], 'etalis: error: unknown command "tabel" (did you mean "table"?)'),
        (["xyz"], 'etalis: error: unknown command "xyz": choose from "run", "replay", "stream", "check", "compile", '
                  '"table", "plot", "import-etalis", "serve"'),
        (["--verison"], "etalis: error: unrecognized arguments: --verison (did you mean --version?)"),
        (["-x", "run"], "etalis: error: unrecognized arguments: -x"),
        ([], "etalis: error: give a command: run, replay, stream, check, compile, table, plot, import-etalis, serve"),
    ]:
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        err = capsys.readouterr().err
        assert (e.value.code, err) == (2, f"{message}\n  hint: etalis --help lists the options\n")


def test_a_missing_detections_or_names_file_of_table_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["table", str(tmp_path / "none.jsonl")]) == 1
    assert capsys.readouterr().err == f"etalis: {tmp_path / 'none.jsonl'}: No such file or directory\n"
    found = tmp_path / "d.jsonl"
    found.write_text('{"event": "c", "args": [1], "start": 1, "end": 3}\n')
    assert cli.main(["table", str(found), "--names", "names.csv"]) == 1
    assert capsys.readouterr().err == "etalis: names.csv: No such file or directory\n"


def test_run_warns_when_no_rule_uses_the_event_of_every_row(tmp_path: Path) -> None:
    rules = tmp_path / "hot.etl"
    rules.write_text("hot(S, T) <- reading(S, T) where T > 30.\n")
    data = tmp_path / "obs.csv"
    data.write_text("time,station,temp\n1,a,31\n2,a,29\n")

    def run(*mapping: str) -> tuple[str, list[str]]:
        ns = cli.parser().parse_args(["run", str(rules), "--events", str(data), "--time", "time", *mapping])
        out, err = io.StringIO(), io.StringIO()
        assert cli.run(ns, out, err) == 0
        return out.getvalue(), err.getvalue().splitlines()[:-1]

    hint = "(the rules' input events: reading/2); did you mean --event reading with 2 --args?"
    assert run("--event", "readng", "--args", "station,temp") == (
        "", [f"etalis: warning: no rule uses readng/2, the event --event makes of every row {hint}"])
    assert run("--event", "reading", "--args", "station") == (
        "", [f"etalis: warning: no rule uses reading/1, the event --event makes of every row {hint}"])
    assert run("--event", "reading", "--args", "station,temp") == (
        '{"event": "hot", "args": ["a", 31], "start": 1, "end": 1}\n', [])


def test_quiet_run_prints_only_the_summary_on_stderr(rules: Path) -> None:
    r = run_stdin(rules, "a(1).\nb(.\nb(1).\n", "--quiet")
    assert r.stdout == '{"event": "c", "args": [1], "start": 1, "end": 3}\n'
    assert len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith("events read: 3, accepted: 2, rejected: 1, detections: 1,")


# -- output: --out FILE --format jsonl|csv|parquet, --iso, --strftime, --tz -------------------

OUT_RULES = "c(X, Y) <- a(X, Y) seq b(X).\nd(X) <- b(X).\n"
OUT_EVENTS = ('event(a(1, \'x,"y"\'), 1293396660).\nevent(b(1), 1293407460).\n'
              "event(a(2, [1, 2]), 1293407461.5).\nevent(b(2), 1293407462.5).\n")


@pytest.fixture
def out_case(tmp_path: Path) -> tuple[Path, Path]:
    rules, events = tmp_path / "c.etl", tmp_path / "s.events"
    rules.write_text(OUT_RULES)
    events.write_text(OUT_EVENTS)
    return rules, events


def run_out(rules: Path, events: Path, *options: str) -> str:
    ns = cli.parser().parse_args(["run", str(rules), "--events", str(events), *options])
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(ns, out, err) == 0, err.getvalue()
    return out.getvalue()


def test_run_writes_iso_times_in_a_zone(out_case: tuple[Path, Path]) -> None:
    assert run_out(*out_case, "--iso", "--tz", "America/New_York").splitlines() == [
        '{"event": "c", "args": [1, "x,\\"y\\""], "start": "2010-12-26T15:51:00-05:00", '
        '"end": "2010-12-26T18:51:00-05:00"}',
        '{"event": "d", "args": [1], "start": "2010-12-26T18:51:00-05:00", "end": "2010-12-26T18:51:00-05:00"}',
        '{"event": "c", "args": [2, [1, 2]], "start": "2010-12-26T18:51:01.500000-05:00", '
        '"end": "2010-12-26T18:51:02.500000-05:00"}',
        '{"event": "d", "args": [2], "start": "2010-12-26T18:51:02.500000-05:00", '
        '"end": "2010-12-26T18:51:02.500000-05:00"}',
    ]


def test_run_writes_rfc_csv_that_pandas_reads_back(out_case: tuple[Path, Path], tmp_path: Path) -> None:
    import pandas as pd

    target = tmp_path / "d.csv"
    assert run_out(*out_case, "--out", str(target), "--strftime", "%Y-%m-%d %H:%M:%S") == ""
    assert target.read_text() == (
        "event,arg1,arg2,start,end\n"
        'c,1,"x,""y""",2010-12-26 20:51:00,2010-12-26 23:51:00\n'
        "d,1,,2010-12-26 23:51:00,2010-12-26 23:51:00\n"
        'c,2,"[1, 2]",2010-12-26 23:51:01,2010-12-26 23:51:02\n'
        "d,2,,2010-12-26 23:51:02,2010-12-26 23:51:02\n")
    frame = pd.read_csv(target, keep_default_na=False)
    assert frame.to_dict("list") == {
        "event": ["c", "d", "c", "d"], "arg1": [1, 1, 2, 2], "arg2": ['x,"y"', "", "[1, 2]", ""],
        "start": ["2010-12-26 20:51:00", "2010-12-26 23:51:00", "2010-12-26 23:51:01", "2010-12-26 23:51:02"],
        "end": ["2010-12-26 23:51:00", "2010-12-26 23:51:00", "2010-12-26 23:51:02", "2010-12-26 23:51:02"]}


def test_run_writes_csv_with_seconds_to_stdout(out_case: tuple[Path, Path]) -> None:
    assert run_out(*out_case, "--format", "csv") == (
        "event,arg1,arg2,start,end\n"
        'c,1,"x,""y""",1293396660,1293407460\n'
        "d,1,,1293407460,1293407460\n"
        'c,2,"[1, 2]",1293407461.5,1293407462.5\n'
        "d,2,,1293407462.5,1293407462.5\n")


def test_run_writes_parquet_with_typed_columns(out_case: tuple[Path, Path], tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    rules, events = out_case
    events.write_text("event(a(1, x), 10).\nevent(b(1), 20).\nevent(a(2, y), 30).\nevent(b(2), 40.5).\n")
    target = tmp_path / "d.parquet"
    assert run_out(rules, events, "--out", str(target), "--iso") == ""
    table = pq.read_table(target)
    assert [(f.name, str(f.type)) for f in table.schema] == [
        ("event", "string"), ("arg1", "int64"), ("arg2", "string"),
        ("start", "timestamp[us, tz=UTC]"), ("end", "timestamp[us, tz=UTC]")]
    rows = table.to_pylist()
    assert [(r["event"], r["arg1"], r["arg2"], r["start"].timestamp(), r["end"].timestamp()) for r in rows] == [
        ("c", 1, "x", 10, 20), ("d", 1, None, 20, 20), ("c", 2, "y", 30, 40.5), ("d", 2, None, 40.5, 40.5)]
    assert run_out(rules, events, "--out", str(target), "--format", "parquet") == ""
    assert [(f.name, str(f.type)) for f in pq.read_table(target).schema][3:] == [("start", "double"),
                                                                                ("end", "double")]


def test_run_refuses_parquet_to_stdout_and_an_unknown_zone(out_case: tuple[Path, Path]) -> None:
    rules, events = out_case
    for options, message in ((["--format", "parquet"], "etalis: parquet is written to a file: give --out FILE\n"),
                             (["--iso", "--tz", "Mars/Olympus"],
                              "etalis: unknown time zone 'Mars/Olympus': give an IANA name such as "
                              "'Europe/Berlin', or 'UTC'\n")):
        ns = cli.parser().parse_args(["run", str(rules), "--events", str(events), *options])
        out, err = io.StringIO(), io.StringIO()
        assert cli.run(ns, out, err) == 1
        assert (out.getvalue(), err.getvalue()) == ("", message)


# -- the progress line ----------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    """A clock that moves on by ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_progress_line_waits_a_second_then_redraws_in_place_and_is_wiped() -> None:
    from etalis_py.outputs.progress import WIDTH, ProgressLine

    term, clock = Terminal(), Clock(0.0)
    line = ProgressLine(term, True, clock=clock)
    for now in (0.5, 1.1, 1.2, 1.4):
        clock.now = now
        line.show(lambda elapsed: f"at {elapsed:.1f}")
    line.clear()
    assert term.getvalue() == ("\r" + "at 1.1".ljust(WIDTH) + "\r" + "at 1.4".ljust(WIDTH)
                               + "\r" + " " * WIDTH + "\r")


def test_progress_line_off_a_terminal_only_when_asked_and_then_every_15_seconds() -> None:
    from etalis_py.outputs.progress import ProgressLine, wanted

    plain = io.StringIO()
    assert (wanted(None, plain, False), wanted(None, Terminal(), False), wanted(None, Terminal(), True),
            wanted(True, plain, True), wanted(False, Terminal(), False)) == (False, True, False, True, False)
    clock = Clock(0.0)
    line = ProgressLine(plain, True, clock=clock)
    for now in (1.0, 5.0, 16.5):
        clock.now = now
        line.show(lambda elapsed: f"at {elapsed:.1f}")
    line.clear()
    assert plain.getvalue() == "at 1.0\nat 16.5\n"


def test_run_shows_rows_rate_detections_and_rejected_on_a_terminal(rules: Path, tmp_path: Path) -> None:
    stream = tmp_path / "s.events"
    stream.write_text("a(1).\nb(1).\nb(.\n")
    ns = cli.parser().parse_args(["run", str(rules), "--events", str(stream)])
    out, err = io.StringIO(), Terminal()
    assert cli.run(ns, out, err, clock=Clock(2.0)) == 0
    assert err.getvalue().startswith(
        f"{stream}:3: rejected: syntax error: unexpected end of clause at column 3 ({FORMS})\n"
        + "\r" + "etalis run 2 s: rows read 3 (2 rows/s), detections 1, rejected 1".ljust(119)
        + "\r" + " " * 119 + "\r" + "events read: 3, accepted: 2, rejected: 1, detections: 1,")


@pytest.mark.parametrize("options", [["--quiet"], ["--no-progress"]])
def test_run_shows_no_progress_when_quiet_or_told_not_to(rules: Path, tmp_path: Path, options: list[str]) -> None:
    stream = tmp_path / "s.events"
    stream.write_text("a(1).\nb(1).\n")
    ns = cli.parser().parse_args(["run", str(rules), "--events", str(stream), *options])
    err = Terminal()
    assert cli.run(ns, io.StringIO(), err, clock=Clock(2.0)) == 0
    assert err.getvalue().startswith("events read: 2, accepted: 2, rejected: 0, detections: 1,")
    assert len(err.getvalue().splitlines()) == 1


def test_run_without_a_terminal_shows_no_progress(rules: Path, tmp_path: Path) -> None:
    stream = tmp_path / "s.events"
    stream.write_text("a(1).\nb(1).\n")
    ns = cli.parser().parse_args(["run", str(rules), "--events", str(stream)])
    err = io.StringIO()
    assert cli.run(ns, io.StringIO(), err, clock=Clock(2.0)) == 0
    assert len(err.getvalue().splitlines()) == 1


# -- examples/socket_feed: events over a TCP socket on 127.0.0.1 -----------------------------

FEED = Path(__file__).resolve().parents[1] / "examples" / "socket_feed"
JUMPS = (
    '{"event": "jump", "args": ["s0", 20, 26], "start": 2, "end": 4}\n'
    '{"event": "jump", "args": ["s1", 15, 21], "start": 1, "end": 5}\n'
    '{"event": "jump", "args": ["s1", 14, 21], "start": 3, "end": 5}\n'
    '{"event": "jump", "args": ["s1", 12, 22], "start": 7, "end": 9}\n'
    '{"event": "jump", "args": ["s0", 18, 25], "start": 6, "end": 10}\n'
    '{"event": "jump", "args": ["s0", 17, 25], "start": 8, "end": 10}\n'
    '{"event": "jump", "args": ["s1", 12, 23], "start": 7, "end": 11}\n'
)


def test_socket_feed_piped_into_etalis_run_on_stdin() -> None:
    server = subprocess.Popen([sys.executable, str(FEED / "feed.py"), "serve", "--delay", "0.01"],
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    port = server.stdout.readline().strip()
    reader = subprocess.Popen([sys.executable, str(FEED / "feed.py"), "read", port], stdout=subprocess.PIPE)
    assert reader.stdout is not None
    run = subprocess.Popen([*ETALIS, "run", str(FEED / "rules.etl"), "--events", "-"], stdin=reader.stdout,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reader.stdout.close()
    try:
        out, err = run.communicate(timeout=120)
        assert (reader.wait(timeout=60), server.wait(timeout=60), run.returncode) == (0, 0, 0), err
    finally:
        for proc in (server, reader, run):
            proc.kill()
    assert out == JUMPS
    assert err.startswith("events read: 12, accepted: 12, rejected: 0, detections: 7,")


def test_socket_feed_into_the_api() -> None:
    r = subprocess.run([sys.executable, str(FEED / "feed.py"), "api"], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == JUMPS


def test_run_explain_to_csv_has_a_provenance_column(rules: Path, tmp_path: Path) -> None:
    stream = tmp_path / "s.events"
    stream.write_text("a(1).\nb(1).\n")
    assert run_out(rules, stream, "--explain", "--format", "csv", "--iso") == (
        "event,arg1,start,end,provenance\n"
        'c,1,1970-01-01T00:00:01Z,1970-01-01T00:00:02Z,"[{""event"": ""a"", ""args"": [1], '
        '""start"": ""1970-01-01T00:00:01Z"", ""end"": ""1970-01-01T00:00:01Z""}, {""event"": ""b"", '
        '""args"": [1], ""start"": ""1970-01-01T00:00:02Z"", ""end"": ""1970-01-01T00:00:02Z""}]"\n')



def test_a_csv_field_longer_than_pythons_default_limit_is_read(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # csv's field_size_limit (131,072 characters) ended etalis run with a
    # traceback: "_csv.Error: field larger than field limit (131072)"
    from etalis_py import cli

    rules = tmp_path / "r.etl"
    rules.write_text("c(X) <- a(X).\n")
    rows = tmp_path / "rows.csv"
    long = "y" * 200_000
    rows.write_text(f"event,x,time\na,1,1\na,{long},2\na,3,3\n")
    assert cli.main(["run", str(rules), "--events", str(rows), "--event-col", "event", "--args", "x",
                     "--time", "time"]) == cli.EXIT_OK
    out, err = capsys.readouterr()
    assert [json.loads(line)["args"] for line in out.splitlines()] == [[1], [long], [3]]
    assert err.startswith("events read: 3, accepted: 3, rejected: 0, detections: 3, warnings: 0,")


def test_ctrl_c_on_a_run_from_standard_input_keeps_what_it_read_and_says_so(rules: Path) -> None:
    proc = subprocess.Popen([*ETALIS, "run", str(rules), "--events", "-", "--no-progress"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write('{"event": "a", "args": [1], "time": 1}\n{"event": "b", "args": [1], "time": 2}\n')
    proc.stdin.flush()
    assert proc.stdout.readline() == '{"event": "c", "args": [1], "start": 1, "end": 2}\n'   # both read
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    lines = err.splitlines()
    assert (proc.returncode, out, lines[0], len(lines)) == (130, "", "etalis: interrupted: stopped after 2 events", 2)
    assert lines[1].startswith("events read: 2, accepted: 2, rejected: 0, detections: 1, warnings: 0, ")
