"""Every way events come in gives the same detections and rejects the same
rows: one small stream (quoted and unicode atoms, a prefixed name, negative
and float numbers, ISO times with and without an offset, rows that Python
rejects and a row that the engine rejects) through Engine.emit_many,
Engine.emit_frame and `etalis run` on .events, .csv, .jsonl and .parquet."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Optional

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etalis_py import Engine, cli
from etalis_py.bridge._prolog import bridge
from etalis_py.inputs.streams import Mapping, read_batches
from reference.mapping import row_reader


@pytest.fixture(autouse=True, params=["columns", "text"])
def hand_over(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with events crossing into Prolog as packed columns
    (the foreign library, which must be available here) and as text."""
    if request.param == "text":
        monkeypatch.setenv("ETALIS_TEXT_PATH", "1")
    else:
        monkeypatch.delenv("ETALIS_TEXT_PATH", raising=False)
        assert bridge().columns()
    return str(request.param)


# the forms of an event line, in the reason of a .events line that does not read
FORMS = ("an event line is a(1). or event(a(1), 5). or event(a(1), [5, 7]). with times in seconds; "
         "dates can be given in .jsonl or .csv files")

RULES = """\
:- prefix(ex, 'http://example.org/#').
c(K, V, W) <- a(K, V) seq b(K, W) within 100.
known(V) <- a(K, V) where K == ex:o1.
"""

T0 = 1704067200    # 2024-01-01T00:00:00Z

# name, key, value, time: as Python values, and as the text a CSV field holds
ROWS: list[tuple[str, str, Any, Any]] = [
    ("a", "it's", -2.5, "2024-01-01T00:00:00Z"),
    ("b", "it's", 3, "2024-01-01T00:00:01Z"),
    ("a", "café", 1e-05, "2024-01-01T00:00:02+01:00"),  # an hour earlier: the engine rejects it
    ("a", "ex:o1", 7, T0 + 3),
    ("b", "café", None, T0 + 4),                         # no value: Python rejects it
    ("b", "ex:o1", -4, "2024-01-01T00:00:04Z"),
    ("a", "Hello World", 1.5, "not a time"),             # Python rejects it
    ("b", "Hello World", 2, T0 + 10.5),
    ("a", "東京", 0.1, T0 + 11),
    ("b", "東京", 10**20, T0 + 12),
]

IRI = "http://example.org/#o1"
DETECTIONS = [
    {"event": "c", "args": ["it's", -2.5, 3], "start": T0 + 0.0, "end": T0 + 1.0},
    {"event": "known", "args": [7], "start": T0 + 3, "end": T0 + 3},
    {"event": "c", "args": [IRI, 7, -4], "start": T0 + 3, "end": T0 + 4.0},
    {"event": "c", "args": ["東京", 0.1, 10**20], "start": T0 + 11, "end": T0 + 12},
]
ENGINE_REJECTS = "time 1704063602.0 is earlier than the last accepted time 1704067201.0 (events must arrive in time order)"
# etalis run says the times as the file writes them, and what --lateness does
LATE = "(events must arrive in time order; --lateness SECONDS accepts events up to that late)"
RUN_REJECTS_SECONDS = f"time 1704063602.0 is earlier than the last accepted time 1704067201.0 {LATE}"
RUN_REJECTS_DATES = f"time 2023-12-31T23:00:02Z is earlier than the last accepted time 2024-01-01T00:00:01Z {LATE}"


def text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else repr(value)


def events_file(path: Path) -> None:
    """The stream as Prolog terms (times as numbers: .events has no dates)."""
    lines = []
    for name, key, value, time in ROWS:
        seconds = pd.Timestamp(time).timestamp() if isinstance(time, str) and time[0] == "2" else time
        arg = "_" if value is None else repr(value)
        when = f"'{time}'" if isinstance(seconds, str) else repr(seconds)
        lines.append(f"event({name}('{key.replace(chr(39), chr(92) + chr(39))}', {arg}), {when}).\n")
    path.write_text("".join(lines), encoding="utf-8")


def csv_file(path: Path) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", "key", "value", "time"])
    for row in ROWS:
        writer.writerow([text(v) for v in row])
    path.write_text(out.getvalue(), encoding="utf-8")


