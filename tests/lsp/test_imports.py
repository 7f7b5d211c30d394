"""pygls and lsprotocol are imported only when ``scenarist lsp`` starts: every other
command pays nothing for the language server (counted in a fresh interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

SERVER_ONLY = ("pygls", "lsprotocol", "cattrs", "dsl.lsp")

PROBE = """
import json, sys
from dsl.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("MODULES " + json.dumps(sorted(sys.modules)))
"""


def modules_after(*args: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=120)
    line = next((x for x in r.stdout.splitlines() if x.startswith("MODULES ")), None)
    assert line is not None, r.stdout + r.stderr
    found: list[str] = json.loads(line.removeprefix("MODULES "))
    return found


@pytest.mark.parametrize("args", [
    ("--help",),
    ("lint", "scenarios"),
    ("checks",),
    ("plan", "scenarios"),
])
def test_other_commands_do_not_import_the_language_server(args: tuple[str, ...]) -> None:
    loaded = modules_after(*args)
    assert "dsl.cli.editor" in loaded  # the command is registered (its module is small)
    assert [m for m in loaded if m.split(".")[0] in SERVER_ONLY or m.startswith("dsl.lsp")
            ] == []

