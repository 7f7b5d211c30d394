"""Attachments (dsl/compiler/attachments.py), function by function: reading and checking
the files (each problem at its place, in words), and the parts a model receives and a
record keeps. Scenarios with attachments, end to end, are in tests/execution/test_conversations.py
and the lint cases (tests/cases/invalid/attachments.yaml)."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from dsl.compiler.attachments import (
    MAX_ATTACHMENT_BYTES,
    compile_attachments,
    data_url_hash,
    is_text_type,
    message_text,
    mime_of,
    readable,
    record_part,
    text_of,
    user_content,
    wire_messages,
    wire_part,
)
from dsl.errors import Collector
from dsl.model import Attachment
from dsl.source.load import load_text

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(24))
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 8


def compile_items(root: Path, items: str) -> tuple[tuple[Attachment, ...], list[str]]:
    """``items`` (YAML flow mappings, one a line) compiled from a scenario at ``root``:
    the attachments, and each diagnostic as ``line:col code message | hint``."""
    text = "attachments:\n" + "".join(f"  - {line}\n" for line in items.splitlines())
    doc = load_text(text, "s.yaml")
    diags = Collector()
    out = compile_attachments(doc, ("attachments",), doc.data["attachments"], root, diags)
    return out, [f"{d.span.line}:{d.span.col} {d.code} {d.message} | {d.hint}"
                 for d in diags.diagnostics]


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "suite"
    (root / "files").mkdir(parents=True)
    (root / "files" / "receipt.png").write_bytes(PNG)
    (root / "files" / "photo.JPG").write_bytes(JPEG)
    (root / "files" / "scan.webp").write_bytes(WEBP)
    (root / "files" / "notes.md").write_bytes("\ufeffHorario: 9 a 18\n".encode())
    (root / "files" / "notes").write_text("sin extensión", "utf-8")
    monkeypatch.chdir(tmp_path)
    return root


def test_images_and_text_files_are_read_with_their_type_label_and_hash(suite: Path) -> None:
    out, problems = compile_items(suite, "\n".join([
        "{path: files/receipt.png, kind: image}",
        "{path: files/photo.JPG, kind: image, label: La foto}",
        "{path: files/scan.webp, kind: image}",
        "{path: files/notes.md, kind: file}",
        "{path: files/notes, kind: file}",
        "{path: files/receipt.png, kind: image, mime_type: IMAGE/PNG}",
    ]))
    assert problems == []
    assert [(a.path, a.kind, a.mime_type, a.label, a.size) for a in out] == [
        ("files/receipt.png", "image", "image/png", "receipt.png", len(PNG)),
        ("files/photo.JPG", "image", "image/jpeg", "La foto", len(JPEG)),
        ("files/scan.webp", "image", "image/webp", "scan.webp", len(WEBP)),
        ("files/notes.md", "file", "text/markdown", "notes.md", 19),
        ("files/notes", "file", "text/plain", "notes", 14),  # no extension: text, it is
        ("files/receipt.png", "image", "image/png", "receipt.png", len(PNG)),
    ]
    assert out[0].content == PNG
    assert out[0].sha256 == hashlib.sha256(PNG).hexdigest()
    assert (out[1].span.line, out[1].span.col) == (3, 5)  # the item, in the file


def test_each_problem_is_said_at_its_place(suite: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.png").write_bytes(PNG)
    (suite / "files" / "link.png").symlink_to(tmp_path / "outside.png")
    (suite / "files" / "fake.png").write_bytes(b"GIF89a" + b"\x00" * 10)
    (suite / "files" / "anim.gif").write_bytes(b"GIF89a")
    (suite / "files" / "data.bin").write_bytes(b"abc\x00def")
    (suite / "files" / "latin.txt").write_bytes("año\n".encode("latin-1"))
    (suite / "files" / "doc.pdf").write_bytes(b"%PDF-1.4")
    out, problems = compile_items(suite, "\n".join([
        "{path: /etc/passwd, kind: file}",
        "{path: 'files\\receipt.png', kind: image}",
        "{path: files/../files/receipt.png, kind: image}",
        "{path: files/link.png, kind: image}",
        "{path: files/missing.png, kind: image}",
        "{path: files/fake.png, kind: image}",
        "{path: files/anim.gif, kind: image}",
        "{path: files/receipt.png, kind: image, mime_type: image/gif}",
        "{path: files/data.bin, kind: file}",
        "{path: files/latin.txt, kind: file}",
        "{path: files/doc.pdf, kind: file}",
        "{path: files/receipt.png, kind: image}",
    ]))
    hint = ("write the path relative to the suite's folder (where scenarist.yaml is), "
            "e.g. attachments/receipt.png")
    assert problems == [
        f"2:12 E231 the attachment path '/etc/passwd' is absolute | {hint}",
        "3:12 E231 the attachment path 'files\\receipt.png' uses '\\' | separate folders "
        "with '/', e.g. attachments/receipt.png",
        "4:12 E231 the attachment path 'files/../files/receipt.png' has a '..' segment; "
        f"attachments are files inside the suite's folder | {hint}",
        "5:12 E231 the attachment 'files/link.png' leads outside the suite's folder (through "
        "a symbolic link) | copy the file into the suite's folder",
        "6:12 E231 the attachment 'files/missing.png' does not exist (looked for "
        f"suite/files/missing.png) | {hint}",
        "7:12 E231 the file 'files/fake.png' is not a PNG image (its first bytes are not an "
        "image's) | check that this is the image you meant, and that its extension (or "
        "mime_type) says what it is",
        "8:12 E231 the image 'files/anim.gif' is image/gif; an image attachment is PNG, JPEG "
        "or WebP | convert the image to PNG or JPEG, or attach a text file with kind: file",
        "9:55 E231 the image 'files/receipt.png' is image/gif; an image attachment is PNG, "
        "JPEG or WebP | convert the image to PNG or JPEG, or attach a text file with kind: "
        "file",
        "10:12 E231 the file 'files/data.bin' is binary (it holds a NUL byte); a file "
        "attachment is UTF-8 text (other binary types cannot be sent) | save it as UTF-8 "
        "text, or attach an image with kind: image",
        "11:12 E231 the file 'files/latin.txt' is not UTF-8 text at line 1, column 2; a file "
        "attachment is UTF-8 text (other binary types cannot be sent) | save it as UTF-8 "
        "text, or attach an image with kind: image",
        "12:12 E231 the file 'files/doc.pdf' is application/pdf; a file attachment is UTF-8 "
        "text (other binary types cannot be sent) | attach PNG, JPEG or WebP images with "
        "kind: image, and text files (.txt, .md, .csv, .json, ...) with kind: file",
    ]
    assert [a.path for a in out] == ["files/receipt.png"]  # the one without a problem


def test_a_file_over_the_limit(suite: Path) -> None:
    with (suite / "files" / "big.txt").open("wb") as f:
        f.truncate(MAX_ATTACHMENT_BYTES + 1)
    out, problems = compile_items(suite, "{path: files/big.txt, kind: file}")
    assert out == ()
    assert problems == [
        "2:12 E231 the attachment 'files/big.txt' is 5,242,881 bytes; an attachment may have "
        "at most 5,242,880 bytes (5 MiB) | send a smaller file: scale the image down, or cut "
        "the text"]


def test_a_changed_file_is_read_again(suite: Path) -> None:
    (first,), _ = compile_items(suite, "{path: files/notes.md, kind: file}")
    path = suite / "files" / "notes.md"
    path.write_text("Horario: 10 a 19, desde hoy\n", "utf-8")
    os.utime(path, ns=(1, 1))  # another time and size: not the cached read
    (second,), _ = compile_items(suite, "{path: files/notes.md, kind: file}")
    assert second.content == b"Horario: 10 a 19, desde hoy\n"
    assert second.sha256 != first.sha256


@pytest.mark.parametrize(("path", "mime"), [
    ("a.png", "image/png"), ("A.JPEG", "image/jpeg"), ("x/y.webp", "image/webp"),
    ("n.txt", "text/plain"), ("n.yml", "application/yaml"), ("n.jsonl", "application/jsonl"),
    ("n.tsv", "text/tab-separated-values"), ("d.pdf", "application/pdf"),
    ("noext", "application/octet-stream"), ("x.zzz-unknown", "application/octet-stream"),
])
def test_mime_of(path: str, mime: str) -> None:
    assert mime_of(path) == mime


@pytest.mark.parametrize(("mime", "text"), [
    ("text/plain", True), ("text/x-python", True), ("application/json", True),
    ("application/ld+json", True), ("image/svg+xml", True), ("application/toml", True),
    ("image/png", False), ("application/pdf", False), ("application/octet-stream", False),
])
def test_is_text_type(mime: str, text: bool) -> None:
    assert is_text_type(mime) is text


def attachment(kind: str, content: bytes, mime: str, label: str = "the label") -> Attachment:
    from dsl.errors import Span

    return Attachment(f"files/{label}", kind, mime, label, hashlib.sha256(content).hexdigest(),
                      len(content), Span("s.yaml", 1, 1), content)


IMAGE = attachment("image", PNG, "image/png", "receipt.png")
TEXT = attachment("file", "\ufeffHorario: 9 a 18".encode(), "text/markdown", "notes.md")


def test_what_the_model_receives() -> None:
    url = wire_part(IMAGE)["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == PNG
    assert wire_part(TEXT) == {"type": "text",
                               "text": "Attached file: notes.md\n\nHorario: 9 a 18"}
    assert text_of(TEXT) == "Attached file: notes.md\n\nHorario: 9 a 18"


def test_what_a_record_keeps_is_never_the_bytes() -> None:
    assert record_part(IMAGE) == {"type": "attachment", "path": "files/receipt.png",
                                  "kind": "image", "mime_type": "image/png",
                                  "label": "receipt.png", "sha256": IMAGE.sha256,
                                  "size": len(PNG)}


def test_user_content_and_wire_messages() -> None:
    assert user_content("Hola", ()) == "Hola"
    content = user_content("Mirá", (IMAGE, TEXT))
    assert content == [{"type": "text", "text": "Mirá"}, record_part(IMAGE), record_part(TEXT)]
    assert user_content("", (IMAGE,)) == [record_part(IMAGE)]  # no empty text part
    system = {"role": "system", "content": "S"}
    messages: list[dict[str, Any]] = [system, {"role": "user", "content": content}]
    sent = wire_messages(messages, {a.sha256: a for a in (IMAGE, TEXT)})
    assert sent[0] is system  # untouched messages are not copied
    assert sent[1] == {"role": "user", "content": [
        {"type": "text", "text": "Mirá"}, wire_part(IMAGE), wire_part(TEXT)]}
    assert messages[1]["content"] == content  # what the loop keeps is unchanged
    assert wire_messages(messages, {}) == messages


def test_message_text_and_readable() -> None:
    content = user_content("Mirá", (IMAGE, TEXT))
    assert message_text(None) == ""
    assert message_text("Hola") == "Hola"
    assert message_text(content) == "Mirá"
    assert message_text(42) == "42"
    assert readable(content, {TEXT.sha256: TEXT}) == (
        "Mirá\n\n[attached image: receipt.png]\n\nAttached file: notes.md\n\nHorario: 9 a 18")
    assert readable(content) == ("Mirá\n\n[attached image: receipt.png]\n\n"
                                 "[attached file: notes.md]")


def test_data_url_hash() -> None:
    url = wire_part(IMAGE)["image_url"]["url"]
    assert data_url_hash(url) == "sha256:" + IMAGE.sha256
    assert data_url_hash("data:text/plain,hola") == \
        "sha256:" + hashlib.sha256(b"hola").hexdigest()
    assert data_url_hash("https://example.com/a.png") is None
