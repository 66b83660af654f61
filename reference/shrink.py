"""Shrinking a failing case.

:func:`shrink_case` cuts a case that the engine and the reference disagree
on down to a small one that still fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from etalis_py.errors import EtalisError
from etalis_py.rules.rules import Aggregate, Binary, Pattern, Where, Within
from .check import Case, check_case
from .evaluate import Uncheckable


def _children(p: Pattern) -> list[Pattern]:
    if isinstance(p, Binary):
        return [p.left, p.right]
    if isinstance(p, (Where, Within)):
        return [p.pattern]
    return []       # an aggregate binds its result: its pattern cannot stand for it


def _simpler_patterns(p: Pattern) -> Iterator[Pattern]:
    """p with one sub-pattern replaced by one of its operands."""
    yield from _children(p)
    if isinstance(p, Binary):
        for left in _simpler_patterns(p.left):
            yield replace(p, left=left)
        for right in _simpler_patterns(p.right):
            yield replace(p, right=right)
    elif isinstance(p, (Where, Within, Aggregate)):
        for inner in _simpler_patterns(p.pattern):
            yield replace(p, pattern=inner)


def _simpler_cases(case: Case) -> Iterator[Case]:
    stream = case.stream
    size = len(stream) // 2
    while size >= 1:
        for i in range(0, len(stream), size):
            yield replace(case, stream=stream[:i] + stream[i + size:])
        size //= 2
    for i in range(len(case.rules)):
        if len(case.rules) > 1:
            label = case.rules[i].label
            yield replace(case, rules=case.rules[:i] + case.rules[i + 1:],
                          overrides=tuple(o for o in case.overrides if o[0] != label))
    for i, rule in enumerate(case.rules):
        for p in _simpler_patterns(rule.pattern):
            yield replace(case, rules=case.rules[:i] + (replace(rule, pattern=p),) + case.rules[i + 1:])
    if case.statics:
        yield replace(case, statics="")
    if case.printed is not None:
        yield replace(case, printed=None)
    for i in range(len(case.overrides)):
        yield replace(case, overrides=case.overrides[:i] + case.overrides[i + 1:])


def shrink_case(case: Case, policy: str, max_checks: int = 2000) -> Case:
    """A smaller case that still fails under ``policy``: greedily drop
    stream events and rules and replace sub-patterns by their operands
    while the engine and the evaluator still disagree."""
    checks = 0
    progress = True
    while progress and checks < max_checks:
        progress = False
        for candidate in _simpler_cases(case):
            checks += 1
            if checks > max_checks:
                break
            if _fails(candidate, policy):
                case = candidate
                progress = True
                break
    return case


def _fails(case: Case, policy: str) -> bool:
    try:
        return not check_case(case, (policy,))[0].ok
    except (EtalisError, Uncheckable, ValueError):
        return False
