"""emit_many's items packed column by column (the fast way for tuples of
one shape) give exactly the events and rejections that packing them item
by item gives, on random batches with nasty values: escapes, unicode, lone
surrogates, huge ints, whole-number and negative-zero floats, exponents,
NaN and infinities, bools, None, nested lists, str subclasses, items of
other shapes."""

from __future__ import annotations

import random
from typing import Any, Optional

import numpy as np

from etalis_py.bridge.columns import Cells, Packed, items_packed, rows_packed
from etalis_py.errors import Rejection


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
