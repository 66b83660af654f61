"""The curl examples of docs/service.md, run in their order against a
real ``etalis serve`` on loopback, print what the page shows."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from service_helpers import Server, start_server

DOC = Path(__file__).resolve().parent.parent / "docs" / "service.md"
EXAMPLE = re.compile(r"```sh\n(curl .*?)\n```\n\n```(json|text)\n(.*?)```", re.S)
CREATED = re.compile(r'"created":[0-9.]+')


def examples() -> list[tuple[str, str, str]]:
    return [(m.group(1), m.group(2), m.group(3)) for m in EXAMPLE.finditer(DOC.read_text(encoding="utf-8"))]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(cwd=tmp_path_factory.mktemp("docs"))
    yield running
    running.stop()


def test_the_curl_examples_print_what_the_page_shows(server: Server) -> None:
    assert shutil.which("curl"), "curl is installed by make setup"
    found = examples()
    assert [kind for _, kind, _ in found] == ["json", "json", "json", "text"]
    for command, kind, shown in found:
        command = command.replace("http://127.0.0.1:8080", server.url)
        if kind == "text":      # a stream does not end: what it sent within a few seconds
            command = command.replace("curl -sN ", "curl -sN --max-time 3 ")
        printed = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60).stdout
        if kind == "json":
            assert CREATED.sub('"created":0', printed) == CREATED.sub('"created":0', shown.strip()), command
        else:
            assert printed.startswith(shown), command