def jsonl_file(path: Path) -> None:
    path.write_text("".join(json.dumps({"event": n, "args": [k, v], "time": t}, ensure_ascii=False) + "\n"
                            for n, k, v, t in ROWS), encoding="utf-8")


def parquet_file(path: Path) -> None:
    """The table with each column as the texts of the CSV file."""
    columns = list(zip(*ROWS))
    table = pa.table({name: pa.array([None if v is None else text(v) for v in values], pa.string())
                      for name, values in zip(("name", "key", "value", "time"), columns)})
    pq.write_table(table, path)


MAPPING = ["--event-col", "name", "--args", "key,value", "--time", "time"]
WRITERS = {".events": events_file, ".csv": csv_file, ".jsonl": jsonl_file, ".parquet": parquet_file}

EXPECTED_REJECTIONS: dict[str, list[tuple[int, str]]] = {
    ".events": [(3, RUN_REJECTS_SECONDS), (5, "event b(café,_) has unbound variables"),
                (7, f"time 'not a time' is not a number or [Start, End] ({FORMS})")],
    ".csv": [(4, RUN_REJECTS_DATES), (6, "column 'value' is empty"),
             (8, "time 'not a time' is not a number or an ISO 8601 date; give --time-format")],
    ".jsonl": [(3, RUN_REJECTS_DATES), (5, "an argument is missing (None)"),
               (7, "time 'not a time' is not a number or an ISO 8601 date")],
    ".parquet": [(3, RUN_REJECTS_DATES), (5, "column 'value' is empty"),
                 (7, "time 'not a time' is not a number or an ISO 8601 date; give --time-format")],
}


