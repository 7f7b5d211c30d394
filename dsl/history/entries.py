"""A run folder as the history keeps it, and the git commit a run was made at."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .store import ResultEntry, RunEntry, TargetEntry

GIT_TIMEOUT_S = 5
# In CI the checkout is often a detached HEAD: the branch is in the CI's own variables.
BRANCH_ENV = ("GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BRANCH_NAME")


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                             timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    value = out.stdout.strip()
    return value if out.returncode == 0 and value else None


def git_info(root: Path, env: Mapping[str, str] | None = None) -> dict[str, str | None] | None:
    """The commit and branch of the repository that holds ``root`` (None outside one)."""
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return None
    branch = _git(root, "rev-parse", "--abbrev-ref", "HEAD")
    if branch in (None, "HEAD"):
        env = os.environ if env is None else env
        branch = next((env[k] for k in BRANCH_ENV if env.get(k)), None)
    dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "branch": branch, "dirty": "yes" if dirty else None}


def _what(target: Mapping[str, Any]) -> str | None:
    value = (target.get("model") or target.get("cassette") or target.get("entry"))
    return None if value is None else str(value)


def entry_from_run(run_dir: Path, summary: Mapping[str, Any],
                   run: Mapping[str, Any] | None) -> RunEntry:
    """The history's entry of a run: its summary's totals and rows, and what run.json
    says (the time, the git commit, whether it is a recheck)."""
    info = run or {}
    git = info.get("git") or {}
    t = summary["totals"]
    results = tuple(
        ResultEntry(r["scenario"], r["target"], r["verdict"], r["planned"], r["runs"],
                    r["decided"], r["passes"], r["fails"], r["unsure"], r["errors"],
                    r["min_pass"], r["pass_rate"], r["ci_low"], r["ci_high"])
        for r in summary["scenarios"])
    targets = tuple(TargetEntry(str(x["name"]), x.get("kind"), _what(x))
                    for x in summary.get("targets") or ())
    return RunEntry(
        run_id=str(summary.get("run_id") or info.get("run_id") or run_dir.name),
        started_at=summary.get("started_at") or info.get("started_at"),
        finished_at=summary.get("finished_at") or info.get("finished_at"),
        suite=summary.get("suite") or info.get("suite"),
        git_commit=git.get("commit"), git_branch=git.get("branch"),
        run_dir=str(run_dir.resolve()), scenarios=t["scenarios"], passed=t["passed"],
        failed=t["failed"], inconclusive=t["inconclusive"], attempts=t["attempts"],
        pass_rate=t["pass_rate"], interrupted=bool(summary.get("interrupted")),
        targets=targets, results=results, recheck_of=info.get("recheck_of"))
