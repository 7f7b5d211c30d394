r"""The LLM judge, and how far to trust it.

* :mod:`~dsl.judge.ask` — asking the judge about an attempt: prompts, the cache, reading
  its reply into a verdict (pass, fail or unsure);
* :mod:`~dsl.judge.logprobs` — verdicts from token probabilities (``mode: logprobs``);
* :mod:`~dsl.judge.calibration` — agreement, Cohen's kappa, Brier score, calibration error,
  and fitting a calibration temperature;
* :mod:`~dsl.judge.validation` — what judge-check measured, kept for runs and reports.

In: the suite's compiled ``judge:`` (:class:`~dsl.model.JudgeConfig`, with its
:class:`~dsl.model.Prompt`\ s and :class:`~dsl.model.Calibration`), a model endpoint (a
:class:`~dsl.targets.base.ChatModel`), an attempt. Out: a ``Verdict`` per question, the
figures of a measurement. ``scenarist judge-check`` itself — asking labelled questions
and keeping what it measured — is orchestration: ``dsl/pipeline/judgecheck.py``.
"""

from .ask import PROMPT_NAMES, Judge, Unreadable, context, read_reply

__all__ = ["PROMPT_NAMES", "Judge", "Unreadable", "context", "read_reply"]
