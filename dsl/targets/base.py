"""The two protocols every target follows, and the values they exchange.

* :class:`Agent` — a system under test, ready to run attempts: ``run(scenario, run_index)``
  returns the :class:`~dsl.model.AttemptData` the checks read, or raises
  :class:`~dsl.errors.EndpointError` when the system could not be asked. The agent loop
  over a model endpoint (:class:`dsl.loop.LoopAgent`) and your own python agent
  (:class:`dsl.targets.python.PythonAgent`) are both agents.
* :class:`ChatModel` — a model endpoint: one chat completion at a time. What the agent loop,
  the judge and python agents' clients talk to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..model import AttemptData, Scenario, Tokens

if TYPE_CHECKING:
    from ..model import Target


@dataclass(frozen=True, slots=True)
class Reply:
    """One chat completion: the assistant message and what it cost."""

    message: dict[str, Any]
    finish_reason: str | None
    tokens: Tokens
    latency_ms: float
    retries: int = 0
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RequestSettings:
    """What the loop puts into every request besides messages, tools and seed."""

    model: str
    temperature: float | None
    params: dict[str, Any]
    system_prompt: str  # the template source


class ChatModel(Protocol):
    settings: RequestSettings

    async def complete(self, body: dict[str, Any]) -> Reply:
        """Send one request body; raise EndpointError when the endpoint fails."""
        ...

    async def aclose(self) -> None: ...


class Agent(Protocol):
    async def run(self, scenario: Scenario, run: int) -> AttemptData:
        """One attempt of ``scenario``, seeded with the run index; raise EndpointError when
        the system under test could not be asked."""
        ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class AgentContext:
    """What the run gives a target when it opens it."""

    max_connections: int
    suite_root: Path
    suite_targets: tuple[Target, ...] = ()  # python agents get clients for the model ones
    on_reply: Callable[[Reply], None] = lambda reply: None  # every model reply (budgets)
    on_throttle: Callable[[], None] | None = None  # the endpoint answered HTTP 429
    record: Path | None = None  # --record FILE: a cassette of every exchange
    redact: Callable[[str], str] | None = None


class Metered:
    """A model whose every reply is reported (to count calls and tokens against the run's
    budgets, and to let the concurrency limit grow back)."""

    def __init__(self, inner: ChatModel, on_reply: Callable[[Reply], None]) -> None:
        self.inner = inner
        self.settings = inner.settings
        self._on_reply = on_reply

    async def complete(self, body: dict[str, Any]) -> Reply:
        reply = await self.inner.complete(body)
        self._on_reply(reply)
        return reply

    async def aclose(self) -> None:
        await self.inner.aclose()


def parse_completion(data: Any, latency_ms: float, retries: int = 0) -> Reply:
    """A chat-completions JSON body as a Reply; raise EndpointError('malformed') otherwise."""
    from ..errors import EndpointError

    if not isinstance(data, dict):
        raise EndpointError("malformed", "the reply is JSON but not an object")
    if "error" in data and "choices" not in data:
        err = data["error"]
        msg = err.get("message") if isinstance(err, dict) else err
        raise EndpointError("malformed", f"the endpoint answered with an error: {msg}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise EndpointError("malformed", "the reply has no choices (an empty completion)")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise EndpointError("malformed", "the reply's first choice has no message")
    usage = data.get("usage") or {}
    tokens = Tokens(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    return Reply(message, choice.get("finish_reason"), tokens, latency_ms, retries, data)
