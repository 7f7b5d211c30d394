"""Early stop: a suite where half the scenarios are decided early (they always pass or
always fail) and half are close to their threshold. Runs it with and without early stop
against the scripted server and reports the model calls saved and whether every verdict is
identical.

    python bench/early_stop_bench.py [--scenarios 40] [--runs 10]
"""

from __future__ import annotations

import argparse
import json
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
    ap.add_argument("--scenarios", type=int, default=40)
    ap.add_argument("--runs", type=int, default=10)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scenarist-early-"))
    server = subprocess.Popen([sys.executable, str(REPO / "tests" / "fakeserver.py"),
                               "--port", "0", "--delay-ms", "5"], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        url = f"http://127.0.0.1:{port}/v1"
        rules = []
        suite = tmp / "suite"
        suite.mkdir()
        (suite / "scenarist.yaml").write_text(json.dumps({
            "targets": {"t": {"kind": "openai", "base_url": url, "model": "m"}},
            "defaults": {"runs": a.runs, "concurrency": 8}}))
        for i in range(a.scenarios):
            kind = ("always", "never", "mostly", "borderline")[i % 4]
            # always/never are decided early; mostly passes 8 of 10; borderline 6 of 10
            ok = {"always": range(1, 99), "never": (), "mostly": (1, 2, 3, 5, 6, 7, 9, 10),
                  "borderline": (1, 3, 4, 6, 8, 10)}[kind]
            rules.append({"match": f"case-{i}-", "by_seed": {
                str(s): [{"text": "yes" if s in ok else "no"}] for s in range(1, a.runs + 1)}})
            (suite / f"s{i:03d}.yaml").write_text(
                f'given: {{at: "2026-09-29T10:00:00-03:00"}}\nwhen: "case-{i}-"\n'
                f"then: [{{equals: 'yes'}}]\nmin_pass: {a.runs * 7 // 10}\n")
        httpx.post(f"http://127.0.0.1:{port}/_script", json={"rules": rules}).raise_for_status()
        results = {}
        for label, extra in (("full", ["--no-early-stop"]), ("early", [])):
            out = tmp / label
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "dsl", "run", str(suite), "--out", str(out),
                            "-q", *extra], cwd=REPO, stdout=subprocess.DEVNULL, check=False)
            wall = time.perf_counter() - t0
            (run_dir,) = out.iterdir()
            s = json.loads((run_dir / "summary.json").read_text())
            results[label] = {
                "wall": wall,
                "calls": s["totals"]["model_calls"],
                "verdicts": {r["scenario"]: r["verdict"] for r in s["scenarios"]},
                "saved": (s.get("early_stop") or {}).get("runs", 0),
            }
        full, early = results["full"], results["early"]
        same = full["verdicts"] == early["verdicts"]
        print(f"{a.scenarios} scenarios × {a.runs} runs (half decided early)")
        print(f"  without early stop: {full['calls']} model calls, {full['wall']:.2f} s")
        print(f"  with early stop:    {early['calls']} model calls, {early['wall']:.2f} s; "
              f"{early['saved']} runs saved")
        print(f"  saved {full['calls'] - early['calls']} calls "
              f"({(full['calls'] - early['calls']) / full['calls']:.0%}); verdicts identical: "
              f"{same}")
        if not same:
            raise SystemExit("verdicts differ")
    finally:
        server.terminate()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
