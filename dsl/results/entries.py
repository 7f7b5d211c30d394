"""A run folder as the history keeps it, and the git commit a run was made at."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..history.store import ResultEntry, RunEntry, TargetEntry
from ..store.runfile import Git
from ..targets.kinds import what_it_runs

if TYPE_CHECKING:  # (the suite's reader imports the history: it never needs the store)
    from ..store.runfile import Git, RunInfo
    from ..store.summaryfile import Summary

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


def git_info(root: Path, env: Mapping[str, str] | None = None) -> Git | None:
    """The commit and branch of the repository that holds ``root`` (None outside one)."""
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return None
    branch = _git(root, "rev-parse", "--abbrev-ref", "HEAD")
    if branch in (None, "HEAD"):
        env = os.environ if env is None else env
        branch = next((env[k] for k in BRANCH_ENV if env.get(k)), None)
    dirty = _git(root, "status", "--porcelain", "--untracked-files=no")

    return Git(commit, branch, "yes" if dirty else None)


def entry_from_run(run_dir: Path, summary: Summary, run: RunInfo | None) -> RunEntry:
    """The history's entry of a run: its summary's totals and rows, and what run.json
    says (the time, the git commit, whether it is a recheck)."""
    git = run.git if run is not None else None
    t = summary.totals
    results = tuple(
        ResultEntry(r.scenario, r.target, r.verdict, r.planned, r.runs, r.decided, r.passes,
                    r.fails, r.unsure, r.errors, r.min_pass, r.pass_rate, r.ci_low, r.ci_high)
        for r in summary.scenarios)
    targets = tuple(TargetEntry(x.name, x.kind, what_it_runs(x)) for x in summary.targets)
    return RunEntry(
        run_id=summary.run_id or (run.run_id if run is not None else None) or run_dir.name,
        started_at=summary.started_at or (run.started_at if run is not None else None),
        finished_at=summary.finished_at or (run.finished_at if run is not None else None),
        suite=summary.suite or (run.suite if run is not None else None),
        git_commit=git.commit if git else None, git_branch=git.branch if git else None,
        run_dir=str(run_dir.resolve()), scenarios=t.scenarios, passed=t.passed,
        failed=t.failed, inconclusive=t.inconclusive, attempts=t.attempts,
        pass_rate=t.pass_rate, interrupted=summary.interrupted,
        targets=targets, results=results,
        recheck_of=run.recheck_of if run is not None else None)
