"""The expression language's safety limits, in one place (docs/expressions.md lists them).

An expression is written by a person and evaluated on text a model wrote: both are
untrusted. The grammar has no loops and no way to reach Python objects; these limits stop
the remaining ways to spend time or memory.
"""

from __future__ import annotations

MAX_EXPR_CHARS = 2_000
"""Characters in one expression (X305). A long check is easier to read split in two."""

MAX_DEPTH = 64
"""Nesting of an expression's parts: brackets, calls, fields and operators (X305)."""

MAX_LITERAL_CHARS = 1_000
"""Characters in one quoted text inside an expression (X305)."""

MAX_NUMBER_CHARS = 40
"""Characters in one number written in an expression (X305)."""

MAX_TEXT_CHARS = 1_000_000
"""Characters in a text an expression builds while it runs (with ``+``); more is an error."""

MAX_JSON_CHARS = 1_000_000
"""Characters of text that ``json(...)`` or a tool's output will parse as JSON."""

MAX_ITEMS_VISITED = 1_000_000
"""List items one evaluation may visit in conditions (``calls[...]``, ``all``, ...)."""

MAX_EVAL_SECONDS = 1.0
"""Time one evaluation may spend in conditions over lists before it is stopped."""
