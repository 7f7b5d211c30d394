"""The hostile corpus: every probe of issue 11 as files in a folder and a ``scenarist``
command to run on them, with what must hold afterwards.

``probes(root, server)`` writes each probe's files under ``root/<probe>/`` and returns the
probes; ``bench/hostile/run.py`` runs them. A probe's ``expect`` looks at what the command
did and returns what is wrong (``None``: fine); the runner adds the checks every probe
shares (no traceback, a documented exit code, under 1 GB, in time).

``owner`` says whose part of Scenarist a probe exercises: ``edge`` (endpoint replies and
the author's files: targets, loop, judge parsing, load, templates, patterns, cassettes) or
``run`` (the run stage: redaction, locks, --record, paths, python agents — expected to
fail until the run-path refactor of issue 10 lands).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
LONG_KEY = "sk-hostile-0123456789abcdef"
SHORT_KEY = "k3y"  # shorter than the redaction minimum

SCENARIO = """\
given:
  at: 2026-09-29T10:00:00-03:00
  tools:
    - name: lookup
      description: Look something up.
      input_schema: {type: object, properties: {s: {type: string}}}
      returns: RETURNS
when: hi
then:
  - non_empty
runs: RUNS
min_pass: 1
"""


def scenario(returns: str = '"found {{ args.s }}"', runs: int = 1, then: str = "") -> str:
    text = SCENARIO.replace("RETURNS", returns).replace("RUNS", str(runs))
    return text.replace("  - non_empty\n", then) if then else text


@dataclass
class Result:
    """What one command did."""

    code: int | None  # None: killed after its timeout
    stdout: str
    stderr: str
    max_rss_mib: float
    seconds: float
    cwd: Path

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass
class Probe:
    name: str
    klass: str  # what it attacks (issue 11's item)
    argv: list[str]
    cwd: Path
    expect: Callable[[Result], str | None] | None = None
    timeout_s: float = 60.0
    owner: str = "edge"
    env: dict[str, str] = field(default_factory=dict)
    fsize: int | None = None  # RLIMIT_FSIZE: files stop growing here (a full disk, EFBIG)
    # a probe that is more than one command: given a function that runs one command
    # (argv, cwd, timeout) and returns its Result, returns the Results and what is wrong
    custom: Callable[[Callable[..., Result]], tuple[list[Result], str | None]] | None = None


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, "utf-8")
    return path


def suite(folder: Path, targets: dict[str, dict[str, Any]], **extra: Any) -> None:
    write(folder / "scenarist.yaml", json.dumps({"targets": targets, **extra}, indent=1))


def openai(url: str, **more: Any) -> dict[str, Any]:
    return {"kind": "openai", "base_url": url, "model": "m", "timeout_ms": 30_000,
            "retry": {"max_attempts": 1}, **more}


# ------------------------------------------------------------------ expectations

def records(cwd: Path) -> list[dict[str, Any]]:
    runs = sorted((cwd / "runs").iterdir()) if (cwd / "runs").is_dir() else []
    if not runs:
        return []
    lines = (runs[-1] / "results.jsonl").read_text("utf-8").splitlines()
    return [json.loads(x) for x in lines]


def completed(attempts: int, *, kind: str | None = None, statuses: tuple[str, ...] = (),
              then: Callable[[Result, list[dict[str, Any]]], str | None] | None = None
              ) -> Callable[[Result], str | None]:
    """A run that ended normally: exit 0, 1 or 3, a summary, every attempt recorded (and
    each with the error kind or a status given)."""

    def check(r: Result) -> str | None:
        if r.code not in (0, 1, 3):
            return f"exit {r.code}, not a finished run"
        runs = sorted((r.cwd / "runs").iterdir()) if (r.cwd / "runs").is_dir() else []
        if not runs or not (runs[-1] / "summary.json").exists():
            return "aborted: no summary.json"
        try:
            recs = records(r.cwd)
        except ValueError as exc:
            return f"results.jsonl is not valid JSON lines ({exc})"
        if len(recs) != attempts:
            return f"{len(recs)} attempts recorded, {attempts} planned"
        for rec in recs:
            got = (rec.get("error") or {}).get("kind")
            if kind is not None and got != kind:
                return f"error kind {got!r}, expected {kind!r} ({rec.get('reason')})"
            if statuses and rec["status"] not in statuses:
                return f"status {rec['status']!r} ({rec.get('reason')})"
        return then(r, recs) if then else None

    return check


def refused(*needles: str, code: int = 2) -> Callable[[Result], str | None]:
    """The command stopped with exit ``code`` and said each of ``needles``."""

    def check(r: Result) -> str | None:
        if r.code != code:
            return f"exit {r.code}, expected {code}"
        missing = [n for n in needles if n not in r.output]
        return f"the output does not say {missing[0]!r}" if missing else None

    return check


def linted(*codes: str) -> Callable[[Result], str | None]:
    return refused(*(f"error {c}" for c in codes), code=1)


def nowhere(secret: str, *files: str) -> Callable[[Result], str | None]:
    """``secret`` is in neither the output nor the run folder's files."""

    def check(r: Result) -> str | None:
        if secret in r.output:
            return "the secret reached the terminal"
        for run in (r.cwd / "runs").glob("*"):
            for f in files:
                p = run / f
                if p.exists() and secret in p.read_text("utf-8", "replace"):
                    return f"the secret is written in {f}"
        return None

    return check


