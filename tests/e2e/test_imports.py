"""The package's import structure. The layers are a contract a tool checks:
``[tool.importlinter]`` in pyproject.toml, run by ``lint-imports`` (here and in CI), which
follows every chain of imports. Beside it, what the contract cannot say: no import circles
at run time (importing a module runs its package's ``__init__`` too), the spine stays
small, every package says in its docstring what goes in and out, every import inside a
function says why, and docs/architecture.md draws the layers as the contract states them."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from dsl._buildtools.layersdoc import layers, update_architecture
from tests.conftest import REPO

PACKAGE = REPO / "dsl"
CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["importlinter"]


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` as CI runs it, on the package and pyproject.toml found in ``cwd``."""
    script = Path(sys.executable).with_name("lint-imports")
    command = [str(script)] if script.exists() else [
        sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()"]
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([*command, "--no-cache"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_lint_imports_keeps_every_contract() -> None:
    r = _lint_imports(REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout


def _layer_of(name: str) -> int:
    for i, (names, _) in enumerate(layers()):
        if name in names:
            return i
    raise AssertionError(f"{name} is in no layer")


def test_the_contract_states_the_pipeline_over_every_package() -> None:
    (contract,) = [c for c in CONTRACTS["contracts"] if c["type"] == "layers"]
    assert contract["containers"] == ["dsl"]
    assert contract["exhaustive"] is True
    # every package and spine module of dsl/ is in a layer (the build tooling apart)
    children = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
                if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    placed = {n for names, _ in layers() for n in names}
    assert children - placed == {"_buildtools"}
    assert placed <= children
    # highest first: the command line on top, then the pipeline, the results, the run, the
    # compiler, the source
    order = [_layer_of(n) for n in ("cli", "pipeline", "results", "execution", "compiler",
                                    "source", "model", "errors")]
    assert order == sorted(order), order
    assert len(set(order)) == len(order), order
    assert _layer_of("clients") < _layer_of("execution")
    assert all(_layer_of(n) > _layer_of("execution")
               for n in ("compiler", "checks", "judge", "targets", "store", "expr"))


def test_nothing_at_run_time_may_import_the_build_tooling() -> None:
    (contract,) = [c for c in CONTRACTS["contracts"] if c["id"] == "buildtools"]
    assert contract["forbidden_modules"] == ["dsl._buildtools"]
    placed = {f"dsl.{n}" for names, _ in layers() for n in names}
    assert set(contract["source_modules"]) == placed


def _copy_of_dsl(tmp_path: Path) -> Path:
    shutil.copytree(PACKAGE, tmp_path / "dsl", ignore=shutil.ignore_patterns(
        "__pycache__", "frontend", "static", "assets"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _add_import(root: Path, module: str, statement: str) -> None:
    path = root / "dsl" / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text("utf-8") + f"\n\ndef _added() -> None:\n    {statement}\n")


@pytest.mark.parametrize(("module", "statement", "said"), [
    # a function-level import: the compile stage reaching the run stage
    ("compiler.moment", "from ..execution import schedule  # noqa",
     "dsl.compiler.moment -> dsl.execution.schedule"),
    # through a package of the compile layer: the store reaching the run stage, so that
    # compiler.plan → store.planfile → execution reaches it too (an indirect chain)
    ("store.planfile", "from ..execution import loop  # noqa",
     "dsl.store.planfile -> dsl.execution.loop"),
    # the run stage reaching the pipeline
    ("execution.run", "from .. import pipeline  # noqa", "dsl.execution.run -> dsl.pipeline"),
    # a run-time package reaching the build tooling
    ("results.words", "from .._buildtools import codedocs  # noqa",
     "dsl.results.words -> dsl._buildtools.codedocs"),
])
def test_a_backward_import_breaks_the_contract(tmp_path: Path, module: str, statement: str,
                                               said: str) -> None:
    root = _copy_of_dsl(tmp_path)
    _add_import(root, module, statement)
    r = _lint_imports(root)
    assert r.returncode != 0, r.stdout
    assert "BROKEN" in r.stdout
    assert said in r.stdout, r.stdout


def test_no_import_is_let_through_by_hand() -> None:
    assert all("ignore_imports" not in c for c in CONTRACTS["contracts"])


# ---- what the contract cannot say ------------------------------------------------------

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
    """import-linter's graph has no edge from a module to its package's ``__init__``, which
    Python runs first: a circle through one is checked here."""
    assert _circles(_graph()) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_package_says_what_goes_in_and_out() -> None:
    for init in sorted(PACKAGE.rglob("__init__.py")):
        if "node_modules" in init.parts:
            continue
        assert ast.get_docstring(ast.parse(init.read_text("utf-8"))), init


def test_the_spine_holds_at_most_ten_modules() -> None:
    spine = sorted(p.name for p in PACKAGE.glob("*.py")
                   if p.name not in ("__init__.py", "__main__.py"))
    assert len(spine) <= 10, spine


def _unexplained(file: Path) -> list[int]:
    """The lines of imports inside functions with no comment on their lines or on the line
    just above their block (the imports one after another in one body)."""
    lines = file.read_text("utf-8").splitlines()
    out = []

    def commented(first: int, last: int) -> bool:
        return any("#" in x for x in lines[first - 1:last])

    def visit(node: ast.AST, in_function: bool) -> None:
        for field in ("body", "orelse", "finalbody", "handlers"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            covered = False  # a comment heads the imports one after another from here
            for child in body:
                if not isinstance(child, ast.Import | ast.ImportFrom):
                    covered = False
                    continue
                covered = covered or (child.lineno >= 2
                                      and lines[child.lineno - 2].lstrip().startswith("#"))
                if in_function and not covered \
                        and not commented(child.lineno, child.end_lineno or 0):
                    out.append(child.lineno)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    visit(ast.parse("\n".join(lines)), False)
    return sorted(set(out))


def test_every_import_inside_a_function_says_why() -> None:
    missing = {str(f.relative_to(REPO)): lines for f in sorted(PACKAGE.rglob("*.py"))
               if "node_modules" not in f.parts
               and (lines := _unexplained(f))}
    assert missing == {}, ("an import inside a function goes to the top of its module, or "
                           "says why it cannot on the line above (# why: ...)")


def test_the_reason_finder_finds_an_import_without_one(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("import os\n\n\ndef a():\n    # why: heavy\n    import json\n\n    import re\n"
                 "    return json, re\n\n\ndef b():\n    x = 1\n    import csv\n    return csv\n"
                 "\n\nif True:\n    import gzip\n")
    assert _unexplained(f) == [14]


def test_the_architecture_doc_draws_the_contract() -> None:
    doc = REPO / "docs" / "architecture.md"
    text = doc.read_text("utf-8")
    assert update_architecture(text) == text, (
        "docs/architecture.md's layers are out of date: python -m dsl._buildtools.docsgen")
