"""Reference definitions of the selection strategies and contexts.

Written straight from ``strategies.md`` (the project's restatement of
CEL, SASE and SNOOP, see docs/language.md, "Selection strategies"), for
the rules they are defined on: a sequence of events ``e1 seq ... seq en``
(each event maybe with a ``where`` condition of its own), with maybe a
``where`` condition and a ``within`` window around the whole.  A *match*
is the tuple of the positions in the stream of the events it combines;
the engine's provenance gives the same (see :func:`engine_matches`).

- :func:`all_matches` is ``[[P]](S)``, the ALL semantics
  (``unrestricted`` and skip-till-any-match);
- :func:`selected` applies CEL's selectors ``strict``, ``nxt``, ``last``
  and ``max`` to it, per last position;
A condition of the whole whose variables are bound before the last
element is checked as soon as they are (strategies.md: "fits" takes in
every condition whose variables are all bound); under ALL that changes
nothing, under ``stn`` and ``continuous`` it decides which event a run
takes.

- :func:`stn_matches` is SASE's greedy skip-till-next-match procedure;
- :func:`continuous_matches` and :func:`cumulative_matches` are SNOOP's
  continuous and cumulative contexts over the left-nested sequence.

Each is computed on its own, from its own definition: that ``stn`` and
``continuous`` agree on these rules is a theorem the tests check, not an
assumption of the code.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Optional

from etalis_py.bridge.engine import Engine
from etalis_py.events import Event, Time
from etalis_py.rules.rules import (
    Binary, Compound, Const, EventP, Ground, Pattern, Rule, Struct, Term, Var, Where, Within, term_vars)
from .evaluate import Fact, GoalSolver, PrologGoals, reported_value
from .generate import Choices, rename, rename_term
from .terms import RuleSet, goal_variables, ground_from_python, instantiate, match, pattern_variables

_INTERVAL = re.compile(r"\b(start|end|t1|t2|duration|check)\(")
_ANONYMOUS = re.compile(r"_G(\d+)")

SELECTORS = ("strict", "nxt", "last", "max")
"""CEL's selectors: filters on the matches that end at the same position."""


@dataclass(frozen=True)
class Element:
    """One event of a sequence and its own ``where`` condition, if any;
    with ``plus``, one or more of them in sequence (``P+``): ``own`` are
    the variables that each occurrence binds afresh (those no other event
    of the rule shares), which hold the lists of their values after it."""

    event: Term
    goal: Optional[str] = None
    plus: bool = False
    own: tuple[str, ...] = ()


@dataclass(frozen=True)
class Chain:
    """``((e1 seq ... seq en) where goal) within window`` for a rule head."""

    head: Term
    elements: tuple[Element, ...]
    goal: Optional[str] = None
    window: Optional[Time] = None


@dataclass(frozen=True)
class Match:
    """A match: the rule head's event and arguments, its interval and the
    positions of its events, in order."""

    event: str
    args: tuple[Any, ...]
    start: Time
    end: Time
    positions: tuple[int, ...]


def sequence_of(rule: Rule, helpers: Sequence[Rule] = ()) -> Chain:
    """The rule as a sequence; ValueError for a rule of another form.
    ``helpers`` are the hidden rules that the reader made for the rule's
    ``P+`` (see :func:`chain_of`)."""
    goal: Optional[str] = None
    window: Optional[Time] = None
    p: Pattern = rule.pattern
    while isinstance(p, (Where, Within)):
        if isinstance(p, Where) and goal is None:
            goal, p = p.goal, p.pattern
        elif isinstance(p, Within) and window is None:
            window, p = p.window, p.pattern
        elif isinstance(p, Where):
            break           # the condition of the last event (see _elements)
        else:
            raise ValueError(f"not a sequence rule: {rule.text()}")
    # the reader numbers each rule's anonymous variables from _G0: those of
    # the hidden rules are renamed apart, or a `_` of a `P+` would join a
    # `_` of the rule that has the same number
    taken = _anonymous(rule)
    firsts: dict[str, Rule] = {}
    for h in helpers:
        if _first_of_plus(h):
            h = _apart(h, taken)
            taken |= _anonymous(h)
            firsts[_head_name(h.head)] = h
    elements = tuple(_elements(p, rule, firsts))
    return Chain(rule.head, elements, goal, window)


def _anonymous(rule: Rule) -> set[str]:
    """The names of the anonymous variables of ``rule``."""
    names = term_vars(rule.head) | pattern_variables(rule.pattern)
    return {n for n in names if _ANONYMOUS.fullmatch(n)}


def _apart(rule: Rule, taken: set[str]) -> Rule:
    """``rule`` with its anonymous variables renamed to ones that are
    not in ``taken``."""
    free = (f"_G{n}" for n in itertools.count(max((int(n[2:]) for n in taken), default=-1) + 1))
    mapping = dict(zip(sorted(_anonymous(rule)), free))
    return replace(rule, head=rename_term(rule.head, mapping), pattern=rename(rule.pattern, mapping))


