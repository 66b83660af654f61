"""Graph events: streams whose events are RDF graphs.

Each named graph of a stream is one event ``graph(G)`` at the graph's time,
with ``G`` the Prolog term ``rdf_graph(Name, [t(S, P, O), ...])`` in the
terms of the background knowledge (see :mod:`etalis_py.knowledge`), or
``rdf_graph(Name, [...], Stream)`` for a graph of a named stream; rules
ask it with ``triple(G, S, P, O)``, ``isa(G, X, Class)``,
``graph_name(G, Name)`` and ``graph_stream(G, Stream)``
(``prolog/etalis/graph_events.pl``).

The time of a graph ``g`` is the object of the triple
``g prov:generatedAtTime T`` in the default graph: an ``xsd:dateTime``
(epoch seconds, as event times are) or a number (seconds).  That triple is
not part of the event, nor is ``g dcterms:isPartOf S`` in the default
graph, which puts ``g`` on the stream ``S`` (an IRI; else on the stream
the reader is given, if any).  Streams are

- N-Quads (``.nq``), read line by line: a graph's quads are consecutive
  lines, with its time triple among, before or after them; a graph named
  again later is another event.  Its batches are batch lists that write
  each IRI once a batch (see :class:`_Interned`);
- TriG (``.trig``), read whole with rdflib: its graphs in time order (then
  by name);
- JSON-LD lines (``.jsonld``): one JSON-LD document a line, one named graph
  (``{"@id": ..., "prov:generatedAtTime": ..., "@graph": [...]}``) with an
  inline ``@context`` (remote contexts are never fetched).

A malformed line drops the graph it is in, and a graph without a time, or
with two (or with two streams), or a default-graph triple that is not a
time or stream is rejected: each with its line and reason, counted like
any rejected row.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Optional

from rdflib import Dataset, Graph, Literal, URIRef
from rdflib.namespace import XSD
from rdflib.term import Node

from .prolog_text import compound_text, input_line, input_term, prolog_string, quote_atom
from .errors import EtalisError
from .events import NOTHING, InvalidEvent, Rejection, Time, batch_list, read_number, to_time
from .knowledge import literal_text, node_text
from .streams import GRAPH_KINDS, Batch, Item, Lines, _batched

GENERATED_AT = URIRef("http://www.w3.org/ns/prov#generatedAtTime")
_GENERATED_AT = str(GENERATED_AT)
IS_PART_OF = URIRef("http://purl.org/dc/terms/isPartOf")
_IS_PART_OF = str(IS_PART_OF)


class GraphStreamError(EtalisError):
    """A graph stream that cannot be read at all (a TriG file with a syntax
    error): the file and, where the parser gives one, the line."""


# -- Prolog text --------------------------------------------------------------------


def graph_term(name: str, triples: Iterable[str], stream: Optional[str] = None) -> str:
    """The term ``rdf_graph(Name, [t(S,P,O), ...])`` of a graph, or
    ``rdf_graph(Name, [...], Stream)`` of a graph on a stream: ``name``,
    each triple (``t(S,P,O)``) and ``stream`` already Prolog text."""
    return compound_text("rdf_graph", (name, f"[{','.join(triples)}]") + (() if stream is None else (stream,)))


def graph_line(name: str, triples: Iterable[str], time: Time, stream: Optional[str] = None) -> str:
    """The engine's input line for a graph event at ``time`` (on ``stream``,
    Prolog text, if given)."""
    return input_line(compound_text("graph", (graph_term(name, triples, stream),)), repr(time))


def rdf_triple_text(s: Node, p: Node, o: Node) -> str:
    return f"t({node_text(s)},{node_text(p)},{node_text(o)})"


def graph_time(value: Node) -> Time:
    """The time a ``prov:generatedAtTime`` object gives: an xsd:dateTime or
    a number.  Raises :class:`InvalidEvent` otherwise."""
    if isinstance(value, Literal):
        v = value.value
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return to_time(v)
        if value.datatype in (XSD.dateTime, XSD.dateTimeStamp) and v is not None:
            return to_time(v)
        if value.datatype in (XSD.decimal,) and v is not None:
            return to_time(float(v))
    raise InvalidEvent(f"the time {value.n3()} is not an xsd:dateTime or a number")


def rdflib_graph_line(graph: Graph, at: Any = None, stream: Any = None) -> str:
    """The input line of ``graph`` as one graph event, at ``at`` or, if not
    given, at the time of its ``prov:generatedAtTime`` triple about its
    name (which is then not part of the event); on ``stream`` (an IRI) if
    given."""
    name = graph.identifier
    triples = list(graph)
    if at is None:
        times = [o for s, p, o in triples if s == name and p == GENERATED_AT]
        if len(times) != 1:
            why = "has no" if not times else f"has {len(times)}"
            raise InvalidEvent(f"graph {name.n3()} {why} prov:generatedAtTime triple: give at=")
        time = graph_time(times[0])
        triples = [t for t in triples if not (t[0] == name and t[1] == GENERATED_AT)]
    else:
        time = to_time(at)
    stream_text = None if stream is None else node_text(_stream_iri(stream))
    return graph_line(node_text(name), (rdf_triple_text(*t) for t in triples), time, stream_text)


def _stream_iri(stream: Any) -> URIRef:
    """The IRI of a stream given as a str or a URIRef."""
    if isinstance(stream, URIRef):
        return stream
    if isinstance(stream, str) and stream:
        return URIRef(stream)
    raise InvalidEvent(f"the stream of a graph must be an IRI, not {stream!r}")


# -- N-Quads ----------------------------------------------------------------------

_IRI = r"<([^<>\"{}|^`\\\x00-\x20]*)>"
_BNODE = r"_:([A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?)"
_LITERAL = r"\"((?:[^\"\\\n\r]|\\.)*)\"(?:\^\^" + _IRI + r"|@([A-Za-z]+(?:-[A-Za-z0-9]+)*))?"
_QUAD = re.compile(
    rf"\s*(?:{_IRI}|{_BNODE})\s*{_IRI}\s*(?:{_IRI}|{_BNODE}|{_LITERAL})\s*(?:(?:{_IRI}|{_BNODE})\s*)?\.\s*(?:#.*)?$"
)
_ESCAPES = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_XSD = "http://www.w3.org/2001/XMLSchema#"
_INTEGER = re.compile(r"[+-]?[0-9]+$")
_IRI_CACHE = 100_000  # IRIs whose text an N-Quads reader keeps
_FAST_TYPES = {_XSD + "integer": "integer", _XSD + "string": "string", _XSD + "double": "real",
               _XSD + "decimal": "real", _XSD + "float": "real", _XSD + "dateTime": "time"}
_DATETIME = re.compile(r"-?[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})?$")


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1) or m.group(2)
        if code:
            return chr(int(code, 16))
        c = m.group(3)
        if c not in _SIMPLE_ESCAPES:
            raise ValueError(f"bad escape \\{c}")
        return _SIMPLE_ESCAPES[c]
    return _ESCAPES.sub(one, text)


def _iri_text(iri: str) -> str:
    if "\\" in iri:
        iri = _unescape(iri)
    return quote_atom(iri)


def _literal_text(lexical: str, datatype: Optional[str], lang: Optional[str]) -> str:
    if "\\" in lexical:
        lexical = _unescape(lexical)
    if datatype is None:
        return prolog_string(lexical)
    kind = _FAST_TYPES.get(datatype)
    if kind == "integer" and _INTEGER.match(lexical) and len(lexical) < 20:
        return str(int(lexical))
    if kind == "string":
        return prolog_string(lexical)
    if kind == "time" and _DATETIME.match(lexical):
        try:
            return repr(float(_iso_time(lexical)))
        except ValueError:  # e.g. hour 24, or a year before 1: rdflib's reading below
            pass
    if kind == "real":
        number = read_number(lexical.strip())
        if number is not None and lexical.strip().lower() not in ("inf", "-inf", "+inf", "nan"):
            return repr(float(number))
    return literal_text(Literal(lexical, datatype=URIRef(datatype)))


@dataclass
class _Block:
    """The consecutive lines of one graph of an N-Quads stream: its name and
    triples as tokens (see :func:`_quad`)."""

    name: str
    first: int
    last: int
    triples: list[tuple[str, str, str]] = field(default_factory=list)
    times: list[tuple[int, Time]] = field(default_factory=list)
    streams: list[tuple[int, str]] = field(default_factory=list)
    bad: list[Rejection] = field(default_factory=list)


class _Interned:
    """The IRIs of a batch list of graph events, each written once: in the
    batch's elements an IRI is a variable, and the batch's head binds the
    variables to their atoms (see ``engine_feed_list/6``), so that Prolog
    reads a full IRI once a batch, not once a triple."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}  # IRI token -> its variable in this batch
        self._atoms: list[str] = []  # the atoms' texts, in the order of the variables
        self._texts: dict[str, str] = {}  # IRI token -> its atom's text, across batches

    def term(self, token: str) -> str:
        """The text of a term token (see :func:`_quad`) in this batch: an
        IRI's variable, or the token itself (its Prolog text)."""
        name = self._names.get(token)
        if name is not None:
            return name
        if token[0] != "<":
            return token
        name = self._names[token] = f"_{len(self._names)}"
        text = self._texts.get(token)
        if text is None:
            if len(self._texts) >= _IRI_CACHE:
                self._texts.clear()
            text = self._texts[token] = _iri_text(token[1:])
        self._atoms.append(text)
        return name

    def element(self, block: _Block, time: Time, stream: Optional[str]) -> str:
        """The batch element of the graph event of ``block`` at ``time``."""
        get, term = self._names.get, self.term
        triples = [f"t({get(s) or term(s)},{get(p) or term(p)},{get(o) or term(o)})" for s, p, o in block.triples]
        graph = graph_term(term(block.name), triples, None if stream is None else term(stream))
        return input_term(compound_text("graph", (graph,)), repr(time))

    def batch(self, elements: list[str]) -> str:
        """The text of a batch list of ``elements``, headed by the bindings
        of the IRIs they name; the next batch starts afresh."""
        if not self._names:
            return batch_list(elements)
        head = f"[{','.join(self._names.values())}]=[{','.join(self._atoms)}],\n"
        self._names, self._atoms = {}, []
        return head + batch_list(elements)


