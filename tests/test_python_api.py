"""The Python API a person meets: readable times, pandas, the pull queue."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
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
    from etalis_py.inputs.streams import read_batches

    stream = tmp_path / "s.jsonl"
    stream.write_text(
        '{"event": "a", "args": [1], "time": "2010-12-26T20:51:00Z"}\n'
        '{"event": "b", "args": [1], "start": "2010-12-26T21:00:00+01:00", "end": 1293400260}\n'
        '{"event": "b", "args": [1], "time": "soon"}\n'
    )
    batches = list(read_batches(stream))
    assert [(b.text, b.terms) for b in batches] == [
        ("[event(a(1), [1293396660.0, 1293396660.0]),\nevent(b(1), [1293393600.0, 1293400260]),\n[]]", 3)
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
    assert list(frame.columns) == ["event", "arg1", "arg2", "start", "end", "duration"]
    assert frame.to_dict("list") == {
        "event": ["blizzard", "a"],
        "arg1": [1.0, None],
        "arg2": ["KJFK", None],
        "start": [pd.Timestamp("2010-12-26 20:51", tz="UTC"), pd.Timestamp(1, unit="s", tz="UTC")],
        "end": [pd.Timestamp("2010-12-26 23:51", tz="UTC"), pd.Timestamp(2, unit="s", tz="UTC")],
        "duration": [pd.Timedelta(hours=3), pd.Timedelta(seconds=1)],
    }
    assert str(frame["start"].dt.tz) == "UTC"
    local = Detections([BLIZZARD]).to_frame(tz="America/New_York")
    assert local["start"][0] == pd.Timestamp("2010-12-26 15:51", tz="America/New_York")
    empty = Detections().to_frame()
    assert (list(empty.columns), len(empty)) == (["event", "start", "end", "duration"], 0)
    named = Detections([BLIZZARD]).to_frame(args=["speed"])
    assert list(named.columns) == ["event", "speed", "arg2", "start", "end", "duration"]
    assert named["speed"].tolist() == [1.0]
    with pytest.raises(ValueError) as e:
        Detections([BLIZZARD]).to_frame(args=["start"])
    assert str(e.value) == "argument column 'start' would be there twice: name the arguments otherwise"


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
        assert result.detections.to_frame()["arg1"].tolist() == [2]


# -- the pull queue holds what nothing delivered -------------------------------------------


def test_after_100k_events_whose_detections_emit_many_returned_the_queue_holds_none() -> None:
    events = [(name, [i], 2 * i + k) for i in range(50_000) for k, name in enumerate("ab")]
    with Engine.from_string("c(X) <- (a(X) seq b(X)) within 5.") as engine:
        result = engine.emit_many(events)
        assert (result.accepted, len(result.detections)) == (100_000, 50_000)
        assert result.detections[-1] == Detection("c", (49_999,), 99_998, 99_999)
        stats = engine.stats()
        assert (stats.queued, stats.dropped) == (0, 0)
        assert engine.detections() == []


def test_the_pull_queue_drops_the_oldest_past_max_queued_counts_them_and_warns_once() -> None:
    events = [(name, [i], 2 * i + k) for i in range(10) for k, name in enumerate("ab")]
    with Engine.from_string("c(X) <- a(X) seq b(X).", max_queued=3) as engine:
        with pytest.warns(RuntimeWarning) as caught:
            assert engine.emit_many(events[:10], collect=False).detections == []
            assert engine.emit_many(events[10:], collect=False).detections == []
        assert [str(w.message) for w in caught] == [
            "the pull queue holds at most 3 detections: the oldest are dropped "
            "(take them with detections(), register a callback with on(), or give max_queued=)"
        ]
        assert caught[0].filename == __file__
        stats = engine.stats()
        assert (stats.queued, stats.dropped, stats.detections) == (3, 7, 10)
        assert engine.detections() == [Detection("c", (i,), 2 * i, 2 * i + 1) for i in (7, 8, 9)]
        assert engine.stats().queued == 0


def test_max_queued_must_be_a_whole_number_or_none() -> None:
    with pytest.raises(ValueError) as e:
        Engine.from_string("c <- a seq b.", max_queued=-1)
    assert str(e.value) == "max_queued must be a whole number >= 0 or None, not -1"
    with Engine.from_string("c <- a seq b.", max_queued=None) as engine:
        engine.emit_many([("a", [], i) for i in range(1, 5)] + [("b", [], 5)], collect=False)
        assert len(engine.detections()) == 4


def test_off_stops_a_callback_or_all_of_an_event_and_says_when_there_is_none() -> None:
    seen: list[Detection] = []
    with Engine.from_string("c <- a seq b.\nd <- a seq e.") as engine:
        engine.on("c", seen.append)
        engine.on(None, seen.append)
        engine.off("c", seen.append)
        engine.emit_many([("a", [], 1), ("b", [], 2)])
        assert seen == [Detection("c", (), 1, 2)]
        engine.off(None)
        engine.emit("e", at=3)
        assert len(seen) == 1
        with pytest.raises(ValueError) as e:
            engine.off("c")
        assert str(e.value) == "no callback registered for 'c'"
        with pytest.raises(ValueError) as e:
            engine.off(None, print)
        assert str(e.value) == "callback <built-in function print> is not registered for every event"


def test_emit_many_of_a_dataframe_says_to_use_emit_frame() -> None:
    frame = pd.DataFrame({"t": [1, 2], "x": [1, 2]})
    with Engine.from_string("c <- a seq b.") as engine:
        with pytest.raises(TypeError) as e:
            engine.emit_many(frame)
        assert str(e.value) == (
            "emit_many() takes events, not the rows of a DataFrame (it would iterate over the column names): "
            "use emit_frame(df, event=..., args=..., time=...)"
        )


# -- pandas frames in ------------------------------------------------------------------------


def test_emit_frame_turns_columns_of_every_kind_into_events_and_rejects_missing_values() -> None:
    frame = pd.DataFrame({
        "t": pd.to_datetime(["2010-12-26 20:51", "2010-12-26 21:51", None, "2010-12-26 22:51", "2010-12-26 23:51"]),
        "station": pd.Categorical(["KJFK", "KJFK", "KJFK", None, "KLGA"]),
        "wind": [40, 41, 42, 43, 44],
        "vis": [0.1, float("nan"), 0.2, 0.3, float("inf")],
        "gusty": [True, False, True, True, False],
        "note": ["a b", None, "it's", "x", "y"],
        "n": pd.array([1, None, 3, 4, 5], dtype="Int64"),
    })
    with Engine.from_string("seen(S, W, V, G, N, K) <- reading(S, W, V, G, N, K).") as engine:
        result = engine.emit_frame(frame, event="reading", args=["station", "wind", "vis", "gusty", "note", "n"], time="t")
        assert result.accepted == 1
        assert [(r.line, r.reason) for r in result.rejected] == [
            (2, "column 'vis' is missing"),
            (3, "column 't' is missing"),
            (4, "column 'station' is missing"),
            (5, "column 'vis': inf is not a finite number"),
        ]
        assert result.detections == [Detection("seen", ("KJFK", 40, 0.1, "true", "a b", 1), 1293396660.0, 1293396660.0)]
        assert engine.stats().rejected == 4


def test_emit_frame_reads_aware_and_naive_datetimes_texts_and_numbers_as_times() -> None:
    aware = pd.DataFrame({"t": pd.to_datetime(["2010-12-26 15:51", "2010-12-26 16:51"]).tz_localize("America/New_York"),
                          "x": [1, 1]})
    naive = aware.assign(t=aware["t"].dt.tz_localize(None))
    texts = aware.assign(t=["2010-12-26T20:51:00Z", "2010-12-26T21:51:00Z"])
    numbers = aware.assign(t=[1293396660, 1293400260])
    expected = [Detection("c", (1,), 1293396660.0, 1293400260.0)]
    for frame, tz, want in (
        (aware, None, expected),
        (naive, "America/New_York", expected),
        (naive, None, [Detection("c", (1,), 1293378660.0, 1293382260.0)]),
        (texts, None, expected),
        (numbers, None, [Detection("c", (1,), 1293396660, 1293400260)]),
    ):
        with Engine.from_string("c(X) <- a(X) seq a(X).") as engine:
            assert engine.emit_frame(frame, event="a", args=["x"], time="t", tz=tz).detections == want


def test_emit_frame_with_an_event_column_intervals_and_the_engines_own_rejections() -> None:
    frame = pd.DataFrame({
        "kind": ["a", "b", "", "b", "a"],
        "x": ["k1", "k1", "k1", "k1", "k1"],
        "s": [1, 3, 4, 2, 6],
        "e": [2, 4, 5, 2, 7],
    })
    with Engine.from_string("c(X) <- a(X) seq b(X).") as engine:
        result = engine.emit_frame(frame, event_col="kind", args=["x"], start="s", end="e")
        assert result.accepted == 3
        assert [r.line for r in result.rejected] == [3, 4]
        assert result.rejected[0].reason == "column 'kind': event name '' is not a non-empty string"
        assert result.detections == [Detection("c", ("k1",), 1, 4)]


def test_emit_frame_takes_a_pyarrow_table() -> None:
    import pyarrow as pa

    table = pa.table({"t": [1, 2], "x": ["u", "u"], "e": ["a", "b"]})
    with Engine.from_string("c(X) <- a(X) seq b(X).") as engine:
        assert engine.emit_frame(table, event_col="e", args=["x"], time="t").detections == [Detection("c", ("u",), 1, 2)]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"event": "a", "time": "t", "args": ["d"]}, TypeError,
         "column 'd' of type {d} cannot hold event arguments: convert it first"),
        ({"event": "a", "time": "b"}, TypeError, "column 'b' holds booleans, not times"),
        ({"event": "a", "time": "t", "args": "x"}, TypeError,
         "args is a list of column names, not the text 'x': write args=['x']"),
        ({"event": "a", "time": "nope"}, ValueError, "no column 'nope' in the frame: t, x, d, b"),
        ({"time": "t"}, ValueError, "give the event name with event=NAME, or its column with event_col=COL"),
        ({"event": "a", "start": "t"}, ValueError,
         "give the time column with time=COL, or the interval's columns with start=COL and end=COL"),
    ],
)
def test_emit_frame_refuses_columns_and_options_it_cannot_use(options: dict[str, Any], error: type, message: str) -> None:
    frame = pd.DataFrame({"t": [1], "x": [1], "d": pd.to_timedelta([1], unit="s"), "b": [True]})
    with Engine.from_string("c <- a seq b.") as engine:
        with pytest.raises(error) as e:
            engine.emit_frame(frame, **options)
        assert str(e.value) == message.format(d=frame["d"].dtype)


def test_emit_frame_gives_what_emit_many_gives_on_the_same_rows() -> None:
    rows = [("reading", ["KJFK", 30 + i % 20, i * 0.25, i % 3 == 0], i) for i in range(1, 2001)]
    frame = pd.DataFrame({"s": [r[1][0] for r in rows], "w": [r[1][1] for r in rows], "v": [r[1][2] for r in rows],
                          "g": [r[1][3] for r in rows], "t": [r[2] for r in rows]})
    rules = "calm(S, W) <- (reading(S, W, V, G) seq reading(S, W2, V2, G2)) within 3 where W2 < W, G == true."
    with Engine.from_string(rules) as one, Engine.from_string(rules) as two:
        many = one.emit_many(rows)
        framed = two.emit_frame(frame, event="reading", args=["s", "w", "v", "g"], time="t")
    assert framed == many
    assert len(many.detections) == 199


# -- prefixed names in events ------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
FIRE_RULES = """
:- prefix(wt, 'http://example.org/etalis-py/weather#').
:- prefix(ob, 'http://example.org/etalis-py/observations#').
fire(Area, Obs) <- (active_fire(Area) and weather_observation(Area, Obs)) within hours(3)
    where isa(Obs, wt:'WindObservation').
