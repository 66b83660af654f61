"""The fast RDFS closure is owlrl's: every rdf/3 and isa/2 answer is a triple of
owlrl's full closure of the same graph, every triple of it is an answer, and
each comes once."""

from __future__ import annotations

import random
from pathlib import Path

import owlrl
import pytest
from rdflib import BNode, Graph, Literal, Namespace, URIRef
from rdflib import namespace
from rdflib.namespace import RDF, RDFS
from rdflib.term import Node

from etalis_py import Engine
from etalis_py.bridge._prolog import bridge
from etalis_py.rdf.knowledge import close, node_text

ROOT = Path(__file__).parents[1]
EX = Namespace("http://example.org/closure#")
Triple = tuple[Node, Node, Node]

TRICKY = """
@prefix ex: <http://example.org/closure#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

ex:Diablo rdfs:subClassOf ex:Wind . ex:Wind rdfs:subClassOf ex:Weather .
ex:Weather rdfs:subClassOf ex:Observation . ex:Observation rdfs:subClassOf ex:Weather .
ex:gust rdfs:subPropertyOf ex:speed . ex:speed rdfs:subPropertyOf ex:value .
ex:speed rdfs:domain ex:Wind . ex:value rdfs:range ex:Quantity .
ex:kindOf rdfs:subPropertyOf rdf:type .
ex:madeBy rdfs:range rdfs:Class .
ex:Label a rdfs:Class . ex:p a rdf:Property . ex:Num a rdfs:Datatype .
ex:c1 a rdfs:ContainerMembershipProperty .
ex:o1 a ex:Diablo ; ex:gust 60 ; ex:value "60"^^xsd:int ; ex:note "x"@en , "x" ;
      ex:flag true ; ex:count 1 ; ex:ratio 1.0 ; ex:made ex:Label .
ex:o2 ex:kindOf ex:Wind ; ex:madeBy ex:Maker ; ex:c1 [ ex:value 2.5 ] .
ex:o3 ex:p ex:o1 ; rdfs:label "o3" ; ex:bad "abc"^^xsd:int .
"""

ODD_TYPING = """
@prefix ex: <http://example.org/closure#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
rdf:type rdfs:subPropertyOf ex:related .
ex:related rdfs:domain ex:Thing .
ex:a a ex:C ; ex:p ex:b .
"""


def owlrl_closure(triples: set[Triple]) -> Graph:
    g = Graph()
    for t in triples:
        g.add(t)
    owlrl.DeductiveClosure(owlrl.RDFS_Semantics).expand(g)
    return g


def random_graph(rnd: random.Random, size: int) -> set[Triple]:
    """A small graph over a vocabulary that exercises every RDFS rule."""
    classes: list[Node] = [EX[f"C{i}"] for i in range(5)]
    meta: list[Node] = [RDFS.Resource, RDFS.Class, RDF.Property, RDFS.Datatype,
                        RDFS.ContainerMembershipProperty, RDFS.Literal]
    props: list[Node] = [EX[f"p{i}"] for i in range(4)]
    builtin: list[Node] = [RDF.type, RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range,
                           RDFS.label, RDFS.member]
    things: list[Node] = [EX[f"i{i}"] for i in range(5)] + [BNode("b1")]
    literals: list[Node] = [Literal(1), Literal("1", datatype=namespace.XSD.int), Literal(1.0), Literal(True),
                            Literal("x"), Literal("x", lang="en"), Literal("x", datatype=namespace.XSD.string),
                            Literal("2", datatype=namespace.XSD.decimal)]
    g: set[Triple] = set()
    for _ in range(size):
        k = rnd.random()
        if k < 0.25:
            g.add((rnd.choice(classes), RDFS.subClassOf, rnd.choice(classes + meta)))
        elif k < 0.35:
            g.add((rnd.choice(props + [RDFS.label]), RDFS.subPropertyOf, rnd.choice(props + builtin)))
        elif k < 0.45:
            g.add((rnd.choice(props), rnd.choice([RDFS.domain, RDFS.range]), rnd.choice(classes + meta)))
        elif k < 0.65:
            g.add((rnd.choice(things + classes + props), RDF.type, rnd.choice(classes + meta)))
        else:
            g.add((rnd.choice(things + classes), rnd.choice(props + [RDFS.label]),
                   rnd.choice(things + literals + classes[:3])))
    return g


def expanded(triples: set[Triple]) -> set[Triple]:
    closure = close(triples, "rdfs")
    out = set(closure.triples)
    for node, classes in closure.types.items():
        out.update((node, RDF.type, c) for c in classes)
    return out


