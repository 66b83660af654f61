"""Load on `etalis serve` over loopback: CLIENTS concurrent clients, each
posting its share of EVENTS events in batches of BATCH to a rule set of
its own (events of one rule set must come in time order), while a
Server-Sent Events subscriber per rule set reads every detection.

The rule is

    c(K) <- (a(K) seq b(K)) within 10.

and each client's stream has one event a second, `a(K)` then `b(K)` for
K cycling over 100 keys, so every `b` completes one pattern: EVENTS / 2
detections in all.  Nothing may be lost: each client's replies must
accept every event and give exactly the detections an Engine in this
process makes of the same stream, and each subscriber must receive them
all, numbered 1 to N without a gap.

Prints events/s (all events over the wall time from the first request to
the last reply) and the latency of a request (p50, p99, max), without and
with ``--checkpoint`` (a checkpoint written per request).

    .venv/bin/python benchmarks/service_load.py [--events 100000] [--clients 4] [--batch 1000]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from etalis_py import Engine

RULES = "c(K) <- (a(K) seq b(K)) within 10.\n"
KEYS = 100


def stream(client: int, count: int) -> list[dict[str, object]]:
    """A client's events: a(K), b(K) a second apart."""
    out: list[dict[str, object]] = []
    for i in range(count):
        key = f"k{client}-{(i // 2) % KEYS}"
        out.append({"event": "a" if i % 2 == 0 else "b", "args": [key], "time": i + 1})
    return out


def start(folder: Path, checkpoint: bool) -> tuple[subprocess.Popen[str], str]:
    args = [sys.executable, "-m", "etalis_py.cli", "serve", "--port", "0", "--buffer", "1000000"]
    if checkpoint:
        args += ["--checkpoint", str(folder / "state")]
    process = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, cwd=folder)
    assert process.stderr is not None
    for line in process.stderr:
        found = re.search(r"listening on (http://\S+)/ ", line)
        if found:
            return process, found[1]
    raise SystemExit(f"etalis serve did not start: {process.wait()}")


def subscribe(url: str, expected: int, got: list[int]) -> None:
    """Read the stream until ``expected`` detections came (their ids into ``got``)."""
    with httpx.stream("GET", url, headers={"Last-Event-ID": "0"}, timeout=httpx.Timeout(600)) as reply:
        for line in reply.iter_lines():
            if line.startswith("id: "):
                got.append(int(line[4:]))
                if len(got) == expected:
                    return


def run(events: int, clients: int, batch: int, checkpoint: bool) -> dict[str, float]:
    share = events // clients
    streams = [stream(c, share) for c in range(clients)]
    with Engine.from_string(RULES) as engine:
        wanted = [[d.to_dict() for d in engine.emit_many(s).detections] for s in streams[:1]][0]
    with tempfile.TemporaryDirectory() as tmp:
        process, base = start(Path(tmp), checkpoint)
        try:
            with httpx.Client(base_url=base, timeout=600) as http:
                ids = [http.post("/rulesets", params={"name": f"load{c}.etl"}, content=RULES).json()["id"]
                       for c in range(clients)]
            received: list[list[int]] = [[] for _ in range(clients)]
            readers = [threading.Thread(target=subscribe, args=(f"{base}/rulesets/{ids[c]}/detections",
                                                                  len(wanted), received[c])) for c in range(clients)]
            for r in readers:
                r.start()
            latencies: list[float] = []
            outcomes: list[tuple[int, int, list[dict[str, object]]]] = [(0, 0, []) for _ in range(clients)]

            def post(c: int) -> None:
                accepted, rejected, found = 0, 0, []
                with httpx.Client(base_url=base, timeout=600) as http:
                    for i in range(0, share, batch):
                        body = json.dumps(streams[c][i:i + batch])
                        began = time.perf_counter()
                        reply = http.post(f"/rulesets/{ids[c]}/events", content=body,
                                          headers={"Content-Type": "application/json"}).json()
                        latencies.append(time.perf_counter() - began)
                        accepted += reply["accepted"]
                        rejected += len(reply["rejected"])
                        found += [{k: v for k, v in d.items() if k != "id"} for d in reply["detections"]]
                outcomes[c] = (accepted, rejected, found)

            posters = [threading.Thread(target=post, args=(c,)) for c in range(clients)]
            began = time.perf_counter()
            for p in posters:
                p.start()
            for p in posters:
                p.join()
            wall = time.perf_counter() - began
            for r in readers:
                r.join(120)
        finally:
            process.terminate()
            process.wait(60)
    for c, (accepted, rejected, found) in enumerate(outcomes):
        mine = [{**d, "args": [str(d["args"][0]).replace("k0-", f"k{c}-")]} for d in wanted]
        assert (accepted, rejected) == (share, 0), (c, accepted, rejected)
        assert found == mine, f"client {c}: the detections differ from the engine's"
        assert received[c] == list(range(1, len(wanted) + 1)), f"subscriber {c} got {len(received[c])}"
    ordered = sorted(latencies)
    return {"events/s": clients * share / wall, "p50 ms": 1000 * statistics.median(ordered),
            "p99 ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
            "max ms": 1000 * ordered[-1], "seconds": wall, "detections": clients * len(wanted)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--batch", type=int, default=1000)
    ns = p.parse_args()
    print(f"{ns.events} events, {ns.clients} clients, batches of {ns.batch}, a subscriber per rule set")
    print(f"{'checkpoint':<11}{'events/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'seconds':>9}{'detections':>12}")
    for checkpoint in (False, True):
        r = run(ns.events, ns.clients, ns.batch, checkpoint)
        print(f"{'yes' if checkpoint else 'no':<11}{r['events/s']:>10,.0f}{r['p50 ms']:>9.1f}{r['p99 ms']:>9.1f}"
              f"{r['max ms']:>9.1f}{r['seconds']:>9.2f}{r['detections']:>12,.0f}  nothing lost", flush=True)


if __name__ == "__main__":
    main()
