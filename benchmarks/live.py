"""Running live: what checkpoints cost, and SIGKILLs at random moments.

(a) cost: `etalis run` on `c(X) <- a(X) seq b(X) within 100.` over a
    .events file (event i is a(K) for even i and b(K) for odd i, K drawn
    from 10,000 keys by a fixed linear congruential generator, at time
    i * 0.01 s), without checkpoints and with `--checkpoint DIR
    --checkpoint-every 10000` (each checkpoint: the positions and, when
    one is due, the engine's snapshot, taken between two batches, then, on
    a writer thread while the engine goes on, the output synced, a
    snapshot's content hashed and written, the checkpoint written, synced
    and renamed; a snapshot is due while the snapshots stay within 2% of
    the run's time, see docs/live.md). The figures are the CPU seconds (of all threads)
    and the seconds that `etalis run` reports for its processing, best of
    --repeat, each run in a fresh process, the two runs of a pair one
    after the other; the cost is given of the best times and as the
    median of the pairs' ratios (a shared machine's load changes less
    within a pair).
    With --parts, where a checkpoint's CPU time goes, in one run in this
    process: the engine's snapshots (and of them, the serialization of the
    state into bytes), the rest of taking the checkpoints on the run's
    thread (positions, flushing the output, handing it over), and the
    writer's thread (syncing the output, hashing the snapshot's content,
    writing, syncing and renaming the file).
(b) kills: the same command with a checkpoint, SIGKILLed at --kills random
    moments of an uninterrupted run's duration (seeded), started again
    each time, then run to its end: its --out must equal the uninterrupted
    run's byte for byte, and its summary's counts too.

    .venv/bin/python benchmarks/live.py [--events 1000000] [--repeat 3] [--kills 5] [--seed 1] [--parts]
    (--repeat 0: the kills only; --kills 0: the cost only)
"""
from __future__ import annotations

import argparse
import io
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from etalis_py import Engine
from etalis_py.cli import entry, running
from etalis_py.cli.running import _Checkpoints
from etalis_py.bridge.checkpoint import CheckpointWriter
from etalis_py.bridge._prolog import PrologBridge, Recorded
from etalis_py.bridge.engine import SnapshotParts

RULES = "c(X) <- a(X) seq b(X) within 100.\n"
ETALIS = [sys.executable, "-m", "etalis_py.cli"]


def write_stream(path: Path, n: int) -> None:
    key = 12345
    with path.open("w") as f:
        for i in range(n):
            key = (key * 1103515245 + 12345) % 2**31
            f.write(f"event({'a' if i % 2 == 0 else 'b'}({(key >> 16) % 10_000}), {i * 0.01:.2f}).\n")


def run(args: list[str]) -> tuple[float, float, str]:
    """The CPU seconds and the seconds `etalis run` reports, and its summary's counts."""
    proc = subprocess.run([*ETALIS, "run", *args, "--quiet"], capture_output=True, text=True, check=True)
    last = proc.stderr.strip().splitlines()[-1]
    cpu = re.search(r"cpu seconds: ([0-9.]+)", last)
    wall = re.search(r", seconds: ([0-9.]+)", last)
    assert cpu is not None and wall is not None, last
    return float(cpu.group(1)), float(wall.group(1)), last.split(", seconds:")[0]


