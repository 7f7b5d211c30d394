"""``kind: command`` — any program: one process per attempt, one JSON line per turn.

The program starts in the suite's folder with only the environment it is given
(:func:`environment`): the variables of :data:`PASSED` and ``LC_*`` from the run's
environment, those ``pass_env`` names, the target's ``env``, and ``SCENARIST_MCP_URL`` (the
attempt's fake tools over MCP), ``SCENARIST_SESSION``, ``SCENARIST_AT``, ``SCENARIST_SEED``,
``SCENARIST_SCENARIO`` and ``SCENARIST_SYSTEM`` (``given.system``). With ``inherit_env:
true`` it gets the run's whole environment instead — less the suite's secrets (every
target's ``api_key_env``, the judge's, ``redact.env``) unless ``env`` or ``pass_env`` gives
them. Each turn it reads one line on standard input — ``{"turn", "message", "system",
"confirmed", "cancelled", "messages"}`` — and answers with one line on standard output —
``{"answer": TEXT, "pending": [{name, args}]}`` (blank lines are skipped). A program that
exits before it answers, prints a line that is not such JSON, or takes longer than
``timeout_ms`` to answer a turn ends its attempt as an error that says so. Its standard
error is kept with the attempt (the last MAX_STDERR bytes). When the attempt ends its
standard input is closed, and every process it started is ended — its process group, and
those that left it (dsl/clients/proctree.py) — with SIGTERM, then SIGKILL after GRACE_S.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Collection, Mapping

from ..errors import STDERR_QUOTE, EndpointError
from ..model import Scenario, Target
from ..settings import CommandSettings
from ..targets.base import AgentContext, Unreadable, read_reply_json, snippet
from . import proctree
from .exchanges import recorder_for
from .ownloop import Answered, OwnLoopAgent, Session, TurnInput, pending_calls
from .toolserver import Endpoint

MAX_STDERR = 32 * 1024  # bytes of a program's standard error kept (its end)
MAX_LINE = 8 * 2**20  # the longest line a program may answer with
GRACE_S = 1.0  # after stdin closes, before SIGTERM; and after SIGTERM, before SIGKILL


class CommandSession:
    """One attempt's process."""

    def __init__(self, settings: CommandSettings, process: asyncio.subprocess.Process,
                 session: str = "") -> None:
        self.settings = settings
        self.process = process
        self.session = session  # SCENARIST_SESSION: what marks its processes
        self.name = settings.command[0]
        self._stderr = bytearray()
        self._dropped = 0
        assert process.stderr is not None
        self._reader = asyncio.ensure_future(self._drain(process.stderr))

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self._stderr += chunk
            if len(self._stderr) > MAX_STDERR:
                cut = len(self._stderr) - MAX_STDERR
                self._dropped += cut
                del self._stderr[:cut]

    def stderr(self) -> str:
        text = self._stderr.decode("utf-8", errors="replace")
        return f"[… {self._dropped:,} bytes before]\n{text}" if self._dropped else text

    async def ask(self, turn: TurnInput, tools: Endpoint) -> Answered:
        p = self.process
        assert p.stdin is not None
        assert p.stdout is not None
        request = {"turn": turn.turn, "message": turn.message, "system": turn.system,
                   "confirmed": turn.confirmed, "cancelled": turn.cancelled,
                   "messages": turn.messages}
        line = json.dumps(request, ensure_ascii=False) + "\n"
        limit = self.settings.timeout_ms / 1000
        try:
            p.stdin.write(line.encode("utf-8", "surrogatepass"))
            async with asyncio.timeout(limit):
                await p.stdin.drain()
                while True:
                    raw = await p.stdout.readline()
                    if not raw:
                        raise await self._exited(turn.turn)
                    if raw.strip():
                        break
        except (BrokenPipeError, ConnectionResetError):
            raise await self._exited(turn.turn) from None
        except TimeoutError:
            raise EndpointError("timeout", f"the program {self.name} did not answer turn "
                                           f"{turn.turn} within {limit:g} s (timeout_ms)"
                                           f"{self._tail()}") from None
        except ValueError:  # a line longer than MAX_LINE
            raise EndpointError("agent", f"the program {self.name} printed a line longer "
                                         f"than {MAX_LINE:,} bytes") from None
        text = raw.decode("utf-8", errors="replace")
        try:
            data = read_reply_json(text)
        except Unreadable as exc:
            raise EndpointError("agent", f"the program {self.name} printed a line that "
                                         f"{exc}; each answer is one line of JSON: "
                                         '{"answer": "...", "pending": [...]}') from None
        if not isinstance(data, dict) or not isinstance(data.get("answer"), str):
            raise EndpointError("agent", f"the program {self.name} printed "
                                         f"{snippet(text)}: each answer is one line of "
                                         'JSON with the answer\'s text: {"answer": "...", '
                                         '"pending": [...]}')
        pending = pending_calls(data.get("pending"), f"the 'pending' of {self.name}'s answer")
        return Answered(data["answer"], pending, request, data)

    async def _exited(self, turn: int) -> EndpointError:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), GRACE_S)
        code = self.process.returncode
        how = f"with status {code}" if code is not None and code >= 0 else \
            f"on signal {-code}" if code is not None else "its output"
        verb = "exited" if code is not None else "closed"
        return EndpointError("agent", f"the program {self.name} {verb} {how} before it "
                                      f"answered turn {turn}{self._tail()}")

    def _tail(self) -> str:
        text = " ".join(self._stderr.decode("utf-8", errors="replace").split())
        return f"{STDERR_QUOTE}{text[-300:]!r}" if text else ""

    async def end(self) -> str:
        p = self.process
        if p.stdin is not None:
            with contextlib.suppress(Exception):
                p.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(p.wait(), GRACE_S)
        # what it started: taken before the program ends (its children then lose their
        # parent), and again after (what was started meanwhile)
        started = self._started()
        for sig in (proctree.TERM, proctree.KILL):
            proctree.signal_group(p.pid, sig)
            started = proctree.left(started) | self._started()
            proctree.signal_all(started, sig)
            if sig == proctree.TERM:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(GRACE_S):
                        await p.wait()
                        await self._ended(started)
        await p.wait()
        await self._drained()
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(self._reader, GRACE_S)
        return self.stderr()

    def _started(self) -> set[int]:
        """Every living process the program started (dsl/clients/proctree.py)."""
        out = proctree.descendants(self.process.pid)
        if self.session:
            out |= proctree.marked("SCENARIST_SESSION", self.session)
        return out - {os.getpid()}

    async def _ended(self, pids: set[int]) -> None:
        """Return once none of ``pids`` is alive (the caller bounds the wait)."""
        while proctree.left(pids):
            await asyncio.sleep(0.02)

    async def _drained(self) -> None:
        """Read what is left of the program's output, to its end: its pipe then closes
        with the event loop still running (a pipe left full — a program that flooded its
        output — would be closed when the loop is gone, with a traceback)."""
        out = self.process.stdout
        if out is None:
            return
        with contextlib.suppress(TimeoutError, ValueError, ConnectionError):
            async with asyncio.timeout(GRACE_S):
                while await out.read(65536):
                    pass


