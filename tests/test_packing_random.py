"""emit_many's items packed column by column (the fast way for tuples of
one shape) give exactly the events and rejections that packing them item
by item gives, on random batches with nasty values: escapes, unicode, lone
surrogates, huge ints, whole-number and negative-zero floats, exponents,
NaN and infinities, bools, None, nested lists, str subclasses, items of
other shapes; and a DataFrame's good rows give what they give alone."""

from __future__ import annotations

import random
from typing import Any, Optional

import numpy as np
import pandas as pd

from etalis_py.bridge.columns import Cells, Packed, items_packed, rows_packed
from etalis_py.errors import Rejection
from etalis_py.inputs.frames import frame_terms


class Text(str):
    """A str subclass: a name of it is no plain name."""


NAMES: list[Any] = ["a", "b", "c_d", "é", "日本", "it's", "a b", "\\", "\udce9", "", "A", Text("a"), 1, None]
VALUES: list[Any] = [0, 1, -1, 7, 2**62, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 10**30, 0.0, -0.0, 1.0, 2.5, -3.25,
                     1e300, 1e-300, 1.5e22, 123456789012345678.0, float("inf"), float("-inf"), float("nan"), True,
                     False, "x", "", "it's", 'q"uote', "back\\slash", "new\nline", "tab\t", "é", "日本語", "\udce9",
                     "1", "1.0", "-0.0", "1e5", "[]", None, [], [1, "x"], [[2.5, [-0.0]]], (1, 2), {"k": 1},
                     np.int64(5), np.float64(0.5)]
TIMES: list[Any] = [0, 1, 5, 2**63, 10**400, 0.5, -0.0, 1e9, 3.0, float("inf"), float("nan"), True, None, "7",
                    "2010-12-26T20:51:00Z", np.float64(2.0)]


def random_items(rng: random.Random) -> list[Any]:
    """A batch: mostly plain tuples of one name pool, arity and time kind,
    each part now and then replaced by a nasty one."""
    n = rng.choice([1, 2, 5, 30])
    names = rng.sample(NAMES[:6], rng.randint(1, 3))
    arity = rng.choice([0, 1, 2, 3])
    kinds: list[type] = rng.choice([[int], [float], [int, float]])
    nasty = rng.choice([0.0, 0.02, 0.1, 0.3])
    values = rng.sample(VALUES, rng.randint(1, 6))

    def value() -> Any:
        return rng.choice(VALUES if rng.random() < nasty else values)

    items: list[Any] = []
    for i in range(n):
        name = rng.choice(NAMES) if rng.random() < nasty else rng.choice(names)
        args: Any = tuple(value() for _ in range(arity))
        if rng.random() < nasty:
            args = rng.choice([list(args), args + (1,), args[:-1], "args", None])
        time: Any = rng.choice(kinds)(i)
        if rng.random() < nasty:
            time = rng.choice(TIMES)
        item: Any = (name, args, time)
        if rng.random() < nasty / 2:
            item = rng.choice([[name, args, time], (name, args, time, time), {"event": name, "args": args, "time": time},
                               (name, args), "item"])
        items.append(item)
    return items


def cell(c: Cells, i: int) -> tuple[str, Any]:
    """Row i of a column: its tag and value (a float's repr keeps -0.0)."""
    tag = c.tags if isinstance(c.tags, int) else int(c.tags[i])
    bits = c.values[i:i + 1]
    if tag == 0:
        return "int", int(bits.view(np.int64)[0])
    if tag == 1:
        return "float", repr(float(bits.view(np.float64)[0]))
    return "text", c.table[int(bits.view(np.int64)[0])]


def events(packed: Packed) -> list[Optional[tuple[Any, ...]]]:
    """Each row's event (its head, arguments and time), None for no event."""
    out: list[Optional[tuple[Any, ...]]] = []
    for i, code in enumerate(packed.codes.tolist()):
        if code < 0:
            out.append(None)
            continue
        head = packed.heads[code]
        arity = int(head.rsplit("/", 1)[1])
        args = tuple(cell(c, i) for c in packed.columns[:arity])
        if packed.points is None and not packed.interval:
            when: tuple[Any, ...] = ("point", cell(packed.columns[-1], i))
        elif packed.points is not None and not packed.points[i]:
            when = ("point", cell(packed.columns[-2], i))
        else:
            when = ("interval", cell(packed.columns[-2], i), cell(packed.columns[-1], i))
        out.append((head, args, when))
    return out