def cost(rules: Path, events: Path, work: Path, n: int, repeat: int) -> None:
    plain: list[tuple[float, float, str]] = []
    checked: list[tuple[float, float, str]] = []
    for _ in range(repeat):
        plain.append(run([str(rules), str(events), "--out", str(work / "plain.jsonl")]))
        shutil.rmtree(work / "ck", ignore_errors=True)
        checked.append(run([str(rules), str(events), "--out", str(work / "checked.jsonl"),
                            "--checkpoint", str(work / "ck"), "--checkpoint-every", "10000"]))
    assert (work / "plain.jsonl").read_bytes() == (work / "checked.jsonl").read_bytes()
    size = (work / "ck" / "checkpoint").stat().st_size
    print(f"(a) etalis run, {n:,} events, {plain[0][2].split('detections: ')[1].split(',')[0]} detections, "
          f"best of {repeat}:")
    print("| run | CPU s | events/CPU s | cost (CPU) | seconds | cost (seconds) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    cpu0, wall0 = min(c for c, _, _ in plain), min(w for _, w, _ in plain)
    for name, runs in (("no checkpoint", plain), ("--checkpoint-every 10000", checked)):
        cpu, wall = min(c for c, _, _ in runs), min(w for _, w, _ in runs)
        print(f"| {name} | {cpu:.3f} | {n / cpu:,.0f} | {(cpu / cpu0 - 1) * 100:+.1f}% | {wall:.3f} | "
              f"{(wall / wall0 - 1) * 100:+.1f}% |")
    cpu_ratio = statistics.median(c / p for (c, _, _), (p, _, _) in zip(checked, plain))
    wall_ratio = statistics.median(c / p for (_, c, _), (_, p, _) in zip(checked, plain))
    print(f"(median of the {repeat} pairs' ratios: CPU {(cpu_ratio - 1) * 100:+.1f}%, "
          f"seconds {(wall_ratio - 1) * 100:+.1f}%; last checkpoint: {size:,} bytes)")


def parts(rules: Path, events: Path, work: Path, n: int) -> None:
    spent = {"snapshot": 0.0, "serializing": 0.0, "taking": 0.0, "writer": 0.0, "snapshots": 0}
    lock = threading.Lock()
    snapshot, save, submit = Engine.snapshot_parts, _Checkpoints.save, CheckpointWriter.submit
    recorded = PrologBridge._record_external

    def timed_recorded(self: PrologBridge, term: int) -> list[Recorded]:
        started = time.thread_time()    # on the bridge's thread, where the engine runs
        try:
            return recorded(self, term)
        finally:
            spent["serializing"] += time.thread_time() - started

    def timed_snapshot(engine: Engine) -> SnapshotParts:
        started = time.process_time()   # the engine works on its own thread while this one waits
        spent["snapshots"] += 1
        try:
            return snapshot(engine)
        finally:
            spent["snapshot"] += time.process_time() - started

    def timed_save(self: _Checkpoints, *args: Any) -> None:
        self.writer.wait()              # the writer's time is counted on its thread
        started = time.process_time()
        try:
            save(self, *args)
        finally:
            spent["taking"] += time.process_time() - started

    def timed_submit(self: CheckpointWriter, job: Callable[[], None]) -> None:
        def timed_job() -> None:
            started = time.thread_time()
            try:
                job()
            finally:
                with lock:
                    spent["writer"] += time.thread_time() - started
        submit(self, timed_job)

    setattr(Engine, "snapshot_parts", timed_snapshot)
    setattr(PrologBridge, "_record_external", timed_recorded)
    setattr(_Checkpoints, "save", timed_save)
    setattr(CheckpointWriter, "submit", timed_submit)
    shutil.rmtree(work / "parts-ck", ignore_errors=True)
    err = io.StringIO()
    try:
        running.run(entry.parse(["run", str(rules), str(events), "--out", str(work / "parts.jsonl"), "--quiet",
                                 "--checkpoint", str(work / "parts-ck"), "--checkpoint-every", "10000"]),
                    io.StringIO(), err)
    finally:
        setattr(Engine, "snapshot_parts", snapshot)
        setattr(PrologBridge, "_record_external", recorded)
        setattr(_Checkpoints, "save", save)
        setattr(CheckpointWriter, "submit", submit)
    total = float(err.getvalue().strip().splitlines()[-1].split("cpu seconds: ")[1])
    count = n // 10_000 + 1
    print(f"(c) where the CPU time of {count} checkpoints goes, one run of {total:.3f} CPU s:")
    print("| part | CPU s | per checkpoint (ms) | of the run's CPU |")
    print("| --- | ---: | ---: | ---: |")
    rows = [(f"the engine's snapshots ({spent['snapshots']:.0f} of the {count} checkpoints)", spent["snapshot"]),
            ("of which the serialization of the state (PL_record_external)", spent["serializing"]),
            ("the rest of taking them (positions, flush, hand-over)", spent["taking"] - spent["snapshot"]),
            ("the writer's thread (hash, sync, write, rename)", spent["writer"])]
    for name, seconds in rows:
        print(f"| {name} | {seconds:.3f} | {seconds / count * 1000:.2f} | {seconds / total * 100:.1f}% |")


def kills(rules: Path, events: Path, work: Path, n: int, count: int, seed: int) -> None:
    reference = work / "ref.jsonl"
    started = time.monotonic()
    _, _, expected = run([str(rules), str(events), "--out", str(reference)])
    took = time.monotonic() - started
    out = work / "out.jsonl"
    shutil.rmtree(work / "kill-ck", ignore_errors=True)
    command = [*ETALIS, "run", str(rules), str(events), "--out", str(out), "--quiet",
               "--checkpoint", str(work / "kill-ck")]
    rng = random.Random(seed)
    moments = []
    checkpoint = work / "kill-ck" / "checkpoint"
    for _ in range(count):
        # a random moment of what is left to do (the run resumes from its last checkpoint)
        done = int(checkpoint.read_bytes().split(b"\n")[1].split(b'"line": ')[1].split(b",")[0]) - 1 \
            if checkpoint.exists() else 0
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        moment = rng.uniform(0.5, max(1.0, took * (1 - done / n)))
        time.sleep(moment)
        proc.send_signal(signal.SIGKILL)
        moments.append(f"{moment:.1f} s{'' if proc.wait() == -signal.SIGKILL else ' (had ended)'}")
    final = subprocess.run(command, capture_output=True, text=True, check=True)
    got = final.stderr.strip().splitlines()[-1].split(", seconds:")[0]
    same = out.read_bytes() == reference.read_bytes()
    print(f"(b) {n:,} events, uninterrupted {took:.1f} s; SIGKILL at {', '.join(moments)}, then to the end:")
    print(f"    --out {'identical' if same else 'DIFFERENT'} ({len(reference.read_bytes()):,} bytes), "
          f"summary {'equal' if got == expected else 'DIFFERENT: ' + got}")
    if not same or got != expected:
        sys.exit(1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--kills", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--parts", action="store_true", help="also where a checkpoint's CPU time goes")
    ns = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rules = work / "pairs.etl"
        rules.write_text(RULES)
        events = work / "stream.events"
        write_stream(events, ns.events)
        if ns.repeat:
            cost(rules, events, work, ns.events, ns.repeat)
        if ns.parts:
            parts(rules, events, work, ns.events)
        if ns.kills:
            kills(rules, events, work, ns.events, ns.kills, ns.seed)


if __name__ == "__main__":
    main()
