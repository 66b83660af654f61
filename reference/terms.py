"""What the reference evaluator needs of rules beyond the rule tree.

The rules are read by the engine's own reader (``RuleSet.from_text`` asks
Prolog for the rules as JSON) into the shipped rule tree
(:mod:`etalis_py.rules.rules`); here are the rule sets, unification of terms with
ground values, and the variables and events of patterns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from etalis_py.bridge._prolog import bridge
from etalis_py.bridge.prolog_text import quote_atom
from etalis_py.rules.rules import (
    Aggregate, Binary, Compound, Const, EventP, Ground, Pattern, Real, Rule, Term, Var, Where,
    event_key, pattern_from_json, term_from_json, term_vars)

NEGATIONS = ("cnot", "fnot")
"""The negations the reference defines."""

AGGREGATE_FUNCTIONS = ("count", "sum", "avg", "min", "max")
"""The aggregate functions the reference defines."""


def ground_from_python(value: Any) -> Ground:
    """An event argument as a ground term (``str`` is an atom)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"argument {value!r} is not a finite number")
        return Real(value)
    if isinstance(value, str):
        return value
    raise ValueError(f"argument {value!r} of type {type(value).__name__} is not supported by the evaluator")


Bindings = frozenset[tuple[str, Ground]]


def match(term: Term, value: Ground, env: dict[str, Ground]) -> bool:
    """Unify ``term`` with the ground ``value``, extending ``env`` in place."""
    if isinstance(term, Var):
        if term.name in env:
            return env[term.name] == value
        env[term.name] = value
        return True
    if isinstance(term, Const):
        return term.value == value
    if not isinstance(value, Compound) or value.functor != term.functor or len(value.args) != len(term.args):
        return False
    return all(match(t, v, env) for t, v in zip(term.args, value.args))


def instantiate(term: Term, env: Mapping[str, Ground]) -> Ground:
    """The ground instance of ``term`` under ``env``."""
    if isinstance(term, Var):
        if term.name not in env:
            raise ValueError(f"variable {term.name} is not bound")
        return env[term.name]
    if isinstance(term, Const):
        return term.value
    return Compound(term.functor, tuple(instantiate(a, env) for a in term.args))


# ---------------------------------------------------------------------------
# Rule sets and patterns
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleSet:
    """Event rules as the project's reader parsed them, with the text they
    came from (which also holds the static rules for ``where``)."""

    text: str
    rules: tuple[Rule, ...]

    @classmethod
    def from_text(cls, text: str, source: str = "rules.etl") -> "RuleSet":
        """Parse with the engine's own reader; raises RuleError on errors."""
        header, _ = bridge().request(f"rules(text({quote_atom(source)}))", text)
        rules = tuple(
            Rule(term_from_json(r["head"]), pattern_from_json(r["pattern"]), str(r["label"]))
            for r in header["rules"]
        )
        return cls(text, rules)

    def heads(self) -> set[tuple[str, int]]:
        """Name and arity of every rule head: the reported events."""
        return {event_key(r.head) for r in self.rules}


def has_negation(p: Pattern) -> bool:
    """Whether p uses ``cnot`` or ``fnot``."""
    if isinstance(p, EventP):
        return False
    if isinstance(p, Binary):
        return p.op in NEGATIONS or has_negation(p.left) or has_negation(p.right)
    return has_negation(p.pattern)


def has_aggregate(p: Pattern) -> bool:
    if isinstance(p, EventP):
        return False
    if isinstance(p, Binary):
        return has_aggregate(p.left) or has_aggregate(p.right)
    return isinstance(p, Aggregate) or has_aggregate(p.pattern)


def pattern_events(p: Pattern) -> set[tuple[str, int]]:
    """Name and arity of every event that p uses."""
    if isinstance(p, EventP):
        return {event_key(p.event)}
    if isinstance(p, Binary):
        return pattern_events(p.left) | pattern_events(p.right)
    return pattern_events(p.pattern)


def aggregate_dependent(rules: Iterable[Rule]) -> set[tuple[str, int]]:
    """The rule heads whose occurrences depend on an aggregate: rules with
    an aggregate, and rules that use such heads, transitively."""
    rules = list(rules)
    out = {event_key(r.head) for r in rules if has_aggregate(r.pattern)}
    while True:
        more = {event_key(r.head) for r in rules if pattern_events(r.pattern) & out} - out
        if not more:
            return out
        out |= more




_VAR_TOKEN = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\"|0'.|([A-Z_][A-Za-z0-9_]*)")


def goal_variables(goal: str) -> list[str]:
    """The named variables of a goal's text, in order of appearance."""
    names: list[str] = []
    for m in _VAR_TOKEN.finditer(goal):
        name = m.group(1)
        if name and name != "_" and name not in names:
            names.append(name)
    return names


def pattern_variables(p: Pattern) -> set[str]:
    """The named variables of p, in its events and conditions."""
    if isinstance(p, EventP):
        return term_vars(p.event) - {"_"}
    if isinstance(p, Binary):
        return pattern_variables(p.left) | pattern_variables(p.right)
    if isinstance(p, Where):
        return pattern_variables(p.pattern) | set(goal_variables(p.goal))
    if isinstance(p, Aggregate):
        return pattern_variables(p.pattern) | {p.result} | ({p.value} if p.value else set())
    return pattern_variables(p.pattern)


DELAYING = ("seq", "before")
"""Operators whose left operand only waits: recursion may go through it."""
WIDENING: Mapping[str, str] = {
    "seq": "right", "before": "right", "cnot": "right", "after": "left", "overlapped_by": "left",
    "finishes": "left", "overlaps": "right", "finished_by": "right",
}
"""The operand of each operator whose occurrence completes it at once, but
always over a strictly wider interval: recursion through it ends."""