def answers(engine: Engine, goal: str, *terms: str) -> list[tuple[str, ...]]:
    """The solutions of ``goal`` in the engine's module: for each, the Prolog
    text (``~q``) of each of ``terms``."""
    formats = ", ".join(f'format(string(A{i}__), "~q", [{t}])' for i, t in enumerate(terms))
    header, _ = bridge().request(f"solve({engine._name})", f"{goal}, {formats}")
    return [tuple(s[f"A{i}__"] for i in range(len(terms))) for s in header["solutions"]]


def assert_engine_answers_owlrls_closure(triples: set[Triple]) -> None:
    full = owlrl_closure(triples)
    expected = {(node_text(s), node_text(p), node_text(o)) for s, p, o in full}
    graph = Graph()
    for t in triples:
        graph.add(t)
    with Engine.from_string("") as fast, Engine.from_string("") as reference:
        stats = fast.load_ontology(graph)  # rdfs: schema by owlrl, instances in one pass
        reference.load_ontology(full, entailment="none")
        rdf = answers(fast, "rdf(S, P, O)", "S", "P", "O")
        assert len(rdf) == len(set(rdf)) == stats.triples, "each triple once"
        assert set(rdf) == expected
        assert sorted(rdf) == sorted(answers(reference, "rdf(S, P, O)", "S", "P", "O"))
        isa = answers(fast, "isa(X, C)", "X", "C")
        assert len(isa) == len(set(isa))
        assert set(isa) == {(s, o) for s, p, o in expected if p == node_text(RDF.type)}
        # the modes that where conditions use: X known, C known, both known
        for x in {x for x, _ in isa}:
            assert sorted(answers(fast, f"isa({x}, C)", x, "C")) == sorted(a for a in isa if a[0] == x)
        for c in {c for _, c in isa}:
            assert sorted(answers(fast, f"isa(X, {c})", "X", c)) == sorted(a for a in isa if a[1] == c)
        for x, c in isa[:30]:
            assert answers(fast, f"isa({x}, {c})", "yes") == [("yes",)]


@pytest.mark.parametrize("seed", range(40))
def test_fast_rdfs_closure_equals_owlrls_on_random_graphs(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(5):
        g = random_graph(rnd, rnd.randrange(1, 40))
        assert expanded(g) == set(owlrl_closure(g))


def test_fast_rdfs_closure_equals_owlrls_on_the_weather_ontologies() -> None:
    g = Graph()
    for name in ("ontologies/weather.ttl", "ontologies/sosa.ttl", "ontologies/ssn.ttl",
                 "examples/enhanced_fire/observations.ttl"):
        g.parse(ROOT / name)
    assert expanded(set(g)) == set(owlrl_closure(set(g)))


@pytest.mark.parametrize("turtle", [TRICKY, ODD_TYPING], ids=["literals-and-meta-classes", "rdf-type-with-a-domain"])
def test_engine_answers_exactly_owlrls_closure_on_tricky_graphs(turtle: str) -> None:
    assert_engine_answers_owlrls_closure(set(Graph().parse(data=turtle, format="turtle")))


def test_engine_answers_exactly_owlrls_closure_on_the_weather_example() -> None:
    g = Graph().parse(ROOT / "ontologies/weather.ttl").parse(ROOT / "examples/enhanced_fire/observations.ttl")
    assert_engine_answers_owlrls_closure(set(g))


@pytest.mark.parametrize("seed", range(12))
def test_engine_answers_exactly_owlrls_closure_on_random_graphs(seed: int) -> None:
    rnd = random.Random(1000 + seed)
    assert_engine_answers_owlrls_closure(random_graph(rnd, rnd.randrange(5, 40)))


def test_same_value_literals_are_copied_as_owlrl_does() -> None:
    g: set[Triple] = {(EX.a, EX.p, Literal(1)), (EX.b, EX.q, Literal(1.0)), (EX.c, EX.r, Literal(True)),
         (EX.d, EX.s, Literal("x", lang="en")), (EX.e, EX.s, Literal("x"))}
    out = expanded(g)
    assert (EX.a, EX.p, Literal(1.0)) in out and (EX.b, EX.q, Literal(True)) in out
    assert (EX.d, EX.s, Literal("x")) in out and (EX.e, EX.s, Literal("x", lang="en")) in out
    assert out == set(owlrl_closure(g))


def test_schema_only_triples_keep_nothing_more() -> None:
    g: set[Triple] = {(URIRef("http://example.org/closure#A"), RDFS.subClassOf,
                       URIRef("http://example.org/closure#B"))}
    assert expanded(g) == set(owlrl_closure(g))
