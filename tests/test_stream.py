"""Live detection on Spark Structured Streaming (`etalis stream`,
`etalis_py.spark.detect_stream`): the detections of `etalis run` on the
concatenation of the files, micro-batch after micro-batch, across restarts
of a killed driver; every row accounted for; what a stream cannot run or
read refused in one line."""

from __future__ import annotations

import collections
import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from io import StringIO
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pyspark.sql import SparkSession

from etalis_py import cli
from etalis_py.bridge.engine import Engine
from etalis_py.spark import live
from etalis_py.spark.stream import KAFKA_PACKAGE, read_stream, stream_session
from etalis_py.inputs.mapping import Mapping

pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "weather"
WIND_AREA = ROOT / "examples" / "wind_area" / "wind_area.etl"
COLUMNS = ("SAMPLINGTIME,STATIONID,WINDSPEED,RELATIVEHUMIDITY,AIRTEMPERATURE,PRECIPITATION,DEWPOINT,"
           "WINDDIRECTION,WINDGUST,PRECIPITATIONACCUMULATED,PRESSURE,PRECIPITATIONSMOOTHED,"
           "SOILTEMPERATURE,VISIBILITY,PEAKWINDSPEED,WATERTEMPERATURE,PEAKWINDDIRECTION")
WIND_MAPPING = ["--columns", COLUMNS, "--event", "obs", "--args", "STATIONID,WINDSPEED", "--time", "SAMPLINGTIME",
                "--time-format", "%Y-%m-%d %H:%M:%S.%f+0:00"]
WARNING_STATIONS = {"3114", "3269", "3280", "3287", "3303", "3489"}


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    """One local Spark for the in-process tests: 2 cores, the RocksDB state store."""
    s = stream_session("local[2,4]", {"spark.sql.session.timeZone": "UTC", "spark.sql.shuffle.partitions": "2"})
    yield s
    s.stop()


def wind_rows() -> list[list[str]]:
    """The observations of the stations that warn and of one station in ten besides."""
    with open(DATA / "lsd-charley-2004-08-08-obs.csv", newline="") as f:
        return [row for row in csv.reader(f) if row and (row[1] in WARNING_STATIONS or int(row[1]) % 10 == 0)]


def write_csv(path: Path, rows: Sequence[Sequence[str]], stamp: float) -> None:
    """A file of ``rows``, renamed into place, modified at ``stamp``."""
    text = StringIO()
    csv.writer(text, lineterminator="\n").writerows(rows)
    write_in_place(path, text.getvalue(), stamp)


def write_in_place(path: Path, text: str, stamp: float) -> None:
    """A file of ``text``, renamed into place (a stream never sees it half written), modified at ``stamp``."""
    hidden = path.with_name("." + path.name)
    hidden.write_text(text)
    os.utime(hidden, (stamp, stamp))
    os.replace(hidden, path)


def run_lines(rules: Path, events: Path, mapping: Sequence[str], *extra: str) -> list[str]:
    """`etalis run`'s detection lines."""
    ns = cli.parser().parse_args(["run", str(rules), "--events", str(events), "--quiet", *mapping, *extra])
    out, err = StringIO(), StringIO()
    assert cli.run(ns, out, err) == 0, err.getvalue()
    return out.getvalue().splitlines()


def output_lines(out: Path, part: str) -> list[str]:
    """The lines a stream committed to ``part`` of its jsonl output."""
    lines: list[str] = []
    for f in live_files(out, part):
        lines += [line for line in f.read_text().splitlines() if line]
    return lines


def live_files(out: Path, part: str) -> list[Path]:
    from etalis_py.spark.stream import committed_files

    return committed_files(out, part, set())


# -- the processor, without Spark ------------------------------------------------


class _Value:
    def __init__(self) -> None:
        self.value: Any = None
        self.writes = 0

    def exists(self) -> bool:
        return self.value is not None

    def get(self) -> Any:
        return self.value

    def update(self, value: Any) -> None:
        self.value = value
        self.writes += 1


class _Map:
    def __init__(self) -> None:
        self.entries: dict[Any, Any] = {}
        self.writes = 0
        self.reads = 0

    def getValue(self, key: Any) -> Any:
        self.reads += 1
        return self.entries.get(key)

    def updateValue(self, key: Any, value: Any) -> None:
        self.entries[key] = value
        self.writes += 1


