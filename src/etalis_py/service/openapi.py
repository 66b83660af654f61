"""The OpenAPI 3.1 document of the service, served at ``/openapi.json``."""

from __future__ import annotations

from typing import Any

from .. import __version__


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def _json(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def document(max_body: int) -> dict[str, Any]:
    """The document, with the server's largest body."""
    ruleset_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"},
                  "description": "the rule set's id (its file name's stem)"}
    secured: list[dict[str, list[str]]] = [{"bearer": []}]
    event = {
        "type": "object", "required": ["event"],
        "properties": {
            "event": {"type": "string", "minLength": 1}, "args": {"type": "array"},
            "time": {"oneOf": [{"type": "number"}, {"type": "string", "description": "ISO 8601"}]},
            "start": {"oneOf": [{"type": "number"}, {"type": "string"}]},
            "end": {"oneOf": [{"type": "number"}, {"type": "string"}]},
        },
    }
    detection = {"type": "object", "required": ["id", "event", "args", "start", "end"],
                 "properties": {"id": {"type": "integer"}, "event": {"type": "string"}, "args": {"type": "array"},
                                "start": {"type": "number"}, "end": {"type": "number"}}}
    bad = _error("the body is not what the endpoint takes")
    unauthorized = _error("no bearer token, or not the server's (with --token-file)")
    missing = _error("no such rule set")
    too_large = _error(f"the body is larger than {max_body} bytes")
    stopping = _error("the server is stopping")
    return {
        "openapi": "3.1.0",
        "info": {"title": "etalis serve", "version": __version__,
                 "description": "Rule sets of ETALIS event rules, fed with events over HTTP; detections as "
                                "replies, Server-Sent Events and webhooks (docs/service.md)."},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {"type": "object", "required": ["error"],
                          "properties": {"error": {"type": "string"}, "hint": {"type": "string"},
                                         "findings": {"type": "array"}}},
                "Event": event,
                "Detection": detection,
                "RuleSet": {"type": "object", "required": ["id", "name", "rules"],
                            "properties": {"id": {"type": "string"}, "name": {"type": "string"},
                                           "rules": {"type": "integer"}, "reports": {"type": "array"},
                                           "accepted": {"type": "integer"}, "rejected": {"type": "integer"},
                                           "detections": {"type": "integer"}, "last_id": {"type": "integer"}}},
                "Fed": {"type": "object", "required": ["read", "accepted", "rejected", "detections"],
                        "properties": {"read": {"type": "integer"}, "accepted": {"type": "integer"},
                                       "rejected": {"type": "array", "items": {
                                           "type": "object", "properties": {"at": {"type": "integer"},
                                                                            "reason": {"type": "string"}}}},
                                       "warnings": {"type": "array"},
                                       "detections": {"type": "array", "items": {"$ref": "#/components/schemas/Detection"}},
                                       "stopped": {"type": "string"}, "unread": {"type": "integer"}}},
                "Subscription": {"type": "object", "required": ["url"],
                                 "properties": {"url": {"type": "string", "format": "uri"},
                                                "events": {"type": "array", "items": {"type": "string"}}}},
            },
        },
        "paths": {
            "/healthz": {"get": {"summary": "liveness", "responses": {
                "200": _json("serving", {"type": "object"}), "503": _json("stopping", {"type": "object"})}}},
            "/metrics": {"get": {"summary": "Prometheus metrics", "responses": {
                "200": {"description": "the text format", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
            "/rulesets": {
                "get": {"summary": "the rule sets", "responses": {
                    "200": _json("the rule sets", {"type": "array", "items": {"$ref": "#/components/schemas/RuleSet"}})}},
                "post": {"summary": "register a rule file (sandboxed)", "security": secured,
                         "parameters": [{"name": "name", "in": "query", "schema": {"type": "string"},
                                         "description": "the file name the rule set is known by"}],
                         "requestBody": {"required": True, "content": {"text/plain": {"schema": {"type": "string"}}}},
                         "responses": {"201": _json("registered", {"$ref": "#/components/schemas/RuleSet"}),
                                       "400": _error("the rule file is refused: findings give line, column, message "
                                                     "and hint"),
                                       "401": unauthorized, "413": too_large, "503": stopping}},
            },
            "/rulesets/{id}": {
                "parameters": [ruleset_id],
                "get": {"summary": "a rule set, with its pending goals by rule", "responses": {
                    "200": _json("the rule set", {"$ref": "#/components/schemas/RuleSet"}), "404": missing}},
                "delete": {"summary": "remove a rule set", "security": secured, "responses": {
                    "204": {"description": "removed"}, "401": unauthorized, "404": missing, "503": stopping}},
            },
            "/rulesets/{id}/events": {
                "parameters": [ruleset_id],
                "post": {"summary": "feed events: one, an array, or JSON lines", "security": secured,
                         "requestBody": {"required": True, "content": {
                             "application/json": {"schema": {"oneOf": [
                                 {"$ref": "#/components/schemas/Event"},
                                 {"type": "array", "items": {"$ref": "#/components/schemas/Event"}}]}},
                             "application/x-ndjson": {"schema": {"type": "string"}}}},
                         "responses": {"200": _json("the counts and the detections", {"$ref": "#/components/schemas/Fed"}),
                                       "400": bad, "401": unauthorized, "404": missing, "413": too_large,
                                       "422": _json("an event went over the inference limit: the counts of what was "
                                                    "read before it", {"$ref": "#/components/schemas/Fed"}),
                                       "503": stopping}},
            },
            "/rulesets/{id}/detections": {
                "parameters": [ruleset_id,
                               {"name": "Last-Event-ID", "in": "header", "schema": {"type": "integer"},
                                "description": "the id of the last detection received"},
                               {"name": "after", "in": "query", "schema": {"type": "integer"},
                                "description": "as Last-Event-ID (0: the whole buffer)"}],
                "get": {"summary": "the detections as Server-Sent Events", "responses": {
                    "200": {"description": "event: detection (id: N), event: missed, event: end",
                            "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                    "400": bad, "404": missing}},
            },
            "/rulesets/{id}/subscriptions": {
                "parameters": [ruleset_id],
                "get": {"summary": "the webhooks", "responses": {"200": _json("the webhooks", {"type": "array"}),
                                                                 "404": missing}},
                "post": {"summary": "a webhook: detections POSTed to a URL, with retries", "security": secured,
                         "requestBody": {"required": True, "content": {"application/json": {
                             "schema": {"$ref": "#/components/schemas/Subscription"}}}},
                         "responses": {"201": _json("subscribed", {"type": "object"}), "400": bad,
                                       "401": unauthorized, "404": missing, "413": too_large, "503": stopping}},
            },
            "/rulesets/{id}/subscriptions/{sub}": {
                "parameters": [ruleset_id, {"name": "sub", "in": "path", "required": True, "schema": {"type": "string"}}],
                "delete": {"summary": "end a webhook", "security": secured, "responses": {
                    "204": {"description": "ended"}, "401": unauthorized, "404": missing, "503": stopping}},
            },
        },
    }
