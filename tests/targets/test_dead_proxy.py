"""A proxy of the environment that is down (issue 32, item 15): the agent service and the
model endpoint were never asked, and the record says the proxy refused — before, it said the
endpoint itself was unreachable. And a header the target gives replaces Scenarist's own of
the same name, whatever its case (never two Host headers)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, records_of, the_run, write

SCENARIO = """
given:
  at: 2026-09-29T10:00:00-03:00
when: hi
then: [non_empty]
runs: 1
min_pass: 1
"""


def _dead_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_a_dead_proxy_is_reported_as_the_proxy_not_the_agent_service(tmp_path: Path) -> None:
    write(tmp_path / "scenarist.yaml", """
targets:
  svc:
    kind: http
    url: http://agent.example:8000/chat
    body: {message: "{{ message }}", tools: "{{ mcp_url }}"}
    retry: {max_attempts: 1}
  model:
    kind: openai
    base_url: https://api.example.com/v1
    model: m
    retry: {max_attempts: 1}
""")
    write(tmp_path / "a.yaml", SCENARIO)
    port = _dead_port()
    env = {**{k: v for k, v in os.environ.items() if "proxy" not in k.lower()},
           "PYTHONPATH": str(REPO), "NO_COLOR": "1", "HTTP_PROXY": f"http://127.0.0.1:{port}",
           "https_proxy": f"http://user:s3cret@127.0.0.1:{port}"}
    p = subprocess.run([sys.executable, "-m", "dsl", "run", ".", "-t", "svc", "-t", "model"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 3, p.stdout + p.stderr
    records = {r["target"]: r for r in records_of(the_run(tmp_path / "runs"))}
    assert records["svc"]["error"]["message"] == (
        f"cannot reach the proxy http://127.0.0.1:{port} (from HTTP_PROXY), so "
        "http://agent.example:8000/chat was never asked: connection refused (is the proxy "
        "running?)")
    assert records["model"]["error"]["message"] == (
        f"cannot reach the proxy http://127.0.0.1:{port} (from https_proxy), so "
        "https://api.example.com/v1 was never asked: connection refused (is the proxy "
        "running?)")
    assert "s3cret" not in p.stdout + p.stderr
    assert "Traceback" not in p.stdout + p.stderr


def test_a_target_header_replaces_scenarists_own_whatever_its_case(tmp_path: Path) -> None:
    """The headers a request carries: ``host`` and ``user-agent`` given in lower case
    replace Scenarist's ``Host`` and ``User-Agent`` — before, both were sent (two Host
    headers)."""
    from dsl.clients.openai import OpenAIModel
    from dsl.compiler.compile import build_plan

    write(tmp_path / "scenarist.yaml", """
targets:
  fake:
    kind: openai
    base_url: http://127.0.0.1:9/v1
    model: m
    headers: {host: models.internal, user-agent: clinic-ci/1}
""")
    write(tmp_path / "a.yaml", SCENARIO)
    plan, _ = build_plan([tmp_path])
    endpoint = OpenAIModel(plan.targets[0])
    sent_headers = endpoint.transport.headers  # type: ignore[attr-defined]  (the plain pool's)
    names = [k.decode().lower() for k, _ in sent_headers]
    assert (names.count("host"), names.count("user-agent")) == (1, 1), names
    sent = {k.decode().lower(): v.decode() for k, v in sent_headers}
    assert (sent["host"], sent["user-agent"]) == ("models.internal", "clinic-ci/1")
