"""A toy operator that is one entry of the operator table
(tests/prolog/toy/soon.pl), and a toy construct that is one entry and its
template (tests/prolog/toy/unless.pl), are read, compiled, detected,
explained and checked by the Python side with no other change
(docs/architecture.md, "Adding an operator").  It runs in a process of its own, so that the toy does not
reach the other tests; tests/prolog/test_operator_table.pl holds the
Prolog side (reading, priority, JSON, text)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import json, sys
from pyswip import Prolog
from etalis_py import Engine
from etalis_py.bridge._prolog import bridge
from etalis_py.rules.findings import check_text
bridge()
Prolog.consult(sys.argv[1])
rules = "h(X) <- a(X) soon b(X)."
with Engine.from_string(rules) as engine:
    result = engine.emit_many([("a", (1,), 1), ("b", (1,), 4), ("b", (1,), 9), ("a", (2,), 10), ("b", (2,), 16)])
    found = [[d.event, list(d.args), d.start, d.end] for d in result.detections]
print(json.dumps({"detections": found, "findings": [f.message for f in check_text(rules)]}))
"""


def test_a_toy_operator_needs_only_its_table_entry() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "tests" / "prolog" / "toy" / "soon.pl")],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "detections": [["h", [1], 1, 4]],
        "findings": ["no window bounds this rule's pending goals: every `a(X)` waits for `b(X)` "
                     "(one pending goal per occurrence, forever)"],
    }


CONSTRUCT_SCRIPT = """
import json, sys
from pyswip import Prolog
from etalis_py import Engine
from etalis_py.bridge._prolog import bridge
from etalis_py.rules.findings import check_text
bridge()
Prolog.consult(sys.argv[1])
rules = "h(X) <- (a(X) seq c(X)) unless b(X)."
events = [("a", (1,), 1), ("b", (1,), 2), ("c", (1,), 3), ("a", (2,), 4), ("c", (2,), 6), ("a", (3,), 7),
          ("b", (4,), 8), ("c", (3,), 9)]
with Engine.from_string(rules, explain=True) as engine:
    result = engine.emit_many(events)
    found = [[d.event, list(d.args), d.start, d.end, [[p.event, list(p.args), p.start] for p in d.provenance]]
             for d in result.detections]
print(json.dumps({"detections": found, "findings": [f.message for f in check_text(rules)]}))
"""


def test_a_toy_construct_needs_only_its_table_entry_and_its_template() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    r = subprocess.run([sys.executable, "-c", CONSTRUCT_SCRIPT, str(ROOT / "tests" / "prolog" / "toy" / "unless.pl")],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        # b(1) at 2 blocks a(1) seq c(1) over [1, 3]; b(4) does not block X = 3
        "detections": [["h", [2], 4, 6, [["a", [2], 4], ["c", [2], 6]]],
                       ["h", [3], 7, 9, [["a", [3], 7], ["c", [3], 9]]]],
        "findings": ["no window bounds this rule's pending goals: every `b(X)` is kept to block `a(X) seq c(X)` "
                     "(each occurrence, forever); every `a(X)` waits for `c(X)` (one pending goal per occurrence, "
                     "forever)"],
    }
