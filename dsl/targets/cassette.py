"""Record and replay: a cassette is a JSONL file of requests and the replies they got.

The first line is a header with the recording target's request settings (model,
temperature, extra params, system prompt template), so a ``kind: replay`` target builds
exactly the requests that were recorded. Each further line is one exchange: the
canonical request (model, messages, tools, seed, temperature and extra params — never
headers or keys; an attachment by the hash of its content, never its data URL:
:func:`canonical`), its key (a SHA-256 of the canonical JSON), the reply's JSON body and
the ``latency_ms`` the model took to answer it — which a replay reports as the model's time
(its model calls' latency, and so the attempt's ``latency_ms``, are the recording's; a
cassette written before it kept them replays with the time the replay took).

A cassette is read as a file from outside: only a regular file of at most
MAX_CASSETTE_BYTES, every line checked (JSON, UTF-8, depth, the keys and their types), and
every problem reported as ``file:line: what is wrong`` (a :class:`RunDirError`), never a
traceback. Only a torn last line (an interrupted recording) is skipped.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import msgspec

from ..compiler.attachments import data_url_hash
from ..errors import CassetteMiss, EndpointError, RunDirError
from ..source.load import file_kind
from .base import (
    ATTEMPT_SECRETS,
    ChatModel,
    Reply,
    RequestSettings,
    Unreadable,
    parse_completion,
    read_reply_json,
)

CASSETTE_VERSION = 1
# An agent's cassette (dsl/clients/exchanges.py) since its calls keep what the tools
# answered; one of version 1 still reads (a turn whose calls it cannot check is a miss).
AGENT_CASSETTE_VERSION = 2
MAX_CASSETTE_BYTES = 256 * 2**20
# what a recorded "error" may say (the kinds the Recorder writes)
RECORDED_ERRORS = ("status", "malformed", "model_output")


MAX_INLINE_PART = 512  # characters of a text content part a cassette keeps as it is


def canonical(body: dict[str, Any]) -> dict[str, Any]:
    """The parts of a request that decide its answer, in a stable form. A message whose
    content is a list of parts (what carries attachments) keeps each file by the hash of
    its content: a ``data:`` URL becomes ``sha256:HEX`` of the bytes it holds, and a text
    part longer than MAX_INLINE_PART characters ``{"type": "text", "sha256": HEX,
    "chars": N}`` — so a recorded suite with images stays small and replays exactly."""
    out = {k: body[k] for k in sorted(body) if k != "stream"}
    messages = out.get("messages")
    if isinstance(messages, list) and any(
            isinstance(m, dict) and isinstance(m.get("content"), list) for m in messages):
        out["messages"] = [_by_hash(m) if isinstance(m, dict) and isinstance(
            m.get("content"), list) else m for m in messages]
    return out


def _by_hash(message: dict[str, Any]) -> dict[str, Any]:
    parts = []
    for p in message["content"]:
        if isinstance(p, dict) and p.get("type") == "image_url":
            image = p.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            digest = data_url_hash(url) if isinstance(url, str) else None
            if digest is not None:
                p = {**p, "image_url": {**(image if isinstance(image, dict) else {}),
                                        "url": digest}}
        elif (isinstance(p, dict) and p.get("type") == "text"
              and isinstance(p.get("text"), str) and len(p["text"]) > MAX_INLINE_PART):
            text = p["text"]
            p = {"type": "text", "chars": len(text),
                 "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()}
        parts.append(p)
    return {**message, "content": parts}


def request_key(body: dict[str, Any]) -> str:
    return _key_of(canonical(body))


def _key_of(request: Any) -> str:
    """The key of a request already made canonical (as a cassette line keeps it)."""
    text = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: a lone surrogate (half an emoji in a reply) still makes a key
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Recorder:
    """Wraps a model and appends every successful exchange to a cassette."""

    def __init__(self, inner: ChatModel, path: Path, target_name: str,
                 redact: Callable[[Any], Any] | None = None,
                 redactor: Any = None) -> None:
        """``redact`` maps a JSON-like value to its redacted copy (``Redactor.value``): each
        line is redacted value by value, so it stays valid JSON. With ``redactor`` (the
        run's Redactor), a reply's line also keeps, for each mark, which of the secrets
        the request held stood there (``redacted``): a replay puts them back, so the tools
        are called with the arguments the model wrote."""
        self.inner = inner
        self._redact = redact
        self._redactor = redactor
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
        if self._redact is not None:
            obj = self._redact(obj)
        line = json.dumps(obj, ensure_ascii=False)
        try:
            self._file.write(line + "\n")
        except UnicodeEncodeError:  # a lone surrogate (half an emoji in a reply):
            self._file.write(json.dumps(obj) + "\n")  # escaped: ASCII, reads back the same
        self._file.flush()

    async def complete(self, body: dict[str, Any]) -> Reply:
        return await self.record(self.inner, body)

    def tap(self, inner: ChatModel) -> ChatModel:
        """Another model whose exchanges go into this cassette too (the model that plays a
        simulated user: replay answers its requests from the same cassette)."""
        return _Tap(self, inner)

    async def record(self, inner: ChatModel, body: dict[str, Any]) -> Reply:
        """Ask ``inner`` and write the exchange."""
        try:
            reply = await inner.complete(body)
        except EndpointError as exc:
            # what the endpoint said is part of the model's behaviour (llama.cpp answers 500
            # when the model writes a tool call it cannot parse): replay says it again
            if exc.kind in ("status", "malformed", "model_output"):
                self._write({"key": request_key(body), "request": canonical(body),
                             "error": {"kind": exc.kind, "message": exc.message,
                                       "status": exc.status}})
            raise
        line = {"key": request_key(body), "request": canonical(body), "response": reply.raw,
                "latency_ms": round(reply.latency_ms, 1)}
        if self._redactor is not None and self._redactor.patterns:
            red, hints = self._redactor.traced(line, _known(self._redactor, body),
                                               KEPT_FIELDS)
            if hints:
                red["redacted"] = hints
            line = red
            self._write_kept(line)
        else:
            self._write(line)
        return reply

    def _write_kept(self, obj: dict[str, Any]) -> None:
        """A line already redacted (:meth:`Redactor.traced`)."""
        redact, self._redact = self._redact, None
        try:
            self._write(obj)
        finally:
            self._redact = redact

    async def aclose(self) -> None:
        self._file.close()
        await self.inner.aclose()


class _Tap:
    """A model recorded into another model's cassette (:meth:`Recorder.tap`)."""

    def __init__(self, recorder: Recorder, inner: ChatModel) -> None:
        self.recorder = recorder
        self.inner = inner
        self.settings = inner.settings

    async def complete(self, body: dict[str, Any]) -> Reply:
        return await self.recorder.record(self.inner, body)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Answering:
    """A cassette answering requests built with another target's settings (the model that
    played a simulated user, recorded in the agent's cassette)."""

    def __init__(self, cassette: ChatModel, settings: RequestSettings) -> None:
        self.cassette = cassette
        self.settings = settings

    async def complete(self, body: dict[str, Any]) -> Reply:
        return await self.cassette.complete(body)

    async def aclose(self) -> None:
        return None  # the cassette is the agent's: it closes it


class NotACassette(RunDirError):
    """A file whose first line is not a cassette's header (another file is in the way)."""


def read_cassette(path: Path, *, header_only: bool = False) -> list[str]:
    """The cassette's lines (only the first with ``header_only``), or RunDirError: the
    file is missing, not a regular file (a FIFO, a device), too large or unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise RunDirError(f"cannot read the cassette {path}: {exc.strerror}") from None
    with open(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise RunDirError(f"the cassette {path} is {file_kind(st.st_mode)}, not a regular "
                              "file")
        if st.st_size > MAX_CASSETTE_BYTES:
            raise RunDirError(f"the cassette {path} is {st.st_size:,} bytes; Scenarist reads "
                              f"cassettes of at most {MAX_CASSETTE_BYTES:,} bytes")
        try:
            raw = f.readline(MAX_CASSETTE_BYTES) if header_only \
                else f.read(MAX_CASSETTE_BYTES + 1)
        except OSError as exc:
            raise RunDirError(f"cannot read the cassette {path}: {exc.strerror}") from None
    if len(raw) > MAX_CASSETTE_BYTES:  # it grew while we read
        raise RunDirError(f"the cassette {path} is larger than {MAX_CASSETTE_BYTES:,} bytes")
    out = []
    for n, line in enumerate(raw.split(b"\n"), 1):
        try:
            out.append(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise RunDirError(f"{path}:{n}: the line is not UTF-8 text (byte "
                              f"0x{line[exc.start]:02x} at column {exc.start + 1}); record "
                              "the cassette again") from None
    return out


def header_settings(header: dict[str, Any]) -> RequestSettings:
    """The request settings a cassette was recorded with (its header, checked)."""
    s = header["settings"]
    return RequestSettings(str(s.get("model", "")), s.get("temperature"),
                           dict(s.get("params") or {}), str(s.get("system_prompt", "")))


def read_header(path: Path) -> dict[str, Any]:
    lines = read_cassette(path, header_only=True)
    return _header(path, lines[0] if lines else "")


def _header(path: Path, first: str) -> dict[str, Any]:
    try:
        header = read_reply_json(first)
    except Unreadable:
        header = None
    if not isinstance(header, dict) or header.get("kind") != "scenarist-cassette":
        raise NotACassette(f"{path} is not a Scenarist cassette (its first line is not a "
                          "cassette header); record one with scenarist run --record FILE")
    agent = "agent" in header
    readable = (CASSETTE_VERSION, AGENT_CASSETTE_VERSION) if agent else (CASSETTE_VERSION,)
    version = header.get("schema_version")
    if type(version) is not int or version not in readable:
        which = (f"versions {CASSETTE_VERSION} and {AGENT_CASSETTE_VERSION} of an agent's "
                 "cassette") if agent else f"version {CASSETTE_VERSION}"
        raise RunDirError(f"the cassette {path} has schema_version {version!r}; this "
                          f"Scenarist reads {which}; record it again")
    s = header.get("settings")
    problem = None
    if not isinstance(s, dict):
        problem = "settings is not an object"
    elif not isinstance(s.get("model", ""), str):
        problem = "settings.model is not text"
    elif s.get("temperature") is not None and (
            isinstance(s["temperature"], bool) or not isinstance(s["temperature"], int | float)):
        problem = "settings.temperature is not a number"
    elif not isinstance(s.get("params") or {}, dict):
        problem = "settings.params is not an object"
    elif not isinstance(s.get("system_prompt", ""), str):
        problem = "settings.system_prompt is not text"
    if problem is not None:
        raise RunDirError(f"{path}:1: the cassette's header is damaged: {problem}; record the "
                          "cassette again")
    return header


def keyed_entry(path: Path, n: int, line: str) -> dict[str, Any]:
    """An exchange line of a cassette (a model's or an agent's) read as a JSON object with
    its ``key``; RunDirError says what is wrong and where. Each kind checks the rest."""
    try:
        entry = read_reply_json(line)
    except Unreadable as exc:
        raise RunDirError(f"{path}:{n}: the line {exc}; record the cassette again") from None
    if not isinstance(entry, dict):
        problem = "the line is not a JSON object"
    elif not isinstance(entry.get("key"), str):
        problem = "the line has no 'key' (a text)"
    else:
        return entry
    raise RunDirError(f"{path}:{n}: {problem}; record the cassette again")


def is_latency(value: Any) -> bool:
    """A recorded ``latency_ms``: a number of milliseconds (never a bool), 0 up to 1e9."""
    return not isinstance(value, bool) and isinstance(value, int | float) and 0 <= value < 1e9


def _entry(path: Path, n: int, line: str) -> dict[str, Any]:
    """One exchange line, checked; RunDirError says what is wrong and where."""
    entry = keyed_entry(path, n, line)
    problem = None
    if "response" in entry:
        if not isinstance(entry["response"], dict):
            problem = "its 'response' is not an object"
        elif not is_latency(entry.get("latency_ms", 0)):
            problem = "its 'latency_ms' is not a number of milliseconds"
    elif "error" in entry:
        err = entry["error"]
        if not isinstance(err, dict) or err.get("kind") not in RECORDED_ERRORS \
                or not isinstance(err.get("message"), str) \
                or not isinstance(err.get("status"), int | None) \
                or isinstance(err.get("status"), bool):
            problem = ("its 'error' is not an object with a kind (status, malformed or "
                       "model_output), a message and a status")
    else:
        problem = "the line has neither a 'response' nor an 'error'"
    if problem is not None:
        raise RunDirError(f"{path}:{n}: {problem}; record the cassette again")
    entry["_line"] = n
    return entry


def exchanges(path: Path, lines: list[str],
              entry: Callable[[Path, int, str], dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The exchange lines of a cassette after its header, each read and checked by
    ``entry`` (a model's or an agent's); a torn last line, as an interrupted recording
    leaves it, is skipped, and any other damage raises where ``entry`` says."""
    last = len(lines)
    while last > 1 and not lines[last - 1].strip():
        last -= 1
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        try:
            yield entry(path, n, line)
        except RunDirError:
            if n == last and _torn(line):
                continue  # a torn last line from an interrupted recording
            raise


def _torn(line: str) -> bool:
    """Is this line cut short (as an interrupted recording leaves its last line)?"""
    try:
        json.loads(line)
    except ValueError:
        return True
    except RecursionError:  # complete or not, it is too deep: report it
        return False
    return False


# a cassette line's fields written as they are (its key is a hash, never a secret)
KEPT_FIELDS = frozenset({"key", "scenario", "seed", "turn", "user", "schema_version",
                         "latency_ms"})


def restored(entry: dict[str, Any], redactor: Any, known: Any) -> dict[str, Any]:
    """A cassette line as the exchange had it: each mark its ``redacted`` names put back
    to the secret of ``known`` it stood for (``redactor``: the run's
    dsl.compiler.redact.Redactor)."""
    hints = entry.get("redacted")
    if not isinstance(hints, list) or not hints:
        return entry
    data = {k: v for k, v in entry.items() if k not in ("redacted", "_line")}
    back = redactor.restore(data, hints, known)
    return {**back, "_line": entry.get("_line")} if back is not data else entry


def _known(redactor: Any, body: dict[str, Any]) -> Any:
    """The secrets a reply's marks may stand for: the attempt's scenario's (the run stage
    says which), else the request's."""
    known = ATTEMPT_SECRETS.get()
    return known if known is not None else redactor.known(body)


class ReplayModel:
    """Answers from a cassette, offline and deterministically."""

    def __init__(self, path: Path, redactor: Any = None) -> None:
        """``redactor``: the run's; a reply's marks are put back to the secrets the
        request holds (the tools get the arguments the model wrote when recorded)."""
        self.redactor = redactor
        self.path = path
        lines = read_cassette(path)
        self.settings = header_settings(_header(path, lines[0] if lines else ""))
        self.replies: dict[str, dict[str, Any]] = {}
        for entry in exchanges(path, lines, _entry):
            self.replies.setdefault(entry["key"], entry)
        self._as_kept: dict[str, dict[str, Any]] | None = None

    def _kept(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The entry whose request, as the cassette keeps it (redacted), is this one. A
        recording keys each request by what was sent, but keeps it redacted; when a reply
        the cassette gives back held a secret's mark (a tool call's arguments), the next
        request holds the mark too, as the kept request does."""
        if self._as_kept is None:
            self._as_kept = {}
            for entry in self.replies.values():
                if "request" in entry:
                    self._as_kept.setdefault(_key_of(entry["request"]), entry)
        if self.redactor is not None and self.redactor.patterns:
            # compared as both are kept: a secret put back and one that could not be (the
            # model made it up) read the same once redacted
            return self._as_kept.get(_key_of(self.redactor.value(canonical(body))))
        return self._as_kept.get(request_key(body))

    async def complete(self, body: dict[str, Any]) -> Reply:
        entry = self.replies.get(request_key(body)) or self._kept(body)
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
        if self.redactor is not None and entry.get("redacted"):
            entry = restored(entry, self.redactor, _known(self.redactor, body))
        latency = entry.get("latency_ms")
        try:
            reply = parse_completion(entry["response"], 0.0)
        except EndpointError as exc:
            raise EndpointError(exc.kind, f"the cassette {self.path.name}:{entry['_line']} "
                                          f"holds a reply Scenarist cannot read: "
                                          f"{exc.message}") from None
        if latency is None:  # recorded before cassettes kept it
            return reply
        return msgspec.structs.replace(reply, latency_ms=float(latency), recorded=True)

    async def aclose(self) -> None:
        return None


def _holder(f: IO[str]) -> str:
    """Who holds a cassette's lock, as it wrote it: its pid, and its run folder once it has
    made one (a moment after it took the lock: waited for, briefly)."""
    holder = ""
    for _ in range(40):
        f.seek(0)
        holder = f.read().strip()
        if ", run " in holder:
            break
        time.sleep(0.05)
    return holder or "another scenarist process"


class CassetteLock:
    """Only one run records into a cassette at a time: an exclusive lock (``flock``) on
    ``FILE.lock`` beside it, taken before the run makes its run folder and released when
    the run ends, however it ends. A second run recording into the same file refuses
    before it starts (RunDirError, exit 2) naming the cassette and the run that holds it —
    two recordings would otherwise overwrite each other's exchanges. The lock file is
    removed when the run ends."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self._held: list[tuple[Path, IO[str]]] = []

    def __enter__(self) -> CassetteLock:
        try:
            seen: set[Path] = set()
            for path in self.paths:
                if path.absolute() not in seen:
                    seen.add(path.absolute())
                    self._take(path)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _take(self, cassette: Path) -> None:
        try:
            # why: fcntl: POSIX only
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            return
        lock = cassette.with_name(cassette.name + ".lock")
        while True:
            try:
                lock.parent.mkdir(parents=True, exist_ok=True)
                f = lock.open("a+", encoding="utf-8")
            except OSError as exc:
                raise RunDirError(f"cannot record into {cassette}: cannot make {lock}: "
                                  f"{exc.strerror or exc}") from None
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = _holder(f)
                f.close()
                raise RunDirError(
                    f"the cassette {cassette} is being recorded by another run ({holder}); "
                    "wait for it to end, or record into another file: two runs recording "
                    "into one cassette would lose each other's exchanges") from None
            try:  # the file we locked is still the lock (not one unlinked as a run ended)
                same = os.stat(lock).st_ino == os.fstat(f.fileno()).st_ino
            except OSError:
                same = False
            if same:
                break
            f.close()
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}\n")
        f.flush()
        self._held.append((lock, f))

    def held_by(self, run_dir: Path) -> Path:
        """Say in each lock which run holds it (the message a second run prints); returns
        ``run_dir``."""
        for _, f in self._held:
            with contextlib.suppress(OSError):
                f.seek(0)
                f.truncate()
                f.write(f"pid {os.getpid()}, run {run_dir}\n")
                f.flush()
        return run_dir

    def __exit__(self, *exc: object) -> None:
        for lock, f in reversed(self._held):
            with contextlib.suppress(OSError):
                lock.unlink()  # while held: a run waiting on it finds it gone and retries
            f.close()  # closing releases the lock
        self._held.clear()


