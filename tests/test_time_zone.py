"""--time-zone: the zone of dates written without one (NOAA's local
standard time at JFK, a station's local clock), the same on every way a
table comes in: a CSV row at a time, a CSV or Parquet file a column at a
time, and the rows of a Spark replay partition."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etalis_py import cli
from etalis_py.spark.mapping import MapSpec, _map_rows
from etalis_py.spark.names import ROW, TIME
from etalis_py.inputs.streams import Mapping, parse_time
from reference.mapping import row_reader

# New York: 15:00 on a winter day is 20:00 UTC (EST, -5), on a summer day
# 19:00 UTC (EDT, -4); a text with its own offset keeps it.
WINTER, SUMMER = 1293393600, 1280775600     # 2010-12-26T20:00Z, 2010-08-02T19:00Z
CASES = [("26-12-2010 15:00", "%d-%m-%Y %H:%M", WINTER),
         ("02-08-2010 15:00", "%d-%m-%Y %H:%M", SUMMER),
         ("2010-12-26 15:00", None, WINTER),
         ("2010-08-02T15:00:00", None, SUMMER),
         ("2010-08-02T15:00:00+00:00", None, 1280761200),
         ("1280761200", None, 1280761200)]


@pytest.mark.parametrize("text,fmt,expected", CASES)
def test_a_date_without_a_zone_is_in_the_time_zone(text: str, fmt: str | None, expected: int) -> None:
    assert parse_time(text, fmt, "America/New_York") == expected
    mapping = Mapping(event="a", time="t", time_format=fmt, time_zone="America/New_York")
    row = pa.RecordBatch.from_arrays([pa.array([text]), pa.array([0], pa.int64())], names=["t", ROW])
    (mapped,) = _map_rows(MapSpec(mapping, ("t",), 1, False, (("a/0", -1),)))(iter([row]))
    assert mapped.column(TIME).to_pylist() == [expected]       # replay's mapping pass


def test_local_standard_time_is_a_fixed_offset_zone() -> None:
    """NOAA's LCD times are UTC-5 all year at JFK: Etc/GMT+5 (POSIX sign)."""
    assert parse_time("02-08-2010 15:00", "%d-%m-%Y %H:%M", "Etc/GMT+5") == SUMMER + 3600


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_run_reads_a_tables_dates_in_the_time_zone(suffix: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("both(X, Y) <- a(X) seq a(Y).\n")
    rows = [("1", "26-12-2010 15:00"), ("2", "26-12-2010 16:30")]
    stream = tmp_path / f"s{suffix}"
    if suffix == ".csv":
        stream.write_text("x,when\n" + "".join(f"{x},{t}\n" for x, t in rows))
    else:
        pq.write_table(pa.table({"x": [x for x, _ in rows], "when": [t for _, t in rows]}), stream)
    code = cli.main(["run", str(rules), "--events", str(stream), "--event", "a", "--args", "x",
                     "--time", "when", "--time-format", "%d-%m-%Y %H:%M", "--time-zone", "America/New_York"])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_OK, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"event": "both", "args": [1, 2], "start": WINTER, "end": WINTER + 5400}]


def test_a_csv_read_row_by_row_uses_the_time_zone() -> None:
    reader = row_reader(Mapping(event="a", args=("x",), time="when", time_zone="Asia/Tokyo"), ["x", "when"])
    assert reader(["1", "2010-12-27 05:00"]) == f"event(a(1), {float(WINTER)!r}).\n"


def test_an_unknown_time_zone_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("b(X) <- a(X).\n")
    stream = tmp_path / "s.csv"
    stream.write_text("x,when\n1,2010-12-26 15:00\n")
    code = cli.main(["run", str(rules), "--events", str(stream), "--event", "a", "--args", "x",
                     "--time", "when", "--time-zone", "America/Gotham"])
    out, err = capsys.readouterr()
    assert (code, out) == (cli.EXIT_FAILURE, "")
    assert err == ("etalis: unknown time zone 'America/Gotham': give an IANA name such as "
                   "'Europe/Berlin', or 'UTC'\n")
