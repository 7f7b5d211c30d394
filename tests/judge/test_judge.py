"""The LLM judge against a scripted judge server: verdicts, doubt, retries, cache,
criteria, boundaries — and secrets that never reach the judge or any file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsl.judge import Unreadable, read_reply
from tests.conftest import (
    HOURS,
    TOOL_THEN_ANSWER,
    FakeServer,
    run_cli,
    start_fake_server,
    suite_yaml,
    write,
)


@pytest.fixture(scope="module")
def judge_server() -> Any:
    s = start_fake_server()
    yield s
    s.process.terminate()


@pytest.fixture
def jserver(judge_server: FakeServer) -> FakeServer:
    judge_server.script({"rules": []})
    return judge_server


def verdict(v: str, score: float, confidence: float, reason: str = "ok") -> dict[str, Any]:
    return {"text": json.dumps({"verdict": v, "score": score, "confidence": confidence,
                                "reason": reason})}


def judge_suite(tmp_path: Path, agent_url: str, judge_url: str, **judge: Any) -> None:
    targets = {
        "agent": {"kind": "openai", "base_url": agent_url, "model": "agent-model",
                  "retry": {"max_attempts": 1}},
        "grader": {"kind": "openai", "base_url": judge_url, "model": "judge-model",
                   "timeout_ms": 500, "retry": {"max_attempts": 1}},
    }
    write(tmp_path / "scenarist.yaml", suite_yaml(
        agent_url, targets=targets, defaults={"target": "agent"},
        judge={"target": "grader", **judge}))


def scenario(tmp_path: Path, checks: str, runs: int = 1, name: str = "hours") -> None:
    body = HOURS.split("then:")[0] + "then:\n" + checks + f"runs: {runs}\nmin_pass: 1\n"
    write(tmp_path / f"{name}.yaml", body)


def records(tmp_path: Path, out: str = "runs") -> list[dict[str, Any]]:
    (d,) = (tmp_path / out).iterdir()
    return [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]


def judge_requests(s: FakeServer) -> list[dict[str, Any]]:
    return [r["body"] for r in s.requests()]


def test_faithful_pass_and_evidence(tmp_path: Path, server: FakeServer, jserver: FakeServer,
                                    cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [
        verdict("pass", 1, 0.95, "18:00 is in the tool result for tuesday")]}]})
    judge_suite(tmp_path, server.url, jserver.url)
    scenario(tmp_path, "  - faithful\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (rec,) = records(tmp_path)
    (check,) = rec["checks"]
    assert check["status"] == "pass"
    assert check["reason"] == ("the judge found the answer faithful to the tool results: "
                               "18:00 is in the tool result for tuesday")
    ev = check["evidence"]
    assert ev["judge_model"] == "judge-model"
    assert (ev["verdict"], ev["confidence"], ev["cached"]) == ("pass", 0.95, False)
    assert '"verdict": "pass"' in ev["replies"][0]
    (q,) = judge_requests(jserver)
    prompt = q["messages"][1]["content"]
    assert "¿Hasta qué hora atendemos hoy?" in prompt          # the person's message
    assert "Hoy atendemos hasta las 18:00." in prompt           # the answer
    assert '{"monday": "09:00-18:00", "tuesday": "09:00-18:00"}' in prompt  # tool results
    assert "Tuesday 29 September 2026, 10:00 (UTC-03:00)" in prompt
    assert (q["temperature"], q["seed"], q["model"]) == (0.0, 0, "judge-model")
    assert q["response_format"]["type"] == "json_schema"
    summary = json.loads(next((tmp_path / "runs").iterdir()).joinpath("summary.json").read_text())
    assert summary["scenarios"][0]["judge"]["questions"] == 1
    assert summary["totals"]["judge_asked"] == 1


@pytest.mark.parametrize(("replies", "status", "reason"), [
    ([verdict("fail", 0, 0.9, "the answer invents 20:00")], "fail",
     "the judge found the answer not faithful to the tool results: the answer invents 20:00"),
    ([verdict("pass", 1, 0.5, "probably")], "unsure",
     "the judge was not confident enough (0.50 < 0.80): probably"),
    ([{"text": "I think it is fine."}, {"text": "Verdict: pass"},
      {"text": "```json\n{\"verdict\": \"pass\", \"score\": 1, \"confidence\": 0.9, "
               "\"reason\": \"fenced\"}\n```"}], "pass",
     "the judge found the answer faithful to the tool results: fenced"),
    ([{"text": "Sure! Here it is: {\"verdict\": \"fail\", \"confidence\": 0.99, \"reason\": "
               "\"wrapped\"} Hope this helps."}], "fail",
     "the judge found the answer not faithful to the tool results: wrapped"),
    ([{"text": "nope"}], "unsure",
     "the judge's reply could not be read after 3 tries (no JSON object in the reply)"),
])
def test_verdicts_doubt_and_unreadable_replies(
        tmp_path: Path, server: FakeServer, jserver: FakeServer, cli_env: dict[str, str],
        replies: list[dict[str, Any]], status: str, reason: str) -> None:
    server.script(TOOL_THEN_ANSWER)
    jserver.script({"rules": [{"match": "FAITHFUL", "first": replies[:-1],
                               "replies": replies[-1:]}]})
    judge_suite(tmp_path, server.url, jserver.url)
    scenario(tmp_path, "  - faithful\n")
    run_cli("run", ".", cwd=tmp_path)
    (rec,) = records(tmp_path)
    (check,) = rec["checks"]
    assert (check["status"], check["reason"]) == (status, reason)
    assert rec["status"] == status
    asked = judge_requests(jserver)
    assert len(asked) == (len(replies) if status != "unsure" or "read" not in reason else 3)
    assert [q["seed"] for q in asked] == list(range(len(asked)))  # seed + i on retries


def test_unsure_is_counted_apart_and_never_passes(tmp_path: Path, server: FakeServer,
                                                  jserver: FakeServer,
                                                  cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [verdict("pass", 1, 0.3)]}]})
    judge_suite(tmp_path, server.url, jserver.url)
    scenario(tmp_path, "  - contains: \"18:00\"\n  - faithful\n", runs=2)
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 1, r.output  # 0 of 2 passed: unsure is not a pass
    assert "2 unsure" in r.output
    (d,) = (tmp_path / "runs").iterdir()
    row = json.loads((d / "summary.json").read_text())["scenarios"][0]
    assert (row["passes"], row["unsure"], row["fails"], row["unsure_rate"]) == (0, 2, 0, 1.0)
    assert row["checks"][1]["unsure"] == 2


def test_judge_timeout_is_an_error_not_a_failure(tmp_path: Path, server: FakeServer,
                                                 jserver: FakeServer,
                                                 cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [{"hang": True}]}]})
    judge_suite(tmp_path, server.url, jserver.url)
    scenario(tmp_path, "  - faithful\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 3
    (rec,) = records(tmp_path)
    assert rec["status"] == "error"
    assert rec["error"]["kind"] == "judge"
    assert rec["error"]["message"] == (f"the judge's endpoint failed: timeout: no reply from "
                                       f"{jserver.url} within 0.5 s")
    assert not (tmp_path / ".scenarist" / "judge-cache").exists()  # errors are never cached


def test_rubric_needs_pass_and_the_score(tmp_path: Path, server: FakeServer,
                                         jserver: FakeServer, cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    jserver.script({"rules": [
        {"match": "exactly at", "replies": [verdict("pass", 0.8, 0.9, "at the boundary")]},
        {"match": "just below", "replies": [verdict("pass", 0.79, 0.9, "almost")]},
        {"match": "says fail", "replies": [verdict("fail", 0.9, 0.9, "high score, but fail")]},
    ]})
    judge_suite(tmp_path, server.url, jserver.url)
    scenario(tmp_path, "  - judge: {rubric: exactly at, pass_score: 0.8}\n"
                       "  - judge: {rubric: just below, pass_score: 0.8}\n"
                       "  - judge: {rubric: says fail, pass_score: 0.8}\n")
    run_cli("run", ".", cwd=tmp_path)
    (rec,) = records(tmp_path)
    assert [(c["status"], c["reason"]) for c in rec["checks"]] == [
        ("pass", "the judge said pass with score 0.80 (needs 0.80): at the boundary"),
        ("fail", "the judge said pass with score 0.79 (needs 0.80): almost"),
        ("fail", "the judge said fail with score 0.90 (needs 0.80): high score, but fail"),
    ]


def test_criteria_are_judged_and_reported_one_by_one(tmp_path: Path, server: FakeServer,
                                                     jserver: FakeServer,
                                                     cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    jserver.script({"rules": [
        {"match": "Is polite", "replies": [verdict("pass", 9, 0.9, "polite")]},
        {"match": "Gives the phone", "replies": [verdict("fail", 4, 0.9, "no phone")]},
        {"match": "Is brief", "replies": [verdict("pass", 7, 0.95, "brief")]},
    ]})
    judge_suite(tmp_path, server.url, jserver.url)
    scenario(tmp_path, "  - criteria: [Is polite, {label: Gives the phone, min_score: 5}, "
                       "{label: Is brief, min_score: 7}]\n")
    run_cli("run", ".", cwd=tmp_path)
    (rec,) = records(tmp_path)
    (c,) = rec["checks"]
    assert c["status"] == "fail"
    assert c["reason"] == ("2 of 3 criteria met: ✓ Is polite (9 ≥ 7); ✗ Gives the phone "
                           "(4 < 5); ✓ Is brief (7 ≥ 7)")
    assert [(i["label"], i["status"], i["score"]) for i in c["items"]] == [
        ("Is polite", "pass", 9.0), ("Gives the phone", "fail", 4.0), ("Is brief", "pass", 7.0)]
    assert len(c["evidence"]["items"]) == 3
    (d,) = (tmp_path / "runs").iterdir()
    row = json.loads((d / "summary.json").read_text())["scenarios"][0]
    assert [(i["label"], i["pass_rate"]) for i in row["checks"][0]["items"]] == [
        ("Is polite", 1.0), ("Gives the phone", 0.0), ("Is brief", 1.0)]


def test_cache_asks_each_question_once_and_never_flips(tmp_path: Path, server: FakeServer,
                                                       jserver: FakeServer,
                                                       cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [verdict("pass", 1, 0.9)]}]})
    judge_suite(tmp_path, server.url, jserver.url)
    scenario(tmp_path, "  - faithful\n", runs=4)
    # 4 runs give the same answer → the same question: asked once, shared or cached
    assert run_cli("run", ".", "--no-early-stop", "-j", "4", cwd=tmp_path).exit_code == 0
    assert len(judge_requests(jserver)) == 1
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [verdict("fail", 0, 0.9)]}]})
    r = run_cli("run", ".", "--no-early-stop", "--out", "again", cwd=tmp_path)
    assert r.exit_code == 0, r.output  # the stored verdict, not the new server's opinion
    assert judge_requests(jserver) == []
    assert all(c["evidence"]["cached"] for x in records(tmp_path, "again") for c in x["checks"])
    # without the cache, every attempt asks again (one after the other: -j 1, so that none
    # shares a question another is asking at that moment)
    r = run_cli("run", ".", "--no-early-stop", "--no-judge-cache", "-j", "1", "--out", "fresh",
                cwd=tmp_path)
    assert r.exit_code == 1
    assert len(judge_requests(jserver)) == 4
    files = list((tmp_path / ".scenarist" / "judge-cache").rglob("*.json"))
    assert len(files) == 1


def test_server_without_response_format_is_asked_plainly(
        tmp_path: Path, server: FakeServer, jserver: FakeServer,
        cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    jserver.script({"rules": [{"match_any": "response_format", "replies": [
        {"status": 400, "body": {"error": "response_format is not supported"}}]},
        {"match": "FAITHFUL", "replies": [verdict("pass", 1, 0.9)]}]})
    judge_suite(tmp_path, server.url, jserver.url)
    scenario(tmp_path, "  - faithful\n")
    assert run_cli("run", ".", cwd=tmp_path).exit_code == 0
    asked = judge_requests(jserver)
    assert ["response_format" in q for q in asked] == [True, False]


def test_secrets_never_reach_the_judge_or_any_file(
        tmp_path: Path, server: FakeServer, jserver: FakeServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    key = "live-key-7f3a9c2e11b4"
    monkeypatch.setenv("GRADER_KEY", key)
    openai_style = "sk-proj-A1b2C3d4E5f6G7h8I9j0KLMN"
    server.script({"rules": [{"match": "hora", "replies": [
        {"tool_calls": [{"name": "get_config", "arguments": {}}]},
        {"text": f"Done. The config says {openai_style} and {key}."}]}]})
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [verdict("pass", 1, 0.9)]}]})
    targets = {
        "agent": {"kind": "openai", "base_url": server.url, "model": "agent-model"},
        "grader": {"kind": "openai", "base_url": jserver.url, "model": "judge-model",
                   "api_key_env": "GRADER_KEY"},
    }
    write(tmp_path / "scenarist.yaml", suite_yaml(
        server.url, targets=targets, defaults={"target": "agent"}, judge={"target": "grader"}))
    write(tmp_path / "leak.yaml", f"""
        given:
          at: 2026-09-29T10:00:00-03:00
          tools:
            - name: get_config
              description: Read the configuration.
              returns: "api_key={key} openai={openai_style} aws=AKIAIOSFODNN7EXAMPLE"
        when: "¿Hasta qué hora atendemos hoy?"
        then:
          - faithful
        runs: 1
        min_pass: 1
        """)
    r = run_cli("run", ".", "--record", "agent.jsonl", "--record-judge", "judge.jsonl",
                cwd=tmp_path)
    assert r.exit_code == 0, r.output
    sent = json.dumps(judge_requests(jserver))
    assert key not in sent
    assert openai_style not in sent
    assert "AKIAIOSFODNN7EXAMPLE" not in sent
    assert "[REDACTED:GRADER_KEY]" in sent
    assert "[REDACTED:api-key]" in sent
    assert "[REDACTED:aws-access-key]" in sent
    assert judge_requests(jserver)[0]["messages"]  # it was asked
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".yaml"]
    assert {p.name for p in written} >= {"results.jsonl", "report.html", "summary.json",
                                         "agent.jsonl", "judge.jsonl", "run.json"}
    assert any(p.parent.parent.name == "judge-cache" for p in written)
    assert any(p.name == "history.db" for p in written)  # binary: its bytes are searched
    for p in written:
        text = p.read_bytes().decode("utf-8", "replace")
        assert key not in text, p
        assert openai_style not in text, p
        assert "AKIAIOSFODNN7EXAMPLE" not in text, p


def test_judge_checks_need_a_judge(tmp_path: Path, server: FakeServer,
                                   cli_env: dict[str, str]) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    scenario(tmp_path, "  - faithful\n  - criteria: [Is polite]\n")
    r = run_cli("lint", ".", cwd=tmp_path)
    assert r.exit_code == 1
    assert "hours.yaml:7:5: error E218 the check 'faithful' needs the LLM judge, and " \
           "scenarist.yaml has no judge" in r.output


def test_plan_counts_judge_questions(tmp_path: Path, server: FakeServer, jserver: FakeServer,
                                     cli_env: dict[str, str]) -> None:
    judge_suite(tmp_path, server.url, jserver.url)
    scenario(tmp_path, "  - faithful\n  - criteria: [Is polite, Is brief]\n", runs=5)
    r = run_cli("plan", ".", cwd=tmp_path)
    assert r.exit_code == 0
    assert r.output.splitlines()[-1].endswith(
        "= 5 attempts; at most 30 model calls and 15 judge questions (grader; up to 3 tries "
        "each)")


@pytest.mark.parametrize(("text", "scale", "expected"), [
    ('{"verdict": "pass", "score": 1, "confidence": 0.9, "reason": "r"}', 1,
     ("pass", 1.0, 0.9, "r")),
    ('{"Verdict": "FAIL", "Confidence": 95, "Reason": "r"}', 1, ("fail", 0.0, 0.95, "r")),
    ('{"verdict": "yes", "score": 8, "confidence": 0.9}', 1, ("pass", 0.8, 0.9, "")),
    ('{"verdict": "pass", "score": 7, "confidence": 0.85, "explanation": "e"}', 10,
     ("pass", 7.0, 0.85, "e")),
    ('{"verdict": "pass", "score": 85, "confidence": 0.85}', 10, ("pass", 8.5, 0.85, "")),
])
def test_read_reply(text: str, scale: float, expected: tuple[Any, ...]) -> None:
    assert read_reply(text, scale) == expected


@pytest.mark.parametrize(("text", "problem"), [
    ("fine", "no JSON object in the reply"),
    ('{"verdict": "maybe", "confidence": 0.9}', "'verdict' must be pass or fail, not 'maybe'"),
    ('{"verdict": "pass", "score": 1}', "the reply has no 'confidence'"),
    ('{"verdict": "pass", "confidence": "high"}', "'confidence' is not a number: 'high'"),
    ('{"verdict": "pass", "confidence": 0.9}', "the reply has no 'score'"),
])
def test_unreadable_replies(text: str, problem: str) -> None:
    with pytest.raises(Unreadable) as info:
        read_reply(text, 10 if "score" in problem else 1)
    assert str(info.value) == problem


def test_cohen_kappa() -> None:
    from dsl.pipeline.judgecheck import cohen_kappa

    pairs = [("pass", "pass"), ("pass", "pass"), ("pass", "fail"), ("fail", "fail"),
             ("fail", "fail"), ("fail", "pass")]
    assert cohen_kappa(pairs) == pytest.approx(1 / 3)
    assert cohen_kappa([("pass", "pass"), ("fail", "fail")]) == 1.0
    assert cohen_kappa([("pass", "pass"), ("pass", "pass")]) == 1.0  # one class: agreement
    assert cohen_kappa([]) is None


LABELS = """
examples:
  - id: right
    check: faithful
    message: "¿Hasta qué hora?"
    tool_results: [{name: list_business_hours, output: {tuesday: "09:00-18:00"}}]
    answer: "Hasta las 18:00."
    expected: pass
  - id: invented
    check: faithful
    message: "¿Hasta qué hora?"
    tool_results: [{name: list_business_hours, output: {tuesday: "09:00-18:00"}}]
    answer: "Hasta las 20:00."
    expected: fail
  - id: judge-wrong
    check: answers_the_question
    message: "Hola"
    answer: "Tuesday 18:00."
    expected: fail
  - id: doubtful
    check: {criteria: [Is polite]}
    message: "Hola"
    answer: "Hola, ¿en qué puedo ayudar?"
    expected: pass
