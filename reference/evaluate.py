"""A reference evaluator of the declarative semantics, and differential testing.

The ETALIS paper defines what a rule base means for an event stream: a unique
minimal model, a set of (event, interval) pairs.  :func:`evaluate` computes
that model for a finite stream straight from the definitions, by naive
bottom-up saturation: evaluate every rule's pattern over all facts known so
far, add what the heads give, and repeat until nothing changes.  It is slow on
purpose and shares no code with the engine except the reader (so both sides
read the same rules) and Prolog itself (to run ``where`` conditions against
the file's static rules).

The rest of the package holds the engine to it: :func:`reference.check.check_case`
runs one rule set and stream through both, :func:`reference.generate.random_case`
makes random ones, and :func:`reference.shrink.shrink_case` cuts a failing
case down to a small one.

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
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol, TypeVar, Union

from etalis_py.bridge._prolog import bridge
from etalis_py.bridge.engine import Engine
from etalis_py.events import Detection, Event, Time
from etalis_py.rules.rules import (
    Aggregate, Binary, Compound, EventP, Ground, Opaque, PString, Pattern, Real, Rule, Struct, Term, Where,
    event_key, ground_text, pattern_text, term_vars)
from .terms import (
    Bindings, RuleSet, WIDENING, goal_variables, ground_from_python, has_aggregate, has_negation,
    instantiate, match, pattern_variables)


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
        return ground_text(value)
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


_INTERVAL_BUILTIN = re.compile(r"(?<![A-Za-z0-9_'])(start|t1|end|t2|duration)\(")
_BUILTIN_VAR = {"start": "EvalT1_", "t1": "EvalT1_", "end": "EvalT2_", "t2": "EvalT2_", "duration": "EvalDur_"}


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
        bound = tuple((n, _list_term(env[n])) for n in names if n in env)
        free = [n for n in names if n not in env]
        uses_interval = _INTERVAL_BUILTIN.search(goal) is not None
        key = (goal, bound, (start, end) if uses_interval else None)
        if key in self._cache:
            return self._cache[key]
        parts = [f"{n} = {ground_text(v)}" for n, v in bound]
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
                                     f"format(string(S), \"~q\", [{ground_text(value)}])")
        return str(header["solutions"][0]["S"])


def _list_term(value: Union[Ground, list[Any]]) -> Ground:
    """A value as a term: the values of a `P+` (a Python list) as a
    Prolog list."""
    if not isinstance(value, list):
        return value
    term: Ground = "[]"
    for item in reversed(value):
        term = Compound("[|]", (_list_term(item), term))
    return term


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


def _guarded(negated: Pattern, positive: set[str]) -> tuple[Pattern, list[str]]:
    """The negated part of ``cnot`` or ``fnot`` and the conditions to test
    on a blocker together with the occurrence it would block: when a
    ``where`` around it (directly, or around such a ``where``) uses a
    variable that only the positive part binds, the paper evaluates
    ``C where t`` under the rule's one assignment, so all those
    conditions run with both bound (innermost first); else none."""
    goals: list[str] = []
    inner = negated
    while isinstance(inner, Where):
        goals.insert(0, inner.goal)
        inner = inner.pattern
    own = pattern_variables(inner)
    if any(v in positive and v not in own for g in goals for v in goal_variables(g)):
        return inner, goals
    return negated, []


def _goals_variables(goals: Sequence[str]) -> frozenset[str]:
    return frozenset(v for g in goals for v in goal_variables(g))


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
        ca, cb = (_Context(ctx.window, o) for o in (oa, ob))
        left = self.pattern(seq.left, facts, ca)
        right = self.pattern(seq.right, facts, cb)
        negated, goals = _guarded(p.right, pattern_variables(seq))
        blockers = self.pattern(negated, facts, _Context(ctx.window, oc | _goals_variables(goals)))
        self.spend(len(left) * len(right) * max(1, len(blockers)))
        out: dict[Match, Weight] = {}
        for (bl, a1, a2), nl in left.items():
            for (br, b1, b2), nr in right.items():
                b = _join(bl, br) if a2 < b1 else None
                if b is None:
                    continue
                if any(a2 < c1 and c2 < b1 and self.blocks(b, bc, c1, c2, goals) for (bc, c1, c2) in blockers):
                    continue
                _add_to(out, (b, a1, b2), nl * nr)
        return out

    def blocks(self, b: Bindings, bc: Bindings, c1: Time, c2: Time, goals: Sequence[str]) -> bool:
        """Whether the negated occurrence bc over [c1, c2] blocks the
        occurrence b: its variables agree with b's, and the conditions
        on the negated part (see :func:`_guarded`) hold with both."""
        joined = _join(b, bc)
        return joined is not None and all(self.solver.solve(g, dict(joined), c1, c2) for g in goals)

    def fnot(self, p: Binary, facts: Mapping[tuple[str, int], Mapping[FactKey, Weight]],
             ctx: _Context) -> dict[Match, Weight]:
        """``P fnot C``: P with no C strictly inside its interval."""
        op, oc = _fnot_outsides(p, ctx.outside)
        occurrences = self.pattern(p.left, facts, _Context(ctx.window, op))
        negated, goals = _guarded(p.right, pattern_variables(p.left))
        blockers = self.pattern(negated, facts, _Context(ctx.window, oc | _goals_variables(goals)))
        self.spend(len(occurrences) * max(1, len(blockers)))
        return {
            (b, t1, t2): n for (b, t1, t2), n in occurrences.items()
            if not any(t1 < c1 and c2 < t2 and self.blocks(b, bc, c1, c2, goals) for (bc, c1, c2) in blockers)
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
        render = goals.quoted if isinstance(goals, PrologGoals) else ground_text
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
