"""The ``scenarist`` command: each command parses its options, calls one stage or the
pipeline (dsl/pipeline/), and prints. Exit codes: dsl/exits.py (docs/cli.md).

One module per family of commands, each registering its commands on :func:`main`
(``dsl/cli/common.py``, with what they share):

* :mod:`~dsl.cli.run` — ``run``, ``recheck``, ``report``, ``merge``, ``diff``;
* :mod:`~dsl.cli.authoring` — ``init``, ``lint``, ``plan``, ``try``, ``schema``, ``checks``;
* :mod:`~dsl.cli.judge` — ``judge-check``;
* :mod:`~dsl.cli.history` — ``runs list``, ``runs show``, ``history import``;
* :mod:`~dsl.cli.conformance` — ``conformance``;
* :mod:`~dsl.cli.serve` — ``mcp``, ``studio``;
* :mod:`~dsl.cli.importing` — ``import``;
* :mod:`~dsl.cli.editor` — ``lsp``.

Each imports at its top only what its ``--help`` needs; a command imports its stages when it
runs (``scenarist run``'s start-up stays short).
"""

from . import (  # noqa: F401 (they register)
    authoring,
    conformance,
    editor,
    history,
    importing,
    judge,
    run,
    serve,
)
from .common import main

__all__ = ["main"]
