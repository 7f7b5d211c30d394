"""``scenarist lsp`` as an editor drives it: a 200-line scenario in a 100-scenario suite.

Generates the suite of ``bench/lint_bench.py`` (``scenarist.yaml`` with a tool library and
100 realistic scenario files), makes one of them 200 lines long, starts ``scenarist lsp``
and speaks JSON-RPC to it over stdio, framed by hand as an editor does:

1. **diagnostics**: after the first (open), ``--changes`` one-character changes (a letter
   typed into the description, then taken back), each waited for: the time from sending
   ``textDocument/didChange`` to the ``publishDiagnostics`` of that version (the debounce
   included). Budget (issue 35): median ≤ 50 ms. The reference beside it: the same lint
   called in this process (``lint_text``), what the server cannot go below.
2. **completion** after ``then:\\n  - ``: ``--completions`` requests. Budget: median ≤ 30 ms.
3. **memory**: the server's resident set (``/proc/PID/status``) after 100 and after 1,000
   changes (``--memory-changes``), each waited for. Budget: flat (growth ≤ 10 MiB).

    python bench/lsp_bench.py [--changes 50] [--completions 50] [--memory-changes 1000]

Exits 1 when a budget is missed.
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
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from lint_bench import generate  # noqa: E402

DIAGNOSTICS_BUDGET_MS = 50.0
COMPLETION_BUDGET_MS = 30.0
MEMORY_BUDGET_MIB = 10.0
LINES = 200


def long_scenario(i: int) -> str:
    """A realistic scenario of exactly :data:`LINES` lines: a long system prompt, library
    and inline tools with argument schemas, a conversation whose turns have their own
    checks, and the scenario's checks (the generated suite's tools)."""
    lines = [
        "# yaml-language-server: $schema=../schemas/scenario.schema.json",
        f"# A long scenario ({LINES} lines): a customer changes an order over a few turns.",
        f"id: shop.long{i:04d}",
        "description: A customer asks about an order, changes its address and asks for "
        "a return.",
        "tags: [shop, long, regression]",
        "given:",
        "  at: 2026-10-05T11:30:00-03:00",
        "  system: |",
        *[f"    Rule {n}: answer in Spanish, name the order number, and never promise a "
          f"date the tools did not give ({n})." for n in range(12)],
        "  tools:",
        "    - lookup_order",
        "    - update_address",
        "    - create_return",
    ]
    for t in range(2):  # as many as scenarios have (the library has the rest)
        lines += [
            f"    - name: loyalty_{t}",
            f"      description: Loyalty programme query number {t}.",
            "      input_schema:",
            "        type: object",
            "        properties:",
            "          customer: {type: string, description: The customer number}",
            "          since: {type: string, description: A date, YYYY-MM-DD}",
            "          detail: {type: boolean}",
            "        required: [customer]",
            f"      returns: \"{{{{ args.customer }}}} has {100 + t} points.\"",
        ]
    lines.append("when:")
    for t in range(14):
        lines += [
            f"  - say: \"¿Dónde está mi pedido A-{1000 + t}? Es la consulta {t}.\"",
            "    then:",
            f"      - contains: \"A-{1000 + t}\"",
            "      - not_contains: {text: [error, undefined], ignore_case: true}",
            "      - calls: lookup_order",
        ]
    lines += [
        "  - say: Cambien la dirección del pedido A-1000 a Corrientes 1234.",
        "    then: [asks_to_confirm: update_address]",
        "  - confirm: update_address",
        "    then:",
        "      - calls: {name: update_address, args: {order: A-1000}, times: 1}",
        "then:",
        "  - valid_args",
        "  - non_empty",
        "  - not_calls: create_return",
        "  - calls_in_order: {tools: [lookup_order, update_address], threshold: 0.5}",
        "  - expect: \"count(calls) <= 12 and 'A-1000' in answer\"",
    ]
    n = 0
    while len(lines) < LINES - 2:
        lines.append(f"  - not_contains: \"respuesta {n} que no debe aparecer\"")
        n += 1
    lines += ["runs: 5", "min_pass: 4"]
    return "\n".join(lines) + "\n"


class Server:
    """``scenarist lsp`` and JSON-RPC over its stdin and stdout."""

    def __init__(self, cwd: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.process = subprocess.Popen([sys.executable, "-m", "dsl", "lsp"], cwd=cwd, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def read(self) -> dict[str, Any]:
        out = self.process.stdout
        assert out is not None
        length = 0
        while True:
            line = out.readline()
            if not line:
                raise EOFError("the server stopped")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        found: dict[str, Any] = json.loads(out.read(length))
        return found

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.read()
            if message.get("id") == self.next_id and "method" not in message:
                return message.get("result")
            if "method" in message and "id" in message:  # the server asks: say yes
                self.send({"id": message["id"], "result": None})

    def diagnostics(self, uri: str, version: int) -> list[Any]:
        while True:
            message = self.read()
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
                continue
            params = message.get("params") or {}
            if (message.get("method") == "textDocument/publishDiagnostics"
                    and params.get("uri") == uri and params.get("version") == version):
                found: list[Any] = params["diagnostics"]
                return found

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kib = next(int(line.split()[1]) for line in status.splitlines()
                   if line.startswith("VmRSS:"))
        return kib / 1024

    def stop(self) -> int:
        self.request("shutdown", None)
        self.send({"method": "exit", "params": None})
        return self.process.wait(60)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--changes", type=int, default=50)
    ap.add_argument("--completions", type=int, default=50)
    ap.add_argument("--memory-changes", type=int, default=1000)
    ap.add_argument("--keep", type=Path, help="generate the suite here and keep it")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        generate(root, 100, 0)
        path = root / "scenarios" / "s0003.yaml"
        text = long_scenario(3)
        path.write_text(text, "utf-8")
        assert text.count("\n") == LINES
        uri = path.resolve().as_uri()
        lines = text.split("\n")
        desc = next(n for n, line in enumerate(lines) if line.startswith("description:"))
        end = len(lines[desc])

        # the floor: lint of the same text in this process
        from dsl.compiler.lint import lint_text

        lint_text(path, text)
        floor = []
        for n in range(max(args.changes, 10)):
            changed = text.replace("description: ", f"description: {'x' * (n % 2)}", 1)
            t0 = time.perf_counter()
            lint_text(path, changed)
            floor.append((time.perf_counter() - t0) * 1000)

        server = Server(root)
        t0 = time.perf_counter()
        server.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(),
                                      "capabilities": {}})
        server.send({"method": "initialized", "params": {}})
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": 1, "text": text}}})
        first = server.diagnostics(uri, 1)
        first_ms = (time.perf_counter() - t0) * 1000
        assert first == [], first

        version = 1

        def change(n: int) -> float:
            """Type a letter at the end of the description (odd n), or take it back."""
            nonlocal version
            version += 1
            edit = ({"range": {"start": {"line": desc, "character": end},
                               "end": {"line": desc, "character": end}}, "text": "x"}
                    if n % 2 == 0 else
                    {"range": {"start": {"line": desc, "character": end},
                               "end": {"line": desc, "character": end + 1}}, "text": ""})
            t0 = time.perf_counter()
            server.send({"method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version}, "contentChanges": [edit]}})
            server.diagnostics(uri, version)
            return (time.perf_counter() - t0) * 1000

        changes = [change(n) for n in range(args.changes)]

        # completion after `then:\n  - ` (a new item under then)
        at = lines.index("then:") + 1  # the scenario's own then:, after the turns
        version += 1
        server.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [
                {"range": {"start": {"line": at, "character": 0},
                           "end": {"line": at, "character": 0}}, "text": "  - \n"}]}})
        server.diagnostics(uri, version)
        completions = []
        for _ in range(args.completions):
            t0 = time.perf_counter()
            found = server.request("textDocument/completion", {
                "textDocument": {"uri": uri}, "position": {"line": at, "character": 4}})
            completions.append((time.perf_counter() - t0) * 1000)
            assert "contains" in [i["label"] for i in found["items"]]
        version += 1
        server.send({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [
                {"range": {"start": {"line": at, "character": 0},
                           "end": {"line": at + 1, "character": 0}}, "text": ""}]}})
        server.diagnostics(uri, version)

        # memory over many changes
        rss = []
        for n in range(args.memory_changes):
            change(n)
            if n + 1 in (100, args.memory_changes):
                rss.append(server.rss_mib())
        code = server.stop()

    med_change, med_completion = statistics.median(changes), statistics.median(completions)
    med_floor = statistics.median(floor)
    growth = rss[-1] - rss[0] if len(rss) == 2 else 0.0
    print(f"suite: 100 scenarios; the file: {LINES} lines; exit status {code}")
    print(f"first diagnostics (start, initialize, open): {first_ms:.0f} ms")
    print(f"diagnostics after a one-character change: median {med_change:.1f} ms, "
          f"p90 {_p90(changes):.1f} ms over {len(changes)} (budget {DIAGNOSTICS_BUDGET_MS:.0f} "
          f"ms); lint_text alone in this process: median {med_floor:.1f} ms "
          f"(ratio {med_change / med_floor:.2f})")
    print(f"completion after 'then:\\n  - ': median {med_completion:.1f} ms, "
          f"p90 {_p90(completions):.1f} ms over {len(completions)} "
          f"(budget {COMPLETION_BUDGET_MS:.0f} ms)")
    if len(rss) == 2:
        print(f"memory: {rss[0]:.1f} MiB after 100 changes, {rss[1]:.1f} MiB after "
              f"{args.memory_changes} (growth {growth:+.1f} MiB, budget "
              f"{MEMORY_BUDGET_MIB:.0f})")
    ok = (med_change <= DIAGNOSTICS_BUDGET_MS and med_completion <= COMPLETION_BUDGET_MS
          and growth <= MEMORY_BUDGET_MIB and code == 0)
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


def _p90(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.9) - 1] if values else 0.0


if __name__ == "__main__":
    sys.exit(main())
