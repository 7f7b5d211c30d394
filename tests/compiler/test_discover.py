"""Discover: run and plan (compile) and lint find the same files in the same suites.

One tree holds a suite with an excluded folder, a suite nested inside it, hidden and
``runs/`` folders, and a file under no suite. For every set of paths, lint refuses
exactly what a run refuses, in the same words at the same places; when the paths span
several suites, a run refuses them all (E211) and lint checks each suite's files as a run
of that suite alone would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsl.compiler.compile import compile_paths
from dsl.compiler.discover import discover, iter_yaml_files
from dsl.compiler.lint import lint_paths
from dsl.errors import Diagnostic, best_per_place
from tests.conftest import write

OUTER = """\
targets:
  local: {kind: openai, base_url: "http://127.0.0.1:8080/v1", model: m}
exclude: ["fixtures/**"]
tools:
  hours: {description: Opening hours., returns: "09:00-18:00"}
  slots: {description: Free slots., returns: ["15:00"]}
  unused: {description: No scenario offers it., returns: OK}
"""
INNER = """\
targets:
  local: {kind: openai, base_url: "http://127.0.0.1:8080/v1", model: m}
tools:
  book: {description: Book a slot., returns: Booked}
"""


def scenario(tool: str, check: str = "", head: str = "") -> str:
    return (f"{head}given:\n  at: 2026-09-29T10:00:00-03:00\n  tools: [{tool}]\n"
            f"when: Hola\nthen:\n  - {check or 'calls: ' + tool}\n")


FILES = {
    "outer/scenarist.yaml": OUTER,
    "outer/a.yaml": scenario("hours"),
    "outer/b.yaml": scenario("hours", 'contians: "18:00"'),  # S101
    "outer/sub/c.yaml": scenario("slots"),
    "outer/fixtures/data.yaml": "rows: [1, 2]\n",  # excluded: not a scenario
    "outer/.hidden/h.yaml": "{{ not yaml",
    "outer/runs/r.yaml": "{{ not yaml",
    "outer/inner/scenarist.yaml": INNER,
    "outer/inner/d.yaml": scenario("book"),  # E201 if compiled against the outer suite
    "outer/inner/e.yaml": scenario("book", head="id: same\n"),
    "outer/inner/deeper/f.yaml": scenario("book", head="id: same\n"),  # E205
    "loose/x.yaml": scenario("hours"),  # under no suite: E201
}


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in FILES.items():
        write(tmp_path / name, text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _errors(diagnostics: list[Diagnostic]) -> set[str]:
    """Errors one per place, as people read them (E212 apart: lint never says it when it
    checks a suite)."""
    return {f"{d.span}: {d.code} {d.message}" for d in best_per_place(diagnostics)
            if d.severity == "error" and d.code != "E212"}


def run_errors(paths: list[str]) -> set[str]:
    return _errors(compile_paths([Path(p) for p in paths]).diagnostics)


def lint_errors(paths: list[str]) -> set[str]:
    return _errors(lint_paths([Path(p) for p in paths]).diagnostics)


ONE_SUITE = [
    ["outer/a.yaml"],
    ["outer/a.yaml", "outer/b.yaml"],
    ["outer/b.yaml", "outer/./b.yaml"],
    ["outer/sub"],
    ["outer/sub", "outer/b.yaml", "outer/fixtures/data.yaml"],
    ["outer/inner"],
    ["outer/inner/d.yaml", "outer/inner/deeper"],
    ["outer/inner/deeper", "outer/inner/e.yaml"],
]


@pytest.mark.parametrize("paths", ONE_SUITE, ids=" ".join)
def test_lint_refuses_what_a_run_refuses(tree: Path, paths: list[str]) -> None:
    assert lint_errors(paths) == run_errors(paths)


def test_the_cases_do_refuse_something(tree: Path) -> None:
    assert run_errors(["outer/a.yaml", "outer/b.yaml"]) == {
        "outer/b.yaml:6:5: S101 unknown check 'contians'; did you mean 'contains'?"}
    assert run_errors(["outer/inner/deeper", "outer/inner/e.yaml"]) == {
        "outer/inner/e.yaml:1:5: E205 the scenario id 'same' is already used by "
        "outer/inner/deeper/f.yaml"}
    assert run_errors(["outer/sub"]) == set()


SEVERAL_SUITES = [
    ["outer"],  # the outer suite's folder holds the inner suite's
    ["outer/a.yaml", "outer/inner/d.yaml"],
    ["outer/sub", "outer/inner"],
]


@pytest.mark.parametrize("paths", SEVERAL_SUITES, ids=" ".join)
def test_across_suites_a_run_refuses_and_lint_checks_each_as_its_own_run(
        tree: Path, paths: list[str]) -> None:
    (refused,) = compile_paths([Path(p) for p in paths]).diagnostics
    assert (refused.code, refused.message) == (
        "E211", "these paths belong to different suites: 'outer/inner/scenarist.yaml' and "
        "'outer/scenarist.yaml'")
    groups = discover([Path(p) for p in paths]).groups
    assert len(groups) == 2
    each_run = set().union(*(run_errors([str(f.path) for f in g.files]) for g in groups))
    assert lint_errors(paths) == each_run


def test_a_path_under_no_suite(tree: Path) -> None:
    (refused,) = compile_paths([Path("outer/a.yaml"), Path("loose/x.yaml")]).diagnostics
    assert (refused.code, refused.message) == (
        "E211", "some paths are outside the suite outer/scenarist.yaml")
    assert lint_errors(["outer/a.yaml", "loose/x.yaml"]) == {
        "loose/x.yaml:3:11: E201 there is no tool 'hours' in the suite's tool library "
        "(no scenarist.yaml was found)",
        "loose/x.yaml:6:12: E201 the scenario has no tool 'hours'"}


def test_each_file_belongs_to_its_nearest_suite_and_exclusions_apply(tree: Path) -> None:
    found = discover([Path("outer"), Path("loose"), Path("outer/a.yaml")])
    groups = {(g.suite_file.relative_to(tree).as_posix() if g.suite_file else None):
              [f.name for f in g.files] for g in found.groups}
    assert groups == {
        "outer/scenarist.yaml": ["outer/a.yaml", "outer/b.yaml", "outer/sub/c.yaml"],
        "outer/inner/scenarist.yaml": ["outer/inner/d.yaml", "outer/inner/deeper/f.yaml",
                                       "outer/inner/e.yaml"],
        None: ["loose/x.yaml"],
    }
    assert [g.suite.file if g.suite else None for g in found.groups] == [
        "outer/scenarist.yaml", "outer/inner/scenarist.yaml", None]
    assert all(f.path.is_absolute() for g in found.groups for f in g.files)


def test_a_suite_file_is_never_a_scenario(tree: Path) -> None:
    assert lint_paths([Path("outer/scenarist.yaml")]).files == 0
    (refused,) = compile_paths([Path("outer/scenarist.yaml")]).diagnostics
    assert (refused.code, refused.message) == (
        "E212", "no scenario files (*.yaml) in 'outer/scenarist.yaml'")


@pytest.mark.parametrize(("paths", "whole"), [
    (["outer"], True),
    (["."], True),
    (["outer/a.yaml"], False),
    (["outer/a.yaml", "outer/b.yaml"], False),
    # every file, one by one: the excluded one and the inner suite's are not the suite's
    (["outer/a.yaml", "outer/b.yaml", "outer/sub/c.yaml"], True),
    (["outer/a.yaml", "outer/b.yaml", "outer/sub"], True),
])
def test_a_suite_is_whole_when_every_scenario_of_it_is_there(
        tree: Path, paths: list[str], whole: bool) -> None:
    (outer,) = [g for g in discover([Path(p) for p in paths]).groups
                if g.suite_file == tree / "outer" / "scenarist.yaml"]
    assert outer.whole is whole
    unused = [d for d in lint_paths([Path(p) for p in paths]).diagnostics if d.code == "W403"]
    assert [d.message for d in unused] == (["no scenario uses the tool 'unused'"] if whole else [])


def test_a_folder_named_brings_its_suite_without_scenarios(tree: Path) -> None:
    (group,) = discover([Path("outer/fixtures")]).groups
    assert group.suite_file == tree / "outer" / "scenarist.yaml"
    assert group.files == ()
    (refused,) = compile_paths([Path("outer/fixtures")]).diagnostics
    assert refused.code == "E212"


def _reference_yaml_files(root: Path) -> list[Path]:
    """The walk as it was written with pathlib (rglob), kept to pin the faster one."""
    out = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).parts
        if any(part.startswith(".") for part in rel[:-1]) or "runs" in rel[:-1]:
            continue
        if p.suffix in (".yaml", ".yml") and p.is_file() and not p.name.startswith("."):
            out.append(p)
    return out


def test_yaml_files_are_found_in_a_stable_order(tmp_path: Path) -> None:
    for rel in ["b.yaml", "a.yml", "A.yaml", "z/x.yaml", "z/y.txt", "z-a.yaml", "z.b/c.yaml",
                ".hidden/h.yaml", "dir/.h.yaml", "runs/r.yaml", "deep/runs/r.yaml",
                "deep/er/est.yaml", "x.yaml.bak", "sub/a b.yaml", "ñ/ü.yaml"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("a: 1\n")
    (tmp_path / "link").symlink_to(tmp_path / "z")  # not followed, as rglob does not
    (tmp_path / "file_link.yaml").symlink_to(tmp_path / "b.yaml")
    assert list(iter_yaml_files(tmp_path)) == _reference_yaml_files(tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in iter_yaml_files(tmp_path)][:3] == \
        ["A.yaml", "a.yml", "b.yaml"]


def test_a_suite_inside_a_folder_its_parent_excludes_is_not_met(tmp_path: Path) -> None:
    from tests.conftest import run_cli, suite_yaml, write

    scenario = "given: {at: 2026-09-29T10:00:00-03:00}\nwhen: hi\nthen: [non_empty]\n"
    outer = json.loads(suite_yaml("http://127.0.0.1:9/v1"))
    write(tmp_path / "scenarist.yaml", json.dumps({**outer, "exclude": ["agents/**"]}))
    write(tmp_path / "a.yaml", scenario)
    write(tmp_path / "agents" / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1"))
    write(tmp_path / "agents" / "b.yaml", scenario)
    outer_plan = run_cli("plan", ".", cwd=tmp_path).output
    assert "a " in outer_plan
    assert "b " not in outer_plan
    inner_plan = run_cli("plan", "agents", cwd=tmp_path).output
    assert "b " in inner_plan
    assert "a " not in inner_plan
