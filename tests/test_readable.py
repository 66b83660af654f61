"""Detections for people: `etalis table` (dates in a zone, names,
durations) and `etalis plot` (a timeline PNG)."""

from __future__ import annotations

import json
import struct
from io import StringIO
from pathlib import Path

import pytest

from etalis_py import Detection, cli
from etalis_py.outputs.plot import Signal, Timeline
from etalis_py.events import format_duration
from etalis_py.outputs.detections import read_detections
from etalis_py.outputs.report import Readable, read_names

# 26 December 2010, 20:51 to 23:51 UTC, and two events at stations 7 and 9
BLIZZARD = Detection("blizzard", (1293396660.0, 1293407460.0), 1293396660.0, 1293407460.0)
STATIONS = [
    Detection("gust", (7, 41.5), 1293400000, 1293400000),
    Detection("storm_area", (7, 9, "east"), 1293399000, 1293490000.5),
]


def etalis(args: list[str]) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    ns = cli.parser().parse_args(args)
    code = cli.readable_output(ns, out, err)
    return code, out.getvalue(), err.getvalue()


def jsonl(tmp_path: Path, detections: list[Detection]) -> Path:
    path = tmp_path / "detections.jsonl"
    path.write_text("".join(d.to_json() + "\n" for d in detections))
    return path


def names(tmp_path: Path) -> Path:
    path = tmp_path / "names.csv"
    path.write_text("value,name\n7,KJFK\n9,KLGA\n")
    return path


def test_table_shows_dates_in_the_zone_names_and_durations(tmp_path: Path) -> None:
    code, out, err = etalis(["table", str(jsonl(tmp_path, [BLIZZARD, *STATIONS])), "--tz", "America/New_York",
                             "--names", str(names(tmp_path))])
    assert (code, err) == (0, "")
    assert out == (
        "times in America/New_York\n"
        "event       args                        start                 end                   duration\n"
        "blizzard    1293396660.0, 1293407460.0  26 Dec 2010 15:51:00  18:51:00              3h 00m\n"
        "gust        KJFK, 41.5                  26 Dec 2010 16:46:40  16:46:40              0s\n"
        "storm_area  KJFK, KLGA, east            26 Dec 2010 16:30:00  27 Dec 2010 17:46:40  1d 01h 16m\n"
    )


def test_table_lines_read_as_sentences_without_arguments(tmp_path: Path) -> None:
    code, out, _ = etalis(["table", str(jsonl(tmp_path, [BLIZZARD])), "--lines", "--no-args"])
    assert (code, out) == (0, "blizzard, 26 Dec 2010 20:51 to 23:51 (3h 00m)\n")
    readable = Readable(names={"7": "KJFK"})
    assert readable.lines(STATIONS[:1]) == "gust(KJFK, 41.5), at 26 Dec 2010 21:46:40\n"


def test_durations_read_in_the_largest_units() -> None:
    assert [format_duration(s) for s in (0, 45, 59.5, 60, 725, 10800, 183900)] == [
        "0s", "45s", "59.5s", "1m 00s", "12m 05s", "3h 00m", "2d 03h 05m"]


def test_a_line_that_is_not_a_detection_is_an_error_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(BLIZZARD.to_json() + "\n\n" + '{"event": "x", "args": [], "start": "noon", "end": 1}\n')
    code, out, err = etalis(["table", str(path)])
    assert (code, out) == (1, "")
    assert err == f"etalis: {path}:3: not a detection (time 'noon' is not a number of seconds or an ISO 8601 " \
        "date with its offset (as --iso writes it)): " \
        '{"event": "x", "args": [], "start": "noon", "end": 1}\n'
    path.write_text('{"event": "x", "args": [], "start": 1e20, "end": 1e20}\n')
    assert etalis(["table", str(path)])[1:] == (
        "", "etalis: time 1e+20 is not a date (seconds since 1970 within the years 1 to 9999)\n")
    with pytest.raises(ValueError, match=r"<detections>:1: not a detection \(missing 'end'\)"):
        read_detections(['{"event": "x", "args": [], "start": 1}'])


