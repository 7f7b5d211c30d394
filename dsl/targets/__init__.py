"""Targets: the systems under test, one module per way of reaching one.

Everything a ``kind:`` is lives here: its settings (``settings``), its schema and its entry
in ``KINDS`` (``kinds``), and the module that talks to it (``openai``, ``python``,
``cassette`` for ``replay``). An open target is an ``Agent`` (``base``); a model endpoint is
also a ``ChatModel`` (it can judge, play a simulated user and serve python agents). Nothing
outside this package branches on ``kind``.
"""
