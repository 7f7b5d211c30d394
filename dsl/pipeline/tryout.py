"""``scenarist try SCENARIO``: chat with the agent inside one scenario's world.

The scenario is compiled as for a run — its moment, its fake tools, its system prompt, its
``given.history`` — and played as a conversation whose turns the person at the terminal
writes (:data:`dsl.execution.conversation.PERSON`), against one target through the same agent the
run uses (the agent loop over a model, or your python agent). Each tool call is shown
with its arguments and the fake tool's result; a call held for confirmation asks
``confirm? [y/N]``. When the person ends (Ctrl-D or ``/quit``), the scenario's own checks
(its top-level ``then``) are evaluated on the conversation exactly as a run's attempt
would be; the checks of its scripted turns are not, since the person wrote other turns.
``/save`` appends the model exchanges so far to a cassette (what ``--record`` writes), so
that a ``kind: replay`` target answers this conversation again offline.

Nothing here writes a run folder: a conversation in ``try`` is an experiment, not a
result.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import signal
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from ..clients.open import open_agent, open_model
from ..compiler.moment import say as say_moment
from ..compiler.redact import Redactor
from ..errors import EndpointError, RunDirError, explain
from ..execution.conversation import PERSON, Talk
from ..execution.run import attempt_status, evaluate, known_secrets, redactor_of
from ..model import AttemptData, Call, Plan, Scenario, Target, TurnKind, TurnSpec, WorldRun
from ..store.records import CheckResult
from ..targets.base import ATTEMPT_SECRETS, AgentContext
from ..targets.cassette import NotACassette, read_cassette, read_header
from ..targets.kinds import describe
from . import RunRequest, plan_for

QUIT = ("/quit", "/exit")
HELP = ("Write what the person says and press Enter. Commands: /save [FILE] keeps this "
        "conversation in a cassette, /quit (or Ctrl-D) ends it and shows the checks, "
        "/help shows this.")
SHOWN = 400  # characters of a tool result shown (the rest is cut, with a note)


class NotTryable(Exception):
    """The scenario or target cannot be tried (a sentence for the person)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Session:
    """What ``try`` talks to: one scenario, one target, the plan they came from."""

    plan: Plan
    scenario: Scenario
    target: Target
    cassette: Path  # where /save appends by default


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """How a try ended: the conversation, and the checks on it (None: nothing said)."""

    data: AttemptData | None
    checks: tuple[CheckResult, ...]
    status: str
    reason: str
    skipped_turn_checks: int
    error: EndpointError | None = None


def session_for(path: Path, target: str | None, scenario_id: str | None,
                cassette: Path | None) -> Session:
    """Compile the scenario file against its suite, for one target, as a run would
    (:func:`dsl.pipeline.plan_for`). Raises InputError for the files, NotReady for what
    the environment lacks (an API key) and NotTryable for a choice to make."""
    plan = plan_for(RunRequest(paths=(path,), targets=(target,) if target else (), runs=1))
    scenarios = plan.scenarios
    if scenario_id is not None:
        scenarios = tuple(s for s in scenarios if s.id == scenario_id)
        if not scenarios:
            have = ", ".join(s.id for s in plan.scenarios)
            raise NotTryable(f"{path} has no scenario '{scenario_id}' (it has: {have})")
    if len(scenarios) != 1:
        have = ", ".join(s.id for s in scenarios)
        raise NotTryable(f"{path} holds {len(scenarios)} scenarios ({have}); choose one "
                         "with --scenario ID")
    t = plan.targets[0]
    default = Path(plan.suite_root) / "cassettes" / f"try-{t.name}.jsonl"
    return Session(plan, scenarios[0], t, cassette or default)


class Terminal:
    """The person's side: what they read and type (``say`` and ``ask`` are replaced in
    tests of this module; ``scenarist try`` uses click's echo and input)."""

    def __init__(self, say: Callable[[str], None], ask: Callable[[str], str],
                 save: Callable[[Path | None], str] | None = None,
                 world: Callable[[WorldRun, list[dict[str, Any]]], None] | None = None
                 ) -> None:
        self.say = say
        self.ask = ask  # raises EOFError on Ctrl-D
        self.save = save
        # what a turn did to the world: its tables before and after the turn, and the
        # changes row by row (dsl.compiler.world.changes); said in words as well
        self.world = world

    def read(self, prompt: str) -> str | None:
        try:
            return self.ask(prompt)
        except EOFError:
            self.say("")
            return None


