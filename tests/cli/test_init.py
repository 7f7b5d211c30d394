"""``scenarist init``: a commented suite and example scenario that lint clean and run —
offline against the bundled recording, or against the endpoint the person names (here
tests/fakeserver.py, a real process) — the next three commands, and never an overwritten
file. Through the real command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsl.init import CASSETTE, EXAMPLE, SUITE_TEMPLATE
from tests.conftest import REPO, FakeServer

OUTPUT = """\
Created a suite in pharmacy:
  pharmacy/scenarist.yaml               the suite: targets, defaults and the fake tools
  pharmacy/refill_no_refills_left.yaml  an example scenario (read its comments)
  pharmacy/cassettes/example.jsonl      the recorded answers the example target replays
  pharmacy/.gitignore                   keeps runs/ (where scenarist run writes) out of git

Next:
  scenarist lint pharmacy  # check the files: every mistake, with its line
  scenarist run pharmacy   # try the example scenario 5 times and write a report
  scenarist checks         # list the checks a scenario can use
"""


def scenarist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-m", "dsl", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_init_writes_a_suite_that_lints_clean_and_passes_offline(tmp_path: Path) -> None:
    p = scenarist("init", "pharmacy", cwd=tmp_path)
    assert (p.returncode, p.stdout, p.stderr) == (0, OUTPUT, "")
    suite = tmp_path / "pharmacy"
    assert sorted(str(f.relative_to(suite)) for f in suite.rglob("*") if f.is_file()) == [
        ".gitignore", "cassettes/example.jsonl", "refill_no_refills_left.yaml",
        "scenarist.yaml"]
    assert (suite / ".gitignore").read_text("utf-8").splitlines()[-1] == "runs/"
    assert (suite / "refill_no_refills_left.yaml").read_bytes() == EXAMPLE.read_bytes()
    assert (suite / "cassettes" / "example.jsonl").read_bytes() == CASSETTE.read_bytes()
    text = (suite / "scenarist.yaml").read_text("utf-8")
    assert text.startswith("# scenarist.yaml: the suite.")
    assert "@" not in text.replace("e.g.", "")  # every placeholder filled
    lint = scenarist("lint", "--strict", "pharmacy", cwd=tmp_path)
    assert (lint.returncode, lint.stdout) == (0, "1 file(s): 0 error(s), 0 warning(s)\n")
    run = scenarist("run", "pharmacy", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == (
        "PASS  refill_no_refills_left  example    5/5   min 4   100% [57%–100%]")


def test_init_in_the_current_folder(tmp_path: Path) -> None:
    p = scenarist("init", cwd=tmp_path)
    assert p.returncode == 0
    assert p.stdout.splitlines()[0] == "Created a suite in this folder:"
    assert p.stdout.splitlines()[-3:] == [
        "  scenarist lint    # check the files: every mistake, with its line",
        "  scenarist run     # try the example scenario 5 times and write a report",
        "  scenarist checks  # list the checks a scenario can use"]
    assert (tmp_path / "scenarist.yaml").is_file()


def test_init_never_overwrites_a_file(tmp_path: Path) -> None:
    suite = tmp_path / "pharmacy"
    suite.mkdir()
    (suite / "scenarist.yaml").write_text("# mine\n", "utf-8")
    p = scenarist("init", "pharmacy", cwd=tmp_path)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == (
        "error: pharmacy/scenarist.yaml already exists, and init never overwrites a file: "
        "nothing was written. Choose another folder (scenarist init NEW_DIR), or move it "
        "away first\n")
    assert (suite / "scenarist.yaml").read_text("utf-8") == "# mine\n"
    assert sorted(f.name for f in suite.iterdir()) == ["scenarist.yaml"]  # nothing else


def test_init_adds_runs_to_an_existing_gitignore_once(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.pyc", "utf-8")
    p = scenarist("init", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "  .gitignore" in p.stdout
    assert (tmp_path / ".gitignore").read_text("utf-8") == (
        "*.pyc\n# scenarist's run folders\nruns/\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / ".gitignore").write_text("/runs/\n", "utf-8")
    p = scenarist("init", "other", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert ".gitignore" not in p.stdout  # runs/ was listed already: left as it was
    assert (other / ".gitignore").read_text("utf-8") == "/runs/\n"


def test_a_run_started_elsewhere_writes_runs_beside_scenarist_yaml(tmp_path: Path) -> None:
    assert scenarist("init", "pharmacy", cwd=tmp_path).returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = scenarist("run", "../pharmacy/refill_no_refills_left.yaml", "--runs", "1",
                    cwd=elsewhere)
    assert run.returncode == 0, run.stdout + run.stderr
    (made,) = (tmp_path / "pharmacy" / "runs").iterdir()
    assert (made / "results.jsonl").is_file()
    assert not (elsewhere / "runs").exists()
    assert f"Results in {made}/\n" in run.stdout
    assert run.stdout.endswith(f"Report: {made / 'report.html'}\n")
    # --out still chooses, relative to where the command was started
    run = scenarist("run", str(tmp_path / "pharmacy"), "--runs", "1", "--out", "mine",
                    cwd=elsewhere)
    assert run.returncode == 0, run.stdout + run.stderr
    (chosen,) = (elsewhere / "mine").iterdir()
    assert f"Results in mine/{chosen.name}/\n" in run.stdout
    # merge, from a folder inside the suite, puts the merged run beside scenarist.yaml too
    inside = tmp_path / "pharmacy" / "cassettes"
    merged = scenarist("merge", str(made), cwd=inside)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert len(list((tmp_path / "pharmacy" / "runs").iterdir())) == 2
    assert not (inside / "runs").exists()
    again = scenarist("init", "elsewhere", cwd=tmp_path)
    assert again.returncode == 0
    twice = scenarist("init", "elsewhere", cwd=tmp_path)
    assert twice.returncode == 2
    assert twice.stderr.startswith(
        "error: elsewhere/scenarist.yaml, elsewhere/refill_no_refills_left.yaml, "
        "elsewhere/cassettes/example.jsonl already exist, and init never overwrites a file")
    (tmp_path / "a_file").write_text("x")
    p = scenarist("init", "a_file", cwd=tmp_path)
    assert (p.returncode, p.stderr) == (2, "error: a_file is a file, not a folder; give the "
                                           "folder for the new suite (it is created when "
                                           "missing)\n")


@pytest.mark.parametrize("way", ["file", "dangling link", "link to a file"])
def test_a_file_where_init_would_make_a_folder_is_named_and_nothing_written(
        tmp_path: Path, way: str) -> None:
    """Before: "cannot write the suite into pharmacy: File exists", after writing
    scenarist.yaml and the example."""
    suite = tmp_path / "pharmacy"
    suite.mkdir()
    in_the_way = suite / "cassettes"
    if way == "file":
        in_the_way.write_text("notes\n")
        why = "is a file"
    elif way == "dangling link":
        in_the_way.symlink_to("gone")
        why = "is a link to gone, which does not exist"
    else:
        (suite / "notes.txt").write_text("notes\n")
        in_the_way.symlink_to("notes.txt")
        why = "is a file"
    before = sorted(f.name for f in suite.iterdir())
    p = scenarist("init", "pharmacy", cwd=tmp_path)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == (
        f"error: pharmacy/cassettes {why}, where init would make the folder for "
        "pharmacy/cassettes/example.jsonl: nothing was written. Move it away, or choose "
        "another folder (scenarist init NEW_DIR)\n")
    assert sorted(f.name for f in suite.iterdir()) == before


def test_a_dangling_link_as_the_suite_folder_is_named(tmp_path: Path) -> None:
    (tmp_path / "pharmacy").symlink_to("nowhere")
    p = scenarist("init", "pharmacy", cwd=tmp_path)
    assert (p.returncode, p.stderr) == (
        2, "error: pharmacy is a link to nowhere, which does not exist, where init would "
           "make the folder for pharmacy/scenarist.yaml: nothing was written. Move it away, "
           "or choose another folder (scenarist init NEW_DIR)\n")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["pharmacy"]


@pytest.mark.parametrize(("args", "said"), [
    (("--base-url", "http://x/v1"), "name the target with both --base-url and --model"),
    (("--base-url", "127.0.0.1:8080", "--model", "m"),
     "--base-url 127.0.0.1:8080: start it with http:// or https://"),
    (("--base-url", "http://x/v1", "--model", "m", "--api-key-env", "sk-123"),
     "--api-key-env sk-123: give the NAME of an environment variable"),
])
def test_a_target_named_wrongly_is_a_usage_error(tmp_path: Path, args: tuple[str, ...],
                                                  said: str) -> None:
    p = scenarist("init", "pharmacy", *args, cwd=tmp_path)
    assert p.returncode == 2
    assert f"Error: {said}" in p.stderr
    assert not (tmp_path / "pharmacy").exists()


AGENT = {"rules": [{"match": "RX-1001", "replies": [
    {"tool_calls": [{"name": "check_prescription", "arguments": {"rx": "RX-1001"}}]},
    {"text": "RX-1001 has no refills left. Please ask your doctor for a new prescription."}],
    "by_seed": {"4": [{"text": "Sure, done!"}]}}]}


def test_init_against_a_named_endpoint_lints_and_runs_against_it(
        tmp_path: Path, server: FakeServer) -> None:
    server.script(AGENT)
    p = scenarist("init", "mine", "--base-url", server.url, "--model", "qwen2.5-0.5b-instruct",
                  "--api-key-env", "MY_KEY", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[1:3] == [
        "  mine/scenarist.yaml               the suite: targets, defaults and the fake tools",
        "  mine/refill_no_refills_left.yaml  an example scenario (read its comments)"]
    text = (tmp_path / "mine" / "scenarist.yaml").read_text("utf-8")
    assert f'    base_url: "{server.url}"\n    model: "qwen2.5-0.5b-instruct"\n' \
        "    api_key_env: MY_KEY   # the NAME" in text
    assert not (tmp_path / "mine" / "cassettes").exists()
    lint = scenarist("lint", "--strict", "mine", cwd=tmp_path)
    assert (lint.returncode, lint.stdout) == (0, "1 file(s): 0 error(s), 0 warning(s)\n")
    missing = scenarist("run", "mine", cwd=tmp_path)
    assert missing.returncode == 2  # the key's variable is not set: nothing is sent
    assert "MY_KEY" in missing.stderr
    env_run = subprocess.run(
        [sys.executable, "-m", "dsl", "run", "mine"], cwd=tmp_path, capture_output=True,
        text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "MY_KEY": "k"})
    assert env_run.returncode == 0, env_run.stdout
    assert env_run.stdout.splitlines()[0] == (
        "PASS  refill_no_refills_left  agent    4/5   min 4    80% [38%–96%]")
    bodies = [r["body"] for r in server.requests()]
    assert bodies[0]["model"] == "qwen2.5-0.5b-instruct"
    assert bodies[0]["messages"][0]["content"].startswith(
        "You are the assistant of Farmacia Central, a pharmacy.")


def test_the_templates_are_what_init_writes() -> None:
    assert SUITE_TEMPLATE.read_text("utf-8").count("@targets@") == 1
    assert "@" not in EXAMPLE.read_text("utf-8")


def test_a_write_that_fails_midway_leaves_nothing(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk that fills up (or a folder that cannot be written, which root never sees)
    while init writes its third file: the two before it and the folders it made go."""
    from dsl.init import init_suite

    real_open = Path.open

    def failing_open(self: Path, *args: object, **kwargs: object) -> object:
        if self.name == "example.jsonl":
            raise OSError(28, "No space left on device")
        return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", failing_open)
    with pytest.raises(OSError, match="No space left on device"):
        init_suite(tmp_path / "new" / "pharmacy")
    assert list(tmp_path.iterdir()) == []
