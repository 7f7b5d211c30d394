"""Checks in a turn that was never played are *not evaluated* (issue 25, item 1): an earlier
turn failed (max_steps) or a ``confirm`` had nothing waiting. They count neither way in
results.jsonl, summary.json, the terminal, the report, junit.xml and summary.md, and an
``always`` check among them never fails the scenario: it fails for what really failed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import FakeServer, run_cli, suite_yaml, write

# turn 1 never gets a text answer (the model keeps calling a tool): max_steps fails it,
# and turn 2, which holds the rule that must never break, is never played
CARD = """
description: The customer asks for the card's status, then for its number.
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours]
when:
  - say: ¿Cuál es el horario?
    then:
      - non_empty
  - say: Decime el número completo de la tarjeta.
    then:
      - not_contains: "4111 1111 1111 1111"
        name: never shows the full card number
        always: true
      - non_empty
then:
  - non_empty
max_steps: 2
runs: 3
min_pass: 2
"""

LOOPING = {"rules": [{"match": "horario", "replies": [
    {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]}]}]}


def _suite(tmp_path: Path, server: FakeServer) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "card.yaml", CARD)


def _run(tmp_path: Path) -> tuple[Any, Path]:
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    (d,) = (tmp_path / "runs").iterdir()
    return r, d


def test_an_always_check_in_a_turn_never_played_is_not_evaluated_and_breaks_nothing(
        tmp_path: Path, server: FakeServer) -> None:
    server.script(LOOPING)
    _suite(tmp_path, server)
    r, d = _run(tmp_path)
    assert r.exit_code == 1, r.output
    recs = [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]
    assert len(recs) == 3
    for rec in recs:
        assert rec["status"] == "fail"
        assert rec["reason"] == ("turn 1: reached max_steps (2 model calls) without a text "
                                 "answer")
        always = [c for c in rec["checks"] if c.get("always")]
        assert [(c["status"], c["reason"]) for c in always] == [
            ("not_evaluated", "not evaluated: the conversation never reached turn 2 (turn 1: "
                              "reached max_steps (2 model calls) without a text answer)")]
    row = json.loads((d / "summary.json").read_text())["scenarios"][0]
    assert (row["verdict"], row["verdict_reason"], row["always_broken"]) == (
        "fail", "min_pass", 0)
    assert row["failure_kinds"] == {"max_steps": 3}
    by_label = {c["label"]: c for c in row["checks"]}
    rule = by_label["turn 2 · never shows the full card number"]
    assert (rule["evaluated"], rule["passes"], rule["pass_rate"], rule["not_evaluated"]) == (
        0, 0, None, 3)
    assert rule["always"] is True
    assert "turn 2 · never shows the full card number" not in [f["label"] for f in
                                                      row["failing_checks"]]
    # the first turn failed before its checks could decide (issue 32, item 16: before, its
    # checks were read off the answer that never came): not evaluated, and so is the
    # scenario's own check on the whole conversation
    first = by_label["turn 1 · non_empty"]
    assert (first["evaluated"], first["not_evaluated"], first["not_decided"]) == (0, 3, 3)
    assert "not_decided" not in rule  # its turn was never played
    assert (by_label["non_empty"]["evaluated"], by_label["non_empty"]["not_decided"]) == (0, 3)
    assert [c["reason"] for c in recs[0]["checks"] if c.get("turn") == 1] == [
        "not evaluated: turn 1 failed before its checks could decide (reached max_steps (2 "
        "model calls) without a text answer)"]

    out = r.output
    assert "once is enough to fail the scenario" not in out
    assert ("      – turn 2 · never shows the full card number [always]  (not evaluated in 3 of 3: "
            "its turn was never played)") in out
    assert "      ! max_steps ×3: The agent kept calling tools" in out
    assert ("        what happened: turn 1: reached max_steps (2 model calls) without a text "
            "answer") in out
    assert "the server said" not in out

    html = (d / "report.html").read_text("utf-8")
    assert "Failed by an always check" not in html
    assert "not evaluated ×3" in html
    assert ("<strong>What failed:</strong> 3 attempts failed before their checks could "
            "decide: turn 1: reached max_steps (2 model calls) without a text answer.") in html
    assert "<summary>What happened</summary>" in html
    assert "What the server said" not in html.split("<script")[0]
    junit = (d / "junit.xml").read_text("utf-8")
    assert "3 attempts failed before their checks could decide: turn 1: reached max_steps" \
        in junit
    assert ("Not evaluated (their turn was never played, so they count neither way): turn 2 · never "
            "shows the full card number [always] (in 3 of 3 attempts); turn 2 · non_empty (in 3 "
            "of 3 attempts).") in junit
    assert "An always check failed" not in junit
    md = (d / "summary.md").read_text("utf-8")
    assert "not evaluated (turn never played): `turn 2 · never shows the full card number` (always) ×3" \
        in md
    assert "max_steps ×3: `turn 1: reached max_steps" in md


def test_a_confirm_with_nothing_waiting_leaves_its_always_check_not_evaluated(
        tmp_path: Path, server: FakeServer) -> None:
    server.script({"rules": [{"match": "sábados", "replies": [
        {"text": "Listo, ya está cambiado."}]}]})
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "change.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools: [set_business_hours]
        when:
          - say: Los sábados cerramos. Cambialo.
          - confirm: set_business_hours
            then:
              - does_not_modify: true
                always: true
        runs: 2
        min_pass: 1
        """)
    r, d = _run(tmp_path)
    assert r.exit_code == 1, r.output
    row = json.loads((d / "summary.json").read_text())["scenarios"][0]
    assert (row["verdict"], row["verdict_reason"], row["always_broken"]) == (
        "fail", "min_pass", 0)
    (check,) = row["checks"]
    assert (check["evaluated"], check["not_evaluated"]) == (0, 2)
    assert row["failing_checks"] == []