def chain_of(text: str) -> Chain:
    """The sequence rule of a rule text (its `P+` read back from the
    hidden rules that stand for them)."""
    rules = RuleSet.from_text(text).rules
    main = [r for r in rules if not _head_name(r.head).startswith("$")]
    if len(main) != 1:
        raise ValueError("a sequence rule text has one rule")
    return sequence_of(main[0], [r for r in rules if r is not main[0]])


def _head_name(t: Term) -> str:
    if isinstance(t, Struct):
        return t.functor
    assert isinstance(t, Const) and isinstance(t.value, str)
    return t.value


def _first_of_plus(r: Rule) -> bool:
    """``r`` is the hidden rule of a `P+` for its first occurrence (the
    other one uses its own head)."""
    name = _head_name(r.head)
    return name.startswith("$plus") and name not in str(r.pattern)


def _elements(p: Pattern, rule: Rule, plus: Mapping[str, Rule]) -> Iterator[Element]:
    if isinstance(p, Binary) and p.op == "seq":
        yield from _elements(p.left, rule, plus)
        yield from _elements(p.right, rule, plus)
    elif isinstance(p, EventP) and _head_name(p.event).startswith("$plus"):
        first = plus[_head_name(p.event)]
        body = first.pattern.pattern if isinstance(first.pattern, Within) else first.pattern
        # a `P+` whose condition reads a variable of the events before it
        # starts its runs with them: its first rule is `(L seq P) where G`
        goal: Optional[str] = None
        if isinstance(body, Where) and isinstance(body.pattern, Binary) and body.pattern.op == "seq":
            goal, body = body.goal, body.pattern
        before: list[Element] = []
        if isinstance(body, Binary) and body.op == "seq":
            before = list(_elements(body.left, first, plus))
            body = body.right
        (elem,) = _elements(body, first, {})
        assert isinstance(first.head, Struct)
        own = tuple(str(a.args[0].name) for a in first.head.args[1:]
                    if isinstance(a, Struct) and isinstance(a.args[0], Var))
        yield from before
        yield Element(elem.event, elem.goal if goal is None else goal, True, own)
    elif isinstance(p, EventP):
        yield Element(p.event)
    elif isinstance(p, Where) and isinstance(p.pattern, EventP):
        yield Element(p.pattern.event, p.goal)
    elif isinstance(p, Where) and isinstance(p.pattern, Binary) and p.pattern.op == "seq":
        # an event's condition that reads a variable of an earlier event is
        # read as a condition on the sequence up to it (the reader moves it)
        *before, last = _elements(p.pattern, rule, plus)
        if last.plus:
            raise ValueError(f"not a sequence rule: {rule.text()}")
        goal = p.goal if last.goal is None else f"({last.goal}), ({p.goal})"
        yield from before
        yield Element(last.event, goal)
    else:
        raise ValueError(f"not a sequence rule: {rule.text()}")


class _Fit:
    """Whether a stream event fits an element of a sequence, given the
    variables bound so far."""

    def __init__(self, seq: Chain, stream: Sequence[Event], solver: GoalSolver, early: bool = True) -> None:
        self.seq = seq
        self.stream = stream
        self.solver = solver
        self.check_at = self._check_at() if early else None

    def _check_at(self) -> Optional[int]:
        """The element once which the condition of the whole has all its
        variables bound (strategies.md: "fits" takes in every condition
        whose variables are all bound), or None when it asks the whole's
        interval or binds variables of its own (then it is solved on the
        complete match)."""
        goal = self.seq.goal
        if goal is None or _INTERVAL.search(goal):
            return None
        bound: set[str] = set()
        for k, e in enumerate(self.seq.elements):
            bound |= term_vars(e.event)
            if all(v in bound for v in goal_variables(goal)):
                return k
        return None

    def element(self, k: int, pos: int, env: Mapping[str, Any], first: Optional[int]) -> list[dict[str, Any]]:
        """The bindings with which the event at ``pos`` fits element ``k``
        after a partial match that started at position ``first`` (None for
        k = 0) with bindings ``env``: its type and arguments, its own
        condition, and the window over what is bound so far."""
        e = self.stream[pos]
        elem = self.seq.elements[k]
        env1 = dict(env)
        if not match(elem.event, _event_value(e), env1):
            return []
        start = e.start if first is None else self.stream[first].start
        if self.seq.window is not None and e.end - start > self.seq.window:
            return []
        envs = [env1] if elem.goal is None else \
            [{**env1, **s} for s in self.solver.solve(elem.goal, env1, e.start, e.end)]
        return [env2 for env2 in envs if self.whole_holds(env2, k)]

    def whole_holds(self, env: Mapping[str, Ground], k: int) -> bool:
        """The condition of the whole, once its variables are bound before
        the last element (and it does not use the whole's interval), must
        hold for the partial match to go on: it is checked on the element
        that binds the last of them (the values do not change after, but
        under `cumulative` they are combined into lists)."""
        goal = self.seq.goal
        if goal is None or k != self.check_at or k == len(self.seq.elements) - 1:
            return True
        return bool(self.solver.solve(goal, env, 0, 0))

    def complete(self, env: Mapping[str, Any], positions: Sequence[int]) -> list[Match]:
        """The matches of a full binding of the elements: the condition
        of the whole, solved (unless it was checked before the last
        element)."""
        start, end = min(self.stream[q].start for q in positions), self.stream[positions[-1]].end
        goal = self.seq.goal
        if goal is None or (self.check_at is not None and self.check_at < len(self.seq.elements) - 1):
            envs = [dict(env)]
        else:
            envs = [{**env, **s} for s in self.solver.solve(goal, env, start, end)]
        return [_accumulated_match(self.seq.head, e, start, end, positions) for e in envs]

    def last(self, pos: int, env: Mapping[str, Any], positions: Sequence[int]) -> list[Match]:
        """The matches with which the event at ``pos`` fits the last
        element after ``positions``: with the condition of the whole,
        which is part of whether it fits (a run under `stn`, an initiator
        under a context, that it fails is not taken)."""
        k = len(self.seq.elements) - 1
        return [m for env1 in self.element(k, pos, env, positions[0] if positions else None)
                for m in self.complete(env1, list(positions) + [pos])]

    def later(self, pos: int) -> Iterator[int]:
        """The positions of the events that can follow the event at
        ``pos`` in a sequence: those that start after it ends."""
        end = self.stream[pos].end
        return (j for j in range(pos + 1, len(self.stream)) if self.stream[j].start > end)


