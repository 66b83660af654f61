"""The event graph of a rule file: which rules derive each event, an
edge from each event of a pattern to the head it leads to, its cycles,
its strata and its picture in Graphviz dot.  ``etalis check``'s findings
on recursion and negation (:mod:`etalis_py.rules.findings`) read it."""

from __future__ import annotations

import itertools

import networkx as nx

from .analysis import RuleFile, RuleInfo, Sig

# at most this many cycles are reported (a dense graph has very many)
MAX_CYCLES = 50


def rules_by_head(rf: RuleFile) -> dict[Sig, list[RuleInfo]]:
    """The rules deriving each event."""
    out: dict[Sig, list[RuleInfo]] = {}
    for r in rf.rules:
        out.setdefault(r.head.sig, []).append(r)
    return out


def event_graph(rf: RuleFile) -> "nx.DiGraph[Sig]":
    """Events, with an edge from each event of a pattern (not negated) to
    the head, holding the rules and their steps (``rules``: a list of
    (rule, step))."""
    g: nx.DiGraph = nx.DiGraph()
    for r in rf.rules:
        g.add_node(r.head.sig)
        for sig, step in r.steps:
            if step == "negated":
                continue
            g.add_edge(sig, r.head.sig)
            g.edges[sig, r.head.sig].setdefault("rules", []).append((r, step))
    return g


def cycles(g: "nx.DiGraph[Sig]") -> list[list[Sig]]:
    """The first :data:`MAX_CYCLES` cycles of the event graph ``g``, each
    from its least event, in order."""
    return sorted(_rotated(c) for c in itertools.islice(nx.simple_cycles(g), MAX_CYCLES))


def _rotated(cycle: list[Sig]) -> list[Sig]:
    i = cycle.index(min(cycle))
    return list(cycle[i:]) + list(cycle[:i])


def strata(rf: RuleFile) -> dict[Sig, int]:
    """The stratum of each event of the positive dependency graph: 0 for
    an event no rule derives, else one more than the highest stratum of
    the events it is derived from (the events of a cycle share one)."""
    g = event_graph(rf)
    for r in rf.rules:
        for sig, _ in r.steps:
            g.add_node(sig)
    derived = set(rules_by_head(rf))
    cg = nx.condensation(g)
    level: dict[int, int] = {}
    for n in nx.topological_sort(cg):
        members = cg.nodes[n]["members"]
        below = [level[p] for p in cg.predecessors(n)]
        level[n] = 0 if not members & derived else 1 + max(below, default=0)
    return {sig: level[cg.graph["mapping"][sig]] for sig in g}


def dot(rf: RuleFile) -> str:
    """The dependency graph in Graphviz dot: events as nodes, an edge from
    each event of a pattern to the head labelled with the rule (dashed for
    a negated event), the edges of cycles in red."""
    g = event_graph(rf)
    on_cycle = {(a, b) for c in itertools.islice(nx.simple_cycles(g), MAX_CYCLES)
                for a, b in zip(c, list(c[1:]) + [c[0]])}
    inputs = {d.sig for d in rf.inputs}
    derived = set(rules_by_head(rf))
    lines = ["digraph rules {", "  rankdir=LR;"]
    nodes = sorted({s for r in rf.rules for s, _ in r.steps} | derived | inputs)
    for s in nodes:
        shape = "box" if s in derived else "ellipse"
        lines.append(f"  {_quoted(str(s))} [shape={shape}];")
    for r in rf.rules:
        for sig, step in dict.fromkeys(r.steps):
            attrs = [f"label={_quoted(r.name)}"]
            if step == "negated":
                attrs.append("style=dashed")
            elif (sig, r.head.sig) in on_cycle:
                attrs.append("color=red")
            lines.append(f"  {_quoted(str(sig))} -> {_quoted(str(r.head.sig))} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
