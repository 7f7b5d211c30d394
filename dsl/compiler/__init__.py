"""Compiler: from checked documents to the frozen execution plan.

In: the paths a command names. Out: a :class:`~dsl.model.Plan` (scenarios × targets, each
scenario with its compiled checks and fake tools) and every diagnostic of every file.

``discover`` (the files of each suite) → ``suite`` (``scenarist.yaml``) → ``cases`` (one
document per case) → ``compile`` (with ``faketools``, ``arguments``, ``templates`` in their
``sandbox``, the ``moment``, ``attachments`` and the suite's ``redact`` rules) → ``plan``
(plan.json's contents, fingerprints). ``lint`` is the compiler run for its diagnostics.

Its layer holds what compiling needs beside it — ``checks`` (each check's ``prepare``),
``targets`` (each kind's ``compile``), ``judge`` (the prompts) — and sits below the run
stage: the compiler never reaches ``execution``, ``results``, the clients or the pipeline,
directly or through any chain (``[tool.importlinter]`` in pyproject.toml,
``lint-imports``).
"""
