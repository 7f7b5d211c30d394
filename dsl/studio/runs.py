"""Run on the page: ``scenarist run`` itself (:func:`dsl.pipeline.run_suite`) in a thread,
its hooks turned into events the page reads as server-sent events — how many attempts
there are, each one that ends, the run's messages, and at the end the verdict in words
and where the report is. The run folder and the history entry are the ones ``scenarist
run`` writes (the suite's ``runs/`` folder)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, NotReady, RunDirError, render
from ..pipeline import Hooks, RunRequest, run_suite
from ..verdict import words

if TYPE_CHECKING:
    from ..execution.run import Totals
    from ..store import AttemptRecord
    from ..store.summaryfile import Summary


@dataclass(slots=True)
class Job:
    """One run: its events so far (appended by the run's thread, read by the page)."""

    id: str
    scenario: str | None = None  # the scenario file run (None: the whole suite)
    events: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, **data: Any) -> None:
        with self.lock:
            self.events.append({"event": kind, "scenario": self.scenario, **data})
            if kind in ("finished", "failed"):
                self.done = True

    def since(self, n: int) -> tuple[list[dict[str, Any]], bool]:
        with self.lock:
            return self.events[n:], self.done


class Runs:
    """The studio's runs: one at a time, each a :class:`Job`."""

    ids = itertools.count(1)

    def __init__(self, root: Path, grant: Callable[[str], str]) -> None:
        self.root = root
        self.grant = grant  # the key of the links to one run folder (server.Keys.grant)
        self.jobs: dict[str, Job] = {}
        self.current: Job | None = None
        self.lock = threading.Lock()  # two clicks on Run start one run

    def start(self, paths: tuple[Path, ...], target: str | None,
              scenario: str | None = None) -> Job:
        """A run of ``paths`` (the whole suite: its folder) against ``target``;
        ``scenario``: the file the page ran, named in every event so that the page says
        each run's result beside the scenario it ran."""
        with self.lock:
            if self.current is not None and not self.current.done:
                raise RunBusy("a run is going already; wait for it to end")
            job = Job(str(next(self.ids)), scenario)
            self.jobs[job.id] = job
            self.current = job
        threading.Thread(target=self._run, args=(job, paths, target), daemon=True,
                         name=f"studio-run-{job.id}").start()
        return job

    def _run(self, job: Job, paths: tuple[Path, ...], target: str | None) -> None:
        argv = ("run", *(str(p) for p in paths), *(("--target", target) if target else ()))
        request = RunRequest(paths=paths, targets=(target,) if target else (),
                             out=self.root / "runs", argv=("studio", *argv))
        todo = [0]

        def started(n: int) -> None:
            todo[0] = n
            job.add("started", todo=n)

        def attempt(record: AttemptRecord, totals: Totals) -> None:
            job.add("attempt", done=totals.attempts, todo=todo[0], passed=totals.passed,
                    failed=totals.failed, errors=totals.errors)

        hooks = Hooks(on_attempt=attempt, notify=lambda m: job.add("note", message=m),
                      started=started)
        try:
            result = run_suite(request, hooks)
        except InputError as exc:
            job.add("failed", message="The run did not start: the files have problems.",
                    problems=[render(d) for d in exc.diagnostics])
            return
        except (NotReady, RunDirError) as exc:
            job.add("failed", message=f"The run did not start: {exc}", problems=[])
            return
        except Exception as exc:  # said on the page rather than lost in a thread
            job.add("failed", message=f"The run stopped: {exc}", problems=[])
            return
        for note in result.notes:
            job.add("note", message=note)
        run_dir = result.run_dir.resolve()
        runs = (self.root / "runs").resolve()
        report = ""
        if run_dir.parent == runs and (run_dir / "report.html").is_file():
            report = f"/r/{self.grant(run_dir.name)}/{run_dir.name}/report.html"
        job.add("finished", verdict=verdict_words(result.summary), report=report,
                run_dir=str(run_dir), exit_code=result.exit_code)


class RunBusy(Exception):
    """A run is going already."""


def verdict_words(summary: Summary) -> str:
    """The run's verdict in a sentence: how many scenario × target pairs passed, failed
    or had no verdict."""
    rows = summary.scenarios
    if not rows:
        return "The run ended with nothing run."
    if len(rows) == 1:
        r = rows[0]
        return (f"The run ended: {r.scenario} {words(r.verdict).word} with "
                f"{r.target} ({r.passes} of {r.decided} attempts passed, "
                f"{r.min_pass} needed).")
    counts = {v: sum(r.verdict == v for r in rows) for v in ("pass", "fail", "inconclusive")}
    parts = [f"{counts['pass']} of {len(rows)} passed"]
    if counts["fail"]:
        parts.append(f"{counts['fail']} failed")
    if counts["inconclusive"]:
        parts.append(f"{counts['inconclusive']} had no verdict")
    return "The run ended: " + ", ".join(parts) + "."
