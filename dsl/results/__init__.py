"""Results: what a run folder says, for people and for CI.

In: a run folder (plan.json, results.jsonl, run.json through ``dsl/store/``). Out: the
``Summary`` (``summarize``, with every statistic from ``stats``), report.html (``report``),
junit.xml, summary.md and annotations (``cioutputs``), the terminal's lines (``terminal``),
comparisons against a baseline (``baseline``), the ``conformance`` certificate and the
history's ``entries`` of a run.

Its layer is above the run stage: ``results`` may import the stages before it, never the
clients (its sibling layer) nor the pipeline, and no stage below imports it
(``[tool.importlinter]`` in pyproject.toml, ``lint-imports``). ``recheck`` — the current
checks on stored transcripts — runs stages again, so it is orchestration:
``dsl/pipeline/recheck.py``.
"""
