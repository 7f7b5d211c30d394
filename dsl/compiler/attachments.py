"""Attachments: the files a person sends with a message, as people send them to agents.

``attachments:`` on ``given`` (they go with the person's first message) or on a turn that
says something, each ``{path, kind: image | file, mime_type?, label?}``. Paths are relative
to the suite's folder: an absolute path, a ``..`` segment, a file outside the suite (a
symlink that leads out), a missing file, a file over MAX_ATTACHMENT_BYTES, an image that is
not PNG, JPEG or WebP, and a ``file`` that is not UTF-8 text are lint errors (E231), each at
its place. The MIME type is inferred from the file's extension when it is not given.

Compiling reads and checks each file once (:func:`compile_attachments`; a thousand cases
that attach one file read it once); the bytes then travel in the plan's
:class:`~dsl.model.Attachment`. What the model receives is built by :func:`wire_part`:
an image as an ``image_url`` content part with a ``data:`` URL, a text file as a text part
headed by its label. What a record keeps is :func:`record_part` — path, kind, MIME type,
label and hash, never the bytes — and a cassette keys the request by the content's hash
(:func:`dsl.targets.cassette.canonical`), never its data URL.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import mimetypes
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import msgspec

from ..errors import Collector, Diagnostic
from ..model import ATTACHMENT_PART, Attachment, Scenario, attachment_refs
from ..source.load import DataPath, Document, decode_text, display_path, read_bytes

MAX_ATTACHMENT_BYTES = 5 * 2**20
IMAGE_TYPES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WebP"}
# extensions the system's table may not know, or names differently
_EXTENSIONS = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
               ".webp": "image/webp", ".txt": "text/plain", ".md": "text/markdown",
               ".csv": "text/csv", ".tsv": "text/tab-separated-values",
               ".json": "application/json", ".jsonl": "application/jsonl",
               ".yaml": "application/yaml", ".yml": "application/yaml",
               ".xml": "application/xml", ".html": "text/html", ".log": "text/plain"}
_TEXT_APPLICATIONS = frozenset({"application/json", "application/jsonl", "application/yaml",
                                "application/xml", "application/x-yaml", "application/csv",
                                "application/javascript", "application/x-sh",
                                "application/sql", "application/toml"})


def mime_of(path: str) -> str:
    """The MIME type of a file, from its extension (``application/octet-stream`` when the
    extension says nothing)."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    guessed, _ = mimetypes.guess_type(path, strict=False)
    return guessed or "application/octet-stream"


def is_text_type(mime: str) -> bool:
    return mime.startswith("text/") or mime in _TEXT_APPLICATIONS or mime.endswith(
        ("+json", "+xml"))


_SIGNATURES = {"image/png": (b"\x89PNG\r\n\x1a\n",), "image/jpeg": (b"\xff\xd8\xff",)}


def _is_image(data: bytes, mime: str) -> bool:
    if mime == "image/webp":
        return data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    return data.startswith(_SIGNATURES[mime])


@functools.lru_cache(maxsize=32)
def _read(real: str, mtime_ns: int, size: int) -> bytes | Diagnostic:
    """A file's bytes, read once while it stays the same (a scenario's thousand cases that
    attach one file read it once)."""
    return read_bytes(Path(real), display_path(Path(real)), MAX_ATTACHMENT_BYTES,
                      "an attachment may have at most 5 MiB: send a smaller image, or cut "
                      "the text")


def _read_file(real: Path) -> bytes | Diagnostic:
    try:
        st = real.stat()
    except OSError:
        return read_bytes(real, display_path(real), MAX_ATTACHMENT_BYTES)
    return _read(str(real), st.st_mtime_ns, st.st_size)


def compile_attachments(doc: Document, path: DataPath, items: Sequence[Mapping[str, Any]],
                        root: Path, diags: Collector) -> tuple[Attachment, ...]:
    """The attachments listed at ``path`` (validated items), read and checked; those with
    problems are left out, their diagnostics in ``diags``."""
    if not items:
        return ()
    suite = root.resolve()
    out = []
    for i, item in enumerate(items):
        a = _one(doc, (*path, i), item, suite, diags)
        if a is not None:
            out.append(a)
    return tuple(out)


