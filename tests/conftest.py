"""Shared fixtures: a real scripted OpenAI-compatible server process on 127.0.0.1, and
helpers that write suites and scenarios into a temporary folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from dsl.cli import main

HERE = Path(__file__).parent
REPO = HERE.parent


@dataclass
class FakeServer:
    """Handle on tests/fakeserver.py running as a separate process (over TLS when ``ca``,
    the certificate authority a target trusts through its ``ca_file``, is set)."""

    port: int
    process: subprocess.Popen[str]
    ca: Path | None = None

    @property
    def root(self) -> str:
        return f"{'https' if self.ca else 'http'}://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

    @property
    def settings(self) -> dict[str, Any]:
        """What a target needs besides its base_url to reach this server."""
        return {"ca_file": str(self.ca)} if self.ca else {}

    def script(self, script: dict[str, Any]) -> None:
        httpx.post(f"{self.root}/_script", json=script, timeout=5,
                   verify=self._verify()).raise_for_status()

    def requests(self) -> list[dict[str, Any]]:
        r = httpx.get(f"{self.root}/_requests", timeout=5, verify=self._verify())
        r.raise_for_status()
        data: list[dict[str, Any]] = r.json()
        return data

    def _verify(self) -> Any:
        import ssl

        return ssl.create_default_context(cafile=str(self.ca)) if self.ca else True


def start_fake_server(*extra: str, tls: TLSFiles | None = None) -> FakeServer:
    if tls is not None:
        extra = (*extra, "--tls", str(tls.server))
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "fakeserver.py"), "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return FakeServer(int(line.split()[1]), proc, tls.ca if tls is not None else None)


@dataclass(frozen=True)
class TLSFiles:
    """A certificate authority made for the test session (trustme) and a certificate it
    signed for 127.0.0.1 and localhost: ``ca`` is what a target's ca_file names,
    ``server`` the server's private key and certificate chain (one PEM file)."""

    ca: Path
    server: Path


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    import trustme

    folder = tmp_path_factory.mktemp("tls")
    authority = trustme.CA()
    leaf = authority.issue_cert("127.0.0.1", "localhost")
    files = TLSFiles(folder / "ca.pem", folder / "server.pem")
    authority.cert_pem.write_to_path(str(files.ca))
    leaf.private_key_and_cert_chain_pem.write_to_path(str(files.server))
    return files


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeServer]:
    server = start_fake_server()
    yield server
    server.process.terminate()
    server.process.wait(timeout=5)


@pytest.fixture(scope="session")
def tls_fake_server(tls_files: TLSFiles) -> Iterator[FakeServer]:
    """The fake server over HTTPS, its certificate signed by ``tls_files.ca``."""
    server = start_fake_server(tls=tls_files)
    yield server
    server.process.terminate()
    server.process.wait(timeout=5)


@pytest.fixture
def server(fake_server: FakeServer) -> FakeServer:
    """The session's fake server with an empty script and request log."""
    fake_server.script({"rules": []})
    return fake_server


# the two paths of dsl/clients/transport.py: plain http:// (h11 on Scenarist's own
# connections) and https:// (httpx)
PATHS = ["plain", "tls"]


@pytest.fixture(params=PATHS)
def any_server(request: pytest.FixtureRequest) -> FakeServer:
    """The fake server reached by each path in turn, with an empty script and request log;
    a target reaches it with ``base_url: server.url`` and ``**server.settings``."""
    found: FakeServer = request.getfixturevalue(
        "fake_server" if request.param == "plain" else "tls_fake_server")
    found.script({"rules": []})
    return found


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), "utf-8")
    return path


def suite_yaml(url: str, **extra: Any) -> str:
    """A suite with one openai target at ``url`` and a small tool library."""
    targets = extra.pop("targets", None) or {
        "fake": {"kind": "openai", "base_url": url, "model": "fake-model", "timeout_ms": 5000,
                 "retry": {"max_attempts": 1}}
    }
    data = {
        "targets": targets,
        "defaults": {"runs": 3, "min_pass_rate": 0.6, "concurrency": 4, **extra.pop("defaults", {})},
        "tools": {
            "list_business_hours": {
                "description": "List the clinic's opening hours, by day.",
                "returns": {"monday": "09:00-18:00", "tuesday": "09:00-18:00"},
            },
            "set_business_hours": {
                "description": "Change the opening hours of one day.",
                "input_schema": {"type": "object", "properties": {"day": {"type": "string"},
                                                                  "hours": {"type": "string"}},
                                 "required": ["day", "hours"]},
                "action": "update",
                "confirm": True,
                "returns": "Hours for {{ args.day }} updated.",
            },
            "book_appointment": {
                "description": "Book an appointment.",
                "input_schema": {"type": "object", "properties": {"date": {"type": "string"},
                                                                  "time": {"type": "string"}},
                                 "required": ["date", "time"]},
                "action": "create",
                "returns": "Booked {{ args.date }} at {{ args.time }}.",
            },
        },
        **extra,
    }
    return json.dumps(data, indent=2)


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("NO_COLOR", "1")
    return dict(os.environ)


# ---- a scenario, a script, and ways to run the command line ------------------------------

HOURS = """
description: A clerk asks until what time the clinic is open today.
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, set_business_hours]
when: "¿Hasta qué hora atendemos hoy?"
then:
  - calls: list_business_hours
  - contains: "18:00"
  - does_not_modify
  - asks_nothing_to_confirm
"""

TOOL_THEN_ANSWER = {
    "rules": [{
        "match": "hora",
        "replies": [
            {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
            {"text": "Hoy atendemos hasta las 18:00."},
        ],
    }]
}


def make_suite(tmp_path: Path, server: FakeServer, scenario: str = HOURS, **extra: Any) -> Path:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, **extra))
    write(tmp_path / "hours.yaml", scenario)
    return tmp_path


