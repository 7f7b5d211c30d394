"""The package's import structure: no import circles (imports inside functions count too,
since that is where circles hide), the four stage packages import one way only
(``source`` → ``compiler`` → ``execution`` → ``results``), the spine stays small, and the
build tooling stays out of the runtime."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "dsl"

# The stage packages in pipeline order: each may import those before it, never those after.
STAGES = ("dsl.source", "dsl.compiler", "dsl.execution", "dsl.results")


def _modules() -> dict[str, Path]:
    out = {}
    for f in sorted(PACKAGE.rglob("*.py")):
        parts = f.relative_to(REPO).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _imports(name: str, file: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its text. Importing
    ``a.b.c`` imports the packages ``a`` and ``a.b`` too (unless ``name`` is inside them)."""
    here = name.split(".") if file.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(file.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            found.add(target)
            found.update(f"{target}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    out: set[str] = set()
    for t in found & set(modules):
        parts = t.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return {m for m in out & set(modules)
            if m != name and not name.startswith(m + ".")}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, file, modules) for name, file in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_no_import_circles() -> None:
    assert _circles(_graph()) == []


def _stage(module: str) -> int | None:
    for i, stage in enumerate(STAGES):
        if module == stage or module.startswith(stage + "."):
            return i
    return None


def _backward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) pairs where a stage package imports a later one."""
    out = []
    for name, imported in graph.items():
        here = _stage(name)
        if here is None:
            continue
        out.extend((name, other) for other in imported
                   if (there := _stage(other)) is not None and there > here)
    return sorted(out)


def test_the_stage_packages_import_one_way() -> None:
    assert _backward_imports(_graph()) == []


def test_the_one_way_rule_finds_a_backward_import() -> None:
    graph = {"dsl.source.load": {"dsl.compiler.suite"}, "dsl.compiler.suite": {"dsl.source.load"},
             "dsl.results.report": {"dsl.execution.run"}, "dsl.pipeline": {"dsl.results.report"}}
    assert _backward_imports(graph) == [("dsl.source.load", "dsl.compiler.suite")]


def test_every_stage_package_exists_with_its_docstring() -> None:
    for stage in (*STAGES, "dsl.targets"):
        init = REPO / Path(*stage.split(".")) / "__init__.py"
        assert ast.get_docstring(ast.parse(init.read_text("utf-8"))), init


def test_the_spine_holds_at_most_ten_modules() -> None:
    spine = sorted(p.name for p in PACKAGE.glob("*.py")
                   if p.name not in ("__init__.py", "__main__.py"))
    assert len(spine) <= 10, spine


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_nothing_at_run_time_imports_the_build_tooling() -> None:
    importers = sorted(name for name, imported in _graph().items()
                       if "dsl._buildtools" in imported and not name.startswith("dsl._buildtools"))
    assert importers == []
