"""Replay over Spark (local mode): the same detections as `etalis run`, every
row accounted for, retries without duplicates, atomic output."""

from __future__ import annotations

import collections
import csv
import dataclasses
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from io import StringIO
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pyspark
import pytest
from pyspark.sql import DataFrame, SparkSession

from etalis_py import cli
from etalis_py.spark import ReplayResult, driver, replay, session

pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "weather"
JFK = DATA / "noaa-jfk-hourly-2010-2018.csv"
CHARLEY_OBS = DATA / "lsd-charley-2004-08-08-obs.csv"
BLIZZARD = ROOT / "examples" / "blizzard" / "blizzard.etl"
CHARLEY = ROOT / "examples" / "charley" / "charley.etl"
CHARLEY_COLUMNS = ("SAMPLINGTIME,STATIONID,WINDSPEED,RELATIVEHUMIDITY,AIRTEMPERATURE,PRECIPITATION,DEWPOINT,"
                   "WINDDIRECTION,WINDGUST,PRECIPITATIONACCUMULATED,PRESSURE,PRECIPITATIONSMOOTHED,"
                   "SOILTEMPERATURE,VISIBILITY,PEAKWINDSPEED,WATERTEMPERATURE,PEAKWINDDIRECTION")
CHARLEY_MAPPING = ["--columns", CHARLEY_COLUMNS, "--event", "obs",
                   "--args", "STATIONID,WINDSPEED,AIRTEMPERATURE,RELATIVEHUMIDITY",
                   "--time", "SAMPLINGTIME", "--time-format", "%Y-%m-%d %H:%M:%S.%f+0:00"]
JFK_MAPPING = ["--event", "reading", "--args", "VISIBILITY,WindSpeed", "--time", "DATE",
               "--time-format", "%d-%m-%Y %H:%M"]


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One local Spark for all these tests: 2 cores, up to 4 attempts a task."""
    s = session("local[2,4]", {"spark.sql.session.timeZone": "UTC"})
    yield s
    s.stop()


def etalis_run(rules: Path, events: Path, mapping: Sequence[str]) -> tuple[list[str], str]:
    """`etalis run`'s detection lines and summary line (a --partition-by is left out)."""
    options = [x for i, x in enumerate(mapping)
               if x != "--partition-by" and (i == 0 or mapping[i - 1] != "--partition-by")]
    ns = cli.parser().parse_args(["run", str(rules), "--events", str(events), "--quiet", *options])
    out, err = StringIO(), StringIO()
    assert cli.run(ns, out, err) == 0, err.getvalue()
    return out.getvalue().splitlines(keepends=True), err.getvalue().splitlines()[-1]


def kwargs(mapping: Sequence[str]) -> dict[str, Any]:
    """replay() keywords from `etalis run` mapping options."""
    names = {"--event": "event", "--event-col": "event_col", "--args": "args", "--time": "time",
             "--time-format": "time_format", "--columns": "columns", "--partition-by": "partition_by"}
    out: dict[str, Any] = {}
    for opt, value in zip(mapping[::2], mapping[1::2]):
        out[names[opt]] = value.split(",") if opt in ("--args", "--columns") else value
    return out


def test_replay_of_jfk_blizzard_rules_gives_exactly_the_lines_of_etalis_run(spark: SparkSession) -> None:
    expected, summary = etalis_run(BLIZZARD, JFK, JFK_MAPPING)
    assert expected == ['{"event": "blizzard", "args": [1293396660.0, 1293407460.0], '
                        '"start": 1293396660.0, "end": 1293407460.0}\n']
    assert summary.startswith("events read: 75083, accepted: 75083, rejected: 0, detections: 1,")
    result = replay(JFK, BLIZZARD, spark=spark, **kwargs(JFK_MAPPING))
    assert list(result.detection_lines()) == expected
    assert (result.rows, result.events, result.rejected_rows, result.detection_count) == (75083, 75083, 0, 1)
    assert [(s.number, s.partitioning, s.events_in) for s in result.stages] == [
        (1, "global (one partition: its rules join events that share no key)", 75083)]
    assert [tuple(r) for r in result.detections.collect()] == [
        ("blizzard", 1293396660.0, 1293407460.0,
         datetime(2010, 12, 26, 20, 51), datetime(2010, 12, 26, 23, 51))]
    assert result.detections.columns == ["event", "arg1", "arg2", "start", "end"]
    result.unpersist()


def test_replay_of_charley_per_station_and_cross_station_rules_matches_etalis_run(spark: SparkSession) -> None:
    expected, summary = etalis_run(CHARLEY, CHARLEY_OBS, CHARLEY_MAPPING)
    assert summary.startswith("events read: 10030, accepted: 9800, rejected: 230, detections: 212,")
    assert collections.Counter(json.loads(x)["event"] for x in expected) == {
        "windy": 100, "jump": 63, "widespread": 28, "area_jump": 21}
    result = replay(CHARLEY_OBS, CHARLEY, spark=spark, partition_by="STATIONID", partitions=8,
                    **kwargs(CHARLEY_MAPPING))
    lines = list(result.detection_lines())
    assert collections.Counter(lines) == collections.Counter(expected)
    assert lines == expected            # in etalis run's order, too
    assert (result.rows, result.events, result.rejected_rows) == (10030, 9800, 230)
    assert result.rows == result.events + result.rejected_rows
    assert [(s.number, s.partitioning, s.events_in, s.detections, s.passed_on) for s in result.stages] == [
        (1, "partitioned by STATIONID", 9800, 163, 63),
        (2, "partitioned by argument 2 of jump/4", 63, 21, 21),
        (3, "global (one partition: its rules join events that share no key)", 21, 28, 0),
    ]
    first = result.stages[0]
    assert first.tasks == 8 and first.compiled <= 2     # compiled once per worker process, not per partition
    reasons = collections.Counter(r["reason"] for r in result.rejected.select("reason").collect())
    assert reasons == {"column 'RELATIVEHUMIDITY' is empty": 202, "column 'AIRTEMPERATURE' is empty": 28}
    assert result.detections.columns == ["key", "event", "args", "start", "end"]
    keyed = result.detections.filter("key is not null").count()
    assert keyed == 163                 # stage 1's detections carry their station
    result.unpersist()


BAD_ROWS = (
    "when,station,temp\n"
    "2020-01-01 00:00,KJFK,31.5\n"
    "2020-01-01 01:00,KJFK,\n"
    "yesterday,KJFK,40\n"
    "2020-01-01 02:00,KLGA,29\n"
    "2020-01-01 03:00,KLGA,33,extra\n"
    "2020-01-01 04:00,KLGA,35\n"
    ",KJFK,50\n"
    "2020-01-01 05:00,KJFK,nan\n"
)
HOT = "hot(S, T) <- reading(S, T) where T > 30.\n"
HOT_MAPPING = ["--event", "reading", "--args", "station,temp", "--time", "when", "--time-format", "%Y-%m-%d %H:%M"]


def test_replay_accounts_for_every_row_and_keeps_rejected_rows_with_their_values(
        spark: SparkSession, tmp_path: Path) -> None:
    data = tmp_path / "obs.csv"
    data.write_text(BAD_ROWS)
    rules = tmp_path / "hot.etl"
    rules.write_text(HOT)
    expected, summary = etalis_run(rules, data, HOT_MAPPING)
    assert summary.startswith("events read: 8, accepted: 3, rejected: 5, detections: 2,")
    result = replay(data, rules, spark=spark, partition_by="station", **kwargs(HOT_MAPPING))
    assert list(result.detection_lines()) == expected == [
        '{"event": "hot", "args": ["KJFK", 31.5], "start": 1577836800.0, "end": 1577836800.0}\n',
        '{"event": "hot", "args": ["KLGA", 35], "start": 1577851200.0, "end": 1577851200.0}\n']
    assert (result.rows, result.events, result.rejected_rows) == (8, 3, 5)
    assert [(r["when"], r["station"], r["temp"], r["_corrupt_record"], r["reason"])
            for r in result.rejected.collect()] == [
        ("2020-01-01 01:00", "KJFK", None, None, "column 'temp' is empty"),
        ("yesterday", "KJFK", "40", None, "time 'yesterday' does not match the format '%Y-%m-%d %H:%M'"),
        ("2020-01-01 03:00", "KLGA", "33", "2020-01-01 03:00,KLGA,33,extra", "4 fields where the header has 3"),
        (None, "KJFK", "50", None, "column 'when' is empty"),
        ("2020-01-01 05:00", "KJFK", "nan", None, "column 'temp': 'nan' is not a finite number"),
    ]
    assert [tuple(r) for r in result.detections.collect()] == [
        ("KJFK", "hot", "[\"KJFK\", 31.5]", datetime(2020, 1, 1, 0, 0), datetime(2020, 1, 1, 0, 0)),
        ("KLGA", "hot", "[\"KLGA\", 35]", datetime(2020, 1, 1, 4, 0), datetime(2020, 1, 1, 4, 0)),
    ]
    result.unpersist()


