"""``scenarist conformance``: the built-in canonical cases through the real CLI, against the
scripted server process (an endpoint that conforms, one that never calls tools, one that
writes invalid JSON arguments, one that ignores tool results, one that errors), the
baseline's regression list, --with, --list, record and replay, the exit codes, and the
recorded real model's cassettes replayed as docs/conformance.md reports them."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from dsl.compiler.lint import lint_paths
from dsl.results.conformance import CASES_DIR
from tests.conftest import REPO, FakeServer, run_cli, suite_yaml, write

BUILTIN = ["conformance.chat", "conformance.arithmetic", "conformance.tool_call",
           "conformance.no_tool", "conformance.json_answer", "conformance.tool_result",
           "conformance.language"]

CERTIFIES = {
    "conformance.chat": "A plain chat message gets a non-empty reply.",
    "conformance.arithmetic": '"What is 2 + 2?" is answered with 4.',
    "conformance.tool_call": "The one fitting tool is called, with arguments that fit its "
                             "schema.",
    "conformance.no_tool": "No tool is called when none fits.",
    "conformance.json_answer": "Asked for JSON only, the answer parses as JSON.",
    "conformance.tool_result": "A tool's result is carried into the answer.",
    "conformance.language": "A question in Spanish is answered in Spanish.",
}

# An endpoint that does everything right: each rule answers one built-in case.
CONFORMING: dict[str, Any] = {"rules": [
    {"match": "Hello!", "replies": [{"text": "I am a helpful assistant."}]},
    {"match": "2 + 2", "replies": [{"text": "2 + 2 = 4."}]},
    {"match": "weather", "replies": [
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"text": "It is cloudy and 14 °C in Paris."}]},
    {"match": "poem", "replies": [{"text": "The sea sings to the patient shore."}]},
    {"match": "JSON", "replies": [{"text": '{"name": "Ana", "age": 30}'}]},
    {"match": "tracking code", "replies": [
        {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "A-1042"}}]},
        {"text": "Your tracking code is ZX-4815-1623."}]},
    {"match": "cielo", "replies": [{"text": "El cielo es azul."}]},
    {"match": "refund", "replies": [{"text": "Refunds take 5 days."}]},  # a team's case
]}


def replacing(**replies: list[dict[str, Any]]) -> dict[str, Any]:
    """CONFORMING with the replies of some rules replaced (named by their match, with
    underscores for spaces)."""
    script = copy.deepcopy(CONFORMING)
    for r in script["rules"]:
        r["replies"] = replies.get(r["match"].replace(" ", "_"), r["replies"])
    return script


NEVER_CALLS_TOOLS = replacing(weather=[{"text": "It is sunny in Paris."}],
                              tracking_code=[{"text": "I cannot look orders up."}])
INVALID_ARGUMENTS = replacing(weather=[
    {"tool_calls": [{"name": "get_weather", "arguments": "{city: Paris"}]},
    {"text": "It is cloudy in Paris."}])
IGNORES_RESULTS = replacing(tracking_code=[
    {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "A-1042"}}]},
    {"text": "Your order A-1042 has been shipped."}])
ERRORS = {"rules": [], "default": [{"status": 500, "body": "<html>Internal error</html>"}]}


def conformance_suite(tmp_path: Path, server: FakeServer, **extra: Any) -> Path:
    targets = {"fake": {"kind": "openai", "base_url": server.url, "model": "fake-model",
                        "timeout_ms": 5000, "retry": {"max_attempts": 1}},
               **extra.pop("targets", {})}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets, history=False,
                                                  **extra))
    return tmp_path


def conformance(cwd: Path, *args: str) -> Any:
    return run_cli("conformance", *args, cwd=cwd)


ROW = re.compile(r"^(  \S+\s+(?:certified|not certified|inconclusive)\s+\d+/\d+\s+\d+)"
                 r"\s+(?:[\d,]+|–)\s+(?:[\d,]+|–)(  .*)$")


def table(output: str) -> str:
    """The conformance table, its latencies (which vary) replaced by p50 and p95."""
    start = output.index("Conformance of ")
    text = output[start:output.index("\n", output.index("\nConclusion: ", start) + 1)]
    text = re.sub(r"p50 [\d,]+ ms, p95 [\d,]+ ms", "p50 N ms, p95 N ms", text)
    return "\n".join(ROW.sub(r"\1  p50  p95\2", line) for line in text.splitlines())


def rows(statuses: dict[str, str], passed: dict[str, str] | None = None) -> str:
    """The table's rows, every case certified with 10/10 except those named."""
    passed = passed or {}
    return "\n".join(
        f"  {case:<23}  {statuses.get(case, 'certified'):<13}  "
        f"{passed.get(case, '10/10'):>6}    9  p50  p95  {CERTIFIES[case]}"
        for case in BUILTIN)


