"""N-Quads streams read in bulk (pyarrow) and handed over as graph batches
(``graph_batch.pl``): the same events, rejections and line numbers as
the line-by-line reader, whatever the segments' sizes, whether the batch
is decoded by the foreign library (``etalis_columns.c``) or in Prolog
(``ETALIS_TEXT_PATH``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import pytest

from etalis_py import Detection, Engine
from etalis_py.inputs import nquads
from etalis_py.bridge._prolog import bridge
from etalis_py.bridge.engine import parse_detections
from etalis_py.events import Rejection
from etalis_py.inputs.streams import line_chunks

XSD = "http://www.w3.org/2001/XMLSchema#"
PROV_AT = "<http://www.w3.org/ns/prov#generatedAtTime>"
PART_OF = "<http://purl.org/dc/terms/isPartOf>"
P = "<http://ex.org/p>"
T0 = 1091945100.0  # 2004-08-08T06:05:00Z
RULES = """:- prefix(ex, 'http://ex.org/').
v(N, S, O) <- graph(G) where (graph_name(G, N), triple(G, S, ex:p, O)).
on(N, St) <- graph(G) where (graph_name(G, N), graph_stream(G, St)).
"""

STREAM = (
    f'<http://ex.org/g1> {PROV_AT} "10"^^<{XSD}integer> .\n'
    f'<http://ex.org/s1> {P} "a b  c"@en <http://ex.org/g1> .\n'        # spaces in a literal: matched on its own
    f'<http://ex.org/s1> {P} "x\\"y" <http://ex.org/g1> .\n'
    f'_:b1 {P} "3.50"^^<{XSD}decimal> <http://ex.org/g1> .\n'
    f'<http://ex.org/s1> {P} "+7"^^<{XSD}integer> <http://ex.org/g1> .\n'
    f'<http://ex.org/s1> {P} "2004-08-08T06:05:00Z"^^<{XSD}dateTime> <http://ex.org/g1> .\n'
    f'<http://ex.org/s1> {P} "2004-08-08T08:05:00+02:00"^^<{XSD}dateTime> <http://ex.org/g1> .\n'
    f'<http://ex.org/s1> {P} "2004-02-30T00:00:00Z"^^<{XSD}dateTime> <http://ex.org/g1> .\n'
    f'<http://ex.org/s1> {P} "true"^^<{XSD}boolean> <http://ex.org/g1> .\n'
    f'<http://ex.org/s1> {P} <http://ex.org/\u00e9t\u00e9> <http://ex.org/g1> .\n'
    f'<http://ex.org/s1> {P} "caf\\u00E9" <http://ex.org/g1> .\n'
    "\n"
    f'<http://ex.org/s2>\t{P}  "2"^^<{XSD}integer>   <http://ex.org/g2> .\n'  # another layout
    f'<http://ex.org/g2> {PROV_AT} "2004-08-08T06:10:00Z"^^<{XSD}dateTime> .\n'
    f"<http://ex.org/g2> {PART_OF} <http://ex.org/st1> .\n"
    f'<http://ex.org/g3> {PROV_AT} "1091945700.5"^^<{XSD}decimal> .\n'
    f'<http://ex.org/s3> {P} "" <http://ex.org/g3> .\n'
)

EXPECTED = [  # in the order triple/4 answers them
    Detection("v", ("http://ex.org/g1", "_:b1", 3.5), 10, 10),
    Detection("v", ("http://ex.org/g1", "http://ex.org/s1", 7), 10, 10),
    Detection("v", ("http://ex.org/g1", "http://ex.org/s1", T0), 10, 10),
    Detection("v", ("http://ex.org/g1", "http://ex.org/s1", "a b  c"), 10, 10),
    Detection("v", ("http://ex.org/g1", "http://ex.org/s1", "café"), 10, 10),
    Detection("v", ("http://ex.org/g1", "http://ex.org/s1", 'x"y'), 10, 10),
    Detection("v", ("http://ex.org/g1", "http://ex.org/s1", "http://ex.org/été"), 10, 10),
    Detection("v", ("http://ex.org/g1", "http://ex.org/s1", "true"), 10, 10),
    Detection("v", ("http://ex.org/g1", "http://ex.org/s1", "literal(type('http://www.w3.org/2001/XMLSchema#dateTime',"
                                                              "\"2004-02-30T00:00:00Z\"))"), 10, 10),
    Detection("v", ("http://ex.org/g2", "http://ex.org/s2", 2), T0 + 300, T0 + 300),
    Detection("on", ("http://ex.org/g2", "http://ex.org/st1"), T0 + 300, T0 + 300),
    Detection("v", ("http://ex.org/g3", "http://ex.org/s3", ""), T0 + 600.5, T0 + 600.5),
]


@pytest.fixture(autouse=True, params=["foreign", "prolog"])
def decoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test with graph batches decoded by the foreign library and in Prolog."""
    if request.param == "prolog":
        monkeypatch.setenv("ETALIS_TEXT_PATH", "1")
    else:
        monkeypatch.delenv("ETALIS_TEXT_PATH", raising=False)
        assert bridge().columns()
    return str(request.param)


