"""The agent loop for model targets: system prompt and message in, tool calls answered
from the fake tools, until the model answers in text or ``max_steps`` model calls are spent.

A call whose arguments are not JSON, or that names a tool the scenario does not have, is
recorded and answered with an error as its tool result — the model may recover; checks
decide. A call to a ``confirm: true`` tool is held as *pending* and ends the attempt. An
endpoint failure raises :class:`~dsl.errors.EndpointError` out of the loop, with the
transcript so far attached as ``partial``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from .errors import EndpointError
from .model import AttemptData, Call, Scenario, Tokens, ToolSpec
from .targets.base import ChatModel, Unreadable, read_reply_json
from .templates import as_tool_text, compile_template, render_system, render_tool_output


@dataclass(slots=True)
class LoopState:
    """The attempt so far (kept when an endpoint fails half-way)."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    tokens: Tokens = Tokens()
    steps: int = 0
    retries: int = 0
    model_calls: list[dict[str, Any]] = field(default_factory=list)


class LoopEndpointError(EndpointError):
    def __init__(self, cause: EndpointError, progress: LoopState) -> None:
        super().__init__(cause.kind, cause.message, status=cause.status, retries=cause.retries)
        self.progress = progress


_TEMPLATES: dict[str, Any] = {}
_SYSTEM_TEXT: dict[tuple[str, str, str], str] = {}


def system_message(model: ChatModel, scenario: Scenario) -> str:
    """The system prompt for a scenario (rendered once per prompt, scenario and moment)."""
    source = model.settings.system_prompt
    key = (source, scenario.system, scenario.at.isoformat())
    text = _SYSTEM_TEXT.get(key)
    if text is None:
        template = _TEMPLATES.get(source)
        if template is None:
            template = _TEMPLATES[source] = compile_template(source)
        try:
            text = render_system(template, scenario.system, scenario.at)
        except Exception as exc:  # the author's template passed a limit at run time
            raise EndpointError("template", f"the target's system_prompt could not be "
                                            f"rendered: {exc}") from None
        _SYSTEM_TEXT[key] = text
    return text


def tool_output(tool: ToolSpec, args: Any, scenario: Scenario) -> str:
    if tool.template is not None:
        try:
            return render_tool_output(tool.template, args, scenario.at)
        except Exception as exc:  # a template over the model's arguments: report, go on
            return f"error: the tool failed: {exc}"
    return as_tool_text(tool.returns)


async def run_loop(model: ChatModel, scenario: Scenario, run: int) -> AttemptData:
    """One attempt of ``scenario`` against ``model``, seeded with the run index."""
    started = time.perf_counter()
    p = LoopState()
    p.messages = [
        {"role": "system", "content": system_message(model, scenario)},
        {"role": "user", "content": scenario.message},
    ]
    tools_by_name = {t.name: t for t in scenario.tools}
    openai_tools = [t.openai() for t in scenario.tools]
    settings = model.settings
    answer = ""
    failure: str | None = None
    failure_kind: str | None = None
    while True:
        body: dict[str, Any] = {"model": settings.model, "messages": p.messages}
        if openai_tools:
            body["tools"] = openai_tools
        body["seed"] = run
        if settings.temperature is not None:
            body["temperature"] = settings.temperature
        body.update(settings.params)
        try:
            reply = await model.complete(body)
        except EndpointError as exc:
            p.retries += exc.retries
            if exc.kind != "model_output":
                raise LoopEndpointError(exc, p) from exc
            p.steps += 1  # the model was called and answered badly: its failure
            p.model_calls.append({"latency_ms": None, "finish_reason": "unparsable",
                                  "tokens": 0, "retries": 0})
            failure, failure_kind = exc.message, exc.kind
            break
        p.steps += 1
        p.tokens = p.tokens + reply.tokens
        p.retries += reply.retries
        p.model_calls.append({"latency_ms": round(reply.latency_ms, 1),
                              "finish_reason": reply.finish_reason,
                              "tokens": reply.tokens.total, "retries": reply.retries})
        msg = reply.message
        content = msg.get("content")
        text = content if isinstance(content, str) else _text_parts(content)
        tool_calls = msg.get("tool_calls") or []
        if not tool_calls:
            answer = text
            p.messages = [*p.messages, {"role": "assistant", "content": text}]
            as_text = tool_call_in_text(text, tools_by_name)
            if as_text is not None:
                raise LoopEndpointError(EndpointError(
                    "tool_call_as_text",
                    f"the endpoint returned a call to {as_text} as plain text instead of a "
                    "tool call: the server is not parsing this model's tool calls (check its "
                    "chat template or tool-call parser)"), p)
            break
        assistant: dict[str, Any] = {"role": "assistant", "content": text or None,
                                     "tool_calls": []}
        results: list[dict[str, Any]] = []
        pending = False
        for i, tc in enumerate(tool_calls):
            call, result = _handle_call(tc, i, p.steps, tools_by_name, scenario)
            assistant["tool_calls"].append(_wire_call(call))
            p.calls.append(call)
            if call.pending:
                pending = True
            elif result is not None:
                results.append({"role": "tool", "tool_call_id": call.id, "content": result})
        p.messages = [*p.messages, assistant, *results]
        if pending:
            answer = text
            break
        if p.steps >= scenario.max_steps:
            failure = (f"reached max_steps ({scenario.max_steps} model calls) without a text "
                       "answer")
            failure_kind = "max_steps"
            break
    return AttemptData(
        message=scenario.message,
        answer=answer,
        calls=tuple(p.calls),
        at=scenario.at,
        tools=scenario.tools,
        steps=p.steps,
        latency_ms=(time.perf_counter() - started) * 1000,
        tokens=p.tokens,
        messages=tuple(p.messages),
        failure=failure,
        failure_kind=failure_kind,
        retries=p.retries,
        model_calls=tuple(p.model_calls),
    )


