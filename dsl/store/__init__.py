"""The store: what Scenarist keeps on disk about runs.

* :mod:`~dsl.store.records` — the attempt record, the one description of a line of
  ``results.jsonl``, with its JSON read and write;
* :mod:`~dsl.store.rundir` — the run folder: ``plan.json``, ``run.json``,
  ``results.jsonl`` (appended as each attempt ends), ``summary.json``; resume and merge.

The other stages that write files write their own artifact through :func:`write_atomic`
and :func:`write_json` (the report, junit.xml, summary.md, the judge's cache, cassettes).
"""

from .records import (
    AttemptError,
    AttemptRecord,
    CheckResult,
    ModelCallStat,
    RecordError,
    check_version,
    record_from_json,
    record_json,
    record_line,
)
from .rundir import (
    ATTACHMENTS,
    PLAN,
    RESULTS,
    RUN,
    SUMMARY,
    ResultsWriter,
    RunLock,
    copy_attachments,
    create_run_dir,
    iter_results,
    latest_records,
    merge_runs,
    new_run_id,
    read_attachment,
    read_json,
    store_attachments,
    truncate_torn,
    write_atomic,
    write_json,
)

__all__ = [
    "ATTACHMENTS", "PLAN", "RESULTS", "RUN", "SUMMARY", "AttemptError", "AttemptRecord",
    "CheckResult", "ModelCallStat", "RecordError", "ResultsWriter", "RunLock",
    "check_version", "copy_attachments", "create_run_dir", "iter_results", "latest_records",
    "merge_runs", "new_run_id", "read_attachment", "read_json", "record_from_json",
    "record_json", "record_line", "store_attachments", "truncate_torn", "write_atomic",
    "write_json",
]
