"""The HTTP face of the service: a Starlette application over the rule
sets of a :class:`Service`.

Every engine call runs on the service's one engine thread; the requests
that change a rule set hold its lock, so one rule set's requests are
served one after another, in order, while other rule sets and every
read go on."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import json
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..bridge.engine import check_unicode
from ..errors import EtalisError, RuleError
from ..rules.findings import Finding
from .checkpoint import Checkpoints, Saved
from .intake import BodyError, place, read_events
from .log import DetectionLog, Numbered
from .metrics import Metrics
from .openapi import document
from .page import page_html
from .registry import EngineThread, Fed, NotFound, Registry, RuleSet, compile_rules
from .webhooks import Backoff, Deliverer, Webhook, check_url

MAX_BODY = 8 * 1024 * 1024
"""The largest request body (bytes) by default: a larger one is refused with 413."""

BUFFER = 10_000
"""How many detections a rule set keeps for subscribers that reconnect, by default."""


STREAM_SLICE = 256
"""The most detections a stream writes at once: a subscriber that stops
reading holds up at most one such write in the server (and the socket's
buffers); what falls out of the buffer meanwhile it is told it missed."""


@dataclass(frozen=True)
class ServiceConfig:
    """How a server behaves: its bearer token (None: writes are open, and
    the server listens on loopback only), its checkpoint folder, the
    largest body, the detections each rule set keeps, and how often an
    idle stream says it is alive."""

    token: Optional[str] = None
    checkpoint: Optional[Path] = None
    max_body: int = MAX_BODY
    buffer: int = BUFFER
    keepalive: float = 5.0
    backoff: Backoff = field(default_factory=Backoff)
    webhook_timeout: float = 10.0


class ApiError(Exception):
    """A request that cannot be served: its status, what is wrong, what to do."""

    def __init__(self, status: int, message: str, hint: str = "", **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint
        self.extra = extra

    def response(self) -> JSONResponse:
        body: dict[str, Any] = {"error": self.message, **({"hint": self.hint} if self.hint else {}), **self.extra}
        headers = {"WWW-Authenticate": "Bearer"} if self.status == 401 else None
        return JSONResponse(body, self.status, headers=headers)


def rule_error_json(e: RuleError) -> dict[str, Any]:
    """A refused rule file as ``etalis check --format json`` gives it."""
    return Finding("error", "rule-error", e.message, e.file, e.line, e.column, e.hint).to_json()


class Service:
    """The rule sets, their subscribers, metrics and checkpoints."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        self.registry = Registry()
        self.engines = EngineThread()
        self.metrics = Metrics()
        self.checkpoints = Checkpoints(config.checkpoint) if config.checkpoint is not None else None
        self.draining = asyncio.Event()
        self._deliverers: dict[tuple[str, str], tuple[Deliverer, asyncio.Task[None]]] = {}
        self._http: Optional[httpx.AsyncClient] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._stopper: Optional[asyncio.Future[None]] = None
        self.began = time.time()
        """When the service was made (seconds since 1970)."""

    # -- life ---------------------------------------------------------------

    async def start(self, rules: list[Path]) -> list[str]:
        """Restore the checkpoint, then register the rule files given at
        start under their file names (one already restored is kept: what
        is said of those that changed on disk is returned)."""
        self._loop = asyncio.get_running_loop()
        self._http = httpx.AsyncClient(timeout=self.config.webhook_timeout)
        if self.checkpoints is not None:
            for saved in self.checkpoints.read(self.config.buffer):
                await self._restore(saved)
        restored = {rs.name: rs for rs in self.registry}
        notes = []
        for path in rules:
            text = path.read_text(encoding="utf-8")
            kept = restored.get(path.name)
            if kept is None:
                await self.add(path.name, text)
            elif kept.text != text:
                notes.append(f"{path} changed since rule set {kept.id!r} was checkpointed: it runs the rules of the "
                             f"checkpoint\n  hint: DELETE /rulesets/{kept.id} and POST the new file to start it "
                             "afresh (its pending goals are lost)")
        return notes

    def stop_soon(self) -> None:
        """Begin to drain: refuse writes and end the streams (so that the
        server's connections close).  Safe from a signal handler."""
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._begin_stop)

    def _begin_stop(self) -> None:
        self._stopper = asyncio.ensure_future(self._stop_streams())

    async def _stop_streams(self) -> None:
        self.draining.set()
        for rs in self.registry:
            await rs.log.stop_streams()

    async def drain(self) -> None:
        """Stop taking writes, end the streams, wait for the requests in
        progress, write every checkpoint and stop the webhooks."""
        await self._stop_streams()
        for rs in self.registry:
            async with rs.lock:
                await self._checkpoint(rs)
                await rs.log.close()
        for deliverer, task in list(self._deliverers.values()):
            deliverer.stop.set()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._http is not None:
            await self._http.aclose()
        for rs in self.registry:
            await self.engines.call(rs.engine.close)
        self.engines.close()

    @property
    def started(self) -> bool:
        return self._loop is not None

    # -- rule sets ----------------------------------------------------------

    async def add(self, name: str, text: str) -> tuple[RuleSet, list[Finding]]:
        check_unicode(text, name)
        engine, found = await self.engines.call(compile_rules, name, text)
        rs = RuleSet(self.registry.new_id(name), name, text, engine, DetectionLog(self.config.buffer))
        self.registry.add(rs)
        self.metrics.rulesets.set(len(self.registry))
        async with rs.lock:
            await self._checkpoint(rs)
        return rs, found

    async def _restore(self, saved: Saved) -> None:
        engine, _ = await self.engines.call(compile_rules, saved.name, saved.text, saved.state)
        rs = RuleSet(saved.id, saved.name, saved.text, engine,
                     DetectionLog(self.config.buffer, saved.next_id, saved.kept), saved.created,
                     saved.accepted, saved.rejected, dict(saved.detected))
        self.registry.add(rs)
        self.metrics.rulesets.set(len(self.registry))
        for d in saved.webhooks:
            self._start_webhook(rs, Webhook.from_saved(d))

    async def remove(self, id: str) -> None:
        rs = self.registry.get(id)
        async with rs.lock:
            self.registry.remove(id)
            for (owner, hook) in [k for k in self._deliverers if k[0] == id]:
                deliverer, task = self._deliverers.pop((owner, hook))
                deliverer.stop.set()
                task.cancel()
            await rs.log.close()
            stats = await self.engines.call(rs.engine.stats)
            await self.engines.call(rs.engine.close)
            if self.checkpoints is not None:
                self.checkpoints.remove(id)
        self.metrics.forget(id, stats.pending_by_rule)
        self.metrics.rulesets.set(len(self.registry))

    async def feed(self, rs: RuleSet, body: bytes, content_type: str) -> Fed:
        intake = read_events(body, content_type)
        async with rs.lock:
            if rs.log.closed:
                raise NotFound(f"no rule set {rs.id!r}: it was removed")
            began = time.perf_counter()
            fed, found = await self.engines.call(rs.feed, intake)
            fed = dataclasses.replace(fed, detections=rs.log.append(found))
            rs.count(fed)
            try:
                await self._checkpoint(rs, fed.detections)
            except OSError as e:
                raise ApiError(503, f"the events were taken, but the checkpoint cannot be written ({e.strerror or e}): "
                               "their detections are held back until one is",
                               "make room in the checkpoint folder; the next request that writes one sends them") from None
            await rs.log.publish()
            self.metrics.latency.labels(rs.id).observe(time.perf_counter() - began)
        self.metrics.accepted.labels(rs.id).inc(fed.accepted)
        self.metrics.rejected.labels(rs.id).inc(len(fed.rejected))
        for event, count in Counter(n.detection.event for n in fed.detections).items():
            self.metrics.detections.labels(rs.id, event).inc(count)
        return fed

    async def _checkpoint(self, rs: RuleSet, fresh: Sequence[Numbered] = ()) -> None:
        """Write ``rs``'s checkpoint, with ``fresh``, the detections
        numbered since the last (held under its lock)."""
        if self.checkpoints is None:
            return
        state = await self.engines.call(rs.engine.snapshot)
        saved = Saved(rs.id, rs.name, rs.text, rs.created, state, rs.log.next_id, rs.log.kept(), rs.accepted,
                      rs.rejected, dict(rs.detected), [h.saved() for h in rs.webhooks.values()])
        await asyncio.to_thread(self.checkpoints.write, saved, list(fresh))

    async def details(self, rs: RuleSet) -> dict[str, Any]:
        stats = await self.engines.call(rs.engine.stats)
        self.metrics.set_pending(rs.id, stats.pending_by_rule)
        return {**rs.summary(), "pending": stats.pending, "pending_by_rule": stats.pending_by_rule,
                "buffered": len(rs.log.kept()), "buffer": rs.log.capacity, "subscribers": rs.subscribers,
                "webhooks": [h.to_json() for h in rs.webhooks.values()]}

    # -- subscribers ------------------------------------------------------------

    def _start_webhook(self, rs: RuleSet, hook: Webhook) -> None:
        assert self._http is not None
        rs.webhooks[hook.id] = hook

        def outcome(kind: str, count: int) -> None:
            if kind == "missed":
                self.metrics.missed.labels(rs.id, "webhook").inc(count)
            else:
                self.metrics.webhook.labels(rs.id, kind).inc()

        deliverer = Deliverer(rs.id, hook, rs.log, self._http, outcome, self.config.backoff, self.config.keepalive)
        self._deliverers[(rs.id, hook.id)] = (deliverer, asyncio.create_task(deliverer.run()))

    async def subscribe(self, rs: RuleSet, url: str, events: tuple[str, ...]) -> Webhook:
        async with rs.lock:
            hook = Webhook(secrets.token_hex(6), url, events, rs.log.last_id)
            self._start_webhook(rs, hook)
            await self._checkpoint(rs)
        return hook

    async def unsubscribe(self, rs: RuleSet, hook_id: str) -> None:
        async with rs.lock:
            if hook_id not in rs.webhooks:
                raise NotFound(f"rule set {rs.id!r} has no subscription {hook_id!r}")
            del rs.webhooks[hook_id]
            deliverer, task = self._deliverers.pop((rs.id, hook_id))
            deliverer.stop.set()
            task.cancel()
            await self._checkpoint(rs)

    async def stream(self, rs: RuleSet, position: int) -> AsyncIterator[str]:
        """The Server-Sent Events of ``rs``'s detections after ``position``:
        each ``id: N`` / ``event: detection``; ``event: missed`` (with the
        id of the last one missed) for what fell out of the buffer; a
        comment when idle; ``event: end`` when the rule set is removed or
        the server stops (the client reconnects with Last-Event-ID)."""
        rs.subscribers += 1
        self.metrics.subscribers.labels(rs.id).inc()
        try:
            yield "retry: 1000\n\n"
            while True:
                missed, fresh = rs.log.after(position, STREAM_SLICE)
                if missed is not None:
                    self.metrics.missed.labels(rs.id, "stream").inc(missed.count)
                    position = missed.last
                    yield f"id: {position}\nevent: missed\ndata: {json.dumps(missed.to_json())}\n\n"
                if fresh:   # one write a slice: a send per detection would cost more than the rest
                    position = fresh[-1].id
                    yield "".join(f"id: {n.id}\nevent: detection\ndata: {json.dumps(n.to_json())}\n\n" for n in fresh)
                if rs.log.stopping:
                    why = "the rule set was removed" if rs.log.closed else "the server stops"
                    yield f"event: end\ndata: {json.dumps({'reason': why, 'last_id': position})}\n\n"
                    return
                if not fresh and missed is None:
                    yield ": idle\n\n"
                await rs.log.wait(position, self.config.keepalive)
        finally:
            rs.subscribers -= 1
            self.metrics.subscribers.labels(rs.id).dec()


