"""``scenarist lsp``: Scenarist's lint, completion, hover and navigation in any editor,
through the Language Server Protocol (pygls and lsprotocol, imported only here).

It adds no rule of its own; every answer comes from what the command line calls::

    the editor ──JSON-RPC (stdio or TCP: server.py)──▶ the server
        didOpen/didChange  ── lint.lint_text on the unsaved text, debounced ── diagnostics.py
        completion         ── place (where the cursor is) → slots → vocabulary ─ completion.py
        hover              ── the same place, the registries' words ─────────── hover.py
        definition, references, outline ── the loaded Document and Suite ──── navigation.py
        code actions       ── did-you-mean and missing keys, from lint's words ─ actions.py

Over TCP (``--tcp``, for debugging) it answers only its own user (``peer.py``).
``files.py`` keeps the open texts and each suite loaded once per version of its
``scenarist.yaml``; ``knowledge.py`` is one file as a request sees it (its text, its suite,
the tools and tables it defines). ``place.py`` and ``slots.py`` read a half-written YAML
text from its indentation; :mod:`dsl.compiler.vocabulary` holds the words, shared with
the studio.
"""
