"""The LLM judge, and how far to trust it.

* :mod:`~dsl.judge.ask` — asking the judge about an attempt: prompts, the cache, reading
  its reply into a verdict (pass, fail or unsure);
* :mod:`~dsl.judge.logprobs` — verdicts from token probabilities (``mode: logprobs``);
* :mod:`~dsl.judge.calibration` — agreement, Cohen's kappa, Brier score, calibration error,
  and fitting a calibration temperature;
* :mod:`~dsl.judge.check` — ``scenarist judge-check``: the judge against hand labels;
* :mod:`~dsl.judge.validation` — what judge-check measured, kept for runs and reports.
"""

from .ask import PROMPT_NAMES, Judge, JudgeConfig, Prompt, Unreadable, context, read_reply

__all__ = ["PROMPT_NAMES", "Judge", "JudgeConfig", "Prompt", "Unreadable", "context",
           "read_reply"]
