"""``scenarist lsp`` as editors use it: a real server process over stdio and a real LSP
client (pygls's), through initialize, open, change, completion, hover, definition,
references, symbols, code actions, shutdown and exit."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from dsl.checks import REGISTRY
from tests.conftest import REPO, run_cli, write
from tests.lsp.client import TIMEOUT, Client

SUITE = """\
targets:
  recorded: {kind: replay, cassette: cassettes/local.jsonl}
tools:
  list_business_hours:
    description: List the clinic's opening hours, by day.
    input_schema:
      type: object
      properties:
        day: {type: string}
    returns: "Mon-Fri 09:00-18:00"
  set_business_hours:
    description: Change the opening hours of one day.
    action: update
    confirm: true
    returns: "Done."
  block_card:
    description: Block a card.
    input_schema: {type: object, properties: {card: {type: string}}, required: [card]}
    action: update
    table: cards
    where: {id: "{{ args.card }}"}
    set: {status: blocked}
world:
  cards:
    - {id: C-1, status: active, owner: Ana}
    - {id: C-2, status: active, owner: Luis}
checks:
  short: "len(answer) < 300"
"""

BROKEN = """\
description: A clerk asks until what time the clinic is open today.
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours]
when: "¿Hasta qué hora atendemos hoy?"
then:
  - contians: "18:00"
  - calls: list_busines_hours
  - does_not_modify
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    write(tmp_path / "scenarist.yaml", SUITE)
    return tmp_path


@pytest.fixture
def client(suite: Path) -> Iterator[Client]:
    c = Client(suite)
    try:
        yield c
    finally:
        c.kill()


def lint_json(path: Path, cwd: Path, of: Path | None = None) -> list[dict[str, object]]:
    """What ``scenarist lint --format json FILE`` says of that file (or of the file ``of``,
    a cases file the scenario reads)."""
    result = run_cli("lint", "--format", "json", str(path), cwd=cwd)
    found = json.loads(result.output)["diagnostics"]
    return [d for d in found if d["file"] is not None
            and (cwd / str(d["file"])).resolve() == (of or path).resolve()]


def as_lint(d: lsp.Diagnostic) -> tuple[object, ...]:
    return (d.range.start.line + 1, d.range.start.character + 1, d.code,
            "error" if d.severity == lsp.DiagnosticSeverity.Error else "warning", d.message)


def from_lint(d: dict[str, object]) -> tuple[object, ...]:
    return (d["line"], d["col"], d["code"], d["severity"], d["message"])