HEADER = ("  case                     status         passed  min   p50 ms   p95 ms  "
          "certifies")


def the_run(out: Path) -> Path:
    (run_dir,) = [d for d in out.iterdir() if d.is_dir()]
    return run_dir


def certificate(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "conformance.json").read_text())
    return data


# ---- the built-in cases ------------------------------------------------------------------

def test_the_builtin_cases_lint_clean_and_each_states_what_it_certifies() -> None:
    result = lint_paths([CASES_DIR])
    assert [d.message for d in result.diagnostics] == []
    assert result.files == 7
    for f in sorted(CASES_DIR.glob("*.yaml")):
        text = f.read_text("utf-8")
        assert "\nruns: 10\nmin_pass: 9\n" in text, f
        assert "\ndescription: " in text, f


def test_list_prints_the_cases_without_a_suite(tmp_path: Path, cli_env: Any) -> None:
    r = conformance(tmp_path, "--list")
    assert r.exit_code == 0, r.output
    assert r.output == (
        "case                     runs  min_pass  certifies\n"
        + "".join(f"{c:<23}    10         9  {CERTIFIES[c]}\n" for c in BUILTIN)
        + f"\n7 built-in cases (in {CASES_DIR}); a case is certified when at least "
          "min_pass of its runs pass.\n")


def test_list_with_a_teams_cases_and_runs(tmp_path: Path, server: FakeServer,
                                          cli_env: Any) -> None:
    conformance_suite(tmp_path, server)
    write(tmp_path / "canon" / "refund.yaml", """
        id: team.refund
        description: The refund policy is stated.
        given:
          at: 2026-09-29T10:00:00-03:00
          tools: [list_business_hours]
        when: How long does a refund take?
        then: [{contains: "5 days"}]
        runs: 5
        min_pass: 4
        """)
    r = conformance(tmp_path, "--list", "--with", "canon", "--runs", "4")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[1] == f"conformance.chat            4         4  {CERTIFIES['conformance.chat']}"
    assert lines[8] == ("team.refund                 4         4  The refund policy is stated.  "
                        "(canon/refund.yaml)")
    assert lines[-1] == (f"7 built-in cases (in {CASES_DIR}) and 1 of yours; a case is "
                         "certified when at least min_pass of its runs pass.")


# ---- endpoints ---------------------------------------------------------------------------

def test_a_conforming_endpoint_is_certified(tmp_path: Path, server: FakeServer,
                                            cli_env: Any) -> None:
    conformance_suite(tmp_path, server)
    server.script(CONFORMING)
    r = conformance(tmp_path, "--target", "fake", "--out", "out")
    assert r.exit_code == 0, r.output
    assert table(r.output) == "\n".join([
        f"Conformance of fake (fake-model at {server.url}):", HEADER, rows({}),
        "Tool calls: F1 100% (precision 100%, recall 100%; 20 right, 0 wrong, 0 missed)",
        "Latency per attempt: p50 N ms, p95 N ms (over 70 attempts)",
        "Conclusion: fake conforms: all 7 behaviours certified."])
    run_dir = the_run(tmp_path / "out")
    # a normal run: every planned attempt ran (no early stop), with its artifacts
    for name in ("results.jsonl", "summary.json", "report.html", "junit.xml", "plan.json",
                 "run.json"):
        assert (run_dir / name).is_file(), name
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == 70
    assert (run_dir / "junit.xml").read_text().count("<testcase ") == 7
    cert = certificate(run_dir)
    assert cert["certified"] is True
    assert cert["target"] == "fake"
    assert cert["endpoint"] == f"fake-model at {server.url}"
    assert [b["case"] for b in cert["behaviours"]] == BUILTIN
    assert {b["status"] for b in cert["behaviours"]} == {"certified"}
    assert all(b["builtin"] for b in cert["behaviours"])
    assert cert["tool_calls"] == {"tp": 20, "fp": 0, "fn": 0, "tn": 10, "precision": 1.0,
                                  "recall": 1.0, "f1": 1.0}
    assert cert["latency_ms"]["attempts"] == 70
    assert cert["latency_ms"]["p50"] <= cert["latency_ms"]["p95"]
    assert cert["baseline"] is None
    settings = json.loads((run_dir / "run.json").read_text())["settings"]
    assert settings["early_stop"] is False
    assert [Path(p).name for p in settings["extra_files"]] == sorted(
        f.name for f in CASES_DIR.glob("*.yaml"))


