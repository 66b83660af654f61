"""Original ETALIS's timers, `exceptionAlarm(E, Seconds) <- P` and
`exceptionAlarmAbsoluteDatime(E, Time) <- P`, in event time: when P occurs
over [T1, T2], E occurs over [T1, T2 + Seconds] (or [T1, Time]), as ETALIS
gives it, derived before the first later event whose time is that due time
or later, or at the end of the stream (Engine.flush, done by etalis run)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from etalis_py import Detection, Engine
from etalis_py.cli import main
from etalis_py.errors import EtalisWarning, EventError, RuleError

HERE = Path(__file__).parent / "etalis_timers"


def test_a_relative_timer_raises_its_event_over_the_pattern_start_to_the_due_time() -> None:
    with Engine.from_file(HERE / "reminders.etl") as engine:
        result = engine.emit_many([("order", [1], 1), ("order", [2], 5), ("payment", [1], 20), ("tick", [], 40)])
        assert result.detections == [
            Detection("reminder", (1,), 1, 31),
            Detection("reminder", (2,), 5, 35),
            Detection("overdue", (2,), 5, 35),
        ]
        assert result.warnings == []
        assert (engine.stats().accepted, engine.stats().raised) == (4, 2)


def test_a_timer_fires_only_when_a_later_event_or_the_end_of_the_stream_comes() -> None:
    with Engine.from_file(HERE / "reminders.etl") as engine:
        assert engine.emit("order", 1, at=1) == []
        assert engine.emit("tick", at=30) == []                 # due at 31: not yet
        assert engine.emit("tick", at=31) == [Detection("reminder", (1,), 1, 31), Detection("overdue", (1,), 1, 31)]
        engine.emit("order", 2, at=32)
        assert engine.flush() == [Detection("reminder", (2,), 32, 62), Detection("overdue", (2,), 32, 62)]
        with pytest.raises(EventError, match="time 61 is earlier than the last accepted time 62"):
            engine.emit("tick", at=61)
        assert engine.flush() == []


def test_absolute_timers_set_out_of_order_fire_in_time_order() -> None:
    midnight = int(datetime(2026, 11, 26, tzinfo=timezone.utc).timestamp())
    with Engine.from_file(HERE / "deadlines.etl") as engine:
        result = engine.emit_many([
            ("request", [1, 50], 10),
            ("request", [2, 30], 12),
            ("request", [3, 12], 14),           # due before the request: never
            ("request", [4, "midnight"], 16),
            ("request", [5, 30], 18),
            ("answer", [1], 40),
            ("tick", [], 60),
        ])
        assert result.detections == [
            Detection("due", (2,), 12, 30),
            Detection("missed", (2,), 12, 30),
            Detection("due", (5,), 18, 30),
            Detection("missed", (5,), 18, 30),
            Detection("due", (1,), 10, 50),
        ]
        assert [(w.line, w.reason) for w in result.warnings] == [
            (3, "exceptionAlarmAbsoluteDatime/2 of due(3) is due at 12, not after the detection at 14 "
                "(a timer cannot fire in the past, nor at once): nothing raised"),
        ]
        # missed(4) would last longer than its window of a day
        assert engine.flush() == [Detection("due", (4,), 16, midnight)]


def test_a_timer_event_is_a_window_for_the_events_during_it() -> None:
    with Engine.from_file(HERE / "auction.etl") as engine:
        result = engine.emit_many([("open", [7], 100), ("bid", [7, 10], 110), ("bid", [7, 12], 159),
                                   ("bid", [7, 15], 161), ("open", [8], 170), ("bid", [8, 3], 171)])
        assert result.detections == [
            Detection("window", (7,), 100, 160),
            Detection("accepted", (7, 10), 100, 160),
            Detection("accepted", (7, 12), 100, 160),
        ]
        assert engine.flush() == [Detection("window", (8,), 170, 230), Detection("accepted", (8, 3), 170, 230)]


@pytest.mark.parametrize(("policy", "expected"), [
    ("unrestricted", [Detection("c", (1, 9), 1, 8), Detection("c", (2, 9), 2, 8)]),
    ("recent", [Detection("c", (2, 9), 2, 8)]),
    ("chronological", [Detection("c", (1, 9), 1, 8)]),
    ("strict", [Detection("c", (2, 9), 2, 8)]),
    ("nxt", [Detection("c", (1, 9), 1, 8)]),
])
def test_the_policy_or_strategy_decides_which_detections_set_a_timer(policy: str, expected: list[Detection]) -> None:
    rules = "exceptionAlarm(c(X, Y), 5) <- a(X) seq b(Y).\nd(X) <- c(X, _) seq z."
    with Engine.from_string(rules, policy=policy) as engine:
        result = engine.emit_many([("a", [1], 1), ("a", [2], 2), ("b", [9], 3), ("z", [], 10)])
        ds = [Detection("d", (d.args[0],), d.start, 10) for d in expected]
        assert result.detections == expected + ds


def test_a_timer_event_can_set_a_timer_and_all_fire_at_the_end_of_the_stream() -> None:
    rules = "exceptionAlarm(second(X), 5) <- first(X).\nexceptionAlarm(third(X), 5) <- second(X)."
    with Engine.from_string(rules) as engine:
        assert engine.emit("first", 1, at=0) == []
        assert engine.flush() == [Detection("second", (1,), 0, 5), Detection("third", (1,), 0, 10)]
        assert engine.stats().raised == 2


def test_timers_that_set_timers_for_ever_stop_at_the_end_of_the_stream_with_a_warning() -> None:
    with Engine.from_string("exceptionAlarm(tick, 1) <- tick.") as engine:
        engine.emit("tick", at=0)
        with pytest.warns(EtalisWarning, match="at the end of the stream: timers set timers for ever[?] "
                                               "after 10,000 more fired, 1 still pending are not fired"):
            fired = engine.flush()
        assert (len(fired), fired[0], fired[-1]) == (10001, Detection("tick", (), 0, 1), Detection("tick", (), 0, 10001))


def test_a_delay_that_is_no_positive_number_is_a_warning_of_the_line() -> None:
    with Engine.from_string("exceptionAlarm(b(X), D) <- a(X, D).") as engine:
        result = engine.emit_many([("a", [1, 0], 1), ("a", [2, "soon"], 2), ("a", [3, 2.5], 3)])
        assert result.detections == []
        assert [(w.line, w.reason) for w in result.warnings] == [
            (1, "exceptionAlarm/2 of b(1) was given the delay 0, not a positive number of seconds: nothing raised"),
            (2, "exceptionAlarm/2 of b(2) was given the delay soon, not a positive number of seconds: nothing raised"),
        ]
        assert engine.flush() == [Detection("b", (3,), 3, 5.5)]


def test_a_timer_event_carries_the_provenance_of_the_pattern_that_set_it() -> None:
    with Engine.from_file(HERE / "reminders.etl", explain=True) as engine:
        engine.emit_many([("order", [1], 1), ("payment", [1], 20)])
        assert [(d.event, d.start, d.end, d.provenance) for d in engine.flush()] == [
            ("reminder", 1, 31, (Detection("order", (1,), 1, 1),)),
        ]


def test_reset_forgets_the_pending_timers() -> None:
    with Engine.from_file(HERE / "reminders.etl") as engine:
        engine.emit("order", 1, at=1)
        engine.reset()
        assert engine.flush() == []


def test_etalis_run_flush_timers_fires_the_pending_timers_at_the_end_of_its_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = tmp_path / "orders.events"
    events.write_text("event(order(1), 1).\nevent(order(2), 5).\nevent(payment(1), 20).\n")
    assert main(["run", str(HERE / "reminders.etl"), "--events", str(events), "--flush-timers"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        '{"event": "reminder", "args": [1], "start": 1, "end": 31}',
        '{"event": "reminder", "args": [2], "start": 5, "end": 35}',
        '{"event": "overdue", "args": [2], "start": 5, "end": 35}',
    ]
    assert err.startswith("events read: 3, accepted: 3, raised by rules (event/1, timers): 2, rejected: 0, "
                          "detections: 3, warnings: 0,")


def test_etalis_run_leaves_the_timers_due_after_its_input_pending(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    events = tmp_path / "orders.events"
    events.write_text("event(order(1), 1).\nevent(order(2), 5).\nevent(payment(1), 20).\nevent(tick, 33).\n")
    assert main(["run", str(HERE / "reminders.etl"), "--events", str(events)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ['{"event": "reminder", "args": [1], "start": 1, "end": 31}']
    assert err.startswith("events read: 4, accepted: 4, raised by rules (event/1, timers): 1, rejected: 0, "
                          "detections: 1, warnings: 0,")


def test_etalis_check_takes_timers_and_reports_their_events(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(HERE / "reminders.etl")]) == 0
    out, err = capsys.readouterr()
    assert (out + err).splitlines()[-1] == (
        f"{HERE / 'reminders.etl'}: ok: 2 rules, 1 binary goals, policy unrestricted, reports overdue/1, reminder/1")


def test_a_timer_that_sets_itself_is_a_cycle_that_advances_in_time(capsys: pytest.CaptureFixture[str]) -> None:
    with Engine.from_string("exceptionAlarm(tick(N), 1) <- tick(M) where N is M + 1.") as engine:
        assert [(f.code, f.severity) for f in engine.findings()] == [("cycle", "info")]


@pytest.mark.parametrize(("text", "position", "message"), [
    ("exceptionAlarm(b(X), -1) <- a(X).", (1, 22),
     "the delay of exceptionAlarm/2 must be a positive number of seconds, not -1"),
    ("exceptionAlarm(b(X), minutes(1)) <- a(X).", (1, 22),
     "the delay of exceptionAlarm/2 must be a positive number of seconds, not minutes(1)"),
    ("exceptionAlarmAbsoluteDatime(c, soon) <- a.", (1, 33),
     "the time of exceptionAlarmAbsoluteDatime/2 must be a number of seconds or a datime(Y,M,D,H,Min,S), not soon"),
    ("exceptionAlarm(a seq b, 5) <- c.", (1, 16),
     "the head of an event rule must be a single event, not a pattern: seq/2 is the operator seq"),
    ("exceptionAlarm(check(R, S), 30) <- on(R, S).", (1, 16),
     "the head of an event rule must be a single event, not a pattern: check/2 is the operator check"),
    ("exceptionAlarm(exceptionAlarm(b, 1), 5) <- c.", (1, 1),
     "the event of a timer cannot be a timer"),
    ("d <- a seq (exceptionAlarm(b, 5) <- c).", (1, 12),
     "a timer cannot be a rule nested in a pattern: its event does not occur with the pattern"),
])
def test_a_malformed_timer_is_refused_where_it_is_written(text: str, position: tuple[int, int], message: str) -> None:
    with pytest.raises(RuleError) as info:
        Engine.from_string(text)
    assert (info.value.line, info.value.column, info.value.message) == (*position, message)


def test_replay_on_spark_refuses_timers_before_it_starts(tmp_path: Path) -> None:
    from etalis_py.spark import replay
    data = tmp_path / "orders.csv"
    data.write_text("id,t\n1,1\n")
    with pytest.raises(RuleError) as info:
        replay(str(data), HERE / "reminders.etl", event="order", args=["id"], time="t")
    assert (info.value.line, info.value.column) == (2, 1)
    assert info.value.message.startswith("exceptionAlarm/2 (a timer) is not supported by replay on Spark")


def test_with_a_lateness_a_timer_fires_among_the_events_released_in_time_order() -> None:
    with Engine.from_file(HERE / "reminders.etl", lateness=5) as engine:
        result = engine.emit_many([("order", [1], 1), ("tick", [], 33), ("payment", [1], 30), ("order", [2], 40)])
        # payment(1)@30, late, is released before tick@33, and the timer due at 31 between them:
        # reminder(1) has its payment, as it would have in time order
        assert result.detections == [Detection("reminder", (1,), 1, 31)]
        assert engine.flush() == [Detection("reminder", (2,), 40, 70), Detection("overdue", (2,), 40, 70)]
