"""What the one rule of redaction costs per attempt (issue 32: the checks see the true values,
the record is kept redacted with which of the scenario's secrets each mark stands for).

    python bench/redact_bench.py [--records 2000] [--rounds 5] [--secrets 0.3]

Takes report_bench.py's realistic records (2-4 tool calls with their outputs, a transcript,
3-6 checks with a judge's evidence), puts a card token the scenario holds into a share of
them (``--secrets``: the person's message, a call's arguments, the answer), and times,
alternately round after round in this process, per record:

* **before** — what a run did per attempt until this change: the checks' view redacted
  (``Redactor.value`` of the answer, calls, messages and turns) and the line written
  redacted (``record_line(r, redactor.value)``);
* **now** — ``run_one``'s part: ``checked_data`` (the view the checks see: the record traced
  once) and ``kept_record`` (the record traced again, with its checks), then the line
  written as it is (``record_line(r)``).

Prints microseconds per record, the best round and the median, and their ratio.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from msgspec.structs import replace  # noqa: E402
from report_bench import generate  # noqa: E402

from dsl.compiler.redact import Known, Redactor, build  # noqa: E402
from dsl.errors import Span  # noqa: E402
from dsl.execution.run import checked_data, kept_record, known_secrets  # noqa: E402
from dsl.model import AttemptData, Call, Scenario, Tokens  # noqa: E402
from dsl.store import latest_records  # noqa: E402
from dsl.store.records import AttemptRecord, record_line  # noqa: E402

TOKEN = "tok_K7Q2M9XZ"


def with_secret(r: AttemptRecord, i: int, share: float) -> AttemptRecord:
    if (i * 7919) % 1000 >= share * 1000:
        return r
    calls = tuple(replace(c, args={**(c.args or {}), "card_id": TOKEN}) for c in r.calls)
    return replace(r, answer=f"{r.answer} Your card {TOKEN} is blocked.", calls=calls)


def data_of(r: AttemptRecord) -> AttemptData:
    return AttemptData(message="", answer=r.answer, calls=r.calls,
                       at=dt.datetime(2026, 9, 29, tzinfo=dt.UTC), tools=(), steps=r.steps,
                       latency_ms=r.latency_ms or 0.0, tokens=r.tokens or Tokens(),
                       messages=r.messages, turns=r.turns)


def before(records: list[AttemptRecord], redactor: Redactor) -> None:
    red = redactor.value
    for r in records:
        d = data_of(r)
        red(d.answer)
        red([[c.args, c.raw_args, c.output] for c in d.calls])
        red(d.messages)
        red([[t.text, t.answer, t.failure] for t in d.turns])
        record_line(r, red)


def now(records: list[AttemptRecord], redactor: Redactor, known: Known) -> None:
    for r in records:
        d = data_of(r)
        _seen, clean = checked_data(d, replace(r, checks=()), redactor, known)
        record_line(kept_record(r, redactor, known, clean))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--secrets", type=float, default=0.3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        generate(folder, max(1, a.records // 10), 10)
        records = [with_secret(r, i, a.secrets)
                   for i, r in enumerate(latest_records(folder))][:a.records]
    redactor = build([], {"card-token": r"tok_[A-Z0-9]{8}", "api-key": r"\bsk-[A-Za-z0-9]{16,}"})
    scenario = Scenario("s", "s.yaml", Span("s.yaml", 1, 1), "", (), dt.datetime.now(dt.UTC),
                        "", (), f"Block my card {TOKEN}", (), 1, 1, 6,
                        history_calls=(Call(),))
    known = known_secrets(redactor, scenario)
    times: dict[str, list[float]] = {"before": [], "now": []}
    for _ in range(a.rounds):
        for name in ("before", "now"):
            t0 = time.perf_counter()
            if name == "before":
                before(records, redactor)
            else:
                now(records, redactor, known)
            times[name].append((time.perf_counter() - t0) / len(records) * 1e6)
    for name, ts in times.items():
        print(f"{name:>6}: best {min(ts):7.1f} µs per record, median {statistics.median(ts):7.1f}")
    print(f"ratio now/before: best {min(times['now']) / min(times['before']):.2f}×, median "
          f"{statistics.median(times['now']) / statistics.median(times['before']):.2f}×")


if __name__ == "__main__":
    main()
