"""plan.json is made beside a run's first attempts: by a forked process only while the
process has a single thread (a fork in a process with threads can deadlock the child),
else by a thread. The first record waits for the file; a problem while making it stops the
run in the run's own thread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from dsl.compiler.compile import build_plan
from dsl.compiler.plan import plan_json
from dsl.model import Plan
from dsl.pipeline import PlanWriter
from dsl.store.background import forkable
from tests.conftest import HOURS, REPO, FakeServer, plain_suite, write


@pytest.fixture
def plan(tmp_path: Path, server: FakeServer) -> Plan:
    plain_suite(tmp_path, server.url)
    write(tmp_path / "hours.yaml", HOURS)
    return build_plan([tmp_path])[0]


def test_a_process_with_another_thread_never_forks() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert not forkable()
    finally:
        stop.set()
        other.join()


ALONE = """
import json, sys, threading
from pathlib import Path
from dsl.compiler.compile import build_plan
from dsl.pipeline import PlanWriter
from dsl.store.background import forkable
root = Path(sys.argv[1])
plan = build_plan([root])[0]
alone = forkable()
writer = PlanWriter(plan, background=True)
writer.write_to(root / "plan.json")
child = writer._child
threads = threading.active_count()
writer.wait()
failing = PlanWriter(plan, background=True)
failing.write_to(root / "gone" / "plan.json")
try:
    failing.wait()
    said = None
except OSError as exc:
    said = str(exc)
print(json.dumps([alone, child > 0, threads, failing._child == 0, said]))
"""


def test_a_process_with_one_thread_forks_and_the_child_writes_it(plan: Plan,
                                                                  tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-c", ALONE, str(tmp_path)], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)},
                       check=False)
    assert p.returncode == 0, p.stderr
    alone, forked, threads, reaped, said = json.loads(p.stdout)
    assert (alone, forked, threads, reaped) == (True, True, 1, True)  # no thread started
    assert said == f"cannot write {tmp_path / 'gone' / 'plan.json'}: the process that " \
                   "wrote it failed"
    assert p.stderr == ""  # no warning about forking with threads
    written = json.loads((tmp_path / "plan.json").read_text("utf-8"))
    assert written == json.loads(json.dumps(plan_json(plan), ensure_ascii=False))


def test_with_threads_plan_json_is_written_by_a_thread_not_a_fork(plan: Plan, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("os.fork was called")

    monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.setattr("dsl.store.background.forkable", lambda: False)  # as when threads run
    started = threading.Event()
    release = threading.Event()
    import dsl.compiler.plan

    real = dsl.compiler.plan.plan_json

    def slow(p: Plan) -> dict[str, object]:
        started.set()
        release.wait(10)
        return real(p)

    monkeypatch.setattr(dsl.compiler.plan, "plan_json", slow)
    writer = PlanWriter(plan, background=True)
    target = tmp_path / "plan.json"
    writer.write_to(target)
    assert started.wait(10)  # it is being made while write_to has returned
    assert [t.name for t in threading.enumerate()].count("scenarist-plan-json") == 1
    assert not target.exists()
    release.set()
    writer.wait()
    assert json.loads(target.read_text("utf-8")) == json.loads(
        json.dumps(plan_json(plan), ensure_ascii=False))
    assert "scenarist-plan-json" not in [t.name for t in threading.enumerate()]


def test_a_plan_json_that_cannot_be_written_is_an_os_error_on_wait(
        plan: Plan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dsl.store.background.forkable", lambda: False)
    writer = PlanWriter(plan, background=True)
    writer.write_to(tmp_path / "gone" / "plan.json")
    with pytest.raises(OSError, match=r"^cannot write .*gone/plan\.json: "):
        writer.wait()
    assert writer.error is not None
    assert writer.error.startswith("cannot write ")


def test_a_bug_while_making_it_is_raised_in_the_runs_thread(plan: Plan, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    import dsl.compiler.plan

    def broken(p: Plan) -> dict[str, object]:
        raise RuntimeError("plan_json broke")

    monkeypatch.setattr(dsl.compiler.plan, "plan_json", broken)
    monkeypatch.setattr("dsl.store.background.forkable", lambda: False)
    writer = PlanWriter(plan, background=True)
    writer.write_to(tmp_path / "plan.json")
    with pytest.raises(RuntimeError, match=r"^plan_json broke$"):
        writer.wait()
    writer.wait_quietly()  # the run's cleanup never raises it again


def test_result_waits_for_the_thread_instead_of_making_it_twice(plan: Plan, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    import dsl.compiler.plan

    made = []
    real = dsl.compiler.plan.plan_json

    def counted(p: Plan) -> dict[str, object]:
        made.append(1)
        return real(p)

    monkeypatch.setattr(dsl.compiler.plan, "plan_json", counted)
    monkeypatch.setattr("dsl.store.background.forkable", lambda: False)
    writer = PlanWriter(plan, background=True)
    writer.write_to(tmp_path / "plan.json")
    assert writer.result()["scenarios"][0]["id"] == "hours"
    assert made == [1]


def test_aimed_but_never_started_it_is_made_by_wait(plan: Plan, tmp_path: Path) -> None:
    writer = PlanWriter(plan, background=True)
    writer.aim(tmp_path / "plan.json")
    assert not (tmp_path / "plan.json").exists()  # nothing started it yet
    writer.wait()
    assert json.loads((tmp_path / "plan.json").read_text("utf-8"))["scenarios"][0]["id"] \
        == "hours"
    writer.start()  # too late to start: nothing happens, nothing is made twice
    assert writer._child == 0
    assert writer._thread is None


CTRL_C = """
import json, os, signal, sys, time
from pathlib import Path
import dsl.compiler.plan
from dsl.compiler.compile import build_plan
from dsl.pipeline import PlanWriter
root = Path(sys.argv[1])
plan = build_plan([root])[0]
real = dsl.compiler.plan.plan_json
def slow(p):
    (root / "making").write_text("")
    time.sleep(0.5)
    return real(p)
