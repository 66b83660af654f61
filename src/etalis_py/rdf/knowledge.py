"""Background knowledge: RDF graphs, closed once, as facts of an engine.

An engine's background knowledge is the union of the RDF graphs loaded into
it (Turtle, RDF/XML, N-Triples files or :class:`rdflib.Graph` values), closed
under an entailment regime and stored in the engine's Prolog module, where
``where`` conditions ask it through ``rdf(S, P, O)`` and ``isa(X, Class)``
(see ``prolog/etalis/rdf/knowledge.pl``).

What is entailed is what owlrl says: ``rdfs`` is
``owlrl.DeductiveClosure(owlrl.RDFS_Semantics).expand(graph)`` with owlrl's
defaults, ``owlrl`` the same with ``OWLRL_Semantics``, and ``none`` the
triples as given.  owlrl's forward chaining goes over the whole graph once per
derivation step, which is slow on large data, so for ``rdfs`` the work is
split:

1. owlrl closes the *schema*: the triples that RDFS reasoning joins on
   (``rdfs:subClassOf``, ``rdfs:subPropertyOf``, ``rdfs:domain``,
   ``rdfs:range`` and typings as ``rdfs:Class``, ``rdf:Property``,
   ``rdfs:Datatype`` or ``rdfs:ContainerMembershipProperty``), plus one
   sample triple of every other predicate, so that what owlrl derives about
   the predicates themselves (``p rdf:type rdf:Property``, ...) is there.
2. Every other triple ``s p o`` then gives, in a single pass, what RDFS rules
   rdfs2, 3, 4, 7 and 9 make of it with the closed schema: ``s q o`` for
   each super-property ``q`` of ``p``, and the types of ``s`` and ``o``
   (their domains' and ranges' super-classes, ``rdfs:Resource`` and, for
   ``rdf:type`` and its sub-properties, the super-classes of ``o``).
   A triple whose consequences would change the schema (e.g. typing
   something as ``rdfs:Class``) is moved to step 1 instead, until none is
   left.  (A schema that gives ``rdf:type`` itself a super-property, a
   domain or a range makes every typing a premise: then owlrl closes the
   whole graph.)

owlrl's one-time rule that copies triples between literals of equal value
(``"1"^^xsd:int`` and ``"1.0"^^xsd:decimal``) is applied to the whole graph
first.  The result is exactly owlrl's closure (tests hold it to that).

Terms become Prolog terms: IRIs atoms of the full IRI, blank nodes atoms
``'_:id'``, xsd integer types integers, ``xsd:decimal``, ``xsd:double`` and
``xsd:float`` floats, ``xsd:boolean`` the atoms ``true`` and ``false``,
``xsd:dateTime`` epoch seconds (a float, as event times are; a time without a
zone is UTC), plain, language-tagged and xsd string-typed literals strings
(the language tag is dropped), and any other literal (or one whose lexical
form is not valid for its type) ``literal(type(DatatypeIRI, "lexical"))``.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import pickle
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from itertools import chain
from pathlib import Path
from typing import Any, Optional, Union
from xml.sax import SAXParseException

import owlrl
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.exceptions import ParserError
from rdflib.namespace import RDF, RDFS, XSD
from rdflib.plugins.parsers.notation3 import BadSyntax
from rdflib.term import Node
from rdflib.util import guess_format

from ..bridge._prolog import PrologBridge
from ..bridge.prolog_text import prolog_string, quote_atom
from ..errors import EtalisError, unreadable
from ..errors import OntologyError as OntologyError, OntologyNotFound as OntologyNotFound
# the ontology errors and a load's statistics live where rdflib is not needed; they stay importable from here
from .stats import KnowledgeStats as KnowledgeStats
from ..events import to_time

ENTAILMENTS = ("rdfs", "owlrl", "none")

Source = Union[str, "os.PathLike[str]", Graph]
Triple = tuple[Node, Node, Node]
Classes = frozenset[Node]

#: Predicates whose triples RDFS reasoning joins others with.
SCHEMA_PREDICATES: frozenset[Node] = frozenset({RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range})
#: Classes whose instances RDFS reasoning treats specially (rdfs6, 8, 10, 12, 13).
META_CLASSES: frozenset[Node] = frozenset({RDFS.Class, RDF.Property, RDFS.ContainerMembershipProperty, RDFS.Datatype})

_INTEGERS = frozenset(
    XSD[name]
    for name in (
        "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
        "nonPositiveInteger", "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte",
    )
)
_REALS = frozenset({XSD.decimal, XSD.double, XSD.float})
_STRINGS = frozenset(
    {XSD.string, RDF.langString, XSD.normalizedString, XSD.token, XSD.language, XSD.Name, XSD.NCName, XSD.NMTOKEN}
)
_TIMES = frozenset({XSD.dateTime, XSD.dateTimeStamp})

_TYPE: Node = RDF.type  # rdflib's namespace attributes are looked up anew each time
_TYPES: frozenset[Node] = frozenset({RDF.type})
_RESOURCE: Node = RDFS.Resource
_BOOLEAN: Node = XSD.boolean

#: Fact lines sent to the engine per request.
BATCH_LINES = 20_000


@dataclass
class Closure:
    """A closed graph as the engine stores it: the triples whose predicate
    is not ``rdf:type``, and the classes of every typed node."""

    triples: set[Triple] = field(default_factory=set)
    types: dict[Node, Classes] = field(default_factory=dict)


# -- reading ------------------------------------------------------------------


def read_graph(source: Source) -> tuple[Graph, str]:
    """The graph of a file (its format told by its extension: ``.ttl``,
    ``.rdf``/``.owl``/``.xml``, ``.nt``, ...; Turtle if unknown) or an
    :class:`rdflib.Graph` as is, with a name for messages.

    Raises :class:`OntologyNotFound` or :class:`OntologyError` (with the
    line, where the parser gives one).
    """
    if isinstance(source, Graph):
        return source, f"<graph {source.identifier}>"
    path = Path(source)
    problem = unreadable("ontology file", path)
    if problem:
        raise OntologyNotFound(problem, file=str(path))
    fmt = guess_format(str(path)) or "turtle"
    graph = Graph()
    try:
        if fmt == "json-ld" and remote_context(json.loads(path.read_text(encoding="utf-8"))):
            raise OntologyError(REMOTE_CONTEXT, file=str(path))
        graph.parse(str(path), format=fmt)
    except BadSyntax as e:
        raise OntologyError(f"bad {fmt} syntax: {e._why}", file=str(path), line=e.lines + 1) from None
    except SAXParseException as e:
        raise OntologyError(f"bad RDF/XML: {e.getMessage()}", file=str(path), line=e.getLineNumber()) from None
    except ParserError as e:
        line = _bad_ntriples_line(path) if fmt in ("nt", "nt11", "ntriples") else None
        raise OntologyError(f"cannot parse {fmt}: {e}", file=str(path), line=line) from None
    except OntologyError:
        raise
    except Exception as e:  # the parsers raise many kinds (ValueError, KeyError, URLError, ...)
        raise OntologyError(f"cannot parse {fmt}: {e}", file=str(path)) from None
    return graph, str(path)


def mentioned_iris(sources: Iterable[Source]) -> frozenset[str]:
    """Every IRI that the graphs of ``sources`` (see :func:`read_graph`)
    mention, as subject, predicate or object."""
    found: set[str] = set()
    for source in sources:
        graph, _ = read_graph(source)
        for triple in graph:
            found.update(str(t) for t in triple if isinstance(t, URIRef))
    return frozenset(found)


REMOTE_CONTEXT = "a remote @context is not fetched: give the context inline"


def remote_context(item: Any) -> bool:
    """Whether the JSON-LD document ``item`` (parsed JSON) names a
    context by reference (``"@context": "http://..."``, or ``"@import"``
    in a context), which rdflib would fetch: the engine reads no URL."""
    if isinstance(item, dict):
        return any((k == "@context" and _names_context(v)) or (k == "@import" and isinstance(v, str))
                   or remote_context(v) for k, v in item.items())
    if isinstance(item, list):
        return any(remote_context(v) for v in item)
    return False


def _names_context(context: Any) -> bool:
    return isinstance(context, str) or (isinstance(context, list) and any(isinstance(c, str) for c in context))


def _bad_ntriples_line(path: Path) -> Optional[int]:
    """The first line of an N-Triples file that does not parse on its own."""
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, start=1):
            try:
                Graph().parse(data=line, format="nt")
            except Exception:
                return number
    return None


# -- closing --------------------------------------------------------------------


def close(triples: set[Triple], entailment: str = "rdfs") -> Closure:
    """The closure of ``triples`` under ``entailment`` (rdfs, owlrl or none)."""
    if entailment == "none":
        return _split(triples, Closure())
    if entailment == "owlrl":
        return _split(_owlrl(triples, owlrl.OWLRL_Semantics), Closure())
    if entailment == "rdfs":
        return _rdfs(triples)
    raise ValueError(f"unknown entailment {entailment!r}: use one of {', '.join(ENTAILMENTS)}")


def _owlrl(triples: Iterable[Triple], semantics: Any) -> set[Triple]:
    graph = Graph()
    for t in triples:
        graph.add(t)
    owlrl.DeductiveClosure(semantics).expand(graph)
    return set(graph)


def _split(triples: Iterable[Triple], closure: Closure) -> Closure:
    types = _TypeSets(closure.types)
    for s, p, o in triples:
        if p in _TYPES:
            types.add(s, types.of(o))
        else:
            closure.triples.add((s, p, o))
    return closure


def _rdfs(triples: set[Triple]) -> Closure:
    triples = same_value_copies(triples)
    schema = {t for t in triples if t[1] in SCHEMA_PREDICATES or (t[2] in META_CLASSES and t[1] in _TYPES)}
    rest = triples - schema if schema else set(triples)
    while True:
        samples = set(_one_per_predicate(rest))
        closed = _owlrl(schema | samples, owlrl.RDFS_Semantics)
        vocabulary = _Vocabulary(closed)
        if not vocabulary.plain_typing():
            return _split(_owlrl(triples, owlrl.RDFS_Semantics), Closure())
        unsafe = {t for t in rest if not vocabulary.instance_level(t)}
        if not unsafe:
            break
        schema |= unsafe
        rest -= unsafe
    closure = _split(closed, Closure())
    out = closure.triples
    types = _TypeSets(closure.types, vocabulary.interned)
    profile = vocabulary.profile
    for s, p, o in rest:
        prof = profile(p)
        for q in prof.properties:
            out.add((s, q, o))
        types.add(s, vocabulary.typed_subject(p, o) if prof.typing else prof.subject)
        types.add(o, prof.object)
    return closure


def same_value_copies(triples: set[Triple]) -> set[Triple]:
    """owlrl's one-time RDFS rule: a triple whose object is a literal is
    copied with every other literal object of the graph of equal value
    (``"1"^^xsd:integer`` and ``"1.0"^^xsd:double``)."""
    groups: dict[Any, set[Literal]] = {}
    for _, _, o in triples:
        if isinstance(o, Literal) and o.value is not None:
            try:
                groups.setdefault(o.value, set()).add(o)
            except TypeError:  # an unhashable value is only equal to itself
                pass
    same: dict[Literal, set[Literal]] = {lit: g for g in groups.values() if len(g) > 1 for lit in g}
    if not same:
        return triples
    copies = set(triples)
    for s, p, o in triples:
        if isinstance(o, Literal):
            for other in same.get(o, ()):
                copies.add((s, p, other))
    return copies


def _one_per_predicate(triples: Iterable[Triple]) -> Iterator[Triple]:
    seen: set[Node] = set()
    for t in triples:
        if t[1] not in seen:
            seen.add(t[1])
            yield t


@dataclass(frozen=True)
class _Profile:
    """What RDFS makes of any triple ``s p o`` with a given ``p``."""

    properties: tuple[Node, ...]  # p and its super-properties, but rdf:type
    subject: Classes  # classes of s
    object: Classes  # classes of o
    typing: bool  # p is rdf:type or one of its sub-properties: s also gets o's super-classes
    schema: bool  # the triple would change the schema


class _Vocabulary:
    """The closed schema: super-classes, super-properties, domains, ranges."""

    def __init__(self, closed: Iterable[Triple]) -> None:
        self._super: dict[Node, set[Node]] = {}
        self._superprop: dict[Node, set[Node]] = {}
        self._domain: dict[Node, set[Node]] = {}
        self._range: dict[Node, set[Node]] = {}
        tables: dict[Node, dict[Node, set[Node]]] = {
            RDFS.subClassOf: self._super,
            RDFS.subPropertyOf: self._superprop,
            RDFS.domain: self._domain,
            RDFS.range: self._range,
        }
        for s, p, o in closed:
            table = tables.get(p)
            if table is not None:
                table.setdefault(s, set()).add(o)
        self.interned: dict[Classes, Classes] = {}
        self._sup: dict[Node, Classes] = {}
        self._profiles: dict[Node, _Profile] = {}
        self._typed: dict[tuple[Node, Node], Classes] = {}
        self._resource = self.superclasses(_RESOURCE)

    def intern(self, classes: Iterable[Node]) -> Classes:
        fs = frozenset(classes)
        return self.interned.setdefault(fs, fs)

    def superclasses(self, c: Node) -> Classes:
        """c and its super-classes."""
        found = self._sup.get(c)
        if found is None:
            found = self._sup[c] = self.intern({c} | self._super.get(c, set()))
        return found

    def profile(self, p: Node) -> _Profile:
        found = self._profiles.get(p)
        if found is not None:
            return found
        props = {p} | self._superprop.get(p, set())
        subject = set(self._resource)  # rdfs4a: every triple of the input
        obj = set(self._resource)  # rdfs4b
        for q in props:
            for d in self._domain.get(q, ()):
                subject |= self.superclasses(d)
            for r in self._range.get(q, ()):
                obj |= self.superclasses(r)
        found = self._profiles[p] = _Profile(
            properties=tuple(q for q in props if q not in _TYPES),
            subject=self.intern(subject),
            object=self.intern(obj),
            typing=_TYPE in props,
            schema=bool(props & SCHEMA_PREDICATES) or bool((subject | obj) & META_CLASSES),
        )
        return found

    def typed_subject(self, p: Node, o: Node) -> Classes:
        """The classes of s in ``s p o`` when p is (under) rdf:type."""
        key = (p, o)
        found = self._typed.get(key)
        if found is None:
            found = self._typed[key] = self.intern(self.profile(p).subject | self.superclasses(o))
        return found

    def plain_typing(self) -> bool:
        """Whether rdf:type has no super-property, domain or range: else every
        derived typing has consequences of its own, and only owlrl's own
        chaining gives them all."""
        props = {RDF.type} | self._superprop.get(RDF.type, set())
        return props == {RDF.type} and not any(q in self._domain or q in self._range for q in props)

    def instance_level(self, t: Triple) -> bool:
        """Whether what RDFS makes of ``t`` leaves the schema as it is."""
        prof = self.profile(t[1])
        if prof.schema:
            return False
        return not (prof.typing and self.superclasses(t[2]) & META_CLASSES)


class _TypeSets:
    """The classes of each node, as shared (interned) frozensets."""

    def __init__(self, types: dict[Node, Classes], interned: Optional[dict[Classes, Classes]] = None) -> None:
        self.types = types
        self._interned: dict[Classes, Classes] = {} if interned is None else interned
        self._unions: dict[tuple[Classes, Classes], Classes] = {}
        self._single: dict[Node, Classes] = {}

    def of(self, c: Node) -> Classes:
        found = self._single.get(c)
        if found is None:
            fs = frozenset((c,))
            found = self._single[c] = self._interned.setdefault(fs, fs)
        return found

    def add(self, node: Node, classes: Classes) -> None:
        current = self.types.get(node)
        if current is None:
            self.types[node] = classes
        elif current is not classes:
            key = (current, classes)
            union = self._unions.get(key)
            if union is None:
                fs = current | classes
                union = self._unions[key] = self._interned.setdefault(fs, fs)
            self.types[node] = union


# -- Prolog terms ---------------------------------------------------------------


def node_text(term: Node) -> str:
    """An RDF term as Prolog text (see the module's documentation)."""
    if isinstance(term, URIRef):
        return quote_atom(str(term))
    if isinstance(term, Literal):
        return literal_text(term)
    if isinstance(term, BNode):
        return quote_atom(f"_:{term}")
    raise TypeError(f"not an RDF term: {term!r}")


def literal_text(lit: Literal) -> str:
    """A literal as Prolog text: a number, a string, ``true``/``false`` or
    ``literal(type(Datatype, "lexical"))``."""
    dt = lit.datatype
    value = lit.value
    if dt is None or dt in _STRINGS:
        return prolog_string(str(lit))
    if dt in _INTEGERS and type(value) is int:
        return str(value)
    if dt in _REALS and isinstance(value, (float, Decimal)):
        f = float(value)
        if math.isfinite(f):
            return repr(f)
    elif dt == _BOOLEAN and isinstance(value, bool):
        return "true" if value else "false"
    elif dt in _TIMES and isinstance(value, datetime):
        return repr(float(to_time(value)))
    return f"literal(type({quote_atom(str(dt))},{prolog_string(str(lit))}))"


class FactWriter:
    """Writes a closure as the fact lines of knowledge_update/4: ``t(S,P,O).``
    for each triple, ``c(K,C).`` for each class of each type signature and
    ``n(X,K).`` for each typed node.  RDF terms that are the same Prolog term
    (``"1"^^xsd:int`` and ``"1"^^xsd:integer``) are merged.  After
    :meth:`lines` is consumed, ``triples`` is the size of the closure (what
    ``rdf(S, P, O)`` answers) and ``facts`` the number of lines."""

    def __init__(self, closure: Closure) -> None:
        self.closure = closure
        self.triples = 0
        self.facts = 0
        self._texts: dict[Node, str] = {}

    def _text(self, term: Node) -> str:
        found = self._texts.get(term)
        if found is None:
            found = self._texts[term] = node_text(term)
        return found

    def lines(self) -> Iterator[str]:
        text = self._text
        literal_of: dict[str, Node] = {}
        merged: set[str] = set()
        for term in chain(self.closure.types, (t for s, _, o in self.closure.triples for t in (s, o))):
            if isinstance(term, Literal) and term not in self._texts:
                t = text(term)
                if literal_of.setdefault(t, term) != term:
                    merged.add(t)
        seen: set[tuple[str, str, str]] = set()
        for s, p, o in self.closure.triples:
            fact = (text(s), text(p), text(o))
            if fact[2] in merged or fact[0] in merged:
                if fact in seen:
                    continue
                seen.add(fact)
            self.triples += 1
            self.facts += 1
            yield f"t({fact[0]},{fact[1]},{fact[2]}).\n"
        class_texts: dict[Classes, frozenset[str]] = {}  # per (shared) class set
        by_text: dict[str, frozenset[str]] = {}
        for node, classes in self.closure.types.items():
            texts = class_texts.get(classes)
            if texts is None:
                texts = class_texts[classes] = frozenset(text(c) for c in classes)
            t = text(node)
            previous = by_text.get(t)
            by_text[t] = texts if previous is None else previous | texts
        signatures: dict[frozenset[str], int] = {}
        for t, texts in by_text.items():
            k = signatures.get(texts)
            if k is None:
                k = signatures[texts] = len(signatures) + 1
                for c in texts:
                    self.facts += 1
                    yield f"c({k},{c}).\n"
            self.triples += len(texts)
            self.facts += 1
            yield f"n({t},{k}).\n"


# -- the knowledge of an engine ---------------------------------------------------


class KnowledgeBase:
    """The background knowledge of one engine.

    Each load adds graphs to what the engine was given before and replaces
    the engine's facts by the closure of the union, so that instance data
    loaded after its schema (or before it) is reasoned about with it.

    Between loads the triples are kept pickled, as one object: millions of
    live rdflib terms would make each of Python's full garbage collections
    (which the event stream triggers) walk them all.
    """

    def __init__(self, engine: str, prolog: PrologBridge) -> None:
        self._engine = engine
        self._prolog = prolog
        self._snapshot = b""
        self._sources: list[str] = []
        self._entailment: Optional[str] = None

    @property
    def entailment(self) -> Optional[str]:
        """The entailment the knowledge is closed under (None before a load)."""
        return self._entailment

    def load(self, sources: Sequence[Source], entailment: str = "rdfs") -> KnowledgeStats:
        """Add the graphs of ``sources`` and close everything under
        ``entailment``; see :meth:`Engine.load_ontology`."""
        if entailment not in ENTAILMENTS:
            raise ValueError(f"unknown entailment {entailment!r}: use one of {', '.join(ENTAILMENTS)}")
        if self._entailment is not None and entailment != self._entailment:
            raise ValueError(
                f"this engine's knowledge is closed under {self._entailment}; "
                f"load every ontology of an engine with the same entailment (not {entailment})"
            )
        started = time.perf_counter()
        triples: set[Triple] = set(pickle.loads(self._snapshot)) if self._snapshot else set()
        names = []
        for source in sources:
            graph, name = read_graph(source)
            triples.update(graph)
            names.append(name)
            del graph
        facts = FactWriter(close(triples, entailment))
        self._replace(facts.lines())
        self._snapshot = pickle.dumps(list(triples), protocol=pickle.HIGHEST_PROTOCOL)
        self._sources.extend(names)
        self._entailment = entailment
        stats = KnowledgeStats(
            entailment=entailment,
            sources=tuple(self._sources),
            input_triples=len(triples),
            triples=facts.triples,
            facts=facts.facts,
            seconds=0.0,
        )
        del triples, facts
        gc.collect()  # the parsed graphs hold reference cycles: free them now, not at some later event
        return dataclasses.replace(stats, seconds=time.perf_counter() - started)

    def _replace(self, lines: Iterable[str]) -> None:
        request = self._prolog.request
        request(f"knowledge({self._engine}, reset)")
        batch: list[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) >= BATCH_LINES:
                request(f"knowledge({self._engine}, add)", "".join(batch))
                batch = []
        if batch:
            request(f"knowledge({self._engine}, add)", "".join(batch))
