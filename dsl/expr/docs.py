"""Keeps docs/expressions.md's function reference identical to the library.

    python -m dsl.expr.docs [docs/expressions.md]

rewrites the part between the two markers from ``functions.reference_markdown()``; a test
fails when the file differs from what this would write.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .functions import reference_markdown

START = "<!-- functions:start (generated: python -m dsl.expr.docs) -->"
END = "<!-- functions:end -->"


def embed_reference(doc: str) -> str:
    """``doc`` with its functions section rewritten."""
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{reference_markdown()}{END}{tail}"


def main(argv: list[str]) -> int:
    target = Path(argv[0] if argv else "docs/expressions.md")
    target.write_text(embed_reference(target.read_text("utf-8")), "utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
