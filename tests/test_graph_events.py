"""Graph events: RDF graphs as events, asked with triple/4, isa/3 and
graph_name/2, with the RDFS closure of each event against the background."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import RDF, RDFS, XSD

from etalis_py import Detection, Engine, EventError, RuleError
from etalis_py.bridge.engine import parse_detections
from etalis_py.events import Rejection
from etalis_py.rdf.knowledge import Closure, close
from etalis_py.inputs.streams import read_batches

ROOT = Path(__file__).resolve().parents[1]
WEATHER = ROOT / "ontologies" / "weather.ttl"
EX = Namespace("http://ex.org/")
SOSA = Namespace("http://www.w3.org/ns/sosa/")
WT = Namespace("http://example.org/etalis-py/weather#")
PROV_AT = "<http://www.w3.org/ns/prov#generatedAtTime>"
PREFIXES = """:- prefix(sosa, 'http://www.w3.org/ns/sosa/').
:- prefix(wt, 'http://example.org/etalis-py/weather#').
:- prefix(ex, 'http://ex.org/').
"""


def observation(name: str, obs: str, value: Any, kind: URIRef = WT.WindObservation) -> Graph:
    g = Graph(identifier=EX[name])
    g.add((EX[obs], RDF.type, kind))
    g.add((EX[obs], SOSA.hasSimpleResult, Literal(value)))
    return g


def weather_engine(rules: str) -> Engine:
    engine = Engine.from_string(PREFIXES + rules)
    engine.load_ontology(WEATHER)
    return engine


def test_an_events_types_are_closed_with_the_background_classes() -> None:
    engine = weather_engine(
        "wind(S, V) <- graph(G) where (triple(G, S, sosa:hasSimpleResult, V), isa(G, S, wt:'WindObservation')).\n"
        "obs(S) <- graph(G) where isa(G, S, sosa:'Observation').\n"
    )
    assert engine.emit_graph(observation("g1", "o1", 61, WT.Diablo), at=5) == [
        Detection("wind", ("http://ex.org/o1", 61), 5, 5),
        Detection("obs", ("http://ex.org/o1",), 5, 5),
    ]
    assert engine.emit_graph(observation("g2", "o2", 20.5, WT.TemperatureObservation), at=6) == [
        Detection("obs", ("http://ex.org/o2",), 6, 6),
    ]


def test_graph_events_combine_with_seq_cnot_and_within() -> None:
    engine = weather_engine(
        "rise(V1, V2) <- ((graph(G1) seq graph(G2)) cnot graph(_)) within 10 where "
        "(triple(G1, _, sosa:hasSimpleResult, V1), triple(G2, _, sosa:hasSimpleResult, V2), V2 > V1).\n"
        "named(N) <- graph(G) where graph_name(G, N).\n"
    )
    found: list[Detection] = []
    for t, v in [(1, 10), (2, 12), (3, 11), (20, 15)]:
        found += engine.emit_graph(observation(f"g{t}", f"o{t}", v), at=t)
    assert found == [
        Detection("named", ("http://ex.org/g1",), 1, 1),
        Detection("rise", (10, 12), 1, 2),
        Detection("named", ("http://ex.org/g2",), 2, 2),
        Detection("named", ("http://ex.org/g3",), 3, 3),
        Detection("named", ("http://ex.org/g20",), 20, 20),
    ]


def test_super_properties_domains_and_ranges_apply_to_the_event_and_each_answer_comes_once() -> None:
    background = Graph()
    for t in [(EX.p, RDFS.subPropertyOf, EX.q), (EX.p2, RDFS.subPropertyOf, EX.q),
              (EX.q, RDFS.domain, EX.A), (EX.q, RDFS.range, EX.B), (EX.B, RDFS.subClassOf, EX.C)]:
        background.add(t)
    engine = Engine.from_string(PREFIXES + "q(S, O) <- graph(G) where triple(G, S, ex:q, O).\n"
                                "c(X) <- graph(G) where isa(G, X, ex:'C').\n"
                                "a(X) <- graph(G) where isa(G, X, ex:'A').\n")
    engine.load_ontology(background)
    g = Graph(identifier=EX.g)
    g.add((EX.s, EX.p, EX.o))
    g.add((EX.s, EX.p2, EX.o))  # s q o follows twice
    assert engine.emit_graph(g, at=1) == [
        Detection("q", ("http://ex.org/s", "http://ex.org/o"), 1, 1),
        Detection("c", ("http://ex.org/o",), 1, 1),
        Detection("a", ("http://ex.org/s",), 1, 1),
    ]


def _flat(closure: Closure) -> set[tuple[Any, str, Any]]:
    def value(node: Any) -> Any:
        return node.value if isinstance(node, Literal) else str(node)

    out = {(value(s), str(p), value(o)) for s, p, o in closure.triples}
    out |= {(value(x), str(RDF.type), str(c)) for x, cs in closure.types.items() for c in cs}
    return out


def _random_case(rnd: random.Random) -> tuple[list[Any], list[Any]]:
    classes = [EX[f"C{i}"] for i in range(5)]
    props = [EX[f"p{i}"] for i in range(5)]
    nodes = [EX[f"n{i}"] for i in range(6)]
    background: list[Any] = []
    for _ in range(8):
        kind = rnd.randrange(5)
        if kind == 0:
            background.append((rnd.choice(classes), RDFS.subClassOf, rnd.choice(classes)))
        elif kind == 1:
            background.append((rnd.choice(props), RDFS.subPropertyOf, rnd.choice(props)))
        elif kind == 2:
            background.append((rnd.choice(props), RDFS.domain, rnd.choice(classes)))
        elif kind == 3:
            background.append((rnd.choice(props), RDFS.range, rnd.choice(classes)))
        else:
            background.append((rnd.choice(nodes), rnd.choice(props), rnd.choice(nodes)))
    event: list[Any] = []
    for _ in range(5):
        if rnd.randrange(3) == 0:
            event.append((rnd.choice(nodes), RDF.type, rnd.choice(classes)))
        else:
            obj = Literal(rnd.randrange(3)) if rnd.randrange(4) == 0 else rnd.choice(nodes)
            event.append((rnd.choice(nodes), rnd.choice(props), obj))
    return background, event


@pytest.mark.parametrize("seed", range(12))
def test_an_event_adds_exactly_what_owlrl_derives_from_it_with_the_background(seed: int) -> None:
    """closure(B + G) = closure(B) + what triple/4 answers, and nothing
    triple/4 answers is outside closure(B + G)."""
    background, event = _random_case(random.Random(seed))
    engine = Engine.from_string("all(S, P, O) <- graph(G) where triple(G, S, P, O).")
    b = Graph()
    for t in background:
        b.add(t)
    engine.load_ontology(b)
    g = Graph(identifier=EX.g)
    for t in event:
        g.add(t)
    answers = [tuple(d.args) for d in engine.emit_graph(g, at=1)]
    local = set(answers)
    assert len(answers) == len(local)
    with_event = _flat(close(set(background) | set(event)))
    assert local <= with_event
    assert with_event - _flat(close(set(background))) <= local


@pytest.mark.parametrize("seed", range(12))
def test_a_property_or_class_given_asks_what_the_general_closure_answers(seed: int) -> None:
    """triple(G, S, P, O) with P given and isa(G, X, C) with C given (one
    lookup of the background's derived domains and ranges a triple)
    answer what triple/4 with all unbound answers for P and rdf:type C,
    with a background loaded in two parts (the derived domains and ranges
    follow each change)."""
    rnd = random.Random(seed)
    background, event = _random_case(rnd)
    props = [str(EX[f"p{i}"]) for i in range(5)]
    classes = [str(EX[f"C{i}"]) for i in range(5)] + [str(RDFS.Resource), str(RDF.Property)]
    engine = Engine.from_string(
        "all(S, P, O) <- graph(G) where triple(G, S, P, O).\n"
        f"tp(P, S, O) <- graph(G) where (member(P, {props!r}), triple(G, S, P, O)).\n"
        f"ic(C, X) <- graph(G) where (member(C, {classes!r}), isa(G, X, C)).\n".replace('"', "'"))
    first = Graph()
    for t in _random_case(random.Random(seed + 100))[0]:
        first.add(t)
    engine.load_ontology(first)
    b = Graph()
    for t in background:
        b.add(t)
    engine.load_ontology(b)  # added to the first: the closure of both
    g = Graph(identifier=EX.g)
    for t in event:
        g.add(t)
    found = engine.emit_graph(g, at=1)
    everything = {d.args for d in found if d.event == "all"}
    assert {d.args for d in found if d.event == "tp"} == {(p, s, o) for s, p, o in everything if p in props}
    assert {d.args for d in found if d.event == "ic"} == {(o, s) for s, p, o in everything
                                                          if p == str(RDF.type) and o in classes}
    assert len([d for d in found if d.event == "ic"]) == len({d.args for d in found if d.event == "ic"})


def test_a_property_whose_domain_and_range_are_one_class_makes_both_ends_instances() -> None:
    """ex:knows has the domain and the range ex:Agent (one derived fact,
    both ends): isa(G, X, ex:Agent) answers each node once, in order."""
    background = Graph()
    background.add((EX.knows, RDFS.domain, EX.Agent))
    background.add((EX.knows, RDFS.range, EX.Agent))
    background.add((EX.likes, RDFS.subPropertyOf, EX.knows))
    engine = Engine.from_string(PREFIXES + "agent(X) <- graph(G) where isa(G, X, ex:'Agent').\n"
                                "knows(S, O) <- graph(G) where triple(G, S, ex:knows, O).\n")
    engine.load_ontology(background)
    g = Graph(identifier=EX.g)
    for s, p, o in ((EX.c, EX.likes, EX.a), (EX.a, EX.knows, EX.b), (EX.b, EX.knows, EX.a)):
        g.add((s, p, o))
    assert [(d.event, d.args) for d in engine.emit_graph(g, at=1)] == [
        ("agent", ("http://ex.org/a",)), ("agent", ("http://ex.org/b",)), ("agent", ("http://ex.org/c",)),
        ("knows", ("http://ex.org/a", "http://ex.org/b")), ("knows", ("http://ex.org/b", "http://ex.org/a")),
        ("knows", ("http://ex.org/c", "http://ex.org/a"))]


def test_a_bad_graph_argument_is_a_warning_not_a_crash() -> None:
    engine = Engine.from_string("bad(X) <- a(X) where triple(X, _, _, _).")
    result = engine.feed_text("event(a(1), 1).\n")
    assert result.accepted == 1
    [warning] = result.warnings
    assert re.fullmatch(r"where condition triple\(1,_\d+,_\d+,_\d+\) of bad\(A\) \(<string>:1:1\) raised: "
                        r"Type error: `rdf_graph' expected, found `1' \(an integer\)", warning.reason)


def test_static_rules_cannot_redefine_the_graph_predicates() -> None:
    with pytest.raises(RuleError) as e:
        Engine.from_string("h <- a.\ntriple(_, a, b, c).\n")
    assert str(e.value).splitlines()[0] == (
        "<string>:2:1: error: triple/4 answers from graph events and cannot be redefined"
    )


def test_emit_graph_takes_the_graphs_own_time_triple() -> None:
    engine = Engine.from_string(PREFIXES + "g(N, S) <- graph(G) where (graph_name(G, N), triple(G, S, rdf:type, sosa:'Observation')).")
    g = Graph(identifier=EX.g)
    g.add((EX.g, URIRef("http://www.w3.org/ns/prov#generatedAtTime"),
           Literal("2004-08-08T06:05:00Z", datatype=XSD.dateTime)))
    g.add((EX.o, RDF.type, SOSA.Observation))
    assert engine.emit_graph(g) == [Detection("g", ("http://ex.org/g", "http://ex.org/o"), 1091945100.0, 1091945100.0)]
    with pytest.raises(EventError, match=r"graph event: graph <http://ex.org/h> has no prov:generatedAtTime triple: give at="):
        engine.emit_graph(Graph(identifier=EX.h))


# -- streams ------------------------------------------------------------------------------------


def run_stream(rules: str, path: Path) -> tuple[list[Detection], list[Rejection]]:
    engine = weather_engine(rules)
    found: list[Detection] = []
    rejected: list[Rejection] = []
    for batch in read_batches(path):
        result = engine.feed_text(batch.text, batch.first_line, batch.terms)
        found += parse_detections(result.detection_lines)
        rejected += batch.rejected + result.rejected
    return found, sorted(rejected, key=lambda r: r.line)


RULES = "obs(N, S, V) <- graph(G) where (graph_name(G, N), triple(G, S, sosa:hasSimpleResult, V)).\n"
T0 = 1091945100.0


def _q(s: str, p: str, o: str, g: str = "") -> str:
    return f"<http://ex.org/{s}> {p} {o} {'<http://ex.org/' + g + '>' if g else ''} .\n"


def _at(minutes: int) -> str:
    return f'"2004-08-08T06:{5 + minutes:02d}:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'


RESULT = "<http://www.w3.org/ns/sosa/hasSimpleResult>"


def test_nquads_graphs_are_events_and_bad_lines_drop_their_graph(tmp_path: Path) -> None:
    path = tmp_path / "s.nq"
    path.write_text(
        _q("g1", PROV_AT, _at(0))
        + _q("o1", RESULT, '"10"^^<http://www.w3.org/2001/XMLSchema#integer>', "g1")
        + "\n# a comment\n"
        + _q("o2", RESULT, '"12.5"^^<http://www.w3.org/2001/XMLSchema#double>', "g2")
        + _q("o2", "<http://ex.org/label>", '"a \\"b\\"\\u00e9"@en', "g2")
        + _q("g2", PROV_AT, _at(5))
        + _q("o3", RESULT, '"1"', "g3")
        + _q("o3", RESULT, "7", "g3")                       # line 9: no literal
        + _q("g3", PROV_AT, _at(6))
        + _q("o5", "<http://ex.org/note>", '"n"')           # default graph, not a time
        + _q("o4", RESULT, '"x"', "g4")                     # no time
        + _q("g6", PROV_AT, '"1091946000"^^<http://www.w3.org/2001/XMLSchema#integer>')
        + _q("o6", RESULT, "<http://ex.org/v>", "g6")
    )
    found, rejected = run_stream(RULES, path)
    assert found == [
        Detection("obs", ("http://ex.org/g1", "http://ex.org/o1", 10), T0, T0),
        Detection("obs", ("http://ex.org/g2", "http://ex.org/o2", 12.5), T0 + 300, T0 + 300),
        Detection("obs", ("http://ex.org/g6", "http://ex.org/o6", "http://ex.org/v"), T0 + 900, T0 + 900),
    ]
    assert [r.line for r in rejected] == [9, 11, 12]
    assert rejected[0].reason.endswith("(graph 'http://ex.org/g3' is dropped)")
    assert rejected[0].reason.startswith("not an N-Quads line: ")
    assert rejected[1].reason == (
        "a triple of the default graph must give a graph's time or stream: "
        "<graph> <http://www.w3.org/ns/prov#generatedAtTime> T . or <graph> <http://purl.org/dc/terms/isPartOf> <stream> ."
    )
    assert rejected[2].reason == (
        "graph 'http://ex.org/g4' has no time: give it a triple "
        "<graph> <http://www.w3.org/ns/prov#generatedAtTime> T in the default graph"
    )


def test_nquads_literals_read_as_the_background_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "s.nq"
    lex = ['"a\\tb \\"q\\" \\u00e9\\\\"', '"-3"^^<http://www.w3.org/2001/XMLSchema#integer>',
           '"1.5"^^<http://www.w3.org/2001/XMLSchema#decimal>', '"true"^^<http://www.w3.org/2001/XMLSchema#boolean>',
           '"2004-08-08T06:05:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>', '"x"^^<http://ex.org/dt>',
           '"chat"@fr']
    path.write_text(_q("g", PROV_AT, _at(0)) + "".join(_q("o", RESULT, v, "g") for v in lex)
                    + "_:b1 <http://www.w3.org/ns/sosa/hasSimpleResult> _:b2 <http://ex.org/g> .\n")
    found, rejected = run_stream("v(S, V) <- graph(G) where triple(G, S, sosa:hasSimpleResult, V).", path)
    assert rejected == []
    assert [d.args for d in found] == [  # in the standard order of terms, as triple/4 answers them
        ("_:b1", "_:b2"), ("http://ex.org/o", -3), ("http://ex.org/o", 1.5), ("http://ex.org/o", T0),
        ("http://ex.org/o", 'a\tb "q" é\\'), ("http://ex.org/o", "chat"), ("http://ex.org/o", "true"),
        ("http://ex.org/o", "literal(type('http://ex.org/dt',\"x\"))"),
    ]


def test_jsonld_lines_are_one_graph_each(tmp_path: Path) -> None:
    context = {"sosa": "http://www.w3.org/ns/sosa/", "prov": "http://www.w3.org/ns/prov#",
               "xsd": "http://www.w3.org/2001/XMLSchema#"}

    def doc(g: str, minutes: int, value: Any) -> dict[str, Any]:
        return {"@context": context, "@id": f"http://ex.org/{g}",
                "prov:generatedAtTime": {"@value": f"2004-08-08T06:{5 + minutes:02d}:00Z", "@type": "xsd:dateTime"},
                "@graph": [{"@id": f"http://ex.org/o{g}", "@type": "sosa:Observation", "sosa:hasSimpleResult": value}]}

    bad_context = dict(doc("g9", 9, 1), **{"@context": "http://example.org/context.jsonld"})
    no_time = doc("g8", 8, 1)
    del no_time["prov:generatedAtTime"]
    lines = [json.dumps(doc("g1", 0, 3)), "{not json", json.dumps(bad_context), json.dumps(no_time), "",
             json.dumps(doc("g2", 1, 4.5))]
    path = tmp_path / "s.jsonld"
    path.write_text("\n".join(lines) + "\n")
    found, rejected = run_stream(RULES, path)
    assert found == [
        Detection("obs", ("http://ex.org/g1", "http://ex.org/og1", 3), T0, T0),
        Detection("obs", ("http://ex.org/g2", "http://ex.org/og2", 4.5), T0 + 60, T0 + 60),
    ]
    assert [(r.line, r.reason) for r in rejected] == [
        (2, "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        (3, "a remote @context is not fetched: give the context inline"),
        (4, "graph <http://ex.org/g8> has no time: give it one triple <graph> prov:generatedAtTime T"),
    ]


def test_a_jsonld_line_of_no_or_two_named_graphs_or_an_earlier_time_is_rejected(tmp_path: Path) -> None:
    context = '"@context": {"sosa": "http://www.w3.org/ns/sosa/", "prov": "http://www.w3.org/ns/prov#"}'

    def graph(g: str, seconds: int, value: int) -> str:
        return (f'{{"@id": "http://ex.org/{g}", "prov:generatedAtTime": {seconds}, '
                f'"@graph": [{{"@id": "http://ex.org/o{g}", "sosa:hasSimpleResult": {value}}}]}}')

    lines = [
        f"{{{context}, " + graph("g1", 60, 1)[1:],
        f'{{{context}, "@id": "http://ex.org/o", "sosa:hasSimpleResult": 2}}',     # a default graph only
        f'{{{context}, "@graph": [{graph("g2", 61, 3)}, {graph("g3", 62, 4)}]}}',  # two named graphs
        f"{{{context}, " + graph("g4", 30, 5)[1:],                                  # earlier than g1
        f"{{{context}, " + graph("g5", 90, 6)[1:],
    ]
    path = tmp_path / "s.jsonld"
    path.write_text("\n".join(lines) + "\n")
    found, rejected = run_stream(RULES, path)
    assert found == [Detection("obs", ("http://ex.org/g1", "http://ex.org/og1", 1), 60, 60),
                     Detection("obs", ("http://ex.org/g5", "http://ex.org/og5", 6), 90, 90)]
    one = 'a line must hold one named graph, not {}: {{"@id": ..., "prov:generatedAtTime": ..., "@graph": [...]}}'
    assert [(r.line, r.reason) for r in rejected] == [
        (2, "a triple of the default graph must give a graph's time or stream (an IRI), not "
            "<http://ex.org/o> <http://www.w3.org/ns/sosa/hasSimpleResult> "
            '"2"^^<http://www.w3.org/2001/XMLSchema#integer>'),
        (3, one.format(2)),
        (4, "time 30 is earlier than the last accepted time 60 (events must arrive in time order)"),
    ]


def test_trig_graphs_are_events_in_time_order(tmp_path: Path) -> None:
    path = tmp_path / "s.trig"
    path.write_text(
        "@prefix ex: <http://ex.org/> .\n@prefix sosa: <http://www.w3.org/ns/sosa/> .\n"
        "@prefix prov: <http://www.w3.org/ns/prov#> .\n@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        'ex:g1 prov:generatedAtTime "2004-08-08T06:05:00Z"^^xsd:dateTime .\n'
        'ex:g2 prov:generatedAtTime "2004-08-08T06:06:00Z"^^xsd:dateTime .\n'
        "ex:g2 { ex:o2 sosa:hasSimpleResult 2 . }\n"
        "ex:g1 { ex:o1 sosa:hasSimpleResult 1 . }\n"
    )
    found, rejected = run_stream(RULES, path)
    assert rejected == []
    assert found == [
        Detection("obs", ("http://ex.org/g1", "http://ex.org/o1", 1), T0, T0),
        Detection("obs", ("http://ex.org/g2", "http://ex.org/o2", 2), T0 + 60, T0 + 60),
    ]


def test_etalis_run_reads_graph_streams_by_suffix(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text(PREFIXES + ":- ontology('" + str(WEATHER) + "').\n"
                     "wind(S) <- graph(G) where isa(G, S, wt:'WindObservation').\n")
    path = tmp_path / "s.nq"
    path.write_text(_q("g1", PROV_AT, _at(0))
                    + _q("o1", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{WT.Diablo}>", "g1")
                    + "<http://ex.org/o1> oops\n")
    run = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(path), "--trusted"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    assert run.stderr.splitlines()[0].startswith(f"{path}:3: rejected: not an N-Quads line")
    assert run.stderr.splitlines()[0].endswith("(graph 'http://ex.org/g1' is dropped)")


@pytest.mark.parametrize("graph_g2, error", [
    ("ex:g2 { ex:o2 ex:p . }", ":5: error: not TriG: objectList expected"),
    ("ex:g2 { ex:o2 ex:p 2 . }", ": error: graph <http://ex.org/g2> has no time: "
                                 "give it one triple <graph> prov:generatedAtTime T"),
    ("ex:g2 prov:generatedAtTime 61, 62 .\nex:g2 { ex:o2 ex:p 2 . }",
     ": error: graph <http://ex.org/g2> has two times: give it one triple <graph> prov:generatedAtTime T"),
    ("ex:g3 prov:generatedAtTime 62 .", ": error: a time or stream is given for <http://ex.org/g3>, "
                                        "which is no named graph here"),
])
def test_a_trig_file_that_is_no_graph_stream_stops_the_run_with_the_file_and_reason(
        tmp_path: Path, graph_g2: str, error: str) -> None:
    """A TriG file is read whole: a syntax error (with its line), a graph
    without one time, or a time for no graph is an error of the file, and
    nothing is fed."""
    rules = tmp_path / "r.etl"
    rules.write_text("v(N) <- graph(G) where graph_name(G, N).\n")
    path = tmp_path / "s.trig"
    path.write_text("@prefix ex: <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
                    "ex:g1 prov:generatedAtTime 60 .\nex:g1 { ex:o1 ex:p 1 . }\n" + graph_g2 + "\n")
    run = subprocess.run([sys.executable, "-m", "etalis_py.cli", "run", str(rules), "--events", str(path)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    assert (run.returncode, run.stdout, run.stderr) == (1, "", f"etalis: {path}{error}\n")


# -- the example on real data ------------------------------------------------------------------

EXAMPLE = ROOT / "examples" / "graph_weather"
SHARED = ROOT / "data" / "weather"
STATION = "http://example.org/etalis-py/lsd/station/"


def test_the_converter_writes_the_examples_graphs_and_stations_from_the_shared_data(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(EXAMPLE / "to_sosa.py"), str(SHARED),
                          "--stations", "3065,3114,3269,3435,3489", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "160 observation graphs, 5 stations\n"
    for name in ("observations.nq", "stations.ttl"):
        assert (tmp_path / name).read_text() == (EXAMPLE / name).read_text()


def test_the_spaseq_queries_detect_on_the_charley_graphs() -> None:
    engine = Engine.from_file(EXAMPLE / "graph_weather.etl")
    found: list[Detection] = []
    for batch in read_batches(EXAMPLE / "observations.nq"):
        result = engine.feed_text(batch.text, batch.first_line, batch.terms)
        assert batch.rejected == [] and result.rejected == [] and result.warnings == []
        found += parse_detections(result.detection_lines)
    assert len(found) == 186
    assert sum(d.event == "temperature" for d in found) == 160
    t = 1091923200.0  # 2004-08-08T00:00:00Z

    def hm(h: int, m: int) -> float:
        return t + 3600 * h + 60 * m

    assert [d for d in found if d.event != "temperature"] == [
        Detection("high_wind", ("C2087", 3323, 15), hm(9, 30), hm(9, 30)),
        Detection("high_wind", ("C2087", 3323, 17), hm(10, 0), hm(10, 0)),
        Detection("high_wind", ("C2087", 3323, 17), hm(12, 15), hm(12, 15)),
        Detection("warming", (STATION + "C1617", 55, 56, 60), hm(11, 50), hm(12, 15)),
        Detection("heating", (STATION + "C1617", [55, 56, 60]), hm(11, 50), hm(12, 15)),
        Detection("wind_dropped", (STATION + "C2087", 17, 0), hm(12, 15), hm(12, 30)),
        Detection("warming", (STATION + "C1617", 55, 56, 60), hm(11, 50), hm(12, 35)),
        Detection("warming", (STATION + "C1617", 56, 60, 62), hm(12, 0), hm(12, 45)),
        Detection("wind_dropped", (STATION + "C2087", 17, 0), hm(12, 15), hm(12, 45)),
        Detection("high_wind", ("C1617", 7434, 16), hm(13, 15), hm(13, 15)),
        Detection("high_wind", ("C1617", 7434, 18), hm(13, 35), hm(13, 35)),
        Detection("warming", (STATION + "C2236", 54, 55, 56), hm(13, 15), hm(13, 45)),
        Detection("heating", (STATION + "C2236", [54, 55, 56]), hm(13, 15), hm(13, 45)),
        Detection("high_wind", ("C1617", 7434, 18), hm(13, 45), hm(13, 45)),
        Detection("warming", (STATION + "C2236", 55, 56, 57), hm(13, 35), hm(14, 0)),
        Detection("heating", (STATION + "C2236", [55, 56, 57]), hm(13, 35), hm(14, 0)),
        Detection("high_wind", ("C1617", 7434, 19), hm(14, 5), hm(14, 5)),
        Detection("warming", (STATION + "C2236", 56, 57, 58), hm(13, 45), hm(14, 15)),
        Detection("heating", (STATION + "C2236", [56, 57, 58]), hm(13, 45), hm(14, 15)),
        Detection("high_wind", ("C1617", 7434, 18), hm(14, 20), hm(14, 20)),
        Detection("warming", (STATION + "C2236", 57, 58, 60), hm(14, 0), hm(14, 30)),
        Detection("heating", (STATION + "C2236", [57, 58, 60]), hm(14, 0), hm(14, 30)),
        Detection("high_wind", ("C1617", 7434, 18), hm(14, 35), hm(14, 35)),
        Detection("warming", (STATION + "C2236", 58, 60, 61), hm(14, 15), hm(14, 45)),
        Detection("heating", (STATION + "C2236", [58, 60, 61]), hm(14, 15), hm(14, 45)),
        Detection("high_wind", ("C1617", 7434, 20), hm(14, 50), hm(14, 50)),
    ]


def test_a_table_column_of_graphs_is_a_stream_of_graph_events(tmp_path: Path) -> None:
    import csv

    from etalis_py.inputs.mapping import Mapping

    cells = [
        ("2004-08-08T06:05:00Z", json.dumps({"@context": {"sosa": "http://www.w3.org/ns/sosa/"}, "@id": "http://ex.org/o1",
                                             "@type": "sosa:Observation", "sosa:hasSimpleResult": 17})),
        ("2004-08-08T06:10:00Z", f"<http://ex.org/o2> <{RDF.type}> <{WT.Diablo}> <http://ex.org/g2> .\n"
                                 f"<http://ex.org/o2> {RESULT} \"20\"^^<http://www.w3.org/2001/XMLSchema#integer> "
                                 "<http://ex.org/g2> ."),
        ("2004-08-08T06:15:00Z", "<http://ex.org/o3> oops ."),
        ("2004-08-08T06:20:00Z", "<http://ex.org/o4> <http://ex.org/p> <http://ex.org/x> <http://ex.org/a> .\n"
                                 "<http://ex.org/o4> <http://ex.org/p> <http://ex.org/y> <http://ex.org/b> ."),
        ("2004-08-08T06:25:00Z", ""),
    ]
    path = tmp_path / "graphs.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows([("time", "graph"), *cells])
    found, rejected = run_stream_with(RULES, path, Mapping.graph_rows("graph", "time"))
    blank = "_:g" + hashlib.sha1(f"t('http://ex.org/o1','{RDF.type}','{SOSA.Observation}')\n"
                                 f"t('http://ex.org/o1','{SOSA.hasSimpleResult}',17)".encode()).hexdigest()
    assert found == [
        Detection("obs", (blank, "http://ex.org/o1", 17), T0, T0),
        Detection("obs", ("http://ex.org/g2", "http://ex.org/o2", 20), T0 + 300, T0 + 300),
    ]
    assert [(r.line, r.reason) for r in rejected] == [
        (5, "line 1 of the graph: not an N-Quads line: Invalid line (Predicate must be uriref)"),  # lines of the file
        (6, "a cell must hold one graph, not 2 named graphs"),
        (8, "column 'graph' is empty"),
    ]
    table = tmp_path / "graphs.parquet"
    pq.write_table(pa.table({"time": [t for t, _ in cells], "graph": [g for _, g in cells]}), table)
    assert run_stream_with(RULES, table, Mapping.graph_rows("graph", "time")) == (found, [
        Rejection(3, "line 1 of the graph: not an N-Quads line: Invalid line (Predicate must be uriref)"),
        Rejection(4, "a cell must hold one graph, not 2 named graphs"),
        Rejection(5, "column 'graph' is empty"),
    ])
    with pytest.raises(ValueError, match=r"--graph-col makes each row the event graph\(G\) by itself"):
        Mapping(event="obs", args=("graph",), time="time", graph_col="graph").check()


def run_stream_with(rules: str, path: Path, mapping: Any) -> tuple[list[Detection], list[Rejection]]:
    engine = weather_engine(rules)
    found: list[Detection] = []
    rejected: list[Rejection] = []
    for batch in read_batches(path, mapping):
        result = engine.feed_text(batch.text, batch.first_line, batch.terms)
        found += parse_detections(result.detection_lines)
        rejected += batch.rejected + result.rejected
    return found, sorted(rejected, key=lambda r: r.line)


def test_a_live_nquads_stream_gives_whole_graphs_however_its_lines_arrive(tmp_path: Path) -> None:
    from etalis_py.inputs.streams import read_live

    lines = (EXAMPLE / "observations.nq").read_bytes().splitlines(keepends=True)
    lines.insert(100, b"not a quad\n")
    chunks = [b"".join(lines[i:i + 7]) for i in range(0, len(lines), 7)]  # graphs of 11 lines cut anywhere
    path = tmp_path / "s.nq"
    path.write_bytes(b"".join(lines))

    def detections(batches: Any) -> tuple[list[Detection], list[Rejection]]:
        engine = Engine.from_file(EXAMPLE / "graph_weather.etl")
        found: list[Detection] = []
        rejected: list[Rejection] = []
        for batch in batches:
            result = engine.feed_text(batch.text, batch.first_line, batch.terms)
            found += parse_detections(result.detection_lines)
            rejected += batch.rejected + result.rejected
        return found, rejected

    live = detections(read_live(chunks, "nquads"))
    assert live == detections(read_batches(path))
    assert len(live[0]) == 185  # the graph of the bad line is dropped: one temperature event fewer
    assert [r.line for r in live[1]] == [101]


def test_graph_events_combine_with_and_kleene_plus_fnot_and_a_policy() -> None:
    engine = weather_engine(
        "winds([], []).\n"
        "winds([G|Gs], [V|Vs]) :- isa(G, O, wt:'WindObservation'), triple(G, O, sosa:hasSimpleResult, V), winds(Gs, Vs).\n"
        "rising([_]).\n"
        "rising([A, B|T]) :- A < B, rising([B|T]).\n"
        "value(G, V) :- triple(G, _, sosa:hasSimpleResult, V).\n"
        "run(Vs) <- ((graph(G)+ seq graph(S)) within 10) "
        "where (isa(S, _, wt:'TemperatureObservation'), winds(G, Vs), rising(Vs)).\n"
        "pair(V1, V2) <- graph(G1) and graph(G2) where (value(G1, V1), value(G2, V2), V1 + 2 =:= V2).\n"
        "next(V1, V2) <- (graph(G1) seq graph(G2)) fnot graph(_) where (value(G1, V1), value(G2, V2)).\n"
        ":- policy(latest, recent).\n"
        "latest : last(V1, V2) <- graph(G1) seq graph(G2) "
        "where (isa(G2, _, wt:'TemperatureObservation'), value(G1, V1), value(G2, V2)).\n"
    )
    found: list[Detection] = []
    for t, v in [(1, 10), (2, 12), (3, 11), (4, 14)]:
        found += engine.emit_graph(observation(f"g{t}", f"o{t}", v), at=t)
    found += engine.emit_graph(observation("g5", "o5", 70, WT.TemperatureObservation), at=5)
    runs = sorted((d.start, d.args) for d in found if d.event == "run")
    assert runs == [(1, ([10],),), (1, ([10, 11],),), (1, ([10, 11, 14],),), (1, ([10, 12],),), (1, ([10, 12, 14],),),
                    (1, ([10, 14],),), (2, ([12],),), (2, ([12, 14],),), (3, ([11],),), (3, ([11, 14],),), (4, ([14],),)]
    assert all(d.end == 5 for d in found if d.event == "run")
    assert [d for d in found if d.event != "run"] == [
        Detection("pair", (10, 12), 1, 2),
        Detection("next", (10, 12), 1, 2),
        Detection("next", (12, 11), 2, 3),
        Detection("pair", (12, 14), 2, 4),
        Detection("next", (11, 14), 3, 4),
        Detection("next", (14, 70), 4, 5),
        Detection("last", (14, 70), 4, 5),
    ]


def test_the_converter_makes_its_output_folder_and_names_a_missing_data_file(tmp_path: Path) -> None:
    out = tmp_path / "new" / "folder"
    run = subprocess.run([sys.executable, str(EXAMPLE / "to_sosa.py"), str(SHARED), "--stations", "3065", "--out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout) == (0, "36 observation graphs, 1 stations\n")
    assert len((out / "observations.nq").read_text().splitlines()) == 36 * 11
    bad = subprocess.run([sys.executable, str(EXAMPLE / "to_sosa.py"), str(tmp_path / "none"), "--stations", "3065",
                          "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert (bad.returncode, bad.stderr) == (
        1, f"to_sosa.py: error: No such file or directory: {tmp_path / 'none' / 'lsd-charley-2004-08-08-obs.csv'}\n")


def test_an_atom_from_the_data_finds_a_string_literal_of_its_text_in_a_graph() -> None:
    engine = Engine.from_string(PREFIXES + "hit(O, C) <- (graph(G) seq code(C)) within 5 "
                                "where triple(G, O, ex:icao, C).\n")
    g = Graph(identifier=EX.g)
    g.add((EX.san, EX.icao, Literal("KSAN")))
    g.add((EX.nyc, EX.icao, EX.KJFK))               # an IRI: the atom of its text matches it as it is
    try:
        assert engine.emit_graph(g, at=1) == []
        result = engine.emit_many([("code", ["KSAN"], 2), ("code", ["http://ex.org/KJFK"], 3), ("code", ["KLAX"], 4)])
        assert result.detections == [Detection("hit", ("http://ex.org/san", "KSAN"), 1, 2),
                                     Detection("hit", ("http://ex.org/nyc", "http://ex.org/KJFK"), 1, 3)]
    finally:
        engine.close()
