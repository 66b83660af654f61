"""Shared helpers: run rules over a stream and get detections as tuples."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Optional

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from etalis_py import Engine
from etalis_py.bridge._prolog import PrologBridge

Row = tuple[Any, ...]

# Tests run the command line in subprocesses from other folders: a relative
# PYTHONPATH (``PYTHONPATH=src pytest`` in a worktree) would there name
# nothing and quietly load another installed copy of the package.
if os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        os.path.abspath(p) for p in os.environ["PYTHONPATH"].split(os.pathsep) if p
    )


def detect(rules: str, events: Iterable[Sequence[Any]], policy: Optional[str] = None) -> list[Row]:
    """Detections as (event, args, start, end), in the order they were made.

    ``events`` are (name, args, time) or (name, args, start, end).
    """
    with Engine.from_string(rules, policy=policy) as engine:
        result = engine.emit_many(events)
        assert result.rejected == [], result.rejected
        return [(d.event, d.args, d.start, d.end) for d in result.detections]


def points(spec: str) -> list[tuple[str, tuple[Any, ...], int]]:
    """'a b a' -> [('a', (), 1), ('b', (), 2), ('a', (), 3)]: atomic events at
    their 1-based position."""
    return [(name, (), i) for i, name in enumerate(spec.split(), start=1)]


@pytest.fixture
def run() -> Any:
    return detect


class DataChoices:
    """Choices drawn by hypothesis, which shrinks them towards 0 (simpler)."""

    def __init__(self, data: st.DataObject) -> None:
        self._data = data

    def integer(self, low: int, high: int) -> int:
        return self._data.draw(st.integers(low, high))


def examples(n: int) -> settings:
    """n examples, no deadline (a case takes milliseconds to a second)."""
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kinds of request (``create``, ``rules``, ``feed``, ...) that this
    process sends the engine from here on, in order."""
    kinds: list[str] = []
    request = PrologBridge.request

    def recorded(self: PrologBridge, text: str, payload: str = "") -> tuple[dict[str, Any], str]:
        kinds.append(text.partition("(")[0])
        return request(self, text, payload)

    monkeypatch.setattr(PrologBridge, "request", recorded)
    return kinds
