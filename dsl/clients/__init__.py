"""Clients: how each target is reached when it runs — the modules that talk to it.

In: a compiled :class:`~dsl.model.Target` and the run's
:class:`~dsl.targets.base.AgentContext`. Out: an :class:`~dsl.targets.base.Agent` (and, for
a model endpoint, a :class:`~dsl.targets.base.ChatModel`) that plays attempts.

``open`` is the table of how each ``kind:`` is opened (``OPENERS``; ``CLIENTS`` is what the
pipeline hands the run stage); ``openai`` talks to OpenAI-compatible endpoints and agent
services over one ``transport`` interface (h11 on Scenarist's own connections in ``http11``
for plain ``http://``, httpx for TLS and proxies); ``python`` runs your own agent in the process;
``ownloop`` is what ``http`` (one POST per turn) and ``command`` (one process per attempt)
share, with ``toolserver`` serving each attempt's fake tools over MCP and ``exchanges``
recording and replaying them; ``mcpserve`` is ``scenarist mcp``.

What a kind *is* (settings, schema, compile, description) is in ``dsl/targets/``, below
the compiler; the clients sit above the run stage (``dsl/execution/``: they play
conversations with its loop) and beside ``results``, which never imports them
(``[tool.importlinter]`` in pyproject.toml).
"""
