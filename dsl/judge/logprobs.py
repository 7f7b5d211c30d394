"""Verdicts from token probabilities: the maths of ``judge.mode: logprobs``.

The judge is asked for one token — ``yes`` or ``no``, or one digit ``0``–``9`` — and the
reply is read from the probabilities the server reports for its first token, not from its
words::

    reply JSON ──first_token_options──▶ [(token, logprob), ...]   (top_logprobs)
               ──impossible──▶ what makes them malformed (a log-probability above 0)
               ──read_answers──▶ Reading      (log-mass of each answer, summed over spellings)
               ──decide(temperature, ...)──▶ Decision   (status, P(pass), score, reason)

Calibration is temperature scaling: each answer's log-mass is divided by the temperature
before normalising, so T > 1 softens an over-confident judge and T < 1 sharpens a timid
one. Everything here is a pure function of numbers, so ``judge-check --calibrate`` fits the
temperatures with the very functions a run decides with.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import Calibration, Kind

YES_NO: tuple[str, str] = ("yes", "no")
DIGITS: tuple[str, ...] = tuple(str(d) for d in range(10))
TOP_LOGPROBS = 20  # asked for; the most OpenAI allows, and llama.cpp and vLLM give it
MIN_ANSWER_MASS = 0.5  # below it, the first token is mostly something else: unsure
EPSILON = 1e-9  # boundaries: a probability of 0.8 computed through logs is 0.7999999999999999
# A log-probability is at most 0, and a token's alternatives hold at most all of its
# probability; servers round (llama.cpp reports 0.0 for a sure token), hence the slack.
# Above it the reply is malformed: no verdict can be read from it.
LOGPROB_SLACK = 1e-3
MALFORMED = "the judge's reply was malformed, so no verdict can be read from it: "
_PUNCTUATION = " \t\r\n.,;:!?\"'`*_()[]{}<>"


@dataclass(frozen=True, slots=True)
class Reading:
    """What the first reply token says: the log probability mass of each answer (``yes``,
    ``no``; or ``0`` … ``9``), summed over its spellings (``Yes``, `` yes``, ``YES.``…);
    ``None`` for an answer with no spelling among the top tokens."""

    kind: Kind
    log_mass: tuple[float | None, ...]  # in the order of YES_NO or DIGITS
    likeliest: str  # the likeliest first token, as the server wrote it

    @property
    def answers(self) -> tuple[str, ...]:
        return YES_NO if self.kind == "yes_no" else DIGITS

    @property
    def mass(self) -> float:
        """The share of the first token's probability that went to the answers."""
        return sum(math.exp(x) for x in self.log_mass if x is not None)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "likeliest": self.likeliest,
                "log_mass": dict(zip(self.answers, self.log_mass, strict=True))}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reading:
        kind: Kind = "digits" if data.get("kind") == "digits" else "yes_no"
        masses = data.get("log_mass") or {}
        answers = YES_NO if kind == "yes_no" else DIGITS
        return cls(kind, tuple(_float_or_none(masses.get(a)) for a in answers),
                   str(data.get("likeliest", "")))


@dataclass(frozen=True, slots=True)
class Decision:
    """A verdict read from a Reading, at one temperature."""

    status: str  # pass | fail | unsure
    p_pass: float | None  # the judge's probability that the question is answered pass
    confidence: float | None  # yes/no: the probability of the verdict given (the larger)
    score: float | None  # yes/no: P(yes); digits: the probability-weighted score
    reason: str


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


# ----------------------------------------------------------------------- reading a reply


def first_token_options(raw: Mapping[str, Any]) -> list[tuple[str, float]] | None:
    """The first reply token's alternatives, ``[(token, logprob)]``, from a chat-completions
    reply; ``None`` when the reply carries no logprobs. Leading tokens that are only
    whitespace are skipped (some chat templates open the reply with a newline)."""
    choices = raw.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    logprobs = choices[0].get("logprobs")
    if not isinstance(logprobs, dict):
        return None
    content = logprobs.get("content")
    if isinstance(content, list):
        entries = [e for e in content if isinstance(e, dict)]
        spoken = [e for e in entries if str(e.get("token", "")).strip()]
        if not (spoken or entries):
            return None
        entry = (spoken or entries)[0]
        options = [(str(t["token"]), float(t["logprob"]))
                   for t in entry.get("top_logprobs") or []
                   if isinstance(t, dict) and "token" in t and _is_number(t.get("logprob"))]
        if not options and "token" in entry and _is_number(entry.get("logprob")):
            options = [(str(entry["token"]), float(entry["logprob"]))]
        return options or None
    tops = logprobs.get("top_logprobs")  # the legacy completions shape: [{token: logprob}]
    if isinstance(tops, list) and tops and isinstance(tops[0], dict):
        options = [(str(k), float(v)) for k, v in tops[0].items() if _is_number(v)]
        return options or None
    return None


def impossible(options: Sequence[tuple[str, float]]) -> str | None:
    """What makes a first token's alternatives impossible (a log-probability above 0, or
    probabilities that add up to more than 1), in words; None when nothing does."""
    token, worst = max(options, key=lambda o: o[1])
    if worst > LOGPROB_SLACK:
        return (f"its token {json.dumps(token, ensure_ascii=False)} has the log-probability "
                f"{worst:g}, and a log-probability is never above 0")
    total = logsumexp([lp for _, lp in options])
    if total > LOGPROB_SLACK:
        return (f"the probabilities of its first token's alternatives add up to "
                f"{math.exp(total):.2f}, more than 1")
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) \
        and math.isfinite(value)


def spelling(token: str) -> str:
    """The answer a token spells: ``" Yes."`` → ``yes``, ``"7"`` → ``7``."""
    return token.strip(_PUNCTUATION).lower()


def logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def read_answers(options: Sequence[tuple[str, float]], kind: Kind) -> Reading:
    """Sum the probability of every spelling of each answer among the first token's
    alternatives."""
    answers = YES_NO if kind == "yes_no" else DIGITS
    found: dict[str, list[float]] = {}
    for token, logprob in options:
        word = spelling(token)
        if word in answers:
            found.setdefault(word, []).append(logprob)
    likeliest = max(options, key=lambda o: o[1])[0] if options else ""
    return Reading(kind, tuple(logsumexp(found[a]) if a in found else None for a in answers),
                   likeliest)


# ----------------------------------------------------------------------- deciding


def distribution(reading: Reading, temperature: float) -> tuple[float, ...]:
    """The answers' probabilities after calibration: each log-mass divided by the
    temperature, then normalised over the answers (an absent answer has probability 0)."""
    scaled = [None if x is None else x / temperature for x in reading.log_mass]
    present = [x for x in scaled if x is not None]
    if not present:
        return tuple(0.0 for _ in scaled)
    norm = logsumexp(present)
    return tuple(0.0 if x is None else math.exp(x - norm) for x in scaled)


def digit_score(probabilities: Sequence[float], scale: float) -> float:
    """Σ p(d)·d, on the question's scale: ÷ 9 for 0..1, × 10/9 for 0..10."""
    return sum(p * d for d, p in enumerate(probabilities)) * scale / 9


def at_least(value: float, bound: float) -> bool:
    return value >= bound - EPSILON


def probability_of_pass(reading: Reading, temperature: float, scale: float = 1,
                        threshold: float | None = None) -> float | None:
    """The judge's probability that the question is answered pass: P(yes); for digits,
    the probability of a digit whose score reaches the threshold."""
    probs = distribution(reading, temperature)
    if reading.kind == "yes_no":
        return probs[0]
    if threshold is None:
        return None
    return sum(p for d, p in enumerate(probs) if at_least(d * scale / 9, threshold))


def _calibrated(temperature: float, before: float, after: float, what: str) -> str:
    if abs(temperature - 1) < EPSILON:
        return ""
    return f" ({what} {before:.2f} before calibration at temperature {temperature:g})"


def _not_an_answer(reading: Reading) -> str:
    what = "yes or no" if reading.kind == "yes_no" else "a digit"
    holders = "yes and no hold" if reading.kind == "yes_no" else "the digits hold"
    return (f"the judge's first token was not {what}: {holders} {reading.mass:.0%} of its "
            f"probability, less than half (its likeliest first token: "
            f"{json.dumps(reading.likeliest, ensure_ascii=False)})")


def decide_yes_no(reading: Reading, temperature: float, min_confidence: float) -> Decision:
    """pass when P(yes) ≥ min_confidence, fail when P(no) ≥ min_confidence, else unsure."""
    if reading.mass < MIN_ANSWER_MASS:
        return Decision("unsure", None, None, None, _not_an_answer(reading))
    p_yes, p_no = distribution(reading, temperature)
    raw_yes, raw_no = distribution(reading, 1.0)
    confidence = max(p_yes, p_no)
    if at_least(p_yes, min_confidence):
        return Decision("pass", p_yes, confidence, p_yes, f"P(yes) = {p_yes:.2f} from the "
                        f"judge's token probabilities"
                        f"{_calibrated(temperature, raw_yes, p_yes, 'P(yes)')}")
    if at_least(p_no, min_confidence):
        return Decision("fail", p_yes, confidence, p_yes, f"P(no) = {p_no:.2f} from the "
                        f"judge's token probabilities"
                        f"{_calibrated(temperature, raw_no, p_no, 'P(no)')}")
    return Decision("unsure", p_yes, confidence, p_yes,
                    f"the judge was not sure enough: P(yes) = {p_yes:.2f} and P(no) = "
                    f"{p_no:.2f} from its token probabilities"
                    f"{_calibrated(temperature, raw_yes, p_yes, 'P(yes)')}; neither "
                    f"reaches min_confidence {min_confidence:.2f}")


def decide_digits(reading: Reading, temperature: float, scale: float,
                  threshold: float | None) -> Decision:
    """The probability-weighted score; pass when it reaches the threshold. Unsure when the
    digits hold less than half of the first token's probability."""
    if reading.mass < MIN_ANSWER_MASS:
        return Decision("unsure", None, None, None, _not_an_answer(reading))
    probs = distribution(reading, temperature)
    score = digit_score(probs, scale)
    raw = digit_score(distribution(reading, 1.0), scale)
    expected = score * 9 / scale
    reason = (f"the probability-weighted digit is {expected:.2f} of 9, from the judge's token "
              f"probabilities{_calibrated(temperature, raw, score, 'score')}")
    if threshold is None:
        return Decision("pass", None, None, score, reason)
    p_pass = probability_of_pass(reading, temperature, scale, threshold)
    assert p_pass is not None  # digits with a threshold
    # no confidence: the verdict is the score's, and P(pass) (the share of the digits that
    # reach the threshold) may well be under one half while the mean reaches it
    return Decision("pass" if at_least(score, threshold) else "fail", p_pass, None, score,
                    reason)


def decide(reading: Reading, calibration: Calibration, min_confidence: float,
           scale: float = 1, threshold: float | None = None) -> Decision:
    present = [(a, x) for a, x in zip(reading.answers, reading.log_mass, strict=True)
               if x is not None]
    problem = impossible(present) if present else None
    if problem is not None:  # a reading kept from such a reply (the cache)
        return Decision("unsure", None, None, None, MALFORMED + problem)
    temperature = calibration.of(reading.kind)
    if reading.kind == "yes_no":
        return decide_yes_no(reading, temperature, min_confidence)
    return decide_digits(reading, temperature, scale, threshold)
