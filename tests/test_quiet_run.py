"""A normal `etalis replay` prints its summary and nothing else: no pandas
FutureWarning, no Spark WARN lines, no log-level notes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def test_a_replay_prints_no_warnings_and_no_spark_log_lines(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c(X) <- (a(X) seq b(X)) within 10.\n")
    data = tmp_path / "e.csv"
    data.write_text("t,name,x\n1,a,1\n2,b,1\n")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("PYTHONWARNINGS", None)
    run = subprocess.run(
        [sys.executable, "-m", "etalis_py.cli", "replay", str(rules), "--events", str(data), "--event-col", "name",
         "--args", "x", "--time", "t", "--master", "local[1]", "--no-progress"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == '{"event": "c", "args": [1], "start": 1, "end": 2}\n'
    lines = run.stderr.splitlines()     # not even the JVM's notice that Spark 4 loads an incubating module
    assert [line.split(",")[0] for line in lines] == ["rows: 2", "  stage 1 (global (one partition: its rules join events that share no key); 1 rules): events in 2"]
