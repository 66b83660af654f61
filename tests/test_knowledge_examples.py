"""The reasoning examples of the ETALIS paper (enhanced fire, jet stream warning,
heat index classification), run as a user runs them and through the API,
with their exact detections."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from etalis_py import Detection, Engine

ROOT = Path(__file__).parents[1]
EXAMPLES = ROOT / "examples"
OBS = "http://example.org/etalis-py/observations#"

ENHANCED_FIRE = [
    {"event": "enhanced_fire", "args": ["napa"], "start": 0, "end": 3600},
    {"event": "enhanced_fire", "args": ["sonoma"], "start": 5400, "end": 7200},
]
JET_STREAM = [
    {"event": "jet_stream_warning", "args": ["ua857", "oregon_coast", "wyoming"], "start": 0, "end": 600},
    {"event": "jet_stream_warning", "args": ["aa100", "texas", "gulf_coast"], "start": 2400, "end": 3000},
]
HEAT_INDEX = [
    {"event": "heat_alert", "args": ["miami", "extreme_caution", 100], "start": 0, "end": 600},
    {"event": "heat_alert", "args": ["phoenix", "extreme_caution", 99], "start": 0, "end": 600},
    {"event": "heat_alert", "args": ["new_york", "caution", 88], "start": 3600, "end": 4200},
    {"event": "heat_alert", "args": ["miami", "extreme_danger", 143], "start": 3600, "end": 4200},
    {"event": "heat_alert", "args": ["phoenix", "danger", 122], "start": 3600, "end": 4200},
]


@pytest.mark.parametrize(
    "rules,events,expected",
    [
        ("enhanced_fire/enhanced_fire.etl", "enhanced_fire/events.jsonl", ENHANCED_FIRE),
        ("jet_stream/jet_stream.etl", "jet_stream/events.events", JET_STREAM),
        ("heat_index/heat_index.etl", "heat_index/readings.events", HEAT_INDEX),
    ],
    ids=["enhanced_fire", "jet_stream", "heat_index"],
)
def test_example_runs_from_the_command_line_with_its_exact_detections(
    rules: str, events: str, expected: list[dict[str, object]], tmp_path: Path
) -> None:
    # run from another directory: the example's ontologies are found relative to its rule file
    r = subprocess.run(
        [sys.executable, "-m", "etalis_py.cli", "run", str(EXAMPLES / rules), "--events", str(EXAMPLES / events)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == expected
    assert r.stderr.splitlines()[-1].startswith(f"events read: {sum(1 for line in (EXAMPLES / events).read_text().splitlines() if line.startswith(('{', 'event')))}")


def test_enhanced_fire_diablo_is_detected_and_temperature_observation_is_not() -> None:
    with Engine.from_file(EXAMPLES / "enhanced_fire" / "enhanced_fire.etl") as engine:
        assert engine.emit("active_fire", "napa", at=0) == []
        assert engine.emit("weather_observation", "napa", OBS + "observ_3", at=1800) == []  # a TemperatureObservation
        assert engine.emit("weather_observation", "napa", OBS + "observ_1", at=3600) == [  # a Diablo
            Detection("enhanced_fire", ("napa",), 0, 3600)
        ]
        assert engine.emit("weather_observation", "napa", OBS + "observ_2", at=10801) == []  # too late


def test_jet_stream_warning_follows_the_stream_to_the_turbulence() -> None:
    with Engine.from_file(EXAMPLES / "jet_stream" / "jet_stream.etl") as engine:
        result = engine.emit_many([
            ("clear_air_turbulence", ["great_lakes"], 0),
            ("airplane", ["ua1", "pacific_140w"], 10),  # six links upstream
            ("airplane", ["ua2", "great_lakes"], 20),  # at the turbulence, not before it
            ("airplane", ["ua3", "baja"], 30),  # the other jet stream
        ])
        assert result.detections == [
            Detection("jet_stream_warning", ("ua1", "pacific_140w", "great_lakes"), 0, 10)
        ]


def test_heat_index_classes_and_the_filter_below_80() -> None:
    with Engine.from_file(EXAMPLES / "heat_index" / "heat_index.etl") as engine:
        result = engine.emit_many([
            ("temperature", ["kjfk", 80], 0), ("humidity", ["kjfk", 40], 60),  # feels like 80: caution
            ("temperature", ["klga", 79], 100), ("humidity", ["klga", 40], 160),  # 79: filtered out
            ("temperature", ["kmia", 90], 200), ("humidity", ["kmia", 75], 260),  # 109: danger
            ("humidity", ["kphx", 5], 300), ("temperature", ["kphx", 116], 2100),  # 30 min: still paired
            ("temperature", ["xxxx", 120], 2200), ("humidity", ["xxxx", 50], 2210),  # no area: no alert
        ])
        assert result.detections == [
            Detection("heat_alert", ("new_york", "caution", 80), 0, 60),
            Detection("heat_alert", ("miami", "danger", 109), 200, 260),
            Detection("heat_alert", ("phoenix", "danger", 107), 300, 2100),
        ]
