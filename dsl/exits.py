"""The exit codes of ``scenarist`` (docs/cli.md), in one place.

* 0 — every scenario met its ``min_pass`` (``lint``: no errors);
* 1 — a scenario failed (``lint``: errors were found; ``diff``, and ``run`` with
  ``--fail-on-regression``: a scenario regressed; ``lsp``: the editor left without asking
  the server to shut down);
* 2 — invalid input or usage: the diagnostics are printed, nothing was run;
* 3 — endpoint errors left a scenario without a verdict (e.g. the endpoint could not be
  reached at all); ``merge``: a shard is missing, so its scenarios have no verdict (unless
  ``--allow-missing``);
* 4 — ``runs`` and ``history``: the history could not be read or written (a run never
  fails for its history: it warns);
* 130 — interrupted with Ctrl-C (what completed is kept and reported).
"""

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INPUT = 2
EXIT_NO_VERDICT = 3
EXIT_HISTORY = 4
EXIT_INTERRUPTED = 130
