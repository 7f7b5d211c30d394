"""Targets: what a system under test is, as the compiler and every later stage see it.

In: a validated entry of ``targets:`` in scenarist.yaml. Out: its settings (one frozen
dataclass per kind, ``dsl/settings.py``, held by ``Target.config``), with located
diagnostics; the words that describe it; what a model endpoint puts in every request.

``kinds`` is the one table of what each ``kind:`` is (``KINDS``: schema, compile,
describe, written form); ``base`` the protocols every open target follows (``Agent``,
``ChatModel``, ``Clients``) and the one reader of a reply; ``cassette`` the file a
``replay`` target answers from (read, recorded, locked).

How a target is *opened* and talked to is ``dsl/clients/`` (above the run stage): nothing
here imports a client or the run stage, so compiling a suite never does. Nothing outside
``dsl/targets/`` and ``dsl/clients/`` branches on ``kind``.
"""
