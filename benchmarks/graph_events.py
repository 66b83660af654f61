"""Graph events: throughput of RDF graphs as events, beside rdflib's parse.

A stream of N named graphs (20,000 by default) of 10 triples each, in
N-Quads: each graph holds two observations, each typed with a class of the
background's class tree, with a sensor (a property with a domain in the
background), a result and a result time, plus its own time triple in the
default graph.  The rule

    hit(O, V) <- graph(G) where (isa(G, O, ex:'C9'), triple(G, O, ex:speed, V)).

asks each graph's RDFS closure against the background (the class of an
observation is a leaf of a 300-class tree; ``isa/3`` climbs it through the
background's materialized ``rdfs:subClassOf`` closure).  For each background
size (10^4, 10^5 and 10^6 triples by default, the graph of
``benchmarks/knowledge.py``), in a fresh process:

- ``rdflib``: ``Dataset().parse(stream, format="nquads")``, the yardstick:
  parsing alone, no reasoning;
- ``run``: what ``etalis run rules.etl --events stream.nq`` does after
  loading: the stream read into graph batches (``read_batches``) and fed to
  the engine, which decodes them with its foreign library (as ``etalis
  run``, unless ``ETALIS_TEXT_PATH`` is set: then in Prolog);
- ``reader``: the stream read into graph events alone (Python's part of
  ``run``): batch lists that write each IRI once a batch;
- ``engine``: the same graph events, already converted to the engine's input
  lines, fed to the engine: the cost of matching and reasoning alone;
- ``read``: the same lines through an engine whose only rule asks nothing
  of the graphs (``nothing <- graph(_) where fail.``): what reading a graph
  of 10 triples into the engine costs by itself.

Times are CPU seconds of the process, the best of three passes (the
engine reset before each).  Printed as a Markdown table.

    .venv/bin/python benchmarks/graph_events.py [--sizes 10000 100000 1000000] [--graphs 20000]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from knowledge import CLASSES, NS, generate, peak_mb  # noqa: E402  (the background of the knowledge benchmark)

RULE = f""":- prefix(ex, '{NS}').
:- prefix(sosa, 'http://www.w3.org/ns/sosa/').
hit(O, V) <- graph(G) where (isa(G, O, ex:'C9'), triple(G, O, ex:speed, V)).
"""
READ_ONLY = "nothing <- graph(_) where fail.\n"  # the graphs read and matched, nothing asked of them
RUNS = 3
XSD = "http://www.w3.org/2001/XMLSchema#"
SOSA = "http://www.w3.org/ns/sosa/"
PROV_AT = "<http://www.w3.org/ns/prov#generatedAtTime>"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


def write_stream(path: Path, graphs: int, seed: int = 3) -> int:
    """Write ``graphs`` graphs of 10 triples each (and a time triple each)
    as N-Quads; return the number of triples in the named graphs."""
    rnd = random.Random(seed)
    triples = 0
    with path.open("w") as f:
        for i in range(graphs):
            g = f"<{NS}graph/{i}>"
            f.write(f'{g} {PROV_AT} "{1_000_000 + i}"^^<{XSD}integer> .\n')
            for k in range(2):
                obs = f"<{NS}obs/{i}/{k}>"
                leaf = CLASSES - 1 - rnd.randrange(CLASSES // 2)
                for p, o in ((RDF_TYPE, f"<{NS}C{leaf}>"),
                             (f"<{NS}observes>", f"<{NS}sensor{rnd.randrange(100)}>"),
                             (f"<{NS}speed>", f'"{rnd.randrange(100)}"^^<{XSD}integer>'),
                             (f"<{SOSA}hasSimpleResult>", f'"{rnd.random() * 50:.2f}"^^<{XSD}decimal>'),
                             (f"<{SOSA}resultTime>", f'"2004-08-08T06:{i % 60:02d}:00Z"^^<{XSD}dateTime>')):
                    f.write(f"{obs} {p} {o} {g} .\n")
                    triples += 1
    return triples


def child_rdflib(stream: str) -> dict[str, Any]:
    import warnings

    from rdflib import Dataset

    best = float("inf")
    for _ in range(RUNS):
        started = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            d = Dataset()
            d.parse(stream, format="nquads")
        best = min(best, time.process_time() - started)
        quads = len(d)
    return {"seconds": best, "quads": quads}


def child_engine(background: str, stream: str, graphs: int) -> dict[str, Any]:
    from etalis_py import Engine
    from etalis_py.inputs.streams import read_batches

    engine = Engine.from_string(RULE)
    columnar = engine.columnar()  # as etalis run does: graph batches decoded by the foreign library if it is there
    started = time.process_time()
    engine.load_ontology(background)
    load = time.process_time() - started
    reader_best = float("inf")
    for _ in range(RUNS):
        started = time.process_time()
        texts = [(b.text, b.first_line, b.terms) for b in read_batches(Path(stream))]
        reader_best = min(reader_best, time.process_time() - started)
    reader = Engine.from_string(READ_ONLY)
    read_best = float("inf")
    for _ in range(RUNS):
        reader.reset()
        started = time.process_time()
        for text, first, terms in texts:
            assert reader.feed_text(text, first, terms).accepted
        read_best = min(read_best, time.process_time() - started)
    run_best = engine_best = float("inf")
    found = 0
    for run in range(2 * RUNS):
        engine.reset()  # each pass starts afresh, with the same background
        started = time.process_time()
        if run % 2 == 0:  # read and convert the stream, then feed it
            batches = [(b.text, b.first_line, b.terms) for b in read_batches(Path(stream))]
        else:
            batches = texts
        accepted = detections = 0
        for text, first, terms in batches:
            result = engine.feed_text(text, first, terms)
            accepted += result.accepted
            detections += result.detection_lines.count("\n")
            assert not result.rejected and not result.warnings, (result.rejected[:1], result.warnings[:1])
        seconds = time.process_time() - started
        assert accepted == graphs, accepted
        if run % 2 == 0:
            run_best = min(run_best, seconds)
        else:
            engine_best = min(engine_best, seconds)
        found = detections
    return {"load": load, "run": run_best, "engine": engine_best, "read": read_best, "reader": reader_best,
            "detections": found, "peak_mb": peak_mb(), "columnar": columnar}


def run_child(*args: str) -> dict[str, Any]:
    r = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return dict(json.loads(r.stdout.splitlines()[-1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    p.add_argument("--graphs", type=int, default=20_000)
    p.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    ns = p.parse_args()
    if ns.child:
        kind, *rest = ns.child
        out = child_rdflib(rest[0]) if kind == "rdflib" else child_engine(rest[0], rest[1], int(rest[2]))
        print(json.dumps(out))
        return
    with tempfile.TemporaryDirectory() as tmp:
        stream = Path(tmp) / "stream.nq"
        triples = write_stream(stream, ns.graphs)
        parse = run_child("rdflib", str(stream))
        print(f"# rdflib: {parse}", file=sys.stderr)
        rows = []
        for size in ns.sizes:
            background = Path(tmp) / f"background_{size}.ttl"
            generate(background, size)
            out = run_child("engine", str(background), str(stream), str(ns.graphs))
            print(f"# {size}: {out}", file=sys.stderr)
            rows.append((size, out))
    g = ns.graphs
    print(f"{g:,} graphs of {triples // g} triples ({parse['quads']:,} quads with the time triples); "
          f"rdflib parses them at {g / parse['seconds']:,.0f} graphs/s ({parse['seconds']:.2f} s CPU)\n")
    base = rows[0][1]["engine"]
    print("| background triples | load (s CPU) | graphs/s, `etalis run` path (read + engine) | µs per graph, N-Quads "
          "reader | graphs/s, engine alone | µs per graph, engine | of which reading the graph | cost per graph vs "
          "first size | detections | peak RSS (MB) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size, out in rows:
        print(f"| {size:,} | {out['load']:.2f} | {g / out['run']:,.0f} | {out['reader'] / g * 1e6:.1f} "
              f"| {g / out['engine']:,.0f} | {out['engine'] / g * 1e6:.1f} | {out['read'] / g * 1e6:.1f} "
              f"| {out['engine'] / base:.2f}x | {out['detections']:,} | {out['peak_mb']:,.0f} |")


if __name__ == "__main__":
    main()
