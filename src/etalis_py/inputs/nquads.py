"""N-Quads graph streams, read in bulk into graph batches.

A graph of an N-Quads stream is a run of consecutive lines with the same
graph label (see :mod:`etalis_py.inputs.graphs` for the time and stream triples
of the default graph and the rules on them).  The stream is read a
segment of some thousand lines at a time, cut where a graph's run of
lines starts (the last graph of a segment waits for the next).  A
segment whose every line is a quad in the usual layout (terms separated
by one space, `` .`` at the end) is split into terms by pyarrow, every
term of the segment interned at once (``dictionary_encode``), and only
its distinct terms converted in Python; a line in another layout is
matched by the regular expression of a quad on its own; a segment with a
line that is no quad, or a graph that is not an event (no time, two
times, ...), is read line by line (:func:`_line_graphs`), which gives
each rejection its line and reason.  Either way the graphs of a segment
are handed to the engine as a graph batch (``graph_batch.pl``): the
batch's distinct terms once, then each graph and triple as numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from rdflib import Dataset, Literal, URIRef
from rdflib.namespace import XSD
from rdflib.term import Node

from ..events import InvalidEvent, Rejection, Time, read_number, to_time
from ..rdf.knowledge import literal_text
from ..bridge.prolog_text import prolog_string, quote_atom
from .streams import Batch, decode_lines

GENERATED_AT = URIRef("http://www.w3.org/ns/prov#generatedAtTime")
IS_PART_OF = URIRef("http://purl.org/dc/terms/isPartOf")
_GENERATED_AT = str(GENERATED_AT)
_IS_PART_OF = str(IS_PART_OF)

_IRI = r"<([^<>\"{}|^`\\\x00-\x20]*)>"
_BNODE = r"_:([A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?)"
_LITERAL = r"\"((?:[^\"\\\n\r]|\\.)*)\"(?:\^\^" + _IRI + r"|@([A-Za-z]+(?:-[A-Za-z0-9]+)*))?"
QUAD = re.compile(
    rf"\s*(?:{_IRI}|{_BNODE})\s*{_IRI}\s*(?:{_IRI}|{_BNODE}|{_LITERAL})\s*(?:(?:{_IRI}|{_BNODE})\s*)?\.\s*(?:#.*)?$"
)
_LITERAL_TOKEN = re.compile(_LITERAL + r"\Z")
# the terms of a quad in the usual layout, as pyarrow's regular expressions (RE2) check them
_TERM_RE2 = (r"^(?:<[^<>\"{}|^`\\\x00-\x20]*>|_:[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?"
             r"|\"(?:[^\"\\\n\r]|\\.)*\"(?:\^\^<[^<>\"{}|^`\\\x00-\x20]*>|@[A-Za-z]+(?:-[A-Za-z0-9]+)*)?)$")
_ESCAPES = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_XSD = "http://www.w3.org/2001/XMLSchema#"
_INTEGER = re.compile(r"[+-]?[0-9]+$")
_CACHE = 100_000  # terms whose Prolog text a reader keeps across segments
_FAST_TYPES = {_XSD + "integer": "integer", _XSD + "string": "string", _XSD + "double": "real",
               _XSD + "decimal": "real", _XSD + "float": "real", _XSD + "dateTime": "time"}
_DATETIME = re.compile(r"-?[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})?$")
_DEFAULT_KEYS = ("<" + _GENERATED_AT + ">", "<" + _IS_PART_OF + ">")
_SEGMENT_LINES_MAX = 200_000  # keeps every number of a graph batch below the first surrogate's 0xD800 x 5


# -- terms ---------------------------------------------------------------------------


def unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1) or m.group(2)
        if code:
            return chr(int(code, 16))
        c = m.group(3)
        if c not in _SIMPLE_ESCAPES:
            raise ValueError(f"bad escape \\{c}")
        return _SIMPLE_ESCAPES[c]
    return _ESCAPES.sub(one, text)


def iri_text(iri: str) -> str:
    """The Prolog text of the atom of an IRI as N-Quads writes it."""
    if "\\" in iri:
        iri = unescape(iri)
    return quote_atom(iri)


def literal_term(lexical: str, datatype: Optional[str], lang: Optional[str]) -> str:
    """The Prolog text of a literal (see :func:`etalis_py.rdf.knowledge.literal_text`)."""
    if "\\" in lexical:
        lexical = unescape(lexical)
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


def _iso_time(lexical: str) -> Time:
    """The time of a valid xsd:dateTime lexical form (UTC if it has no zone)."""
    return to_time(datetime.fromisoformat(lexical.replace("Z", "+00:00")))


def nquads_time(lexical: Optional[str], datatype: Optional[str]) -> Time:
    """The time of a graph given by the literal ``lexical`` (N-Quads
    escapes) of type ``datatype``."""
    if lexical is None:
        raise InvalidEvent("the time of a graph must be a literal: an xsd:dateTime or a number")
    if datatype == _XSD + "dateTime" and _DATETIME.match(lexical):
        try:
            return _iso_time(lexical)
        except ValueError:
            pass
    if datatype == _XSD + "integer" and _INTEGER.match(lexical) and len(lexical) < 20:
        return to_time(int(lexical))
    return graph_time(Literal(unescape(lexical), datatype=URIRef(datatype) if datatype else None))


def quad_terms(m: re.Match[str]) -> tuple[str, str, str, Optional[str]]:
    """The subject, predicate, object and graph label (None: the default
    graph) of a quad that :data:`QUAD` matched, as N-Quads writes them,
    one space between the parts of a term (``"1"^^<...>``)."""
    si, sb, p, oi, ob, lexical, datatype, lang, gi, gb = m.groups()
    s = f"<{si}>" if si is not None else f"_:{sb}"
    if oi is not None:
        o = f"<{oi}>"
    elif ob is not None:
        o = f"_:{ob}"
    else:
        o = f'"{lexical}"' + (f"^^<{datatype}>" if datatype is not None else f"@{lang}" if lang is not None else "")
    g = f"<{gi}>" if gi is not None else f"_:{gb}" if gb is not None else None
    return s, f"<{p}>", o, g


def term_text(token: str) -> str:
    """The Prolog text of a term as :func:`quad_terms` writes it.  Raises
    ValueError for a bad escape."""
    if token[0] == "<":
        return iri_text(token[1:-1])
    if token[0] == "_":
        return quote_atom(token)
    m = _LITERAL_TOKEN.match(token)
    if m is None:
        raise ValueError(f"not an RDF term: {token}")
    return literal_term(m.group(1), m.group(2), m.group(3))


_INTEGER_SUFFIX = f'"^^<{_XSD}integer>'
_DECIMAL_SUFFIX = f'"^^<{_XSD}decimal>'
_DATETIME_SUFFIX = f'"^^<{_XSD}dateTime>'
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _common_texts(tokens: pa.Array, time: bool = False) -> pa.Array:
    """The Prolog texts of the literals of ``tokens`` (pyarrow strings) of
    a common form, converted together, as :func:`term_text` (or, if
    ``time``, :func:`nquads_time`) converts them one by one: integers,
    decimals, UTC dateTimes (in seconds) and, if not ``time``, strings
    without escapes; a pyarrow array of strings, null for the others."""
    source = np.full(len(tokens), -1, dtype=np.int64)  # where each text is in the texts converted
    converted: list[pa.Array] = []
    done = 0

    def put(where: np.ndarray[Any, Any], texts: pa.Array) -> None:
        nonlocal done
        source[where] = np.arange(done, done + len(texts))
        converted.append(texts)
        done += len(texts)

    for suffix, pattern, convert in _COMMON:
        where = np.flatnonzero(pc.ends_with(tokens, suffix).to_numpy(zero_copy_only=False))
        if not len(where):
            continue
        lexical = pc.utf8_slice_codeunits(tokens.take(pa.array(where)), 1, -len(suffix))
        good = pc.match_substring_regex(lexical, pattern).to_numpy(zero_copy_only=False)
        if good.any():
            put(where[good], convert(lexical.filter(pa.array(good))))
    if not time:
        plain = np.flatnonzero(pc.match_substring_regex(tokens, _PLAIN_STRING_RE2).to_numpy(zero_copy_only=False))
        if len(plain):
            put(plain, tokens.take(pa.array(plain)))
    if not converted:
        return pa.nulls(len(tokens), pa.string())
    return pa.concat_arrays(converted).take(pa.array(source, mask=source < 0))


def _filled(texts: pa.Array, tokens: pa.Array, convert: Callable[[str], str]) -> pa.Array:
    """``texts`` (see :func:`_common_texts`) with each null the text that
    ``convert`` gives the token of ``tokens`` in its place."""
    missing = np.flatnonzero(texts.is_null().to_numpy(zero_copy_only=False))
    if not len(missing):
        return texts
    values = texts.to_pylist()
    for i, token in zip(missing.tolist(), tokens.take(pa.array(missing)).to_pylist()):
        values[i] = convert(token)
    return pa.array(values, type=pa.string())


def _joined(texts: pa.Array) -> str:
    """The strings of ``texts`` separated by commas."""
    offsets = pa.array([0, len(texts)], type=pa.int32())
    return str(pc.binary_join(pa.ListArray.from_arrays(offsets, texts), ",")[0].as_py())


def _unsigned(lexical: pa.Array) -> pa.Array:
    """Integers, and decimals of at most 15 digits before the point and 17
    after (no overflow, no underflow), as Prolog reads them (``007`` is 7,
    ``-0`` is 0, ``1.50`` the float nearest to 1.5, as Python's
    ``float``): as they are, without a plus sign."""
    return pc.if_else(pc.starts_with(lexical, "+"), pc.utf8_slice_codeunits(lexical, 1), lexical)


def _datetime_texts(lexical: pa.Array) -> pa.Array:
    """Seconds of UTC dateTimes ``YYYY-MM-DDThh:mm:ss`` (then Z or
    nothing), or null for one that is no date (a 30 February)."""
    y, mo, d, h, mi, s = (pc.cast(pc.utf8_slice_codeunits(lexical, a, a + n), pa.int64()).to_numpy()
                          for a, n in ((0, 4), (5, 2), (8, 2), (11, 2), (14, 2), (17, 2)))
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    days_in = np.array(_MONTH_DAYS)[np.clip(mo, 1, 12) - 1] + ((mo == 2) & leap)
    valid = (y >= 1) & (mo >= 1) & (mo <= 12) & (d >= 1) & (d <= days_in) & (h < 24) & (mi < 60) & (s < 60)
    yy = y - (mo <= 2)
    era = yy // 400
    yoe = yy - era * 400
    doy = (153 * (mo + np.where(mo > 2, -3, 9)) + 2) // 5 + d - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    seconds = pa.array(days * 86400 + h * 3600 + mi * 60 + s, mask=~valid).cast(pa.string())
    return pc.binary_join_element_wise(seconds, ".0", "")


_COMMON = ((_INTEGER_SUFFIX, r"^[+-]?[0-9]{1,18}$", _unsigned),
           (_DECIMAL_SUFFIX, r"^[+-]?[0-9]{1,15}\.[0-9]{1,17}$", _unsigned),
           (_DATETIME_SUFFIX, r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?$", _datetime_texts))
_PLAIN_STRING_RE2 = r'^"[^"\\\x00-\x1f\x7f]*"$'


def _token_time(token: str) -> Time:
    if token[0] != '"':
        return nquads_time(None, None)
    m = _LITERAL_TOKEN.match(token)
    if m is None:
        raise ValueError(f"not an RDF term: {token}")
    return nquads_time(m.group(1), m.group(2))


def quad_reason(text: str) -> str:
    """Why an N-Quads line does not parse, as rdflib says it."""
    try:
        Dataset().parse(data=text, format="nquads")
    except Exception as e:  # rdflib raises several kinds
        return f"not an N-Quads line: {str(e).splitlines()[0].rstrip(': ')}"
    return "not an N-Quads line"


def graph_key(line: str) -> Optional[str]:
    """The graph an N-Quads line belongs to (its label, or the subject of a
    default-graph time or stream triple), or None for a blank, comment or
    bad line."""
    read = _read_line(line)
    return read.name if isinstance(read, _Line) else None


@dataclass(frozen=True)
class _Line:
    """What a line gives the graph ``name``: its time, its stream or a triple."""

    name: str
    time: Optional[Time] = None
    stream: Optional[str] = None
    triple: Optional[tuple[str, str, str]] = None


def _read_line(line: str) -> "_Line | str | None":
    """What an N-Quads line gives a graph, or why it gives none (a
    reason), or None for a blank or comment line."""
    m = QUAD.match(line)
    if m is None:
        text = line.strip()
        return None if not text or text.startswith("#") else quad_reason(text)
    subject, predicate, obj, graph = quad_terms(m)
    try:
        term_text(obj)  # a bad escape
        if graph is not None:
            return _Line(graph, triple=(subject, predicate, obj))
        # the default graph: the time or stream of the graph named by the subject
        if m.group(1) is None or m.group(3) not in (_GENERATED_AT, _IS_PART_OF):
            raise ValueError("a triple of the default graph must give a graph's time or stream: "
                             "<graph> <http://www.w3.org/ns/prov#generatedAtTime> T . or "
                             "<graph> <http://purl.org/dc/terms/isPartOf> <stream> .")
        if m.group(3) == _GENERATED_AT:
            return _Line(subject, time=nquads_time(m.group(6), m.group(7)))
        if m.group(4) is None:
            raise ValueError("the stream of a graph must be an IRI")
        return _Line(subject, stream=obj)
    except (ValueError, InvalidEvent) as e:
        return str(e)


# -- graphs --------------------------------------------------------------------------


@dataclass
class _Block:
    """The consecutive lines of one graph of an N-Quads stream: its name and
    triples as N-Quads terms (see :func:`quad_terms`)."""

    name: str
    first: int
    last: int
    triples: list[tuple[str, str, str]] = field(default_factory=list)
    times: list[tuple[int, Time]] = field(default_factory=list)
    streams: list[tuple[int, str]] = field(default_factory=list)
    bad: list[Rejection] = field(default_factory=list)


@dataclass
class _Graphs:
    """The graphs of a segment, ready to encode: the distinct terms
    (``terms``, N-Quads text) and, as indexes into them, the triples
    (``s``, ``p``, ``o``, the graphs' triples in order) and each graph's
    name and stream (-1: none); each graph's line (from 1 in the segment),
    time (Prolog text) and number of triples."""

    terms: Any  # a list of str, or a pyarrow array of strings
    s: np.ndarray[Any, Any]
    p: np.ndarray[Any, Any]
    o: np.ndarray[Any, Any]
    lines: np.ndarray[Any, Any]
    names: np.ndarray[Any, Any]
    streams: np.ndarray[Any, Any]
    sizes: np.ndarray[Any, Any]
    times: pa.Array  # of str
    kinds: Optional[np.ndarray[Any, Any]] = None  # the kind of each term, if known


def _block_rejection(block: _Block) -> Optional[Rejection]:
    """Why a graph is not an event (its first bad line), or None."""
    name = shown(block.name)
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


def shown(token: str) -> str:
    """A graph's name (an N-Quads term) as its Prolog text."""
    return iri_text(token[1:-1]) if token[0] == "<" else quote_atom(token)


def _line_graphs(lines: list[str], bad_lines: dict[int, str],
                 rejected: list[Rejection], first: int) -> list[tuple[int, _Block]]:
    """The graphs of ``lines`` (line ``first`` onwards), read one line at
    a time, each with the line of its event (its last line); the lines
    that are not part of one, and the graphs that are not events, go to
    ``rejected`` with their reasons.  ``bad_lines`` gives, by index, the
    lines that are not UTF-8."""
    graphs: list[tuple[int, _Block]] = []
    block: Optional[_Block] = None

    def finish(block: _Block) -> None:
        rejection = _block_rejection(block)
        if rejection is None:
            graphs.append((block.last, block))
        else:
            rejected.append(rejection)
            rejected.extend(block.bad[1:])

    for index, line in enumerate(lines):
        number = first + index
        if index in bad_lines:  # not UTF-8
            text = line.strip()
            read: "_Line | str | None" = None if not text or text.startswith("#") else bad_lines[index]
        else:
            read = _read_line(line)
        if read is None:
            continue
        if isinstance(read, str):
            if block is None:
                rejected.append(Rejection(number, read))
            else:
                block.bad.append(Rejection(number, read))
                block.last = number
            continue
        if block is not None and read.name != block.name:
            finish(block)
            block = None
        if block is None:
            block = _Block(read.name, number, number)
        block.last = number
        if read.time is not None:
            block.times.append((number, read.time))
        elif read.stream is not None:
            block.streams.append((number, read.stream))
        elif read.triple is not None:
            block.triples.append(read.triple)
    if block is not None:
        finish(block)
    return graphs


def _listed_graphs(graphs: list[tuple[int, _Block]], first: int, stream: Optional[str]) -> _Graphs:
    """The graphs that :func:`_line_graphs` read, ready to encode."""
    index: dict[str, int] = {}

    def code(token: str) -> int:
        found = index.get(token)
        if found is None:
            found = index[token] = len(index)
        return found

    spo = [code(t) for _, block in graphs for triple in block.triples for t in triple]
    codes = np.array(spo, dtype=np.int64).reshape(-1, 3)
    names = np.array([code(block.name) for _, block in graphs], dtype=np.int64)
    streams = np.array([code(block.streams[0][1]) if block.streams else
                        (code(stream) if stream is not None else -1) for _, block in graphs], dtype=np.int64)
    return _Graphs(list(index), codes[:, 0], codes[:, 1], codes[:, 2],
                   np.array([line - first + 1 for line, _ in graphs], dtype=np.int64), names, streams,
                   np.array([len(block.triples) for _, block in graphs], dtype=np.int64),
                   pa.array([repr(block.times[0][1]) for _, block in graphs], type=pa.string()))


# -- the bulk reading ---------------------------------------------------------------------


class _Reader:
    """Reads segments of an N-Quads stream into graph batches; keeps the
    Prolog texts of the terms and times it has converted."""

    def __init__(self, stream: Optional[str]) -> None:
        self.stream = None if stream is None else f"<{stream}>"
        self._texts: dict[str, str] = {}
        self._times: dict[str, str] = {}

    def batch(self, data: bytes, first: int, end: Optional[int] = None) -> Batch:
        """The graph batch of the whole lines ``data`` (up to ``end``, if
        given: the rest of ``data`` is not copied), line ``first`` onwards."""
        if end is None:
            end = len(data)
        lines = data.count(b"\n", 0, end) + (not data.endswith(b"\n", 0, end))
        graphs = self._bulk(data, end)
        if graphs is not None:
            try:
                return Batch(self._encode(graphs, lines), first, [], lines)
            except (ValueError, InvalidEvent):  # a literal with a bad escape: its line is rejected
                pass
        rejected: list[Rejection] = []
        text, bad = decode_lines(data[:end])
        split = text.split("\n")
        if text.endswith("\n"):
            split.pop()
        graphs = _listed_graphs(_line_graphs(split, bad, rejected, first), first, self.stream)
        return Batch(self._encode(graphs, lines), first, rejected, lines)

    # the usual layout, split by pyarrow

    def _bulk(self, data: bytes, end: int) -> Optional[_Graphs]:
        """The graphs of ``data[:end]`` if every line is a quad or blank and
        every graph is an event, else None.  Its large arrays are pyarrow's
        (whose pool keeps its memory) or of int32: under the fixed mmap
        threshold (``_prolog.fixed_mmap_threshold``) each block of 256 KiB
        or more is a mapping of its own, paid for in page faults."""
        if not data.endswith(b"\n", 0, end):
            data = data[:end] + b"\n"
            end = len(data)
        if data.find(b"\r", 0, end) >= 0 or data.startswith(b"\xef\xbb\xbf"):
            return None
        whole = pa.StringArray.from_buffers(1, pa.py_buffer(np.array([0, end - 1], dtype=np.int32)),
                                            pa.py_buffer(data))  # without the last newline
        lines = pc.split_pattern(whole, "\n").values
        try:
            lines.validate(full=True)  # UTF-8
        except pa.ArrowInvalid:
            return None
        parts = pc.split_pattern(lines, " ")
        count = np.diff(parts.offsets.to_numpy())
        start = parts.offsets.to_numpy()[:-1]
        tokens = parts.values
        ends_ok = pc.equal(tokens.take(pa.array(start + count - 1)), ".").to_numpy(zero_copy_only=False)
        quad = (count == 5) & ends_ok
        default = (count == 4) & ends_ok
        blank = (count == 1) & pc.equal(lines, "").to_numpy(zero_copy_only=False)
        extra: list[str] = []  # the terms of lines in another layout
        where = np.stack([start, start + 1, start + 2, start + 3], axis=1)
        other = np.flatnonzero(~(quad | default | blank))
        if len(other):
            base = len(tokens)
            for i in other:
                line = lines[int(i)].as_py()
                m = QUAD.match(line)
                if m is None:
                    text = line.strip()
                    if text and not text.startswith("#"):
                        return None  # a bad line: read line by line
                    blank[i] = True
                    continue
                terms = quad_terms(m)
                where[i] = [base + len(extra) + k for k in range(4)]
                extra.extend(t if t is not None else "" for t in terms)
                if terms[3] is None:
                    default[i] = True
                else:
                    quad[i] = True
        pool = pa.concat_arrays([tokens, pa.array(extra + list(_DEFAULT_KEYS) + ([self.stream] if self.stream else []),
                                                  type=pa.string())])
        encoded = pool.dictionary_encode()
        dictionary = encoded.dictionary
        codes = encoded.indices.to_numpy(zero_copy_only=False)  # int32
        keys = codes[len(pool) - len(_DEFAULT_KEYS) - (1 if self.stream else 0):]
        time_key, part_key = int(keys[0]), int(keys[1])
        stream_code = int(keys[2]) if self.stream else -1
        kinds = _kinds(dictionary)
        used = quad | default
        rows = codes[where[used]]  # s, p, o, g codes of the quads and default-graph triples
        is_quad = quad[used]
        k = kinds[rows]
        if not (np.all((k[:, 0] == _KIND_IRI) | (k[:, 0] == _KIND_BNODE)) and np.all(k[:, 1] == _KIND_IRI)
                and np.all(k[:, 2] != _KIND_BAD)
                and np.all(~is_quad | (k[:, 3] == _KIND_IRI) | (k[:, 3] == _KIND_BNODE))):
            return None
        name = np.where(is_quad, rows[:, 3], rows[:, 0])
        is_time = ~is_quad & (rows[:, 1] == time_key)
        is_part = ~is_quad & (rows[:, 1] == part_key)
        if not np.all(is_quad | ((is_time | is_part) & (k[:, 0] == _KIND_IRI))) or np.any(
                is_part & (k[:, 2] != _KIND_IRI)):
            return None
        line_of = np.flatnonzero(used)
        block = np.cumsum(np.concatenate(([True], name[1:] != name[:-1]))) - 1 if len(name) else name
        blocks = int(block[-1]) + 1 if len(block) else 0
        if blocks and not (np.all(np.bincount(block[is_time], minlength=blocks) == 1)
                           and np.all(np.bincount(block[is_part], minlength=blocks) <= 1)):
            return None
        last = np.flatnonzero(np.concatenate((block[1:] != block[:-1], [True]))) if blocks else block
        streams = np.full(blocks, stream_code, dtype=np.int64)
        streams[block[is_part]] = rows[is_part, 2]
        distinct, which = np.unique(rows[is_time, 2], return_inverse=True)
        time_array = dictionary.take(pa.array(distinct))
        try:
            texts = _filled(_common_texts(time_array, time=True), time_array, self._time)
        except (ValueError, InvalidEvent):
            return None
        times = texts.take(pa.array(which))  # block[is_time] is 0, 1, ...: a time each
        triples = rows[is_quad]
        return _Graphs(dictionary, triples[:, 0], triples[:, 1], triples[:, 2], line_of[last] + 1,
                       name[last], streams, np.bincount(block[is_quad], minlength=blocks), times, kinds)

    def _time(self, token: str) -> str:
        text = self._times.get(token)
        if text is None:
            if len(self._times) >= _CACHE:
                self._times.clear()
            text = self._times[token] = repr(_token_time(token))
        return text

    def _text(self, token: str) -> str:
        text = self._texts.get(token)
        if text is None:
            if len(self._texts) >= _CACHE:
                self._texts.clear()
            text = self._texts[token] = term_text(token)
        return text

    # the hand-over

    def _encode(self, graphs: _Graphs, lines: int) -> str:
        """The graph batch (see ``graph_batch.pl``) of ``graphs``, of
        ``lines`` lines."""
        terms = graphs.terms
        n = len(terms)
        used = np.zeros(n, dtype=bool)
        for codes in (graphs.s, graphs.p, graphs.o, graphs.names, graphs.streams[graphs.streams >= 0]):
            used[codes] = True
        dictionary = terms if isinstance(terms, pa.Array) else pa.array(terms, type=pa.string())
        kinds = graphs.kinds if graphs.kinds is not None else _kinds(dictionary)
        atomic = used & ((kinds == _KIND_IRI) | (kinds == _KIND_BNODE))
        others = np.flatnonzero(used & ~atomic)
        atoms = np.flatnonzero(atomic)
        position = np.zeros(n, dtype=np.int32)
        position[atoms] = np.arange(1, len(atoms) + 1)
        position[others] = np.arange(len(atoms) + 1, len(atoms) + len(others) + 1)
        atom_texts = dictionary.take(pa.array(atoms))
        starts_iri = pc.starts_with(atom_texts, "<")
        atom_texts = pc.if_else(starts_iri, pc.utf8_slice_codeunits(atom_texts, 1, -1), atom_texts)
        other_array = dictionary.take(pa.array(others))
        other_texts = _filled(_common_texts(other_array), other_array, self._text)
        time_base = len(atoms) + len(others)
        time_positions = np.arange(time_base + 1, time_base + len(graphs.times) + 1)
        gaps = np.diff(np.concatenate(([0], graphs.lines))) - 1
        header = np.stack([_count(gaps), _code(position[graphs.names]), _code(time_positions),
                           _count(np.where(graphs.streams >= 0, position[np.maximum(graphs.streams, 0)], 0)),
                           _count(graphs.sizes)], axis=1)
        spo = np.stack([graphs.s, graphs.p, graphs.o], axis=1)
        atom_text = "\n".join(atom_texts.to_pylist())
        other_text = "[" + _joined(pa.concat_arrays([other_texts, graphs.times])) + "]"
        graph_text = _chars(header)
        return "".join((f"\x1e{len(atom_text)} {len(other_text)} {len(graph_text)} {len(atoms)}\n", atom_text, other_text, graph_text,
                        _chars(_code(position[spo]))))


_KIND_BAD, _KIND_IRI, _KIND_BNODE, _KIND_LITERAL = 0, 1, 2, 3


def _kinds(dictionary: pa.Array) -> np.ndarray[Any, Any]:
    """The kind of each term of ``dictionary``: an IRI, a blank node, a
    literal, or none (bad)."""
    valid = pc.match_substring_regex(dictionary, _TERM_RE2).to_numpy(zero_copy_only=False)
    kinds = np.full(len(dictionary), _KIND_LITERAL, dtype=np.int8)
    kinds[pc.starts_with(dictionary, "<").to_numpy(zero_copy_only=False)] = _KIND_IRI
    kinds[pc.starts_with(dictionary, "_").to_numpy(zero_copy_only=False)] = _KIND_BNODE
    kinds[~valid] = _KIND_BAD
    return kinds


def _code(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The characters of positions of the table (from 1), the surrogates skipped."""
    return np.where(values >= 0xD800, values + 0x800, values)


def _count(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The characters of counts (from 0)."""
    return _code(values + 1)


def _chars(codes: np.ndarray[Any, Any]) -> str:
    return np.ascontiguousarray(codes, dtype="<u4").tobytes().decode("utf-32-le")


# -- segments -----------------------------------------------------------------------------


def _run_start(data: bytes) -> int:
    """The offset in ``data`` (whole lines) of the first line of the run of
    lines of its last graph, or 0 if that run starts it: the lines
    before it (including lines that belong to no graph after the graph
    before) are ready; the run waits for the lines that follow."""
    key: Optional[str] = None
    start = 0
    end = len(data)
    while end > 0:
        begin = data.rfind(b"\n", 0, end - 1) + 1
        try:
            line_key = graph_key(data[begin:end].decode("utf-8"))
        except UnicodeDecodeError:
            line_key = None
        if line_key is not None:
            if key is not None and line_key != key:
                return start
            key = line_key
            start = begin
        end = begin
    return 0


def nquads_batches(chunks: Iterable[bytes], batch_lines: int, stream: Optional[str] = None) -> Iterator[Batch]:
    """Graph batches of an N-Quads stream given in chunks of whole lines,
    about ``batch_lines`` lines each; its graphs on ``stream`` (an IRI)
    unless a ``dcterms:isPartOf`` triple names their own."""
    reader = _Reader(stream)
    batch_lines = max(1, min(batch_lines, _SEGMENT_LINES_MAX))
    pending: list[bytes] = []
    pending_lines = pending_bytes = 0
    first = 1
    wait_for = 0  # bytes that pending must exceed before it is cut again (a graph longer than a segment)
    start = True
    for chunk in chunks:
        if start and chunk:
            chunk = chunk.removeprefix(b"\xef\xbb\xbf")
            start = False
        pending.append(chunk)
        pending_lines += chunk.count(b"\n")
        pending_bytes += len(chunk)
        if not chunk.endswith(b"\n") or pending_bytes <= wait_for or pending_lines < batch_lines:
            continue
        data = b"".join(pending)
        cut = _run_start(data)
        if cut == 0:
            wait_for = 2 * pending_bytes
            pending = [data]
            continue
        wait_for = 0
        rest = data[cut:]
        pending, pending_lines, pending_bytes = [rest], rest.count(b"\n"), len(rest)
        batch = reader.batch(data, first, cut)
        first += batch.terms or 0
        yield batch
    if pending_bytes:
        yield reader.batch(b"".join(pending), first)