# What a program gets of the run's environment without ``inherit_env`` (with every
# ``LC_*``): where programs are found, the home folder, the language and time zone, where
# temporary files go — never a secret.
PASSED = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR")


def environment(settings: CommandSettings, first: TurnInput, secrets: Collection[str],
                environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of one attempt's program: see the module's docstring. ``secrets``:
    the names of the suite's secret variables (never inherited)."""
    run = os.environ if environ is None else environ
    given = set(settings.pass_env) | set(settings.env)
    if settings.inherit_env:
        env = {k: v for k, v in run.items() if k not in secrets or k in given}
    else:
        env = {k: v for k, v in run.items() if k in PASSED or k.startswith("LC_")}
    env.update((k, run[k]) for k in settings.pass_env if k in run)
    env.update(settings.env)
    env.update({"SCENARIST_MCP_URL": first.mcp_url, "SCENARIST_SESSION": first.session,
                "SCENARIST_AT": first.at, "SCENARIST_SEED": str(first.seed),
                "SCENARIST_SCENARIO": first.scenario, "SCENARIST_SYSTEM": first.system})
    return env


async def start(settings: CommandSettings, first: TurnInput,
                secrets: Collection[str] = ()) -> CommandSession:
    env = environment(settings, first, secrets)
    try:
        process = await asyncio.create_subprocess_exec(
            *settings.command, cwd=settings.cwd, env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True, limit=MAX_LINE)
    except OSError as exc:
        raise EndpointError("agent", f"cannot start the program {settings.command[0]} (in "
                                     f"{settings.cwd}): {exc.strerror or exc}") from None
    return CommandSession(settings, process, first.session)


def open_command(target: Target, context: AgentContext) -> OwnLoopAgent:
    settings = target.settings(CommandSettings)

    async def session(scenario: Scenario, run: int, first: TurnInput) -> Session:
        return await start(settings, first, context.secret_env)

    return OwnLoopAgent(target, context, session, recorder=recorder_for(target, context))


