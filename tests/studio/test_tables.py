"""World tables as grids (dsl/studio/tables.py): a table kept in a CSV or JSONL file is
edited in place in that file — only the rows that changed are written anew, the others
stay byte for byte; CSV imported from a spreadsheet."""

from __future__ import annotations

import pytest

from dsl.studio.tables import FormError, edit_file, file_model, read_csv

CSV = 'id,status,note\r\nC-1,active,"said ""hi"""\r\nC-2,active,\r\n'
JSONL = '{"id": "C-1", "n": 7}\n{"id":"C-2","n":8}\n'


def test_a_cell_of_a_csv_file_changes_its_row_only() -> None:
    new = edit_file("cards.csv", CSV, [{"op": "set_cell", "row": 1, "column": "status",
                                        "value": "blocked"}])
    assert new == 'id,status,note\r\nC-1,active,"said ""hi"""\r\nC-2,blocked,\r\n'
    assert file_model("cards", "cards.csv", new)["rows"] == [
        ["C-1", "active", 'said "hi"'], ["C-2", "blocked", ""]]


def test_rows_and_columns_of_a_csv_file() -> None:
    new = edit_file("cards.csv", CSV, [{"op": "add_row"},
                                       {"op": "set_cell", "row": 2, "column": "id",
                                        "value": "C-3"},
                                       {"op": "add_column", "column": "owner"},
                                       {"op": "remove_row", "row": 0}])
    assert new == "id,status,note,owner\r\nC-2,active,,\r\nC-3,,,\r\n"


def test_a_jsonl_file_keeps_its_numbers_and_other_lines() -> None:
    new = edit_file("t.jsonl", JSONL, [{"op": "set_cell", "row": 1, "column": "n",
                                        "value": "9"}])
    assert new == '{"id": "C-1", "n": 7}\n{"id": "C-2", "n": 9}\n'
    text = edit_file("t.jsonl", JSONL, [{"op": "set_cell", "row": 0, "column": "n",
                                         "value": "seven"}])
    assert text.splitlines()[0] == '{"id": "C-1", "n": "seven"}'


def test_importing_a_spreadsheets_csv() -> None:
    assert read_csv("\ufeffid;status\nC-1;active\nC-2\n") == (
        ["id", "status"], [["C-1", "active"], ["C-2", ""]])
    new = edit_file("cards.csv", CSV, [{"op": "import_csv",
                                        "text": "id,status\nX-1,new\n"}])
    assert new == "id,status\r\nX-1,new\r\n"
    with pytest.raises(FormError) as caught:
        read_csv("a,a\n1,2\n")
    assert str(caught.value) == ("the CSV file's first row must name each column once (it "
                                 "is: a, a)")


def test_an_edit_that_does_not_fit() -> None:
    with pytest.raises(FormError) as caught:
        edit_file("cards.csv", CSV, [{"op": "set_cell", "row": 9, "column": "id",
                                      "value": "x"}])
    assert str(caught.value) == "there is no row 9 here (there are 2)"
    with pytest.raises(FormError) as caught:
        edit_file("cards.csv", CSV, [{"op": "add_column", "column": "status"}])
    assert str(caught.value) == "this table has a column 'status' already"