def _nquads_items(source: Lines, names: _Interned, stream: Optional[str] = None) -> Iterator[Item]:
    """One item per line, an element of a batch list whose IRIs ``names``
    interns: the graph event on the last line of its graph, NOTHING
    elsewhere.  A graph is on ``stream`` (an IRI) unless a
    ``dcterms:isPartOf`` triple of the default graph names its own."""
    block: Optional[_Block] = None
    waiting: list[int] = []  # lines read since the last event was given out
    default_stream = None if stream is None else "<" + stream
    literals: dict[tuple[str, Optional[str]], str] = {}  # literal -> its Prolog text: results repeat

    def finish() -> Iterator[Item]:
        assert block is not None
        rejection = _block_rejection(block)
        for number in waiting:
            if number != block.last:
                yield number + 1, NOTHING, None
            elif rejection is not None:
                yield number + 1, NOTHING, rejection
                for bad in block.bad[1:]:
                    yield number + 1, "", bad
            else:
                graph_stream = block.streams[0][1] if block.streams else default_stream
                yield number + 1, names.element(block, block.times[0][1], graph_stream), None
        waiting.clear()

    bad_lines = source.bad
    match = _QUAD.match
    for number, line in enumerate(source, start=1):
        m = None if bad_lines and number in bad_lines else match(line)
        if m is None:
            text = line.strip()
            if not text or text.startswith("#"):
                if block is None:
                    yield number + 1, NOTHING, None
                else:
                    waiting.append(number)
                continue
            rejection: Optional[Rejection] = Rejection(
                number, (bad_lines.get(number) if bad_lines else None) or _quad_reason(text))
        else:
            rejection = None
            try:
                subject, predicate, obj, graph = _quad(m, literals)
                time: Optional[Time] = None
                part: Optional[str] = None
                if graph is None:  # the default graph: the time or stream of the graph named by the subject
                    if m.group(1) is None or m.group(3) not in (_GENERATED_AT, _IS_PART_OF):
                        raise ValueError("a triple of the default graph must give a graph's time or stream: "
                                         "<graph> <http://www.w3.org/ns/prov#generatedAtTime> T . or "
                                         "<graph> <http://purl.org/dc/terms/isPartOf> <stream> .")
                    if m.group(3) == _GENERATED_AT:
                        time = _nquads_time(m.group(6), m.group(7))
                    elif m.group(4) is None:
                        raise ValueError("the stream of a graph must be an IRI")
                    else:
                        part = obj
                name = subject if graph is None else graph
            except (ValueError, InvalidEvent) as e:
                rejection = Rejection(number, str(e))
        if rejection is not None:
            if block is None:
                yield number + 1, NOTHING, rejection
            else:
                waiting.append(number)
                block.bad.append(rejection)
                block.last = number
            continue
        if block is not None and name != block.name:
            yield from finish()
            block = None
        if block is None:
            block = _Block(name, number, number)
        waiting.append(number)
        block.last = number
        if time is not None:
            block.times.append((number, time))
        elif part is not None:
            block.streams.append((number, part))
        else:
            block.triples.append((subject, predicate, obj))
    if block is not None:
        yield from finish()


