"""The Prolog modules' own plunit tests, run by SWI-Prolog from pytest."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "prolog"


@pytest.mark.parametrize("suite", sorted(p.name for p in HERE.glob("test_*.pl")))
def test_plunit_suite_passes(suite: str) -> None:
    r = subprocess.run(
        ["swipl", "-q", "-g", "run_tests", "-t", "halt", str(HERE / suite)],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ERROR" not in r.stderr and "Warning" not in r.stderr, r.stderr
