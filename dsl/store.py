"""The run folder: ``runs/<run-id>/`` with ``run.json``, ``plan.json``,
``results.jsonl`` (one line appended and flushed as each attempt ends), ``summary.json``
and the reports. Only this module (and ``load``) touch files.

Every file carries ``schema_version``; a reader refuses versions it does not know.
A torn last line (the process was killed while writing it) is skipped, not fatal.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .errors import RunDirError
from .model import SCHEMA_VERSION, Plan, Scenario, Target

RESULTS = "results.jsonl"
PLAN = "plan.json"
RUN = "run.json"
SUMMARY = "summary.json"
FSYNC_EVERY_S = 1.0  # results reach the OS at every line; the disk at least this often


def new_run_id(now: dt.datetime | None = None) -> str:
    now = now or dt.datetime.now(dt.UTC)
    return now.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def create_run_dir(parent: Path, run_id: str | None = None) -> Path:
    run_id = run_id or new_run_id()
    path = parent / run_id
    path.mkdir(parents=True, exist_ok=False)
    return path


def write_json(path: Path, data: Any) -> None:
    """Write a JSON file atomically (a crash never leaves half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")
    os.replace(tmp, path)


def write_atomic(path: Path, data: bytes) -> None:
    """Write a file (a report, junit.xml, summary.md) atomically, as write_json does."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path} does not exist; is {path.parent} a run folder?") from None
    except (OSError, ValueError) as exc:
        raise RunDirError(f"cannot read {path}: {exc}") from None
    check_version(data, path)
    return data


def check_version(data: Any, where: Path | str) -> None:
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise RunDirError(
            f"{where} has schema_version {version!r}; this Scenarist reads version "
            f"{SCHEMA_VERSION} (upgrade Scenarist, or re-run to regenerate it)"
        )


def scenario_json(s: Scenario) -> dict[str, Any]:
    # Imported here: the checks pull in the YAML loader, which readers of a run folder
    # (summarize, report) never need — a quarter of a second at every `scenarist report`.
    from .checks.tools import expected_tools

    return {
        "id": s.id,
        "file": s.file,
        "line": s.span.line,
        "description": s.description,
        "tags": list(s.tags),
        "at": s.at.isoformat(),
        "system": s.system,
        "message": s.message,
        "tools": [
            {"name": t.name, "action": t.action, "confirm": t.confirm,
             "description": t.description}
            for t in s.tools
        ],
        "expected_tools": expected_tools(s.checks),
        "checks": [{"check": c.name, "label": c.label, "judge": c.judge, "line": c.span.line}
                   for c in s.checks],
        "runs": s.runs,
        "min_pass": s.min_pass,
        "max_steps": s.max_steps,
    }


def target_json(t: Target) -> dict[str, Any]:
    """A target as it may be written down: never the key, only the variable's name."""
    out: dict[str, Any] = {"name": t.name, "kind": t.kind}
    if t.kind == "openai":
        out.update(model=t.model, base_url=t.base_url, api_key_env=t.api_key_env,
                   temperature=t.temperature, params=dict(t.params))
    elif t.kind == "replay":
        out.update(cassette=t.cassette)
    else:
        out.update(entry=t.entry)
    return out


def plan_json(plan: Plan) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "suite": plan.suite_file,
        "targets": [target_json(t) for t in plan.targets],
        "scenarios": [scenario_json(s) for s in plan.scenarios],
        "attempts": plan.attempts,
        "max_model_calls": plan.max_model_calls,
        "concurrency": plan.concurrency,
    }


class ResultsWriter:
    """Appends attempt records to results.jsonl, one flushed line each."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / RESULTS
        self._file: IO[str] = self.path.open("a", encoding="utf-8")
        self._synced = time.monotonic()

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        if not line.isascii():
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:  # a model's reply held a lone surrogate ("\ud83d"):
                line = json.dumps(record, separators=(",", ":"))  # keep it as a \u escape
        self._file.write(line + "\n")
        self._file.flush()
        now = time.monotonic()
        if now - self._synced >= FSYNC_EVERY_S:
            os.fsync(self._file.fileno())
            self._synced = now

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()


def iter_results(run_dir: Path) -> Iterator[dict[str, Any]]:
    """Attempt records, in the order they were written; a torn last line is skipped."""
    path = run_dir / RESULTS
    if not path.exists():
        raise RunDirError(f"{run_dir} has no {RESULTS}; is it a run folder?")
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.endswith("\n"):
                return  # torn: the writer was killed mid-line
            try:
                record = json.loads(line)
            except ValueError:
                raise RunDirError(f"{path}:{n} is not valid JSON") from None
            check_version(record, f"{path}:{n}")
            yield record
