"""Where a suite's ``scenarist.yaml`` is: in a folder or the nearest of its parents. Kept
apart from the suite's reader (dsl/compiler/suite.py, which brings the expression compiler
with it) so that a command that only asks where the suite is — which history a run
folder's commands use — pays for nothing else."""

from __future__ import annotations

from pathlib import Path

SUITE_FILE = "scenarist.yaml"


def find_suite_file(start: Path) -> Path | None:
    """The ``scenarist.yaml`` of ``start`` (a folder or a file) or of its nearest parent
    that has one; None when none has."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for d in (here, *here.parents):
        candidate = d / SUITE_FILE
        if candidate.is_file():
            return candidate
    return None
