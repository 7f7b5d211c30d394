"""CPU per request of the plain ``http://`` path alone (issue 31): a client and a minimal
HTTP/1.1 server in one process, 8 tasks × 400 requests over kept-alive connections after a
warm-up, measured with ``time.process_time``. With ``--base`` the same runs alternate with
another checkout (its ``.venv``'s python), whose plain path may be the hand-written
``LeanPool`` of issue 27 (main before issue 31) or ``openai.open_transport``.

    python bench/transport_bench.py [--base DIR] [--rounds 5]

The figure includes the server's share (~15 µs): compare checkouts, not absolutes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PROBE = r'''
import asyncio, json, sys, time
sys.path.insert(0, sys.argv[1])
body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "x" * 200}}],
                   "usage": {"prompt_tokens": 1}}).encode()
reply = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
         b"Connection: keep-alive\r\n\r\n" % len(body)) + body
content = b'{"model": "m", "messages": [' + b'{"role": "user", "content": "hi"}, ' * 20 + b'{}]}'
headers = [(b"Content-Type", b"application/json"), (b"Accept", b"application/json"),
           (b"User-Agent", b"scenarist/bench")]

async def main():
    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                n = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(n)
                writer.write(reply)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
    try:
        from dsl.clients.openai import open_transport
        from dsl.clients.transport import Limits, Progress
        pool = open_transport(url, headers, Limits(10, 5, 8 << 20), 16)
        async def one(i):
            return await pool.send(content + b" " * (i % 7), Progress())
    except ImportError:  # main before issue 31: the hand-written client
        try:
            from dsl.clients.http11 import LeanPool, plain_url
        except ImportError:  # (before the clients had their package)
            from dsl.targets.http11 import LeanPool, plain_url
        plain = plain_url(url)
        pool = LeanPool(plain, [(b"Host", plain.netloc.encode()), *headers], 16, 5)
        async def one(i):
            return await pool.send(content + b" " * (i % 7), 8 << 20, [])
    async def worker():
        for i in range(400):
            await one(i)
    await asyncio.gather(*[worker() for _ in range(8)])  # warm-up
    started = time.process_time()
    await asyncio.gather(*[worker() for _ in range(8)])
    spent = time.process_time() - started
    await pool.aclose()
    server.close()
    return spent / 3200 * 1e6

print(f"{asyncio.run(main()):.1f}")
'''


def python_of(checkout: Path) -> str:
    venv = checkout / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def once(checkout: Path) -> float:
    out = subprocess.run([python_of(checkout), "-c", PROBE, str(checkout)], check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, help="another checkout, measured alternately")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    checkouts = {"this": REPO, **({"base": a.base.resolve()} if a.base else {})}
    found: dict[str, list[float]] = {name: [] for name in checkouts}
    for r in range(a.rounds):
        line = []
        for name, checkout in checkouts.items():
            found[name].append(once(checkout))
            line.append(f"{name} {found[name][-1]:.1f} µs")
        print(f"  round {r + 1}: " + "; ".join(line), flush=True)
    for name, values in found.items():
        print(f"  median {name:>4}: {statistics.median(values):.1f} µs CPU per request "
              "(client and server)")


if __name__ == "__main__":
    main()
