"""``kind: command`` attempts: what starting, asking and ending one program per attempt
costs — the end included (the process group, the sweep of /proc for what the program
started, its output read to the end). A suite of N one-turn scenarios against a program
that answers at once and starts one child, run with ``scenarist run``; the wall time of
the whole command, against a reference checkout run alternately in the same session.

    python bench/command_bench.py --reference /work/main [--attempts 40] [--concurrency 4]
                                  [--repeat 3]

Prints each run's seconds and the median ratio (this tree ÷ the reference).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

PROGRAM = """
import json, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
for line in sys.stdin:
    print(json.dumps({"answer": "Abrimos hasta las 18:00."}), flush=True)
"""


def write_suite(root: Path, attempts: int, concurrency: int) -> None:
    (root / "agent.py").write_text(PROGRAM)
    (root / "scenarist.yaml").write_text(json.dumps({
        "targets": {"cmd": {"kind": "command", "command": [sys.executable, "agent.py"]}},
        "defaults": {"runs": attempts, "min_pass_rate": 0.5, "concurrency": concurrency}}))
    (root / "hours.yaml").write_text(
        'given: {at: "2026-09-29T10:00:00-03:00"}\nwhen: hola\nthen: [{contains: "18:00"}]\n')


def once(checkout: Path, root: Path, out: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout), "NO_COLOR": "1"}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "dsl", "run", ".", "--out", out, "--quiet",
                    "--no-early-stop"], cwd=root, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", type=Path, required=True, help="a checkout to compare with")
    ap.add_argument("--attempts", type=int, default=40)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="scenarist-command-bench-") as tmp:
        root = Path(tmp)
        write_suite(root, a.attempts, a.concurrency)
        ours: list[float] = []
        theirs: list[float] = []
        for i in range(a.repeat):
            theirs.append(once(a.reference, root, f"ref{i}"))
            ours.append(once(REPO, root, f"ours{i}"))
            print(f"round {i + 1}: reference {theirs[-1]:.2f} s, this tree {ours[-1]:.2f} s",
                  flush=True)
    ratio = statistics.median(o / t for o, t in zip(ours, theirs, strict=True))
    print(f"{a.attempts} attempts at concurrency {a.concurrency}: median ratio {ratio:.2f} "
          "(this tree ÷ reference)")


if __name__ == "__main__":
    main()
