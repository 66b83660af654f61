"""Throughput of the engine on `c(X) <- a(X) seq b(X) within 100.`

Times are CPU seconds (the machine may be shared): (a) Prolog's CPU time of
the processing loop, (b) and (d) the process's CPU time of the emit_many and
emit_frame calls, (c), (e), (f) and (g) the CPU time `etalis run` reports for
its processing (reading the file, the engine, writing detections; its
start-up is not counted).

One stream, seven ways in:
  (a) inside the engine: events generated in Prolog (benchmarks/throughput.pl);
  (b) through Engine.emit_many from Python, 100,000 tuples a call (made
      before each call, not timed), detections to a callback;
  (c) through `etalis run` on a .events file;
  (d) through Engine.emit_frame, a DataFrame of 100,000 rows a call (made
      before each call, not timed), detections to a callback;
  (e), (f), (g) through `etalis run` on a .csv, .jsonl and .parquet file.

The stream: event i is a(K) for even i and b(K) for odd i, K drawn from
10,000 keys by a fixed linear congruential generator, at time i * 0.01 s, so
that every figure sees exactly the same events and must give the same number
of detections.  Each (figure, size) runs in a fresh process, so peak memory
is its own; the best of --repeat runs is kept.  The last table gives each
way's rate as a share of (a)'s, measured in the same run.

    .venv/bin/python benchmarks/throughput.py [--sizes 10000,100000,1000000] [--repeat 3] [--figures abcdefg]
        [--data DIR]   # keep the stream files there (written once: 10^7 lines take minutes)
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
from typing import TYPE_CHECKING, Any, Callable, Iterator

if TYPE_CHECKING:
    from etalis_py import Engine

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


def child_a(n: int, data: Path | None = None) -> dict[str, Any]:
    from pyswip import Prolog

    from etalis_py import Engine

    from etalis_py.bridge._prolog import bridge

    engine = Engine.from_string(RULES)
    # on the bridge's thread, where the engine's state is and its flags (optimise) are
    bridge().on_thread(lambda: Prolog.consult(str(HERE / "throughput.pl")))
    [answer] = bridge().on_thread(lambda: list(Prolog.query(f"bench_inside({engine._name}, {n}, {KEYS}, {STEP}, D, S)")))
    return {"seconds": float(answer["S"]), "detections": int(answer["D"]),
            "pending": engine.stats().pending, "peak_mb": peak_rss_mb()}


CHUNK = 100_000


def chunks(n: int) -> Iterator[list[tuple[str, tuple[int], float]]]:
    """The stream in lists of CHUNK events."""
    chunk: list[tuple[str, tuple[int], float]] = []
    for event in stream(n):
        chunk.append(event)
        if len(chunk) == CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def fed_in_calls(n: int, call: Callable[["Engine", Any], Any], prepare: Callable[[list[Any]], Any]) -> dict[str, Any]:
    """Feed the stream a chunk a call (each chunk prepared before its call,
    untimed); detections go to a callback that counts them."""
    from etalis_py import Engine

    engine = Engine.from_string(RULES)
    found = [0]
    engine.on(None, lambda d: found.__setitem__(0, found[0] + 1))
    seconds = 0.0
    accepted = 0
    for chunk in chunks(n):
        ready = prepare(chunk)
        started = time.process_time()
        result = call(engine, ready)
        seconds += time.process_time() - started
        accepted += result.accepted
        assert not result.rejected
    assert accepted == n
    return {"seconds": seconds, "detections": found[0], "pending": engine.stats().pending, "peak_mb": peak_rss_mb()}


def child_b(n: int, data: Path | None = None) -> dict[str, Any]:
    return fed_in_calls(n, lambda engine, events: engine.emit_many(events, collect=False), lambda chunk: chunk)


def child_d(n: int, data: Path | None = None) -> dict[str, Any]:
    import pandas as pd

    def frame(chunk: list[tuple[str, tuple[int], float]]) -> Any:
        return pd.DataFrame({"name": [e[0] for e in chunk], "k": [e[1][0] for e in chunk],
                             "t": [e[2] for e in chunk]})

    return fed_in_calls(n, lambda engine, df: engine.emit_frame(df, event_col="name", args=["k"], time="t",
                                                                collect=False), frame)


TABLE_OPTIONS = ["--event-col", "name", "--args", "k", "--time", "t"]


def write_events(path: Path, n: int) -> list[str]:
    with path.open("w") as f:
        for name, (k,), t in stream(n):
            f.write(f"event({name}({k}), {t!r}).\n")
    return []


def write_csv(path: Path, n: int) -> list[str]:
    with path.open("w") as f:
        f.write("name,k,t\n")
        for name, (k,), t in stream(n):
            f.write(f"{name},{k},{t!r}\n")
    return TABLE_OPTIONS


def write_jsonl(path: Path, n: int) -> list[str]:
    with path.open("w") as f:
        for name, (k,), t in stream(n):
            f.write(f'{{"event": "{name}", "args": [{k}], "time": {t!r}}}\n')
    return []


def write_parquet(path: Path, n: int) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("name", pa.string()), ("k", pa.int64()), ("t", pa.float64())])
    with pq.ParquetWriter(path, schema) as writer:
        for chunk in chunks(n):
            writer.write_table(pa.table({"name": [e[0] for e in chunk], "k": [e[1][0] for e in chunk],
                                         "t": [e[2] for e in chunk]}, schema=schema))
    return TABLE_OPTIONS


def write_apart(suffix: str, path: Path, n: int) -> None:
    """Write the stream file in a process of its own: the peak memory of
    a process survives its fork and exec into its child's ru_maxrss
    (with vfork the child's memory is its parent's until the exec), so a
    process that had held the stream as it wrote it would lend its peak
    to the `etalis run` it starts."""
    subprocess.run([sys.executable, __file__, "--write", suffix, "--events", str(n), "--to", str(path)], check=True)


def run_file(n: int, suffix: str, data: Path | None = None) -> dict[str, Any]:
    def run(rules: Path, events: Path, options: list[str]) -> tuple[float, str, str]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(events),
                            "--quiet", *options], capture_output=True, text=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        return cpu, r.stdout, r.stderr

    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "rules.etl"
        rules.write_text(RULES)
        events = (data or Path(tmp)) / f"stream-{n}{suffix}"
        if not events.exists():     # with --data, written once and kept for later runs
            part = events.with_name(events.name + ".part")
            write_apart(suffix, part, n)
            part.rename(events)
        options = [] if suffix in (".events", ".jsonl") else TABLE_OPTIONS
        cpu, stdout, stderr = run(rules, events, options)
    summary = stderr.strip().splitlines()[-1]
    fields = dict(re.findall(r"(\w[\w ]*): ([\d.]+)", summary))
    assert int(fields["accepted"]) == n, summary
    return {"seconds": float(fields["cpu seconds"]), "process_seconds": cpu,
            "detections": len(stdout.splitlines()), "pending": int(fields["pending"]),
            "peak_mb": peak_rss_mb(resource.RUSAGE_CHILDREN)}


def child_c(n: int, data: Path | None = None) -> dict[str, Any]:
    return run_file(n, ".events", data)


def child_e(n: int, data: Path | None = None) -> dict[str, Any]:
    return run_file(n, ".csv", data)


def child_f(n: int, data: Path | None = None) -> dict[str, Any]:
    return run_file(n, ".jsonl", data)


def child_g(n: int, data: Path | None = None) -> dict[str, Any]:
    return run_file(n, ".parquet", data)


WRITERS: dict[str, Callable[[Path, int], list[str]]] = {
    ".events": write_events, ".csv": write_csv, ".jsonl": write_jsonl, ".parquet": write_parquet}
CHILDREN = {"a": child_a, "b": child_b, "c": child_c, "d": child_d, "e": child_e, "f": child_f, "g": child_g}
LABELS = {"a": "(a) inside the engine", "b": "(b) Engine.emit_many", "c": "(c) etalis run, .events file",
          "d": "(d) Engine.emit_frame", "e": "(e) etalis run, .csv file", "f": "(f) etalis run, .jsonl file",
          "g": "(g) etalis run, .parquet file"}


def measure(figure: str, n: int, repeat: int, data: Path | None = None) -> dict[str, Any]:
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        r = subprocess.run([sys.executable, __file__, "--child", figure, "--events", str(n),
                            *(["--data", str(data)] if data is not None else [])],
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
    p.add_argument("--figures", default="abcdefg")
    p.add_argument("--child")
    p.add_argument("--events", type=int)
    p.add_argument("--data", type=Path, help="write the stream files here once and reuse them")
    p.add_argument("--write", help=argparse.SUPPRESS)     # a stream file of this suffix, --events long,
    p.add_argument("--to", type=Path, help=argparse.SUPPRESS)  # to this path (see write_apart)
    ns = p.parse_args()
    if ns.write:
        WRITERS[ns.write](ns.to, ns.events)
        return
    if ns.data is not None:
        ns.data.mkdir(parents=True, exist_ok=True)
    if ns.child:
        print(json.dumps(CHILDREN[ns.child](ns.events, ns.data)))
        return
    sizes = [int(s) for s in ns.sizes.split(",")]
    print(f"rule: {RULES.strip()}   keys: {KEYS}   step: {STEP} s   best of {ns.repeat}\n")
    print("| way in | events | CPU seconds | events/s | us/event | peak RSS MB | live pending goals | detections |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    summary = []
    rates: dict[str, dict[int, float]] = {}
    peaks: dict[str, dict[int, float]] = {}
    for figure in ns.figures:
        costs = {}
        for n in sizes:
            m = measure(figure, n, ns.repeat, ns.data)
            costs[n] = m["seconds"] / n * 1e6
            rates.setdefault(figure, {})[n] = n / m["seconds"]
            peaks.setdefault(figure, {})[n] = m["peak_mb"]
            print(f"| {LABELS[figure]} | {n:,} | {m['seconds']:.3f} | {n / m['seconds']:,.0f} | "
                  f"{costs[n]:.2f} | {m['peak_mb']:.0f} | {m['pending']:,} | {m['detections']:,} |", flush=True)
        ratio = costs[sizes[-1]] / costs[sizes[0]]
        summary.append(f"{LABELS[figure]}: cost per event at {sizes[-1]:,} / at {sizes[0]:,} = {ratio:.2f}; "
                       f"peak RSS at {sizes[-1]:,} / at {sizes[0]:,} = "
                       f"{peaks[figure][sizes[-1]] / peaks[figure][sizes[0]]:.2f}")
    print()
    for line in summary:
        print(line)
    if "a" in rates:
        print("\n| way in | " + " | ".join(f"rate / (a) at {n:,}" for n in sizes) + " |")
        print("|---|" + "---:|" * len(sizes))
        for figure in ns.figures:
            print(f"| {LABELS[figure]} | " + " | ".join(f"{rates[figure][n] / rates['a'][n]:.2f}" for n in sizes) + " |")

if __name__ == "__main__":
    main()
