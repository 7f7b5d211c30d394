"""The example agents of scenarios/agents/ — a Python service on the OpenAI Agents SDK
(``kind: http``) and a TypeScript program on the MCP TypeScript SDK (``kind: command``) —
run against the scripted model server, through the example suite itself."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, FakeServer, records_of, run_cli, the_run

AGENTS = REPO / "scenarios" / "agents"
TSX = AGENTS / "typescript" / "node_modules" / ".bin" / "tsx"

# What the scripted model says: for the hours, a call and then the answer; for Saturdays,
# the change (held by Scenarist: it needs the person's confirmation), a question, and once
# the change has run (its result is in the request), the news.
SCRIPT = {"rules": [
    {"match_any": "Hours for saturday updated", "replies": [
        {"text": "Listo: desde la semana que viene los sábados está cerrado."}]},
    {"match": "hora", "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
        {"text": "Hoy atendemos hasta las 18:00."}]},
    {"match": "sábados", "replies": [
        {"tool_calls": [{"name": "set_business_hours",
                         "arguments": {"day": "saturday", "hours": "closed"}}]},
        {"text": "¿Confirmás que los sábados cerramos?"}]},
]}


def example_suite(tmp_path: Path, service_port: int | None = None) -> Path:
    root = tmp_path / "agents"
    shutil.copytree(AGENTS, root, ignore=shutil.ignore_patterns("node_modules"))
    if TSX.parent.exists():
        (root / "typescript" / "node_modules").symlink_to(TSX.parent.parent)
    if service_port is not None:
        suite = root / "scenarist.yaml"
        suite.write_text(suite.read_text().replace("127.0.0.1:8000", f"127.0.0.1:{service_port}"))
    return root


def verdicts(run_dir: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in records_of(run_dir):
        out.setdefault(r["scenario"], []).append(r["status"])
    return out


@pytest.fixture
def model(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> FakeServer:
    server.script(SCRIPT)
    monkeypatch.setenv("AGENT_MODEL_URL", server.url)
    monkeypatch.setenv("AGENT_MODEL", "fake-model")
    return server


@pytest.fixture
def service(model: FakeServer) -> Iterator[int]:
    env = {**os.environ, "AGENT_TOKEN": "example-token"}
    proc = subprocess.Popen([sys.executable, str(AGENTS / "python" / "service.py"), "--port",
                             "0"], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    yield int(proc.stdout.readline().split()[1])
    proc.terminate()
    proc.wait()


def test_the_python_agent_service(tmp_path: Path, service: int, model: FakeServer,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", "example-token")
    root = example_suite(tmp_path, service)
    result = run_cli("run", ".", "--target", "service", "--out", "runs", "--runs", "2",
                     cwd=root)
    run_dir = the_run(root / "runs")
    assert verdicts(run_dir) == {"agents.hours_today": ["pass", "pass"],
                                 "agents.change_hours": ["pass", "pass"]}, result.output
    change = next(r for r in records_of(run_dir) if r["scenario"] == "agents.change_hours")
    assert [(c["name"], c["args"], c["output"], c.get("decision")) for c in change["calls"]] \
        == [("set_business_hours", {"day": "saturday", "hours": "closed"},
             "Hours for saturday updated.", "confirmed")]
    assert change["turns"][1]["answer"] == ("Listo: desde la semana que viene los sábados "
                                            "está cerrado.")


def test_the_typescript_agent(tmp_path: Path, model: FakeServer) -> None:
    if not TSX.exists():
        if os.environ.get("SCENARIST_REQUIRE_NODE"):
            pytest.fail(f"{TSX} is missing: run npm ci in {TSX.parents[2]}")
        pytest.skip("the TypeScript example's packages are not installed (npm ci in "
                    "scenarios/agents/typescript); CI sets SCENARIST_REQUIRE_NODE=1")
    root = example_suite(tmp_path)
    result = run_cli("run", ".", "--target", "typescript", "--out", "runs", "--runs", "2",
                     cwd=root)
    run_dir = the_run(root / "runs")
    assert verdicts(run_dir) == {"agents.hours_today": ["pass", "pass"],
                                 "agents.change_hours": ["pass", "pass"]}, result.output
    hours = next(r for r in records_of(run_dir) if r["scenario"] == "agents.hours_today")
    assert hours["answer"] == "Hoy atendemos hasta las 18:00."
    assert [c["name"] for c in hours["calls"]] == ["list_business_hours"]
