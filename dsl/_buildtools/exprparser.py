"""Save the expression parser's tables beside its grammar: ``grammar/expr.lark.json``.

Building the LALR parser from ``grammar/expr.lark`` takes about 50 ms at every start of a
command that compiles an expression; loading the saved tables takes 4 ms. Run after
changing the grammar or upgrading Lark (a test says when the saved tables are stale; until
then Scenarist builds the parser, so a stale file is slower, never wrong):

    python -m dsl._buildtools.exprparser
"""

from __future__ import annotations

import json
from pathlib import Path

from dsl.expr.parse import GRAMMAR, TABLES, tables_json

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    folder = ROOT / "grammar"
    grammar = (folder / GRAMMAR).read_text("utf-8")
    out = folder / TABLES
    out.write_text(json.dumps(tables_json(grammar), separators=(",", ":")) + "\n", "utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
