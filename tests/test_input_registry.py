"""The input formats are one table (etalis_py.inputs.registry): a new format is a
module with its reader and one entry.  The toy format here, tab-separated
lines ``name<TAB>argument<TAB>time``, is registered from outside the
package (an entry point of the group etalis_py.inputs, as an installed
package would register it), and both ``etalis run`` and
``Engine.emit_file`` read it by its suffix, its bad lines rejected with
their line numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from etalis_py import Engine, cli
from etalis_py.inputs.lines import LineOffsets, after_newlines
from etalis_py.inputs.registry import BUILT_IN, by_name, formats, names, of_path

TOY = '''
from etalis_py.inputs.batch import batched
from etalis_py.events import NOTHING, Rejection
from etalis_py.inputs.lines import Lines
from etalis_py.inputs.registry import InputFormat


def read_tsv(chunks, mapping, reading):
    def items():
        for number, line in enumerate(Lines(chunks), start=1):
            fields = line.split("\\t")
            if len(fields) != 3:
                yield number + 1, NOTHING, Rejection(number, f"{len(fields)} fields, not name, argument and time")
            else:
                name, arg, time = fields
                yield number + 1, f"event({name}({arg}), {time})", None

    return batched(items(), 1, reading.batch_lines, listed=True)


FORMAT = InputFormat("tsv", (".tsv",), "toy_tsv:read_tsv")
'''

RULES = "c(X) <- a(X) seq b(X) within 10.\n"
EVENTS = "a\t1\t1\nb\t1\t2\nb 2 3\na\t2\t4\nb\t2\t5\n"


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The toy format's module and its entry point on the path; the rules
    and a stream of it."""
    (tmp_path / "toy_tsv.py").write_text(TOY)
    info = tmp_path / "toy_tsv-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-tsv\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[etalis_py.inputs]\ntsv = toy_tsv:FORMAT\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "rules.etl").write_text(RULES)
    (tmp_path / "s.tsv").write_text(EVENTS)
    return tmp_path


def test_a_registered_format_runs_through_etalis_run(toy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", str(toy / "rules.etl"), str(toy / "s.tsv")]) == cli.EXIT_OK
    out, err = capsys.readouterr()
    assert out == ('{"event": "c", "args": [1], "start": 1, "end": 2}\n'
                   '{"event": "c", "args": [2], "start": 4, "end": 5}\n')
    assert err.splitlines()[0] == f"{toy / 's.tsv'}:3: rejected: 1 fields, not name, argument and time"
    assert err.splitlines()[-1].startswith("events read: 5, accepted: 4, rejected: 1, detections: 2,")


def test_a_registered_format_runs_through_the_api(toy: Path) -> None:
    with Engine.from_string(RULES) as engine:
        result = engine.emit_file(toy / "s.tsv")
    assert [(d.event, d.args, d.start, d.end) for d in result.detections] == [("c", (1,), 1, 2), ("c", (2,), 4, 5)]
    assert [(r.line, r.reason) for r in result.rejected] == [(3, "1 fields, not name, argument and time")]
    assert result.accepted == 4


def test_a_registered_format_is_known_by_name_and_suffix(toy: Path) -> None:
    assert [f.name for f in formats()] == [*(f.name for f in BUILT_IN), "tsv"]
    assert by_name("tsv").suffixes == (".tsv",)
    assert of_path(Path("x.tsv")).name == "tsv"
    assert names() == ("events", "jsonl", "json", "csv", "parquet", "nquads", "trig", "jsonld", "tsv")


def test_the_built_in_formats_and_an_unknown_one() -> None:
    assert [(f.name, f.suffixes, f.spark) for f in BUILT_IN] == [
        ("events", (".events", ".pl"), "text"), ("jsonl", (".jsonl", ".json"), "json"), ("csv", (".csv",), "csv"),
        ("parquet", (".parquet",), "parquet"), ("nquads", (".nq",), None), ("trig", (".trig",), None),
        ("jsonld", (".jsonld",), None)]
    assert by_name("json").name == "jsonl"
    with pytest.raises(ValueError) as e:
        by_name("xml")
    assert str(e.value) == ("unknown input format 'xml': use one of events, jsonl, json, csv, parquet, nquads, trig, "
                            "jsonld")
    with pytest.raises(ValueError) as e:
        of_path(Path("x.xml"))
    assert str(e.value) == ("unknown stream file type '.xml': use .events, .pl, .jsonl, .json, .csv, .parquet, .nq, "
                            ".trig or .jsonld, or give --input-format")


def test_emit_file_reads_a_table_with_the_options_of_run(tmp_path: Path) -> None:
    table = tmp_path / "s.csv"
    table.write_text("name,k,t\na,1,1\nb,1,2\nb,,3\nb\n")
    with Engine.from_string(RULES) as engine:
        result = engine.emit_file(table, event_col="name", args=["k"], time="t")
        assert engine.stats().rejected == 2
    assert [(d.event, d.args, d.start, d.end) for d in result.detections] == [("c", (1,), 1, 2)]
    assert [(r.line, r.reason) for r in result.rejected] == [(4, "column 'k' is empty"),
                                                             (5, "1 fields where the header has 3")]


def test_the_byte_after_a_count_of_newlines() -> None:
    data = b"a\nbb\n\nccc\n"
    assert [after_newlines(data, 0, n) for n in (1, 2, 3, 4, 5)] == [2, 5, 6, 10, None]
    assert after_newlines(data, 2, 2) == 6
    long = b"x" * 70_000 + b"\n" + b"y\n" * 3      # the newlines after the first block
    assert after_newlines(long, 0, 1) == 70_001
    assert after_newlines(long, 0, 4) == len(long)
    assert after_newlines(long, 10, 5) is None


def test_line_offsets_give_the_byte_where_each_asked_line_starts() -> None:
    chunks = [b"l1\nl2\n", b"l3\nline4\nl5\n", b"l6\n"]
    offsets = LineOffsets(chunks, first_line=1, start=100)
    assert list(offsets) == chunks
    assert [offsets.offset(line) for line in (1, 3, 4, 5, 6, 7, 9)] == [100, 106, 109, 115, 118, 121, 121]
