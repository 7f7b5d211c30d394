"""Peak memory stays flat with the number of attempts: results stream to disk as they end,
summaries read them back as a stream, and the runner keeps nothing per attempt.

Runs `scenarist run` against a server that answers at once (0 ms), for 10,000 and then
100,000 attempts (one request each), and reports each run's peak RSS and time; then
`scenarist report` of that run folder (the summary and the report made again from its
results.jsonl) with its peak RSS. Target (issue 27): <= 120 MiB at 100,000 attempts.

    python bench/memory_bench.py [--sizes 10000 100000] [--concurrency 16] [--checkout DIR]

``--checkout`` measures another checkout's `scenarist` (its .venv's python), e.g. the
commit before a change.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--scenarios", type=int, default=100)
    ap.add_argument("--checkout", type=Path, default=REPO)
    a = ap.parse_args()
    checkout = a.checkout.resolve()
    venv = checkout / ".venv" / "bin" / "python"
    python = str(venv) if venv.exists() else sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="scenarist-mem-"))
    server = subprocess.Popen([sys.executable, str(REPO / "tests" / "fakeserver.py"),
                               "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        httpx.post(f"http://127.0.0.1:{port}/_script", json={
            "rules": [], "default": [{"text": "Your order has shipped."}]}).raise_for_status()
        for size in a.sizes:
            runs = size // a.scenarios
            suite = tmp / f"suite{size}"
            suite.mkdir()
            (suite / "scenarist.yaml").write_text(json.dumps({
                "targets": {"t": {"kind": "openai", "base_url": f"http://127.0.0.1:{port}/v1",
                                  "model": "m"}},
                "defaults": {"runs": runs, "concurrency": a.concurrency}}))
            for i in range(a.scenarios):
                (suite / f"s{i:03d}.yaml").write_text(
                    f'given: {{at: "2026-09-29T10:00:00-03:00"}}\nwhen: "Where is order '
                    f'{i}?"\nthen: [{{contains: shipped}}, non_empty]\n')
            out = tmp / f"runs{size}"
            t0 = time.perf_counter()
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            proc = subprocess.Popen([python, "-m", "dsl", "run", str(suite), "--out",
                                     str(out), "-q", "--no-early-stop"], cwd=checkout,
                                    stdout=subprocess.DEVNULL, env=env)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            (run_dir,) = out.iterdir()
            # counted a megabyte at a time: a child's peak RSS (ru_maxrss) starts from this
            # process's at the fork, so reading the whole file here would show in the next
            with (run_dir / "results.jsonl").open("rb") as f:
                lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
            report = (run_dir / "report.html").stat().st_size / 2**20
            print(f"{size:>7,} attempts: peak RSS {usage.ru_maxrss / 1024:.0f} MiB, "
                  f"{wall:.1f} s, results {lines:,} lines, report {report:.1f} MiB "
                  f"(exit {os.waitstatus_to_exitcode(status)})")
            t0 = time.perf_counter()
            proc = subprocess.Popen([python, "-m", "dsl", "report", str(run_dir)], cwd=checkout,
                                    stdout=subprocess.DEVNULL, env=env)
            _, status, usage = os.wait4(proc.pid, 0)
            print(f"{'':>7}  scenarist report of it: peak RSS {usage.ru_maxrss / 1024:.0f} MiB, "
                  f"{time.perf_counter() - t0:.1f} s (exit {os.waitstatus_to_exitcode(status)})")
            shutil.rmtree(out)
    finally:
        server.terminate()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
