"""Bad event input is rejected row by row: tests/rows_bad/ holds one small
file per kind of bad row and format, each with clean rows around the bad
one, and expected.json says what `etalis run` must detect and reject in
each (see tests/rows_bad/make_corpus.py).  The same bad rows as Python
values go through Engine.emit_many."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from etalis_py import Engine, Event, cli
from etalis_py.errors import EventError
from etalis_py.events import Rejection

CORPUS = Path(__file__).parent / "rows_bad"
MANIFEST = json.loads((CORPUS / "expected.json").read_text())
RULES = CORPUS / MANIFEST["rules"]
NOT_A_NAME: Any = 7     # an Event of a name that is no text, as an untyped caller can make
BOM = b"\xef\xbb\xbf"


@pytest.fixture(autouse=True, params=["columns", "text"])
def hand_over(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with events crossing into Prolog as packed columns
    (see etalis_py.bridge.columns) and as text: the same rejections both ways."""
    if request.param == "text":
        monkeypatch.setenv("ETALIS_TEXT_PATH", "1")
    else:
        monkeypatch.delenv("ETALIS_TEXT_PATH", raising=False)
    return str(request.param)


def summary(accepted: int, rejected: int, detections: int) -> str:
    return (f"events read: {accepted + rejected}, accepted: {accepted}, rejected: {rejected}, "
            f"detections: {detections}, warnings: 0,")


def run_reason(reason: str) -> str:
    """The reason as etalis run says it: out of time order, with what --lateness does."""
    order = "(events must arrive in time order)"
    return reason.replace(order, order[:-1] + "; --lateness SECONDS accepts events up to that late)")