class _Handle:
    def __init__(self) -> None:
        self.state = _Value()
        self.map = _Map()

    def getValueState(self, name: str, schema: str) -> _Value:
        return self.state

    def getMapState(self, name: str, key: str, value: str) -> _Map:
        return self.map


def first_stage(rules: str, mapping: Mapping, partition_by: str, columns: Sequence[str]) -> live.LiveStage:
    """Stage 1 of ``rules`` over CSV rows of ``columns`` (all text)."""
    import pyarrow as pa

    from etalis_py.spark.mapping import MapSpec
    from etalis_py.spark.partition import StageSpec
    from etalis_py.spark.stream import live_plan

    the_plan = live_plan(rules, "<rules>", mapping, partition_by)
    (st,) = the_plan.stages
    with Engine.from_string(rules) as engine:
        printed = tuple(engine.printed)
    spec = StageSpec(1, rules, "<rules>", st.rules, printed, None, None, True, True,
                     pa.schema([(c, pa.string()) for c in columns]))
    return live.LiveStage(spec, MapSpec(mapping, tuple(columns), len(columns), False,
                                        tuple((str(s), 0) for s in st.consumes)))


def feed(processor: live.LiveProcessor, group: str, rows: Sequence[Sequence[str]], name: str) -> pd.DataFrame:
    import pyarrow as pa

    columns = processor.stage.mapping.original if processor.stage.mapping is not None else ()
    batch = pa.RecordBatch.from_pylist([{**dict(zip(columns, r)), live.FILE: name, live.GROUP: group} for r in rows])
    frame = next(live.packed_groups(iter([batch]))).to_pandas()
    out = list(processor.handleInputRows((group,), iter([frame]), None))
    return pd.concat(out) if out else pd.DataFrame(columns=live.ROW_NAMES)


def test_a_key_goes_on_from_its_state_in_the_next_micro_batch_and_it_is_written_only_when_it_changed() -> None:
    rules = "c(K) <- a(K) seq b(K).\n"
    mapping = Mapping.of(event_col="e", args=["k"], time="t")
    stage = first_stage(rules, mapping, "k", ["e", "k", "t"])
    handles = {g: _Handle() for g in ("x", "y")}
    processors = {}
    for g, h in handles.items():
        processors[g] = live.LiveProcessor(stage)
        processors[g].init(h)
    first = feed(processors["x"], "x", [["a", "x", "1"], ["a", "x", "2"]], "f1")
    assert first[first.kind == "d"].empty
    other = feed(processors["y"], "y", [["a", "y", "3"], ["b", "y", "4"]], "f1")   # the engine moves to key y
    assert other[other.kind == "d"].line.tolist() == ['{"event": "c", "args": ["y"], "start": 3, "end": 4}']
    second = feed(processors["x"], "x", [["b", "x", "5"]], "f2")        # x's state is restored
    assert second[second.kind == "d"].line.tolist() == ['{"event": "c", "args": ["x"], "start": 1, "end": 5}',
                                                        '{"event": "c", "args": ["x"], "start": 2, "end": 5}']
    assert handles["x"].state.writes == 2
    late = feed(processors["x"], "x", [["b", "x", "4"]], "f3")          # rejected: the state is not written again
    assert late[late.kind == "r"].line.tolist() == [
        "time 4 is earlier than the last accepted time 5 (events must arrive in time order)"]
    assert json.loads(late[late.kind == "r"].record.iloc[0]) == {"e": "b", "k": "x", "t": "4"}
    assert (handles["x"].state.writes, handles["x"].map.writes) == (2, 2)
    assert handles["x"].map.reads == 0      # a new group has no state to read; then the worker kept what it wrote
    token, seq = handles["x"].state.value
    assert (seq, list(handles["x"].map.entries)) == (2, [('"x"',)])      # the key's canonical text
    live._HELD.clear()                      # another worker: it reads x's state from the state store
    third = feed(processors["x"], "x", [["b", "x", "6"]], "f4")
    assert third[third.kind == "d"].line.tolist() == ['{"event": "c", "args": ["x"], "start": 1, "end": 6}',
                                                      '{"event": "c", "args": ["x"], "start": 2, "end": 6}']
    assert (handles["x"].map.reads, handles["x"].state.value) == (1, (token, 3))


