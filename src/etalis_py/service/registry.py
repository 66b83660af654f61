"""The rule sets of a server: each an engine, its numbered detections and
its counters, under an id made from its name; and the one thread every
engine call runs on."""

from __future__ import annotations

import asyncio
import functools
import re
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Optional, TypeVar

from ..bridge.engine import Engine
from ..errors import EtalisError, InferenceLimitError, RuleError
from ..events import Detection, Rejection
from ..rules.findings import Finding
from .intake import Intake
from .log import DetectionLog, Numbered
from .webhooks import Webhook

T = TypeVar("T")


class EngineThread:
    """Every call into an engine runs on this one thread, in the order the
    calls were made: the requests to an engine are serialized, and an
    engine is only ever used by the thread that made it."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="etalis-engine")

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        """End the thread once the calls made are done."""
        self._pool.shutdown(wait=True)


class NotFound(LookupError):
    """No rule set (or subscription) of that id."""


@dataclass(frozen=True)
class Fed:
    """What one request's events did: the accepted count, the rejected
    ones with their positions in the body, the warnings, the numbered
    detections, and why the engine stopped, if it did (an event over the
    inference limit: it is the last item read; ``unread`` counts the
    items and lines after it)."""

    accepted: int
    rejected: list[Rejection]
    warnings: list[Rejection]
    detections: list[Numbered]
    stopped: Optional[str] = None
    seconds: float = 0.0
    unread: int = 0

    def to_json(self) -> dict[str, Any]:
        reply: dict[str, Any] = {
            "read": self.accepted + len(self.rejected),
            "accepted": self.accepted,
            "rejected": [{"at": r.line, "reason": r.reason} for r in self.rejected],
            "warnings": [{"at": w.line, "message": w.reason} for w in self.warnings],
            "detections": [n.to_json() for n in self.detections],
        }
        if self.stopped is not None:
            reply["stopped"] = self.stopped
            reply["unread"] = self.unread
        return reply


@dataclass
class RuleSet:
    """A registered rule file and its running engine."""

    id: str
    name: str
    text: str
    engine: Engine
    log: DetectionLog
    created: float = field(default_factory=time.time)
    accepted: int = 0
    rejected: int = 0
    detected: dict[str, int] = field(default_factory=dict)
    webhooks: dict[str, Webhook] = field(default_factory=dict)
    subscribers: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def summary(self) -> dict[str, Any]:
        """What ``GET /rulesets`` says of it."""
        return {
            "id": self.id, "name": self.name, "rules": self.engine.rule_count, "goals": self.engine.goal_count,
            "policy": self.engine.policy, "reports": list(self.engine.printed), "created": self.created,
            "accepted": self.accepted, "rejected": self.rejected, "detections": sum(self.detected.values()),
            "detected": dict(self.detected), "last_id": self.log.last_id,
        }

    def feed(self, intake: Intake) -> tuple[Fed, list[Detection]]:
        """Process ``intake``'s events (on the engine thread); the
        detections are returned, to be numbered by the caller."""
        began = time.perf_counter()
        before = self.engine.stats()
        stopped: Optional[str] = None
        unread = 0
        with warnings.catch_warnings(record=True):
            try:
                result = self.engine.emit_many(intake.items)
                accepted, by_engine, warned, found = (result.accepted, result.rejected, result.warnings,
                                                      list(result.detections))
                taken = intake.rejected
            except InferenceLimitError as e:
                after = self.engine.stats()
                at = intake.position(e.line)
                stopped = str(e).split("\n")[0].replace(f"(line {e.line})", f"(at {at})")
                accepted, warned = after.accepted - before.accepted, e.warnings
                by_engine = e.rejected + [Rejection(e.line, stopped)]
                taken = [r for r in intake.rejected if r.line < at]   # lines after the stop were not read
                unread = len(intake.items) - e.line + len(intake.rejected) - len(taken)
                found = list(self.engine.detections())
        rejected = sorted(taken + [Rejection(intake.position(r.line), r.reason) for r in by_engine],
                          key=lambda r: r.line)
        warned = [Rejection(intake.position(w.line) if 0 < w.line <= len(intake.items) else w.line, w.reason)
                  for w in warned]
        return Fed(accepted, rejected, warned, [], stopped, time.perf_counter() - began, unread), found

    def count(self, fed: Fed) -> None:
        self.accepted += fed.accepted
        self.rejected += len(fed.rejected)
        for n in fed.detections:
            self.detected[n.detection.event] = self.detected.get(n.detection.event, 0) + 1


def compile_rules(name: str, text: str, state: Optional[bytes] = None) -> tuple[Engine, list[Finding]]:
    """The engine of a rule file's text (sandboxed), with the snapshot
    ``state`` if given, and the findings of ``etalis check`` that are
    errors or warnings; RuleError if it is refused.  Runs on the engine
    thread."""
    with warnings.catch_warnings(record=True):
        engine = Engine.from_string(text, source=name, state=state)
        try:
            found = [f for f in engine.findings() if f.severity != "info"]
        except (RuleError, EtalisError):
            found = []
    return engine, found


_UNSAFE = re.compile(r"[^a-z0-9._-]+")


class Registry:
    """The rule sets by id."""

    def __init__(self) -> None:
        self._sets: dict[str, RuleSet] = {}

    def __iter__(self) -> Iterator[RuleSet]:
        return iter(list(self._sets.values()))

    def __len__(self) -> int:
        return len(self._sets)

    def get(self, id: str) -> RuleSet:
        try:
            return self._sets[id]
        except KeyError:
            known = ", ".join(sorted(self._sets)) or "none"
            raise NotFound(f"no rule set {id!r} (rule sets: {known})") from None

    def new_id(self, name: str) -> str:
        """An id for a rule set named ``name``: its file name's stem in
        lower case, URL-safe, with ``-2``, ``-3``... if taken."""
        stem = name.rsplit("/", 1)[-1]
        stem = stem[:-4] if stem.endswith(".etl") else stem
        base = _UNSAFE.sub("-", stem.lower()).strip("-.")[:60] or "rules"
        id, n = base, 1
        while id in self._sets:
            n += 1
            id = f"{base}-{n}"
        return id

    def add(self, ruleset: RuleSet) -> None:
        self._sets[ruleset.id] = ruleset

    def remove(self, id: str) -> RuleSet:
        return self._sets.pop(self.get(id).id)
