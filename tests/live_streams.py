"""What the tests of running live share: rule files whose state matters
at every moment, their streams in every input format, and running
`etalis run` (tests/test_live.py, tests/test_resume.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ETALIS = [sys.executable, "-m", "etalis_py.cli"]

SILENT = """exceptionAlarm(check(S), 7200) <- reading(S).
silent(S) <- check(S) fnot reading(S).
:- print_events([silent/1]).
"""

# A rule file whose state matters at every moment: pending hot readings
# (a window), a timer per reading and its fnot, a count.
STATEFUL = """alarm(X) <- (hot(X) seq smoke(X)) within 3600.
exceptionAlarm(check(S), 40) <- reading(S).
silent(S) <- (check(S) fnot reading(S)) within 100.
busy(X, N) <- aggregate(count, hot(X), count(5), N) where N >= 3.
:- print_events([alarm/1, silent/1, busy/2]).
"""


def stream(n: int, keys: int = 97) -> list[tuple[str, str, int]]:
    """n events (name, key, time): hot, smoke and readings of ``keys``
    keys, times a little out of order (by at most 2 seconds)."""
    kinds = ("hot", "reading", "smoke", "reading")
    return [(kinds[(i // keys) % 4], f"k{i % keys}", i - i % 3) for i in range(n)]


def write_stream(path: Path, events: list[tuple[str, str, int]]) -> None:
    kind = path.suffix
    if kind == ".events":
        text = "".join(f"event({name}({key}), {t}).\n" for name, key, t in events)
    elif kind == ".jsonl":
        text = "".join(json.dumps({"event": name, "args": [key], "time": t}) + "\n" for name, key, t in events)
    elif kind == ".csv":
        text = "name,key,time\n" + "".join(f"{name},{key},{t}\n" for name, key, t in events)
    elif kind == ".parquet":
        names, keys, times = zip(*events)
        pq.write_table(pa.table({"name": list(names), "key": list(keys), "time": list(times)}), path)
        return
    else:
        raise ValueError(kind)
    path.write_text(text, encoding="utf-8")


def stateful_files(tmp_path: Path, n: int, name: str = "e.events") -> tuple[Path, Path]:
    """The rule file of STATEFUL and a file ``name`` (its format by its
    suffix) of the first ``n`` events of :func:`stream`, in ``tmp_path``."""
    rules = tmp_path / "stateful.etl"
    rules.write_text(STATEFUL)
    events = tmp_path / name
    write_stream(events, stream(n))
    return rules, events


def mapping(path: Path) -> list[str]:
    return ["--event-col", "name", "--args", "key", "--time", "time"] if path.suffix in (".csv", ".parquet") else []


def run_cli(*args: str) -> tuple[int, str]:
    proc = subprocess.run([*ETALIS, "run", *args, "--quiet"], capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stderr


def summary(err: str) -> str:
    """The summary line, without its times."""
    last = err.strip().splitlines()[-1]
    return last.split(", seconds:")[0]
