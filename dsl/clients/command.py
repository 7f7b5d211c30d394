"""``kind: command`` — any program: one process per attempt, one JSON line per turn.

The program starts in the suite's folder with the environment of the run, the target's
``env``, and ``SCENARIST_MCP_URL`` (the attempt's fake tools over MCP),
``SCENARIST_SESSION``, ``SCENARIST_AT``, ``SCENARIST_SEED`` and ``SCENARIST_SCENARIO``.
Each turn it reads one line on standard input — ``{"turn", "message", "confirmed",
"cancelled", "messages"}`` — and answers with one line on standard output — ``{"answer":
TEXT, "pending": [{name, args}]}`` (blank lines are skipped). A program that exits before
it answers, prints a line that is not such JSON, or takes longer than ``timeout_ms`` to
answer a turn ends its attempt as an error that says so. Its standard error is kept with
the attempt (the last MAX_STDERR bytes). When the attempt ends its standard input is
closed, and its whole process group is ended (SIGTERM, then SIGKILL after GRACE_S).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal

from ..errors import EndpointError
from ..model import Scenario, Target
from ..settings import CommandSettings
from ..targets.base import AgentContext, Unreadable, read_reply_json, snippet
from .exchanges import recorder_for
from .ownloop import Answered, OwnLoopAgent, Session, TurnInput, pending_calls
from .toolserver import Endpoint

MAX_STDERR = 32 * 1024  # bytes of a program's standard error kept (its end)
MAX_LINE = 8 * 2**20  # the longest line a program may answer with
GRACE_S = 1.0  # after stdin closes, before SIGTERM; and after SIGTERM, before SIGKILL


class CommandSession:
    """One attempt's process."""

    def __init__(self, settings: CommandSettings, process: asyncio.subprocess.Process
                 ) -> None:
        self.settings = settings
        self.process = process
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
        request = {"turn": turn.turn, "message": turn.message, "confirmed": turn.confirmed,
                   "cancelled": turn.cancelled, "messages": turn.messages}
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
        return f"; its standard error ends: {text[-300:]!r}" if text else ""

    async def end(self) -> str:
        p = self.process
        if p.stdin is not None:
            with contextlib.suppress(Exception):
                p.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(p.wait(), GRACE_S)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, sig)  # the whole group: what the program started too
            if sig == signal.SIGTERM:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(p.wait(), GRACE_S)
                    await asyncio.sleep(0)
        await p.wait()
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(self._reader, GRACE_S)
        return self.stderr()


async def start(settings: CommandSettings, first: TurnInput) -> CommandSession:
    env = {**os.environ, **settings.env,
           "SCENARIST_MCP_URL": first.mcp_url, "SCENARIST_SESSION": first.session,
           "SCENARIST_AT": first.at, "SCENARIST_SEED": str(first.seed),
           "SCENARIST_SCENARIO": first.scenario}
    try:
        process = await asyncio.create_subprocess_exec(
            *settings.command, cwd=settings.cwd, env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True, limit=MAX_LINE)
    except OSError as exc:
        raise EndpointError("agent", f"cannot start the program {settings.command[0]} (in "
                                     f"{settings.cwd}): {exc.strerror or exc}") from None
    return CommandSession(settings, process)


def open_command(target: Target, context: AgentContext) -> OwnLoopAgent:
    settings = target.settings(CommandSettings)

    async def session(scenario: Scenario, run: int, first: TurnInput) -> Session:
        return await start(settings, first)

    return OwnLoopAgent(target, context, session, recorder=recorder_for(target, context))


