"""Benchmark the HTML report at 10,000 attempts.

    python bench/report_bench.py [--scenarios 200] [--runs 50] [--out bench/out/report-10k]

Writes a run folder with realistic attempts (2-4 tool calls each, tool outputs and answers
of realistic length, 3-6 checks, some failures, unsure verdicts and endpoint errors), then
measures against the issue's budget:

* writing — ``scenarist report RUN_DIR`` as a fresh process, wall clock (≤ 3 s);
* size — of report.html (≤ 25 MB);
* first paint — first-contentful-paint of the report in Chromium (≤ 2 s), plus the time
  to open a scenario and an attempt (the lazy rendering).

Exits 1 when a budget is exceeded. Needs Debian's chromium at /usr/bin/chromium (or
--chromium PATH) and Playwright's Python package.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "results")]

from report_builders import CHROMIUM_ARGS  # noqa: E402

from dsl.model import SCHEMA_VERSION  # noqa: E402
from dsl.store import write_json  # noqa: E402

BUDGET_WRITE_S = 3.0
BUDGET_SIZE_MB = 25.0
BUDGET_PAINT_S = 2.0

WORDS = ("the clinic is open from nine to six on weekdays and until one on saturday we can "
         "book a cleaning for you on tuesday at three in the afternoon please confirm that "
         "you want the appointment and bring your insurance card the dentist will see you "
         "after the checkup there is a free slot at ten thirty or at four thirty turno "
         "limpieza martes horario sábado cerrado confirmar paciente consulta")
TOOLS = ("list_business_hours", "search_slots", "book_appointment", "cancel_appointment",
         "get_patient", "list_treatments", "set_business_hours", "send_reminder")


VOCABULARY = WORDS.split()


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(n)).capitalize() + "."


def tool_output(rng: random.Random, name: str, args: dict) -> str:
    """What a fake tool returns: fixed data, or a template over the arguments — so the same
    call gives the same text in every run (as Scenarist's tools do)."""
    if name == "list_business_hours":
        week = dict.fromkeys(("monday", "tuesday", "wednesday", "thursday", "friday"),
                             "09:00-18:00")
        return json.dumps(week | {"saturday": "09:00-13:00", "sunday": "closed"})
    local = random.Random(f"{name}{args['date']}")
    items = [{"id": local.randint(1000, 9999),
              "time": f"{local.randint(9, 17)}:{local.choice(['00', '30'])}",
              "note": words(local, local.randint(4, 12))} for _ in range(local.randint(1, 5))]
    return json.dumps({"tool": name, "date": args["date"], "results": items},
                      ensure_ascii=False)


def make_attempt(rng: random.Random, sid: str, spec: dict, run: int, system: str,
                 flaky: float) -> dict:
    status = "pass"
    roll = rng.random()
    if roll < 0.01:
        status = "error"
    elif roll < 0.03:
        status = "unsure"
    elif roll < 0.03 + flaky:
        status = "fail"
    n_calls = rng.randint(2, 4)
    calls, messages = [], [{"role": "system", "content": system},
                           {"role": "user", "content": spec["message"]}]
    for j in range(n_calls):
        name = rng.choice(TOOLS)
        args = {"date": f"2026-10-{rng.randint(5, 8):02d}", "patient": spec["patient"]}
        cid = f"call_{run}_{j}"
        pending = name in ("book_appointment", "cancel_appointment") and j == n_calls - 1
        out = None if pending else tool_output(rng, name, args)
        calls.append({"id": cid, "name": name, "args": args, "output": out,
                      "action": "create" if pending else "read", "pending": pending,
                      "step": j + 1})
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}]})
        if not pending:
            messages.append({"role": "tool", "tool_call_id": cid, "content": out})
    answer = words(rng, rng.randint(40, 160))
    if status == "error":
        answer = ""
    else:
        messages.append({"role": "assistant", "content": answer})
    checks = []
    for i, c in enumerate(spec["checks"]):
        st = "pass"
        if status == "fail" and i == spec["flaky_check"]:
            st = "fail"
        elif status == "unsure" and c["judge"]:
            st = "unsure"
        check = {"check": c["check"], "label": c["label"], "status": st,
                 "score": 1.0 if st == "pass" else 0.0,
                 "reason": (f"the answer has what {c['label']} expects" if st == "pass" else
                            f"expected {c['label']}, but the answer was: {answer[:80]}")}
        if c["judge"]:
            check["evidence"] = {"prompt": "Grade the answer against the tool outputs.",
                                 "raw_reply": words(rng, 30) + " SCORE: 0.8",
                                 "reason": words(rng, 15), "confidence": 0.9}
        checks.append(check)
    if status == "error":
        checks = []
    if status == "unsure" and not any(c["status"] == "unsure" for c in checks):
        status = "pass"
    latency = rng.uniform(400, 6000)
    rec = {"schema_version": SCHEMA_VERSION, "scenario": sid, "target": "local", "run": run,
           "seed": run, "status": status,
           "reason": {"pass": f"all {len(checks)} checks passed",
                      "fail": f"1 of {len(checks)} checks failed",
                      "unsure": "the judge was unsure",
                      "error": "timeout: no answer within 30 s"}[status],
           "started_at": f"2026-11-30T10:{run % 60:02d}:00.000+00:00",
           "answer": answer, "calls": calls, "messages": messages, "steps": n_calls + 1,
           "latency_ms": None if status == "error" else round(latency, 1),
           "tokens": {"prompt": 900, "completion": 200, "total": 1100}, "checks": checks,
           "error": ({"kind": "timeout", "message": "no answer within 30 s", "status": None}
                     if status == "error" else None),
           "retries": 0,
           "model_calls": [{"latency_ms": round(latency / (n_calls + 1), 1),
                            "finish_reason": "tool_calls", "tokens": 300, "retries": 0}
                           for _ in range(n_calls + 1)]}
    return rec


