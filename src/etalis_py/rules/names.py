"""Near names: the events of a rule file whose names differ from a given
one by a slip of the keyboard, for the "did you mean" of ``etalis
check``'s findings."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable

from .analysis import Sig

# two names are near when they differ by at most this many edits and their
# difflib ratio is at least NEAR (smok, smoke: one edit, 0.89)
NEAR = 0.8


def max_distance(name: str) -> int:
    """How many edits two names may differ by and still be near."""
    return 1 if len(name) <= 6 else 2


def deletions(name: str, depth: int) -> set[str]:
    """``name`` with up to ``depth`` characters deleted (itself included)."""
    out = {name}
    frontier = {name}
    for _ in range(depth):
        frontier = {w[:i] + w[i + 1:] for w in frontier for i in range(len(w))}
        out |= frontier
    return out


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (a swap of two neighbours is one edit)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


class NameIndex:
    """The names of a rule file, indexed by their deletion neighbourhoods,
    so that the near names of each are found without comparing all pairs
    (a file of 1,000 generated rules is checked in linear time)."""

    def __init__(self, sigs: Iterable[Sig]) -> None:
        self._by_name: dict[str, list[Sig]] = {}
        for s in sorted(set(sigs)):
            self._by_name.setdefault(s.name, []).append(s)
        self._index: dict[str, set[str]] = {}
        for name in self._by_name:
            for d in deletions(name, max_distance(name)):
                self._index.setdefault(d, set()).add(name)

    def near(self, sig: Sig, allowed: Callable[[Sig], bool] = lambda _: True) -> list[str]:
        """The names near that of ``sig`` (nearest first, at most three
        names), with every arity, among the signatures ``allowed`` admits."""
        found: dict[str, int] = {}
        for d in deletions(sig.name, max_distance(sig.name)):
            for name in self._index.get(d, ()):
                if name != sig.name and name not in found and any(map(allowed, self._by_name[name])):
                    dist = edit_distance(sig.name, name)
                    if (dist <= min(max_distance(sig.name), max_distance(name))
                            and difflib.SequenceMatcher(None, sig.name, name).ratio() >= NEAR):
                        found[name] = dist
        names = sorted(found, key=lambda n: (found[n], n))
        out = [str(c) for n in names for c in self._by_name[n] if allowed(c)]
        return out[:3]
