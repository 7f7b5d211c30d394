"""The history's values as JSON (``runs list --json``, ``runs show --json``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from .store import RunEntry


def run_json(entry: RunEntry) -> dict[str, Any]:
    data = dataclasses.asdict(entry)
    data["targets"] = [dataclasses.asdict(t) for t in entry.targets]
    data["results"] = [dataclasses.asdict(r) for r in entry.results]
    return data
