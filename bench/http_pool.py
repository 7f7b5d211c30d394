"""Does sharding a target's HTTP connections still pay? The run workload of run_bench.py,
once with the pool split in shards of ``CONNECTIONS_PER_SHARD`` connections (what
dsl/clients/openai.py does) and once with one pool of all the connections.

httpcore scans every connection of a pool (and asks each socket whether it is alive) for
every request, so one big pool costs more CPU per request as concurrency grows; small
shards keep that flat. This measures it, at the concurrency of the run workload and above.

    python bench/http_pool.py [--concurrency 16 64] [--scenarios 100] [--runs 5] [--repeat 3]
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

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from run_bench import write_suite  # noqa: E402

PROBE = ("import sys, dsl.clients.openai as o; o.CONNECTIONS_PER_SHARD = int(sys.argv[1]); "
         "from dsl.cli import main; main(sys.argv[2:])")


def run_once(suite: Path, out: Path, concurrency: int, per_shard: int) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    cmd = [sys.executable, "-c", PROBE, str(per_shard), "run", str(suite), "--concurrency",
           str(concurrency), "--out", str(out), "--quiet", "--no-early-stop"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(proc.stderr.read().decode() if proc.stderr else "run failed")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--scenarios", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--delay-ms", type=float, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scenarist-pool-"))
    server = subprocess.Popen([sys.executable, str(HERE / "bench_server.py"), "--port", "0",
                               "--delay-ms", str(a.delay_ms)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline().split()[1])}/v1"
        completions = a.scenarios * a.runs * 2
        for c in a.concurrency:
            suite = tmp / f"suite{c}"
            suite.mkdir()
            write_suite(suite, a.scenarios, a.runs, url, c)
            limit = completions * a.delay_ms / 1000 / c
            print(f"concurrency {c}: {completions} completions, physical limit {limit:.2f} s")
            for label, per in (("shards of 4", 4), ("one pool", 10**6)):
                walls, cpus = [], []
                for i in range(a.repeat):
                    out = tmp / f"runs-{c}-{per}-{i}"
                    wall, cpu = run_once(suite, out, c, per)
                    (run_dir,) = out.iterdir()
                    assert json.loads((run_dir / "summary.json").read_text())["totals"][
                        "errors"] == 0
                    walls.append(wall)
                    cpus.append(cpu)
                print(f"  {label:<12} best wall {min(walls):.3f} s ({min(walls) / limit:.2f}× "
                      f"limit), least CPU {min(cpus):.2f} s "
                      f"({min(cpus) / completions * 1000:.2f} CPU-s per 1,000 completions)")
    finally:
        server.terminate()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
