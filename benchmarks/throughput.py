"""Throughput of the engine on `c(X) <- a(X) seq b(X) within 100.`

Times are CPU seconds (the machine may be shared): (a) Prolog's CPU time of
the processing loop, (b) the process's CPU time of the emit_many call, (c)
the CPU time `etalis run` reports for its processing (reading the file,
the engine, writing detections; its start-up is not counted).

One stream, three ways in:
  (a) inside the engine: events generated in Prolog (benchmarks/throughput.pl);
  (b) through Engine.emit_many from Python;
  (c) through `etalis run` on a .events file.

The stream: event i is a(K) for even i and b(K) for odd i, K drawn from
10,000 keys by a fixed linear congruential generator, at time i * 0.01 s, so
that every figure sees exactly the same events and must give the same number
of detections.  Each (figure, size) runs in a fresh process, so peak memory
is its own; the best of --repeat runs is kept.

    .venv/bin/python benchmarks/throughput.py [--sizes 10000,100000,1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
RULES = "c(X) <- a(X) seq b(X) within 100.\n"
KEYS = 10_000
STEP = 0.01


def stream(n: int) -> Iterator[tuple[str, tuple[int], float]]:
    """The same stream as bench_inside/6 in throughput.pl."""
    seed = 12345
    for i in range(n):
        seed = (seed * 1103515245 + 12345) % 2147483648
        yield ("a" if i % 2 == 0 else "b", ((seed >> 8) % KEYS,), i * STEP)


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def child_a(n: int) -> dict[str, Any]:
    from pyswip import Prolog

    from etalis_py import Engine

    engine = Engine.from_string(RULES)
    Prolog.consult(str(HERE / "throughput.pl"))
    [answer] = list(Prolog.query(f"bench_inside({engine._name}, {n}, {KEYS}, {STEP}, D, S)"))
    return {"seconds": float(answer["S"]), "detections": int(answer["D"]),
            "pending": engine.stats().pending, "peak_mb": peak_rss_mb()}


def child_b(n: int) -> dict[str, Any]:
    from etalis_py import Engine

    events = list(stream(n))
    engine = Engine.from_string(RULES)
    started = time.process_time()
    result = engine.emit_many(events)
    seconds = time.process_time() - started
    assert result.accepted == n and not result.rejected
    return {"seconds": seconds, "detections": len(result.detections),
            "pending": engine.stats().pending, "peak_mb": peak_rss_mb()}


def child_c(n: int) -> dict[str, Any]:
    def run(rules: Path, events: Path) -> tuple[float, str, str]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(events),
                            "--quiet"], capture_output=True, text=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        return cpu, r.stdout, r.stderr

    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "rules.etl"
        rules.write_text(RULES)
        empty = Path(tmp) / "empty.events"
        empty.write_text("")
        events = Path(tmp) / "stream.events"
        with events.open("w") as f:
            for name, (k,), t in stream(n):
                f.write(f"event({name}({k}), {t!r}).\n")
        startup, _, _ = run(rules, empty)
        cpu, stdout, stderr = run(rules, events)
    summary = stderr.strip().splitlines()[-1]
    fields = dict(re.findall(r"(\w[\w ]*): ([\d.]+)", summary))
    assert int(fields["accepted"]) == n, summary
    return {"seconds": float(fields["cpu seconds"]), "startup_seconds": startup,
            "detections": len(stdout.splitlines()), "pending": int(fields["pending"]),
            "peak_mb": peak_rss_mb(resource.RUSAGE_CHILDREN)}


CHILDREN = {"a": child_a, "b": child_b, "c": child_c}
LABELS = {"a": "(a) inside the engine", "b": "(b) Engine.emit_many", "c": "(c) etalis run, .events file"}


def measure(figure: str, n: int, repeat: int) -> dict[str, Any]:
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        r = subprocess.run([sys.executable, __file__, "--child", figure, "--events", str(n)],
                           capture_output=True, text=True, check=True)
        got = json.loads(r.stdout.strip().splitlines()[-1])
        if best is None or got["seconds"] < best["seconds"]:
            best = got
    assert best is not None
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--figures", default="abc")
    p.add_argument("--child")
    p.add_argument("--events", type=int)
    ns = p.parse_args()
    if ns.child:
        print(json.dumps(CHILDREN[ns.child](ns.events)))
        return
    sizes = [int(s) for s in ns.sizes.split(",")]
    print(f"rule: {RULES.strip()}   keys: {KEYS}   step: {STEP} s   best of {ns.repeat}\n")
    print("| way in | events | CPU seconds | events/s | us/event | peak RSS MB | live pending goals | detections |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    summary = []
    for figure in ns.figures:
        costs = {}
        detections = set()
        for n in sizes:
            m = measure(figure, n, ns.repeat)
            costs[n] = m["seconds"] / n * 1e6
            detections.add((n, m["detections"]))
            print(f"| {LABELS[figure]} | {n:,} | {m['seconds']:.3f} | {n / m['seconds']:,.0f} | "
                  f"{costs[n]:.2f} | {m['peak_mb']:.0f} | {m['pending']:,} | {m['detections']:,} |", flush=True)
        ratio = costs[sizes[-1]] / costs[sizes[0]]
        summary.append(f"{LABELS[figure]}: cost per event at {sizes[-1]:,} / at {sizes[0]:,} = {ratio:.2f}")
    print()
    for line in summary:
        print(line)


if __name__ == "__main__":
    main()
