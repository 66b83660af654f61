"""Cost per event of each selection strategy, as the window and the pattern grow.

The rule of k operands (k = 2, 4, 6) is

    h(K) <- (a seq b(K) seq c(K) ...) within W.     % k events, W = 10 ... 10,000

and the stream has one event per second: `a` at every second, except that
every PERIOD seconds the other k - 1 events of the pattern come one after
the other, with the number of the period as K (so that they never combine
across periods).  The number of `a` that a completion can start from is
W (once W seconds have passed), the number of completions is fixed
(N / PERIOD), and so is the number of detections of `strict`, `nxt`,
`last`, `recent` and `chronological` (one per completion); `unrestricted`,
`max`, `stn` and `continuous` detect one match per `a` in the window of a
completion (the output grows with W; `stn` and `continuous` consume each
`a` once), `cumulative` one per completion, holding the list of those `a`.

Each row gives, per strategy, microseconds of CPU time per event (the
process's, which includes the embedded SWI-Prolog), for each window, and
the detections.  "flat" is the ratio of the largest to the smallest cost
per event of the row's windows.

With ``--keyed`` the output is held fixed for every strategy: the rule is

    h(K) <- (a(K) seq b(K) seq c(K) ...) within W.

and every second brings an `a` with a key of its own (so W of them wait
in the window, none of which any later event completes), except that
every PERIOD seconds all k events of the pattern come one after the
other with the period's number as K: each strategy detects one match a
period, whatever W and k, and the cost per event shows whether the work
grows with what waits in the window.

    .venv/bin/python benchmarks/strategies.py [--events 20000] [--period 2000] [--strategies nxt,last] [--keyed]
"""

from __future__ import annotations

import argparse
import time

from etalis_py import Engine

STRATEGIES = ("unrestricted", "strict", "nxt", "last", "max", "stn", "continuous", "cumulative", "recent",
              "chronological")
WINDOWS = (10, 100, 1000, 10000)
OPERANDS = (2, 4, 6)
NAMES = "abcdef"


def rule(k: int, window: int, keyed: bool = False) -> str:
    first = "a(K)" if keyed else "a"
    return f"h(K) <- ({' seq '.join([first] + [f'{n}(K)' for n in NAMES[1:k]])}) within {window}.\n"


def stream(n: int, k: int, period: int) -> list[tuple[str, list[int], int]]:
    events = []
    for t in range(1, n + 1):
        slot = t % period - (period - k + 1)      # 0 .. k-2 in the last k-1 seconds of a period
        events.append((NAMES[slot + 1], [t // period], t) if 0 <= slot < k - 1 else ("a", [], t))
    return events


def keyed_stream(n: int, k: int, period: int) -> list[tuple[str, list[int], int]]:
    events = []
    for t in range(1, n + 1):
        slot = t % period - (period - k)          # 0 .. k-1 in the last k seconds of a period
        events.append((NAMES[slot], [t // period], t) if 0 <= slot < k else ("a", [-t], t))
    return events


def cost(strategy: str, k: int, window: int, events: list[tuple[str, list[int], int]],
         keyed: bool = False) -> tuple[float, int]:
    """CPU microseconds per event and the number of detections."""
    with Engine.from_string(rule(k, window, keyed), policy=strategy) as engine:
        started = time.process_time()
        result = engine.emit_many(events)
        seconds = time.process_time() - started
    assert result.accepted == len(events)
    return seconds / len(events) * 1e6, len(result.detections)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--period", type=int, default=2_000)
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="the rows to run (default: all)")
    parser.add_argument("--keyed", action="store_true", help="a(K) with a key of its own each second: fixed output")
    args = parser.parse_args()
    header = " | ".join(f"W={w}" for w in WINDOWS)
    print(f"| strategy | k | {header} | flat | detections (W={WINDOWS[0]} .. {WINDOWS[-1]}) |")
    print("|---|---|" + "---|" * len(WINDOWS) + "---|---|")
    for strategy in args.strategies.split(","):
        for k in OPERANDS:
            events = (keyed_stream if args.keyed else stream)(args.events, k, args.period)
            runs = [cost(strategy, k, w, events, args.keyed) for w in WINDOWS]
            us = [c for c, _ in runs]
            found = [d for _, d in runs]
            cells = " | ".join(f"{c:.1f}" for c in us)
            print(f"| {strategy} | {k} | {cells} | {max(us) / min(us):.1f}x | {' .. '.join(map(str, found))} |",
                  flush=True)


if __name__ == "__main__":
    main()
