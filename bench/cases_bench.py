"""Suites at scale (issue 13): ``scenarist plan`` and ``scenarist lint`` on 10 scenario
files × 1,000 cases each (10,000 scenarios), and how soon ``scenarist run`` sends its first
request on the same suite.

Generates a suite like a team's: a tool library, and 10 scenario files that each write a
shape once — a customer asks about an order — with their data in a CSV of 1,000 rows
(``cases_file:``: ids, customers' names with accents and commas in quotes, questions,
expected values, a ``tags`` column that marks some rows ``slow``, a ``runs`` column set on
some rows). Every template reads the case: the description, the system prompt, the
question, a check's argument and text, an inline tool's answer (at each call), and one
expression reads ``case.order``.

Then, each a fresh process (no cache from an earlier run):

* ``scenarist plan SUITE`` and ``scenarist lint SUITE``, ``--repeat`` times each: wall time
  and CPU;
* ``scenarist run SUITE --max-calls 20`` against a local server that answers at once: the
  time from starting the process to the first request the server receives.

    python bench/cases_bench.py [--files 10] [--cases 1000] [--repeat 3] [--nice -15]
                                [--keep DIR]

``--nice N`` runs each command in its own scheduling group at priority N (as
``lint_bench.py --nice`` does), to approximate an idle machine on a shared one.

Targets (issue 13): plan and lint ≤ 2 s, the first request within 1 s, on the project's
2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

SUITE = """\
targets:
  shop:
    kind: openai
    base_url: {url}
    model: bench
    timeout_ms: 10000
    retry: {{max_attempts: 1}}
defaults:
  target: shop
  runs: 5
  min_pass_rate: 0.8
  concurrency: 16
tools:
  lookup_order:
    description: Look an order up by its number.
    input_schema:
      type: object
      properties: {{order: {{type: string}}}}
      required: [order]
    returns: '{{"order": "{{{{ args.order }}}}", "status": "shipped"}}'
  cancel_order:
    description: Cancel an order.
    input_schema:
      type: object
      properties: {{order: {{type: string}}}}
      required: [order]
    action: delete
    confirm: true
    returns: "Order {{{{ args.order }}}} cancelled."
"""

SCENARIO = """\
# yaml-language-server: $schema=../schemas/scenario.schema.json
# A shape written once; its data is cases_{i:02d}.csv, one row per case.
id: shop.orders_{i:02d}
description: "{{{{ customer }}}} asks about order {{{{ order }}}} ({{{{ id }}}})."
tags: [shop, orders]
cases_file: cases_{i:02d}.csv
given:
  at: 2026-{month:02d}-15T10:00:00-03:00
  system: "The customer is {{{{ customer }}}}; answer in Spanish."
  tools:
    - lookup_order
    - cancel_order
    - name: loyalty_points
      description: The customer's loyalty points.
      returns: "{{{{ customer }}}} has {{{{ points }}}} points."
when: "{{{{ question }}}}"
then:
  - calls: {{name: lookup_order, args: {{order: "{{{{ order }}}}"}}}}
  - contains: "{{{{ expected }}}}"
  - not_calls: cancel_order
  - valid_args
  - not_contains: {{text: [error, undefined], ignore_case: true}}
  - expect: "case.order in answer or count(calls) <= 3"
runs: 5
min_pass: 4
"""

NAMES = ["Ana Gómez", "José Pérez", "María, la del 3.º B", "Lucía Fernández", "Tomás Ruiz",
         "Martín \"Tincho\" López", "Sofía Díaz", "Julián Acuña"]
ASKS = ["¿Dónde está mi pedido {order}?", "Hola, ¿ya salió el pedido {order}?",
        "Necesito saber el estado de {order}, por favor.",
        "¿Cuándo llega {order}? Lo necesito para el viernes, gracias."]


def csv_field(text: str) -> str:
    if any(c in text for c in ',"\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def write_suite(root: Path, files: int, cases: int, url: str) -> None:
    rng = random.Random(13)
    (root / "scenarist.yaml").write_text(SUITE.format(url=url), "utf-8")
    for i in range(files):
        (root / f"orders_{i:02d}.yaml").write_text(
            SCENARIO.format(i=i, month=1 + i % 12), "utf-8")
        rows = ["id,customer,order,question,expected,points,tags,runs"]
        for k in range(cases):
            order = f"A-{10000 + i * cases + k}"
            ask = rng.choice(ASKS).format(order=order)
            rows.append(",".join(csv_field(v) for v in (
                f"c{k + 1:04d}", rng.choice(NAMES), order, ask, order,
                str(rng.randint(0, 5000)), "slow" if k % 10 == 0 else "",
                "8" if k % 25 == 0 else "")))
        # a spreadsheet's export: a byte order mark, CRLF line ends, a trailing empty line
        (root / f"cases_{i:02d}.csv").write_bytes(
            b"\xef\xbb\xbf" + ("\r\n".join(rows) + "\r\n\r\n").encode("utf-8"))


def command(*args: str) -> list[str]:
    exe = Path(sys.executable).with_name("scenarist")
    return [str(exe) if exe.exists() else sys.executable, *([] if exe.exists() else
                                                            ["-m", "dsl"]), *args]


NICE = 0  # --nice


def _priority() -> None:
    """In the measured process, before it starts: its own scheduling group (Linux shares
    the CPU evenly between groups, whatever their processes' nice) at the --nice priority."""
    os.setsid()
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(NICE))
    except OSError:
        pass
    os.nice(NICE)


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False, preexec_fn=_priority if NICE else None)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, r.returncode


