"""The examples, run as a user runs them, on the real data they name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from etalis_py.outputs.report import Readable, read_detections

ROOT = Path(__file__).parents[1]
DATA = ROOT / "data"


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
        ("wind_area", [3269, 3280, "km(161)"], 1091966700, 1091972100),
        ("wind_warning", [3114], 1091970000, 1091972700),
        ("wind_warning", [3303], 1091970000, 1091973600),
        ("wind_area", [3280, 3303, "km(17)"], 1091966700, 1091973600),
        ("wind_area", [3269, 3303, "km(150)"], 1091969100, 1091973600),
        ("wind_warning", [3489], 1091973600, 1091976300),
        ("wind_warning", [3269], 1091973900, 1091976600),
        ("wind_area", [3269, 3303, "km(150)"], 1091970000, 1091976600),
    ]
]

# what `make demo` prints for them: `etalis table` with the stations' names
WIND_AREA_TABLE = """\
local times: each row in the zone of its first argument that has one (else UTC)
event         args                                                   start              end    zone  duration
wind_warning  Readville MA (C2236)                                   08 Aug 2004 02:10  02:55  EDT   45m 00s
wind_warning  Pierce NE (C1134)                                      08 Aug 2004 02:15  03:00  CDT   45m 00s
wind_warning  Readville MA (C2236)                                   08 Aug 2004 03:30  04:15  EDT   45m 00s
wind_warning  Readville MA (C2236)                                   08 Aug 2004 04:45  05:30  EDT   45m 00s
wind_warning  Alma KS (C1681)                                        08 Aug 2004 03:45  04:30  CDT   45m 00s
wind_warning  Alma KS (C1681)                                        08 Aug 2004 04:50  05:35  CDT   45m 00s
wind_warning  Readville MA (C2236)                                   08 Aug 2004 06:00  06:45  EDT   45m 00s
wind_warning  Berthoud CO (C1650)                                    08 Aug 2004 04:50  05:35  MDT   45m 00s
wind_warning  Readville MA (C2236)                                   08 Aug 2004 07:05  07:45  EDT   40m 00s
wind_warning  Berthoud CO (C1650)                                    08 Aug 2004 06:05  06:50  MDT   45m 00s
wind_warning  Readville MA (C2236)                                   08 Aug 2004 08:15  09:05  EDT   50m 00s
wind_warning  Black Forest CO (C1617)                                08 Aug 2004 06:45  07:35  MDT   50m 00s
wind_area     Black Forest CO (C1617), Berthoud CO (C1650), km(161)  08 Aug 2004 06:05  07:35  MDT   1h 30m
wind_warning  Pierce NE (C1134)                                      08 Aug 2004 08:00  08:45  CDT   45m 00s
wind_warning  Mead CO (C1720)                                        08 Aug 2004 07:00  08:00  MDT   1h 00m
wind_area     Berthoud CO (C1650), Mead CO (C1720), km(17)           08 Aug 2004 06:05  08:00  MDT   1h 55m
wind_area     Black Forest CO (C1617), Mead CO (C1720), km(150)      08 Aug 2004 06:45  08:00  MDT   1h 15m
wind_warning  Readville MA (C2236)                                   08 Aug 2004 10:00  10:45  EDT   45m 00s
wind_warning  Black Forest CO (C1617)                                08 Aug 2004 08:05  08:50  MDT   45m 00s
wind_area     Black Forest CO (C1617), Mead CO (C1720), km(150)      08 Aug 2004 07:00  08:50  MDT   1h 50m
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


def test_wind_area_stations_are_rdf_individuals_with_the_positions_of_lsd_stations() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "examples/wind_area/stations.py"), "--check"],
                       capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (0, "")
    turtle = (ROOT / "examples/wind_area/stations.ttl").read_text()
    assert turtle.count(" a st:MesoWestStation ;\n") == 384
    assert ('st:station3489 a st:MesoWestStation ;\n'
            '    st:id 3489 ; st:code "C2236" ; rdfs:label "Readville MA (C2236)" ;\n'
            '    geo:lat 42.2122 ; geo:long -71.1147 ; st:timeZone "America/New_York" ;\n'
            '    st:nearestPlace "Readville, MA" ; st:nearestPlaceKm 3.6 .\n') in turtle
    assert (ROOT / "examples/wind_area/stations.csv").read_text().splitlines()[:2] == [
        "value,name,tz", "3000,Rotterdam NY (C0646),America/New_York"]


def test_wind_area_rules_ask_the_class_hierarchy_of_the_stations_with_isa() -> None:
    # stations.ttl types station 3489 a MesoWest station; only the RDFS closure makes it a weather
    # station, which high wind asks; station 1 is none, so its 30 mph is no high wind
    from etalis_py import Engine

    with Engine.from_file(WIND_AREA_RULES) as engine:
        found = engine.emit_many([("obs", [3489, 12.0], 0), ("obs", [3489, 9.0], 60), ("obs", [1, 30.0], 120),
                                  ("obs", [3489, 10.0], 180), ("obs", [3489, 15.0], 240),
                                  ("obs", [3489, 11.0], 300)]).detections
    assert [(d.event, d.args, d.start, d.end) for d in found] == [("wind_warning", (3489,), 0, 300)]