def test_packing_by_columns_gives_what_packing_item_by_item_gives() -> None:
    rng = random.Random(20261206)
    fast = 0
    for _ in range(3000):
        items = random_items(rng)
        first = rng.randint(1, 10**6)
        names: dict[str, str] = {}
        rejected: list[Rejection] = []
        packed = items_packed(items, first, names, rejected)
        slow_names: dict[str, str] = {}
        slow_rejected: list[Rejection] = []
        slow = rows_packed(items, first, slow_names, slow_rejected)
        assert events(packed) == events(slow), items
        assert rejected == slow_rejected, items
        assert names == slow_names, items
        fast += packed.points is None
    assert fast > 1000      # the fast way was taken, not only the slow one


def random_frame(rng: random.Random, rows: int) -> tuple[pd.DataFrame, list[str]]:
    """A frame of a name, two argument and a time column of random types,
    now and then with missing or impossible values; its argument columns."""
    nasty = rng.choice([0.0, 0.1, 0.4])

    def spoiled(values: list[Any], bad: list[Any]) -> list[Any]:
        return [rng.choice(bad) if rng.random() < nasty else v for v in values]

    names = spoiled([rng.choice(["a", "b", "é d"]) for _ in range(rows)], [None, "", "\udce9", 3])
    ints = [rng.randint(-2**63, 2**63 - 1) for _ in range(rows)]
    floats = [rng.choice([0.5, -0.0, 1e300, 3.0, 1.5e-7]) for _ in range(rows)]
    kinds = {
        "int64": lambda: pd.Series(ints, dtype="int64"),
        "Int64": lambda: pd.Series(spoiled(ints, [None]), dtype="Int64"),
        "float": lambda: pd.Series(spoiled(floats, [float("nan"), float("inf")]), dtype="float64"),
        "bool": lambda: pd.Series(spoiled([rng.random() < 0.5 for _ in range(rows)], [None]), dtype="boolean"),
        "object": lambda: pd.Series(spoiled([rng.choice(["x", 1, 2.5, "it's", [1, "y"]]) for _ in range(rows)],
                                            [None, float("nan"), {"k": 1}]), dtype=object),
        "category": lambda: pd.Series(spoiled([rng.choice(["u", "v", "w"]) for _ in range(rows)], [None]),
                                      dtype="category"),
        "datetime": lambda: pd.Series(spoiled([pd.Timestamp(1_293_000_000 + i, unit="s") for i in range(rows)],
                                              [pd.NaT])),
    }
    times = {
        "int": lambda: pd.Series(range(rows), dtype="int64"),
        "float": lambda: pd.Series(spoiled([i + 0.25 for i in range(rows)], [float("nan"), float("-inf")])),
        "text": lambda: pd.Series(spoiled([f"2010-12-26T20:{i % 60:02d}:00Z" for i in range(rows)], [None, "soon"])),
        "datetime": kinds["datetime"],
    }
    columns = {"name": pd.Series(names, dtype=object), "x0": kinds[rng.choice(list(kinds))](),
               "x1": kinds[rng.choice(list(kinds))](), "t": times[rng.choice(list(times))]()}
    return pd.DataFrame(columns), ["x0", "x1"][:rng.randint(0, 2)]


def test_a_frame_gives_for_its_good_rows_what_the_good_rows_alone_give() -> None:
    """A column with no missing or impossible value skips the reasons: the
    rows of a frame with bad rows give what those rows alone give, and
    each row what it gives alone."""
    rng = random.Random(61206)
    clean = 0
    for _ in range(120):
        frame, args = random_frame(rng, rng.choice([1, 3, 8]))
        for packed in (False, True):
            options: dict[str, Any] = dict(event=None, event_col="name", args=args, time="t", start=None, end=None,
                                           tz=None, packed=packed)
            try:
                terms, rejected = frame_terms(frame, **options)
            except TypeError as e:      # a column that cannot hold times: the same for its good rows
                assert "cannot hold times" in str(e) or "holds booleans" in str(e)
                continue
            bad = {r.line - 1 for r in rejected}
            rows = events(terms) if isinstance(terms, Packed) else terms
            for i in range(len(frame)):     # each row alone: the same term, or the same reason
                alone, alone_rejected = frame_terms(frame.iloc[[i]].reset_index(drop=True), **options)
                assert [r.reason for r in alone_rejected] == [r.reason for r in rejected if r.line == i + 1]
                if i not in bad:
                    assert (events(alone) if isinstance(alone, Packed) else alone) == [rows[i]]
            good = [i for i in range(len(frame)) if i not in bad]
            clean += not bad
            if not good:
                continue
            sub_terms, sub_rejected = frame_terms(frame.iloc[good].reset_index(drop=True), **options)
            assert sub_rejected == []
            if isinstance(terms, Packed):
                assert isinstance(sub_terms, Packed)
                assert [events(terms)[i] for i in good] == events(sub_terms)
            else:
                assert [terms[i] for i in good] == sub_terms
    assert clean > 40
