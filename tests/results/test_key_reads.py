"""The run folder's files are read in ``dsl/store/`` and nowhere else: what comes after the
run reads attributes of typed values (a renamed field is then an error mypy sees), not
string keys of dicts. Counted with ``ast`` so that the count cannot drift back."""

from __future__ import annotations

import ast

from tests.conftest import REPO

RESULTS = REPO / "dsl" / "results"
MAX_KEY_READS = 150  # issue 21: the modules of dsl/results/ held about 630


def key_reads(source: str) -> list[int]:
    """The lines of each string-constant key read: ``x["key"]`` (read, not assigned) and
    ``x.get("key", ...)``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)) or (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "get" and node.args
              and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            out.append(node.lineno)
    return sorted(out)


def test_the_counter_counts_reads_and_not_writes() -> None:
    source = ('a = row["verdict"]\nb = row.get("passes", 0)\nrow["x"] = 1\n'
              'c = rows[0]\nd = row.get(key)\ne = f(row)["n"]\n')
    assert key_reads(source) == [1, 2, 6]


def test_results_read_attributes_not_keys() -> None:
    counts = {f.name: len(key_reads(f.read_text("utf-8"))) for f in sorted(RESULTS.glob("*.py"))}
    assert sum(counts.values()) <= MAX_KEY_READS, counts
