"""The token-probability judge (judge.mode: logprobs) against a scripted judge server that
returns chosen top_logprobs in several spellings: verdicts at the boundaries, calibration,
digit scores, servers without logprobs, empty answers, the cache — and judge-check
--calibrate on a small labelled file with known results."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dsl.cli import main
from dsl.judge.calibration import Case, brier, expected_calibration_error, figures, fit_temperature
from dsl.judge.logprobs import Reading, decide, first_token_options, read_answers
from dsl.judge.validation import NOT_VALIDATED, validation_for, validation_text
from dsl.model import Calibration
from tests.conftest import FakeServer, start_fake_server, suite_yaml, write

ASKED = "¿Hasta qué hora atendemos hoy?"
AGENT = {"rules": [{"match": "hora", "replies": [
    {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
    {"text": "Hoy atendemos hasta las 18:00."}]}]}


@pytest.fixture(scope="module")
def judge_server() -> Iterator[FakeServer]:
    s = start_fake_server()
    yield s
    s.process.terminate()
    s.process.wait(timeout=5)


@pytest.fixture
def jserver(judge_server: FakeServer) -> FakeServer:
    judge_server.script({"rules": []})
    return judge_server


@pytest.fixture
def agent(server: FakeServer) -> FakeServer:
    server.script(AGENT)
    return server


def run_cli(*args: str, cwd: Path) -> Any:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def suite(tmp_path: Path, agent_url: str, judge_url: str, **judge: Any) -> None:
    targets = {
        "agent": {"kind": "openai", "base_url": agent_url, "model": "agent-model",
                  "retry": {"max_attempts": 1}},
        "grader": {"kind": "openai", "base_url": judge_url, "model": "judge-model",
                   "timeout_ms": 2000, "retry": {"max_attempts": 1},
                   "params": {"max_tokens": 256}},
    }
    write(tmp_path / "scenarist.yaml", suite_yaml(
        agent_url, targets=targets, defaults={"target": "agent"},
        judge={"target": "grader", "mode": "logprobs", **judge}))


def scenario(tmp_path: Path, checks: str, runs: int = 1) -> None:
    write(tmp_path / "hours.yaml", "given:\n  at: 2026-09-29T10:00:00-03:00\n"
          "  tools: [list_business_hours]\n"
          f"when: \"{ASKED}\"\nthen:\n{checks}runs: {runs}\nmin_pass: 1\n")


def records(tmp_path: Path, out: str = "runs") -> list[dict[str, Any]]:
    (d,) = (tmp_path / out).iterdir()
    return [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]


def said(probabilities: dict[str, float], text: str | None = None) -> dict[str, Any]:
    """A judge reply whose first token has these alternatives."""
    top = max(probabilities, key=lambda k: probabilities[k])
    return {"text": text if text is not None else top, "top_logprobs": probabilities}


# ----------------------------------------------------------------------- yes / no


def test_a_yes_no_question_asks_for_one_token_and_sums_the_spellings(
        tmp_path: Path, agent: FakeServer, jserver: FakeServer, cli_env: dict[str, str]) -> None:
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [
        said({"Yes": 0.6, " yes": 0.15, "YES.": 0.05, "No": 0.2})]}]})
    suite(tmp_path, agent.url, jserver.url)
    scenario(tmp_path, "  - faithful\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (check,) = records(tmp_path)[0]["checks"]
    assert (check["status"], check["reason"]) == (
        "pass", "the judge found the answer faithful to the tool results: P(yes) = 0.80 from "
        "the judge's token probabilities")
    ev = check["evidence"]
    assert ev["confidence"] == pytest.approx(0.8)
    assert ev["logprobs"]["kind"] == "yes_no"
    assert ev["logprobs"]["log_mass"]["yes"] == pytest.approx(math.log(0.8))
    (q,) = [x["body"] for x in jserver.requests()]
    assert (q["logprobs"], q["top_logprobs"], q["max_tokens"]) == (True, 20, 4)  # over params
    assert (q["temperature"], q["seed"]) == (0.0, 0)
    assert "response_format" not in q
    assert q["messages"][1]["content"].endswith(
        "Is the answer faithful to the tool results? Reply with one word: yes or no.")


@pytest.mark.parametrize(("probabilities", "temperature", "status", "reason"), [
    ({"yes": 0.8, "no": 0.2}, 1.0, "pass",
     "the judge found the answer faithful to the tool results: P(yes) = 0.80 from the "
     "judge's token probabilities"),
    ({"yes": 0.79, "no": 0.21}, 1.0, "unsure",
     "the judge was not sure enough: P(yes) = 0.79 and P(no) = 0.21 from its token "
     "probabilities; neither reaches min_confidence 0.80"),
    ({"No": 0.8, " yes": 0.2}, 1.0, "fail",
     "the judge found the answer not faithful to the tool results: P(no) = 0.80 from the "
     "judge's token probabilities"),
    ({"Yes": 0.85, "No": 0.15}, 1.0, "pass",
     "the judge found the answer faithful to the tool results: P(yes) = 0.85 from the "
     "judge's token probabilities"),
    ({"Yes": 0.85, "No": 0.15}, 1.56, "unsure",
     "the judge was not sure enough: P(yes) = 0.75 and P(no) = 0.25 from its token "
     "probabilities (P(yes) 0.85 before calibration at temperature 1.56); neither reaches "
     "min_confidence 0.80"),
    ({"Yes": 0.75, "No": 0.25}, 0.5, "pass",
     "the judge found the answer faithful to the tool results: P(yes) = 0.90 from the "
     "judge's token probabilities (P(yes) 0.75 before calibration at temperature 0.5)"),
    ({"yes": 0.55, "no": 0.05, "Based": 0.4}, 1.0, "pass",
     "the judge found the answer faithful to the tool results: P(yes) = 0.92 from the "
     "judge's token probabilities"),
    ({"The": 0.7, "yes": 0.3}, 1.0, "unsure",
     "the judge's first token was not yes or no: yes and no hold 30% of its probability, "
     'less than half (its likeliest first token: "The")'),
])
def test_yes_no_verdicts_at_the_boundaries(
        tmp_path: Path, agent: FakeServer, jserver: FakeServer, cli_env: dict[str, str],
        probabilities: dict[str, float], temperature: float, status: str, reason: str) -> None:
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [said(probabilities)]}]})
    suite(tmp_path, agent.url, jserver.url, calibration={"yes_no": temperature})
    scenario(tmp_path, "  - faithful\n")
    run_cli("run", ".", cwd=tmp_path)
    (rec,) = records(tmp_path)
    (check,) = rec["checks"]
    assert (check["status"], check["reason"]) == (status, reason)
    assert rec["status"] == status
    assert len(jserver.requests()) == 1  # one request: no retries in logprobs mode


def test_digit_scores_for_rubrics_and_criteria(tmp_path: Path, agent: FakeServer,
                                               jserver: FakeServer,
                                               cli_env: dict[str, str]) -> None:
    jserver.script({"rules": [
        {"match": "exactly at", "replies": [said({"6": 0.25, "7": 0.75})]},
        {"match": "just below", "replies": [said({"6": 0.3, "7": 0.7})]},
        {"match": "Is polite", "replies": [said({"6": 0.4, " 7": 0.6})]},
        {"match": "Is brief", "replies": [said({"The": 0.6, "5": 0.4})]},
    ]})
    suite(tmp_path, agent.url, jserver.url)
    scenario(tmp_path, "  - judge: {rubric: exactly at, pass_score: 0.75}\n"
                       "  - judge: {rubric: just below, pass_score: 0.75}\n"
                       "  - criteria: [Is polite, Is brief]\n")
    run_cli("run", ".", cwd=tmp_path)
    (rec,) = records(tmp_path)
    assert [(c["status"], c["reason"]) for c in rec["checks"]] == [
        ("pass", "the judge said pass with score 0.75 (needs 0.75): the probability-weighted "
                 "digit is 6.75 of 9, from the judge's token probabilities"),
        ("fail", "the judge said fail with score 0.74 (needs 0.75): the probability-weighted "
                 "digit is 6.70 of 9, from the judge's token probabilities"),
        ("unsure", "1 of 2 criteria met: ✓ Is polite (7.33 ≥ 7); ? Is brief (unsure)"),
    ]
    polite, brief = rec["checks"][2]["items"]
    assert polite["score"] == pytest.approx(6.6 * 10 / 9)
    assert brief["reason"] == ("the judge's first token was not a digit: the digits hold 40% "
                               'of its probability, less than half (its likeliest first '
                               'token: "The")')
    asked = [x["body"]["messages"][1]["content"] for x in jserver.requests()]
    assert all(a.endswith("Reply with one digit.") for a in asked)


def raw_logprobs(alternatives: list[tuple[str, float]]) -> dict[str, Any]:
    """A judge reply whose first token has these log-probabilities, as written (the
    scripted server's top_logprobs takes probabilities, which cannot be impossible)."""
    top = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in alternatives]
    return {"json": {
        "id": "x", "object": "chat.completion", "model": "judge-model",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": alternatives[0][0]},
                     "logprobs": {"content": [{**top[0], "top_logprobs": top}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}}


@pytest.mark.parametrize(("alternatives", "problem"), [
    ([("Yes", 1e308), ("No", -2.0)],
     'its token "Yes" has the log-probability 1e+308, and a log-probability is never above 0'),
    ([("yes", 50.0), ("no", -0.1)],
     'its token "yes" has the log-probability 50, and a log-probability is never above 0'),
    ([("No", 700.0)],
     'its token "No" has the log-probability 700, and a log-probability is never above 0'),
    ([("The", 3.5), ("yes", -0.01)],  # an answer that is not yes or no: still malformed
     'its token "The" has the log-probability 3.5, and a log-probability is never above 0'),
    ([("Yes", -0.01), ("yes", -0.02), ("No", -0.5)],
     "the probabilities of its first token's alternatives add up to 2.58, more than 1"),
])
def test_impossible_log_probabilities_are_unsure_never_a_verdict(
        tmp_path: Path, agent: FakeServer, jserver: FakeServer, cli_env: dict[str, str],
        alternatives: list[tuple[str, float]], problem: str) -> None:
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [raw_logprobs(alternatives)]}]})
    suite(tmp_path, agent.url, jserver.url)
    scenario(tmp_path, "  - faithful\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 1, r.output  # unsure: no pass (before: a pass, or an error)
    (rec,) = records(tmp_path)
    (check,) = rec["checks"]
    assert (rec["status"], check["status"], check["reason"]) == (
        "unsure", "unsure",
        "the judge's reply was malformed, so no verdict can be read from it: " + problem)
    run_cli("run", ".", "--out", "again", cwd=tmp_path)  # not kept: asked again
    assert len(jserver.requests()) == 2


def test_a_cached_reading_with_impossible_values_is_unsure() -> None:
    reading = Reading("yes_no", (50.0, None), "yes")
    d = decide(reading, Calibration(), 0.8)
    assert (d.status, d.reason) == (
        "unsure", "the judge's reply was malformed, so no verdict can be read from it: its "
        'token "yes" has the log-probability 50, and a log-probability is never above 0')
    assert decide(Reading("yes_no", (0.0, None), "yes"), Calibration(), 0.8).status == "pass"


def test_a_reply_without_logprobs_is_unsure_and_not_kept(
        tmp_path: Path, agent: FakeServer, jserver: FakeServer, cli_env: dict[str, str]) -> None:
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [{"text": "yes"}]}]})
    suite(tmp_path, agent.url, jserver.url)
    scenario(tmp_path, "  - faithful\n")
    run_cli("run", ".", cwd=tmp_path)
    (check,) = records(tmp_path)[0]["checks"]
    assert (check["status"], check["reason"]) == (
        "unsure", "the judge's reply has no logprobs (its server does not report token "
        "probabilities), so judge.mode: logprobs cannot read a verdict from it; use a server "
        "that does (llama.cpp, vLLM, OpenAI) or judge.mode: json")
    # a property of the server, not an answer about the question: asked again next time
    run_cli("run", ".", "--out", "again", cwd=tmp_path)
    assert len(jserver.requests()) == 2