"""
OB = "http://example.org/etalis-py/observations#"


def test_prefixed_names_in_events_expand_with_the_rule_files_prefixes() -> None:
    with Engine.from_string(FIRE_RULES) as engine:
        engine.load_ontology([ROOT / "ontologies" / "weather.ttl", ROOT / "examples" / "enhanced_fire" / "observations.ttl"])
        assert engine.prefixes == {
            "ob": OB,
            "owl": "http://www.w3.org/2002/07/owl#",
            "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
            "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
            "wt": "http://example.org/etalis-py/weather#",
            "xsd": "http://www.w3.org/2001/XMLSchema#",
        }
        assert engine.emit("active_fire", "napa", at=0) == []
        assert engine.emit("weather_observation", "napa", "ob:observ_3", at=1800) == []
        found = engine.emit("weather_observation", "napa", "ob:observ_1", at=3600)
        assert found == [Detection("fire", ("napa", OB + "observ_1"), 0, 3600)]
        assert found.compact(engine.prefixes) == [Detection("fire", ("napa", "ob:observ_1"), 0, 3600)]
        assert str(found.compact(engine.prefixes)[0]) == "fire(napa, ob:observ_1) 1970-01-01 00:00 → 01:00 UTC (1h 00m)"
        lines = engine.feed_text(
            "event(weather_observation(sonoma, ob:observ_2), 5400).\n"
            "event(weather_observation(sonoma, 'http://example.org/etalis-py/observations#observ_1'), 5500).\n"
            "event(weather_observation(sonoma, 'zz:observ_1'), 5600).\n"
            "event(active_fire(sonoma), 7200).\n"
        ).detection_lines
        assert lines == (
            f'{{"event": "fire", "args": ["sonoma", "{OB}observ_2"], "start": 5400, "end": 7200}}\n'
            f'{{"event": "fire", "args": ["sonoma", "{OB}observ_1"], "start": 5500, "end": 7200}}\n'
        )


def test_without_declared_prefixes_event_names_stay_as_they_are() -> None:
    with Engine.from_string("seen(X) <- obs(X).") as engine:
        assert engine.prefixes == {}
        assert engine.emit("obs", "wt:o1", at=1) == [Detection("seen", ("wt:o1",), 1, 1)]
        engine.add_rules(":- prefix(wt, 'http://w#').\nseen2(X) <- obs(X).")
        assert engine.prefixes["wt"] == "http://w#"
        assert engine.emit("obs", "wt:o1", at=2) == [Detection("seen", ("http://w#o1",), 2, 2),
                                                    Detection("seen2", ("http://w#o1",), 2, 2)]


def test_emit_frame_takes_event_names_that_need_quotes_or_hold_braces() -> None:
    frame = pd.DataFrame({"t": [1, 2], "x": ["it's", "{}"]})
    with Engine.from_string("'seen {x}'(X) <- 'a{b}'(X).") as engine:
        assert engine.emit_frame(frame, event="a{b}", args=["x"], time="t").detections == [
            Detection("seen {x}", ("it's",), 1, 1), Detection("seen {x}", ("{}",), 2, 2)
        ]


@pytest.mark.parametrize("text_path", [False, True])
def test_emit_many_rejects_a_dict_with_a_key_it_does_not_know(text_path: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # a misspelt key is a bad row, as a misspelt column is: read without it, the event would be another
    if text_path:
        monkeypatch.setenv("ETALIS_TEXT_PATH", "1")
    with Engine.from_string("c(X) <- a(X) seq b(X).") as engine:
        result = engine.emit_many([("a", [2], 3), {"event": "b", "arg": [2], "time": 4},
                                   {"event": "b", "args": [2], "time": 5, "at": 5}, {"event": "b", "args": [2], "time": 6}])
        assert [(r.line, r.reason) for r in result.rejected] == [
            (2, "unknown key 'arg' (an event's keys are event, args, and time or start and end)"),
            (3, "unknown key 'at' (an event's keys are event, args, and time or start and end)"),
        ]
        assert (result.accepted, result.detections) == (2, [Detection("c", (2,), 3, 6)])
        assert engine.stats().rejected == 2
