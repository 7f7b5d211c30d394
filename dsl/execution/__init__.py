"""Execution: the plan played against the targets.

In: a :class:`~dsl.model.Plan`. Out: one ``AttemptRecord`` per attempt, appended to
``results.jsonl`` as it ends (``dsl/store/``).

``run`` drives the attempts in the order ``schedule`` chooses, opening each target through
the :class:`~dsl.targets.base.Clients` it is handed; the agent ``loop`` plays one attempt
against a model target, ``conversation`` plays the person's side (turns, confirm and
cancel, the simulated user, or a person at the terminal for ``scenarist try``, which is
``dsl/pipeline/tryout.py``).

Its layer is above the compiler and below the clients (which play conversations with
``loop`` and ``conversation``), the results and the pipeline: ``execution`` never reaches
those, directly or through any chain (``[tool.importlinter]`` in pyproject.toml,
``lint-imports``).
"""
