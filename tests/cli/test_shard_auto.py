"""``--shard auto``: the shard read from the scheduler the job runs under — SCENARIST_SHARD,
GitLab, CircleCI, Buildkite, a Kubernetes Indexed Job — selecting the same attempts as the
explicit ``--shard I/N``; none found, or a value that cannot be read, is a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsl.cli.common import SHARD_ENV, SHARD_SOURCES, ShardNotFound, shard_from_environment
from tests.conftest import REPO, run_cli

ALL_VARS = [SHARD_ENV, *(v for _, i, c, _ in SHARD_SOURCES for v in (i, c) if v)]

# (the environment, --shard's value, the shard it is, the words said)
ENVIRONMENTS = [
    ({"SCENARIST_SHARD": "2/3"}, "auto", (2, 3), "SCENARIST_SHARD=2/3"),
    ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"}, "auto", (2, 3),
     "GitLab's CI_NODE_INDEX=2 and CI_NODE_TOTAL=3"),
    ({"CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "3"}, "auto", (2, 3),
     "CircleCI's CIRCLE_NODE_INDEX=1 and CIRCLE_NODE_TOTAL=3"),
    ({"BUILDKITE_PARALLEL_JOB": "1", "BUILDKITE_PARALLEL_JOB_COUNT": "3"}, "auto", (2, 3),
     "Buildkite's BUILDKITE_PARALLEL_JOB=1 and BUILDKITE_PARALLEL_JOB_COUNT=3"),
    ({"JOB_COMPLETION_INDEX": "1"}, "auto/3", (2, 3),
     "a Kubernetes Indexed Job's JOB_COMPLETION_INDEX=1"),
]


@pytest.fixture
def no_shard_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for var in ALL_VARS:  # (CI may run these tests inside a parallel job of its own)
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


@pytest.mark.parametrize(("env", "flag", "shard", "said"), ENVIRONMENTS)
def test_each_scheduler_names_its_shard(env: dict[str, str], flag: str,
                                        shard: tuple[int, int], said: str) -> None:
    count = int(flag.split("/")[1]) if "/" in flag else None
    assert shard_from_environment(env, count) == (shard, said)


def test_the_first_source_wins_and_every_index_counts_from_its_own_first() -> None:
    both = {"SCENARIST_SHARD": "1/4", "CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "4"}
    assert shard_from_environment(both)[0] == (1, 4)
    assert shard_from_environment({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4"})[0] == (1, 4)
    assert shard_from_environment({"CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "4"}
                                  )[0] == (1, 4)
    assert shard_from_environment({"JOB_COMPLETION_INDEX": "3"}, 4)[0] == (4, 4)


@pytest.mark.parametrize(("env", "count", "message"), [
    ({}, None, "--shard auto found no shard in the environment: set SCENARIST_SHARD=I/N "
     "(for example 2/8), or run it where one is set: GitLab (CI_NODE_INDEX, CI_NODE_TOTAL), "
     "CircleCI (CIRCLE_NODE_INDEX, CIRCLE_NODE_TOTAL), Buildkite (BUILDKITE_PARALLEL_JOB, "
     "BUILDKITE_PARALLEL_JOB_COUNT), a Kubernetes Indexed Job (JOB_COMPLETION_INDEX); a "
     "Kubernetes Indexed Job also needs --shard auto/N"),
    ({"JOB_COMPLETION_INDEX": "2"}, None,
     "JOB_COMPLETION_INDEX=2 says which shard this is but not how many there are (the number "
     "of shards is not set): write --shard auto/N with N the number of shards"),
    ({"CI_NODE_INDEX": "2"}, None,
     "CI_NODE_INDEX=2 says which shard this is but not how many there are (CI_NODE_TOTAL is "
     "not set): write --shard auto/N with N the number of shards"),
    ({"SCENARIST_SHARD": "two"}, None, "SCENARIST_SHARD=two is not I/N (for example 2/8)"),
    ({"CIRCLE_NODE_INDEX": "x", "CIRCLE_NODE_TOTAL": "2"}, None,
     "CIRCLE_NODE_INDEX=x is not a number"),
    ({"CIRCLE_NODE_INDEX": "2", "CIRCLE_NODE_TOTAL": "2"}, None,
     "CircleCI's CIRCLE_NODE_INDEX=2 and CIRCLE_NODE_TOTAL=2 is shard 3 of 2: outside 1 to 2"),
    ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4"}, 8,
     "GitLab's CI_NODE_INDEX=1 and CI_NODE_TOTAL=4 says 4 shards, but --shard auto/8 says 8"),
])
def test_what_cannot_be_read_is_said(env: dict[str, str], count: int | None,
                                     message: str) -> None:
    with pytest.raises(ShardNotFound) as caught:
        shard_from_environment(env, count)
    assert str(caught.value) == message


def _planned(run_dir: Path) -> list[str]:
    return [s["id"] for s in json.loads((run_dir / "plan.json").read_text())["scenarios"]]


def _run(tmp_path: Path, out: str, *shard: str) -> tuple[object, list[str]]:
    result = run_cli("run", str(REPO / "scenarios"), "--target", "bot", "--runs", "1",
                     "--out", out, *shard, cwd=tmp_path)
    runs = list((tmp_path / out).iterdir()) if (tmp_path / out).exists() else []
    return result, _planned(runs[0]) if runs else []


def test_auto_selects_the_same_attempts_as_the_explicit_shard(
        tmp_path: Path, no_shard_env: pytest.MonkeyPatch, cli_env: dict[str, str]) -> None:
    explicit, wanted = _run(tmp_path, "explicit", "--shard", "2/3")
    assert explicit.exit_code == 0, explicit.output  # type: ignore[attr-defined]
    assert 0 < len(wanted) < len(_run(tmp_path, "all")[1])
    for n, (env, flag, _, said) in enumerate(ENVIRONMENTS):
        for var in ALL_VARS:
            no_shard_env.delenv(var, raising=False)
        for var, value in env.items():
            no_shard_env.setenv(var, value)
        result, planned = _run(tmp_path, f"auto{n}", "--shard", flag)
        assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
        assert planned == wanted
        assert f"Shard 2/3, from {said}.\n" in result.output  # type: ignore[attr-defined]


def test_auto_without_a_shard_in_the_environment_exits_2(
        tmp_path: Path, no_shard_env: pytest.MonkeyPatch) -> None:
    result = run_cli("run", str(REPO / "scenarios"), "--shard", "auto", "--out", "runs",
                     cwd=tmp_path)
    assert result.exit_code == 2
    assert "Invalid value for '--shard': --shard auto found no shard in the environment" \
        in result.output
    assert not (tmp_path / "runs").exists()
    bad = run_cli("run", str(REPO / "scenarios"), "--shard", "auto/x", cwd=tmp_path)
    assert bad.exit_code == 2
    assert ("Invalid value for '--shard': 'auto/x' is not auto/N with N a number of shards "
            "(for example auto/8)") in bad.output