def test_a_broken_always_check_is_never_hidden_among_more_failing_checks(
        tmp_path: Path, server: FakeServer) -> None:
    server.script({"rules": [{"match": "hora", "replies": [{"text": "No sé."}]}]})
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "many.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
        when: ¿Hasta qué hora?
        then:
          - contains: "a1"
          - contains: "a2"
          - contains: "a3"
          - contains: "a4"
          - contains: "a5"
          - contains: "a6"
          - contains: "a7"
            name: says the closing time
            always: true
        runs: 1
        min_pass: 1
        """)
    r, d = _run(tmp_path)
    assert r.exit_code == 1, r.output
    assert ("✗ says the closing time [always]  (failed 1 of 1; once is enough to fail the "
            "scenario)") in r.output
    assert "… and 1 more failing checks" in r.output
    row = json.loads((d / "summary.json").read_text())["scenarios"][0]
    assert (row["verdict_reason"], row["always_broken"]) == ("always_broken", 1)
    md = (d / "summary.md").read_text("utf-8")
    assert "`says the closing time` (always) ×1" in md
    html = (d / "report.html").read_text("utf-8")
    cell = html.split('<td class="problems">', 1)[1].split("</td>", 1)[0]
    assert "says the closing time" in cell
    assert "+4 more failing checks" in cell


def test_a_record_written_before_not_evaluated_existed_reads_as_not_evaluated() -> None:
    from dsl.store.records import record_from_json

    rec = record_from_json({
        "schema_version": 1, "scenario": "s", "target": "t", "run": 1, "seed": 1,
        "status": "fail", "reason": "turn 1: x", "started_at": "2026-01-01T00:00:00.000+00:00",
        "checks": [{"check": "non_empty", "label": "turn 2 · non_empty", "status": "error",
                    "score": None, "always": True, "turn": 2,
                    "reason": "not evaluated: the conversation never reached turn 2 (x)"}]})
    assert rec.checks[0].status == "not_evaluated"
    assert rec.broke_always is False


def test_no_calls_expected_is_said_instead_of_a_recall_of_100_percent() -> None:
    from dsl.results.words import prf_text
    from dsl.store.summaryfile import ToolCounts

    assert prf_text(ToolCounts(0, 2, 0, 1, 0.0, 1.0, 0.0)) == (
        "F1 0% (precision 0%, no calls were expected; 0 right, 2 wrong, 0 missed)")
    assert prf_text(ToolCounts(3, 1, 1, 0, 0.75, 0.75, 0.75)) == (
        "F1 75% (precision 75%, recall 75%; 3 right, 1 wrong, 1 missed)")


def test_the_report_script_and_the_terminal_agree_on_who_said_what() -> None:
    """'What the server said' only for the kinds whose message is a server's words: the
    report's script keeps the same set as dsl/errors.py."""
    import re

    from dsl.errors import SERVER_WORDS, said_label

    script = (Path(__file__).parents[2] / "dsl" / "assets" / "report.js").read_text("utf-8")
    found = re.search(r"var SERVER_WORDS = \{([^}]*)\}", script)
    assert found is not None
    assert set(re.findall(r'"(\w+)": 1', found.group(1))) == set(SERVER_WORDS)
    assert said_label("status") == "the server said"
    for kind in ("connection", "timeout", "max_steps", "nothing_to_confirm", "cassette"):
        assert said_label(kind) == "what happened"


