"""Generates docs/checks.md from the check registry (and the code reference in docs/lint.md
from ``dsl._buildtools.codedocs``), so the references cannot drift.

``python -m dsl._buildtools.docsgen`` rewrites both; a test fails when either is out of
date.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..checks import REGISTRY

GROUPS = (
    ("answer", "Checks on the answer"),
    ("tools", "Checks on the tool calls"),
    ("conversation", "Checks on a conversation"),
    ("judge", "Checks decided by the LLM judge"),
    ("expression", "Your own checks: expressions"),
)


def _param_lines(schema: dict[str, Any]) -> list[str]:
    out = []
    props = {}
    for branch in (schema.get("then"), schema.get("else")):
        if isinstance(branch, dict):
            props.update(branch.get("properties", {}))
    for name, p in props.items():
        out.append(f"- `{name}` — {p.get('description', '')}")
    return out


def checks_markdown() -> str:
    lines = [
        "# Check reference",
        "",
        "<!-- Generated from the check registry by `python -m dsl._buildtools.docsgen`. "
        "Do not edit. -->",
        "",
        "Each item of a scenario's `then:` list is one check: its name, a colon, and its "
        "parameter. An attempt passes when every check passes. A check's result is "
        "**pass**, **fail**, **unsure** (only judge checks: the judge was not confident) "
        "or **error** (the check could not be evaluated on this attempt; the attempt does "
        "not pass). Checks that take `true` can also be written as a bare name: "
        "`- non_empty`.",
        "",
        "In a conversation (`when` as a list of turns, or a simulated user — see "
        "[the guide](guide.md#conversations)), a turn's own `then:` checks that turn: its "
        "answer and the calls the agent made during it, as they stood when it ended (a "
        "call held for confirmation is still pending there, even if a later turn confirms "
        "it). The scenario's `then:` checks the whole conversation: the last answer and "
        "every call the agent made in any turn — a call the person confirmed later counts "
        "as executed (`does_not_modify`) and as asked to confirm (`asks_to_confirm`). "
        "Calls in `given.history` were not made by the agent: no check counts them (the "
        "judge and `grounded` do read their results, as the agent did).",
        "",
        "| Check | What it checks |",
        "| --- | --- |",
    ]
    for name, c in sorted(REGISTRY.items(), key=lambda kv: ([g for g, _ in GROUPS].index(
            kv[1].group), kv[0])):
        judge = " *(judge)*" if c.judge else ""
        lines.append(f"| [`{name}`](#{name}) | {c.doc}{judge} |")
    for group, title in GROUPS:
        members = sorted(n for n, c in REGISTRY.items() if c.group == group)
        if not members:
            continue
        lines += ["", f"## {title}"]
        for name in members:
            c = REGISTRY[name]
            lines += ["", f"### {name}", "", c.doc, "", "```yaml", "then:"]
            lines += [f"  - {e}" for e in c.examples]
            lines += ["```", ""]
            lines.append(f"**Parameter:** {c.schema.get('description', '')}")
            params = _param_lines(dict(c.schema))
            if params:
                lines += ["", *params]
            if c.details:
                lines += ["", c.details]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    from .codedocs import update_lint_doc

    root = Path(__file__).resolve().parents[2]
    out = Path(argv[0]) if argv else root / "docs" / "checks.md"
    out.write_text(checks_markdown(), "utf-8")
    print(f"wrote {out}")
    if not argv:  # the diagnostic codes' reference inside docs/lint.md
        lint_md = root / "docs" / "lint.md"
        lint_md.write_text(update_lint_doc(lint_md.read_text("utf-8")), "utf-8")
        print(f"wrote {lint_md}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
