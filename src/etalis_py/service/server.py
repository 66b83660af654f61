"""``etalis serve``: the service on uvicorn, on one socket, until SIGTERM
or Ctrl-C (which drain: writes refused, streams ended, checkpoints
written)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Optional, TextIO

import uvicorn

from ..bridge._prolog import bridge
from ..errors import EtalisError, RuleError, unreadable
from .app import BUFFER, MAX_BODY, Service, ServiceConfig, make_app
from .checkpoint import CheckpointError


def loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_token(path: Path) -> str:
    """The bearer token of a token file: its text without surrounding
    white space; ValueError if the file is empty or unreadable."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"token file {path}: {getattr(e, 'strerror', None) or e}") from None
    if not token or any(c.isspace() for c in token):
        raise ValueError(f"token file {path}: give one token, a line without spaces (e.g. openssl rand -hex 32)")
    return token


class _Server(uvicorn.Server):
    """uvicorn's server that begins to drain the service at SIGTERM or
    SIGINT, so that its event streams end and the shutdown can go on."""

    def __init__(self, config: uvicorn.Config, service: Service) -> None:
        super().__init__(config)
        self.service = service

    def handle_exit(self, sig: int, frame: Optional[FrameType]) -> None:
        self.service.stop_soon()
        super().handle_exit(sig, frame)


@dataclass(frozen=True)
class ServeOptions:
    """The command line of ``etalis serve``."""

    rules: list[Path]
    host: str = "127.0.0.1"
    port: int = 8080
    token_file: Optional[Path] = None
    checkpoint: Optional[Path] = None
    max_body: int = MAX_BODY
    buffer: int = BUFFER


def serve(options: ServeOptions, err: TextIO) -> int:
    """Run the server until it is told to stop: 2 for options that cannot
    work (a public address without a token, a missing file, a port taken),
    1 if the checkpoint cannot be read, 130 after Ctrl-C; SIGTERM ends the
    process by that signal once it has drained (status 143)."""
    try:
        token = read_token(options.token_file) if options.token_file is not None else None
        if token is None and not loopback(options.host):
            raise ValueError(f"without --token-file the server listens on loopback only, not on {options.host}\n"
                             "  hint: give --token-file FILE (rule sets are code: every write then needs the bearer "
                             "token), or --host 127.0.0.1")
        for path in options.rules:
            why = unreadable("rule file", path)
            if why is not None:
                raise ValueError(why)
        if options.checkpoint is not None:
            try:
                if options.checkpoint.exists() and not options.checkpoint.is_dir():
                    raise NotADirectoryError(0, "it is a file, not a folder")
                options.checkpoint.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise ValueError(f"checkpoint folder {options.checkpoint}: {e.strerror or e}\n"
                                 "  hint: give --checkpoint a folder this user may write (it is made if need be)"
                                 ) from None
    except ValueError as e:
        print(f"etalis serve: {e}", file=err)
        return 2
    bridge()    # Prolog starts on this thread, the process's first: the engine thread attaches to it
    config = ServiceConfig(token=token, checkpoint=options.checkpoint, max_body=options.max_body,
                           buffer=options.buffer)
    service = Service(config)
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((options.host, options.port))
    except OSError as e:
        print(f"etalis serve: cannot listen on {options.host}:{options.port}: {e.strerror}", file=err)
        return 2
    if token is None:
        print("etalis serve: no --token-file: anyone on this machine may change the rule sets; "
              "listening on loopback only", file=err)
    try:
        return asyncio.run(_run(service, options.rules, sock, err))
    except KeyboardInterrupt:   # uvicorn raises the SIGINT again once it has drained
        print("etalis serve: stopped (Ctrl-C)", file=err)
        return 130


async def _run(service: Service, rules: list[Path], sock: socket.socket, err: TextIO) -> int:
    """Start the service (restore, register ``rules``), then serve."""
    try:
        for note in await service.start(rules):
            print(f"etalis serve: {note}", file=err)
    except (RuleError, CheckpointError, OSError, EtalisError) as e:
        await service.drain()   # the engine thread ends before the process does
        print(e if isinstance(e, RuleError) else f"etalis serve: {e}", file=err)
        return 2 if isinstance(e, RuleError) else 1
    sock.listen(128)    # connections wait from now on

    def ready() -> None:
        """Say where the server listens, once it takes signals: a client
        may connect, and a SIGTERM or Ctrl-C drains."""
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if sock.family == socket.AF_INET6 else host
        checkpoint = service.config.checkpoint
        count = len(service.registry)
        print(f"etalis serve: listening on http://{shown}:{port}/ ({count} rule set{'s' * (count != 1)}"
              f"{', checkpoints in ' + str(checkpoint) if checkpoint else ''})", file=err, flush=True)

    app = make_app(service, ready=ready)
    server = _Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=10,
                                    access_log=False), service)
    await server.serve(sockets=[sock])
    return 0
