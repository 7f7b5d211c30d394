"""The pre-commit hook, for real: a new git repository whose .pre-commit-config.yaml points
at this repository (its path and current commit) installs the ``scenarist-lint`` hook the
way a user's does (a virtualenv with the package, from .pre-commit-hooks.yaml); a commit
of a good scenario passes, a commit of a bad one is refused with the diagnostic.

The hook runs the code of the current *commit*, so commit before running this test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

GOOD = """\
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours]
when: ¿Hasta qué hora atienden hoy?
then:
  - calls: list_business_hours
  - contains: "18:00"
"""
BAD = GOOD.replace("  - contains:", "  - contians:")


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, check=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    pytest.importorskip("pre_commit")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    head = _git("rev-parse", "HEAD", cwd=REPO)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    work = tmp_path / "repo"
    (work / "scenarios").mkdir(parents=True)
    assert _git("init", "-q", cwd=work).returncode == 0
    _git("config", "user.email", "author@example.com", cwd=work)
    _git("config", "user.name", "An Author", cwd=work)
    (work / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {REPO}\n"
        f"    rev: {head.stdout.strip()}\n"
        "    hooks:\n"
        "      - id: scenarist-lint\n"
        "        files: ^scenarios/\n", "utf-8")
    shutil.copy(REPO / "tests" / "cases" / "scenarist.yaml", work / "scenarios")
    return work


def test_hook_passes_a_good_file_and_refuses_a_bad_one(repo: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache"),
           "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)  # the hook runs from its own installed environment
    install = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo,
                             env=env, capture_output=True, text=True, timeout=120)
    assert install.returncode == 0, install.stdout + install.stderr

    (repo / "scenarios" / "hours.yaml").write_text(GOOD, "utf-8")
    _git("add", "-A", cwd=repo)
    good = subprocess.run(["git", "commit", "-qm", "A good scenario"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "scenarist lint" in good.stdout + good.stderr

    (repo / "scenarios" / "typo.yaml").write_text(BAD, "utf-8")
    _git("add", "-A", cwd=repo)
    bad = subprocess.run(["git", "commit", "-qm", "A scenario with a typo"], cwd=repo,
                         env=env, capture_output=True, text=True, timeout=900)
    out = bad.stdout + bad.stderr
    assert bad.returncode != 0, out
    assert "scenarios/typo.yaml:7:5: error S101 unknown check 'contians'; did you mean " \
           "'contains'?" in out
    assert "  7 |   - contians: \"18:00\"" in out
    assert "Traceback" not in out
    log = _git("log", "--oneline", cwd=repo).stdout
    assert "A good scenario" in log
    assert "typo" not in log
