"""A reference evaluator of the declarative semantics, and differential testing.

The ETALIS paper defines what a rule base means for an event stream: a unique
minimal model, a set of (event, interval) pairs.  :func:`evaluate` computes
that model for a finite stream straight from the definitions, by naive
bottom-up saturation: evaluate every rule's pattern over all facts known so
far, add what the heads give, and repeat until nothing changes.  It is slow on
purpose and shares no code with the engine except the reader (so both sides
read the same rules) and Prolog itself (to run ``where`` conditions against
the file's static rules).

The rest of the module holds the engine to it: :func:`check_case` runs one
rule set and stream through both, :func:`random_case` makes random ones, and
:func:`shrink_case` cuts a failing case down to a small one.

Semantics, for sub-pattern intervals A = [a1, a2] and B = [b1, b2]:

- an atomic event that occurs at t (or over [t1, t2]) is in the model there;
- a rule ``h <- p`` puts h, with the rule's bindings, wherever p holds;
- ``A seq B`` (and ``before``): a2 < b1, over [a1, b2]; ``A after B`` is
  ``B seq A``;
- ``A and B``: over [min(a1, b1), max(a2, b2)]; ``A par B`` likewise when
  max(a1, b1) < min(a2, b2);
- ``A or B``: wherever A or B holds;
- the Allen relations by their definitions, over the span of both intervals;
- ``(A seq B) cnot C``: ``A seq B`` with no C over [c1, c2], a2 < c1 and
  c2 < b1 (C's variables that A and B bind must agree);
- ``P fnot C``: P over [t1, t2] with no C over [c1, c2], t1 < c1 and
  c2 < t2 (C's variables that P binds must agree);
- ``P where G``: P, and G succeeds with P's bindings; a condition is a
  test, not a generator: its solutions give one occurrence for each
  distinct binding of the variables that the rest of the rule uses (the
  same binding, however many solutions, one); start/1, end/1, duration/1
  (and t1/1, t2/1) in G refer to P's interval;
- ``P within D``: P over [t1, t2] with t2 - t1 <= D.

- ``aggregate(Fun, P, Window, R)``: at each occurrence of P, the
  aggregate over a window of the occurrences before it; the paper does not
  define these, so the evaluator follows the engine's documented behaviour
  (the order of occurrences, windows and intervals are given at
  :func:`evaluate`).

``iteration`` and ``any`` are covered through the reader, which unrolls
them into these operators.

Operands may be filled by one and the same occurrence where the definitions
allow it, and events derived at time t feed rules at the same t.  The events
of a cycle of rules that can derive an occurrence from itself at the same
time (:func:`repeating_events`) are facts of the model once each: each of
their distinct occurrences counts as one derivation.  A ``where``
condition that raises an error fails from that point on, as in the engine.
Every way of deriving a fact counts: an engine that reports every
derivation (`unrestricted`) detects a fact as often as the model derives it
(:attr:`Model.counts`), and with ``provenance=True`` the evaluator gives
the stream events of each derivation (:attr:`Model.explained`).

Values follow Prolog unification: the integer 1 and the float 1.0 differ.
Event arguments may be integers, floats, atoms (Python ``str``) and booleans
(the atoms ``true`` and ``false``).
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Protocol, TypeVar, Union

from ._prolog import bridge, quote_atom
from .engine import Engine
from .errors import InferenceLimitError
from .events import Detection, Event, Time

# ---------------------------------------------------------------------------
# Values and terms
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Facts and models
# ---------------------------------------------------------------------------


def reported_value(value: Any) -> Any:
    """A value in the form the engine reports it: atoms and strings as str,
    numbers as int or float, other terms as their quoted text."""
    if isinstance(value, Real):
        return value.value
    if isinstance(value, PString):
        return value.text
    if isinstance(value, Opaque):
        return value.text
    if isinstance(value, Compound):
        return prolog_text(value)
    return value


def _typed(value: Any) -> Any:
    if isinstance(value, list):
        return ("list", tuple(_typed(v) for v in value))
    return (type(value).__name__, value)


@dataclass(frozen=True)
class Fact:
    """One (event, interval) of a model, in the engine's reported form.

    Two facts are equal when event, arguments (strictly: 1 is not 1.0) and
    interval (numerically: 1 equals 1.0) are.
    """

    event: str
    args: tuple[Any, ...]
    start: Time
    end: Time

    def _key(self) -> tuple[Any, ...]:
        return (self.event, tuple(_typed(a) for a in self.args), self.start, self.end)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Fact) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @classmethod
    def from_detection(cls, d: Detection) -> "Fact":
        return cls(d.event, tuple(d.args), d.start, d.end)

    def text(self) -> str:
        args = f"({', '.join(repr(a) for a in self.args)})" if self.args else ""
        return f"{self.event}{args} [{self.start}, {self.end}]"


@dataclass(frozen=True)
class Model:
    """The minimal model: ``facts`` holds every (event, interval) of it,
    ``derived`` the ones that some rule puts there (a stream event that no
    rule derives is in ``facts`` only).  ``derivations`` counts the ways the
    rules derive facts and sub-patterns, the work an engine that does not
    share duplicates must do; None when it is unbounded (a cycle that does
    not go through time)."""

    facts: frozenset[Fact]
    derived: frozenset[Fact]
    derivations: Optional[int]
    counts: Mapping[Fact, int] = field(default_factory=dict)
    """How many ways the rules derive each derived fact: how often an
    engine that reports every derivation (`unrestricted`) detects it."""
    explained: Optional[Mapping[Fact, Mapping[tuple[Fact, ...], int]]] = None
    """With ``evaluate(..., provenance=True)``: for each derived fact, the
    provenance of each of its derivations (the stream events used, through
    every rule, in the order of the patterns' operands; none for an
    aggregate and for a negated pattern), with how many derivations have
    it."""

    def reported(self, events: Iterable[tuple[str, int]]) -> frozenset[Fact]:
        """The derived facts of the given (name, arity) events."""
        wanted = set(events)
        return frozenset(f for f in self.derived if (f.event, len(f.args)) in wanted)

    def reported_counts(self, events: Iterable[tuple[str, int]]) -> Counter[Fact]:
        """The derived facts of the given events, each as often as it is
        derived."""
        wanted = set(events)
        return Counter({f: n for f, n in self.counts.items() if (f.event, len(f.args)) in wanted})


class Uncheckable(Exception):
    """The evaluator cannot give the model of a case."""


# A model with at least this many derivations may make an engine reach its
# inference limit on one event (each derivation costs tens of inferences).
LARGE_MODEL = 20_000


class TooLarge(Uncheckable):
    """The evaluation needs more work than its budget allows."""


class OrderDependent(Uncheckable):
    """An aggregate's result depends on the order in which the engine
    derives occurrences that one event completes (see :func:`evaluate`)."""


# ---------------------------------------------------------------------------
# where conditions, run by Prolog
# ---------------------------------------------------------------------------


class GoalSolver(Protocol):
    def solve(self, goal: str, env: Mapping[str, Ground], start: Time, end: Time) -> list[dict[str, Ground]]:
        """The solutions of ``goal`` with ``env`` bound and the interval
        [start, end]: for each, the values of the goal's other variables."""
        ...


_VAR_TOKEN = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\"|0'.|([A-Z_][A-Za-z0-9_]*)")
_INTERVAL_BUILTIN = re.compile(r"(?<![A-Za-z0-9_'])(start|t1|end|t2|duration)\(")
_BUILTIN_VAR = {"start": "EvalT1_", "t1": "EvalT1_", "end": "EvalT2_", "t2": "EvalT2_", "duration": "EvalDur_"}


def goal_variables(goal: str) -> list[str]:
    """The named variables of a goal's text, in order of appearance."""
    names: list[str] = []
    for m in _VAR_TOKEN.finditer(goal):
        name = m.group(1)
        if name and name != "_" and name not in names:
            names.append(name)
    return names


def _interval_value(t: Time) -> str:
    return str(t) if isinstance(t, int) else repr(float(t))


