"""What the rules of a rule file are, as Python sees them: each event
rule's head, the events of its pattern and how they complete it
(:class:`RuleInfo`), and a rule file's declarations (:class:`RuleFile`),
read from the engine's ``rules`` request.  The checks of
:mod:`etalis_py.rules.findings` and the stages of a replay
(:mod:`etalis_py.spark.planning`) are built on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from ..bridge._prolog import bridge, rules_source
from ..bridge.prolog_text import quote_atom
from .rules import (Aggregate, Binary, Const, Deep, EventP, RulePattern, Struct, Term, Where, Within,
                    rule_pattern_from_json, sub_patterns, term_from_json, term_text, term_vars)


@dataclass(frozen=True, order=True)
class Sig:
    """An event's name and arity."""

    name: str
    arity: int

    def __str__(self) -> str:
        return f"{self.name}/{self.arity}"

    @classmethod
    def parse(cls, text: str) -> "Sig":
        name, _, arity = text.rpartition("/")
        return cls(name, int(arity))


@dataclass(frozen=True)
class EventUse:
    """One event in a rule's pattern (or its head), with its argument
    terms.  ``aggregate`` numbers the aggregate the event is inside, if
    any."""

    sig: Sig
    args: tuple[Term, ...]
    aggregate: Optional[int] = None

    @classmethod
    def of(cls, term: Term, aggregate: Optional[int] = None) -> Optional["EventUse"]:
        """The use of the event ``term``; None if it is not an event."""
        if isinstance(term, Struct):
            return cls(Sig(term.functor, len(term.args)), term.args, aggregate)
        if isinstance(term, Const) and isinstance(term.value, str):
            return cls(Sig(term.value, 0), (), aggregate)
        return None

    def term(self) -> Term:
        """The event term, in the rule tree."""
        if not self.args:
            return Const(self.sig.name)
        return Struct(self.sig.name, self.args)

    def variables(self) -> set[str]:
        return set().union(*map(term_vars, self.args))


@dataclass(frozen=True)
class RuleInfo:
    """An event rule as the analysis sees it."""

    index: int                      # 1-based, in file order
    label: str
    line: int
    head: EventUse
    events: tuple[EventUse, ...]
    # the variables used outside each aggregate (by aggregate number)
    outside: tuple[frozenset[str], ...] = ()
    # False if the pattern has an operator this analysis does not know
    understood: bool = True
    # True if the pattern joins nothing (events, or, where, within only):
    # its detections do not depend on other events, so it is safe in any
    # partitioning
    stateless: bool = False
    column: int = 1
    # each event of the pattern and how it completes the pattern in time
    # (immediate, guarded, repeating, widening, waiting or negated: see
    # prolog/etalis/compiler/rule_facts.pl)
    steps: tuple[tuple[Sig, str], ...] = ()
    # the arithmetic goals of where conditions with unbound variables
    unbound: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the variables of the head that the pattern does not bind
    head_unbound: tuple[str, ...] = ()
    # the pattern, and the rule's policy
    pattern: Optional[RulePattern] = field(default=None, compare=False, hash=False)
    policy: str = "unrestricted"
    # the original ETALIS timer the head is (exceptionAlarm or
    # exceptionAlarmAbsoluteDatime; ``head`` is its event), if any
    timer: Optional[str] = None
    # the where conditions that can never hold, each with why
    never: tuple[tuple[str, str], ...] = ()
    # the kind of original ETALIS run (aggregate or star_times) whose
    # hidden event the rule derives, if any
    run: Optional[str] = None
    # the positions (from 1) of the head's arguments that are numbers in
    # every event the rule derives
    numeric: tuple[int, ...] = ()
    # the named variables (not starting with _) that occur once in the
    # rule, in an event of its pattern: (name, line, column) of each, where
    # the file writes it
    singletons: tuple[tuple[str, int, int], ...] = ()
    # True if ``policy`` is the rule's own (``:- policy(Label, P).``), not
    # the file's, which a policy given when running replaces
    own_policy: bool = False

    @property
    def name(self) -> str:
        return self.label or f"line {self.line}"

    def head_text(self) -> str:
        return term_text(self.head.term())

    def body_sigs(self) -> set[Sig]:
        return {u.sig for u in self.events}


