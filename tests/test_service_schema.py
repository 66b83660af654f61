"""schemathesis against etalis serve's OpenAPI document: requests made
from the document (valid and not) get no 500 from a real server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from schemathesis.core.result import Ok
from hypothesis import HealthCheck, given, settings

from etalis_py.service.openapi import document

from service_helpers import Server, start_server

TOKEN = "schema-token"
MAX_BODY = 64 * 1024

# Left out: webhook URLs (a generated one could name any host, and the
# tests send traffic to loopback only) and the detection stream (it does
# not end; test_service.py reads it).
schema = schemathesis.openapi.from_dict(document(MAX_BODY)) \
    .exclude(method="POST", path="/rulesets/{id}/subscriptions") \
    .exclude(path="/rulesets/{id}/detections")

schemathesis.serializer.alias("application/x-ndjson", "text/plain")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("schema")
    (folder / "token").write_text(TOKEN)
    (folder / "pair.etl").write_text("c(X) <- a(X) seq b(X).\n")
    running = start_server("pair.etl", "--token-file", "token", "--max-body", str(MAX_BODY), cwd=folder)
    yield running
    running.stop()


# One test an operation, each with an id of its own (pytest-xdist hands
# tests to its workers by id, and schemathesis's own parametrize gives
# every operation the test function's).
OPERATIONS = [result.ok() if isinstance(result, Ok) else pytest.fail(f"no operation: {result.err()}")
              for result in schema.get_all_operations()]


@pytest.mark.parametrize("label", [operation.label for operation in OPERATIONS])
def test_no_request_of_the_document_gets_a_500(label: str, served: Server) -> None:
    operation = next(operation for operation in OPERATIONS if operation.label == label)

    @given(case=operation.as_strategy())
    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    def no_500(case: schemathesis.Case[Any]) -> None:
        response = case.call(base_url=served.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert response.status_code < 500, (case.method, case.path, response.status_code, response.text[:500])

    no_500()


def test_the_document_is_the_one_served(served: Server) -> None:
    assert httpx.get(f"{served.url}/openapi.json").json() == document(MAX_BODY)
