"""The settings of each target kind, as compiled from ``scenarist.yaml``: one frozen
Struct per kind, held by :attr:`dsl.model.Target.config`. A leaf module: the clients
(openai.py, cassette.py, python.py) and the kinds table (kinds.py) all read it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec


class Retry(msgspec.Struct, frozen=True):
    """How a target's failed requests are tried again. ``turns`` (``kind: http`` only):
    a turn the agent may have acted on (an error status, a timeout, a connection lost after
    the request went out) is sent again, its calls discarded and the world restored
    (dsl/clients/ownloop.py); without it such a turn ends the attempt as an error."""

    max_attempts: int = 3
    backoff_ms: int = 500
    retry_on_status: tuple[int, ...] = (429, 500, 502, 503, 504)
    turns: bool = False


class OpenAISettings(msgspec.Struct, frozen=True):
    """``kind: openai`` — any OpenAI-compatible chat-completions endpoint."""

    model: str
    base_url: str  # without the trailing slash
    api_key_env: str | None = None
    timeout_ms: int = 60_000
    temperature: float | None = None
    params: Mapping[str, Any] = msgspec.field(default_factory=dict)
    system_prompt: str = ""
    headers: Mapping[str, str] = msgspec.field(default_factory=dict)
    retry: Retry = Retry()
    max_reply_bytes: int = 8 * 2**20  # the most a reply may hold, once decoded
    ca_file: str | None = None  # absolute: a PEM file of authorities to trust for https://


class ReplaySettings(msgspec.Struct, frozen=True):
    """``kind: replay`` — answers from a cassette recorded with ``--record``."""

    cassette: str  # absolute path


class PythonSettings(msgspec.Struct, frozen=True):
    """``kind: python`` — your own agent, a function ``module:function``."""

    entry: str


class HttpSettings(msgspec.Struct, frozen=True):
    """``kind: http`` — your agent service: one POST per turn (dsl/clients/http.py)."""

    url: str
    body: Any  # the JSON sent: every string a template over the turn (dsl/clients/ownloop.py)
    answer: tuple[str, ...] = ("answer",)  # where the answer is in the JSON reply
    pending: tuple[str, ...] | None = None  # where the calls the agent holds itself are
    api_key_env: str | None = None
    headers: Mapping[str, str] = msgspec.field(default_factory=dict)
    timeout_ms: int = 60_000
    retry: Retry = Retry()
    max_reply_bytes: int = 8 * 2**20
    ca_file: str | None = None


class CommandSettings(msgspec.Struct, frozen=True):
    """``kind: command`` — any program: one process per attempt, JSON lines
    (dsl/clients/command.py)."""

    command: tuple[str, ...]  # the argv, run in ``cwd``
    cwd: str  # the suite's folder (absolute)
    env: Mapping[str, str] = msgspec.field(default_factory=dict)
    timeout_ms: int = 60_000  # the most one turn's answer may take
    pass_env: tuple[str, ...] = ()  # variables passed on from the run's environment
    inherit_env: bool = False  # the run's whole environment (less the suite's secrets)


# What :attr:`dsl.model.Target.config` holds: the settings of the target's kind.
TargetSettings = OpenAISettings | ReplaySettings | PythonSettings | HttpSettings | CommandSettings