def read(path: Path, batch_lines: int = 20_000, stream: Optional[str] = None,
         rules: str = RULES) -> tuple[list[Detection], list[Rejection], int]:
    """The detections and rejections of the N-Quads file at ``path``, and
    the number of batches it was read in."""
    engine = Engine.from_string(rules)
    found: list[Detection] = []
    rejected: list[Rejection] = []
    batches = 0
    with path.open("rb") as f:
        for batch in nquads.nquads_batches(line_chunks(f, 64), batch_lines, stream):
            result = engine.feed_text(batch.text, batch.first_line, batch.terms)
            found += parse_detections(result.detection_lines)
            rejected += batch.rejected + result.rejected
            batches += 1
    return found, rejected, batches


def _no_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read every segment line by line."""
    monkeypatch.setattr(nquads._Reader, "_bulk", lambda self, data, end: None)


def test_the_bulk_reader_reads_every_kind_of_term_as_the_line_reader(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.nq"
    path.write_text(STREAM)
    bulk = read(path)
    assert bulk == (EXPECTED, [], 1)
    _no_bulk(monkeypatch)
    assert read(path) == bulk


@pytest.mark.parametrize("batch_lines", [1, 2, 3, 5, 8])
def test_graphs_are_whole_whatever_the_segments(tmp_path: Path, batch_lines: int) -> None:
    path = tmp_path / "s.nq"
    path.write_text(STREAM)
    found, rejected, batches = read(path, batch_lines)
    assert (found, rejected) == (EXPECTED, [])
    if batch_lines == 1:
        assert batches == 3  # a segment is cut where a graph starts: one graph a batch


def test_a_bad_line_drops_its_graph_and_keeps_its_line_in_any_segment(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.nq"
    lines = STREAM.splitlines(keepends=True)
    lines.insert(3, f"<http://ex.org/s1> {P} 7 <http://ex.org/g1> .\n")          # line 4: no literal
    lines.insert(14, f"<http://ex.org/s2> {P} <http://ex.org/x> .\n")             # line 15: default graph, no time
    path.write_bytes("".join(lines).encode() + b'<http://ex.org/s4> <http://ex.org/p> "\xff" <http://ex.org/g4> .\n'
                     + f'<http://ex.org/g5> {PROV_AT} "20"^^<{XSD}integer> .\n'.encode()
                     + f'<http://ex.org/s5> {P} "5"^^<{XSD}integer> <http://ex.org/g5> .\n'.encode())
    expected = [Detection("v", ("http://ex.org/g5", "http://ex.org/s5", 5), 20, 20)]
    expected_rejected = [4, 15, 20]
    for batch_lines in (1, 4, 20_000):
        found, rejected, _ = read(path, batch_lines)
        assert found == expected, batch_lines
        assert [r.line for r in rejected] == expected_rejected
        assert rejected[0].reason.startswith("not an N-Quads line: ")
        assert rejected[0].reason.endswith("(graph 'http://ex.org/g1' is dropped)")
        assert rejected[1].reason.startswith("a triple of the default graph must give a graph's time or stream: ")
        assert rejected[1].reason.endswith("(graph 'http://ex.org/g2' is dropped)")
        # a line that does not read belongs to the graph before it
        assert rejected[2].reason == "line is not UTF-8: byte 0xff at column 39 (graph 'http://ex.org/g3' is dropped)"
    _no_bulk(monkeypatch)
    assert read(path) == (expected, rejected, 1)


def test_a_stream_given_to_the_reader_is_every_graphs_but_its_own(tmp_path: Path) -> None:
    path = tmp_path / "s.nq"
    path.write_text(STREAM)
    found, _, _ = read(path, stream="http://ex.org/st0")
    assert [d.args for d in found if d.event == "on"] == [
        ("http://ex.org/g1", "http://ex.org/st0"), ("http://ex.org/g2", "http://ex.org/st1"),
        ("http://ex.org/g3", "http://ex.org/st0")]


def test_a_batch_of_more_terms_than_the_first_surrogate_decodes(tmp_path: Path) -> None:
    """Past 0xD7FF terms a batch's numbers skip the surrogates, which no
    character has."""
    path = tmp_path / "big.nq"
    graphs = 6_000
    with path.open("w") as f:
        for i in range(graphs):
            f.write(f'<http://ex.org/g{i}> {PROV_AT} "{i}"^^<{XSD}integer> .\n')
            f.writelines(f"<http://ex.org/s{i}> {P} <http://ex.org/o{i}_{k}> <http://ex.org/g{i}> .\n"
                         for k in range(10))
    rules = ":- prefix(ex, 'http://ex.org/').\nlast(N, O) <- graph(G) where (graph_name(G, N), triple(G, _, ex:p, O)).\n"
    found, rejected, batches = read(path, 100_000, rules=rules)
    assert (rejected, batches) == ([], 1)
    assert len(found) == 10 * graphs
    assert found[-1] == Detection("last", ("http://ex.org/g5999", "http://ex.org/o5999_9"), 5999, 5999)
    assert found[5500 * 10 + 3] == Detection("last", ("http://ex.org/g5500", "http://ex.org/o5500_3"), 5500, 5500)


def _batch(graphs: str, triples: str) -> str:
    """A graph batch of the atom 'a' and the number 5 (see graph_batch.pl)."""
    return f"\x1e1 3 {len(graphs)} 1\na[5]{graphs}{triples}"


GOOD = _batch("\x01\x01\x02\x01\x02", "\x01\x01\x01")  # no gap, name a, time 5, no stream, one triple a a a


@pytest.mark.parametrize("text, count", [
    ("\x1e1 2 3 4\nab", 1),
    (GOOD, 0),                                              # more graphs than lines
    (_batch("\x01\x09\x02\x01\x02", "\x01\x01\x01"), 1),   # a name past the table
    (_batch("\x01\x01\x02\x01\x03", "\x01\x01\x01"), 1),   # two triples, one given
    (_batch("\x01\x01\x02\x01", "\x01\x01\x01"), 1),        # four codes for a graph
    (_batch("\x01\x01\x02\x01\x02", "\x01\x01\x00"), 1),   # a code 0
])
def test_a_graph_batch_that_does_not_decode_is_an_error_not_a_crash(text: str, count: int) -> None:
    from etalis_py.errors import EtalisError

    engine = Engine.from_string("x(N, T) <- graph(G) where (graph_name(G, N), triple(G, _, a, T)).")
    with pytest.raises(EtalisError, match="graph_batch"):
        engine.feed_text(text, 1, count)
    result = engine.feed_text(GOOD, 7, 2)
    assert (result.accepted, parse_detections(result.detection_lines)) == (1, [Detection("x", ("a", "a"), 5, 5)])


NUMBERS = [  # (lexical form, datatype, value): those with a plus sign, leading zeros or many digits included
    ("007", "integer", 7), ("-0", "integer", 0), ("+12", "integer", 12), ("-123456789012345678", "integer",
                                                                        -123456789012345678),
    ("1234567890123456789", "integer", 1234567890123456789), ("1.50", "decimal", 1.5), ("+0.25", "decimal", 0.25),
    ("-007.5", "decimal", -7.5), ("123456789012345.125", "decimal", 123456789012345.125),
    ("1234567890123456.5", "decimal", 1234567890123456.5), ("0.100000000000000005551", "decimal", 0.1),
    ("2.5", "double", 2.5),
]


def test_numbers_of_every_form_are_the_values_the_line_reader_gives(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Integers and decimals of common forms cross as they are written (a
    plus sign dropped), the others as Python converts them: the same values
    and types either way, also as a graph's time."""
    path = tmp_path / "n.nq"
    with path.open("w") as f:
        for i, (lexical, datatype, _) in enumerate(NUMBERS):
            f.write(f'<http://ex.org/g{i}> {PROV_AT} "{i}"^^<{XSD}integer> .\n'
                    f'<http://ex.org/s> {P} "{lexical}"^^<{XSD}{datatype}> <http://ex.org/g{i}> .\n')
        f.write(f'<http://ex.org/t> {PROV_AT} "0100.250"^^<{XSD}decimal> .\n'
                f"<http://ex.org/s> {P} <http://ex.org/o> <http://ex.org/t> .\n")
    expected = [Detection("v", (f"http://ex.org/g{i}", "http://ex.org/s", value), i, i)
                for i, (_, _, value) in enumerate(NUMBERS)]
    expected.append(Detection("v", ("http://ex.org/t", "http://ex.org/s", "http://ex.org/o"), 100.25, 100.25))
    found, rejected, _ = read(path)
    assert (found, rejected) == (expected, [])
    assert [type(d.args[2]) for d in found] == [type(d.args[2]) for d in expected]
    assert type(found[-1].start) is float
    _no_bulk(monkeypatch)
    assert read(path) == (found, [], 1)


def test_long_graphs_keep_the_lines_after_them(tmp_path: Path) -> None:
    """A graph of more quads than the prepared gaps of graph_batch.pl (32
    lines): the lines after it keep their numbers."""
    path = tmp_path / "long.nq"
    with path.open("w") as f:
        for name, time, quads in (("g1", 5, 40), ("g2", 3, 70), ("g3", 6, 1), ("g4", 4, 33)):
            f.write(f'<http://ex.org/{name}> {PROV_AT} "{time}"^^<{XSD}integer> .\n')
            f.writelines(f"<http://ex.org/s{k}> {P} <http://ex.org/o{k}> <http://ex.org/{name}> .\n"
                         for k in range(quads))
    rules = ":- prefix(ex, 'http://ex.org/').\nn(N) <- graph(G) where graph_name(G, N).\n"
    for batch_lines in (10, 20_000):
        found, rejected, _ = read(path, batch_lines, rules=rules)
        assert found == [Detection("n", ("http://ex.org/g1",), 5, 5), Detection("n", ("http://ex.org/g3",), 6, 6)]
        assert [r.line for r in rejected] == [41 + 71, 41 + 71 + 2 + 34]
