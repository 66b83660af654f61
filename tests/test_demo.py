"""`make demo` in a clone with nothing beside it: the repository's committed
state, cloned into an empty folder, runs examples/wind_area/demo.sh with
its own ``etalis`` and the data of its ``data/`` (the defaults): a Spark replay of the wind area rules with the stations as RDF
individuals, the table in the stations' local times, the timeline PNG,
and the Boxing Day blizzard at JFK."""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
from pathlib import Path

from test_examples import WIND_AREA_TABLE

ROOT = Path(__file__).resolve().parents[1]


def test_a_fresh_clone_runs_the_demo_on_its_own_data(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=120)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clone"]
    # the clone's own package, on the installed dependencies: an untrusted rule file may
    # declare the ontologies shipped with the etalis that runs it, the clone's ontologies/
    env = {k: v for k, v in os.environ.items() if k not in ("DATA", "OUT")}
    env |= {"ETALIS": f"{sys.executable} -m etalis_py.cli", "PYTHONPATH": str(clone / "src"),
            "PYTHONWARNINGS": "ignore::FutureWarning"}  # as the Makefile's demo target sets them
    run = subprocess.run(["sh", "examples/wind_area/demo.sh"], cwd=clone, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    printed = re.sub(r"(seconds: |, )\d+\.\d+( s)?", r"\1S\2", run.stdout)
    assert printed == (
        "== High wind at 384 US weather stations, 8 August 2004 (LinkedSensorData)\n"
        "$ etalis replay examples/wind_area/wind_area.etl --partition-by STATIONID ...   (Spark, local mode)\n"
        "rows: 10030, events: 10030, rejected: 0, detections: 20, warnings: 0, seconds: S\n"
        "  stage 1 (partitioned by STATIONID; 4 rules): events in 10030, detections 16, passed on 16, S s "
        "(8 tasks, rules compiled in 2)\n"
        "  stage 2 (global (one partition: its rules join events that share no key); 1 rules): events in 16, "
        "detections 4, passed on 0, S s (1 tasks, rules compiled in 1)\n"
        "\n"
        + WIND_AREA_TABLE +
        "\n"
        "== Blizzards at JFK airport (KJFK), 2010-2018 (NOAA hourly observations, in the airport's local time)\n"
        "$ etalis run examples/blizzard/blizzard.etl ...\n"
        "blizzard, 26 Dec 2010 20:51 to 23:51 (3h 00m)\n")
    png = Path("out/demo/timeline.png")
    stderr = run.stderr.splitlines()
    assert stderr[0] == f"{png}: 20 bars in 9 lanes, 6 signals, 1200 x 720 pixels"
    data = (clone / png).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (1200, 720)   # 150 margin + 300 signals + 9 lanes of 30
    assert re.sub(r"\d+\.\d+", "S", stderr[1]) == (
        "events read: 75083, accepted: 75083, rejected: 0, detections: 1, warnings: 0, seconds: S, pending: 11, "
        "cpu seconds: S")
    assert len(stderr) == 2