def _iso_time(lexical: str) -> Time:
    """The time of a valid xsd:dateTime lexical form (UTC if it has no zone)."""
    return to_time(datetime.fromisoformat(lexical.replace("Z", "+00:00")))


def whole_graphs(chunks: Iterable[bytes | str]) -> Iterator[bytes]:
    """The N-Quads of ``chunks`` (of whole lines) again, each chunk ending
    where a graph's run of lines ends: the lines of the last graph of a
    chunk wait for the next one (or the end), so that a graph read from a
    live source is one event however its lines arrive."""
    held = b""
    for chunk in chunks:
        data = held + (chunk.encode("utf-8", "surrogateescape") if isinstance(chunk, str) else chunk)
        if not data.endswith(b"\n"):
            held = data  # the last line may not be whole yet
            continue
        lines = data.splitlines(keepends=True)
        key = None
        cut = len(lines)
        while cut > 0:
            line_key = _graph_key(lines[cut - 1])
            if line_key is not None:
                if key is not None and line_key != key:
                    break
                key = line_key
            cut -= 1
        if cut == 0:
            held = data
            continue
        ready = b"".join(lines[:cut])
        held = b"".join(lines[cut:])
        yield ready
    if held:
        yield held


def _graph_key(line: bytes) -> Optional[str]:
    """The graph an N-Quads line belongs to (its label, or the subject of a
    default-graph time triple), or None for a blank, comment or bad line."""
    m = _QUAD.match(line.decode("utf-8", "replace").strip())
    if m is None:
        return None
    graph = m.group(9) or m.group(10)
    return graph if graph is not None else m.group(1)


