"""Init: a new suite in a folder — a commented ``scenarist.yaml`` and one commented example
scenario that lints and runs, for someone who has never written one.

The example runs against the target the person names (any OpenAI-compatible endpoint:
``--base-url`` and ``--model``), or, when they name none, against ``example``: a replay of
a tiny cassette shipped in the package (``dsl/assets/init/example.jsonl``), the recorded
answers of Scenarist's example pharmacy agent, so that the first run works offline. The
cassette also holds the answers to the two scenarios docs/guide.md has the person write
next; it is rebuilt by ``python -m dsl._buildtools.initcassette``.

Init never overwrites a file: when one of the files it would write exists, it writes
nothing and says which (:class:`InitRefused`). The one file it may add to is the suite's
``.gitignore``: ``runs/`` (where ``scenarist run`` writes its run folders, beside
``scenarist.yaml``) is appended when it is not listed, or the file is made.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import NotReady, without_userinfo

ASSETS = Path(__file__).parent / "assets" / "init"
SUITE_TEMPLATE = ASSETS / "scenarist.yaml"
EXAMPLE = ASSETS / "refill_no_refills_left.yaml"
CASSETTE = ASSETS / "example.jsonl"
CASSETTE_PATH = "cassettes/example.jsonl"  # where the copy goes, in the new suite

# The system prompt of the example agent: the openai target init writes uses it, and the
# bundled cassette was recorded with it (a replay target takes it from the cassette).
SYSTEM_PROMPT = """\
You are the assistant of Farmacia Central, a pharmacy.
Answer briefly, in the language the person writes in.
Look prescriptions up with the tools before you answer; never promise a refill that the
prescription does not allow.
{% if system %}{{ system }}
{% endif %}Current date and time: {{ now }}.
"""

REPLAY_TARGET = f"""\
  # `example` answers from a recording ({CASSETTE_PATH}) of Scenarist's example agent,
  # so this folder works offline, the same way every time. It can only answer what it was
  # asked when it was recorded: change a scenario's `when` or `given` and it says so.
  example:
    kind: replay
    cassette: {CASSETTE_PATH}
  # Your own agent: any OpenAI-compatible endpoint (llama.cpp, vLLM, Ollama, OpenAI).
  # Remove the # in front of these lines, fill them in, and run: scenarist run --target mine
  # mine:
  #   kind: openai
  #   base_url: http://127.0.0.1:8080/v1
  #   model: qwen2.5-0.5b-instruct
  #   api_key_env: OPENAI_API_KEY     # the NAME of an environment variable, never the key"""

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The target a person names for init: an OpenAI-compatible endpoint."""

    base_url: str
    model: str
    api_key_env: str | None = None


@dataclass(frozen=True, slots=True)
class Initialized:
    """What init wrote, and what to run next."""

    folder: Path
    files: tuple[Path, ...]  # relative to the folder, in the order written
    next_commands: tuple[tuple[str, str], ...]  # (command, what it does)


class InitRefused(NotReady):
    """A file init would write exists already: nothing was written."""


def _yaml_text(value: str) -> str:
    """A value for a YAML line, quoted (JSON's double quotes are YAML's)."""
    return json.dumps(value, ensure_ascii=False)


def suite_text(endpoint: Endpoint | None) -> str:
    """The commented scenarist.yaml for a new suite."""
    if endpoint is None:
        targets, default = REPLAY_TARGET, "example"
    else:
        prompt = "".join(f"      {line}\n" for line in SYSTEM_PROMPT.splitlines()).rstrip("\n")
        key = (f"\n    api_key_env: {endpoint.api_key_env}   # the NAME of an environment "
               "variable, never the key" if endpoint.api_key_env else "")
        targets = (f"  # The agent under test: an OpenAI-compatible endpoint. Scenarist runs the "
                   "agent loop:\n"
                   "  # this system prompt, the person's message, the fake tools, until it "
                   "answers.\n"
                   "  agent:\n"
                   "    kind: openai\n"
                   f"    base_url: {_yaml_text(endpoint.base_url)}\n"
                   f"    model: {_yaml_text(endpoint.model)}{key}\n"
                   "    timeout_ms: 120000       # the most one model call may take, in ms\n"
                   "    system_prompt: |\n"
                   f"{prompt}")
        default = "agent"
    text = SUITE_TEMPLATE.read_text("utf-8")
    return text.replace("@targets@", targets).replace("@default@", default.ljust(7))


def init_suite(folder: Path, endpoint: Endpoint | None = None) -> Initialized:
    """Write a new suite into ``folder`` (created when missing). Raises InitRefused, and
    writes nothing, when any file it would write exists."""
    files: list[tuple[Path, bytes]] = [
        (Path("scenarist.yaml"), suite_text(endpoint).encode("utf-8")),
        (Path(EXAMPLE.name), EXAMPLE.read_bytes()),
    ]
    if endpoint is None:
        files.append((Path(CASSETTE_PATH), CASSETTE.read_bytes()))
    if folder.exists() and not folder.is_dir():
        raise InitRefused(f"{folder} is a file, not a folder; give the folder for the new "
                          "suite (it is created when missing)")
    # Every path is checked before anything is written: a folder init would make (the
    # suite's, cassettes/) that is a file or a link to nothing is named, and nothing written.
    for rel, _ in files:
        for at in [*reversed((folder / rel).parents), folder / rel][:-1]:
            problem = _not_a_folder(at)
            if problem is not None:
                raise InitRefused(f"{at} {problem}, where init would make the folder for "
                                  f"{folder / rel}: nothing was written. Move it away, or "
                                  "choose another folder (scenarist init NEW_DIR)")
    there = [rel for rel, _ in files if (folder / rel).exists() or (folder / rel).is_symlink()]
    if there:
        names = ", ".join(str(folder / rel) for rel in there)
        raise InitRefused(f"{names} already exist{'s' if len(there) == 1 else ''}, and init "
                          "never overwrites a file: nothing was written. Choose another "
                          "folder (scenarist init NEW_DIR), or move "
                          f"{'it' if len(there) == 1 else 'them'} away first")
    made: list[Path] = []  # what this call created, undone if a later write fails
    try:
        for rel, data in files:
            path = folder / rel
            for parent in reversed(path.parents):
                if not parent.exists():
                    parent.mkdir()
                    made.append(parent)
            with path.open("xb") as f:  # "x": never replaces a file that appeared meanwhile
                made.append(path)
                f.write(data)
    except OSError:
        for path in reversed(made):
            with contextlib.suppress(OSError):
                if path.is_dir():
                    path.rmdir()
                else:
                    path.unlink()
        raise
    written = [rel for rel, _ in files]
    if _ignore_runs(folder / GITIGNORE):
        written.append(Path(GITIGNORE))
    shown = "" if folder == Path(".") else f" {folder}"
    return Initialized(folder, tuple(written), (
        (f"scenarist lint{shown}", "check the files: every mistake, with its line"),
        (f"scenarist run{shown}", "try the example scenario 5 times and write a report"),
        ("scenarist checks", "list the checks a scenario can use"),
    ))


GITIGNORE = ".gitignore"
IGNORED_RUNS = "runs/"  # the run folders (dsl.pipeline.RUNS), kept out of git


def _ignore_runs(path: Path) -> bool:
    """``runs/`` listed in the suite's .gitignore: the file made, or the line appended when
    the file lists no ``runs`` of its own. Whether anything was written."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        return False  # not a plain file: left as it is
    if path.exists():
        text = path.read_text("utf-8", errors="replace")
        if any(line.strip() in ("runs", "runs/", "/runs", "/runs/")
               for line in text.splitlines()):
            return False
        with path.open("a", encoding="utf-8") as f:
            f.write(("" if not text or text.endswith("\n") else "\n")
                    + "# scenarist's run folders\n" + IGNORED_RUNS + "\n")
        return True
    with path.open("x", encoding="utf-8") as f:
        f.write("# scenarist's run folders (results, reports): made again by scenarist run\n"
                + IGNORED_RUNS + "\n")
    return True


