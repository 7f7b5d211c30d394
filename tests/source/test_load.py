"""Load: positions, YAML 1.2 scalars, and every way a file can be wrong."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dsl.errors import Span
from dsl.source.load import MAX_FILE_BYTES, load_bytes, load_text, read_file


def test_positions_are_one_based_for_keys_and_values() -> None:
    doc = load_text("a: 1\nlist:\n  - x\n  - {k: 'v'}\n", "f.yaml")
    assert doc.diagnostics == ()
    assert doc.data == {"a": 1, "list": ["x", {"k": "v"}]}
    assert doc.span(("a",)) == Span("f.yaml", 1, 4)
    assert doc.key_span(("a",)) == Span("f.yaml", 1, 1)
    assert doc.span(("list", 1, "k")) == Span("f.yaml", 4, 9)
    assert doc.key_span(("list", 1, "k")) == Span("f.yaml", 4, 6)
    assert doc.span(("nope", 3)) == Span("f.yaml", 1, 1)


def test_yaml_1_2_scalars_and_timestamps_stay_text() -> None:
    doc = load_text("a: yes\nb: no\nc: 0x1F\nd: 1.5e3\ne: ~\nf: '7'\ng: 2026-09-29T10:00:00-03:00\n"
                    "h: .inf\ni: True\nj: 010\n", "f.yaml")
    assert doc.data == {"a": "yes", "b": "no", "c": 31, "d": 1500.0, "e": None, "f": "7",
                        "g": "2026-09-29T10:00:00-03:00", "h": float("inf"), "i": True, "j": 10}


def test_flow_mapping_with_a_time_uses_yaml_1_2() -> None:
    doc = load_text("given: {at: 2026-09-29T10:00:00-03:00}\n", "f.yaml")
    assert doc.data == {"given": {"at": "2026-09-29T10:00:00-03:00"}}
    assert doc.span(("given", "at")) == Span("f.yaml", 1, 13)


def test_offsets_inside_strings_map_to_the_file() -> None:
    doc = load_text('a: "x = 1"\nb: |\n  line one\n  two = 2\nc: plain = text\n', "f.yaml")
    assert doc.span_in_string(("a",), 2) == Span("f.yaml", 1, 7)
    assert doc.span_in_string(("b",), 13) == Span("f.yaml", 4, 7)
    assert doc.span_in_string(("c",), 6) == Span("f.yaml", 5, 10)


def test_billion_laughs_is_refused_fast_without_expanding() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    text = "\n".join(lines) + "\n"
    # never expanded: the builder stops at MAX_VALUES (the bomb has 9^9 values)
    import dsl.source.load as load

    seen = []
    real = load._Builder.convert

    def counting(self: load._Builder, node: object, path: load.DataPath) -> object:
        seen.append(1)
        return real(self, node, path)

    load._Builder.convert = counting  # type: ignore[method-assign]
    try:
        doc = load_text(text, "bomb.yaml")
    finally:
        load._Builder.convert = real  # type: ignore[method-assign]
    assert len(seen) <= load.MAX_VALUES + 100
    assert doc.data is None
    (d,) = doc.diagnostics
    assert d.code == "Y109"
    assert d.message == ("the aliases (*name) here expand to more than 100,000 values; this "
                         "looks like a 'billion laughs' attack")
    assert d.span == Span("bomb.yaml", 6, 4)  # f: &f [*e, ...], where it crosses the limit
    assert doc.span(("i", 0)) == Span("bomb.yaml", 8, 4)  # positions still read


def test_too_many_values_without_aliases() -> None:
    doc = load_text("given:\n  tools: [" + "1," * 100_001 + "1]\n", "many.yaml")
    (d,) = doc.diagnostics
    assert (d.code, d.span) == ("Y109", Span("many.yaml", 2, 10))
    assert d.message == "the file holds more than 100,000 values; a scenario needs far fewer"


def test_deep_nesting_is_refused_not_a_crash() -> None:
    doc = load_text("a: " + "[" * 50_000 + "]" * 50_000 + "\n", "deep.yaml")
    (d,) = doc.diagnostics
    assert (d.code, d.message) == ("Y110", "the data is nested more than 100 levels deep")


def test_too_large_file(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as f:
        f.write(b"when: '")
        f.write(b"x" * (MAX_FILE_BYTES + 10))
        f.write(b"'\n")
    doc = read_file(big, "big.yaml")
    (d,) = doc.diagnostics
    assert d.code == "Y104"
    assert d.message == (f"the file is {MAX_FILE_BYTES + 19:,} bytes; Scenarist reads files of "
                         "at most 16,777,216 bytes (16 MiB)")


def test_too_long_string() -> None:
    doc = load_text("when: '" + "x" * 2_000_000 + "'\n", "long.yaml")
    (d,) = doc.diagnostics
    assert (d.code, d.span) == ("Y111", Span("long.yaml", 1, 7))
    assert d.message == ("this string has 2,000,000 characters; Scenarist accepts at most "
                         "1,048,576 in one value")


def test_binary_and_non_utf8() -> None:
    (d,) = load_bytes(b"a: 1\nb: \x00\x01\x02", "bin.yaml").diagnostics
    assert (d.code, d.span.line, d.span.col) == ("Y106", 2, 4)
    (d,) = load_bytes(b"a: 1\nb: caf\xe9\n", "latin.yaml").diagnostics
    assert (d.code, d.span.line, d.span.col) == ("Y105", 2, 7)
    assert d.message == "the file is not UTF-8 text (byte 0xe9 cannot be decoded)"
    assert load_bytes(b"\xef\xbb\xbfa: 1\n", "bom.yaml").data == {"a": 1}


def test_control_character_is_located() -> None:
    (d,) = load_text("a: 1\nb: x\x07y\n", "c.yaml").diagnostics
    assert (d.code, d.span) == ("Y106", Span("c.yaml", 2, 5))
    assert d.message == "the file contains a control character (U+0007) that YAML does not allow"


# the characters YAML lets a file hold (printable, no control characters)
TEXT = st.characters(whitelist_categories=("L", "N", "P", "S", "Zs"), max_codepoint=0xD7FF)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(TEXT, max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(TEXT, max_size=8),
                                                                 inner, max_size=4),
    max_leaves=20,
)
PLAIN_WORDS = st.sampled_from(["yes", "no", "on", "null", "~", "True", "0x1F", "0o17", "1e3",
                               ".5", "-3", "+4", ".inf", "-.Inf", ".nan", "010", "2026-09-29",
                               "10:00:00", "name", "list_business_hours", "A-1001", "1_000"])


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_json_is_read_as_yaml_1_2_by_both_composers(data: object) -> None:
    """JSON is YAML: every document reads back as the data (libyaml's composer with the
    builder's fast paths, and the pure-Python composer through the general path)."""
    from dsl.source.load import _Builder, _compose_pure

    text = json.dumps({"root": data}, ensure_ascii=False)
    assert load_text(text, "j.yaml").data == {"root": data}
    assert _Builder("j.yaml").convert(_compose_pure(text), 0) == {"root": data}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["k", "true", "1", "null", "x y", "é"]),
                          PLAIN_WORDS), max_size=6, unique_by=lambda kv: kv[0]))
def test_plain_scalars_resolve_the_same_on_both_paths(pairs: list[tuple[str, str]]) -> None:
    from dsl.source.load import _Builder, _compose_pure

    text = "".join(f"{k}: {v}\n" for k, v in pairs) + "list: [" + ", ".join(
        v for _, v in pairs) + "]\n"
    fast = load_text(text, "p.yaml")
    assert fast.diagnostics == ()
    assert fast.data == _Builder("p.yaml").convert(_compose_pure(text), 0)
