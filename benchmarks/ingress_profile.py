"""Where the time of a batch path goes: the seq benchmark's stream
(benchmarks/throughput.py) of --events events, each step timed on its own
in one process (CPU seconds, best of --repeat), as microseconds per event:
first the packed columns that emit_many hands over (see
src/etalis_py/columns.py), then the text batch lists of the same stream,
then reading the stream's file as etalis run reads it, in each format.

    .venv/bin/python benchmarks/ingress_profile.py [--events 100000] [--repeat 3] [--reading]

(--reading: only the rows of reading the file.)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from throughput import HERE, KEYS, RULES, STEP, stream, write_csv, write_events, write_jsonl, write_parquet

from etalis_py import Engine
from etalis_py.bridge.columns import Packed, items_packed, unpacked_detections
from etalis_py.bridge._prolog import bridge
from etalis_py.bridge.engine import parse_rows
from etalis_py.events import batch_list, event_element
from etalis_py.inputs.mapping import Mapping
from etalis_py.inputs.streams import read_batches

BATCH = 10_000


def best(repeat: int, setup: Callable[[], Any], step: Callable[[Any], Any]) -> tuple[float, Any]:
    """The least CPU time of ``step(setup())`` over ``repeat`` runs, and its result."""
    times = []
    result = None
    for _ in range(repeat):
        ready = setup()
        started = time.process_time()
        result = step(ready)
        times.append(time.process_time() - started)
    return min(times), result


def reading_rows(n: int, repeat: int) -> list[tuple[str, float]]:
    """The CPU seconds of reading the stream's file of ``n`` events as
    etalis run reads it, in each format (best of ``repeat``)."""
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for suffix, write, packed, way in (
                (".csv", write_csv, True, "CSV in bulk, the C reader (etalis run's reader)"),
                (".jsonl", write_jsonl, True, "JSON lines in bulk, the C reader (etalis run's reader)"),
                (".parquet", write_parquet, True, "Parquet by record batches (etalis run's reader)"),
                (".events", write_events, True,
                 "blocks of plain events scanned by the foreign library into packed columns (etalis run's reader)"),
                (".events", write_events, False, "event lines as batch lists (text; ETALIS_TEXT_PATH=1)")):
            path = Path(tmp) / f"stream{suffix}"
            options = write(path, n)
            mapping = Mapping(event_col="name", args=("k",), time="t") if options else None
            t, _ = best(repeat, lambda: None, lambda _: sum(b.end_line - b.first_line for b in read_batches(
                path, mapping, packed=packed)))
            rows.append((f"reading a {suffix} file into batches: {way}", t))
    return rows


def report(n: int, repeat: int, rows: list[tuple[str, float]]) -> None:
    print(f"{n:,} events, best of {repeat} (CPU seconds)\n")
    print("| step | CPU s | µs per event |")
    print("|---|---:|---:|")
    for what, s in rows:
        print(f"| {what} | {s:.3f} | {s / n * 1e6:.2f} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--reading", action="store_true", help="only the rows of reading the stream's file")
    ns = p.parse_args()
    n = ns.events
    if ns.reading:
        report(n, ns.repeat, reading_rows(n, ns.repeat))
        return
    events = list(stream(n))
    rows: list[tuple[str, float]] = []

    def feed(engine: Engine, texts: list[str]) -> list[str]:
        bodies = []
        for i, text in enumerate(texts):
            request = f"feed({engine._name}, list({BATCH}), [first({i * BATCH + 1}), format(row)])"
            _, body = engine._prolog.request(request, text)
            bodies.append(body)
        return bodies

    def feed_packed(engine: Engine, batches: list[Packed]) -> tuple[int, float]:
        """The detections of feeding ``batches``, and the CPU seconds of
        making their Detection objects."""
        found, making = 0, 0.0
        for i, batch in enumerate(batches):
            request = (f"feed({engine._name}, columns({len(batch)}, {batch.spec()}), "
                       f"[first({i * BATCH + 1}), format(packed)])")
            header, body = engine._prolog.request(request)
            started = time.process_time()
            found += len(unpacked_detections(header["packed"], len(body)))
            making += time.process_time() - started
        return found, making

    from pyswip import Prolog

    # the bridge first, so that throughput.pl is compiled on its thread as the engine's code is (optimise(true))
    assert Engine.from_string(RULES).columnar(), "the foreign library is needed (make native)"
    on_thread = bridge().on_thread      # where the engines' state is, and the optimise flag (flags are per thread)
    on_thread(lambda: Prolog.consult(str(HERE / "throughput.pl")))

    def inside_answers() -> list[dict[str, Any]]:
        """bench_inside/6's answers on a new engine."""
        name = Engine.from_string(RULES)._name
        return on_thread(lambda: list(Prolog.query(f"bench_inside({name}, {n}, {KEYS}, {STEP}, D, S)")))

    inside = min(float(a["S"]) for _ in range(ns.repeat) for a in inside_answers())
    rows.append(("the engine itself (events made in Prolog, benchmarks/throughput.pl)", inside))
    t, packed = best(ns.repeat, lambda: None, lambda _: [items_packed(events[i:i + BATCH], i + 1, {}, [])
                                                         for i in range(0, n, BATCH)])
    rows.append(("Python: packing emit_many's tuples into columns", t))
    specs = ", ".join(b.spec() for b in packed)
    [answer] = on_thread(lambda: list(Prolog.query(
        f"Specs = [{specs}], statistics(cputime, T0), "
        f"forall(member(S, Specs), etalis_columns:column_terms(S, _, checked)), statistics(cputime, T1), T is T1 - T0")))
    rows.append(("Prolog: building the event terms from the columns (C)", float(answer["T"])))
    t, _ = best(ns.repeat, lambda: Engine.from_string("z <- y.\n"), lambda e: feed_packed(e, packed))
    rows.append(("a feed of packed columns, rules that no event matches (building, the feed loop, the limit)", t))
    t, (detections, making) = best(ns.repeat, lambda: Engine.from_string(RULES), lambda e: feed_packed(e, packed))
    rows.append(("a feed of packed columns, the benchmark's rule (all of Prolog's side, making the Detection objects)",
                 t))
    rows.append((f"Python: making the {detections:,} Detection objects from the packed detections (of the above)",
                 making))
    t, _ = best(ns.repeat, lambda: Engine.from_string(RULES), lambda e: e.emit_many(events, collect=False))
    rows.append(("Engine.emit_many, all of it", t))
    t, terms = best(ns.repeat, lambda: {}, lambda names: [event_element(e, names) for e in events])
    rows.append(("text: Python, the text of each event (emit_many's tuples)", t))
    t, texts = best(ns.repeat, lambda: None, lambda _: [batch_list(terms[i:i + BATCH]) for i in range(0, n, BATCH)])
    rows.append(("text: Python, joining batches", t))
    t, _ = best(ns.repeat, lambda: Engine.from_string(RULES),
                lambda e: [e._prolog.request(f"stats({e._name})", text) for text in texts])
    rows.append(("text: crossing, the text in and a reply out (a request that ignores it)", t))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "batch.txt"
        path.write_text(texts[0])
        [answer] = on_thread(lambda: list(Prolog.query(
            f"read_file_to_string('{path}', S, []), statistics(cputime, T0), "
            f"forall(between(1, {len(texts)}, _), term_string(_, S)), statistics(cputime, T1), T is T1 - T0")))
        rows.append(("text: Prolog, reading the batch lists (term_string/2)", float(answer["T"])))
        [answer] = on_thread(lambda: list(Prolog.query(
            f"read_file_to_string('{path}', S, []), statistics(cputime, T0), "
            f"forall(between(1, {len(texts)}, _), etalis_columns:list_text_terms(S, {BATCH}, _, checked)), "
            f"statistics(cputime, T1), T is T1 - T0")))
        rows.append(("text: Prolog, reading the batch lists (the foreign library, as a feed does)", float(answer["T"])))
    t, _ = best(ns.repeat, lambda: Engine.from_string("z <- y.\n"), lambda e: feed(e, texts))
    rows.append(("text: a feed of batch lists, rules that no event matches (crossing, reading, checks, the limit)", t))
    t, bodies = best(ns.repeat, lambda: Engine.from_string(RULES), lambda e: feed(e, texts))
    rows.append(("text: a feed of batch lists, the benchmark's rule (all of Prolog's side)", t))
    t, found = best(ns.repeat, lambda: None, lambda _: [parse_rows(b) for b in bodies])
    rows.append((f"text: Python, decoding the {sum(map(len, found)):,} detections (rows, json.loads per batch)", t))
    rows += reading_rows(n, ns.repeat)
    report(n, ns.repeat, rows)


if __name__ == "__main__":
    main()