def _one(doc: Document, path: DataPath, item: Mapping[str, Any], suite: Path,
         diags: Collector) -> Attachment | None:
    written = str(item["path"])
    at = doc.span((*path, "path"))
    kind = item["kind"]
    hint = "write the path relative to the suite's folder (where scenarist.yaml is), " \
           "e.g. attachments/receipt.png"
    if written.startswith(("/", "\\")) or (len(written) > 1 and written[1] == ":"):
        diags.error(at, "E231", f"the attachment path '{written}' is absolute", hint)
        return None
    if "\\" in written:
        diags.error(at, "E231", f"the attachment path '{written}' uses '\\'",
                    "separate folders with '/', e.g. attachments/receipt.png")
        return None
    if ".." in PurePosixPath(written).parts:
        diags.error(at, "E231", f"the attachment path '{written}' has a '..' segment; "
                                "attachments are files inside the suite's folder", hint)
        return None
    real = (suite / written).resolve()
    if suite not in real.parents:
        diags.error(at, "E231", f"the attachment '{written}' leads outside the suite's "
                                "folder (through a symbolic link)",
                    "copy the file into the suite's folder")
        return None
    if not real.exists():
        diags.error(at, "E231", f"the attachment '{written}' does not exist (looked for "
                                f"{display_path(real)})", hint)
        return None
    data = _read_file(real)
    if isinstance(data, Diagnostic):
        if data.code == "Y104":
            diags.error(at, "E231", f"the attachment '{written}' is {real.stat().st_size:,} "
                                    f"bytes; an attachment may have at most "
                                    f"{MAX_ATTACHMENT_BYTES:,} bytes (5 MiB)",
                        "send a smaller file: scale the image down, or cut the text")
        else:
            diags.error(at, "E231", f"the attachment '{written}' cannot be read: "
                                    f"{data.message}")
        return None
    given_mime = item.get("mime_type")
    mime = str(given_mime).lower() if given_mime else mime_of(written)
    mime_at = doc.span((*path, "mime_type")) if given_mime else at
    if kind == "image":
        if mime not in IMAGE_TYPES:
            diags.error(mime_at, "E231",
                        f"the image '{written}' is {mime}; an image attachment is PNG, JPEG "
                        "or WebP", "convert the image to PNG or JPEG, or attach a text file "
                                   "with kind: file")
            return None
        if not _is_image(data, mime):
            diags.error(at, "E231", f"the file '{written}' is not a {IMAGE_TYPES[mime]} "
                                    "image (its first bytes are not an image's)",
                        "check that this is the image you meant, and that its extension "
                        "(or mime_type) says what it is")
            return None
    else:
        if not is_text_type(mime) and mime != "application/octet-stream":
            diags.error(mime_at, "E231",
                        f"the file '{written}' is {mime}; a file attachment is UTF-8 text "
                        "(other binary types cannot be sent)",
                        "attach PNG, JPEG or WebP images with kind: image, and text files "
                        "(.txt, .md, .csv, .json, ...) with kind: file")
            return None
        text = decode_text(data, written)
        if isinstance(text, Diagnostic):
            why = ("binary (it holds a NUL byte)" if text.code == "Y106" else
                   f"not UTF-8 text at line {text.span.line}, column {text.span.col}")
            diags.error(at, "E231", f"the file '{written}' is {why}; a file attachment is "
                                    "UTF-8 text (other binary types cannot be sent)",
                        "save it as UTF-8 text, or attach an image with kind: image")
            return None
        if mime == "application/octet-stream":
            mime = "text/plain"
    label = str(item.get("label") or PurePosixPath(written).name)
    return Attachment(written, kind, mime, label, hashlib.sha256(data).hexdigest(),
                      len(data), doc.span(path), data)


# ---- what the model receives, what a record keeps -------------------------------------------


@functools.lru_cache(maxsize=64)
def _data_url(mime: str, sha256: str, content: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(content).decode('ascii')}"


def text_of(a: Attachment) -> str:
    """A text attachment as the model reads it: its label, then its text."""
    return f"Attached file: {a.label}\n\n{a.content.decode('utf-8-sig')}"


def wire_part(a: Attachment) -> dict[str, Any]:
    """The OpenAI content part that sends ``a``."""
    if a.kind == "image":
        return {"type": "image_url", "image_url": {"url": _data_url(a.mime_type, a.sha256,
                                                                    a.content)}}
    return {"type": "text", "text": text_of(a)}


