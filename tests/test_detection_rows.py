"""The two ways the engine writes detections: JSON objects (the lines of
``etalis run`` and ``feed_text``) and rows (what Engine's emit paths decode),
each with the fast path for plain names and numbers and the general one."""

from __future__ import annotations

import json

from etalis_py import Detection, Engine
from etalis_py.bridge.engine import parse_rows

RULES = "c(X, Y) <- a(X) seq b(Y).\n"


def test_rows_and_objects_carry_the_same_detections() -> None:
    events = [("a", (1,), 1), ("b", (2.5,), 2), ("a", ("x y",), 3), ("b", ('q"uote',), 4.25), ("a", ([1, "z"],), 5),
              ("b", ("plain",), 6)]
    with Engine.from_string(RULES) as engine:
        found = engine.emit_many(events).detections
    text = ("event(a(1), 1).\nevent(b(2.5), 2).\nevent(a('x y'), 3).\nevent(b('q\"uote'), 4.25).\n"
            "event(a([1, z]), 5).\nevent(b(plain), 6).\n")
    with Engine.from_string(RULES) as engine:
        lines = engine.feed_text(text).detection_lines
    assert lines.splitlines()[:2] == ['{"event": "c", "args": [1, 2.5], "start": 1, "end": 2}',
                                      '{"event": "c", "args": [1, "q\\"uote"], "start": 1, "end": 4.25}']
    assert [(d.event, d.args, d.start, d.end) for d in found] == [
        (d["event"], tuple(d["args"]), d["start"], d["end"]) for d in map(json.loads, lines.splitlines())]
    assert len(found) == 6
    assert found[-1] == Detection("c", ([1, "z"], "plain"), 5, 6)


def test_a_row_with_provenance_is_a_detection_with_its_inputs() -> None:
    [d] = parse_rows('["c", [1, "x"], 1, 2, [["a", [1], 1, 1], ["b", ["x"], 2, 2]]]\n')
    assert d == Detection("c", (1, "x"), 1, 2, (Detection("a", (1,), 1, 1), Detection("b", ("x",), 2, 2)))
    assert hash(d) == hash(Detection("c", (1, "x"), 1, 2, (Detection("a", (1,), 1, 1), Detection("b", ("x",), 2, 2))))


def test_explained_detections_come_back_with_their_provenance() -> None:
    with Engine.from_string(RULES, explain=True) as engine:
        found = engine.emit_many([("a", (1,), 1), ("b", ("é",), 2)]).detections
    assert found == [Detection("c", (1, "é"), 1, 2, (Detection("a", (1,), 1, 1), Detection("b", ("é",), 2, 2)))]
