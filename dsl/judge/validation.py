"""Has this judge been measured? ``.scenarist/judge-validation.json`` remembers.

``scenarist judge-check`` records what it measured — for one judge: its target and model,
its mode, its prompts' versions, its calibration and min_confidence — with the labels
file's hash, Cohen's kappa and the coverage. The report and the terminal ask
:func:`validation_for` whether the judge of a run is one that was measured, and show
:func:`validation_text`: its kappa and coverage, or ``not validated — run scenarist
judge-check``. A judge that changed in any of those respects is not validated any more.

A run asks once, when it starts (it has the judge's settings), and keeps the answer in
run.json with :meth:`ValidationInfo.as_json`; the report, which reads stored files only,
shows ``validation_text(ValidationInfo.from_json(run["judge"]["validation"]))``.

The file::

    {"schema_version": 1,
     "validations": [{"judge": {target, model, mode, prompts, calibration, min_confidence},
                      "labels": {file, sha256, questions}, "figures": {...},
                      "checked_at": "2026-12-01T10:00:00+00:00"}, ...]}

One entry per judge and labels file (the latest measurement replaces the one before).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import JudgeConfig
from ..targets.kinds import answered_by
from .ask import prompt_versions

VALIDATION_FILE = Path(".scenarist") / "judge-validation.json"
SCHEMA_VERSION = 1
NOT_VALIDATED = "not validated — run scenarist judge-check"


class ValidationFileError(ValueError):
    """The file exists but cannot be used (unreadable, or written by a newer Scenarist)."""


@dataclass(frozen=True, slots=True)
class ValidationInfo:
    """One judge-check measurement of the judge a run uses."""

    target: str
    model: str
    mode: str
    labels_file: str
    labels_sha256: str
    questions: int
    kappa: float | None  # Cohen's kappa on the questions it decided (not unsure)
    coverage: float | None  # share of the questions it decided
    agreement: float | None  # agreement on the questions it decided
    checked_at: str  # ISO 8601
    figures: Mapping[str, Any]  # everything judge-check measured (dsl.judge.calibration)

    def as_json(self) -> dict[str, Any]:
        """For run.json: the report shows the validation as it was when the run ran."""
        return {"target": self.target, "model": self.model, "mode": self.mode,
                "labels_file": self.labels_file, "labels_sha256": self.labels_sha256,
                "questions": self.questions, "kappa": self.kappa, "coverage": self.coverage,
                "agreement": self.agreement, "checked_at": self.checked_at,
                "figures": dict(self.figures)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> ValidationInfo | None:
        if not isinstance(data, Mapping):
            return None
        return cls(str(data.get("target", "")), str(data.get("model", "")),
                   str(data.get("mode", "")), str(data.get("labels_file", "")),
                   str(data.get("labels_sha256", "")), int(data.get("questions") or 0),
                   data.get("kappa"), data.get("coverage"), data.get("agreement"),
                   str(data.get("checked_at", "")), dict(data.get("figures") or {}))

    @property
    def text(self) -> str:
        """``κ 0.62, coverage 71% (judge-check on 64 labelled questions, 2026-12-01)``."""
        kappa = "–" if self.kappa is None else f"{self.kappa:.2f}"
        coverage = "–" if self.coverage is None else f"{self.coverage:.0%}"
        return (f"κ {kappa}, coverage {coverage} (judge-check on {self.questions} labelled "
                f"questions, {self.checked_at[:10]})")


def validation_text(info: ValidationInfo | None) -> str:
    """What people see beside a judge's verdicts."""
    return NOT_VALIDATED if info is None else info.text


def judge_identity(config: JudgeConfig) -> dict[str, Any]:
    """Everything that makes a judge the judge that was measured (a JudgeConfig)."""
    target = config.target
    model = config.model or answered_by(target)
    calibration = ({"yes_no": config.calibration.yes_no, "digits": config.calibration.digits}
                   if config.mode == "logprobs" else None)
    return {"target": target.name, "model": model, "mode": config.mode,
            "prompts": prompt_versions(config), "calibration": calibration,
            "min_confidence": config.min_confidence}


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ValidationFileError(f"{path} cannot be read: {exc}") from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        version = data.get("schema_version") if isinstance(data, dict) else None
        raise ValidationFileError(
            f"{path} has schema_version {version!r}; this Scenarist reads version "
            f"{SCHEMA_VERSION} (it was written by another version: run judge-check again)")
    entries = data.get("validations")
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def validation_for(suite_root: Path, judge_config: JudgeConfig) -> ValidationInfo | None:
    """The latest judge-check measurement of exactly this judge, or None (never measured,
    measured with other settings, or a file this version cannot read)."""
    try:
        entries = _read(Path(suite_root) / VALIDATION_FILE)
    except ValidationFileError:
        return None
    identity = judge_identity(judge_config)
    matching = [e for e in entries if e.get("judge") == identity]
    if not matching:
        return None
    e = max(matching, key=lambda e: str(e.get("checked_at", "")))
    labels = e.get("labels") or {}
    f = e.get("figures") or {}
    return ValidationInfo(identity["target"], identity["model"], identity["mode"],
                          str(labels.get("file", "")), str(labels.get("sha256", "")),
                          int(labels.get("questions", 0)), f.get("kappa_covered"),
                          f.get("coverage"), f.get("agreement_covered"),
                          str(e.get("checked_at", "")), f)


def labels_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record_validation(suite_root: Path, judge_config: JudgeConfig, labels: Path,
                      questions: int, figures: Mapping[str, Any],
                      now: dt.datetime | None = None) -> Path:
    """Store one measurement (replacing the one of the same judge and labels file);
    ValidationFileError when the file there cannot be safely rewritten."""
    path = Path(suite_root) / VALIDATION_FILE
    entries = _read(path)
    identity = judge_identity(judge_config)
    digest = labels_hash(labels)
    try:
        shown = str(labels.resolve().relative_to(Path(suite_root).resolve()))
    except ValueError:
        shown = str(labels)
    entry = {"judge": identity,
             "labels": {"file": shown, "sha256": digest, "questions": questions},
             "figures": dict(figures),
             "checked_at": (now or dt.datetime.now(dt.UTC)).isoformat(timespec="seconds")}
    kept = [e for e in entries
            if not (e.get("judge") == identity and (e.get("labels") or {}).get("sha256")
                    == digest)]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"schema_version": SCHEMA_VERSION,
                               "validations": [*kept, entry]}, ensure_ascii=False, indent=1)
                   + "\n", "utf-8")
    os.replace(tmp, path)
    return path