class Recording:
    """``--record FILE``: the cassette is recorded into ``FILE.partial`` and replaces FILE
    only when the run ends complete with something recorded — a run against an endpoint
    that is down, or one cut short, never empties a cassette that was committed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.partial = path.with_name(path.name + ".partial")

    def exchanges(self) -> int:
        try:
            with self.partial.open("rb") as f:
                return max(0, sum(1 for line in f if line.strip()) - 1)  # minus the header
        except OSError:
            return 0

    def finish(self, complete: bool) -> str:
        """Move the recording into place when it should be; what happened, in words."""
        n = self.exchanges()
        said = f"{n} exchange{'s' if n != 1 else ''}"
        if complete and n:
            try:
                os.replace(self.partial, self.path)
            except OSError as exc:
                return (f"The recording ({said}) could not replace {self.path}: "
                        f"{exc.strerror}; it is in {self.partial}")
            return f"Recorded {said} into {self.path}."
        why = "the run did not finish" if not complete else "the endpoint answered nothing"
        if not n:
            with contextlib.suppress(OSError):
                self.partial.unlink()
            return (f"Nothing was recorded ({why}): {self.path} was kept as it was."
                    if self.path.exists() else f"Nothing was recorded ({why}).")
        return (f"{self.path} was kept as it was ({why}); the {said} recorded are in "
                f"{self.partial}.")