def rule_infos(parsed: Mapping[str, Any]) -> list[RuleInfo]:
    """The rules of a ``rules`` reply (see :func:`read_rules`)."""
    out: list[RuleInfo] = []
    for index, rule in enumerate(parsed["rules"], start=1):
        head = EventUse.of(term_from_json(rule["head"]))
        if head is None:
            raise ValueError(f"rule at line {rule['line']}: the head is not an event")
        pattern = rule_pattern_from_json(rule["pattern"])
        events: list[EventUse] = []
        aggregates: list[set[str]] = []   # variables inside each aggregate
        understood = _walk(pattern, None, events, aggregates)
        stateless = understood and _stateless(pattern)
        outside: list[frozenset[str]] = []
        for number in range(len(aggregates)):
            used = head.variables()
            for u in events:
                if u.aggregate != number:
                    used |= u.variables()
            outside.append(frozenset(used))
        steps = tuple((use.sig, str(step["step"])) for step in rule.get("steps", ())
                      if (use := EventUse.of(term_from_json(step["event"]))) is not None)
        unbound = tuple((str(u["goal"]), tuple(map(str, u["variables"]))) for u in rule.get("unbound", ()))
        out.append(RuleInfo(index, str(rule.get("label") or ""), int(rule["line"]),
                            head, tuple(events), tuple(outside), understood,
                            stateless and not rule.get("timer"), int(rule.get("column", 1)), steps, unbound,
                            tuple(map(str, rule.get("head_unbound", ()))), pattern,
                            str(rule.get("policy", "unrestricted")), rule.get("timer") or None,
                            tuple((str(n["goal"]), str(n["why"])) for n in rule.get("never", ())),
                            rule.get("run") or None,
                            numeric=tuple(int(i) for i in rule.get("numeric", ())),
                            singletons=tuple((str(v["name"]), int(v["line"]), int(v["column"]))
                                             for v in rule.get("singletons", ())),
                            own_policy=bool(rule.get("own_policy", False))))
    return out


def _stateless(p: RulePattern) -> bool:
    """The pattern joins nothing: events under or, where and within."""
    if isinstance(p, EventP):
        return True
    joins = p.op != "or" if isinstance(p, Binary) else not isinstance(p, (Where, Within))
    return not joins and all(map(_stateless, sub_patterns(p)))


def _walk(p: RulePattern, aggregate: Optional[int], events: list[EventUse], aggregates: list[set[str]]) -> bool:
    """Add the events of ``p`` to ``events``; False if ``p`` has one that
    the analysis cannot follow (an event that is not a term, or a
    :class:`Deep` pattern)."""
    if isinstance(p, EventP):
        use = EventUse.of(p.event, aggregate)
        if use is not None:
            events.append(use)
        return use is not None
    if isinstance(p, Aggregate):
        aggregate = len(aggregates)
        aggregates.append(set())
    ok = not isinstance(p, Deep)
    for sub in sub_patterns(p):
        ok = _walk(sub, aggregate, events, aggregates) and ok
    return ok


def read_rules(text: str, source: str = "<string>") -> tuple[list[RuleInfo], str]:
    """The event rules of a rule text and its default policy."""
    header, _ = bridge().request(f"rules(text({quote_atom(source)}))", text)
    return rule_infos(header), str(header["policy"])


@dataclass(frozen=True)
class Declared:
    """An event declared by ``:- input(Name/Arity).`` or named by ``:- print_events``, or a static clause
    (``head``, e.g. ``alarm/1``) whose body uses event ``operators``."""

    sig: Sig
    line: int
    column: int
    operators: tuple[str, ...] = ()


@dataclass(frozen=True)
class Decoded:
    """A file read in ``encoding`` (Windows-1252) because it is not UTF-8,
    with the position of its first byte that is not UTF-8."""

    file: str
    encoding: str
    line: int
    column: int

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Decoded":
        return cls(str(d["file"]), str(d["encoding"]), int(d["line"]), int(d["column"]))

    @property
    def message(self) -> str:
        return f"the file is not UTF-8 (from here): it is read as {self.encoding}, as original ETALIS reads source files"