def test_the_csv_or_parquet_file_of_run_is_said_to_be_one_not_a_bad_line(tmp_path: Path) -> None:
    rules, events = tmp_path / "r.etl", tmp_path / "s.jsonl"
    rules.write_text("c(X) <- a(X) seq b(X).\n")
    events.write_text('{"event": "a", "args": [1], "time": 1}\n{"event": "b", "args": [1], "time": 2}\n')
    for kind, name in [("CSV", "d.csv"), ("Parquet", "d.parquet")]:
        out = tmp_path / name
        assert cli.main(["run", str(rules), str(events), "--out", str(out), "--quiet"]) == 0
        for command in (["table", str(out)], ["plot", str(out), "-o", str(tmp_path / "p.png")]):
            assert etalis(command) == (1, "", f"etalis: {out}: a {kind} file, not the JSON lines of detections: give "
                                              "those that etalis run and replay write with --format jsonl (their "
                                              "default)\n")


def test_unknown_zone_and_bad_names_file_are_errors(tmp_path: Path) -> None:
    path = jsonl(tmp_path, [BLIZZARD])
    assert etalis(["table", str(path), "--tz", "Mars/Olympus"])[1:] == (
        "", "etalis: unknown time zone 'Mars/Olympus': give an IANA name such as 'Europe/Berlin', or 'UTC'\n")
    bad = tmp_path / "n.csv"
    bad.write_text("code,station\n1,A\n")
    assert etalis(["table", str(path), "--names", str(bad)])[2] == \
        f"etalis: {bad}: a names file starts with the header 'value,name' or 'value,name,tz'\n"
    bad.write_text("value,name\n1,A,extra\n")
    with pytest.raises(ValueError, match=r"n.csv:2: 3 fields where 'value,name' has 2"):
        read_names(bad)
    bad.write_text("value,name,tz\n1,A,America/New_York\n2,B,Mars/Olympus\n")
    assert etalis(["table", str(path), "--names", str(bad)])[2] == (
        f"etalis: {bad}:3: unknown time zone 'Mars/Olympus': give an IANA name such as 'Europe/Berlin', or 'UTC'\n")


def test_table_with_the_zones_of_a_names_file_shows_each_row_in_its_stations_local_time(tmp_path: Path) -> None:
    zones = tmp_path / "zones.csv"
    zones.write_text("value,name,tz\n7,KJFK,America/New_York\n9,KDEN,America/Denver\n")
    moved = [*STATIONS, Detection("gust", (9, 50), 1293400000, 1293400000)]
    code, out, err = etalis(["table", str(jsonl(tmp_path, [BLIZZARD, *moved])), "--names", str(zones)])
    assert (code, err) == (0, "")
    assert out == (
        "local times: each row in the zone of its first argument that has one (else UTC)\n"
        "event       args                        start                 end                   zone  duration\n"
        "blizzard    1293396660.0, 1293407460.0  26 Dec 2010 20:51:00  23:51:00              UTC   3h 00m\n"
        "gust        KJFK, 41.5                  26 Dec 2010 16:46:40  16:46:40              EST   0s\n"
        "storm_area  KJFK, KDEN, east            26 Dec 2010 16:30:00  27 Dec 2010 17:46:40  EST   1d 01h 16m\n"
        "gust        KDEN, 50                    26 Dec 2010 14:46:40  14:46:40              MST   0s\n"
    )
    assert etalis(["table", str(jsonl(tmp_path, moved)), "--names", str(zones), "--lines"])[1] == (
        "gust(KJFK, 41.5), at 26 Dec 2010 16:46:40 EST\n"
        "storm_area(KJFK, KDEN, east), 26 Dec 2010 16:30:00 to 27 Dec 2010 17:46:40 EST (1d 01h 16m)\n"
        "gust(KDEN, 50), at 26 Dec 2010 14:46:40 MST\n")
    # a zone given with --tz is the zone of every row
    assert etalis(["table", str(jsonl(tmp_path, moved)), "--names", str(zones), "--tz", "UTC", "--lines"])[1] == (
        "gust(KJFK, 41.5), at 26 Dec 2010 21:46:40\n"
        "storm_area(KJFK, KDEN, east), 26 Dec 2010 21:30:00 to 27 Dec 2010 22:46:40 (1d 01h 16m)\n"
        "gust(KDEN, 50), at 26 Dec 2010 21:46:40\n")


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk, after checking the signature."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_plot_draws_a_bar_per_detection_and_a_line_per_station(tmp_path: Path) -> None:
    data = tmp_path / "readings.csv"
    data.write_text("when,station,wind\n"
                    "2010-12-26 21:00,7,30\n2010-12-26 22:00,9,35\n2010-12-26 23:00,7,\n"
                    "2010-12-27 01:00,7,41\n2010-12-27 02:00,8,50\n2010-12-27 03:00,9,nan\n")
    png = tmp_path / "out" / "timeline.png"
    png.parent.mkdir()
    code, out, err = etalis(["plot", str(jsonl(tmp_path, [BLIZZARD, *STATIONS])), "-o", str(png),
                             "--names", str(names(tmp_path)), "--events", str(data), "--signal", "wind",
                             "--key", "station", "--time", "when", "--time-format", "%Y-%m-%d %H:%M", "--level", "35"])
    assert (code, out) == (0, "")
    assert err == (f"etalis: {data}: 2 values without a number or a time were not drawn\n"
                   f"{png}: 3 bars in 3 lanes, 2 signals, 1200 x 540 pixels\n")
    assert png_size(png) == (1200, 540)         # 150 margin + 300 signals + 3 lanes of 30