def play(session: Session, terminal: Terminal) -> Outcome:
    """The whole session: the conversation, then the checks (the caller prints them).
    Ctrl-C raises KeyboardInterrupt out of the person's ``input()`` (asyncio's own
    handler would only cancel the task and leave ``input()`` waiting)."""
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        old = signal.signal(signal.SIGINT, interrupt)
    except ValueError:  # not the main thread: asyncio leaves SIGINT alone there too
        return asyncio.run(_play(session, terminal))
    try:
        return asyncio.run(_play(session, terminal))
    finally:
        signal.signal(signal.SIGINT, old)


def intro(session: Session) -> list[str]:
    """What the person reads before the first message."""
    s, t = session.scenario, session.target

    tools = ", ".join(f"{x.name} (asks to confirm)" if x.confirm else x.name
                      for x in s.tools) or "none"
    lines = [f"Trying {s.id} ({s.file}) with {t.name} ({describe(t)}).",
             f"It is {say_moment(s.at)}. Fake tools: {tools}."]
    if s.description:
        lines.append(f"The scenario: {s.description}")
    if s.turns or s.user is not None:
        lines.append("The scenario's own turns are not played: you are the person.")
    elif s.message:
        lines.append(f"The scenario's message: {s.message}")
    for m in s.history:
        role = str(m.get("role"))
        if role in ("user", "assistant") and m.get("content"):
            who = "you" if role == "user" else "agent"
            lines.append(f"(earlier) {who}: {m['content']}")
    lines.append(HELP)
    redactor = redactor_of(session.plan)  # a secret in the scenario's text is never shown
    return [redactor(line) for line in lines] if redactor.patterns else lines


async def _play(session: Session, terminal: Terminal) -> Outcome:
    s = session.scenario
    # played as a conversation (the person's turns), checked as the scenario's own then
    played = msgspec.structs.replace(s, turns=(TurnSpec("say", s.message, s.span),), user=None)
    checked = msgspec.structs.replace(s, turns=(), user=None)
    skipped = sum(len(t.checks) for t in s.turns)
    redactor = redactor_of(session.plan)
    if redactor.patterns:  # what the terminal shows is redacted, as every file is
        _shown_redacted(terminal, redactor)
    scratch = Path(tempfile.mkdtemp(prefix="scenarist-try-")) / "exchanges.jsonl"
    agent = open_agent(session.target, AgentContext(
        max_connections=1, suite_root=Path(session.plan.suite_root),
        suite_targets=session.plan.suite_targets, record=scratch, redact=redactor.value,
        redactor=redactor,
        secret_env=redactor.env))
    saver = _Saver(scratch, session.cassette)
    terminal.save = saver.save
    said = _Person(terminal, s)
    token = PERSON.set(said)
    error: EndpointError | None = None
    data: AttemptData | None = None
    if redactor.patterns:  # a /save'd cassette keeps which secret each mark stands for
        ATTEMPT_SECRETS.set(known_secrets(redactor, s))
    try:
        data = await agent.run(played, 1)
    except EndpointError as exc:
        error = exc
    finally:
        PERSON.reset(token)
        await agent.aclose()
        shutil.rmtree(scratch.parent, ignore_errors=True)
    if error is not None:
        terminal.say(f"The conversation stopped: {explain(error.kind)}")
        terminal.say(f"  what the endpoint said: {error.message}")
        return Outcome(None, (), "error", redactor(error.message), skipped, error)
    assert data is not None
    if redactor.patterns:  # the checks see the true values, as a run's do
        data = msgspec.structs.replace(data, secrets=redactor)
    if not data.turns or said.turns == 0:
        return Outcome(None, (), "none", "nothing was said", skipped)
    judge = None
    if session.plan.judge is not None and any(c.judge for c in checked.checks):
        # why: the judge, only when used
        from ..judge import Judge

        judge = Judge(session.plan.judge, open_model(session.plan.judge.target, 2), redactor)
    try:
        checks, _ = await evaluate(checked, data, judge)
    finally:
        if judge is not None:
            await judge.model.aclose()
    status, reason = attempt_status(data, checks)
    if redactor.patterns:  # the checks saw the true values; people see them redacted
        checks = tuple(msgspec.structs.replace(c, label=redactor(c.label),
                                               reason=redactor(c.reason))
                       for c in checks)
        reason = redactor(reason)
    return Outcome(data, checks, status, reason, skipped)


