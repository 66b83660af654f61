"""Graph events on named streams: each graph carries the IRI of its stream
(a ``dcterms:isPartOf`` triple of the default graph, ``--stream``, or
``emit_graph(stream=)``), and rules select a stream with graph_stream/2."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from rdflib import Graph, Literal, Namespace

from etalis_py import Detection, Engine, EventError
from etalis_py.bridge.engine import parse_detections
from etalis_py.events import Rejection
from etalis_py.inputs.streams import Mapping, read_batches

ROOT = Path(__file__).resolve().parents[1]
EX = Namespace("http://ex.org/")
SOSA = Namespace("http://www.w3.org/ns/sosa/")
PROV_AT = "<http://www.w3.org/ns/prov#generatedAtTime>"
PART_OF = "<http://purl.org/dc/terms/isPartOf>"
RESULT = "<http://www.w3.org/ns/sosa/hasSimpleResult>"
T0 = 1091945100.0  # 2004-08-08T06:05:00Z
RULES = """:- prefix(ex, 'http://ex.org/').
:- prefix(sosa, 'http://www.w3.org/ns/sosa/').
on(S, N) <- graph(G) where (graph_stream(G, S), graph_name(G, N)).
rise(S, V1, V2) <- graph(G1) seq graph(G2)
    where (graph_stream(G1, S), graph_stream(G2, S),
           triple(G1, _, sosa:hasSimpleResult, V1), triple(G2, _, sosa:hasSimpleResult, V2), V2 > V1).
cross(V1, V2) <- graph(G1) seq graph(G2)
    where (graph_stream(G1, ex:s1), graph_stream(G2, ex:s2),
           triple(G1, _, sosa:hasSimpleResult, V1), triple(G2, _, sosa:hasSimpleResult, V2)).
