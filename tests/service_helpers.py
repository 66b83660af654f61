"""Servers of ``etalis serve`` in subprocesses on loopback, for the tests."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional

import httpx

from etalis_py.bridge.client import Streamed, read_stream

LISTENING = re.compile(r"listening on (http://\S+)/")


@dataclass
class Server:
    """A running ``etalis serve``: its process, URL and what it printed."""

    process: subprocess.Popen[str]
    url: str
    printed: list[str] = field(default_factory=list)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:     # no server is left running after a failed test
            self.process.kill()
            self.process.wait()
            raise


def start_server(*args: str, cwd: Optional[Path] = None, timeout: float = 60) -> Server:
    """``etalis serve --port 0 ARGS`` once it listens (its printed URL)."""
    process = subprocess.Popen([sys.executable, "-m", "etalis_py.cli", "serve", "--port", "0", *args],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, cwd=cwd, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    printed: list[str] = []
    found = threading.Event()
    url: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            printed.append(line.rstrip("\n"))
            m = LISTENING.search(line)
            if m:
                url.append(m.group(1))
                found.set()
        found.set()

    threading.Thread(target=read, daemon=True).start()
    if not found.wait(timeout) or not url:
        process.kill()
        process.wait()
        raise AssertionError(f"etalis serve did not start: {printed}")
    return Server(process, url[0], printed)


def stream_messages(url: str, count: int, headers: Optional[dict[str, str]] = None,
                    timeout: float = 20) -> list[Streamed]:
    """The first ``count`` messages (detections, gaps, end) of a stream."""
    got: list[Streamed] = []
    with httpx.stream("GET", url, headers=headers or {}, timeout=httpx.Timeout(timeout)) as reply:
        assert reply.status_code == 200, reply.read()
        for message in read_stream(reply.iter_lines()):
            got.append(message)
            if len(got) >= count:
                break
    return got


class Receiver:
    """A webhook receiver on loopback: it answers 500 to the first
    ``failing`` deliveries, then 200, and keeps the bodies it took."""

    def __init__(self, failing: int = 0) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.attempts = 0
        self.failing = failing
        self.got = threading.Condition()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with owner.got:
                    owner.attempts += 1
                    ok = owner.attempts > owner.failing
                    if ok:
                        owner.bodies.append(body)
                    owner.got.notify_all()
                self.send_response(200 if ok else 500)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def detections(self, count: int, timeout: float = 20) -> list[dict[str, Any]]:
        """The detections delivered, once ``count`` different ones were
        (a delivery may come again: webhooks are at least once)."""
        deadline = time.monotonic() + timeout
        with self.got:
            while len({d["id"] for b in self.bodies for d in b["detections"]}) < count \
                    and time.monotonic() < deadline:
                self.got.wait(deadline - time.monotonic())
            return [d for b in self.bodies for d in b["detections"]]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def events(*items: Sequence[Any]) -> list[dict[str, Any]]:
    """``("a", [1], 5)`` items as JSON events."""
    return [{"event": name, "args": list(args), "time": t} for name, args, t in items]


def lines(stream: Iterator[str]) -> str:
    return "\n".join(stream)