def test_a_session_from_initialize_to_exit(suite: Path, client: Client) -> None:
    caps = client.result.capabilities
    assert caps.completion_provider is not None
    assert caps.hover_provider
    assert caps.definition_provider
    assert caps.references_provider
    assert caps.document_symbol_provider
    assert caps.code_action_provider
    assert client.result.server_info is not None
    assert client.result.server_info.name == "scenarist"

    path = write(suite / "hours.yaml", BROKEN)
    started = time.perf_counter()
    client.open(path)
    found = client.diagnostics(path)
    assert time.perf_counter() - started < TIMEOUT
    assert [as_lint(d) for d in found] == [from_lint(d) for d in lint_json(path, suite)]
    assert [d.code for d in found] == ["S101", "E201"]
    misspelt, unknown = found
    assert (misspelt.range.start, misspelt.range.end) == (lsp.Position(6, 4),
                                                          lsp.Position(6, 12))
    assert (unknown.range.start, unknown.range.end) == (lsp.Position(7, 11),
                                                        lsp.Position(7, 29))
    assert misspelt.code_description is not None
    assert misspelt.code_description.href.endswith("docs/lint.md#s101-unknown-check")
    assert misspelt.source == "scenarist"
    assert misspelt.related_information is not None
    assert misspelt.related_information[0].message == (
        "hint: see the list of checks: scenarist checks, or docs/checks.md")

    # a quick fix writes the check that was meant
    fixes = client.actions(path, [misspelt])
    assert [a.title for a in fixes] == ["Change 'contians' to 'contains'"]
    assert fixes[0].edit is not None
    assert fixes[0].edit.changes is not None
    assert list(fixes[0].edit.changes[path.as_uri()]) == [lsp.TextEdit(misspelt.range, "contains")]

    # fixing one mistake leaves the other
    client.edit(path, 6, 4, 12, "contains")
    left = client.diagnostics(path)
    assert [d.code for d in left] == ["E201"]

    # completion: the checks under then:, the suite's tools in a calls: value
    text = BROKEN.replace("contians", "contains") + "  - \n"
    client.change(path, text)
    client.diagnostics(path)
    checks = client.labels(path, 9, 4)
    assert {"contains", "calls", "does_not_modify", "expect", "world"} <= set(checks)
    contains = next(i for i in client.completion(path, 9, 4) if i.label == "contains")
    assert contains.detail == REGISTRY["contains"].doc  # the registry's one line
    assert contains.insert_text_format == lsp.InsertTextFormat.Snippet
    assert isinstance(contains.text_edit, lsp.TextEdit)
    assert contains.text_edit.new_text == 'contains: ${1:"18:00"}'
    tools = client.labels(path, 7, 11)
    assert tools == ["list_business_hours", "set_business_hours", "block_card"]

    # hover: the check's explanation, from the registry
    shown = client.hover(path, 8, 8)
    assert shown is not None
    assert f"**does_not_modify** — {REGISTRY['does_not_modify'].doc}" in shown
    assert "action: read" in shown

    # definition: the library tool's line in scenarist.yaml
    places = client.definition(path, 3, 14)
    assert [(p.uri, p.range.start.line) for p in places] == [
        ((suite / "scenarist.yaml").as_uri(), 3)]

    # references of the tool across the suite
    refs = client.references(path, 3, 14)
    assert sorted((Path(r.uri.removeprefix("file://")).name, r.range.start.line)
                  for r in refs) == [("hours.yaml", 3), ("scenarist.yaml", 3)]
    assert [r.uri for r in client.references(path, 3, 14, declaration=False)] == [
        path.as_uri()]

    # the outline: the scenario's keys, its tools and checks
    outline = client.symbols(path)
    assert [s.name for s in outline] == ["description", "given", "when", "then"]
    then = outline[3]
    assert [c.name for c in then.children or []] == [
        "contains: 18:00", "calls: list_busines_hours", "does_not_modify", "(empty)"]

    assert client.stop() == 0


def test_exit_without_shutdown_is_status_1(suite: Path) -> None:
    c = Client(suite)
    try:
        assert c.stop(shutdown=False) == 1
    finally:
        c.kill()


def test_a_yaml_syntax_error_is_one_diagnostic_at_the_mistake(suite: Path,
                                                              client: Client) -> None:
    path = write(suite / "broken.yaml", "description: x\ngiven: [a\nwhen: hi\n")
    client.open(path)
    found = client.diagnostics(path)
    assert [as_lint(d) for d in found] == [from_lint(d) for d in lint_json(path, suite)]
    assert [d.code for d in found] == ["Y101"]
    # and the server goes on: the text fixed, the mistake is gone
    client.change(path, "description: x\ngiven: {at: 2026-09-29T10:00:00-03:00}\n"
                        "when: hi\nthen: [non_empty]\n")
    assert client.diagnostics(path) == []


