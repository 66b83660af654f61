"""Pending goals at scale: the cost of an event as the goal store grows,
and the engine's memory on a long stream with many keys live at once.

Two tables, each run in a process of its own (so that peak memory is its
own):

``--scale``: `c(K) <- a(K) seq b(K).` (unrestricted, no window: every
a(K) waits for good).  a(K) events of new keys fill the store; at each of
the checkpoints (10^5, 10^6, 10^7 pending goals by default) a window of
events is timed, ``--window`` or half the pending goals if that is more:
half of them a(K) of new keys (the store grows), half b(K) of keys drawn
from those pending (each finds its partner).  The garbage collections of
the Prolog stacks come the more seldom the larger they are, each costing
the more: a window must span several of them to pay its share (a window
of 200,000 events at 10^6 pending goals took 11.7 µs an event with one
collection of 1.2 s in it, 5.7 without).  The table gives the CPU seconds
per event (the whole process: Python's packing of the events and the
engine) of the fill up to the checkpoint (from the one before, all a(K) of
new keys) and of the window, the window's ratio to the first checkpoint's,
the resident memory and the resident memory per pending goal above the
engine's start.

``--soak``: 10^7 events, a(K) and b(K) in turn, with 2 * 10^6 keys in
turn: each b(K) comes 10^6 pairs after its a(K), so about 10^6 keys wait
at once under chronological (2 * 10^6 under unrestricted and recent,
which keep a matched a(K) until the window drops it), under each policy, `c(K) <- (a(K) seq b(K)) within
3000000.`, at one event a time unit.  The resident memory is sampled every
10^6 events.

    .venv/bin/python benchmarks/pending_scale.py --scale [--checkpoints 100000,1000000,10000000] [--window 1000000]
    .venv/bin/python benchmarks/pending_scale.py --soak [--events 10000000] [--policies unrestricted,recent,chronological]
"""
from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

BATCH = 100_000


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def scale_run(checkpoints: list[int], window: int) -> None:
    from etalis_py import Engine

    found = [0]

    def count(_: Any) -> None:
        found[0] += 1

    engine = Engine.from_string("c(K) <- a(K) seq b(K).\n", inference_limit=0)
    engine.on("c", count)
    engine.emit("a", -1, at=0)
    base = rss_mb()
    keys = 0        # a(0) .. a(keys-1) are pending
    clock = 1
    rng = random.Random(7)
    first = None
    print("| pending goals | fill: CPU µs per event | window: events | window: CPU µs per event | ratio to the first "
          "| resident MB | resident bytes per pending goal |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for target in checkpoints:
        filled = keys
        fill_started = time.process_time()
        while keys < target:
            n = min(BATCH, target - keys)
            engine.emit_many((("a", (k,), clock + k - keys) for k in range(keys, keys + n)),
                             batch_size=BATCH, collect=False)
            clock += n
            keys += n
        fill = (time.process_time() - fill_started) / max(1, keys - filled) * 1e6
        pending = keys
        rss = rss_mb()
        size = max(window, pending // 2)
        spent = 0.0         # the emit_many calls only, not the making of their lists
        for s in range(0, size, BATCH):
            events: list[tuple[str, tuple[int], int]] = []
            for i in range(s, min(size, s + BATCH)):
                if i % 2 == 0:
                    events.append(("a", (keys,), clock))
                    keys += 1
                else:
                    events.append(("b", (rng.randrange(pending),), clock))
                clock += 1
            made = time.process_time()
            engine.emit_many(events, batch_size=BATCH, collect=False)
            spent += time.process_time() - made
        per_event = spent / size * 1e6
        first = first or per_event
        print(f"| {pending:,} | {fill:.2f} | {size:,} | {per_event:.2f} | {per_event / first:.2f} | {rss:,.0f} | "
              f"{(rss - base) * 2**20 / pending:,.0f} |", flush=True)
    print(f"\npeak resident MB: {peak_mb():,.0f}; pending goals at the end: {engine.stats().pending:,}; "
          f"detections: {found[0]:,}")


def soak_stream(events: int, keys: int) -> Iterator[tuple[str, tuple[int], int]]:
    half = keys // 2
    for i in range(events):
        j = i // 2
        if i % 2 == 0:
            yield ("a", (j % keys,), i + 1)
        else:
            yield ("b", ((j - half) % keys,), i + 1)


def soak_run(policy: str, events: int, every: int, keys: int) -> None:
    from etalis_py import Engine

    found = [0]

    def count(_: Any) -> None:
        found[0] += 1

    engine = Engine.from_string(f"c(K) <- (a(K) seq b(K)) within {3 * keys // 2}.\n", policy=policy,
                                inference_limit=0)
    engine.on("c", count)
    stream = soak_stream(events, keys)
    done = 0
    started = time.process_time()
    while done < events:
        step_start = time.process_time()
        for _ in range(0, every, BATCH):
            batch = [next(stream) for _ in range(min(BATCH, events - done))]
            engine.emit_many(batch, batch_size=BATCH, collect=False)
            done += len(batch)
        step = time.process_time() - step_start
        print(f"| {policy} | {done:,} | {engine.stats().pending:,} | {found[0]:,} | {rss_mb():,.0f} | "
              f"{every / step:,.0f} |", flush=True)
    print(f"| {policy} | peak | | | {peak_mb():,.0f} | {events / (time.process_time() - started):,.0f} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", action="store_true", help="cost per event at each number of pending goals")
    p.add_argument("--soak", action="store_true", help="memory over a long stream under each policy")
    p.add_argument("--checkpoints", default="100000,1000000,10000000")
    p.add_argument("--window", type=int, default=1_000_000)
    p.add_argument("--events", type=int, default=10_000_000)
    p.add_argument("--every", type=int, default=1_000_000)
    p.add_argument("--keys", type=int, default=2_000_000)
    p.add_argument("--policies", default="unrestricted,recent,chronological")
    p.add_argument("--policy", help=argparse.SUPPRESS)      # one soak run, in its own process
    ns = p.parse_args()
    if ns.policy:
        soak_run(ns.policy, ns.events, ns.every, ns.keys)
    elif ns.soak:
        print("| policy | events | pending goals | detections | resident MB | events/s (CPU) in this step |")
        print("|---|---:|---:|---:|---:|---:|", flush=True)
        for policy in ns.policies.split(","):
            subprocess.run([sys.executable, __file__, "--policy", policy, "--events", str(ns.events),
                            "--every", str(ns.every), "--keys", str(ns.keys)], check=True)
    else:
        scale_run([int(c) for c in ns.checkpoints.split(",")], ns.window)


if __name__ == "__main__":
    main()
