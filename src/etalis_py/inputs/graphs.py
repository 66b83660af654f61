"""Graph events: streams whose events are RDF graphs.

Each named graph of a stream is one event ``graph(G)`` at the graph's time,
with ``G`` the Prolog term ``rdf_graph(Name, [t(S, P, O), ...])`` in the
terms of the background knowledge (see :mod:`etalis_py.rdf.knowledge`), or
``rdf_graph(Name, [...], Stream)`` for a graph of a named stream; rules
ask it with ``triple(G, S, P, O)``, ``isa(G, X, Class)``,
``graph_name(G, Name)`` and ``graph_stream(G, Stream)``
(``prolog/etalis/rdf/graph_events.pl``).

The time of a graph ``g`` is the object of the triple
``g prov:generatedAtTime T`` in the default graph: an ``xsd:dateTime``
(epoch seconds, as event times are) or a number (seconds).  That triple is
not part of the event, nor is ``g dcterms:isPartOf S`` in the default
graph, which puts ``g`` on the stream ``S`` (an IRI; else on the stream
the reader is given, if any).  Streams are

- N-Quads (``.nq``): a graph's quads are consecutive lines, with its time
  triple among, before or after them; a graph named again later is another
  event.  They are read in bulk and cross to the engine as graph batches
  (see :mod:`etalis_py.inputs.nquads`);
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
from collections.abc import Iterable, Iterator
from typing import Any, Optional

from rdflib import Dataset, Graph, URIRef
from rdflib.term import Node

from ..bridge.prolog_text import compound_text, input_line, quote_atom
from ..errors import EtalisError
from ..events import InvalidEvent, Rejection, Time, to_time
from ..rdf.knowledge import REMOTE_CONTEXT, node_text, remote_context
from .nquads import (GENERATED_AT, IS_PART_OF, QUAD, graph_key, graph_time, iri_text, nquads_batches, quad_reason,
                     quad_terms, shown, term_text)
from .streams import GRAPH_KINDS, Batch, Item, Lines, _batched

__all__ = ["GENERATED_AT", "IS_PART_OF", "GraphStreamError", "graph_batches", "graph_cell", "graph_line",
           "graph_term", "graph_time", "jsonld_line", "rdflib_graph_line", "whole_graphs"]


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


def whole_graphs(chunks: Iterable[bytes | str]) -> Iterator[bytes]:
    """The N-Quads of ``chunks`` (of whole lines) again, each chunk ending
    where a graph's run of lines ends: the lines of the last graph of a
    chunk wait for the next one (or the end), so that a graph read from a
    live source is one event however its lines arrive."""
    held = b""
    for chunk in chunks:
        if not chunk:       # an idle tick of a live source
            yield b""
            continue
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
    try:
        return graph_key(line.decode("utf-8"))
    except UnicodeDecodeError:
        return None


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
    if remote_context(json.loads(text)):
        raise ValueError(REMOTE_CONTEXT)
    dataset = Dataset()
    try:
        dataset.parse(data=text, format="json-ld")
    except Exception as e:  # the JSON-LD parser raises several kinds
        raise ValueError(f"not JSON-LD: {e}") from None
    return dataset


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
    return graph_term(name, triples, None if stream is None else iri_text(stream))


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
        m = QUAD.match(line)
        if m is None:
            raise ValueError(f"line {number} of the graph: {quad_reason(line)}")
        s, p, o, g = quad_terms(m)
        if g is not None:
            names.add(shown(g))
        triples.append(f"t({shown(s)},{shown(p)},{term_text(o)})")
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
                  stream: Optional[str] = None, first_graph: int = 1) -> Iterator[Batch]:
    """Batches of a graph stream of ``kind`` (nquads, trig or jsonld), its
    graphs on ``stream`` (an IRI) unless the stream names their own.  A
    TriG file is read whole and its graphs numbered: ``first_graph`` is
    the first one given (a resumed run's)."""
    if kind == "nquads":
        return nquads_batches(chunks, batch_lines, stream)
    if kind == "jsonld":
        return _batched(_jsonld_items(Lines(chunks), stream), 1, batch_lines)
    if kind == "trig":
        graphs = (item for item in _trig_items(Lines(chunks), name, stream) if item[0] > first_graph)
        return _batched(graphs, first_graph, batch_lines)
    raise ValueError(f"unknown graph stream kind {kind!r}: use one of {', '.join(GRAPH_KINDS)}")
