"""The history's values as JSON (``runs list --json``, ``runs show --json``)."""

from __future__ import annotations

from typing import Any

import msgspec

from .store import RunEntry


def run_json(entry: RunEntry) -> dict[str, Any]:
    data = msgspec.structs.asdict(entry)
    data["targets"] = [msgspec.structs.asdict(t) for t in entry.targets]
    data["results"] = [msgspec.structs.asdict(r) for r in entry.results]
    return data
