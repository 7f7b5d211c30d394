"""The store: what Scenarist keeps on disk about runs — each file of a run folder with its
one reader and its one writer, a frozen msgspec Struct decoded and encoded by msgspec,
checking ``schema_version`` and every field's type.

* :mod:`~dsl.store.records` — the attempt record, the one description of a line of
  ``results.jsonl``, with its JSON read and write;
* :mod:`~dsl.store.planfile` — ``plan.json``: :class:`PlanFile`, its
  :class:`PlannedScenario` and :class:`PlannedTarget`;
* :mod:`~dsl.store.runfile` — ``run.json``: :class:`RunInfo`;
* :mod:`~dsl.store.summaryfile` — ``summary.json``: :class:`Summary`, its rows and its
  per-check rows;
* :mod:`~dsl.store.typed` — the one decoder and encoder of those Structs: msgspec reads a
  file into its Struct, checking ``schema_version`` (here, once) and every field, and its
  located error becomes one sentence with the place (``'run' is text, not a whole
  number``); :mod:`~dsl.store.jsonfile` — a file written atomically, opened as a regular
  file and read no further than its limit;
* :mod:`~dsl.store.rundir` — the run folder: its id, its lock, results appended as each
  attempt ends, resume and merge;
* :mod:`~dsl.store.background` — a file made beside the run (plan.json), by a forked
  process when that is safe (:func:`~dsl.store.background.forkable`, which lint asks too).

The other stages that write files write their own artifact through :func:`write_atomic`
and :func:`write_json` (the report, junit.xml, summary.md, the judge's cache, cassettes);
:func:`write_new` writes a file that must not replace one (``scenarist import``).

The names below are imported from their module when first used: a command that reads no
run folder (``lint`` asks :func:`~dsl.store.background.forkable`) pays for none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .jsonfile import (
        read_json,
        write_atomic,
        write_json,
        write_new,
    )
    from .planfile import (
        PLAN,
        PlanFile,
        PlannedScenario,
        PlannedTarget,
        read_plan,
        write_plan,
    )
    from .records import (
        AttemptError,
        AttemptRecord,
        CheckResult,
        ModelCallStat,
        read_record,
        record_from_json,
        record_json,
        record_line,
    )
    from .rundir import (
        ATTACHMENTS,
        RESULTS,
        ResultsWriter,
        RunLock,
        copy_attachments,
        create_run_dir,
        iter_results,
        latest_records,
        merge_runs,
        new_run_id,
        read_attachment,
        store_attachments,
        truncate_torn,
    )
    from .runfile import (
        RUN,
        RunInfo,
        read_run_info,
        write_run_info,
    )
    from .summaryfile import (
        SUMMARY,
        Summary,
        SummaryRow,
        read_summary,
        write_summary,
    )
    from .typed import check_version

_HOME = {
    "ATTACHMENTS": "rundir",
    "AttemptError": "records",
    "AttemptRecord": "records",
    "CheckResult": "records",
    "ModelCallStat": "records",
    "PLAN": "planfile",
    "PlanFile": "planfile",
    "PlannedScenario": "planfile",
    "PlannedTarget": "planfile",
    "RESULTS": "rundir",
    "RUN": "runfile",
    "read_record": "records",
    "ResultsWriter": "rundir",
    "RunInfo": "runfile",
    "RunLock": "rundir",
    "SUMMARY": "summaryfile",
    "Summary": "summaryfile",
    "SummaryRow": "summaryfile",
    "check_version": "typed",
    "copy_attachments": "rundir",
    "create_run_dir": "rundir",
    "iter_results": "rundir",
    "latest_records": "rundir",
    "merge_runs": "rundir",
    "new_run_id": "rundir",
    "read_attachment": "rundir",
    "read_json": "jsonfile",
    "read_plan": "planfile",
    "read_run_info": "runfile",
    "read_summary": "summaryfile",
    "record_from_json": "records",
    "record_json": "records",
    "record_line": "records",
    "store_attachments": "rundir",
    "truncate_torn": "rundir",
    "write_atomic": "jsonfile",
    "write_json": "jsonfile",
    "write_new": "jsonfile",
    "write_plan": "planfile",
    "write_run_info": "runfile",
    "write_summary": "summaryfile",
}

__all__ = [
    "ATTACHMENTS",
    "PLAN",
    "RESULTS",
    "RUN",
    "SUMMARY",
    "AttemptError",
    "AttemptRecord",
    "CheckResult",
    "ModelCallStat",
    "PlanFile",
    "PlannedScenario",
    "PlannedTarget",
    "ResultsWriter",
    "RunInfo",
    "RunLock",
    "Summary",
    "SummaryRow",
    "check_version",
    "copy_attachments",
    "create_run_dir",
    "iter_results",
    "latest_records",
    "merge_runs",
    "new_run_id",
    "read_attachment",
    "read_json",
    "read_plan",
    "read_record",
    "read_run_info",
    "read_summary",
    "record_from_json",
    "record_json",
    "record_line",
    "store_attachments",
    "truncate_torn",
    "write_atomic",
    "write_json",
    "write_new",
    "write_plan",
    "write_run_info",
    "write_summary",
]


def __getattr__(name: str) -> Any:
    """``dsl.store.NAME``: the name from its module, imported now (PEP 562)."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