def test_a_file_under_no_suite_gets_nothing(tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    path = write(alone / "x.yaml", "kind: Deployment\nspec: {replicas: 2}\nthen:\n  - \n")
    c = Client(alone)
    try:
        c.open(path)
        assert c.diagnostics(path) == []
        assert c.labels(path, 3, 4) == []
        assert c.hover(path, 0, 1) is None
        assert c.definition(path, 0, 1) == []
        assert c.symbols(path) == []
        assert c.stop() == 0
    finally:
        c.kill()


def test_a_malformed_request_is_an_error_response_never_a_crash(suite: Path) -> None:
    path = write(suite / "hours.yaml", BROKEN)
    with Raw(suite) as raw:
        raw.request("initialize", {"capabilities": {}, "processId": None,
                                   "rootUri": suite.as_uri()})
        raw.notify("initialized", {})
        raw.notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": "yaml", "version": 1, "text": BROKEN}})
        assert "error" in raw.request("textDocument/hover",
                                      {"textDocument": {"uri": path.as_uri()}})
        assert "error" in raw.request("textDocument/definition", {"position": "here"})
        assert raw.request("scenarist/unknown", {})["error"]["code"] == -32601
        raw.send(b'{"jsonrpc": "2.0", "id": 99, "method": ')  # not JSON at all
        # a position past the end, a document never opened, a URI that is no file
        at = {"line": 500, "character": 3}
        assert raw.request("textDocument/hover", {"textDocument": {"uri": path.as_uri()},
                                                  "position": at})["result"] is None
        never = (suite / "never-opened.yaml").as_uri()
        assert raw.request("textDocument/hover", {"textDocument": {"uri": never},
                                                  "position": at})["result"] is None
        assert raw.request("textDocument/completion", {
            "textDocument": {"uri": "untitled:Untitled-1"},
            "position": {"line": 0, "character": 0}})["result"] is None
        # still serving
        found = raw.request("textDocument/completion", {
            "textDocument": {"uri": path.as_uri()}, "position": {"line": 6, "character": 4}})
        assert "contains" in [i["label"] for i in found["result"]["items"]]
        assert raw.request("shutdown", None)["result"] is None
        raw.notify("exit", None)
        assert raw.process.wait(TIMEOUT) == 0


class Raw:
    """JSON-RPC over the server's stdin and stdout, framed by hand, as any client does."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "dsl", "lsp"], cwd=cwd,
                                        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin"},
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.next_id = 0

    def __enter__(self) -> Raw:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(TIMEOUT)

    def send(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: object) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode())

    def request(self, method: str, params: object) -> dict[str, object]:
        self.next_id += 1
        self.send(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                              "params": params}).encode())
        while True:  # notifications (diagnostics) may come first
            message = self.read()
            if message.get("id") == self.next_id:
                return message

    def read(self) -> dict[str, object]:
        out = self.process.stdout
        assert out is not None
        length = 0
        while True:
            line = out.readline()
            if not line:
                raise EOFError("the server closed its output")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        found: dict[str, object] = json.loads(out.read(length))
        return found


def test_a_change_to_the_suite_checks_the_open_scenarios_again(suite: Path,
                                                                client: Client) -> None:
    path = write(suite / "refund.yaml", """\
        given:
          at: 2026-09-29T10:00:00-03:00
          tools: [refund_order]
        when: Refund my order.
        then:
          - calls: refund_order
        """)
    client.open(path)
    assert [d.code for d in client.diagnostics(path)] == ["E201", "E201"]
    seen = client.count(path)

    # the suite's unsaved text: the scenario is checked against it
    suite_file = suite / "scenarist.yaml"
    client.open(suite_file)
    assert client.diagnostics(suite_file) == []
    client.diagnostics(path, version=1, after=seen)  # checked again as the suite opened
    seen = client.count(path)
    with_refund = SUITE.replace("tools:\n", "tools:\n  refund_order:\n"
                                "    description: Refund an order.\n", 1)
    client.change(suite_file, with_refund)
    assert client.diagnostics(path, version=1, after=seen) == []

    # closed again without saving: the file on disk is what counts
    seen = client.count(path)
    client.close_document(suite_file)
    client.watched((suite_file, lsp.FileChangeType.Changed))
    assert [d.code for d in client.diagnostics(path, version=1, after=seen)] == ["E201",
                                                                                "E201"]

    # saved on disk by another program: the editor's file watcher says so
    seen = client.count(path)
    write(suite_file, with_refund)
    client.watched((suite_file, lsp.FileChangeType.Changed))
    assert client.diagnostics(path, version=1, after=seen) == []
    assert any(r.method == "workspace/didChangeWatchedFiles" for r in client.registrations)


def test_a_mistake_in_a_cases_file_is_shown_on_that_file(suite: Path,
                                                         client: Client) -> None:
    cases = write(suite / "hours.csv", "id,day,hours\nmon,Monday,09-18\ntue,Tuesday\n")
    path = write(suite / "hours.yaml", """\
        given:
          at: 2026-09-29T10:00:00-03:00
        when: "Until when are you open on {{ day }}?"
        then:
          - contains: "{{ hours }}"
        cases_file: hours.csv
        """)
    client.open(path)
    assert client.diagnostics(path) == []
    on_csv = client.diagnostics(cases, after=0)
    expected = lint_json(path, suite, of=cases)
    assert expected, "lint finds the short row"
    assert [as_lint(d) for d in on_csv] == [from_lint(d) for d in expected]
    assert on_csv[0].code == "E229"

    # definition on cases_file: the file
    places = client.definition(path, 5, 14)
    assert [p.uri for p in places] == [cases.as_uri()]


def test_a_cases_file_opened_alone_shows_what_the_scenarios_that_read_it_find(
        suite: Path, client: Client) -> None:
    cases = write(suite / "hours.csv", "id,day,hours\nmon,Monday,09-18\ntue,Tuesday\n")
    path = write(suite / "hours.yaml", """\
        given:
          at: 2026-09-29T10:00:00-03:00
        when: "Until when are you open on {{ day }}?"
        then:
          - contains: "{{ hours }}"
        cases_file: hours.csv
        """)
    client.open(cases)
    found = client.diagnostics(cases)
    assert [as_lint(d) for d in found] == [from_lint(d) for d in lint_json(path, suite,
                                                                           of=cases)]
    # typed, not saved: lint reads the saved file, so nothing is checked yet
    seen = client.count(cases)
    client.change(cases, "id,day,hours\nmon,Monday,09-18\ntue,Tuesday,09-13\n")
    write(cases, "id,day,hours\nmon,Monday,09-18\ntue,Tuesday,09-13\n")
    client.save(cases)
    assert client.diagnostics(cases, after=seen) == []
    assert client.count(cases) == seen + 1


def test_completion_where_the_cursor_is(suite: Path, client: Client) -> None:
    text = """\
given:
  at: 2026-09-29T10:00:00-03:00
  tools:
    - block_card
    - name: find_card
      description: Find a card.
      table: cards
      where: {owner: "{{ args.owner }}"}
      action: read
<TWO SPACES>
when: Block the card of Luis.
then:
  - world: {cards: {C-2: {status: blocked}}}
  - expect: "called('block_card') and count(calls) < 3"
  - calls: {name: block_card, args: {card: C-2}}
targets: [recorded]
""".replace("<TWO SPACES>", "  ")
    path = write(suite / "block.yaml", text)
    client.open(path, text)  # as typed: line 9 holds two spaces
    client.diagnostics(path)
    lines = text.split("\n")

    def at(line: int, after: str) -> list[str]:
        return client.labels(path, line, lines[line].index(after) + len(after))

    assert {"at", "system", "tools", "world", "history", "attachments"} <= set(
        client.labels(path, 9, 2))  # a key of given
    assert at(6, "table: ") == ["cards"]
    assert at(7, "where: {") == ["id", "status", "owner"]
    assert at(12, "world: {") == ["cards"]
    assert at(12, "{cards: {") == ["C-1", "C-2"]
    assert at(12, "{C-2: {") == ["id", "status", "owner"]
    expr = at(13, "expect: \"")
    assert {"count", "called", "len", "answer", "calls"} <= set(expr)
    assert at(13, "called('") == ["find_card", "block_card", "list_business_hours",
                                   "set_business_hours"]
    assert at(14, "{name: ") == ["find_card", "block_card", "list_business_hours",
                                 "set_business_hours"]
    assert at(15, "targets: [") == ["recorded"]
    assert at(3, "- ") == ["list_business_hours", "set_business_hours", "block_card"]
    assert {"id", "description", "given", "when", "then", "runs"} <= set(
        client.labels(path, 16, 0))
    assert "read" in at(8, "action: ")


def test_completion_in_the_suite_file(suite: Path, client: Client) -> None:
    path = suite / "scenarist.yaml"
    text = SUITE + "defaults:\n  target: \n  \n"
    client.open(path, text)
    client.diagnostics(path)
    n = text.count("\n")
    assert client.labels(path, n - 2, 10) == ["recorded"]
    assert {"runs", "min_pass_rate", "concurrency", "target"} <= set(
        client.labels(path, n - 1, 2))
    # a named check's expression
    line = SUITE.split("\n").index('  short: "len(answer) < 300"')
    assert "len" in client.labels(path, line, len('  short: "le'))


def test_hover_explains_tools_targets_tables_codes_and_functions(suite: Path,
                                                                  client: Client) -> None:
    text = """\
# scenarist: S101 is what a misspelt check gets
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, block_card]
when: Block the card of Luis.
then:
  - world: {cards: {C-2: {status: blocked}}}
  - expect: "count(calls) < 3 and short"
  - expect: short
