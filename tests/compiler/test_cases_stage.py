"""The cases stage and what it rests on, one piece at a time: CSV and JSONL read with the
place of every value, the templates over a case (Jinja's sandbox, strict; the path without
Jinja renders the same), merge keys in the loader, a case's document validated whole
(reported exactly when the whole document is invalid), the command line's selection,
and the cassette's canonical form of a request with attachments."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

from dsl.compiler.cases import csv_rows, read_table
from dsl.compiler.discover import Selection
from dsl.errors import Collector, Span
from dsl.source.load import load_text
from dsl.targets.cassette import canonical, request_key

# ---- CSV -----------------------------------------------------------------------------------


def fields(text: str) -> list[list[tuple[str, int, int]]]:
    rows = csv_rows(text, "f.csv", Collector())
    assert rows is not None
    return [f for _, f in rows]


def test_csv_fields_keep_their_lines_and_columns() -> None:
    text = ('id,question\n'
            '1,"Hola, ¿abren?"\n'
            '\n'
            '2,"Dijo ""sí""\ny se fue"\n'
            ' 3 ,  spaced  \r\n'
            ',\n'
            '4,last')
    assert fields(text) == [
        [("id", 1, 1), ("question", 1, 4)],
        [("1", 2, 1), ("Hola, ¿abren?", 2, 3)],
        [("2", 4, 1), ('Dijo "sí"\ny se fue', 4, 3)],
        [("3", 6, 2), ("spaced", 6, 7)],  # the spaces around a value are dropped
        [("4", 8, 1), ("last", 8, 3)],   # a row of empty cells is no row
    ]


@pytest.mark.parametrize(("text", "delim"), [("a;b\n1;2\n", ";"), ("a\tb\n1\t2\n", "\t"),
                                             ('"x,y";b\n1;2\n', ";"), ("a\n1\n", ",")])
def test_the_separator_is_the_one_the_header_holds(text: str, delim: str) -> None:
    rows = fields(text)
    assert [v for v, _, _ in rows[1]] == (["1", "2"] if len(rows[1]) == 2 else ["1"])


def test_an_unclosed_quote_is_reported_where_it_opens() -> None:
    diags = Collector()
    assert csv_rows('q\n"abierta\n', "f.csv", diags) is None
    (d,) = diags.diagnostics
    assert (d.span, d.code, d.message) == (
        Span("f.csv", 2, 1), "E229", "the quote that opens this field is never closed")


def table(tmp_path: Path, name: str, data: bytes, cases_key: str = "cases_file") -> Any:
    (tmp_path / name).write_bytes(data)
    doc = load_text(f"{cases_key}: {name}\n", str(tmp_path / "s.yaml"))
    diags = Collector()
    return read_table(doc, tmp_path, diags), diags.diagnostics


def test_a_spreadsheets_csv_export_reads_as_its_rows(tmp_path: Path) -> None:
    data = "\ufeffid;question;closes\r\nes;¿Hasta qué hora?;13:00\r\n;;\r\n\r\n".encode()
    t, diags = table(tmp_path, "h.csv", data)
    assert diags == []
    assert [(c.number, c.id, c.values, c.span.line) for c in t.cases] == [
        (1, "es", {"id": "es", "question": "¿Hasta qué hora?", "closes": "13:00"}, 2)]
    assert t.header == ("id", "question", "closes")
    assert t.columns["closes"] == Span(t.file, 1, 13)
    assert t.cell(t.cases[0], "closes") == Span(t.file, 2, 21)


def test_jsonl_lines_with_a_bom_crlf_and_empty_lines(tmp_path: Path) -> None:
    data = b'\xef\xbb\xbf{"q": "a", "n": 1}\r\n\r\n  {"q": "b", "id": 7}\n'
    t, diags = table(tmp_path, "c.jsonl", data)
    assert diags == []
    assert [(c.number, c.id, c.span.line, c.span.col) for c in t.cases] == [
        (1, "1", 1, 1), (2, "7", 3, 3)]
    assert t.cell(t.cases[1], "id") == Span(t.file, 3, 14)


def test_case_overrides_are_read_from_text_and_data(tmp_path: Path) -> None:
    data = b'{"runs": 3, "tags": "slow, nightly  smoke"}\n{"runs": "8", "min_pass": 0, ' \
           b'"tags": ["a", "a", "b"]}\n'
    t, diags = table(tmp_path, "c.jsonl", data)
    assert diags == []
    assert [dict(c.overrides) for c in t.cases] == [
        {"runs": 3, "tags": ["slow", "nightly", "smoke"]},
        {"runs": 8, "min_pass": 0, "tags": ["a", "b"]}]


# ---- the loader's merge keys ---------------------------------------------------------------


def test_merge_keys_bring_the_keys_of_the_mappings_they_name_where_they_are_written() -> None:
    doc = load_text("x-a: &a {at: 1, system: a, tools: [x]}\n"
                    "x-b: &b {system: b, extra: 2}\n"
                    "given:\n"
                    "  <<: [*a, *b]\n"
                    "  system: mine\n", "f")
    assert doc.diagnostics == ()
    assert doc.data["given"] == {"system": "mine", "at": 1, "tools": ["x"], "extra": 2}
    assert doc.span(("given", "system")) == Span("f", 5, 11)  # its own key wins
    assert doc.span(("given", "at")) == Span("f", 1, 14)  # at the anchor
    assert doc.key_span(("given", "extra")) == Span("f", 2, 21)  # at its own anchor


def test_a_merge_key_is_counted_against_the_alias_bomb_limit() -> None:
    lines = ["a: &a {k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, k8: 8, k9: 9}"]
    lines += [f"l{i}: &l{i} [{', '.join(['*a' if i == 0 else f'*l{i - 1}'] * 10)}]"
              for i in range(5)]
    lines += ["given: {<<: *a, many: *l4}"]
    doc = load_text("\n".join(lines) + "\n", "f")
    assert [d.code for d in doc.diagnostics] == ["Y109"]


# ---- a case's document is validated whole ----------------------------------------------------

SCENARIO = """\
id: x
description: d
tags: [a, b]
given:
  at: 2026-09-29T10:00:00-03:00
  system: s
  tools:
    - name: t
      description: d
      returns: r
