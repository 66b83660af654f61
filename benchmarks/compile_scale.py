"""Compile time against the size of the rule set, for the shapes that a naive
compiler makes quadratic (or worse): one long pattern, and many rules that build on each other.

Each row compiles one generated rule text into a fresh engine
(Engine.from_string: reading, binarizing, the recursion check, generating the
clauses and loading them) and prints the CPU seconds, the cost per operand or
rule, and that cost relative to the smallest size of the same shape (about 1
when compiling is linear).  Shapes:

  seq      c <- a0 seq a1 seq ... seq aN.           (one rule, an N-deep term)
  or       c(X) <- a0(X) or a1(X) or ... or aN(X).
  and      c <- a0 and a1 and ... and aN.
  left     e1 <- a0 seq a1.  ek <- e(k-1) seq ak.   (each rule uses the last head, on the left)
  right    ek(X) <- ak(X) seq e(k-1)(X).            (on the right, with a shared variable)
  fan      fk <- x seq bk.                          (many rules use one event)
  shared   gk <- (x seq y) seq bk.                  (many rules share a sub-pattern)

    .venv/bin/python benchmarks/compile_scale.py [--shapes seq,left] [--sizes 500,1000]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from etalis_py import Engine  # noqa: E402


def seq(n: int) -> str:
    return "c <- " + " seq ".join(f"a{i}" for i in range(n)) + ".\n"


def or_(n: int) -> str:
    return "c(X) <- " + " or ".join(f"a{i}(X)" for i in range(n)) + ".\n"


def and_(n: int) -> str:
    return "c <- " + " and ".join(f"a{i}" for i in range(n)) + ".\n"


def left(n: int) -> str:
    return "e1 <- a0 seq a1.\n" + "".join(f"e{k} <- e{k - 1} seq a{k}.\n" for k in range(2, n + 1))


def right(n: int) -> str:
    return "e1(X) <- a0(X) seq a1(X).\n" + "".join(f"e{k}(X) <- a{k}(X) seq e{k - 1}(X).\n" for k in range(2, n + 1))


def fan(n: int) -> str:
    return "".join(f"f{k} <- x seq b{k}.\n" for k in range(n))


def shared(n: int) -> str:
    return "".join(f"g{k} <- (x seq y) seq b{k}.\n" for k in range(n))


SHAPES: dict[str, tuple[str, Callable[[int], str], list[int]]] = {
    "seq": ("operands", seq, [500, 1000, 2000, 10_000]),
    "or": ("operands", or_, [500, 1000, 2000, 10_000]),
    "and": ("operands", and_, [500, 1000, 2000, 10_000]),
    "left": ("rules", left, [200, 1000, 5000, 10_000]),
    "right": ("rules", right, [200, 1000, 5000, 10_000]),
    "fan": ("rules", fan, [200, 1000, 5000, 10_000]),
    "shared": ("rules", shared, [200, 1000, 5000, 10_000]),
}


def compile_seconds(text: str) -> tuple[float, int]:
    """CPU seconds to compile ``text`` into an engine, and its number of binary goals."""
    started = time.process_time()
    engine = Engine.from_string(text)
    seconds = time.process_time() - started
    goals = engine.goal_count
    engine.close()
    return seconds, goals


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument("--sizes", help="comma-separated sizes for every shape (default: each shape's own)")
    ns = p.parse_args()
    compile_seconds(seq(10))                    # start Prolog before the first row
    print("| shape | items | size | binary goals | CPU s | µs per item | per item / smallest |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for shape in ns.shapes.split(","):
        unit, make, sizes = SHAPES[shape]
        if ns.sizes:
            sizes = [int(s) for s in ns.sizes.split(",")]
        base = None
        for n in sizes:
            seconds, goals = compile_seconds(make(n))
            per_item = seconds / n * 1e6
            base = base or per_item
            print(f"| {shape} | {unit} | {n:,} | {goals:,} | {seconds:.2f} | {per_item:.0f} | {per_item / base:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
