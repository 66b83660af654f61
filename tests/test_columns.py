"""The columnar hand-over of events (etalis_py.bridge.columns and the foreign
library prolog/etalis/runtime/etalis_columns.c): the same events, rejections and
detections as the text way, on values at the edges of each column type;
and the library built at first use, or the text way with one notice."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import pytest

from etalis_py import Engine
from etalis_py.bridge._prolog import bridge, prolog_dir
from etalis_py.bridge.columns import build, find_or_build, items_packed
from etalis_py.errors import EtalisWarning
from etalis_py.events import Event

RULES = "got(X) <- a(X).\ngot2(X, Y) <- b(X, Y).\ngot0 <- c.\n"

ITEMS: list[Any] = [
    ("a", (1,), 1), ("a", (-5,), 2), ("a", (2**63 - 1,), 3), ("a", (2**63,), 4), ("a", (-10**30,), 5),
    ("a", (-0.0,), 6), ("a", (1e-300,), 7), ("a", (float("nan"),), 8), ("a", (float("inf"),), 9),
    ("a", (None,), 10), ("a", (True,), 11), ("a", ("it's",), 12), ("a", ("東京",), 13), ("a", ("ex:o1",), 14),
    ("a", ([1, [2.5, "x y"]],), 15), ("a", ("\ud800",), 16), ("", (1,), 17), ("b", (1, "q"), 18), ("c", (), 19),
    {"event": "a", "args": [3], "start": 20, "end": 21}, Event("a", (4,), 22, 22.5), ("a", (1,), float("nan")),
    ("a", (1,), 23.5), ("a", (2,), "1970-01-01T00:00:24Z"), ("a", [5], 25), ("a", (6,), 26, 27),
    ("a", (7,), 2**70), ("a", (8,), 1),
]

DETECTIONS = [
    ("got", (1,), 1, 1), ("got", (-5,), 2, 2), ("got", (2**63 - 1,), 3, 3), ("got", (2**63,), 4, 4),
    ("got", (-10**30,), 5, 5), ("got", (-0.0,), 6, 6), ("got", (1e-300,), 7, 7), ("got", ("true",), 11, 11),
    ("got", ("it's",), 12, 12), ("got", ("東京",), 13, 13), ("got", ("ex:o1",), 14, 14),
    ("got", ([1, [2.5, "x y"]],), 15, 15), ("got2", (1, "q"), 18, 18), ("got0", (), 19, 19),
    ("got", (3,), 20, 21), ("got", (4,), 22, 22.5), ("got", (1,), 23.5, 23.5), ("got", (2,), 24.0, 24.0),
    ("got", (5,), 25, 25), ("got", (6,), 26, 27),
]

REJECTED = [
    (8, "argument nan is not a finite number (NaN, infinite, or too large)"),
    (9, "argument inf is not a finite number (NaN, infinite, or too large)"),
    (10, "an argument is missing (None)"),
    (16, "text '\\ud800' holds a lone surrogate (U+D800), which is not a character"),
    (17, "event name '' is not a non-empty string"),
    (22, "time nan is not finite"),
    # a time past an int64, and past the horizon
    (27, f"time {2**70} is beyond the horizon of 253,402,300,799 seconds (the end of the year 9999): times are "
         "seconds, not milliseconds or nanoseconds"),
    (28, "time 1 is earlier than the last accepted time 27 (events must arrive in time order)"),
]


@pytest.mark.parametrize("path", ["columns", "text"])
@pytest.mark.parametrize("batch_size", [3, 10_000])
def test_emit_many_gives_the_same_on_both_ways(path: str, batch_size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    if path == "text":
        monkeypatch.setenv("ETALIS_TEXT_PATH", "1")
    else:
        monkeypatch.delenv("ETALIS_TEXT_PATH", raising=False)
        assert bridge().columns()
    with Engine.from_string(RULES) as engine:
        result = engine.emit_many(ITEMS, batch_size)
        found = [(d.event, d.args, d.start, d.end) for d in result.detections]
        assert found == DETECTIONS
        # the types too: 1 is not 1.0, and -0.0 keeps its sign
        assert [tuple(map(type, d[1])) + (type(d[2]), type(d[3])) for d in found] == \
            [tuple(map(type, d[1])) + (type(d[2]), type(d[3])) for d in DETECTIONS]
        assert math.copysign(1, found[5][1][0]) == -1
        assert [(r.line, r.reason) for r in result.rejected] == REJECTED
        assert result.accepted == 20
        assert engine.stats().rejected == 8


def test_a_batch_of_plain_tuples_is_packed_column_by_column() -> None:
    """Tuples of one shape go column by column; a bad value rejects its row only."""
    rejected: list[Any] = []
    items = [("a", (1, "x"), 0.5), ("b", (2.5, None), 1), ("a", (3, float("nan")), 2), ("a", (2**64, "y"), 3)]
    packed = items_packed(items, 10, {}, rejected)
    assert packed.heads == ["(a)/2", "(b)/2"]
    assert packed.codes.tolist() == [0, -1, -1, 0]
    assert [(r.line, r.reason) for r in rejected] == [
        (11, "an argument is missing (None)"),
        (12, "argument nan is not a finite number (NaN, infinite, or too large)")]
    first, second, time = packed.columns
    assert first.table == [str(2**64)] and first.tags.tolist() == [0, 1, 0, 2]  # type: ignore[union-attr]
    assert second.table == ["x", "y"]
    assert time.tags.tolist() == [1, 0, 0, 0]  # type: ignore[union-attr]


def test_the_library_is_built_into_the_cache_at_first_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prolog = tmp_path / "prolog"
    (prolog / "etalis" / "runtime").mkdir(parents=True)
    (prolog / "etalis" / "runtime" / "etalis_columns.c").write_bytes((prolog_dir() / "etalis" / "runtime" / "etalis_columns.c").read_bytes())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    home = str(bridge().request("prolog_home")[0]["home"])
    path, why = find_or_build(prolog, home)
    assert why == ""
    assert path is not None and path.parent.parent == tmp_path / "cache" / "etalis-py"
    assert path.name == "etalis_columns.so" and path.stat().st_size > 0
    assert find_or_build(prolog, home) == (path, "")  # the second time, from the cache


def test_without_a_compiler_the_reason_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    assert build(prolog_dir() / "etalis" / "runtime" / "etalis_columns.c", tmp_path / "x.so", "/usr") == \
        "no C compiler (cc or gcc) on PATH"


def test_without_the_library_events_cross_as_text_after_one_notice(monkeypatch: pytest.MonkeyPatch) -> None:
    from etalis_py.bridge import _prolog
    b = bridge()
    monkeypatch.setattr(b, "_columns", None)
    monkeypatch.setattr(_prolog, "prolog_dir", lambda: Path("/nonexistent"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Engine.from_string(RULES) as engine:
            result = engine.emit_many([("a", (1,), 1), ("a", (2,), 2)])
            engine.emit_many([("a", (3,), 3)])
    notices = [str(w.message) for w in caught if issubclass(w.category, EtalisWarning)]
    assert notices == ["etalis-py: events cross into Prolog as text, the slower way "
                       "(the columnar hand-over is not available: no /nonexistent/etalis/runtime/etalis_columns.c)"]
    assert [(d.event, d.args) for d in result.detections] == [("got", (1,)), ("got", (2,))]
    assert b._columns is False


FRAME_RULES = "got(N, X, Y, Z) <- a(N, X, Y, Z).\n"


def edge_frame() -> Any:
    import numpy as np
    import pandas as pd

    return pd.DataFrame({
        "n": pd.array([1, -2, None, 2**62, 5, 6], dtype="Int64"),
        "x": [0.5, float("nan"), 1.0, -0.0, float("inf"), 1e300],
        "y": pd.Categorical(["p", "it's", "p", "東京", "q", "p"]),
        "z": np.array([2**70, "s", 1, True, None, [1, 2]], dtype=object),
        "t": pd.to_datetime(["2024-01-01 00:00:00", "2024-01-01 00:00:01", "2024-01-01 00:00:02",
                             "2024-01-01 00:00:03.5", "2024-01-01 00:00:04", "2024-01-01 00:00:05"], format="ISO8601"),
    })


@pytest.mark.parametrize("path", ["columns", "text"])
@pytest.mark.parametrize("batch_size", [2, 100])
def test_emit_frame_gives_the_same_on_both_ways(path: str, batch_size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    if path == "text":
        monkeypatch.setenv("ETALIS_TEXT_PATH", "1")
    else:
        monkeypatch.delenv("ETALIS_TEXT_PATH", raising=False)
    with Engine.from_string(FRAME_RULES) as engine:
        result = engine.emit_frame(edge_frame(), event="a", args=["n", "x", "y", "z"], time="t", tz="Europe/Paris",
                                   batch_size=batch_size)
        found = [(d.event, d.args, d.start, d.end) for d in result.detections]
        assert found == [("got", (1, 0.5, "p", 2**70), 1704063600.0, 1704063600.0),
                         ("got", (2**62, -0.0, "東京", "true"), 1704063603.5, 1704063603.5),
                         ("got", (6, 1e300, "p", [1, 2]), 1704063605.0, 1704063605.0)]
        assert [type(a) for a in found[0][1]] == [int, float, str, int]
        assert math.copysign(1, found[1][1][1]) == -1
        assert [(r.line, r.reason) for r in result.rejected] == [
            (2, "column 'x' is missing"), (3, "column 'n' is missing"), (5, "column 'x': inf is not a finite number")]
        assert result.accepted == 3


OUT_RULES = """out(X, S, L, C, F, N, V, B) <- a(X) where (S = "str", L = [], C = f(X, 'Y z'), F is inf, N = null, B is 2**70).
'東京'(X, true) <- b(X).
"""


@pytest.mark.parametrize("path", ["columns", "text"])
def test_detections_come_back_alike_both_ways(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Packed detections: strings, [], compound terms, infinity, the atom
    null, unbound variables and big ints as the JSON rows give them."""
    if path == "text":
        monkeypatch.setenv("ETALIS_TEXT_PATH", "1")
    else:
        monkeypatch.delenv("ETALIS_TEXT_PATH", raising=False)
    with Engine.from_string(OUT_RULES) as engine:
        result = engine.emit_many([("a", (1,), 1), ("b", ("q",), 2), ("a", (-0.0,), 3)])
        found = [(d.event, d.args, d.start, d.end) for d in result.detections]
        assert found == [
            ("out", (1, "str", [], "f(1,'Y z')", None, "null", None, 2**70), 1, 1),
            ("東京", ("q", "true"), 2, 2),
            ("out", (-0.0, "str", [], "f(-0.0,'Y z')", None, "null", None, 2**70), 3, 3)]
        assert math.copysign(1, found[2][1][0]) == -1
        assert engine.stats().detections == 3


