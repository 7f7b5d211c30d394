"""The core workload: 100 scenarios × 5 runs, each a 2-request tool loop (the model calls
one tool, gets its result, answers), against a local server that answers every request
after 50 ms, at concurrency 16 — 1,000 completions. The physical limit is
1000 × 0.05 / 16 = 3.125 s.

Measures the whole ``scenarist run`` command (start-up, loading and validating 100 files,
the run, summary and report): wall time against the limit, CPU seconds per 1,000
completions, and peak RSS.

    python bench/run_bench.py [--scenarios 100] [--runs 5] [--concurrency 16] [--delay-ms 50]
                              [--repeat 3] [--fail-rate 0.0] [--throttle-rate 0.0]

Targets (issue 2): ≤ 1.15× the limit, ≤ 1.5 CPU-s per 1,000 completions, ≤ 120 MiB.
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


def write_suite(root: Path, scenarios: int, runs: int, url: str, concurrency: int) -> None:
    (root / "scenarist.yaml").write_text(json.dumps({
        "targets": {"bench": {"kind": "openai", "base_url": url, "model": "bench",
                              "timeout_ms": 30000,
                              "retry": {"max_attempts": 4, "backoff_ms": 50}}},
        "defaults": {"runs": runs, "min_pass_rate": 0.8, "concurrency": concurrency},
        "tools": {"lookup_order": {
            "description": "Look an order up by its number.",
            "input_schema": {"type": "object", "properties": {"order": {"type": "string"}},
                             "required": ["order"]},
            "returns": '{"order": "{{ args.order }}", "status": "shipped", "eta": "2026-10-02"}',
        }},
    }))
    for i in range(scenarios):
        (root / f"s{i:03d}.yaml").write_text(f"""\
id: bench.s{i:03d}
description: Customer {i} asks where order {1000 + i} is.
tags: [bench]
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [lookup_order]
when: "Where is my order {1000 + i}?"
then:
  - calls: {{name: lookup_order, args: {{order: "{1000 + i}"}}}}
  - contains: shipped
  - does_not_modify
  - valid_args
""")


def run_once(suite: Path, out: Path, concurrency: int) -> dict[str, float]:
    # as installed: bytecode cached (PYTHONDONTWRITEBYTECODE, even "0", turns that off)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    cmd = [sys.executable, "-m", "dsl", "run", str(suite), "--concurrency", str(concurrency),
           "--out", str(out), "--quiet", "--no-early-stop"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"scenarist run failed ({proc.returncode}): "
                         f"{proc.stderr.read().decode() if proc.stderr else ''}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mib": usage.ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--delay-ms", type=float, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--fail-rate", type=float, default=0.0,
                    help="share of requests answered 500 (retried)")
    ap.add_argument("--throttle-rate", type=float, default=0.0,
                    help="share of requests answered 429 with Retry-After: 0.2")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scenarist-bench-"))
    server = subprocess.Popen([sys.executable, str(HERE / "bench_server.py"), "--port", "0",
                               "--delay-ms", str(a.delay_ms), "--throttle-rate",
                               str(a.throttle_rate), "--fail-rate", str(a.fail_rate)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        url = f"http://127.0.0.1:{port}/v1"
        suite = tmp / "suite"
        suite.mkdir()
        write_suite(suite, a.scenarios, a.runs, url, a.concurrency)
        completions = a.scenarios * a.runs * 2
        limit = completions * a.delay_ms / 1000 / a.concurrency
        print(f"workload: {a.scenarios} scenarios × {a.runs} runs × 2 requests = "
              f"{completions} completions, {a.delay_ms:.0f} ms each, concurrency "
              f"{a.concurrency}; physical limit {limit:.3f} s")
        results = []
        for i in range(a.repeat):
            out = tmp / f"runs{i}"
            r = run_once(suite, out, a.concurrency)
            (run_dir,) = out.iterdir()
            summary = json.loads((run_dir / "summary.json").read_text())
            t = summary["totals"]
            results.append(r)
            print(f"  run {i + 1}: wall {r['wall']:.3f} s ({r['wall'] / limit:.2f}× limit), "
                  f"CPU {r['cpu']:.2f} s ({r['cpu'] / completions * 1000:.2f} CPU-s per 1,000 "
                  f"completions), peak RSS {r['rss_mib']:.0f} MiB; attempts {t['attempts']}, "
                  f"passes {t['passes']}, errors {t['errors']}, retries {t['retries']}")
        best = min(results, key=lambda r: r["wall"])
        print(f"best: {best['wall']:.3f} s = {best['wall'] / limit:.2f}× the limit; "
              f"{best['cpu'] / completions * 1000:.2f} CPU-s per 1,000 completions; "
              f"peak RSS {best['rss_mib']:.0f} MiB")
    finally:
        server.terminate()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