def _event_value(e: Event) -> Ground:
    return Compound(e.name, tuple(ground_from_python(a) for a in e.args)) if e.args else e.name


def all_matches(seq: Chain, stream: Sequence[Event], solver: GoalSolver) -> list[Match]:
    """``[[P]](S)``: every way to pick events, one per element, each
    after the previous one, that fit the elements, the condition and
    the window (skipping any events in between)."""
    fit = _Fit(seq, stream, solver)
    out: list[Match] = []

    def extend(k: int, env: Mapping[str, Any], positions: list[int]) -> None:
        if k == len(seq.elements):
            out.extend(fit.complete(env, positions))
            return
        candidates = range(len(stream)) if k == 0 else fit.later(positions[-1])
        for j in candidates:
            for env1 in fit.element(k, j, env, positions[0] if positions else None):
                if seq.elements[k].plus:
                    more(k, env1, {v: [env1[v]] for v in seq.elements[k].own}, positions + [j])
                else:
                    extend(k + 1, env1, positions + [j])

    def more(k: int, env: Mapping[str, Any], lists: dict[str, list[Any]], positions: list[int]) -> None:
        """A `P+` that has taken the events at ``positions`` ends here, or
        takes one more."""
        own = seq.elements[k].own
        extend(k + 1, {**env, **{v: list(vs) for v, vs in lists.items()}}, positions)
        outer = {n: v for n, v in env.items() if n not in own}
        for j in fit.later(positions[-1]):
            for env1 in fit.element(k, j, outer, positions[0]):
                more(k, env1, {v: lists[v] + [env1[v]] for v in own}, positions + [j])

    extend(0, {}, [])
    return out


def selected(selector: str, matches: Sequence[Match]) -> list[Match]:
    """CEL's ``selector`` applied to ``matches`` (see strategies.md): of
    the matches with the same last position, STRICT keeps those whose
    positions are contiguous, NXT the greatest in <=next, LAST the
    greatest in <=last, MAX those with no strict superset.  Two matches
    with the same positions count as one (the first)."""
    by_last: dict[int, list[Match]] = {}
    seen: set[tuple[int, ...]] = set()
    for m in matches:
        if m.positions not in seen:
            seen.add(m.positions)
            by_last.setdefault(m.positions[-1], []).append(m)
    out: list[Match] = []
    for group in by_last.values():
        if selector == "strict":
            out += [m for m in group if m.positions[-1] - m.positions[0] == len(m.positions) - 1]
        elif selector == "max":
            out += [m for m in group if not any(set(m.positions) < set(o.positions) for o in group)]
        elif selector in ("nxt", "last"):
            best = group[0]
            for m in group[1:]:
                if _greater(selector, m.positions, best.positions):
                    best = m
            out.append(best)
        else:
            raise ValueError(f"unknown selector {selector!r}")
    return out


def _greater(selector: str, c1: Sequence[int], c2: Sequence[int]) -> bool:
    """C2 <= C1 and C1 != C2 in CEL's order: the smallest (nxt) or the
    largest (last) position of the symmetric difference lies in C1."""
    diff = set(c1) ^ set(c2)
    return (min(diff) if selector == "nxt" else max(diff)) in c1


