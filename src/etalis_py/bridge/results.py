"""What an engine answers: the results of a batch and of a feed request, the
parts of patterns that wait, the counters; detections decoded from their
JSON lines, snapshots joined from their parts; the keys' states that a feed
of them swaps."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ..errors import InferenceLimitError, Rejection
from ..events import Detection
from ..outputs.detections import Detections


MAX_QUEUED = 100_000
"""How many detections the pull queue holds by default before it drops the oldest."""


@dataclass(frozen=True)
class BatchResult:
    """What one batch of events did: how many were accepted, which were
    rejected and why, what was detected, and warnings (e.g. a ``where``
    condition that raised an error)."""

    accepted: int
    rejected: list[Rejection]
    detections: Detections
    warnings: list[Rejection] = field(default_factory=list)


@dataclass(frozen=True)
class FeedResult:
    """A batch of event lines as the engine answered it: the counts and the
    detections as JSON lines, exactly as ``etalis run`` prints them.
    ``stopped`` is set if an event reached a limit of the engine (its
    inferences, the time they allow, its memory): the batch stopped before
    it (the counts and detections are those of the lines before). ``raised`` counts the events that rules
    raised with ETALIS's ``event/1`` (fed after the event that raised
    them, not counted in ``accepted``)."""

    accepted: int
    rejected: list[Rejection]
    warnings: list[Rejection]
    detection_lines: str
    stopped: Optional[InferenceLimitError] = None
    raised: int = 0
    found: Optional[list[Detection]] = None
    """The detections, read from the packed hand-over (then
    ``detection_lines`` holds only a newline for each)."""
    snapshot: Optional[bytes] = None
    """In a feed of keys' states, after a segment that ends a key: the
    key's state as :meth:`Engine.snapshot` would give it, if the key's
    events changed it."""
    due: Optional[float] = None
    """With ``snapshot``: the key's :meth:`Engine.next_due`."""


@dataclass(frozen=True)
class PendingPart:
    """A part of a rule's pattern that has matched and waits for the rest:
    ``matched`` (with its bindings) occurred over ``[start, end]`` as the
    ``side`` operand of binary goal ``goal`` (``pattern``)."""

    goal: int
    pattern: str
    matched: str
    side: str
    waiting: str
    start: float | int
    end: float | int


@dataclass(frozen=True)
class KeyState:
    """Around a segment of a feed of keys' states (:meth:`Engine.feed_segments`):
    the snapshot to restore before it (None: the engine goes on with the
    state it holds) and whether to take the state after it (the segment
    ends its key)."""

    restore: Optional[bytes]
    take: bool


SNAPSHOT_COUNTERS = ("accepted", "rejected", "raised", "detections", "dropped")
"""The counters of :class:`EngineStats` that a snapshot carries (the
others are counted afresh from the engine's state)."""


@dataclass
class Counts:
    """The events an engine accepted, rejected and raised (ETALIS's
    ``event/1``), and its detections: what every summary of a run counts."""

    accepted: int = 0
    rejected: int = 0
    raised: int = 0
    detections: int = 0


@dataclass
class EngineStats(Counts):
    """Counters of an engine since it was made."""

    pending: int = 0
    pending_by_goal: list[dict[str, Any]] = field(default_factory=list)
    pending_by_rule: dict[str, int] = field(default_factory=dict)
    buffered: int = 0
    skip_kept: int = 0
    queued: int = 0
    dropped: int = 0


def parse_detections(lines: str) -> Detections:
    """The detections of JSON lines, decoded as one array (much faster
    than a line at a time)."""
    if not lines:
        return Detections()
    return Detections(Detection.from_dict(d) for d in json.loads("[" + lines.rstrip("\n").replace("\n", ",") + "]"))


def parse_rows(lines: str) -> Detections:
    """The detections of rows, a JSON array a line (the engine's ``row``
    format: ``["c", [1], 1, 2]``), decoded as one array."""
    if not lines:
        return Detections()
    return Detections(map(Detection.from_row, json.loads("[" + lines.rstrip("\n").replace("\n", ",") + "]")))


def snapshot_header(head: bytes, content: Union[bytes, memoryview]) -> bytes:
    """A snapshot's first two lines from the engine's parts: ``head`` (its
    start up to its content's length and a comma) and the content's
    SHA-256 between single quotes, ``).`` and a newline (the engine leaves
    the checksum to this side: hashlib hashes the bytes as they are)."""
    return b"".join((head, b"'", hashlib.sha256(content).hexdigest().encode("ascii"), b"').\n"))


def snapshot_bytes(head: str, content: Union[bytes, memoryview]) -> bytes:
    """A snapshot's bytes from the engine's parts, joined once."""
    return b"".join((snapshot_header(head.encode("latin-1"), content), content))


def feed_result(header: dict[str, Any], body: str, found: Optional[list[Detection]] = None) -> FeedResult:
    """The FeedResult of a feed reply's header and detection lines (a
    flush or advance accepts and rejects nothing)."""
    rejected = [Rejection(int(line), str(reason)) for line, reason in header.get("rejected", [])]
    warnings = [Rejection(int(line), str(msg)) for line, msg in header["warnings"]]
    stopped = InferenceLimitError.from_reply(header["stopped"]) if "stopped" in header else None
    return FeedResult(header.get("accepted", 0), rejected, warnings, body, stopped, int(header.get("raised", 0)), found)