class PrologGoals:
    """Runs ``where`` conditions in an engine made from the rule text, so
    that the file's static rules are visible, as they are to the engine.

    The interval builtins are bound by rewriting them into unifications
    with the interval (``start(X)`` becomes ``EvalT1_ = X``); goals that use
    start/end/duration etc. as data terms are rewritten too.
    """

    def __init__(self, text: str) -> None:
        self._engine = Engine.from_string(text, only_rules=[])     # the static rules are enough
        self._cache: dict[tuple[Any, ...], list[dict[str, Ground]]] = {}
        self.warnings: list[str] = []

    def close(self) -> None:
        self._engine.close()

    def __enter__(self) -> "PrologGoals":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def solve(self, goal: str, env: Mapping[str, Ground], start: Time, end: Time) -> list[dict[str, Ground]]:
        names = goal_variables(goal)
        bound = tuple((n, env[n]) for n in names if n in env)
        free = [n for n in names if n not in env]
        uses_interval = _INTERVAL_BUILTIN.search(goal) is not None
        key = (goal, bound, (start, end) if uses_interval else None)
        if key in self._cache:
            return self._cache[key]
        parts = [f"{n} = {prolog_text(v)}" for n, v in bound]
        body = goal
        if uses_interval:
            parts += [f"EvalT1_ = {_interval_value(start)}", f"EvalT2_ = {_interval_value(end)}",
                      "EvalDur_ is EvalT2_ - EvalT1_"]
            body = _INTERVAL_BUILTIN.sub(lambda m: f"=({_BUILTIN_VAR[m.group(1)]},", goal)
        types = [
            f"( integer({n}) -> {n}_t = i ; float({n}) -> {n}_t = f ; atom({n}) -> {n}_t = a"
            f" ; string({n}) -> {n}_t = s ; var({n}) -> {n}_t = v"
            f" ; {n}_t = c, format(string({n}_q), \"~q\", [{n}]) )"
            for n in free
        ]
        query = f"catch(({', '.join(parts + ['(' + body + ')'] + types)}), EvalError_, true)"
        header, _ = bridge().request(f"solve({self._engine._name})", query)
        solutions: list[dict[str, Ground]] = []
        for s in header["solutions"]:
            if s.get("EvalError_") is not None:
                self.warnings.append(f"where condition {goal!r} raised: {s['EvalError_']}")
                break
            values: dict[str, Ground] = {}
            for n in free:
                kind = s[f"{n}_t"]
                if kind == "v":
                    continue
                values[n] = _typed_value(kind, s[n], s.get(f"{n}_q"))
            solutions.append(values)
        self._cache[key] = solutions
        return solutions

    def quoted(self, value: Ground) -> str:
        """The text ``~q`` gives for a ground term (as the engine reports it)."""
        header, _ = bridge().request(f"solve({self._engine._name})",
                                     f"format(string(S), \"~q\", [{prolog_text(value)}])")
        return str(header["solutions"][0]["S"])


def _typed_value(kind: str, value: Any, quoted: Any) -> Ground:
    if kind == "i":
        return int(value)
    if kind == "f":
        return Real(float(value))
    if kind == "a":
        return str(value)
    if kind == "s":
        return PString(str(value))
    return Opaque(str(quoted))


# ---------------------------------------------------------------------------
# The evaluator
# ---------------------------------------------------------------------------

Interval = tuple[Time, Time]
Match = tuple[Bindings, Time, Time]
"""An occurrence of a pattern: its variable bindings and interval."""

FactKey = tuple[str, tuple[Ground, ...], Time, Time]


def pl_min(x: Time, y: Time) -> Time:
    """Prolog's min/2: of two equal numbers of different types, the float."""
    if x < y:
        return x
    if y < x:
        return y
    return x if isinstance(x, float) else y


def pl_max(x: Time, y: Time) -> Time:
    """Prolog's max/2: of two equal numbers of different types, the float."""
    if x > y:
        return x
    if y > x:
        return y
    return x if isinstance(x, float) else y


def temporal(op: str, a: Interval, b: Interval) -> Optional[Interval]:
    """The interval of ``A op B`` for operand intervals a and b, or None
    when the operator's condition does not hold."""
    a1, a2 = a
    b1, b2 = b
    span = (pl_min(a1, b1), pl_max(a2, b2))
    if op in ("seq", "before"):
        return (a1, b2) if a2 < b1 else None
    if op == "after":
        return (b1, a2) if b2 < a1 else None
    if op == "and":
        return span
    if op == "par":
        return span if max(a1, b1) < min(a2, b2) else None
    if op == "meets":
        return (a1, b2) if a2 == b1 else None
    if op == "met_by":
        return (b1, a2) if b2 == a1 else None
    if op == "overlaps":
        return (a1, b2) if a1 < b1 < a2 < b2 else None
    if op == "overlapped_by":
        return (b1, a2) if b1 < a1 < b2 < a2 else None
    if op == "starts":
        return (b1, b2) if a1 == b1 and a2 < b2 else None
    if op == "started_by":
        return (a1, a2) if a1 == b1 and b2 < a2 else None
    if op == "during":
        return (b1, b2) if b1 < a1 and a2 < b2 else None
    if op == "contains":
        return (a1, a2) if a1 < b1 and b2 < a2 else None
    if op == "finishes":
        return (b1, b2) if a2 == b2 and b1 < a1 else None
    if op == "finished_by":
        return (a1, a2) if a2 == b2 and a1 < b1 else None
    if op == "equals":
        return (a1, a2) if a1 == b1 and a2 == b2 else None
    raise ValueError(f"unknown operator {op!r}")


def _join(x: Bindings, y: Bindings) -> Optional[Bindings]:
    """The union of two bindings, or None when they disagree."""
    dx = dict(x)
    for name, value in y:
        if name in dx and dx[name] != value:
            return None
    return x | y


Annotation = tuple[int, tuple[int, ...]]
"""What the evaluator records of a derivation besides its number: the
position in the stream of the event that completes it (its trigger: the
last of the stream events it uses, through every rule), and its provenance
(the positions of those stream events, in the order of the operands)."""


@dataclass(eq=True)
class Derivations:
    """The derivations of one occurrence, as how many there are of each
    annotation.  A product combines every derivation of one operand with
    every one of the other (the later trigger; the provenances one after
    the other), a sum puts them together."""

    items: dict[Annotation, int]

    def __mul__(self, other: "Weight") -> "Derivations":
        if isinstance(other, int):
            return Derivations({a: n * other for a, n in self.items.items()})
        out: dict[Annotation, int] = {}
        for (t1, p1), n1 in self.items.items():
            for (t2, p2), n2 in other.items.items():
                key = (t1 if t1 >= t2 else t2, p1 + p2)
                out[key] = out.get(key, 0) + n1 * n2
        return Derivations(out)

    def __rmul__(self, other: int) -> "Derivations":
        return self * other

    def __add__(self, other: "Weight") -> "Derivations":
        if isinstance(other, int):
            if other:
                raise TypeError("a plain count cannot be added to annotated derivations")
            return self
        out = dict(self.items)
        for a, n in other.items.items():
            out[a] = out.get(a, 0) + n
        return Derivations(out)

    def __radd__(self, other: int) -> "Derivations":
        return self + other

    def total(self) -> int:
        return sum(self.items.values())


Weight = Union[int, Derivations]
"""The derivations of an occurrence: how many (when the evaluation needs
no more), or :class:`Derivations`."""


def _total(w: Weight) -> int:
    return w if isinstance(w, int) else w.total()


def _add_to(out: dict[Any, Weight], key: Any, w: Weight) -> None:
    old = out.get(key)
    out[key] = w if old is None else old + w


_K = TypeVar("_K")


def _merge(*parts: Mapping[_K, Weight]) -> dict[_K, Weight]:
    out: dict[_K, Weight] = {}
    for part in parts:
        for key, w in part.items():
            _add_to(out, key, w)
    return out


# Which variables an aggregate groups by depends on where it stands in its
# rule: the engine's binarizer (binarize.pl) hands each sub-pattern the
# variables that the rest of the rule uses ("outside"), and each sub-pattern
# carries out the variables of its own that are needed there.  These
# functions follow it.


@functools.lru_cache(maxsize=8192)
def exported_variables(p: Pattern, outside: frozenset[str]) -> frozenset[str]:
    """The variables an occurrence of p carries out of it, where the rest
    of the rule uses ``outside``."""
    if isinstance(p, EventP):
        return frozenset(term_vars(p.event) - {"_"})
    if isinstance(p, Binary) and p.op == "cnot":
        seq = _cnot_sequence(p)
        oa, ob, _ = _cnot_outsides(p, outside)
        return exported_variables(seq.left, oa) | exported_variables(seq.right, ob)
    if isinstance(p, Binary) and p.op == "fnot":
        return exported_variables(p.left, _fnot_outsides(p, outside)[0])
    if isinstance(p, Binary):
        ol, orr = _operand_outsides(p, outside)
        el = exported_variables(p.left, ol)
        er = exported_variables(p.right, orr)
        return el & er if p.op == "or" else el | er
    if isinstance(p, Where):
        goal = frozenset(goal_variables(p.goal))
        return exported_variables(p.pattern, outside | goal) | (goal & outside)
    if isinstance(p, Aggregate):
        return frozenset(aggregate_group(p, outside)) | {p.result}
    return exported_variables(p.pattern, outside)


def aggregate_group(p: Aggregate, outside: frozenset[str]) -> tuple[str, ...]:
    """The variables by which the aggregate p groups its occurrences: those
    of its pattern that the rest of the rule (``outside``) uses, except the
    aggregated one."""
    return tuple(sorted((exported_variables(p.pattern, outside) & outside) - {p.value or ""}))