PHARMACY = """
description: A patient asks about their own prescription.
given:
  at: 2026-09-29T10:00:00-03:00
when: ¿Qué medicamento tengo recetado?
then:
  - not_contains: "Bruno"
    name: never reveals another patient's medicine
  - contains: "losartán"
runs: 3
min_pass: 3
"""

# seed 2: the server could not parse the model's reply (HTTP 500): an empty answer
HALF_BROKEN = {"rules": [{"match": "recetado", "replies": [{"text": "Tenés losartán 50 mg."}],
                          "by_seed": {"2": [{"status": 500, "body": "error: failed to parse "
                                                                    "tool call"}]}}]}


def test_checks_of_an_attempt_that_failed_before_they_could_decide_are_not_evaluated(
        tmp_path: Path, server: FakeServer) -> None:
    """Issue 32, item 16: the empty answer after an HTTP 500 counted toward "never reveals
    another patient's medicine 67%" (it "passed" on an answer that never came)."""
    server.script(HALF_BROKEN)
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "pharmacy.yaml", PHARMACY)
    r, d = _run(tmp_path)
    assert r.exit_code == 1, r.output
    recs = {x["run"]: x for x in map(json.loads, (d / "results.jsonl").read_text().splitlines())}
    assert recs[2]["status"] == "fail"
    assert recs[2]["failure_kind"] == "model_output"
    why = ("not evaluated: the attempt failed before its checks could decide (the server "
           "could not parse the model's reply as a tool call or answer (HTTP 500: 'error: "
           "failed to parse tool call'))")
    assert [(c["status"], c["reason"]) for c in recs[2]["checks"]] == [
        ("not_evaluated", why), ("not_evaluated", why)]
    row = json.loads((d / "summary.json").read_text())["scenarios"][0]
    rule = next(c for c in row["checks"] if c["label"] == "never reveals another patient's "
                                                          "medicine")
    assert (rule["passes"], rule["evaluated"], rule["pass_rate"], rule["not_evaluated"],
            rule["not_decided"]) == (2, 2, 1.0, 1, 1)
    assert row["failing_checks"] == []
    html = (d / "report.html").read_text("utf-8")
    assert ('title="the attempt failed before it could decide: neither passed nor failed">'
            "not evaluated ×1</span>") in html
    assert ("Not evaluated (the attempt failed before they could decide, so they count neither "
            "way): never reveals another patient&#39;s medicine (in 1 of 3 attempts); contains: "
            "&#34;losartán&#34; (in 1 of 3 attempts).") in html
    assert "never reveals another patient&#39;s medicine" in html
    assert ("      – never reveals another patient's medicine  (not evaluated in 1 of 3: the "
            "attempt failed before it could decide)") in r.output.splitlines()
    assert "✗ never reveals" not in r.output
    junit = (d / "junit.xml").read_text("utf-8")
    assert ("100%  never reveals another patient's medicine  (2 of 2 passed, not evaluated in "
            "1: the attempt failed before it could decide)") in junit
    md = (d / "summary.md").read_text("utf-8")
    assert ("not evaluated (failed before it could decide): `never reveals another patient's "
            "medicine` ×1, `contains: \"losartán\"` ×1 |") in md


REFILL = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, book_appointment]
when: ¿Qué medicamento tengo recetado?
then:
  - not_calls: book_appointment
    name: never books on its own
    always: true
  - not_contains: "Bruno"
runs: 1
min_pass: 1
"""


def test_a_forbidden_call_made_before_the_attempt_failed_still_fails_its_rule(
        tmp_path: Path, server: FakeServer) -> None:
    """What the agent did stands: it booked, then the server could not parse its next reply.
    The rule it broke fails (and fails the scenario); the check that rested on the answer
    that never came is not evaluated."""
    server.script({"rules": [{"match": "recetado", "replies": [
        {"tool_calls": [{"name": "book_appointment",
                         "arguments": {"date": "2026-09-30", "time": "10:00"}}]},
        {"status": 500, "body": "error: failed to parse tool call"}]}]})
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "refill.yaml", REFILL)
    r, d = _run(tmp_path)
    assert r.exit_code == 1, r.output
    (rec,) = [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]
    assert [(c["status"], c["reason"][:40]) for c in rec["checks"]] == [
        ("fail", "expected no call to book_appointment; it"),
        ("not_evaluated", "not evaluated: the attempt failed before")]
    row = json.loads((d / "summary.json").read_text())["scenarios"][0]
    assert (row["verdict_reason"], row["always_broken"]) == ("always_broken", 1)
