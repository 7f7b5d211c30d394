"""What docs/guide.md has the reader write, read back from the guide itself.

The guide is a path: ``scenarist init pharmacy``, then files the reader writes or edits.
Each YAML block of the guide is one of:

* a whole file, announced by ``<!-- file: pharmacy/NAME.yaml -->`` on the line before it;
* lines to add at the end of a file (the tools section of ``scenarist.yaml``), announced by
  ``<!-- add to: pharmacy/scenarist.yaml -->``;
* an example on its own (no comment): a scenario, or part of one (``runs:`` and
  ``min_pass:``, a ``then:`` list), which the tests lint inside the example scenario.

:func:`guide_suite` applies the files and additions, in the guide's order, to what
``scenarist init`` writes, and gives the suite the guide ends with. The tests lint every
block and run that suite against the recorded example agent;
``python -m dsl._buildtools.initcassette`` records the example agent's answers to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..init import init_suite

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide.md"
SUITE_DIR = "pharmacy"

_BLOCK = re.compile(r"(?:<!-- (file|add to): ([^ ]+) -->\n)?```yaml\n(.*?)```", re.S)


@dataclass(frozen=True, slots=True)
class Block:
    kind: str  # "file", "add to" or "example"
    path: str  # for file and add to: the path the guide names (pharmacy/...)
    text: str
    line: int  # where the block starts in the guide


def yaml_blocks(text: str) -> list[Block]:
    out = []
    for m in _BLOCK.finditer(text):
        kind = m.group(1) or "example"
        out.append(Block(kind, m.group(2) or "", m.group(3), text.count("\n", 0, m.start()) + 1))
    return out


def guide_suite(folder: Path, text: str | None = None) -> list[Path]:
    """Write into ``folder`` the suite the guide ends with: what ``scenarist init`` writes
    (with the recorded example agent), then the guide's files and additions. Returns the
    scenario files, in the guide's order."""
    init_suite(folder)
    written: list[Path] = [folder / "refill_no_refills_left.yaml"]
    for b in yaml_blocks(GUIDE.read_text("utf-8") if text is None else text):
        if b.kind == "example":
            continue
        rel = Path(b.path).relative_to(SUITE_DIR)
        path = folder / rel
        if b.kind == "file":
            path.write_text(b.text, "utf-8")
            if path.name != "scenarist.yaml" and path not in written:
                written.append(path)
        else:
            path.write_text(path.read_text("utf-8").rstrip("\n") + "\n" + b.text, "utf-8")
    return written
