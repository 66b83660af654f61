"""Replay on Spark against `etalis run`, on the same synthetic CSV file.

The data: N readings `t,sensor,value` of 10,000 sensors, reading i at time
i * 0.01 s from sensor K and with value V drawn by a fixed linear
congruential generator.  The rule is per sensor, so a replay partitioned by
sensor runs it in one stage:

    rise(S, V1, V2) <- (reading(S, V1) seq reading(S, V2)) within 200 where V2 >= V1 + 90.

For each size, one run each, each in a fresh process; wall-clock time of the
whole command (Spark's start included), and the CPU seconds of its whole
process tree (the driver, Spark's JVM, the Python workers), sampled from
/proc, since on a machine shared with other work wall time says as much
about the others as about the run:
  - `etalis run rules.etl --events data.csv ...`
  - `etalis replay ... --partition-by sensor --master local[1]`
  - `etalis replay ... --partition-by sensor --master local[2]`
and every run must print the same detections (compared as sorted lines).
The JVM's share is the CPU of the `java` processes of the tree; the rest
is the driver and the Python workers.  Per core, replay's rate against
`etalis run`'s is run's CPU seconds over replay local[1]'s (the
target: at least 0.8, docs/benchmarks.md).

With `--flink PYTHON` (a Python with `apache-flink` installed, e.g. in a
venv of its own), the same rule also runs as Flink SQL's MATCH_RECOGNIZE
(benchmarks/flink_match.py, parallelism 1, on the file without its
header).  MATCH_RECOGNIZE has no all-matches mode, so it finds the first
qualifying later reading per reading (less what SKIP TO NEXT ROW consumes):
its matches are compared as a subset of etalis's detections, every one of
them must be one.

    .venv/bin/python benchmarks/replay.py [--sizes 1000000,10000000] [--keep DIR] [--flink PYTHON]
        [--masters local[1]]   # only local[1] beside etalis run
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

RULES = "rise(S, V1, V2) <- (reading(S, V1) seq reading(S, V2)) within 200 where V2 >= V1 + 90.\n"
KEYS = 10_000
MAPPING = ["--event", "reading", "--args", "sensor,value", "--time", "t"]


def write_data(path: Path, n: int) -> None:
    seed = 12345
    with path.open("w") as f:
        f.write("t,sensor,value\n")
        lines = []
        for i in range(n):
            seed = (seed * 1103515245 + 12345) % 2147483648
            lines.append(f"{i * 0.01:.2f},s{(seed >> 8) % KEYS},{(seed >> 4) % 100}\n")
            if len(lines) >= 100_000:
                f.writelines(lines)
                lines = []
        f.writelines(lines)


TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(root: int) -> dict[int, tuple[str, float]]:
    """CPU seconds (user + system) so far of ``root`` and its descendants."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    info: dict[int, tuple[str, float]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        command = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        children[int(fields[1])].append(int(name))
        info[int(name)] = (command, (int(fields[11]) + int(fields[12])) / TICK)
    out: dict[int, tuple[str, float]] = {}
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid in info:
            out[pid] = info[pid]
        stack.extend(children.get(pid, []))
    return out


