"""What a target kind is lives in ``dsl/targets/`` (and how it is opened, in
``dsl/clients/``) alone: nothing else reads a kind's own settings by name
(``getattr(settings, "model", "")``, ``target.get("cassette")``). A new kind whose identity
is a ``url`` or a ``command`` then touches only those two."""

from __future__ import annotations

import ast
from pathlib import Path

from dsl.clients.open import OPENERS
from dsl.store.planfile import PlannedTarget
from dsl.targets.kinds import KINDS, answered_by, model_named, shown_settings, what_it_runs
from tests.conftest import REPO

KIND_KEYS = frozenset({"model", "cassette", "entry", "base_url"})


def duck_typing(source: str) -> list[str]:
    """Each place ``source`` reads a kind's setting by its name: ``getattr(x, "model", ...)``
    with one of :data:`KIND_KEYS`, or ``x.get("cassette")`` / ``x["entry"]``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        name = None
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "getattr" and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant) and node.args[1].value in KIND_KEYS):
            name = node.args[1].value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and node.args:
            key = node.args[0]
            if isinstance(key, ast.Constant) and key.value in ("cassette", "entry"):
                name = key.value
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and node.slice.value in ("cassette", "entry"):
            name = node.slice.value
        if name is not None:
            out.append(f"{node.lineno}: {name}")
    return out


def test_the_finder_finds_duck_typing() -> None:
    source = ('a = getattr(s, "model", "")\nb = t.get("cassette")\nc = t["entry"]\n'
              'd = getattr(s, "name")\ne = t.get("name")\nf = getattr(s, "base_url", None)\n')
    assert duck_typing(source) == ["1: model", "2: cassette", "3: entry", "6: base_url"]


def test_no_module_outside_dsl_targets_knows_a_kinds_settings() -> None:
    found = {}
    for f in sorted((REPO / "dsl").rglob("*.py")):
        if {Path("dsl", "targets"), Path("dsl", "clients")} & set(f.relative_to(REPO).parents):
            continue
        hits = duck_typing(f.read_text("utf-8"))
        if hits:
            found[str(f.relative_to(REPO))] = hits
    assert found == {}


def test_every_kind_is_opened_one_way() -> None:
    """The kinds' table (what the compiler reads) and the openers' (what a run opens) name
    the same kinds, and a kind is a model endpoint exactly when it opens a model."""
    assert set(OPENERS) == set(KINDS)
    assert {k for k, o in OPENERS.items() if o.model is not None} == \
        {k for k, kind in KINDS.items() if kind.is_model}


def written(kind: str, **settings: object) -> PlannedTarget:
    return PlannedTarget("t", kind, settings)


def test_what_a_written_target_runs_is_its_kinds_word() -> None:
    openai = written("openai", model="qwen", base_url="http://127.0.0.1:8080/v1",
                     api_key_env="KEY", temperature=None, params={})
    assert shown_settings(openai) == [("kind", "openai"), ("model", "qwen"),
                                      ("base_url", "http://127.0.0.1:8080/v1")]
    replay = written("replay", cassette="/s/c.jsonl", model=None, temperature=None)
    assert shown_settings(replay) == [("kind", "replay"), ("cassette", "/s/c.jsonl")]
    assert what_it_runs(replay) == "/s/c.jsonl"
    assert what_it_runs(written("replay", cassette="/s/c.jsonl", model="qwen")) == "qwen"
    assert what_it_runs(written("python", entry="app:run")) == "app:run"
    assert what_it_runs(written("someday", url="http://x")) is None  # a kind it does not know
    service = written("http", url="http://127.0.0.1:8000/chat", api_key_env="T", headers={})
    assert shown_settings(service) == [("kind", "http"), ("url", "http://127.0.0.1:8000/chat")]
    program = written("command", command=["node", "agent.js"], env=[])
    assert shown_settings(program) == [("kind", "command"), ("command", "node agent.js")]
    assert what_it_runs(program) == "node agent.js"
    assert set(KINDS) == {"openai", "replay", "python", "http", "command"}  # each tested above


def test_what_answers_a_judge_in_words(tmp_path: Path) -> None:
    from dsl.errors import Span
    from dsl.model import Target
    from dsl.settings import OpenAISettings, PythonSettings, ReplaySettings

    def target(kind: str, config: object) -> Target:
        return Target("j", kind, Span("scenarist.yaml", 1, 1), config)

    openai = target("openai", OpenAISettings(base_url="http://h/v1", model="qwen"))
    replay = target("replay", ReplaySettings(cassette=str(tmp_path / "judge.jsonl")))
    agent = target("python", PythonSettings(entry="app:run"))
    assert [model_named(t) for t in (openai, replay, agent)] == ["qwen", "", ""]
    assert [answered_by(t) for t in (openai, replay, agent)] == [
        "qwen", "replay of judge.jsonl", "j"]
