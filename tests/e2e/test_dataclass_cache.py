"""The code ``dataclasses`` writes for Scenarist's classes is kept in the user's cache
folder (issue 27): a second process builds the same classes without compiling it again;
the classes are the same either way; a damaged, foreign or absent cache is never used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

# What a class's generated methods look like from outside, and how many texts the
# process compiled itself (counted in the builtins
# exec and compile)
PROBE = """
import builtins, inspect, json, sys
compiled = []
def counting(real):
    def count(*a, **k):
        if a and isinstance(a[0], str) and a[0].startswith("def __create_fn__"):
            compiled.append(1)
        return real(*a, **k)
    return count
builtins.compile = counting(builtins.compile)  # the cache compiles,
builtins.exec = counting(builtins.exec)  # dataclasses alone compiles as it executes
import dsl.model as m
from dsl.compiler.suite import Suite
out = {}
for cls in (m.Scenario, m.CompiledCheck, m.ToolSpec, Suite):
    out[cls.__name__] = [str(inspect.signature(cls)), repr(cls.__init__.__annotations__),
                         cls.__doc__, sorted(vars(cls))]
out["frozen"] = m.ToolSpec.__dataclass_params__.frozen
out["flags"] = [c.__init__.__code__.co_flags for c in (m.Scenario, m.CompiledCheck)]
ours = len(compiled)
# another module's dataclass, made after dsl is imported: compiled as always
import dataclasses, types
other = types.ModuleType("elsewhere")
sys.modules["elsewhere"] = other
exec("import dataclasses\\n@dataclasses.dataclass(frozen=True)\\nclass P:\\n    x: int\\n"
     "    y: 'list[str]' = dataclasses.field(default_factory=list)\\n", other.__dict__)
out["other"] = [str(inspect.signature(other.P)), repr(other.P.__init__.__annotations__),
                other.P.__init__.__code__.co_flags, repr(other.P(1)), other.P(1) == other.P(1)]
out["other compiled"] = len(compiled) - ours
print(json.dumps({"compiled": ours, "classes": out}))
"""


def probe(cache: Path | None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=env,
                          capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_the_code_is_kept_and_the_classes_are_the_same(tmp_path: Path) -> None:
    (tmp_path / "none").mkdir()
    reference = probe(tmp_path / "none")  # no cache folder: dataclasses as they are
    (tmp_path / "scenarist").mkdir(mode=0o700)
    first = probe(tmp_path)
    assert first["compiled"] > 50  # nothing kept yet: every text compiled
    assert first["classes"] == reference["classes"]
    (kept,) = (tmp_path / "scenarist").glob("dataclasses-*.code")
    second = probe(tmp_path)
    assert second["compiled"] == 0  # every text read back
    assert second["classes"] == first["classes"]
    kept.write_bytes(b"not marshal data")
    third = probe(tmp_path)
    assert third["compiled"] == first["compiled"]  # damaged: compiled again
    assert third["classes"] == first["classes"]


def test_no_cache_folder_of_ones_own_no_cache(tmp_path: Path) -> None:
    folder = tmp_path / "scenarist"
    folder.mkdir(mode=0o777)
    os.chmod(folder, 0o777)  # others may write to it: never read, never written
    first = probe(tmp_path)
    assert first["compiled"] > 50
    assert list(folder.iterdir()) == []
    assert probe(tmp_path)["compiled"] == first["compiled"]
    empty = tmp_path / "none"
    empty.mkdir()
    assert probe(empty)["compiled"] == first["compiled"]  # no scenarist folder: not made
    assert list(empty.iterdir()) == []


def test_texts_of_older_versions_do_not_pile_up(tmp_path: Path) -> None:
    import marshal

    folder = tmp_path / "scenarist"
    folder.mkdir(mode=0o700)
    probe(tmp_path)
    (kept,) = folder.glob("dataclasses-*.code")
    version, codes = marshal.loads(kept.read_bytes())
    used = len(codes)
    stale = {f"def __create_fn__():\n def f{i}(): pass\n return f{i}": marshal.dumps(
        compile("pass", "<string>", "exec")) for i in range(4001)}
    kept.write_bytes(marshal.dumps((version, {**stale, **dict(list(codes.items())[1:])})))
    assert probe(tmp_path)["compiled"] == 1  # the one text taken out
    _, pruned = marshal.loads(kept.read_bytes())
    assert len(pruned) == used  # this process's texts only
