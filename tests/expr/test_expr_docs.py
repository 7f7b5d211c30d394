"""docs/expressions.md says what the language does: its examples compile, its reference
is generated from the library, and every value, field, limit and code is in it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from dsl.expr import compile_expression, env_for, limits, problems_of, verdict
from dsl.expr.docs import embed_reference
from dsl.expr.functions import FUNCTIONS
from dsl.expr.sample import attempt
from dsl.expr.types import DATE_FIELDS, GLOBALS, SHAPES
from dsl.source.load import load_text

DOC_FILE = Path(__file__).resolve().parents[2] / "docs" / "expressions.md"
DOC = DOC_FILE.read_text("utf-8")


def yaml_blocks() -> list[Any]:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC, re.S)
    out = []
    for i, block in enumerate(blocks):
        doc = load_text(block, f"docs/expressions.md (yaml block {i + 1})")
        assert doc.diagnostics == (), doc.diagnostics
        out.append(doc.data)
    return out


def world_of(data: Any) -> dict[str, Any]:
    given = data.get("given") if isinstance(data, dict) else None
    return dict(given.get("world") or {}) if isinstance(given, dict) else {}


def expects(data: Any) -> list[str]:
    found = []
    for item in data.get("then", []) if isinstance(data, dict) else []:
        if isinstance(item, dict) and "expect" in item:
            e = item["expect"]
            found.append(e["expr"] if isinstance(e, dict) else e)
    return found


BLOCKS = yaml_blocks()
NAMED = {k: v for b in BLOCKS if isinstance(b, dict) for k, v in (b.get("checks") or {}).items()}
EXAMPLES = [e for b in BLOCKS if "cases" not in b and not world_of(b) for e in expects(b)]
WITH_WORLD = [(e, world_of(b)) for b in BLOCKS if world_of(b) for e in expects(b)]
WITH_CASES = [(e, b["cases"]) for b in BLOCKS if isinstance(b, dict) and "cases" in b
              for e in expects(b)]


@pytest.mark.parametrize(("text", "cases"), WITH_CASES)
def test_every_example_with_cases_compiles_with_its_cases(text: str,
                                                          cases: list[Any]) -> None:
    from dsl.expr.types import TEXT, case_of

    shape = case_of({k: TEXT for c in cases for k in c})
    assert problems_of(text, NAMED) != ()  # without its cases, `case` is unknown
    program = compile_expression(text, NAMED, case=shape)
    env = env_for(attempt())
    env.values["case"] = dict(cases[0])
    verdict(program, env)  # runs without a crash


@pytest.mark.parametrize(("text", "world"), WITH_WORLD)
def test_every_example_with_a_world_compiles_with_its_world(text: str,
                                                            world: dict[str, Any]) -> None:

    from dsl.compiler.world import world_type
    from dsl.errors import Span
    from dsl.model import WorldRun, WorldTable

    at = Span("docs", 1, 1)
    tables = {n: WorldTable(n, tuple(rows), at, {c: at for r in rows for c in r})
              for n, rows in world.items()}
    assert problems_of(text, NAMED) != ()  # without its world, `world` is unknown
    program = compile_expression(text, NAMED, world=world_type(tables))
    rows = {n: t.rows for n, t in tables.items()}
    status, _ = verdict(program, env_for(msgspec.structs.replace(attempt(),
                                                             world=WorldRun(rows, rows))))
    assert status in ("pass", "fail")  # runs without a crash


def test_the_function_reference_is_generated_from_the_library() -> None:
    assert embed_reference(DOC) == DOC, "run: python -m dsl.expr.docs"


def test_there_is_a_cookbook_of_at_least_15_examples() -> None:
    cookbook = DOC.split("## Cookbook", 1)[1].split("\n## ", 1)[0]
    assert len(re.findall(r"  # \d+\. ", cookbook)) >= 15


@pytest.mark.parametrize("text", [*EXAMPLES, *NAMED.values()])
def test_every_example_compiles(text: str) -> None:
    if text.strip() in NAMED:
        return
    assert problems_of(text, NAMED) == ()
    verdict(compile_expression(text, NAMED), env_for(attempt()))  # runs without a crash


@pytest.mark.parametrize("text", [e for f in FUNCTIONS.values() for e, _ in f.examples]
                         + [m.example for m in GLOBALS.values()])
def test_every_function_and_value_example_runs_on_the_sample(text: str) -> None:
    status, reason = verdict(compile_expression(text), env_for(attempt()))
    assert status in ("pass", "fail"), reason


def test_every_value_field_limit_and_code_is_documented() -> None:
    for name, member in GLOBALS.items():
        assert f"| `{name}` | {member.doc} | `{member.example}` |" in DOC, name
    for name in SHAPES["call"]:
        assert f"| `{name}` |" in DOC, name
    for fields in (SHAPES["tool"], SHAPES["moment"], DATE_FIELDS):
        for name in fields:
            assert f"`{name}`" in DOC, name
    for name in dir(limits):
        if name.isupper():
            assert f"`{name}`" in DOC, name
    for code in ("X301", "X302", "X303", "X304", "X305", "E204", "E217", "W404", "W413"):
        assert f"| {code} |" in DOC, code


def test_operator_examples_compile() -> None:
    table = DOC.split("## Operators", 1)[1].split("\n## ", 1)[0]
    for row in table.splitlines():
        cells = row.split(" | ")
        if len(cells) == 3 and row.startswith("| `"):
            for example in re.findall(r"`([^`]+)`", cells[2]):
                assert problems_of(example, condition=False) == (), example
