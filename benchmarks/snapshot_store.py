"""Where a checkpoint's snapshot goes: the goal store of benchmarks/live.py.

An engine of ``c(X) <- a(X) seq b(X) within 100.`` is fed the first
--events events of benchmarks/live.py's stream (10,000 keys, 0.01 s apart),
which leaves about 10,000 goals pending; then it prints the store's shape
(buckets, keys, entries, and how many of those entries the window has
already expired: their key has not been touched for more than 100 s, so no
event has dropped them yet), and the CPU milliseconds, best of --repeat, of:
Engine.snapshot(); fast_term_serialized/2 of the engine's state alone;
visiting every bucket of the store as the store's own sweep does (dropping
the expired entries and the keys left empty); fast_term_serialized/2 of the
state after that sweep.  The Prolog parts run on the engine's thread, on
the state as the engine holds it.

    .venv/bin/python benchmarks/snapshot_store.py [--events 100000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import time

from pyswip import Prolog

from etalis_py import Engine

RULES = "c(X) <- a(X) seq b(X) within 100.\n"

HELPERS = [
    "assertz((bench_store(M, St) :- etalis_engine_state:engine_state_get(M, S), "
    "get_dict(stores, S, [store(_, _, St)|_])))",
    "assertz((bench_ms(G, N, Ms) :- statistics(cputime, C0), forall(between(1, N, _), G), "
    "statistics(cputime, C1), Ms is (C1 - C0) * 1000 / N))",
    "assertz((bench_shape(M, End, W, Buckets, Keys, Entries, Expired) :- bench_store(M, St), "
    "St = st(Mask, Keys, _, _, _), Buckets is Mask + 1, etalis_store:store_count(St, Entries), "
    "aggregate_all(count, (etalis_store:store_entry(St, _, e(_, T1, _)), End - T1 > W), Expired)))",
    "assertz((bench_serialize(M, N, Ms) :- etalis_engine_state:engine_state_get(M, S), "
    "bench_ms(fast_term_serialized(S, _), N, Ms)))",
    "assertz((bench_sweep(M, End, W, Ms) :- bench_store(M, St), St = st(Mask, _, B, _, _), N is Mask + 1, "
    "bench_ms(forall(between(1, N, I), etalis_store:sweep_bucket(St, B, I, window(End, W))), 1, Ms)))",
]


def stream(n: int) -> str:
    key, lines = 12345, []
    for i in range(n):
        key = (key * 1103515245 + 12345) % 2**31
        lines.append(f"event({'a' if i % 2 == 0 else 'b'}({(key >> 16) % 10_000}), {i * 0.01:.2f}).\n")
    return "".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    engine = Engine.from_string(RULES)
    engine.feed_text(stream(args.events))
    end = (args.events - 1) * 0.01
    bridge, name = engine._prolog, engine._name

    def query(text: str) -> dict[str, float]:
        answers: list[dict[str, float]] = bridge._on_thread(lambda: list(Prolog.query(text)))
        return answers[0] if answers else {}

    for helper in HELPERS:
        query(helper)
    shape = query(f"bench_shape('{name}', {end}, 100, Buckets, Keys, Entries, Expired)")
    snapshot = min(timed(engine.snapshot) for _ in range(args.repeat))
    size = len(engine.snapshot())
    serialize = query(f"bench_serialize('{name}', {args.repeat}, Ms)")["Ms"]
    sweep = query(f"bench_sweep('{name}', {end}, 100, Ms)")["Ms"]
    swept = query(f"bench_serialize('{name}', {args.repeat}, Ms)")["Ms"]
    size_swept = len(engine.snapshot())
    print(f"after {args.events:,} events: {shape['Buckets']:,} buckets, {shape['Keys']:,} keys, "
          f"{shape['Entries']:,} entries, {shape['Expired']:,} of them expired by the window")
    print("| CPU ms | as the engine holds it | after a sweep of every bucket |")
    print("| --- | ---: | ---: |")
    print(f"| Engine.snapshot() ({size:,} / {size_swept:,} bytes) | {snapshot:.2f} | |")
    print(f"| fast_term_serialized/2 of the state | {serialize:.2f} | {swept:.2f} |")
    print(f"| the sweep of every bucket | | {sweep:.2f} |")


def timed(job: object) -> float:
    assert callable(job)
    started = time.process_time()
    job()
    return (time.process_time() - started) * 1000


if __name__ == "__main__":
    main()