@dataclass(frozen=True)
class Undefined:
    """A predicate (``contains/2``) that a condition or static rule calls
    and nothing defines, at the first goal calling it, with what would
    define it (``hint``)."""

    predicate: str
    file: str
    line: int
    column: int
    hint: str


@dataclass(frozen=True)
class VocabularyUse:
    """An IRI that a condition or static rule asks the knowledge about as a
    ``class`` (``isa(X, C)``) or a ``property`` (``rdf(S, P, O)``), at the
    rule or clause."""

    iri: str
    kind: str
    file: str
    line: int
    column: int


@dataclass(frozen=True)
class RuleFile:
    """What the checks of :mod:`etalis_py.rules.findings` know of a rule file."""

    source: str
    rules: tuple[RuleInfo, ...]
    policy: str
    printed: tuple[Sig, ...]
    printed_explicit: bool
    max_age: Optional[float]
    inputs: tuple[Declared, ...]
    event_clauses: tuple[Declared, ...]
    decoded: tuple[Decoded, ...] = ()
    # a rule or static clause may raise an event (event/1) or add a rule
    # (ins_event_rule/1) when it runs
    raises: bool = False
    # the events that :- print_events names, where it names them
    print_events: tuple[Declared, ...] = ()
    # the predicates that conditions and static rules call and nothing defines
    undefined: tuple[Undefined, ...] = ()
    # the IRIs that conditions and static rules ask the knowledge about
    vocabulary: tuple[VocabularyUse, ...] = ()
    # the ontology files the rule file declares (absolute paths), and its prefixes
    ontologies: tuple[str, ...] = ()
    prefixes: tuple[tuple[str, str], ...] = ()

    @classmethod
    def read(cls, source: str, text: Optional[str] = None, static: Sequence[str] = ()) -> "RuleFile":
        """Read the rule file ``source`` (a path), or the rule text
        ``text`` named ``source``, with the files of static knowledge
        ``static`` (see :meth:`Engine.from_file`); raises RuleError as the
        engine does."""
        request = f"rules({rules_source(source, static)})" if text is None else f"rules(text({quote_atom(source)}))"
        header, _ = bridge().request(request, text or "")
        return cls.from_header(source, header)

    @classmethod
    def from_header(cls, source: str, header: Mapping[str, Any]) -> "RuleFile":
        """The rule file ``source`` as the engine's ``rules`` reply
        ``header`` describes it (or the ``analysis`` of a ``create``
        reply, made from the same reading as the engine)."""
        return cls(
            source,
            tuple(rule_infos(header)),
            str(header["policy"]),
            tuple(Sig.parse(p) for p in header["printed"]),
            bool(header["printed_explicit"]),
            None if header["max_age"] is None else float(header["max_age"]),
            tuple(Declared(Sig(str(i["name"]), int(i["arity"])), int(i["line"]), int(i["column"]))
                  for i in header["inputs"]),
            tuple(Declared(Sig.parse(str(c["head"])), int(c["line"]), int(c["column"]), tuple(c["operators"]))
                  for c in header["event_clauses"]),
            tuple(Decoded.from_json(d) for d in header["decoded"]),
            bool(header["raises"]),
            tuple(Declared(Sig(str(i["name"]), int(i["arity"])), int(i["line"]), int(i["column"]))
                  for i in header["print_events"]),
            tuple(Undefined(str(u["predicate"]), str(u["file"]), int(u["line"]), int(u["column"]), str(u["hint"]))
                  for u in header["undefined"]),
            tuple(VocabularyUse(str(v["iri"]), str(v["kind"]), str(v["file"]), int(v["line"]), int(v["column"]))
                  for v in header["vocabulary"]),
            tuple(str(o) for o in header["ontologies"]),
            tuple((str(p["prefix"]), str(p["iri"])) for p in header["prefixes"]),
        )
