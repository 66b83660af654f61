"""``etalis serve``: its options; the HTTP service itself is
:mod:`etalis_py.service`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Optional, TextIO


def _size(text: str) -> int:
    """A number of bytes: ``1048576``, ``512K``, ``8M``."""
    scale = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:].upper(), 1)
    try:
        value = int(text[:-1] if scale > 1 else text) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size in bytes: {text!r} (e.g. 8M)") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a size must be at least 1 byte, not {text!r}")
    return value


def _number_in(low: int, high: Optional[int], what: str) -> Callable[[str], int]:
    """An option's whole number from ``low`` to ``high`` (no bound if
    None), or argparse's error naming ``what`` it must be."""
    def number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}")
        return value
    return number


_port = _number_in(0, 65535, "a port (0 to 65535)")
_whole = _number_in(1, None, "a whole number >= 1")


def add_serve_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis serve``: rule sets over HTTP (docs/service.md)."""
    srv = sub.add_parser("serve", help="serve rule sets over HTTP: events in, detections out (docs/service.md)")
    srv.add_argument("rules", type=Path, nargs="*", metavar="RULES",
                     help=".etl files registered at start under their file names (sandboxed)")
    srv.add_argument("--host", default="127.0.0.1",
                     help="the address to listen on (default 127.0.0.1; other than loopback only with --token-file)")
    srv.add_argument("--port", type=_port, default=8080, help="the port (default 8080; 0: any free port, printed)")
    srv.add_argument("--token-file", type=Path, metavar="FILE",
                     help="a file holding the bearer token that every write (POST, DELETE) must give")
    srv.add_argument("--checkpoint", type=Path, metavar="DIR",
                     help="keep rule sets, engine state and detections here: they survive a restart")
    srv.add_argument("--max-body", type=_size, default=8 * 1024 * 1024, metavar="BYTES",
                     help="the largest request body, e.g. 8M (default); a larger one gets 413")
    srv.add_argument("--buffer", type=_whole, default=10_000, metavar="N",
                     help="the detections each rule set keeps for subscribers that reconnect (default 10000)")


def serve(ns: argparse.Namespace, err: TextIO) -> int:
    """``etalis serve``, until it is stopped."""
    # the HTTP stack is loaded by this command only
    from ..service import ServeOptions, serve as serve_http

    return serve_http(ServeOptions(ns.rules, ns.host, ns.port, ns.token_file, ns.checkpoint, ns.max_body, ns.buffer),
                      err)
