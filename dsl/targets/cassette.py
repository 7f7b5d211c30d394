"""Record and replay: a cassette is a JSONL file of requests and the replies they got.

The first line is a header with the recording target's request settings (model,
temperature, extra params, system prompt template), so a ``kind: replay`` target builds
exactly the requests that were recorded. Each further line is one exchange: the
canonical request (model, messages, tools, seed, temperature and extra params — never
headers or keys), its key (a SHA-256 of the canonical JSON) and the reply's JSON body.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..errors import CassetteMiss, EndpointError, RunDirError
from .base import ChatModel, Reply, RequestSettings, parse_completion

CASSETTE_VERSION = 1


def canonical(body: dict[str, Any]) -> dict[str, Any]:
    """The parts of a request that decide its answer, in a stable form."""
    return {k: body[k] for k in sorted(body) if k != "stream"}


def request_key(body: dict[str, Any]) -> str:
    text = json.dumps(canonical(body), sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class Recorder:
    """Wraps a model and appends every successful exchange to a cassette."""

    def __init__(self, inner: ChatModel, path: Path, target_name: str,
                 redact: Callable[[str], str] | None = None) -> None:
        self.inner = inner
        self._redact = redact
        self.settings = inner.settings
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = path.open("w", encoding="utf-8")
        header = {
            "schema_version": CASSETTE_VERSION,
            "kind": "scenarist-cassette",
            "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "target": target_name,
            "settings": {
                "model": self.settings.model,
                "temperature": self.settings.temperature,
                "params": self.settings.params,
                "system_prompt": self.settings.system_prompt,
            },
        }
        self._write(header)

    def _write(self, obj: dict[str, Any]) -> None:
        line = json.dumps(obj, ensure_ascii=False)
        if self._redact is not None:
            line = self._redact(line)
        self._file.write(line + "\n")
        self._file.flush()

    async def complete(self, body: dict[str, Any]) -> Reply:
        try:
            reply = await self.inner.complete(body)
        except EndpointError as exc:
            # what the endpoint said is part of the model's behaviour (llama.cpp answers 500
            # when the model writes a tool call it cannot parse): replay says it again
            if exc.kind in ("status", "malformed", "model_output"):
                self._write({"key": request_key(body), "request": canonical(body),
                             "error": {"kind": exc.kind, "message": exc.message,
                                       "status": exc.status}})
            raise
        self._write({"key": request_key(body), "request": canonical(body),
                     "response": reply.raw})
        return reply

    async def aclose(self) -> None:
        self._file.close()
        await self.inner.aclose()


def read_header(path: Path) -> dict[str, Any]:
    try:
        with path.open(encoding="utf-8") as f:
            first = f.readline()
    except OSError as exc:
        raise RunDirError(f"cannot read the cassette {path}: {exc.strerror}") from None
    try:
        header = json.loads(first)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("kind") != "scenarist-cassette":
        raise RunDirError(f"{path} is not a Scenarist cassette (its first line is not a "
                          "cassette header); record one with scenarist run --record FILE")
    if header.get("schema_version") != CASSETTE_VERSION:
        raise RunDirError(f"the cassette {path} has schema_version "
                          f"{header.get('schema_version')!r}; this Scenarist reads version "
                          f"{CASSETTE_VERSION}; record it again")
    return header


class ReplayModel:
    """Answers from a cassette, offline and deterministically."""

    def __init__(self, path: Path) -> None:
        self.path = path
        header = read_header(path)
        s = header.get("settings") or {}
        self.settings = RequestSettings(
            str(s.get("model", "")), s.get("temperature"), dict(s.get("params") or {}),
            str(s.get("system_prompt", "")),
        )
        self.replies: dict[str, dict[str, Any]] = {}
        with path.open(encoding="utf-8") as f:
            next(f)
            for line in f:
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue  # a torn last line from an interrupted recording
                self.replies.setdefault(entry["key"], entry)

    async def complete(self, body: dict[str, Any]) -> Reply:
        entry = self.replies.get(request_key(body))
        if entry is None:
            raise CassetteMiss(
                f"the cassette {self.path.name} has no recorded reply for this request (run "
                f"{body.get('seed')}, model call {sum(1 for m in body.get('messages', []) if m.get('role') == 'assistant') + 1}); "  # noqa: E501
                "the scenario, its tools or the run count changed since it was recorded — "
                "record it again with scenarist run --target <live target> --record FILE"
            )
        if "error" in entry:
            err = entry["error"]
            raise EndpointError(err["kind"], err["message"], status=err.get("status"))
        return parse_completion(entry["response"], 0.0)

    async def aclose(self) -> None:
        return None