def _quad(m: re.Match[str], literals: dict[tuple[str, Optional[str]], str]) -> tuple[str, str, str, Optional[str]]:
    """The tokens of the subject, predicate, object and graph name (None:
    the default graph) of a quad that ``_QUAD`` matched: an IRI as ``<``
    and the IRI as N-Quads writes it (no Prolog text starts with ``<``),
    anything else as its Prolog text.  ``literals`` keeps the texts of
    literals read (by lexical form and datatype)."""
    si, sb, p, oi, ob, lexical, datatype, lang, gi, gb = m.groups()
    s = "<" + si if si is not None else quote_atom("_:" + sb)
    if oi is not None:
        o = "<" + oi
    elif ob is not None:
        o = quote_atom("_:" + ob)
    else:
        key = (lexical, datatype)
        found = literals.get(key)
        if found is None:
            if len(literals) >= _IRI_CACHE:
                literals.clear()
            found = literals[key] = _literal_text(lexical, datatype, lang)
        o = found
    if gi is not None:
        g: Optional[str] = "<" + gi
    else:
        g = quote_atom("_:" + gb) if gb is not None else None
    return s, "<" + p, o, g


def _nquads_time(lexical: Optional[str], datatype: Optional[str]) -> Time:
    if lexical is None:
        raise InvalidEvent("the time of a graph must be a literal: an xsd:dateTime or a number")
    if datatype == _XSD + "dateTime" and _DATETIME.match(lexical):
        try:
            return _iso_time(lexical)
        except ValueError:
            pass
    if datatype == _XSD + "integer" and _INTEGER.match(lexical) and len(lexical) < 20:
        return to_time(int(lexical))
    return graph_time(Literal(_unescape(lexical), datatype=URIRef(datatype) if datatype else None))


def _block_rejection(block: _Block) -> Optional[Rejection]:
    """Why a graph is not an event (its first bad line), or None."""
    name = _shown(block.name)
    if block.bad:
        first = block.bad[0]
        return Rejection(first.line, f"{first.reason} (graph {name} is dropped)")
    if not block.times:
        return Rejection(block.first, f"graph {name} has no time: give it a triple "
                                      "<graph> <http://www.w3.org/ns/prov#generatedAtTime> T in the default graph")
    if len(block.times) > 1:
        return Rejection(block.times[1][0], f"graph {name} has two times")
    if len(block.streams) > 1:
        return Rejection(block.streams[1][0], f"graph {name} has two streams")
    return None


