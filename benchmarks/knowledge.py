"""Background knowledge at scale: load time, memory and event throughput.

For each size (10^4, 10^5 and 10^6 triples by default) a synthetic background
graph is written as Turtle: a tree of a few hundred classes with labels, a few
properties with domains, ranges and a sub-property, and instances (each typed
with one class, linked to an earlier instance, with a number and a string).
Then, each in a fresh process:

- ``parse``: rdflib's plain parse of the file (``Graph().parse``), the
  yardstick;
- ``load``: ``Engine.load_ontology(file)`` (parse, RDFS closure, facts in the
  engine), then a stream of events ``observed(Instance)`` through the rule
  ``hit(X) <- observed(X) where isa(X, ex:'C5').``, the instances drawn at
  random, so every event asks the closure once.

Printed as a Markdown table: load time beside the plain parse, the peak
resident memory of each process, and events per second with the per-event
cost relative to the smallest size.  Times are the CPU time of the process
(Python and the embedded Prolog), which other work on a shared machine
disturbs less than wall time; events are timed as the best of three passes.

    .venv/bin/python benchmarks/knowledge.py [--sizes 10000 100000 1000000] [--events 200000]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NS = "http://example.org/bench#"
CLASSES = 300
RULE = f":- prefix(ex, '{NS}').\nhit(X) <- observed(X) where isa(X, ex:'C5').\n"
PLAIN = "hit(X) <- observed(X) where X == nothing.\n"  # the same work, but for isa/2
RUNS = 3


def generate(path: Path, total: int, seed: int = 1) -> int:
    """Write a graph of about ``total`` triples to ``path``; return how many
    instances it describes."""
    rnd = random.Random(seed)
    lines = [f"@prefix ex: <{NS}> .", "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .", ""]
    n = 0
    for i in range(1, CLASSES):
        lines.append(f'ex:C{i} rdfs:subClassOf ex:C{(i - 1) // 4} ; rdfs:label "class {i}" .')
        n += 2
    lines += [
        "ex:observes rdfs:domain ex:C1 ; rdfs:range ex:C2 .",
        "ex:near rdfs:subPropertyOf ex:related .",
        "ex:related rdfs:domain ex:C3 .",
        "ex:speed rdfs:domain ex:C0 .",
    ]
    n += 5
    i = 0
    while n < total:
        lines.append(
            f"ex:i{i} a ex:C{rnd.randrange(CLASSES)} ; ex:near ex:i{rnd.randrange(i + 1)} ; "
            f'ex:speed {rnd.randrange(100)} ; ex:name "instance {i}" .'
        )
        n += 4
        i += 1
    path.write_text("\n".join(lines) + "\n")
    return i


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_parse(path: str) -> dict[str, Any]:
    from rdflib import Graph

    started = time.process_time()
    g = Graph().parse(path)
    return {"seconds": time.process_time() - started, "triples": len(g), "peak_mb": peak_mb()}


def best_run(engine: Any, stream: list[tuple[str, list[str], int]]) -> tuple[float, int]:
    """The fastest of RUNS passes of ``stream`` (times shifted each pass), and
    the detections of a pass."""
    best = float("inf")
    found = 0
    for run in range(RUNS):
        shifted = [(name, args, t + run * len(stream)) for name, args, t in stream]
        started = time.process_time()
        result = engine.emit_many(shifted)
        best = min(best, time.process_time() - started)
        assert result.accepted == len(stream) and not result.rejected and not result.warnings
        found = len(result.detections)
    return best, found


def child_load(path: str, instances: int, events: int) -> dict[str, Any]:
    import etalis_py.rdf.knowledge  # noqa: F401  (imported as the parse's rdflib is: not timed)
    from etalis_py import Engine

    engine = Engine.from_string(RULE)
    plain = Engine.from_string(PLAIN)
    for e in (engine, plain):
        e.emit("observed", "warm-up", at=0)  # the engine's own first-call costs
    before = peak_mb()
    started = time.process_time()
    stats = engine.load_ontology(path)
    load = time.process_time() - started
    rnd = random.Random(7)
    stream = [("observed", [f"{NS}i{rnd.randrange(instances)}"], t) for t in range(1, events + 1)]
    seconds, detections = best_run(engine, stream)
    plain_seconds, _ = best_run(plain, stream)
    return {
        "seconds": load,
        "input_triples": stats.input_triples,
        "closure_triples": stats.triples,
        "facts": stats.facts,
        "peak_before_mb": before,
        "peak_mb": peak_mb(),
        "events": events,
        "detections": detections,
        "event_seconds": seconds,
        "plain_seconds": plain_seconds,
    }


def run_child(*args: str) -> dict[str, Any]:
    r = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return dict(json.loads(r.stdout.splitlines()[-1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    p.add_argument("--events", type=int, default=200_000)
    p.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    ns = p.parse_args()
    if ns.child:
        kind, path, *rest = ns.child
        out = child_parse(path) if kind == "parse" else child_load(path, int(rest[0]), int(rest[1]))
        print(json.dumps(out))
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in ns.sizes:
            path = Path(tmp) / f"background_{size}.ttl"
            instances = generate(path, size)
            parse = run_child("parse", str(path))
            load = run_child("load", str(path), str(instances), str(ns.events))
            rows.append((size, parse, load))
            print(f"# {size}: parse {parse}, load {load}", file=sys.stderr)
    base = rows[0][2]["event_seconds"] / rows[0][2]["events"]
    print("| triples in the file | in the closure | Prolog facts | rdflib parse (s CPU) | load (s CPU) | load / parse "
          "| peak RSS, parse (MB) | peak RSS, engine + load + events (MB) | events/s, `where isa/2` "
          "| events/s, `where X == nothing` | µs per event, isa/2 | cost per event vs first size |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size, parse, load in rows:
        per_event = load["event_seconds"] / load["events"]
        print(
            f"| {load['input_triples']:,} | {load['closure_triples']:,} | {load['facts']:,} "
            f"| {parse['seconds']:.2f} | {load['seconds']:.2f} | {load['seconds'] / parse['seconds']:.2f}x "
            f"| {parse['peak_mb']:,.0f} | {load['peak_mb']:,.0f} (engine alone {load['peak_before_mb']:,.0f}) "
            f"| {load['events'] / load['event_seconds']:,.0f} | {load['events'] / load['plain_seconds']:,.0f} "
            f"| {per_event * 1e6:.1f} | {per_event / base:.2f}x |"
        )


if __name__ == "__main__":
    main()
