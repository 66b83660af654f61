"""The layout has no circles: no Prolog file of ``prolog/`` loads,
through its ``use_module`` and ``reexport`` directives, a file that
loads it; no Python module of ``src/etalis_py`` imports, through its
imports wherever they stand, a module that imports it.  An import inside
a function is of a heavy stack that a command loads only when it needs
it (or of a module of the project that loads one), with a comment that
says so.  And no Prolog or Python file is longer than 800 lines, but
those named, each of which does one job."""
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


# what a module may import inside a function, so that the commands that do not need it start without it
HEAVY = {"pyspark", "py4j", "pandas", "matplotlib", "rdflib", "pyswip", "etalis_py"}


def inner_imports() -> list[tuple[str, str, bool]]:
    """Each import inside a function of ``src/etalis_py``: where (file:line),
    the module's top package, and whether a comment says why (on its line,
    or on the line above its block of imports)."""
    found = []
    for path in sorted((SRC / "etalis_py").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for function in ast.walk(ast.parse(text)):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    top = node.names[0].name.partition(".")[0]
                elif isinstance(node, ast.ImportFrom):
                    top = "etalis_py" if node.level else (node.module or "").partition(".")[0]
                else:
                    continue
                above = node.lineno - 2
                while above > 0 and (lines[above].strip().startswith(("import ", "from ")) or not lines[above].strip()):
                    above -= 1
                said = "#" in lines[node.lineno - 1] or lines[above].strip().startswith("#")
                found.append((f"{path.relative_to(ROOT)}:{node.lineno}", top, said))
    return found


def test_an_import_inside_a_function_is_of_a_heavy_stack_and_says_why() -> None:
    found = inner_imports()
    assert ("src/etalis_py/cli/serve.py:63", "etalis_py", True) in found       # the HTTP stack, by serve only
    assert [(where, top) for where, top, _ in found if top not in HEAVY] == []
    assert [where for where, _, said in found if not said] == []


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
