"""The studio's Try shows no secret (issue 32, item 10): what the page receives of a
conversation — the intro, the agent's words, each tool call, the world's changes, the
checks — is redacted as every file is, while the agent is told the truth and the checks
see it. Against the real ``scenarist studio`` process and the scripted model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeServer, write

ORDER = "ORD-123456"
VAULT = "crm-Tok3n-77aa19"


@pytest.fixture
def vault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRM_SECRET", VAULT)  # the studio's process inherits it


def test_try_on_the_page_shows_no_secret(studio_on: Any, tmp_path: Path,
                                         server: FakeServer, vault: None) -> None:
    server.script({"rules": [{"match": "refund", "replies": [
        {"tool_calls": [{"name": "refund", "arguments": {"order": ORDER}}]},
        {"text": f"The refund of {ORDER} is on its way. ({VAULT})"}]}]})
    suite = tmp_path / "suite"
    write(suite / "scenarist.yaml", json.dumps({
        "targets": {"live": {"kind": "openai", "base_url": server.url, "model": "m",
                             "timeout_ms": 5000, "retry": {"max_attempts": 1}}},
        "defaults": {"runs": 1, "target": "live"},
        "redact": {"env": ["CRM_SECRET"], "patterns": {"order-id": r"ORD-\d{6}"}},
        "world": {"orders": [{"id": ORDER, "status": "paid"}]},
        "tools": {"refund": {
            "description": "Refund an order.",
            "input_schema": {"type": "object", "properties": {"order": {"type": "string"}},
                             "required": ["order"]},
            "action": "update", "table": "orders", "where": {"id": "{{ args.order }}"},
            "set": {"status": "refunded"}}},
    }, indent=2))
    write(suite / "refund.yaml", f"""
        given:
          at: 2026-09-29T10:00:00-03:00
          system: "The CRM token is {VAULT}."
          tools: [refund]
        when: "Please refund {ORDER}"
        then:
          - contains: "{ORDER}"
          - world: {{orders: {{{ORDER}: {{status: refunded}}}}}}
        runs: 1
        """)
    studio = studio_on(suite)
    with studio.client() as c:
        started = c.post("/api/try", json={"path": "refund.yaml"})
        assert started.status_code == 200, started.text
        talk = started.json()
        said = c.post(f"/api/try/{talk['id']}", json={"action": "say",
                                                      "text": f"Please refund {ORDER}"})
        assert said.status_code == 200, said.text
        replies = [talk, said.json()]
        while replies[-1]["waiting"] == "working":
            replies.append(c.post(f"/api/try/{talk['id']}", json={"action": "poll"}).json())
        ended = c.post(f"/api/try/{talk['id']}", json={"action": "check"}).json()
        while ended["waiting"] != "ended":
            ended = c.post(f"/api/try/{talk['id']}", json={"action": "poll"}).json()
        replies.append(ended)
    page = json.dumps(replies, ensure_ascii=False)
    assert ORDER not in page, page
    assert VAULT not in page, page
    assert "The scenario's message: Please refund [REDACTED:order-id]" in page
    assert {c["status"] for c in ended["checks"]} == {"pass"}, ended["checks"]
    assert [c["label"] for c in ended["checks"]] == [
        'contains: "[REDACTED:order-id]"',
        'world: {"orders": {"[REDACTED:order-id]": {"status": "refunded"}}}']
    # the agent was told the truth
    assert any(VAULT in json.dumps(r["body"]) for r in server.requests())
    code, out = studio.stop()
    assert code == 0
    assert ORDER not in out
    assert VAULT not in out