def test_a_later_stage_reads_input_events_as_well_as_derived_ones(spark: SparkSession, tmp_path: Path) -> None:
    data = area_data(tmp_path / "area.csv", 400)
    rules = tmp_path / "mixed.etl"
    rules.write_text(
        "rise(S, A, V1, V2) <- (r(S, A, V1) seq r(S, A, V2)) within 30 where V2 >= V1 + 5.\n"
        "high(S) <- r(S, _, V) where V >= 19.\n"
        "busy(A, N) <- aggregate(count, r(_, A, _), time(3), N) where N >= 6.\n"
        "rise_after_high(S1, S2) <- (high(S1) seq rise(S2, _, _, _)) within 5 where S1 \\== S2.\n")
    expected, _ = etalis_run(rules, data, AREA_MAPPING)
    assert collections.Counter(json.loads(x)["event"] for x in expected) == {
        "rise": 288, "busy": 52, "high": 20, "rise_after_high": 19}
    result = replay(data, rules, spark=spark, partitions=3, **kwargs(AREA_MAPPING))
    assert [(s.number, s.partitioning, s.rules) for s in result.stages] == [
        (1, "partitioned by sensor", ("line 1", "line 2")),
        (2, "partitioned by argument 2 of r/3", ("line 3",)),
        (3, "global (one partition: its rules join events that share no key)", ("line 4",)),
    ]
    assert list(result.detection_lines()) == expected
    assert (result.rows, result.events, result.rejected_rows) == (400, 400, 0)
    result.unpersist()


def test_replay_ships_background_knowledge_to_the_workers(spark: SparkSession, tmp_path: Path) -> None:
    rules = tmp_path / "fire.etl"
    rules.write_text(
        ":- prefix(wt, 'http://example.org/etalis-py/weather#').\n"
        "enhanced_fire(Area) <- (active_fire(Area, _) and weather_observation(Area, Obs)) within hours(3)\n"
        "    where isa(Obs, wt:'WindObservation').\n")
    obs = "http://example.org/etalis-py/observations#observ_"
    data = tmp_path / "fire.csv"
    data.write_text(
        "kind,area,obs,t\n"
        f"active_fire,napa,none,0\nweather_observation,napa,{obs}3,1800\nweather_observation,napa,{obs}1,3600\n"
        f"weather_observation,sonoma,{obs}2,5400\nactive_fire,sonoma,none,7200\n"
        f"weather_observation,napa,{obs}2,14400\n")
    ontologies = [ROOT / "ontologies" / "weather.ttl", ROOT / "examples" / "enhanced_fire" / "observations.ttl"]
    mapping = ["--event-col", "kind", "--args", "area,obs", "--time", "t"]
    expected, _ = etalis_run(rules, data, [*mapping, *(x for o in ontologies for x in ("--ontology", str(o)))])
    assert expected == ['{"event": "enhanced_fire", "args": ["napa"], "start": 0, "end": 3600}\n',
                        '{"event": "enhanced_fire", "args": ["sonoma"], "start": 5400, "end": 7200}\n']
    result = replay(data, rules, spark=spark, partition_by="area", ontology=ontologies, **kwargs(mapping))
    assert result.stages[0].partitioning == "partitioned by area"
    assert list(result.detection_lines()) == expected
    result.unpersist()


def test_replay_of_a_typed_dataframe_gives_typed_columns(spark: SparkSession, tmp_path: Path) -> None:
    def at(h: int) -> datetime:
        return datetime(2024, 5, 1, h, tzinfo=timezone.utc)

    df = spark.createDataFrame(
        [(at(1), "a", 10, 1.5), (at(2), "b", 20, 1.0), (at(3), "a", 11, 2.5), (at(4), "b", 21, 0.5),
         (None, "a", 12, 9.0), (at(5), "a", 13, float("nan"))],
        "ts timestamp, k string, n long, x double")
    rules = "up(K, N1, N2) <- m(K, N1, X1) seq m(K, N2, X2) where X2 > X1.\n"
    result = replay(df, rules, event="m", args=["k", "n", "x"], time="ts", partition_by="k", spark=spark)
    assert result.detections.columns == ["key", "event", "arg1", "arg2", "arg3", "start", "end"]
    assert [f.dataType.simpleString() for f in result.detections.schema.fields] == [
        "string", "string", "string", "bigint", "bigint", "timestamp", "timestamp"]
    assert [tuple(r) for r in result.detections.collect()] == [
        ("a", "up", "a", 10, 11, datetime(2024, 5, 1, 1), datetime(2024, 5, 1, 3))]
    assert list(result.detection_lines()) == [
        '{"event": "up", "args": ["a", 10, 11], "start": 1714525200.0, "end": 1714532400.0}\n']
    assert [(r["k"], r["n"], r["reason"]) for r in result.rejected.collect()] == [
        ("a", 12, "column 'ts' is empty"), ("a", 13, "column 'x': 'nan' is not a finite number")]
    assert (result.rows, result.events, result.rejected_rows) == (6, 4, 2)
    result.unpersist()
    for fmt in ("parquet", "json"):          # the same table from a file
        path = tmp_path / f"m.{fmt}"
        df.write.format(fmt).save(str(path))
        again = replay(path, rules, event="m", args=["k", "n", "x"], time="ts", partition_by="k", spark=spark,
                       input_format=fmt)
        assert list(again.detection_lines()) == [
            '{"event": "up", "args": ["a", 10, 11], "start": 1714525200.0, "end": 1714532400.0}\n']
        assert (again.rows, again.events, again.rejected_rows) == (6, 4, 2)
        again.unpersist()


# a synthetic data set with a per-sensor rule and a per-area rule: 2 stages
AREA_RULES = (
    "rise(S, A, V1, V2) <- (r(S, A, V1) seq r(S, A, V2)) within 30 where V2 >= V1 + 5.\n"
    "area_rise(A, S1, S2) <- (rise(S1, A, _, _) and rise(S2, A, _, _)) within 60 where S1 @< S2.\n"
)
AREA_MAPPING = ["--event", "r", "--args", "sensor,area,value", "--time", "t", "--partition-by", "sensor"]


def area_data(path: Path, n: int = 3000) -> Path:
    seed = 7
    with path.open("w") as f:
        f.write("t,sensor,area,value\n")
        for i in range(n):
            seed = (seed * 1103515245 + 12345) % 2147483648
            s = (seed >> 8) % 40
            f.write(f"{i // 4},s{s},area{s % 5},{(seed >> 4) % 20}\n")
    return path


EXPLAIN_RULES = (
    "hot(S) <- r(S, _, V) where V >= 10.\n"
    "near(S1, S2) <- (hot(S1) and hot(S2)) within 10 where S1 @< S2.\n"
)
EXPLAIN_DATA = "t,sensor,area,value\n0,s1,a,10\n0,s1,a,12\n1,s2,a,3\n2,s2,a,11\n100,s3,b,15\n"


def _det(event: str, args: list[Any], start: int, end: int, *provenance: str) -> str:
    """A detection line as etalis run --explain prints it."""
    line = f'{{"event": "{event}", "args": {json.dumps(args)}, "start": {start}, "end": {end}'
    return line + (f', "provenance": [{", ".join(provenance)}]}}\n' if provenance else "}\n")


