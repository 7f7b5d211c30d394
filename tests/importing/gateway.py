"""A logging proxy, as an API gateway is: it forwards each chat-completions request to an
upstream OpenAI-compatible server and appends one JSON line per exchange to a log —
``{"timestamp", "request", "response"}`` — the format ``scenarist import --format openai``
reads. A real HTTP server on 127.0.0.1, started as its own process:

    python tests/importing/gateway.py --upstream http://127.0.0.1:PORT/v1 --log FILE

It prints ``PORT <n>`` once it listens. ``--offset -03:00`` writes each timestamp in that
UTC offset (a gateway in Buenos Aires); without it, in UTC.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


class Gateway(BaseHTTPRequestHandler):
    upstream = ""
    log = ""
    zone: dt.tzinfo = dt.UTC
    lock = threading.Lock()

    def do_POST(self) -> None:  # the name http.server calls
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        path = self.path.removeprefix("/v1")
        started = dt.datetime.now(self.zone)
        reply = httpx.post(self.upstream + path, content=raw, timeout=30,
                           headers={"Content-Type": "application/json"})
        body: Any = reply.json() if reply.headers.get("content-type", "").startswith(
            "application/json") else reply.text
        with self.lock, open(self.log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"timestamp": started.isoformat(timespec="milliseconds"),
                                "request": json.loads(raw), "response": body},
                               ensure_ascii=False) + "\n")
        self.send_response(reply.status_code)
        self.send_header("Content-Type", reply.headers.get("content-type", "application/json"))
        self.send_header("Content-Length", str(len(reply.content)))
        self.end_headers()
        self.wfile.write(reply.content)

    def log_message(self, *args: Any) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--offset", default="")
    a = ap.parse_args()
    Gateway.upstream = a.upstream.rstrip("/")
    Gateway.log = a.log
    if a.offset:
        Gateway.zone = dt.datetime.fromisoformat("2000-01-01T00:00:00" + a.offset).tzinfo \
            or dt.UTC
    server = ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