targets: [recorded]
"""
    path = write(suite / "block.yaml", text)
    client.open(path)
    client.diagnostics(path)
    tool = client.hover(path, 3, 12)
    assert tool is not None
    assert "**tool list_business_hours** (scenarist.yaml)" in tool
    assert "List the clinic's opening hours, by day." in tool
    assert '"day": {' in tool  # its input_schema
    target = client.hover(path, 9, 12)
    assert target is not None
    assert "**target recorded** (kind: replay)" in target
    table = client.hover(path, 6, 13)
    assert table is not None
    assert "**table cards**" in table
    assert "`C-1`" in table
    column = client.hover(path, 6, 27)
    assert column is not None
    assert "**column status** of the table 'cards'" in column
    code = client.hover(path, 0, 14)
    assert code is not None
    assert code.startswith("**S101 unknown-check** — A check name that Scenarist does not know.")
    function = client.hover(path, 7, 14)
    assert function is not None
    assert "`count(" in function
    named = client.hover(path, 8, 13)
    assert named is not None
    assert "len(answer) < 300" in named
    key = client.hover(path, 1, 2)
    assert key is not None
    assert key.startswith("**given** — The situation")


def test_definition_of_named_checks_inline_tools_and_tables(suite: Path,
                                                            client: Client) -> None:
    text = """\