def stn_matches(seq: Chain, stream: Sequence[Event], solver: GoalSolver) -> list[Match]:
    """SASE's skip-till-next-match: every event that fits the first
    element starts a run; a run that has bound an element at position i
    takes the first later position that fits the next element (its type,
    its own condition, the window so far and the condition of the whole
    once its variables are bound) and, if the element is `P+`, also the
    first later position that fits another iteration of it (the run
    branches); a run that has bound the last element is a match, so a
    trailing `P+` yields every prefix of its iterations."""
    fit = _Fit(seq, stream, solver)
    out: list[Match] = []
    n = len(seq.elements)

    def fitting(k: int, j: int, env: Mapping[str, Any], positions: list[int]) -> list[dict[str, Any]]:
        envs = fit.element(k, j, env, positions[0] if positions else None)
        if k == n - 1 and not seq.elements[k].plus:
            envs = [e for e in envs if fit.complete(e, positions + [j])]
        return envs

    def first(k: int, env: Mapping[str, Any], positions: list[int]) -> Optional[tuple[int, list[dict[str, Any]]]]:
        for j in fit.later(positions[-1]):
            envs = fitting(k, j, env, positions)
            if envs:
                return j, envs
        return None

    def bound(k: int, env: Mapping[str, Any], lists: dict[str, list[Any]], positions: list[int]) -> None:
        """The run has bound element ``k`` (a `P+` with the values
        ``lists`` of its own variables) at ``positions``."""
        full = {**env, **{v: list(vs) for v, vs in lists.items()}}
        if k == n - 1:
            out.extend(fit.complete(full, positions))
        elif (found := first(k + 1, full, positions)) is not None:
            j, envs = found
            for env1 in envs:
                start(k + 1, env1, positions + [j])
        if seq.elements[k].plus:
            own = seq.elements[k].own
            outer = {m: v for m, v in env.items() if m not in own}
            if (found := first(k, outer, positions)) is not None:
                j, envs = found
                for env1 in envs:
                    bound(k, env1, {v: lists[v] + [env1[v]] for v in own}, positions + [j])

    def start(k: int, env: dict[str, Any], positions: list[int]) -> None:
        element = seq.elements[k]
        bound(k, env, {v: [env[v]] for v in element.own} if element.plus else {}, positions)

    for i in range(len(stream)):
        for env in fitting(0, i, {}, []):
            start(0, env, [i])
    return out


def continuous_matches(seq: Chain, stream: Sequence[Event], solver: GoalSolver) -> list[Match]:
    """SNOOP's continuous context over ``(((e1 seq e2) seq e3) ...)``: the
    occurrences of each prefix wait as initiators; a terminator (an event
    that fits the next element) combines with every eligible initiator
    (one that ended before it and with which it fits), and consumes them
    all.  An event completes the longer prefixes before it initiates
    (the order of the engine, which the definitions leave open)."""
    fit = _Fit(seq, stream, solver)
    n = len(seq.elements)
    waiting: list[list[tuple[dict[str, Ground], list[int]]]] = [[] for _ in range(n)]
    out: list[Match] = []
    for p in range(len(stream)):
        for k in range(n - 1, 0, -1):
            kept = []
            for env, positions in waiting[k - 1]:
                after = stream[positions[-1]].end < stream[p].start
                if k == n - 1:
                    matches = fit.last(p, env, positions) if after else []
                    if not matches:
                        kept.append((env, positions))
                    out.extend(matches)
                    continue
                envs = fit.element(k, p, env, positions[0]) if after else []
                if not envs:
                    kept.append((env, positions))
                for env1 in envs:
                    waiting[k].append((env1, positions + [p]))
            waiting[k - 1] = kept
        if n == 1:
            out.extend(fit.last(p, {}, []))
            continue
        for env in fit.element(0, p, {}, None):
            waiting[0].append((env, [p]))
    return out


def cumulative_matches(seq: Chain, stream: Sequence[Event], solver: GoalSolver) -> list[Match]:
    """SNOOP's cumulative context over ``(((e1 seq e2) seq e3) ...)``: as
    continuous, but a terminator combines all its eligible initiators into
    one occurrence: a variable that the next element does not share holds
    the list of its values in them (oldest first; nested, step by step),
    a shared one (the join) its one value, and the occurrence spans from
    the earliest of them to the terminator."""
    fit = _Fit(seq, stream, solver)
    n = len(seq.elements)
    later = [set().union(*(term_vars(e.event) for e in seq.elements[k:])) | term_vars(seq.head)
             for k in range(n + 1)]
    waiting: list[list[tuple[dict[str, Any], list[int]]]] = [[] for _ in range(n)]
    out: list[Match] = []
    for p in range(len(stream)):
        for k in range(n - 1, 0, -1):
            kept, taken = [], []
            for env, positions in waiting[k - 1]:
                earliest = min(positions, key=lambda q: stream[q].start)    # combined ones start there
                envs = fit.element(k, p, env, earliest) if stream[positions[-1]].end < stream[p].start else []
                if k == n - 1:      # the condition of the whole holds for each initiator on its own
                    envs = [e for e in envs if fit.complete(e, positions + [p])]
                if envs:
                    taken.append((envs[0], positions))
                else:
                    kept.append((env, positions))
            waiting[k - 1] = kept
            if not taken:
                continue
            shared = term_vars(seq.elements[k].event)
            combined: dict[str, Any] = {}
            for name in later[k]:
                values = [env[name] for env, _ in taken if name in env]
                if values:
                    combined[name] = values[0] if name in shared else values
            positions = [q for _, ps in taken for q in ps] + [p]
            if k == n - 1:
                start = min(stream[q].start for q in positions)
                out.append(_accumulated_match(seq.head, combined, start, stream[p].end, positions))
            else:
                waiting[k].append((combined, positions))
        for env0 in fit.element(0, p, {}, None):
            waiting[0].append((dict(env0), [p]))
    return out