def test_an_endpoint_that_never_calls_tools(tmp_path: Path, server: FakeServer,
                                            cli_env: Any) -> None:
    conformance_suite(tmp_path, server)
    server.script(NEVER_CALLS_TOOLS)
    r = conformance(tmp_path, "--target", "fake", "--out", "out")
    assert r.exit_code == 1, r.output
    assert table(r.output) == "\n".join([
        f"Conformance of fake (fake-model at {server.url}):", HEADER,
        rows({"conformance.tool_call": "not certified",
              "conformance.tool_result": "not certified"},
             {"conformance.tool_call": "0/10", "conformance.tool_result": "0/10"}),
        "Tool calls: F1 0% (precision 100%, recall 0%; 0 right, 0 wrong, 20 missed)",
        "Latency per attempt: p50 N ms, p95 N ms (over 70 attempts)",
        "Conclusion: fake does not conform: 2 of 7 behaviours not certified "
        "(conformance.tool_call, conformance.tool_result)."])
    assert "      ✗ calls_only: [\"get_weather\"]  (failed 10 of 10)" in r.output


def test_an_endpoint_that_writes_invalid_json_arguments(tmp_path: Path, server: FakeServer,
                                                        cli_env: Any) -> None:
    conformance_suite(tmp_path, server)
    server.script(INVALID_ARGUMENTS)
    r = conformance(tmp_path, "--target", "fake", "--out", "out")
    assert r.exit_code == 1, r.output
    assert table(r.output) == "\n".join([
        f"Conformance of fake (fake-model at {server.url}):", HEADER,
        rows({"conformance.tool_call": "not certified"}, {"conformance.tool_call": "0/10"}),
        # the right tool was called: the figures count names; valid_args fails the case
        "Tool calls: F1 100% (precision 100%, recall 100%; 20 right, 0 wrong, 0 missed)",
        "Latency per attempt: p50 N ms, p95 N ms (over 70 attempts)",
        "Conclusion: fake does not conform: 1 of 7 behaviours not certified "
        "(conformance.tool_call)."])
    assert "      ✗ valid_args  (failed 10 of 10)" in r.output
    records = [json.loads(line) for line in
               (the_run(tmp_path / "out") / "results.jsonl").read_text().splitlines()]
    record = next(r for r in records if r["scenario"] == "conformance.tool_call")
    valid_args = next(c for c in record["checks"] if c["check"] == "valid_args")
    assert valid_args["reason"] == ("the arguments of the call to get_weather are not valid "
                                    "JSON: '{city: Paris'")


def test_an_endpoint_that_ignores_tool_results(tmp_path: Path, server: FakeServer,
                                               cli_env: Any) -> None:
    conformance_suite(tmp_path, server)
    server.script(IGNORES_RESULTS)
    r = conformance(tmp_path, "--target", "fake", "--out", "out")
    assert r.exit_code == 1, r.output
    assert table(r.output) == "\n".join([
        f"Conformance of fake (fake-model at {server.url}):", HEADER,
        rows({"conformance.tool_result": "not certified"},
             {"conformance.tool_result": "0/10"}),
        "Tool calls: F1 100% (precision 100%, recall 100%; 20 right, 0 wrong, 0 missed)",
        "Latency per attempt: p50 N ms, p95 N ms (over 70 attempts)",
        "Conclusion: fake does not conform: 1 of 7 behaviours not certified "
        "(conformance.tool_result)."])
    assert '      ✗ contains: "ZX-4815-1623"  (failed 10 of 10)' in r.output


