"""The committed page bundle (dsl/studio/static/studio.js and its licence notices) is what
``npm ci && npm run build`` makes from dsl/studio/frontend: rebuilt in a temporary copy,
byte for byte. Without npm the test skips, unless SCENARIST_REQUIRE_BROWSER is set (CI),
where it fails."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

STUDIO = REPO / "dsl" / "studio"
BUILT = ("studio.js", "studio.js.LICENSES.txt")

pytestmark = pytest.mark.slow


def test_the_committed_bundle_is_what_the_lockfile_and_sources_build(tmp_path: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        if os.environ.get("SCENARIST_REQUIRE_BROWSER", "") not in ("", "0"):
            pytest.fail("npm is needed to check the studio's bundle (SCENARIST_REQUIRE_BROWSER "
                        "is set): install Node.js 20 and npm", pytrace=False)
        pytest.skip("npm is not installed: the studio's bundle is not rebuilt")
    shutil.copytree(STUDIO / "frontend", tmp_path / "frontend",
                    ignore=shutil.ignore_patterns("node_modules"))
    (tmp_path / "static").mkdir()
    for step in (["ci", "--no-audit", "--no-fund"], ["run", "build"]):
        done = subprocess.run([npm, *step], cwd=tmp_path / "frontend", capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
    for name in BUILT:
        rebuilt = (tmp_path / "static" / name).read_bytes()
        committed = (STUDIO / "static" / name).read_bytes()
        assert rebuilt == committed, (
            f"dsl/studio/static/{name} is stale: run `npm ci && npm run build` in "
            "dsl/studio/frontend and commit the result")
