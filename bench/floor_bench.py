"""Scenarist against the floor, measured alternately on the same mock (issue 27).

The floor is ``bench/floor_client.py``: the run workload written by hand with asyncio and
aiohttp. Each round runs the floor, then ``scenarist run`` (then, with ``--base``, the same
command from another checkout, e.g. the commit before a change), one after the other
against the same ``bench/bench_server.py``, so that whatever else the machine does weighs
on all alike. Medians over ``--rounds`` rounds. Three measurements:

* **run**: 100 scenarios × 5 runs × 2 requests = 1,000 completions, 50 ms each, 16 at
  once; the whole command (start-up, loading, the run, summary, report): wall time and
  CPU seconds per 1,000 completions, Scenarist's as a multiple of the floor's.
  Goals: wall ≤ 1.05× the floor; CPU ≤ 0.7 s per 1,000 completions.
* **0 ms**: the same against a server that answers at once: the whole command.
  Goal: ≤ 0.5 s for the 1,000 completions.
* **plan**: ``scenarist plan`` of the 100 scenarios, the whole command. Goal: ≤ 0.10 s.

    python bench/floor_bench.py [--rounds 5] [--base /path/to/other/checkout]
                                [--only run|zero|plan] [--scenarios 100] [--runs 5]

``--base`` runs ``python -m dsl`` in that checkout with its ``.venv/bin/python`` (or
this Python when it has none). aiohttp must be installed (the test extra has it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from run_bench import write_suite  # noqa: E402


def timed(cmd: list[str], cwd: Path) -> dict[str, float]:
    """Wall and CPU seconds (user + system, children included) of one command."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    assert proc.stdout is not None
    assert proc.stderr is not None
    out, err = proc.stdout.read().decode(), proc.stderr.read().decode()
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{out}{err}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mib": usage.ru_maxrss / 1024, "out": out}  # type: ignore[dict-item]


class Server:
    def __init__(self, delay_ms: float) -> None:
        self.proc = subprocess.Popen([sys.executable, str(HERE / "bench_server.py"),
                                      "--port", "0", "--delay-ms", str(delay_ms)],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.proc.stdout.readline().split()[1])}/v1"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def python_of(checkout: Path) -> str:
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def measure(name: str, tmp: Path, a: argparse.Namespace, delay_ms: float,
            contenders: list[tuple[str, Path]]) -> None:
    server = Server(delay_ms)
    try:
        suite = tmp / f"suite-{name}"
        suite.mkdir()
        write_suite(suite, a.scenarios, a.runs, server.url, a.concurrency)
        completions = a.scenarios * a.runs * 2
        limit = completions * delay_ms / 1000 / a.concurrency
        print(f"{name}: {a.scenarios} scenarios × {a.runs} runs × 2 requests = {completions:,}"
              f" completions, {delay_ms:g} ms each, {a.concurrency} at once"
              + (f"; physical limit {limit:.3f} s" if limit else ""))
        floor_cmd = [sys.executable, str(HERE / "floor_client.py"), "--url", server.url,
                     "--scenarios", str(a.scenarios), "--runs", str(a.runs),
                     "--concurrency", str(a.concurrency)]
        got: dict[str, list[dict[str, float]]] = {"floor": []}
        for label, _ in contenders:
            got[label] = []
        for r in range(a.rounds):
            f = timed(floor_cmd, REPO)
            passes = json.loads(str(f["out"]))["passes"]
            got["floor"].append(f)
            line = [f"floor {f['wall']:.3f} s / {f['cpu']:.2f} CPU-s ({passes} passed)"]
            for label, checkout in contenders:
                out = tmp / f"out-{name}-{label}-{r}"
                s = timed([python_of(checkout), "-m", "dsl", "run", str(suite),
                           "--concurrency", str(a.concurrency), "--out", str(out),
                           "--quiet", "--no-early-stop"], checkout)
                (run_dir,) = out.iterdir()
                t = json.loads((run_dir / "summary.json").read_text())["totals"]
                shutil.rmtree(out)
                got[label].append(s)
                line.append(f"{label} {s['wall']:.3f} s / {s['cpu']:.2f} CPU-s "
                            f"({t['passes']} passed, {t['errors']} errors)")
            print(f"  round {r + 1}: " + "; ".join(line))
        report(got, completions, limit)
    finally:
        server.stop()


def report(got: dict[str, list[dict[str, float]]], completions: int, limit: float) -> None:
    floor_wall = statistics.median(x["wall"] for x in got["floor"])
    floor_cpu = statistics.median(x["cpu"] for x in got["floor"])
    for label, runs in got.items():
        wall = statistics.median(x["wall"] for x in runs)
        cpu = statistics.median(x["cpu"] for x in runs)
        # the ratio of each round (same round, same machine load), then its median
        ratios = [x["wall"] / f["wall"] for x, f in zip(runs, got["floor"], strict=True)]
        print(f"  median {label:>9}: wall {wall:.3f} s"
              + (f" ({wall / limit:.2f}× limit)" if limit else "")
              + f", {wall / floor_wall:.3f}× floor (median of per-round ratios "
                f"{statistics.median(ratios):.3f}); CPU {cpu:.2f} s = "
                f"{cpu / completions * 1000:.2f} CPU-s per 1,000 completions "
                f"({cpu / floor_cpu:.2f}× floor); peak RSS "
                f"{max(x['rss_mib'] for x in runs):.0f} MiB")


def measure_plan(tmp: Path, a: argparse.Namespace, contenders: list[tuple[str, Path]]) -> None:
    suite = tmp / "suite-plan"
    suite.mkdir()
    write_suite(suite, a.scenarios, a.runs, "http://127.0.0.1:9/v1", a.concurrency)
    print(f"plan: `scenarist plan` of {a.scenarios} scenarios, the whole command")
    got: dict[str, list[dict[str, float]]] = {label: [] for label, _ in contenders}
    for _ in range(a.rounds):
        for label, checkout in contenders:
            got[label].append(timed([python_of(checkout), "-m", "dsl", "plan", str(suite)],
                                    checkout))
    for label, runs in got.items():
        walls, cpus = [x["wall"] for x in runs], [x["cpu"] for x in runs]
        print(f"  median {label:>9}: {statistics.median(walls):.3f} s (min {min(walls):.3f});"
              f" CPU {statistics.median(cpus):.3f} s (min {min(cpus):.3f})")
    if len(contenders) == 2:  # each round's ratio: the load of that moment weighs on both
        (a_label, _), (b_label, _) = contenders
        for what in ("wall", "cpu"):
            ratios = [x[what] / y[what] for x, y in zip(got[a_label], got[b_label],
                                                         strict=True)]
            print(f"  {a_label} / {b_label}, {what}: median of per-round ratios "
                  f"{statistics.median(ratios):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--base", type=Path, help="another checkout to measure alternately")
    ap.add_argument("--only", choices=["run", "zero", "plan"], action="append")
    ap.add_argument("--scenarios", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--delay-ms", type=float, default=50)
    a = ap.parse_args()
    contenders = [("scenarist", REPO)]
    if a.base is not None:
        contenders.append(("base", a.base.resolve()))
    only = set(a.only or ["run", "zero", "plan"])
    tmp = Path(tempfile.mkdtemp(prefix="scenarist-floor-"))
    try:
        if "run" in only:
            measure("run", tmp, a, a.delay_ms, contenders)
        if "zero" in only:
            measure("0 ms", tmp, a, 0, contenders)
        if "plan" in only:
            measure_plan(tmp, a, contenders)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
