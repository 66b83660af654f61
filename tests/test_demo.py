"""`make demo`: examples/wind_area/demo.sh, the commands it runs, on a
reduced copy of the shared data (every observation of the stations that
warn and of one station in ten besides; JFK's December 2010), through the
same rules, command lines and code: a Spark replay of the wind area rules
with the stations as RDF individuals, the table in the stations' local
times, the timeline PNG, and the Boxing Day blizzard at JFK."""

from __future__ import annotations

import csv
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

from test_examples import WIND_AREA_TABLE

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "weather"
WARNING_STATIONS = {"3114", "3269", "3280", "3287", "3303", "3489"}

def reduced_data(top: Path) -> tuple[int, int]:
    """The reduced copy of the data under ``top/weather``; its row counts."""
    (top / "weather").mkdir(parents=True)
    with open(DATA / "lsd-charley-2004-08-08-obs.csv", newline="") as f:
        charley = [row for row in csv.reader(f) if row and (row[1] in WARNING_STATIONS or int(row[1]) % 10 == 0)]
    with open(top / "weather" / "lsd-charley-2004-08-08-obs.csv", "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(charley)
    lines = (DATA / "noaa-jfk-hourly-2010-2018.csv").read_text().splitlines(keepends=True)
    december = [line for line in lines[1:] if line[2:11] == "-12-2010 "]
    (top / "weather" / "noaa-jfk-hourly-2010-2018.csv").write_text(lines[0] + "".join(december))
    return len(charley), len(december)


def test_make_demo_prints_the_wind_table_in_local_times_draws_the_timeline_and_finds_the_jfk_blizzard(
        tmp_path: Path) -> None:
    rows, jfk_rows = reduced_data(tmp_path / "data")
    assert (rows, jfk_rows) == (1165, 744)
    out = tmp_path / "out"
    env = {**os.environ, "ETALIS": f"{sys.executable} -m etalis_py.cli", "DATA": str(tmp_path / "data"),
           "OUT": str(out), "PYTHONWARNINGS": "ignore::FutureWarning"}   # as the Makefile's demo target sets them
    run = subprocess.run(["sh", "examples/wind_area/demo.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    printed = re.sub(r"(seconds: |, )\d+\.\d+( s)?", r"\1S\2", run.stdout)
    assert printed == (
        "== High wind at 384 US weather stations, 8 August 2004 (LinkedSensorData)\n"
        "$ etalis replay examples/wind_area/wind_area.etl --partition-by STATIONID ...   (Spark, local mode)\n"
        f"rows: {rows}, events: {rows}, rejected: 0, detections: 20, warnings: 0, seconds: S\n"
        "  stage 1 (partitioned by STATIONID; 4 rules): events in 1165, detections 16, passed on 16, S s "
        "(8 tasks, rules compiled in 2)\n"
        "  stage 2 (global (one partition: its rules join events that share no key); 1 rules): events in 16, "
        "detections 4, passed on 0, S s (1 tasks, rules compiled in 1)\n"
        "\n"
        + WIND_AREA_TABLE +
        "\n"
        "== Blizzards at JFK airport (KJFK), 2010-2018 (NOAA hourly observations, in the airport's local time)\n"
        "$ etalis run examples/blizzard/blizzard.etl ...\n"
        "blizzard, 26 Dec 2010 20:51 to 23:51 (3h 00m)\n")
    png = out / "timeline.png"
    assert run.stderr.splitlines()[0] == f"{png}: 20 bars in 9 lanes, 6 signals, 1200 x 720 pixels"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (1200, 720)   # 150 margin + 300 signals + 9 lanes of 30
    assert run.stderr.splitlines()[1].startswith(
        f"events read: {jfk_rows}, accepted: {jfk_rows}, rejected: 0, detections: 1, warnings: 0")
