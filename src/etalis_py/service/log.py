"""The numbered detections of a rule set: a bounded buffer that every
subscriber reads at its own position.

Each detection gets the next number when it is made.  A subscriber (a
Server-Sent Events stream, a webhook) keeps only its position, the number
of the last detection it was sent, and reads what follows from the buffer:
the feed only appends, so a slow subscriber never holds it up.  What fell
out of the buffer before a subscriber read it is said (``Missed``), never
skipped in silence.  A detection becomes visible to subscribers only when
it is published, after the checkpoint that holds it is written.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Optional

from ..events import Detection


@dataclass(frozen=True)
class Numbered:
    """A detection with its number in its rule set's log."""

    id: int
    detection: Detection

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, **self.detection.to_dict()}

    @staticmethod
    def from_json(item: dict[str, Any]) -> "Numbered":
        return Numbered(int(item["id"]), Detection.from_dict(item))


@dataclass(frozen=True)
class Missed:
    """Detections ``first`` to ``last`` fell out of the buffer before a
    subscriber at an earlier position read them."""

    first: int
    last: int

    @property
    def count(self) -> int:
        return self.last - self.first + 1

    def to_json(self) -> dict[str, int]:
        return {"first": self.first, "last": self.last, "count": self.count}


class DetectionLog:
    """The last ``capacity`` detections of a rule set, numbered from 1."""

    def __init__(self, capacity: int, next_id: int = 1, kept: Iterable[Numbered] = ()) -> None:
        if capacity < 1:
            raise ValueError(f"the detection buffer must hold at least 1 detection, not {capacity}")
        self._items: deque[Numbered] = deque(kept, maxlen=capacity)
        self._next = next_id
        self._visible = next_id - 1
        self._changed = asyncio.Event()
        """Set at the next change, then replaced (an Event, not a Condition:
        a waiter whose timeout cancels it holds no lock to give back)."""
        self._closed = False
        self._stopping = False

    @property
    def capacity(self) -> int:
        assert self._items.maxlen is not None
        return self._items.maxlen

    @property
    def last_id(self) -> int:
        """The number of the last published detection (0: none yet)."""
        return self._visible

    @property
    def next_id(self) -> int:
        return self._next

    def kept(self) -> list[Numbered]:
        """The buffer, published or not (what a checkpoint keeps)."""
        return list(self._items)

    def append(self, detections: Sequence[Detection]) -> list[Numbered]:
        """Number ``detections`` and keep them, not yet visible."""
        numbered = [Numbered(self._next + i, d) for i, d in enumerate(detections)]
        self._next += len(numbered)
        self._items.extend(numbered)
        return numbered

    async def publish(self) -> None:
        """Make everything appended visible, and wake the subscribers."""
        self._visible = self._next - 1
        self._wake()

    async def close(self) -> None:
        """Wake every subscriber for the last time (the rule set is gone,
        or the server stops)."""
        self._closed = True
        self._wake()

    async def stop_streams(self) -> None:
        """Wake every subscriber to end its stream: the server stops.
        Detections may still be appended and published."""
        self._stopping = True
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def stopping(self) -> bool:
        return self._closed or self._stopping

    def after(self, position: int, limit: Optional[int] = None) -> tuple[Missed | None, list[Numbered]]:
        """What a subscriber that was sent detection ``position`` reads
        next: what it missed (if any fell out of the buffer) and the
        visible detections after it (the first ``limit`` of them)."""
        position = max(0, min(position, self._visible))
        first_kept = self._items[0].id if self._items else self._next
        missed = Missed(position + 1, min(first_kept - 1, self._visible)) if position + 1 < first_kept else None
        if missed is not None and missed.count <= 0:
            missed = None
        # the buffer's numbers are consecutive: slice it by number
        begin, end = max(0, position + 1 - first_kept), max(0, self._visible + 1 - first_kept)
        fresh = list(islice(self._items, begin, end if limit is None else min(end, begin + limit)))
        return missed, fresh

    async def wait(self, position: int, timeout: float) -> None:
        """Wait until a detection after ``position`` is visible, the log is
        closed, or ``timeout`` seconds have passed."""
        if self.stopping or self._visible > position:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)
