"""The Python API a person meets: readable times, pandas, the pull queue."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pandas as pd
import pytest

import etalis_py
from etalis_py import Detection, Detections, Engine, EventError, InvalidEvent, format_time, to_time

BLIZZARD = Detection("blizzard", (1.0, "KJFK"), 1293396660.0, 1293407460.0)


# -- one time parser -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (12, 12),
        (1.5, 1.5),
        ("12", 12),
        (" 1.5 ", 1.5),
        ("2010-12-26T20:51:00Z", 1293396660.0),
        ("2010-12-26T20:51:00+01:00", 1293393060.0),
        ("2010-12-26 20:51", 1293396660.0),
        ("2010-12-26T20:51:00.5Z", 1293396660.5),
        (datetime(2010, 12, 26, 20, 51), 1293396660.0),
        (datetime(2010, 12, 26, 21, 51, tzinfo=timezone(timedelta(hours=1))), 1293396660.0),
        (pd.Timestamp("2010-12-26 20:51"), 1293396660.0),
        (pd.Timestamp("2010-12-26 15:51", tz="America/New_York"), 1293396660.0),
        (np.datetime64("2010-12-26T20:51:00"), 1293396660.0),
        (np.int64(7), 7),
        (np.float32(0.5), 0.5),
    ],
)
def test_to_time_reads_numbers_iso_texts_datetimes_and_timestamps(value: Any, seconds: float) -> None:
    t = to_time(value)
    assert t == seconds
    assert type(t) is type(seconds)


def test_to_time_reads_a_time_without_zone_in_the_zone_given() -> None:
    assert to_time("2010-12-26 15:51", tz="America/New_York") == 1293396660.0
    assert to_time(datetime(2010, 12, 26, 15, 51), tz="America/New_York") == 1293396660.0
    assert to_time("2010-12-26T20:51:00Z", tz="America/New_York") == 1293396660.0


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("yesterday", "time 'yesterday' is not a number or an ISO 8601 date"),
        ("nan", "time 'nan' is not finite"),
        (float("inf"), "time inf is not finite"),
        (True, "time True is not a number or a date"),
        (None, "time None is not a number, an ISO 8601 text or a datetime"),
        (pd.NaT, "time is missing (NaT)"),
        (np.datetime64("NaT"), "time is missing (NaT)"),
    ],
)
def test_to_time_rejects_what_is_no_time_with_the_reason(value: Any, reason: str) -> None:
    with pytest.raises(EventError) as e:
        to_time(value)
    assert str(e.value) == reason


def test_invalid_event_is_the_exported_event_error() -> None:
    assert InvalidEvent is EventError
    assert issubclass(EventError, ValueError)
    assert etalis_py.__version__ == "0.1.0"


def test_emit_takes_iso_texts_datetimes_and_timestamps() -> None:
    with Engine.from_string("c(X) <- a(X) seq b(X).") as engine:
        assert engine.emit("a", 1, at="2010-12-26T20:51:00Z") == []
        assert engine.emit("b", 1, at=pd.Timestamp("2010-12-26 21:51", tz="UTC")) == [
            Detection("c", (1,), 1293396660.0, 1293400260.0)
        ]
        with pytest.raises(EventError) as e:
            engine.emit("a", 1, at="tomorrow")
        assert str(e.value) == "time 'tomorrow' is not a number or an ISO 8601 date"


def test_jsonl_time_start_and_end_may_be_iso_texts(tmp_path: Any) -> None:
    from etalis_py.streams import read_batches

    stream = tmp_path / "s.jsonl"
    stream.write_text(
        '{"event": "a", "args": [1], "time": "2010-12-26T20:51:00Z"}\n'
        '{"event": "b", "args": [1], "start": "2010-12-26T21:00:00+01:00", "end": 1293400260}\n'
        '{"event": "b", "args": [1], "time": "soon"}\n'
    )
    batches = list(read_batches(stream))
    assert [b.text for b in batches] == [
        "event(a(1), [1293396660.0, 1293396660.0]).\nevent(b(1), [1293393600.0, 1293400260]).\n\n"
    ]
    assert [(r.line, r.reason) for r in batches[0].rejected] == [
        (3, "time 'soon' is not a number or an ISO 8601 date")
    ]


# -- detections for people ---------------------------------------------------------------


def test_detection_gives_datetimes_a_duration_and_a_readable_line() -> None:
    assert BLIZZARD.start_time == datetime(2010, 12, 26, 20, 51, tzinfo=timezone.utc)
    assert BLIZZARD.end_time == datetime(2010, 12, 26, 23, 51, tzinfo=timezone.utc)
    assert BLIZZARD.duration == timedelta(hours=3)
    assert (BLIZZARD.start, BLIZZARD.end) == (1293396660.0, 1293407460.0)
    assert str(BLIZZARD) == "blizzard(1.0, KJFK) 2010-12-26 20:51 → 23:51 UTC (3h 00m)"
    assert BLIZZARD.format(tz="America/New_York") == "blizzard(1.0, KJFK) 2010-12-26 15:51 → 18:51 EST (3h 00m)"
    assert BLIZZARD.format(fmt="%d.%m. %H:%M") == "blizzard(1.0, KJFK) 26.12. 20:51 → 26.12. 23:51 UTC (3h 00m)"


@pytest.mark.parametrize(
    ("detection", "text"),
    [
        (Detection("a", (), 1, 1), "a 1970-01-01 00:00:01 UTC"),
        (Detection("a", ("x",), 1.5, 2), "a(x) 1970-01-01 00:00:01.5 → 00:00:02 UTC (0.5s)"),
        (Detection("a", ([1, "x"],), 0, 725), "a([1, x]) 1970-01-01 00:00:00 → 00:12:05 UTC (12m 05s)"),
        (Detection("a", (), 0, 90000), "a 1970-01-01 00:00 → 1970-01-02 01:00 UTC (1d 01h 00m)"),
        (Detection("a", (), 0, 1e20), "a [0, 1e+20]"),
    ],
)
def test_detection_lines_for_points_fractions_days_and_times_out_of_range(detection: Detection, text: str) -> None:
    assert str(detection) == text


def test_format_time_gives_iso_8601_in_utc_or_a_zone_or_a_format() -> None:
    assert format_time(1293396660.0) == "2010-12-26T20:51:00Z"
    assert format_time(1293396660.5, tz="Europe/Berlin") == "2010-12-26T21:51:00.500000+01:00"
    assert format_time(1293396660, fmt="%d-%m-%Y %H:%M") == "26-12-2010 20:51"


def test_detections_to_frame_has_a_column_per_argument_and_datetimes() -> None:
    frame = Detections([BLIZZARD, Detection("a", (), 1, 2)]).to_frame()
    assert list(frame.columns) == ["event", "arg0", "arg1", "start", "end", "duration"]
    assert frame.to_dict("list") == {
        "event": ["blizzard", "a"],
        "arg0": [1.0, None],
        "arg1": ["KJFK", None],
        "start": [pd.Timestamp("2010-12-26 20:51", tz="UTC"), pd.Timestamp(1, unit="s", tz="UTC")],
        "end": [pd.Timestamp("2010-12-26 23:51", tz="UTC"), pd.Timestamp(2, unit="s", tz="UTC")],
        "duration": [pd.Timedelta(hours=3), pd.Timedelta(seconds=1)],
    }
    assert str(frame["start"].dt.tz) == "UTC"
    local = Detections([BLIZZARD]).to_frame(tz="America/New_York")
    assert local["start"][0] == pd.Timestamp("2010-12-26 15:51", tz="America/New_York")
    empty = Detections().to_frame()
    assert (list(empty.columns), len(empty)) == (["event", "start", "end", "duration"], 0)


def test_detections_show_as_a_small_html_table() -> None:
    row = (
        "<tr><td>blizzard</td><td>1.0, KJFK</td><td>2010-12-26T20:51:00Z</td>"
        "<td>2010-12-26T23:51:00Z</td><td>3h 00m</td></tr>"
    )
    head = "<table><thead><tr><th>event</th><th>args</th><th>start</th><th>end</th><th>duration</th></tr></thead>"
    assert BLIZZARD._repr_html_() == f"{head}<tbody>{row}</tbody></table>"
    odd = Detection("<b>", ("a&b",), 0, 0)
    assert Detections([odd])._repr_html_() == (
        f"{head}<tbody><tr><td>&lt;b&gt;</td><td>a&amp;b</td><td>1970-01-01T00:00:00Z</td>"
        "<td>1970-01-01T00:00:00Z</td><td>0s</td></tr></tbody></table>"
    )
    many = Detections([odd] * 52)._repr_html_()
    assert many.count("<tr><td>&lt;b&gt;") == 50
    assert many.endswith('<tr><td colspan="5">… 2 more</td></tr></tbody></table>')


def test_emit_emit_many_and_detections_give_detections_with_to_frame() -> None:
    with Engine.from_string("c(X) <- a(X) seq b(X).") as engine:
        engine.emit("a", 1, at=1)
        found = engine.emit("b", 1, at=2)
        assert isinstance(found, Detections)
        result = engine.emit_many([("a", [2], 3), ("b", [2], 4)])
        assert isinstance(result.detections, Detections)
        assert result.detections.to_frame()["arg0"].tolist() == [2]
