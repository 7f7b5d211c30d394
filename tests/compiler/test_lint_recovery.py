"""Lint reports every independent mistake of a file in one pass, in file order.

Each ``cases/invalid/recover_*.yaml`` holds three mistakes that have nothing to do with each
other (its exact output is in the ``.expected`` beside it, checked by test_cases.py). Here:
the three are reported at once, in the order of the file, and they are *independent* —
fixing any one of them leaves exactly the other two, and fixing all three leaves a clean
file: no mistake hides another, and none is reported because of another.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from dsl.compiler.lint import lint_paths

CASES = Path(__file__).parents[1] / "cases"

# file -> its three mistakes: (the code lint reports, the text that is wrong, its fix)
MISTAKES: dict[str, list[tuple[str, str, str]]] = {
    "recover_shape_moment_expression.yaml": [
        ("E203", "at: 2026-09-29T10:00:00\n", "at: 2026-09-29T10:00:00-03:00\n"),
        ("S106", '  - contains: "18:00"\n    ignore_case: true\n',
         '  - contains: {text: "18:00", ignore_case: true}\n'),
        ("X302", "and anser matches", "and answer matches"),
    ],
    "recover_tool_arguments_min_pass.yaml": [
        ("S105", "action: creates", "action: create"),
        ("E232", '{dat: "2026-10-06"', '{date: "2026-10-06"'),
        ("E202", "min_pass: 4", "min_pass: 3"),
    ],
    "recover_duplicate_key.yaml": [
        ("E201", "calls: list_busines_hours", "calls: list_business_hours"),
        ("Y102", "when: ¿Y mañana?\n", ""),
        ("S103", "runs: five", "runs: 5"),
    ],
    "recover_modifiers.yaml": [
        ("S103", "always: yes", "always: true"),
        ("S106", '{contains: "18:00", not_contains: "19:00", name: says the hour}',
         '{contains: "18:00", name: says the hour}'),
        ("E204", '"18[:.00"', '"18[:.]00"'),
    ],
    "recover_tool_answers.yaml": [
        ("E203", "at: 2026-09-29T10:00:00\n", "at: 2026-09-29T10:00:00-03:00\n"),
        ("S103", "when: P-1", "when: {patient_id: P-1}"),
        ("E208", '"{{ args.x }"', '"{{ args.x }}"'),
    ],
    "recover_turns.yaml": [
        ("S106", 'contains: "18:00", name:', "name:"),
        ("E213", "  - cancel: all\n", "  - say: Gracias\n"),
        ("X302", "and anser matches", "and answer matches"),
    ],
}


@pytest.fixture(autouse=True)
def _in_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES)


def codes(path: Path) -> list[tuple[int, str]]:
    """What lint says about the file (the suite beside it may add its own warnings)."""
    return [(d.span.line, d.code) for d in lint_paths([path]).diagnostics
            if d.span.file == str(path)]


def test_every_recovery_case_is_listed() -> None:
    assert sorted(p.name for p in (CASES / "invalid").glob("recover_*.yaml")) == sorted(MISTAKES)


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_three_independent_mistakes_in_one_pass_in_file_order(name: str) -> None:
    found = codes(Path("invalid") / name)
    assert [code for _, code in found] == [code for code, _, _ in MISTAKES[name]]
    lines = [line for line, _ in found]
    assert lines == sorted(lines)
    assert len(set(lines)) == 3


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_fixing_any_of_them_leaves_exactly_the_others(name: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    text = (CASES / "invalid" / name).read_text("utf-8")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenarist.yaml").write_text((CASES / "scenarist.yaml").read_text("utf-8"))
    mistakes = MISTAKES[name]
    for fixed in itertools.chain.from_iterable(
            itertools.combinations(range(3), k) for k in (1, 2, 3)):
        edited = text
        for i in fixed:
            _, wrong, right = mistakes[i]
            assert edited.count(wrong) == 1, wrong
            edited = edited.replace(wrong, right)
        Path(name).write_text(edited, "utf-8")
        left = [code for _, code in codes(Path(name))]
        assert left == [m[0] for i, m in enumerate(mistakes) if i not in fixed], fixed