@pytest.mark.parametrize("path", ["columns", "text"])
def test_provenance_comes_back_both_ways(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if path == "text":
        monkeypatch.setenv("ETALIS_TEXT_PATH", "1")
    else:
        monkeypatch.delenv("ETALIS_TEXT_PATH", raising=False)
    with Engine.from_string("c(X) <- a(X) seq b(X).", explain=True) as engine:
        result = engine.emit_many([("a", (1,), 1), ("b", (1,), 2.5)])
        [d] = result.detections
        assert (d.event, d.args, d.start, d.end) == ("c", (1,), 1, 2.5)
        assert [(p.event, p.args, p.start, p.end) for p in d.provenance] == [("a", (1,), 1, 1), ("b", (1,), 2.5, 2.5)]


def test_a_column_of_plain_numerals_is_read_as_numbers_as_python_reads_them() -> None:
    import numpy as np
    import pyarrow as pa

    from etalis_py.inputs.tables import number_array

    floats = number_array(pa.array(["0.1", "-0.0", "12.50", "0.1000000000000000055511151231257827",
                                    "9" * 300 + ".5", "007.25"]))
    assert floats is not None and floats.dtype == np.float64
    assert floats.tolist() == [0.1, -0.0, 12.5, 0.1, float("9" * 300 + ".5"), 7.25]
    assert math.copysign(1, floats[1]) == -1
    ints = number_array(pa.array(["5", "-3", "007", "999999999999999999"]))
    assert ints is not None and ints.dtype == np.int64 and ints.tolist() == [5, -3, 7, 999999999999999999]
    typed = number_array(pa.array([1.5, -2.0]))
    assert typed is not None and typed.tolist() == [1.5, -2.0]
    # each of these has a value that is not a plain numeral standing for itself in an int64 or a float
    for column in (["1", "2.5"], ["1e3"], [" 5"], ["+5"], ["1000000000000000000"], ["5", None], ["٣"], ["1."],
                   [".5"], ["nan"], [], [1.5, float("inf")], [1, None]):
        assert number_array(pa.array(column)) is None, column
    assert number_array(pa.array([b"\xff1", b"2"], pa.binary()).cast(pa.string(), safe=False)) is None


def test_packed_batches_joined_and_taken_by_rows_give_their_events() -> None:
    """Packed.joined renumbers heads and table texts of several batches,
    and rows() takes rows in any order with the texts they use."""
    import numpy as np

    from etalis_py.bridge.columns import Packed

    engine = Engine.from_string("got2(X, Y) <- b(X, Y).\nhit(X, Y) <- d(X, Y).\n")
    assert engine.columnar()
    first = items_packed([("b", ("x", 1), 1), ("b", ("y", 2.5), 2)], 1, {}, [])
    second = items_packed([("d", ("w", "x"), 3), ("b", ("y", -3), 4), ("b", ("it's", [1]), 5)], 1, {}, [])
    joined = Packed.joined([first, second])
    assert (joined.heads, joined.codes.tolist()) == (["(b)/2", "(d)/2"], [0, 0, 1, 0, 0])
    assert joined.columns[0].table == ["x", "y", "w", "'it\\'s'"]
    assert engine.feed_packed(joined.rows(np.array([0, 2, 4]))).detection_lines.splitlines() == [
        '{"event": "got2", "args": ["x", 1], "start": 1, "end": 1}',
        '{"event": "hit", "args": ["w", "x"], "start": 3, "end": 3}',
        '{"event": "got2", "args": ["it\'s", [1]], "start": 5, "end": 5}']
    results = engine.feed_packed_segments(joined.rows(np.array([1, 3])), [True, True], [1, 1])
    assert [r.detection_lines for r in results] == [
        '{"event": "got2", "args": ["y", 2.5], "start": 2, "end": 2}\n',
        '{"event": "got2", "args": ["y", -3], "start": 4, "end": 4}\n']
