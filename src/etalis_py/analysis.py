"""What the rules of a rule file are, as Python sees them: each event
rule's head, the events of its pattern and how they complete it
(:class:`RuleInfo`), and a rule file's declarations (:class:`RuleFile`),
read from the engine's ``rules`` request.  The checks of
:mod:`etalis_py.findings` and the stages of a replay
(:mod:`etalis_py.spark.planning`) are built on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from ._prolog import bridge, rules_source
from .prolog_text import quote_atom
from .rules import Const, Struct, Term, term_from_json, term_text

_KNOWN_OPS = {"event", "where", "within", "or", "cnot", "fnot", "aggregate"}


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
    terms as the ``rules`` request gives them (``{"var": "X"}``, ...).
    ``aggregate`` numbers the aggregate the event is inside, if any."""

    sig: Sig
    args: tuple[Any, ...]
    aggregate: Optional[int] = None

    def term(self) -> Term:
        """The event term, in the rule tree."""
        if not self.args:
            return Const(self.sig.name)
        return Struct(self.sig.name, tuple(map(term_from_json, self.args)))


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
    # prolog/etalis/rule_facts.pl)
    steps: tuple[tuple[Sig, str], ...] = ()
    # the arithmetic goals of where conditions with unbound variables
    unbound: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the variables of the head that the pattern does not bind
    head_unbound: tuple[str, ...] = ()
    # the pattern as the ``rules`` request gives it, and the rule's policy
    pattern: Any = field(default=None, compare=False, hash=False)
    policy: str = "unrestricted"
    # the original ETALIS timer the head is (exceptionAlarm or
    # exceptionAlarmAbsoluteDatime; ``head`` is its event), if any
    timer: Optional[str] = None

    @property
    def name(self) -> str:
        return self.label or f"line {self.line}"

    def head_text(self) -> str:
        return term_text(self.head.term())

    def body_sigs(self) -> set[Sig]:
        return {u.sig for u in self.events}


def _event_sig(term: Any) -> Optional[tuple[Sig, tuple[Any, ...]]]:
    if isinstance(term, dict):
        if "atom" in term:
            return Sig(str(term["atom"]), 0), ()
        if "functor" in term:
            args = tuple(term.get("args", []))
            return Sig(str(term["functor"]), len(args)), args
    return None


def variables(term: Any) -> set[str]:
    """The variable names of a term, or of a pattern, in JSON form."""
    if isinstance(term, dict):
        if "var" in term:
            return {str(term["var"])}
        return set().union(set(), *(variables(v) for k, v in term.items() if k not in ("op", "text", "goal")))
    if isinstance(term, list):
        return set().union(set(), *(variables(a) for a in term))
    return set()


def rule_infos(parsed: Mapping[str, Any]) -> list[RuleInfo]:
    """The rules of a ``rules`` reply (see :func:`read_rules`)."""
    out: list[RuleInfo] = []
    for index, rule in enumerate(parsed["rules"], start=1):
        head = _event_sig(rule["head"])
        if head is None:
            raise ValueError(f"rule at line {rule['line']}: the head is not an event")
        events: list[EventUse] = []
        aggregates: list[set[str]] = []   # variables inside each aggregate
        understood = _walk(rule["pattern"], None, events, aggregates)
        stateless = understood and _stateless(rule["pattern"])
        all_vars_by_event = [(variables(list(u.args)), u.aggregate) for u in events]
        outside: list[frozenset[str]] = []
        for number in range(len(aggregates)):
            used = set(variables(list(head[1])))
            for vs, agg in all_vars_by_event:
                if agg != number:
                    used |= vs
            outside.append(frozenset(used))
        steps = tuple((sig[0], str(step["step"])) for step in rule.get("steps", ())
                      if (sig := _event_sig(step["event"])) is not None)
        unbound = tuple((str(u["goal"]), tuple(map(str, u["variables"]))) for u in rule.get("unbound", ()))
        out.append(RuleInfo(index, str(rule.get("label") or ""), int(rule["line"]),
                            EventUse(head[0], head[1]), tuple(events), tuple(outside), understood,
                            stateless and not rule.get("timer"), int(rule.get("column", 1)), steps, unbound,
                            tuple(map(str, rule.get("head_unbound", ()))), rule["pattern"],
                            str(rule.get("policy", "unrestricted")), rule.get("timer") or None))
    return out


def _stateless(p: Mapping[str, Any]) -> bool:
    op = p.get("op")
    if op == "event":
        return True
    if op not in ("or", "where", "within"):
        return False
    return all(_stateless(p[part]) for part in ("pattern", "left", "right") if isinstance(p.get(part), dict))


def _walk(p: Mapping[str, Any], aggregate: Optional[int], events: list[EventUse],
          aggregates: list[set[str]]) -> bool:
    op = p.get("op")
    if op == "event":
        sig = _event_sig(p["event"])
        if sig is None:
            return False
        events.append(EventUse(sig[0], sig[1], aggregate))
        return True
    if op == "deep":    # a pattern too deep to give as a tree: its events only
        for e in p["events"]:
            _walk(e, aggregate, events, aggregates)
        return False
    if op == "aggregate":
        number = len(aggregates)
        aggregates.append(set())
        return _walk(p["pattern"], number, events, aggregates)
    ok = op in _KNOWN_OPS or ("left" in p and "right" in p)
    for part in ("pattern", "left", "right"):
        if isinstance(p.get(part), dict):
            ok = _walk(p[part], aggregate, events, aggregates) and ok
    return ok


def read_rules(text: str, source: str = "<string>") -> tuple[list[RuleInfo], str]:
    """The event rules of a rule text and its default policy."""
    header, _ = bridge().request(f"rules(text({quote_atom(source)}))", text)
    return rule_infos(header), str(header["policy"])


@dataclass(frozen=True)
class Declared:
    """An event declared by ``:- input(Name/Arity).``, or a static clause
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
class RuleFile:
    """What the checks of :mod:`etalis_py.findings` know of a rule file."""

    source: str
    rules: tuple[RuleInfo, ...]
    policy: str
    printed: tuple[Sig, ...]
    printed_explicit: bool
    max_age: Optional[float]
    inputs: tuple[Declared, ...]
    event_clauses: tuple[Declared, ...]
    decoded: tuple[Decoded, ...] = ()

    @classmethod
    def read(cls, source: str, text: Optional[str] = None, static: Sequence[str] = ()) -> "RuleFile":
        """Read the rule file ``source`` (a path), or the rule text
        ``text`` named ``source``, with the files of static knowledge
        ``static`` (see :meth:`Engine.from_file`); raises RuleError as the
        engine does."""
        request = f"rules({rules_source(source, static)})" if text is None else f"rules(text({quote_atom(source)}))"
        header, _ = bridge().request(request, text or "")
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
        )
