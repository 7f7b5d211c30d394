"""The CI files of docs/ci.md (docs/ci/): each parses as YAML, is shown whole in
docs/ci.md, and every ``scenarist`` command in it is a real command with options it
takes (so a renamed option cannot leave a team's pipeline broken by our docs)."""

from __future__ import annotations

import io
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from ruamel.yaml import YAML

from dsl.cli import main
from tests.conftest import REPO

FILES = sorted((REPO / "docs" / "ci").glob("*.y*ml"))
# what the schedulers put in a command before the shell runs it
VARIABLES = {"${{ matrix.shard }}": "1", "$CI_NODE_INDEX": "1", "$JOB_COMPLETION_INDEX": "0"}


def _documents(path: Path) -> list[Any]:
    return list(YAML(typ="safe", pure=True).load_all(io.StringIO(path.read_text("utf-8"))))


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def _commands(path: Path) -> list[list[str]]:
    out = []
    for doc in _documents(path):
        for text in _strings(doc):
            for found in re.findall(r"\bscenarist (?:[^|;&\n]|\n(?!\s*\|\|))+", text):
                for name, value in VARIABLES.items():
                    found = found.replace(name, value)
                out.append(shlex.split(found)[1:])
    return out


def test_there_are_the_three_files() -> None:
    assert [f.name for f in FILES] == ["github-actions-shards.yml", "gitlab-ci-shards.yml",
                                       "kubernetes-shards.yaml"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_file_is_shown_whole_in_ci_md(path: Path) -> None:
    assert f"```yaml\n{path.read_text('utf-8')}```" in (REPO / "docs" / "ci.md").read_text()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_scenarist_command_is_real(path: Path) -> None:
    commands = _commands(path)
    assert {c[0] for c in commands} == {"run", "merge"}
    for argv in commands:
        command = main.commands[argv[0]]
        assert isinstance(command, click.Command)
        # the arguments parse as the command line would parse them (options it takes, the
        # values they need); the folders they name exist only on the CI machine
        ctx = command.make_context(argv[0], argv[1:], resilient_parsing=True)
        taken = {o for p in command.params for o in getattr(p, "opts", ())}
        used = {a.split("=")[0] for a in argv[1:] if a.startswith("-")}
        assert used <= taken, (argv, used - taken)
        if argv[0] == "run":
            assert ctx.params["shard"] in ("auto", "auto/4")
            assert ctx.params["out"] is not None


def test_the_commands_are_found_whole() -> None:
    by_name = {f.name: _commands(f) for f in FILES}
    assert by_name["kubernetes-shards.yaml"] == [
        ["run", "scenarios", "--target", "staging", "--shard", "auto/4", "--out",
         "/results/shard-0"],
        ["merge", "/results/shard-*/*", "--out", "/results/merged"]]
    assert by_name["github-actions-shards.yml"][0][-2:] == ["--out", "shards/1"]
