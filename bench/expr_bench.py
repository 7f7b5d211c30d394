"""Benchmark of the expression language: how long compiling and evaluating take.

    python bench/expr_bench.py [--quick]

Prints: the one-time cost of building the parser; compiling 10,000 distinct expressions
(parse, type check, closures); evaluating typical expressions 1,000,000 times each on a
realistic attempt (dsl/expr/sample.py) — one with a regular expression, whose search is
bounded in time, one without; and the first through the `expect` check (the verdict and
its Outcome). --quick runs a tenth of each, for a smoke test.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dsl.checks.expect import Expect, expect
from dsl.expr import compile_expression, env_for
from dsl.expr.parse import parser
from dsl.expr.sample import attempt

TYPICAL = (
    "count(calls) <= 2 and answer matches '15[:.]00'",  # the example of DESIGN.md
    "called('book_appointment') and call('book_appointment').args.time == '15:00'",
)
BATCHES = 10

# Realistic checks; {n} makes each one distinct.
TEMPLATES = (
    "count(calls) <= {k} and answer matches '{h}[:.]{n}'",
    "weekday(date(call('book_appointment').args.date)) < 5 or latency_ms > {n}",
    "'word{n}' in lower(answer) or called('search_slots')",
    "all(calls, action != 'delete') and latency_ms < {n}",
    "count(calls[name == 'tool_{n}']) == {k}",
    "call('search_slots').output.slots[{k}] == '{h}:{n}'",
    "date(call('book_appointment').args.date) - date(at.date) <= {n}",
    "not called('cancel_{n}') and tokens < 4000",
    "number(call('search_slots').output.price) < {n}.5",
    "any(calls, pending and name == 'tool_{n}') or steps <= {k}",
)


def expressions(count: int) -> list[str]:
    out: list[str] = []
    i = 0
    while len(out) < count:
        t = TEMPLATES[i % len(TEMPLATES)]
        n = i // len(TEMPLATES)
        out.append(t.format(n=n, h=10 + n % 14, k=n % 7))
        i += 1
    assert len(set(out)) == count
    return out


def timed(run: Callable[[], object], n: int) -> tuple[float, float]:
    """Total seconds for ``n`` runs, and the best per-run time of BATCHES batches (the
    figure least disturbed by other work on the machine)."""
    per = n // BATCHES
    best = float("inf")
    total = 0.0
    gc.collect()
    for _ in range(BATCHES):
        t0 = time.perf_counter()
        for _ in range(per):
            run()
        took = time.perf_counter() - t0
        total += took
        best = min(best, took / per)
    return total, best


def main(argv: list[str]) -> int:
    cli = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    cli.add_argument("--quick", action="store_true", help="a tenth of the work (smoke test)")
    quick = cli.parse_args(argv).quick
    n_compile = 1_000 if quick else 10_000
    n_eval = 100_000 if quick else 1_000_000

    t0 = time.perf_counter()
    parser()
    build = time.perf_counter() - t0
    print(f"parser built once in {build * 1000:.0f} ms (grammar/expr.lark, LALR)")

    texts = expressions(n_compile)
    gc.collect()
    t0 = time.perf_counter()
    for text in texts:
        compile_expression(text)
    took = time.perf_counter() - t0
    print(f"compile {n_compile:,} distinct expressions: {took:.2f} s "
          f"({took / n_compile * 1e6:.0f} µs each)")

    a = attempt()
    env = env_for(a)
    for text in TYPICAL:
        program = compile_expression(text)
        assert program.evaluate(env) is True
        total, best = timed(lambda p=program: p.evaluate(env), n_eval)
        print(f"evaluate {text!r} {n_eval:,} times: {total:.2f} s ({total / n_eval * 1e6:.2f} "
              f"µs each; best batch {best * 1e6:.2f} µs)")

    program = compile_expression(TYPICAL[0])
    params = Expect("", program)
    n_check = n_eval // 10
    total, best = timed(lambda: expect(params, a), n_check)
    print(f"the first as an expect check (verdict and outcome) {n_check:,} times: "
          f"{total / n_check * 1e6:.2f} µs each; best batch {best * 1e6:.2f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