def _shown(token: str) -> str:
    """A term token (see :func:`_quad`) as its Prolog text."""
    return _iri_text(token[1:]) if token[0] == "<" else token


def _quad_reason(text: str) -> str:
    """Why an N-Quads line does not parse, as rdflib says it."""
    try:
        Dataset().parse(data=text, format="nquads")
    except Exception as e:  # rdflib raises several kinds
        return f"not an N-Quads line: {str(e).splitlines()[0].rstrip(': ')}"
    return "not an N-Quads line"


# -- JSON-LD lines ----------------------------------------------------------------------


def _jsonld_items(source: Lines, stream: Optional[str] = None) -> Iterator[Item]:
    bad = source.bad
    for number, line in enumerate(source, start=1):
        if bad and number in bad:
            yield number + 1, "\n", Rejection(number, bad[number])
        elif line.strip():
            try:
                yield number + 1, jsonld_line(line, stream), None
            except (ValueError, InvalidEvent, RecursionError) as e:
                yield number + 1, "\n", Rejection(number, str(e).splitlines()[0])
        else:
            yield number + 1, "\n", None


def jsonld_line(text: str, stream: Optional[str] = None) -> str:
    """The engine's input line of a JSON-LD document holding one named
    graph (on ``stream`` unless the document gives its own)."""
    return _dataset_lines(_jsonld_dataset(text), one=True, stream=stream)[0]


def _jsonld_dataset(text: str) -> Dataset:
    """The dataset of a JSON-LD document with inline contexts only."""
    if _remote_context(json.loads(text)):
        raise ValueError("a remote @context is not fetched: give the context inline")
    dataset = Dataset()
    try:
        dataset.parse(data=text, format="json-ld")
    except Exception as e:  # the JSON-LD parser raises several kinds
        raise ValueError(f"not JSON-LD: {e}") from None
    return dataset


def _remote_context(item: Any) -> bool:
    if isinstance(item, dict):
        return any((k == "@context" and _names_url(v)) or _remote_context(v) for k, v in item.items())
    if isinstance(item, list):
        return any(_remote_context(v) for v in item)
    return False


def _names_url(context: Any) -> bool:
    return isinstance(context, str) or (isinstance(context, list) and any(isinstance(c, str) for c in context))


def _dataset_lines(dataset: Dataset, one: bool = False, stream: Optional[str] = None) -> list[str]:
    """The event lines of the named graphs of ``dataset``, with their
    times (and streams, default ``stream``) from its default graph, in
    time order (then by name)."""
    default = dataset.default_graph
    times: dict[Node, list[Node]] = {}
    streams: dict[Node, list[Node]] = {}
    for s, p, o in default:
        if p == GENERATED_AT:
            times.setdefault(s, []).append(o)
        elif p == IS_PART_OF and isinstance(o, URIRef):
            streams.setdefault(s, []).append(o)
        else:
            raise ValueError(f"a triple of the default graph must give a graph's time or stream (an IRI), "
                             f"not {s.n3()} {p.n3()} {o.n3()}")
    graphs = [g for g in dataset.graphs() if g.identifier != default.identifier and len(g)]
    if one and len(graphs) != 1:
        raise ValueError(f"a line must hold one named graph, not {len(graphs)}: "
                         '{"@id": ..., "prov:generatedAtTime": ..., "@graph": [...]}')
    timed = []
    for g in graphs:
        found = times.pop(g.identifier, [])
        if len(found) != 1:
            why = "has no time" if not found else "has two times"
            raise ValueError(f"graph {g.identifier.n3()} {why}: give it one triple <graph> prov:generatedAtTime T")
        on = streams.pop(g.identifier, [])
        if len(on) > 1:
            raise ValueError(f"graph {g.identifier.n3()} has two streams")
        timed.append((graph_time(found[0]), str(g.identifier), g, on[0] if on else stream))
    if times or streams:
        raise ValueError(f"a time or stream is given for {next(iter(times or streams)).n3()}, which is no named graph here")
    timed.sort(key=lambda item: item[:2])
    return [rdflib_graph_line(g, time, on) for time, _, g, on in timed]


