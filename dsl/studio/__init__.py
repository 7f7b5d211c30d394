"""The studio: ``scenarist studio [DIR]`` — the suite at DIR behind a local web page for
people who do not program: browse its scenarios, edit one as YAML or as a form, see lint's
problems as they type, save, try a conversation, run, open the report.

It adds no rule of its own; every answer comes from the stage the command line calls::

    the page ──HTTP (token, Host, Origin: server.py)──▶ the studio's API
        browse  ── discover (as run and lint) + the history's last verdicts ── workspace.py
        lint    ── lint.lint_buffer: the unsaved text linted as the file it will be
        form    ── ruamel round-trip edits of the text (comments kept) ──────── form.py
        save    ── the store's write_atomic; a file changed on disk is not overwritten
        try     ── tryout.play with the person on the page ─────────────────── tryout.py
        run     ── pipeline.run_suite in a thread, progress as server-sent events ─ runs.py

What comes in: a folder with ``scenarist.yaml`` (or under one). What goes out: the files the
person saves, and the run folders and history entries ``scenarist run`` writes. The page
itself (``static/``) is built from ``frontend/`` (CodeMirror 6, bundled by esbuild; the
sources and their lockfile are not part of the wheel).

Starlette and Uvicorn are the optional extra ``scenarist[studio]``: nothing else in
Scenarist imports this package.
"""

INSTALL = "pip install 'scenarist[studio]'"
