"""Findings: the mistakes of a rule file that show before any event
arrives (``etalis check``, and the warnings of ``run``, ``replay`` and
:meth:`Engine.findings`).  docs/language.md, "Checking rules", defines
each one.

The facts come from the engine's own reader and compiler through the
``rules`` request (:class:`~etalis_py.rules.analysis.RuleFile`): the rules with
their positions, how each event of a pattern completes it in time (the
compiler's recursion check decides), the unbound variables of ``where``
conditions, the ``:- input`` declarations, the static clauses that use
event operators and the predicates called that nothing defines.  This
module draws the conclusions, on the event graph of
:mod:`~etalis_py.rules.graph` and with the near names of
:mod:`~etalis_py.rules.names`.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from .analysis import EventUse, RuleFile, RuleInfo, Sig
from .graph import cycles, event_graph, rules_by_head, strata
from .names import NameIndex
from .rules import (Aggregate, Binary, Const, Deep, EventP, Pattern, PString, RulePattern, Where, Within,
                    pattern_vars, sub_patterns, term_text)

SEVERITIES = ("error", "warning", "info")
# how a step of a cycle relates the times of the two events, worst first
_STEPS = ("immediate", "guarded", "repeating", "widening", "waiting")
# a cycle is as good as its best step, except that steps that repeat an
# occurrence (ended by dropping duplicates) end it only when all do
_CYCLE_KINDS = ("repeating", "immediate", "guarded", "widening", "waiting")


@dataclass(frozen=True)
class Finding:
    """One problem (or, for ``info``, one fact worth knowing) of a rule
    file, at the position of the rule, clause or directive at fault."""

    severity: str       # error | warning | info
    code: str           # a stable id, e.g. unknown-event
    message: str
    file: str
    line: int
    column: int
    hint: str = ""
    data: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def text(self) -> str:
        """``file:line:col: severity: message [code]`` and the hint."""
        out = f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message} [{self.code}]"
        return out + (f"\n  hint: {self.hint}" if self.hint else "")

    def to_json(self) -> dict[str, Any]:
        return {"severity": self.severity, "code": self.code, "message": self.message, "file": self.file,
                "line": self.line, "column": self.column, "hint": self.hint, "data": dict(self.data)}


def check_file(path: str, max_age: Optional[float] = None, static: Sequence[str] = ()) -> list[Finding]:
    """The findings of the rule file ``path`` (with the files of static
    knowledge ``static``); ``max_age`` is the engine's (``--max-age``),
    which bounds memory as ``:- max_age(D).`` does.
    Raises RuleError for a file the reader or compiler refuses."""
    return findings(RuleFile.read(path, static=static), max_age)


def check_text(text: str, source: str = "<string>", max_age: Optional[float] = None) -> list[Finding]:
    """As :func:`check_file`, for rules given as text named ``source``."""
    return findings(RuleFile.read(source, text), max_age)


def findings(rf: RuleFile, max_age: Optional[float] = None) -> list[Finding]:
    """Every finding of ``rf``, by position, then code."""
    out: list[Finding] = [
        Finding("warning", "not-utf8", d.message, d.file, d.line, d.column,
                "save the file as UTF-8 text if it is not Windows-1252 or Latin-1")
        for d in rf.decoded
    ]
    out += _event_clauses(rf)
    if not rf.rules:
        out.append(Finding("warning", "no-event-rules", "the file has no event rules, so it detects nothing",
                           rf.source, 1, 1, "an event rule is written Head <- Pattern."))
    for check in (_arity_clashes, _unknown_events, _unused_events, _unreported_events, _cycles, _never_fires,
                  _negation_races, _unbound_where, _unbound_head, _singletons, _never_holds, _type_clashes,
                  _duplicate_rules, _empty_windows, _negations_as_events, _undefined_predicates):
        out += check(rf)
    if rf.max_age is None and max_age is None:
        out += _unbounded(rf)
    out += _windows_beyond_max_age(rf, max_age)
    out += _unknown_vocabulary(rf)
    return sorted(out, key=lambda f: (f.line, f.column, SEVERITIES.index(f.severity), f.code, f.message))


def counts(found: Iterable[Finding]) -> dict[str, int]:
    """How many findings of each severity."""
    found = list(found)
    return {s: sum(f.severity == s for f in found) for s in SEVERITIES}


def _at(rf: RuleFile, rule: RuleInfo, severity: str, code: str, message: str, hint: str = "",
        **data: Any) -> Finding:
    return Finding(severity, code, message, rf.source, rule.line, rule.column, hint, data)


def _lines(rules: Iterable[RuleInfo]) -> str:
    return _lines_of(r.line for r in rules)


def _event_clauses(rf: RuleFile) -> list[Finding]:
    return [Finding("error", "event-operators-in-static-clause",
                    f"the static clause {c.sig} uses the event operator{'s' if len(c.operators) > 1 else ''} "
                    f"{', '.join(c.operators)}: a Prolog clause (`:-` or `=>`) is no event rule and never sees an event",
                    rf.source, c.line, c.column, "write `<-` for an event rule: Head <- Pattern.",
                    {"head": str(c.sig), "operators": list(c.operators)})
            for c in rf.event_clauses]


def _uses(rf: RuleFile) -> dict[Sig, list[RuleInfo]]:
    """The rules whose pattern uses each event (negated or not)."""
    uses: dict[Sig, list[RuleInfo]] = {}
    for r in rf.rules:
        for sig in dict.fromkeys(s for s, _ in r.steps):
            uses.setdefault(sig, []).append(r)
    return uses


def _arity_clashes(rf: RuleFile) -> list[Finding]:
    where: dict[str, dict[int, list[int]]] = {}
    first: dict[tuple[str, int], tuple[int, int]] = {}

    def note(sig: Sig, line: int, column: int) -> None:
        where.setdefault(sig.name, {}).setdefault(sig.arity, []).append(line)
        first.setdefault((sig.name, sig.arity), (line, column))

    for d in rf.inputs:
        note(d.sig, d.line, d.column)
    for r in rf.rules:
        note(r.head.sig, r.line, r.column)
        for sig, _ in r.steps:
            note(sig, r.line, r.column)
    out = []
    for name, arities in where.items():
        if len(arities) < 2:
            continue
        ordered = sorted(arities, key=lambda a: first[(name, a)])
        line, column = first[(name, ordered[1])]
        parts = [f"{name}/{a} ({_lines_of(arities[a])})" for a in ordered]
        out.append(Finding("warning", "arity-clash",
                           f"{name} is used with {len(ordered)} arities: {', '.join(parts)}; each is a different event",
                           rf.source, line, column,
                           "give the event the same number of arguments everywhere, or different names",
                           {"name": name, "arities": {str(a): sorted(set(arities[a])) for a in ordered}}))
    return out


def _lines_of(lines: Iterable[int]) -> str:
    ls = sorted(set(lines))
    return ("line " if len(ls) == 1 else "lines ") + ", ".join(map(str, ls))


def _unknown_events(rf: RuleFile) -> list[Finding]:
    heads, uses = rules_by_head(rf), _uses(rf)
    inputs = {d.sig for d in rf.inputs}
    underived = [s for s in uses if s not in heads]
    out = []
    if rf.inputs:
        index = NameIndex(itertools.chain(heads, inputs))
        for sig in underived:
            if sig in inputs:
                continue
            rule = uses[sig][0]
            near = index.near(sig)
            hint = (f"did you mean {' or '.join(near)}?" if near
                    else f"declare it as an input event: :- input({sig}).")
            out.append(_at(rf, rule, "error", "unknown-event",
                           f"no rule derives {sig} and it is not declared as input ({_lines(uses[sig])}): "
                           "the pattern can never match", hint, event=str(sig), suggestions=near))
        return out
    # no inputs declared: underived events are the inputs, but one that is
    # near a derived event, or an input event used more, is suspect
    rank = {s: (-len(uses[s]), uses[s][0].line) for s in underived}
    index = NameIndex(itertools.chain(heads, underived))
    for sig in underived:
        near = index.near(sig, lambda c: c in heads or (c in rank and rank[c] < rank[sig]))
        if near:
            out.append(_at(rf, uses[sig][0], "warning", "similar-event-name",
                           f"no rule derives {sig}, so it must come from the input ({_lines(uses[sig])}); "
                           f"did you mean {' or '.join(near)}?",
                           f"if {sig} is an input event, declare the inputs: :- input([...]).",
                           event=str(sig), suggestions=near))
    return out


def _unused_events(rf: RuleFile) -> list[Finding]:
    if not rf.printed_explicit:
        return []
    uses = _uses(rf)
    return [_at(rf, rules[0], "warning", "unused-event",
                f"{sig} is derived ({_lines(rules)}) but no rule uses it and it is not reported "
                "(print_events): its rules do work for nothing",
                f"add {sig} to :- print_events([...]), use it in a pattern, or remove its rules",
                event=str(sig))
            for sig, rules in rules_by_head(rf).items() if sig not in uses and sig not in rf.printed]


def _unreported_events(rf: RuleFile) -> list[Finding]:
    """Events that ``:- print_events`` names but no rule derives: only
    derived events are reported, so these never are (unless a rule added
    as the file runs derives them: not checked then)."""
    if rf.raises:
        return []
    heads = rules_by_head(rf)
    index = NameIndex(heads)
    out = []
    for d in dict.fromkeys(rf.print_events):
        if d.sig in heads or d.sig.name.startswith("$"):
            continue
        near = index.near(d.sig) or [str(s) for s in sorted(heads) if s.name == d.sig.name][:3]
        out.append(Finding("warning", "unknown-printed-event",
                           f"print_events names {d.sig}, which no rule derives: it is never reported "
                           "(input events are not)",
                           rf.source, d.line, d.column,
                           f"did you mean {' or '.join(near)}?" if near
                           else "name events that rules derive, as Name/Arity",
                           {"event": str(d.sig), "suggestions": near}))
    return out


def _cycles(rf: RuleFile) -> list[Finding]:
    g = event_graph(rf)
    out = []
    for cycle in cycles(g):
        if all(s.name.startswith("$") for s in cycle):
            continue    # the reader's own recursion for an ETALIS run (star_times, aggregate/3): it waits
        path = list(zip(cycle, cycle[1:] + cycle[:1]))
        steps = []
        for a, b in path:
            rule, step = min(g.edges[a, b]["rules"], key=lambda rs: (_STEPS.index(rs[1]), rs[0].line))
            steps.append((a, b, rule, step))
        kind = max((s for *_, s in steps), key=_CYCLE_KINDS.index)
        text = str(cycle[0]) + "".join(f" -> {b} (line {r.line})" for _, b, r, _ in steps)
        first = min((r for *_, r, _ in steps), key=lambda r: r.line)
        data = {"cycle": [str(s) for s in cycle], "lines": [r.line for *_, r, _ in steps], "kind": kind}
        if kind == "immediate":
            out.append(_at(rf, first, "error", "endless-cycle",
                           f"these rules derive {cycle[0]} from itself at the same time, forever, through an "
                           f"aggregate: {text}",
                           "put the recursive event on the left of seq (it must occur before), or guard the "
                           "recursion with a where condition", **data))
        elif kind == "guarded":
            guards = sorted({r.line for *_, r, s in steps if s == "guarded"})
            out.append(_at(rf, first, "warning", "guarded-cycle",
                           f"recursion at the same time: {text}; only the where condition"
                           f"{'s' if len(guards) > 1 else ''} of line{'s' if len(guards) > 1 else ''} "
                           f"{', '.join(map(str, guards))} can stop it",
                           "make sure the condition fails after finitely many rounds, or put the recursive "
                           "event on the left of seq", **data))
        elif kind == "repeating":
            out.append(_at(rf, first, "info", "cycle",
                           f"recursion at the same time: {text}; an occurrence identical to one already derived "
                           "is dropped (each is derived once), so it ends", **data))
        elif kind == "widening":
            widens = sorted({r.line for *_, r, s in steps if s == "widening"})
            out.append(_at(rf, first, "info", "cycle",
                           f"recursion: {text}; each round widens the interval (the rule at {_lines_of(widens)} "
                           "takes an earlier occurrence)", **data))
        else:
            waits = sorted({r.line for *_, r, s in steps if s == "waiting"})
            out.append(_at(rf, first, "info", "cycle",
                           f"recursion: {text}; each round advances in time (the rule at {_lines_of(waits)} "
                           "waits for a later event)", **data))
    return out


def _may_match(p: Optional[RulePattern], occurs: Callable[[Sig], bool]) -> bool:
    """Whether pattern ``p`` can match when the events that ``occurs``
    admits are the ones that occur: ``or`` needs one operand, a negation
    only its left (what it negates need not occur), any other operator
    both; a pattern the reader did not give as a tree is taken to match."""
    if isinstance(p, EventP):
        use = EventUse.of(p.event)
        return use is None or occurs(use.sig)
    if isinstance(p, Binary):
        if p.op == "or":
            return _may_match(p.left, occurs) or _may_match(p.right, occurs)
        return _may_match(p.left, occurs) and (p.negated or _may_match(p.right, occurs))
    if isinstance(p, (Where, Within, Aggregate)):
        return _may_match(p.pattern, occurs)
    return True


def _never_fires(rf: RuleFile) -> list[Finding]:
    """Rules that need an event of which no occurrence can ever be derived,
    when the inputs are declared: the events that occur are the least set
    holding the inputs and the head of each rule whose pattern can match
    with them; a derived event outside it is derived only by rules that
    need an earlier occurrence of itself (a recursion with no base rule) or
    of another such event.  Without declared inputs a derived event may
    also come from the input (`p(X) <- p(X) seq a(X)` fed p), and a file
    that raises events or adds rules as it runs (event/1,
    ins_event_rule/1) may make any event occur: neither is checked."""
    if rf.raises or not rf.inputs:
        return []
    heads = rules_by_head(rf)
    occurs = {d.sig for d in rf.inputs}

    def occurring(sig: Sig) -> bool:
        return sig in occurs or sig.name.startswith("$")

    grew = True
    while grew:
        grew = False
        for r in rf.rules:
            if r.head.sig not in occurs and (r.timer is not None or _may_match(r.pattern, occurring)):
                occurs.add(r.head.sig)
                grew = True
    out = []
    for r in rf.rules:
        if r.timer is not None or _may_match(r.pattern, occurring):
            continue
        if _may_match(r.pattern, lambda s: occurring(s) or s not in heads):
            continue    # it needs an event that nothing derives and no input declares: unknown-event
        never = sorted(dict.fromkeys(s for s, _ in r.steps if s in heads and not occurring(s)))
        names = " and ".join(map(str, never))
        it = "it" if len(never) == 1 else "them"
        deriving = [d for s in never for d in heads[s]]
        out.append(_at(rf, r, "warning", "never-fires",
                       f"this rule never fires: its pattern needs {names}, of which no occurrence can ever be "
                       f"derived: every rule deriving {it} ({_lines(deriving)}) needs an earlier occurrence of "
                       f"{it}, or of another event that never occurs",
                       f"add a rule that derives {names} from input events alone (the base case of the "
                       f"recursion), or declare {it} input: :- input([{', '.join(map(str, never))}]).",
                       events=[str(s) for s in never]))
    return out


def _negation_races(rf: RuleFile) -> list[Finding]:
    level = strata(rf)
    out = []
    for r in rf.rules:
        head = level[r.head.sig]
        for sig in dict.fromkeys(s for s, step in r.steps if step == "negated"):
            if level.get(sig, 0) >= head:
                out.append(_at(rf, r, "warning", "negation-race",
                               f"the negated {sig} is derived at stratum {level[sig]}, not below this rule's "
                               f"{r.head.sig} (stratum {head}): when one event leads to both, whether {sig} "
                               "blocks depends on the order in which the engine derives them",
                               f"negate events derived only from earlier ones (a stratum below {head}), "
                               "or the input events that lead to it",
                               event=str(sig), strata={str(sig): level[sig], str(r.head.sig): head}))
    return out


def _unbounded(rf: RuleFile) -> list[Finding]:
    out = []
    for r in rf.rules:
        grows: list[str] = []
        if r.run and r.policy in ("continuous", "chronological"):    # an ETALIS run's step (running_aggregate/7)
            grows.append(f"every start of the {r.run} keeps a run of its own (one per start, forever), "
                         + ("which each later event extends" if r.policy == "continuous" else
                            "of which the oldest goes on"))
        elif not r.run and r.pattern is not None:
            _stores(r.pattern, r.policy.partition("(")[0], grows)
        if grows:
            out.append(_at(rf, r, "warning", "unbounded-memory",
                           "no window bounds this rule's pending goals: " + "; ".join(grows),
                           "add a window to the pattern, e.g. (...) within hours(1), or :- max_age(D). to the "
                           "file (--max-age D when running)", stores=grows))
    return out


def _stores(p: RulePattern, policy: str, grows: list[str], filtered: bool = False) -> None:
    """What the goal stores of pattern ``p`` keep without a window;
    ``filtered`` when a `where` or `fnot` filters p's occurrences (under
    `recent` its operator then keeps every occurrence, since an older one
    may pass the filter where the newest does not)."""
    own = "unrestricted" if filtered and policy == "recent" else policy
    if isinstance(p, (EventP, Within)):
        return
    if isinstance(p, Deep):
        if not p.windowed:
            grows.append(f"`{p.source}`, a pattern {p.depth} operators deep, was not analysed: "
                         "without a window its pending goals may grow")
        return
    if isinstance(p, (Where, Aggregate)):
        _stores(p.pattern, policy, grows, isinstance(p, Where))
        return
    if p.op == "cnot" and isinstance(p.left, Binary):
        seq, blocker = p.left, p.right
        _kept(f"every `{seq.left.source}` waits for `{seq.right.source}`", seq.left, seq.right, own, grows)
        grows.append(f"every `{blocker.source}` is kept to block `{seq.source}` (each occurrence, forever)")
        for part in (seq.left, seq.right, blocker):
            _stores(part, policy, grows)
        return
    if p.negated:    # fnot, or another negation of the table
        grows.append(f"every `{p.right.source}` is kept to block `{p.left.source}` (each occurrence, forever)")
        _stores(p.left, policy, grows, True)
        _stores(p.right, policy, grows)
        return
    if p.op != "or":
        left, right = p.left.source, p.right.source
        what = {"left": f"every `{left}` waits for `{right}`",
                "right": f"every `{right}` waits for `{left}`"}.get(p.stored,
                                                                     f"every `{left}` and every `{right}` "
                                                                     "waits for the other")
        _kept(what, p.left, p.right, own, grows)
    _stores(p.left, policy, grows)
    _stores(p.right, policy, grows)


def _kept(what: str, left: Pattern, right: Pattern, policy: str, grows: list[str]) -> None:
    if policy == "recent":
        key = sorted(v for v in pattern_vars(left) & pattern_vars(right) if not v.startswith("_G"))
        if key:    # with no join key, recent keeps one
            grows.append(f"{what} (the newest per value of {', '.join(key)}, for every value ever seen)")
    elif policy in ("chronological", "continuous", "cumulative", "stn"):
        grows.append(f"{what} (each until a match consumes it; those never matched stay forever)")
    else:
        grows.append(f"{what} (one pending goal per occurrence, forever)")


def _unbound_where(rf: RuleFile) -> list[Finding]:
    return [_at(rf, r, "warning", "unbound-where-variable",
                f"`{goal}` in a where condition uses {', '.join(names)}, which "
                f"{'is' if len(names) == 1 else 'are'} unbound when it runs (bound neither by the pattern nor by "
                "an earlier goal): the comparison raises an error and the occurrence is dropped",
                f"bind {', '.join(names)} in an event of the pattern or an earlier goal of the condition, "
                "or correct the variable's name", goal=goal, variables=list(names))
            for r in rf.rules for goal, names in r.unbound]


def _duplicate_rules(rf: RuleFile) -> list[Finding]:
    first: dict[tuple[str, str], RuleInfo] = {}
    out = []
    for r in rf.rules:
        key = _renamed(f"{r.head!r} {r.pattern!r}", r.policy)
        if key in first:
            out.append(_at(rf, r, "warning", "duplicate-rule",
                            f"this rule is the rule of line {first[key].line} again: each of its detections "
                            "is derived twice", "remove one of the two rules", first=first[key].line))
        else:
            first[key] = r
    return out


def _renamed(text: str, policy: str) -> tuple[str, str]:
    """``text`` (the repr of a rule's head and pattern) with its variables
    renamed in order of appearance, so that rules equal but for the names
    of their variables have one key."""
    names: dict[str, str] = {}
    renamed = re.sub(r"Var\(name='([^']*)'\)",
                     lambda m: names.setdefault(m.group(1), f"V{len(names)}"), text)
    return renamed, policy


def _type_clashes(rf: RuleFile) -> list[Finding]:
    """A pattern's event with a text argument where every rule deriving
    the event gives that argument a number (and no input declares it)."""
    heads = rules_by_head(rf)
    inputs = {d.sig for d in rf.inputs}
    out = []
    for r in rf.rules:
        for use in r.events:
            deriving = heads.get(use.sig, [])
            if not deriving or use.sig in inputs:
                continue
            for i, arg in enumerate(use.args, start=1):
                if not (isinstance(arg, Const) and isinstance(arg.value, (str, PString))) or _evaluable(arg.value):
                    continue
                if not all(i in d.numeric for d in deriving):
                    continue
                plural = "s" if len(deriving) > 1 else ""
                out.append(_at(rf, r, "warning", "type-clash",
                               f"{term_text(use.term())} can never match: its argument {i} is "
                               f"{term_text(arg)}, but the rule{plural} deriving {use.sig} "
                               f"({_lines(deriving)}) make{'' if plural else 's'} it a number",
                               f"give a number here, or correct the rule{plural} deriving {use.sig}",
                               event=str(use.sig), argument=i))
    return out


# the atoms that SWI-Prolog's arithmetic evaluates (pi > 1 holds)
_EVALUABLE_ATOMS = frozenset(("pi", "e", "epsilon", "inf", "infinite", "nan", "max_tagged_integer",
                              "min_tagged_integer", "random", "random_float", "cputime", "realtime"))


def _evaluable(value: "str | PString") -> bool:
    """Arithmetic takes ``value`` for a number: an atom such as ``pi``, or a
    string of one character (its code)."""
    return len(value.text) == 1 if isinstance(value, PString) else value in _EVALUABLE_ATOMS


def _never_holds(rf: RuleFile) -> list[Finding]:
    return [_at(rf, r, "warning", "where-never-holds",
                f"the where condition `{goal}` can never hold: {why}, so the rule never detects anything",
                "correct the condition (a comparison, a bound or a value may be mistyped)", goal=goal)
            for r in rf.rules for goal, why in r.never]


def _unbound_head(rf: RuleFile) -> list[Finding]:
    out = []
    for r in rf.rules:
        if r.head.sig.name.startswith("$"):
            continue  # a rule the reader made (P+'s two rules): its head is bound as the reader means it
        for name in r.head_unbound:
            shown = "_" if name.startswith("_G") else name
            out.append(_at(rf, r, "warning", "unbound-head-variable",
                           f"variable {shown} of the head {r.head_text()} is not bound by the pattern: the derived "
                           "event carries an unbound argument, which stands for any value (a later pattern may "
                           "bind it) and is written _ (null in JSON)",
                           f"if a value was meant, use {shown} in an event of the pattern, bind it in a where "
                           "condition, or write the value (e.g. none) in its place", variable=shown))
    return out


def _singletons(rf: RuleFile) -> list[Finding]:
    """Named variables that occur once in a rule, in an event of its
    pattern: they join nothing (a misspelt join variable, as Prolog's
    singleton warning says), each at the variable."""
    return [Finding("warning", "singleton-variable",
                    f"variable {name} occurs only once in this rule: it matches any value and joins nothing",
                    rf.source, line, column,
                    f"if it is meant to be another variable of the rule, correct its name; if any value will do, "
                    f"write _ or _{name}", {"variable": name})
            for r in rf.rules if not r.head.sig.name.startswith("$") for name, line, column in r.singletons]


def _lasts(p: Optional[RulePattern], spread: Callable[[Sig], bool]) -> bool:
    """Whether every occurrence of pattern ``p`` lasts longer than 0
    (``spread`` says it of an event): a temporal operator's as the
    operator table says (:attr:`Binary.lasts`), ``or``'s when both
    operands' do, a negation's when its left's does, another construct's
    when its pattern's does; anything else is taken to allow a point
    (never a false finding)."""
    if isinstance(p, EventP):
        use = EventUse.of(p.event)
        return use is not None and spread(use.sig)
    if isinstance(p, Binary):
        if p.lasts == "always":
            return True
        if p.lasts == "either":
            return _lasts(p.left, spread) or _lasts(p.right, spread)
        if p.op == "or":
            return _lasts(p.left, spread) and _lasts(p.right, spread)
        return p.negated and _lasts(p.left, spread)
    if isinstance(p, (Where, Within, Aggregate)):
        return _lasts(p.pattern, spread)
    return False


def _spread_events(rf: RuleFile) -> set[Sig]:
    """The derived events whose every occurrence lasts longer than 0: the
    greatest set closed under the rules (every occurrence has a finite
    derivation, so a rule that needs the event itself adds nothing)."""
    heads = rules_by_head(rf)
    spread = set(heads)
    while True:
        fewer = {sig for sig in spread if all(_lasts(r.pattern, spread.__contains__) for r in heads[sig])}
        if fewer == spread:
            return spread
        spread = fewer


def _windows(p: Optional[RulePattern]) -> Iterable[Within]:
    if isinstance(p, Within):
        yield p
    for sub in sub_patterns(p) if p is not None else ():
        yield from _windows(sub)


def _empty_windows(rf: RuleFile) -> list[Finding]:
    spread = _spread_events(rf)
    out = []
    for r in rf.rules:
        for w in _windows(r.pattern):
            if w.window == 0 and _lasts(w.pattern, spread.__contains__):
                inner = w.pattern.source
                out.append(_at(rf, r, "warning", "window-never-met",
                               f"`{w.source}` can never hold: every occurrence of `{inner}` lasts longer than "
                               "0 seconds (its parts cannot all occur at one time), so no window of 0 fits it",
                               "give a window greater than 0; for events at the same time use `and` or "
                               "`equals`, which allow it", pattern=inner))
    return out


def _windows_beyond_max_age(rf: RuleFile, max_age: Optional[float]) -> list[Finding]:
    """Rules with a window wider than the max_age (the engine's, else the
    file's): max_age drops every pending goal older than it, so the
    window is cut to it (docs/language.md, Memory)."""
    bound, where = (max_age, f"the engine's max_age ({max_age:g})") if max_age is not None else (rf.max_age, "")
    if bound is None:
        return []
    where = where or f":- max_age({bound:g})"
    out = []
    for r in rf.rules:
        wide = [w for w in _windows(r.pattern) if isinstance(w.window, (int, float)) and w.window > bound]
        if wide:
            w = max(wide, key=lambda w: w.window)
            out.append(_at(rf, r, "warning", "window-beyond-max-age",
                           f"`{w.source}` is wider than {where}: its pending goals are dropped {bound:g} seconds "
                           f"after they start, so it matches only within {bound:g} seconds, not {w.window:g}",
                           f"raise max_age to at least {w.window:g}, or narrow the window to {bound:g}",
                           window=w.window, max_age=bound))
    return out


_NEGATIONS = ("not", "fnot", "cnot", "neg", "no", "absent")


def _negations_as_events(rf: RuleFile) -> list[Finding]:
    out = []
    for r in rf.rules:
        for sig in dict.fromkeys(u.sig for u in r.events):
            if sig.name in _NEGATIONS and sig.arity >= 1:
                out.append(_at(rf, r, "warning", "negation-as-event",
                               f"{sig.name}(...) in this pattern is an event named {sig}, not a negation: "
                               f"it matches only input or derived events called {sig.name}",
                               "negation is an operator: (A seq B) cnot X for no X between A and B, "
                               "P fnot X for no X while P lasts", event=str(sig)))
    return out


def _undefined_predicates(rf: RuleFile) -> list[Finding]:
    # an event operator in a static clause is an error of its own (event-operators-in-static-clause)
    operators = {(c.line, c.column, op) for c in rf.event_clauses for op in c.operators}
    return [Finding("warning", "undefined-predicate",
                    f"{u.predicate} is not defined: a call of it raises an existence error, and the occurrence "
                    "that made the call is dropped", u.file, u.line, u.column, u.hint, {"predicate": u.predicate})
            for u in rf.undefined if (u.line, u.column, u.predicate.rsplit("/", 1)[0]) not in operators]


# the namespaces every ontology may use without mentioning their terms
_STANDARD_NAMESPACES = ("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "http://www.w3.org/2000/01/rdf-schema#",
                        "http://www.w3.org/2002/07/owl#", "http://www.w3.org/2001/XMLSchema#")


def _local(iri: str) -> tuple[str, str]:
    """An IRI as its namespace (up to the last ``#`` or ``/``) and local name."""
    cut = max(iri.rfind("#"), iri.rfind("/")) + 1
    return iri[:cut], iri[cut:]


def _unknown_vocabulary(rf: RuleFile) -> list[Finding]:
    if not rf.ontologies or not rf.vocabulary:
        return []
    # rdflib loads for the rule files that declare knowledge, not for every check
    from ..rdf.knowledge import mentioned_iris

    known = mentioned_iris(rf.ontologies)
    prefixes = sorted(rf.prefixes, key=lambda p: -len(p[1]))

    def shown(iri: str) -> str:
        for prefix, ns in prefixes:
            if iri.startswith(ns) and iri != ns:
                local = iri[len(ns):]
                return f"{prefix}:{local}" if re.fullmatch(r"[a-z][A-Za-z0-9_]*", local) else f"{prefix}:'{local}'"
        return f"'{iri}'"

    files = ", ".join(rf.ontologies)
    out = []
    for use in dict.fromkeys(rf.vocabulary):
        if use.iri in known or use.iri.startswith(_STANDARD_NAMESPACES):
            continue
        ns, local = _local(use.iri)
        same_ns = {_local(k)[1]: k for k in known if _local(k)[0] == ns and _local(k)[1]}
        near = [same_ns[n] for n in difflib.get_close_matches(local, list(same_ns), n=3, cutoff=0.75)]
        hint = (f"did you mean {' or '.join(shown(n) for n in near)}?" if near else
                "correct the name, or load the ontology that defines it (:- ontology(File).)")
        out.append(Finding("warning", "unknown-iri",
                           f"the {use.kind} {shown(use.iri)} is in no loaded ontology ({files}): "
                           "the knowledge has no triple with it, so the goal asking it never holds",
                           use.file, use.line, use.column, hint, {"iri": use.iri, "kind": use.kind}))
    return out