POLICIES = ("recent", "chronological", "recent(longer)", "recent(shorter)", "recent(greater(1))",
            "chronological(longer)", "chronological(shorter)", "chronological(greater(1))")
"""ETALIS's choosing policies (SNOOP's recent and chronicle contexts) and their
interval variants, defined here on sequences of events."""


def chosen_matches(policy: str, seq: Chain, stream: Sequence[Event], solver: GoalSolver) -> list[Match]:
    """SNOOP's recent and chronicle contexts (ETALIS's `recent` and
    `chronological`, with their interval variants, see docs/language.md)
    over ``(((e1 seq e2) seq e3) ...)``: the occurrences of each prefix wait
    as initiators; a terminator (an event that fits the next element)
    combines with one eligible initiator (one that ended before it, with
    which it fits, inside the window; at the last element also passing
    the condition of the whole, which is written on the last `seq`):
    under `recent` the most recent (the one that ends last, of those
    that end together the one the variant prefers: `longer` starts
    earlier, `shorter` later, greater(N) has the greater N-th argument
    of the element's event; then the last to arrive), which stays; under
    `chronological` the oldest (the first to arrive; the variants: the
    one that starts first, then by preference, then the first to
    arrive), which it consumes.  An event completes the longer prefixes
    before it initiates.  Defined for streams where no two events end
    together (then `recent`'s newest initiator is always before a
    terminator, and fits the window if any does)."""
    kind, _, pref = policy.partition("(")
    pref = pref[:-1] if pref else ""
    fit = _Fit(seq, stream, solver, early=False)
    n = len(seq.elements)
    # an initiator: its bindings, positions, start, end and arrival
    waiting: list[list[tuple[dict[str, Any], list[int], Time, Time, int]]] = [[] for _ in range(n)]
    out: list[Match] = []
    arrival = 0

    def order(item: tuple[dict[str, Any], list[int], Time, Time, int], k: int) -> tuple[Any, ...]:
        env, positions, start, end, seen = item
        if pref == "longer":
            p: Any = -start
        elif pref == "shorter":
            p = start
        elif pref.startswith("greater"):
            value = stream[positions[-1]].args[0] if k == 1 and stream[positions[-1]].args else None
            p = (0, value) if isinstance(value, (int, float)) else (-1, 0)
        else:
            p = 0
        if kind == "recent":
            return (end, p, seen)
        return (-start, p, -seen) if pref else (-seen,)

    for q in range(len(stream)):
        for k in range(n - 1, 0, -1):
            eligible = []
            for item in waiting[k - 1]:
                env, positions, start, end, _ = item
                if not end < stream[q].start:
                    continue
                results: list[Any] = fit.last(q, env, positions) if k == n - 1 else \
                    fit.element(k, q, env, positions[0])
                if results:
                    eligible.append((item, results))
            if not eligible:
                continue
            item, results = max(eligible, key=lambda e: order(e[0], k))
            if kind == "chronological":
                waiting[k - 1].remove(item)
            if k == n - 1:
                out.extend(results)
            else:
                for env1 in results:
                    waiting[k].append((env1, item[1] + [q], item[2], stream[q].end, arrival))
                    arrival += 1
        if n == 1:
            out.extend(fit.last(q, {}, []))
            continue
        for env in fit.element(0, q, {}, None):
            waiting[0].append((env, [q], stream[q].start, stream[q].end, arrival))
            arrival += 1
    return out


def _accumulated_match(head: Term, env: Mapping[str, Any], start: Time, end: Time,
                       positions: Sequence[int]) -> Match:
    args = tuple(_reported(env, a) for a in head.args) if isinstance(head, Struct) else ()
    name = head.functor if isinstance(head, Struct) else instantiate(head, {})
    assert isinstance(name, str)
    return Match(name, args, start, end, tuple(positions))


def _reported(env: Mapping[str, Any], term: Term) -> Any:
    if isinstance(term, Var):
        return _tuples(env[term.name])
    return reported_value(instantiate(term, {n: v for n, v in env.items() if not isinstance(v, list)}))