def run_cli(*args: str, cwd: Path) -> Any:
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def cli_process(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "dsl", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_lines(path: Path, n: int, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text().count("\n") >= n:
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} never reached {n} lines")


# ---- suites and run folders shared by the run-stage tests --------------------------------

ONE_RUN = HOURS + "runs: 1\nmin_pass: 1\n"


def plain_suite(tmp_path: Path, url: str, **target: Any) -> None:
    """One openai target at ``url`` with quick retries; ``target`` overrides its keys."""
    t = {"kind": "openai", "base_url": url, "model": "m", "timeout_ms": 2000,
         "retry": {"max_attempts": 2, "backoff_ms": 1}, **target}
    write(tmp_path / "scenarist.yaml", suite_yaml(url, targets={"fake": t}))


def records_of(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]


def the_run(parent: Path) -> Path:
    (d,) = parent.iterdir()
    return d


EARLY = {  # by seed: pass (18:00) or fail (no hours) — deterministic per run index
    "rules": [
        {"match": "always", "replies": [{"text": "Abrimos hasta las 18:00."}]},
        {"match": "never", "replies": [{"text": "No sé."}]},
        {"match": "odd", "by_seed": {str(i): [{"text": "18:00" if i % 2 else "no"}]
                                     for i in range(1, 11)}},
    ]
}


def early_suite(tmp_path: Path, url: str) -> None:
    plain_suite(tmp_path, url)
    for name, runs, min_pass in (("always", 10, 8), ("never", 10, 2), ("odd", 9, 5)):
        write(tmp_path / f"{name}.yaml", f"""
            given: {{at: "2026-09-29T10:00:00-03:00"}}
            when: {name}
            then: [{{contains: "18:00"}}]
            runs: {runs}
            min_pass: {min_pass}
            """)


def two_targets(tmp_path: Path, url: str, default: str | None = None) -> None:
    """A suite with two openai targets, a and b, and the hours scenario."""
    targets = {"a": {"kind": "openai", "base_url": url, "model": "m1"},
               "b": {"kind": "openai", "base_url": url, "model": "m2"}}
    defaults = {"target": default} if default else {}
    write(tmp_path / "scenarist.yaml", suite_yaml(url, targets=targets, defaults=defaults))
    write(tmp_path / "hours.yaml", HOURS)


# ---- a real PostgreSQL server for the history's tests -------------------------------------

REQUIRE_POSTGRESQL = "SCENARIST_TEST_POSTGRESQL"  # "required" (CI): no server is a failure
PG_PASSWORD = "pg-s3cret-Zq9"  # the server's password: never to be found in any file


@dataclass
class Postgres:
    """A PostgreSQL server started for the test session (Debian's postgresql package),
    listening on 127.0.0.1 with password authentication."""

    host: str
    port: int
    user: str
    password: str

    def url(self, db: str, *, password: bool = False) -> str:
        secret = f":{self.password}" if password else ""
        return f"postgresql://{self.user}{secret}@{self.host}:{self.port}/{db}"

    def new_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url("postgres", password=True), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return name


def _pg_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1].parent if found else None


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_postgres(base: Path) -> tuple[Postgres, Callable[[], None]]:
    """initdb and pg_ctl on a temporary data folder, as the postgres user when root.
    RuntimeError (with the reason) when a server cannot be started here."""
    import pwd
    import shutil

    bin_dir = _pg_bin()
    if bin_dir is None:
        raise RuntimeError("no PostgreSQL server binaries in /usr/lib/postgresql "
                           "(apt-get install postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise RuntimeError("psycopg is not installed (pip install 'scenarist[postgresql]')"
                           ) from None
    as_user: list[str] = []
    owner = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise RuntimeError("running as root and there is no postgres user") from None
        as_user = ["runuser", "-u", "postgres", "--"]
    data = base / "data"
    sock = base / "sock"
    data.mkdir(parents=True)
    sock.mkdir()
    pwfile = base / "pwfile"
    pwfile.write_text(PG_PASSWORD + "\n")
    if owner is not None:
        for p in (base, data, sock, pwfile):
            os.chown(p, owner.pw_uid, owner.pw_gid)
    user = "postgres" if owner is not None else pwd.getpwuid(os.geteuid()).pw_name
    port = _free_port()

    def run(*cmd: str) -> None:
        out = subprocess.run([*as_user, *cmd], capture_output=True, text=True, timeout=120,
                             check=False)
        if out.returncode != 0:
            raise RuntimeError(f"{Path(cmd[0]).name} failed: {(out.stderr or out.stdout).strip()}")

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", user, "--pwfile", str(pwfile),
        "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync")
    run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(base / "server.log"), "-w",
        "-t", "60", "-o", f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off",
        "start")

    def stop() -> None:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast",
                        "-w", "stop"], capture_output=True, timeout=60, check=False)
        shutil.rmtree(base, ignore_errors=True)

    return Postgres("127.0.0.1", port, user, PG_PASSWORD), stop


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Postgres]:
    """The session's PostgreSQL server; the tests that use it are skipped, with the reason,
    when none can be started — unless SCENARIST_TEST_POSTGRESQL=required (CI), where that
    is a failure."""
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="scenarist-pg-"))  # short: a socket path has a limit
    try:
        server, stop = start_postgres(base)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        if os.environ.get(REQUIRE_POSTGRESQL) == "required":
            pytest.fail(f"{REQUIRE_POSTGRESQL}=required, and no PostgreSQL server could be "
                        f"started: {exc}")
        pytest.skip(f"no PostgreSQL server could be started here: {exc}")
    try:
        yield server
    finally:
        stop()