def all_of(*checks: Callable[[Result], str | None]) -> Callable[[Result], str | None]:
    def check(r: Result) -> str | None:
        for c in checks:
            problem = c(r)
            if problem:
                return problem
        return None
    return check


# ------------------------------------------------------------------ the probes

# hostile replies: kind → the error kind its attempt must end with (None: it passes)
REPLIES: dict[str, str | None] = {
    "usage-string": "malformed", "usage-field-string": "malformed",
    "usage-infinity": "malformed", "usage-nan": "malformed", "usage-negative": "malformed",
    "usage-huge": "malformed", "usage-float-huge": "malformed", "usage-bool": "malformed",
    "content-image": "malformed", "content-parts-numbers": "malformed",
    "content-number": "malformed", "content-object": "malformed",
    "tool-calls-number": "malformed", "tool-calls-strings": "malformed",
    "tool-calls-object": "malformed", "tool-call-function-string": "malformed",
    "tool-call-name-number": "malformed", "tool-call-args-number": "malformed",
    "tool-call-id-object": "malformed", "finish-reason-object": "malformed",
    "choices-numbers": "malformed", "choices-object": "malformed",
    "message-string": "malformed", "choices-empty": "malformed", "body-list": "malformed",
    "body-null": "malformed", "error-huge": "malformed", "error-number": "malformed",
    "surrogate-content": None, "surrogate-tool-name": None, "surrogate-elsewhere": None,
    "surrogate-pair-ok": None, "surrogate-args": None, "surrogate-bytes": "malformed",
    "not-utf8": "malformed", "deep-json": "malformed", "deep-json-900": "malformed",
    "deep-args": None, "deep-args-object": "malformed", "deep-text": None,
    "deep-object-text": None, "gzip-bomb": "malformed", "deflate-bomb": "malformed",
    "gzip-ok": None, "bad-gzip": "malformed", "truncated-gzip": "malformed",
    "unknown-encoding": "malformed", "double-gzip": "malformed", "huge-body": "malformed",
    "endless": "malformed", "huge-headers": "malformed", "length-mismatch": "connection",
    # issue 31: framings h11 refuses, bare LF, replies that leave bytes behind
    "chunk-0x": "malformed", "chunk-negative": "malformed", "chunk-no-crlf": "malformed",
    "chunk-lf-end": "malformed", "length-conflict": "malformed", "length-twice": "malformed",
    "length-not-digit": "malformed", "length-superscript": "malformed",
    "te-gzip-chunked": "malformed", "status-101": "malformed",
    "endless-trailer": "malformed", "endless-headers": "malformed", "bare-lf": None,
    "extra-bytes": None, "no-content-body": "malformed",
    "drip": "timeout", "drip-headers": "timeout", "hang": "timeout",
    "redirect-302-json": "status", "redirect-307": "status",
    "redirect-301-no-location": "status", "redirect-hostile-location": "status",
    "call-then-answer": None, "ok": None,
}
SLOW = ("drip", "drip-headers", "hang")