class LoopAgent:
    """A model endpoint under test: each attempt is :func:`run_loop` over the model."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    async def run(self, scenario: Scenario, run: int) -> AttemptData:
        return await run_loop(self.model, scenario, run)

    async def aclose(self) -> None:
        await self.model.aclose()


def tool_call_in_text(text: str, tools: dict[str, ToolSpec]) -> str | None:
    """The tool's name when ``text`` is a tool call written out as text (a JSON object with
    the name of one of the scenario's tools and its arguments, possibly in a ```json fence
    or <tool_call> tags) — what servers without a tool-call parser return."""
    t = text.strip()
    if not t or not tools:
        return None
    for start, end in (("<tool_call>", "</tool_call>"), ("```json", "```"), ("```", "```")):
        if t.startswith(start):
            t = t[len(start):]
            cut = t.rfind(end)
            t = (t[:cut] if cut >= 0 else t).strip()
            break
    if not (t.startswith("{") and t.endswith("}")):
        return None
    try:
        data = json.loads(t)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    inner = data.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else data
    name = fn.get("name")
    has_args = any(k in fn for k in ("arguments", "parameters", "args"))
    if isinstance(name, str) and name in tools and has_args:
        return name
    return None


def _text_parts(content: Any) -> str:
    """Content given as a list of text parts (OpenAI's newer format) → plain text. The
    reply's shape was checked when it was read (targets.base.parse_completion)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _wire_call(call: Call) -> dict[str, Any]:
    """The tool call as it goes back to the model in the next request."""
    return {"id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": call.raw_args}}


def _handle_call(tc: Any, index: int, step: int, tools: dict[str, ToolSpec],
                 scenario: Scenario) -> tuple[Call, str | None]:
    fn = tc.get("function") if isinstance(tc, dict) else None
    fn = fn if isinstance(fn, dict) else {}
    name = str(fn.get("name") or "")
    call_id = str((tc.get("id") if isinstance(tc, dict) else None) or f"call_{step}_{index}")
    raw = fn.get("arguments")
    args: Any
    bad: str | None
    if raw is None:
        raw_text, args, bad = "{}", {}, None
    elif isinstance(raw, str):
        raw_text = raw
        try:
            args, bad = (read_reply_json(raw) if raw.strip() else {}), None
        except Unreadable as exc:  # not JSON, or too deep
            args, bad = None, exc.detail
    else:  # some servers send the arguments as an object
        raw_text, args, bad = json.dumps(raw, ensure_ascii=False), raw, None
    tool = tools.get(name)
    if tool is None:
        have = ", ".join(sorted(tools)) or "none"
        out = f"error: there is no tool named '{name}'. The tools are: {have}."
        return Call(call_id, name, args, raw_text, out, None, False, "unknown-tool", step), out
    if bad is not None:
        out = f"error: the arguments are not valid JSON ({bad}). Call {name} again with a " \
              "JSON object."
        return Call(call_id, name, None, raw_text, out, tool.action, False, "invalid-json",
                    step), out
    if tool.confirm:
        return Call(call_id, name, args, raw_text, None, tool.action, True, None, step), None
    out = tool_output(tool, args, scenario)
    return Call(call_id, name, args, raw_text, out, tool.action, False, None, step), out
