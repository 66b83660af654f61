"""The layout has no circles: no Prolog file of ``prolog/`` loads,
through its ``use_module`` and ``reexport`` directives, a file that
loads it; no Python module of ``src/etalis_py`` imports, through its
imports wherever they stand, a module that imports it.  And no Prolog
or Python file is longer than 800 lines, but those named, each of which
does one job."""
from __future__ import annotations

import ast
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


SRC = ROOT / "src"


def module_name(path: Path) -> str:
    """The dotted name of a module file of ``src/`` (a package by its ``__init__.py``)."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def python_imports() -> dict[str, set[str]]:
    """Each module of ``src/etalis_py`` and the project's modules that it
    imports anywhere in its text: at the top, inside a function or under
    ``TYPE_CHECKING`` (``from . import x`` names the module ``x`` when
    there is one, else the package)."""
    files = {module_name(p): p for p in (SRC / "etalis_py").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        used: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                used.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                for a in node.names:
                    used.add(f"{base}.{a.name}" if f"{base}.{a.name}" in files else base)
        graph[name] = {u for u in used if u in files and u != name}
    return graph


def test_the_import_finder_sees_every_kind_of_import() -> None:
    graph = python_imports()
    assert "etalis_py.bridge.engine" in graph["etalis_py"]                   # from .bridge.engine import ...
    assert "etalis_py.cli.entry" in graph["etalis_py.cli"]                  # a package's own module
    assert "etalis_py.service" in graph["etalis_py.cli.serve"]              # inside a function
    assert "etalis_py.rdf.knowledge" in graph["etalis_py.bridge.engine"]    # under TYPE_CHECKING


def test_the_python_modules_import_no_circle() -> None:
    assert circle(python_imports()) == []


LONGEST = 800
# the files longer than LONGEST lines, each one job, and why it stays whole
ONE_JOB = {
    "reference/evaluate.py": "the paper's declarative semantics, one definition per operator, read as a whole",
    "reference/selection.py": "the definitions of strategies.md's selection strategies and contexts, side by side",
    "tests/test_spark.py": "the tests of replay on Spark: one file runs on one worker, so they share one Spark",
}


def line_counts() -> dict[str, int]:
    """The lines of each Prolog and Python file of the project, by its
    path relative to the repository."""
    return {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
            for folder in ("prolog", "src", "reference", "tests", "benchmarks", "examples")
            for p in sorted((ROOT / folder).rglob("*")) if p.suffix in (".pl", ".py")}


def test_no_file_is_longer_than_800_lines_but_those_of_one_job() -> None:
    counts = line_counts()
    assert "prolog/etalis/compiler/compile.pl" in counts and "src/etalis_py/rules/findings.py" in counts
    assert sorted(path for path, n in counts.items() if n > LONGEST) == sorted(ONE_JOB)