# the judge's replies: the attempt may be a pass, unsure or an error, never a fail
JUDGE_REPLIES = ("usage-string", "usage-negative", "usage-huge", "deep-json", "deep-text",
                 "deep-object-text", "content-image", "tool-calls-number", "gzip-bomb",
                 "drip", "redirect-302-json", "bad-gzip", "surrogate-content", "not-utf8",
                 "error-huge")


def probes(root: Path, server: str) -> list[Probe]:
    out: list[Probe] = []
    out += _replies(root, server)
    out += _judge(root, server)
    out += _yaml_files(root)
    out += _not_files(root)
    out += _regexes(root)
    out += _templates(root, server)
    out += _target_values(root)
    out += _cassettes(root)
    out += _run_level(root, server)
    return out


def _replies(root: Path, server: str) -> list[Probe]:
    out = []
    for kind, error in REPLIES.items():
        d = root / f"reply-{kind}"
        timeout = 2000 if kind in SLOW else 30_000
        suite(d, {"t": openai(f"{server}/{kind}/v1", timeout_ms=timeout)})
        write(d / "s.yaml", scenario())
        statuses = ("error",) if error else ("pass",)
        out.append(Probe(f"reply {kind}", "5-9 replies", ["run", "."], d,
                         completed(1, kind=error, statuses=statuses)))
    d = root / "reply-deep-object-text-json-check"
    suite(d, {"t": openai(f"{server}/deep-object-text/v1")})
    write(d / "s.yaml", scenario(then="  - json: true\n  - expect: \"json(answer) == null\"\n"))
    out.append(Probe("reply deep-object-text, checked with json and json()", "5-9 replies",
                     ["run", "."], d, completed(1, statuses=("fail",))))
    return out


def _judge(root: Path, server: str) -> list[Probe]:
    out = []
    for kind in JUDGE_REPLIES:
        d = root / f"judge-{kind}"
        suite(d, {"agent": openai(f"{server}/ok/v1"),
                  "judge": openai(f"{server}/{kind}/v1", timeout_ms=2000)},
              defaults={"target": "agent"}, judge={"target": "judge", "cache": False})
        write(d / "s.yaml", scenario(then="  - faithful\n"))
        out.append(Probe(f"judge {kind}", "5 judge replies", ["run", "."], d,
                         completed(1, statuses=("pass", "unsure", "error"))))
    return out


def _lint_probe(root: Path, name: str, klass: str, files: dict[str, str | bytes],
                expect: Callable[[Result], str | None], *, run_too: bool = True,
                owner: str = "edge") -> list[Probe]:
    d = root / name
    suite(d, {"t": openai("http://127.0.0.1:9/v1")})
    for fname, text in files.items():
        write(d / fname, text)
    out = [Probe(f"lint {name}", klass, ["lint", "."], d, expect, owner=owner)]
    if run_too:
        out.append(Probe(f"run {name}", klass, ["run", "."], d, refused(), owner=owner))
    return out


def _yaml_files(root: Path) -> list[Probe]:
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    out: list[Probe] = []
    for name, text, code in [
        ("billion-laughs", laughs, "Y109"),
        ("deep-nesting", "a: " + "[" * 100_000 + "]" * 100_000 + "\n", "Y110"),
        ("huge-file", "a: |\n" + ("  " + "x" * 1000 + "\n") * 20_000, "Y104"),
        ("long-string", "a: " + "x" * 2_000_000 + "\n", "Y111"),
        ("python-tag", "a: !!python/object/apply:os.system [ls]\n", "Y110"),
        ("only-null", "~\n", "Y108"),
        ("empty-document", "---\n", "Y107"),
        ("surrogate-escape", scenario().replace("when: hi", 'when: "\\ud800"'), "Y105"),
        ("binary", b"a: \x00\x01", "Y106"),
        ("latin-1", "a: caf\xe9\n".encode("latin-1"), "Y105"),
    ]:
        out += _lint_probe(root, f"yaml-{name}", "YAML bombs", {"s.yaml": text}, linted(code))
    return out