@pytest.mark.parametrize("mode", ["json", "logprobs"])
def test_no_answer_no_question(tmp_path: Path, server: FakeServer, jserver: FakeServer,
                               cli_env: dict[str, str], mode: str) -> None:
    server.script({"rules": [{"match": "hora", "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]}, {"text": "  "}]}]})
    suite(tmp_path, server.url, jserver.url, mode=mode)
    scenario(tmp_path, "  - faithful\n  - answers_the_question\n"
                       "  - judge: {rubric: Gives the hours}\n  - criteria: [Is polite]\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    (rec,) = records(tmp_path)
    assert rec["status"] == "fail"
    assert [(c["status"], c["reason"]) for c in rec["checks"]] == [
        ("fail", "no answer to judge")] * 4
    assert rec["checks"][3]["items"] == [
        {"label": "Is polite", "status": "fail", "score": None, "min_score": 7.0,
         "reason": "no answer to judge"}]
    assert jserver.requests() == []


def test_the_cache_keeps_readings_and_decides_them_under_the_new_calibration(
        tmp_path: Path, agent: FakeServer, jserver: FakeServer, cli_env: dict[str, str]) -> None:
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [
        said({"Yes": 0.85, "No": 0.15})]}]})
    suite(tmp_path, agent.url, jserver.url)
    scenario(tmp_path, "  - faithful\n", runs=3)
    assert run_cli("run", ".", "--no-early-stop", "-j", "1", cwd=tmp_path).exit_code == 0
    assert len(jserver.requests()) == 1  # the same question three times: asked once
    jserver.script({"rules": [{"match": "FAITHFUL", "replies": [said({"Yes": 1.0})]}]})
    suite(tmp_path, agent.url, jserver.url, calibration={"yes_no": 1.56})
    r = run_cli("run", ".", "--no-early-stop", "--out", "calibrated", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    assert jserver.requests() == []  # nothing asked: the stored reading, decided again
    checks = [c for x in records(tmp_path, "calibrated") for c in x["checks"]]
    assert {(c["status"], c["evidence"]["cached"]) for c in checks} == {("unsure", True)}
    (stored,) = (tmp_path / ".scenarist" / "judge-cache").rglob("*.json")
    assert json.loads(stored.read_text())["logprobs"]["kind"] == "yes_no"
    r = run_cli("run", ".", "--no-early-stop", "-j", "1", "--no-judge-cache", "--out",
                "fresh", cwd=tmp_path)
    assert len(jserver.requests()) == 3  # every question asked again, one after the other


def test_plan_counts_the_same_questions(tmp_path: Path, agent: FakeServer, jserver: FakeServer,
                                        cli_env: dict[str, str]) -> None:
    suite(tmp_path, agent.url, jserver.url)
    scenario(tmp_path, "  - faithful\n  - criteria: [Is polite, Is brief]\n", runs=5)
    data = json.loads(run_cli("plan", ".", "--json", cwd=tmp_path).output)
    assert data["judge_calls"] == 15


# ----------------------------------------------------------------------- judge-check


LABELS = """
examples:
  - {id: q1, check: faithful, message: "¿Hasta qué hora?", answer: "ans-q1", expected: pass}
  - {id: q2, check: faithful, message: "¿Hasta qué hora?", answer: "ans-q2", expected: pass}
  - {id: q3, check: faithful, message: "¿Hasta qué hora?", answer: "ans-q3", expected: fail}
  - {id: q4, check: faithful, message: "¿Hasta qué hora?", answer: "ans-q4", expected: fail}
"""
P_YES = {"q1": 0.9, "q2": 0.7, "q3": 0.2, "q4": 0.6}


def labelled_judge(jserver: FakeServer) -> None:
    jserver.script({"rules": [{"match": f"ans-{q}", "replies": [
        said({"Yes": p, "No": 1 - p})]} for q, p in P_YES.items()]})


def test_judge_check_calibrate_fits_the_temperature(tmp_path: Path, agent: FakeServer,
                                                     jserver: FakeServer,
                                                     cli_env: dict[str, str]) -> None:
    labelled_judge(jserver)
    suite(tmp_path, agent.url, jserver.url)
    write(tmp_path / "labels.yaml", LABELS)
    r = run_cli("judge-check", "labels.yaml", "--calibrate", "--json", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert len(jserver.requests()) == 4  # each question asked once, whatever is measured
    c = json.loads(r.output)["calibration"]
    # at temperature 1: q1 pass, q2 unsure (0.70), q3 fail (P(no) = 0.80), q4 unsure (0.60);
    # the likelier verdicts are pass, pass, fail, pass
    assert c["before"] == {"questions": 4, "agreement": 0.75, "kappa": 0.5, "brier": 0.125,
                           "ece": 0.3, "coverage": 0.5, "agreement_covered": 1.0,
                           "kappa_covered": 1.0}
    # the log loss of these four, minimised by a plain scan of temperatures
    expected = min(range(5, 2000), key=lambda t: _loss(t / 100)) / 100
    assert c["fitted"] == {"yes_no": expected, "digits": 1.0}
    assert expected == 0.53
    # at 0.53: q2 becomes a pass (0.83), q4 stays unsure (0.68)
    assert (c["after"]["coverage"], c["after"]["agreement_covered"]) == (0.75, 1.0)
    assert [x["fitted_on"] for x in c["cross_fitted"]] == ["A", "B"]
    assert [x["figures"]["questions"] for x in c["cross_fitted"]] == [2, 2]
    assert c["cross_fitted_pooled"]["questions"] == 4
    text = run_cli("judge-check", "labels.yaml", "--calibrate", cwd=tmp_path).output
    assert "\nPaste under judge: in scenarist.yaml:\n  calibration:\n    yes_no: 0.53\n" \
           "    digits: 1\n" in text
    assert ("                 yes_no digits agreement  kappa  Brier    ECE coverage | "
            "agreement  kappa\n"
            "  before              1      1       75%   0.50  0.125  0.300      50% |      100%"
            "   1.00\n"
            "  after            0.53      1       75%   0.50  0.125  0.234      75% |      100%"
            "   1.00\n") in text
    assert len(jserver.requests()) == 4  # the second time from the cache


def _loss(t: float) -> float:
    total = 0.0
    for q, p in P_YES.items():
        pt = 1 / (1 + math.exp(-math.log(p / (1 - p)) / t))
        total -= math.log(pt if q in ("q1", "q2") else 1 - pt)
    return total


def test_judge_check_keeps_the_validation_for_the_report(tmp_path: Path, agent: FakeServer,
                                                         jserver: FakeServer,
                                                         cli_env: dict[str, str]) -> None:
    from dsl.compiler.suite import load_suite
    from dsl.errors import Collector

    labelled_judge(jserver)
    suite(tmp_path, agent.url, jserver.url)
    write(tmp_path / "labels.yaml", LABELS)

    def judge_config() -> Any:
        s = load_suite(tmp_path / "scenarist.yaml", Collector())
        return s.judge

    assert validation_text(validation_for(tmp_path, judge_config())) == NOT_VALIDATED
    assert NOT_VALIDATED == "not validated — run scenarist judge-check"
    r = run_cli("judge-check", "labels.yaml", cwd=tmp_path)
    assert r.output.endswith("\nKept in .scenarist/judge-validation.json: reports show this "
                             "judge's kappa and coverage.\n")
    info = validation_for(tmp_path, judge_config())
    assert info is not None
    assert (info.kappa, info.coverage, info.questions, info.mode) == (1.0, 0.5, 4, "logprobs")
    assert info.text.startswith("κ 1.00, coverage 50% (judge-check on 4 labelled questions, ")
    from dsl.judge.validation import ValidationInfo

    assert ValidationInfo.from_json(json.loads(json.dumps(info.as_json()))) == info
    assert ValidationInfo.from_json(None) is None
    stored = json.loads((tmp_path / ".scenarist" / "judge-validation.json").read_text())
    assert stored["schema_version"] == 1
    (entry,) = stored["validations"]
    assert entry["judge"]["prompts"]["faithful"] == "faithful/logprobs-1"
    assert entry["labels"]["file"] == "labels.yaml"
    assert len(entry["labels"]["sha256"]) == 64
    run_cli("judge-check", "labels.yaml", cwd=tmp_path)  # measured again: replaced, not added
    stored = json.loads((tmp_path / ".scenarist" / "judge-validation.json").read_text())
    assert len(stored["validations"]) == 1
    # another calibration is another judge: not validated until measured
    suite(tmp_path, agent.url, jserver.url, calibration={"yes_no": 0.53})
    assert validation_for(tmp_path, judge_config()) is None


def test_a_validation_file_of_another_version_is_not_read(tmp_path: Path, agent: FakeServer,
                                                          jserver: FakeServer,
                                                          cli_env: dict[str, str]) -> None:
    labelled_judge(jserver)
    suite(tmp_path, agent.url, jserver.url)
    write(tmp_path / "labels.yaml", LABELS)
    path = tmp_path / ".scenarist" / "judge-validation.json"
    path.parent.mkdir()
    path.write_text('{"schema_version": 9, "validations": []}')
    result = run_cli("judge-check", "labels.yaml", cwd=tmp_path)
    assert result.exit_code == 0
    assert (f"warning: the result was not kept: {path.relative_to(tmp_path)} has "
            "schema_version 9; this Scenarist reads version 1 (it was written by another "
            "version: run judge-check again)") in result.output.replace(str(tmp_path) + "/", "")
    assert json.loads(path.read_text())["schema_version"] == 9  # left as it was


def test_judge_check_calibrate_in_json_mode_measures_the_stated_confidence(
        tmp_path: Path, agent: FakeServer, jserver: FakeServer, cli_env: dict[str, str]) -> None:
    jserver.script({"rules": [
        {"match": f"ans-{q}", "replies": [{"text": json.dumps(
            {"verdict": "pass" if p >= 0.5 else "fail", "score": 1,
             "confidence": max(p, 1 - p), "reason": "r"})}]} for q, p in P_YES.items()]})
    suite(tmp_path, agent.url, jserver.url)  # logprobs in scenarist.yaml; json for the check
    write(tmp_path / "labels.yaml", LABELS)
    r = run_cli("judge-check", "labels.yaml", "--calibrate", "--mode", "json", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert ("  self-reported       –      –       75%   0.50  0.125  0.300      50% |      100%"
            "   1.00\n") in r.output
    assert "  mode json has no temperature to fit: the figures measure the judge's stated " \
           "confidence.\n" in r.output
    assert "Paste under judge" not in r.output


def test_a_judge_that_is_wrong_about_the_labels_is_flattened_and_said_so(
        tmp_path: Path, agent: FakeServer, jserver: FakeServer, cli_env: dict[str, str]) -> None:
    jserver.script({"rules": [
        {"match": "ans-q1", "replies": [said({"Yes": 0.3, "No": 0.7})]},
        {"match": "ans-q3", "replies": [said({"Yes": 0.7, "No": 0.3})]}]})
    suite(tmp_path, agent.url, jserver.url)
    write(tmp_path / "labels.yaml", "\n".join(LABELS.splitlines()[:3] + LABELS.splitlines()[4:5]))
    r = run_cli("judge-check", "labels.yaml", "--calibrate", cwd=tmp_path)
    assert "  note: yes_no 20 is the top of the search: the labels are best fitted by " \
           "probabilities near one half, so the judge's tell nothing about them.\n" in r.output


# ----------------------------------------------------------------------- the maths


def test_first_token_options_in_the_shapes_servers_send() -> None:
    def reply(logprobs: Any) -> dict[str, Any]:
        return {"choices": [{"message": {"content": "x"}, "logprobs": logprobs}]}

    chat = {"content": [
        {"token": "\n", "logprob": -0.01, "top_logprobs": [{"token": "\n", "logprob": -0.01}]},
        {"token": "Yes", "logprob": -0.1,
         "top_logprobs": [{"token": "Yes", "logprob": -0.1}, {"token": "No", "logprob": -2.4}]}]}
    assert first_token_options(reply(chat)) == [("Yes", -0.1), ("No", -2.4)]
    legacy = {"tokens": ["yes"], "top_logprobs": [{"yes": -0.2, "no": -1.7}]}
    assert first_token_options(reply(legacy)) == [("yes", -0.2), ("no", -1.7)]
    only_chosen = {"content": [{"token": "no", "logprob": -0.05, "top_logprobs": []}]}
    assert first_token_options(reply(only_chosen)) == [("no", -0.05)]
    assert first_token_options(reply(None)) is None
    assert first_token_options({"choices": []}) is None


def test_readings_round_trip_and_absent_answers() -> None:
    r = read_answers([("Yes", math.log(0.9)), ("Sure", math.log(0.1))], "yes_no")
    assert r.log_mass[1] is None
    assert Reading.from_json(json.loads(json.dumps(r.to_json()))) == r
    d = decide(r, Calibration(yes_no=3.0), 0.8)  # no "no" among the top tokens: P(yes) = 1
    assert (d.status, d.p_pass) == ("pass", 1.0)


def test_fit_temperature_finds_the_minimum_and_prefers_one_when_flat() -> None:
    assert fit_temperature(lambda t: (math.log(t) - math.log(2.0)) ** 2) == pytest.approx(
        2.0, rel=1e-4)
    assert fit_temperature(lambda t: 1.0) == pytest.approx(1.0, rel=0.05)


def test_brier_and_calibration_error() -> None:
    cases = [Case("pass", "pass", 0.9), Case("fail", "unsure", 0.6), Case("fail", "unsure",
                                                                          None)]
    assert brier(cases) == pytest.approx((0.01 + 0.36) / 2)
    assert expected_calibration_error(cases) == pytest.approx((0.1 + 0.6) / 2)
    f = figures(cases)
    assert (f.agreement, f.coverage, f.agreement_covered) == (pytest.approx(1 / 3),
                                                              pytest.approx(1 / 3), 1.0)


def test_a_run_says_whether_its_judge_was_measured(tmp_path: Path, agent: FakeServer,
                                                   jserver: FakeServer,
                                                   cli_env: dict[str, str]) -> None:
    """Beside judge verdicts, the terminal and the report show the judge's measured kappa
    and coverage, or that nobody measured it."""
    rules = [{"match": f"ans-{q}", "replies": [said({"Yes": p, "No": 1 - p})]}
             for q, p in P_YES.items()]
    jserver.script({"rules": [*rules, {"match": "FAITHFUL", "replies": [said({"yes": 0.95,
                                                                              "no": 0.05})]}]})
    suite(tmp_path, agent.url, jserver.url)
    scenario(tmp_path, "  - faithful\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert "316 tokens, not validated — run scenarist judge-check · " in r.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    html = (run_dir / "report.html").read_text()
    assert "Judge grader: not validated — run scenarist judge-check</p>" in html
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["judge"] == {"target": "grader", "validated": False,
                                "validation": "not validated — run scenarist judge-check"}

    write(tmp_path / "labels.yaml", LABELS)
    assert run_cli("judge-check", "labels.yaml", cwd=tmp_path).exit_code == 0
    r = run_cli("run", "hours.yaml", "--out", "again", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert ", κ 1.00, coverage 50% (judge-check on 4 labelled questions, " in r.output
    (run_dir,) = (tmp_path / "again").iterdir()
    assert "Judge grader: κ 1.00, coverage 50% (judge-check on 4 labelled questions, " in (
        run_dir / "report.html").read_text()
