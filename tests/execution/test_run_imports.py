"""What ``scenarist run`` imports on a plain suite (issue 27): features the run does not use
cost nothing. Counted, never timed: the modules a real run against the scripted server
leaves in ``sys.modules``, in a fresh interpreter — none of the forbidden ones, and no
more of Scenarist's own than the budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, FakeServer, plain_suite, write

# Imported by no run of a plain suite (one openai target over plain http://, one-message
# scenarios with a fake tool and plain checks; no cases, attachments, conversation,
# simulated user, judge, expression or baseline). Each is imported by the feature that
# needs it, when a run has it.
FORBIDDEN_PACKAGES = (
    # TLS/proxy endpoints only (a plain http:// run speaks HTTP/1.1 through h11 alone)
    "httpx", "httpcore", "anyio", "sniffio",
    "jsonschema", "referencing",  # words a schema's rejections; a valid suite has none
    # (jsonschema_rs is not here: every run validates its files and its calls' arguments
    # with it — dsl/source/schemacheck.py, the one engine — so a plain run imports it)
    "lark",  # the expression parser: a run with an expect: check
    "mcp", "starlette", "uvicorn", "pydantic",  # kind: http / command agents, studio
    "psycopg",  # a PostgreSQL history
    "pygls", "lsprotocol",  # scenarist lsp
    "aiohttp", "pygments", "rich",
)
FORBIDDEN_MODULES = (
    "dsl.judge", "dsl.studio", "dsl._buildtools", "dsl.pipeline.tryout",
    "dsl.pipeline.recheck", "dsl.expr", "dsl.expr.docs", "dsl.expr.sample",
    "dsl.clients.toolserver", "dsl.clients.mcpserve", "dsl.clients.ownloop",
    "dsl.clients.command", "dsl.clients.http", "dsl.clients.python",
    "dsl.compiler.lint", "dsl.lsp",
)
# Scenarist's own modules a plain run imports (91 when this was written, 2026-12,
# issue 27). A change that needs more on every run should say why here.
DSL_MODULE_BUDGET = 95

PROBE = """
import json, os, sys
from dsl.cli import main
try:
    main(["run", ".", "--out", "runs", "--quiet", "--no-early-stop"])
except SystemExit as exc:
    code = exc.code
print("MODULES " + json.dumps({"exit": code, "modules": sorted(sys.modules)}))
"""


def _plain_run_modules(tmp_path: Path, server: FakeServer) -> tuple[int, list[str]]:
    server.script({"rules": [
        {"match": "appointment", "replies": [
            {"tool_calls": [{"name": "book_appointment",
                             "arguments": {"date": "2026-10-01", "time": "10:00"}}]},
            {"text": "Booked for 1 October at 10:00."}]}]})
    plain_suite(tmp_path, server.url)  # its tools return templates: {{ args.date }}
    write(tmp_path / "book.yaml", """
        id: clinic.book
        given:
          at: 2026-09-29T10:00:00-03:00
          tools: [book_appointment]
        when: "Book me an appointment on 1 October at 10:00."
        then:
          - calls: {name: book_appointment, args: {date: "2026-10-01"}}
          - contains: Booked
          - valid_args
        runs: 2
        min_pass: 2
        """)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    line = next((x for x in r.stdout.splitlines() if x.startswith("MODULES ")), None)
    assert line is not None, r.stdout + r.stderr
    data = json.loads(line.removeprefix("MODULES "))
    assert data["exit"] == 0, r.stdout + r.stderr
    return data["exit"], data["modules"]


def test_a_plain_run_imports_no_feature_it_does_not_use(tmp_path: Path,
                                                         server: FakeServer) -> None:
    code, modules = _plain_run_modules(tmp_path, server)
    assert code == 0  # the run happened and passed: the modules are a real run's
    assert len(server.requests()) == 4
    bad = sorted(m for m in modules
                 if m.split(".")[0] in FORBIDDEN_PACKAGES
                 or any(m == f or m.startswith(f + ".") for f in FORBIDDEN_MODULES))
    assert bad == []
    assert "jsonschema_rs" in modules  # the one engine said the files were valid
    own = [m for m in modules if m == "dsl" or m.startswith("dsl.")]
    assert len(own) <= DSL_MODULE_BUDGET, own


def test_plan_imports_neither_the_history_nor_the_runner(tmp_path: Path) -> None:
    plain_suite(tmp_path, "http://127.0.0.1:9/v1")
    write(tmp_path / "a.yaml", 'given: {at: "2026-09-29T10:00:00-03:00"}\nwhen: "Hola"\n'
                                 'then: [non_empty]\n')
    probe = PROBE.replace('["run", ".", "--out", "runs", "--quiet", "--no-early-stop"]',
                          '["plan", "."]')
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    line = next((x for x in r.stdout.splitlines() if x.startswith("MODULES ")), None)
    assert line is not None, r.stdout + r.stderr
    data = json.loads(line.removeprefix("MODULES "))
    assert data["exit"] == 0, r.stdout + r.stderr
    bad = sorted(m for m in data["modules"]
                 if m.split(".")[0] in ("asyncio", "jinja2", "sqlite3", "httpx", "jsonschema",
                                        "lark", "regex")
                 or m.startswith(("dsl.history", "dsl.execution.run", "dsl.execution.loop",
                                  "dsl.results.report", "dsl.clients.openai", "dsl.expr")))
    assert bad == []
