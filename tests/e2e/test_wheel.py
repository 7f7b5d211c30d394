"""Packaging: the wheel ships schemas/, grammar/, the report template and what init writes,
and the installed package works from any folder (not only from the source tree)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps",
                    "--no-build-isolation", "-q", "-w", str(out)], check=True, timeout=300)
    (whl,) = out.glob("scenarist-*.whl")
    return whl


def test_wheel_contents(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("dsl/__init__.py", "dsl/cli/__init__.py", "dsl/schemas/scenario.schema.json",
                     "dsl/schemas/suite.schema.json", "dsl/assets/report.html.j2",
                     "dsl/assets/init/scenarist.yaml", "dsl/assets/init/example.jsonl",
                     "dsl/assets/init/refill_no_refills_left.yaml",
                     "dsl/studio/server.py", "dsl/studio/static/index.html",
                     "dsl/studio/static/studio.js", "dsl/studio/static/studio.css",
                     "dsl/studio/static/studio.js.LICENSES.txt"):
        assert required in names, required
    grammars = {n for n in names if n.startswith("dsl/grammar/")}
    assert grammars, "grammar/ must ship inside the package"
    for f in (REPO / "grammar").iterdir():
        assert f"dsl/grammar/{f.name}" in names
    assert not any(n.startswith(("tests/", "scenarios/", "dsl/_buildtools/",
                                 "dsl/studio/frontend/")) for n in names)
    entry = [n for n in names if n.endswith("entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry[0]).decode()
    assert "scenarist = dsl.cli:main" in text


def test_the_wheel_ships_the_conformance_cases(wheel: Path, tmp_path: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    cases = sorted(f.name for f in (REPO / "dsl" / "assets" / "conformance").glob("*.yaml"))
    assert len(cases) == 7
    for name in cases:
        assert f"dsl/assets/conformance/{name}" in names, name
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(site), str(wheel)], check=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(site), "NO_COLOR": "1"}
    listed = subprocess.run([sys.executable, "-m", "dsl", "conformance", "--list"],
                            cwd=tmp_path, env=env, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[1].startswith("conformance.chat ")
    assert f"7 built-in cases (in {site / 'dsl' / 'assets' / 'conformance'})" in listed.stdout


def test_installed_package_works_from_any_folder(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(site), str(wheel)], check=True, timeout=300)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "NO_COLOR": "1"}
    probe = subprocess.run([sys.executable, "-c", "import dsl, dsl.source.resources as r; "
                            "print(dsl.__file__); print(r.resource_path('schemas', "
                            "'scenario.schema.json'))"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, check=True)
    assert probe.stdout.startswith(str(site))
    assert str(site / "dsl" / "schemas") in probe.stdout
    schema = subprocess.run([sys.executable, "-m", "dsl", "schema"], cwd=elsewhere, env=env,
                            capture_output=True, text=True, check=True)
    assert '"title": "Scenarist scenario"' in schema.stdout
    plan = subprocess.run([sys.executable, "-m", "dsl", "plan", str(REPO / "scenarios")],
                          cwd=elsewhere, env=env, capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    assert "clinic.hours_today" in plan.stdout
    # a new suite, run offline against the cassette the wheel ships
    for args in (("init", "pharmacy"), ("lint", "pharmacy"), ("run", "pharmacy")):
        p = subprocess.run([sys.executable, "-m", "dsl", *args], cwd=elsewhere, env=env,
                           capture_output=True, text=True)
        assert p.returncode == 0, (args, p.stdout, p.stderr)
    assert p.stdout.startswith("PASS  refill_no_refills_left  example    5/5")
