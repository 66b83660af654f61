"""The stages of a partitioned replay.

A replay splits its input by a key (a station, a card) and runs one engine
per key.  That gives exactly the detections of one engine over all the
data only for rules whose events all carry the key: then no detection can
combine events of two keys.  :func:`plan` decides which rules are safe:

- an input event carries the key in the argument that the key column maps
  to;
- a rule is *keyed* when one variable sits in a key-carrying argument of
  every event of its pattern (for an aggregate, the variable must also be
  used outside it, so that the aggregate is grouped by it);
- a derived event carries the key in argument ``p`` when every rule with
  that head is keyed by the variable in the head's argument ``p``.  This
  is a greatest fixpoint, so recursive rules (a spell that grows) stay
  keyed when their recursion keeps the key.

The keyed rules run in stage 1, partitioned by the input key.  The others
run in later stages over the events derived so far (and the input events
they use), in the order of the rule dependency graph; each later stage is
partitioned by a key of its own where one exists (an argument of each
event it consumes that all its rules are keyed by), else it runs as one
global partition.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Optional, Union

import networkx as nx

from ..bridge.prolog_text import quote_atom
from ..rules.analysis import RuleInfo, Sig, read_rules
from ..rules.rules import Var
from ..errors import RuleError
from ..inputs.mapping import Mapping
from .names import TRANSFER


# Above this many combinations of key positions, a later stage is not
# searched for a key and runs globally (rule sets are small in practice).
MAX_KEY_SEARCH = 20_000


@dataclass(frozen=True)
class InputEvents:
    """Which events the input rows become.

    ``name`` is the event name of every row, or None when a column holds
    it (then any event with ``arity`` arguments may come from the input;
    any event at all if ``arity`` is None: event lines).
    ``key`` is the argument position of the partition key, if the key
    column is one of the argument columns; ``key_name`` names the column.
    """

    name: Optional[str]
    arity: Optional[int]
    key: Optional[int] = None
    key_name: Optional[str] = None

    def is_input(self, sig: Sig) -> bool:
        return (self.arity is None or sig.arity == self.arity) and (self.name is None or sig.name == self.name)


@dataclass(frozen=True)
class Stage:
    """A set of rules run together, over the events they consume from the
    input and from earlier stages.

    ``key`` gives, for each consumed event, the argument that holds the
    partition key; None means one global partition.  ``exports`` are the
    events derived here that later stages consume.
    """

    number: int
    rules: tuple[int, ...]
    consumes: tuple[Sig, ...]
    produces: tuple[Sig, ...]
    key: Optional[tuple[tuple[Sig, int], ...]]
    by_input_key: bool = False
    exports: tuple[Sig, ...] = ()

    def key_position(self, sig: Sig) -> int:
        assert self.key is not None
        return dict(self.key)[sig]


@dataclass(frozen=True)
class Plan:
    """The stages of a replay and what each one runs."""

    rules: tuple[RuleInfo, ...]
    input: InputEvents
    stages: tuple[Stage, ...]
    edges: tuple[tuple[int, int], ...] = field(default=())  # rule dependency graph

    def rule(self, index: int) -> RuleInfo:
        return self.rules[index - 1]

    def stage_of_rule(self) -> dict[int, int]:
        return {r: s.number for s in self.stages for r in s.rules}

    def producers(self, sig: Sig) -> list[int]:
        """The stages whose rules derive ``sig``."""
        return [s.number for s in self.stages if sig in s.produces]

    def explain(self, printed: Iterable[str] = ()) -> str:
        """The plan as text: which rules run in which stage, partitioned by what."""
        inp = self.input
        source = (f"{inp.name}/{inp.arity}" if inp.name is not None else "any event" if inp.arity is None
                  else f"any event with {inp.arity} arguments")
        lines = [f"input: {source}"
                 + (f", partition key {inp.key_name} (argument {inp.key + 1})" if inp.key is not None
                    else (f"; the partition key {inp.key_name} is not an argument of the input events"
                          if inp.key_name else ""))]
        if not self.stages:
            lines.append("no event rules: nothing to run")
        for st in self.stages:
            lines.append(f"stage {st.number}: {self._partitioning(st)}")
            for r in st.rules:
                rule = self.rule(r)
                uses = ", ".join(sorted({str(u.sig) for u in rule.events}))
                lines.append(f"  {rule.name}: {rule.head_text()} <- {uses}")
            lines.append("  consumes: " + (", ".join(self._origin(st, s) for s in st.consumes) or "nothing"))
            if st.exports:
                lines.append("  passes on: " + ", ".join(map(str, st.exports)))
        shown = sorted(printed)
        if shown:
            lines.append("reported: " + ", ".join(shown))
        return "\n".join(lines) + "\n"

    def _partitioning(self, st: Stage) -> str:
        if st.key is None:
            return "global (one partition: its rules join events that share no key)"
        if st.by_input_key:
            return f"partitioned by {self.input.key_name}"
        parts = [f"argument {p + 1} of {s}" for s, p in st.key]
        return "partitioned by " + ", ".join(parts)

    def _origin(self, st: Stage, sig: Sig) -> str:
        where = ["input"] if self.input.is_input(sig) else []
        where += [f"stage {n}" for n in self.producers(sig) if n < st.number]
        return f"{sig} ({', '.join(where)})" if where else str(sig)


def plan(rules: Sequence[RuleInfo], inp: InputEvents) -> Plan:
    """Stratify ``rules`` for a replay of input events ``inp``.

    Without a partition key (``inp.key`` None) everything runs in one
    global stage, as ``etalis run`` would.  With one, stage 1 holds the
    rules keyed by it (and only consuming the input and each other); the
    other rules follow in the order of the dependency graph, grouped
    into as few stages as keep each partitioned by a key of its own where
    one exists.
    """
    heads = {r.head.sig for r in rules}

    def occurs(sig: Sig) -> bool:
        return inp.is_input(sig) or sig in heads

    edges = sorted({(a.index, b.index) for a in rules for b in rules if a.head.sig in b.body_sigs()})
    groups: list[tuple[list[RuleInfo], Optional[dict[Sig, int]], bool]] = []
    if inp.key is None:
        if rules:
            groups.append((list(rules), None, False))
        return _built(rules, inp, groups, edges, occurs)

    key = inp.key
    first_cand, keyed = _keyed(rules, inp.is_input, lambda s: key if inp.is_input(s) else None, occurs)
    stage1 = {r.index for r in rules if keyed[r.index]}
    while True:     # stage 1 consumes only the input and its own events
        later_heads = {r.head.sig for r in rules if r.index not in stage1}
        keep = {r.index for r in rules if r.index in stage1 and not (r.body_sigs() & later_heads)}
        if keep == stage1:
            break
        stage1 = keep
    if stage1:
        group = [r for r in rules if r.index in stage1]
        groups.append((group, {s: key for s in _external(group, rules, inp, occurs)}, True))
    remaining = [r for r in rules if r.index not in stage1]

    def preferred(sig: Sig) -> list[int]:
        first: list[int] = [key] if inp.is_input(sig) else []
        first += sorted(first_cand.get(sig, ()))
        return list(dict.fromkeys(first + list(range(sig.arity))))

    def search(group: list[RuleInfo]) -> Optional[dict[Sig, int]]:
        ext_sigs = sorted(_external(group, rules, inp, occurs))
        return _find_key(group, ext_sigs, preferred, occurs)

    graph: nx.DiGraph = nx.DiGraph()
    graph.add_nodes_from(r.index for r in remaining)
    graph.add_edges_from((a, b) for a, b in edges if a in graph and b in graph)
    condensed = nx.condensation(graph)
    members = {n: sorted(condensed.nodes[n]["members"]) for n in condensed.nodes}
    by_index = {r.index: r for r in rules}
    current: list[RuleInfo] = []
    current_key: Optional[dict[Sig, int]] = None
    for node in nx.lexicographical_topological_sort(condensed, key=lambda n: members[n][0]):
        scc = [by_index[i] for i in members[node]]
        if not current:
            current, current_key = scc, search(scc)
            continue
        stateless = len(scc) == 1 and scc[0].stateless and (scc[0].index, scc[0].index) not in edges
        merged = search(current + scc) if current_key is not None else None
        if merged is not None or (current_key is None and (stateless or search(scc) is None)):
            current, current_key = current + scc, merged
            continue
        if stateless:   # joins nothing: never worth a stage of its own
            current, current_key = current + scc, None
            continue
        groups.append((current, current_key, False))
        current, current_key = scc, search(scc)
    if current:
        groups.append((current, current_key, False))
    return _built(rules, inp, groups, edges, occurs)


def _built(rules: Sequence[RuleInfo], inp: InputEvents,
           groups: list[tuple[list[RuleInfo], Optional[dict[Sig, int]], bool]],
           edges: list[tuple[int, int]], occurs: Callable[[Sig], bool]) -> Plan:
    built: list[Stage] = []
    for number, (group, key_map, by_input) in enumerate(groups, start=1):
        consumes = sorted(_external(group, rules, inp, occurs))
        produces = sorted({r.head.sig for r in group})
        later = [r for g, _, _ in groups[number:] for r in g]
        exports = sorted({s for s in produces if any(s in r.body_sigs() for r in later)})
        key = tuple(sorted(key_map.items())) if key_map is not None else None
        built.append(Stage(number, tuple(sorted(r.index for r in group)), tuple(consumes), tuple(produces),
                           key, by_input, tuple(exports)))
    return Plan(tuple(rules), inp, tuple(built), tuple(edges))


def _external(group: Sequence[RuleInfo], rules: Sequence[RuleInfo], inp: InputEvents,
              occurs: Callable[[Sig], bool]) -> set[Sig]:
    """The events ``group`` consumes that come from outside it: from the
    input, or from rules not in the group."""
    inside = {r.index for r in group}
    outside_heads = {r.head.sig for r in rules if r.index not in inside}
    return {u.sig for r in group for u in r.events
            if occurs(u.sig) and (inp.is_input(u.sig) or u.sig in outside_heads)}


def _find_key(group: list[RuleInfo], ext_sigs: list[Sig], preferred: Callable[[Sig], list[int]],
              occurs: Callable[[Sig], bool]) -> Optional[dict[Sig, int]]:
    """Key positions for the external events of ``group`` under which all
    its rules are keyed, or None."""
    if not ext_sigs or any(s.arity == 0 for s in ext_sigs):
        return None
    options = [preferred(s) for s in ext_sigs]
    total = 1
    for o in options:
        total *= len(o)
    if total > MAX_KEY_SEARCH:
        return None
    ext_set = set(ext_sigs)
    for combo in itertools.product(*options):
        assign = dict(zip(ext_sigs, combo))
        _, keyed = _keyed(group, ext_set.__contains__, assign.get, occurs)
        if all(keyed.values()):
            return assign
    return None


def _keyed(rules: Sequence[RuleInfo], external: Callable[[Sig], bool],
           position: Callable[[Sig], Optional[int]],
           occurs: Callable[[Sig], bool]) -> tuple[dict[Sig, frozenset[int]], dict[int, bool]]:
    """The key positions of the heads of ``rules`` (greatest fixpoint) and
    whether each rule is keyed.  Events from outside carry the key at
    ``position(sig)`` (None: not at all)."""
    by_head: dict[Sig, list[RuleInfo]] = {}
    for r in rules:
        by_head.setdefault(r.head.sig, []).append(r)
    cand: dict[Sig, frozenset[int]] = {}
    for h in by_head:
        allowed = frozenset(range(h.arity))
        if external(h):
            p = position(h)
            allowed &= frozenset() if p is None else frozenset({p})
        cand[h] = allowed

    def positions(sig: Sig) -> Optional[frozenset[int]]:
        if sig in cand:
            return cand[sig]
        if not occurs(sig):
            return None
        p = position(sig)
        return frozenset() if p is None else frozenset({p})

    def key_vars(r: RuleInfo) -> Optional[frozenset[str]]:
        """The variables that key the rule; None if no event of it can occur."""
        if not r.understood:
            return frozenset()
        found: Optional[frozenset[str]] = None
        for u in r.events:
            ps = positions(u.sig)
            if ps is None:
                continue
            vs = frozenset(a.name for q in ps if isinstance(a := u.args[q], Var))
            if u.aggregate is not None:
                vs &= r.outside[u.aggregate]
            found = vs if found is None else found & vs
        return found

    while True:
        kv = {r.index: key_vars(r) for r in rules}
        changed = False
        for h, hrules in by_head.items():
            keep = frozenset(p for p in cand[h] if all(_justified(r, p, kv[r.index]) for r in hrules))
            if keep != cand[h]:
                cand[h] = keep
                changed = True
        if not changed:
            break
    return cand, {r.index: r.stateless or kv[r.index] is None or bool(kv[r.index]) for r in rules}


def _justified(r: RuleInfo, p: int, kv: Optional[frozenset[str]]) -> bool:
    arg = r.head.args[p]
    if not isinstance(arg, Var):
        return False
    return kv is None or arg.name in kv


def replay_plan(rules: Union[str, Sequence[RuleInfo]], source: str, mapping: Mapping, partition_by: Optional[str],
                lines: bool = False) -> Plan:
    """The stages a replay with this mapping runs (``etalis replay --plan``)
    for the rule text ``rules`` named ``source``, or for its rules as read
    already (:attr:`~etalis_py.rules.analysis.RuleFile.rules`); with
    ``lines``, the input is event lines, of any event."""
    infos = read_rules(rules, source)[0] if isinstance(rules, str) else list(rules)
    if lines:
        return plan(infos, InputEvents(None, None))
    key = mapping.args.index(partition_by) if partition_by is not None and partition_by in mapping.args else None
    return plan(infos, InputEvents(mapping.event, len(mapping.args), key, partition_by))


def _transfer_rules(sigs: Sequence[Sig]) -> str:
    """One rule per event passed between stages: it reports the event's
    exact Prolog text and its arguments (JSON loses the difference between
    an atom and a compound term)."""
    out = []
    for s in sigs:
        vs = [f"X{i}" for i in range(1, s.arity + 1)]
        term = f"{quote_atom(s.name)}({', '.join(vs)})" if vs else quote_atom(s.name)
        out.append(f"{TRANSFER}({quote_atom(s.name)}, {s.arity}, Text, [{', '.join(vs)}]) <- {term} "
                   f"where format(atom(Text), '~q', [{term}]).\n")
    return "".join(out)


def refuse_timers(the_plan: Plan, source: str) -> None:
    """A timer's event occurs after the last event of its pattern, maybe
    after the last row of a partition; a stage has no end of the stream at
    which to fire it: replay refuses timers."""
    for rule in the_plan.rules:
        if rule.timer:
            raise _refused(rule, source,
                           f"{rule.timer}/2 (a timer) is not supported by replay on Spark: its event occurs "
                           "after the pattern, and a stage feeds each partition's rows without a time past "
                           "the last one at which pending timers could fire",
                           "run the rule file with etalis run (or Engine.emit_many and Engine.flush), "
                           "which fires the pending timers at the end of the stream")


def refuse_strict(the_plan: Plan, source: str, policy: Optional[str]) -> None:
    """Under `strict` a match's events are adjacent among all the input
    events, which `etalis run` counts; an engine of a replay counts those
    it is fed, the events of one key in a partitioned stage and only those
    its rules consume in any stage.  The counts agree only in one global
    stage of input events of one name: elsewhere replay refuses `strict`
    (``policy`` is the one given to replay, which replaces the file's)."""
    whole = (len(the_plan.stages) == 1 and the_plan.stages[0].key is None
             and the_plan.input.name is not None)
    if whole:
        return
    for rule in the_plan.rules:
        effective = rule.policy if rule.own_policy or policy is None else policy
        if effective == "strict":
            raise _refused(rule, source,
                           f"{rule.head.sig} is derived under the policy strict, whose events are adjacent in the "
                           "whole input stream, and replay feeds an engine only part of it (a partitioned stage the "
                           "events of one key, every stage only the events its rules consume)",
                           "use the policy strict(partition) (adjacent among the events of the rule's key, "
                           "as next() on a keyed stream in Flink), or run the rule file with etalis run")


def refuse_unbound_transfers(the_plan: Plan, source: str) -> None:
    """An event derived with an unbound argument (a head variable its
    pattern does not bind) cannot pass between stages, whose input lines
    are ground events: replay refuses a rule that derives one that a later
    stage uses."""
    passed = {s for st in the_plan.stages for s in st.exports}
    for rule in the_plan.rules:
        if rule.head_unbound and rule.head.sig in passed:
            names = ", ".join(rule.head_unbound)
            raise _refused(rule, source,
                           f"{rule.head.sig} is derived with {names} unbound and used by a later stage of the "
                           "replay, whose input is ground events",
                           f"run the rule file with etalis run, or write a value (e.g. none) in the place of {names}")


def _refused(rule: RuleInfo, source: str, message: str, hint: str) -> RuleError:
    """The error that refuses ``rule`` of the file ``source``, at its position."""
    return RuleError(message, file=source, line=rule.line, column=rule.column, hint=hint)
