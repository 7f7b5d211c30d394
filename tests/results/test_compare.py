"""Comparing runs and targets through the real command line: ``scenarist diff`` (text, JSON,
Markdown; every classification), ``run --baseline`` keeping its comparison in summary.json,
``--fail-on-regression`` on both, and ``run --compare old:new``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeServer, run_cli, suite_yaml, write

YES = [{"text": "Hoy hasta las 18:00."}]
NO = [{"text": "No lo sé."}]


def suite(tmp_path: Path, url: str) -> None:
    targets = {n: {"kind": "openai", "base_url": url, "model": f"m-{n}",
                   "retry": {"max_attempts": 1}} for n in ("old", "new")}
    write(tmp_path / "scenarist.yaml", suite_yaml(url, targets=targets,
                                                  defaults={"target": "old"}))
    for name, runs, min_pass in (("good", 5, 4), ("breaks", 10, 8), ("flaky", 5, 4)):
        write(tmp_path / f"{name}.yaml", f"""
            given: {{at: "2026-09-29T10:00:00-03:00"}}
            when: "{name}"
            then: [{{contains: "18:00"}}]
            runs: {runs}
            min_pass: {min_pass}
            """)


def script(breaks_on: str | None) -> dict[str, Any]:
    """Every scenario passes, but: on the target whose model is ``breaks_on``, 'breaks'
    never passes and 'flaky' passes 3 of 5 (seeds 1 and 2 fail)."""
    rules: list[dict[str, Any]] = [{"match": "good", "replies": YES}]
    if breaks_on:
        rules += [{"match": "breaks", "match_any": breaks_on, "replies": NO},
                  {"match": "flaky", "match_any": breaks_on, "replies": YES,
                   "by_seed": {"1": NO, "2": NO}}]
    rules += [{"match": "breaks", "replies": YES}, {"match": "flaky", "replies": YES}]
    return {"rules": rules}


def runs_in(parent: Path) -> list[Path]:
    return sorted(parent.iterdir())


def test_run_against_a_baseline_keeps_the_comparison_and_can_fail_on_a_regression(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    suite(tmp_path, server.url)
    server.script(script(None))
    first = run_cli("run", "--no-early-stop", cwd=tmp_path)
    assert first.exit_code == 0, first.output
    (base,) = runs_in(tmp_path / "runs")
    server.script(script("m-old"))
    second = run_cli("run", "--no-early-stop", "--baseline", str(base), "--fail-on-regression",
                     cwd=tmp_path)
    assert second.exit_code == 1
    new = runs_in(tmp_path / "runs")[-1]
    summary = json.loads((new / "summary.json").read_text())
    kept = summary["baseline"]
    assert kept["kind"] == "baseline"
    assert (kept["before"], kept["after"]) == (base.name, new.name)
    assert kept["counts"] == {"regressed": 1, "improved": 0, "inconclusive": 1, "new": 0,
                              "removed": 0, "unchanged": 1}
    breaks = next(c for c in kept["changes"] if c["scenario"] == "breaks")
    assert breaks["status"] == "regressed"
    assert breaks["before"] == {"verdict": "pass", "passes": 10, "decided": 10,
                                "pass_rate": 1.0}
    assert breaks["delta"] == -1.0
    assert breaks["ci_low"] == -1.0
    assert breaks["ci_high"] == pytest.approx(-0.6075, abs=1e-4)
    assert breaks["note"] == "passed before, fails now: −100 pts (95% CI −100 to −61)"
    assert f"Against {base.name}: 1 regressed, 1 inconclusive, 1 unchanged" in second.output
    # a report made again keeps the comparison summary.json kept
    again = run_cli("report", str(new), cwd=tmp_path)
    assert again.exit_code == 0, again.output
    assert json.loads((new / "summary.json").read_text())["baseline"] == kept
    assert 'id="baseline"' in (new / "report.html").read_text()


def test_diff_of_two_run_folders(tmp_path: Path, server: FakeServer,
                                 cli_env: dict[str, str]) -> None:
    suite(tmp_path, server.url)
    server.script(script(None))
    assert run_cli("run", "--no-early-stop", cwd=tmp_path).exit_code == 0
    server.script(script("m-old"))
    assert run_cli("run", "--no-early-stop", cwd=tmp_path).exit_code == 1
    base, new = runs_in(tmp_path / "runs")
    plain = run_cli("diff", str(base), str(new), cwd=tmp_path)
    assert plain.exit_code == 0
    assert plain.output.splitlines() == [
        "breaks  old  10/10 100% (72–100%) → 0/10 0% (0–28%)     ▼ regressed −100 pts (95% CI "
        "−100 to −61)",
        "flaky   old    5/5 100% (57–100%) → 3/5 60% (23–88%)    ? inconclusive −40 pts (95% "
        "CI −77 to +12)",
        "    a change from 100% to 60% needs about 9 decided runs on each side to be seen "
        "(this comparison had 5 and 5)",
        "good    old    5/5 100% (57–100%) → 5/5 100% (57–100%)  = unchanged 0 pts (95% CI "
        "−43 to +43)",
        "",
        f"{new.name} against {base.name}: 1 regressed, 1 inconclusive, 1 unchanged",
    ]
    quiet = run_cli("diff", "-q", str(base), str(new), cwd=tmp_path)
    assert not any(line.startswith("good") for line in quiet.output.splitlines())
    markdown = run_cli("diff", str(base), str(new), "--format", "markdown", cwd=tmp_path)
    assert markdown.output.endswith(
        "\nChanges the interval cannot yet tell from chance:\n- `flaky` on `old`: a change "
        "from 100% to 60% needs about 9 decided runs on each side to be seen (this comparison "
        "had 5 and 5)\n")
    failing = run_cli("diff", str(base), str(new), "--fail-on-regression", cwd=tmp_path)
    assert failing.exit_code == 1
    fine = run_cli("diff", str(new), str(new / "summary.json"), "--fail-on-regression",
                   cwd=tmp_path)
    assert fine.exit_code == 0
    assert fine.output.splitlines()[-1] == (f"{new.name} against {new.name}: 3 unchanged")
    as_json = json.loads(run_cli("diff", str(base), str(new), "--format", "json",
                                 cwd=tmp_path).output)
    assert {c["scenario"]: c["status"] for c in as_json["changes"]} == {
        "breaks": "regressed", "flaky": "inconclusive", "good": "unchanged"}
    md = run_cli("diff", str(base), str(new), "--format", "markdown", cwd=tmp_path).output
    assert md.splitlines()[:7] == [
        "## Scenarist diff: 1 regression", "",
        f"`{new.name}` against `{base.name}`: 1 regressed · 1 unchanged · 1 inconclusive", "",
        "| Change | Scenario | Target | Before | Now | Delta (95% CI) |",
        "|:--|:--|:--|:--|:--|:--|",
        "| 🔻 regressed | `breaks` | `old` | 10/10 100% (72–100%) | 0/10 0% (0–28%) | "
        "−100 pts (95% CI −100 to −61) |"]


def row(scenario: str, passes: int, decided: int, verdict: str, target: str = "t"
        ) -> dict[str, Any]:
    return {"scenario": scenario, "target": target, "passes": passes, "decided": decided,
            "verdict": verdict}


def summary_file(path: Path, run_id: str, *rows: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"schema_version": 1, "run_id": run_id, "scenarios": list(rows)}))
    return path


def test_diff_classifies_every_change(tmp_path: Path, cli_env: dict[str, str]) -> None:
    base = summary_file(tmp_path / "base.json", "base",
                        row("regressed", 30, 30, "pass"), row("improved", 0, 30, "fail"),
                        row("flipped", 5, 5, "pass"), row("no-verdict", 0, 0, "inconclusive"),
                        row("unchanged", 9, 10, "pass"), row("removed", 5, 5, "pass"))
    new = summary_file(tmp_path / "new.json", "new",
                       row("regressed", 2, 30, "fail"), row("improved", 30, 30, "pass"),
                       row("flipped", 3, 5, "fail"), row("no-verdict", 5, 5, "pass"),
                       row("unchanged", 10, 10, "pass"), row("new", 5, 5, "pass"))
    out = run_cli("diff", str(base), str(new), "--format", "json", cwd=tmp_path)
    assert out.exit_code == 0
    data = json.loads(out.output)
    got = {c["scenario"]: (c["status"], c["note"]) for c in data["changes"]}
    assert got == {
        "regressed": ("regressed", "passed before, fails now: −93 pts (95% CI −98 to −75)"),
        "improved": ("improved", "failed before, passes now: +100 pts (95% CI +84 to +100)"),
        "flipped": ("inconclusive", "passed before, fails now, but the difference may be "
                                    "chance: −40 pts (95% CI −77 to +12)"),
        "no-verdict": ("inconclusive", "no verdict in the baseline; no difference can be "
                                       "computed"),
        "unchanged": ("unchanged", "passed before and now; +10 pts (95% CI −19 to +40)"),
        "new": ("new", "not in the baseline"),
        "removed": ("removed", "not in this run"),
    }
    assert data["counts"] == {"regressed": 1, "improved": 1, "inconclusive": 2, "new": 1,
                              "removed": 1, "unchanged": 1}
    failing = run_cli("diff", str(base), str(new), "--fail-on-regression", cwd=tmp_path)
    assert failing.exit_code == 1
    assert failing.output.splitlines()[-1] == ("new against base: 1 regressed, 1 improved, "
                                               "2 inconclusive, 1 new, 1 removed, 1 unchanged")


def test_diff_refuses_what_is_not_a_run(tmp_path: Path, cli_env: dict[str, str]) -> None:
    (tmp_path / "empty").mkdir()
    ok = summary_file(tmp_path / "ok.json", "x", row("s", 1, 1, "pass"))
    out = run_cli("diff", str(tmp_path / "empty"), str(ok), cwd=tmp_path)
    assert out.exit_code == 2
    assert out.output == (f"error: {tmp_path / 'empty' / 'plan.json'} does not exist; is "
                          f"{tmp_path / 'empty'} a run folder?\n")
    (tmp_path / "list.json").write_text('{"schema_version": 1, "rows": []}')
    out = run_cli("diff", str(ok), str(tmp_path / "list.json"), cwd=tmp_path)
    assert out.exit_code == 2
    assert out.output == (f"error: {tmp_path / 'list.json'} is not a run summary (no "
                          "'scenarios' list)\n")


def test_target_against_target_in_one_run(tmp_path: Path, server: FakeServer,
                                          cli_env: dict[str, str]) -> None:
    suite(tmp_path, server.url)
    server.script(script("m-new"))
    out = run_cli("run", "-t", "old", "-t", "new", "--compare", "old:new", "--no-early-stop",
                  cwd=tmp_path)
    assert out.exit_code == 1  # breaks and flaky fail on new
    lines = out.output.splitlines()
    at = lines.index("new against old:")
    assert lines[at + 1:at + 6] == [
        "  scenario  old                   new                 change",
        "  breaks    10/10 100% (72–100%)  0/10 0% (0–28%)     ▼ regressed −100 pts (95% CI "
        "−100 to −61)",
        "  flaky     5/5 100% (57–100%)    3/5 60% (23–88%)    ? inconclusive −40 pts (95% CI "
        "−77 to +12)",
        "  good      5/5 100% (57–100%)    5/5 100% (57–100%)  = unchanged 0 pts (95% CI −43 "
        "to +43)",
        "  1 regressed, 1 inconclusive, 1 unchanged"]
    (run_dir,) = runs_in(tmp_path / "runs")
    summary = json.loads((run_dir / "summary.json").read_text())
    (pair,) = summary["compare"]
    assert (pair["kind"], pair["before"], pair["after"]) == ("targets", "old", "new")
    breaks = next(c for c in pair["changes"] if c["scenario"] == "breaks")
    assert (breaks["target_before"], breaks["target"], breaks["status"]) == ("old", "new",
                                                                           "regressed")
    assert breaks["note"] == "passed on old, fails on new: −100 pts (95% CI −100 to −61)"
    md = (run_dir / "summary.md").read_text().splitlines()
    at = md.index("### `new` against `old`")
    assert md[at + 2:at + 6] == [
        "1 regressed · 1 unchanged · 1 inconclusive", "",
        "| Scenario | `old` | `new` | Change (95% CI) |", "|:--|:--|:--|:--|"]
    assert md[at + 6] == ("| `breaks` | 10/10 100% (72–100%) | 0/10 0% (0–28%) | 🔻 regressed "
                          "−100 pts (95% CI −100 to −61) |")
    html = (run_dir / "report.html").read_text()
    assert '<section class="pair" aria-labelledby="h-pair-1" id="compare-1">' in html
    assert "<code>new</code> against <code>old</code>" in html
    assert json.loads((run_dir / "run.json").read_text())["compare"] == [["old", "new"]]


def test_the_suite_can_say_which_targets_to_compare(tmp_path: Path, server: FakeServer,
                                                     cli_env: dict[str, str]) -> None:
    suite(tmp_path, server.url)
    text = (tmp_path / "scenarist.yaml").read_text()
    data = json.loads(text)
    data["compare"] = "old:new"
    (tmp_path / "scenarist.yaml").write_text(json.dumps(data))
    server.script(script(None))
    out = run_cli("run", "-t", "old", "-t", "new", "--fail-on-regression", cwd=tmp_path)
    assert out.exit_code == 0, out.output
    assert "new against old:" in out.output
    only_old = run_cli("run", cwd=tmp_path)  # one of the two: nothing to compare
    assert only_old.exit_code == 0
    assert "against old" not in only_old.output


def test_a_regression_between_targets_exits_1(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    # a regression is a failed scenario too: the run exits 1 with or without the flag
    suite(tmp_path, server.url)
    write(tmp_path / "breaks.yaml", """
        given: {at: "2026-09-29T10:00:00-03:00"}
        when: "breaks"
        then: [{contains: "18:00"}]
        runs: 10
        min_pass: 8
        """)
    (tmp_path / "flaky.yaml").unlink()
    server.script(script("m-new"))
    out = run_cli("run", "-t", "old", "-t", "new", "--compare", "old:new", cwd=tmp_path)
    assert out.exit_code == 1
    again = run_cli("run", "-t", "old", "-t", "new", "--compare", "old:new",
                    "--fail-on-regression", cwd=tmp_path)
    assert again.exit_code == 1


@pytest.mark.parametrize(("args", "message"), [
    (["--compare", "old"], "Error: Invalid value for '--compare': 'old' is not OLD:NEW, two "
     "different target names around a colon (for example --compare v1:v2)"),
    (["--compare", "old:old"], "Error: Invalid value for '--compare': 'old:old' is not "
     "OLD:NEW, two different target names around a colon (for example --compare v1:v2)"),
])
def test_compare_needs_two_targets(tmp_path: Path, server: FakeServer, cli_env: dict[str, str],
                                   args: list[str], message: str) -> None:
    suite(tmp_path, server.url)
    out = run_cli("run", *args, cwd=tmp_path)
    assert out.exit_code == 2
    assert out.output.splitlines()[-1] == message


def test_compare_names_targets_of_the_run(tmp_path: Path, server: FakeServer,
                                          cli_env: dict[str, str]) -> None:
    suite(tmp_path, server.url)
    out = run_cli("run", "--compare", "old:new", cwd=tmp_path)
    assert out.exit_code == 2
    assert out.output == ("error E206 --compare old:new: 'new' is not a target of this run\n"
                          "  hint: run it too: --target old --target new --compare old:new\n")
