"""Build tooling: the generators of the files committed beside the code, run by hand after
a change and checked by tests for drift. Nothing that ``scenarist`` runs imports this
package.

* ``python -m dsl._buildtools.schemagen`` — ``schemas/*.schema.json`` from the check
  registry and the format (:mod:`dsl._buildtools.schemagen`).
* ``python -m dsl._buildtools.docsgen`` — ``docs/checks.md`` from the check registry, and
  the diagnostic codes' reference in ``docs/lint.md`` from :mod:`dsl._buildtools.codedocs`
  (every code with a wrong and a fixed example).
"""
