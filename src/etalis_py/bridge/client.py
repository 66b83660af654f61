"""A client of ``etalis serve`` with the names of :class:`Engine`:
``emit``, ``emit_many`` and ``on``, over HTTP (docs/service.md).

>>> client = Client("http://127.0.0.1:8080", token="...")      # doctest: +SKIP
>>> client.add_rules("c(X) <- a(X) seq b(X).", name="c.etl")   # doctest: +SKIP
'c'
>>> client.emit("a", 1, at=1); client.emit("b", 1, at=2)       # doctest: +SKIP
[Detection(event='c', args=(1,), start=1, end=2)]
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, Optional

import httpx

from .engine import BatchResult
from ..errors import EtalisError, EventError, Rejection, RuleError
from ..events import Detection, Event, InvalidEvent, known_keys, to_time
from ..outputs.detections import Detections

Callback = Callable[[Detection], Any]


class ServiceError(EtalisError):
    """A request the server refused: its HTTP status, and the server's
    message and hint."""

    def __init__(self, status: int, message: str, hint: str = "") -> None:
        self.status = status
        self.message = message
        self.hint = hint
        super().__init__(f"HTTP {status}: {message}" + (f"\n  hint: {hint}" if hint else ""))


@dataclass(frozen=True)
class Streamed:
    """One message of a detection stream: a ``detection`` (with its
    number), a ``missed`` gap (``first`` to ``last`` fell out of the
    server's buffer), or the ``end`` of the stream."""

    kind: str
    id: Optional[int]
    data: dict[str, Any]

    @property
    def detection(self) -> Detection:
        return Detection.from_dict(self.data)


def read_stream(lines: Iterable[str]) -> Iterator[Streamed]:
    """The messages of Server-Sent Events lines (comments skipped)."""
    kind: str = "message"
    id: Optional[int] = None
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield Streamed(kind, id, json.loads("\n".join(data)))
            kind, id, data = "message", None, []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                kind = value
            elif field == "id" and value.isdigit():
                id = int(value)
            elif field == "data":
                data.append(value)


class Client:
    """A connection to a server, bound to one rule set (``ruleset=``, the
    one :meth:`add_rules` registers, or the server's only one)."""

    def __init__(self, url: str, token: Optional[str] = None, *, ruleset: Optional[str] = None,
                 timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self._ruleset = ruleset
        self._timeout = timeout
        self._http = httpx.Client(base_url=self.url, timeout=timeout, headers=self._headers())
        self._callbacks: dict[Optional[str], list[Callback]] = {}
        self._listener: Optional[_Listener] = None

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        reply = self._http.request(method, path, **kwargs)
        if reply.status_code >= 400 and reply.status_code != 422:
            try:
                body = reply.json()
            except ValueError:
                body = {"error": reply.text[:300]}
            findings = body.get("findings") or []
            if reply.status_code == 400 and findings:
                f = findings[0]
                raise RuleError(f["message"], file=f["file"], line=f["line"], column=f["column"], hint=f["hint"])
            raise ServiceError(reply.status_code, str(body.get("error", "")), str(body.get("hint", "")))
        return reply

    # -- rule sets ----------------------------------------------------------

    @property
    def ruleset(self) -> str:
        """The rule set this client feeds: the one given, else the one it
        registered, else the server's only one."""
        if self._ruleset is None:
            ids = [r["id"] for r in self.rulesets()]
            if len(ids) != 1:
                raise ServiceError(0, f"which rule set? the server has {len(ids)}: {', '.join(ids) or 'none'}",
                                   "give Client(..., ruleset=ID), or register one with add_rules()")
            self._ruleset = ids[0]
        return self._ruleset

    def rulesets(self) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._call("GET", "/rulesets").json()
        return result

    def add_rules(self, text: str, name: Optional[str] = None) -> str:
        """Register a rule file's text (under ``name``, a file name); its
        id.  The client feeds it unless bound to another.  Raises
        :class:`RuleError` with the line and column of a refused file."""
        params = {"name": name} if name else {}
        reply = self._call("POST", "/rulesets", content=text.encode("utf-8"), params=params,
                           headers={"Content-Type": "text/plain; charset=utf-8"})
        id = str(reply.json()["id"])
        if self._ruleset is None:
            self._ruleset = id
        return id

    def remove(self, ruleset: Optional[str] = None) -> None:
        """Remove a rule set (this client's by default)."""
        self._call("DELETE", f"/rulesets/{ruleset or self.ruleset}")

    def info(self) -> dict[str, Any]:
        """The rule set's counters and pending goals by rule."""
        result: dict[str, Any] = self._call("GET", f"/rulesets/{self.ruleset}").json()
        return result

    # -- events in ----------------------------------------------------------

    def emit(self, name: str, *args: Any, at: Any = None, start: Any = None, end: Any = None) -> Detections:
        """As :meth:`Engine.emit`: one event, its detections; EventError
        if the server rejects it."""
        if at is not None:
            if start is not None or end is not None:
                raise EventError("give either at= or start= and end=, not both")
            start = end = at
        elif start is None or end is None:
            raise EventError(f"event {name!r} needs a time: at=T, or start=T1 and end=T2")
        try:
            item = _item(Event(name, tuple(args), to_time(start), to_time(end)))
        except (InvalidEvent, TypeError, ValueError) as e:
            raise EventError(f"event {name!r}: {e}") from None
        reply = self._post_events([item])
        if reply["rejected"]:
            raise EventError(f"event {name!r} rejected: {reply['rejected'][0]['reason']}")
        if "stopped" in reply:
            raise EventError(reply["stopped"])
        return Detections(Detection.from_dict(d) for d in reply["detections"])

    def emit_many(self, events: Iterable[Any], batch_size: int = 10_000) -> BatchResult:
        """As :meth:`Engine.emit_many`: events in time order, ``batch_size``
        a request; bad items are rejected with their 1-based position."""
        accepted, rejected, warned, found = 0, [], [], Detections()
        items = iter(events)
        first = 1
        while batch := list(islice(items, max(1, batch_size))):
            body, positions = [], []
            for i, item in enumerate(batch, start=first):
                try:
                    known_keys(item)
                    body.append(_item(Event.coerce(item)))
                    positions.append(i)
                except (InvalidEvent, TypeError, ValueError) as e:
                    rejected.append(Rejection(i, str(e).split(";")[0]))
            if body:
                reply = self._post_events(body)
                accepted += reply["accepted"]
                rejected += [Rejection(positions[r["at"] - 1], r["reason"]) for r in reply["rejected"]]
                warned += [Rejection(positions[w["at"] - 1] if 0 < w["at"] <= len(positions) else w["at"],
                                     w["message"]) for w in reply["warnings"]]
                found.extend(Detection.from_dict(d) for d in reply["detections"])
                if "stopped" in reply:
                    raise EventError(reply["stopped"])
            first += len(batch)
        return BatchResult(accepted, sorted(rejected, key=lambda r: r.line), found, warned)

    def _post_events(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        body = json.dumps(items, allow_nan=False).encode("utf-8")
        reply: dict[str, Any] = self._call("POST", f"/rulesets/{self.ruleset}/events", content=body,
                                           headers={"Content-Type": "application/json"}).json()
        return reply

    # -- detections out -----------------------------------------------------

    def stream(self, after: Optional[int] = None, timeout: Optional[float] = None) -> Iterator[Streamed]:
        """The rule set's detection stream from the server, once (no
        reconnection): after detection ``after`` (default: only new ones;
        0: the whole buffer)."""
        headers = {} if after is None else {"Last-Event-ID": str(after)}
        with self._http.stream("GET", f"/rulesets/{self.ruleset}/detections", headers=headers,
                               timeout=httpx.Timeout(self._timeout, read=timeout)) as reply:
            if reply.status_code >= 400:
                reply.read()
                raise ServiceError(reply.status_code, reply.text[:300])
            yield from read_stream(reply.iter_lines())

    def on(self, name: Optional[str], callback: Callback) -> None:
        """As :meth:`Engine.on`: call ``callback(detection)`` for each new
        detection of event ``name`` (every event if None), from a thread
        that follows the server's stream and, after a lost connection,
        reconnects from the last detection it had (gaps are counted in
        :attr:`missed`).  :meth:`close` stops it."""
        if not callable(callback):
            raise TypeError(f"Client.on({name!r}, ...): the callback {callback!r} is not callable")
        self._callbacks.setdefault(name, []).append(callback)
        if self._listener is None:
            self._listener = _Listener(self, int(self.info()["last_id"]))
            self._listener.start()

    @property
    def missed(self) -> int:
        """Detections that fell out of the server's buffer before :meth:`on`'s thread read them."""
        return self._listener.missed if self._listener is not None else 0

    def _dispatch(self, d: Detection) -> None:
        for cb in self._callbacks.get(d.event, []) + self._callbacks.get(None, []):
            cb(d)

    def close(self) -> None:
        """Stop :meth:`on`'s thread and close the connections."""
        if self._listener is not None:
            self._listener.stop()
            self._listener = None
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _item(e: Event) -> dict[str, Any]:
    """An event as the server takes it (its args must be JSON)."""
    json.dumps(e.args, allow_nan=False)
    return {"event": e.name, "args": list(e.args), "start": e.start, "end": e.end}


class _Listener(threading.Thread):
    """Follows a rule set's stream for :meth:`Client.on`, reconnecting."""

    def __init__(self, client: Client, position: int) -> None:
        super().__init__(name=f"etalis-client-{client.ruleset}", daemon=True)
        self.client = client
        self.position = position
        self.missed = 0
        self._stopped = threading.Event()
        self._reply: Optional[httpx.Response] = None
        self._http = httpx.Client(base_url=client.url, headers=client._headers(),
                                  timeout=httpx.Timeout(10.0, read=30.0))

    def run(self) -> None:
        path = f"/rulesets/{self.client.ruleset}/detections"
        while not self._stopped.is_set():
            try:
                with self._http.stream("GET", path, headers={"Last-Event-ID": str(self.position)}) as reply:
                    self._reply = reply
                    if reply.status_code == 404:
                        return
                    for message in read_stream(reply.iter_lines()):
                        if self._stopped.is_set():
                            return
                        if message.id is not None:
                            self.position = message.id
                        if message.kind == "detection":
                            self.client._dispatch(message.detection)
                        elif message.kind == "missed":
                            self.missed += int(message.data["count"])
                        elif message.kind == "end":
                            break
            except (httpx.HTTPError, ValueError):
                pass
            except Exception:
                if not self._stopped.is_set():   # a callback's error, not the closing of the connection
                    raise
            self._stopped.wait(0.5)

    def stop(self) -> None:
        """Stop following: the stream is closed under the thread's read."""
        self._stopped.set()
        if self._reply is not None:
            self._reply.close()
        self._http.close()
        self.join(timeout=5)