when:
  - say: hola
  - confirm: t
then:
  - contains: x
  - matches: y
  - non_empty
  - calls: {name: t, args: {a: b}}
  - expect: "count(calls) > 0"
  - {contains: z, name: says z, always: true}
"""
PATHS = [("id",), ("description",), ("tags", 0), ("given", "at"), ("given", "system"),
         ("given", "tools", 0, "name"), ("given", "tools", 0, "description"),
         ("given", "tools", 0, "returns"), ("when", 0, "say"), ("when", 1, "confirm"),
         ("then", 0, "contains"), ("then", 1, "matches"), ("then", 2),
         ("then", 3, "calls", "name"), ("then", 3, "calls", "args", "a"),
         ("then", 4, "expect"), ("then", 5, "contains"), ("then", 5, "name")]
TEXTS = ["", "x", "non_empty", "valid_args", "a b", "has space", "Ñandú", "-dash", "a.b/c",
         "9", "{}", "a" * 70, "book-2", "b", "a\n"]


def put(data: Any, path: tuple[Any, ...], text: str) -> Any:
    out = json.loads(json.dumps(data))
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = text
    return out


@pytest.mark.parametrize("path", PATHS, ids=lambda p: ".".join(map(str, p)))
def test_a_case_breaks_the_schema_exactly_when_its_whole_document_would(
        path: tuple[Any, ...], tmp_path: Path) -> None:
    """Each case's rendering is validated as a file of its own (jsonschema-rs, then
    jsonschema's words): a case is reported with a schema problem (S1xx) exactly when the
    scenario with its text written in would be invalid, by jsonschema as the reference."""
    from jsonschema import Draft202012Validator

    from dsl.compiler.compile import compile_file
    from dsl.source.resources import load_schema

    data = load_text(SCENARIO, "s.yaml").data
    reference = Draft202012Validator(load_schema("scenario.schema.json"))
    assert reference.is_valid(data)
    rng = random.Random(13)
    texts = [*TEXTS, *("".join(rng.choices("aZ9 _-.:/ñ", k=rng.randint(0, 9)))
                       for _ in range(20))]
    template = put(data, path, "{{ v }}")
    refused = []
    for text in texts:  # a file per case: each schema problem is that case's
        template["cases"] = [{"v": text}]
        diags = Collector()
        compile_file(load_text(json.dumps(template), "s.yaml"), None, tmp_path, diags)
        if any(d.code.startswith("S") for d in diags.diagnostics):
            refused.append(text)
    assert refused == [t for t in texts if not reference.is_valid(put(data, path, t))]


# ---- the selection -------------------------------------------------------------------------


@pytest.mark.parametrize(("tags", "patterns", "sid", "have", "selected"), [
    ((), (), "a", [], True),
    (("smoke",), (), "a", ["smoke", "x"], True),
    (("smoke",), (), "a", ["x"], False),
    (("smoke", "slow"), (), "a", ["slow"], True),
    (("!slow",), (), "a", ["x"], True),
    (("!slow",), (), "a", ["slow"], False),
    (("x", "!slow"), (), "a", ["x", "slow"], False),
    ((), ("hours",), "clinic.hours_today", [], True),
    ((), ("HOURS",), "clinic.hours_today", [], True),
    ((), ("hours[es]",), "clinic.hours[es]", [], True),  # as text: [ ] are not a set
    ((), ("clinic.*",), "clinic.hours[es]", [], True),
    ((), ("*[ep]s]",), "clinic.hours[es]", [], True),
    ((), ("*.greeting",), "clinic.hours[es]", [], False),
    # a trailing [CASE] names a case, never a set of characters (docs/cli.md)
    ((), ("hours[es]",), "clinic.hours_in_languages[es]", [], True),
    ((), ("clinic.*[es]",), "clinic.hours_in_languages[es]", [], True),
    ((), ("clinic.*[es]",), "clinic.change_hours", [], False),  # before: 's' ends it
    ((), ("clinic.*[es]",), "clinic.hours_in_languages[en]", [], False),
    ((), ("[es]",), "clinic.hours_in_languages[es]", [], True),  # every Spanish case
    ((), ("[ES]",), "clinic.hours_in_languages[es]", [], True),
    ((), ("hours[e*]",), "clinic.hours_in_languages[en]", [], True),  # a glob of cases
    ((), ("greeting[es]",), "clinic.hours_in_languages[es]", [], False),
    ((), ("clinic.hours_[a-z]*",), "clinic.hours_today", [], True),  # a set, not last
    (("smoke",), ("hours",), "clinic.hours", ["slow"], False),
])
def test_the_selection_rule(tags: tuple[str, ...], patterns: tuple[str, ...], sid: str,
                            have: list[str], selected: bool) -> None:
    assert Selection(tags, patterns).selects(sid, have) is selected


def test_the_selection_says_what_it_was() -> None:
    assert Selection(("smoke", "!slow"), ("clinic.*",)).flags() == \
        "--tag smoke --tag '!slow' -k 'clinic.*'"


# ---- cassettes -----------------------------------------------------------------------------

IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40


def body(url: str, text: str = "long " * 200) -> dict[str, Any]:
    return {"model": "m", "seed": 1, "messages": [
        {"role": "system", "content": "s"},
        {"role": "user", "content": [{"type": "text", "text": "¿Y esto?"},
                                     {"type": "image_url", "image_url": {"url": url}},
                                     {"type": "text", "text": text}]}]}


def test_a_cassette_keeps_an_attachment_by_the_hash_of_its_content() -> None:
    url = "data:image/png;base64," + base64.b64encode(IMAGE).decode()
    c = canonical(body(url))
    parts = c["messages"][1]["content"]
    import hashlib

    assert parts[0] == {"type": "text", "text": "¿Y esto?"}  # short text stays
    assert parts[1] == {"type": "image_url", "image_url": {
        "url": "sha256:" + hashlib.sha256(IMAGE).hexdigest()}}
    assert parts[2] == {"type": "text", "chars": 1000,
                        "sha256": hashlib.sha256(("long " * 200).encode()).hexdigest()}
    assert len(json.dumps(c)) < 600
    assert request_key(body(url)) == request_key(body(url))
    other = "data:image/png;base64," + base64.b64encode(IMAGE[:-1] + b"!").decode()
    assert request_key(body(other)) != request_key(body(url))
    assert request_key(body(url, "long " * 199 + "lung ")) != request_key(body(url))


def test_requests_without_content_parts_keep_their_keys() -> None:
    import hashlib

    plain = {"model": "m", "seed": 1, "messages": [{"role": "user", "content": "hola"}]}
    assert canonical(plain) == plain
    text = json.dumps(plain, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert request_key(plain) == hashlib.sha256(text.encode()).hexdigest()


# ---- what the judge and grounded read of an attachment --------------------------------------


def test_the_judge_and_grounded_read_what_the_person_attached() -> None:
    import hashlib

    from dsl.checks.grounded import grounded
    from dsl.expr.sample import attempt
    from dsl.judge.ask import conversation_text
    from dsl.model import Attachment

    notes = b"Reintegro aprobado: 4.350 pesos.\n"
    files = (Attachment("a/receipt.png", "image", "image/png", "receipt.png", "1" * 64, 9,
                        Span("s.yaml", 1, 1), IMAGE),
             Attachment("a/notes.txt", "file", "text/plain", "notas",
                        hashlib.sha256(notes).hexdigest(), len(notes), Span("s.yaml", 2, 1),
                        notes))
    said = {"role": "user", "content": [{"type": "text", "text": "¿Cuánto me devuelven?"},
                                        *({"type": "attachment", **a.ref()} for a in files)]}
    a = msgspec.structs.replace(
        attempt(answer="Le devuelven 4.350 pesos.", calls=()), attachments=files,
        messages=({"role": "system", "content": "s"}, said,
                  {"role": "assistant", "content": "Le devuelven 4.350 pesos."}))
    assert conversation_text(a) == (
        "The person: ¿Cuánto me devuelven?\n\n[attached image: receipt.png]\n\n"
        "Attached file: notas\n\nReintegro aprobado: 4.350 pesos.\n")
    assert grounded(True, a).status == "pass"  # the amount was in the attached file
    assert grounded(True, msgspec.structs.replace(a, attachments=())).status == "fail"