"""


def _graph(name: str, minutes: int, value: int, stream: str = "") -> str:
    """The N-Quads of graph ``name``: one observation, its time, its stream."""
    g = f"<http://ex.org/{name}>"
    at = f'"2004-08-08T06:{5 + minutes:02d}:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
    part = f"{g} {PART_OF} <http://ex.org/{stream}> .\n" if stream else ""
    return (f"{g} {PROV_AT} {at} .\n" + part
            + f'<http://ex.org/o{name}> {RESULT} "{value}"^^<http://www.w3.org/2001/XMLSchema#integer> {g} .\n')


def run(path: Path, mapping: Mapping | None = None) -> tuple[list[Detection], list[Rejection]]:
    engine = Engine.from_string(RULES)
    found: list[Detection] = []
    rejected: list[Rejection] = []
    for batch in read_batches(path, mapping):
        result = engine.feed_text(batch.text, batch.first_line, batch.terms)
        found += parse_detections(result.detection_lines)
        rejected += batch.rejected + result.rejected
    return found, rejected


S1, S2 = "http://ex.org/s1", "http://ex.org/s2"


def two_streams(tmp_path: Path) -> Path:
    path = tmp_path / "two.nq"
    path.write_text(_graph("g1", 0, 10, "s1") + _graph("g2", 1, 20, "s2") + _graph("g3", 2, 12, "s1")
                    + _graph("g4", 3, 18, "s2") + _graph("g5", 4, 15, "s1"))
    return path


def test_two_interleaved_streams_are_told_apart_by_graph_stream(tmp_path: Path) -> None:
    found, rejected = run(two_streams(tmp_path))
    assert rejected == []
    t = [T0 + 60 * i for i in range(5)]
    assert found == [
        Detection("on", (S1, "http://ex.org/g1"), t[0], t[0]),
        Detection("cross", (10, 20), t[0], t[1]),
        Detection("on", (S2, "http://ex.org/g2"), t[1], t[1]),
        Detection("rise", (S1, 10, 12), t[0], t[2]),
        Detection("on", (S1, "http://ex.org/g3"), t[2], t[2]),
        Detection("cross", (10, 18), t[0], t[3]),
        Detection("cross", (12, 18), t[2], t[3]),
        Detection("on", (S2, "http://ex.org/g4"), t[3], t[3]),
        Detection("rise", (S1, 10, 15), t[0], t[4]),
        Detection("rise", (S1, 12, 15), t[2], t[4]),
        Detection("on", (S1, "http://ex.org/g5"), t[4], t[4]),
    ]


def test_a_graph_without_a_stream_has_none_unless_the_input_gives_one(tmp_path: Path) -> None:
    path = tmp_path / "s.nq"
    path.write_text(_graph("g1", 0, 10) + _graph("g2", 1, 11, "s2"))
    found, _ = run(path)
    assert found == [Detection("on", (S2, "http://ex.org/g2"), T0 + 60, T0 + 60)]
    found, _ = run(path, Mapping(stream=S1))
    assert found == [
        Detection("on", (S1, "http://ex.org/g1"), T0, T0),
        Detection("cross", (10, 11), T0, T0 + 60),
        Detection("on", (S2, "http://ex.org/g2"), T0 + 60, T0 + 60),
    ]


def test_a_stream_that_is_no_iri_or_a_second_stream_drops_the_graph(tmp_path: Path) -> None:
    path = tmp_path / "s.nq"
    path.write_text(_graph("g1", 0, 10, "s1") + f'<http://ex.org/g1> {PART_OF} "s2" .\n'
                    + _graph("g2", 1, 11, "s1") + f"<http://ex.org/g2> {PART_OF} <http://ex.org/s2> .\n"
                    + _graph("g3", 2, 12, "s1"))
    found, rejected = run(path)
    assert found == [Detection("on", (S1, "http://ex.org/g3"), T0 + 120, T0 + 120)]
    assert [(r.line, r.reason) for r in rejected] == [
        (4, "the stream of a graph must be an IRI (graph 'http://ex.org/g1' is dropped)"),
        (8, "graph 'http://ex.org/g2' has two streams"),
    ]


def test_trig_and_jsonld_graphs_take_their_stream_from_the_default_graph(tmp_path: Path) -> None:
    trig = tmp_path / "s.trig"
    trig.write_text(
        "@prefix ex: <http://ex.org/> .\n@prefix sosa: <http://www.w3.org/ns/sosa/> .\n"
        "@prefix prov: <http://www.w3.org/ns/prov#> .\n@prefix dcterms: <http://purl.org/dc/terms/> .\n"
        "ex:g1 prov:generatedAtTime 60 ; dcterms:isPartOf ex:s1 .\n"
        "ex:g2 prov:generatedAtTime 120 ; dcterms:isPartOf ex:s2 .\n"
        "ex:g3 prov:generatedAtTime 180 .\n"
        "ex:g1 { ex:o1 sosa:hasSimpleResult 1 . }\nex:g2 { ex:o2 sosa:hasSimpleResult 2 . }\n"
        "ex:g3 { ex:o3 sosa:hasSimpleResult 3 . }\n"
    )
    found, rejected = run(trig, Mapping(stream="http://ex.org/s0"))
    assert rejected == []
    assert found == [
        Detection("on", (S1, "http://ex.org/g1"), 60, 60),
        Detection("cross", (1, 2), 60, 120),
        Detection("on", (S2, "http://ex.org/g2"), 120, 120),
        Detection("on", ("http://ex.org/s0", "http://ex.org/g3"), 180, 180),
    ]
    jsonld = tmp_path / "s.jsonld"
    context = '{"sosa": "http://www.w3.org/ns/sosa/", "prov": "http://www.w3.org/ns/prov#", ' \
              '"dcterms": "http://purl.org/dc/terms/"}'
    jsonld.write_text(
        f'{{"@context": {context}, "@id": "http://ex.org/g1", "prov:generatedAtTime": 60, '
        f'"dcterms:isPartOf": {{"@id": "http://ex.org/s2"}}, '
        f'"@graph": [{{"@id": "http://ex.org/o1", "sosa:hasSimpleResult": 1}}]}}\n'
    )
    found, rejected = run(jsonld)
    assert rejected == []
    assert found == [Detection("on", (S2, "http://ex.org/g1"), 60, 60)]


def test_emit_graph_puts_a_graph_on_a_stream() -> None:
    engine = Engine.from_string(RULES)
    g = Graph(identifier=EX.g1)
    g.add((EX.o1, SOSA.hasSimpleResult, Literal(10)))
    h = Graph(identifier=EX.g2)
    h.add((EX.o2, SOSA.hasSimpleResult, Literal(20)))
    assert engine.emit_graph(g, at=1, stream=S1) == [Detection("on", (S1, "http://ex.org/g1"), 1, 1)]
    assert engine.emit_graph(h, at=2, stream=EX.s2) == [
        Detection("cross", (10, 20), 1, 2),
        Detection("on", (S2, "http://ex.org/g2"), 2, 2),
    ]
    assert engine.emit_graph(h, at=3) == []  # no stream: graph_stream/2 has no answer
    with pytest.raises(EventError, match=r"graph event: the stream of a graph must be an IRI, not ''"):
        engine.emit_graph(h, at=4, stream="")


def test_a_column_of_graphs_is_on_the_given_stream(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('time,graph\n5,"<http://ex.org/o1> <http://www.w3.org/ns/sosa/hasSimpleResult> ""7"" ."\n')
    mapping = replace(Mapping.graph_rows("graph", "time"), stream=S2)
    found, rejected = run(path, mapping)
    assert rejected == []
    assert [(d.event, d.args[0], d.start, d.end) for d in found] == [("on", S2, 5, 5)]
    assert str(found[0].args[1]).startswith("_:g")  # the name of a graph without one, see graph_cell


def test_etalis_run_takes_the_stream_of_a_file(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text(RULES)
    path = tmp_path / "s.nq"
    path.write_text(_graph("g1", 0, 10) + _graph("g2", 1, 20, "s2"))
    out = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(path),
                          "--stream", S1], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert out.returncode == 0, out.stderr
    assert [parse_detections(line)[0] for line in out.stdout.splitlines()] == [
        Detection("on", (S1, "http://ex.org/g1"), T0, T0),
        Detection("cross", (10, 20), T0, T0 + 60),
        Detection("on", (S2, "http://ex.org/g2"), T0 + 60, T0 + 60),
    ]
    bad = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(path),
                          "--stream", "not an iri"], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert bad.returncode == 2
    assert bad.stderr == ("etalis run: error: argument --stream: not an IRI: 'not an iri'\n"
                          "  hint: etalis run --help lists the options\n")


def test_stream_on_an_input_that_is_not_graphs_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from etalis_py.cli import main

    rules = tmp_path / "r.etl"
    rules.write_text("c(X) <- a(X).\n")
    path = tmp_path / "s.jsonl"
    path.write_text('{"event": "a", "args": [1], "time": 1}\n')
    assert main(["run", str(rules), "--events", str(path), "--stream", S1]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"etalis: --stream names the stream of graph events (.nq, .trig, .jsonld or --graph-col); {path} is read "
        "as jsonl, whose events are not graphs"]