def test_timeline_figure_has_the_bars_lanes_and_lines_drawn() -> None:
    from matplotlib.patches import Rectangle

    readable = Readable(names={"7": "KJFK", "9": "KLGA"})
    twice = [*STATIONS, Detection("gust", (7, 41.5), 1293410000, 1293410000)]
    timeline = Timeline(twice, [Signal("KJFK", [1293400000, 1293410000], [30.0, 41.0])], readable, levels=[35])
    fig = timeline.figure()
    signals, bars = fig.axes
    assert [line.get_label() for line in signals.get_lines()] == ["KJFK", "level 35"]     # the level: a dashed line
    assert signals.get_lines()[1].get_linestyle() == "--"
    rectangles = [r for r in bars.patches if isinstance(r, Rectangle)]
    assert len(rectangles) == len(bars.patches) == 3            # a bar per detection
    assert rectangles[1].get_width() == pytest.approx((1293490000.5 - 1293399000) / 86400)
    assert [r.get_y() + r.get_height() / 2 for r in rectangles] == [0, 1, 0]   # the gusts share a lane
    assert [t.get_text() for t in bars.get_yticklabels()] == ["gust(KJFK, 41.5)", "storm_area(KJFK, KLGA, east)"]
    legend = bars.get_legend()
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["gust", "storm_area"]
    assert timeline.size() == (1200, 150 + 300 + 2 * 30)
    assert Timeline([BLIZZARD]).size() == (1200, 180)


def test_plot_without_signals_writes_the_bars_alone(tmp_path: Path) -> None:
    png = tmp_path / "t.png"
    code, _, err = etalis(["plot", str(jsonl(tmp_path, [BLIZZARD])), "-o", str(png), "--title", "JFK"])
    assert code == 0 and err == f"{png}: 1 bar in 1 lane, 0 signals, 1200 x 180 pixels\n"
    assert png_size(png) == (1200, 180)
    assert json.loads(jsonl(tmp_path, [BLIZZARD]).read_text())["event"] == "blizzard"


def test_detections_of_an_engine_give_their_table_and_picture(tmp_path: Path) -> None:
    from etalis_py import Engine

    with Engine.from_string("storm(S) <- (gust(S) seq gust(S)) within hours(4).") as engine:
        found = engine.emit_many([("gust", [7], 1293396660), ("gust", [7], 1293407460)]).detections
    assert found.table("America/New_York", {"7": "KJFK"}) == (
        "times in America/New_York\n"
        "event  args  start              end    duration\n"
        "storm  KJFK  26 Dec 2010 15:51  18:51  3h 00m\n"
    )
    fig = found.plot(tmp_path / "storm.png", title="Storms")
    assert len(fig.axes[-1].patches) == 1
    assert png_size(tmp_path / "storm.png") == (1200, 180)


def test_run_prints_the_table_with_format_table(tmp_path: Path) -> None:
    rules = tmp_path / "storm.etl"
    rules.write_text("storm(S) <- (gust(S) seq gust(S)) within hours(4).\n")
    events = tmp_path / "gusts.jsonl"
    events.write_text('{"event": "gust", "args": [7], "time": 1293396660}\n'
                      '{"event": "gust", "args": [7], "time": 1293407460}\n')
    ns = cli.parser().parse_args(["run", str(rules), "--events", str(events), "--format", "table",
                                  "--tz", "America/New_York", "--names", str(names(tmp_path))])
    out, err = StringIO(), StringIO()
    assert cli.run(ns, out, err) == 0
    assert out.getvalue() == (
        "times in America/New_York\n"
        "event  args  start              end    duration\n"
        "storm  KJFK  26 Dec 2010 15:51  18:51  3h 00m\n"
    )
    assert err.getvalue().startswith("events read: 2, accepted: 2, rejected: 0, detections: 1,")