def _not_files(root: Path) -> list[Probe]:
    out: list[Probe] = []
    d = root / "files-in-a-folder"
    suite(d, {"t": openai("http://127.0.0.1:9/v1")})
    write(d / "ok.yaml", scenario())
    (d / "loop.yaml").symlink_to("loop.yaml")
    (d / "gone.yaml").symlink_to("missing.yaml")
    (d / "zero.yaml").symlink_to("/dev/zero")
    os.mkfifo(d / "fifo.yaml")
    out.append(Probe("lint symlink loop, dangling link, FIFO and /dev/zero in a folder",
                     "12 files", ["lint", "."], d,
                     refused("error Y112", "symbolic link that leads back to itself", code=1)))
    out.append(Probe("run symlink loop, dangling link, FIFO and /dev/zero in a folder",
                     "12 files", ["run", "."], d, refused("Y112")))
    g = root / "files-given"
    suite(g, {"t": openai("http://127.0.0.1:9/v1")})
    os.mkfifo(g / "fifo.yaml")
    (g / "zero.yaml").symlink_to("/dev/zero")
    (g / "loop.yaml").symlink_to("loop.yaml")
    write(g / "null.yaml", "~\n")
    # read_file reports these; lint then shows source lines with lint._lines and the run
    # with cli._read_sources, which read the path again without its checks
    for name, what in [("fifo.yaml", "FIFO"), ("zero.yaml", "device"),
                       ("loop.yaml", "symlink loop")]:
        out.append(Probe(f"lint {name} given", "12 files", ["lint", name], g,
                         refused("error Y112", what, code=1), timeout_s=20, owner="run"))
        out.append(Probe(f"run {name} given", "12 files", ["run", name], g,
                         refused(), timeout_s=20, owner="run"))
    out.append(Probe("run a folder whose only scenario is ~", "12 files", ["run", "null.yaml"],
                     g, refused("Y108")))
    s = root / "no-scenario-selected"
    suite(s, {"t": openai("http://127.0.0.1:9/v1")})
    write(s / "s.yaml", scenario())
    out.append(Probe("run that selects no scenario (--shard 2/2 of one)", "12 files",
                     ["run", ".", "--shard", "2/2"], s, refused(), owner="run"))
    return out


def _regexes(root: Path) -> list[Probe]:
    out: list[Probe] = []
    for name, pattern in [("huge", "a{1000000000}"), ("big", "a{10000000}"),
                          ("nested", "(a{1000}){1000}")]:
        out += _lint_probe(root, f"regex-matches-{name}", "10 regex bombs",
                           {"s.yaml": scenario(then=f"  - matches: '{pattern}'\n")},
                           linted("E204"))
        out += _lint_probe(root, f"regex-expect-{name}", "10 regex bombs",
                           {"s.yaml": scenario(then=f"  - expect: \"answer matches "
                                                    f"'{pattern}'\"\n")}, linted("E204"))
        d = root / f"regex-redact-{name}"
        suite(d, {"t": openai("http://127.0.0.1:9/v1")}, redact={"patterns": {"x": pattern}})
        write(d / "s.yaml", scenario())
        out.append(Probe(f"lint regex-redact-{name}", "10 regex bombs", ["lint", "."], d,
                         linted("E204")))
    return out