def _operand_outsides(p: Binary, outside: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """What the rest of the rule uses, seen from the left and the right
    operand of a temporal operator or `or`."""
    ol = outside | frozenset(pattern_variables(p.right))
    return ol, outside | exported_variables(p.left, ol)


def _cnot_sequence(p: Binary) -> Binary:
    seq = p.left
    if not (isinstance(seq, Binary) and seq.op == "seq"):
        raise ValueError("cnot needs a sequence on its left: (A seq B) cnot C")
    return seq


def _cnot_outsides(p: Binary, outside: frozenset[str]) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """What the rest of the rule uses, seen from A, B and C of
    ``(A seq B) cnot C``."""
    seq = _cnot_sequence(p)
    oseq = outside | frozenset(pattern_variables(p.right))
    oa = oseq | frozenset(pattern_variables(seq.right))
    ea = exported_variables(seq.left, oa)
    ob = oseq | ea
    return oa, ob, ea | exported_variables(seq.right, ob) | outside


def _fnot_outsides(p: Binary, outside: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """What the rest of the rule uses, seen from P and C of ``P fnot C``."""
    op = outside | frozenset(pattern_variables(p.right))
    return op, outside | exported_variables(p.left, op)


@dataclass(frozen=True)
class _Context:
    """Where a sub-pattern stands: the narrowest window around it, and the
    variables the rest of the rule uses."""

    window: float
    outside: frozenset[str]


_FREE = _Context(math.inf, frozenset())

_Occurrence = tuple[int, Time, Time, Optional[Ground]]
"""An occurrence an aggregate takes in: trigger, start, end and value."""


def _number(value: Optional[Ground]) -> Optional[Union[int, float]]:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Real):
        return value.value
    return None


def _as_ground(x: Union[int, float]) -> Ground:
    return Real(x) if isinstance(x, float) else x


def aggregate_value(fun: str, values: Sequence[Optional[Ground]]) -> Ground:
    """The aggregate ``fun`` of the values of a window (numbers, in the
    order the occurrences came), as Prolog computes it: ``sum`` adds the
    integers exactly and then the sum of the floats, if there are any;
    ``avg`` is Sum / N, an integer when it divides evenly; of equal numbers
    of different types ``min`` and ``max`` give the float."""
    if fun == "count":
        return len(values)
    nums = [_number(v) for v in values]
    numbers = [x for x in nums if x is not None]
    if len(numbers) != len(nums) or not numbers:
        raise ValueError(f"aggregate {fun} over non-numbers {values!r}")
    if fun in ("sum", "avg"):
        # the integers exactly, plus the floats (as the engine keeps them)
        total: Union[int, float] = sum(x for x in numbers if isinstance(x, int))
        floats = [x for x in numbers if isinstance(x, float)]
        if floats:
            float_part = 0.0
            for x in floats:
                float_part += x
            total = total + float_part
        if fun == "sum":
            return _as_ground(total)
        if isinstance(total, int) and total % len(numbers) == 0:
            return total // len(numbers)
        return Real(total / len(numbers))
    best = numbers[0]
    for x in numbers[1:]:
        best = pl_min(best, x) if fun == "min" else pl_max(best, x)
    return _as_ground(best)


_MAX_TIE_ORDERS = 120


def _tie_orders(occurrences: Sequence[_Occurrence]) -> Iterator[list[_Occurrence]]:
    """The other orders of a group's occurrences (sorted by trigger) in
    which the engine might derive them: those that one event completes
    (same trigger) in any order; occurrences with the same start and value
    are interchangeable.  Raises OrderDependent when there are too many to
    try."""
    blocks: list[list[_Occurrence]] = []
    for o in occurrences:
        if blocks and blocks[-1][0][0] == o[0]:
            blocks[-1].append(o)
        else:
            blocks.append([o])
    choices: list[list[tuple[_Occurrence, ...]]] = []
    total = 1
    for block in blocks:
        kinds = Counter((o[1], _typed(o[3])) for o in block)
        if len(kinds) == 1:
            choices.append([tuple(block)])
            continue
        total *= math.factorial(len(block)) // math.prod(math.factorial(n) for n in kinds.values())
        if total > _MAX_TIE_ORDERS:
            raise OrderDependent("too many orders of occurrences that one event completes to try")
        by_kind = {(o[1], _typed(o[3])): o for o in block}
        keys = [(o[1], _typed(o[3])) for o in block]
        orders = dict.fromkeys(itertools.permutations(keys))
        choices.append([tuple(by_kind[k] for k in order) for order in orders])
    original = tuple(occurrences)
    for combination in itertools.product(*choices):
        order = [o for block in combination for o in block]
        if tuple(order) != original:
            yield order


class _Evaluation:
    """One evaluation: facts with their derivations."""

    def __init__(self, rules: RuleSet, solver: GoalSolver, budget: int) -> None:
        self.rules = rules
        self.solver = solver
        self.budget = budget
        self.work = 0
        self.aggregates = any(has_aggregate(r.pattern) for r in rules.rules)
        self.repeating = repeating_events(rules.rules)

    def spend(self, n: int) -> None:
        self.work += n
        if self.work > self.budget:
            raise TooLarge(f"evaluation needs more than {self.budget} steps")

    def pattern(self, p: Pattern, facts: Mapping[tuple[str, int], Mapping[FactKey, Weight]],
                ctx: _Context = _FREE) -> dict[Match, Weight]:
        """Every occurrence of p over facts, with its derivations."""
        out: dict[Match, Weight] = {}
        if isinstance(p, EventP):
            for (_, args, s, e), n in facts.get(event_key(p.event), {}).items():
                env: dict[str, Ground] = {}
                if match(p.event, _as_value(p.event, args), env):
                    _add_to(out, (frozenset(env.items()), s, e), n)
        elif isinstance(p, Binary) and p.op == "cnot":
            out = self.cnot(p, facts, ctx)
        elif isinstance(p, Binary) and p.op == "fnot":
            out = self.fnot(p, facts, ctx)
        elif isinstance(p, Binary):
            left, right = self.operands(p, facts, ctx, _operand_outsides)
            if p.op == "or":
                out = _merge(left, right)
            else:
                self.spend(len(left) * len(right))
                for (bl, l1, l2), nl in left.items():
                    for (br, r1, r2), nr in right.items():
                        interval = temporal(p.op, (l1, l2), (r1, r2))
                        if interval is None:
                            continue
                        b = _join(bl, br)
                        if b is not None:
                            _add_to(out, (b, interval[0], interval[1]), nl * nr)
        elif isinstance(p, Where):
            # a condition is a test: its solutions count once for each
            # distinct binding of the variables it passes on (those the
            # rest of the rule uses)
            inner = _Context(ctx.window, ctx.outside | frozenset(goal_variables(p.goal)))
            for (b, s, e), n in self.pattern(p.pattern, facts, inner).items():
                passed = {frozenset((v, g) for v, g in solution.items() if v in ctx.outside)
                          for solution in self.solver.solve(p.goal, dict(b), s, e)}
                for binding in passed:
                    _add_to(out, (b | binding, s, e), n)
        elif isinstance(p, Aggregate):
            out = self.aggregate(p, facts, ctx)
        else:
            inner = _Context(min(ctx.window, p.window), ctx.outside)
            for (b, s, e), n in self.pattern(p.pattern, facts, inner).items():
                if e - s <= p.window:
                    _add_to(out, (b, s, e), n)
        self.spend(sum(_total(w) for w in out.values()))
        return out

    def operands(self, p: Binary, facts: Mapping[tuple[str, int], Mapping[FactKey, Weight]], ctx: _Context,
                 outsides: Callable[[Binary, frozenset[str]], tuple[frozenset[str], frozenset[str]]],
                 ) -> tuple[dict[Match, Weight], dict[Match, Weight]]:
        """The occurrences of p's left and right operands; ``outsides``
        gives what the rest of the rule uses, seen from each (which
        matters to aggregates and to what a ``where`` passes on)."""
        ol, orr = outsides(p, ctx.outside)
        lc, rc = _Context(ctx.window, ol), _Context(ctx.window, orr)
        return self.pattern(p.left, facts, lc), self.pattern(p.right, facts, rc)

    def cnot(self, p: Binary, facts: Mapping[tuple[str, int], Mapping[FactKey, Weight]],
             ctx: _Context) -> dict[Match, Weight]:
        """``(A seq B) cnot C``: A then B with no C strictly between them."""
        seq = _cnot_sequence(p)
        oa, ob, oc = _cnot_outsides(p, ctx.outside)
        ca, cb, cc = (_Context(ctx.window, o) for o in (oa, ob, oc))
        left = self.pattern(seq.left, facts, ca)
        right = self.pattern(seq.right, facts, cb)
        blockers = self.pattern(p.right, facts, cc)
        self.spend(len(left) * len(right) * max(1, len(blockers)))
        out: dict[Match, Weight] = {}
        for (bl, a1, a2), nl in left.items():
            for (br, b1, b2), nr in right.items():
                b = _join(bl, br) if a2 < b1 else None
                if b is None:
                    continue
                if any(a2 < c1 and c2 < b1 and _join(b, bc) is not None for (bc, c1, c2) in blockers):
                    continue
                _add_to(out, (b, a1, b2), nl * nr)
        return out

    def fnot(self, p: Binary, facts: Mapping[tuple[str, int], Mapping[FactKey, Weight]],
             ctx: _Context) -> dict[Match, Weight]:
        """``P fnot C``: P with no C strictly inside its interval."""
        occurrences, blockers = self.operands(p, facts, ctx, _fnot_outsides)
        self.spend(len(occurrences) * max(1, len(blockers)))
        return {
            (b, t1, t2): n for (b, t1, t2), n in occurrences.items()
            if not any(t1 < c1 and c2 < t2 and _join(b, bc) is not None for (bc, c1, c2) in blockers)
        }

    def aggregate(self, p: Aggregate, facts: Mapping[tuple[str, int], Mapping[FactKey, Weight]],
                  ctx: _Context) -> dict[Match, Weight]:
        """The aggregate at every occurrence of its pattern (see evaluate)."""
        group = aggregate_group(p, ctx.outside)
        sequences: dict[tuple[Optional[Ground], ...], list[_Occurrence]] = {}
        for (b, s, e), w in self.pattern(p.pattern, facts, ctx).items():
            if e - s > ctx.window or (p.kind == "time" and e - s > p.size):
                continue            # a window applies to every part
            env = dict(b)
            value: Optional[Ground] = None
            if p.fun != "count":
                value = env.get(p.value or "")
                if _number(value) is None:
                    continue        # left out (the engine warns)
            if not isinstance(w, Derivations):
                raise TypeError("aggregates need the triggers of derivations")
            key = tuple(env.get(v) for v in group)
            for (trigger, _), n in w.items.items():
                sequences.setdefault(key, []).extend([(trigger, s, e, value)] * n)
        out: dict[Match, Weight] = {}
        for key, occurrences in sequences.items():
            occurrences.sort(key=lambda o: o[0])
            self.spend(len(occurrences))
            outputs = self.window_outputs(p, occurrences, ctx.window)
            for order in _tie_orders(occurrences):
                if self.window_outputs(p, order, ctx.window) != outputs:
                    raise OrderDependent(f"{pattern_text(p)}: one event completes occurrences that differ in"
                                         " start or value, and the result depends on their order")
            bound = frozenset((v, g) for v, g in zip(group, key) if g is not None)
            for (result, start, end, trigger), n in outputs.items():
                _add_to(out, (bound | {(p.result, result)}, start, end), Derivations({(trigger, ()): n}))
        return out

    def window_outputs(self, p: Aggregate, occurrences: Sequence[_Occurrence],
                       window: float) -> Counter[tuple[Ground, Time, Time, int]]:
        """What the aggregate p gives at each of a group's occurrences, in
        this order: (result, start, end, trigger), with their numbers."""
        out: Counter[tuple[Ground, Time, Time, int]] = Counter()
        for k, (trigger, _, end, _) in enumerate(occurrences):
            if p.kind == "count":
                if k + 1 < p.size:
                    continue
                contents = occurrences[k + 1 - int(p.size): k + 1]
                start = contents[0][1]
            else:
                contents = [o for o in occurrences[: k + 1] if end - o[1] <= p.size]
                least = min(o[1] for o in contents)
                start = next(o[1] for o in contents if o[1] == least)
            self.spend(len(contents))
            if end - start <= window:
                out[(aggregate_value(p.fun, [o[3] for o in contents]), start, end, trigger)] += 1
        return out

    def step(self, facts: Mapping[tuple[str, int], Mapping[FactKey, Weight]]) -> dict[FactKey, Weight]:
        """What one application of every rule derives from facts."""
        derived: dict[FactKey, Weight] = {}
        for rule in self.rules.rules:
            name, _ = event_key(rule.head)
            ctx = _Context(math.inf, frozenset(term_vars(rule.head)))
            for (b, s, e), n in self.pattern(rule.pattern, facts, ctx).items():
                head = instantiate(rule.head, dict(b))
                args = head.args if isinstance(head, Compound) else ()
                _add_to(derived, (name, args, s, e), n)
        for key, w in derived.items():
            if (key[0], len(key[1])) in self.repeating:
                derived[key] = _once(w)
        return derived


def _once(w: Weight) -> Weight:
    """One derivation of w (the first, by trigger and provenance)."""
    if isinstance(w, Derivations):
        return Derivations({min(w.items): 1})
    return 1


WAITING: Mapping[str, str] = {
    "seq": "left", "before": "left", "during": "left", "starts": "left", "overlaps": "left",
    "after": "right", "contains": "right", "started_by": "right", "overlapped_by": "right",
}
"""The operand of each one-way operator that is stored to wait for the
other."""


def settling_events(p: Pattern) -> set[tuple[str, int]]:
    """The events of p whose occurrence completes p at once over an
    interval no wider than its own: not in a waiting operand
    (:data:`WAITING`), one that widens (:data:`WIDENING`), a negated part,
    nor under a ``where`` (which may stop a cycle)."""
    if isinstance(p, EventP):
        return {event_key(p.event)}
    if isinstance(p, Binary) and p.op == "cnot":
        return set()
    if isinstance(p, Binary) and p.op == "fnot":
        return settling_events(p.left)
    if isinstance(p, Binary):
        blocked = {WAITING.get(p.op), WIDENING.get(p.op)}
        return ((set() if "left" in blocked else settling_events(p.left))
                | (set() if "right" in blocked else settling_events(p.right)))
    if isinstance(p, Where):
        return set()
    return settling_events(p.pattern)


def repeating_events(rules: Iterable[Rule]) -> frozenset[tuple[str, int]]:
    """The events on a cycle of rules whose every step completes at once
    over an interval no wider (see :func:`settling_events`), by name and
    arity.  Such a cycle can derive an occurrence again and again; in the
    least model it is one fact, so each distinct derived occurrence of
    these events counts once."""
    import networkx as nx

    g: Any = nx.DiGraph()
    for r in rules:
        for e in settling_events(r.pattern):
            g.add_edge(e, event_key(r.head))
    out: set[tuple[str, int]] = set()
    for component in nx.strongly_connected_components(g):
        if len(component) > 1 or any(g.has_edge(v, v) for v in component):
            out |= component
    return frozenset(out)


def _as_value(term: Term, args: tuple[Ground, ...]) -> Ground:
    """The ground event with the name of ``term`` and arguments ``args``."""
    name, _ = event_key(term)
    return Compound(name, args) if isinstance(term, Struct) else name


def _index(counts: Mapping[FactKey, Weight]) -> dict[tuple[str, int], dict[FactKey, Weight]]:
    index: dict[tuple[str, int], dict[FactKey, Weight]] = {}
    for key, n in counts.items():
        index.setdefault((key[0], len(key[1])), {})[key] = n
    return index


def evaluate(
    rules: RuleSet,
    stream: Iterable[Any],
    solver: Optional[GoalSolver] = None,
    budget: int = 2_000_000,
    provenance: bool = False,
) -> Model:
    """The minimal model of ``rules`` for the finite ``stream``.

    Stream items are what :meth:`Engine.emit_many` takes.  ``where``
    conditions run in Prolog with the file's static rules (a
    :class:`PrologGoals` over ``rules.text`` unless ``solver`` is given).
    Raises :class:`TooLarge` when the naive evaluation needs more than
    ``budget`` steps, and :class:`OrderDependent` for an aggregate whose
    result depends on an order the semantics leaves open (below).
    ``provenance=True`` fills :attr:`Model.explained`.

    The model is the least fixpoint of "apply every rule to all facts";
    with negation or aggregates it is built time point by time point, each
    point saturated before the next (the paper's stratification by time),
    because negation must see all the facts that end before the point, and
    an aggregate all the occurrences of its pattern up to it.

    Aggregates, ``aggregate(Fun, P, Window, R)`` (docs/language.md,
    "Iteration and aggregates"), follow the order in which the engine
    derives occurrences: a derivation of P occurs when the last of the
    stream events it uses (through every rule) arrives, so occurrences are
    ordered by the position in the stream of that event, their trigger
    (which orders them by end time, and those that end together by the
    order of the stream).  Every derivation is an occurrence of its own.
    Occurrences are grouped by the variables of P that the rest of the rule
    uses (as the engine's binarizer sees it), except the aggregated one;
    an occurrence whose aggregated value is not a number is left out (the
    engine warns).  For each occurrence o of a group:

    - ``count(N)``: the window is the last N occurrences up to o; the
      aggregate holds from the N-th occurrence on, over [start of the
      first occurrence of the window, end of o];
    - ``time(D)``: the window is the occurrences up to o that started at
      most D before o ended (end(o) - start =< D); the aggregate holds at
      every occurrence that lasts at most D (one that lasts longer is in
      no window), over [earliest start in the window, end of o];
    - the result is the function over the window's values: ``count`` the
      number of occurrences, ``sum`` their sum, ``avg`` sum / count (an
      integer when it divides evenly, as Prolog's ``/``), ``min``,
      ``max``.  The engine keeps running totals, so with float values a
      sum may differ from the evaluator's in the last bits;
    - a window around the aggregate (``within``, ``max_age``) applies to
      every part: occurrences of P longer than it are left out, and the
      aggregate's own interval must fit it.

    The engine derives the occurrences that one stream event completes in
    an order of its own; when two of them fall in one group and differ in
    start or value, the result depends on that order and the evaluator
    raises :class:`OrderDependent`.
    """
    own = solver is None
    goals: GoalSolver = PrologGoals(rules.text) if solver is None else solver
    try:
        ev = _Evaluation(rules, goals, budget)
        tracked = provenance or ev.aggregates
        events = [Event.coerce(item) for item in stream]
        base: dict[FactKey, Weight] = {}
        for i, e in enumerate(events):
            key = (e.name, tuple(ground_from_python(a) for a in e.args), e.start, e.end)
            _add_to(base, key, Derivations({(i, (i,) if provenance else ()): 1}) if tracked else 1)
        if ev.aggregates or any(has_negation(r.pattern) for r in rules.rules):
            facts, derived, derivations = _saturate_by_time(ev, base)
        else:
            facts, derived, derivations = _saturate(ev, base)
        render = goals.quoted if isinstance(goals, PrologGoals) else prolog_text
        counts: Counter[Fact] = Counter()
        explained: Optional[dict[Fact, Counter[tuple[Fact, ...]]]] = {} if provenance else None
        stream_facts = [_fact(k, render) for k in
                        ((e.name, tuple(ground_from_python(a) for a in e.args), e.start, e.end) for e in events)]
        for key, w in derived.items():
            fact = _fact(key, render)
            counts[fact] += _total(w)
            if explained is not None and isinstance(w, Derivations):
                by_provenance = explained.setdefault(fact, Counter())
                for (_, prov), n in w.items.items():
                    by_provenance[tuple(stream_facts[i] for i in prov)] += n
        return Model(
            frozenset(_fact(k, render) for k in facts),
            frozenset(counts),
            derivations,
            counts,
            explained,
        )
    finally:
        if own and isinstance(goals, PrologGoals):
            goals.close()


_Saturated = tuple[dict[FactKey, Weight], dict[FactKey, Weight], Optional[int]]


def _saturate(ev: _Evaluation, base: Mapping[FactKey, Weight]) -> _Saturated:
    """Apply the rules until the set of facts is closed, then on until the
    derivations settle too (they do unless some cycle of rules derives a
    fact from itself at the same interval).  Gives all facts and the
    derived ones, with their derivations, and the work done (None when it
    is unbounded)."""
    counts: dict[FactKey, Weight] = dict(base)
    stable_keys = 0
    while True:
        derived = ev.step(_index(counts))
        new = _merge(base, derived)
        if new == counts:
            return new, derived, ev.work
        if set(new) == set(counts):
            stable_keys += 1
            if stable_keys > len(new) + 2:
                return new, derived, None
        counts = new


def _saturate_by_time(ev: _Evaluation, base: Mapping[FactKey, Weight]) -> _Saturated:
    """Saturate at each end time of the stream in turn, starting from what
    the earlier times gave.  A derived fact ends at the end of one of its
    events, so everything that ends before t is known when t is saturated,
    and a negation at t sees all the occurrences that could block it."""
    final: dict[FactKey, Weight] = {}
    derived: dict[FactKey, Weight] = {}
    unbounded = False
    for t in sorted({k[3] for k in base}):
        upto = {k: n for k, n in base.items() if k[3] <= t}
        counts = _merge(final, {k: n for k, n in base.items() if k[3] == t})
        stable_keys = 0
        while True:
            step = ev.step(_index(counts))
            new = _merge(upto, step)
            if new == counts:
                break
            if set(new) == set(counts):
                stable_keys += 1
                if stable_keys > len(new) + 2:
                    unbounded = True
                    break
            counts = new
        final = new
        derived = step
    return final, derived, None if unbounded else ev.work


def _fact(key: FactKey, render: Any) -> Fact:
    name, args, start, end = key
    return Fact(name, tuple(render(a) if isinstance(a, Compound) else reported_value(a) for a in args), start, end)


# ---------------------------------------------------------------------------
# Differential testing: one case through the evaluator and the engine
# ---------------------------------------------------------------------------

STATIC_RULES = """\
link(0, 1). link(1, 2). link(0, 2). link(2, 3).
path(X, Y) :- link(X, Y).
path(X, Y) :- link(X, Z), path(Z, Y).
"""
"""Background knowledge that random ``where`` conditions may use."""


@dataclass(frozen=True)
class Case:
    """A rule set (event rules plus static rules) and a finite stream.

    ``printed`` lists the reported events (``:- print_events``; all rule
    heads when None) and ``overrides`` gives labelled rules their own
    consumption policy (``:- policy(Label, P)``).
    """

    rules: tuple[Rule, ...]
    stream: tuple[Event, ...]
    statics: str = ""
    printed: Optional[tuple[tuple[str, int], ...]] = None
    overrides: tuple[tuple[str, str], ...] = ()

    def text(self) -> str:
        """The rule file."""
        lines = []
        if self.printed is not None:
            lines.append(f":- print_events([{', '.join(f'{n}/{a}' for n, a in self.printed)}]).")
        lines += [f":- policy({label}, {policy})." for label, policy in self.overrides]
        lines += [r.text() for r in self.rules]
        return "\n".join(lines) + "\n" + self.statics

    def stream_text(self) -> str:
        """The stream, one ``event(Term, [Start, End]).`` a line."""
        return "".join(e.to_prolog() for e in self.stream)


@dataclass(frozen=True)
class Outcome:
    """What the engine detected for a case under a policy, against the
    model's derived facts of the reported events (see check_case), each as
    often as it was detected or derived."""

    case: Case
    policy: str
    expected: Counter[Fact]
    got: Counter[Fact]
    warnings: tuple[str, ...] = ()
    unchecked: frozenset[tuple[str, int]] = frozenset()
    """Events left out of a soundness check (they depend on aggregates)."""

    @property
    def missing(self) -> Counter[Fact]:
        """Derived more often than detected (a mismatch under unrestricted)."""
        return self.expected - self.got if self.exact else Counter()

    @property
    def unexpected(self) -> Counter[Fact]:
        """Detected more often than derived (under unrestricted), or not in
        the model at all (under other policies): a mismatch."""
        if self.exact:
            return self.got - self.expected
        return Counter({f: n for f, n in self.got.items() if f not in self.expected})

    @property
    def exact(self) -> bool:
        """Whether the detections must be exactly the model's: under
        `unrestricted`, when no rule has a policy of its own."""
        return self.policy == "unrestricted" and not self.case.overrides

    @property
    def ok(self) -> bool:
        return not self.missing and not self.unexpected

    def report(self) -> str:
        """The case as a rule file and stream, with the difference."""
        out = [f"policy: {self.policy}", "--- rules.etl", self.case.text().rstrip("\n"),
               "--- stream.events", self.case.stream_text().rstrip("\n")]
        if self.exact:
            out.append("--- in the model, not detected (or not as often):")
            out += [self._line(f) for f in sorted(self.missing, key=_fact_order)] or ["  (none)"]
            out.append("--- detected, not in the model (or more often than derived):")
        else:
            negated = any(has_negation(r.pattern) for r in self.case.rules)
            relaxed = " (with negation relaxed)" if negated else ""
            out.append(f"--- detected, not in the model{relaxed}:")
        out += [self._line(f) for f in sorted(self.unexpected, key=_fact_order)] or ["  (none)"]
        if self.unchecked:
            out.append("--- not checked (depend on aggregates): "
                       + ", ".join(f"{n}/{a}" for n, a in sorted(self.unchecked)))
        return "\n".join(out)

    def _line(self, f: Fact) -> str:
        if not self.exact:
            return f"  {f.text()}"
        return f"  {f.text()}: derived {self.expected[f]} times, detected {self.got[f]}"


def _fact_order(f: Fact) -> tuple[Any, ...]:
    return (f.end, f.start, f.event, repr(f.args))


def engine_facts(text: str, stream: Sequence[Event], policy: str,
                 limit: int = 300_000) -> tuple[Counter[Fact], tuple[str, ...]]:
    """The engine's detections for a rule text and stream, each as often as
    it was detected, and its warnings.  Raises :class:`TooLarge` once there
    are more than ``limit`` detections: rules whose detections multiply
    with every event would soon exhaust memory."""
    found: Counter[Fact] = Counter()
    warnings: list[str] = []
    with Engine.from_string(text, policy=policy, source="rules.etl") as engine:
        for event in stream:
            result = engine.emit_many([event])
            if result.rejected:
                raise ValueError(f"the engine rejected stream items: {result.rejected}")
            found.update(Fact.from_detection(d) for d in result.detections)
            warnings += (w.reason for w in result.warnings)
            if found.total() > limit:
                raise TooLarge(f"the engine made more than {limit} detections")
        return found, tuple(warnings)


def check_case(
    case: Case,
    policies: Sequence[str] = ("unrestricted", "recent", "chronological"),
    budget: int = 300_000,
) -> list[Outcome]:
    """Run the case through the evaluator and, under each policy, the
    engine.  Under `unrestricted` (with no rule of a policy of its own)
    the detections must be the model's derived facts of the reported
    events, each as often as the rules derive it; under other policies
    every detection must be in the model.  Raises :class:`TooLarge` for a
    case whose model needs more than ``budget`` steps or has more than
    ``budget`` derivations (or that an engine could never finish),
    :class:`OrderDependent` for one whose aggregates
    depend on the engine's order of derivation (see :func:`evaluate`).

    Where only soundness is checked, negation is relaxed first: a policy
    may leave out occurrences of a negated event, so that more sequences
    pass its `cnot`, but each detection is still derived by the rules
    without their `cnot` parts.  Events that depend on aggregates are not
    checked there: an aggregate over the occurrences a policy keeps is
    over fewer of them than the model's.
    """
    text = case.text()
    rule_set = RuleSet.from_text(text)
    printed = rule_set.heads() if case.printed is None else set(case.printed)
    exact_policies = [p for p in policies if p == "unrestricted" and not case.overrides]
    model: Optional[Model] = None
    if exact_policies:
        model = _bounded(evaluate(rule_set, case.stream, budget=budget), budget)
    relaxed = model
    unchecked: frozenset[tuple[str, int]] = frozenset()
    if len(exact_policies) < len(policies):
        rules = tuple(replace(r, pattern=relax_negation(r.pattern)) for r in rule_set.rules)
        unchecked = frozenset(aggregate_dependent(rules))
        if relaxed is None or unchecked or rules != rule_set.rules:
            kept = tuple(r for r in rules if event_key(r.head) not in unchecked)
            relaxed = _bounded(evaluate(RuleSet(text, kept), case.stream, budget=budget), budget)
    outcomes = []
    for policy in policies:
        try:
            got, warnings = engine_facts(text, case.stream, policy, budget)
        except InferenceLimitError:
            # an engine that stops at its limit per event on rules with a
            # large model did what it should; on a small model it is a bug
            derived = max((m.derivations or 0 for m in (model, relaxed) if m is not None), default=0)
            if derived < LARGE_MODEL:
                raise
            raise TooLarge(f"the engine reached its inference limit on a model of {derived} derivations") from None
        if policy in exact_policies:
            assert model is not None
            outcomes.append(Outcome(case, policy, model.reported_counts(printed), got, warnings))
        else:
            assert relaxed is not None
            wanted = printed - unchecked
            got = Counter({f: n for f, n in got.items() if (f.event, len(f.args)) in wanted})
            outcomes.append(Outcome(case, policy, relaxed.reported_counts(wanted), got, warnings, unchecked))
    return outcomes


def _bounded(model: Model, budget: int) -> Model:
    """The model, if an engine can report its derivations."""
    if model.derivations is None:
        raise TooLarge("a cycle of rules derives facts without end")
    total = sum(model.counts.values())
    if total > budget:
        raise TooLarge(f"the rules derive facts {total} times")
    return model


def relax_negation(p: Pattern) -> Pattern:
    """p with every ``(A seq B) cnot C`` replaced by ``A seq B``, and
    every ``P fnot C`` by P."""
    if isinstance(p, Binary) and p.op in NEGATIONS:
        return relax_negation(p.left)
    if isinstance(p, Binary):
        return replace(p, left=relax_negation(p.left), right=relax_negation(p.right))
    if isinstance(p, (Where, Within, Aggregate)):
        return replace(p, pattern=relax_negation(p.pattern))
    return p


# ---------------------------------------------------------------------------
# Random cases
# ---------------------------------------------------------------------------


class Choices(Protocol):
    """A source of choices.  Smaller integers must mean simpler cases, so
    that a shrinking driver (hypothesis) makes cases simpler."""

    def integer(self, low: int, high: int) -> int: ...


class RandomChoices:
    """Choices from a seeded :class:`random.Random`."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def integer(self, low: int, high: int) -> int:
        return self._rng.randint(low, high)


def _pick(ch: Choices, items: Sequence[Any]) -> Any:
    return items[ch.integer(0, len(items) - 1)]


def _flip(ch: Choices, percent: int) -> bool:
    """True with the given chance; a choice of 0 means False."""
    return ch.integer(0, 99) >= 100 - percent


Signature = tuple[str, ...]
"""Argument types of an event: "i" for small integers, "a" for atoms."""

BASE_EVENTS: tuple[tuple[str, Signature], ...] = (
    ("a", ("i",)), ("b", ("i",)), ("c", ("i", "i")), ("d", ()), ("e", ("a",)), ("f", ("i", "a")),
    ("b", ("i", "i")),
)
INT_VALUES = (0, 1, 2)
ATOM_VALUES = ("x", "y", "it's Z")
POLICIES = ("unrestricted", "recent", "chronological")
VAR_POOL = {"i": ("X", "Y", "Z"), "a": ("A", "B")}
NEW_INT_VARS = ("N", "M", "X", "Y", "Z")
# Temporal operators, the more common first.
OPERATORS = (
    "seq", "and", "or", "where", "within", "par", "cnot", "fnot", "meets", "during", "starts", "finishes",
    "equals", "before", "after", "overlaps", "met_by", "contains", "started_by", "finished_by",
    "overlapped_by",
)
_COMPARE = (">", "<", ">=", "=<", "=:=", "=\\=")
_IDENTITY = ("==", "\\==")
WINDOWS: tuple[Time, ...] = (2, 1, 0, 0.5, 3, 5, 10, 0.3, 0.2, 0.7, 1.1)
AGGREGATE_TIMES: tuple[Time, ...] = (2, 1, 3, 0, 0.5, 5, 1.5)
DELAYING = ("seq", "before")
"""Operators whose left operand only waits: recursion may go through it."""
WIDENING: Mapping[str, str] = {
    "seq": "right", "before": "right", "cnot": "right", "after": "left", "overlapped_by": "left",
    "finishes": "left", "overlaps": "right", "finished_by": "right",
}
"""The operand of each operator whose occurrence completes it at once, but
always over a strictly wider interval: recursion through it ends."""


@dataclass
class _CaseState:
    """What the rules of one case share while they are made: fresh
    variable names, the sub-patterns made so far (to reuse, so that
    rules share goals), and whether static rules are needed."""

    fresh: int = 0
    library: list[tuple[Pattern, dict[str, str], int]] = field(default_factory=list)
    uses_statics: bool = False
    aggregates: bool = False
    windows: bool = True


@dataclass
class _RuleGen:
    """State while making the pattern of one rule."""

    ch: Choices
    immediate: list[tuple[str, Signature]]
    delayed: list[tuple[str, Signature]]
    windows: tuple[Time, ...]
    state: _CaseState

    def pattern(self, depth: int, in_delay: bool) -> tuple[Pattern, dict[str, str]]:
        """A pattern and the variables it binds (name -> type)."""
        p, bound = self.make(depth, in_delay)
        self.state.library.append((p, bound, depth))
        return p, bound

    def make(self, depth: int, in_delay: bool) -> tuple[Pattern, dict[str, str]]:
        ch = self.ch
        if _flip(ch, 10):
            allowed = {name for name, _ in self.immediate}
            reusable = [(p, b) for p, b, d in self.state.library
                        if d <= depth and (in_delay or immediate_events(p) <= allowed)]
            if reusable:
                p, bound = _pick(ch, reusable)
                return self.fresh_copy(p, bound)
        if depth == 0 or not _flip(ch, 65):
            return self.leaf(in_delay)
        if self.state.aggregates and _flip(ch, 30):
            return self.aggregate(depth, in_delay)
        op = OPERATORS[min(ch.integer(0, len(OPERATORS) - 1), ch.integer(0, len(OPERATORS) - 1))]
        if op == "within" and not self.state.windows:
            op = "where"
        return self.operator(op, depth, in_delay)

    def operator(self, op: str, depth: int, in_delay: bool) -> tuple[Pattern, dict[str, str]]:
        """A pattern made with op at the top."""
        ch = self.ch
        if op == "where":
            p, bound = self.pattern(depth - 1, in_delay)
            goal, bound = self.goal(bound)
            return Where(p, goal), bound
        if op == "within":
            p, bound = self.pattern(depth - 1, in_delay)
            window = _pick(ch, self.windows) if self.windows and _flip(ch, 50) else _pick(ch, WINDOWS)
            return Within(p, window), bound
        if op == "fnot":
            # like cnot's: C only waits to block, and its own variables
            # stand for any value
            p, bound = self.pattern(depth - 1, in_delay)
            if isinstance(p, EventP) and _flip(ch, 70):
                # an instant has no inside: give P a length
                first, fb = self.leaf(True)
                p, bound = Binary("seq", first, p), {**fb, **bound}
            negated, nb = self.pattern(depth - 1, True)
            negated, _ = self.private(negated, nb, bound)
            return Binary("fnot", p, negated), bound
        widens = WIDENING.get(op) if _flip(ch, 40) else None
        # now and then recursion at the same time (a cycle that repeats
        # occurrences, each derived once), where no aggregate can make new
        # values in every round
        repeats = _pick(ch, ("left", "right")) if not self.state.aggregates and _flip(ch, 8) else None
        left, lb = self.pattern(depth - 1, in_delay or op in DELAYING or op == "cnot" or "left" in (widens, repeats))
        right, rb = self.pattern(depth - 1, in_delay or "right" in (widens, repeats))
        if op == "cnot":
            # N only waits to block, so it may use any event (recursion
            # through negation is stratified by time); its variables that
            # the sequence does not bind are its own ("any value")
            seq_bound = {**lb, **rb}
            negated, nb = self.pattern(depth - 1, True)
            negated, _ = self.private(negated, nb, seq_bound)
            return Binary("cnot", Binary("seq", left, right), negated), seq_bound
        if op == "or":
            left, lb = self.private(left, lb, rb)
            right, rb = self.private(right, rb, lb)
            return Binary("or", left, right), {v: t for v, t in lb.items() if v in rb}
        return Binary(op, left, right), {**lb, **rb}

    def aggregate(self, depth: int, in_delay: bool) -> tuple[Pattern, dict[str, str]]:
        """An aggregate over a (mostly small) pattern: of an integer that
        an event of the pattern binds (so that sums are exact), over a
        window of the last 1 to 3 occurrences or of a time, often one
        between two times of the stream.  Its result is a new variable;
        the pattern's other variables group it where the rule uses them."""
        ch = self.ch
        p, bound = self.pattern(ch.integer(0, depth - 1), in_delay)
        values = sorted(v for v in event_variables(p) if bound.get(v) == "i")
        fun = _pick(ch, AGGREGATE_FUNCTIONS)
        value = _pick(ch, values) if fun != "count" and values else None
        if value is None:
            fun = "count"
        if _flip(ch, 50):
            kind, size = "count", _pick(ch, (1, 2, 3))
        else:
            kind = "time"
            size = _pick(ch, self.windows) if self.windows and _flip(ch, 50) else _pick(ch, AGGREGATE_TIMES)
        self.state.fresh += 1
        result = f"R{self.state.fresh}"
        out = {v: t for v, t in bound.items() if v != value}
        out[result] = "i"
        return Aggregate(fun, value, p, kind, size, result), out

    def fresh_copy(self, p: Pattern, bound: dict[str, str]) -> tuple[Pattern, dict[str, str]]:
        """p with its inner variables (those it does not bind for the
        outside, e.g. private to a branch of `or`) renamed apart."""
        mapping: dict[str, str] = {}
        for v in sorted(pattern_variables(p) - set(bound)):
            self.state.fresh += 1
            mapping[v] = f"{v.rstrip('0123456789')}{self.state.fresh}"
        return (rename(p, mapping) if mapping else p), bound

    def private(self, p: Pattern, bound: dict[str, str], other: dict[str, str]) -> tuple[Pattern, dict[str, str]]:
        """Rename the variables that only this branch of an `or` binds, so
        that nothing outside the branch uses them."""
        mapping: dict[str, str] = {}
        for v in bound:
            if v not in other:
                self.state.fresh += 1
                mapping[v] = f"{v}{self.state.fresh}"
        if not mapping:
            return p, bound
        return rename(p, mapping), {mapping.get(v, v): t for v, t in bound.items()}

    def leaf(self, in_delay: bool) -> tuple[Pattern, dict[str, str]]:
        ch = self.ch
        candidates = self.immediate + (self.delayed if in_delay else [])
        name, sig = _pick(ch, candidates)
        args: list[Term] = []
        bound: dict[str, str] = {}
        for t in sig:
            kind = ch.integer(0, 9)
            if kind <= 6:
                v = _pick(ch, VAR_POOL[t])
                args.append(Var(v))
                bound[v] = t
            elif kind <= 8:
                args.append(Const(_pick(ch, INT_VALUES if t == "i" else ATOM_VALUES)))
            else:
                args.append(Var("_"))
        term: Term = Struct(name, tuple(args)) if args else Const(name)
        return EventP(term), bound

    def goal(self, bound: dict[str, str]) -> tuple[str, dict[str, str]]:
        """A where condition over the bound variables, and the variables
        bound after it."""
        ch = self.ch
        ints = [v for v, t in bound.items() if t == "i"]
        atoms = [v for v, t in bound.items() if t == "a"]
        parts = []
        out = dict(bound)
        for _ in range(1 + (1 if _flip(ch, 30) else 0)):
            kind = ch.integer(0, 9)
            k = _pick(ch, INT_VALUES)
            if kind == 0 and ints:
                parts.append(f"{_pick(ch, ints)} {_pick(ch, _COMPARE)} {k}")
            elif kind == 1 and ints:
                parts.append(f"{_pick(ch, ints)} {_pick(ch, _COMPARE[1:])} {_pick(ch, ints)} + {k}")
            elif kind == 2 and ints:
                new = _pick(ch, NEW_INT_VARS)
                expr = _pick(ch, (f"{_pick(ch, ints)} + {k}", f"{_pick(ch, ints)} * {_pick(ch, ints)}",
                                  f"{_pick(ch, ints)} mod 2", f"{_pick(ch, ints)} / 2",
                                  f"max({_pick(ch, ints)}, {k})"))
                parts.append(f"{new} is {expr}")
                out.setdefault(new, "i")
            elif kind == 3 and ints:
                self.state.uses_statics = True
                new = _pick(ch, NEW_INT_VARS)
                parts.append(f"{_pick(ch, ('link', 'path'))}({_pick(ch, ints)}, {new})")
                out.setdefault(new, "i")
            elif kind == 4 and ints:
                self.state.uses_statics = True
                parts.append("\\+ link(" + f"{_pick(ch, ints)}, {k})")
            elif kind == 5:
                new = _pick(ch, NEW_INT_VARS)
                parts.append(f"member({new}, [{k}, 1])")
                out.setdefault(new, "i")
            elif kind == 6 and ints:
                v = _pick(ch, ints)
                parts.append(f"({v} > 0 ; {v} < 2)")
            elif kind == 7 and atoms:
                other = _pick(ch, tuple(term_text(Const(a)) for a in ATOM_VALUES) + tuple(atoms))
                parts.append(f"{_pick(ch, atoms)} {_pick(ch, _IDENTITY)} {other}")
            elif kind == 8:
                builtin, var = _pick(ch, (("duration", "D"), ("start", "S"), ("end", "E")))
                parts.append(f"{builtin}({var}), {var} {_pick(ch, ('<', '>=', '=<'))} {_pick(ch, (1, 2, 0.5))}")
                out.setdefault(var, "t")
            else:
                parts.append("true")
        return ", ".join(parts), out


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


def event_variables(p: Pattern) -> set[str]:
    """The named variables of the events of p, outside negated patterns
    and the patterns of aggregates."""
    if isinstance(p, EventP):
        return term_vars(p.event) - {"_"}
    if isinstance(p, Binary) and p.op in NEGATIONS:
        return event_variables(p.left)
    if isinstance(p, Binary):
        return event_variables(p.left) | event_variables(p.right)
    if isinstance(p, Aggregate):
        return set()
    return event_variables(p.pattern)


def immediate_events(p: Pattern) -> set[str]:
    """The events of p that do not wait in the left operand of a `seq`
    (or `before`) or as the negated event of `cnot` or `fnot`, nor lie in
    an operand that widens the interval (:data:`WIDENING`): an occurrence
    of one of them can make p occur at once over its own interval."""
    if isinstance(p, EventP):
        return {event_key(p.event)[0]}
    if isinstance(p, Binary) and p.op == "cnot":
        return set()
    if isinstance(p, Binary) and p.op in NEGATIONS:
        return immediate_events(p.left)
    if isinstance(p, Binary):
        widens = WIDENING.get(p.op)
        left = set() if p.op in DELAYING or widens == "left" else immediate_events(p.left)
        right = set() if widens == "right" else immediate_events(p.right)
        return left | right
    return immediate_events(p.pattern)


def rename(p: Pattern, mapping: Mapping[str, str]) -> Pattern:
    """The pattern with variables renamed (in events and conditions)."""
    if isinstance(p, EventP):
        return EventP(_rename_term(p.event, mapping))
    if isinstance(p, Binary):
        return Binary(p.op, rename(p.left, mapping), rename(p.right, mapping))
    if isinstance(p, Where):
        goal = re.sub(r"\b[A-Z_][A-Za-z0-9_]*\b", lambda m: mapping.get(m.group(0), m.group(0)), p.goal)
        return Where(rename(p.pattern, mapping), goal)
    if isinstance(p, Aggregate):
        value = None if p.value is None else mapping.get(p.value, p.value)
        return replace(p, value=value, pattern=rename(p.pattern, mapping), result=mapping.get(p.result, p.result))
    return Within(rename(p.pattern, mapping), p.window)


def _rename_term(t: Term, mapping: Mapping[str, str]) -> Term:
    if isinstance(t, Var):
        return Var(mapping.get(t.name, t.name))
    if isinstance(t, Struct):
        return Struct(t.functor, tuple(_rename_term(a, mapping) for a in t.args))
    return t


def random_case(
    ch: Choices,
    max_rules: int = 4,
    max_depth: int = 3,
    max_events: int = 30,
    aggregates: Optional[bool] = None,
    windows: bool = True,
    intervals: Optional[bool] = None,
    negation: bool = False,
) -> Case:
    """A random rule set and stream.

    Rules nest patterns up to ``max_depth`` operators deep, share events
    (a rule's head in other rules' patterns), join on variables, filter
    with ``where`` (arithmetic, static rules, interval builtins) and use
    windows, and reuse each other's sub-patterns now and then (shared
    goals).  A rule may use a head that is defined by itself or a later
    rule only inside the left operand of ``seq`` (or ``before``), where
    the occurrence waits for a later one, or inside an operand that
    widens the interval (the right of ``seq``, see :data:`WIDENING`), where
    each round joins an occurrence that starts earlier, or now and then
    (without aggregates) anywhere: a cycle that repeats an occurrence
    derives it once (see :func:`repeating_events`).  Streams mix integer and fractional times, equal
    timestamps and intervals (in some, many intervals that end or start
    together); a few are long, over many values.  With ``aggregates``
    (when None, in about a third of the cases) some patterns are
    aggregates; ``windows=False`` makes rules without ``within``;
    ``intervals`` (when None, in about 40% of the cases) gives a stream of
    mostly intervals over whole seconds, many of which end or start
    together.  With ``negation`` every rule negates: its pattern is
    ``cnot`` or ``fnot`` at the top.
    """
    if aggregates is None:
        aggregates = _flip(ch, 30)
    base = list(BASE_EVENTS[: 1 + ch.integer(0, len(BASE_EVENTS) - 1)])
    # heads first, so that recursive and forward references know them
    heads: list[tuple[str, Signature]] = []
    order: list[int] = []  # index of each rule's head name in definition order
    names: list[tuple[str, Signature]] = []
    for _ in range(1 + ch.integer(0, max_rules - 1)):
        if names and _flip(ch, 25):
            chosen: tuple[str, Signature] = _pick(ch, names)
        else:
            chosen = (f"h{len(names) + 1}", tuple(_pick(ch, ("i", "i", "a")) for _ in range(ch.integer(0, 2))))
            names.append(chosen)
        heads.append(chosen)
        order.append(names.index(chosen))
    streamed = base + ([h for h in names if _flip(ch, 30)] if _flip(ch, 10) else [])
    if _flip(ch, 4):
        # now and then a long stream over many values: goal stores with
        # more join keys than their initial buckets
        stream = random_stream(ch, streamed, 5 * max_events, range(100))
    else:
        if intervals is None:
            intervals = _flip(ch, 40)
        stream = random_stream(ch, streamed, max_events, intervals=70 if intervals else 25)
    lengths = _boundary_windows(ch, stream)
    rules = []
    state = _CaseState(aggregates=aggregates, windows=windows)
    for (name, sig), index in zip(heads, order):
        gen = _RuleGen(ch, base + names[:index], list(names), lengths, state)
        if negation:
            op = _pick(ch, NEGATIONS)
            pattern, bound = gen.operator(op, 1 + ch.integer(0, max_depth - 1), False)
        else:
            pattern, bound = gen.pattern(ch.integer(0, max_depth), False)
        args: list[Term] = []
        for t in sig:
            candidates = [v for v, vt in bound.items() if vt == t]
            if candidates and not _flip(ch, 10):
                args.append(Var(_pick(ch, candidates)))
            else:
                args.append(Const(_pick(ch, INT_VALUES if t == "i" else ATOM_VALUES)))
        rules.append(Rule(Struct(name, tuple(args)) if args else Const(name), pattern))
    printed = None
    if _flip(ch, 8):
        # reported events chosen by directive, stream events among them
        printed = tuple(sorted({(n, len(sig)) for n, sig in base + names if _flip(ch, 50)}))
    overrides: list[tuple[str, str]] = []
    if _flip(ch, 8):
        # some rules with a policy of their own: only soundness is checked
        for i, rule in enumerate(rules):
            rules[i] = replace(rule, label=f"r{i + 1}")
            if _flip(ch, 50):
                overrides.append((f"r{i + 1}", random_policy(ch)))
    return Case(tuple(rules), stream, STATIC_RULES if state.uses_statics else "", printed, tuple(overrides))


def _boundary_windows(ch: Choices, stream: Sequence[Event]) -> tuple[Time, ...]:
    """Windows exactly as long as the distance between two times of the
    stream, computed as the engine computes it (end - start)."""
    times = sorted({t for e in stream for t in (e.start, e.end)})
    if len(times) < 2:
        return ()
    out = []
    for _ in range(3):
        i = ch.integer(0, len(times) - 2)
        j = ch.integer(i + 1, len(times) - 1)
        out.append(times[j] - times[i])
    return tuple(out)


def random_stream(
    ch: Choices,
    events: Sequence[tuple[str, Signature]],
    max_events: int = 30,
    values: Sequence[int] = INT_VALUES,
    intervals: int = 25,
) -> tuple[Event, ...]:
    """Up to ``max_events`` events in time order.  Steps between times are
    binary fractions, or now and then decimal ones (0.1 + 0.2 is not 0.3 in
    floating point, and windows must agree on that).  About ``intervals``
    percent of the events are intervals; with many of them, starts and
    ends are whole seconds, so that intervals often end or start together
    (where the interval variants of the policies choose)."""
    out = []
    t: float = ch.integer(0, 2) if _flip(ch, 50) else 0
    aligned = intervals >= 50
    if aligned:
        steps: tuple[float, ...] = (0, 1, 0, 2, 0, 1)
        lengths: tuple[float, ...] = (1, 2, 3, 1, 2)
    else:
        steps = (0, 1, 0.5, 0, 2, 0.25, 1.5, 3) if not _flip(ch, 35) else (0, 0.1, 0.2, 0.3, 0.7, 1.1)
        lengths = (1, 0.5, 2, 3, 0.25, 0.1, 0.3)
    for _ in range(ch.integer(0, max_events if _flip(ch, 50) else min(8, max_events))):
        t += _pick(ch, steps)
        name, sig = _pick(ch, events)
        args = tuple(_pick(ch, values if k == "i" else ATOM_VALUES) for k in sig)
        end = _time(ch, t)
        start = end
        if _flip(ch, intervals):
            start = _time(ch, t - _pick(ch, lengths))
        out.append(Event(name, args, start, end))
    return tuple(out)


def random_policy(ch: Choices, family: Optional[str] = None, variant: Optional[bool] = None) -> str:
    """A consumption policy: unrestricted, recent or chronological (of
    ``family`` if given), half the time (always with ``variant=True``)
    an interval variant."""
    name = family or _pick(ch, POLICIES)
    if name == "unrestricted" or not (_flip(ch, 50) if variant is None else variant):
        return name
    kind = _pick(ch, ("longer", "shorter", "greater(1)", "greater(2)"))
    return f"{name}({kind})"


def _time(ch: Choices, t: float) -> Time:
    """t as an int when it is integral (now and then as a float all the
    same), else as a float."""
    if float(t).is_integer() and not _flip(ch, 10):
        return int(t)
    return float(t)


# ---------------------------------------------------------------------------
# Shrinking a failing case
# ---------------------------------------------------------------------------


def _children(p: Pattern) -> list[Pattern]:
    if isinstance(p, Binary):
        return [p.left, p.right]
    if isinstance(p, (Where, Within)):
        return [p.pattern]
    return []       # an aggregate binds its result: its pattern cannot stand for it


def _simpler_patterns(p: Pattern) -> Iterator[Pattern]:
    """p with one sub-pattern replaced by one of its operands."""
    yield from _children(p)
    if isinstance(p, Binary):
        for left in _simpler_patterns(p.left):
            yield replace(p, left=left)
        for right in _simpler_patterns(p.right):
            yield replace(p, right=right)
    elif isinstance(p, (Where, Within, Aggregate)):
        for inner in _simpler_patterns(p.pattern):
            yield replace(p, pattern=inner)


def _simpler_cases(case: Case) -> Iterator[Case]:
    stream = case.stream
    size = len(stream) // 2
    while size >= 1:
        for i in range(0, len(stream), size):
            yield replace(case, stream=stream[:i] + stream[i + size:])
        size //= 2
    for i in range(len(case.rules)):
        if len(case.rules) > 1:
            label = case.rules[i].label
            yield replace(case, rules=case.rules[:i] + case.rules[i + 1:],
                          overrides=tuple(o for o in case.overrides if o[0] != label))
    for i, rule in enumerate(case.rules):
        for p in _simpler_patterns(rule.pattern):
            yield replace(case, rules=case.rules[:i] + (replace(rule, pattern=p),) + case.rules[i + 1:])
    if case.statics:
        yield replace(case, statics="")
    if case.printed is not None:
        yield replace(case, printed=None)
    for i in range(len(case.overrides)):
        yield replace(case, overrides=case.overrides[:i] + case.overrides[i + 1:])


def shrink_case(case: Case, policy: str, max_checks: int = 2000) -> Case:
    """A smaller case that still fails under ``policy``: greedily drop
    stream events and rules and replace sub-patterns by their operands
    while the engine and the evaluator still disagree."""
    checks = 0
    progress = True
    while progress and checks < max_checks:
        progress = False
        for candidate in _simpler_cases(case):
            checks += 1
            if checks > max_checks:
                break
            if _fails(candidate, policy):
                case = candidate
                progress = True
                break
    return case


def _fails(case: Case, policy: str) -> bool:
    from .errors import EtalisError

    try:
        return not check_case(case, (policy,))[0].ok
    except (EtalisError, Uncheckable, ValueError):
        return False


# ---------------------------------------------------------------------------
# The choosing policies on a filtered sequence, from their definitions
# ---------------------------------------------------------------------------


def filtered_sequence(policy: str, stream: Iterable[Any],
                      condition: Callable[[tuple[Any, ...], tuple[Any, ...]], bool]) -> list[Fact]:
    """What ``h(X, Y) <- (a(X) seq b(Y)) where G`` detects under the policy
    ``recent`` or ``chronological`` (docs/language.md, "Filters are part of
    the choice"), G given as ``condition(a_args, b_args)``, in order.

    For each occurrence of b, in the order of the stream, the pending
    occurrences of a that passed the filter with it are the eligible ones:

    - ``chronological``: of the eligible ones that end before b starts,
      the first to arrive is used and consumed;
    - ``recent``: of the eligible ones, the last to arrive is chosen (none
      is consumed), and detected with b if it ends before b starts.

    Each occurrence of a is pending from its arrival on."""
    if policy not in ("recent", "chronological"):
        raise ValueError(f"filtered_sequence defines recent and chronological, not {policy!r}")
    pending: list[Event] = []
    out: list[Fact] = []
    for item in stream:
        e = Event.coerce(item)
        if e.name == "b":
            eligible = [a for a in pending if condition(a.args, e.args)]
            if policy == "chronological":
                chosen = next((a for a in eligible if a.end < e.start), None)
                if chosen is not None:
                    pending.remove(chosen)
            else:
                chosen = eligible[-1] if eligible and eligible[-1].end < e.start else None
            if chosen is not None:
                out.append(Fact("h", tuple(chosen.args) + tuple(e.args), chosen.start, e.end))
        if e.name == "a":
            pending.append(e)
    return out
