"""etalis serve over real HTTP on loopback: rule sets, events, the
detection stream, webhooks, metrics, the token and bad input."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from etalis_py import Detection
from etalis_py.cli import main
from etalis_py.bridge.client import Client, ServiceError
from etalis_py.errors import EventError, RuleError
from etalis_py.events import Rejection

from service_helpers import Receiver, Server, events, start_server, stream_messages

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PAIR = "c(X) <- a(X) seq b(X).\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("serve")
    (folder / "token").write_text(TOKEN + "\n")
    (folder / "pair.etl").write_text(PAIR)
    running = start_server("pair.etl", "--token-file", "token", "--buffer", "4", "--max-body", "2K", cwd=folder)
    yield running
    assert running.stop() == -signal.SIGTERM


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=30) as c:
        yield c


def register(http: httpx.Client, text: str, name: str) -> str:
    reply = http.post("/rulesets", params={"name": name}, content=text)
    assert reply.status_code == 201, reply.text
    return str(reply.json()["id"])


def test_rule_file_of_the_command_line_is_registered_under_its_name(server: Server, http: httpx.Client) -> None:
    listed = {r["id"]: r for r in http.get("/rulesets").json()}
    assert listed["pair"]["name"] == "pair.etl"
    assert (listed["pair"]["rules"], listed["pair"]["reports"], listed["pair"]["policy"]) == (1, ["c/1"], "unrestricted")
    assert "etalis serve: no --token-file" not in "\n".join(server.printed)


def test_register_get_and_delete_a_rule_set(http: httpx.Client) -> None:
    reply = http.post("/rulesets", params={"name": "windy.etl"}, content="w(S) <- wind(S, V) where V > 30.\n")
    assert reply.status_code == 201
    body = reply.json()
    assert (body["id"], body["name"], body["rules"], body["reports"], body["findings"]) == \
        ("windy", "windy.etl", 1, ["w/1"], [])
    assert reply.headers["location"] == "/rulesets/windy"
    again = register(http, "w(S) <- wind(S, V) where V > 40.\n", "windy.etl")
    assert again == "windy-2"
    one = http.get("/rulesets/windy").json()
    assert (one["accepted"], one["pending"], one["pending_by_rule"], one["last_id"]) == (0, 0, {"line 1": 0}, 0)
    assert http.delete("/rulesets/windy").status_code == 204
    assert http.delete("/rulesets/windy-2").status_code == 204
    gone = http.get("/rulesets/windy")
    assert gone.status_code == 404
    assert gone.json()["error"].startswith("no rule set 'windy' (rule sets: ")


def test_a_warning_of_etalis_check_comes_with_the_registration(http: httpx.Client) -> None:
    reply = http.post("/rulesets", params={"name": "spell.etl"}, content="s(X) <- a(X) seq b(X).\nt <- s(1) seq s(2).\n")
    assert reply.status_code == 201
    codes = [(f["severity"], f["code"], f["line"]) for f in reply.json()["findings"]]
    assert codes == [("warning", "unbounded-memory", 1), ("warning", "unbounded-memory", 2)]
    assert http.delete("/rulesets/spell").status_code == 204


def test_a_bad_rule_file_is_400_with_line_column_message_and_hint(http: httpx.Client) -> None:
    reply = http.post("/rulesets", params={"name": "bad.etl"}, content="ok <- a seq b.\nc(X) <- a(X) seq.\n")
    assert reply.status_code == 400
    assert reply.json() == {
        "error": "the rule file is refused",
        "hint": "check the operators and parentheses, and end each clause with a full stop",
        "findings": [{"severity": "error", "code": "rule-error", "message": "syntax error: unbalanced operator",
                      "file": "bad.etl", "line": 2, "column": 16,
                      "hint": "check the operators and parentheses, and end each clause with a full stop",
                      "data": {}}]}
    assert "bad" not in [r["id"] for r in http.get("/rulesets").json()]


def test_a_hostile_rule_file_is_refused_and_nothing_of_it_runs(http: httpx.Client, tmp_path: Path) -> None:
    marker = tmp_path / "owned"
    text = f"h <- a where shell('touch {marker}').\n:- initialization(shell('touch {marker}')).\n"
    reply = http.post("/rulesets", params={"name": "evil.etl"}, content=text)
    assert reply.status_code == 400
    finding = reply.json()["findings"][0]
    assert (finding["file"], finding["line"]) == ("evil.etl", 1)
    assert finding["message"].startswith("sandbox: ")
    assert not marker.exists()


def test_events_one_an_array_and_json_lines_with_their_counts(http: httpx.Client) -> None:
    rs = register(http, PAIR, "counts.etl")
    one = http.post(f"/rulesets/{rs}/events", json={"event": "a", "args": [1], "time": 1})
    assert one.json() == {"read": 1, "accepted": 1, "rejected": [], "warnings": [], "detections": []}
    many = http.post(f"/rulesets/{rs}/events", json=[
        {"event": "b", "args": [1], "time": "1970-01-01T00:00:02Z"},
        {"event": "b", "args": [1], "time": 0},
        {"event": "a", "args": [2]},
        {"event": "", "args": [], "time": 3},
        5,
        {"event": "a", "args": [2], "time": 3}])
    assert many.status_code == 200
    assert many.json() == {
        "read": 6, "accepted": 2, "warnings": [],
        "rejected": [
            {"at": 2, "reason": "time 0 is earlier than the last accepted time 2.0 (events must arrive in time order)"},
            {"at": 3, "reason": 'missing "time" (or "start" and "end")'},
            {"at": 4, "reason": "event name '' is not a non-empty string"},
            {"at": 5, "reason": "5 is not an event: give an Event, a dict with event/args/time, or a tuple "
                                "(name, args, time) or (name, args, start, end)"}],
        "detections": [{"id": 1, "event": "c", "args": [1], "start": 1, "end": 2.0}]}
    body = '{"event": "b", "args": [2], "start": 4, "end": 5}\n\n{"event": "b", "args": [2], "time": 6\n' \
           '{"event": "b", "args": [3], "time": 7}\n'
    jl = http.post(f"/rulesets/{rs}/events", content=body, headers={"Content-Type": "application/x-ndjson"})
    assert jl.json() == {
        "read": 3, "accepted": 2, "warnings": [],
        "rejected": [{"at": 3, "reason": "not JSON: Expecting ',' delimiter"}],
        "detections": [{"id": 2, "event": "c", "args": [2], "start": 3, "end": 5}]}
    info = http.get(f"/rulesets/{rs}").json()
    assert (info["accepted"], info["rejected"], info["detections"], info["detected"]) == (5, 5, 2, {"c": 2})
    assert http.delete(f"/rulesets/{rs}").status_code == 204


def test_an_event_over_the_inference_limit_stops_its_request_with_422(http: httpx.Client) -> None:
    rs = register(http, "h(X) <- a(X) where spin(X).\nspin(X) :- spin(X).\n", "spin.etl")
    body = events(("b", [1], 1), ("", [], 2), ("b", [1], 0), ("a", [1], 2), ("a", [2], 3)) + [5]
    reply = http.post(f"/rulesets/{rs}/events", json=body)
    stopped = "event a(1) (at 4) took more than 10,000,000 inferences, the limit per event, in the where condition spin(1)"
    assert (reply.status_code, reply.json()) == (422, {
        "read": 4, "accepted": 1, "warnings": [], "detections": [], "stopped": stopped, "unread": 2,
        "rejected": [{"at": 2, "reason": "event name '' is not a non-empty string"},
                     {"at": 3, "reason": "time 0 is earlier than the last accepted time 1 (events must arrive in "
                                         "time order)"},
                     {"at": 4, "reason": stopped}]})
    # JSON lines: a line that is not JSON before the stop is rejected, one after it is not read
    text = '{"event": "b", "args": [2], "time": 4}\nnot json\n{"event": "a", "args": [3], "time": 5}\n' \
           'nor this\n{"event": "b", "args": [3], "time": 6}\n'
    reply = http.post(f"/rulesets/{rs}/events", content=text, headers={"Content-Type": "application/x-ndjson"})
    stopped = stopped.replace("a(1) (at 4)", "a(3) (at 3)").replace("spin(1)", "spin(3)")
    assert (reply.status_code, reply.json()) == (422, {
        "read": 3, "accepted": 1, "warnings": [], "detections": [], "stopped": stopped, "unread": 2,
        "rejected": [{"at": 2, "reason": "not JSON: Expecting value"}, {"at": 3, "reason": stopped}]})
    info = http.get(f"/rulesets/{rs}").json()
    assert (info["accepted"], info["rejected"]) == (2, 5)
    assert http.delete(f"/rulesets/{rs}").status_code == 204


@pytest.mark.parametrize("body, status, error", [
    (b'{"event": "a", "args": [1], "time": 1', 400, "malformed JSON at line 1, column 38: Expecting ',' delimiter"),
    (b"42", 400, "the body is a JSON number, not an event"),
    (b'"a"', 400, "the body is a JSON string, not an event"),
    (b"\xff\xfe", 400, "the body is not UTF-8 (line 1, column 1: byte 0xff)"),
    (b'[{"event": "a", "args": [1], "time": 1},\n {"event": "\xc3\xa9", "args": ["\xe9"], "time": 2}]', 400,
     "the body is not UTF-8 (line 2, column 27: byte 0xe9)"),
    (b"[" + b'{"event": "a", "args": [1], "time": 1},' * 60 + b"1]", 413,
     "the body has 2343 bytes, more than the 2048 this server takes"),
])
def test_bad_bodies(http: httpx.Client, body: bytes, status: int, error: str) -> None:
    reply = http.post("/rulesets/pair/events", content=body, headers={"Content-Type": "application/json"})
    assert (reply.status_code, reply.json()["error"]) == (status, error)


def test_a_wrong_byte_in_json_lines_rejects_its_line_and_a_key_no_event_has_its_item(http: httpx.Client) -> None:
    rs = register(http, "d(X) <- a(X).\n", "bytes.etl")
    body = b'{"event": "a", "args": [1], "time": 1}\n{"event": "a", "args": ["caf\xe9"], "time": 2}\n' \
           b'{"event": "a", "args": ["\xe2\x80\xa8"], "time": 3}\n'
    reply = http.post(f"/rulesets/{rs}/events", content=body, headers={"Content-Type": "application/x-ndjson"})
    assert reply.json() == {
        "read": 3, "accepted": 2, "warnings": [],
        "rejected": [{"at": 2, "reason": "not UTF-8 (column 29: byte 0xe9)"}],
        "detections": [{"id": 1, "event": "d", "args": [1], "start": 1, "end": 1},
                       {"id": 2, "event": "d", "args": ["\u2028"], "start": 3, "end": 3}]}
    # pandas' DataFrame.to_json(orient="records") of a table with a column "x"
    reply = http.post(f"/rulesets/{rs}/events", content=b'[{"event":"a","x":20,"time":4},{"event":"a","time":5}]')
    assert reply.json()["rejected"] == [
        {"at": 1, "reason": "unknown key 'x': an event has event, args and time (or start and end); "
                            "put the values in args"}]
    assert (reply.json()["read"], reply.json()["accepted"]) == (2, 1)
    assert http.delete(f"/rulesets/{rs}").status_code == 204


def test_a_rule_file_that_is_not_utf8_is_refused_at_its_line_and_column(http: httpx.Client) -> None:
    reply = http.post("/rulesets", params={"name": "latin.etl"}, content=b"c(X) <- a(X).\n% caf\xe9\n")
    hint = "save the rule file as UTF-8 (e.g. iconv -f WINDOWS-1252 -t UTF-8)"
    assert (reply.status_code, reply.json()) == (400, {
        "error": "the rule file is refused", "hint": hint,
        "findings": [{"severity": "error", "code": "rule-error", "message": "the rule file is not UTF-8: byte 0xe9",
                      "file": "latin.etl", "line": 2, "column": 6, "hint": hint, "data": {}}]})
    big = http.post("/rulesets", params={"name": "big.etl"}, content=b"% " + b"x" * 3000 + b"\n")
    assert (big.status_code, big.json()) == (413, {
        "error": "the body has 3003 bytes, more than the 2048 this server takes",
        "hint": "split the rules into smaller files, or start the server with a larger --max-body"})


def test_unknown_rule_set_is_404(http: httpx.Client) -> None:
    for reply in (http.post("/rulesets/nope/events", json=[]), http.get("/rulesets/nope"),
                  http.get("/rulesets/nope/detections"), http.delete("/rulesets/nope"),
                  http.post("/rulesets/nope/subscriptions", json={"url": "http://127.0.0.1:9/"})):
        assert reply.status_code == 404
        assert reply.json()["error"].startswith("no rule set 'nope' (rule sets: ")
    assert http.get("/no/such/path").status_code == 404


def test_writes_need_the_token_and_reads_do_not(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as anonymous:
        for reply in (anonymous.post("/rulesets", content=PAIR),
                      anonymous.post("/rulesets/pair/events", json=[]),
                      anonymous.delete("/rulesets/pair"),
                      anonymous.post("/rulesets/pair/events", json=[], headers={"Authorization": "Bearer wrong"})):
            assert reply.status_code == 401
            assert reply.headers["www-authenticate"] == "Bearer"
            assert reply.json() == {"error": "this request changes the server: it needs the bearer token",
                                    "hint": "send Authorization: Bearer TOKEN, the token of the server's --token-file"}
        assert anonymous.get("/rulesets/pair").status_code == 200
        assert anonymous.get("/healthz").json()["status"] == "ok"


def test_without_a_token_the_server_listens_on_loopback_only(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "etalis_py.cli", "serve", "--host", "0.0.0.0", "--port", "0"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == (
        "etalis serve: without --token-file the server listens on loopback only, not on 0.0.0.0\n"
        "  hint: give --token-file FILE (rule sets are code: every write then needs the bearer token), "
        "or --host 127.0.0.1\n")


def test_stream_numbers_detections_and_resumes_after_last_event_id(server: Server, http: httpx.Client) -> None:
    rs = register(http, PAIR, "stream.etl")
    url = f"{server.url}/rulesets/{rs}/detections"
    http.post(f"/rulesets/{rs}/events", json=events(("a", [1], 1), ("a", [2], 2), ("b", [1], 3), ("b", [2], 4)))
    first = stream_messages(url, 2, {"Last-Event-ID": "0"})
    assert [(m.kind, m.id, m.data) for m in first] == [
        ("detection", 1, {"id": 1, "event": "c", "args": [1], "start": 1, "end": 3}),
        ("detection", 2, {"id": 2, "event": "c", "args": [2], "start": 2, "end": 4})]
    http.post(f"/rulesets/{rs}/events", json=events(("a", [3], 5), ("b", [3], 6)))
    resumed = stream_messages(url, 1, {"Last-Event-ID": "2"})
    assert [(m.kind, m.id, m.detection) for m in resumed] == [("detection", 3, Detection("c", (3,), 5, 6))]
    # the buffer holds 4: a subscriber at 0 is told what fell out, then gets the rest
    http.post(f"/rulesets/{rs}/events", json=events(("a", [4], 7), ("a", [5], 8), ("b", [4], 9), ("b", [5], 10)))
    late = stream_messages(url, 5, {"Last-Event-ID": "0"})
    assert [(m.kind, m.id) for m in late] == [("missed", 1), ("detection", 2), ("detection", 3),
                                              ("detection", 4), ("detection", 5)]
    assert late[0].data == {"first": 1, "last": 1, "count": 1}
    assert f'etalis_subscriber_missed_detections_total{{kind="stream",ruleset="{rs}"}} 1.0' in \
        http.get("/metrics").text.splitlines()
    assert http.delete(f"/rulesets/{rs}").status_code == 204


def test_webhook_is_retried_until_delivered(server: Server, http: httpx.Client) -> None:
    rs = register(http, PAIR + "d(X) <- b(X) seq a(X).\n", "hooked.etl")
    receiver = Receiver(failing=1)
    try:
        made = http.post(f"/rulesets/{rs}/subscriptions", json={"url": receiver.url, "events": ["c"]})
        assert made.status_code == 201
        hook = made.json()["id"]
        http.post(f"/rulesets/{rs}/events", json=events(("a", [1], 1), ("b", [1], 2), ("a", [1], 3)))
        delivered = receiver.detections(1)
        assert delivered == [{"id": 1, "event": "c", "args": [1], "start": 1, "end": 2}]
        assert receiver.attempts == 2
        assert receiver.bodies[0]["ruleset"] == rs and receiver.bodies[0]["subscription"] == hook
        listed = http.get(f"/rulesets/{rs}/subscriptions").json()
        deadline = time.monotonic() + 20
        while listed[0]["delivered"] < 1 and time.monotonic() < deadline:   # the reply may still be on its way
            time.sleep(0.05)
            listed = http.get(f"/rulesets/{rs}/subscriptions").json()
        assert [(h["id"], h["events"], h["delivered"], h["failures"]) for h in listed] == [(hook, ["c"], 1, 1)]
        bad = http.post(f"/rulesets/{rs}/subscriptions", json={"url": "ftp://example.org/x"})
        assert (bad.status_code, bad.json()["error"]) == \
            (400, "url 'ftp://example.org/x' is not an absolute http:// or https:// URL")
        assert http.delete(f"/rulesets/{rs}/subscriptions/{hook}").status_code == 204
        assert http.get(f"/rulesets/{rs}/subscriptions").json() == []
    finally:
        receiver.close()
        http.delete(f"/rulesets/{rs}")


def test_metrics_count_events_detections_pending_goals_and_latency(server: Server, http: httpx.Client) -> None:
    rs = register(http, PAIR, "metered.etl")
    bad = {"event": "x", "args": "y", "time": 4}
    http.post(f"/rulesets/{rs}/events", json=events(("a", [1], 1), ("b", [1], 2), ("a", [2], 3)) + [bad])
    text = http.get("/metrics").text
    wanted = [f'etalis_events_accepted_total{{ruleset="{rs}"}} 3.0',
              f'etalis_events_rejected_total{{ruleset="{rs}"}} 1.0',
              f'etalis_detections_total{{event="c",ruleset="{rs}"}} 1.0',
              f'etalis_pending_goals{{rule="line 1",ruleset="{rs}"}} 2.0',
              f'etalis_feed_latency_seconds_count{{ruleset="{rs}"}} 1.0']
    assert [line for line in text.splitlines() if line in wanted] == wanted
    assert http.delete(f"/rulesets/{rs}").status_code == 204
    assert f'ruleset="{rs}"}} 2.0' not in http.get("/metrics").text.replace("pending_goals{rule=\"line 1\",", "")


def test_client_has_the_engine_names(server: Server) -> None:
    with Client(server.url, token=TOKEN) as client:
        rs = client.add_rules(PAIR, name="client.etl")
        assert client.ruleset == rs == "client"
        seen: list[Detection] = []
        client.on("c", seen.append)
        assert client.emit("a", 1, at=1) == []
        assert client.emit("b", 1, at="1970-01-01T00:00:02Z") == [Detection("c", (1,), 1, 2.0)]
        with pytest.raises(EventError, match="event 'b' rejected: time 0 is earlier than the last accepted"):
            client.emit("b", 1, at=0)
        result = client.emit_many([("a", [2], 3), ("b", (2,), 4), ("bad", "x", 5), ("a", [object()], 6)])
        assert (result.accepted, result.detections) == (2, [Detection("c", (2,), 3, 4)])
        assert [r.line for r in result.rejected] == [3, 4]
        assert result.rejected[0] == Rejection(3, "args 'x' is not a list")
        deadline = time.monotonic() + 20
        while len(seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen == [Detection("c", (1,), 1, 2.0), Detection("c", (2,), 3, 4)]
        with pytest.raises(RuleError) as bad:
            client.add_rules("c(X) <- a(X) seq.", name="bad.etl")
        assert (bad.value.file, bad.value.line, bad.value.column) == ("bad.etl", 1, 16)
        client.remove()
    with Client(server.url) as anonymous, pytest.raises(ServiceError, match="HTTP 401"):
        anonymous.add_rules(PAIR)


def test_openapi_document_names_every_endpoint(http: httpx.Client) -> None:
    doc = http.get("/openapi.json").json()
    assert doc["openapi"] == "3.1.0"
    assert sorted(doc["paths"]) == ["/healthz", "/metrics", "/rulesets", "/rulesets/{id}", "/rulesets/{id}/detections",
                                    "/rulesets/{id}/events", "/rulesets/{id}/subscriptions",
                                    "/rulesets/{id}/subscriptions/{sub}"]


def test_a_refused_rule_file_at_start_exits_2_with_its_position(tmp_path: Path) -> None:
    (tmp_path / "bad.etl").write_text("c(X) <- a(X) seq.\n")
    done = subprocess.run([sys.executable, "-m", "etalis_py.cli", "serve", "bad.etl", "--port", "0"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "etalis serve: no --token-file: anyone on this machine may change the rule sets; listening on loopback only\n"
        "bad.etl:1:16: error: syntax error: unbalanced operator\n"
        "  hint: check the operators and parentheses, and end each clause with a full stop\n")


@pytest.mark.parametrize("args, printed", [
    (["nosuch.etl"], "etalis serve: rule file nosuch.etl does not exist\n"),
    (["."], "etalis serve: rule file . is a directory, not a file\n"),
    (["--token-file", "nosuch"], "etalis serve: token file nosuch: No such file or directory\n"),
    (["--token-file", "pair.etl"],
     "etalis serve: token file pair.etl: give one token, a line without spaces (e.g. openssl rand -hex 32)\n"),
    (["--checkpoint", "pair.etl"], "etalis serve: checkpoint folder pair.etl: it is a file, not a folder\n"
                                   "  hint: give --checkpoint a folder this user may write (it is made if need be)\n"),
    (["--checkpoint", "pair.etl/x"], "etalis serve: checkpoint folder pair.etl/x: Not a directory\n"
                                     "  hint: give --checkpoint a folder this user may write (it is made if need be)\n"),
])
def test_a_bad_option_or_file_is_one_message_and_exit_2(args: list[str], printed: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pair.etl").write_text(PAIR)
    monkeypatch.chdir(tmp_path)
    assert main(["serve", *args]) == 2
    assert capsys.readouterr().err == printed


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_port_out_of_range_is_a_usage_error(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["serve", "--port", port])
    assert done.value.code == 2
    assert capsys.readouterr().err == (f"etalis serve: error: argument --port: not a port (0 to 65535): '{port}'\n"
                                       "  hint: etalis serve --help lists the options\n")


def test_ctrl_c_drains_and_exits_130(tmp_path: Path) -> None:
    (tmp_path / "pair.etl").write_text(PAIR)
    running = start_server("pair.etl", "--checkpoint", "saved", cwd=tmp_path)
    assert running.stop(signal.SIGINT) == 130
    deadline = time.monotonic() + 10     # the last line may still be on its way to the reading thread
    while running.printed[-1:] != ["etalis serve: stopped (Ctrl-C)"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running.printed[1:] == [f"etalis serve: listening on {running.url}/ (1 rule set, checkpoints in saved)",
                                   "etalis serve: stopped (Ctrl-C)"]
    assert sorted(p.name for p in (tmp_path / "saved").iterdir()) == ["pair.detections.jsonl", "pair.ruleset.json"]
