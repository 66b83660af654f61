"""Memory on an endless stream: resident memory every million events.

Streams events through a windowed rule set with Engine.emit_many and
prints, after each million events, the process's resident memory, the live
pending goals and the events per second of that million.  With windows,
pending goals that can no longer complete are dropped, so memory must stay
flat: within 10% of its value after the first million.

The stream: 100,000 sensors, a reading every 0.01 s from a pseudo-random
sensor (so every sensor recurs about every 1,000 s) and, for one reading in
ten, an alarm at the same sensor.

    .venv/bin/python benchmarks/memory.py [--events 10000000] [--every 1000000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from pathlib import Path

from etalis_py import Engine

RULES = """
% a rising reading followed by an alarm, within 60 s
rise(S) <- (reading(S, V1) seq reading(S, V2)) within 60 where V2 > V1.
alarm_after_rise(S) <- (rise(S) seq alarm(S)) within 120.
% two alarms at different sensors within 50 ms: no join key, a short window
burst(S1, S2) <- (alarm(S1) seq alarm(S2)) within 0.05 where S1 \\== S2.
"""
SENSORS = 100_000
STEP = 0.01
CHUNK = 100_000


def stream(n: int) -> Iterator[tuple[str, tuple[object, ...], float]]:
    seed = 12345
    for i in range(n):
        seed = (seed * 1103515245 + 12345) % 2147483648
        sensor = (seed >> 8) % SENSORS
        t = i * STEP
        if seed % 10 == 0:
            yield ("alarm", (sensor,), t)
        else:
            yield ("reading", (sensor, (seed >> 4) % 100), t)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=10_000_000)
    p.add_argument("--every", type=int, default=1_000_000)
    ns = p.parse_args()
    engine = Engine.from_string(RULES)
    events = stream(ns.events)
    print("| events | resident MB | live pending goals | detections | events/s in this step |")
    print("|---:|---:|---:|---:|---:|")
    done = detections = 0
    first_rss = None
    worst = 0.0
    while done < ns.events:
        step = min(ns.every, ns.events - done)
        seconds = 0.0
        for _ in range(0, step, CHUNK):        # a stream arrives in pieces, not as one list
            chunk = [next(events) for _ in range(min(CHUNK, ns.events - done))]
            started = time.perf_counter()
            result = engine.emit_many(chunk, batch_size=20_000)
            seconds += time.perf_counter() - started
            list(engine.detections())          # drain the pull queue, as a consumer would
            done += len(chunk)
            detections += len(result.detections)
        batch = range(step)
        rss = rss_mb()
        if first_rss is None:
            first_rss = rss
        worst = max(worst, abs(rss - first_rss) / first_rss)
        print(f"| {done:,} | {rss:.0f} | {engine.stats().pending:,} | {detections:,} | {len(batch) / seconds:,.0f} |",
              flush=True)
    print(f"\nlargest change of resident memory after the first {ns.every:,} events: {worst:.1%}")


if __name__ == "__main__":
    main()
