"""`etalis stream` against `etalis replay` on the same rows, the state a key
keeps, and the latency from a file landing to its detections written.

The data and the rule are those of benchmarks/replay.py (N readings of
10,000 sensors, the per-sensor rise rule), written as FILES CSV files of
equal size into a folder.

1. Throughput: `etalis replay` of the folder and `etalis stream
   --available-now` of it (micro-batches of FILES / BATCHES files each,
   standing for the files that land within one trigger), both on
   `local[1]`, each in a fresh process; wall time and the CPU seconds of
   the whole process tree (driver, JVM, Python workers; sampled from /proc
   as benchmarks/replay.py does).  Rows/s per core is N over the CPU
   seconds.  Both must give the same detections (sorted lines).
2. State: the bytes on disk of the stream's state store (its checkpoint's
   `state/` folder) over the number of keys, and the size of one key's
   snapshot after the run (one engine, the last 20 readings of a sensor).
3. Latency at `--trigger 1`: LAND files of 1,000 rows dropped one every 2
   seconds into an empty folder while `etalis stream --trigger 1` runs;
   for each file, the time from its rename into the folder to the commit
   of the micro-batch that read it (the checkpoint's `sources/0/N` names
   the files of batch N, `commits/N` is written once its output is
   committed); p50 and p99, printed as the row of docs/benchmarks.md's
   table of targets, with the load average before and after.
   ``--latency-only`` measures only this (on a quiet machine).

    .venv/bin/python benchmarks/stream.py [--rows 1000000] [--files 20] [--batches 2] [--land 30] [--latency-only]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from replay import KEYS, MAPPING, RULES, timed, write_data  # noqa: E402

ETALIS = [sys.executable, "-m", "etalis_py.cli"]


def split(data: Path, folder: Path, files: int) -> int:
    """``data`` (with its header) as ``files`` CSV files, each with the header."""
    lines = data.read_text().splitlines(keepends=True)
    header, rows = lines[0], lines[1:]
    folder.mkdir()
    size = -(-len(rows) // files)
    now = time.time()
    for i in range(files):
        f = folder / f"part-{i:04d}.csv"
        f.write_text(header + "".join(rows[i * size:(i + 1) * size]))
        os.utime(f, (now + i, now + i))
    return len(rows)


def state_bytes(checkpoint: Path) -> int:
    return sum(f.stat().st_size for f in (checkpoint / "state").rglob("*") if f.is_file())


def key_snapshot(rules: Path) -> int:
    from etalis_py.bridge.engine import Engine

    with Engine.from_file(rules) as engine:
        for i in range(20):
            engine.emit("reading", "s1", (i * 37) % 100, at=i)
        return len(engine.snapshot())


def latency(work: Path, rules: Path, land: int) -> list[float]:
    src, ck, out = work / "live-in", work / "live-ck", work / "live-out"
    src.mkdir()
    (src / "part-0000.csv").write_text("t,sensor,value\n0,s0,0\n")
    landed = {"part-0000.csv": time.time()}
    proc = subprocess.Popen([*ETALIS, "stream", str(rules), "--source", str(src), *MAPPING, "--partition-by",
                             "sensor", "--checkpoint", str(ck), "--out", str(out), "--format", "jsonl",
                             "--trigger", "1", "--master", "local[1,4]", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while not (ck / "commits" / "0").exists():
            time.sleep(0.1)
        seed = 99
        for n in range(1, land + 1):
            lines = ["t,sensor,value\n"]
            for i in range(1000):
                seed = (seed * 1103515245 + 12345) % 2147483648
                lines.append(f"{n * 10 + i * 0.01:.2f},s{(seed >> 8) % KEYS},{(seed >> 4) % 100}\n")
            hidden = src / f".part-{n:04d}.csv"
            hidden.write_text("".join(lines))
            os.replace(hidden, src / f"part-{n:04d}.csv")
            landed[f"part-{n:04d}.csv"] = time.time()
            time.sleep(2)
        deadline = time.time() + 120
        while time.time() < deadline and not all_committed(ck, set(landed)):
            time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    delays = []
    for batch, files in batches(ck).items():
        commit = ck / "commits" / str(batch)
        for f in files:
            if f in landed and f != "part-0000.csv" and commit.exists():
                delays.append(commit.stat().st_mtime - landed[f])
    return delays


def batches(ck: Path) -> dict[int, list[str]]:
    """The files of each batch of the file source's log: its files ``N``
    and, every 10 batches, ``N.compact`` (all the entries so far, each
    with its batch)."""
    out: dict[int, set[str]] = {}
    log = ck / "sources" / "0"
    for f in log.iterdir() if log.is_dir() else []:
        if f.name.split(".")[0].isdigit():
            for line in f.read_text().splitlines()[1:]:
                entry = json.loads(line)
                out.setdefault(int(entry["batchId"]), set()).add(Path(entry["path"]).name)
    return {b: sorted(files) for b, files in out.items()}


def all_committed(ck: Path, names: set[str]) -> bool:
    done = {f for b, files in batches(ck).items() if (ck / "commits" / str(b)).exists() for f in files}
    return names <= done


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--files", type=int, default=20)
    p.add_argument("--batches", type=int, default=2, help="micro-batches the files make")
    p.add_argument("--land", type=int, default=30, help="files dropped for the latency")
    p.add_argument("--latency-only", action="store_true", help="measure only the latency")
    ns = p.parse_args()
    print(f"machine: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}; "
          f"load average before: {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rules = work / "rise.etl"
        rules.write_text(RULES)
        if not ns.latency_only:
            throughput(work, rules, ns)
        loads = [os.getloadavg()[0]]
        delays = latency(work, rules, ns.land)
        loads.append(os.getloadavg()[0])
    if delays:
        print(f"\n| latency from a file landing to its detections written, p50 and p99 at 1-second triggers "
              f"| p50 {percentile(delays, 0.5):.1f} s, p99 {percentile(delays, 0.99):.1f} s "
              f"| {len(delays)} files of 1,000 rows, one every 2 seconds (mean {statistics.mean(delays):.1f} s, "
              f"max {max(delays):.1f} s); load average {loads[0]:.1f} before, {loads[1]:.1f} after |")
    else:
        print("latency: no file committed")


def throughput(work: Path, rules: Path, ns: argparse.Namespace) -> None:
    """Replay and stream of the same rows: the table row of docs/benchmarks.md, and the state a key keeps."""
    data = work / "data.csv"
    write_data(data, ns.rows)
    n = split(data, work / "in", ns.files)
    data.unlink()
    replay = timed([*ETALIS, "replay", str(rules), "--events", str(work / "in"), *MAPPING, "--partition-by",
                    "sensor", "--master", "local[1,4]", "--no-progress", "--quiet"], work / "replay.jsonl")
    stream = timed([*ETALIS, "stream", str(rules), "--source", str(work / "in"), *MAPPING, "--partition-by",
                    "sensor", "--checkpoint", str(work / "ck"), "--out", str(work / "out"), "--format", "jsonl",
                    "--available-now", "--max-files-per-trigger", str(-(-ns.files // ns.batches)),
                    "--master", "local[1,4]", "--quiet"], work / "stream.stdout")
    mine = sorted(line for f in (work / "out" / "output=detections").glob("part-*")
                  for line in f.read_text().splitlines() if line)
    theirs = sorted(line.rstrip("\n") for line in (work / "replay.jsonl").read_text().splitlines() if line)
    same = mine == theirs
    per_key = state_bytes(work / "ck") / KEYS
    snapshot = key_snapshot(rules)
    print(f"\n| rows | files (micro-batches) | detections | replay local[1]: wall s (CPU s) "
          f"| stream local[1]: wall s (CPU s) | rows/CPU s: replay | stream | stream / replay | same detections |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {n:,} | {ns.files} ({ns.batches}) | {len(mine):,} | {replay['seconds']:.1f} ({replay['cpu']:.1f}) "
          f"| {stream['seconds']:.1f} ({stream['cpu']:.1f}) | {n / replay['cpu']:,.0f} | {n / stream['cpu']:,.0f} "
          f"| {replay['cpu'] / stream['cpu']:.2f} | {same} |")
    print(f"\nof the CPU seconds, the JVM's: replay {replay['jvm_cpu']:.1f} of {replay['cpu']:.1f}, "
          f"stream {stream['jvm_cpu']:.1f} of {stream['cpu']:.1f}")
    print(f"state store on disk: {per_key:,.0f} bytes a key ({KEYS:,} keys); one key's snapshot: {snapshot:,} bytes",
          flush=True)


if __name__ == "__main__":
    main()
