"""The fast schema check's compiled code is kept in the user's cache folder (issue 27): a
second process reads it instead of compiling; a damaged or foreign cache is never used."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsl.source import fastschema
from dsl.source.fastschema import compile_schema

SCHEMA = {"type": "object", "properties": {"order": {"type": "string", "pattern": "^[0-9]+$"}},
          "required": ["order"]}


def test_the_code_is_cached_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = compile_schema(SCHEMA)
    (cached,) = (tmp_path / "scenarist").glob("fastschema-*.code")
    assert oct((tmp_path / "scenarist").stat().st_mode & 0o777) == "0o700"
    calls: list[str] = []
    real = compile
    monkeypatch.setattr(fastschema, "compile", lambda *a: calls.append("x") or real(*a),
                        raising=False)
    second = compile_schema(SCHEMA)
    assert calls == []  # read from the cache
    assert first is not None
    assert second is not None
    for value in ({"order": "12"}, {"order": "x"}, {}, {"order": 12}):
        assert first(value) == second(value)
    cached.write_bytes(b"not marshal data")
    third = compile_schema(SCHEMA)
    assert calls == ["x"]  # damaged: compiled again
    assert third is not None
    assert third({"order": "12"})
    assert not third({"order": "x"})


def test_a_cache_folder_others_may_write_to_is_not_used(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "scenarist").mkdir(mode=0o777)
    os.chmod(tmp_path / "scenarist", 0o777)
    assert compile_schema(SCHEMA) is not None
    assert list((tmp_path / "scenarist").iterdir()) == []
