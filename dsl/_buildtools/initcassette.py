"""Records ``dsl/assets/init/example.jsonl``: the answers of Scenarist's example pharmacy
agent to the suite docs/guide.md ends with (the example ``scenarist init`` writes, and the
two scenarios the guide has the reader add), which the ``example`` replay target plays
back.

The example agent is a script for ``tests/fakeserver.py`` (:data:`EXAMPLE_AGENT`): it looks
prescriptions up before it answers, refills only what can be refilled, reads the opening
hours — a well-behaved assistant, with its wording varying a little from seed to seed. It
is recorded the way any target is: ``scenarist run --record`` against the server, through
the agent loop, with the system prompt of :data:`dsl.init.SYSTEM_PROMPT`.

    python -m dsl._buildtools.initcassette

Run it after changing the example scenario, the init suite's tools or the guide's
scenarios; tests/cli/test_init.py fails until the cassette answers them all.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from ..init import CASSETTE, Endpoint, init_suite
from .guide import ROOT, guide_suite

MODEL = "example-agent"


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args}]}


EMPTY = "RX-1001 (losartan 50 mg) has no refills left, so I cannot refill it."
EXAMPLE_AGENT: dict[str, Any] = {
    "rules": [
        {"match": "RX-1001", "replies": [
            _call("check_prescription", rx="RX-1001"),
            {"text": f"{EMPTY} Please ask your doctor for a new prescription."}],
         "by_seed": {"3": [_call("check_prescription", rx="RX-1001"),
                           {"text": f"Sorry: {EMPTY} Your Doctor can write you a new one."}]}},
        {"match": "RX-2002", "replies": [
            _call("check_prescription", rx="RX-2002"),
            _call("create_refill_request", rx="RX-2002"),
            {"text": "Done: your refill of RX-2002 (metformin 850 mg) will be ready tomorrow "
                     "after 10:00."}]},
        {"match": "open", "replies": [
            _call("list_opening_hours"),
            {"text": "Today, Tuesday, we are open until 20:00."}]},
    ],
    "default": [{"text": "I can help with prescriptions and our opening hours."}],
}


def record(out: Path) -> None:
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fakeserver.py"),
                               "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        httpx.post(f"http://127.0.0.1:{port}/_script", json=EXAMPLE_AGENT).raise_for_status()
        with tempfile.TemporaryDirectory() as tmp:
            suite = Path(tmp) / "pharmacy"
            guide_suite(suite)
            # the same suite, with the example agent as its (openai) target
            live = Path(tmp) / "live"
            init_suite(live, Endpoint(f"http://127.0.0.1:{port}/v1", MODEL))
            (live / "scenarist.yaml").write_text(_with_tools(
                (live / "scenarist.yaml").read_text("utf-8"),
                (suite / "scenarist.yaml").read_text("utf-8")), "utf-8")
            for f in suite.glob("*.yaml"):
                if f.name != "scenarist.yaml":
                    (live / f.name).write_text(f.read_text("utf-8"), "utf-8")
            recorded = Path(tmp) / "example.jsonl"
            p = subprocess.run([sys.executable, "-m", "dsl", "run", ".", "--no-early-stop",
                                "-j", "1", "--record", str(recorded), "--out",
                                str(Path(tmp) / "runs")], cwd=live, capture_output=True,
                               text=True, env={"PYTHONPATH": str(ROOT), "NO_COLOR": "1",
                                               "PATH": "/usr/bin:/bin"})
            if p.returncode != 0:
                raise SystemExit(f"the example agent does not pass the guide's suite:\n"
                                 f"{p.stdout}{p.stderr}")
            lines = recorded.read_text("utf-8").splitlines()
            header = json.loads(lines[0])
            header["recorded_at"] = "2026-10-01T09:00:00+00:00"  # no churn when re-recorded
            header["target"] = MODEL
            out.write_text("\n".join([json.dumps(header, ensure_ascii=False), *lines[1:]])
                           + "\n", "utf-8")
    finally:
        server.terminate()
        server.wait(timeout=10)


def _with_tools(live: str, guide: str) -> str:
    """The live suite's targets and defaults, with the tools the guide's suite ends with."""
    return live.split("\ntools:\n")[0] + "\ntools:\n" + guide.split("\ntools:\n", 1)[1]


def main() -> int:
    record(CASSETTE)
    print(f"wrote {CASSETTE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
