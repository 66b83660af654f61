"""The C reader of CSV blocks (etalis_py.inputs.native) against pyarrow's
bulk reader (etalis_py.inputs.delimited): on random plain blocks with
nasty rows, each block it takes gives the very batch the general way
gives; and ``etalis run`` detects the same on a file either way."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from etalis_py.inputs.delimited import _bulk_block
from etalis_py.inputs.mapping import Mapping
from etalis_py.inputs.native import BlockReader
from test_jsonl_native import DETECTED, run_either_way, same_packed

READER = BlockReader.load()

NAMES = ["a", "b", "ev_1", "Big", "it's", "x-y", "123", "a b", " a", "", "é", "\x1f", "a\tb"]
CLEAN_NAMES = 7     # printable ASCII without a blank
NUMERALS = ["0", "-0", "7", "-17", "007", "999999999999999999", "-999999999999999999", "5.0", "-0.0", "0.0",
            "0.30000000000000004", "0.5700000000000001", "123456789012345678.5", "1.5", "2.25",
            # not the C reader's
            "1000000000000000000", "0123.5", "1." + "0" * 70, "1e5", "1E-2", ".5", "5.", "+1", "-", "inf", "nan",
            "abc", " 5", "5 ", "", "1_0", "0x10", "true"]
CLEAN_NUMERALS = 15


def reader() -> BlockReader:
    assert READER is not None, "the C reader could not be built"
    return READER


def random_numeral(rng: random.Random, kind: str, clean: bool) -> str:
    if rng.random() < 0.1:
        return rng.choice(NUMERALS[:CLEAN_NUMERALS] if clean else NUMERALS)
    if kind == "int" or (kind == "mixed" and rng.random() < 0.5):
        return str(rng.choice([rng.randrange(-100, 100), rng.randrange(-10 ** 18 + 1, 10 ** 18)]))
    return repr(rng.choice([rng.uniform(-1e6, 1e6), rng.randrange(-50, 50) * 1.0, rng.randrange(1000) * 0.01]))


def random_case(rng: random.Random, clean: bool) -> tuple[bytes, list[str], Mapping]:
    arity = rng.choice([0, 1, 1, 2, 3])
    header = ["name", "t", *(f"k{j}" for j in range(arity)), *(["extra"] if rng.random() < 0.3 else [])]
    rng.shuffle(header)
    if rng.random() < 0.1:
        header.append("t")      # a second column of that name: the first is the time
    named = rng.random() < 0.8
    mapping = Mapping(event_col="name" if named else None, event=None if named else "const",
                      args=tuple(f"k{j}" for j in range(arity)), time="t")
    kinds = [rng.choice(["int", "float", "mixed"]) for _ in range(arity + 1)]
    nasty = 0.0 if clean else rng.choice([0.0, 0.05, 0.3])
    lines = []
    for _ in range(rng.randrange(1, 30)):
        fields = {"name": rng.choice(NAMES[:CLEAN_NAMES] if clean else NAMES), "extra": "x y,"[:rng.randrange(3)]}
        for j, kind in enumerate(kinds):
            fields["t" if j == arity else f"k{j}"] = random_numeral(rng, kind, clean)
        row = [fields[h] for h in header]
        if rng.random() < nasty:
            row = rng.choice([row[:-1], row + ["1"], [""] * len(row), [], [" "] * len(row)])
        lines.append(",".join(row))
    data = "\n".join(lines).encode()
    return (data if rng.random() < 0.2 else data + b"\n"), header, mapping


def test_random_blocks_give_the_general_ways_batch() -> None:
    rng = random.Random(11)
    taken = 0
    for case in range(1000):
        clean = case % 2 == 0
        data, header, mapping = random_case(rng, clean)
        packed = reader().csv(data, header, mapping)
        assert packed is not None or not clean, (data, header, mapping)
        if packed is None:
            continue
        taken += 1
        general = _bulk_block(data, 1, header, mapping, True)
        assert general.rejected == [] and general.packed is not None and general.terms == len(packed)
        same_packed(packed, general.packed)
    assert taken >= 500


@pytest.mark.parametrize("rows, mine", [
    ("a,1,2.5\nb,-0,-0.0\n", True),
    ("a,007,1\n", True),
    ("a,1,2\nb,1.5,3", True),
    ("a,1e5,2\n", False),
    ("a,1000000000000000000,2\n", False),
    ("a b,1,2\n", False),
    ("a,1\n", False),
    ("a,1,2,3\n", False),
    ("a,1,2\n\n", False),
    (",,\n", False),
])
def test_which_rows_the_c_reader_takes(rows: str, mine: bool) -> None:
    mapping = Mapping(event_col="name", args=("k",), time="t")
    data = rows.encode()
    packed = reader().csv(data, ["name", "k", "t"], mapping)
    assert (packed is not None) == mine
    if packed is not None:
        general = _bulk_block(data, 1, ["name", "k", "t"], mapping, True)
        assert general.packed is not None
        same_packed(packed, general.packed)


STREAM = "name,k,t\n" + "".join(f"{'ab'[i % 2]},{i % 3},{i * 0.5}\n" for i in range(12))


@pytest.mark.parametrize("way", ["c", "general"])
def test_etalis_run_detects_the_same_either_way(tmp_path: Path, way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_either_way(tmp_path, monkeypatch, way, "csv", STREAM, ".csv",
                          "--event-col", "name", "--args", "k", "--time", "t") == DETECTED