def _tuples(value: Any) -> Any:
    """Lists of accumulated values as tuples (hashable), others as the
    engine reports them."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return reported_value(value)


def partition_key(seq: Chain) -> tuple[str, ...]:
    """The key of a sequence for `strict(partition)`: the variables that
    every one of its events has as an argument, in the order of the
    first event's arguments."""
    def argument_vars(t: Term) -> list[str]:
        return [a.name for a in t.args if isinstance(a, Var) and a.name != "_"] if isinstance(t, Struct) else []
    first, *others = [argument_vars(e.event) for e in seq.elements]
    return tuple(dict.fromkeys(v for v in first if all(v in o for o in others)))


def partition_contiguous(seq: Chain, stream: Sequence[Event], matches: Sequence[Match]) -> list[Match]:
    """SASE's partition contiguity: the matches between whose first and
    last events no event of their partition is left out.  The partition
    of a match is the events of the stream with the name and arity of an
    event of the sequence whose arguments where that event has the key's
    variables (:func:`partition_key`) have the match's values of them."""
    key = partition_key(seq)

    def key_args(t: Term) -> Optional[tuple[int, ...]]:
        if not isinstance(t, Struct):
            return () if not key else None
        names = [a.name if isinstance(a, Var) else None for a in t.args]
        return tuple(names.index(v) for v in key)

    shapes = {(_head_name(e.event), len(e.event.args) if isinstance(e.event, Struct) else 0): key_args(e.event)
              for e in seq.elements}

    def values(e: Event) -> Optional[tuple[Any, ...]]:
        where = shapes.get((e.name, len(e.args)))
        return None if where is None else tuple(e.args[i] for i in where)

    out = []
    for m in matches:
        values_of_match = values(stream[m.positions[0]])
        inside = set(m.positions)
        if all(k in inside or values(stream[k]) != values_of_match
               for k in range(m.positions[0], m.positions[-1] + 1)):
            out.append(m)
    return out


SKIPS = ("no_skip", "skip_to_next", "skip_past_last_event")
"""Flink's after-match skip strategies (docs/language.md, "Skip strategies")."""

SKIPPING = ("unrestricted",) + SELECTORS + ("strict(partition)", "stn", "continuous")
"""The strategies on which a skip strategy is defined: those whose
matches do not depend on one another."""


def key_values(seq: Chain, stream: Sequence[Event], m: Match) -> tuple[Any, ...]:
    """The values of the key of ``seq`` (:func:`partition_key`) in the
    match ``m``: those of its first event, which binds them all."""
    env: dict[str, Ground] = {}
    match(seq.elements[0].event, _event_value(stream[m.positions[0]]), env)
    return tuple(env[v] for v in partition_key(seq))


def skipped(skip: str, strategy: str, matches: Sequence[Match],
            key: Callable[[Match], Any] = lambda m: ()) -> list[Match]:
    """The matches that ``skip`` keeps of ``matches`` (those of ``strategy``
    under ``no_skip``; under a selector, all matches, which it selects
    from), apart for each value of ``key`` (the rule's key values, see
    :func:`key_values`): the matches are taken by their last position,
    and of those that end together by their positions, the earliest
    start first.  A match is discarded when a match with its key values
    kept before it started at its first position (``skip_to_next``), or
    ended at or after its first position (``skip_past_last_event``); a
    selector chooses among the matches that end together and are not
    discarded; each chosen one is kept unless one kept before it (also
    at the same position) discards it.  Two matches with the same
    positions count as one."""
    if skip not in SKIPS:
        raise ValueError(f"unknown skip strategy {skip!r}")
    if skip == "no_skip":
        return selected(strategy, matches) if strategy in SELECTORS else list(matches)
    by_last: dict[tuple[Any, int], list[Match]] = {}
    seen: set[tuple[int, ...]] = set()
    for m in matches:
        if m.positions not in seen:
            seen.add(m.positions)
            by_last.setdefault((key(m), m.positions[-1]), []).append(m)
    kept: dict[Any, list[Match]] = {}

    def discarded(k: Any, m: Match) -> bool:
        first = m.positions[0]
        if skip == "skip_to_next":
            return any(c.positions[0] == first for c in kept.get(k, []))
        return any(c.positions[-1] >= first for c in kept.get(k, []))

    out: list[Match] = []
    for k, last in sorted(by_last, key=lambda kl: kl[1]):
        group = [m for m in by_last[(k, last)] if not discarded(k, m)]
        if strategy in SELECTORS:
            group = selected(strategy, group)
        for m in sorted(group, key=lambda m: m.positions):
            if not discarded(k, m):
                kept.setdefault(k, []).append(m)
                out.append(m)
    return out


