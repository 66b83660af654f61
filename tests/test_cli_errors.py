"""Every subcommand says every error in one or two lines (what, where, what
to do) with the exit status of README.md's table, never with a traceback:
missing files and directories where a file is expected, files that cannot
be read (a symbolic link to itself; tests run as root, whom no permission
stops), text that is not UTF-8, bad options, and a Spark job that fails.

A new subcommand or option gets its cases in CASES (in-process) or
SPARK_CASES (a process of its own: Spark's JVM)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from etalis_py import cli

MAP = ["--event", "a", "--args", "x", "--time", "t"]
RUN = ["run", "w.etl", "ok.csv", *MAP]
REPLAY = ["replay", "w.etl", "--events", "ok.csv", *MAP]
DETECTION = '{"event": "h", "args": [1], "start": 1, "end": 2}\n'
POLICY_HINT = ("use unrestricted, recent or chronological, or for intervals recent(Pref) or chronological(Pref) "
               "with Pref longer, shorter or greater(N), or a selection strategy: strict, nxt, last, max, stn, "
               "continuous or cumulative")
NOT_UTF8 = ("latin.etl:1:14: error: rule file is not UTF-8: byte 0x81 at line 1 column 14\n"
            "  hint: save the rule file as UTF-8 text (this looks like Latin-1, Windows-1252 or binary data)\n")


def usage(command: str, message: str) -> str:
    return f"etalis {command}: error: {message}\n  hint: etalis {command} --help lists the options\n"


# name: (argv, exit status, stderr)
CASES: dict[str, tuple[list[str], int, str]] = {
    "run: rule file missing": (["run", "none.etl", "ok.csv", *MAP], 2, "etalis: rule file none.etl does not exist\n"),
    "run: rule file a directory": (["run", "adir", "ok.csv", *MAP], 2,
                                   "etalis: rule file adir is a directory, not a file\n"),
    "run: rule file a link to itself": (["run", "loop", "ok.csv", *MAP], 2,
                                        "etalis: rule file loop does not exist\n"),
    "run: events missing": (["run", "w.etl", "none.csv", *MAP], 1, "etalis: events file none.csv does not exist\n"),
    "run: events a directory": (["run", "w.etl", "adir", *MAP], 1,
                                "etalis: events file adir is a directory, not a file\n"),
    "run: events a link to itself": (["run", "w.etl", "loop", *MAP], 1, "etalis: events file loop does not exist\n"),
    "run: out in a missing directory": ([*RUN, "--out", "none/x.jsonl"], 1,
                                        "etalis: none/x.jsonl: No such file or directory\n"),
    "run: out a directory": ([*RUN, "--out", "adir"], 1, "etalis: adir: Is a directory\n"),
    "run: parquet out a directory": ([*RUN, "--out", "adir", "--format", "parquet"], 1,
                                     "etalis: Failed to open local file 'adir'. Detail: [errno 21] Is a directory\n"),
    "run: names missing": ([*RUN, "--format", "table", "--names", "none.csv"], 1,
                           "etalis: none.csv: No such file or directory\n"),
    "run: ontology missing": ([*RUN, "--ontology", "none.ttl"], 2,
                              "none.ttl: error: ontology file none.ttl does not exist\n"),
    "run: ontology a directory": ([*RUN, "--ontology", "adir"], 2,
                                  "adir: error: ontology file adir is a directory, not a file\n"),
    "run: static missing": ([*RUN, "--static", "none.pl"], 2, "etalis: rule file none.pl does not exist\n"),
    "run: no such column": (["run", "w.etl", "ok.csv", "--event", "a", "--args", "x", "--time", "when"], 1,
                            "etalis: no column 'when' in the header: t, x\n"),
    "run: not parquet": ([*RUN, "--input-format", "parquet"], 1,
                         "etalis: ok.csv: not a Parquet file (Parquet magic bytes not found in footer. Either the "
                         "file is corrupted or this is not a parquet file.)\n"),
    "run: rule file not UTF-8": (["run", "latin.etl", "ok.csv", *MAP], 2, NOT_UTF8),
    "run: unknown zone": ([*RUN, "--tz", "Mars/Olympus"], 1,
                          "etalis: unknown time zone 'Mars/Olympus': give an IANA name such as 'Europe/Berlin', "
                          "or 'UTC'\n"),
    "run: bad policy": ([*RUN, "--policy", "bogus"], 2,
                        usage("run", f"argument --policy: unknown policy 'bogus': {POLICY_HINT}")),
    "run: bad number": ([*RUN, "--max-age", "soon"], 2, usage("run", "argument --max-age: invalid float value: 'soon'")),
    "run: unknown option": ([*RUN, "--polcy", "recent"], 2,
                            usage("run", "unrecognized arguments: --polcy recent (did you mean --policy?)")),
    "run: no stream": (["run", "w.etl"], 2, usage(
        "run", "give the stream: etalis run RULES EVENTS, or --events EVENTS (- reads standard input)")),
    "check: rule file missing": (["check", "none.etl"], 2, "etalis: rule file none.etl does not exist\n"),
    "check: rule file a directory": (["check", "adir"], 2, "etalis: rule file adir is a directory, not a file\n"),
    "check: rule file not UTF-8": (["check", "latin.etl"], 2, NOT_UTF8),
    "check: dot a directory": (["check", "w.etl", "--dot", "adir"], 1, "etalis: --dot adir: Is a directory\n"),
    "check: dot in a missing directory": (["check", "w.etl", "--dot", "none/g.dot"], 1,
                                          "etalis: --dot none/g.dot: No such file or directory\n"),
    "check: bad format": (["check", "w.etl", "--format", "xml"], 2,
                          usage("check", 'argument --format: unknown value "xml": choose from "text", "json"')),
    "compile: rule file missing": (["compile", "none.etl"], 2, "etalis: rule file none.etl does not exist\n"),
    "compile: static a directory": (["compile", "w.etl", "--static", "adir"], 2,
                                    "etalis: rule file adir is a directory, not a file\n"),
    "table: detections missing": (["table", "none.jsonl"], 1, "etalis: none.jsonl: No such file or directory\n"),
    "table: detections a directory": (["table", "adir"], 1, "etalis: adir: Is a directory\n"),
    "table: detections not UTF-8": (["table", "latin.jsonl"], 1,
                                    "etalis: latin.jsonl:2: not a detection (line is not UTF-8: byte 0xff at "
                                    "column 12)\n"),
    "table: not detections": (["table", "ok.csv"], 1,
                              "etalis: ok.csv:1: not a detection (Expecting value: line 1 column 1 (char 0)): t,x\n"),
    "table: names a directory": (["table", "det.jsonl", "--names", "adir"], 1, "etalis: adir: Is a directory\n"),
    "table: names not UTF-8": (["table", "det.jsonl", "--names", "latin.csv"], 1,
                               "etalis: names file latin.csv is not UTF-8: byte 0xe9 at byte 17; save it as UTF-8 "
                               "text\n"),
    "plot: picture a directory": (["plot", "det.jsonl", "-o", "adir"], 1, "etalis: adir: Is a directory\n"),
    "plot: picture in a missing directory": (["plot", "det.jsonl", "-o", "none/p.png"], 1,
                                             "etalis: none/p.png: No such file or directory\n"),
    "plot: signals missing": (["plot", "det.jsonl", "-o", "p.png", "--events", "none.csv", "--signal", "x",
                               "--time", "t"], 1, "etalis: none.csv: No such file or directory\n"),
    "plot: no picture": (["plot", "det.jsonl"], 2, usage("plot", "the following arguments are required: -o/--output")),
    "import-etalis: driver missing": (["import-etalis", "none.P"], 1,
                                      "etalis: the ETALIS driver none.P does not exist\n"),
    "import-etalis: driver a directory": (["import-etalis", "adir"], 1,
                                          "etalis: the ETALIS driver adir is a directory, not a file\n"),
    "replay: rule file missing": (["replay", "none.etl", "--events", "ok.csv", *MAP], 2,
                                  "etalis: rule file none.etl does not exist\n"),
    "replay: events missing": (["replay", "w.etl", "--events", "none.csv", *MAP], 1,
                               "etalis: events file none.csv does not exist\n"),
    "replay: ontology missing": ([*REPLAY, "--ontology", "none.ttl"], 2,
                                 "none.ttl: error: ontology file none.ttl does not exist\n"),
    "replay: static missing": ([*REPLAY, "--static", "none.pl"], 2, "etalis: rule file none.pl does not exist\n"),
    "replay: plan of a missing rule file": (["replay", "none.etl", "--events", "ok.csv", *MAP, "--plan"], 2,
                                            "etalis: rule file none.etl does not exist\n"),
    "replay: bad conf": ([*REPLAY, "--conf", "spark.x"], 1, "etalis: --conf spark.x: give KEY=VALUE\n"),
    "replay: no partitions": ([*REPLAY, "--partitions", "0"], 2,
                              usage("replay", "argument --partitions: give 1 or more, not 0")),
    "replay: table to a file": ([*REPLAY, "--format", "table", "--out", "o"], 1,
                                "etalis: --format table is printed: leave out --out (or write jsonl there and use "
                                "etalis table)\n"),
    "no command": ([], 2, "etalis: error: give a command: run, replay, stream, check, compile, table, plot, "
                          "import-etalis, serve\n"
                          "  hint: etalis --help lists the options\n"),
}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The files of the cases, in the current directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.etl").write_text("h(X) <- (a(X) seq b(X)) within 10.\n")
    (tmp_path / "ok.csv").write_text("t,x\n1,1\n2,2\n")
    (tmp_path / "det.jsonl").write_text(DETECTION)
    (tmp_path / "latin.jsonl").write_bytes(DETECTION.encode() + b'{"event": "\xff"}\n')
    (tmp_path / "latin.etl").write_bytes(b"h(X) <- a(X) \x81 b(X).\n")   # 0x81: not even Windows-1252
    (tmp_path / "latin.csv").write_bytes(b"value,name\n1,caf\xe9\n")
    (tmp_path / "adir").mkdir()
    (tmp_path / "loop").symlink_to("loop")
    return tmp_path


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_error_is_one_or_two_lines_and_its_exit_status(
        case: str, folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, status, message = CASES[case]
    try:
        code = cli.main(argv)
    except SystemExit as e:     # the command line did not parse
        code = int(e.code or 0)
    err = capsys.readouterr().err
    assert (code, err) == (status, message)
    assert 1 <= len(err.splitlines()) <= 2


ETALIS = [sys.executable, "-m", "etalis_py.cli"]

# name: (argv, stderr); each exits 1
SPARK_CASES: dict[str, tuple[list[str], str]] = {
    "a master that does not exist": (
        [*REPLAY, "--master", "nowhere://x"],
        "etalis: Spark did not start: [JAVA_GATEWAY_EXITED] Java gateway process exited before sending its port "
        "number.\n  hint: check --master and --conf, and that a Java runtime is installed (java -version)\n"),
    "a job whose tasks fail": (
        # the Python workers cannot start: no standard library where PYTHONHOME says
        [*REPLAY, "--master", "local[1,2]", "--conf", "spark.executorEnv.PYTHONHOME=/nonexistent"],
        "etalis: the Spark job failed (Task 0 in stage 2.0 failed 2 times): a Python worker did not start: "
        "ModuleNotFoundError: No module named 'encodings'\n"
        "  hint: that is the last attempt's error; docs/spark.md (When a replay fails) says what to check\n"),
}


@pytest.mark.parametrize("case", sorted(SPARK_CASES))
def test_a_failing_spark_is_said_in_two_lines(case: str, folder: Path) -> None:
    argv, message = SPARK_CASES[case]
    r = subprocess.run([*ETALIS, *argv], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONWARNINGS": "ignore::FutureWarning"})
    assert (r.returncode, r.stdout, r.stderr) == (1, "", message)


def test_a_finding_is_not_said_again_as_a_python_warning(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "cp1252.etl").write_bytes(b"\xe9t\xe9(X) <- a(X) where X > 1.\n")
    assert cli.main(["run", "cp1252.etl", "ok.csv", "--event", "a", "--args", "x", "--time", "t"]) == 0
    out, err = capsys.readouterr()
    assert (out, err.splitlines()[:-1]) == ('{"event": "\u00e9t\u00e9", "args": [2], "start": 2, "end": 2}\n', [
        "cp1252.etl:1:1: warning: the file is not UTF-8 (from here): it is read as Windows-1252, as original "
        "ETALIS reads source files [not-utf8]",
        "  hint: save the file as UTF-8 text if it is not Windows-1252 or Latin-1"])


def test_a_warning_that_comes_again_is_said_once_and_counted(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "hot.etl").write_text("hot(S) <- r(S, T) where T > 30.\n")
    (folder / "temps.csv").write_text("t,s,temp\n" + "".join(
        f"{i},s{i % 3},{'n/a' if i % 2 else i}\n" for i in range(1, 101)))
    assert cli.main(["run", "hot.etl", "temps.csv", "--event", "r", "--args", "s,temp", "--time", "t"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[:-1] == [
        "temps.csv:2: warning: where condition 'n/a'>30 of hot(A) (hot.etl:1:1) raised: 'n/a' is an atom, not a number, and arithmetic compares numbers",
        "  hint: compare an atom with == or \\== (X == 'n/a'), or use a number",
        "temps.csv:2: warning: the warning of line 2 came 50 times, the last at line 100"]
    assert err[-1].startswith("events read: 100, accepted: 100, rejected: 0, detections: 35, warnings: 50,")


def test_run_with_an_event_named_as_a_column_asks_whether_event_col_was_meant(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "kinds.csv").write_text("ev,x,t\na,1,1\nb,1,2\n")
    assert cli.main(["run", "w.etl", "kinds.csv", "--event", "ev", "--args", "x", "--time", "t"]) == 0
    out, err = capsys.readouterr()
    assert (out, err.splitlines()[0]) == ("", "etalis: warning: --event ev makes every row the event ev, but ev is a "
                                              "column of kinds.csv: did you mean --event-col ev?")
    assert err.splitlines()[1].startswith("events read: 2, accepted: 2, rejected: 0, detections: 0, warnings: 1,")
    assert cli.main(["run", "w.etl", "kinds.csv", "--event-col", "ev", "--args", "x", "--time", "t"]) == 0
    assert capsys.readouterr().out == '{"event": "h", "args": [1], "start": 1, "end": 2}\n'