# -- the application --------------------------------------------------------------


def make_app(service: Service, rules: Optional[list[Path]] = None,
             ready: Callable[[], None] = lambda: None) -> Starlette:
    """The Starlette application of ``service``; at start it restores the
    checkpoint and registers ``rules`` (unless the service was started),
    then calls ``ready``; at shutdown it drains."""
    config = service.config

    def authorized(request: Request) -> None:
        if config.token is None:
            return
        given = request.headers.get("authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), config.token.encode()):
            raise ApiError(401, "this request changes the server: it needs the bearer token",
                           "send Authorization: Bearer TOKEN, the token of the server's --token-file")

    def writable() -> None:
        if service.draining.is_set():
            raise ApiError(503, "the server is stopping", "retry against the restarted server")

    async def body(request: Request, hint: str = "send the events in smaller batches") -> bytes:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > config.max_body:
            raise ApiError(413, f"the body has {int(declared)} bytes, more than the {config.max_body} this server "
                           "takes", hint)
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > config.max_body:
                raise ApiError(413, f"the body has more than the {config.max_body} bytes this server takes", hint)
            chunks.append(chunk)
        return b"".join(chunks)

    def ruleset(request: Request) -> RuleSet:
        return service.registry.get(request.path_params["id"])

    async def index(request: Request) -> Response:
        return HTMLResponse(page_html())

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "draining" if service.draining.is_set() else "ok",
                             "rulesets": len(service.registry), "uptime": round(time.time() - service.began, 3)},
                            503 if service.draining.is_set() else 200)

    async def metrics(request: Request) -> Response:
        for rs in service.registry:
            with contextlib.suppress(EtalisError):
                await service.details(rs)
        return Response(service.metrics.text(), media_type="text/plain; version=0.0.4; charset=utf-8")

    async def openapi(request: Request) -> Response:
        return JSONResponse(document(config.max_body))

    async def list_rulesets(request: Request) -> Response:
        return JSONResponse([rs.summary() for rs in service.registry])

    async def add_ruleset(request: Request) -> Response:
        authorized(request)
        writable()
        data = await body(request, "split the rules into smaller files, or start the server with a larger --max-body")
        name = request.query_params.get("name") or f"rules-{len(service.registry) + 1}.etl"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line, column = place(data, e.start)
            hint = "save the rule file as UTF-8 (e.g. iconv -f WINDOWS-1252 -t UTF-8)"
            bad = Finding("error", "rule-error", f"the rule file is not UTF-8: byte 0x{data[e.start]:02x}", name,
                          line, column, hint)
            raise ApiError(400, "the rule file is refused", hint, findings=[bad.to_json()]) from None
        try:
            rs, found = await service.add(name, text)
        except RuleError as e:
            raise ApiError(400, "the rule file is refused", e.hint, findings=[rule_error_json(e)]) from None
        return JSONResponse({**rs.summary(), "findings": [f.to_json() for f in found]}, 201,
                            headers={"Location": f"/rulesets/{rs.id}"})

    async def get_ruleset(request: Request) -> Response:
        return JSONResponse(await service.details(ruleset(request)))

    async def delete_ruleset(request: Request) -> Response:
        authorized(request)
        writable()
        await service.remove(request.path_params["id"])
        return Response(status_code=204)

    async def post_events(request: Request) -> Response:
        authorized(request)
        writable()
        rs = ruleset(request)
        data = await body(request)
        try:
            fed = await service.feed(rs, data, request.headers.get("content-type", ""))
        except BodyError as e:
            raise ApiError(400, e.message, e.hint) from None
        return JSONResponse(fed.to_json(), 422 if fed.stopped else 200)

    async def detections(request: Request) -> Response:
        rs = ruleset(request)
        given = request.headers.get("last-event-id") or request.query_params.get("after") or ""
        if given and not (given.isascii() and given.isdigit()):
            raise ApiError(400, f"Last-Event-ID (or after=) {given[:40]!r} is not a detection number",
                           "give the id of the last detection received, or after=0 for the whole buffer")
        position = int(given) if given else rs.log.last_id
        return StreamingResponse(service.stream(rs, position), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def list_subscriptions(request: Request) -> Response:
        return JSONResponse([h.to_json() for h in ruleset(request).webhooks.values()])

    async def add_subscription(request: Request) -> Response:
        authorized(request)
        writable()
        rs = ruleset(request)
        try:
            spec = json.loads(await body(request, 'send {"url": "https://...", "events": ["name"]}'))
        except ValueError as e:
            raise ApiError(400, f"malformed JSON: {e}", 'send {"url": "https://...", "events": ["name"]}') from None
        if not isinstance(spec, dict):
            raise ApiError(400, "the subscription must be a JSON object", 'send {"url": "https://...", "events": []}')
        try:
            url = check_url(spec.get("url"))
        except ValueError as e:
            raise ApiError(400, str(e), "give the URL that takes the detections, http:// or https://") from None
        events = spec.get("events", [])
        if not isinstance(events, list) or not all(isinstance(e, str) and e for e in events):
            raise ApiError(400, "events must be a list of event names", "e.g. [\"blizzard\"], or [] for all")
        hook = await service.subscribe(rs, url, tuple(events))
        return JSONResponse(hook.to_json(), 201, headers={"Location": f"/rulesets/{rs.id}/subscriptions/{hook.id}"})

    async def delete_subscription(request: Request) -> Response:
        authorized(request)
        writable()
        await service.unsubscribe(ruleset(request), request.path_params["sub"])
        return Response(status_code=204)

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return exc.response()

    async def not_found(request: Request, exc: Exception) -> Response:
        return ApiError(404, str(exc), "GET /rulesets lists the rule sets").response()

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return ApiError(exc.status_code, str(exc.detail), "GET /openapi.json describes the endpoints").response()

    async def engine_error(request: Request, exc: Exception) -> Response:
        return ApiError(422, str(exc).split("\n")[0]).response()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if not service.started:
            await service.start(rules or [])
        ready()
        yield
        await service.drain()

    routes = [
        Route("/", index), Route("/healthz", healthz), Route("/metrics", metrics),
        Route("/openapi.json", openapi),
        Route("/rulesets", list_rulesets, methods=["GET"]),
        Route("/rulesets", add_ruleset, methods=["POST"]),
        Route("/rulesets/{id}", get_ruleset, methods=["GET"]),
        Route("/rulesets/{id}", delete_ruleset, methods=["DELETE"]),
        Route("/rulesets/{id}/events", post_events, methods=["POST"]),
        Route("/rulesets/{id}/detections", detections, methods=["GET"]),
        Route("/rulesets/{id}/subscriptions", list_subscriptions, methods=["GET"]),
        Route("/rulesets/{id}/subscriptions", add_subscription, methods=["POST"]),
        Route("/rulesets/{id}/subscriptions/{sub}", delete_subscription, methods=["DELETE"]),
    ]
    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        ApiError: api_error, NotFound: not_found, HTTPException: http_error, EtalisError: engine_error}
    return Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
