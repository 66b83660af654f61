"""The layout has no circles: no Prolog file of ``prolog/`` loads,
through its ``use_module`` and ``reexport`` directives, a file that
loads it."""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROLOG = ROOT / "prolog"


USE = re.compile(r"^:-\s*(?:use_module|reexport)\(\s*('(?:[^'\\]|\\.)*'|[a-z][\w/]*)", re.M)


def prolog_loads() -> dict[str, set[str]]:
    """Each Prolog file of the project (relative to ``prolog/``) and the
    project's files that it loads."""
    graph: dict[str, set[str]] = {}
    for path in PROLOG.rglob("*.pl"):
        used: set[str] = set()
        for spec in USE.findall(path.read_text(encoding="utf-8")):
            target = (path.parent / spec.strip("'")).with_suffix(".pl").resolve()
            if target.is_file() and PROLOG.resolve() in target.parents:
                used.add(target.relative_to(PROLOG.resolve()).as_posix())
        graph[path.relative_to(PROLOG).as_posix()] = used
    return graph


def circle(graph: Mapping[str, set[str]]) -> list[str]:
    """One circle of graph, as the path that closes it, or []."""
    done: set[str] = set()

    def walk(node: str, path: list[str]) -> Iterator[list[str]]:
        if node in path:
            yield path[path.index(node):] + [node]
            return
        if node in done:
            return
        for nxt in sorted(graph.get(node, ())):
            yield from walk(nxt, path + [node])
        done.add(node)

    for start in sorted(graph):
        for found in walk(start, []):
            return found
    return []


def test_the_circle_finder_names_a_circle() -> None:
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_the_prolog_files_load_no_circle() -> None:
    graph = prolog_loads()
    assert "etalis/runtime/store.pl" in graph["etalis/runtime/runtime.pl"]
    assert circle(graph) == []
