"""Snapshots: size and time of Engine.snapshot() and Engine.restore().

For each size N, an engine of one rule (``c(X) <- a(X) seq b(X).``) is fed
N events a(1) ... a(N), which leave N pending goals (N keys of one goal
store); then it prints the snapshot's size, the time to take it, the time
for a new engine of the same rules to take it up (restore), and checks that
the restored engine completes a pattern.  Then the cost for a tiny state
(three pending goals), as when one engine moves many keys' states in and
out (snapshot, then restore, of the same engine), averaged over many
rounds.  Times are the CPU time of the process (SWI-Prolog runs in it),
which a busy machine does not inflate as it does the wall time.

    .venv/bin/python benchmarks/snapshot.py [--sizes 10000,100000,1000000] [--rounds 2000]
"""

from __future__ import annotations

import argparse
import time

from etalis_py import Detection, Engine

RULES = "c(X) <- a(X) seq b(X).\n"


def pending_engine(n: int) -> Engine:
    # no inference limit: the goal store rehashes its keys as it grows, in one event
    engine = Engine.from_string(RULES, inference_limit=0)
    engine.emit_many((("a", (i,), i) for i in range(1, n + 1)), batch_size=100_000, collect=False)
    assert engine.stats().pending == n
    return engine


def large(sizes: list[int]) -> None:
    print("| pending goals | snapshot size (MB) | snapshot (CPU s) | restore into a new engine (CPU s) | bytes per goal |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for n in sizes:
        with pending_engine(n) as engine:
            started = time.process_time()
            data = engine.snapshot()
            taken = time.process_time() - started
        with Engine.from_string(RULES, inference_limit=0) as restored:
            started = time.process_time()
            restored.restore(data)
            back = time.process_time() - started
            assert restored.emit("b", n, at=n + 1) == [Detection("c", (n,), n, n + 1)]
            assert restored.stats().pending == n
        print(f"| {n:,} | {len(data) / 1e6:.1f} | {taken:.3f} | {back:.3f} | {len(data) / n:.0f} |")


def tiny(rounds: int) -> None:
    with Engine.from_string(RULES) as engine:
        engine.emit_many([("a", (1,), 1), ("a", (2,), 2), ("a", (3,), 3)])
        data = engine.snapshot()
        started = time.process_time()
        for _ in range(rounds):
            data = engine.snapshot()
        taken = (time.process_time() - started) / rounds
        started = time.process_time()
        for _ in range(rounds):
            engine.restore(data)
        back = (time.process_time() - started) / rounds
        assert engine.stats().pending == 3
    print()
    print("| tiny state (3 pending goals) | size (bytes) | snapshot (CPU µs) | restore (CPU µs) |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| one engine, {rounds:,} rounds | {len(data):,} | {taken * 1e6:.0f} | {back * 1e6:.0f} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10000,100000,1000000", help="numbers of pending goals, comma-separated")
    p.add_argument("--rounds", type=int, default=2000, help="rounds of the tiny state")
    ns = p.parse_args()
    large([int(s) for s in ns.sizes.split(",")])
    tiny(ns.rounds)


if __name__ == "__main__":
    main()