def test_an_endpoint_that_errors_is_inconclusive(tmp_path: Path, server: FakeServer,
                                                 cli_env: Any) -> None:
    conformance_suite(tmp_path, server)
    server.script(ERRORS)
    r = conformance(tmp_path, "--target", "fake", "--out", "out")
    assert r.exit_code == 3, r.output
    cert = certificate(the_run(tmp_path / "out"))
    errors = cert["errors"]["status"]
    assert table(r.output) == "\n".join([
        f"Conformance of fake (fake-model at {server.url}):", HEADER,
        rows(dict.fromkeys(BUILTIN, "inconclusive"), dict.fromkeys(BUILTIN, "0/0")),
        "Tool calls: nothing to count (no attempt of a case that expects a tool call, or "
        "none, reached the endpoint)",
        "Latency per attempt: no attempt reached the endpoint",
        f"Endpoint errors: {errors} (status ×{errors})",
        f"Conclusion: fake is not certified: all 7 behaviours are inconclusive because "
        f"{errors} attempts ended in an endpoint error; run it again once the endpoint "
        "answers."])
    assert cert["certified"] is False
    assert {b["status"] for b in cert["behaviours"]} == {"inconclusive"}


# ---- baseline, record and replay ----------------------------------------------------------

def test_baseline_lists_the_cases_that_regressed(tmp_path: Path, server: FakeServer,
                                                 cli_env: Any) -> None:
    conformance_suite(tmp_path, server)
    server.script(CONFORMING)
    assert conformance(tmp_path, "--target", "fake", "--out", "before").exit_code == 0
    before = the_run(tmp_path / "before")

    same = conformance(tmp_path, "--target", "fake", "--out", "same", "--baseline",
                       str(before))
    assert same.exit_code == 0, same.output
    assert f"\nRegressions against {before.name}: none (7 unchanged)\n" in same.output
    assert certificate(the_run(tmp_path / "same"))["baseline"] == {
        "run_id": before.name, "regressed": [], "counts": {"unchanged": 7}}

    server.script(INVALID_ARGUMENTS)
    worse = conformance(tmp_path, "--target", "fake", "--out", "worse", "--baseline",
                        str(before))
    assert worse.exit_code == 1, worse.output
    text = table(worse.output)
    assert (f"\nRegressions against {before.name}: 1 (1 regressed, 6 unchanged)\n"
            "  ▼ conformance.tool_call  10/10 100% (72–100%) → 0/10 0% (0–28%)  −100 pts "
            "(95% CI −100 to −61)\n") in text
    assert certificate(the_run(tmp_path / "worse"))["baseline"]["regressed"] == [
        "conformance.tool_call"]
    # the run's own summary keeps the comparison, as run --baseline does
    summary = json.loads((the_run(tmp_path / "worse") / "summary.json").read_text())
    assert summary["baseline"]["counts"]["regressed"] == 1


def test_baseline_must_be_a_conformance_run(tmp_path: Path, server: FakeServer,
                                            cli_env: Any) -> None:
    conformance_suite(tmp_path, server)
    write(tmp_path / "hello.yaml", """
        given: {at: "2026-09-29T10:00:00-03:00"}
        when: Hello!
        then: [non_empty]
        """)
    server.script(CONFORMING)
    assert run_cli("run", "hello.yaml", "--out", "plain", cwd=tmp_path).exit_code == 0
    plain = the_run(tmp_path / "plain")
    r = conformance(tmp_path, "--target", "fake", "--out", "out", "--baseline", str(plain))
    assert r.exit_code == 2
    assert r.output == (f"error: --baseline {plain} is not a conformance run (it has no "
                        "conformance.json); give the folder of an earlier scenarist "
                        "conformance run\n")
    assert not (tmp_path / "out").exists()


def test_record_then_replay_offline_and_deterministically(tmp_path: Path, server: FakeServer,
                                                          cli_env: Any) -> None:
    conformance_suite(tmp_path, server, targets={
        "replayed": {"kind": "replay", "cassette": "cassettes/fake.jsonl"}})
    server.script(NEVER_CALLS_TOOLS)
    live = conformance(tmp_path, "--target", "fake", "--out", "live", "--record",
                       "cassettes/fake.jsonl")
    assert live.exit_code == 1, live.output
    assert "Recorded 70 exchanges into cassettes/fake.jsonl." in live.output
    server.script(ERRORS)  # the endpoint is broken now: a replay never asks it
    replays = []
    for out in ("replay1", "replay2"):
        r = conformance(tmp_path, "--target", "replayed", "--out", out, "--baseline",
                        str(the_run(tmp_path / "live")))
        assert r.exit_code == 1, r.output
        replays.append(r)
    assert server.requests() == []
    expected = table(live.output).replace("Conformance of fake (fake-model at "
                                          f"{server.url}):", "Conformance of replayed "
                                          f"(replay of {tmp_path.resolve()}/cassettes/"
                                          "fake.jsonl):")
    expected = expected.replace("Conclusion: fake", "Conclusion: replayed")
    live_id = the_run(tmp_path / "live").name
    expected = expected.replace("\nConclusion:", f"\nRegressions against {live_id}: none "
                                                 "(7 unchanged)\nConclusion:")
    assert table(replays[0].output) == expected
    assert table(replays[1].output) == expected

    def stable(run: str) -> list[Any]:
        cert = certificate(the_run(tmp_path / run))
        return [{k: v for k, v in b.items() if k != "latency_ms"} for b in cert["behaviours"]]

    assert stable("replay1") == stable("replay2") == stable("live")


