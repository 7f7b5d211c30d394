"""Where a run's time goes: ``scenarist run`` of the run workload (100 scenarios × 5 runs,
the 2-request tool loop) under cProfile against ``bench/bench_server.py`` at 0 ms, with
its imports counted by ``-X importtime``; prints the stages (per run: imports, compile,
the run, summary and report; per request: the HTTP client, JSON decoding, the checks, the
record, the progress line) and the functions with the most time of their own.

    python bench/profile_run.py [--checkout DIR] [--top 15] [--save FILE.prof]

``--checkout`` profiles another checkout (its .venv's python), e.g. the commit before a
change: bench/PROFILE.md keeps both. cProfile slows small Python functions more than
C code, so read the stages as shares, and CPU seconds from bench/floor_bench.py.
"""

from __future__ import annotations

import argparse
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_bench import write_suite  # noqa: E402

# (label, file suffix, function name): cumulative time of that function
STAGES = [
    ("whole command (cProfile)", "dsl/__main__.py", "<module>"),
    ("per run: compile (load, validate, compile 100 files)", "dsl/pipeline/__init__.py",
     "plan_for"),
    ("per run: the run (all attempts)", "dsl/pipeline/__init__.py", "_execute"),
    ("per request: the HTTP client and JSON decoding (JsonEndpoint.complete)",
     "dsl/clients/openai.py", "complete"),
    ("per request: JSON decoding of replies", "dsl/targets/base.py", "read_reply_json"),
    ("per request: the agent loop (request building, tool calls; includes the client)",
     "dsl/execution/loop.py", "respond"),
    ("per attempt: a fake tool's answer", "dsl/compiler/faketools.py", "answer"),
    ("per attempt: the checks", "dsl/execution/run.py", "evaluate"),
    ("per attempt: the record (redaction, JSON line, write)", "dsl/store/rundir.py", "write"),
    ("per attempt: the progress line", "dsl/results/terminal.py", "update"),
    ("per run: finish (summary, report, CI files, history)", "dsl/pipeline/__init__.py", "finish"),
    ("per run: summary", "dsl/results/summarize.py", "summarize_records"),
    ("per run: report.html", "dsl/results/report.py", "write_report"),
]


def python_of(checkout: Path) -> str:
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkout", type=Path, default=HERE.parent)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--save", type=Path)
    a = ap.parse_args()
    checkout = a.checkout.resolve()
    python = python_of(checkout)
    # as bench/floor_bench.py: with PYTHONDONTWRITEBYTECODE set, a checkout without its
    # .pyc files compiles every module from source at each start (~0.1 s of a run)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tmp = Path(tempfile.mkdtemp(prefix="scenarist-profile-"))
    server = subprocess.Popen([sys.executable, str(HERE / "bench_server.py"), "--port", "0",
                               "--delay-ms", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline().split()[1])}/v1"
        suite = tmp / "suite"
        suite.mkdir()
        write_suite(suite, 100, 5, url, 16)
        cmd = ["-m", "dsl", "run", str(suite), "--out", str(tmp / "o1"), "--quiet",
               "--no-early-stop"]
        subprocess.run([python, *cmd], cwd=checkout, env=env, stdout=subprocess.DEVNULL,
                       check=False)  # writes the .pyc files
        cmd[cmd.index(str(tmp / "o1"))] = str(tmp / "o0")
        imports = subprocess.run([python, "-X", "importtime", *cmd], cwd=checkout, env=env,
                                 capture_output=True, text=True)
        top_level = [line.split("|") for line in imports.stderr.splitlines()
                     if line.startswith("import time:") and "|" in line]
        total_us = sum(int(c[1]) for c in top_level[1:]
                       if not c[2].startswith("  ") and c[1].strip().isdigit())
        modules = len(top_level) - 1
        prof = tmp / "run.prof"
        cmd[cmd.index(str(tmp / "o0"))] = str(tmp / "o2")
        subprocess.run([python, "-m", "cProfile", "-o", str(prof), *cmd], cwd=checkout,
                       env=env, stdout=subprocess.DEVNULL, check=False)
        if a.save:
            shutil.copy(prof, a.save)
        stats = pstats.Stats(str(prof))
        raw = stats.stats  # type: ignore[attr-defined]
        print(f"checkout {checkout}")
        print(f"imports (-X importtime, top-level, no profiler): {total_us / 1000:.0f} ms, "
              f"{modules} modules")
        print("stage | cumulative s (cProfile)")
        for label, suffix, name in STAGES:
            # the largest: a name defined twice in a file is one await inside the other
            cum = max((v[3] for (f, _, n), v in raw.items() if f.endswith(suffix) and n == name),
                      default=0.0)
            print(f"  {label} | {cum:.3f}")
        print(f"top {a.top} functions by own time:")
        rows = sorted(raw.items(), key=lambda kv: kv[1][2], reverse=True)[:a.top]
        for (f, line, name), (_, calls, tot, cum, _) in rows:
            where = f.split("site-packages/")[-1].split("/wt/")[-1]
            print(f"  {tot:7.3f} s own {cum:7.3f} s cum {calls:>8} calls  {where}:{line}({name})")
    finally:
        server.terminate()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