@pytest.mark.parametrize("name", sorted(MANIFEST["files"]))
def test_run_rejects_the_bad_row_and_reads_the_rows_around_it(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    expected = MANIFEST["files"][name]
    path = CORPUS / name
    options = MANIFEST["csv_options"] if path.suffix == ".csv" else []
    code = cli.main(["run", str(RULES), "--events", str(path), *options])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_OK, err
    assert [json.loads(line) for line in out.splitlines()] == expected["detections"]
    *rejections, last = err.splitlines()
    assert rejections == [f"{path}:{line}: rejected: {run_reason(reason)}" for line, reason in expected["rejected"]]
    assert last.startswith(summary(expected["accepted"], len(expected["rejected"]), len(expected["detections"])))


def test_the_corpus_has_every_case_in_every_format() -> None:
    kinds: dict[str, list[str]] = {}
    for name in MANIFEST["files"]:
        kinds.setdefault(name.rsplit(".", 1)[1], []).append(name)
    assert len(MANIFEST["files"]) >= 30
    assert {"not_utf8.events", "bom.events", "variable.events", "single_quote.events", "clause.events",
            "directive.events", "deep.events", "nan_time.events", "huge_float.events"} <= set(kinds["events"])
    assert {"end_of_file.pl", "variable.pl"} <= set(kinds["pl"])
    assert {"not_utf8.jsonl", "bom.jsonl", "deep.jsonl", "nan_arg.jsonl", "huge_float.jsonl",
            "too_many_digits.jsonl", "time_text.jsonl", "args_not_list.jsonl", "name_not_text.jsonl"} <= set(kinds["jsonl"])
    assert {"not_utf8.csv", "bom.csv", "nan.csv", "huge.csv", "time_text.csv"} <= set(kinds["csv"])


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


class Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


# the Python equivalents of the corpus: (bad item, reason)
BAD_ITEMS: dict[str, tuple[Any, str]] = {
    "nan time": (("a", [1], math.nan), "time nan is not finite"),
    "infinite time": (("a", [1], math.inf), "time inf is not finite"),
    "nan argument": (("a", [math.nan], 2), "argument nan is not a finite number (NaN, infinite, or too large)"),
    "infinite argument": (("a", [-math.inf], 2), "argument -inf is not a finite number (NaN, infinite, or too large)"),
    "too deep": (("a", [nested(10_000)], 2), "an argument is nested deeper than 100 levels"),
    "too many digits": (("a", [10 ** 5000], 2), "Exceeds the limit (4300 digits) for integer string conversion"),
    "name not text": ((1, [1], 2), "event name 1 is not a non-empty string"),
    "empty name": (("", [1], 2), "event name '' is not a non-empty string"),
    "args not a list": (("a", 1, 2), "args 1 is not a list"),
    "time text": (("a", [1], "soon"), "time 'soon' is not a number or an ISO 8601 date"),
    "time missing": (("a", [1], None), "time None is not a number, an ISO 8601 text or a datetime"),
    "lone surrogate": (("a", ["\udce9"], 2), "text '\\udce9' holds a lone surrogate (U+DCE9), which is not a character"),
    "lone surrogate name": (("a\udce9", [1], 2), "text 'a\\udce9' holds a lone surrogate (U+DCE9), which is not a character"),
    "unknown type": (("a", [Opaque()], 2), "argument <opaque> of type Opaque cannot be an event argument"),
    "missing argument": (("a", [None], 2), "an argument is missing (None)"),
    "not an event": ("a(1)", "'a(1)' is not an event: give an Event, a dict with event/args/time, "
                     "or a tuple (name, args, time) or (name, args, start, end)"),
    "dict without time": ({"event": "a", "args": [1]}, 'missing "time" (or "start" and "end")'),
    "Event with a bad name": (Event(NOT_A_NAME, (1,), 2, 2), "event name 7 is not a non-empty string"),
    "clause name": ((":-", ["a", "b"], 2), "a:-b is a Prolog clause or directive, not an event"),
    "reserved name": (("$a", [1], 2), "event names starting with $ are reserved ('$a')"),
    "out of order": (("a", [1], 0), "time 0 is earlier than the last accepted time 1 (events must arrive in time order)"),
}


@pytest.mark.parametrize("case", sorted(BAD_ITEMS))
def test_emit_many_rejects_the_bad_item_and_processes_the_others(case: str) -> None:
    bad, reason = BAD_ITEMS[case]
    with Engine.from_file(RULES) as engine:
        result = engine.emit_many([("a", [1], 1), bad, ("b", [1], 3), ("a", [2], 4), ("b", [2], 5)])
    assert [(d.event, d.args, d.start, d.end) for d in result.detections] == [("c", (1,), 1, 3), ("c", (2,), 4, 5)]
    assert result.accepted == 4
    assert result.rejected == [Rejection(2, reason)]


def test_emit_many_keeps_every_good_item_of_a_batch_with_bad_ones() -> None:
    items: list[Any] = []
    for i, (bad, _) in enumerate(BAD_ITEMS.values()):
        items += [("a", [i], 10 * i + 1), bad, ("b", [i], 10 * i + 2)]
    with Engine.from_file(RULES) as engine:
        result = engine.emit_many(items, batch_size=7)
    n = len(BAD_ITEMS)
    assert result.accepted == 2 * n
    assert [r.line for r in result.rejected] == [3 * i + 2 for i in range(n)]
    assert [(d.args, d.start, d.end) for d in result.detections] == [((i,), 10 * i + 1, 10 * i + 2) for i in range(n)]


def test_standard_input_rejects_a_line_that_is_not_utf8_and_reads_on(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    data = (CORPUS / "not_utf8.jsonl").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(BOM + data)))
    assert cli.main(["run", str(RULES), "--events", "-"]) == cli.EXIT_OK
    out, err = capsys.readouterr()
    assert [json.loads(line) for line in out.splitlines()] == MANIFEST["files"]["not_utf8.jsonl"]["detections"]
    assert err.splitlines()[0] == "<stdin>:2: rejected: line is not UTF-8: byte 0xe9 at column 26"
    assert err.splitlines()[1].startswith(summary(4, 1, 2))


@pytest.mark.parametrize("case", ["nan argument", "too deep", "too many digits", "lone surrogate", "clause name"])
def test_emit_raises_event_error_with_the_reason_emit_many_gives(case: str) -> None:
    (name, args, time), reason = BAD_ITEMS[case]
    with Engine.from_file(RULES) as engine:
        with pytest.raises(EventError) as e:
            engine.emit(name, *args, at=time)
        assert engine.emit("a", 1, at=3) == []
    prefix = f"event {name!r} rejected: " if case == "clause name" else f"event {name!r}: "
    assert str(e.value) == prefix + reason
