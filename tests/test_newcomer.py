"""What a newcomer meets on the command line: summaries whose counts add up
to what was printed above them, errors with a position and a hint, and
messages without stray blank lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from etalis_py import cli


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, list[str]]:
    code = cli.main(["run", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


def test_run_summary_counts_the_rule_files_warnings_printed_before_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.etl"
    rules.write_text("big(X) <- a(X) where X > 2.\nalarm(X) <- hot(X) seq smoke(X).\n")
    events = tmp_path / "s.events"
    events.write_text("a(1).\na(x).\na(5).\n")
    code, out, err = run(capsys, rules, "--events", events)
    assert code == cli.EXIT_OK
    assert [json.loads(line) for line in out.splitlines()] == [{"event": "big", "args": [5], "start": 3, "end": 3}]
    assert err[:-1] == [
        f"{rules}:2:1: warning: no window bounds this rule's pending goals: every `hot(X)` waits for `smoke(X)` "
        "(one pending goal per occurrence, forever) [unbounded-memory]",
        "  hint: add a window to the pattern, e.g. (...) within hours(1), or :- max_age(D). to the file "
        "(--max-age D when running)",
        f"{events}:2: warning: where condition x>2 raised: >/2: Arithmetic: `x/0' is not a function"]
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
    rules = tmp_path / "rules.etl"
    rules.write_text("big(X) <- a(X) where X > 2.\nalarm(X) <- hot(X) seq smoke(X).\n")
    events = tmp_path / "s.events"
    events.write_text("a(1).\na(x).\na(5).\n")
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
