"""The C reader of JSON line blocks (etalis_py.inputs.native) against the
general way (pyarrow's reader, Python's json): on random blocks with nasty
lines, each block it takes gives the very batch the general way gives,
every value the one ``json.loads`` gives; and ``etalis run`` detects the
same on a file either way."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

from etalis_py.bridge.columns import FLOAT, INT, TABLE, Cells, Packed
from etalis_py.cli import main
from etalis_py.events import prolog_value
from etalis_py.inputs import jsonl
from etalis_py.inputs.jsonl import _bulk_block
from etalis_py.inputs import native
from etalis_py.inputs.native import BlockReader
from etalis_py.inputs.registry import Reading
from etalis_py.errors import Rejection

READER = BlockReader.load()


def reader() -> BlockReader:
    assert READER is not None, "the C reader could not be built"
    return READER


NAMES = ["a", "b", "ev_1", "Big", "x y", "it's", "del\x7f", "", "é", "a\\\"b", "tab\\t", "\\u00e9", "\\ud800"]
TEXTS = ["k1", "k2", "hello world", "", "Q", "'q'", "\x7f", "é", "\\n", "\\u0041", "\\udce9", "\\\\"]
CLEAN = 7       # the names and texts before it are ASCII without escapes
NUMBERS = ["0", "-0", "1", "-17", "9223372036854775807", "-9223372036854775808", "5.0", "-0.0", "0.0", "1e2", "1E-5",
           "2.5e+3", "1e-400", "0.1e1", "0.30000000000000004", "0.5700000000000001", "4.9e-324",
           "1.7976931348623157e308", "9007199254740993", "9007199254740993.0", "123456789012345678.5",
           # not the C reader's
           "9223372036854775808", "-9223372036854775809", "123456789012345678901234567890", "1e400", "-1e400",
           "1." + "0" * 70, "01", "1.", ".5", "+1", "-", "1e", "NaN", "Infinity", "0x10", "1_000"]
VALID = 21      # the numbers before it are the C reader's
NASTY = ["", "   ", "\t", "[1]", "\"a\"", "{}", "null", "{\"event\": \"a\"", "not json",
         "{\"event\": \"a\", \"args\": [1], \"time\": 1, \"extra\": 2}",
         "{\"event\": \"a\", \"args\": [1], \"time\": 1, \"time\": 2}",
         "{\"event\": \"a\", \"args\": [true], \"time\": 1}", "{\"event\": \"a\", \"args\": [null], \"time\": 1}",
         "{\"event\": \"a\", \"args\": [[1, 2]], \"time\": 1}", "{\"event\": \"a\", \"args\": [1], \"time\": null}",
         "{\"event\": 3, \"args\": [1], \"time\": 1}", "{\"event\": \"a\", \"args\": [1], \"time\": \"5\"}",
         "{\"event\": \"a\", \"args\": 1, \"time\": 1}", "{\"event\": \"a\", \"args\": [1], \"time\": 1} x",
         "{\"event\": \"a\",\r\"args\": [1], \"time\": 1}", "{\"start\": 1, \"end\": 2, \"event\": \"a\"}"]


def random_number(rng: random.Random, kind: str, clean: bool) -> str:
    if rng.random() < 0.1:
        if not clean:
            return rng.choice(NUMBERS)
        return rng.choice([n for n in NUMBERS[:VALID] if kind != "int" or n.lstrip("-").isdigit()])
    if kind == "int" or (kind == "mixed" and rng.random() < 0.5):
        return str(rng.choice([rng.randrange(-100, 100), rng.randrange(-(1 << 63), 1 << 63)]))
    x = rng.choice([rng.uniform(-1e6, 1e6), rng.randrange(-50, 50) * 1.0, rng.random() * 10 ** rng.randrange(-300, 300),
                    rng.randrange(1000) * 0.01])
    text = repr(x)
    return text.upper() if rng.random() < 0.1 else text


def random_line(rng: random.Random, arity: Optional[int], kinds: list[str], time_kind: str, clean: bool) -> str:
    names, texts = (NAMES[:CLEAN], TEXTS[:CLEAN]) if clean else (NAMES, TEXTS)
    name = '"' + (rng.choice(names) if rng.random() < 0.05 else rng.choice(NAMES[:4])) + '"'
    fields = [("event", name), ("time", random_number(rng, time_kind, clean))]
    if arity is not None:
        fields.append(("args", "[" + ", ".join('"' + rng.choice(texts) + '"' if k == "text" else
                                              random_number(rng, k, clean) for k in kinds) + "]"))
    rng.shuffle(fields)
    space = rng.choice(["", " ", "  ", "\t"]) if rng.random() < 0.2 else " "
    line = "{" + f",{space}".join(f'"{k}":{space}{v}' for k, v in fields) + "}"
    if rng.random() < 0.05:
        line = rng.choice([" ", "\t"]) + line + rng.choice([" ", "\t", ""])
    return line


def random_block(rng: random.Random, clean: bool) -> bytes:
    """A block of lines; a ``clean`` one is all of the C reader's shape:
    numbers that are int64s or doubles, ASCII names and texts without
    escapes, arguments all texts or all numbers, and without ``args`` no
    float times (which the general way reads again as objects)."""
    arity = rng.choice([None, 0, 1, 1, 2, 3, 6])
    kind = rng.choice(["int", "float", "mixed", "text"])
    kinds = [kind if clean else rng.choice(["int", "float", "mixed", "text"]) for _ in range(arity or 0)]
    if clean and kind != "text":
        kinds = [rng.choice(["int", "float", "mixed"]) for _ in kinds]
    time_kind = "int" if clean and arity is None else rng.choice(["int", "float", "mixed"])
    nasty = 0.0 if clean else rng.choice([0.0, 0.02, 0.2])
    lines = []
    for _ in range(rng.randrange(1, 30)):
        if rng.random() < nasty:
            lines.append(rng.choice(NASTY + [random_line(rng, rng.choice([None, 2]), ["int", "int"], "int", clean)]))
        else:
            lines.append(random_line(rng, arity, kinds, time_kind, clean))
    data = ("\r\n" if rng.random() < 0.1 else "\n").join(lines).encode()
    if rng.random() < nasty:
        at = rng.randrange(len(data) + 1)
        data = data[:at] + rng.choice([b"\xff", b"\xc3", b"\x00", b"\xef\xbb\xbf", "é".encode(), b"\r"]) + data[at:]
    return data if rng.random() < 0.2 else data + b"\n"


def same_packed(a: Packed, b: Packed) -> None:
    assert a.codes.dtype == b.codes.dtype == np.int32 and a.codes.tolist() == b.codes.tolist()
    assert a.heads == b.heads
    assert len(a.columns) == len(b.columns)
    for x, y in zip(a.columns, b.columns):
        assert x.values.dtype == y.values.dtype and x.values.tobytes() == y.values.tobytes()
        assert isinstance(x.tags, int) == isinstance(y.tags, int)
        if isinstance(x.tags, int) or isinstance(y.tags, int):
            assert x.tags == y.tags
        else:
            assert x.tags.tobytes() == y.tags.tobytes()
        assert x.table == y.table
    assert (a.interval, a.points, b.interval, b.points) == (False, None, False, None)


def cell(column: Cells, row: int) -> Any:
    tag = column.tags if isinstance(column.tags, int) else int(column.tags[row])
    raw = column.values.view(np.int64)[row]
    if tag == INT:
        return int(raw)
    if tag == FLOAT:
        return float(raw.view(np.float64))
    assert tag == TABLE
    return column.table[int(raw)]


def test_random_blocks_give_the_general_ways_batch() -> None:
    assert random_blocks(random.Random(7), 1000) >= 500


def random_blocks(rng: random.Random, cases: int) -> int:
    """Compares the two ways on ``cases`` random blocks, half of them
    clean (which the C reader must take); the number it took."""
    taken = 0
    for case in range(cases):
        clean = case % 2 == 0
        data = random_block(rng, clean)
        names: dict[str, str] = {"b": "b"}
        general_names = dict(names)
        packed = reader().jsonl(data, names)
        general = _bulk_block(data, 1, general_names)
        assert packed is not None or not clean, data
        if packed is None:
            continue
        taken += 1
        assert general is not None and general.packed is not None and general.rejected == []
        same_packed(packed, general.packed)
        assert names == general_names
        lines = data.decode("ascii").split("\n")
        assert len(lines) - (lines[-1] == "") == len(packed)
        for row, line in enumerate(lines[:len(packed)]):
            item = json.loads(line)
            values = [*item.get("args", []), item["time"]]
            assert packed.heads[packed.codes[row]] == f"({prolog_value(item['event'])})/{len(values) - 1}"
            for value, column in zip(values, packed.columns):
                mine = cell(column, row)
                if isinstance(value, str):
                    assert mine == prolog_value(value)
                else:
                    assert type(mine) is type(value) and mine == value
                    assert not isinstance(value, float) or math.copysign(1, value) == math.copysign(1, mine)
    return taken


def test_a_block_that_starts_with_null_is_read_line_by_line() -> None:
    # pyarrow's JSON reader crashes on it
    data = b'null\n{"event": "a", "args": [1], "time": 2}\n'
    assert _bulk_block(data, 1, {}) is None
    batch, = jsonl.read_jsonl([data], None, Reading(packed=True, batch_lines=10))
    assert batch.rejected == [Rejection(1, "null is not a JSON object")]
    assert batch.packed is not None and batch.packed.codes.tolist() == [-1, 0]


@pytest.mark.parametrize("line, mine", [
    ('{"event": "a", "args": [1, 7.25, 2.5], "time": 3}', True),
    ('{"event": "a", "args": ["k", "it\'s"], "time": 3}', True),
    ('{"event": "a", "args": [1, "k"], "time": 3}', False),
    ('{"time": 1e2, "args": [-0.0], "event": "a"}', True),
    ('{"event": "a", "time": 9223372036854775807}', True),
    ('{"event": "a", "args": [], "time": 0.1}\r', True),
    ('{"event": "a", "args": [1], "time": 9223372036854775808}', False),
    ('{"event": "a", "args": [1e400], "time": 1}', False),
    ('{"event": "a", "args": ["\\u0041"], "time": 1}', False),
    ('{"event": "é", "args": [1], "time": 1}', False),
    ('{"event": "a", "args": [true], "time": 1}', False),
    ('{"event": "", "args": [1], "time": 1}', False),
    ('{"event": "a", "args": [1], "time": 1, "x": 1}', False),
    ('', False),
])
def test_which_lines_the_c_reader_takes(line: str, mine: bool) -> None:
    data = f"{line}\n".encode()
    packed = reader().jsonl(data, {})
    assert (packed is not None) == mine
    if packed is not None:
        general = _bulk_block(data, 1, {})
        assert general is not None and general.packed is not None
        same_packed(packed, general.packed)


def test_many_arguments_are_read_with_room_made_for_them() -> None:
    data = b"".join(b'{"event": "w", "args": [%s], "time": %d}\n' % (b", ".join(b"%d" % (i * j) for j in range(9)), i)
                    for i in range(5))
    packed = reader().jsonl(data, {})
    assert packed is not None and packed.heads == ["(w)/9"]
    assert [c.values.tolist() for c in packed.columns] == [[i * j for i in range(5)] for j in range(9)] + [
        list(range(5))]


STREAM = "".join(json.dumps({"event": "ab"[i % 2], "args": [i % 3], "time": i * 0.5}) + "\n" for i in range(12))
STREAM = STREAM.replace('"args": [1]', '"args": [1.0]', 1)


def blocks_taken(monkeypatch: pytest.MonkeyPatch, way: str, reader: str) -> list[bool]:
    """Whether the C reader's method ``reader`` took each block, as it is
    asked (way ``c``); way ``general``: no C reader (nothing is asked)."""
    taken: list[bool] = []
    if way == "general":
        monkeypatch.setattr(BlockReader, "load", staticmethod(lambda: None))
        return taken
    read = getattr(BlockReader, reader)

    def spied(self: BlockReader, *args: Any) -> Optional[Packed]:
        packed: Optional[Packed] = read(self, *args)
        taken.append(packed is not None)
        return packed

    monkeypatch.setattr(BlockReader, reader, spied)
    return taken


DETECTED = "".join(f'{{"event": "c", "args": [{x}], "start": {s}, "end": {e}}}\n' for x, s, e in [
    (0, 0.0, 1.5), (2, 1.0, 2.5), (1, 2.0, 3.5), (0, 0.0, 4.5), (0, 3.0, 4.5), (2, 1.0, 5.5), (2, 4.0, 5.5)])
"""What ``c(X) <- a(X) seq b(X) within 10`` detects in the twelve events of STREAM (and of the CSV tests')."""


def run_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str, reader: str, stream: str, suffix: str,
                   *options: str) -> str:
    """What ``etalis run`` writes for the file ``stream`` (of ``suffix``),
    its one block read by the C reader's method ``reader`` (way ``c``,
    which must take it) or without the C reader (way ``general``)."""
    taken = blocks_taken(monkeypatch, way, reader)
    rules, events, out = tmp_path / "r.etl", tmp_path / f"s{suffix}", tmp_path / "out.jsonl"
    rules.write_text("c(X) <- a(X) seq b(X) within 10.\n")
    events.write_text(stream)
    assert main(["run", str(rules), str(events), *options, "--out", str(out), "--quiet"]) == 0
    assert taken == ([True] if way == "c" else [])
    return out.read_text()


@pytest.mark.parametrize("way", ["c", "general"])
def test_etalis_run_detects_the_same_either_way(tmp_path: Path, way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # b(1.0) at 0.5 matches no a(1): a float is no int
    assert run_either_way(tmp_path, monkeypatch, way, "jsonl", STREAM, ".jsonl") == DETECTED


def test_without_a_compiler_blocks_are_read_the_general_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "etalis_read.c"
    source.write_bytes(native.SOURCE.read_bytes())
    monkeypatch.setattr(native, "SOURCE", source)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    assert BlockReader.load() is None
    batch, = jsonl.read_jsonl([b'{"event": "a", "args": [1], "time": 2}\n'], None, Reading(packed=True))
    assert batch.packed is not None and batch.packed.heads == ["(a)/1"]
    assert [c.values.tolist() for c in batch.packed.columns] == [[1], [2]]
