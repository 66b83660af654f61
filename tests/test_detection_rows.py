"""The two ways the engine writes detections: JSON objects (the lines of
``etalis run`` and ``feed_text``) and rows (what Engine's emit paths decode),
each with the fast path for plain names and numbers and the general one."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import weakref

import pytest

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


# A Detection pickled (protocol 2) when it kept its fields in a __dict__.
EARLIER_PICKLE = (b'\x80\x02cetalis_py.events\nDetection\nq\x00)\x81q\x01}q\x02(X\x05\x00\x00\x00eventq\x03X\x01\x00'
                  b'\x00\x00cq\x04X\x04\x00\x00\x00argsq\x05(X\x01\x00\x00\x00kq\x06K\x01G@\x04\x00\x00\x00\x00\x00'
                  b'\x00]q\x07(K\x01X\x01\x00\x00\x00xq\x08etq\tX\x05\x00\x00\x00startq\nK\x01X\x03\x00\x00\x00endq'
                  b'\x0bG@\x00\x00\x00\x00\x00\x00\x00X\n\x00\x00\x00provenanceq\x0ch\x00)\x81q\r}q\x0e(h\x03X\x01'
                  b'\x00\x00\x00aq\x0fh\x05K\x01\x85q\x10h\nK\x01h\x0bK\x01h\x0c)ub\x85q\x11ub.')


def test_a_detection_pickles_as_it_did_and_loads_earlier_pickles() -> None:
    d = Detection("c", ("k", 1, 2.5, [1, "x"]), 1, 2.0, (Detection("a", (1,), 1, 1),))
    assert pickle.dumps(d, protocol=2) == EARLIER_PICKLE
    assert pickle.loads(EARLIER_PICKLE) == d
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) == d
    assert copy.deepcopy(d) == d and copy.copy(d) == d
    assert dataclasses.replace(d, event="e") == Detection("e", d.args, 1, 2.0, d.provenance)


def test_a_detection_refuses_every_assignment_and_can_be_weakly_referenced() -> None:
    d = Detection("c", (1,), 1, 2)
    for name in ("event", "other"):
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{name}'"):
            setattr(d, name, 1)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'start'"):
        del d.start
    assert weakref.ref(d)() is d
    assert hash(d) == hash(Detection("c", (1,), 1, 2))


def test_detections_made_by_columns_are_the_constructors() -> None:
    made = Detection.made(["c", "d"], [(1,), ()], [1, 2.5], [2, 3.0])
    assert made == [Detection("c", (1,), 1, 2), Detection("d", (), 2.5, 3.0)]
    assert [type(d) for d in made] == [Detection, Detection]
    assert repr(made[1]) == "Detection(event='d', args=(), start=2.5, end=3.0)"
    assert Detection.made(["c"], [()], [1], [1], [(made[0],)]) == [Detection("c", (), 1, 1, (made[0],))]
    with pytest.raises(ValueError, match=r"^the columns of Detection.made differ in length: 2, 2, 2, 1$"):
        Detection.made(["c", "d"], [(1,), ()], [1, 2.5], [2])


def test_detections_of_several_arities_in_one_batch_come_back_in_order() -> None:
    rules = "p(X, Y, Z) <- a(X) seq b(Y, Z).\nq <- a(_) seq b(_, _).\nr(L) <- b(L, _).\n"
    events = [("a", (1,), 1), ("b", ([1, ["k", 2.5]], "x"), 2), ("a", (2,), 3), ("b", (-0.0, 7), 4)]
    with Engine.from_string(rules) as engine:
        found = engine.emit_many(events).detections
    assert [(d.event, d.args, d.start, d.end) for d in found] == [
        ("p", (1, [1, ["k", 2.5]], "x"), 1, 2), ("q", (), 1, 2), ("r", ([1, ["k", 2.5]],), 2, 2),
        ("p", (1, -0.0, 7), 1, 4), ("q", (), 1, 4), ("p", (2, -0.0, 7), 3, 4), ("q", (), 3, 4), ("r", (-0.0,), 4, 4)]
    assert [str(d.args[-1]) for d in found if d.event == "r"] == ["[1, ['k', 2.5]]", "-0.0"]