def test_keys_fed_into_their_states_in_one_crossing_are_as_restore_feed_and_snapshot_one_after_the_other() -> None:
    from etalis_py.bridge.engine import KeyState
    from etalis_py.events import batch_list

    rules = "c(K) <- a(K) seq b(K) within 10.\n"
    events = {"x": ["a(x)", "a(x)"], "y": ["a(y)", "b(y)"], "z": ["b(z)", "a(z)"], "w": ["a(w)"]}
    times = {"x": [1, 2], "y": [3, 4], "z": [9, 5], "w": [6]}      # z's second event is late: rejected

    def segment(k: str) -> str:
        return batch_list([f"event({e}, {t})" for e, t in zip(events[k], times[k])])

    with Engine.from_string(rules) as serial, Engine.from_string(rules) as swapped:
        blank = serial.snapshot()
        serial.feed_segments([segment("w")], [False], [1])      # both engines hold w's state first
        swapped.feed_segments([segment("w")], [False], [1])
        held = serial.snapshot()
        states: dict[str, bytes] = {"w": held}
        expected = []
        for k in ("w", "x", "y", "z"):
            if k != "w":
                serial.restore(states.get(k, blank))
            (r,) = serial.feed_segments([segment(k)], [False], [len(events[k])])
            taken = serial.snapshot() if r.accepted else None
            expected.append((r.detection_lines, [x.reason for x in r.rejected], taken,
                             serial.next_due() if taken else None))
        results = swapped.feed_segments(
            [segment(k) for k in ("w", "x", "y", "z")], [False] * 4, [len(events[k]) for k in ("w", "x", "y", "z")],
            [KeyState(None, True), KeyState(blank, True), KeyState(blank, True), KeyState(blank, True)])
        assert [(r.detection_lines, [x.reason for x in r.rejected], r.snapshot, r.due) for r in results] == expected
        assert expected[0][2] is not None and expected[3][1] == [
            "time 5 is earlier than the last accepted time 9 (events must arrive in time order)"]
        assert swapped.stats() == serial.stats()
        assert swapped.snapshot() == serial.snapshot()


# -- refusals, without Spark -------------------------------------------------------


