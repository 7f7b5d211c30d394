"""What the agent loop needs from a model endpoint: one chat completion at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..model import Tokens


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
