"""examples/hot_spells: three readings above 86 F (30 C) within 6 hours at
one station, on the 384 stations of data/weather, under the policies and
skip strategies its README tabulates (the README's own commands are run by
test_example_readmes.py): the exact detections of station 3206 and the
counts."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from io import StringIO
from pathlib import Path

import pytest

from etalis_py import cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "hot_spells"
OBS = ROOT / "data" / "weather" / "lsd-charley-2004-08-08-obs.csv"
COLUMNS = ("SAMPLINGTIME,STATIONID,WINDSPEED,RELATIVEHUMIDITY,AIRTEMPERATURE,PRECIPITATION,DEWPOINT,"
           "WINDDIRECTION,WINDGUST,PRECIPITATIONACCUMULATED,PRESSURE,PRECIPITATIONSMOOTHED,"
           "SOILTEMPERATURE,VISIBILITY,PEAKWINDSPEED,WATERTEMPERATURE,PEAKWINDDIRECTION")
MAPPING = ["--columns", COLUMNS, "--event", "obs", "--args", "STATIONID,AIRTEMPERATURE",
           "--time", "SAMPLINGTIME", "--time-format", "%Y-%m-%d %H:%M:%S.%f+0:00"]
PHOENIX = timezone(timedelta(hours=-7))      # Arizona keeps standard time in summer


def detections(rules: Path, *options: str) -> list[tuple[int, str, str]]:
    """`etalis run`'s detections, each as (station, start, end), the times local to Phoenix."""
    ns = cli.parser().parse_args(["run", str(rules), "--events", str(OBS), "--quiet", *MAPPING, *options])
    out, err = StringIO(), StringIO()
    assert cli.run(ns, out, err) == 0, err.getvalue()
    assert err.getvalue().splitlines()[-1].startswith("events read: 10030, accepted: 10002, rejected: 28, ")
    found = [json.loads(line) for line in out.getvalue().splitlines()]
    return [(d["args"][0], _local(d["start"]), _local(d["end"])) for d in found]


def _local(t: float) -> str:
    return datetime.fromtimestamp(t, PHOENIX).strftime("%H:%M")


def of_3206(found: list[tuple[int, str, str]]) -> list[tuple[str, str]]:
    return [(start, end) for station, start, end in found if station == 3206]


STN_3206 = [("02:15", "02:45"), ("02:30", "03:00"), ("02:45", "03:15"), ("03:00", "03:25"), ("03:15", "03:45"),
            ("03:25", "04:00"), ("03:45", "04:35"), ("04:00", "04:50"), ("04:35", "05:00")]


def test_partition_contiguity_breaks_a_run_at_a_reading_of_the_station_that_is_not_hot() -> None:
    found = detections(EXAMPLE / "hot.etl", "--policy", "strict(partition)")
    assert len(found) == 73
    # the two that take 03:45 or 04:00 and 04:35 span the 86 F at 04:20
    assert of_3206(found) == [s for s in STN_3206 if s not in (("03:45", "04:35"), ("04:00", "04:50"))]
    assert detections(EXAMPLE / "hot.etl", "--policy", "strict") == []


def test_skip_to_next_keeps_one_match_per_first_reading(tmp_path: Path) -> None:
    rules = tmp_path / "next.etl"
    rules.write_text(":- skip(skip_to_next).\n" + (EXAMPLE / "hot.etl").read_text())
    found = detections(rules)
    assert len(found) == 75 and of_3206(found) == STN_3206
    assert detections(EXAMPLE / "hot.etl", "--policy", "stn") == found
    # nxt: one match per last reading, with the earliest readings
    found = detections(EXAMPLE / "hot.etl", "--policy", "nxt")
    assert len(found) == 75 and of_3206(found) == [("02:15", end) for _, end in STN_3206]


@pytest.mark.parametrize("policy", ["stn", "nxt"])
def test_one_detection_per_episode_under_each_policy(policy: str) -> None:
    found = detections(EXAMPLE / "episodes.etl", "--policy", policy)
    assert found == detections(EXAMPLE / "episodes.etl")
    assert len(found) == 27 and of_3206(found) == [("02:15", "02:45"), ("03:00", "03:25"), ("03:45", "04:35")]


def test_one_detection_per_episode_of_readings_in_a_row() -> None:
    found = detections(EXAMPLE / "episodes.etl", "--policy", "strict(partition)")
    assert len(found) == 27 and of_3206(found) == [("02:15", "02:45"), ("03:00", "03:25"), ("04:35", "05:00")]