def test_stream_plan_refuses_a_later_stage_that_consumes_input_events_at_its_rule(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("w(S) <- obs(S, V) where V > 10.\n"
                     "pair(S1, S2) <- w(S1) and obs(S2, _).\n")
    ns = cli.parse(["stream", str(rules), "--source", str(tmp_path), "--checkpoint", "ck", "--out", "o", "--plan",
                    "--event", "obs", "--args", "S,V", "--time", "T", "--partition-by", "S"])
    out, err = StringIO(), StringIO()
    with pytest.raises(Exception) as caught:
        cli.stream(ns, out, err)
    assert str(caught.value) == (
        f"{rules}:2:1: error: line 2 runs in stage 2 of the plan and consumes the input event obs/2: a stream "
        "passes only derived events from stage to stage\n"
        "  hint: derive an event from the input event in a rule of its own (e.g. seen(...) <- obs(...)), and use it "
        "here; or run the rule file with etalis replay or etalis run")
    assert cli.main(["stream", str(rules), "--source", str(tmp_path), "--checkpoint", "ck", "--out", "o", "--plan",
                     "--event", "obs", "--args", "S,V", "--time", "T", "--partition-by", "S"]) == 2


def test_stream_plan_reads_the_format_of_the_files_already_in_the_source(tmp_path: Path) -> None:
    rules = tmp_path / "alarm.etl"
    rules.write_text("alarm(X) <- (hot(X) seq smoke(X)) within 3600.\n")
    source = tmp_path / "in"
    source.mkdir()
    (source / "a.jsonl").write_text('{"event": "hot", "args": ["k1"], "time": 1}\n')
    out, err = StringIO(), StringIO()
    ns = cli.parse(["stream", str(rules), "--source", str(source), "--checkpoint", "ck", "--out", "o", "--plan"])
    assert cli.stream(ns, out, err) == 0
    assert (out.getvalue(), err.getvalue()) == (
        "input: any event\n"
        "stage 1: global (one partition: its rules join events that share no key)\n"
        "  line 1: alarm(X) <- hot/1, smoke/1\n"
        "  consumes: hot/1 (input), smoke/1 (input)\n"
        "reported: alarm/1\n", "")


def test_stream_plan_prints_the_stages_of_the_wind_area_rules() -> None:
    out, err = StringIO(), StringIO()
    ns = cli.parse(["stream", str(WIND_AREA), "--source", "in", "--checkpoint", "ck", "--out", "o", "--plan",
                    *WIND_MAPPING, "--partition-by", "STATIONID"])
    assert cli.stream(ns, out, err) == 0
    assert out.getvalue() == (
        "input: obs/2, partition key STATIONID (argument 1)\n"
        "stage 1: partitioned by STATIONID\n"
        "  line 26: high_wind(S, W) <- obs/2\n"
        "  line 32: wind_settling(S, 1) <- high_wind/2\n"
        "  settling: wind_settling(S, C1) <- high_wind/2, wind_settling/2\n"
        "  line 38: wind_warning(S) <- wind_settling/2\n"
        "  consumes: obs/2 (input)\n"
        "  passes on: wind_warning/1\n"
        "stage 2: global (one partition: its rules join events that share no key)\n"
        "  line 45: wind_area(S1, S2, km(D)) <- wind_warning/1\n"
        "  consumes: wind_warning/1 (stage 1)\n"
        "reported: wind_area/3, wind_warning/1\n")


# -- on Spark ----------------------------------------------------------------------


def test_a_kafka_source_without_the_connector_is_refused_in_one_line_naming_the_package(spark: SparkSession) -> None:
    import pyspark

    with pytest.raises(ValueError) as caught:
        read_stream(spark, "kafka://localhost:9092/readings", Mapping.of(columns=["k", "t"]))
    assert str(caught.value) == (
        "the Kafka source needs Spark's Kafka connector, which is not on the class path: give "
        f"--conf spark.jars.packages={KAFKA_PACKAGE}:{pyspark.__version__}")


def test_a_stream_rejects_bad_and_late_rows_with_their_reason_and_counts_every_row(
        spark: SparkSession, tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c(K) <- a(K) seq b(K).\n")
    src = tmp_path / "in"
    src.mkdir()
    now = time.time()
    write_csv(src / "1.csv", [["e", "k", "t"], ["a", "x", "10"], ["a", "y", "11"], ["b", "x", ""]], now)
    write_csv(src / "2.csv", [["e", "k", "t"], ["b", "y", "12"], ["a", "x", "40"], ["b", "x", "50"]], now + 1)
    # 15 is more than the lateness before x's latest time, 47 is not; 100 releases what x and y hold back
    write_csv(src / "3.csv", [["e", "k", "t"], ["b", "x", "15"], ["a", "x", "47"], ["b", "x", "100"],
                              ["b", "y", "100"]], now + 2)
    out, err = StringIO(), StringIO()
    ns = cli.parse(["stream", str(rules), "--source", str(src), "--checkpoint", str(tmp_path / "ck"),
                    "--out", str(tmp_path / "out"), "--format", "jsonl", "--available-now",
                    "--max-files-per-trigger", "1", "--lateness", "5", "--event-col", "e", "--args", "k",
                    "--time", "t", "--partition-by", "k", "--quiet"])
    assert cli.stream(ns, out, err) == 0, err.getvalue()
    assert err.getvalue() == "rows: 10, events: 8, rejected: 2, detections: 4, warnings: 0\n"
    assert sorted(output_lines(tmp_path / "out", "detections")) == [
        '{"event": "c", "args": ["x"], "start": 10, "end": 50}',
        '{"event": "c", "args": ["x"], "start": 40, "end": 50}',
        '{"event": "c", "args": ["x"], "start": 47, "end": 50}',
        '{"event": "c", "args": ["y"], "start": 11, "end": 12}']
    assert sorted(output_lines(tmp_path / "out", "rejected")) == sorted([
        '{"e": "b", "k": "x", "t": null, "reason": "column \'t\' is empty"}',     # Spark reads an empty field as null
        '{"e": "b", "k": "x", "t": "15", "reason": "time 15 is more than the lateness (5.0 s) before the latest time '
        '50"}'])


def test_an_idle_stations_silence_is_detected_by_the_watermark_without_a_later_row_of_it(
        spark: SparkSession, tmp_path: Path) -> None:
    rules = tmp_path / "silent.etl"
    rules.write_text("exceptionAlarm(check(S), 7200) <- reading(S).\n"
                     "silent(S) <- check(S) fnot reading(S).\n")
    src = tmp_path / "in"
    src.mkdir()
    now = time.time()
    # s2 sends once: the lateness holds its reading back and no row of s2
    # comes to release it or to fire its deadline (7200); s1's rows move the
    # watermark (the latest time less the lateness) on to 8940
    for i, (station, t) in enumerate([("s2", "0"), ("s1", "0"), ("s1", "3600"), ("s1", "7000"), ("s1", "9000")]):
        write_csv(src / f"{i}.csv", [["station", "t"], [station, t]], now + i)
    out, err = StringIO(), StringIO()
    ns = cli.parse(["stream", str(rules), "--source", str(src), "--checkpoint", str(tmp_path / "ck"),
                    "--out", str(tmp_path / "out"), "--format", "jsonl", "--available-now",
                    "--max-files-per-trigger", "1", "--lateness", "60", "--event", "reading", "--args", "station",
                    "--time", "t", "--partition-by", "station", "--quiet"])
    assert cli.stream(ns, out, err) == 0, err.getvalue()
    assert err.getvalue() == "rows: 5, events: 5, rejected: 0, detections: 3, warnings: 0\n"
    expected = ['{"event": "check", "args": ["s1"], "start": 0, "end": 7200}',
                '{"event": "check", "args": ["s2"], "start": 0, "end": 7200}',
                '{"event": "silent", "args": ["s2"], "start": 0, "end": 7200}']
    assert sorted(output_lines(tmp_path / "out", "detections")) == expected
    with (tmp_path / "all.csv").open("w") as f:
        f.write("station,t\ns2,0\ns1,0\ns1,3600\ns1,7000\ns1,9000\n")
    assert sorted(run_lines(rules, tmp_path / "all.csv", ["--event", "reading", "--args", "station", "--time", "t"],
                            "--lateness", "60")) == expected


def test_the_live_demo_prints_the_wind_warnings_and_areas_of_make_demo(tmp_path: Path) -> None:
    data = tmp_path / "data" / "weather"
    data.mkdir(parents=True)
    rows = wind_rows()
    with open(data / "lsd-charley-2004-08-08-obs.csv", "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    out = tmp_path / "out"
    env = {**os.environ, "ETALIS": f"{sys.executable} -m etalis_py.cli", "PYTHON": sys.executable,
           "DATA": str(tmp_path / "data"), "OUT": str(out), "AVAILABLE_NOW": "1", "PER_TRIGGER": "36",
           "PYTHONWARNINGS": "ignore::FutureWarning"}
    run = subprocess.run(["sh", "examples/wind_area/live.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    printed = run.stdout.splitlines()
    assert printed[0] == "== High wind at 384 US weather stations, live: 10-minute slices of 8 August 2004"
    assert sorted(printed[1:]) == sorted(WIND_LINES)
    assert run.stderr.splitlines()[-1] == f"rows: {len(rows)}, events: {len(rows)}, rejected: 0, detections: 20, " \
                                          "warnings: 0"
    expected = run_lines(WIND_AREA, data / "lsd-charley-2004-08-08-obs.csv", WIND_MAPPING)
    assert collections.Counter(output_lines(out / "detections", "detections")) == collections.Counter(expected)


WIND_LINES = [
    "wind_warning(Readville MA (C2236)), 08 Aug 2004 02:10 to 02:55 EDT (45m 00s)",
    "wind_warning(Pierce NE (C1134)), 08 Aug 2004 02:15 to 03:00 CDT (45m 00s)",
    "wind_warning(Readville MA (C2236)), 08 Aug 2004 03:30 to 04:15 EDT (45m 00s)",
    "wind_warning(Readville MA (C2236)), 08 Aug 2004 04:45 to 05:30 EDT (45m 00s)",
    "wind_warning(Alma KS (C1681)), 08 Aug 2004 03:45 to 04:30 CDT (45m 00s)",
    "wind_warning(Alma KS (C1681)), 08 Aug 2004 04:50 to 05:35 CDT (45m 00s)",
    "wind_warning(Readville MA (C2236)), 08 Aug 2004 06:00 to 06:45 EDT (45m 00s)",
    "wind_warning(Berthoud CO (C1650)), 08 Aug 2004 04:50 to 05:35 MDT (45m 00s)",
    "wind_warning(Readville MA (C2236)), 08 Aug 2004 07:05 to 07:45 EDT (40m 00s)",
    "wind_warning(Berthoud CO (C1650)), 08 Aug 2004 06:05 to 06:50 MDT (45m 00s)",
    "wind_warning(Readville MA (C2236)), 08 Aug 2004 08:15 to 09:05 EDT (50m 00s)",
    "wind_warning(Black Forest CO (C1617)), 08 Aug 2004 06:45 to 07:35 MDT (50m 00s)",
    "wind_area(Black Forest CO (C1617), Berthoud CO (C1650), km(161)), 08 Aug 2004 06:05 to 07:35 MDT (1h 30m)",
    "wind_warning(Pierce NE (C1134)), 08 Aug 2004 08:00 to 08:45 CDT (45m 00s)",
    "wind_warning(Mead CO (C1720)), 08 Aug 2004 07:00 to 08:00 MDT (1h 00m)",
    "wind_area(Berthoud CO (C1650), Mead CO (C1720), km(17)), 08 Aug 2004 06:05 to 08:00 MDT (1h 55m)",
    "wind_area(Black Forest CO (C1617), Mead CO (C1720), km(150)), 08 Aug 2004 06:45 to 08:00 MDT (1h 15m)",
    "wind_warning(Readville MA (C2236)), 08 Aug 2004 10:00 to 10:45 EDT (45m 00s)",
    "wind_warning(Black Forest CO (C1617)), 08 Aug 2004 08:05 to 08:50 MDT (45m 00s)",
    "wind_area(Black Forest CO (C1617), Mead CO (C1720), km(150)), 08 Aug 2004 07:00 to 08:50 MDT (1h 50m)",
]


def committed_batches(checkpoint: Path) -> int:
    commits = checkpoint / "commits"
    return len([f for f in commits.iterdir() if f.name.isdigit()]) if commits.is_dir() else 0


def source_log(checkpoint: Path) -> list[tuple[int, str]]:
    """The file source's log: (its batch, file name) for each file it
    took, from its files ``N`` and ``N.compact`` (every 10 batches, all
    the entries so far)."""
    entries = set()
    for f in (checkpoint / "sources" / "0").iterdir():
        if f.name.split(".")[0].isdigit():
            for line in f.read_text().splitlines()[1:]:
                entry = json.loads(line)
                entries.add((int(entry["batchId"]), Path(entry["path"]).name))
    return sorted(entries)


def last_offset(checkpoint: Path) -> int:
    """The file source's batch up to which the last committed micro-batch read."""
    last = max(int(f.name) for f in (checkpoint / "commits").iterdir() if f.name.isdigit())
    return int(json.loads((checkpoint / "offsets" / str(last)).read_text().splitlines()[-1])["logOffset"])


def test_a_driver_killed_three_times_and_restarted_on_its_checkpoint_writes_each_detection_once(
        spark: SparkSession, tmp_path: Path) -> None:
    rows = wind_rows()
    src = tmp_path / "in"
    src.mkdir()
    by_slice: dict[str, list[list[str]]] = {}
    for row in rows:        # 45-minute slices, in time order
        minutes = int(row[0][11:13]) * 60 + int(row[0][14:16])
        by_slice.setdefault(f"{minutes // 45:02d}", []).append(row)
    now = time.time()
    for n, name in enumerate(sorted(by_slice)):
        write_csv(src / f"obs-{name}.csv", by_slice[name], now + n)
    checkpoint, out = tmp_path / "ck", tmp_path / "out"
    command = [sys.executable, "-m", "etalis_py.cli", "stream", str(WIND_AREA), "--source", str(src),
               "--input-format", "csv", *WIND_MAPPING, "--partition-by", "STATIONID", "--checkpoint", str(checkpoint),
               "--out", str(out), "--format", "jsonl", "--available-now", "--max-files-per-trigger", "1",
               "--master", "local[2,4]", "--quiet"]
    env = {**os.environ, "PYTHONWARNINGS": "ignore::FutureWarning"}
    chance = random.Random(7)
    kills = 0
    for target in sorted(chance.sample(range(1, len(by_slice) - 1), 3)):
        # a start that fails on its own (Spark's Python workers give up
        # connecting back on a loaded machine) is one more crash: start again
        for _ in range(3):
            proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    start_new_session=True)
            while committed_batches(checkpoint) < target and proc.poll() is None:
                time.sleep(0.2)
            time.sleep(chance.uniform(0, 1.5))      # maybe in the middle of the next micro-batch
            killed = proc.poll() is None
            if killed:
                os.killpg(proc.pid, signal.SIGKILL)     # the driver, its JVM and its Python workers
                kills += 1
            proc.wait()
            assert proc.stderr is not None
            proc.stderr.close()
            if killed:
                break
    assert kills == 3
    # the last start goes on in this process's Spark, as a driver started afresh on the checkpoint
    printed, err = StringIO(), StringIO()
    assert cli.stream(cli.parse(command[3:]), printed, err) == 0, err.getvalue()[-3000:]
    # Each file was taken once, and the last micro-batch read up to the
    # last of them.  A driver killed after the file source logged the file
    # of its next micro-batch and before the offset log did leaves that
    # file to be read with the next one, in one micro-batch: there may be
    # fewer micro-batches than files.
    taken = source_log(checkpoint)
    assert sorted(name for _, name in taken) == sorted(f"obs-{name}.csv" for name in by_slice)
    assert last_offset(checkpoint) == taken[-1][0] == len(by_slice) - 1
    assert len(by_slice) - 3 <= committed_batches(checkpoint) <= len(by_slice)
    got = output_lines(out, "detections")
    assert len(got) == 20
    assert collections.Counter(got) == collections.Counter(
        run_lines(WIND_AREA, concatenation(src, tmp_path / "all.csv"), WIND_MAPPING))
    assert err.getvalue().splitlines()[-1] == f"rows: {len(rows)}, events: {len(rows)}, rejected: 0, " \
                                              "detections: 20, warnings: 0"


def concatenation(src: Path, to: Path) -> Path:
    """The stream's files one after the other, in the order they landed."""
    files = sorted(src.glob("obs-*.csv"), key=lambda f: f.stat().st_mtime)
    to.write_text("".join(f.read_text() for f in files))
    return to


def test_replay_of_the_first_half_and_a_stream_of_the_second_from_its_saved_state_give_the_whole(
        spark: SparkSession, tmp_path: Path) -> None:
    rows = wind_rows()
    cut = "2004-08-08 10:30"           # between the wind warnings of a wind area
    first, second = [r for r in rows if r[0] < cut], [r for r in rows if r[0] >= cut]
    write_csv(tmp_path / "first.csv", first, time.time())
    src = tmp_path / "in"
    src.mkdir()
    now = time.time()
    middle = len(second) // 2
    write_csv(src / "a.csv", second[:middle], now)
    write_csv(src / "b.csv", second[middle:], now + 1)
    mapping = dict(columns=COLUMNS.split(","), event="obs", args=["STATIONID", "WINDSPEED"], time="SAMPLINGTIME",
                   time_format="%Y-%m-%d %H:%M:%S.%f+0:00")
    from etalis_py.spark import replay

    before = replay(str(tmp_path / "first.csv"), WIND_AREA, partition_by="STATIONID", spark=spark, save_state=True,
                    **mapping)   # type: ignore[arg-type]
    before.save_states(tmp_path / "state")
    replayed = list(before.detection_lines())
    out, err = StringIO(), StringIO()
    ns = cli.parse(["stream", str(WIND_AREA), "--source", str(src), "--input-format", "csv", *WIND_MAPPING,
                    "--partition-by", "STATIONID", "--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "out"),
                    "--format", "jsonl", "--available-now", "--max-files-per-trigger", "1", "--quiet",
                    "--initial-state", str(tmp_path / "state")])
    assert cli.stream(ns, out, err) == 0, err.getvalue()
    streamed = output_lines(tmp_path / "out", "detections")
    write_csv(tmp_path / "all.csv", rows, time.time())
    whole = run_lines(WIND_AREA, tmp_path / "all.csv", WIND_MAPPING)
    assert len(whole) == 20 and 0 < len(streamed) < 20
    assert collections.Counter([line.rstrip("\n") for line in replayed] + streamed) == collections.Counter(whole)
    assert err.getvalue() == f"rows: {len(second)}, events: {len(second)}, rejected: 0, " \
                             f"detections: {len(streamed)}, warnings: 0\n"


def test_a_socket_stream_stops_cleanly_on_ctrl_c_with_what_it_committed(spark: SparkSession, tmp_path: Path) -> None:
    import socket
    import threading

    rules = tmp_path / "r.etl"
    rules.write_text("c(K) <- a(K) seq b(K).\n")
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    out_dir = tmp_path / "out"

    def serve() -> None:
        conn, _ = server.accept()
        conn.sendall(b"a,x,1\na,y,2\nb,x,3\nb,y,4\n")
        deadline = time.time() + 300
        while time.time() < deadline and len(output_lines(out_dir, "detections")) < 2:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGINT)         # Ctrl-C
        time.sleep(5)
        conn.close()

    helper = threading.Thread(target=serve, daemon=True)
    helper.start()
    out, err = StringIO(), StringIO()
    ns = cli.parse(["stream", str(rules), "--source", f"socket://127.0.0.1:{port}", "--columns", "e,k,t",
                    "--event-col", "e", "--args", "k", "--time", "t", "--partition-by", "k",
                    "--checkpoint", str(tmp_path / "ck"), "--out", str(out_dir), "--format", "jsonl",
                    "--trigger", "1", "--print", "jsonl", "--quiet"])
    assert cli.stream(ns, out, err) == cli.EXIT_INTERRUPTED
    helper.join()
    server.close()
    expected = ['{"event": "c", "args": ["x"], "start": 1, "end": 3}',
                '{"event": "c", "args": ["y"], "start": 2, "end": 4}']
    assert sorted(output_lines(out_dir, "detections")) == expected
    assert sorted(out.getvalue().splitlines()) == expected
    assert err.getvalue() == ("rows: 4, events: 4, rejected: 0, detections: 2, warnings: 0 "
                              "(stopped: start again with the same --checkpoint to go on)\n")


def test_a_stream_of_event_lines_detects_as_etalis_run_on_the_files_one_after_the_other(
        spark: SparkSession, tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c(K) <- a(K) seq b(K) within 100.\n")
    src = tmp_path / "in"
    src.mkdir()
    files = ["% readings\nevent(a(x), 10).\nevent(a(y), 11).\n\n",
             "event(b(y), 12).\nb(x).\nevent(a(x), [20, 40]).\nevent(b(x), 50).\n"]
    now = time.time()
    for i, text in enumerate(files):
        write_in_place(src / f"{i}.events", text, now + i)
    out, err = StringIO(), StringIO()
    ns = cli.parse(["stream", str(rules), "--source", str(src), "--checkpoint", str(tmp_path / "ck"),
                    "--out", str(tmp_path / "out"), "--format", "jsonl", "--available-now",
                    "--max-files-per-trigger", "1", "--input-format", "events", "--quiet"])
    assert cli.stream(ns, out, err) == 0, err.getvalue()
    assert err.getvalue() == "rows: 6, events: 5, rejected: 1, detections: 3, warnings: 0\n"
    expected = ['{"event": "c", "args": ["x"], "start": 10, "end": 50}',
                '{"event": "c", "args": ["x"], "start": 20, "end": 50}',
                '{"event": "c", "args": ["y"], "start": 11, "end": 12}']
    assert sorted(output_lines(tmp_path / "out", "detections")) == expected
    assert output_lines(tmp_path / "out", "rejected") == [
        '{"value": "b(x).", "reason": "a stream reads lines event(Term, Time) with a number of seconds as the time '
        '(or an interval [T1, T2] of them)"}']
    whole = tmp_path / "all.events"
    whole.write_text("".join(files).replace("b(x).\n", ""))
    assert sorted(run_lines(rules, whole, [])) == expected


def test_a_stream_of_json_lines_without_a_mapping_detects_as_etalis_run_on_the_files(
        spark: SparkSession, tmp_path: Path) -> None:
    """The stream files of etalis run need no mapping: JSON lines are an event a line, each rejected line with
    the reason etalis run gives it."""
    rules = tmp_path / "r.etl"
    rules.write_text("c(K) <- a(K) seq b(K) within 100.\n")
    src = tmp_path / "in"
    src.mkdir()
    files = ['{"event": "a", "args": ["x"], "time": 10}\n\n{"event": "a", "args": ["y"], "time": 11}\n',
             '{"event": "b", "args": ["y"], "time": 12}\n% not JSON\n{"event": "b", "args": ["x"], "time": 50}\n']
    now = time.time()
    for i, text in enumerate(files):
        write_in_place(src / f"{i}.jsonl", text, now + i)
    out, err = StringIO(), StringIO()
    ns = cli.parse(["stream", str(rules), "--source", str(src), "--checkpoint", str(tmp_path / "ck"),
                    "--out", str(tmp_path / "out"), "--format", "jsonl", "--available-now",
                    "--max-files-per-trigger", "1", "--quiet"])
    assert cli.stream(ns, out, err) == 0, err.getvalue()
    assert err.getvalue() == "rows: 5, events: 4, rejected: 1, detections: 2, warnings: 0\n"
    expected = ['{"event": "c", "args": ["x"], "start": 10, "end": 50}',
                '{"event": "c", "args": ["y"], "start": 11, "end": 12}']
    assert sorted(output_lines(tmp_path / "out", "detections")) == expected
    assert output_lines(tmp_path / "out", "rejected") == [
        '{"value": "% not JSON", "reason": "not JSON: Expecting value at column 1"}']
    whole = tmp_path / "all.jsonl"
    whole.write_text("".join(files).replace("% not JSON\n", ""))
    assert sorted(run_lines(rules, whole, [])) == expected
