"""Where issue 16 meets issue 12: a turn's ``then`` items are read by the one check-item
reader (``compile.read_check_item``), so ``always:`` and ``name:`` work on turn checks as on
the scenario's own — compiled, labelled ``turn N · NAME``, kept in plan.json and the
records, decided by the one verdict rule, warned about by lint, recovered past by lint; and
the record's fields of every side (the loop's failure in words and its kind, the turns,
``always``) live side by side, older lines still read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dsl.compiler.lint import lint_paths
from dsl.errors import Collector
from dsl.store.records import record_from_json, record_json
from tests.conftest import FakeServer, run_cli, suite_yaml, write

TWICE = """
description: A patient books once, then says thanks; the agent must never book twice.
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [book_appointment]
when:
  - say: "Quiero reservar el martes 6 a las 15:00."
    then:
      - {calls: book_appointment, name: books it}
  - say: "Gracias"
    then:
      - {not_calls: book_appointment, always: true, name: never books twice}
runs: 3
min_pass: 1
"""

BOOK = {"tool_calls": [{"name": "book_appointment",
                        "arguments": {"date": "2026-10-06", "time": "15:00"}}]}
SCRIPT = {"rules": [
    {"match": "reservar", "per_turn": True, "replies": [BOOK, {"text": "Reservado."}]},
    {"match": "Gracias", "per_turn": True, "replies": [{"text": "De nada."}],
     "by_seed": {"2": [BOOK, {"text": "Reservé otro, por las dudas."}]}},
]}


def _run(tmp_path: Path, server: FakeServer) -> tuple[Any, Path]:
    server.script(SCRIPT)
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, defaults={"target": "fake"}))
    write(tmp_path / "twice.yaml", TWICE)
    r = run_cli("run", ".", "--out", "runs", "--no-early-stop", "-j", "1", cwd=tmp_path)
    (run_dir,) = (tmp_path / "runs").iterdir()
    return r, run_dir


def test_an_always_check_of_a_turn_fails_the_scenario_whatever_min_pass_says(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    r, run_dir = _run(tmp_path, server)
    assert r.exit_code == 1, r.output
    lines = r.output.splitlines()
    assert lines[0] == "FAIL  twice  fake    2/3   min 1    67% [21%–94%]"
    assert lines[1] == ("      ✗ turn 2 · never books twice [always]  (failed 1 of 3; once is "
                        "enough to fail the scenario)")
    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
    row = summary["scenarios"][0]
    assert (row["verdict"], row["verdict_reason"], row["always_broken"]) == \
        ("fail", "always_broken", 1)
    assert [(c["label"], c.get("always", False), c["passes"], c["evaluated"])
            for c in row["checks"]] == [("turn 1 · books it", False, 3, 3),
                                        ("turn 2 · never books twice", True, 2, 3)]
    # issue 14's figures beside them, at full precision
    assert row["checks"][1]["pass_rate"] == 2 / 3
    assert 0.2 < row["checks"][1]["ci_low"] < 0.21
    assert row["failing_checks"] == [{"label": "turn 2 · never books twice", "count": 1,
                                      "always": True}]


def test_plan_and_records_keep_the_turn_the_name_and_always(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    _, run_dir = _run(tmp_path, server)
    checks = json.loads((run_dir / "plan.json").read_text("utf-8"))["scenarios"][0]["checks"]
    assert [{k: v for k, v in c.items() if k != "line"} for c in checks] == [
        {"check": "calls", "label": "turn 1 · books it", "judge": False, "turn": 1,
         "named": True},
        {"check": "not_calls", "label": "turn 2 · never books twice", "judge": False,
         "turn": 2, "always": True, "named": True}]
    records = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    bad = next(r for r in records if r["run"] == 2)
    assert bad["status"] == "fail"
    assert [t["kind"] for t in bad["turns"]] == ["say", "say"]
    assert bad["checks"][1] == {
        "check": "not_calls", "label": "turn 2 · never books twice", "status": "fail",
        "score": 0.0, "reason": bad["checks"][1]["reason"], "turn": 2, "always": True}
    assert record_from_json(bad).broke_always
    good = next(r for r in records if r["run"] == 1)
    assert not record_from_json(good).broke_always


def test_the_report_marks_an_always_check_of_a_turn(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    _, run_dir = _run(tmp_path, server)
    html = (run_dir / "report.html").read_text("utf-8")
    assert ('<span class="check-name">turn 2 · never books twice</span>') in html
    assert "Failed by an always check" in html


def test_lint_warns_about_two_checks_of_one_turn_with_one_name(
        tmp_path: Path, server: FakeServer) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "names.yaml", """\
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [book_appointment]
when:
  - say: "Quiero reservar el martes 6 a las 15:00."
    then:
      - {calls: book_appointment, name: books it}
      - {non_empty: true, name: books it}
  - say: "Gracias"
    then:
      - {non_empty: true, name: books it}