# ---- --with, --runs and mistakes ---------------------------------------------------------

TEAM_CASE = """
    id: team.refund
    description: The refund policy is stated.
    given:
      at: 2026-09-29T10:00:00-03:00
      tools: [list_business_hours]
    when: How long does a refund take?
    then:
      - not_calls: list_business_hours
      - contains: "{text}"
    runs: 5
    min_pass: 4
    """


def test_with_adds_a_teams_cases(tmp_path: Path, server: FakeServer, cli_env: Any) -> None:
    conformance_suite(tmp_path, server, exclude=["canon/**"])  # kept out of everyday runs
    write(tmp_path / "canon" / "refund.yaml", TEAM_CASE.format(text="5 days"))
    write(tmp_path / "canon" / "refund_strict.yaml",
          TEAM_CASE.format(text="14 days").replace("team.refund", "team.refund_strict"))
    server.script(CONFORMING)
    r = conformance(tmp_path, "--target", "fake", "--out", "out", "--with", "canon")
    assert r.exit_code == 1, r.output
    text = table(r.output)
    assert ("\n  team.refund              certified         5/5    4  p50  p95  The refund "
            "policy is stated.\n  team.refund_strict       not certified     0/5    4  p50  "
            "p95  The refund policy is stated.\n") in text
    assert text.endswith("Conclusion: fake does not conform: 1 of 9 behaviours not certified "
                         "(team.refund_strict).")
    cert = certificate(the_run(tmp_path / "out"))
    assert [(b["case"], b["builtin"]) for b in cert["behaviours"][-2:]] == [
        ("team.refund", False), ("team.refund_strict", False)]


def test_with_refuses_the_cases_of_another_suite_and_an_empty_folder(
        tmp_path: Path, server: FakeServer, cli_env: Any) -> None:
    conformance_suite(tmp_path / "mine", server)
    write(tmp_path / "theirs" / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "theirs" / "refund.yaml", TEAM_CASE.format(text="5 days"))
    (tmp_path / "mine" / "empty").mkdir()
    r = conformance(tmp_path / "mine", "--target", "fake", "--with", "../theirs")
    assert r.exit_code == 2
    assert r.output == (
        "error E211 --with ../theirs: ../theirs/refund.yaml belongs to the suite "
        f"{tmp_path.resolve() / 'theirs' / 'scenarist.yaml'}, not to scenarist.yaml\n"
        "  hint: run scenarist conformance from the folder of the suite the cases are "
        "written for\n")
    r = conformance(tmp_path / "mine", "--target", "fake", "--with", "empty")
    assert r.exit_code == 2
    assert r.output == ("error E212 --with empty: no scenario files (*.yaml) there\n"
                        "  hint: give a scenario file, or a folder that holds some\n")
    assert server.requests() == []


def test_runs_scales_min_pass(tmp_path: Path, server: FakeServer, cli_env: Any) -> None:
    conformance_suite(tmp_path, server)
    server.script(CONFORMING)
    r = conformance(tmp_path, "--target", "fake", "--out", "out", "--runs", "4", "-j", "2")
    assert r.exit_code == 0, r.output
    assert "  conformance.chat         certified         4/4    4  p50  p95  " in table(
        r.output)
    assert len((the_run(tmp_path / "out") / "results.jsonl").read_text().splitlines()) == 28


