"""Events over a TCP socket on 127.0.0.1, into etalis.

    python feed.py serve [--port 0] [--count 12] [--delay 0.05]
        listen on 127.0.0.1, print the port, send --count temperature
        readings as JSON lines to the first client, close, exit (it gives up
        after --wait seconds without a client)
    python feed.py read PORT
        copy what the server sends to stdout, until it closes: pipe it into
        `etalis run rules.etl --events -`
    python feed.py api [--count 12]
        both in one process: a server thread, and a client that emits each
        reading into an Engine as it arrives and prints the detections

Everything is bounded: the server sends --count readings and stops, the
readers stop when it closes the connection.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

RULES = Path(__file__).with_name("rules.etl")


TEMPS = (15, 20, 14, 26, 21, 18, 12, 17, 22, 25, 23, 16)


def readings(count: int) -> Iterator[dict[str, object]]:
    """``count`` readings of two stations (s1 at odd seconds, s0 at even
    ones), the temperatures of ``TEMPS`` over and over."""
    for i in range(1, count + 1):
        yield {"event": "temp", "args": [f"s{i % 2}", TEMPS[(i - 1) % len(TEMPS)]], "time": i}


def listen(port: int) -> socket.socket:
    server = socket.create_server(("127.0.0.1", port))
    return server


def serve(server: socket.socket, count: int, delay: float, wait: float) -> None:
    """Send the readings to the first client that connects, then close."""
    server.settimeout(wait)
    with server:
        connection, _ = server.accept()
        with connection:
            for reading in readings(count):
                connection.sendall((json.dumps(reading) + "\n").encode())
                time.sleep(delay)


def lines(port: int) -> Iterator[str]:
    """The lines the server at ``port`` sends, until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        yield from connection.makefile("r", encoding="utf-8")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="send readings to one client")
    s.add_argument("--port", type=int, default=0, help="the port (default: any free one, printed)")
    s.add_argument("--count", type=int, default=12, help="how many readings")
    s.add_argument("--delay", type=float, default=0.05, help="seconds between readings")
    s.add_argument("--wait", type=float, default=30, help="give up after this long without a client")
    r = sub.add_parser("read", help="copy the server's lines to stdout")
    r.add_argument("port", type=int, help="the server's port")
    a = sub.add_parser("api", help="server and Engine in one process")
    a.add_argument("--count", type=int, default=12, help="how many readings")
    ns = p.parse_args()

    if ns.command == "serve":
        server = listen(ns.port)
        print(server.getsockname()[1], flush=True)
        serve(server, ns.count, ns.delay, ns.wait)
    elif ns.command == "read":
        for line in lines(ns.port):
            sys.stdout.write(line)
            sys.stdout.flush()
    else:
        from etalis_py import Engine

        server = listen(0)
        sender = threading.Thread(target=serve, args=(server, ns.count, 0.0, 30.0))
        sender.start()
        with Engine.from_file(RULES) as engine:
            for line in lines(server.getsockname()[1]):
                reading = json.loads(line)
                for d in engine.emit(reading["event"], *reading["args"], at=reading["time"]):
                    print(d.to_json(), flush=True)
        sender.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
