"""Results: what a run folder says, for people and for CI.

In: a run folder (plan.json, results.jsonl, run.json through ``dsl/store/``). Out: the
``Summary`` (``summarize``, with every statistic from ``stats``), report.html (``report``),
junit.xml, summary.md and annotations (``cioutputs``), the terminal's lines (``terminal``),
comparisons against a baseline (``baseline``), ``recheck`` (the current checks on stored
transcripts) and the ``conformance`` certificate.

Imports go one way: ``results`` may import every other stage; none imports it
(``tests/e2e/test_imports.py``).
"""