def test_exit_codes_for_mistakes(tmp_path: Path, server: FakeServer, cli_env: Any) -> None:
    r = conformance(tmp_path, "--target", "fake")
    assert r.exit_code == 2
    assert r.output == (
        "error E210 no scenarist.yaml in the current folder or its parents: the target to "
        "certify is one of a suite's targets\n"
        "  hint: run scenarist conformance from your suite's folder, or create "
        "scenarist.yaml with the target (see docs/conformance.md)\n")
    conformance_suite(tmp_path, server)
    r = conformance(tmp_path)
    assert r.exit_code == 2
    assert r.output.endswith("Error: Missing option '--target': name the target to certify "
                             "(or give --list to see the cases)\n")
    r = conformance(tmp_path, "--target", "fak")
    assert r.exit_code == 2
    assert r.output == ("error E206 there is no target 'fak' in scenarist.yaml; did you mean "
                        "'fake'?\n  hint: the targets are 'fake'\n")
    r = conformance(tmp_path, "--target", "fake", "--with", "missing.yaml")
    assert r.exit_code == 2
    assert "Path 'missing.yaml' does not exist." in r.output
    assert server.requests() == []


def test_a_conformance_run_can_be_rechecked(tmp_path: Path, server: FakeServer,
                                            cli_env: Any) -> None:
    conformance_suite(tmp_path, server)
    server.script(IGNORES_RESULTS)
    assert conformance(tmp_path, "--target", "fake", "--out", "out").exit_code == 1
    run_dir = the_run(tmp_path / "out")
    r = run_cli("recheck", str(run_dir), "--out", str(tmp_path / "rechecked"), cwd=tmp_path)
    assert r.exit_code == 1, r.output
    summary = json.loads((the_run(tmp_path / "rechecked") / "summary.json").read_text())
    assert {row["scenario"]: row["verdict"] for row in summary["scenarios"]} == {
        **dict.fromkeys(BUILTIN, "pass"), "conformance.tool_result": "fail"}


# ---- the recorded real models -------------------------------------------------------------

def documented(model: str) -> dict[str, tuple[str, str]]:
    """docs/conformance.md's table for a model: case → (status, passed)."""
    text = (REPO / "docs" / "conformance.md").read_text("utf-8")
    start = text.index(f"<!-- table: {model} -->")
    block = text[start:text.index("<!-- end -->", start)]
    found = {}
    for line in block.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if cells and cells[0].startswith("conformance."):
            found[cells[0]] = (cells[1].strip("*"), cells[2])
    return found


@pytest.mark.parametrize(("target", "model"), [("qwen05", "qwen2.5-coder-0.5b"),
                                               ("qwen15", "qwen2.5-coder-1.5b")])
def test_the_kept_cassettes_replay_as_documented(tmp_path: Path, target: str, model: str,
                                                 cli_env: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCENARIST_HISTORY", "off")
    suite = tmp_path / "scenarios"
    shutil.copytree(REPO / "scenarios", suite, ignore=shutil.ignore_patterns(
        "runs", ".scenarist", "__pycache__"))
    r = conformance(suite, "--target", target, "--out", str(tmp_path / "out"))
    assert r.exit_code == 1, r.output  # neither small model conforms
    cert = certificate(the_run(tmp_path / "out"))
    assert not any(b["errors"] for b in cert["behaviours"]), r.output  # nothing missing
    replayed = {b["case"]: (b["status"], f"{b['passes']}/{b['decided']}")
                for b in cert["behaviours"]}
    assert replayed == documented(model)


def test_report_and_resume_make_the_certificate_again(tmp_path: Path, server: FakeServer,
                                                      cli_env: Any) -> None:
    conformance_suite(tmp_path, server)
    server.script(CONFORMING)
    assert conformance(tmp_path, "--target", "fake", "--out", "out").exit_code == 0
    run_dir = the_run(tmp_path / "out")
    results = run_dir / "results.jsonl"
    results.write_text("".join(results.read_text().splitlines(keepends=True)[:40]))
    r = run_cli("report", str(run_dir), cwd=tmp_path)
    assert r.exit_code == 0, r.output
    cert = certificate(run_dir)
    assert cert["latency_ms"]["attempts"] == 40
    assert {b["status"] for b in cert["behaviours"]} == {"inconclusive"}  # 30 not run
    assert cert["endpoint"] == f"fake-model at {server.url}"

    r = run_cli("run", "--resume", str(run_dir), cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert table(r.output).endswith("Conclusion: fake conforms: all 7 behaviours certified.")
    assert certificate(run_dir)["latency_ms"]["attempts"] == 70
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == 70
