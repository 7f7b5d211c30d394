"""A merge that was not given every shard (issue 32, item 14): before, it exited 0 with one
warning, and summary.json, junit.xml and summary.md never mentioned the scenarios of the
missing shard — a failing suite turned green when its shard never uploaded. Now it exits
3 unless ``--allow-missing``, and every file it writes names the scenarios not run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dsl.store import merge_runs, read_plan, read_run_info
from tests.conftest import EARLY, FakeServer, early_suite, run_cli, the_run


@pytest.fixture
def shard_one(tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> Path:
    """Shard 1/2 of always, never and odd (sorted: always and odd; never, which fails, is
    shard 2/2's), run for real; shard 2/2 never uploaded."""
    server.script(EARLY)
    early_suite(tmp_path, server.url)
    r = run_cli("run", ".", "--shard", "1/2", "--out", "shard1", "--no-early-stop",
                cwd=tmp_path)
    assert r.exit_code == 0, r.output
    return the_run(tmp_path / "shard1")


def test_a_missing_shard_exits_3_and_every_file_names_its_scenarios(
        tmp_path: Path, shard_one: Path) -> None:
    plan = json.loads((shard_one / "plan.json").read_text())
    assert plan["full_scenarios"] == ["always", "never", "odd"]
    r = run_cli("merge", str(shard_one), "--out", "merged", cwd=tmp_path)
    assert r.exit_code == 3, r.output
    lines = r.output.splitlines()
    assert ("warning: shard(s) 2/2 are missing: their scenarios were not run: never"
            in lines)
    assert ("error: the merged run has no verdict for the scenarios of the missing shards "
            "(exit 3): merge every shard's run folder, or accept the partial run with "
            "--allow-missing") in lines
    assert "MISS  never   not run: shard 2/2 is missing from the merge" in lines
    assert any(line.startswith("2/2 passed · 1 scenario not run (missing shards) · ")
               for line in lines)
    merged = the_run(tmp_path / "merged")
    sentence = "shard 2/2 is missing from the merge: its 1 scenario was not run: never"
    summary = json.loads((merged / "summary.json").read_text())
    assert summary["missing_shards"] == [{"shard": [2, 2], "scenarios": ["never"]}]
    assert {r["scenario"] for r in summary["scenarios"]} == {"always", "odd"}
    info = json.loads((merged / "run.json").read_text())
    assert info["missing_shards"] == [{"shard": [2, 2], "scenarios": ["never"]}]
    junit = ET.parse(merged / "junit.xml").getroot()
    (suite,) = [s for s in junit if s.get("name") == "not run"]
    (case,) = suite.findall("testcase")
    assert (case.get("name"), case.get("classname")) == ("never", "not run")
    skipped = case.find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "not run: shard 2/2 is missing from the merge"
    assert skipped.text == sentence
    assert (junit.get("tests"), junit.get("skipped")) == ("3", "1")
    md = (merged / "summary.md").read_text()
    assert md.startswith("## Scenarist: all 2 passed · shards missing: 2/2\n\n"
                         "⚠️ **Not run:** shard 2/2 is missing from the merge: its 1 scenario "
                         "was not run: `never`.\n")
    html = (merged / "report.html").read_text()
    assert f'<p class="notice missing-shard">Not run: {sentence}.' in html
    assert '<h3 id="not-run">Not run (1)</h3>' in html
    assert ("<tr><td><code>never</code></td><td><span class=\"badge b-skipped\">not run</span> "
            "not run: shard 2/2 is missing from the merge</td></tr>") in html
    # the report made again from the folder says the same
    again = run_cli("report", str(merged), cwd=tmp_path)
    assert again.exit_code == 0, again.output
    assert '<h3 id="not-run">Not run (1)</h3>' in (merged / "report.html").read_text()


def test_allow_missing_accepts_the_partial_run_and_still_names_what_was_not_run(
        tmp_path: Path, shard_one: Path) -> None:
    r = run_cli("merge", str(shard_one), "--out", "merged", "--allow-missing", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert "warning: shard(s) 2/2 are missing: their scenarios were not run: never" in \
        r.output.splitlines()
    assert "error:" not in r.output
    merged = the_run(tmp_path / "merged")
    summary = json.loads((merged / "summary.json").read_text())
    assert summary["missing_shards"] == [{"shard": [2, 2], "scenarios": ["never"]}]
    assert "never" in (merged / "summary.md").read_text()
    assert 'name="never" classname="not run"' in (merged / "junit.xml").read_text()


def test_a_failure_in_the_shards_that_ran_still_exits_1(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script(EARLY)
    early_suite(tmp_path, server.url)
    r = run_cli("run", ".", "--shard", "2/2", "--out", "shard2", "--no-early-stop",
                cwd=tmp_path)
    assert r.exit_code == 1  # never fails
    merged = run_cli("merge", str(the_run(tmp_path / "shard2")), "--out", "m", cwd=tmp_path)
    assert merged.exit_code == 1, merged.output
    assert ("warning: shard(s) 1/2 are missing: their scenarios were not run: always, odd"
            in merged.output.splitlines())


def test_shards_of_an_earlier_scenarist_say_their_scenarios_are_unknown(
        tmp_path: Path, shard_one: Path) -> None:
    """A shard's plan.json written before full_scenarios: which scenarios the missing shard
    holds is not known, and the files say so."""
    plan_path = shard_one / "plan.json"
    plan = json.loads(plan_path.read_text())
    del plan["full_scenarios"]
    from dsl.store.planfile import fingerprints

    plan["fingerprints"] = fingerprints(plan)
    plan_path.write_text(json.dumps(plan))
    out, missing = merge_runs([shard_one], tmp_path / "m")
    assert [(m.shard, m.scenarios) for m in missing] == [((2, 2), None)]
    assert read_run_info(out).missing_shards == missing
    assert read_plan(out).full_scenarios == ()
    r = run_cli("merge", str(shard_one), "--out", "merged", cwd=tmp_path)
    assert r.exit_code == 3
    assert ("warning: shard(s) 2/2 are missing: their scenarios were not run (which "
            "scenarios shard(s) 2/2 hold is not known: the shards were run by a Scenarist "
            "that did not keep the whole plan's scenarios)") in r.output.splitlines()
    merged = the_run(tmp_path / "merged")
    summary = json.loads((merged / "summary.json").read_text())
    assert summary["missing_shards"] == [{"shard": [2, 2], "scenarios": None}]
    assert 'name="shard 2/2" classname="not run"' in (merged / "junit.xml").read_text()