def generate(out: Path, n_scenarios: int, runs: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    scenarios = []
    for i in range(n_scenarios):
        sid = f"clinic.case_{i:03d}"
        n_checks = rng.randint(3, 6)
        checks = [{"check": "contains", "label": f'contains: "{rng.choice(VOCABULARY)}"',
                   "judge": False, "line": 10 + k} for k in range(n_checks - 1)]
        checks.append({"check": "faithful", "label": "faithful", "judge": True,
                       "line": 10 + n_checks})
        scenarios.append({
            "id": sid, "file": f"scenarios/clinic/case_{i:03d}.yaml", "line": 1,
            "description": words(rng, rng.randint(6, 14)),
            "tags": rng.sample(["clinic", "booking", "hours", "safety", "smoke"], 2),
            "at": "2026-09-29T10:00:00-03:00", "system": "",
            "message": words(rng, rng.randint(8, 25)),
            "tools": [], "expected_tools": [], "checks": checks, "runs": runs,
            "min_pass": max(1, int(runs * 0.8)), "max_steps": 6, "patient": words(rng, 2),
            "flaky_check": rng.randrange(n_checks)})
    system = ("You are the assistant of Clínica Sonrisa, a dental clinic in Buenos Aires. "
              "Answer briefly, in the language the person writes in. Use the tools to look "
              "facts up; never invent opening hours or appointments.\n\n"
              "Current date and time: Tuesday 29 September 2026, 10:00 (UTC-03:00).")
    target = {"name": "local", "kind": "openai", "model": "qwen2.5-coder-0.5b",
              "base_url": "http://127.0.0.1:8088/v1", "api_key_env": None,
              "temperature": 0.7, "params": {}}
    plan = {"schema_version": SCHEMA_VERSION, "suite": "scenarist.yaml", "targets": [target],
            "scenarios": scenarios, "attempts": n_scenarios * runs, "max_model_calls": 0,
            "concurrency": 8}
    write_json(out / "plan.json", plan)
    write_json(out / "run.json", {"schema_version": SCHEMA_VERSION, "run_id": out.name,
                                  "suite": "scenarist.yaml",
                                  "started_at": "2026-11-30T10:00:00+00:00",
                                  "finished_at": "2026-11-30T11:02:00+00:00",
                                  "duration_s": 3720.0, "targets": [target], "argv": []})
    n = 0
    with (out / "results.jsonl").open("w", encoding="utf-8") as f:
        for run in range(1, runs + 1):
            for spec in scenarios:
                flaky = 0.3 if int(spec["id"][-3:]) % 5 == 0 else 0.03
                rec = make_attempt(rng, spec["id"], spec, run, system, flaky)
                f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
                n += 1
    return n


OPEN_TIMED = """async ([click, drawn]) => {
  const t0 = performance.now();
  document.querySelector(click).click();
  while (!document.querySelector(drawn)) await new Promise(r => setTimeout(r, 0));
  await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  return performance.now() - t0;
}"""


def first_paint(report: Path, chromium: str) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            t0 = time.perf_counter()
            page.goto(report.as_uri(), wait_until="load", timeout=60_000)
            load_wall = time.perf_counter() - t0
            fcp = page.evaluate("""() => {
                const e = performance.getEntriesByType('paint')
                  .find(p => p.name === 'first-contentful-paint');
                return e ? e.startTime : null; }""")
            nav = page.evaluate("""() => {
                const n = performance.getEntriesByType('navigation')[0];
                return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd}; }""")
            lcp = page.evaluate("""() => new Promise(resolve => {
                new PerformanceObserver(list => {
                  const all = list.getEntries();
                  resolve(all[all.length - 1].startTime);
                }).observe({type: 'largest-contentful-paint', buffered: true});
                setTimeout(() => resolve(null), 2000); })""")
            # Timed inside the page, from the click to the next frame with the result drawn.
            open_scenario = page.evaluate(OPEN_TIMED, ["tbody.sc button.toggle",
                                                       "tbody.sc details.attempt"]) / 1000
            open_attempt = page.evaluate(OPEN_TIMED, ["tbody.sc details.attempt > summary",
                                                      "tbody.sc .transcript"]) / 1000
            if errors:
                raise SystemExit(f"the page raised: {errors}")
            return {"fcp_ms": fcp, "lcp_ms": lcp, "dcl_ms": nav["dcl"], "load_ms": nav["load"],
                    "load_wall_s": load_wall, "open_scenario_s": open_scenario,
                    "open_attempt_s": open_attempt}
        finally:
            browser.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", type=int, default=200)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "report-10k")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--repeat", type=int, default=3, help="timed report writes (best is kept)")
    ap.add_argument("--no-browser", action="store_true",
                    help="skip the first paint in Chromium (e.g. for 100,000 attempts)")
    ap.add_argument("--checkout", type=Path, default=ROOT,
                    help="the checkout whose `scenarist report` is measured (its .venv's "
                         "python when it has one), e.g. the commit before a change")
    a = ap.parse_args()

    t = time.perf_counter()
    n = generate(a.out, a.scenarios, a.runs)
    print(f"generated {n:,} attempts in {a.out} "
          f"({(a.out / 'results.jsonl').stat().st_size / 1e6:.1f} MB of results.jsonl) "
          f"in {time.perf_counter() - t:.1f} s")

    checkout = a.checkout.resolve()
    venv = checkout / ".venv" / "bin" / "python"
    python = str(venv) if venv.exists() else sys.executable
    env = dict(os.environ, PYTHONPATH=str(checkout))
    times, cpu, rss = [], [], []
    for _ in range(a.repeat):
        t = time.perf_counter()
        proc = subprocess.Popen([python, "-m", "dsl", "report", str(a.out.resolve())],
                                env=env, cwd=checkout, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        times.append(time.perf_counter() - t)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit("scenarist report failed")
        cpu.append(usage.ru_utime + usage.ru_stime)
        rss.append(usage.ru_maxrss / 1024)
    write_s = min(times)
    report = a.out / "report.html"
    size_mb = report.stat().st_size / 1e6
    print(f"scenarist report: {write_s:.2f} s (best of {a.repeat}: "
          f"{', '.join(f'{x:.2f}' for x in times)}; CPU time "
          f"{', '.join(f'{x:.2f}' for x in cpu)})  [budget {BUDGET_WRITE_S} s]")
    print(f"  peak RSS of scenarist report (summary and report of {n:,} attempts): "
          f"{max(rss):.0f} MiB  [issue 27: <= 120 MiB at 100,000 attempts]")
    print(f"  (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs: other work on "
          "this machine slows the wall-clock figures)")
    print(f"report.html: {size_mb:.1f} MB  [budget {BUDGET_SIZE_MB} MB]")

    if a.no_browser:
        ok = write_s <= BUDGET_WRITE_S * n / 10_000 and size_mb <= BUDGET_SIZE_MB * n / 10_000
        print("within budget (scaled to the attempts)" if ok else "OVER BUDGET")
        return 0 if ok else 1
    paint = first_paint(report, a.chromium)
    fcp_s = (paint["fcp_ms"] or float("inf")) / 1000
    lcp = paint["lcp_ms"]
    print(f"first contentful paint: {fcp_s:.2f} s  [budget {BUDGET_PAINT_S} s]; largest "
          f"contentful paint {'–' if lcp is None else f'{lcp / 1000:.2f} s'}; "
          f"DOMContentLoaded (table sortable) {paint['dcl_ms'] / 1000:.2f} s, "
          f"load {paint['load_ms'] / 1000:.2f} s")
    print(f"open a scenario (parses the data, draws {a.runs} attempt lines): "
          f"{paint['open_scenario_s']:.2f} s; open an attempt (draws its transcript): "
          f"{paint['open_attempt_s']:.2f} s")
    ok = write_s <= BUDGET_WRITE_S and size_mb <= BUDGET_SIZE_MB and fcp_s <= BUDGET_PAINT_S
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
