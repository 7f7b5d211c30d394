"""Files that ship with the package: ``schemas/`` and ``grammar/``.

In a wheel they live inside the package (``dsl/schemas``, ``dsl/grammar``, see
pyproject.toml); in a source checkout they are the top-level folders. Either way this is the
one place that knows.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

_PKG = Path(__file__).resolve().parent.parent  # dsl/


def resource_path(folder: str, name: str) -> Path:
    for base in (_PKG / folder, _PKG.parent / folder):
        p = base / name
        if p.is_file():
            return p
    raise FileNotFoundError(f"{folder}/{name} is missing from the Scenarist installation")


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resource_path("schemas", name).read_text("utf-8"))
    return data


def read_text(folder: str, name: str) -> str:
    return resource_path(folder, name).read_text("utf-8")