def _templates(root: Path, server: str) -> list[Probe]:
    out: list[Probe] = []
    at_lint = {
        "repeat": "{{ 'A' * 3000000000 }}",
        "nested-range": "{% for i in range(100000) %}{% for j in range(100000) %}x"
                        "{% endfor %}{% endfor %}",
        "center": "{{ 'x' | center(3000000000) }}",
        "power": "{{ 2 ** 1000000000 }}",
        "printf": "{{ '%3000000000s' % 'a' }}",
    }
    for name, t in at_lint.items():
        out += _lint_probe(root, f"template-{name}", "11 template bombs",
                           {"s.yaml": scenario(json.dumps(t))}, linted("E208"))
    at_run = {
        "args-repeat": "{{ args.s * 3000000000 }}",
        "args-range": "{% for i in range(args.s|length * 10000) %}{% for j in range(10000) %}"
                      "{{ args.s }}{% endfor %}{% endfor %}",
        "args-loops": "{% for a in args.s * 100000 %}{% for b in args.s * 100000 %}"
                      "{% endfor %}{% endfor %}",
        "macro-bomb": "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}"
                      "{% endmacro %}{{ f(40 + args.s|length) }}",
        "doubling": "{% set ns = namespace(t=args.s) %}{% for i in range(64) %}"
                    "{% set ns.t = ns.t ~ ns.t %}{% endfor %}{{ ns.t }}",
        "ljust": "{{ args.s.ljust(3000000000) }}",
        "replace": "{{ (args.s * 1000000)|replace('x', args.s * 1000000) }}",
        "to-bytes": "{{ (1).to_bytes(3000000000, 'big') }}",
    }

    def tool_failed(r: Result, recs: list[dict[str, Any]]) -> str | None:
        out = (recs[0].get("calls") or [{}])[0].get("output") or ""
        return None if out.startswith("error: the tool failed: ") else \
            f"the tool answered {out[:80]!r}"

    for name, t in at_run.items():
        d = root / f"template-run-{name}"
        suite(d, {"t": openai(f"{server}/call-then-answer/v1")})
        write(d / "s.yaml", scenario(json.dumps(t)))
        out.append(Probe(f"run template-{name}", "11 template bombs", ["run", "."], d,
                         completed(1, statuses=("pass",), then=tool_failed)))
    d = root / "template-system-prompt"
    prompt = ("{% for i in range(10000) %}{% for j in range(system|length) %}{% endfor %}"
              "{% endfor %}{{ now }}")
    suite(d, {"t": openai(f"{server}/ok/v1", system_prompt=prompt)})
    write(d / "s.yaml", scenario().replace("given:\n", "given:\n  system: " + "x" * 100 + "\n"))
    out.append(Probe("run template-system-prompt", "11 template bombs", ["run", "."], d,
                     completed(1, kind="template")))
    return out


def _target_values(root: Path) -> list[Probe]:
    out: list[Probe] = []
    for name, extra in [("port-70000", {"base_url": "http://127.0.0.1:70000/v1"}),
                        ("ipv6-unbalanced", {"base_url": "http://[::1/v1"}),
                        ("header-key", {"headers": {"X-Équipe": "a"}}),
                        ("header-value", {"headers": {"X-Team": "clínica"}}),
                        ("header-crlf", {"headers": {"X-Team": "a\r\nX-Evil: 1"}})]:
        d = root / f"target-{name}"
        suite(d, {"t": openai("http://127.0.0.1:9/v1", **extra)})
        write(d / "s.yaml", scenario())
        out.append(Probe(f"lint target-{name}", "13 values", ["lint", "."], d, linted("S105")))
        out.append(Probe(f"run target-{name}", "13 values", ["run", "."], d, refused("S105")))
    d = root / "target-key-not-ascii"
    suite(d, {"t": openai("http://127.0.0.1:9/v1", api_key_env="HOSTILE_KEY")})
    write(d / "s.yaml", scenario())
    out.append(Probe("run target-key-not-ascii", "13 values", ["run", "."], d,
                     refused("is not printable ASCII"), env={"HOSTILE_KEY": "sk-clé"}))
    return out


HEADER = json.dumps({"schema_version": 1, "kind": "scenarist-cassette",
                     "settings": {"model": "m", "temperature": None, "params": {},
                                  "system_prompt": "{{ now }}"}})


def _cassettes(root: Path) -> list[Probe]:
    out: list[Probe] = []
    cases: dict[str, str | bytes | None] = {
        "not-an-object": HEADER + "\n[1, 2]\n",
        "missing-key": HEADER + '\n{"request": {}}\n',
        "wrong-types": HEADER + '\n{"key": 5, "response": "text"}\n',
        "error-wrong": HEADER + '\n{"key": "k", "error": {"kind": 5}}\n',
        "latin-1": (HEADER + '\n{"key": "caf\xe9", "response": {}}\n').encode("latin-1"),
        "deep": HEADER + '\n{"key": "k", "response": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
        "header-garbage": "not json at all\n",
        "header-settings": HEADER.replace('"params": {}', '"params": 5') + "\n",
        "empty": "",
        "dev-zero": None,  # the cassette is /dev/zero
        "fifo": None,
    }
    for name, text in cases.items():
        d = root / f"cassette-{name}"
        cassette = "c.jsonl"
        if name == "dev-zero":
            cassette = "/dev/zero"
        elif name == "fifo":
            d.mkdir(parents=True, exist_ok=True)
            os.mkfifo(d / "c.jsonl")
        elif text is not None:
            write(d / "c.jsonl", text)
        suite(d, {"r": {"kind": "replay", "cassette": cassette}})
        write(d / "s.yaml", scenario())
        out.append(Probe(f"run cassette-{name}", "15 cassettes", ["run", "."], d,
                         refused("cannot be used"), timeout_s=30))
        out.append(Probe(f"plan cassette-{name}", "15 cassettes", ["plan", "."], d,
                         None, timeout_s=30))
    return out


