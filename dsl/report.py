"""Report: a run folder becomes ``report.html`` — one self-contained, autoescaped file.

Reads stored results only (plan.json, results.jsonl, summary.json), so a report can be
regenerated at any time without calling a model. Model output is untrusted text: the
template never marks it safe.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from pathlib import Path
from typing import Any

from .store import PLAN, RUN, latest_records, read_json
from .summarize import summarize_records

REPORT = "report.html"


@functools.cache
def _env() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=FileSystemLoader(str(Path(__file__).parent / "assets")),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = lambda x: "–" if x is None else f"{x * 100:.0f}%"
    return env


def render(plan: dict[str, Any], records: list[dict[str, Any]], summary: dict[str, Any],
           run: dict[str, Any] | None = None) -> str:
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_key[(r["scenario"], r["target"])].append(r)
    for v in by_key.values():
        v.sort(key=lambda r: r["run"])
    return str(_env().get_template("report.html.j2").render(
        plan=plan, summary=summary, run=run or {}, attempts=by_key,
    ))


def write_report(run_dir: Path, out: Path | None = None,
                 summary: dict[str, Any] | None = None) -> Path:
    plan = read_json(run_dir / PLAN)
    run = read_json(run_dir / RUN) if (run_dir / RUN).exists() else None
    records = list(latest_records(run_dir))
    summary = summary or summarize_records(plan, records, run)
    path = out or run_dir / REPORT
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(render(plan, records, summary, run), "utf-8")
    tmp.replace(path)
    return path
