"""Writing a YAML file back changing only what was edited (dsl/studio/yamltext.py):
comments go with the line below them, as people write them; the lines ruamel would
rewrite (a mixed indentation, a block at the end without its line end) stay as written."""

from __future__ import annotations

from dsl.studio.yamltext import YamlText, patch_lines

T = """\
then:
  # before a
  - contains: "a"   # end a
  # own line before b
  - contains: "b"   # end b
  # own line before c
  - contains: "c"
# about when
when: x
"""


def edited(change: object) -> str:
    doc = YamlText(T)
    change(doc.data["then"])  # type: ignore[operator]
    return doc.text()


def test_a_removed_item_takes_its_comments_above_and_leaves_those_below() -> None:
    assert edited(lambda s: s.pop(1)) == T.replace(
        '  # own line before b\n  - contains: "b"   # end b\n', "")
    assert edited(lambda s: s.pop(0)) == T.replace(
        '  # before a\n  - contains: "a"   # end a\n', "")
    assert edited(lambda s: s.pop(2)) == T.replace(
        '  # own line before c\n  - contains: "c"\n', "")


def test_an_added_item_goes_above_the_comments_that_lead_into_the_next() -> None:
    assert edited(lambda s: s.insert(1, "non_empty")) == T.replace(
        "  # own line before b\n", "  - non_empty\n  # own line before b\n")
    assert edited(lambda s: s.append("non_empty")) == T.replace(
        '  - contains: "c"\n', '  - contains: "c"\n  - non_empty\n')


def test_lines_the_round_trip_would_change_stay() -> None:
    original = "a: 1\nb:\n    - x\n    - y\nc: |\n  last"
    before = "a: 1\nb:\n  - x\n  - y\nc: |-\n  last\n"
    after = "a: 2\nb:\n  - x\n  - y\nc: |-\n  last\n"
    assert patch_lines(original, before, after) == "a: 2\nb:\n    - x\n    - y\nc: |\n  last"


def test_json_is_written_back_as_json() -> None:
    text = '{\n  "defaults": {\n    "runs": 3\n  },\n  "x": "\\u00e9"\n}'
    doc = YamlText(text, "the suite")
    doc.data["defaults"]["runs"] = 4
    assert doc.text() == '{\n  "defaults": {\n    "runs": 4\n  },\n  "x": "\\u00e9"\n}'