"""


def test_judge_check_reports_agreement_and_kappa(tmp_path: Path, server: FakeServer,
                                                  jserver: FakeServer,
                                                  cli_env: dict[str, str]) -> None:
    jserver.script({"rules": [
        {"match": "20:00", "replies": [verdict("fail", 0, 0.9, "20:00 is not in the tools")]},
        {"match": "FAITHFUL", "replies": [verdict("pass", 1, 0.9, "supported")]},
        {"match": "ANSWERS", "replies": [verdict("pass", 1, 0.9, "it answers")]},
        {"match": "Is polite", "replies": [verdict("pass", 9, 0.4, "maybe")]},
    ]})
    judge_suite(tmp_path, server.url, jserver.url)
    write(tmp_path / "labels.yaml", LABELS)
    r = run_cli("judge-check", "labels.yaml", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert r.output == (
        "✓ right                        faithful               person: pass  judge: pass\n"
        "✓ invented                     faithful               person: fail  judge: fail\n"
        "✗ judge-wrong                  answers_the_question   person: fail  judge: pass\n"
        "    the judge found that the answer answers the question: it answers\n"
        '? doubtful                     criteria: ["Is polite"] person: pass  judge: unsure\n'
        "    0 of 1 criteria met: ? Is polite (unsure)\n"
        "\n4 examples, judge grader (judge-model, json mode): agreement 67% on 3 decided, "
        "Cohen's kappa 0.40; 1 unsure, 0 errors\n"
        "  answers_the_question: agreement 0% on 1, kappa 0.00\n"
        "  faithful: agreement 100% on 2, kappa 1.00\n"
        "\nKept in .scenarist/judge-validation.json: reports show this judge's kappa and "
        "coverage.\n")
    data = json.loads(run_cli("judge-check", "labels.yaml", "--json", cwd=tmp_path).output)
    assert (data["decided"], data["agreement"], data["kappa"], data["unsure"]) == \
        (3, 0.6667, 0.4, 1)
    assert data["confusion"] == {"pass->pass": 1, "pass->fail": 0, "fail->pass": 1,
                                 "fail->fail": 1}


def test_judge_check_locates_mistakes_in_the_labels(tmp_path: Path, server: FakeServer,
                                                    jserver: FakeServer,
                                                    cli_env: dict[str, str]) -> None:
    judge_suite(tmp_path, server.url, jserver.url)
    write(tmp_path / "labels.yaml", LABELS.replace("expected: pass\n  - id: invented",
                                                   "expected: yes\n  - id: invented")
          .replace("check: answers_the_question", "check: contains"))
    r = run_cli("judge-check", "labels.yaml", cwd=tmp_path)
    assert r.exit_code == 2
    assert "labels.yaml:7:15: error S105 'expected' in examples (item 1) must be 'pass' or " \
           "'fail'; got \"yes\"" in r.output
    assert jserver.requests() == []