@pytest.mark.parametrize("suffix", sorted(WRITERS))
def test_etalis_run_on_every_format(suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.etl"
    rules.write_text(RULES)
    stream = tmp_path / f"stream{suffix}"
    WRITERS[suffix](stream)
    options = MAPPING if suffix in (".csv", ".parquet") else []
    code = cli.main(["run", str(rules), "--events", str(stream), *options])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_OK, err
    assert [json.loads(line) for line in out.splitlines()] == DETECTIONS
    *rejections, last = err.splitlines()
    assert rejections == [f"{stream}:{line}: rejected: {reason}" for line, reason in EXPECTED_REJECTIONS[suffix]]
    assert last.startswith("events read: 10, accepted: 7, rejected: 3, detections: 4,")


def detections_of(result: Any) -> list[dict[str, Any]]:
    return [d.to_dict() for d in result.detections]


@pytest.mark.parametrize("batch_size", [1, 4, 10_000])
def test_emit_many_and_emit_frame(batch_size: int) -> None:
    python_rejects = [(3, ENGINE_REJECTS), (5, "an argument is missing (None)"),
                      (7, "time 'not a time' is not a number or an ISO 8601 date")]
    with Engine.from_string(RULES) as engine:
        result = engine.emit_many([(n, (k, v), t) for n, k, v, t in ROWS], batch_size)
        assert detections_of(result) == DETECTIONS
        assert [(r.line, r.reason) for r in result.rejected] == python_rejects
        assert result.accepted == 7
    frame = pd.DataFrame(ROWS, columns=["name", "key", "value", "time"]).astype(object)
    with Engine.from_string(RULES) as engine:
        result = engine.emit_frame(frame, event_col="name", args=["key", "value"], time="time",
                                   batch_size=batch_size)
        assert detections_of(result) == DETECTIONS
        assert [(r.line, r.reason) for r in result.rejected] == [
            (3, ENGINE_REJECTS), (5, "column 'value' is missing"),
            (7, "column 'time': time 'not a time' is not a number or an ISO 8601 date")]
        assert result.accepted == 7


def test_a_batch_list_that_does_not_read_is_fed_line_by_line() -> None:
    """A batch list whose text does not read as its list of terms (here a
    term with an unclosed bracket) is fed as lines: the bad line is
    rejected with the reason etalis run gives, the others are processed."""
    with Engine.from_string(RULES) as engine:
        result = engine.feed_text("[event(a(k, 1), 1),\nevent(b(k, 2), 2,\n[],\nevent(b(k, 3), 3)]", 1, 4)
        assert result.accepted == 2
        assert [(r.line, r.reason) for r in result.rejected] == [(2, f"syntax error: operator expected at column 17 ({FORMS})")]
        assert [json.loads(line) for line in result.detection_lines.splitlines()] == [
            {"event": "c", "args": ["k", 1, 3], "start": 1, "end": 3}]


def parquet_rows(tmp_path: Path, rows: list[tuple[Optional[str], Any, Any]]) -> Path:
    path = tmp_path / "typed.parquet"
    pq.write_table(pa.table({"key": pa.array([r[0] for r in rows], pa.string()),
                             "value": pa.array([r[1] for r in rows], pa.float64()),
                             "time": pa.array([r[2] for r in rows], pa.int64())}), path)
    return path


def test_typed_parquet_columns_read_as_their_csv_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Floats stay floats (5.0, not 5), ints ints; a null, a NaN and a blank
    row are treated as the empty field, "nan" and the blank line of a CSV."""
    rules = tmp_path / "rules.etl"
    rules.write_text("c(K, V, W) <- a(K, V) seq a(K, W) within 10.\n")
    stream = parquet_rows(tmp_path, [("k", 5.0, 1), ("k", None, 2), ("k", float("nan"), 3),
                                     (None, None, None), ("k", -0.5, 5)])
    code = cli.main(["run", str(rules), "--events", str(stream), "--event", "a", "--args", "key,value",
                     "--time", "time"])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_OK, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"event": "c", "args": ["k", 5.0, -0.5], "start": 1, "end": 5}]
    *rejections, last = err.splitlines()
    assert rejections == [f"{stream}:2: rejected: column 'value' is empty",
                          f"{stream}:3: rejected: column 'value': 'nan' is not a finite number"]
    assert last.startswith("events read: 4, accepted: 2, rejected: 2, detections: 1,")


def test_a_binary_parquet_column_is_rejected_row_by_row_not_read_as_python_text(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Its bytes were the argument "b'\\xff\\x00'": the Python repr.
    rules = tmp_path / "rules.etl"
    rules.write_text("c(K, V) <- a(K, V).\n")
    stream = tmp_path / "binary.parquet"
    pq.write_table(pa.table({"key": pa.array([b"\xff\x00", b"ok", None, b"x" * 100], pa.binary()),
                             "value": pa.array([1, 2, 3, 4], pa.int64()),
                             "time": pa.array([1, 2, 3, 4], pa.int64())}), stream)
    text = tmp_path / "text.parquet"
    pq.write_table(pa.table({"key": ["k"], "value": [5], "time": [5]}), text)
    for path in (stream, text):
        assert cli.main(["run", str(rules), "--events", str(path), "--event", "a", "--args", "key,value",
                         "--time", "time"]) == cli.EXIT_OK
    out, err = capsys.readouterr()
    assert [json.loads(line) for line in out.splitlines()] == [{"event": "c", "args": ["k", 5], "start": 5, "end": 5}]
    lines = err.splitlines()
    assert lines[:3] == [
        f"{stream}:1: rejected: column 'key': argument b'\\xff\\x00' of type bytes cannot be an event argument",
        f"{stream}:2: rejected: column 'key': argument b'ok' of type bytes cannot be an event argument",
        f"{stream}:3: rejected: column 'key' is empty"]
    assert lines[3] == (f"{stream}:4: rejected: column 'key': argument b'xxxxxxxxxxx...xxxxxxxxxxxxx' of type bytes "
                        "cannot be an event argument")
    assert lines[4].startswith("events read: 4, accepted: 0, rejected: 4, detections: 0,")


def test_a_csv_quote_never_closed_names_the_lines_it_takes_in(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # The lines after the quote were read into its field and vanished: the
    # rejection said only "2 fields where the header has 3".
    rules = tmp_path / "rules.etl"
    rules.write_text("c(X) <- a(X).\n")
    stream = tmp_path / "quote.csv"
    stream.write_text('event,x,time\na,1,1\na,"4,3\na,5,5\na,6,6\n', encoding="utf-8")
    assert cli.main(["run", str(rules), "--events", str(stream), "--event-col", "event", "--args", "x",
                     "--time", "time"]) == cli.EXIT_OK
    out, err = capsys.readouterr()
    assert [json.loads(line) for line in out.splitlines()] == [{"event": "c", "args": [1], "start": 1, "end": 1}]
    rejection, summary = err.splitlines()
    assert rejection == (f"{stream}:3: rejected: 2 fields where the header has 3 (a quoted field runs on to line 5: "
                         "lines 4 to 5 are part of this row, not rows of their own)")
    assert summary.startswith("events read: 2, accepted: 1, rejected: 1, detections: 1,")


# -- the shared weather data: each table read a column at a time, as Parquet,
#    and a row at a time (reference.mapping.row_reader, the definition) ----------------

DATA = Path(__file__).resolve().parents[1] / "data" / "weather"
CHARLEY_COLUMNS = ("SAMPLINGTIME,STATIONID,WINDSPEED,RELATIVEHUMIDITY,AIRTEMPERATURE,PRECIPITATION,DEWPOINT,"
                   "WINDDIRECTION,WINDGUST,PRECIPITATIONACCUMULATED,PRESSURE,PRECIPITATIONSMOOTHED,"
                   "SOILTEMPERATURE,VISIBILITY,PEAKWINDSPEED,WATERTEMPERATURE,PEAKWINDDIRECTION").split(",")
TABLES = {
    "jfk": ("noaa-jfk-hourly-2010-2018.csv", "seen(V, W) <- reading(V, W).\n",
            Mapping(event="reading", args=("VISIBILITY", "WindSpeed"), time="DATE", time_format="%d-%m-%Y %H:%M")),
    "charley": ("lsd-charley-2004-08-08-obs.csv", "seen(S, W, T, H) <- obs(S, W, T, H).\n",
                Mapping(event="obs", args=("STATIONID", "WINDSPEED", "AIRTEMPERATURE", "RELATIVEHUMIDITY"),
                        time="SAMPLINGTIME", time_format="%Y-%m-%d %H:%M:%S.%f+0:00",
                        columns=tuple(CHARLEY_COLUMNS))),
}


def fed(rules: str, batches: Any) -> tuple[list[str], list[tuple[int, str]]]:
    """Every accepted event as the engine reports it (a rule per event
    that reports it), and every rejection."""
    detections: list[str] = []
    rejected: list[tuple[int, str]] = []
    with Engine.from_string(rules) as engine:
        for text, first, terms, python_rejects in batches:
            result = engine.feed_text(text, first, terms)
            detections += result.detection_lines.splitlines()
            rejected += [(r.line, r.reason) for r in python_rejects + result.rejected]
    return detections, sorted(rejected)


def row_by_row(path: Path, mapping: Mapping) -> list[tuple[str, int, None, list[Any]]]:
    """The file as etalis run read it before the column reader: each row's
    line from reference.mapping.row_reader, an empty line for a rejected row."""
    from etalis_py.events import Rejection
    from etalis_py.errors import EventError

    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = list(mapping.columns) if mapping.columns else [h.strip() for h in next(reader)]
        first = 1 if mapping.columns else 2
        read = row_reader(mapping, header)
        lines: list[str] = []
        rejected: list[Any] = []
        for i, row in enumerate(reader):
            try:
                lines.append(read(row))
            except EventError as e:
                lines.append("\n")
                rejected.append(Rejection(first + i, str(e)))
    return [("".join(lines), first, None, rejected)]


@pytest.mark.parametrize("table", sorted(TABLES))
def test_the_weather_tables_read_alike_by_column_as_parquet_and_row_by_row(table: str, tmp_path: Path) -> None:
    name, rules, mapping = TABLES[table]
    path = DATA / name
    by_row = fed(rules, row_by_row(path, mapping))
    by_column = fed(rules, [(b.text, b.first_line, b.terms, b.rejected) for b in read_batches(path, mapping)])
    assert by_column == by_row
    columns = list(mapping.columns) if mapping.columns else None
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, header=None if columns else "infer", names=columns)
    parquet = tmp_path / "table.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), parquet)
    by_parquet = fed(rules, [(b.text, b.first_line, b.terms, b.rejected) for b in read_batches(parquet, mapping)])
    first = 1 if columns else 2             # a CSV's rows start after its header, a Parquet file's at 1
    assert by_parquet == (by_row[0], [(line - first + 1, reason) for line, reason in by_row[1]])
    assert len(by_row[0]) > 9000
