"""Reading results.jsonl back, per record (issue 31: typed files with msgspec).

    python bench/records_bench.py [--checkout DIR] [--scenarios 200] [--runs 50] [--rounds 5]

Writes report_bench.py's realistic run folder (10,000 attempts: 2-4 tool calls with their
outputs, a transcript, 3-6 checks, a judged one with its evidence), then times reading every
record back through the store's one reader (``dsl.store.iter_results``: the bytes of each
line to a typed, frozen record, every field checked) in a fresh process of this checkout —
and, with ``--checkout``, of another one (its ``.venv``), round after round alternately:
microseconds per record, the best of the rounds and their median. The summary, the report,
merge and recheck all read records this way.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from report_bench import generate  # noqa: E402

READ = """
import gc, sys, time
from pathlib import Path
from dsl.store import iter_results
run = Path(sys.argv[1])
best = None
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    n = sum(1 for _ in iter_results(run))
    took = time.perf_counter() - t0
    best = took if best is None else min(best, took)
    gc.collect()
print(n, best)
"""


def python_of(checkout: Path) -> str:
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def read_once(checkout: Path, run: Path, repeat: int) -> tuple[int, float]:
    out = subprocess.run([python_of(checkout), "-c", READ, str(run), str(repeat)],
                         cwd=checkout, capture_output=True, text=True, check=True).stdout
    n, took = out.split()
    return int(n), float(took)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkout", type=Path, help="another checkout to measure alternately")
    ap.add_argument("--scenarios", type=int, default=200)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3, help="reads per process (the best)")
    a = ap.parse_args()
    contenders = [("this", REPO)] + ([("checkout", a.checkout.resolve())] if a.checkout else [])
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        generate(run, a.scenarios, a.runs)
        size = (run / "results.jsonl").stat().st_size
        got: dict[str, list[float]] = {label: [] for label, _ in contenders}
        for r in range(a.rounds):
            line = []
            for label, checkout in contenders:
                n, took = read_once(checkout, run, a.repeat)
                got[label].append(took / n * 1e6)
                line.append(f"{label} {got[label][-1]:.1f} µs")
            print(f"  round {r + 1}: " + "; ".join(line))
        print(f"{n:,} records ({size / n / 1024:.1f} KiB a line on average)")
        for label, per in got.items():
            print(f"  {label:>8}: best {min(per):.1f} µs per record, median "
                  f"{statistics.median(per):.1f} µs")
        if a.checkout:
            print(f"  this / checkout: {min(got['this']) / min(got['checkout']):.2f}× (best), "
                  f"{statistics.median(got['this']) / statistics.median(got['checkout']):.2f}×"
                  " (median)")


if __name__ == "__main__":
    main()
