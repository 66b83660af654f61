"""What the Prolog feed loop adds to the engine, an event at a time: the seq
benchmark's stream (benchmarks/throughput.py) of --events events, (a) made in
Prolog and passed to the engine's clauses (throughput.pl's bench_inside), then
fed through etalis_feed:engine_feed/5 as lists of 10,000 checked terms (what
packed columns give, made before each call), with and without the inference
limit and with the detections packed or written as JSON lines. CPU seconds of
Prolog (best of --repeat, each on a new engine), and the garbage collections
in them.

    .venv/bin/python benchmarks/feed_loop.py [--events 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
from typing import Any

from throughput import HERE, KEYS, RULES, STEP

from etalis_py import Engine
from etalis_py.bridge._prolog import bridge

BATCH = 10_000


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    ns = p.parse_args()
    n = ns.events
    from pyswip import Prolog

    on_thread = bridge().on_thread     # the engines' thread, where the optimise flag is set
    assert Engine.from_string(RULES).columnar(), "the foreign library is needed (make native)"
    on_thread(lambda: Prolog.consult(str(HERE / "throughput.pl")))

    def inside() -> tuple[float, int, float]:
        name = Engine.from_string(RULES, inference_limit=0)._name
        [a] = on_thread(lambda: list(Prolog.query(
            f"statistics(garbage_collection, [G0, _, T0|_]), bench_inside({name}, {n}, {KEYS}, {STEP}, _, S), "
            f"statistics(garbage_collection, [G1, _, T1|_]), G is G1 - G0, T is (T1 - T0) / 1000")))
        return float(a["S"]), int(a["G"]), float(a["T"])

    def fed(limit: int | None, fmt: str) -> tuple[float, int, float]:
        name = Engine.from_string(RULES, inference_limit=limit)._name
        [a] = on_thread(lambda: list(Prolog.query(
            f"bench_feed({name}, {n}, {BATCH}, {KEYS}, {STEP}, {fmt}, S, G, T)")))
        return float(a["S"]), int(a["G"]), float(a["T"])

    rows: list[tuple[str, Any]] = [
        ("(a) the engine itself (events made in Prolog, no limit, no detection written)", inside),
        ("engine_feed/5, no inference limit, detections packed", lambda: fed(0, "packed")),
        ("engine_feed/5, the default inference limit, detections packed", lambda: fed(None, "packed")),
        ("engine_feed/5, the default inference limit, detections as JSON objects", lambda: fed(None, "object")),
    ]
    print(f"{n:,} events, best of {ns.repeat} (CPU seconds of Prolog)\n")
    print("| step | CPU s | µs per event | over (a), µs | collections | in them, s |")
    print("|---|---:|---:|---:|---:|---:|")
    base = None
    for what, run in rows:
        seconds, collections, collecting = min((run() for _ in range(ns.repeat)), key=lambda r: r[0])
        base = seconds if base is None else base
        print(f"| {what} | {seconds:.3f} | {seconds / n * 1e6:.2f} | {(seconds - base) / n * 1e6:.2f} | "
              f"{collections} | {collecting:.3f} |", flush=True)


if __name__ == "__main__":
    main()
