"""Issue 22 item 4: a URL with ``user:password@``. Lint refuses credentials in any URL (a
target's base_url, a kind: http url, the judge's target) with E234, saying to use
api_key_env; init refuses them too; and every URL Scenarist prints or writes has its
userinfo removed (dsl.errors.without_userinfo, the one helper)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsl.errors import EndpointError, without_userinfo
from tests.conftest import HOURS, REPO, write

PASSWORD = "pw-Zk81xq"


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "dsl", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=60)


def _suite(root: Path, targets: dict[str, object], **extra: object) -> None:
    write(root / "scenarist.yaml", json.dumps({"targets": targets, **extra}, indent=2))
    write(root / "hours.yaml", HOURS.replace("  tools: [list_business_hours, set_business_hours]\n",
                                             "").replace("  - calls: list_business_hours\n", ""))


OPENAI = {"kind": "openai", "base_url": f"http://clinic:{PASSWORD}@127.0.0.1:9/v1",
          "model": "m"}
HTTP = {"kind": "http", "url": f"https://bot:{PASSWORD}@agent.example/chat",
        "body": {"message": "{{ message }}"}, "answer": "reply"}


@pytest.mark.parametrize(("targets", "extra", "said"), [
    ({"local": OPENAI}, {}, "the base_url of the target 'local'"),
    ({"agent": HTTP}, {}, "the url of the target 'agent'"),
    ({"plain": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
      "judge": OPENAI}, {"judge": {"target": "judge"}, "defaults": {"target": "plain"}},
     "the base_url of the target 'judge'"),
])
def test_lint_refuses_credentials_in_any_url(tmp_path: Path, targets: dict[str, object],
                                             extra: dict[str, object], said: str) -> None:
    _suite(tmp_path, targets, **extra)
    lines = (tmp_path / "scenarist.yaml").read_text().splitlines()
    (line,) = (n for n, text in enumerate(lines, 1) if PASSWORD in text)
    col = lines[line - 1].index('"http') + 1
    r = _cli(tmp_path, "lint")
    assert r.returncode == 1, r.stdout
    assert PASSWORD not in r.stdout + r.stderr
    assert (f"scenarist.yaml:{line}:{col}: error E234 {said} holds credentials "
            "(user:password@ before the host); Scenarist never keeps a URL's credentials\n"
            ) in r.stdout, r.stdout
    assert ("hint: remove them from the URL; put the key in an environment variable and "
            "name it with api_key_env: VARIABLE (it is sent as Authorization: Bearer)"
            ) in r.stdout
    assert ":***@" in r.stdout  # the source line is shown, its password masked


def test_run_refuses_them_before_anything_is_written(tmp_path: Path) -> None:
    _suite(tmp_path, {"local": OPENAI})
    r = _cli(tmp_path, "run")
    assert r.returncode == 2
    assert "E234" in r.stdout + r.stderr
    assert PASSWORD not in r.stdout + r.stderr
    assert not (tmp_path / "runs").exists()


def test_init_refuses_them(tmp_path: Path) -> None:
    r = _cli(tmp_path, "init", "suite", "--base-url", f"http://me:{PASSWORD}@127.0.0.1:9/v1",
             "--model", "m")
    assert r.returncode == 2
    assert PASSWORD not in r.stdout + r.stderr
    assert ("Error: --base-url http://127.0.0.1:9/v1: the URL holds credentials "
            "(user:password@ before the host), which Scenarist never writes into a file; "
            "remove them, put the key in an environment variable and name it with "
            "--api-key-env NAME") in r.stderr
    assert not (tmp_path / "suite").exists()


@pytest.mark.parametrize(("url", "shown"), [
    ("http://u:p@host:8080/v1", "http://host:8080/v1"),
    ("https://token@host/v1?x=1#f", "https://host/v1?x=1#f"),
    ("http://a:b@c@host/v1", "http://host/v1"),  # the last @ ends the userinfo
    ("http://host/v1/user@example", "http://host/v1/user@example"),  # an @ in the path
    ("http://host/v1", "http://host/v1"),
    ("not a url", "not a url"),
])
def test_the_one_helper_removes_the_userinfo(url: str, shown: str) -> None:
    assert without_userinfo(url) == shown


def test_what_a_run_writes_of_a_target_and_an_endpoint_s_errors_hold_no_userinfo(
        tmp_path: Path) -> None:
    """Past lint (a target made in code): plan.json's and run.json's target, the terminal's
    description of it, and the endpoint's error in results.jsonl."""
    from dsl.clients.open import open_model
    from dsl.errors import Span
    from dsl.model import Target
    from dsl.settings import OpenAISettings, Retry
    from dsl.targets.kinds import describe, target_json

    settings = OpenAISettings(model="m", base_url=f"http://u:{PASSWORD}@127.0.0.1:9/v1",
                              retry=Retry(max_attempts=1, backoff_ms=1), timeout_ms=2000)
    target = Target("local", "openai", Span("scenarist.yaml", 1, 1), settings)
    assert target_json(target)["base_url"] == "http://127.0.0.1:9/v1"
    assert describe(target) == "m at http://127.0.0.1:9/v1"
    model = open_model(target)

    async def ask() -> str:
        try:
            await model.complete({"model": "m", "messages": [{"role": "user", "content": "x"}]})
        except EndpointError as exc:
            return exc.message
        finally:
            await model.aclose()
        raise AssertionError("port 9 answered")

    said = asyncio.run(ask())
    assert "http://127.0.0.1:9/v1" in said
    assert PASSWORD not in said
