"""Print each blizzard that `etalis serve` detects at JFK as it is
detected, in New York time (as `etalis table --lines` prints it); stop
after --count of them."""

from __future__ import annotations

import argparse
import sys
import threading

from etalis_py import Detection
from etalis_py.bridge.client import Client
from etalis_py.outputs.report import Readable


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("url", help="the server, e.g. http://127.0.0.1:8080")
    p.add_argument("--ruleset", default="blizzard", help="the rule set to follow (default blizzard)")
    p.add_argument("--count", type=int, default=1, help="stop after this many blizzards (default 1)")
    p.add_argument("--timeout", type=float, default=3600.0, help="give up after this many seconds")
    ns = p.parse_args()
    readable = Readable(tz="America/New_York", args=False)
    seen: list[Detection] = []
    enough = threading.Event()

    def show(d: Detection) -> None:
        print(readable.lines([d]), end="", flush=True)
        seen.append(d)
        if len(seen) >= ns.count:
            enough.set()

    with Client(ns.url, ruleset=ns.ruleset) as client:
        client.on("blizzard", show)
        print(f"waiting for blizzards at {ns.url}/rulesets/{ns.ruleset}", file=sys.stderr, flush=True)
        if not enough.wait(ns.timeout):
            print(f"no blizzard within {ns.timeout:g} seconds", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
