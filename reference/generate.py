"""Random cases for the differential tests.

:func:`random_case` draws a rule set and a stream (:class:`reference.check.Case`)
from a :class:`Choices` (seeded :class:`RandomChoices`, or Hypothesis' data);
:func:`random_policy` a policy to run it under.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Protocol

from etalis_py.events import Event, Time
from etalis_py.rules.rules import (
    Aggregate, Binary, Const, EventP, Pattern, Rule, Struct, Term, Var,
    Where, Within, event_key, term_text, term_vars)
from .check import Case, STATIC_RULES
from .terms import AGGREGATE_FUNCTIONS, DELAYING, NEGATIONS, WIDENING, pattern_variables


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
        return EventP(rename_term(p.event, mapping))
    if isinstance(p, Binary):
        return Binary(p.op, rename(p.left, mapping), rename(p.right, mapping))
    if isinstance(p, Where):
        goal = re.sub(r"\b[A-Z_][A-Za-z0-9_]*\b", lambda m: mapping.get(m.group(0), m.group(0)), p.goal)
        return Where(rename(p.pattern, mapping), goal)
    if isinstance(p, Aggregate):
        value = None if p.value is None else mapping.get(p.value, p.value)
        return replace(p, value=value, pattern=rename(p.pattern, mapping), result=mapping.get(p.result, p.result))
    return Within(rename(p.pattern, mapping), p.window)


def rename_term(t: Term, mapping: Mapping[str, str]) -> Term:
    """The term with variables renamed."""
    if isinstance(t, Var):
        return Var(mapping.get(t.name, t.name))
    if isinstance(t, Struct):
        return Struct(t.functor, tuple(rename_term(a, mapping) for a in t.args))
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


def random_timer_rule(ch: Choices, stream: Sequence[Event]) -> str:
    """An ETALIS timer on an event of ``stream`` (none for an empty one):
    ``exceptionAlarm(timer_fired(V1, ...), D) <- e(V1, ...).``, so that
    timers are pending as the stream goes on, and at its end."""
    if not stream:
        return ""
    event = stream[ch.integer(0, len(stream) - 1)]
    names = ", ".join(f"V{i}" for i in range(1, len(event.args) + 1))
    delay = _pick(ch, (0.5, 1, 3))
    head = f"timer_fired({names})" if names else "timer_fired"
    body = f"{event.name}({names})" if names else event.name
    return f"exceptionAlarm({head}, {delay}) <- {body}.\n"
