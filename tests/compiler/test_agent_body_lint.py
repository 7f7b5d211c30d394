"""Lint of an http agent's body against what its scenarios need (W430, W431): located at
the body, in words, with the fix — through ``scenarist lint``."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli, write

SUITE = """
targets:
  svc:
    kind: http
    url: http://127.0.0.1:8000/chat
    body:
      message: "{{{{ message }}}}"
{more}tools:
  set_business_hours:
    description: Change the opening hours of one day.
    input_schema: {{type: object, properties: {{day: {{type: string}}}}}}
    action: update
    confirm: true
"""

HOLDS = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [set_business_hours]
when: Close on Saturdays.
then:
  - asks_to_confirm: set_business_hours
"""


def lint(tmp_path: Path, more: str, scenario: str = HOLDS) -> tuple[int, str]:
    write(tmp_path / "scenarist.yaml", SUITE.format(more=more))
    write(tmp_path / "a.yaml", scenario)
    result = run_cli("lint", ".", cwd=tmp_path)
    return result.exit_code, str(result.output)


def test_a_body_without_the_tools_or_the_person_s_decisions(tmp_path: Path) -> None:
    code, out = lint(tmp_path, "")
    assert code == 0
    assert out == """\
scenarist.yaml:5:5: warning W430 the body of the target 'svc' never sends {{ mcp_url }}: the agent cannot reach the scenarios' fake tools, so it never lists them and every check of its calls fails
  5 |     body:
    |     ^
  hint: add the attempt's MCP endpoint to the body, e.g. tools_url: "{{ mcp_url }}", and connect your agent's MCP client to it instead of its real tools
scenarist.yaml:6:7: warning W431 the body of the target 'svc' never sends {{ confirmed }} or {{ cancelled }}, and the scenarios hold calls for the person's confirmation (tools with confirm: true): on a confirm or cancel turn the agent is not told what the person decided
  6 |       message: "{{ message }}"
    |       ^
  hint: add confirmed: "{{ confirmed }}" and cancelled: "{{ cancelled }}" to the body
1 file(s): 0 error(s), 2 warning(s)
"""


def test_a_body_that_sends_them_is_clean(tmp_path: Path) -> None:
    more = ('      tools: "{{ mcp_url }}"\n      yes: "{{ confirmed }}"\n'
            '      "no": "Cancelled: {{ cancelled }}"\n')
    assert lint(tmp_path, more) == (0, "1 file(s): 0 error(s), 0 warning(s)\n")


def test_only_what_the_scenarios_need_is_asked(tmp_path: Path) -> None:
    """Scenarios without tools need no endpoint; without held calls, no decisions."""
    plain = "given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: hi\nthen: [non_empty]\n"
    code, out = lint(tmp_path, "", plain)
    assert code == 0
    assert "W430" not in out
    assert "W431" not in out
    code, out = lint(tmp_path, '      cancelled: "{{ cancelled }}"\n')
    assert "W430" in out
    assert ("W431 the body of the target 'svc' never sends {{ confirmed }}, and the "
            "scenarios hold calls") in out
    assert 'hint: add confirmed: "{{ confirmed }}" to the body' in out


def test_strict_lint_fails_on_them_and_the_default_body_sends_everything(
        tmp_path: Path) -> None:
    write(tmp_path / "scenarist.yaml", SUITE.format(more="").replace(
        '    body:\n      message: "{{ message }}"\n', ""))
    write(tmp_path / "a.yaml", HOLDS)
    assert run_cli("lint", "--strict", ".", cwd=tmp_path).exit_code == 0
    write(tmp_path / "scenarist.yaml", SUITE.format(more=""))
    assert run_cli("lint", "--strict", ".", cwd=tmp_path).exit_code == 1