def reference_matches(strategy: str, seq: Chain, stream: Sequence[Event], solver: GoalSolver,
                      skip: str = "no_skip") -> list[Match]:
    """The matches of ``seq`` on ``stream`` under ``strategy``
    (``unrestricted``, a selector, ``stn`` or ``continuous``) and the
    skip strategy ``skip``."""
    if any(e.plus for e in seq.elements) and (strategy in ("continuous", "cumulative") or strategy in POLICIES):
        raise ValueError(f"P+ is not defined under {strategy}")
    def key(m: Match) -> tuple[Any, ...]:
        return key_values(seq, stream, m)

    if strategy == "strict(partition)":
        distinct = list({m.positions: m for m in reversed(all_matches(seq, stream, solver))}.values())[::-1]
        return skipped(skip, "unrestricted", partition_contiguous(seq, stream, distinct), key)
    if skip != "no_skip":
        if strategy not in SKIPPING:
            raise ValueError(f"{skip} is not defined under {strategy}")
        base = all_matches(seq, stream, solver) if strategy in SELECTORS + ("unrestricted",) else \
            reference_matches(strategy, seq, stream, solver)
        return skipped(skip, strategy, base, key)
    if strategy == "unrestricted":
        return all_matches(seq, stream, solver)
    if strategy in SELECTORS:
        return selected(strategy, all_matches(seq, stream, solver))
    if strategy == "stn":
        return stn_matches(seq, stream, solver)
    if strategy == "continuous":
        return continuous_matches(seq, stream, solver)
    if strategy == "cumulative":
        return cumulative_matches(seq, stream, solver)
    if strategy in POLICIES:
        return chosen_matches(strategy, seq, stream, solver)
    raise ValueError(f"no reference definition of {strategy!r}")


def engine_matches(text: str, strategy: str, stream: Sequence[Event]) -> list[Match]:
    """The engine's detections of the rule text under ``strategy``, each
    with the positions of its events (from its provenance; the events of
    ``stream`` must have distinct intervals)."""
    where = {(e.start, e.end): i for i, e in enumerate(stream)}
    if len(where) != len(stream):
        raise ValueError("the events of the stream must have distinct intervals")
    with Engine.from_string(text, policy=strategy, explain=True, source="rules.etl") as engine:
        found = engine.emit_many(list(stream))
    if found.rejected:
        raise ValueError(f"the engine rejected stream items: {found.rejected}")
    return [Match(d.event, tuple(_tuples(a) for a in d.args), d.start, d.end,
                  tuple(where[(p.start, p.end)] for p in d.provenance))
            for d in found.detections]


def compare(text: str, strategy: str, stream: Sequence[Event], solver: GoalSolver,
            skip: str = "no_skip") -> tuple[Counter[Match], Counter[Match]]:
    """(missing, unexpected): the reference's matches of the single rule
    of ``text`` that the engine does not detect, and the engine's that
    the reference does not have, each as often as it is missing.  With
    a ``skip`` other than ``no_skip`` the text must say it (``:-
    skip(S).``)."""
    want = Counter(reference_matches(strategy, chain_of(text), stream, solver, skip))
    got = Counter(engine_matches(text, strategy, stream))
    return want - got, got - want


STRATEGIES = ("unrestricted",) + SELECTORS + ("strict(partition)", "stn", "continuous", "cumulative") + POLICIES
"""The strategies and policies with a reference definition here: every one
the engine accepts (the interval variants with greater(1))."""

_ARITY = {"a": 1, "b": 1, "c": 0}


@dataclass(frozen=True)
class ChainCase:
    """A random sequence rule and stream, checked under a strategy."""

    strategy: str
    text: str
    stream: tuple[Event, ...]
    skip: str = "no_skip"

    def report(self, missing: Counter[Match], unexpected: Counter[Match]) -> str:
        lines = [f"% policy {self.strategy}", self.text, "% stream"]
        lines += [f"event({e.name}({', '.join(map(str, e.args))}), {e.start})." if e.args
                  else f"event({e.name}, {e.start})." for e in self.stream]
        lines += [f"% missing {m}" for m in missing.elements()]
        lines += [f"% unexpected {m}" for m in unexpected.elements()]
        return "\n".join(lines)