def _not_a_folder(path: Path) -> str | None:
    """Why init cannot make (or use) the folder ``path``, in words; None when it can."""
    if path.is_symlink() and not path.exists():
        return f"is a link to {os.readlink(path)}, which does not exist"
    if path.exists() and not path.is_dir():
        return "is a file"
    return None


# What each file init writes is for, as the command says it.
ABOUT = {
    "scenarist.yaml": "the suite: targets, defaults and the fake tools",
    EXAMPLE.name: "an example scenario (read its comments)",
    CASSETTE_PATH: "the recorded answers the example target replays",
    GITIGNORE: "keeps runs/ (where scenarist run writes) out of git",
}


def endpoint_of(base_url: str | None, model: str | None,
                api_key_env: str | None) -> Endpoint | None:
    """The endpoint named on the command line, or None; ValueError (in words) when what
    was named cannot be used."""
    if base_url is None and model is None and api_key_env is None:
        return None
    if base_url is None or model is None:
        raise ValueError("name the target with both --base-url and --model (for example "
                         "--base-url http://127.0.0.1:8080/v1 --model qwen2.5-0.5b-instruct)")
    if not re.match(r"^https?://", base_url):
        raise ValueError(f"--base-url {base_url}: start it with http:// or https://, e.g. "
                         "http://127.0.0.1:8080/v1")
    if without_userinfo(base_url) != base_url:
        raise ValueError(f"--base-url {without_userinfo(base_url)}: the URL holds "
                         "credentials (user:password@ before the host), which Scenarist never "
                         "writes into a file; remove them, put the key in an environment "
                         "variable and name it with --api-key-env NAME")
    if api_key_env is not None and not NAME.match(api_key_env):
        raise ValueError(f"--api-key-env {api_key_env}: give the NAME of an environment "
                         "variable (letters, digits and _), such as OPENAI_API_KEY — never "
                         "the key itself")
    return Endpoint(base_url, model, api_key_env)