# -- a graph in a table's cell ------------------------------------------------------------


def graph_cell(text: str, stream: Optional[str] = None) -> str:
    """The term ``rdf_graph(Name, Triples)`` of one graph written in a cell
    of a table (``--graph-col``): JSON-LD (a cell that starts with ``{`` or
    ``[``) or N-Triples/N-Quads lines.  Its name is its graph's IRI (the
    JSON-LD ``@id`` of a named graph, the label of the quads) or, for a graph
    without one, the blank node ``'_:g'`` followed by the SHA-1 of its
    sorted triples as Prolog text (the same triples, the same name, in
    every run, whatever their order or layout).  The time comes from the
    time column: a ``prov:generatedAtTime`` triple is a triple like any
    other here.  The graph is on ``stream`` (an IRI) if given.  Raises
    :class:`InvalidEvent` with the reason."""
    cell = text.strip()
    try:
        if cell.startswith(("{", "[")):
            name, triples = _jsonld_cell(cell)
        else:
            name, triples = _nquads_cell(cell)
    except (ValueError, RecursionError) as e:
        raise InvalidEvent(str(e).splitlines()[0]) from None
    if name is None:
        content = "\n".join(sorted(set(triples))).encode("utf-8", "surrogatepass")
        name = quote_atom("_:g" + hashlib.sha1(content).hexdigest())
    return graph_term(name, triples, None if stream is None else _iri_text(stream))


def _jsonld_cell(cell: str) -> tuple[Optional[str], list[str]]:
    dataset = _jsonld_dataset(cell)
    named = [g for g in dataset.graphs() if g.identifier != dataset.default_graph.identifier and len(g)]
    if len(named) > 1:
        raise ValueError(f"a cell must hold one graph, not {len(named)} named graphs")
    graph = named[0] if named else dataset.default_graph
    name = node_text(graph.identifier) if named else None
    return name, [rdf_triple_text(*t) for t in graph]


def _nquads_cell(cell: str) -> tuple[Optional[str], list[str]]:
    names: set[str] = set()
    triples = []
    for number, line in enumerate(cell.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _QUAD.match(line)
        if m is None:
            raise ValueError(f"line {number} of the graph: {_quad_reason(line)}")
        s, p, o, g = _quad(m, {})
        if g is not None:
            names.add(_shown(g))
        triples.append(f"t({_shown(s)},{_shown(p)},{_shown(o)})")
    if len(names) > 1:
        raise ValueError(f"a cell must hold one graph, not {len(names)} named graphs")
    return (names.pop() if names else None), triples


# -- TriG ----------------------------------------------------------------------------


def _trig_items(source: Lines, name: str, stream: Optional[str] = None) -> Iterator[Item]:
    """The graphs of a TriG text in time order, one an item, at line 1
    onwards (a TriG file is read whole, so its graphs are numbered, not
    its lines)."""
    text = "\n".join(source)
    dataset = Dataset()
    try:
        dataset.parse(data=text, format="trig")
    except Exception as e:  # rdflib's BadSyntax and others
        line = getattr(e, "lines", None)
        where = f"{name}:{line + 1}" if isinstance(line, int) else name
        raise GraphStreamError(f"{where}: error: not TriG: {getattr(e, '_why', e)}") from None
    try:
        lines = _dataset_lines(dataset, stream=stream)
    except ValueError as e:
        raise GraphStreamError(f"{name}: error: {e}") from None
    for number, line in enumerate(lines, start=1):
        yield number + 1, line, None


# -- batches -----------------------------------------------------------------------------


def graph_batches(chunks: Iterable[bytes], kind: str, batch_lines: int, name: str = "<stream>",
                  stream: Optional[str] = None) -> Iterator[Batch]:
    """Batches of a graph stream of ``kind`` (nquads, trig or jsonld), its
    graphs on ``stream`` (an IRI) unless the stream names their own."""
    source = Lines(chunks)
    if kind == "nquads":
        names = _Interned()
        return _batched(_nquads_items(source, names, stream), 1, batch_lines, listed=True, lister=names.batch)
    if kind == "jsonld":
        return _batched(_jsonld_items(source, stream), 1, batch_lines)
    if kind == "trig":
        return _batched(_trig_items(source, name, stream), 1, batch_lines)
    raise ValueError(f"unknown graph stream kind {kind!r}: use one of {', '.join(GRAPH_KINDS)}")