def timed(cmd: list[str], out: Path) -> dict[str, Any]:
    """Run ``cmd`` with stdout to ``out``: its wall time, the CPU seconds of
    its process tree (by command name), and its output's digest."""
    started = time.perf_counter()
    seen: dict[int, tuple[str, float]] = {}
    with out.open("w") as f, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=f, stderr=err, text=True)
        while proc.poll() is None:
            for pid, (name, cpu) in tree_cpu(proc.pid).items():
                seen[pid] = (name, max(cpu, seen.get(pid, (name, 0.0))[1]))
            time.sleep(0.25)
        seconds = time.perf_counter() - started
        err.seek(0)
        stderr = err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{stderr[-3000:]}")
    by_name: dict[str, float] = collections.defaultdict(float)
    for name, cpu in seen.values():
        by_name["java" if name == "java" else "python"] += cpu
    lines = sorted(out.read_text().splitlines())
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]
    return {"seconds": seconds, "cpu": sum(by_name.values()), "jvm_cpu": by_name["java"],
            "detections": len(lines), "digest": digest, "stderr": stderr}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000000", help="row counts, e.g. 1000000,10000000")
    ap.add_argument("--flink", help="a Python with apache-flink: add the MATCH_RECOGNIZE row")
    ap.add_argument("--keep", type=Path, help="keep the data and outputs here")
    ap.add_argument("--masters", default="local[1],local[2]", help="the replays to run (local[1] is needed)")
    ns = ap.parse_args()
    sizes = [int(s) for s in ns.sizes.split(",")]
    etalis = [sys.executable, "-m", "etalis_py.cli"]
    rows: list[tuple[int, dict[str, Any], dict[str, Any], Optional[dict[str, Any]], Optional[dict[str, Any]]]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = ns.keep or Path(tmp_name)
        tmp.mkdir(parents=True, exist_ok=True)
        rules = tmp / "rise.etl"
        rules.write_text(RULES)
        for n in sizes:
            data = tmp / f"readings-{n}.csv"
            if not data.exists():
                print(f"writing {n:,} rows ...", file=sys.stderr, flush=True)
                write_data(data, n)
            results = []
            commands = [("run", [*etalis, "run", str(rules), "--events", str(data), "--quiet", *MAPPING])] + [
                (master, [*etalis, "replay", str(rules), "--events", str(data), *MAPPING, "--partition-by", "sensor",
                          "--master", master, "--no-progress"]) for master in ns.masters.split(",")]
            for name, cmd in commands:
                print(f"{n:,} rows: {name} ...", file=sys.stderr, flush=True)
                r = timed(cmd, tmp / f"out-{n}-{name.replace('[', '').replace(']', '')}.jsonl")
                print(f"  {r['seconds']:.1f} s, {r['cpu']:.1f} s CPU ({r['jvm_cpu']:.1f} s JVM), "
                      f"{r['detections']} detections; load average {os.getloadavg()[0]:.1f}",
                      file=sys.stderr, flush=True)
                results.append(r)
            run, one = results[0], results[1]
            two = results[2] if len(results) > 2 else None
            if len({r["digest"] for r in results}) != 1:
                raise RuntimeError(f"{n} rows: the detections differ: {[r['detections'] for r in results]}")
            flink = None
            if ns.flink:
                bare = tmp / f"readings-{n}-noheader.csv"
                with data.open() as src, bare.open("w") as dst:
                    next(src)
                    dst.writelines(src)
                print(f"{n:,} rows: flink MATCH_RECOGNIZE ...", file=sys.stderr, flush=True)
                flink_out = tmp / f"out-{n}-flink.jsonl"
                flink = timed([ns.flink, str(Path(__file__).with_name("flink_match.py")), str(bare)], flink_out)
                run_lines = (tmp / f"out-{n}-run.jsonl").read_text().splitlines()
                ours = {json.dumps(json.loads(x)) for x in run_lines}
                theirs = [json.dumps(json.loads(x)) for x in flink_out.read_text().splitlines()]
                flink["subset"] = all(x in ours for x in theirs)
                print(f"  {flink['seconds']:.1f} s, {flink['cpu']:.1f} s CPU ({flink['jvm_cpu']:.1f} s JVM), "
                      f"{flink['detections']} matches, all among etalis's: {flink['subset']}",
                      file=sys.stderr, flush=True)
                bare.unlink()
            rows.append((n, run, one, two, flink))
            if not ns.keep:
                data.unlink()

    print(f"\nmachine: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}; "
          f"1-minute load average at the end: {os.getloadavg()[0]:.1f}\n")
    print("| rows | detections | etalis run: wall s (CPU s) | replay local[1]: wall s (CPU s, of it JVM) "
          "| replay local[2]: wall s (CPU s, of it JVM) | run / local[1], CPU (target 0.8) | JVM share, local[1] "
          "| local[1] / local[2], wall |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, run, one, two, _ in rows:
        print(f"| {n:,} | {run['detections']:,} | {run['seconds']:.1f} ({run['cpu']:.1f}) "
              f"| {one['seconds']:.1f} ({one['cpu']:.1f}, {one['jvm_cpu']:.1f}) "
              + (f"| {two['seconds']:.1f} ({two['cpu']:.1f}, {two['jvm_cpu']:.1f}) " if two else "| not run ")
              + f"| {run['cpu'] / one['cpu']:.2f} | {one['jvm_cpu'] / one['cpu']:.0%} "
              + (f"| {one['seconds'] / two['seconds']:.2f} |" if two else "| |"))
    flinks = [(n, f) for n, _, _, _, f in rows if f is not None]
    if flinks:
        print("\n| rows | Flink MATCH_RECOGNIZE: wall s (CPU s, of it JVM) | matches | all among etalis's detections |")
        print("|---:|---:|---:|---|")
        for n, f in flinks:
            print(f"| {n:,} | {f['seconds']:.1f} ({f['cpu']:.1f}, {f['jvm_cpu']:.1f}) | {f['detections']:,} "
                  f"| {'yes' if f['subset'] else 'NO'} |")

if __name__ == "__main__":
    main()
