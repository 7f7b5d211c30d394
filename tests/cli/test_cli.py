"""The command line: plan, targets, usage errors and their exact messages."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import HOURS, run_cli, suite_yaml, write


def two_targets(tmp_path: Path, url: str, default: str | None = None) -> None:
    targets = {"a": {"kind": "openai", "base_url": url, "model": "m1"},
               "b": {"kind": "openai", "base_url": url, "model": "m2"}}
    defaults = {"target": default} if default else {}
    write(tmp_path / "scenarist.yaml", suite_yaml(url, targets=targets, defaults=defaults))
    write(tmp_path / "hours.yaml", HOURS)


def test_checks_and_schema_commands(tmp_path: Path, cli_env: dict[str, str]) -> None:
    r = run_cli("checks", cwd=tmp_path)
    assert r.exit_code == 0
    assert "contains" in r.output
    assert "faithful" in r.output
    assert "(judge)" in r.output
    s = run_cli("schema", "--suite", cwd=tmp_path)
    assert json.loads(s.output)["title"] == "Scenarist suite (scenarist.yaml)"


def test_retry_errors_needs_resume(tmp_path: Path, cli_env: dict[str, str]) -> None:
    r = run_cli("run", "--retry-errors", cwd=tmp_path)
    assert r.exit_code == 2
    assert "--retry-errors needs --resume RUNDIR" in r.output
