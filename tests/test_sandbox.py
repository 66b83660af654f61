"""Sandbox mode: untrusted rule files may not run shell, file or network goals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from etalis_py import Detection, Engine, RuleError


@pytest.mark.parametrize(
    "rules,line,culprit",
    [
        ("c(X) <- a(X) where shell('touch /tmp/pwned').", 1, "shell/1"),
        ("c <- a.\nd <- b where open('/etc/passwd', read, _).", 2, "open/3"),
        ("c <- a where helper.\nhelper :- delete_file('/tmp/x').", 2, "delete_file/1"),
        ("c(X) <- a(X) where assertz(member(X, [])).", 1, "assertz/1"),
        ("c(X) <- a(X) where assertz((seen(X) :- shell(ls))).", 1, "assertz/1"),
        ("c <- a where tcp_connect(localhost:80, _, []).", 1, "tcp_connect/3"),
        ("c(N) <- aggregate(count, a where shell(ls), count(2), N).", 1, "shell/1"),
        ("c <- (a seq b) fnot (x where shell(ls)).", 1, "shell/1"),
        # the engine's own event/1 and ins_event_rule/1, called for another engine's module
        ("c <- a where etalis_rule_changes:raise_event(etalis_engine_0, x).", 1, "raise_event/2"),
        ("c <- a where etalis_rule_changes:rule_update(etalis_engine_0, ins(x <- y)).", 1, "rule_update/2"),
    ],
)
def test_sandbox_refuses_unsafe_goals_with_their_position(rules: str, line: int, culprit: str) -> None:
    with pytest.raises(RuleError) as info:
        Engine.from_string(rules, source="untrusted.etl", sandbox=True)
    assert (info.value.file, info.value.line) == ("untrusted.etl", line)
    assert culprit.split("/")[0] in info.value.message and info.value.message.startswith("sandbox:")


def test_sandbox_allows_pure_prolog_and_interval_builtins() -> None:
    rules = """
    hot(S, F, D) <- (reading(S, C) seq reading(S, C2)) where C2 > C, to_f(C2, F), duration(D).
    to_f(C, F) :- F is C * 9 / 5 + 32.
    """
    with Engine.from_string(rules, sandbox=True) as engine:
        engine.emit("reading", "x", 20, at=1)
        assert engine.emit("reading", "x", 30, at=4) == [Detection("hot", ("x", 86, 3), 1, 4)]


def test_trusted_rules_may_use_any_prolog(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    rules = f"c <- a where open('{marker}', write, S), close(S)."
    with Engine.from_string(rules, trusted=True) as engine:
        assert engine.emit("a", at=1) == [Detection("c", (), 1, 1)]
    assert marker.exists()


def test_check_and_run_take_sandbox(tmp_path: Path) -> None:
    rules = tmp_path / "r.etl"
    rules.write_text("c <- a where shell(ls).\n")
    r = subprocess.run([sys.executable, "-m", "etalis_py.cli", "check", str(rules), "--sandbox"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.startswith(f"{rules}:1:1: error: sandbox: shell/1 may not be called by rules from an untrusted source (it calls shell/2)")


def test_an_untrusted_file_may_declare_only_ontologies_of_its_own_folder(tmp_path: Path) -> None:
    # a rule file from elsewhere must not read any RDF file of the machine
    # into what its where conditions can query (and so into detections)
    (tmp_path / "private.ttl").write_text('<http://x/a> <http://x/b> "secret" .\n', encoding="utf-8")
    rules = tmp_path / "rules" / "r.etl"
    rules.parent.mkdir()
    rules.write_text("h(V) <- a where rdf(_, 'http://x/b', V).\n:- ontology('../private.ttl').\n", encoding="utf-8")
    with pytest.raises(RuleError) as info:
        Engine.from_file(rules)
    assert (info.value.file, info.value.line, info.value.column, info.value.message) == (
        str(rules), 2, 1, f"sandbox: the ontology {tmp_path / 'private.ttl'} lies outside the rule file's folder")
    engine = Engine.from_file(rules, trusted=True)
    try:
        assert [(d.event, d.args) for d in engine.emit("a", at=1)] == [("h", ("secret",))]
    finally:
        engine.close()
    # an ontology beside the rules, or below them, is fine
    (rules.parent / "own.ttl").write_text('<http://x/a> <http://x/b> "mine" .\n', encoding="utf-8")
    rules.write_text("h(V) <- a where rdf(_, 'http://x/b', V).\n:- ontology('own.ttl').\n", encoding="utf-8")
    engine = Engine.from_file(rules)
    try:
        assert [(d.event, d.args) for d in engine.emit("a", at=1)] == [("h", ("mine",))]
    finally:
        engine.close()