then:
  - {non_empty: true, always: true}
runs: 3
min_pass: 2
""")
    result = lint_paths([tmp_path / "names.yaml"])
    assert [(d.span.line, d.span.col, d.code, d.message) for d in result.diagnostics
            if d.span.file.endswith("names.yaml")] == [
        (8, 33, "W409", "the name 'books it' is already given to the check on line 7; the "
                        "report could not tell them apart")]
    # (turn 2's 'books it' is shown as 'turn 2 · books it': another name, no warning)


def test_lint_reports_a_wrong_turn_check_and_the_other_mistakes_in_one_pass(
        tmp_path: Path, server: FakeServer) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "three.yaml", """\
given:
  at: 2026-09-29T10:00:00              # no UTC offset
  tools: [book_appointment]
when:
  - say: "Quiero reservar el martes 6 a las 15:00."
    then:
      - {calls: book_appointment, always: yes please}
  - say: "Gracias"
    then:
      - {calls: {name: book_appointment, args: {dat: "2026-10-06"}}, name: books it}
then:
  - contians: "Reservado"
""")
    result = lint_paths([tmp_path / "three.yaml"])
    got = [(d.span.line, d.code) for d in result.diagnostics
           if d.span.file.endswith("three.yaml")]
    assert got == [(2, "E203"), (7, "S103"), (10, "E232"), (12, "S101")], got
    messages = {d.code: d.message for d in result.diagnostics}
    assert messages["S103"] == ("'always' of the check in item 1 of turn 1's then must be "
                                "true or false, not text (\"yes please\")")
    assert messages["E232"] == ("the tool 'book_appointment' has no argument 'dat'; did you "
                                "mean 'date'?")


def test_a_line_of_each_age_reads_back_with_its_failure_and_its_kind() -> None:
    line = {"schema_version": 1, "scenario": "s", "target": "t", "run": 1, "status": "fail",
            "reason": "reached max_steps (6 model calls) without a text answer",
            "checks": [], "error": None}
    # a line of issue 12's time: the loop's words only
    old = record_from_json({**line, "failure": line["reason"]})
    assert (old.failure, old.failure_kind) == (line["reason"], "max_steps")
    confirm = record_from_json({**line, "failure": "turn 2: the person confirms x, but no "
                                                   "call is waiting for confirmation"})
    assert confirm.failure_kind == "nothing_to_confirm"
    # a line of today: both, written as they are
    now = record_from_json({**line, "failure": "the server could not parse it",
                            "failure_kind": "model_output"})
    assert now.failure_kind == "model_output"
    assert record_json(now)["failure_kind"] == "model_output"
    # a line from before either: no failure at all
    assert record_from_json(line).failure_kind is None
    assert "failure_kind" not in record_json(record_from_json(line))


def test_nothing_to_confirm_is_explained_in_plain_words(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "sábados", "replies": [{"text": "Listo."}]}]})
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, defaults={"target": "fake"}))
    write(tmp_path / "confirm.yaml", """\
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [set_business_hours]
when:
  - "Los sábados cerramos. Cambialo."
  - confirm: set_business_hours
then:
  - non_empty
runs: 1
min_pass: 1
""")
    r = run_cli("run", ".", "--out", "runs", cwd=tmp_path)
    assert r.exit_code == 1
    assert ("      ! nothing_to_confirm ×1: The scenario has the person confirm or cancel a "
            "call, but the agent had not asked for anything to be confirmed this time, so the "
            "conversation stopped there; it counts as a failed attempt.") in r.output.splitlines()
    (run_dir,) = (tmp_path / "runs").iterdir()
    (rec,) = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    assert rec["failure"] == ("turn 2: the person confirms set_business_hours, but no call "
                              "is waiting for confirmation")
    assert rec["failure_kind"] == "nothing_to_confirm"


def test_compile_check_is_the_one_way_an_item_becomes_a_check(
        tmp_path: Path, server: FakeServer) -> None:
    from dsl.compiler.compile import compile_document
    from dsl.source.load import read_file

    write(tmp_path / "twice.yaml", TWICE)
    diags = Collector()
    scenario = compile_document(read_file(tmp_path / "twice.yaml", "twice.yaml"), None,
                                tmp_path, diags)
    assert scenario is None  # book_appointment is the suite's: without one, E201
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    from dsl.compiler.compile import compile_paths

    compiled = compile_paths([tmp_path / "twice.yaml"])
    (s,) = compiled.scenarios
    assert [(c.label, c.turn, c.always, c.named, c.item.at) for c in s.all_checks] == [
        ("turn 1 · books it", 1, False, True, ("when", 0, "then", 0)),
        ("turn 2 · never books twice", 2, True, True, ("when", 1, "then", 0))]
    assert s.always
