"""``scenarist lint``: formats, exit codes, options, suites, warnings, processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsl.cli import main
from dsl.compiler.lint import (
    FileReport,
    LintResult,
    _map,
    format_github,
    lint_paths,
    lint_text,
    scenario_warnings,
)
from dsl.errors import Diagnostic, Span
from tests.conftest import REPO, write

SUITE = """\
targets:
  local: {kind: openai, base_url: "http://127.0.0.1:8080/v1", model: m}
tools:
  list_business_hours:
    description: Opening hours.
    returns: {monday: "09:00-18:00"}
  search_slots:
    description: Free slots.
    returns: ["15:00"]
"""
GOOD = """\
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, search_slots]
when: Hola
then:
  - calls: list_business_hours
"""
TYPO = GOOD.replace("  - calls:", "  - cals:")
NO_CHECKS = GOOD.replace("then:\n  - calls: list_business_hours\n", "then: []\n")


def lint(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["lint", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    write(tmp_path / "s" / "scenarist.yaml", SUITE)
    write(tmp_path / "s" / "good.yaml", GOOD)
    return tmp_path / "s"


def test_clean_suite_exits_0(suite: Path) -> None:
    assert lint("s") == (0, "1 file(s): 0 error(s), 0 warning(s)\n")


def test_default_path_is_the_current_folder(suite: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    monkeypatch.chdir(suite)
    assert lint() == (0, "1 file(s): 0 error(s), 0 warning(s)\n")


def test_text_format(suite: Path) -> None:
    write(suite / "typo.yaml", TYPO)
    write(suite / "empty_then.yaml", NO_CHECKS)
    code, out = lint("s")
    assert code == 1
    assert out == textwrap.dedent("""\
        s/empty_then.yaml:5:1: warning W402 this scenario has no checks, so every attempt passes
          5 | then: []
            | ^
          hint: add at least one check under 'then', e.g. - contains: "18:00"
        s/typo.yaml:6:5: error S101 unknown check 'cals'; did you mean 'calls'?
          6 |   - cals: list_business_hours
            |     ^
          hint: see the list of checks: scenarist checks, or docs/checks.md
        3 file(s): 1 error(s), 1 warning(s)
        """)


def test_quiet_prints_one_line_per_problem(suite: Path) -> None:
    write(suite / "typo.yaml", TYPO)
    assert lint("-q", "s") == (1, "s/typo.yaml:6:5: error S101 unknown check 'cals'; did "
                                  "you mean 'calls'?\n")


def test_warnings_alone_exit_0_and_strict_makes_them_errors(suite: Path) -> None:
    write(suite / "empty_then.yaml", NO_CHECKS)
    code, out = lint("s")
    assert code == 0
    assert out.endswith("2 file(s): 0 error(s), 1 warning(s)\n")
    code, out = lint("--strict", "s")
    assert code == 1
    assert out.startswith("s/empty_then.yaml:5:1: error W402 this scenario has no checks")
    assert out.endswith("2 file(s): 1 error(s), 0 warning(s)\n")


def test_json_format(suite: Path) -> None:
    write(suite / "typo.yaml", TYPO)
    code, out = lint("--format", "json", "s")
    assert code == 1
    assert json.loads(out) == {
        "schema_version": 1,
        "files": 2,
        "errors": 1,
        "warnings": 0,
        "diagnostics": [{
            "file": "s/typo.yaml", "line": 6, "col": 5, "severity": "error",
            "code": "S101", "name": "unknown-check",
            "message": "unknown check 'cals'; did you mean 'calls'?",
            "hint": "see the list of checks: scenarist checks, or docs/checks.md",
        }],
    }


def test_github_format(suite: Path) -> None:
    write(suite / "typo.yaml", TYPO)
    code, out = lint("--format", "github", "s")
    assert code == 1
    assert out == (
        "::error file=s/typo.yaml,line=6,col=5,title=S101 unknown-check::unknown check "
        "'cals'; did you mean 'calls'?%0Ahint: see the list of checks%3A scenarist checks, "
        "or docs/checks.md\n"
        "2 file(s): 1 error(s), 0 warning(s)\n"
    ).replace("%3A scenarist", ": scenarist")


def test_github_escaping() -> None:
    d = Diagnostic(Span("a,b:c%.yaml", 3, 4), "W402", "100% sure\r\nsecond line", "",
                   "warning")
    result = LintResult(1, [d])
    assert format_github(result).splitlines()[0] == (
        "::warning file=a%2Cb%3Ac%25.yaml,line=3,col=4,title=W402 no-checks::100%25 sure"
        "%0D%0Asecond line")
    cmd = Diagnostic(Span("<command line>", 1, 1), "E212", "no scenario files", "")
    assert format_github(LintResult(0, [cmd])).splitlines()[0] == \
        "::error title=E212 no-scenarios::no scenario files"


def test_colors_follow_the_options_and_no_color(suite: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    write(suite / "typo.yaml", TYPO)
    assert "\x1b[" not in lint("s")[1]
    assert "\x1b[31;1merror" in lint("--color", "s")[1]
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[31;1merror" in lint("s")[1]
    assert "\x1b[" not in lint("--no-color", "s")[1]


def test_usage_errors_exit_2_and_name_the_path(suite: Path) -> None:
    code, out = lint("s", "nowhere/scenario.yaml")
    assert code == 2
    assert "'nowhere/scenario.yaml' does not exist" in out
    assert "Traceback" not in out
    assert lint("--format", "xml", "s")[0] == 2
    assert lint("--jobs", "0", "s")[0] == 2


def test_no_scenario_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    code, out = lint("docs")
    assert code == 1
    assert out.startswith("error E212 no scenario files (*.yaml) in 'docs'\n")


def test_scenarist_yaml_named_directly_is_linted_as_the_suite(suite: Path) -> None:
    write(suite / "scenarist.yaml", SUITE.replace("defaults", "x") + "defaults: {runs: 0}\n")
    code, out = lint("s/scenarist.yaml")
    assert code == 1
    assert out.startswith("s/scenarist.yaml:10:18: error S105 'runs' in defaults must be at "
                          "least 1; got 0\n")
    assert out.endswith("0 file(s): 1 error(s), 0 warning(s)\n")


def test_unused_tools_only_when_the_whole_suite_is_linted(suite: Path) -> None:
    write(suite / "hours.yaml", GOOD.replace(", search_slots", ""))
    write(suite / "good.yaml", GOOD.replace(", search_slots", ""))
    unused = "s/scenarist.yaml:7:3: warning W403 no scenario uses the tool 'search_slots'"
    assert unused in lint("s")[1]
    assert unused in lint("s/good.yaml", "s/hours.yaml")[1]  # every file of the suite
    assert unused not in lint("s/good.yaml")[1]  # hours.yaml might use it


def test_several_suites_in_one_run(suite: Path, tmp_path: Path) -> None:
    write(tmp_path / "t" / "scenarist.yaml", SUITE.replace("search_slots", "book"))
    write(tmp_path / "t" / "good.yaml", GOOD.replace("search_slots", "book"))
    write(tmp_path / "t" / "typo.yaml", TYPO.replace("search_slots", "book"))
    write(suite / "typo.yaml", TYPO)
    code, out = lint("-q", "s", "t")
    assert code == 1
    # each suite has its own tools and ids (good.yaml and typo.yaml exist in both)
    assert out == ("s/typo.yaml:6:5: error S101 unknown check 'cals'; did you mean 'calls'?\n"
                   "t/typo.yaml:6:5: error S101 unknown check 'cals'; did you mean 'calls'?\n")
    assert lint("s", "t")[1].endswith("4 file(s): 2 error(s), 0 warning(s)\n")


def test_duplicate_ids_within_a_suite(suite: Path) -> None:
    write(suite / "a.yaml", "id: same\n" + GOOD)
    write(suite / "b.yaml", "id: same\n" + GOOD)
    code, out = lint("s")
    assert code == 1
    assert out.startswith(
        "s/b.yaml:1:5: error E205 the scenario id 'same' is already used by s/a.yaml\n"
        "  1 | id: same\n"
        "    |     ^\n")


def test_files_without_a_suite_are_linted_without_library(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "lone.yaml", GOOD)
    code, out = lint("lone.yaml")
    assert code == 1
    assert "error E201 there is no tool 'list_business_hours' in the suite's tool library " \
           "(no scenarist.yaml was found)" in out


def test_whole_invalid_corpus_exits_1_without_a_traceback() -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-m", "dsl", "lint", "tests/cases/invalid",
                        "--format", "json"], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    assert r.stderr == ""
    report = json.loads(r.stdout)
    files = {p.relative_to(REPO).as_posix() for p in (REPO / "tests/cases/invalid").rglob(
        "*.yaml") if p.name != "scenarist.yaml"}
    assert report["files"] == len(files)
    flagged = {d["file"] for d in report["diagnostics"]}
    # a mistake in a scenario's cases file (.csv, .jsonl) is reported in that file
    data = {str(Path(f).parent) for f in flagged if not f.endswith(".yaml")}
    flagged |= {f for f in files if str(Path(f).parent) in data}
    ok_files = {"tests/cases/invalid/unknown_target/hours.yaml",
                "tests/cases/invalid/bad_suite/hours.yaml",
                "tests/cases/invalid/duplicate_ids/a.yaml"}
    assert files - ok_files <= flagged
    assert all(d["line"] >= 1 and d["col"] >= 1 for d in report["diagnostics"])


def test_processes_give_the_same_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "scenarist.yaml", SUITE)
    for i in range(90):
        text = GOOD
        if i % 7 == 0:
            text = TYPO
        elif i % 11 == 0:
            text = "id: dup\n" + GOOD
        elif i % 13 == 0:
            text = NO_CHECKS
        write(tmp_path / f"f{i:02d}.yaml", text)
    one = lint_paths([Path(".")], jobs=1)
    two = lint_paths([Path(".")], jobs=2)
    assert one.files == two.files == 90
    assert one.diagnostics == two.diagnostics
    assert one.excerpts == two.excerpts
    assert {d.code for d in one.diagnostics} == {"S101", "E205", "W402"}


def _square_unless_child(parent: int, x: int) -> int:
    if os.getpid() != parent:
        raise RuntimeError("a bug in a worker")
    return x * x


def test_a_failing_worker_has_its_share_redone_here() -> None:
    parent = os.getpid()
    items = list(range(10))
    assert _map(lambda x: _square_unless_child(parent, x), items, 3) == [x * x for x in items]


def test_single_run_judge_warning() -> None:
    from dsl.compiler.moment import parse_moment
    from dsl.model import CompiledCheck, Scenario
    from dsl.source.load import load_text

    text = "given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: Hola\nthen:\n  - faithful\nruns: 1\n"
    doc = load_text(text, "j.yaml")
    check = CompiledCheck("faithful", "faithful", True, lambda p, a: None,  # type: ignore
                          Span("j.yaml", 5, 5), judge=True)
    scenario = Scenario(id="j", file="j.yaml", span=Span("j.yaml", 1, 1), description="",
                        tags=(), at=parse_moment("2026-09-29T10:00:00-03:00"), system="",
                        tools=(), message="Hola", checks=(check,), runs=1, min_pass=1,
                        max_steps=6)
    (w,) = scenario_warnings(scenario, doc, None)
    assert (w.code, w.severity, w.span) == ("W405", "warning", Span("j.yaml", 6, 7))
    assert w.message == ("the judge check 'faithful' runs only once (runs: 1); a judge is a "
                         "model too, and one verdict says little")


def test_lint_does_not_import_the_runner_or_the_network(suite: Path) -> None:
    probe = (
        "import sys\n"
        "from dsl.cli import main\n"
        "try:\n"
        "    main(['lint', 's'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('httpx', 'asyncio', "
        "'jsonschema', 'jinja2', 'sniffio') or m in ('dsl.execution.run', 'dsl.results.report', 'dsl.execution.loop') "
        "or (m.startswith('dsl.store.') and m != 'dsl.store.background') "
        "or m.startswith('dsl._buildtools'))\n"
        "print('IMPORTED', bad)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-c", probe], cwd=suite.parent, env=env,
                       capture_output=True, text=True, timeout=60)
    assert "IMPORTED []" in r.stdout, r.stdout + r.stderr


def test_file_report_is_small_and_picklable() -> None:
    import pickle

    r = FileReport("f.yaml", (), "f", Span("f.yaml", 1, 1), ("a",), {})
    assert pickle.loads(pickle.dumps(r)) == r


@pytest.mark.parametrize(("line", "col", "shown", "caret"), [
    # the caret after the password moves with it; one inside it points at the mask
    ('history: "postgresql://ci:s3cret@db/scenarist"', 10,
     'history: "postgresql://ci:***@db/scenarist"', 10),
    ('history: "postgresql://ci:s3cret@db/scenarist"', 38,
     'history: "postgresql://ci:***@db/scenarist"', 35),
    ('history: "postgresql://ci:s3cret@db/scenarist"', 30,
     'history: "postgresql://ci:***@db/scenarist"', 27),
    ("url: https://bot:p@ss:w@rd@api.example.org/v1?x=1", 6,
     "url: https://bot:***@api.example.org/v1?x=1", 6),
    ("history: postgresql://ci@db/s?sslmode=require&password=s3cret", 1,
     "history: postgresql://ci@db/s?sslmode=require&password=***", 1),
    ("dsn: host=db password=s3cret user=ci", 1, "dsn: host=db password=*** user=ci", 1),
    ("base_url: http://127.0.0.1:8080/v1", 11, "base_url: http://127.0.0.1:8080/v1", 11),
])
def test_no_diagnostic_echoes_a_credential(line: str, col: int, shown: str, caret: int) -> None:
    from dsl.errors import render

    d = Diagnostic(Span("scenarist.yaml", 1, col), "E221", f"bad value {line}",
                   f"not {line}")
    assert render(d, [line]).splitlines() == [
        f"scenarist.yaml:1:{col}: error E221 bad value {shown}",
        f"  1 | {shown}",
        f"    | {' ' * (caret - 1)}^",
        f"  hint: not {shown}",
    ]


def test_the_same_check_twice_is_found_as_json_sees_it(tmp_path: Path) -> None:
    """W406 compares a check only with those that may equal it (linear in the checks), and
    still as JSON does: 1 and 1.0 are one value, true and 1 are two."""
    (tmp_path / "scenarist.yaml").write_text("targets:\n  r: {kind: replay, cassette: c.jsonl}\n")
    path = tmp_path / "s.yaml"
    many = "".join(f'  - contains: "word {n}"\n' for n in range(300))
    text = ("given: {at: 2026-09-29T10:00:00-03:00}\nwhen: hi\nthen:\n" + many +
            "  - json: {values: {ok: true}}\n  - json: {values: {ok: 1}}\n"
            "  - json: {values: {n: 1}}\n  - json: {values: {n: 1.0}}\n"
            '  - contains: "word 7"\n')
    found = [(d.code, d.span.line) for d in lint_text(path, text).of_file(path)
             if d.code == "W406"]
    assert found == [("W406", 307), ("W406", 308)]
