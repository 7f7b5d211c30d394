"""Source: reading and checking the files people write.

In: a path. Out: a :class:`~dsl.source.load.Document` (plain data with the ``Span`` of
every value), located ``Diagnostic``\\ s from the JSON Schemas (``validate``) and which
places are sound (``Shape``).

``load`` → ``validate``; ``schemacheck`` is the one JSON Schema engine (jsonschema-rs says
whether a value is valid, jsonschema words what it rejects) for every stage, ``suitefile``
finds a suite's scenarist.yaml, ``schemawords`` are the words the schemas share, ``resources``
finds ``schemas/`` and ``grammar/`` in a checkout or a wheel, ``saferegex`` compiles and
runs the regular expressions people write (bounded, with located errors).

Its layer is below every stage: ``source`` reaches none of the later ones, directly or
through another package (``[tool.importlinter]`` in pyproject.toml, ``lint-imports``).
"""
