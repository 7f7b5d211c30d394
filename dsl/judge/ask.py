"""The LLM judge: asks a model about an attempt and turns its reply into a verdict that
can be trusted — reproducibly, honest about doubt, and without leaking secrets.

* **Asking.** A judge question is a jinja2 prompt (``dsl/assets/judge/*.j2``, versioned;
  the suite may override each) rendered with the person's message, the answer, the tool
  results and the moment, then **redacted**. The judge is asked for one JSON object —
  ``verdict``, ``score``, ``confidence``, ``reason`` — with ``response_format`` and a JSON
  Schema where the server supports it (llama.cpp, vLLM, OpenAI do; a server that refuses
  it is asked again without, once). Temperature 0 and a fixed seed by default.
* **Reading.** The reply is parsed robustly: a bare object, one in a ```json fence, or the
  first object inside prose. An unreadable reply is asked again (``max_attempts``, with
  seed + i); still unreadable → **unsure**. A readable verdict with ``confidence`` below
  ``min_confidence`` → **unsure**. Unsure never counts as a pass. The prompt and every raw
  reply are kept as evidence on the attempt.
* **Token probabilities** (``mode: logprobs``). The judge is asked for one word, ``yes``
  or ``no`` (faithful, answers_the_question), or one digit 0–9 (rubric, criteria), with
  ``logprobs`` and ``top_logprobs``; the verdict is read from the first token's
  probabilities, calibrated by a temperature (``dsl/judge/logprobs.py``: the maths).
* **Caching.** The cache key is the judge model + the prompt's version + the rendered
  prompt (+ temperature and seed, + the mode when it is not json). Every outcome but an
  endpoint failure is stored under ``.scenarist/judge-cache/`` beside scenarist.yaml; a
  rerun never asks the same question twice and never flips a stored verdict. In logprobs
  mode the stored token probabilities are decided again on every use, so a new
  calibration or min_confidence applies without asking again. Identical questions asked
  at the same moment by concurrent attempts share one request.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..compiler.attachments import readable
from ..compiler.moment import say
from ..compiler.redact import NO_REDACTION, Redactor
from ..compiler.templates import compile_template
from ..errors import EndpointError
from ..model import (
    SCHEMA_VERSION,
    AttemptData,
    JudgeAnswer,
    JudgeConfig,
    Kind,
    Prompt,
)
from ..store.cachefile import WRITTEN_AGAIN, Damaged, read_cache, remove_damaged, say_damaged
from ..store.runfile import JudgeStats
from ..targets.base import ChatModel
from .logprobs import (
    MALFORMED,
    TOP_LOGPROBS,
    Reading,
    decide,
    first_token_options,
    impossible,
    read_answers,
)

if TYPE_CHECKING:
    from ..store.runfile import JudgeStats

PROMPT_NAMES = ("system", "faithful", "answers_the_question", "rubric", "criterion")
MODES = ("json", "logprobs")
DIGIT_PROMPTS = ("rubric", "criterion")  # in logprobs mode: one digit; the others: yes/no
JUDGE_MAX_TOKENS = 400
LOGPROBS_MAX_TOKENS = 4  # one word is asked for; a few tokens leave room for "Yes."
NO_LOGPROBS = ("the judge's reply has no logprobs (its server does not report token "
               "probabilities), so judge.mode: logprobs cannot read a verdict from it; use a "
               "server that does (llama.cpp, vLLM, OpenAI) or judge.mode: json")
NOT_CACHED = ("the judge's answer to this question is not in its cache, and recheck asks the "
              "judge only with --judge")
_VERSION = re.compile(r"\{#-?\s*version:\s*([\w.\-]+)\s*-?#\}")
_DELIMITERS = re.compile(r"</?(answer|message|tool|held|rubric|criterion)\b", re.I)

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["pass", "fail"]},
        "score": {"type": "number"},
        "confidence": {"type": "number"},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "score", "confidence", "reason"],
    "additionalProperties": False,
}


def prompt_from_source(name: str, source: str, origin: str = "builtin") -> Prompt:
    """A judge prompt compiled from its source: built in (versioned by its ``{# version #}``
    comment) or the suite's own (versioned by its hash). ValueError when it does not
    compile."""
    m = _VERSION.search(source)
    version = m.group(1) if m and origin == "builtin" else \
        "custom-" + hashlib.sha256(source.encode()).hexdigest()[:12]
    template = compile_template(source)
    if not hasattr(template, "render"):
        raise ValueError(f"the judge prompt '{name}' does not compile: {template.message} "
                         f"(line {template.line})")
    return Prompt(name, source, f"{name}/{version}", template)


@functools.cache
def builtin_prompt(name: str, mode: str = "json") -> Prompt:
    folder = Path(__file__).parent.parent / "assets" / "judge"
    path = (folder / "logprobs" if mode == "logprobs" else folder) / f"{name}.j2"
    return prompt_from_source(name, path.read_text("utf-8"))


def prompt_of(config: JudgeConfig, name: str) -> Prompt:
    """The prompt ``config`` asks ``name`` with: the suite's own, else the built-in one."""
    return config.prompts.get(name) or builtin_prompt(name, config.mode)


def prompt_versions(config: JudgeConfig) -> dict[str, str]:
    return {name: prompt_of(config, name).version for name in PROMPT_NAMES}


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the judge concluded about one question."""

    status: str  # pass | fail | unsure | error
    score: float | None
    confidence: float | None
    reason: str
    prompt: str
    replies: tuple[str, ...]
    key: str
    model: str
    cached: bool = False
    tokens: int = 0
    # the judge's probability that the question is answered pass (json mode: its stated
    # confidence in its verdict; logprobs mode: from the token probabilities)
    p_pass: float | None = None
    reading: Reading | None = None  # logprobs mode: the first token's probabilities
    scale: float = 1  # of the score: 1 (yes/no, rubric) or 10 (criteria)
    threshold: float | None = None  # the score a pass needs (rubric, criteria)
    storable: bool = True  # False: a property of the server, not an answer (no logprobs)

    def evidence(self) -> JudgeAnswer:
        """What a judged check keeps of this verdict (a record's ``evidence``)."""
        return JudgeAnswer(self.model, self.status, self.score, self.confidence, self.reason,
                           self.prompt, tuple(self.replies), self.cached, self.key,
                           self.tokens, self.p_pass,
                           None if self.reading is None else self.reading.to_json())


# ----------------------------------------------------------------------- reading replies


class Unreadable(ValueError):
    pass


MAX_CACHE_FILE_BYTES = 16 * 2**20  # one answer: its prompt (the transcript) and replies
_STATUSES = ("pass", "fail", "unsure", "error")


def _cached_verdict(raw: bytes, key: str) -> Verdict | None:
    """A cached answer from its file's bytes: None when it is of another version of the
    cache or another question (not used, written again when asked); Damaged when it is
    not a cached answer at all."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise Damaged("it is not JSON") from None
    if not isinstance(data, dict):
        raise Damaged("it is not a JSON object")
    if data.get("schema_version") != SCHEMA_VERSION or data.get("key") != key:
        return None  # another version's, or another question's: not this one's to use
    number = (int, float, type(None))
    wrong = next((f for f, kinds in (
        ("status", str), ("score", number), ("confidence", number), ("reason", str),
        ("prompt", str), ("replies", list), ("model", (str, type(None))),
        ("p_pass", number), ("logprobs", (dict, type(None)))) if not isinstance(
            data.get(f), kinds) or isinstance(data.get(f), bool)), None)
    if wrong is not None:
        raise Damaged(f"its field '{wrong}' is missing or of the wrong type")
    if data["status"] not in _STATUSES or not all(isinstance(r, str) for r in data["replies"]):
        raise Damaged("it is not an answer of the judge's")
    reading = data["logprobs"]
    try:
        read = Reading.from_json(reading) if reading is not None else None
    except (TypeError, ValueError, AttributeError):
        raise Damaged("its field 'logprobs' cannot be read") from None
    return Verdict(data["status"], data["score"], data["confidence"], data["reason"],
                   data["prompt"], tuple(data["replies"]), key, data["model"] or "",
                   cached=True, tokens=0, p_pass=data["p_pass"], reading=read)


_PASS = {"pass", "passed", "yes", "true", "faithful", "correct", "ok", "meets"}
_FAIL = {"fail", "failed", "no", "false", "unfaithful", "incorrect", "not faithful"}


def find_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a reply: bare, in a ```json fence, or inside prose."""
    t = text.strip()
    fence = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", t, re.S)
    if fence:
        t = fence.group(1)
    try:
        data = json.loads(t)
        if isinstance(data, dict):
            return data
    except (ValueError, RecursionError):
        pass
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\{", t):
        try:
            data, _ = decoder.raw_decode(t, m.start())
        except ValueError:
            continue
        except RecursionError:  # each later '{' would nest as deep: stop here
            raise Unreadable("the reply's JSON is nested too deeply to read") from None
        if isinstance(data, dict):
            return data
    raise Unreadable("no JSON object in the reply")


def _number(value: Any, field_name: str) -> float:
    if isinstance(value, bool) or value is None:
        raise Unreadable(f"'{field_name}' is not a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise Unreadable(f"'{field_name}' is not a number: {value!r}") from None


def read_reply(text: str, scale: float) -> tuple[str, float, float, str]:
    """(verdict, score on 0..scale, confidence 0..1, reason) from a judge's reply, or
    Unreadable. Scores and confidences given on a larger scale (0..10, 0..100) are scaled
    down; a missing confidence makes the reply unreadable (doubt must be stated)."""
    data = {str(k).lower(): v for k, v in find_json_object(text).items()}
    raw_verdict = str(data.get("verdict", "")).strip().lower()
    if raw_verdict in _PASS:
        verdict = "pass"
    elif raw_verdict in _FAIL:
        verdict = "fail"
    else:
        raise Unreadable(f"'verdict' must be pass or fail, not {data.get('verdict')!r}")
    if "confidence" not in data:
        raise Unreadable("the reply has no 'confidence'")
    confidence = _number(data["confidence"], "confidence")
    if 1 < confidence <= 100:
        confidence /= 100
    if not 0 <= confidence <= 1:
        raise Unreadable(f"'confidence' must be between 0 and 1, not {confidence}")
    if "score" in data:
        score = _number(data["score"], "score")
        if (scale == 1 and 1 < score <= 10) or 1 < scale < score <= scale * 10:
            score /= 10
        if not 0 <= score <= scale:
            raise Unreadable(f"'score' must be between 0 and {scale:g}, not {score}")
    elif scale == 1:
        score = 1.0 if verdict == "pass" else 0.0
    else:
        raise Unreadable("the reply has no 'score'")
    reason = str(data.get("reason") or data.get("explanation") or "").strip()
    return verdict, score, confidence, reason


# ----------------------------------------------------------------------- the judge


def _neutralize(text: str) -> str:
    """Keep the prompt's own delimiters unambiguous: an answer cannot close <answer>."""
    return _DELIMITERS.sub(lambda m: m.group(0).replace("<", "["), text)


def tool_results(attempt: AttemptData) -> list[dict[str, str]]:
    """What the tools returned to the agent: given.history's calls, then its own."""
    out = []
    for c in (*attempt.history, *attempt.calls):
        if c.output is None:
            continue
        args = json.dumps(c.args, ensure_ascii=False) if c.args is not None else c.raw_args
        out.append({"name": c.name, "args": _neutralize(args), "output": _neutralize(c.output)})
    return out


def held_calls(attempt: AttemptData) -> list[dict[str, str]]:
    """The calls the agent holds for the person's confirmation with its answer: what the
    answer asks the person to confirm."""
    out = []
    for c in attempt.pending:
        args = json.dumps(c.args, ensure_ascii=False) if c.args is not None else c.raw_args
        out.append({"name": c.name, "args": _neutralize(args)})
    return out


def context(attempt: AttemptData, **extra: str) -> dict[str, Any]:
    """What a judge prompt is rendered with. In a conversation (turns, or earlier
    history) ``message`` is the whole conversation before the answer, one line per
    message: the judge sees what the agent saw. ``held``: the calls the answer asks the
    person to confirm (the built-in prompts show them only when there are some, so every
    other question, and its cache key, is as before)."""
    message = attempt.message
    if attempt.turns or attempt.history_messages:
        message = conversation_text(attempt)
    return {"message": _neutralize(message), "answer": _neutralize(attempt.answer),
            "tool_results": tool_results(attempt), "held": held_calls(attempt),
            "now": say(attempt.at), **extra}


def conversation_text(attempt: AttemptData) -> str:
    """The conversation before the answer, as the judge reads it: ``The person: ...``,
    ``The assistant: ...``, and what the person pressed (tool calls and their results are
    given apart, as tool results)."""
    messages = attempt.messages
    lines: list[str] = []
    attached = attempt.attached()

    def said(start: int, end: int) -> None:
        for m in messages[start:end]:
            content = m.get("content")
            # what the person attached: named, a text file with its text
            text = content if isinstance(content, str) else readable(content, attached)
            if m.get("role") == "user":
                lines.append(f"The person: {text}")
            elif m.get("role") == "assistant" and text.strip():
                lines.append(f"The assistant: {text}")

    # a model's transcript starts with its system prompt; an own-loop agent's does not
    first = 1 if messages and messages[0].get("role") == "system" else 0
    start = first + attempt.history_messages
    said(first, start)
    if not attempt.turns:
        said(start, len(messages))
    for t in attempt.turns:
        if t.kind != "say":
            what = "every pending call" if t.text == "all" else t.text
            lines.append(f"The person pressed {t.kind} on {what}.")
        said(start, t.messages)
        start = t.messages
    if lines and attempt.answer.strip() and lines[-1] == f"The assistant: {attempt.answer}":
        lines.pop()  # the answer being judged is shown apart
    return "\n".join(lines)


class Judge:
    """Asks the judge model; one per run.

    ``memory`` (optional) holds every question's reading by key, and is consulted before
    the cache: ``judge-check --calibrate`` decides the same questions again under other
    calibrations without asking anything."""

    def __init__(self, config: JudgeConfig, model: ChatModel,
                 redactor: Redactor = NO_REDACTION, *, use_cache: bool = True,
                 memory: dict[str, Verdict] | None = None, ask_missing: bool = True) -> None:
        """``ask_missing=False`` (``scenarist recheck`` without ``--judge``): a question
        the cache does not hold is not sent; its verdict is an error that says so."""
        self.config = config
        self.ask_missing = ask_missing
        self.missing = 0  # questions not asked because the cache did not hold them
        self.model = model
        self.redact = redactor
        self.use_cache = use_cache and config.cache_dir is not None
        self.model_name = config.model or model.settings.model
        self.memory = memory
        self._inflight: dict[str, asyncio.Future[Verdict]] = {}
        self._response_format = True
        self.asked = 0  # questions sent to the model (cache misses)
        self.cache_hits = 0
        self.tokens = 0

    @property
    def logprobs(self) -> bool:
        return self.config.mode == "logprobs"

    def key(self, prompt: Prompt, rendered: str) -> str:
        parts: list[Any] = [self.model_name, prompt.version, self.config.temperature,
                            self.config.seed, rendered]
        if self.logprobs:  # json mode's keys stay as they were: its caches remain valid
            parts += ["logprobs", TOP_LOGPROBS]
        text = json.dumps(parts, ensure_ascii=False)  # surrogatepass: half an emoji hashes
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    async def ask(self, name: str, ctx: Mapping[str, Any], scale: float = 1,
                  threshold: float | None = None) -> Verdict:
        """Ask one question. ``scale`` is the score's range (1 or 10); ``threshold`` the
        score a pass needs, which decides digit answers in logprobs mode."""
        prompt = prompt_of(self.config, name)
        rendered = self.redact(str(prompt.template.render(**ctx)).strip())
        key = self.key(prompt, rendered)
        kind: Kind = "digits" if name in DIGIT_PROMPTS else "yes_no"
        return self.decided(await self._fetch(rendered, key, kind, scale, threshold),
                            scale, threshold)

    def decided(self, v: Verdict, scale: float, threshold: float | None) -> Verdict:
        """A verdict with token probabilities, decided under this judge's calibration and
        min_confidence (any other verdict as it is)."""
        if v.reading is None:
            return v
        d = decide(v.reading, self.config.calibration, self.config.min_confidence, scale,
                   threshold)
        return replace(v, status=d.status, score=d.score, confidence=d.confidence,
                       reason=d.reason, p_pass=d.p_pass, scale=scale, threshold=threshold)

    async def _fetch(self, rendered: str, key: str, kind: Kind, scale: float,
                     threshold: float | None) -> Verdict:
        if self.memory is not None and key in self.memory:
            return self.memory[key]
        if self.use_cache:
            hit = self._load(key)
            if hit is not None:
                self.cache_hits += 1
                self._remember(hit)
                return hit
        if not self.ask_missing:
            self.missing += 1
            return Verdict("error", None, None, NOT_CACHED, rendered, (), key, self.model_name)
        pending = self._inflight.get(key)
        if pending is not None:  # the same question, asked right now by another attempt
            return await asyncio.shield(pending)
        future: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            if self.logprobs:
                verdict = self.decided(await self._ask_logprobs(rendered, key, kind),
                                       scale, threshold)
            else:
                verdict = await self._ask(rendered, key, scale)
            future.set_result(verdict)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody waits
            raise
        finally:
            self._inflight.pop(key, None)
        if verdict.status != "error":
            if self.use_cache and verdict.storable:
                self._store(verdict)
            self._remember(verdict)
        return verdict

    def _remember(self, v: Verdict) -> None:
        if self.memory is not None:
            self.memory[v.key] = v

    def _body(self, rendered: str, seed: int, max_tokens: int) -> dict[str, Any]:
        system = str(prompt_of(self.config, "system").template.render()).strip()
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": rendered}],
            "temperature": self.config.temperature,
            "seed": seed,
            "max_tokens": max_tokens,
        }
        body.update(self.model.settings.params)
        return body

    async def _ask_logprobs(self, rendered: str, key: str, kind: Kind) -> Verdict:
        """One request; the reading is decided by the caller. No retries: the token
        probabilities do not change with the seed."""
        body = self._body(rendered, self.config.seed, LOGPROBS_MAX_TOKENS)
        # the method needs these, whatever the target's params say
        body.update(logprobs=True, top_logprobs=TOP_LOGPROBS, max_tokens=LOGPROBS_MAX_TOKENS)
        try:
            reply = await self.model.complete(body)
        except EndpointError as exc:
            return Verdict("error", None, None, f"the judge's endpoint failed: {exc.kind}: "
                           f"{exc.message}", rendered, (), key, self.model_name)
        self.asked += 1
        self.tokens += reply.tokens.total
        text = reply.message.get("content") or ""
        text = text if isinstance(text, str) else json.dumps(text)
        replies = (self.redact(text),)
        options = first_token_options(reply.raw)
        if options is None:
            return Verdict("unsure", None, None, NO_LOGPROBS, rendered, replies, key,
                           self.model_name, tokens=reply.tokens.total, storable=False)
        problem = impossible(options)
        if problem is not None:  # a protocol deviation, not evidence about the answer
            return Verdict("unsure", None, None, MALFORMED + problem, rendered, replies, key,
                           self.model_name, tokens=reply.tokens.total, storable=False)
        return Verdict("unsure", None, None, "", rendered, replies, key, self.model_name,
                       tokens=reply.tokens.total, reading=read_answers(options, kind))

    async def _ask(self, rendered: str, key: str, scale: float) -> Verdict:
        replies: list[str] = []
        tokens = 0
        problem = ""
        for i in range(self.config.max_attempts):
            body = self._body(rendered, self.config.seed + i, JUDGE_MAX_TOKENS)
            if self._response_format:
                body["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": "verdict", "strict": True, "schema": VERDICT_SCHEMA}}
            try:
                reply = await self.model.complete(body)
            except EndpointError as exc:
                if self._response_format and exc.status in (400, 422):
                    # a server that does not take response_format: ask plainly, from now on
                    self._response_format = False
                    continue
                return Verdict("error", None, None, f"the judge's endpoint failed: "
                               f"{exc.kind}: {exc.message}", rendered, tuple(replies), key,
                               self.model_name, tokens=tokens)
            self.asked += 1
            tokens += reply.tokens.total
            self.tokens += reply.tokens.total
            text = reply.message.get("content") or ""  # text or text parts (checked)
            text = text if isinstance(text, str) else "".join(p["text"] for p in text)
            replies.append(self.redact(text))
            try:
                verdict, score, confidence, reason = read_reply(text, scale)
            except Unreadable as exc:
                problem = str(exc)
                continue
            p_pass = confidence if verdict == "pass" else 1 - confidence
            if confidence < self.config.min_confidence:
                return Verdict("unsure", score, confidence,
                               f"the judge was not confident enough ({confidence:.2f} < "
                               f"{self.config.min_confidence:.2f}): {reason}", rendered,
                               tuple(replies), key, self.model_name, tokens=tokens,
                               p_pass=p_pass)
            return Verdict(verdict, score, confidence, reason, rendered, tuple(replies), key,
                           self.model_name, tokens=tokens, p_pass=p_pass)
        return Verdict("unsure", None, None,
                       f"the judge's reply could not be read after {len(replies)} "
                       f"tries ({problem})", rendered, tuple(replies), key, self.model_name,
                       tokens=tokens)

    # -- the cache: one JSON file per question, written atomically, redacted

    def _path(self, key: str) -> Path:
        assert self.config.cache_dir is not None  # only called when use_cache is set
        return self.config.cache_dir / key[:2] / f"{key}.json"

    def _load(self, key: str) -> Verdict | None:
        """The cached answer to the question ``key``, checked before it is used
        (dsl/store/cachefile.py): None when there is none, or when the file is damaged —
        then one line says so, and the answer is written again once the judge is asked."""
        path = self._path(key)
        try:
            raw = read_cache(path, MAX_CACHE_FILE_BYTES)
            if raw is None:
                return None
            return _cached_verdict(raw, key)
        except Damaged as exc:
            remove_damaged(path)
            say_damaged("the judge's answer in its cache", path, str(exc),
                        WRITTEN_AGAIN if self.ask_missing else
                        "it was ignored (recheck asks the judge, and writes it again, only "
                        "with --judge)")
            return None

    def _store(self, v: Verdict) -> None:
        path = self._path(v.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"schema_version": SCHEMA_VERSION, "key": v.key, "model": v.model,
                "status": v.status, "score": v.score, "confidence": v.confidence,
                "reason": v.reason, "prompt": v.prompt, "replies": list(v.replies),
                "tokens": v.tokens, "p_pass": v.p_pass,
                "logprobs": v.reading.to_json() if v.reading is not None else None,
                "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(self.redact(json.dumps(data, indent=1)), "utf-8")  # ASCII: \ud83d too
        os.replace(tmp, path)

    def stats(self) -> JudgeStats:
        """What it was asked so far (run.json keeps it)."""
        return JudgeStats(self.asked, self.cache_hits, self.tokens,
                          None if self.ask_missing else self.missing)