def record_part(a: Attachment) -> dict[str, Any]:
    """What a record (and the loop's messages) keep in its place: never the bytes."""
    return {"type": ATTACHMENT_PART, **a.ref()}


def message_text(content: Any) -> str:
    """A message's text: the content itself, or its text parts (attachments left out)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content
                       if isinstance(p, dict) and p.get("type", "text") == "text")
    return str(content)


def readable(content: Any, attachments: Mapping[str, Attachment] | None = None) -> str:
    """A message's content as a person reads it: its text, then each attachment named —
    a text file with its text, when ``attachments`` (by hash) has it."""
    text = message_text(content)
    for ref in attachment_refs(content):
        a = (attachments or {}).get(str(ref.get("sha256")))
        label = ref.get("label") or ref.get("path")
        if ref.get("kind") == "file" and a is not None:
            text += f"\n\n{text_of(a)}"
        else:
            text += f"\n\n[attached {ref.get('kind')}: {label}]"
    return text


def wire_messages(messages: Sequence[Mapping[str, Any]],
                  attachments: Mapping[str, Attachment]) -> list[Mapping[str, Any]]:
    """``messages`` as the model receives them: each attachment part (as records keep it)
    replaced by what sends it (``attachments``: by hash)."""
    if not attachments:
        return list(messages)
    out: list[Mapping[str, Any]] = []
    for m in messages:
        content = m.get("content")
        if type(content) is list and any(type(p) is dict and p.get("type") == ATTACHMENT_PART
                                         for p in content):
            parts = [wire_part(attachments[p["sha256"]])
                     if type(p) is dict and p.get("type") == ATTACHMENT_PART else p
                     for p in content]
            out.append({**m, "content": parts})
        else:
            out.append(m)
    return out


def user_content(text: str, attachments: Sequence[Attachment]) -> str | list[dict[str, Any]]:
    """What the person says, as a message's content: the text alone, or a text part and
    one part per attachment (as records keep them; :func:`wire_messages` sends them)."""
    if not attachments:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts.extend(record_part(a) for a in attachments)
    return parts


def redact_attachments(scenarios: tuple[Scenario, ...], redactor: Callable[[], Any]
                       ) -> tuple[Scenario, ...]:
    """``scenarios`` with every text attachment that holds a secret kept redacted, like
    every other text a run writes: its ``kept`` bytes are the redacted text, its hash and
    size those of ``kept`` — so records, plan.json, the run folder's copy
    (``attachments/<sha>``) and the report never hold the secret, while the model still
    receives the file as it is (``content``), as it receives a tool's answer. ``redactor``
    makes the run's :class:`~dsl.compiler.redact.Redactor` (asked only when a scenario has
    a text attachment)."""
    if not any(a.kind == "file" for s in scenarios if s.attachments or s.turns
               for a in s.all_attachments):
        return scenarios
    redact = redactor()
    done: dict[str, Attachment] = {}

    def one(a: Attachment) -> Attachment:
        if a.kind != "file":
            return a
        if a.sha256 not in done:
            text = a.content.decode("utf-8-sig")
            red = redact(text)
            if red == text:
                done[a.sha256] = a
            else:
                kept = red.encode("utf-8")
                done[a.sha256] = msgspec.structs.replace(
                    a, sha256=hashlib.sha256(kept).hexdigest(), size=len(kept), kept=kept)
        return msgspec.structs.replace(done[a.sha256], span=a.span, path=a.path, label=a.label)

    out = []
    for s in scenarios:
        if not (s.attachments or any(t.attachments for t in s.turns)):
            out.append(s)
            continue
        attachments = tuple(map(one, s.attachments))
        turns = tuple(msgspec.structs.replace(t, attachments=tuple(map(one, t.attachments)))
                      if t.attachments else t for t in s.turns)
        out.append(msgspec.structs.replace(s, attachments=attachments, turns=turns))
    return tuple(out)


def data_url_hash(url: str) -> str | None:
    """``sha256:HEX`` of a data URL's content (None for a URL that is not ``data:``)."""
    if not url.startswith("data:"):
        return None
    head, _, payload = url.partition(",")
    raw = base64.b64decode(payload) if head.endswith(";base64") else payload.encode("utf-8")
    return "sha256:" + hashlib.sha256(raw).hexdigest()
