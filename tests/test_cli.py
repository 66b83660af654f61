"""`etalis run | check | compile` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import etalis_py

# the forms of an event line, in the reason of a .events line that does not read
FORMS = ("an event line is a(1). or event(a(1), 5). or event(a(1), [5, 7]). with times in seconds; "
         "dates can be given in .jsonl or .csv files")

ETALIS = [sys.executable, "-m", "etalis_py.cli"]
PAPER_RULES = "ie <- a seq b.\ne <- ie seq c.\n"


def etalis(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ETALIS, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120)


def lines(out: str) -> list[tuple[str, list[object], float, float]]:
    return [(d["event"], d["args"], d["start"], d["end"]) for d in map(json.loads, out.splitlines())]


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    rules = tmp_path / "paper.etl"
    rules.write_text(PAPER_RULES)
    return rules


EXPECTED: dict[str, list[tuple[str, list[Any], int, int]]] = {
    "recent": [("ie", [], 3, 4), ("ie", [], 3, 5), ("e", [], 3, 6)],
    "chronological": [("ie", [], 1, 4), ("ie", [], 2, 5), ("e", [], 1, 6)],
    "unrestricted": [("ie", [], s, e) for e in (4, 5) for s in (1, 2, 3)]
    + [("e", [], s, 6) for _ in range(2) for s in (1, 2, 3)],
}


@pytest.mark.parametrize("policy", sorted(EXPECTED))
@pytest.mark.parametrize("fmt", ["events", "pl", "jsonl", "csv"])
def test_run_gives_the_papers_detections_for_each_policy_and_format(tmp_path: Path, paper: Path, policy: str, fmt: str) -> None:
    names = "a a a b b c".split()
    extra: list[str] = []
    if fmt in ("events", "pl"):
        text = "".join(f"{n}.\n" for n in names) if fmt == "events" else "".join(
            f"event({n}, {t}).\n" for t, n in enumerate(names, 1))
    elif fmt == "jsonl":
        text = "".join(json.dumps({"event": n, "time": t}) + "\n" for t, n in enumerate(names, 1))
    else:
        text = "kind,t\n" + "".join(f"{n},{t}\n" for t, n in enumerate(names, 1))
        extra = ["--event-col", "kind", "--time", "t"]
    stream = tmp_path / f"s.{fmt}"
    stream.write_text(text)
    r = etalis("run", paper, "--events", stream, "--policy", policy, *extra)
    assert r.returncode == 0, r.stderr
    found = lines(r.stdout)
    if policy == "unrestricted":
        assert sorted(found) == sorted(EXPECTED[policy])
    else:
        assert found == EXPECTED[policy]
    # the summary counts the rule file's two unbounded-memory warnings printed above it
    assert sum(": warning: " in line for line in r.stderr.splitlines()) == 2
    assert r.stderr.splitlines()[-1].startswith(
        f"events read: 6, accepted: 6, rejected: 0, detections: {len(EXPECTED[policy])}, warnings: 2, seconds: ")


def unbounded_warning(rules: Path) -> list[str]:
    """What ``run`` warns of ``c(X) <- a(X) seq b(X).`` before processing."""
    return [
        f"{rules}:1:1: warning: no window bounds this rule's pending goals: every `a(X)` waits for `b(X)` "
        "(one pending goal per occurrence, forever) [unbounded-memory]",
        "  hint: add a window to the pattern, e.g. (...) within hours(1), or :- max_age(D). to the file "
        "(--max-age D when running)",
    ]


def test_run_reports_bad_lines_counts_them_and_goes_on(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c(X) <- a(X) seq b(X).\n")
    stream = tmp_path / "s.events"
    stream.write_text(
        "% a comment\n"            # 1: skipped
        "a(1).\n"                  # 2: a(1) at its line number, 2
        "b(.\n"                    # 3: rejected
        "\n"                       # 4: skipped
        "event(b(1), [5, 3]).\n"   # 5: rejected
        "b(X).\n"                  # 6: rejected
        "event(b(1), 3).\n"        # 7: c(1) over [2, 3]
        "event(a(2), 1).\n"        # 8: rejected, too early
        "b(1)\n"                   # 9: the full stop is optional: c(1) over [2, 9]
    )
    r = etalis("run", rules, "--events", stream)
    assert r.returncode == 0
    assert lines(r.stdout) == [("c", [1], 2, 3), ("c", [1], 2, 9)]
    err = r.stderr.splitlines()
    assert err[:2] == unbounded_warning(rules)   # the rule's warning, once, before the events
    err = err[2:]
    assert err[:4] == [
        f"{stream}:3: rejected: syntax error: unexpected end of clause at column 3 ({FORMS})",
        f"{stream}:5: rejected: start 5 is after end 3",
        f"{stream}:6: rejected: event b(_) has unbound variables",
        f"{stream}:8: rejected: time 1 is earlier than the last accepted time 3 (events must arrive in time order; "
        "--lateness SECONDS accepts events up to that late)",
    ]
    assert err[4].startswith("events read: 7, accepted: 3, rejected: 4, detections: 2, warnings: 1, seconds: ")


def test_run_jsonl_rejections_carry_line_numbers(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c(X) <- a(X) seq b(X).\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text(
        '{"event": "a", "args": [1], "time": 1}\n'
        "not json\n"
        '{"event": "b", "args": [1]}\n'
        "[1, 2]\n"
        "\n"
        '{"event": "b", "args": [1], "start": 2, "end": 3}\n'
    )
    r = etalis("run", rules, "--events", stream)
    assert lines(r.stdout) == [("c", [1], 1, 3)]
    assert r.stderr.splitlines() == [
        *unbounded_warning(rules),
        f"{stream}:2: rejected: not JSON: Expecting value at column 1",
        f"{stream}:3: rejected: missing \"time\" (or \"start\" and \"end\")",
        f"{stream}:4: rejected: [1, 2] is not a JSON object",
        r.stderr.splitlines()[-1],
    ]
    assert r.stderr.splitlines()[-1].startswith("events read: 5, accepted: 2, rejected: 3, detections: 1,")


def test_run_csv_maps_columns_and_rejects_bad_rows(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("hot(S, T) <- reading(S, T) where T > 30.\n")
    stream = tmp_path / "obs.csv"
    stream.write_text(
        "when,station,temp\n"
        "2020-01-01 00:00,KJFK,31.5\n"
        "2020-01-01 01:00,KJFK,\n"
        "yesterday,KJFK,40\n"
        "2020-01-01 02:00,KLGA,29\n"
        "2020-01-01 03:00,KLGA,33,extra\n"
        "2020-01-01 04:00,KLGA,35\n"
    )
    r = etalis("run", rules, "--events", stream, "--event", "reading", "--args", "station,temp",
               "--time", "when", "--time-format", "%Y-%m-%d %H:%M")
    assert r.returncode == 0
    assert lines(r.stdout) == [("hot", ["KJFK", 31.5], 1577836800.0, 1577836800.0),
                               ("hot", ["KLGA", 35], 1577851200.0, 1577851200.0)]
    assert r.stderr.splitlines()[:3] == [
        f"{stream}:3: rejected: column 'temp' is empty",
        f"{stream}:4: rejected: time 'yesterday' does not match the format '%Y-%m-%d %H:%M'",
        f"{stream}:6: rejected: 4 fields where the header has 3",
    ]
    assert r.stderr.splitlines()[-1].startswith("events read: 6, accepted: 3, rejected: 3, detections: 2,")


def test_run_exits_2_on_a_rule_error(tmp_path: Path) -> None:
    rules = tmp_path / "bad.etl"
    rules.write_text("c <- a seq (b.\n")
    stream = tmp_path / "s.events"
    stream.write_text("a.\n")
    r = etalis("run", rules, "--events", stream)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.startswith(f"{rules}:1:")
    assert "error: syntax error" in r.stderr and "hint:" in r.stderr


def test_run_exits_1_on_a_missing_events_file(paper: Path, tmp_path: Path) -> None:
    r = etalis("run", paper, "--events", tmp_path / "none.jsonl")
    assert r.returncode == 1
    assert "does not exist" in r.stderr


def test_check_reports_ok_or_the_positioned_error(paper: Path, tmp_path: Path) -> None:
    ok = etalis("check", paper)
    assert ok.returncode == 0
    assert ok.stdout.splitlines()[-1] == f"{paper}: 2 warnings: 2 rules, 2 binary goals, policy unrestricted, reports e/0, ie/0"
    (tmp_path / "windowed.etl").write_text("ie <- (a seq b) within 5.\ne <- (ie seq c) within 5.\n")
    ok = etalis("check", tmp_path / "windowed.etl")
    assert (ok.returncode, ok.stdout) == (
        0, f"{tmp_path / 'windowed.etl'}: ok: 2 rules, 2 binary goals, policy unrestricted, reports e/0, ie/0\n")
    bad = tmp_path / "bad.etl"
    bad.write_text("c <- a seq b.\nd(X) <- a(X) or b.\n")
    r = etalis("check", bad)
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == f"{bad}:2:1: error: variable X is bound by only one branch of `or` but used outside it"


def test_compile_prints_binary_goals_and_clauses(paper: Path) -> None:
    r = etalis("compile", paper)
    assert r.returncode == 0
    assert "1: '$ie1' <- a seq b    % window inf, unrestricted" in r.stdout
    assert "'$on'(b, A, B, C) :-" in r.stdout


def test_run_reads_and_compiles_its_rule_file_once(tmp_path: Path, asked: list[str],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # the engine's create reply carries what the findings and the unused-event report need
    from etalis_py import cli

    rules = tmp_path / "r.etl"
    rules.write_text("c(X) <- a(X) seq b(X).\n")
    events = tmp_path / "s.csv"
    events.write_text("t,x\n1,1\n2,1\n")
    assert cli.main(["run", str(rules), str(events), "--event", "z", "--args", "x", "--time", "t"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[:3] == [
        f"{rules}:1:1: warning: no window bounds this rule's pending goals: every `a(X)` waits for `b(X)` "
        "(one pending goal per occurrence, forever) [unbounded-memory]",
        "  hint: add a window to the pattern, e.g. (...) within hours(1), or :- max_age(D). to the file "
        "(--max-age D when running)",
        "etalis: warning: no rule uses z/1, the event --event makes of every row (the rules' input events: a/1, b/1); "
        "did you mean --event b with 1 --args?"]
    assert err.splitlines()[3].startswith("events read: 2, accepted: 2, rejected: 0, detections: 0, warnings: 2,")
    assert asked.count("create") == 1 and "rules" not in asked and "listing" not in asked


# which stacks a command loaded, printed after it ran in a fresh interpreter
LOADED = ("import contextlib, io, sys\nfrom etalis_py.cli import main\n"
          "with contextlib.redirect_stdout(io.StringIO()):\n"
          "    try:\n        main(sys.argv[1:])\n    except SystemExit:\n        pass\n"
          "print(sorted(m for m in ('rdflib', 'owlrl', 'pyspark', 'starlette') if m in sys.modules))")


@pytest.mark.parametrize(("argv", "loaded"), [
    (["--help"], []),
    (["check", "PAPER"], []),
    (["check", str(Path(__file__).parents[1] / "examples/enhanced_fire/enhanced_fire.etl")], ["owlrl", "rdflib"]),
])
def test_rdflib_loads_only_for_rules_with_knowledge(argv: list[str], loaded: list[str], paper: Path) -> None:
    argv = [str(paper) if a == "PAPER" else a for a in argv]
    r = subprocess.run([sys.executable, "-c", LOADED, *argv], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (0, f"{loaded}\n")


def test_python_m_etalis_py_is_the_etalis_command() -> None:
    r = subprocess.run([sys.executable, "-m", "etalis_py", "--version"], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout) == (0, f"etalis {etalis_py.__version__}\n")


def test_check_reads_and_compiles_its_rule_file_once(paper: Path, asked: list[str],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # the create reply that gives the summary gives the findings' reading too
    from etalis_py import cli

    assert cli.main(["check", str(paper)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"{paper}: 2 warnings: 2 rules, 2 binary goals, policy unrestricted, reports e/0, ie/0")
    assert (asked.count("create"), asked.count("rules")) == (1, 0)
