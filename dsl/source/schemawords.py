"""Schema words: JSON Schema problems said for people, shared by two stages.

:mod:`dsl.source.validate` explains what is wrong with a scenario file or ``scenarist.yaml``
against our schemas; :func:`dsl.source.schemacheck.problems` what is wrong with a tool
call's arguments against the author's ``input_schema``. Both name a place in the data the
same way (:func:`describe_path`). And the help an editor shows for
a node of our schemas (:func:`schema_doc`), for the checks and the target kinds that
declare their own keys. This module is a leaf: it imports nothing of Scenarist's, so any
stage can use it without importing another.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# The keys a check item may hold beside its check, which change how the check counts or is
# shown: ``- {not_calls: create_refill_request, always: true, name: never refills}``. The
# check is the one key that is not one of these (dsl/checks/registry.py documents them).
CHECK_MODIFIERS: tuple[str, ...] = ("always", "name", "allow")


def describe_path(path: Iterable[str | int]) -> str:
    """A place in the data, said for people: ``'action' in given.tools (item 1)``,
    ``the check 'calls'``, ``'args' in the check 'calls'``."""
    p = tuple(path)
    if not p:
        return "the file"
    if len(p) >= 3 and p[0] == "then" and isinstance(p[1], int):
        if p[2] in CHECK_MODIFIERS and len(p) == 3:
            return f"'{p[2]}' of the check in item {p[1] + 1} of then"
        check = f"the check '{p[2]}'"
        return check if len(p) == 3 else f"'{_dotted(p[3:])}' in {check}"
    if len(p) >= 2 and p[0] == "when" and isinstance(p[1], int):
        turn = f"turn {p[1] + 1}"
        if len(p) >= 5 and p[2] == "then" and isinstance(p[3], int):
            if p[4] in CHECK_MODIFIERS and len(p) == 5:
                return f"'{p[4]}' of the check in item {p[3] + 1} of {turn}'s then"
            check = f"the check '{p[4]}' of {turn}"
            return check if len(p) == 5 else f"'{_dotted(p[5:])}' in {check}"
        if len(p) == 2:
            return turn
        return f"'{_dotted(p[2:])}' in {turn}"
    last, parent = p[-1], p[:-1]
    if isinstance(last, int):
        return f"item {last + 1} of {_dotted(parent)}" if parent else f"item {last + 1}"
    return f"'{last}' in {_dotted(parent)}" if parent else f"'{last}'"


def _dotted(path: tuple[str | int, ...]) -> str:
    out = ""
    for k in path:
        out += f" (item {k + 1})" if isinstance(k, int) else (f".{k}" if out else k)
    return out


def schema_doc(text: str, *examples: Any) -> dict[str, Any]:
    """The help an editor shows for a schema node: ``description`` and
    ``markdownDescription`` (the same text), and ``examples`` when given. Spread it into
    the node: ``{"type": "string", **schema_doc("The tool's name.", "book")}``."""
    out: dict[str, Any] = {"description": text, "markdownDescription": text}
    if examples:
        out["examples"] = list(examples)
    return out
