"""The examples, run as a user runs them, on the real data they name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from etalis_py.report import Readable, read_detections

ROOT = Path(__file__).parents[1]
DATA = ROOT.parent / "shared" / "data"


# 26 December 2010, 20:51 to 23:51 (the file's local times, read as UTC)
BOXING_DAY = {"start": 1293396660.0, "end": 1293407460.0}
ONE_DETECTION = "events read: 75083, accepted: 75083, rejected: 0, detections: 1, warnings: 0"


def run_on_jfk(example: str) -> tuple[list[dict[str, object]], str]:
    """`etalis run` of a blizzard example on the eight years of JFK
    observations: its detections and its summary line."""
    r = subprocess.run(
        [sys.executable, "-m", "etalis_py.cli", "run", str(ROOT / "examples/blizzard" / example),
         "--events", str(DATA / "weather/noaa-jfk-hourly-2010-2018.csv"),
         "--event", "reading", "--args", "VISIBILITY,WindSpeed",
         "--time", "DATE", "--time-format", "%d-%m-%Y %H:%M", "--quiet"],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()], r.stderr.splitlines()[-1]


def test_blizzard_example_finds_the_boxing_day_blizzard_in_eight_years_of_jfk_data() -> None:
    detections, summary = run_on_jfk("blizzard.etl")
    assert detections == [{"event": "blizzard", "args": [1293396660.0, 1293407460.0], **BOXING_DAY}]
    assert summary.startswith(ONE_DETECTION)
    # as `make demo` prints it
    found = read_detections(json.dumps(d) for d in detections)
    assert Readable(args=False).lines(found) == "blizzard, 26 Dec 2010 20:51 to 23:51 (3h 00m)\n"


def test_the_papers_blizzard_settling_counter_warns_of_the_same_blizzard() -> None:
    # rules (39) and (40) of the ETALIS paper: a counter over blizzard
    # readings within 6 hours, a warning at 4 or more over 3 hours or more
    detections, summary = run_on_jfk("settling.etl")
    assert detections == [{"event": "blizzard_warning", "args": [4], **BOXING_DAY}]
    assert summary.startswith(ONE_DETECTION)


def test_the_blizzard_as_negation_over_a_window_finds_the_same_spell() -> None:
    # fnot: blizzard readings 3 to 6 hours apart with no clear reading between
    detections, summary = run_on_jfk("unbroken.etl")
    assert detections == [{"event": "blizzard", "args": [1293396660.0, 1293407460.0], **BOXING_DAY}]
    assert summary.startswith(ONE_DETECTION)


WIND_AREA_RULES = ROOT / "examples/wind_area/wind_area.etl"
CHARLEY_OBS = DATA / "weather/lsd-charley-2004-08-08-obs.csv"
WIND_AREA_MAPPING = [
    "--columns", "SAMPLINGTIME,STATIONID,WINDSPEED,RELATIVEHUMIDITY,AIRTEMPERATURE,PRECIPITATION,DEWPOINT,"
    "WINDDIRECTION,WINDGUST,PRECIPITATIONACCUMULATED,PRESSURE,PRECIPITATIONSMOOTHED,SOILTEMPERATURE,VISIBILITY,"
    "PEAKWINDSPEED,WATERTEMPERATURE,PEAKWINDDIRECTION",
    "--event", "obs", "--args", "STATIONID,WINDSPEED",
    "--time", "SAMPLINGTIME", "--time-format", "%Y-%m-%d %H:%M:%S.%f+0:00"]

# Sustained high wind at 6 stations (4 readings of 10 mph or more within an
# hour), and wind areas: warnings at two stations at most 300 km apart
# within 2 hours, all on Colorado's Front Range.
WIND_AREA = [
    {"event": event, "args": args, "start": float(start), "end": float(end)} for event, args, start, end in [
        ("wind_warning", [3489], 1091945400, 1091948100),
        ("wind_warning", [3114], 1091949300, 1091952000),
        ("wind_warning", [3489], 1091950200, 1091952900),
        ("wind_warning", [3489], 1091954700, 1091957400),
        ("wind_warning", [3287], 1091954700, 1091957400),
        ("wind_warning", [3287], 1091958600, 1091961300),
        ("wind_warning", [3489], 1091959200, 1091961900),
        ("wind_warning", [3280], 1091962200, 1091964900),
        ("wind_warning", [3489], 1091963100, 1091965500),
        ("wind_warning", [3280], 1091966700, 1091969400),
        ("wind_warning", [3489], 1091967300, 1091970300),
        ("wind_warning", [3269], 1091969100, 1091972100),
        ("wind_area", [3269, 3280, 161], 1091966700, 1091972100),
        ("wind_warning", [3114], 1091970000, 1091972700),
        ("wind_warning", [3303], 1091970000, 1091973600),
        ("wind_area", [3280, 3303, 17], 1091966700, 1091973600),
        ("wind_area", [3269, 3303, 150], 1091969100, 1091973600),
        ("wind_warning", [3489], 1091973600, 1091976300),
        ("wind_warning", [3269], 1091973900, 1091976600),
        ("wind_area", [3269, 3303, 150], 1091970000, 1091976600),
    ]
]

# what `make demo` prints for them: `etalis table` with the stations' names
WIND_AREA_TABLE = """\
times in UTC
event         args               start              end    duration
wind_warning  C2236              08 Aug 2004 06:10  06:55  45m 00s
wind_warning  C1134              08 Aug 2004 07:15  08:00  45m 00s
wind_warning  C2236              08 Aug 2004 07:30  08:15  45m 00s
wind_warning  C2236              08 Aug 2004 08:45  09:30  45m 00s
wind_warning  C1681              08 Aug 2004 08:45  09:30  45m 00s
wind_warning  C1681              08 Aug 2004 09:50  10:35  45m 00s
wind_warning  C2236              08 Aug 2004 10:00  10:45  45m 00s
wind_warning  C1650              08 Aug 2004 10:50  11:35  45m 00s
wind_warning  C2236              08 Aug 2004 11:05  11:45  40m 00s
wind_warning  C1650              08 Aug 2004 12:05  12:50  45m 00s
wind_warning  C2236              08 Aug 2004 12:15  13:05  50m 00s
wind_warning  C1617              08 Aug 2004 12:45  13:35  50m 00s
wind_area     C1617, C1650, 161  08 Aug 2004 12:05  13:35  1h 30m
wind_warning  C1134              08 Aug 2004 13:00  13:45  45m 00s
wind_warning  C1720              08 Aug 2004 13:00  14:00  1h 00m
wind_area     C1650, C1720, 17   08 Aug 2004 12:05  14:00  1h 55m
wind_area     C1617, C1720, 150  08 Aug 2004 12:45  14:00  1h 15m
wind_warning  C2236              08 Aug 2004 14:00  14:45  45m 00s
wind_warning  C1617              08 Aug 2004 14:05  14:50  45m 00s
wind_area     C1617, C1720, 150  08 Aug 2004 13:00  14:50  1h 50m
"""


def etalis(*args: str) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r


def test_wind_area_example_warns_per_station_and_of_areas_of_nearby_stations(tmp_path: Path) -> None:
    r = etalis("run", str(WIND_AREA_RULES), "--events", str(CHARLEY_OBS), *WIND_AREA_MAPPING, "--quiet")
    assert [json.loads(line) for line in r.stdout.splitlines()] == WIND_AREA
    assert r.stderr.startswith("events read: 10030, accepted: 10030, rejected: 0, detections: 20, warnings: 0")
    out = tmp_path / "wind_area.jsonl"
    out.write_text(r.stdout)
    names = str(ROOT / "examples/wind_area/stations.csv")
    assert etalis("table", str(out), "--names", names).stdout == WIND_AREA_TABLE


def test_wind_area_station_facts_and_names_are_those_of_lsd_stations() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "examples/wind_area/stations.py"), "--check"],
                       capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (0, "")
    rules = WIND_AREA_RULES.read_text()
    assert rules.count("\nstation(") == 384
    assert "\nstation(3489, 'C2236', 42.2122, -71.1147).\n" in rules
    assert (ROOT / "examples/wind_area/stations.csv").read_text().splitlines()[:2] == ["value,name", "3000,C0646"]
