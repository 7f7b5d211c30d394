"""Execution: the plan played against the targets.

In: a :class:`~dsl.model.Plan`. Out: one ``AttemptRecord`` per attempt, appended to
``results.jsonl`` as it ends (``dsl/store/``).

``run`` drives the attempts in the order ``schedule`` chooses; the agent ``loop`` plays one
attempt against a model target, ``conversation`` plays the person's side (turns, confirm and
cancel, the simulated user), ``toolcalls`` classifies calls for tool-call F1, and
``tryout`` is ``scenarist try`` (a person at the terminal instead of a script).

Imports go one way: ``execution`` imports ``source`` and ``compiler``, never ``results``
(``tests/e2e/test_imports.py``).
"""
