"""docs/architecture.md's table of layers, drawn from the contract that ``lint-imports``
checks (``[tool.importlinter]`` in pyproject.toml) and from each package's docstring, so
that the picture engineers read is the rule the tool holds. ``python -m
dsl._buildtools.docsgen`` rewrites it; ``tests/e2e/test_imports.py`` fails when it drifts.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LAYERS_START = ("<!-- layers:start (generated from [tool.importlinter] in pyproject.toml by "
                "python -m dsl._buildtools.docsgen; do not edit) -->")
LAYERS_END = "<!-- layers:end -->"


def contracts(root: Path = ROOT) -> list[dict[str, Any]]:
    """The import-linter contracts of pyproject.toml, in order."""
    data = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
    found: list[dict[str, Any]] = data["tool"]["importlinter"]["contracts"]
    return found


def layers(root: Path = ROOT) -> list[tuple[list[str], bool]]:
    """The layers contract's layers, highest first: (the packages of one layer, whether
    they are independent of each other)."""
    (contract,) = [c for c in contracts(root) if c["type"] == "layers"]
    out = []
    for layer in contract["layers"]:
        independent = "|" in layer
        out.append(([p.strip() for p in re.split(r"[|:]", layer)], independent))
    return out


def _where(name: str, root: Path) -> Path:
    package = root / "dsl" / name
    return package / "__init__.py" if package.is_dir() else root / "dsl" / f"{name}.py"


def _summary(name: str, root: Path) -> str:
    """The first sentence of a package's (or a spine module's) docstring."""
    doc = ast.get_docstring(ast.parse(_where(name, root).read_text("utf-8"))) or ""
    text = " ".join(doc.split())
    first = re.split(r"(?<=\.)\s", text, maxsplit=1)[0].split(" — ")[0]
    first = re.sub(r"^[A-Z][\w ]{0,20}: (?=[a-z`])", "", first)  # "Clients: how…" → "how…"
    first = re.sub(r":\w+:`~?([\w.]+)`", r"`\1`", first).replace("``", "`")
    return (first[:1].upper() + first[1:]).rstrip(".:").replace("|", "\\|")


def _shown(name: str, root: Path) -> str:
    return f"`dsl/{name}/`" if (root / "dsl" / name).is_dir() else f"`dsl/{name}.py`"


def layers_markdown(root: Path = ROOT) -> str:
    lines = [LAYERS_START, "",
             "| Layer | Packages | What they are |",
             "| ---: | --- | --- |"]
    for number, (names, independent) in enumerate(layers(root), 1):
        joint = " \\| " if independent else " : "
        shown = joint.join(_shown(n, root) for n in names)
        said = "; ".join(f"{_shown(n, root)}: {_summary(n, root)}" if len(names) > 1
                         else _summary(n, root) for n in names)
        lines.append(f"| {number} | {shown} | {said} |")
    lines += ["", "Beside the layers, the contract forbids:", ""]
    for c in contracts(root):
        if c["type"] == "forbidden":
            sources = ", ".join(f"`{m}`" for m in c["source_modules"])
            if len(c["source_modules"]) > 8:
                sources = f"{len(c['source_modules'])} packages"
            banned = ", ".join(f"`{m}`" for m in c["forbidden_modules"])
            lines.append(f"- *{c['name']}*: {sources} never import {banned}.")
    return "\n".join([*lines, "", LAYERS_END])


def update_architecture(text: str, root: Path = ROOT) -> str:
    """docs/architecture.md with its generated table of layers replaced."""
    start = text.index(LAYERS_START)
    end = text.index(LAYERS_END) + len(LAYERS_END)
    return text[:start] + layers_markdown(root) + text[end:]
