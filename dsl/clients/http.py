"""``kind: http`` — your agent service: one POST per turn.

The body is the target's ``body`` with every string rendered over the turn
(:class:`~dsl.clients.ownloop.TurnInput`; a string that is exactly one ``{{ name }}``
becomes that value itself); the reply is JSON whose ``answer`` path holds the answer's
text and whose ``pending`` path (when the target names one) the calls the agent holds for
the person's confirmation. The connection is an openai target's
(:class:`~dsl.clients.openai.JsonEndpoint`): the same timeouts, ``Retry-After``, reply
size limit, and the key from ``api_key_env`` sent as ``Authorization: Bearer …`` and never
written anywhere.

One thing differs: a turn is never sent again once the agent may have acted on it. The
agent runs its own loop — by the time it answers HTTP 500, or while Scenarist waits past
``timeout_ms``, it may have called its tools and changed the world — so only a request
that provably never reached it (no connection) is sent again by the client; any other
failure ends the attempt as an endpoint error with its reason. With ``retry: {turns:
true}`` the turn is sent again as the target's ``retry`` says, by the own loop
(:meth:`~dsl.clients.ownloop.OwnLoopAgent.retry_wait`), which first discards what the
failed try did.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import EndpointError
from ..model import Scenario, Target
from ..settings import HttpSettings
from ..targets.base import AgentContext, json_kind, snippet
from .exchanges import recorder_for
from .openai import JsonEndpoint
from .ownloop import (
    Answered,
    OwnLoopAgent,
    Session,
    TurnInput,
    pending_calls,
    render_body,
    value_at,
)
from .toolserver import Endpoint


class AgentEndpoint(JsonEndpoint):
    """An agent service's endpoint: a reply is its JSON data and how many tries that never
    reached the service were sent again."""

    def _parse(self, raw: bytes, started: float, retries: int) -> tuple[Any, int]:
        return super()._parse(raw, started, retries), retries


class HttpSession:
    """One attempt's turns, each one request."""

    def __init__(self, client: AgentEndpoint, settings: HttpSettings) -> None:
        self.client = client
        self.settings = settings

    async def ask(self, turn: TurnInput, tools: Endpoint) -> Answered:
        s = self.settings
        try:
            body = render_body(s.body, turn.values())
        except Exception as exc:  # a template passed a limit, or read a missing field
            raise EndpointError("template", f"the body of the target could not be written "
                                            f"for turn {turn.turn}: {exc}") from None
        data, retries = await self.client.complete(body)
        found, answer = value_at(data, s.answer)
        path = ".".join(s.answer)
        if not found or not isinstance(answer, str):
            what = "nothing" if not found else f"{json_kind(answer)}, not text,"
            raise EndpointError("malformed", f"the reply from {self.client.where} has {what} at "
                                             f"'{path}' (the target's answer path): "
                                             f"{snippet(json.dumps(data, ensure_ascii=False))}")
        pending: list[dict[str, Any]] = []
        if s.pending is not None:
            _, held = value_at(data, s.pending)
            pending = pending_calls(held, f"'{'.'.join(s.pending)}' in the reply from "
                                          f"{self.client.where}")
        return Answered(answer, pending, body, data, retries)

    async def end(self) -> str:
        return ""


def open_http(target: Target, context: AgentContext) -> OwnLoopAgent:
    settings = target.settings(HttpSettings)
    client = AgentEndpoint(target, settings.url, settings.url, "url",
                           max_connections=context.max_connections,
                           on_throttle=context.on_throttle, resend=False)

    async def session(scenario: Scenario, run: int, first: TurnInput) -> Session:
        return HttpSession(client, settings)

    return OwnLoopAgent(target, context, session, closing=client.aclose,
                        recorder=recorder_for(target, context), retry=settings.retry)