dsl.compiler.plan.plan_json = slow  # the forked child makes it slowly
writer = PlanWriter(plan, background=True)
writer.write_to(root / "plan.json")
child = writer._child
while not (root / "making").exists():
    time.sleep(0.01)
os.kill(child, signal.SIGINT)  # what Ctrl-C does to the process group
writer.wait()
print(json.dumps({"forked": child > 0, "error": writer.error,
                  "written": (root / "plan.json").exists()}))
"""


def test_ctrl_c_never_stops_the_forked_child_half_way(plan: Plan, tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-c", CTRL_C, str(tmp_path)], cwd=REPO,
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"forked": True, "error": None, "written": True}


SMALL_RUN = """
import json, sys
import dsl.store.background
forks = []
def no_fork(child):
    forks.append(child)
    return -1
dsl.store.background._fork = no_fork
from dsl.cli import main
try:
    main(["run", ".", "--out", "runs", "--quiet"])
except SystemExit as exc:
    code = exc.code
print("RESULT " + json.dumps({"exit": code, "forks": len(forks)}))
"""


def test_a_run_smaller_than_plan_apart_at_makes_its_plan_without_a_fork(
        tmp_path: Path, server: FakeServer) -> None:
    # the first record comes well after the moment a larger plan would be forked (50 ms)
    server.script({"rules": [{"replies": [{"text": "Hasta las 18:00.", "delay_ms": 400}]}]})
    plain_suite(tmp_path, server.url)
    write(tmp_path / "hours.yaml", HOURS)
    r = subprocess.run([sys.executable, "-c", SMALL_RUN], cwd=tmp_path, timeout=120,
                       capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"})
    line = next((x for x in r.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, r.stdout + r.stderr
    result = json.loads(line.removeprefix("RESULT "))
    assert result["forks"] == 0
    assert result["exit"] in (0, 1), r.stderr  # the run ran (its verdict is not the point)
    (plan_file,) = (tmp_path / "runs").glob("*/plan.json")
    assert (plan_file.parent / "results.jsonl").read_text("utf-8").count("\n") >= 1
    assert json.loads(plan_file.read_text("utf-8"))["scenarios"][0]["id"] == "hours"
