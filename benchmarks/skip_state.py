"""The state of a skip strategy on a long stream: what ``skip_to_next`` keeps.

Streams readings of 100 stations taking turns, one a second, through a
windowed pair rule under ``:- skip(skip_to_next).`` and prints, after each
step, the positions the skip strategy keeps (``Engine.stats().skip_kept``),
the live pending goals, the detections and the events per second of that
step.  The kept positions are those a later match could still start at,
so they, and the time per event, must stay flat.

    .venv/bin/python benchmarks/skip_state.py [--events 200000] [--every 20000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator

from etalis_py import Engine

RULES = """
:- skip(skip_to_next).
% two readings of one station within 300 s
pair(S) <- (temp(S, A) seq temp(S, B)) within 300.
"""
STATIONS = 100


def stream(start: int, end: int) -> Iterator[tuple[str, tuple[object, ...], int]]:
    for t in range(start, end):
        yield ("temp", (f"s{t % STATIONS}", t % 40), t)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=200_000)
    p.add_argument("--every", type=int, default=20_000)
    ns = p.parse_args()
    print("| events | kept positions | live pending goals | detections | events/s in this step |")
    print("|---:|---:|---:|---:|---:|")
    detections = 0
    with Engine.from_string(RULES) as engine:
        for done in range(0, ns.events, ns.every):
            end = min(done + ns.every, ns.events)
            started = time.perf_counter()
            result = engine.emit_many(stream(done, end))
            seconds = time.perf_counter() - started
            detections += len(result.detections)
            stats = engine.stats()
            print(f"| {end:,} | {stats.skip_kept:,} | {stats.pending:,} | {detections:,} | "
                  f"{(end - done) / seconds:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
