"""A condition that does something (prints, a `do` action) does it once for
the occurrence it admits, under every policy, and what it prints goes to
standard error, never among the detections: the policies that choose
(recent, chronological and their interval variants) test each candidate's
condition once, newest (or oldest) first, until one passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from etalis_py import cli

STREAM = "event(a(1), 1).\nevent(a(5), 2).\nevent(a(2), 3).\nevent(c, 4).\n"


@pytest.mark.parametrize("policy,detections,printed", [
    ("recent", [([2], 3, 4)], "2"),
    ("recent(longer)", [([2], 3, 4)], "2"),
    ("chronological", [([1], 1, 4)], "1"),
    ("chronological(shorter)", [([1], 1, 4)], "1"),
    ("unrestricted", [([1], 1, 4), ([2], 3, 4)], "12"),
])
def test_a_condition_prints_once_per_admitted_occurrence_on_standard_error(
        policy: str, detections: list[tuple[list[int], int, int]], printed: str,
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text(f":- policy({policy}).\ng(X) <- a(X) seq c where (X < 3, write(X)).\n")
    stream = tmp_path / "s.events"
    stream.write_text(STREAM)
    code = cli.main(["run", str(rules), "--events", str(stream), "--trusted", "--quiet"])
    out, err = capfd.readouterr()
    assert code == cli.EXIT_OK, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"event": "g", "args": args, "start": s, "end": e} for args, s, e in detections]
    assert err.startswith(printed + "events read: 4,")