class FirstRequest:
    """A server that answers every chat completion at once with a text answer, and notes
    when the first request arrived."""

    BODY = (b'{"id":"b","object":"chat.completion","model":"bench","choices":[{"index":0,'
            b'"finish_reason":"stop","message":{"role":"assistant","content":"Shipped."}}],'
            b'"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}')

    def __init__(self) -> None:
        self.first: float | None = None
        self.port = 0
        ready = threading.Event()
        threading.Thread(target=self._serve, args=(ready,), daemon=True).start()
        ready.wait()

    def _serve(self, ready: threading.Event) -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    if self.first is None:
                        self.first = time.perf_counter()
                    length = 0
                    for line in head.split(b"\r\n"):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":")[1])
                    await reader.readexactly(length)
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: %d\r\n\r\n" % len(self.BODY) + self.BODY)
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError):
                writer.close()

        async def main() -> None:
            server = await asyncio.start_server(handle, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            await server.serve_forever()

        asyncio.run(main())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="write the suite here and keep it")
    ap.add_argument("--nice", type=int, default=0,
                    help="run each command at this priority (negative: ahead of other work)")
    args = ap.parse_args()
    global NICE
    NICE = args.nice

    server = FirstRequest()
    root = args.keep or Path(tempfile.mkdtemp(prefix="scenarist-cases-"))
    root.mkdir(parents=True, exist_ok=True)
    write_suite(root, args.files, args.cases, f"http://127.0.0.1:{server.port}/v1")
    total = args.files * args.cases
    size = sum(f.stat().st_size for f in root.iterdir())
    print(f"{args.files} files × {args.cases:,} cases = {total:,} scenarios ({size:,} bytes); "
          f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    load = os.getloadavg()[0]
    for name, cmd in (("plan", command("plan", ".")), ("lint", command("lint", "."))):
        walls, cpus = [], []
        for _ in range(args.repeat):
            wall, cpu, code = timed(cmd, root)
            walls.append(wall)
            cpus.append(cpu)
            print(f"  {name}: {wall:.3f} s wall, {cpu:.3f} s CPU (exit {code})")
        print(f"  {name}: best {min(walls):.3f} s · median {statistics.median(walls):.3f} s · "
              f"least CPU {min(cpus):.3f} s · target ≤ 2.000 s: "
              f"{'met' if min(walls) <= 2.0 else 'NOT met'}")
    firsts = []
    for _ in range(args.repeat):
        server.first = None
        out = Path(tempfile.mkdtemp(prefix="scenarist-cases-runs-"))
        t0 = time.perf_counter()
        subprocess.run(command("run", ".", "--max-calls", "20", "--out", str(out), "-q"),
                       cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False, preexec_fn=_priority if NICE else None)
        shutil.rmtree(out, ignore_errors=True)
        if server.first is not None:
            firsts.append(server.first - t0)
            print(f"  run: first request after {server.first - t0:.3f} s")
    if firsts:
        print(f"  run: first request best {min(firsts):.3f} s · median "
              f"{statistics.median(firsts):.3f} s · target ≤ 1.000 s: "
              f"{'met' if min(firsts) <= 1.0 else 'NOT met'}")
    print(f"load average before/after: {load:.2f} / {os.getloadavg()[0]:.2f} (other work on "
          "the machine slows every figure)" + (f"; measured at nice {NICE}" if NICE else ""))
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