def _run_level(root: Path, server: str) -> list[Probe]:
    """The run stage's classes (issue 11 items 1-4, 12's exit code, 14, 16)."""
    out: list[Probe] = []
    d = root / "run-redact-secret-args"
    suite(d, {"t": openai(f"{server}/secret-args/v1")})
    write(d / "s.yaml", scenario())
    out.append(Probe("run redaction of a secret in tool arguments", "1 redaction",
                     ["run", "."], d, all_of(completed(1), nowhere(SECRET, "results.jsonl")),
                     owner="run"))
    d = root / "run-redact-user-pattern"
    suite(d, {"t": openai(f"{server}/number-args/v1")},
          redact={"patterns": {"eight": "\\b\\d{8}\\b"}})
    write(d / "s.yaml", scenario())
    out.append(Probe("run redaction of a user pattern meeting a number", "1 redaction",
                     ["run", "."], d, all_of(completed(1), nowhere("12345678",
                                                                   "results.jsonl")),
                     owner="run"))
    d = root / "run-short-key"
    suite(d, {"t": openai(f"{server}/echo-key/v1", api_key_env="HOSTILE_KEY")})
    write(d / "s.yaml", scenario())
    out.append(Probe("run a key shorter than the redaction minimum", "4 secrets",
                     ["run", "."], d, all_of(completed(1), nowhere(SHORT_KEY, "results.jsonl",
                                                                   "report.html")),
                     env={"HOSTILE_KEY": SHORT_KEY}, owner="run"))
    for kind in ("echo-key-status", "echo-key-500"):
        d = root / f"run-{kind}"
        targets = {"t": openai(f"{server}/{kind}/v1", api_key_env="HOSTILE_KEY")}
        suite(d, targets)
        write(d / "s.yaml", scenario(runs=6))
        out.append(Probe(f"run a key echoed by the endpoint ({kind})", "4 secrets",
                         ["run", ".", "--no-early-stop"], d,
                         nowhere(LONG_KEY, "results.jsonl", "run.json", "report.html"),
                         env={"HOSTILE_KEY": LONG_KEY}, owner="run"))
    out.append(_lock_probe(root, server))
    out.append(_record_probe(root))
    out += _path_probes(root, server)
    out += _agent_probes(root)
    return out


def _lock_probe(root: Path, server: str) -> Probe:
    d = root / "run-two-resumes"
    suite(d, {"t": openai(f"{server}/slow-ok/v1")}, defaults={"concurrency": 2})
    write(d / "s.yaml", scenario(runs=20).replace("min_pass: 1", "min_pass: 20"))

    def custom(run: Callable[..., Result]) -> tuple[list[Result], str | None]:
        import subprocess

        first = run(["run", ".", "--max-calls", "2", "--no-early-stop"], d, 60)
        (run_dir,) = (d / "runs").iterdir()
        cmd = [*cli(), "run", "--resume", str(run_dir)]
        procs = [subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env={**os.environ, "NO_COLOR": "1"})
                 for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
        recs = records(d)
        keys = [(r["scenario"], r["target"], r["run"]) for r in recs]
        results = [first] + [Result(p.returncode, o, e, 0.0, 0.0, d)
                             for p, (o, e) in zip(procs, outs, strict=True)]
        bad = [r for r in results[1:] if r.code not in (0, 1, 3)]
        refused_writer = "is being written by another scenarist process"
        if any(r.code != 2 or refused_writer not in r.output for r in bad):
            return results, f"a resume ended with exit {bad[0].code}: {bad[0].stderr[-200:]}"
        if len(keys) != len(set(keys)):
            return results, f"{len(keys)} attempts recorded for a 20-attempt plan " \
                            f"({len(keys) - len(set(keys))} twice): no lock on the run folder"
        return results, None

    return Probe("run --resume twice at once on one folder", "2 locks", [], d, custom=custom,
                 owner="run", timeout_s=180)


