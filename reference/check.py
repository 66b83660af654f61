"""Differential testing: one case through the reference evaluator and the engine.

:func:`check_case` runs a :class:`Case` (a rule set and a stream) through
:func:`reference.evaluate.evaluate` and through the engine under each policy
asked for, and gives an :class:`Outcome` per policy.  :func:`snapshot_mismatch`
holds a run cut in two by a snapshot, restored in a new engine or a new
process, to the run without a break.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

from etalis_py.bridge.engine import Engine
from etalis_py.errors import InferenceLimitError
from etalis_py.events import Event, Rejection
from etalis_py.rules.rules import Aggregate, Binary, Pattern, Rule, Term, Where, Within, event_key
from .evaluate import Fact, LARGE_MODEL, Model, TooLarge, evaluate
from .terms import NEGATIONS, RuleSet, aggregate_dependent, has_negation


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
# Snapshots: a run cut in two, the second part in a new engine (or process)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TwoParts:
    """What an engine gave for a stream fed in two parts and flushed: its
    detections as JSON lines (with provenance), the warnings and rejections
    of each part (line, text) and the stats at the end."""

    detections: str
    warnings: tuple[tuple[int, str], ...]
    rejected: tuple[tuple[int, str], ...]
    stats: tuple[Any, ...]


def two_parts(text: str, options: dict[str, Any], stream: Sequence[Event], cut: int, restore: str) -> TwoParts:
    """Feed ``stream[:cut]`` and ``stream[cut:]`` (as event lines, the second
    part numbered on from the first) to an engine of the rules ``text``
    made with ``options`` (those of :meth:`Engine.from_string`), then flush.
    ``restore`` is ``none`` (one engine), ``engine`` (the second part goes
    to a new engine that takes up a snapshot of the first), ``process``
    (that engine is in a new Python process) or ``swap`` (the same engine
    takes up its snapshot after it restored a new engine's and was fed
    the whole stream: as one engine serves many keys in turn)."""
    first = "".join(e.to_prolog() for e in stream[:cut])
    second = "".join(e.to_prolog() for e in stream[cut:])
    with Engine.from_string(text, source="rules.etl", **options) as engine:
        fresh = engine.snapshot()
        done = _feed(engine, first, 1)
        if restore == "none":
            return _finish(engine, second, cut + 1, done)
        data = engine.snapshot()
        if restore == "swap":
            engine.restore(fresh)
            engine.feed_text(first + second)
            engine.flush_lines()
            engine.restore(data)
            return _finish(engine, second, cut + 1, done)
    if restore == "engine":
        with Engine.from_string(text, source="rules.etl", state=data, **options) as engine:
            return _finish(engine, second, cut + 1, done)
    request = json.dumps({"text": text, "options": options, "state": base64.b64encode(data).decode("ascii"),
                          "second": second, "first_line": cut + 1, "done": _plain(done)})
    child = subprocess.run([sys.executable, "-m", "reference.check"], input=request, capture_output=True,
                           text=True, check=True, cwd=Path(__file__).resolve().parents[1])
    reply = json.loads(child.stdout)
    return TwoParts(reply["detections"], tuple(map(tuple, reply["warnings"])),
                    tuple(map(tuple, reply["rejected"])), tuple(reply["stats"]))


def snapshot_mismatch(text: str, options: dict[str, Any], stream: Sequence[Event], cut: int,
                      restore: str = "engine") -> Optional[str]:
    """How the run cut at ``cut`` with a snapshot and restore (see
    :func:`two_parts`) differs from the run without a break, or None."""
    whole = two_parts(text, options, stream, cut, "none")
    broken = two_parts(text, options, stream, cut, restore)
    if whole == broken:
        return None
    out = [f"options: {options}, cut before event {cut + 1}, restored in a new {restore}",
           "--- rules.etl", text.rstrip("\n"), "--- stream.events", "".join(e.to_prolog() for e in stream).rstrip()]
    for name in ("detections", "warnings", "rejected", "stats"):
        a, b = getattr(whole, name), getattr(broken, name)
        if a != b:
            out += [f"--- {name} without a break:", str(a), f"--- {name} with the snapshot:", str(b)]
    return "\n".join(out)


def _feed(engine: Engine, lines: str, first_line: int) -> TwoParts:
    result = engine.feed_text(lines, first_line)
    return TwoParts(result.detection_lines, tuple((w.line, w.reason) for w in result.warnings),
                    tuple((r.line, r.reason) for r in result.rejected), ())


def _finish(engine: Engine, lines: str, first_line: int, done: TwoParts) -> TwoParts:
    """The second part and the flush after ``done``, the first."""
    second = _feed(engine, lines, first_line)
    flushed: list[Rejection] = []
    tail = engine.flush_lines(flushed)
    s = engine.stats()
    stats = (s.accepted, s.rejected, s.raised, s.detections, s.pending, json.dumps(s.pending_by_goal),
             json.dumps(s.pending_by_rule), s.buffered, s.dropped)
    return TwoParts(done.detections + second.detections + tail,
                    done.warnings + second.warnings + tuple((w.line, w.reason) for w in flushed),
                    done.rejected + second.rejected, stats)


def _plain(parts: TwoParts) -> dict[str, Any]:
    return {"detections": parts.detections, "warnings": parts.warnings, "rejected": parts.rejected}


def _second_part_here() -> None:
    """The ``process`` side of :func:`two_parts`: a request as JSON on
    standard input, the outcome as JSON on standard output."""
    request = json.load(sys.stdin)
    done = TwoParts(request["done"]["detections"], tuple(map(tuple, request["done"]["warnings"])),
                    tuple(map(tuple, request["done"]["rejected"])), ())
    data = base64.b64decode(request["state"])
    with Engine.from_string(request["text"], source="rules.etl", state=data, **request["options"]) as engine:
        parts = _finish(engine, request["second"], request["first_line"], done)
    json.dump({**_plain(parts), "stats": parts.stats}, sys.stdout)


if __name__ == "__main__":
    _second_part_here()