def random_chain_case(ch: Choices, strategy: Optional[str] = None) -> ChainCase:
    """A sequence rule of 2 to 4 events of a/1, b/1 and c/0 (arguments
    fresh or shared variables, `_` or constants; now and then a condition
    of an event's own, a condition of the whole over two of
    its variables, a window) and a stream of 3 to 9 events at increasing
    times (now and then intervals, some ending together, some
    overlapping), for ``strategy`` (drawn when None).  Under `unrestricted`,
    the selectors and `stn`, now and then one event is `P+`, maybe with a
    condition of its own that correlates its fresh variable with a
    variable of an earlier event (the event after it now and then of the
    same name), and maybe a later event with a condition over the list of
    its values.  A condition of the whole is
    never drawn over the list of a `P+`, and under `cumulative` only over
    the variables of the first two events (those of later ones are lists
    by then).  Under the strategies that define it (:data:`SKIPPING`),
    now and then the rule has a skip strategy, the file's (``:- skip(S).``)
    or, labelled, its own (``:- skip(r, S).``)."""
    if strategy is None:
        strategy = STRATEGIES[ch.integer(0, len(STRATEGIES) - 1)]
    names = ("X", "Y", "Z")
    bound: list[str] = []
    parts: list[str] = []
    part_vars: list[Optional[str]] = []
    conditioned: list[bool] = []
    count = ch.integer(2, 4)
    plus_at: Optional[int] = None
    if strategy not in ("continuous", "cumulative") + POLICIES and ch.integer(0, 2) == 0:
        plus_at = ch.integer(0, count - 1)
    kinds: list[str] = []
    for i in range(count):
        name = "abc"[ch.integer(0, 2)]
        if plus_at is not None and i == plus_at + 1 and ch.integer(0, 1) == 0:
            name = kinds[plus_at]   # the + and what follows it take the same events (`a b+ b`)
        kinds.append(name)
        var: Optional[str] = None
        condition = False
        if _ARITY[name] == 0:
            part = name
        elif (kind := ch.integer(0, 5)) <= 2:
            var = names[ch.integer(0, 2)]
            fresh = var not in bound
            # an earlier variable that is no list (the one of a `P+` may be)
            earlier = sorted({v for k, v in enumerate(part_vars) if v is not None and v != var
                              and k != plus_at})
            bound.append(var)
            part = f"{name}({var})"
            if fresh and earlier and i == plus_at and ch.integer(0, 1) == 0:
                other = earlier[ch.integer(0, len(earlier) - 1)]
                test = (">", "<", "=:=", "=\\=")[ch.integer(0, 3)]
                part = f"({part} where {var} {test} {other})"
                condition = True
            elif fresh and ch.integer(0, 3) == 0:
                test = (">", "=\\=")[ch.integer(0, 1)]
                part = f"({part} where {var} {test} {ch.integer(0, 1)})"
                condition = True
        elif kind == 3:
            part = f"{name}(_)"
        else:
            part = f"{name}({ch.integer(0, 2)})"
        parts.append(part)
        part_vars.append(var)
        conditioned.append(condition)
    lists: set[str] = set()
    if plus_at is not None:
        parts[plus_at] += "+"
        var = part_vars[plus_at]
        if var is not None and bound.count(var) == 1:
            lists.add(var)         # its own: the list of its values
            later = [k for k in range(plus_at + 1, count)
                     if part_vars[k] is not None and not conditioned[k] and bound.count(part_vars[k] or "") == 1]
            if later and ch.integer(0, 1) == 0:
                k = later[ch.integer(0, len(later) - 1)]
                name = parts[k][0]
                parts[k] = f"({name}({part_vars[k]}) where (sum_list({var}, S), S >= {part_vars[k]}))"
    pattern = " seq ".join(parts)
    used = sorted(set(bound))
    single = [v for v in used if v not in lists]
    pair = single[:2]
    if strategy == "cumulative":    # before the values are combined into lists: those of the first two events
        first_two = [v for v in part_vars[:2] if v is not None]
        pair = first_two if len(set(first_two)) == 2 else []
    if len(pair) == 2 and ch.integer(0, 2) == 0:
        pattern = f"({pattern}) where {pair[0]} {('<', '>=', '=:=')[ch.integer(0, 2)]} {pair[1]}"
    if ch.integer(0, 2) == 0:
        pattern = f"({pattern}) within {ch.integer(1, 6)}"
    head = f"h({', '.join(used)})" if used else "h"
    stream: list[Event] = []
    t = 0
    intervals = ch.integer(0, 3) == 0 and strategy not in POLICIES
    seen: set[tuple[int, int]] = set()
    for _ in range(ch.integer(3, 9)):
        if intervals:           # intervals, some ending together, some overlapping
            t += ch.integer(0, 2)
            start = t - ch.integer(0, 2)
            if (start, t) in seen:
                t += 1
                start = t
        else:
            t += ch.integer(1, 2)
            start = t
        seen.add((start, t))
        name = "abc"[ch.integer(0, 2)]
        args = (ch.integer(0, 2),) if _ARITY[name] else ()
        stream.append(Event(name, args, start, t))
    if pattern.endswith("+"):
        pattern += " "          # `+.` would read as one symbol
    skip = SKIPS[ch.integer(1, 2)] if strategy in SKIPPING and ch.integer(0, 3) == 0 else "no_skip"
    directive, label = "", ""
    if skip != "no_skip":           # the file's or the labelled rule's
        labelled = ch.integer(0, 1) == 0
        directive = f":- skip(r, {skip}).\n" if labelled else f":- skip({skip}).\n"
        label = "r : " if labelled else ""
    return ChainCase(strategy, f"{directive}{label}{head} <- {pattern}.", tuple(stream), skip)


def check_chain_case(case: ChainCase) -> tuple[Counter[Match], Counter[Match]]:
    """(missing, unexpected) of the engine against the reference."""
    with PrologGoals(case.text) as solver:
        return compare(case.text, case.strategy, case.stream, solver, case.skip)


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