def _record_probe(root: Path) -> Probe:
    d = root / "run-record-endpoint-down"
    suite(d, {"t": openai("http://127.0.0.1:9/v1")})
    write(d / "s.yaml", scenario())
    keep = HEADER + "\n" + json.dumps({"key": "k", "response": {"choices": []}}) + "\n"
    write(d / "c.jsonl", keep)

    def check(r: Result) -> str | None:
        now = (d / "c.jsonl").read_text("utf-8") if (d / "c.jsonl").exists() else ""
        return None if '"key": "k"' in now else "--record emptied the cassette it replaces"

    return Probe("run --record over a cassette with the endpoint down", "3 --record",
                 ["run", ".", "--record", "c.jsonl"], d, check, owner="run")


def _path_probes(root: Path, server: str) -> list[Probe]:
    out = []
    d = root / "run-paths"
    suite(d, {"t": openai(f"{server}/ok/v1")})
    write(d / "s.yaml", scenario())
    write(d / "a-file", "x")
    (d / "a-folder").mkdir(parents=True, exist_ok=True)
    # a full disk without touching the real one: RLIMIT_FSIZE makes every write past
    # 64 KiB fail (EFBIG, "File too large"), as ENOSPC would
    full = 64 * 1024
    for name, argv, fsize in [
            ("--out at a file", ["run", ".", "--out", "a-file"], None),
            ("--record at a folder", ["run", ".", "--record", "a-folder"], None),
            ("a disk that fills up during the run",
             ["run", ".", "--out", "full", "--runs", "200", "--no-early-stop"], full)]:
        out.append(Probe(f"paths: {name}", "14 paths", argv, d, _one_line_exit_2,
                         owner="run", fsize=fsize))
    for name, target in [("report -o into a missing folder", "missing/dir/report.html"),
                         ("report -o at a folder", "a-folder")]:
        out.append(Probe(f"paths: {name}", "14 paths", [], d, owner="run",
                         custom=_report_to(d, target)))
    out.append(Probe("paths: report on a disk that fills up", "14 paths", [], d, owner="run",
                     custom=_report_to(d, "big/report.html", fsize=16 * 1024)))
    return out


def _one_line_exit_2(r: Result) -> str | None:
    if r.code != 2:
        return f"exit {r.code}, expected 2"
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    return None if len(lines) == 1 else f"{len(lines)} lines on stderr, expected one message"


def _report_to(d: Path, target: str, fsize: int | None = None
               ) -> Callable[[Callable[..., Result]], tuple[list[Result], str | None]]:
    def custom(run: Callable[..., Result]) -> tuple[list[Result], str | None]:
        made = run(["run", ".", "--out", "made", "--runs", "200", "--no-early-stop"], d, 60)
        run_dir = sorted((d / "made").iterdir())[-1]
        (d / "big").mkdir(exist_ok=True)
        r = run(["report", str(run_dir), "-o", target], d, 60, fsize=fsize)
        return [made, r], _one_line_exit_2(r)
    return custom


def _agent_probes(root: Path) -> list[Probe]:
    out = []
    for name, body, timeout in [
        ("sys.exit(3)", "    raise SystemExit(3)\n", None),
        ("KeyboardInterrupt", "    raise KeyboardInterrupt\n", None),
        ("a sync agent that hangs past attempt_timeout_ms",
         "    import time\n    time.sleep(3600)\n", 1000),
    ]:
        d = root / f"agent-{len(out)}"
        target: dict[str, Any] = {"kind": "python", "entry": "agent:run"}
        if timeout:
            target["attempt_timeout_ms"] = timeout
        suite(d, {"a": target})
        write(d / "agent.py", "def run(env):\n" + body)
        write(d / "s.yaml", scenario())
        out.append(Probe(f"python agent: {name}", "16 agents", ["run", "."], d,
                         completed(1, kind="agent" if not timeout else "timeout"),
                         timeout_s=30, owner="run"))
    return out


def cli() -> list[str]:
    """The real ``scenarist`` command of this Python."""
    import sys

    exe = Path(sys.executable).parent / "scenarist"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dsl"]