def test_replay_explain_gives_each_detection_its_input_events_as_run_explain_does(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # hot/1 runs partitioned by sensor, near/2 in a global second stage: the provenance of
    # a near is that of its two hot events, passed on between the stages; s1 is hot twice
    # at time 0 (two readings), so two equal hot(s1) events carry different provenance
    data = tmp_path / "r.csv"
    data.write_text(EXPLAIN_DATA)
    rules = tmp_path / "near.etl"
    rules.write_text(EXPLAIN_RULES)
    mapping = ["--event", "r", "--args", "sensor,area,value", "--time", "t"]
    r10, r12 = (_det("r", ["s1", "a", v], 0, 0).rstrip("}\n") + "}" for v in (10, 12))
    r11 = _det("r", ["s2", "a", 11], 2, 2).rstrip("}\n") + "}"
    r15 = _det("r", ["s3", "b", 15], 100, 100).rstrip("}\n") + "}"
    expected = [_det("hot", ["s1"], 0, 0, r10), _det("hot", ["s1"], 0, 0, r12), _det("hot", ["s2"], 2, 2, r11),
                _det("near", ["s1", "s2"], 0, 2, r10, r11), _det("near", ["s1", "s2"], 0, 2, r12, r11),
                _det("hot", ["s3"], 100, 100, r15)]
    assert etalis_run(rules, data, [*mapping, "--explain"])[0] == expected
    result = replay(data, rules, spark=spark, partition_by="sensor", explain=True, **kwargs(mapping))
    assert [(s.number, s.partitioning) for s in result.stages] == [
        (1, "partitioned by sensor"), (2, "global (one partition: its rules join events that share no key)")]
    assert list(result.detection_lines()) == expected
    assert [(r["event"], json.loads(r["provenance"])[-1]["args"]) for r in result.detections.collect()] == [
        ("hot", ["s1", "a", 10]), ("hot", ["s1", "a", 12]), ("hot", ["s2", "a", 11]),
        ("near", ["s2", "a", 11]), ("near", ["s2", "a", 11]), ("hot", ["s3", "b", 15])]
    result.unpersist()
    assert cli.main(["replay", str(rules), "--events", str(data), *mapping, "--partition-by", "sensor",
                     "--explain", "--no-progress"]) == 0
    assert capsys.readouterr().out == "".join(expected)
    out = tmp_path / "out"      # the CSV of run --explain --format csv, provenance column and all
    assert cli.main(["replay", str(rules), "--events", str(data), *mapping, "--partition-by", "sensor",
                     "--explain", "--no-progress", "--out", str(out), "--format", "csv", "--iso"]) == 0
    run_csv = tmp_path / "run.csv"
    assert cli.main(["run", str(rules), "--events", str(data), *mapping, "--explain", "--quiet",
                     "--out", str(run_csv), "--iso"]) == 0
    assert (out / "detections.csv").read_text() == run_csv.read_text()
    assert (out / "detections.csv").read_text().splitlines()[4] == (
        'near,s1,s2,1970-01-01T00:00:00Z,1970-01-01T00:00:02Z,"[{""event"": ""r"", '
        '""args"": [""s1"", ""a"", 10], ""start"": ""1970-01-01T00:00:00Z"", ""end"": '
        '""1970-01-01T00:00:00Z""}, {""event"": ""r"", ""args"": [""s2"", ""a"", 11], ""start"": '
        '""1970-01-01T00:00:02Z"", ""end"": ""1970-01-01T00:00:02Z""}]"')


def test_a_retried_task_gives_identical_output_without_duplicates(spark: SparkSession, tmp_path: Path) -> None:
    data = area_data(tmp_path / "area.csv")
    rules = tmp_path / "area.etl"
    rules.write_text(AREA_RULES)
    expected, _ = etalis_run(rules, data, AREA_MAPPING)
    counts = collections.Counter(json.loads(x)["event"] for x in expected)
    assert counts["rise"] > 100 and counts["area_rise"] > 10
    for stage, partition in ((1, 0), (1, 1), (2, 0)):       # stage 1 maps the rows too
        marker = tmp_path / f"failed{stage}{partition}"
        with pytest.MonkeyPatch.context() as mp:
            fail_first_attempt(mp, stage, partition, marker)
            result = replay(data, rules, spark=spark, partitions=3, **kwargs(AREA_MAPPING))
        assert marker.read_text() == f"stage {stage} partition {partition} attempt 0\n"
        assert len(result.stages) == 2
        assert list(result.detection_lines()) == expected
        assert (result.rows, result.events, result.rejected_rows) == (3000, 3000, 0)
        assert result.detection_count == len(expected)
        out = tmp_path / f"out{stage}{partition}"
        result.write(out, "jsonl")
        assert (out / "detections.jsonl").read_text() == "".join(expected)
        result.unpersist()


def fail_first_attempt(mp: pytest.MonkeyPatch, stage: int, partition: int, marker: Path) -> None:
    """Make the first attempt of the task of ``partition`` in ``stage``
    fail once it has produced some output, as a lost executor would; the
    failure appends a line to ``marker``.  The stage's task function is
    wrapped in the driver: Spark ships the wrapper to its Python workers
    with the function."""
    def failing(inner: Callable[[Iterator[Any]], Iterator[Any]]) -> Callable[[Iterator[Any]], Iterator[Any]]:
        def run(batches: Iterator[Any]) -> Iterator[Any]:
            from pyspark import TaskContext

            for number, out in enumerate(inner(batches)):
                yield out
                ctx = TaskContext.get()
                if number == 0 and ctx is not None and ctx.partitionId() == partition and ctx.attemptNumber() == 0:
                    with open(marker, "a", encoding="utf-8") as f:
                        f.write(f"stage {stage} partition {partition} attempt 0\n")
                    raise RuntimeError(f"injected failure in stage {stage}, partition {partition}")
        return run

    for name in ("_run_stage", "_map_and_run"):       # stage 1 may map the rows too
        task = getattr(driver, name)
        mp.setattr(driver, name, lambda *specs, task=task: (
            failing(task(*specs)) if specs[-1].number == stage else task(*specs)))


def test_write_gives_each_format_and_refuses_to_overwrite(spark: SparkSession, tmp_path: Path) -> None:
    data = tmp_path / "obs.csv"
    data.write_text(BAD_ROWS)
    result = replay(data, HOT, spark=spark, partition_by="station", **kwargs(HOT_MAPPING))
    for fmt in ("parquet", "csv", "json", "jsonl"):
        out = tmp_path / fmt
        result.write(out, fmt)
        summary = json.loads((out / "summary.json").read_text())
        assert (summary["rows"], summary["events"], summary["rejected"], summary["detections"]) == (8, 3, 5, 2)
        if fmt == "jsonl":
            assert (out / "detections.jsonl").read_text().count("\n") == 2
            rejected = [json.loads(x) for x in (out / "rejected.jsonl").read_text().splitlines()]
            assert [(r["row"], r["reason"]) for r in rejected][0] == (1, "column 'temp' is empty")
        elif fmt == "csv":      # written by the driver, as etalis run --format csv writes
            assert (out / "detections.csv").read_text().splitlines() == [
                "event,arg1,arg2,start,end", "hot,KJFK,31.5,1577836800.0,1577836800.0",
                "hot,KLGA,35,1577851200.0,1577851200.0"]
            with (out / "rejected.csv").open(newline="") as f:
                rejected = list(csv.DictReader(f))
            assert [(r["row"], r["reason"]) for r in rejected][0] == ("1", "column 'temp' is empty")
            assert len(rejected) == 5
        else:
            back = spark.read.format(fmt).options(header="true").load(str(out / "detections"))
            assert sorted(r["event"] + ":" + str(r["key"]) for r in back.collect()) == ["hot:KJFK", "hot:KLGA"]
            assert spark.read.format(fmt).options(header="true").load(str(out / "rejected")).count() == 5
    with pytest.raises(FileExistsError):
        result.write(tmp_path / "parquet", "parquet")
    result.write(tmp_path / "parquet", "jsonl", overwrite=True)
    assert sorted(p.name for p in (tmp_path / "parquet").iterdir()) == [
        "detections.jsonl", "rejected.jsonl", "summary.json"]
    # through Hadoop's file system API, as for hdfs:// or s3a://
    for fmt, single in (("jsonl", False), ("parquet", False), ("parquet", True)):
        uri = f"file://{tmp_path}/uri-{fmt}-{single}"
        result.write(uri, fmt, single_file=single)
        written = tmp_path / f"uri-{fmt}-{single}"
        assert json.loads((written / "summary.json").read_text())["rows"] == 8
        if fmt == "jsonl":
            assert (written / "detections.jsonl").read_text() == (tmp_path / "jsonl" / "detections.jsonl").read_text()
        elif single:            # (and the local Hadoop file system's hidden .crc files)
            assert sorted(p.name for p in written.iterdir() if not p.name.startswith(".")) == [
                "detections.parquet", "rejected.parquet", "summary.json"]
            assert spark.read.parquet(uri + "/detections.parquet").count() == 2
        else:
            assert spark.read.parquet(uri + "/detections").count() == 2
        with pytest.raises(FileExistsError):
            result.write(uri, fmt)
    assert not [p for p in tmp_path.iterdir() if "staging" in p.name]
    result.unpersist()


def test_a_failed_write_leaves_no_partial_output(spark: SparkSession, tmp_path: Path) -> None:
    data = tmp_path / "obs.csv"
    data.write_text(BAD_ROWS)
    result = replay(data, HOT, spark=spark, partition_by="station", **kwargs(HOT_MAPPING))

    def explode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for _ in batches:
            raise RuntimeError("disk full")
        yield from ()

    broken: DataFrame = result.rejected.mapInArrow(explode, result.rejected.schema)
    failing = dataclasses.replace(result, rejected=broken)
    with pytest.raises(Exception, match="disk full"):
        failing.write(tmp_path / "out", "parquet")
    assert list(tmp_path.iterdir()) == [data]        # no output, no staging directory
    result.unpersist()


def test_etalis_replay_refuses_an_escaping_rule_file_before_anything_runs(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "escaped"
    rules = tmp_path / "escape.etl"
    rules.write_text(f"c <- a.\nuser:message_hook(_, _, _) --> {{shell('touch {marker}')}}.\n")
    data = tmp_path / "a.csv"
    data.write_text("t\n1\n2\n")
    argv = ["replay", str(rules), "--events", str(data), "--event", "a", "--time", "t", "--no-progress"]
    assert cli.main(argv) == cli.EXIT_RULES
    out, err = capsys.readouterr()
    assert (out, err.splitlines()[0]) == ("", f"{rules}:2:1: error: sandbox: rules from an untrusted source may "
                                              "not define user:message_hook/5, a predicate of module user")
    assert not marker.exists()


def test_etalis_replay_prints_the_lines_of_etalis_run_and_a_summary(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = area_data(tmp_path / "area.csv", 600)
    rules = tmp_path / "area.etl"
    rules.write_text(AREA_RULES)
    expected, _ = etalis_run(rules, data, AREA_MAPPING)
    assert cli.main(["replay", str(rules), "--events", str(data), *AREA_MAPPING, "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert out == "".join(expected)
    first = err.splitlines()[0]
    assert first.startswith(f"rows: 600, events: 600, rejected: 0, detections: {len(expected)}, warnings: 0, ")
    assert [line.split(":")[0].strip() for line in err.splitlines()[1:]] == [
        "stage 1 (partitioned by sensor; 1 rules)", "stage 2 (partitioned by argument 2 of rise/4; 1 rules)"]


def test_etalis_replay_reads_and_compiles_its_rule_file_once_on_the_driver(
        spark: SparkSession, tmp_path: Path, asked: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # one create reply serves the check before Spark starts, the findings and the plan
    data = area_data(tmp_path / "area.csv", 50)
    rules = tmp_path / "area.etl"
    rules.write_text(AREA_RULES)
    for plan in ([], ["--plan"]):
        asked.clear()
        assert cli.main(["replay", str(rules), "--events", str(data), *AREA_MAPPING, "--no-progress", *plan]) == 0
        assert (asked.count("create"), asked.count("rules"), asked.count("listing")) == (1, 0, 0)
    capsys.readouterr()


def test_the_first_local_replay_writes_the_jvm_class_archive_and_the_next_ones_use_it(tmp_path: Path) -> None:
    """Class data sharing for Spark's JVM: the archive is kept only once
    the JVM that wrote it has exited normally (one left by a killed driver
    is removed), and a replay with it prints exactly what one without it
    prints (the JVM's notes on it are off)."""
    data = area_data(tmp_path / "area.csv", 300)
    rules = tmp_path / "area.etl"
    rules.write_text(AREA_RULES)
    expected, _ = etalis_run(rules, data, AREA_MAPPING)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT / "src")}
    argv = [sys.executable, "-m", "etalis_py.cli", "replay", str(rules), "--events", str(data), *AREA_MAPPING,
            "--master", "local[1]", "--no-progress"]
    archives = tmp_path / "cache" / "etalis-py" / "spark-classes"
    archives.mkdir(parents=True)
    gone = subprocess.Popen(["true"])
    gone.wait()
    (archives / f"0123456789abcdef.{gone.pid}.making").write_bytes(b"half an archive of a killed driver's JVM")
    for _ in range(2):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
        assert (done.returncode, done.stdout) == (0, "".join(expected)), done.stderr
        assert done.stderr.startswith(f"rows: 300, events: 300, rejected: 0, detections: {len(expected)}, ")
        assert len(done.stderr.splitlines()) == 3, done.stderr
        kept = sorted(f.suffix for f in archives.iterdir())
        assert kept == [".jsa"]
    off = subprocess.run(argv, env={**env, "ETALIS_SPARK_CDS": "0", "XDG_CACHE_HOME": str(tmp_path / "none")},
                         capture_output=True, text=True, timeout=600)
    assert (off.returncode, off.stdout) == (0, "".join(expected))
    assert not (tmp_path / "none" / "etalis-py" / "spark-classes").exists()


def test_etalis_replay_format_table_prints_the_table_of_etalis_run(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = area_data(tmp_path / "area.csv", 600)
    rules = tmp_path / "area.etl"
    rules.write_text(AREA_RULES)
    table = ["--format", "table", "--tz", "Europe/Berlin"]
    assert cli.main(["run", str(rules), "--events", str(data), *AREA_MAPPING[:-2], *table]) == 0
    expected = capsys.readouterr().out
    assert expected.startswith("times in Europe/Berlin\nevent ") and expected.count("\n") > 3
    assert cli.main(["replay", str(rules), "--events", str(data), *AREA_MAPPING, *table, "--no-progress"]) == 0
    assert capsys.readouterr().out == expected
    assert cli.main(["replay", str(rules), "--events", str(data), *AREA_MAPPING, *table,
                     "--out", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == \
        "etalis: --format table is printed: leave out --out (or write jsonl there and use etalis table)\n"


def test_replay_result_summary_counts(spark: SparkSession, tmp_path: Path) -> None:
    data = tmp_path / "obs.csv"
    data.write_text(BAD_ROWS)
    result: ReplayResult = replay(data, HOT, spark=spark, partition_by="station", **kwargs(HOT_MAPPING))
    assert result.summary().splitlines()[0].startswith("rows: 8, events: 3, rejected: 5, detections: 2, warnings: 0,")
    result.unpersist()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Callable[[], bool], what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.5)


def test_replay_on_a_standalone_spark_cluster_matches_local_mode(spark: SparkSession, tmp_path: Path) -> None:
    """A master and a worker started from the installed PySpark on
    127.0.0.1; the replay's driver is an `etalis replay` process."""
    data = area_data(tmp_path / "area.csv")
    rules = tmp_path / "area.etl"
    rules.write_text(AREA_RULES)
    local = replay(data, rules, spark=spark, partitions=4, **kwargs(AREA_MAPPING))
    expected = list(local.detection_lines())
    local.unpersist()
    assert len(expected) > 100

    home = Path(pyspark.__file__).resolve().parent
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "SPARK_NO_DAEMONIZE": "1"}
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    logs = {name: (tmp_path / f"{name}.log").open("w") for name in ("master", "worker")}
    started: list[subprocess.Popen[bytes]] = []
    try:
        started.append(subprocess.Popen(
            [str(home / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(port), "--webui-port", str(free_port())],
            env=env, stdout=logs["master"], stderr=subprocess.STDOUT, start_new_session=True))
        wait_for(lambda: "Starting Spark master" in (tmp_path / "master.log").read_text(), "the master")
        started.append(subprocess.Popen(
            [str(home / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
             "--cores", "2", "--memory", "2g", "--webui-port", str(free_port()),
             "--work-dir", str(tmp_path / "work"), url],
            env=env, stdout=logs["worker"], stderr=subprocess.STDOUT, start_new_session=True))
        wait_for(lambda: "Registering worker" in (tmp_path / "master.log").read_text(), "the worker to register")
        out = tmp_path / "out"
        run = subprocess.run(
            [sys.executable, "-m", "etalis_py.cli", "replay", str(rules), "--events", str(data), *AREA_MAPPING,
             "--master", url, "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.executor.memory=1g",
             "--partitions", "4", "--out", str(out), "--format", "jsonl", "--no-progress"],
            env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
        assert (out / "detections.jsonl").read_text() == "".join(expected)
        summary = json.loads((out / "summary.json").read_text())
        assert (summary["rows"], summary["events"], summary["rejected"], summary["detections"]) == \
            (3000, 3000, 0, len(expected))
        assert "app-" in (tmp_path / "master.log").read_text()       # it ran on the cluster
    finally:
        for proc in reversed(started):
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(started):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for f in logs.values():
            f.close()


# -- output: CSV as etalis run writes it, single files, times ---------------------------------


def test_replay_csv_is_etalis_runs_csv_and_pandas_reads_it_back(spark: SparkSession, tmp_path: Path) -> None:
    import pandas as pd

    from etalis_py.outputs.output import TimeStyle

    data = tmp_path / "obs.csv"
    data.write_text(BAD_ROWS)
    rules = tmp_path / "hot.etl"
    rules.write_text(HOT)
    ns = cli.parser().parse_args(["run", str(rules), "--events", str(data), "--quiet", "--format", "csv",
                                  "--iso", "--tz", "America/New_York", *HOT_MAPPING])
    out = StringIO()
    assert cli.run(ns, out, StringIO()) == 0
    assert out.getvalue() == ("event,arg1,arg2,start,end\n"
                              "hot,KJFK,31.5,2019-12-31T19:00:00-05:00,2019-12-31T19:00:00-05:00\n"
                              "hot,KLGA,35,2019-12-31T23:00:00-05:00,2019-12-31T23:00:00-05:00\n")
    result = replay(data, rules, spark=spark, partition_by="station", **kwargs(HOT_MAPPING))
    result.write(tmp_path / "out", "csv", style=TimeStyle(iso=True, tz="America/New_York"))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["detections.csv", "rejected.csv", "summary.json"]
    assert (tmp_path / "out" / "detections.csv").read_text() == out.getvalue()
    detections = pd.read_csv(tmp_path / "out" / "detections.csv")
    assert detections.to_dict("list") == {
        "event": ["hot", "hot"], "arg1": ["KJFK", "KLGA"], "arg2": [31.5, 35.0],
        "start": ["2019-12-31T19:00:00-05:00", "2019-12-31T23:00:00-05:00"],
        "end": ["2019-12-31T19:00:00-05:00", "2019-12-31T23:00:00-05:00"]}
    rejected = pd.read_csv(tmp_path / "out" / "rejected.csv", dtype=str, keep_default_na=False)
    assert list(rejected.columns) == result.rejected.columns
    assert [tuple(r) for r in rejected.itertuples(index=False)] == [
        tuple("" if v is None else str(v) for v in r) for r in result.rejected.collect()]
    assert len(rejected) == 5
    result.unpersist()


def test_replay_single_file_parquet_with_timestamps(spark: SparkSession, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from etalis_py.outputs.output import TimeStyle

    data = area_data(tmp_path / "area.csv", 400)
    rules = tmp_path / "area.etl"
    rules.write_text(AREA_RULES)
    result = replay(data, rules, spark=spark, partitions=4, **kwargs(AREA_MAPPING))
    expected = [json.loads(x) for x in result.detection_lines()]
    result.write(tmp_path / "out", "parquet", style=TimeStyle(iso=True), single_file=True)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "detections.parquet", "rejected.parquet", "summary.json"]
    table = pq.read_table(tmp_path / "out" / "detections.parquet")
    assert str(table.schema.field("start").type) == "timestamp[us, tz=UTC]"      # not Spark's INT96
    seconds = {end: [us / 1e6 for us in table.column(end).cast(pa.int64()).to_pylist()] for end in ("start", "end")}
    assert list(zip(table.column("event").to_pylist(), seconds["start"], seconds["end"])) == [
        (d["event"], d["start"], d["end"]) for d in expected]
    assert len(expected) > 10
    assert pq.read_table(tmp_path / "out" / "rejected.parquet").num_rows == 0
    result.unpersist()


SEVERAL_BAD_CSV = (b"\xef\xbb\xbfevent,x,time\na,1,1\na,\xe9,2\na,nan,2\na,1e400,2\na,1,soon\na,,2\na,1,2,3\n"
                   b"$a,1,2\nb,1,3\na,2,4\na,2,inf\nb,2,5\n")
SEVERAL_BAD_JSONL = b"\n".join([
    b'\xef\xbb\xbf{"event": "a", "x": 1, "time": 1}',
    b'{"event": "a", "x": "\xe9", "time": 2}',
    b'{"event": "a", "x": ' + b"[" * 20_000 + b"]" * 20_000 + b', "time": 2}',
    b'{"event": "a", "x": NaN, "time": 2}',
    b'{"event": "a", "x": 1, "time": "soon"}',
    b'{"event": "a",',
    b"[1, 2]",
    b'{"event": "b", "x": 1, "time": 3}',
    b'{"event": "a", "x": 2, "time": 4}',
    b'{"event": "b", "x": 2, "time": 5}']) + b"\n"


def test_replay_rejects_bad_rows_of_csv_and_json_lines_one_by_one_as_run_does(
        spark: SparkSession, tmp_path: Path) -> None:
    rules = ROOT / "tests" / "rows_bad" / "rules.etl"
    mapping = ["--event-col", "event", "--args", "x", "--time", "time"]
    data = tmp_path / "several.csv"
    data.write_bytes(SEVERAL_BAD_CSV)
    expected, summary = etalis_run(rules, data, mapping)
    assert expected == ['{"event": "c", "args": [1], "start": 1, "end": 3}\n',
                        '{"event": "c", "args": [2], "start": 4, "end": 5}\n']
    assert summary.startswith("events read: 12, accepted: 4, rejected: 8, detections: 2,")
    ns = cli.parser().parse_args(["run", str(rules), "--events", str(data), *mapping])
    out, err = StringIO(), StringIO()
    cli.run(ns, out, err)
    run_reasons = [line.split(": rejected: ")[1] for line in err.getvalue().splitlines()[:-1]]
    result = replay(data, rules, spark=spark, **kwargs(mapping))
    assert list(result.detection_lines()) == expected
    assert (result.rows, result.events, result.rejected_rows) == (12, 4, 8)
    reasons = [r["reason"] for r in result.rejected.collect()]
    assert reasons[0] == "line is not UTF-8: Spark read a byte of column 'x' as U+FFFD"
    assert run_reasons[0] == "line is not UTF-8: byte 0xe9 at column 3"
    assert reasons[1:] == run_reasons[1:] == [
        "column 'x': 'nan' is not a finite number", "column 'x': '1e400' is not a finite number",
        "time 'soon' is not a number or an ISO 8601 date; give --time-format", "column 'x' is empty",
        "4 fields where the header has 3", "event names starting with $ are reserved ('$a')", "time 'inf' is not finite"]
    result.unpersist()

    lines = tmp_path / "several.jsonl"
    lines.write_bytes(SEVERAL_BAD_JSONL)
    result = replay(lines, rules, spark=spark, **kwargs(mapping))
    assert list(result.detection_lines()) == expected
    assert (result.rows, result.events, result.rejected_rows) == (10, 4, 6)
    assert [r["reason"] for r in result.rejected.collect()] == [
        "line is not UTF-8: byte 0xe9 at column 22", "nested deeper than 100 levels",
        "not JSON: NaN (JSON has no NaN or infinity)",
        "time 'soon' is not a number or an ISO 8601 date; give --time-format",
        "not JSON: Expecting property name enclosed in double quotes at column 15", "[1, 2] is not a JSON object"]
    result.unpersist()


def test_etalis_replay_reads_the_stream_files_of_etalis_run_an_event_a_line(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """JSON lines without a mapping and event lines: the detections of etalis run, every line accounted for."""
    rules = tmp_path / "r.etl"
    rules.write_text("hot(S) <- temp(S, T) where T > 30.\npair(S) <- temp(S, A) seq temp(S, B) where A < B.\n")
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text('{"event": "temp", "args": ["a", 31], "time": 1}\n\n'
                     '{"event": "temp", "args": ["a", 35], "start": 1.5, "end": 2}\n'
                     'not json\n[1, 2]\n% no comment in JSON lines\n'
                     '{"event": "temp", "args": ["b", 40], "time": "1970-01-01T00:00:03Z"}\n')
    events = tmp_path / "s.events"
    events.write_text("event(temp(a, 31), 1).\n% a comment\nevent(temp(a, 35), [1.5, 2]).\n"
                      "event(temp(b, 40), soon).\nevent(temp(b, 41), 3).\n")
    detected = ['{"event": "hot", "args": ["a"], "start": 1, "end": 1}\n',
                '{"event": "pair", "args": ["a"], "start": 1, "end": 2}\n',
                '{"event": "hot", "args": ["a"], "start": 1.5, "end": 2}\n']
    for data, last, counts, reasons in (
            (jsonl, '{"event": "hot", "args": ["b"], "start": 3.0, "end": 3.0}\n', "rows: 6, events: 3, rejected: 3",
             ["not JSON: Expecting value at column 1", "[1, 2] is not a JSON object",
              "not JSON: Expecting value at column 1"]),
            (events, '{"event": "hot", "args": ["b"], "start": 3, "end": 3}\n', "rows: 4, events: 3, rejected: 1",
             ["a stream reads lines event(Term, Time) with a number of seconds as the time (or an interval [T1, T2] "
              "of them)"])):
        expected, _ = etalis_run(rules, data, [])
        assert expected == [*detected, last]
        assert cli.main(["replay", str(rules), "--events", str(data), "--no-progress", "--quiet"]) == 0
        out, err = capsys.readouterr()
        assert out == "".join(expected)
        assert err.startswith(f"{counts}, detections: 4, warnings: 0, ")
        result = replay(data, rules, spark=spark)
        assert [r["reason"] for r in result.rejected.collect()] == reasons
        result.unpersist()


def test_replay_rejects_a_csv_row_with_a_nul_byte_as_run_does(spark: SparkSession, tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("hot(S) <- temp(S, T) where T > 30.\n")
    data = tmp_path / "nul.csv"
    data.write_bytes(b"t,s,v\n1,a,31\n2,b\x00,32\n3,c,33\n")
    mapping = ["--event", "temp", "--args", "s,v", "--time", "t"]
    expected, summary = etalis_run(rules, data, mapping)
    assert expected == ['{"event": "hot", "args": ["a"], "start": 1, "end": 1}\n',
                        '{"event": "hot", "args": ["c"], "start": 3, "end": 3}\n']
    assert summary.startswith("events read: 3, accepted: 2, rejected: 1, detections: 2,")
    result = replay(data, rules, spark=spark, **kwargs(mapping))
    assert list(result.detection_lines()) == expected
    assert (result.rows, result.events, result.rejected_rows) == (3, 2, 1)
    assert [r["reason"] for r in result.rejected.collect()] == [
        "line holds a NUL byte in column 's': no text does (a binary file, or text in UTF-16?)"]
    result.unpersist()


MIXED_RULES = ("pair(K, X1, X2, Y2) <- (r(K, X1, _Y1) seq r(K, X2, Y2)) within 60 where X2 > X1.\n"
               "neg(K, X, Y) <- r(K, X, Y) where X < 0.\n")
MIXED_CSV = "".join(line + "\n" for line in [
    'event,k,x,y,time',
    'r,Zürich,5,hello world,2024-03-01T10:00:00Z',
    "r,O'Hare,-3,it's,2024-03-01T09:00:00-01:00",
    'r,東京,2.5,naïve,2024-03-01T10:00:01Z',
    'r,Zürich,-0.25,"say ""hi""",2024-03-01T10:00:02Z',
    'r,Zürich,1e3,"a,b",2024-03-01T10:00:03.5Z',
    'r,東京,,x,2024-03-01T10:00:04Z',
    "r,O'Hare,7,123456789012345678901234,2024-03-01T10:00:05Z",
    'r,東京,nan,y,2024-03-01T10:00:06Z',
    'r,São Paulo,3,,2024-03-01T10:00:07Z',
    "r,São Paulo,4,'quoted',yesterday",
    "r,O'Hare,9,007,2024-03-01T10:00:08Z",
    'r,Zürich,12,Ελλάδα,2024-03-01T10:00:09+00:00',
    '$a,Zürich,1,z,2024-03-01T10:00:10Z',
    'r,Zürich,1,2,3,2024-03-01T10:00:11Z',
    's,東京,-8,end,2024-03-01T10:00:12Z',
    'r,São Paulo,-1.5,tab\tx,2024-03-01T10:00:13Z',
    'r,São Paulo,2,-0.0,2024-03-01T10:00:14Z',
    'r,東京,-7.75,終わり,2024-03-01T10:00:15Z',
    'r,東京,3.25,"ä ""q""",2024-03-01T10:00:16.25Z',
])


def test_replay_of_quoted_unicode_negative_float_and_bad_rows_gives_exactly_the_lines_of_etalis_run(
        spark: SparkSession, tmp_path: Path) -> None:
    """The rows cross into the engine as packed columns (as etalis run's
    do): the same events, detections and rejections."""
    rules = tmp_path / "mixed.etl"
    rules.write_text(MIXED_RULES)
    data = tmp_path / "mixed.csv"
    data.write_text(MIXED_CSV, encoding="utf-8")
    mapping = ["--event-col", "event", "--args", "k,x,y", "--time", "time", "--partition-by", "k"]
    expected, summary = etalis_run(rules, data, mapping)
    assert expected == [
        '{"event": "neg", "args": ["O\'Hare", -3, "it\'s"], "start": 1709287200.0, "end": 1709287200.0}\n',
        '{"event": "neg", "args": ["Zürich", -0.25, "say \\"hi\\""], "start": 1709287202.0, "end": 1709287202.0}\n',
        '{"event": "pair", "args": ["Zürich", 5, 1000.0, "a,b"], "start": 1709287200.0, "end": 1709287203.5}\n',
        '{"event": "pair", "args": ["Zürich", -0.25, 1000.0, "a,b"], "start": 1709287202.0, "end": 1709287203.5}\n',
        '{"event": "pair", "args": ["O\'Hare", -3, 7, 123456789012345678901234], "start": 1709287200.0, '
        '"end": 1709287205.0}\n',
        '{"event": "pair", "args": ["O\'Hare", -3, 9, 7], "start": 1709287200.0, "end": 1709287208.0}\n',
        '{"event": "pair", "args": ["O\'Hare", 7, 9, 7], "start": 1709287205.0, "end": 1709287208.0}\n',
        '{"event": "pair", "args": ["Zürich", 5, 12, "Ελλάδα"], "start": 1709287200.0, "end": 1709287209.0}\n',
        '{"event": "pair", "args": ["Zürich", -0.25, 12, "Ελλάδα"], "start": 1709287202.0, "end": 1709287209.0}\n',
        '{"event": "neg", "args": ["São Paulo", -1.5, "tab\\tx"], "start": 1709287213.0, "end": 1709287213.0}\n',
        '{"event": "pair", "args": ["São Paulo", -1.5, 2, -0.0], "start": 1709287213.0, "end": 1709287214.0}\n',
        '{"event": "neg", "args": ["東京", -7.75, "終わり"], "start": 1709287215.0, "end": 1709287215.0}\n',
        '{"event": "pair", "args": ["東京", 2.5, 3.25, "ä \\"q\\""], "start": 1709287201.0, "end": 1709287216.25}\n',
        '{"event": "pair", "args": ["東京", -7.75, 3.25, "ä \\"q\\""], "start": 1709287215.0, '
        '"end": 1709287216.25}\n']
    assert summary.startswith("events read: 19, accepted: 13, rejected: 6, detections: 14,")
    ns = cli.parser().parse_args(["run", str(rules), "--events", str(data), *mapping[:-2]])
    out, err = StringIO(), StringIO()
    cli.run(ns, out, err)
    run_rejected = [line.split(": rejected: ") for line in err.getvalue().splitlines()[:-1]]
    assert [(line.rsplit(":", 1)[1], reason) for line, reason in run_rejected] == [
        ("7", "column 'x' is empty"), ("9", "column 'x': 'nan' is not a finite number"), ("10", "column 'y' is empty"),
        ("11", "time 'yesterday' is not a number or an ISO 8601 date; give --time-format"),
        ("14", "event names starting with $ are reserved ('$a')"), ("15", "6 fields where the header has 5")]
    result = replay(data, rules, spark=spark, **kwargs(mapping))
    assert list(result.detection_lines()) == expected
    assert (result.rows, result.events, result.rejected_rows, result.detection_count) == (19, 13, 6, 14)
    rejected = [(r["k"], r["x"], r["reason"]) for r in result.rejected.collect()]
    assert rejected == [("東京", None, "column 'x' is empty"), ("東京", "nan", "column 'x': 'nan' is not a finite number"),
                        ("São Paulo", "3", "column 'y' is empty"),
                        ("São Paulo", "4", "time 'yesterday' is not a number or an ISO 8601 date; give --time-format"),
                        ("Zürich", "1", "event names starting with $ are reserved ('$a')"),
                        ("Zürich", "1", "6 fields where the header has 5")]
    result.unpersist()


def test_replay_under_selection_strategies_gives_the_lines_of_etalis_run(spark: SparkSession, tmp_path: Path) -> None:
    # per sensor, a then b; the strategies choose differently among the a's
    data = tmp_path / "ab.csv"
    data.write_text("t,kind,sensor,value\n1,a,s1,1\n2,a,s2,5\n3,a,s1,2\n4,a,s2,6\n5,b,s1,3\n6,b,s2,7\n"
                    "7,a,s1,4\n8,b,s1,8\n")
    rules = tmp_path / "ab.etl"
    rules.write_text("h(S, X, Y) <- a(S, X) seq b(S, Y).\n")
    mapping = ["--event-col", "kind", "--args", "sensor,value", "--time", "t"]
    expected = {
        "nxt": [_det("h", ["s1", 1, 3], 1, 5), _det("h", ["s2", 5, 7], 2, 6), _det("h", ["s1", 1, 8], 1, 8)],
        "last": [_det("h", ["s1", 2, 3], 3, 5), _det("h", ["s2", 6, 7], 4, 6), _det("h", ["s1", 4, 8], 7, 8)],
        "stn": [_det("h", ["s1", 1, 3], 1, 5), _det("h", ["s1", 2, 3], 3, 5), _det("h", ["s2", 5, 7], 2, 6),
                _det("h", ["s2", 6, 7], 4, 6), _det("h", ["s1", 4, 8], 7, 8)],
    }
    for policy, lines in expected.items():
        assert etalis_run(rules, data, [*mapping, "--policy", policy])[0] == lines
        result = replay(data, rules, spark=spark, partition_by="sensor", policy=policy, **kwargs(mapping))
        assert sorted(result.detection_lines()) == sorted(lines)
        result.unpersist()


HOT_SPELLS = ROOT / "examples" / "hot_spells"
HOT_SPELLS_MAPPING = ["--columns", CHARLEY_COLUMNS, "--event", "obs", "--args", "STATIONID,AIRTEMPERATURE",
               "--time", "SAMPLINGTIME", "--time-format", "%Y-%m-%d %H:%M:%S.%f+0:00"]


@pytest.mark.parametrize(("rules", "policy", "count"), [
    ("episodes.etl", None, 27),                 # skip_past_last_event
    ("hot.etl", "strict(partition)", 73),
    ("cooling.etl", None, 10),                  # a correlated Kleene+ under stn, with skip_past_last_event
])
def test_replay_by_station_with_skip_strategies_and_partition_contiguity_gives_the_lines_of_etalis_run(
        spark: SparkSession, rules: str, policy: str | None, count: int) -> None:
    # their key is the station: no match of one station discards or breaks one of another
    options = ["--policy", policy] if policy else []
    expected, summary = etalis_run(HOT_SPELLS / rules, CHARLEY_OBS, [*HOT_SPELLS_MAPPING, *options])
    assert len(expected) == count
    assert summary.startswith(f"events read: 10030, accepted: 10002, rejected: 28, detections: {count}, ")
    result = replay(CHARLEY_OBS, HOT_SPELLS / rules, spark=spark, partition_by="STATIONID", policy=policy,
                    **kwargs(HOT_SPELLS_MAPPING))
    assert list(result.detection_lines()) == expected
    result.unpersist()


GRAPH_CELLS = [
    ("2004-08-08T06:05:00Z", json.dumps({"@context": {"sosa": "http://www.w3.org/ns/sosa/"}, "@id": "http://ex.org/g1",
                                         "@graph": [{"@id": "http://ex.org/o1", "sosa:hasSimpleResult": 17}]})),
    ("2004-08-08T06:10:00Z", "<http://ex.org/o2> <http://www.w3.org/ns/sosa/hasSimpleResult> "
                             "\"20\"^^<http://www.w3.org/2001/XMLSchema#integer> <http://ex.org/g2> ."),
    ("2004-08-08T06:15:00Z", "<http://ex.org/o3> oops ."),
    ("2004-08-08T06:20:00Z", "<http://ex.org/o4> <http://www.w3.org/ns/sosa/hasSimpleResult> \"5.5\" .\n"
                             "<http://ex.org/o4> <http://www.w3.org/ns/sosa/hasSimpleResult> "
                             "\"6\"^^<http://www.w3.org/2001/XMLSchema#integer> ."),
]


def test_replay_reads_a_column_of_rdf_graphs_as_graph_events(spark: SparkSession, tmp_path: Path) -> None:
    data = tmp_path / "graphs.csv"
    with data.open("w", newline="") as f:
        csv.writer(f).writerows([("time", "graph"), *GRAPH_CELLS])
    rules = tmp_path / "graphs.etl"
    rules.write_text(":- prefix(sosa, 'http://www.w3.org/ns/sosa/').\n"
                     "result(N, O, V) <- graph(G) where (graph_name(G, N), triple(G, O, sosa:hasSimpleResult, V)).\n")
    expected, summary = etalis_run(rules, data, ["--graph-col", "graph", "--time", "time"])
    assert summary.startswith("events read: 4, accepted: 3, rejected: 1, detections: 4,")
    table = tmp_path / "graphs.parquet"  # Spark reads CSV quotes with backslash escapes, not doubled quotes
    pq.write_table(pa.table({"time": [t for t, _ in GRAPH_CELLS], "graph": [g for _, g in GRAPH_CELLS]}), table)
    result = replay(table, rules, spark=spark, graph_col="graph", time="time")
    blank = "_:g" + hashlib.sha1(b"t('http://ex.org/o4','http://www.w3.org/ns/sosa/hasSimpleResult',\"5.5\")\n"
                                 b"t('http://ex.org/o4','http://www.w3.org/ns/sosa/hasSimpleResult',6)").hexdigest()
    assert sorted(result.detection_lines()) == sorted(expected)
    assert expected == [
        '{"event": "result", "args": ["http://ex.org/g1", "http://ex.org/o1", 17], '
        '"start": 1091945100.0, "end": 1091945100.0}\n',
        '{"event": "result", "args": ["http://ex.org/g2", "http://ex.org/o2", 20], '
        '"start": 1091945400.0, "end": 1091945400.0}\n',
        f'{{"event": "result", "args": ["{blank}", "http://ex.org/o4", 6], "start": 1091946000.0, "end": 1091946000.0}}\n',
        f'{{"event": "result", "args": ["{blank}", "http://ex.org/o4", "5.5"], '
        '"start": 1091946000.0, "end": 1091946000.0}\n',
    ]
    assert [r["reason"] for r in result.rejected.collect()] == [
        "line 1 of the graph: not an N-Quads line: Invalid line (Predicate must be uriref)"
    ]
    result.unpersist()


STREAM_RULES = """:- prefix(sosa, 'http://www.w3.org/ns/sosa/').
:- prefix(wt, 'http://example.org/etalis-py/weather#').
:- policy(unrestricted).
windy(St, N, V) <- graph(G)
    where (graph_stream(G, St), graph_name(G, N), isa(G, O, wt:'WindObservation'),
           triple(G, O, sosa:hasSimpleResult, V), V >= 20).
calmed(St, V1, V2) <- (graph(G1) seq graph(G2)) within minutes(30)
    where (graph_stream(G1, St), graph_stream(G2, St),
           isa(G1, O1, wt:'WindObservation'), triple(G1, O1, sosa:hasSimpleResult, V1), V1 >= 15,
           isa(G2, O2, wt:'WindObservation'), triple(G2, O2, sosa:hasSimpleResult, V2), V2 < 3).
"""


def _graph_table(stream: Path, table: Path) -> int:
    """Write the graphs of the N-Quads file ``stream`` as a table of
    (time, graph) rows, a graph's quads as N-Quads lines, in the file's
    order; return the number of graphs."""
    from etalis_py.inputs.nquads import QUAD, nquads_time, quad_terms

    times: dict[str, float] = {}
    cells: dict[str, list[str]] = {}
    for line in stream.read_text().splitlines():
        m = QUAD.match(line)
        assert m is not None, line
        s, p, o, g = quad_terms(m)
        if g is None:
            times[s] = float(nquads_time(m.group(6), m.group(7)))
        else:
            cells.setdefault(g, []).append(f"{s} {p} {o} {g} .")
    pq.write_table(pa.table({"time": [times[g] for g in cells], "graph": ["\n".join(c) for c in cells.values()]}),
                   table)
    return len(cells)


def test_replay_puts_a_column_of_graphs_on_a_stream_as_run_does_a_graph_stream(spark: SparkSession,
                                                                                tmp_path: Path) -> None:
    observations = ROOT / "examples" / "graph_weather" / "observations.nq"
    rules = tmp_path / "streams.etl"
    rules.write_text(STREAM_RULES)
    table = tmp_path / "observations.parquet"
    assert _graph_table(observations, table) == 160
    st = "http://example.org/etalis-py/lsd/stream"
    expected, summary = etalis_run(rules, observations, ["--stream", st])
    assert summary.startswith("events read: 160, accepted: 160, rejected: 0, detections: 24,")
    assert expected[:2] == [
        f'{{"event": "calmed", "args": ["{st}", 15, 0], "start": 1091957400.0, "end": 1091958300.0}}\n',
        f'{{"event": "calmed", "args": ["{st}", 15, 0], "start": 1091957400.0, "end": 1091958600.0}}\n',
    ]
    assert expected[-1] == (f'{{"event": "windy", "args": ["{st}", "http://example.org/etalis-py/lsd/graph/3269-1450", '
                            '20], "start": 1091976600.0, "end": 1091976600.0}\n')
    ns = cli.parser().parse_args(["replay", str(rules), "--events", str(table), "--graph-col", "graph",
                                  "--time", "time", "--stream", st, "--quiet"])
    out, err = StringIO(), StringIO()
    assert cli.replay(ns, out, err) == 0, err.getvalue()
    assert sorted(out.getvalue().splitlines(keepends=True)) == sorted(expected)
    result = replay(table, rules, spark=spark, graph_col="graph", time="time")  # no stream: graph_stream/2 fails
    assert list(result.detection_lines()) == []
    result.unpersist()


def test_replay_refuses_a_stream_without_a_column_of_graphs(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("a(X) <- b(X).\n")
    ns = cli.parser().parse_args(["replay", str(rules), "--events", str(tmp_path / "t.csv"), "--event", "b",
                                  "--args", "x", "--time", "t", "--stream", "http://ex.org/s"])
    out, err = StringIO(), StringIO()
    assert cli.replay(ns, out, err) == 1
    assert err.getvalue() == ("etalis: --stream names the stream of graph events: give the column of the graphs, "
                              "--graph-col\n")


def test_replay_takes_static_knowledge_files_and_ships_them_to_the_workers(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    compat = ROOT / "tests" / "etalis_compat"
    rules, db = compat / "static_knowledge.etl", compat / "static_knowledge.db"
    data = tmp_path / "words.csv"
    data.write_text("kind,x,t\nword,bergen,1\npart,erg,2\npart,xyz,3\nword,oslo,4\npart,sl,5\n")
    mapping = ["--event-col", "kind", "--args", "x", "--time", "t"]
    expected = ['{"event": "match", "args": ["bergen", "erg"], "start": 1, "end": 2}\n',
                '{"event": "match", "args": ["oslo", "sl"], "start": 4, "end": 5}\n']
    assert etalis_run(rules, data, [*mapping, "--static", str(db)])[0] == expected
    assert cli.main(["replay", str(rules), "--static", str(db), "--events", str(data), *mapping, "--quiet"]) == 0
    assert capsys.readouterr().out == "".join(expected)
    assert cli.main(["replay", str(rules), "--events", str(data), *mapping]) == 0
    captured = capsys.readouterr()
    assert (captured.out, captured.err.splitlines()[0]) == ("", (
        f"{rules}:4:1: warning: inside/2 is not defined: a call of it raises an existence error, and the occurrence "
        "that made the call is dropped [undefined-predicate]"))


def test_keys_written_differently_that_make_one_term_meet_in_one_partition(
        spark: SparkSession, tmp_path: Path) -> None:
    """Rows are shuffled by a coarse key before they are mapped: 7, 007,
    +7 and 7 with spaces around are the one key 7 for etalis run, and so
    for replay, over any number of partitions; ٧ (Arabic-Indic seven) and
    7_0 are texts (only ASCII numerals are numbers), which the coarse key
    may put beside 7 and 70 without joining them."""
    data = tmp_path / "keys.csv"
    keys = ["7", "007", " 7", "+7", "\u0667", "7_0", "70", "7.0", "7e0", "a b", " a b\u2003", "a_b"]
    data.write_text("t,k,v\n" + "".join(f'{i},"{k}",{i}\n' for i, k in enumerate(keys, start=1)),
                    encoding="utf-8")
    rules = tmp_path / "pairs.etl"
    rules.write_text("pair(K, A, B) <- r(K, A) seq r(K, B).\n")
    mapping = ["--event", "r", "--args", "k,v", "--time", "t", "--partition-by", "k"]
    expected, _ = etalis_run(rules, data, mapping)
    assert [tuple(json.loads(x)["args"]) for x in expected] == [
        (7, 1, 2), (7, 1, 3), (7, 2, 3), (7, 1, 4), (7, 2, 4), (7, 3, 4), (7.0, 8, 9), ("a b", 10, 11)]
    for partitions in (1, 5, 16):
        result = replay(data, rules, spark=spark, partitions=partitions, **kwargs(mapping))
        assert list(result.detection_lines()) == expected
        assert (result.rows, result.events, result.rejected_rows) == (12, 12, 0)
        result.unpersist()
    coarse = driver._coarse_key(spark.createDataFrame([(k,) for k in keys], "k string"), "k")
    assert [r[0] for r in spark.createDataFrame([(k,) for k in keys], "k string").select(coarse).collect()] == [
        "7.0", "7.0", "7.0", "7.0", "7.0", "70.0", "70.0", "7.0", "7.0", "ab", "ab", "ab"]



def test_the_coarse_key_of_a_plain_name_is_the_name_itself(spark: SparkSession) -> None:
    """The coarse key's shortcut for names (ASCII letters and digits, not
    starting with i or n) gives what the full expression gives."""
    from pyspark.sql import functions as F

    values = ["s1", "Zz9", "abc", "x7e0", "Inf", "inf", "Infinity", "nan", "NaN", "n1", "i2", "infx", "x_1", "a b",
              "b\u2003", "\u0667", "s\u0667", "7", "007", "7.0", "e5", "E5", "d1", "f2", "x1d", "0x1p3", "é", "", None]
    df = spark.createDataFrame([(v,) for v in values], "k string")
    full = F.coalesce(F.translate(F.col("k"), *driver._key_chars()).try_cast("double").cast("string"),
                      F.translate(F.col("k"), *driver._key_chars()))
    rows = df.select(driver._coarse_key(df, "k").alias("fast"), full.alias("full"),
                     F.col("k").rlike(driver._PLAIN_NAME).alias("plain")).collect()
    assert [r["fast"] for r in rows] == [r["full"] for r in rows]
    assert [v for v, r in zip(values, rows) if r["plain"]] == ["s1", "Zz9", "abc", "x7e0", "e5", "E5", "d1", "f2",
                                                               "x1d"]



def test_a_streaming_dataframe_is_refused_with_what_to_do_instead(spark: SparkSession) -> None:
    stream = spark.readStream.format("rate").load()
    with pytest.raises(ValueError) as e:
        replay(stream, "h(X) <- a(X).\n", event="a", args=["value"], time="timestamp")
    assert str(e.value) == (
        "replay reads a table (spark.read), not a stream (spark.readStream): write the stream's rows to files and "
        "replay those, or feed a live stream to Engine.emit or etalis run --events -")


@pytest.mark.parametrize("times, dtype", [
    (["2024-07-01T00:00:00Z", "2024-07-01T00:10:00Z", "2024-07-01T01:20:00+01:00", "2024-07-01T00:30:00Z"],
     "datetime64[us, UTC]"),
    (["1", "2.5", "3", "4"], "float64")])
def test_run_and_replay_write_parquet_of_one_schema(
        spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str], times: list[str], dtype: str) -> None:
    """start and end: timestamps adjusted to UTC when the input writes dates, else seconds; pandas reads the
    files of run and replay to equal frames."""
    import pandas as pd

    rules = tmp_path / "p.etl"
    rules.write_text("h(X, Y) <- (a(X, Y) seq b(X, Y)) within 3600.\n")
    data = tmp_path / "p.csv"
    data.write_text("k,x,y,t\n" + "".join(f"{k},{x},v{x},{t}\n" for k, x, t in zip("abab", [1, 1, 2, 2], times)))
    mapping = ["--event-col", "k", "--args", "x,y", "--time", "t"]
    assert cli.main(["run", str(rules), str(data), *mapping, "--out", str(tmp_path / "run.parquet")]) == 0
    assert cli.main(["replay", str(rules), "--events", str(data), *mapping, "--out", str(tmp_path / "replay"),
                     "--single-file", "--no-progress"]) == 0
    capsys.readouterr()
    run = pd.read_parquet(tmp_path / "run.parquet")
    replayed = pd.read_parquet(tmp_path / "replay" / "detections.parquet")
    assert (list(run.columns), str(run.dtypes["arg1"]), str(run.dtypes["start"]), str(run.dtypes["end"])) == (
        ["event", "arg1", "arg2", "start", "end"], "int64", dtype, dtype)
    pd.testing.assert_frame_equal(run, replayed)
    first = [run["start"][0], run["end"][1]]
    if dtype == "float64":
        assert first == [1.0, 4.0]
    else:
        assert first == [pd.Timestamp("2024-07-01T00:00:00Z"), pd.Timestamp("2024-07-01T00:30:00Z")]