def _shown_redacted(terminal: Terminal, redactor: Redactor) -> None:
    """The terminal's (or the page's) lines and world changes, redacted."""
    say, world = terminal.say, terminal.world
    terminal.say = lambda text: say(redactor(text))
    if world is not None:
        def tables(run: WorldRun, made: list[dict[str, Any]]) -> None:
            red = redactor.value

            def rows(t: Mapping[str, Any]) -> Any:
                return {k: tuple(red(list(v))) for k, v in t.items()}
            world(WorldRun(rows(run.before), rows(run.after), tuple(rows(t) for t in run.turns)),
                  red(made))
        terminal.world = tables


class _Person:
    """Plays the person from the terminal: each line a turn, each held call a question."""

    def __init__(self, terminal: Terminal, scenario: Scenario) -> None:
        self.t = terminal
        self.scenario = scenario
        self.turns = 0

    async def __call__(self, talk: Talk) -> None:
        t = self.t
        while True:
            line = t.read("you: ")
            if line is None:
                return
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                if not self._command(text):
                    return
                continue
            self.turns += 1
            await self._turn(talk, "say", text, None)
            while any(c.pending for c in talk.calls):
                pick = self._decide(talk)
                if pick is None:
                    return  # Ctrl-D at the question: the call stays pending
                if pick:
                    await self._turn(talk, "confirm", "all", pick)
                else:
                    await self._turn(talk, "cancel", "all", None)

    def _command(self, text: str) -> bool:
        """Do a /command; False when it ends the conversation."""
        word, _, rest = text.partition(" ")
        if word in QUIT:
            return False
        if word == "/help":
            self.t.say(HELP)
        elif word == "/save":
            if self.t.save is None:
                self.t.say("Nothing can be saved here.")
            else:
                self.t.say(self.t.save(Path(rest.strip()) if rest.strip() else None))
        else:
            self.t.say(f"There is no command {word}. {HELP}")
        return True

    def _decide(self, talk: Talk) -> set[int] | None:
        """Ask about each held call; the indexes confirmed (None: Ctrl-D)."""
        pick = set()
        for i, c in enumerate(talk.calls):
            if not c.pending:
                continue
            answer = self.t.read(f"  confirm {c.name} {_args(c)}? [y/N] ")
            if answer is None:
                return None
            if answer.strip().lower() in ("y", "yes"):
                pick.add(i)
        return pick

    async def _turn(self, talk: Talk, kind: TurnKind, text: str, pick: set[int] | None
                    ) -> None:
        first = len(talk.calls)
        world = talk.world
        before = world.run().after if world is not None else None
        turn = await talk.turn(kind, text, False, pick)
        calls = talk.calls
        for i in turn.decided:
            c = calls[i]
            if c.decision == "confirmed":
                self.t.say(f"  confirmed: {c.name} ran")
                self.t.say(f"    fake result{_erred(c)}: {_shown(c.output)}")
            elif c.decision == "cancelled":
                self.t.say(f"  cancelled: {c.name} was not run")
        for c in calls[first:first + turn.calls]:
            self.t.say(f"  tool call: {c.name} {_args(c)}")
            if c.pending:
                self.t.say("    waits for the person to confirm")
            else:
                self.t.say(f"    fake result{_erred(c)}: {_shown(c.output)}")
        if world is not None and before is not None:
            self._world(WorldRun(before, world.run().after))
        if turn.failure is not None:
            self.t.say(f"  (this turn failed: {turn.failure})")
        if turn.answer:
            self.t.say(f"agent: {turn.answer}")
        elif turn.failure is None and not any(c.pending for c in calls):
            self.t.say("agent: (no answer)")


    def _world(self, run: WorldRun) -> None:
        """What the turn changed in the world, in words (and to the terminal's ``world``)."""
        # why: the world's module is imported only by a scenario that has a world
        from ..compiler.world import changes, said

        made = changes(run)
        for change in made:
            self.t.say(f"  world: {said(change)}")
        if self.t.world is not None:
            self.t.world(run, made)


