"""Webhook subscriptions: the detections of a rule set POSTed to a URL,
in order, at least once, with retries and exponential backoff."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Optional
from urllib.parse import urlsplit

import httpx

from .log import DetectionLog, Missed, Numbered

BATCH = 100
"""The most detections one delivery carries."""


def check_url(url: object) -> str:
    """``url`` if it is an absolute http(s) URL with a host, else ValueError."""
    if not isinstance(url, str):
        raise ValueError(f"url must be a string, not {type(url).__name__}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"url {url[:200]!r} is not an absolute http:// or https:// URL")
    return url


@dataclass
class Webhook:
    """A subscription: where to, which events (all if empty), and the
    number of the last detection delivered (its position in the log)."""

    id: str
    url: str
    events: tuple[str, ...] = ()
    position: int = 0
    delivered: int = 0
    failures: int = 0
    missed: int = 0
    unreported: Optional[Missed] = None
    last_error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "url": self.url, "events": list(self.events), "position": self.position,
                "delivered": self.delivered, "failures": self.failures, "missed": self.missed,
                "last_error": self.last_error}

    def saved(self) -> dict[str, Any]:
        """What a checkpoint keeps of it."""
        return {"id": self.id, "url": self.url, "events": list(self.events), "position": self.position,
                "delivered": self.delivered, "missed": self.missed}

    @staticmethod
    def from_saved(d: dict[str, Any]) -> "Webhook":
        return Webhook(str(d["id"]), str(d["url"]), tuple(d["events"]), int(d["position"]), int(d["delivered"]),
                       missed=int(d["missed"]))

    def wanted(self, n: Numbered) -> bool:
        return not self.events or n.detection.event in self.events


@dataclass(frozen=True)
class Backoff:
    """The wait before the first retry, its growth and its bound (seconds)."""

    first: float = 0.5
    factor: float = 2.0
    most: float = 30.0


@dataclass
class Deliverer:
    """Delivers one webhook's detections until stopped.  ``on_outcome`` is
    told each attempt's outcome (``delivered``, ``failed``) and each gap
    (``missed``, with its count) for the metrics."""

    ruleset: str
    hook: Webhook
    log: DetectionLog
    client: httpx.AsyncClient
    on_outcome: Callable[[str, int], None]
    backoff: Backoff = field(default_factory=Backoff)
    idle: float = 5.0
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        hook = self.hook
        wait = self.backoff.first
        while not self.stop.is_set() and not self.log.closed:
            missed, fresh = self.log.after(hook.position)
            if missed is not None:
                hook.missed += missed.count
                hook.unreported = missed if hook.unreported is None else Missed(hook.unreported.first, missed.last)
                hook.position = missed.last
                self.on_outcome("missed", missed.count)
            batch = [n for n in fresh if hook.wanted(n)][:BATCH]
            if not batch and hook.unreported is None:
                if fresh:
                    hook.position = fresh[-1].id
                    continue
                await self._pause(self.log.wait(hook.position, self.idle))
                continue
            upto = batch[-1].id if len(batch) == BATCH else (fresh[-1].id if fresh else hook.position)
            if await self._post(batch):
                hook.position = upto
                hook.delivered += len(batch)
                hook.unreported = None
                wait = self.backoff.first
                self.on_outcome("delivered", len(batch))
            else:
                hook.failures += 1
                self.on_outcome("failed", 1)
                await self._pause(asyncio.sleep(wait))
                wait = min(wait * self.backoff.factor, self.backoff.most)

    async def _post(self, batch: list[Numbered]) -> bool:
        body: dict[str, Any] = {"ruleset": self.ruleset, "subscription": self.hook.id,
                                "detections": [n.to_json() for n in batch]}
        if self.hook.unreported is not None:
            body["missed"] = self.hook.unreported.to_json()
        try:
            reply = await self.client.post(self.hook.url, json=body)
        except httpx.HTTPError as e:
            self.hook.last_error = f"{type(e).__name__}: {e}"[:300]
            return False
        if 200 <= reply.status_code < 300:
            self.hook.last_error = ""
            return True
        self.hook.last_error = f"HTTP {reply.status_code}"
        return False

    async def _pause(self, waiting: Awaitable[Any]) -> None:
        """Wait for ``waiting``, or less if the deliverer is stopped."""
        stopped = asyncio.ensure_future(self.stop.wait())
        pending = asyncio.ensure_future(waiting)
        try:
            await asyncio.wait({stopped, pending}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for f in (stopped, pending):
                f.cancel()
