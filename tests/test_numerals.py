"""Only ASCII decimal numerals are numbers in text fields: a CSV or Parquet
cell, a JSONL or DataFrame time, a formatted time.  Python's int() and
float() also read other scripts' digits ('١٢٣' is 123 to them) and digit
groups ('1_000'); such texts stay texts (an argument) or are rejected (a
time), as pandas and Spark read them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etalis_py import Engine, cli
from etalis_py.events import read_number
from etalis_py.inputs.streams import parse_formatted_time
from etalis_py.inputs.tables import parse_cell
from etalis_py.errors import EventError

RULES = "h(N, V) <- a(N, V).\n"

# argument cells and what they become
CELLS = [("arabic", "١٢٣", "١٢٣"), ("arabic_dot", "٥.٥", "٥.٥"), ("grouped", "1_000", "1_000"),
         ("superscript", "²", "²"), ("plain", " 12 ", 12), ("signed", "+5", 5), ("exponent", "1e3", 1000.0),
         ("dot_first", ".5", 0.5), ("dot_last", "5.", 5.0), ("zeros", "007", 7)]


@pytest.mark.parametrize("text, number", [("١٢٣", None), ("٥.٥", None), ("1_000", None), ("²", None),
                                          ("1_0.5", None), ("0x10", None), ("", None), (".", None),
                                          (" 12 ", 12), ("+5", 5), ("-0.5e-1", -0.05), ("5.", 5.0)])
def test_read_number_takes_only_ascii_numerals(text: str, number: object) -> None:
    assert read_number(text) == number
    assert type(read_number(text)) is type(number)


def test_read_number_reads_infinity_and_nan_to_reject_them() -> None:
    assert read_number("-Infinity") == float("-inf")
    with pytest.raises(EventError, match=r"^column 'v': 'nan' is not a finite number$"):
        parse_cell("nan", "v")


def test_csv_cells_in_other_digits_stay_texts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.etl"
    rules.write_text(RULES)
    stream = tmp_path / "u.csv"
    stream.write_text("name,v,t\n" + "".join(f"{n},{v},{i}\n" for i, (n, v, _) in enumerate(CELLS, 1)),
                      encoding="utf-8")
    code = cli.main(["run", str(rules), "--events", str(stream), "--event", "a", "--args", "name,v", "--time", "t"])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_OK, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"event": "h", "args": [n, v], "start": i, "end": i} for i, (n, _, v) in enumerate(CELLS, 1)]


def test_parquet_text_cells_in_other_digits_stay_texts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.etl"
    rules.write_text(RULES)
    stream = tmp_path / "u.parquet"
    pq.write_table(pa.table({"name": [n for n, _, _ in CELLS], "v": [v for _, v, _ in CELLS],
                             "t": list(range(1, len(CELLS) + 1))}), stream)
    code = cli.main(["run", str(rules), "--events", str(stream), "--event", "a", "--args", "name,v", "--time", "t"])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_OK, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"event": "h", "args": [n, v], "start": i, "end": i} for i, (n, _, v) in enumerate(CELLS, 1)]


def test_times_in_other_digits_are_rejected_in_csv_jsonl_and_formats(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.etl"
    rules.write_text(RULES)
    csv_stream = tmp_path / "t.csv"
    csv_stream.write_text("name,v,t\nx,1,٤\ny,2,٥.٥\nz,3,1_0\nw,4,12\n", encoding="utf-8")
    code = cli.main(["run", str(rules), "--events", str(csv_stream), "--event", "a", "--args", "name,v",
                     "--time", "t"])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_OK, err
    assert [json.loads(line) for line in out.splitlines()] == [{"event": "h", "args": ["w", 4], "start": 12, "end": 12}]
    assert err.splitlines()[:3] == [
        f"{csv_stream}:2: rejected: time '٤' is not a number or an ISO 8601 date; give --time-format",
        f"{csv_stream}:3: rejected: time '٥.٥' is not a number or an ISO 8601 date; give --time-format",
        f"{csv_stream}:4: rejected: time '1_0' is not a number or an ISO 8601 date; give --time-format"]
    assert err.splitlines()[3].startswith("events read: 4, accepted: 1, rejected: 3, detections: 1,")

    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text('{"event": "a", "args": ["x", "١٢"], "time": "٣"}\n'
                     '{"event": "a", "args": ["x", "١٢"], "time": "20"}\n', encoding="utf-8")
    code = cli.main(["run", str(rules), "--events", str(jsonl)])
    out, err = capsys.readouterr()
    assert [json.loads(line) for line in out.splitlines()] == [
        {"event": "h", "args": ["x", "١٢"], "start": 20, "end": 20}]
    assert err.splitlines()[0] == f"{jsonl}:1: rejected: time '٣' is not a number or an ISO 8601 date"

    with pytest.raises(EventError, match=r"^time '2024-01-0١' does not match the format '%Y-%m-%d'$"):
        parse_formatted_time("2024-01-0١", "%Y-%m-%d")
    with pytest.raises(EventError, match=r"^time '2024-01-0١' does not match the format '%Y-%m-%d'$"):
        parse_formatted_time("2024-01-0١", "%Y-%m-%d", "Europe/Berlin")   # strptime's way


def test_emit_frame_rejects_a_time_in_other_digits() -> None:
    frame = pd.DataFrame({"name": ["x", "y"], "v": [1, 2], "t": ["٣", "7"]})
    with Engine.from_string(RULES) as engine:
        result = engine.emit_frame(frame, event="a", args=["name", "v"], time="t")
    assert [d.to_dict() for d in result.detections] == [{"event": "h", "args": ["y", 2], "start": 7, "end": 7}]
    assert [(r.line, r.reason) for r in result.rejected] == [
        (1, "column 't': time '٣' is not a number or an ISO 8601 date")]