def _args(c: Call) -> str:
    if c.args is None:
        return f"{c.raw_args} (not valid JSON)"
    return json.dumps(c.args, ensure_ascii=False)


def _erred(c: Call) -> str:
    return {"tool-error": " (an error)", "no-record": " (no record)",
            "unknown-tool": " (no such tool)", "invalid-json": " (bad arguments)",
            "no-row": " (no such row)", "row-exists": " (a row with that id exists)",
            "refused": " (refused by a rule)",
            "invalid-args": " (arguments refused)"}.get(
        c.error or "", "")


def _shown(text: str | None) -> str:
    text = text or ""
    if len(text) <= SHOWN:
        return text
    return f"{text[:SHOWN]}… ({len(text) - SHOWN} more characters)"


class _Saver:
    """``/save``: the exchanges recorded since the last save, appended to a cassette."""

    def __init__(self, scratch: Path, default: Path) -> None:
        self.scratch = scratch
        self.default = default
        self.saved = 0  # exchange lines of the scratch file already saved

    def save(self, path: Path | None) -> str:
        dest = path or self.default
        if not self.scratch.exists():
            return ("This target is your own agent (kind: python): its conversations "
                    "cannot be saved to a cassette.")
        lines = self.scratch.read_text("utf-8").splitlines()
        header, exchanges = lines[0], lines[1 + self.saved:]
        if not exchanges:
            return "Nothing new to save: the model has not been asked anything since."
        elsewhere = "save to another file with /save FILE (the conversation goes on)"
        try:
            # an empty file (touch c.jsonl) becomes the cassette; any other is read first
            if dest.exists() and read_cassette(dest, header_only=True) != [""]:
                old = read_header(dest)
                new = json.loads(header)
                if old.get("settings") != new.get("settings"):
                    return (f"Not saved: {dest} was recorded with other settings (model, "
                            "temperature or system prompt); save to another file with "
                            "/save FILE.")
                text = "".join(line + "\n" for line in exchanges)
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                text = "".join(line + "\n" for line in (header, *exchanges))
            with dest.open("a", encoding="utf-8") as f:
                f.write(text)
        except NotACassette:
            return (f"Not saved: {dest} is not a cassette (its first line is not a cassette "
                    f"header), and /save adds only to a cassette; {elsewhere}.")
        except RunDirError as exc:
            return f"Not saved: {exc}; {elsewhere}."
        except OSError as exc:
            return f"Not saved: cannot write {dest}: {exc.strerror or exc}; {elsewhere}."
        self.saved += len(exchanges)
        return (f"Saved {len(exchanges)} model exchange(s) to {dest}; a target with kind: "
                f"replay and cassette: {dest} answers this conversation again offline.")


def check_lines(outcome: Outcome) -> list[str]:
    """The checks on the conversation, in words, for the end of the session."""
    if outcome.data is None:
        return [] if outcome.status == "error" else [
            "Nothing was said, so there is nothing to check."]
    lines = ["", "The scenario's checks on this conversation:"]
    for c in outcome.checks:
        always = " (must hold every time)" if c.always else ""
        lines.append(f"  {c.status:<6} {c.label}{always}")
        if c.status != "pass" and c.reason:
            lines.append(f"         {c.reason}")
    if not outcome.checks:
        lines.append("  (the scenario has no checks of its own)")
    if outcome.skipped_turn_checks:
        lines.append(f"  ({outcome.skipped_turn_checks} check(s) of the scenario's scripted "
                     "turns are not evaluated: you wrote other turns)")
    passed = sum(c.status == "pass" for c in outcome.checks)
    lines.append(f"{passed} of {len(outcome.checks)} checks would pass; as an attempt of "
                 f"a run this conversation would be: {outcome.status} ({outcome.reason}).")
    return lines
