"""Suites at scale (issue 13) through the real command line against the scripted server
process: cases inline, from CSV and from JSONL, their ids, templates in every place (turns
and check parameters, a tool's answers at each call), ``case.NAME``, attachments of each
kind through the agent loop (the request's content parts), their records, cassette and
report, ``--tag`` and ``-k`` on run, plan and lint, ``targets:`` that skip a target."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeServer, records_of, run_cli, suite_yaml, the_run, write

CSV = ("\ufeffid,question,closes,tags,runs\r\n"
       'es,"¿Hasta qué hora, el sábado?",13:00,,\r\n'
       "\r\n"
       'en,"Until ""when"" on Thursday?",20:00,slow,2\r\n'
       ",,,,\r\n"
       "pt,Até que horas na sexta-feira?,18:00,,\r\n")

HOURS = """
id: clinic.hours
description: "A patient asks in {{ id }} until when the clinic is open."
tags: [clinic]
cases_file: hours.csv
given:
  at: 2026-09-29T10:00:00-03:00
  system: "The patient writes in {{ id }}."
  tools: [list_business_hours]
when: "{{ question }}"
then:
  - calls: list_business_hours
  - contains: "{{ closes }}"
  - expect: "case.closes in answer and case.id != ''"
runs: 3
min_pass: 2
"""

ANSWERS = {"rules": [
    {"match": "sábado", "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
        {"text": "El sábado atendemos hasta las 13:00."}]},
    {"match": "Thursday", "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
        {"text": "Until 20:00 on Thursday."}]},
    {"match": "sexta", "replies": [{"text": "Não sei."}]},
]}


def hours_suite(tmp_path: Path, server: FakeServer, **extra: Any) -> Path:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, **extra))
    write(tmp_path / "hours.yaml", HOURS)
    (tmp_path / "hours.csv").write_bytes(CSV.encode("utf-8"))
    return tmp_path


def summary_of(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "summary.json").read_text())
    return data


def rows(run_dir: Path) -> dict[str, tuple[str, int, int]]:
    return {r["scenario"]: (r["verdict"], r["passes"], r["runs"])
            for r in summary_of(run_dir)["scenarios"]}


def user_texts(server: FakeServer) -> list[str]:
    out = []
    for r in server.requests():
        users = [m for m in r["body"]["messages"] if m["role"] == "user"]
        if len(r["body"]["messages"]) == 2:  # the first request of an attempt
            out.append(users[0]["content"])
    return out


# ---- cases from a CSV file ------------------------------------------------------------------


def test_each_row_of_a_csv_is_a_scenario_with_its_values_in_every_template(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    hours_suite(tmp_path, server)
    server.script(ANSWERS)
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 1, r.output  # pt fails
    run_dir = the_run(tmp_path / "runs")
    assert rows(run_dir) == {
        "clinic.hours[es]": ("pass", 3, 3),
        "clinic.hours[en]": ("pass", 2, 2),  # the row's runs: 2
        "clinic.hours[pt]": ("fail", 0, 3),
    }
    # the BOM, CRLF, the empty line and the row of empty cells are no cases; the quoted
    # comma and the doubled quotes are the values
    assert sorted(set(user_texts(server))) == [
        "Até que horas na sexta-feira?", 'Until "when" on Thursday?',
        "¿Hasta qué hora, el sábado?"]
    first = next(r["body"]["messages"][0]["content"] for r in server.requests()
                 if "sábado" in json.dumps(r["body"]["messages"], ensure_ascii=False))
    assert first.startswith("The patient writes in es.")
    plan = json.loads((run_dir / "plan.json").read_text())
    by_id = {s["id"]: s for s in plan["scenarios"]}
    assert by_id["clinic.hours[en]"]["tags"] == ["slow"]  # the row's tags
    assert by_id["clinic.hours[es]"]["tags"] == ["clinic"]
    assert by_id["clinic.hours[en]"]["description"] == \
        "A patient asks in en until when the clinic is open."
    assert by_id["clinic.hours[pt]"]["case"] == {
        "id": "pt", "number": 3, "file": "hours.csv", "line": 6,
        "values": {"id": "pt", "question": "Até que horas na sexta-feira?",
                   "closes": "18:00", "tags": "", "runs": ""}}
    labels = [c["label"] for c in by_id["clinic.hours[pt]"]["checks"]]
    assert labels == ['calls: "list_business_hours"', 'contains: "18:00"',
                      "expect: case.closes in answer and case.id != ''"]
    pt = next(x for x in records_of(run_dir) if x["scenario"] == "clinic.hours[pt]")
    assert pt["checks"][2]["reason"] == \
        "expected case.closes in answer and case.id != '' to be true; it was false: " \
        "case.closes in answer is false (case.closes = \"18:00\"; answer = \"Não sei.\")"


def test_the_ids_are_the_id_column_or_the_row_number(tmp_path: Path,
                                                     server: FakeServer) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "orders.yaml", """
        cases_file: data/orders.jsonl
        given: {at: "2026-09-29T10:00:00-03:00"}
        when: "¿Dónde está {{ order }}?"
        then:
          - contains: "{{ order }}"
        """)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "orders.jsonl").write_bytes(
        b'\xef\xbb\xbf{"order": "A-1"}\r\n\r\n{"order": "A-2", "id": "second"}\n'
        b'   \n{"order": "A-3"}\n')
    r = run_cli("plan", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[:4] == [
        "scenario        runs  min_pass  max_steps  checks  most calls",
        "orders[1]          3         2          6       1          18",
        "orders[second]     3         2          6       1          18",
        "orders[3]          3         2          6       1          18"]


def test_inline_cases_template_turns_check_parameters_and_a_tools_answers(
        tmp_path: Path, server: FakeServer) -> None:
    """Templates in a conversation's turns, in a check's parameters, and in what a fake
    tool answers (at each call, beside the call's own args)."""
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "book.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools:
            - name: book
              description: Book an appointment.
              input_schema: {type: object, properties: {date: {type: string}}}
              action: create
              confirm: true
              returns: "{{ patient }} booked on {{ args.date }}."
        when:
          - say: "Soy {{ patient }}, quiero un turno el {{ date }}."
            then:
              - asks_to_confirm: book
          - confirm: book
            then:
              - contains: "{{ patient }}"
        then:
          - calls: {name: book, args: {date: "{{ date }}"}, times: 1}
        cases:
          - {id: ana, patient: Ana, date: "2026-10-06"}
          - {id: jose, patient: José, date: "2026-10-07"}
        runs: 1
        min_pass: 1
        """)
    server.script({"rules": [{"match": "turno", "replies": [
        {"tool_calls": [{"name": "book", "arguments": {"date": "2026-10-06"}}]},
        {"text": "Listo, Ana."}]}]})
    r = run_cli("run", ".", cwd=tmp_path)
    run_dir = the_run(tmp_path / "runs")
    assert rows(run_dir) == {"book[ana]": ("pass", 1, 1), "book[jose]": ("fail", 0, 1)}, \
        r.output
    recs = {x["scenario"]: x for x in records_of(run_dir)}
    assert recs["book[ana]"]["calls"][0]["output"] == "Ana booked on 2026-10-06."
    assert recs["book[jose]"]["calls"][0]["output"] == "José booked on 2026-10-06."
    failed = [c for c in recs["book[jose]"]["checks"] if c["status"] == "fail"]
    assert [c["label"] for c in failed] == ['turn 2 · contains: "José"',
                                            'calls: {"name": "book", "args": {"date": '
                                            '"2026-10-07"}, "times": 1}']
    said = [m["content"] for m in recs["book[jose]"]["messages"] if m["role"] == "user"]
    assert said == ["Soy José, quiero un turno el 2026-10-07."]


# ---- selecting what runs ------------------------------------------------------------------


def test_tag_and_k_select_alike_in_run_plan_and_lint(tmp_path: Path, server: FakeServer,
                                                      cli_env: dict[str, str]) -> None:
    hours_suite(tmp_path, server)
    write(tmp_path / "greeting.yaml", """
        id: clinic.greeting
        tags: [smoke, clinic]
        given: {at: "2026-09-29T10:00:00-03:00"}
        when: Hola
        then: [non_empty]
        """)
    server.script({"rules": [], "default": [{"text": "Hola"}]})

    def planned(*flags: str) -> list[str]:
        r = run_cli("plan", ".", *flags, cwd=tmp_path)
        assert r.exit_code == 0, r.output
        return [line.split()[0] for line in r.output.splitlines()[1:] if line.strip()
                and not line.startswith(("scenario", "--", "-k")) and "×" not in line]

    assert planned("--tag", "smoke") == ["clinic.greeting"]
    assert planned("--tag", "slow", "--tag", "smoke") == ["clinic.greeting",
                                                          "clinic.hours[en]"]
    assert planned("--tag", "clinic", "--tag", "!smoke") == ["clinic.hours[es]",
                                                             "clinic.hours[pt]"]
    assert planned("-k", "hours[e") == ["clinic.hours[es]", "clinic.hours[en]"]  # substring
    assert planned("-k", "CLINIC.*[ep]?]") == ["clinic.hours[es]", "clinic.hours[en]",
                                                "clinic.hours[pt]"]  # glob, any case
    assert planned("-k", "greet", "-k", "pt") == ["clinic.greeting", "clinic.hours[pt]"]
    r = run_cli("plan", ".", "--tag", "slow", cwd=tmp_path)
    assert r.output.splitlines()[-1] == "--tag slow selected 1 of 4 scenarios"

    r = run_cli("run", ".", "--tag", "smoke", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert list(rows(the_run(tmp_path / "runs"))) == ["clinic.greeting"]
    assert len(server.requests()) == 3  # 3 runs of one scenario, one request each

    r = run_cli("lint", ".", "--tag", "smoke", cwd=tmp_path)
    assert (r.exit_code, r.output) == (0, "2 file(s): 0 error(s), 0 warning(s)\n")

    nothing = ("error E220 --tag nope -k 'x*' selects none of the 4 scenarios found\n"
               "  hint: check the tag or the pattern: scenarist plan lists every scenario's "
               "id; -k matches part of an id, or a glob such as 'clinic.*'\n")
    for command in ("run", "plan", "lint"):
        r = run_cli(command, ".", "--tag", "nope", "-k", "x*", cwd=tmp_path)
        assert (command, r.exit_code) == (command, 2)
        assert r.output.endswith(nothing) if command != "lint" else \
            r.output == nothing + "2 file(s): 1 error(s), 0 warning(s)\n"


def test_a_broken_file_the_selection_leaves_out_is_not_reported(tmp_path: Path,
                                                                server: FakeServer) -> None:
    hours_suite(tmp_path, server)
    write(tmp_path / "broken.yaml", "given: {at: 2026-09-29T10:00:00-03:00}\nwhen: hi\n"
                                    "then: [contians]\n")
    assert run_cli("lint", ".", cwd=tmp_path).exit_code == 1
    r = run_cli("lint", ".", "-k", "hours", cwd=tmp_path)
    assert (r.exit_code, r.output) == (0, "2 file(s): 0 error(s), 0 warning(s)\n")
    assert run_cli("plan", ".", "-k", "hours", cwd=tmp_path).exit_code == 0


def test_resume_keeps_the_selection(tmp_path: Path, server: FakeServer) -> None:
    hours_suite(tmp_path, server)
    server.script(ANSWERS)
    r = run_cli("run", ".", "-k", "[es]", "--max-calls", "2", cwd=tmp_path)
    run_dir = the_run(tmp_path / "runs")
    settings = json.loads((run_dir / "run.json").read_text())["settings"]
    assert (settings["tags"], settings["patterns"]) == ([], ["[es]"])
    r = run_cli("run", "--resume", str(run_dir), cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert list(rows(run_dir)) == ["clinic.hours[es]"]


def test_targets_skip_the_others_shown_as_skipped_not_failed(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    targets = {name: {"kind": "openai", "base_url": server.url, "model": name,
                      "timeout_ms": 5000, "retry": {"max_attempts": 1}}
               for name in ("small", "big")}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets))
    write(tmp_path / "hard.yaml", """
        id: hard
        targets: [big]
        given: {at: "2026-09-29T10:00:00-03:00"}
        when: Hola
        then: [non_empty]
        runs: 1
        min_pass: 1
        """)
    write(tmp_path / "easy.yaml", """
        id: easy
        given: {at: "2026-09-29T10:00:00-03:00"}
        when: Buen día
        then: [non_empty]
        runs: 1
        min_pass: 1
        """)
    server.script({"rules": [], "default": [{"text": "Hola"}]})
    r = run_cli("plan", ".", "-t", "small", "-t", "big", cwd=tmp_path)
    assert r.output.splitlines() == [
        "scenario  runs  min_pass  max_steps  checks  most calls  skips",
        "easy         1         1          6       1          12",
        "hard         1         1          6       1           6  small",
        "",
        "2 scenarios × 2 target(s) [small (small at " + server.url + "), big (big at "
        + server.url + ")] = 3 attempts; at most 18 model calls",
        "1 scenario × target pair(s) skipped: the scenario's targets: leave the target out"]
    r = run_cli("run", ".", "-t", "small", "-t", "big", cwd=tmp_path)
    assert r.exit_code == 0, r.output  # skipped is not failed
    assert "SKIP  hard  small  the scenario is meant for big\n" in r.output
    assert "3/3 passed · 1 skipped · 3 attempts" in r.output
    assert sorted(x["body"]["model"] for x in server.requests()) == ["big", "big", "small"]
    run_dir = the_run(tmp_path / "runs")
    summary = summary_of(run_dir)
    assert summary["skipped"] == [{"scenario": "hard", "target": "small", "file": "hard.yaml",
                                   "line": 1, "description": "", "tags": [],
                                   "reason": "the scenario is meant for big"}]
    assert summary["totals"]["skipped"] == 1
    junit = ET.parse(run_dir / "junit.xml").getroot()
    assert junit.get("skipped") == "1"
    assert junit.get("tests") == "4"
    (case,) = [c for c in junit.iter("testcase") if c.find("skipped") is not None]
    assert (case.get("name"), case.get("classname")) == ("hard", "small")
    assert "Skipped (meant for other targets): `hard` on `small`." in \
        (run_dir / "summary.md").read_text()
    html = (run_dir / "report.html").read_text()
    assert '<h3 id="skipped">Skipped (1)</h3>' in html
    assert ("<tr><td><code>hard</code></td><td>small</td><td><span class=\"badge "
            "b-skipped\">skipped</span> the scenario is meant for big</td></tr>") in html


# ---- attachments ----------------------------------------------------------------------------

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAwMDAwMAAAAfvAQA"
    "bYeLcAAAAAElFTkSuQmCC")
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11" \
       b"\x88\x88\xfe\x07\x00"

ATTACHED = """
id: receipt
given:
  at: 2026-09-29T10:00:00-03:00
  attachments:
    - {path: files/receipt.png, kind: image}
    - {path: files/notes.txt, kind: file, label: the patient's notes}
when:
  - say: "¿Me reintegran esta factura?"
  - say: "Y esta otra, de la farmacia."
    attachments:
      - {path: files/pharmacy.jpg, kind: image}
      - {path: files/scan.webp, kind: image, label: scan}
then:
  - non_empty
runs: 1
min_pass: 1
"""


def attachment_suite(tmp_path: Path, url: str, **extra: Any) -> Path:
    write(tmp_path / "scenarist.yaml", suite_yaml(url, **extra))
    write(tmp_path / "receipt.yaml", ATTACHED)
    files = tmp_path / "files"
    files.mkdir()
    (files / "receipt.png").write_bytes(PNG)
    (files / "notes.txt").write_text("Alergias: ninguna.\nÚltima visita: 2026-03-02.\n",
                                     "utf-8")
    (files / "pharmacy.jpg").write_bytes(JPEG)
    (files / "scan.webp").write_bytes(WEBP)
    return tmp_path


def data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def test_attachments_go_to_the_model_as_content_parts_and_records_keep_references(
        tmp_path: Path, server: FakeServer) -> None:
    attachment_suite(tmp_path, server.url)
    server.script({"rules": [], "default": [{"text": "Sí, se reintegra."}]})
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    first, second = server.requests()
    notes = "Alergias: ninguna.\nÚltima visita: 2026-03-02.\n"
    assert first["body"]["messages"][1] == {"role": "user", "content": [
        {"type": "text", "text": "¿Me reintegran esta factura?"},
        {"type": "image_url", "image_url": {"url": data_url("image/png", PNG)}},
        {"type": "text", "text": f"Attached file: the patient's notes\n\n{notes}"}]}
    assert second["body"]["messages"][3] == {"role": "user", "content": [
        {"type": "text", "text": "Y esta otra, de la farmacia."},
        {"type": "image_url", "image_url": {"url": data_url("image/jpeg", JPEG)}},
        {"type": "image_url", "image_url": {"url": data_url("image/webp", WEBP)}}]}
    assert second["body"]["messages"][1] == first["body"]["messages"][1]  # sent again
    run_dir = the_run(tmp_path / "runs")
    (rec,) = records_of(run_dir)
    sha = hashlib.sha256(PNG).hexdigest()
    assert rec["messages"][1]["content"][1] == {
        "type": "attachment", "path": "files/receipt.png", "kind": "image",
        "mime_type": "image/png", "label": "receipt.png", "sha256": sha, "size": len(PNG)}
    line = (run_dir / "results.jsonl").read_text()
    assert "base64" not in line
    assert "Alergias" not in line
    kept = sorted(p.name for p in (run_dir / "attachments").iterdir())
    assert kept == sorted(hashlib.sha256(x).hexdigest()
                          for x in (PNG, JPEG, WEBP, notes.encode()))
    plan = json.loads((run_dir / "plan.json").read_text())
    assert [a["label"] for a in plan["scenarios"][0]["attachments"]] == [
        "receipt.png", "the patient's notes"]
    assert [a["label"] for a in plan["scenarios"][0]["turns"][1]["attachments"]] == [
        "pharmacy.jpg", "scan"]


def test_the_report_shows_images_as_thumbnails_and_text_files_collapsed(
        tmp_path: Path, server: FakeServer) -> None:
    attachment_suite(tmp_path, server.url)
    server.script({"rules": [], "default": [{"text": "Sí."}]})
    run_cli("run", ".", cwd=tmp_path)
    html = (the_run(tmp_path / "runs") / "report.html").read_text()
    blob = json.loads(re.search(r'<script type="application/json" id="attempts-0">(.*?)'
                                r"</script>", html, re.S).group(1))  # type: ignore[union-attr]
    sha = hashlib.sha256(PNG).hexdigest()
    assert blob["files"][sha] == data_url("image/png", PNG)
    text_sha = hashlib.sha256(b"Alergias: ninguna.\n\xc3\x9altima visita: 2026-03-02.\n")
    assert blob["files"][text_sha.hexdigest()].startswith("Alergias: ninguna.")
    events = blob["attempts"][0][9]
    strings = blob["strings"]

    def text(v: Any) -> Any:
        return strings[v] if isinstance(v, int) else v

    kinds = [[text(x) for x in e] for e in events if e[0] in ("I", "F")]
    assert kinds == [
        ["I", "receipt.png", "image/png", sha, "files/receipt.png"],
        ["F", "the patient's notes", text_sha.hexdigest(), "files/notes.txt"],
        ["I", "pharmacy.jpg", "image/jpeg", hashlib.sha256(JPEG).hexdigest(),
         "files/pharmacy.jpg"],
        ["I", "scan", "image/webp", hashlib.sha256(WEBP).hexdigest(), "files/scan.webp"]]
    assert "img-src data:;" in html


def test_a_recorded_cassette_keys_attachments_by_their_hash_and_replays(
        tmp_path: Path, server: FakeServer) -> None:
    cassette = tmp_path / "cassette.jsonl"
    targets = {"live": {"kind": "openai", "base_url": server.url, "model": "m",
                        "timeout_ms": 5000, "retry": {"max_attempts": 1}},
               "recorded": {"kind": "replay", "cassette": str(cassette)}}
    attachment_suite(tmp_path, server.url, targets=targets)
    server.script({"rules": [], "default": [{"text": "Sí."}]})
    r = run_cli("run", ".", "-t", "live", "--record", str(cassette), cwd=tmp_path)
    assert r.exit_code == 0, r.output
    text = cassette.read_text()
    assert "data:image" not in text
    assert "base64" not in text
    assert f"sha256:{hashlib.sha256(PNG).hexdigest()}" in text
    assert len(text) < 6000
    requests = len(server.requests())
    r = run_cli("run", ".", "-t", "recorded", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert len(server.requests()) == requests  # offline
    (tmp_path / "files" / "receipt.png").write_bytes(PNG[:-1] + b"\x00")  # another image
    r = run_cli("run", ".", "-t", "recorded", cwd=tmp_path)
    assert r.exit_code == 3, r.output  # the cassette never saw this image: an error
    newest = sorted((tmp_path / "runs").iterdir())[-1]
    (rec,) = records_of(newest)
    assert rec["error"]["kind"] == "cassette"
    assert "has no recorded reply for this request" in rec["error"]["message"]


@pytest.mark.parametrize(("kind", "name", "data"), [
    ("image", "big.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * (5 * 2**20)),
    ("file", "big.txt", b"a" * (5 * 2**20 + 1)),
])
def test_an_attachment_over_5_mib_is_refused_at_its_place(
        tmp_path: Path, kind: str, name: str, data: bytes) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1"))
    (tmp_path / name).write_bytes(data)
    write(tmp_path / "s.yaml", f"""
        given:
          at: 2026-09-29T10:00:00-03:00
          attachments: [{{path: {name}, kind: {kind}}}]
        when: Hola
        then: [non_empty]
        """)
    r = run_cli("lint", "s.yaml", cwd=tmp_path)
    assert r.exit_code == 1
    assert r.output.splitlines()[0] == (
        f"s.yaml:3:24: error E231 the attachment '{name}' is {len(data):,} bytes; an "
        "attachment may have at most 5,242,880 bytes (5 MiB)")


JSONL_SCENARIO = HOURS.replace("cases_file: hours.csv", "cases_file: hours.jsonl")


def test_cases_python_cannot_read_are_one_located_sentence_each(
        tmp_path: Path, server: FakeServer) -> None:
    """A JSONL number of 5,000 digits, half of a surrogate pair, a CSV runs of 5,000 digits
    or a superscript: lint and run say where, and nothing runs (before: a traceback, or a
    run whose plan.json could not be written)."""
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "hours.yaml", JSONL_SCENARIO)
    big = "7" * 5000
    (tmp_path / "hours.jsonl").write_text(
        '{"id": "ok", "question": "¿Abren?", "closes": "13:00"}\n'
        f'{{"id": "big", "question": "¿Abren?", "closes": {big}}}\n'
        '{"id": "half", "question": "¿Abren? \\ud800", "closes": "13:00"}\n'
        '{"id": "pair", "question": "\\ud83d\\ude00 \\udc00", "closes": "13:00"}\n')
    write(tmp_path / "csv.yaml", HOURS.replace("id: clinic.hours", "id: clinic.csv"))
    (tmp_path / "hours.csv").write_text(f"id,question,closes,runs\na,q,1,{big}\nb,q,1,²\n")
    expected = [
        "hours.csv:2:7: error E229 runs of the case 'a' must be a whole number from 1 to "
        f"10,000; got \"{'7' * 56}...",
        "hours.csv:3:7: error E229 runs of the case 'b' must be a whole number from 1 to "
        '10,000; got "²"',
        "hours.jsonl:2:48: error E229 line 2 holds a number of 5,000 digits; Scenarist reads "
        "numbers of at most 4,300 digits",
        'hint: write it as text, in quotes: "1234…"',
        "hours.jsonl:3:37: error E229 line 3 holds the escape \\ud800, half of a surrogate "
        "pair, which is not a character",
        "hint: write the character itself, or both halves of its pair (\\ud83d\\ude00 for 😀)",
        "hours.jsonl:4:42: error E229 line 4 holds the escape \\udc00, half of a surrogate "
        "pair, which is not a character",
        "hint: write the character itself, or both halves of its pair (\\ud83d\\ude00 for 😀)",
    ]
    for command in ("lint", "run"):
        out = run_cli(command, cwd=tmp_path)
        assert out.exit_code == (1 if command == "lint" else 2), out.output
        shown, mine = [], False
        for line in out.output.splitlines():
            if not line.startswith(" "):  # a diagnostic's first line
                mine = line.startswith("hours")
            if mine and line.startswith(("hours", "  hint")):
                shown.append(line.strip())
        assert shown == expected, command
    assert not (tmp_path / "runs").exists()
    assert server.requests() == []


def test_an_inline_number_of_5000_digits_is_located(tmp_path: Path, server: FakeServer
                                                    ) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "hours.yaml", HOURS.replace(
        "cases_file: hours.csv", f"cases:\n  - {{question: q, closes: {'1' * 5000}}}"))
    out = run_cli("lint", cwd=tmp_path)
    assert out.exit_code == 1
    assert out.output.splitlines()[0] == (
        "hours.yaml:5:27: error Y111 this number has 5,000 digits; Scenarist reads numbers "
        "of at most 4,300 digits")
