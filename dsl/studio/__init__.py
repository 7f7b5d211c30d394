"""The studio: ``scenarist studio [DIR]`` — the suite at DIR behind a local web page for
people who do not program: set up the suite (targets, defaults, the world's tables, the
tools), browse its scenarios, edit one as YAML or as a form, see lint's problems as they
type, save without losing anything, try a conversation, run, open the report.

It adds no rule of its own; every answer comes from the stage the command line calls::

    the page ──HTTP (one-time code → session key in a header; Host, Origin: server.py)──▶
        browse  ── discover (as run and lint) + the history's last verdicts ── workspace.py
        lint    ── lint.lint_text / load_suite on the unsaved text
        form    ── ruamel round-trip edits written back line by line ─────── yamltext.py
                   the scenario (form.py), the suite (suiteform.py), tables (tables.py),
                   a check's settings from the registry's schemas (fields.py)
        save    ── atomic, over the version the page opened; only the suite's own files
        try     ── tryout.play with the person on the page ─────────────────── trying.py
        run     ── pipeline.run_suite in a thread, progress as server-sent events ─ runs.py

What comes in: a folder with ``scenarist.yaml`` (or under one). What goes out: the files the
person saves (scenario files, ``scenarist.yaml``, the table files they name), and the run
folders and history entries ``scenarist run`` writes. The page itself (``static/``) is
built from ``frontend/`` (CodeMirror 6, bundled by esbuild; the sources and their lockfile
are not part of the wheel).

Starlette and Uvicorn are the optional extra ``scenarist[studio]``: nothing else in
Scenarist imports this package.
"""

INSTALL = "pip install 'scenarist[studio]'"
