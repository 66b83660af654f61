"""Values, terms, patterns and rules of the reference evaluator.

Rule files are read by the engine's own reader (``RuleSet.from_text`` asks
Prolog for the rules as JSON), and turned here into Python values:
:data:`Ground` values, :data:`Term` terms with variables, :data:`Pattern`
trees and :class:`Rule` objects, with their text and their variables.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional, Union

from etalis_py._prolog import bridge, quote_atom
from etalis_py.events import Time


@dataclass(frozen=True)
class Real:
    """A Prolog float.  Kept apart from ``int`` so that 1 and 1.0 do not
    unify, as in Prolog (Python's ``1 == 1.0`` would conflate them)."""

    value: float


@dataclass(frozen=True)
class PString:
    """A Prolog string (``"text"``), distinct from the atom ``text``."""

    text: str


@dataclass(frozen=True)
class Compound:
    """A ground compound term ``functor(args...)``."""

    functor: str
    args: tuple["Ground", ...]


@dataclass(frozen=True)
class Opaque:
    """A ground term that a ``where`` condition made and that is only known
    by its quoted text (e.g. a list); it unifies with a variable only."""

    text: str


Ground = Union[int, Real, str, PString, Compound, Opaque]
"""A ground Prolog term; ``str`` is an atom."""


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Const:
    value: Ground


@dataclass(frozen=True)
class Struct:
    functor: str
    args: tuple["Term", ...]


Term = Union[Var, Const, Struct]


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


def prolog_text(value: Ground) -> str:
    """A ground term in Prolog syntax."""
    if isinstance(value, bool):
        raise TypeError("booleans are atoms here")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Real):
        return repr(value.value)
    if isinstance(value, str):
        return quote_atom(value)
    if isinstance(value, PString):
        return '"' + value.text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, Compound):
        return f"{quote_atom(value.functor)}({','.join(prolog_text(a) for a in value.args)})"
    return value.text


def term_from_json(j: Any) -> Term:
    """A term as the reader gives it in JSON (see ``rules(Source)``)."""
    if isinstance(j, bool):
        raise ValueError(f"unexpected JSON term {j!r}")
    if isinstance(j, int):
        return Const(j)
    if isinstance(j, float):
        return Const(Real(j))
    if "var" in j:
        return Var(j["var"])
    if "atom" in j:
        return Const(j["atom"])
    if "string" in j:
        return Const(PString(j["string"]))
    return Struct(j["functor"], tuple(term_from_json(a) for a in j["args"]))


def term_text(term: Term) -> str:
    """A term in .etl syntax (anonymous variables ``_G<n>`` as ``_``)."""
    if isinstance(term, Var):
        return "_" if re.fullmatch(r"_G\d+", term.name) else term.name
    if isinstance(term, Const):
        v = term.value
        if isinstance(v, str) and re.fullmatch(r"[a-z][A-Za-z0-9_]*", v):
            return v
        return prolog_text(v)
    return f"{quote_atom(term.functor) if not re.fullmatch(r'[a-z][A-Za-z0-9_]*', term.functor) else term.functor}" \
        f"({', '.join(term_text(a) for a in term.args)})"


def event_key(term: Term) -> tuple[str, int]:
    """Name and arity of an event term."""
    if isinstance(term, Struct):
        return term.functor, len(term.args)
    if isinstance(term, Const) and isinstance(term.value, str):
        return term.value, 0
    raise ValueError(f"{term!r} is not an event")


def term_vars(term: Term) -> set[str]:
    if isinstance(term, Var):
        return {term.name}
    if isinstance(term, Struct):
        return set().union(*(term_vars(a) for a in term.args)) if term.args else set()
    return set()


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
# Patterns and rules
# ---------------------------------------------------------------------------

TEMPORAL_OPS = (
    "seq", "and", "par", "before", "after", "meets", "met_by", "overlaps", "overlapped_by",
    "starts", "started_by", "during", "contains", "finishes", "finished_by", "equals",
)


@dataclass(frozen=True)
class EventP:
    event: Term


@dataclass(frozen=True)
class Binary:
    """``left op right`` for a temporal operator, ``or``, ``cnot`` or
    ``fnot``."""

    op: str
    left: "Pattern"
    right: "Pattern"


@dataclass(frozen=True)
class Where:
    pattern: "Pattern"
    goal: str


@dataclass(frozen=True)
class Within:
    pattern: "Pattern"
    window: Time


@dataclass(frozen=True)
class Aggregate:
    """``aggregate(Fun, P, Window, Result)``: ``fun`` is count, sum, avg,
    min or max, ``value`` the variable aggregated (None for count),
    ``window`` count(``size``) or time(``size``) by ``kind``, ``result``
    the variable bound to the aggregate."""

    fun: str
    value: Optional[str]
    pattern: "Pattern"
    kind: str
    size: Time
    result: str


Pattern = Union[EventP, Binary, Where, Within, Aggregate]

AGGREGATE_FUNCTIONS = ("count", "sum", "avg", "min", "max")
NEGATIONS = ("cnot", "fnot")


def pattern_from_json(j: Mapping[str, Any]) -> Pattern:
    op = j["op"]
    if op == "event":
        return EventP(term_from_json(j["event"]))
    if op == "where":
        return Where(pattern_from_json(j["pattern"]), str(j["goal"]))
    if op == "within":
        return Within(pattern_from_json(j["pattern"]), j["window"])
    if op in TEMPORAL_OPS or op in NEGATIONS or op == "or":
        return Binary(op, pattern_from_json(j["left"]), pattern_from_json(j["right"]))
    if op == "aggregate":
        value = j["value"]
        window = j["window"]
        return Aggregate(
            str(j["fun"]),
            None if value is None else str(value["var"]),
            pattern_from_json(j["pattern"]),
            str(window["kind"]),
            window["size"],
            str(j["result"]["var"]),
        )
    raise ValueError(f"the reference evaluator does not cover `{op}` patterns")


def pattern_text(p: Pattern) -> str:
    """A pattern in .etl syntax, every operand in parentheses."""
    if isinstance(p, EventP):
        return term_text(p.event)
    if isinstance(p, Binary):
        return f"({pattern_text(p.left)}) {p.op} ({pattern_text(p.right)})"
    if isinstance(p, Where):
        return f"({pattern_text(p.pattern)}) where ({p.goal})"
    if isinstance(p, Aggregate):
        fun = p.fun if p.value is None else f"{p.fun}({p.value})"
        return f"aggregate({fun}, ({pattern_text(p.pattern)}), {p.kind}({p.size!r}), {p.result})"
    return f"({pattern_text(p.pattern)}) within {p.window!r}"


@dataclass(frozen=True)
class Rule:
    head: Term
    pattern: Pattern
    label: str = ""

    def text(self) -> str:
        label = f"{self.label} : " if self.label else ""
        return f"{label}{term_text(self.head)} <- {pattern_text(self.pattern)}."


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
