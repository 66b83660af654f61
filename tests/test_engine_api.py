"""The Python API: events in, detections out, errors with positions."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from etalis_py import Detection, Engine, Event, EventError, Rejection, RuleError, RuleFileNotFound
from etalis_py.errors import EtalisWarning

SEQ = "c(X) <- a(X) seq b(X)."


def test_emit_returns_the_detections_of_the_event() -> None:
    with Engine.from_string(SEQ) as engine:
        assert engine.emit("a", 1, at=1) == []
        assert engine.emit("b", 1, at=2) == [Detection("c", (1,), 1, 2)]


def test_emit_with_an_interval() -> None:
    with Engine.from_string("c <- a seq b.") as engine:
        engine.emit("a", start=1, end=3)
        assert engine.emit("b", start=4, end=6) == [Detection("c", (), 1, 6)]


def test_datetime_becomes_epoch_seconds_and_naive_is_utc() -> None:
    with Engine.from_string(SEQ) as engine:
        engine.emit("a", "k", at=datetime(2010, 12, 26, 20, 51))
        found = engine.emit("b", "k", at=datetime(2010, 12, 26, 23, 51, tzinfo=timezone.utc))
        assert found == [Detection("c", ("k",), 1293396660.0, 1293407460.0)]


def test_arguments_keep_their_python_types() -> None:
    rules = "c(A, B, C, D) <- a(A, B, C, D)."
    with Engine.from_string(rules) as engine:
        [d] = engine.emit("a", "it's \"x\"", 2.5, [1, "two"], True, at=1)
        assert d.args == ("it's \"x\"", 2.5, [1, "two"], "true")
        assert d.to_json() == '{"event": "c", "args": ["it\'s \\"x\\"", 2.5, [1, "two"], "true"], "start": 1, "end": 1}'


def test_emit_rejects_an_earlier_time() -> None:
    with Engine.from_string(SEQ) as engine:
        engine.emit("a", 1, at=5)
        with pytest.raises(EventError, match="time 4 is earlier than the last accepted time 5"):
            engine.emit("b", 1, at=4)


def test_emit_needs_a_time() -> None:
    with Engine.from_string(SEQ) as engine:
        with pytest.raises(EventError, match="needs a time"):
            engine.emit("a", 1)


def test_emit_many_processes_valid_items_and_rejects_the_rest_with_positions() -> None:
    items = [
        ("a", [1], 1),
        Event("b", (1,), 2, 2),
        {"event": "b", "args": [1], "time": 1},
        ("a", "notalist", 3),
        {"event": "a", "args": [None], "time": 4},
        {"event": "b", "args": [1], "start": 5, "end": 6},
    ]
    with Engine.from_string(SEQ) as engine:
        result = engine.emit_many(items, batch_size=2)
        assert result.accepted == 3
        assert result.rejected == [
            Rejection(3, "time 1 is earlier than the last accepted time 2 (events must arrive in time order)"),
            Rejection(4, "args 'notalist' is not a list"),
            Rejection(5, "an argument is missing (None)"),
        ]
        assert result.detections == [Detection("c", (1,), 1, 2), Detection("c", (1,), 1, 6)]
        stats = engine.stats()
        assert (stats.accepted, stats.rejected, stats.detections) == (3, 3, 2)


def test_callbacks_see_every_detection_in_order_and_the_pull_queue_what_nothing_delivered() -> None:
    seen: list[Detection] = []
    every: list[str] = []
    with Engine.from_string("c <- a seq b.\nd <- c seq e.") as engine:
        engine.on("d", seen.append)
        result = engine.emit_many([("a", [], 1), ("b", [], 2), ("e", [], 3)], collect=False)
        assert result.detections == []
        assert seen == [Detection("d", (), 1, 3)]
        assert list(engine.detections()) == [Detection("c", (), 1, 2)]
        assert list(engine.detections()) == []
        engine.on(None, lambda d: every.append(d.event))
        engine.reset()
        assert engine.emit_many([("a", [], 4), ("b", [], 5), ("e", [], 6)]).detections == [
            Detection("c", (), 4, 5), Detection("d", (), 4, 6)
        ]
        assert seen == [Detection("d", (), 1, 3), Detection("d", (), 4, 6)]
        assert every == ["c", "d"]
        assert list(engine.detections()) == []


def test_two_engines_never_see_each_others_rules_goals_or_detections() -> None:
    one = Engine.from_string("c(X) <- a(X) seq b(X).")
    two = Engine.from_string("c(X) <- a(X) and b(X).\nonly_two :- true.")
    try:
        one.emit("a", 1, at=1)
        assert two.emit("b", 1, at=2) == []
        assert one.emit("b", 1, at=3) == [Detection("c", (1,), 1, 3)]
        assert two.emit("a", 1, at=4) == [Detection("c", (1,), 2, 4)]
        assert one.stats().pending == 1
        assert two.stats().pending == 2
        assert list(one.detections()) == list(two.detections()) == []
    finally:
        one.close()
        two.close()


def test_stats_report_live_pending_goals_per_binary_goal() -> None:
    with Engine.from_string("c(X) <- (a(X) seq b(X)) within 10.") as engine:
        engine.emit_many([("a", [k], t) for t, k in enumerate([1, 2, 3, 1], start=1)])
        stats = engine.stats()
        assert stats.pending == 4
        assert stats.pending_by_goal == [{"goal": 1, "side": "left", "pending": 4}]
        engine.emit("a", 1, at=15)  # a(1) at 1 and 4 expire when key 1 is touched
        assert engine.stats().pending == 3


def test_a_closed_engine_refuses_work() -> None:
    engine = Engine.from_string(SEQ)
    engine.close()
    with pytest.raises(Exception, match="closed"):
        engine.emit("a", 1, at=1)


def test_rule_errors_name_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.etl"
    path.write_text("ok <- a seq b.\n\nc(X) <- a(X) seq 42.\n")
    with pytest.raises(RuleError) as info:
        Engine.from_file(path)
    e = info.value
    assert (e.file, e.line, e.column) == (str(path), 3, 18)
    assert e.message == "unknown construct 42 in a pattern"
    assert str(e).startswith(f"{path}:3:18: error: unknown construct 42 in a pattern\n  hint: expected an event")


@pytest.mark.parametrize(
    "text,line,column,message",
    [
        ("c <- a seq.", 1, 10, "syntax error: unbalanced operator"),
        ("c <- a seq b.\n:- policy(fast).", 2, 1, "unknown consumption policy fast"),
        (":- policy(nolabel, recent).\nc <- a seq b.", 1, 1, "no rule is labelled nolabel"),
        ("x : c <- a.\nx : d <- b.", 2, 1, "the label x is used by more than one rule"),
        ("a seq b.", 1, 1, "an event pattern without a head"),
        (":- frobnicate.", 1, 1, "unknown directive frobnicate"),
        (":- initialization(halt).\nc <- a.", 1, 1, "unknown directive initialization(halt)"),
        (":- policy(P).\nc <- a.", 1, 1, "a consumption policy must be named, not a variable"),
        ("c <- (a seq b) within soon.", 1, 23, "soon is not a duration"),
        ("c(X) <- a(X) or b(Y) where Y > 1.", 1, 1, "variable X is bound by only one branch of `or` but used outside it"),
        ("X <- a.", 1, 1, "the head of an event rule cannot be a variable"),
        ("h <- a, b.", 1, 6, ", is Prolog control, not an event operator"),
        ("atom(X) :- true.", 1, 1, "sandbox: rules from an untrusted source may not define atom/1, a built-in predicate"),
    ],
)
def test_rule_errors_are_positioned(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(RuleError) as info:
        Engine.from_string(text, source="r.etl")
    assert (info.value.file, info.value.line, info.value.column, info.value.message) == ("r.etl", line, column, message)


def test_missing_rule_file() -> None:
    with pytest.raises(RuleFileNotFound, match="nope.etl does not exist"):
        Engine.from_file("nope.etl")


def test_where_errors_become_warnings_and_processing_goes_on() -> None:
    with Engine.from_string("c(X) <- a(X) where X > 1.") as engine:
        result = engine.emit_many([("a", ["text"], 1), ("a", [2], 2)])
        assert result.detections == [Detection("c", (2,), 2, 2)]
        assert [w.line for w in result.warnings] == [1]
        assert "where condition" in result.warnings[0].reason and "text" in result.warnings[0].reason


def test_readme_example_prints_what_it_says() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    expected = [line.removeprefix("# ") for line in code.splitlines() if line.startswith("# [")]
    printed: list[str] = []
    namespace: dict[str, object] = {"print": lambda x: printed.append(repr(x))}
    exec(code, namespace)
    assert printed == expected


def test_text_beyond_latin_1_round_trips() -> None:
    with Engine.from_string("c(X) <- a(X).") as engine:
        assert engine.emit("a", "café", at=1) == [Detection("c", ("café",), 1, 1)]
        assert engine.emit("a", "naïve ☃ 日本", at=2) == [Detection("c", ("naïve ☃ 日本",), 2, 2)]


def test_two_engines_in_one_process_keep_their_warnings_apart() -> None:
    with Engine.from_string("c(X) <- a(X) where X > 1.") as first, \
            Engine.from_string("d(X) <- b(X) where X < 1.") as second:
        r1 = first.emit_many([("a", ("text",), 1), ("a", (2,), 2)])
        r2 = second.emit_many([("b", (0,), 1), ("b", ("x",), 2)])
        r3 = first.emit_many([("a", (3,), 4)])
    assert [(w.line, w.reason) for w in r1.warnings] == [
        (1, "where condition text>1 of c(A) (<string>:1:1) raised: text is an atom, not a number, and arithmetic compares numbers\n  hint: compare an atom with == or \\== (X == text), or use a number")]
    assert [(w.line, w.reason) for w in r2.warnings] == [
        (2, "where condition x<1 of d(A) (<string>:1:1) raised: x is an atom, not a number, and arithmetic compares numbers\n  hint: compare an atom with == or \\== (X == x), or use a number")]
    assert r3.warnings == []
    assert [(d.event, d.args, d.start) for r in (r1, r2, r3) for d in r.detections] == [
        ("c", (2,), 2), ("d", (0,), 1), ("c", (3,), 4)]


def test_a_value_of_the_wrong_type_is_a_type_error_that_says_so() -> None:
    # they were AttributeError ('bytes' object has no attribute 'encode'), and a
    # callback that is no function was taken, to fail with "'int' object is not
    # callable" at a later detection
    with pytest.raises(TypeError) as info:
        Engine.from_string(b"c <- a.")  # type: ignore[arg-type]
    assert str(info.value) == "rule text must be a str, not bytes (decode bytes first: data.decode('utf-8'))"
    with Engine.from_string("c(X) <- a(X).") as engine:
        with pytest.raises(TypeError) as info:
            engine.add_rules(None)  # type: ignore[arg-type]
        assert str(info.value) == "rule text must be a str, not NoneType"
        with pytest.raises(TypeError) as info:
            engine.feed_text(b"a(1).\n")  # type: ignore[arg-type]
        assert str(info.value) == ("feed_text() takes event lines, which must be a str, not bytes "
                                   "(decode bytes first: data.decode('utf-8'))")
        with pytest.raises(TypeError) as info:
            engine.on("c", 5)  # type: ignore[arg-type]
        assert str(info.value) == ("Engine.on('c', ...): the callback 5 is not callable: "
                                   "give a function of one detection")
        assert engine.emit("a", 1, at=1) == [Detection("c", (1,), 1, 1)]     # nothing was registered


def test_emit_frame_with_an_event_named_as_a_column_asks_whether_event_col_was_meant() -> None:
    import pandas as pd

    frame = pd.DataFrame({"ev": ["a", "b"], "x": [1, 1], "t": [1, 2]})
    with Engine.from_string("c(X) <- a(X) seq b(X).") as engine:
        with pytest.warns(EtalisWarning) as caught:
            result = engine.emit_frame(frame, event="ev", args=["x"], time="t")
        assert [str(w.message) for w in caught] == [
            "event='ev' names the event of every row 'ev', but 'ev' is a column of the frame: "
            "did you mean event_col='ev'?"]
        assert (result.accepted, result.detections) == (2, [])
    with Engine.from_string("c(X) <- a(X) seq b(X).") as engine:
        assert engine.emit_frame(frame, event_col="ev", args=["x"], time="t").detections == [
            Detection("c", (1,), 1, 2)]


def test_every_way_in_counts_what_it_did_once() -> None:
    """emit, emit_many, feed_text, feed_segments, advance_to and flush each
    count the events accepted and rejected and the detections once."""
    with Engine.from_string("c(X) <- a(X).\n", lateness=1) as engine:
        assert engine.emit("a", 1, at=1) == []                        # held back by the lateness
        result = engine.emit_many([("a", (2,), 3), ("a", "x", 4)])    # releases a(1); "x" is no args list
        assert ([(d.event, d.args) for d in result.detections], result.rejected) == (
            [("c", (1,))], [Rejection(2, "args 'x' is not a list")])
        fed = engine.feed_text("event(a(3), 5).\nevent(a(4), 1).\n")  # releases a(2); a(4) is too late
        assert (fed.accepted, fed.detection_lines, fed.rejected) == (
            1, '{"event": "c", "args": [2], "start": 3, "end": 3}\n',
            [Rejection(2, "time 1 is more than the lateness (1 s) before the latest time 5")])
        assert [(d.event, d.args) for d in engine.advance_to(10)] == [("c", (3,))]
        assert engine.flush() == []
        stats = engine.stats()
        assert (stats.accepted, stats.rejected, stats.detections, stats.raised) == (3, 2, 3, 0)
    with Engine.from_string("c(X) <- a(X).\n") as engine:
        results = engine.feed_segments(["event(a(1), 1).\n", "event(a(2), 2).\nevent(a(3), 0).\n"], [True, False])
        assert [(r.accepted, r.detection_lines.count("\n"), len(r.rejected)) for r in results] == [(1, 1, 0), (1, 1, 1)]
        stats = engine.stats()
        assert (stats.accepted, stats.rejected, stats.detections) == (2, 1, 2)
