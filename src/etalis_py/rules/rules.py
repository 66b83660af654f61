"""The rule tree: the terms, patterns and rules of a rule file as Python values.

The engine's reader gives a rule file's rules as JSON (the ``rules``
request, see :func:`etalis_py.rules.analysis.read_rules`); :func:`term_from_json`
and :func:`pattern_from_json` make them :data:`Term` and :data:`Pattern`
trees, and :func:`term_text`, :func:`pattern_text` and :meth:`Rule.text`
write them back in .etl syntax.  Ground values keep Prolog's distinctions:
the float 1.0 (:class:`Real`) is not the integer 1, the string ``"a"``
(:class:`PString`) not the atom ``a`` (``str``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Optional, TypeVar, Union

from ..bridge.prolog_text import prolog_string, quote_atom
from ..events import Time

_ANONYMOUS = re.compile(r"_G\d+")
"""The name the reader gives an anonymous variable."""


@dataclass(frozen=True)
class Real:
    """A Prolog float.  Kept apart from ``int`` so that 1 and 1.0 do not
    unify, as in Prolog (Python's ``1 == 1.0`` would conflate them)."""

    value: float


@dataclass(frozen=True)
class PString:
    """A Prolog string (``"text"``), distinct from the atom ``text``."""

    text: str


A = TypeVar("A")


@dataclass(frozen=True)
class Applied(Generic[A]):
    """A compound term ``functor(args...)`` whose arguments are ``A``s."""

    functor: str
    args: tuple[A, ...]


class Compound(Applied["Ground"]):
    """A ground compound term."""


@dataclass(frozen=True)
class Opaque:
    """A ground term that a ``where`` condition made and that is only known
    by its quoted text (e.g. a list); it unifies with a variable only."""

    text: str


Ground = Union[int, Real, str, PString, Compound, Opaque]
"""A ground Prolog term; ``str`` is an atom."""


@dataclass(frozen=True)
class Var:
    """A variable, by its name (``_G<n>`` for an anonymous one)."""

    name: str


@dataclass(frozen=True)
class Const:
    """A ground value in a term."""

    value: Ground


class Struct(Applied["Term"]):
    """A compound term with variables in it."""


Term = Union[Var, Const, Struct]
"""A term of a rule, as the reader gives it."""


def ground_text(value: Ground) -> str:
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
        return prolog_string(value.text)
    if isinstance(value, Compound):
        if value.functor == _CONS and len(value.args) == 2:
            return _list_text(value, ground_text, ",")
        return f"{quote_atom(value.functor)}({','.join(ground_text(a) for a in value.args)})"
    return value.text


_CONS = "[|]"
"""The functor of a list cell (SWI-Prolog 7)."""


def _list_text(cell: Any, text: Callable[[Any], str], sep: str) -> str:
    """A list (a Struct or Compound list cell) in list syntax:
    ``[1, 2|T]``, not ``'[|]'(1, '[|]'(2, T))``."""
    items = []
    while isinstance(cell, Applied) and cell.functor == _CONS and len(cell.args) == 2:
        items.append(text(cell.args[0]))
        cell = cell.args[1]
    tail = "" if cell in ("[]", Const("[]")) else "|" + text(cell)
    return f"[{sep.join(items)}{tail}]"


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
        return "_" if _ANONYMOUS.fullmatch(term.name) else term.name
    if isinstance(term, Const):
        return ground_text(term.value)
    if term.functor == _CONS and len(term.args) == 2:
        return _list_text(term, term_text, ", ")
    return f"{quote_atom(term.functor)}({', '.join(term_text(a) for a in term.args)})"


def event_key(term: Term) -> tuple[str, int]:
    """Name and arity of an event term."""
    if isinstance(term, Struct):
        return term.functor, len(term.args)
    if isinstance(term, Const) and isinstance(term.value, str):
        return term.value, 0
    raise ValueError(f"{term!r} is not an event")


def term_vars(term: Term) -> set[str]:
    """The names of the variables of a term."""
    if isinstance(term, Var):
        return {term.name}
    if isinstance(term, Struct):
        return set().union(*(term_vars(a) for a in term.args)) if term.args else set()
    return set()


@dataclass(frozen=True)
class EventP:
    event: Term

    @property
    def source(self) -> str:
        """The event as the rule file writes it."""
        return term_text(self.event)


@dataclass(frozen=True)
class Binary:
    """``left op right`` for a temporal operator, ``or``, ``cnot`` or
    ``fnot`` (or any operator of the table whose parts are ``left`` and
    ``right``).  From the engine's reader: ``stored`` is the operand that a
    temporal operator stores to wait for the other (``left``, ``right``,
    or ``none``: both wait), ``""`` for another operator; ``lasts``
    says how long an occurrence of a temporal operator lasts (``always``
    longer than 0, longer than 0 when ``either`` operand does, or
    ``maybe`` not; ``""`` for another operator); ``negated`` says that
    ``right`` is a negated part (its occurrences block ``left``'s, as in
    ``cnot`` and ``fnot``); ``source`` is the pattern as the rule file
    writes it."""

    op: str
    left: "Pattern"
    right: "Pattern"
    stored: str = field(default="", compare=False, repr=False)
    source: str = field(default="", compare=False, repr=False)
    negated: bool = field(default=False, compare=False, repr=False)
    lasts: str = field(default="", compare=False, repr=False)


@dataclass(frozen=True)
class Where:
    pattern: "Pattern"
    goal: str
    source: str = field(default="", compare=False, repr=False)


@dataclass(frozen=True)
class Within:
    pattern: "Pattern"
    window: Time
    source: str = field(default="", compare=False, repr=False)


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
    source: str = field(default="", compare=False, repr=False)


Pattern = Union[EventP, Binary, Where, Within, Aggregate]



@dataclass(frozen=True)
class Deep:
    """A rule's pattern nested too deep for the engine's reader to give
    as a tree (more than 200 operators): its ``depth``, its ``events``,
    the start of its ``source`` text, and whether a window bounds it as a
    whole (``windowed``)."""

    depth: int
    events: tuple[EventP, ...]
    source: str
    windowed: bool


RulePattern = Union[Pattern, Deep]
"""The pattern of a rule as the ``rules`` reply gives it."""


def pattern_from_json(j: Mapping[str, Any]) -> Pattern:
    """A pattern as the engine's reader gives it in JSON (see
    ``pattern_json/2`` in ``prolog/etalis/runtime/protocol.pl``)."""
    op = j["op"]
    source = str(j.get("text", ""))
    if op == "event":
        return EventP(term_from_json(j["event"]))
    if op == "where":
        return Where(pattern_from_json(j["pattern"]), str(j["goal"]), source)
    if op == "within":
        return Within(pattern_from_json(j["pattern"]), j["window"], source)
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
            source,
        )
    if "left" in j and "right" in j:
        return Binary(op, pattern_from_json(j["left"]), pattern_from_json(j["right"]), str(j.get("stored", "")),
                      source, j.get("negated") == "right", str(j.get("lasts", "")))
    raise ValueError(f"the rule tree does not cover `{op}` patterns")


def rule_pattern_from_json(j: Mapping[str, Any]) -> RulePattern:
    """A rule's pattern as the ``rules`` reply gives it: a tree, or a
    :class:`Deep` pattern."""
    if j["op"] == "deep":
        return Deep(int(j["depth"]), tuple(EventP(term_from_json(e["event"])) for e in j["events"]), str(j["text"]),
                    bool(j["windowed"]))
    return pattern_from_json(j)


def sub_patterns(p: RulePattern) -> tuple[Pattern, ...]:
    """The operands of a pattern (the events of a :class:`Deep` one)."""
    if isinstance(p, Binary):
        return p.left, p.right
    if isinstance(p, (Where, Within, Aggregate)):
        return (p.pattern,)
    if isinstance(p, Deep):
        return p.events
    return ()


def pattern_vars(p: RulePattern) -> set[str]:
    """The names of the variables of a pattern's events and aggregates
    (not those of its ``where`` goals)."""
    own = term_vars(p.event) if isinstance(p, EventP) else set()
    if isinstance(p, Aggregate):
        own = {p.result} | ({p.value} if p.value else set())
    return own.union(*map(pattern_vars, sub_patterns(p)))


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