given:
  at: 2026-09-29T10:00:00-03:00
  tools:
    - name: lookup
      description: Look it up.
when: Look it up.
then:
  - calls: lookup
  - expect: short
  - world: {cards: {C-1: {status: active}}}
"""
    path = write(suite / "look.yaml", text)
    client.open(path)
    client.diagnostics(path)
    assert [(p.uri, p.range.start.line, p.range.start.character)
            for p in client.definition(path, 7, 13)] == [(path.as_uri(), 3, 12)]
    suite_uri = (suite / "scenarist.yaml").as_uri()
    lines = SUITE.split("\n")
    assert [(p.uri, p.range.start.line) for p in client.definition(path, 8, 13)] == [
        (suite_uri, lines.index('  short: "len(answer) < 300"'))]
    assert [(p.uri, p.range.start.line) for p in client.definition(path, 9, 14)] == [
        (suite_uri, lines.index("  cards:"))]
    assert client.definition(path, 7, 5) == []  # a built-in check: defined nowhere


def test_a_missing_required_key_is_added_by_a_quick_fix(suite: Path, client: Client) -> None:
    path = write(suite / "short.yaml", "description: x\ngiven:\n  at: 2026-09-29T10:00:00-03:00\n"
                                       "then: [non_empty]\n")
    client.open(path)
    found = client.diagnostics(path)
    assert [(d.code, d.message) for d in found] == [
        ("S104", "the scenario is missing 'when' (what the person says to the agent)")]
    fixes = client.actions(path, found)
    assert [a.title for a in fixes] == ["Add 'when'"]
    assert fixes[0].edit is not None
    assert fixes[0].edit.changes is not None
    (edit,) = fixes[0].edit.changes[path.as_uri()]
    assert edit.range.start == lsp.Position(3, 17)
    assert edit.new_text == "\nwhen: ¿Hasta qué hora atienden hoy?"
    # applied, the file lints clean
    text = path.read_text("utf-8")
    lines = text.split("\n")
    lines[3] = lines[3] + edit.new_text
    client.change(path, "\n".join(lines))
    assert client.diagnostics(path) == []


def test_quick_fix_without_the_diagnostics_in_the_request(suite: Path,
                                                          client: Client) -> None:
    path = write(suite / "hours.yaml", BROKEN)
    client.open(path)
    found = client.diagnostics(path)
    fixes = client.actions(path, [], found[1].range)
    assert [a.title for a in fixes] == [
        "Change 'list_busines_hours' to 'list_business_hours'"]


def test_columns_count_in_utf16_as_editors_do(suite: Path, client: Client) -> None:
    path = write(suite / "emoji.yaml", """\
        given: {at: 2026-09-29T10:00:00-03:00}
        when: "hola"
        then: [{contains: "🎉"}, contians]
        """)
    client.open(path)
    (found,) = client.diagnostics(path)
    line = path.read_text("utf-8").split("\n")[2]
    col = line.index("contians")
    assert found.code == "S101"
    assert found.range.start == lsp.Position(2, col + 1)  # the emoji is two UTF-16 units
    assert found.range.end == lsp.Position(2, col + 1 + len("contians"))
    fixes = client.actions(path, [found])
    assert fixes[0].edit is not None
    assert fixes[0].edit.changes is not None
    assert next(iter(fixes[0].edit.changes[path.as_uri()])).range == found.range


def test_the_outline_of_a_conversation_and_of_the_suite(suite: Path, client: Client) -> None:
    path = write(suite / "talk.yaml", """\
        given:
          at: 2026-09-29T10:00:00-03:00
          tools: [set_business_hours]
        when:
          - say: We close on Saturdays now. Change it.
            then: [asks_to_confirm: set_business_hours]
          - confirm: set_business_hours
            then: [{calls: set_business_hours, name: the hours changed}]
        then: [non_empty]
        """)
    client.open(path)
    client.diagnostics(path)
    outline = client.symbols(path)
    when = next(s for s in outline if s.name == "when")
    turns = when.children or []
    assert [(t.name, t.detail) for t in turns] == [
        ("turn 1", "say: We close on Saturdays now. Change it."),
        ("turn 2", "confirm: set_business_hours")]
    assert [c.name for c in turns[0].children or []] == ["asks_to_confirm: set_business_hours"]
    assert [(c.name, c.detail) for c in turns[1].children or []] == [
        ("the hours changed", "calls: set_business_hours")]
    suite_file = suite / "scenarist.yaml"
    client.open(suite_file)
    client.diagnostics(suite_file)
    outline = client.symbols(suite_file)
    by_name = {s.name: [c.name for c in s.children or []] for s in outline}
    assert by_name["tools"] == ["list_business_hours", "set_business_hours", "block_card"]
    assert by_name["targets"] == ["recorded"]
    assert by_name["checks"] == ["short"]
    assert by_name["world"] == ["cards"]


def test_diagnostics_come_after_the_last_of_quick_changes(suite: Path,
                                                          client: Client) -> None:
    path = write(suite / "hours.yaml", BROKEN)
    client.open(path)
    client.diagnostics(path)
    for n in range(5):  # typed faster than the debounce: only the last text counts
        client.edit(path, 6, 4, 12 if n == 0 else 4 + len(f"contain{n - 1}"), f"contain{n}")
    last = client.diagnostics(path)
    assert next(d.message for d in last) == "unknown check 'contain4'; did you mean 'contains'?"


def test_tcp_for_debugging(suite: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "dsl", "lsp", "--tcp", "--port", str(port)],
                            cwd=suite, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.05)
        with conn:
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                               "params": {"capabilities": {}, "processId": None,
                                          "rootUri": None}}).encode()
            conn.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            reply = b""
            while b"capabilities" not in reply or not re.search(rb"\}\s*$", reply):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                reply += chunk
            assert b'"completionProvider"' in reply
            assert b'"name":"scenarist"' in reply.replace(b" ", b"")
    finally:
        proc.kill()
        proc.communicate(timeout=TIMEOUT)


def test_completion_of_a_turn_and_of_a_check_s_parameters(suite: Path, client: Client) -> None:
    text = ("given: {at: 2026-09-29T10:00:00-03:00}\nwhen:\n  - say: hi\n  - \n"
            "then:\n  - judge: {rubric: Polite., pass_score: 0.8}\n  - calls:\n      \n")
    path = write(suite / "turns.yaml", "")
    client.open(path, text)
    client.diagnostics(path)
    assert {"say", "confirm", "cancel", "then"} <= set(client.labels(path, 3, 4))
    assert {"name", "args", "times"} <= set(client.labels(path, 7, 6))
    say = next(i for i in client.completion(path, 3, 4) if i.label == "say")
    assert say.documentation is not None
    snippets = {i.label: i.text_edit.new_text for i in client.completion(path, 5, 4)
                if isinstance(i.text_edit, lsp.TextEdit)}
    assert snippets["judge"] == ("judge: {rubric: ${1:Offers the earliest free slot and asks for "
                                 "confirmation.}, pass_score: ${2:0.8}}")
    assert snippets["valid_args"] == "valid_args"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can connect as another user")
def test_tcp_answers_no_other_user(suite: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "dsl", "lsp", "--tcp", "--port", str(port)],
                            cwd=suite, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    probe = (
        "import json, os, socket, sys, time\n"
        "body = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'initialize',\n"
        "                   'params': {'capabilities': {}, 'processId': None}}).encode()\n"
        "os.setgid(65534); os.setuid(65534)  # nobody\n"
        "deadline = time.monotonic() + 60\n"
        "while True:\n"
        "    try:\n"
        "        c = socket.socket()\n"
        "        c.settimeout(60)\n"
        "        c.connect(('127.0.0.1', int(sys.argv[1])))\n"
        "        break\n"
        "    except OSError:\n"
        "        if time.monotonic() > deadline: raise\n"
        "        time.sleep(0.05)\n"
        "c.sendall(b'Content-Length: %d\\r\\n\\r\\n' % len(body) + body)\n"
        "try:\n"
        "    print(repr(c.recv(65536)))\n"
        "except ConnectionResetError:\n"
        "    print('reset')\n"
    )
    try:
        other = subprocess.run([sys.executable, "-c", probe, str(port)], capture_output=True,
                               text=True, timeout=TIMEOUT)
        assert other.returncode == 0, other.stderr
        assert other.stdout.strip() in ("b''", "reset")  # closed unread: no answer
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=TIMEOUT)
    assert b"refused a connection from another user (uid 65534)" in err


def test_a_file_opened_through_a_link_gets_its_diagnostics_under_that_name(
        tmp_path: Path) -> None:
    real = tmp_path / "real"
    write(real / "scenarist.yaml", SUITE)
    write(real / "hours.yaml", BROKEN)
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    through = tmp_path / "link" / "hours.yaml"
    c = Client(tmp_path)
    try:
        c.open(through)
        assert [d.code for d in c.diagnostics(through)] == ["S101", "E201"]
        assert c.published.get((real / "hours.yaml").as_uri()) is None
        assert c.stop() == 0
    finally:
        c.kill()
