"""Vocabulary: what an author can write at a place, in the words the docs use — for the
faces that help people write scenarios as they type (``scenarist studio``'s editor,
``scenarist lsp`` in any editor). They add no rule of their own: every name and every
explanation here comes from where the docs are generated from.

* the checks (:func:`checks`): each one's one-line doc, its examples, what it takes and
  its parameters, from the check registry (``dsl/checks/registry.py``, as docs/checks.md);
* the keys of a scenario or of ``scenarist.yaml`` at a place (:func:`keys_at`), with
  their descriptions and examples, from the JSON Schemas (``schemas/``);
* the expression language's functions and names (:func:`functions`, :func:`names`),
  from its library (``dsl/expr/``, as docs/expressions.md);
* the diagnostic codes (:func:`code_words`), from ``dsl.errors.CODES`` (as docs/lint.md);
* a suite's tools and targets in words (:func:`tool_words`, :func:`target_words`).

Pure lookups over the registries: nothing here reads a file but the bundled schemas.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from ..checks import REGISTRY
from ..checks.registry import MODIFIERS
from ..errors import CODES, docs_anchor
from ..expr.functions import FUNCTIONS
from ..expr.types import GLOBALS
from ..model import Target, ToolSpec, WorldTable
from ..source.resources import load_schema
from ..targets.kinds import describe

Takes = Literal["flag", "text", "other"]
ITEM = 0  # in a path of keys: an item of a list (any index)
Path = tuple[str | int, ...]

# The checks whose parameter names tools: the tool, a list of tools, or {name: TOOL}.
TOOL_CHECKS = frozenset({"calls", "not_calls", "calls_only", "calls_in_order",
                         "asks_to_confirm", "tool_correctness"})


@dataclass(frozen=True, slots=True)
class CheckWords:
    """A check as an editor offers it: its name, one-line doc, examples, what it takes
    (``flag``: nothing, ``text``: a text, ``other``: a mapping or a list) and the keys of
    its mapping form, each with what it means."""

    name: str
    doc: str
    examples: tuple[str, ...]
    takes: Takes
    params: Mapping[str, str]
    judge: bool
    group: str

    def explanation(self) -> str:
        """The check in plain words (markdown): the doc, its parameters, an example."""
        out = [f"**{self.name}** — {self.doc}"]
        if self.params:
            out.append("\n".join(f"- `{k}`: {v}" if v else f"- `{k}`"
                                 for k, v in self.params.items()))
        if self.examples:
            out.append("For example:\n\n```yaml\n- " + "\n- ".join(self.examples) + "\n```")
        if self.judge:
            out.append("Asked of the suite's judge (a model).")
        return "\n\n".join(out)


def check_takes(name: str) -> Takes:
    """What a check's parameter is: ``flag`` (nothing: ``- valid_args``), ``text`` (a
    value: ``- contains: "18:00"``) or ``other`` (a mapping or a list)."""
    check = REGISTRY.get(name)
    if check is None:
        return "other"
    schema = dict(check.schema)
    if "const" in schema:
        return "flag"
    types = schema.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    return "text" if "string" in types else "other"


def parameters(schema: Any, out: dict[str, str] | None = None) -> dict[str, str]:
    """The keys of a JSON Schema's mapping form (through ``then``/``else``/``anyOf``/
    ``oneOf``/``allOf``) and what each means: a check's parameters."""
    out = {} if out is None else out
    if isinstance(schema, dict):
        for name, sub in (schema.get("properties") or {}).items():
            out.setdefault(name, str(sub.get("description") or "") if isinstance(sub, dict)
                           else "")
        for key in ("then", "else", "anyOf", "oneOf", "allOf"):
            more = schema.get(key)
            for sub in more if isinstance(more, list) else [more]:
                parameters(sub, out)
    return out


@cache
def checks() -> Mapping[str, CheckWords]:
    """Every registered check, in the registry's order."""
    return {c.name: CheckWords(c.name, c.doc, tuple(c.examples), check_takes(c.name),
                               parameters(c.schema), c.judge, c.group)
            for c in REGISTRY.values()}


def modifiers() -> dict[str, str]:
    """What a check item may hold beside its check (``always``, ``name``)."""
    return {k: str(v.get("description", "")) for k, v in MODIFIERS.items()}


# ---------------------------------------------------------------- schema keys


@dataclass(frozen=True, slots=True)
class KeyWords:
    """A key the schema allows at a place: what it means, an example, its allowed values."""

    name: str
    doc: str
    example: Any = None
    has_example: bool = False
    values: tuple[Any, ...] = ()  # its enum, when it has one

    def written(self) -> str:
        """``key: example`` as YAML (a flow value on one line), or ``key: ``."""
        if not self.has_example:
            return f"{self.name}: "
        return f"{self.name}: {flow_yaml(self.example)}"


def flow_yaml(value: Any) -> str:
    """A value on one line of YAML: plain where it reads back as itself, else JSON."""
    if isinstance(value, str) and value and value.strip() == value and not any(
            c in value for c in ":#{}[],&*!|>'\"%@`") and value.lower() not in (
            "true", "false", "null", "yes", "no", "on", "off", "~"):
        try:
            float(value)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False)


SchemaName = Literal["scenario.schema.json", "suite.schema.json"]


def schema_of(suite_file: bool) -> SchemaName:
    """The schema of ``scenarist.yaml`` (``suite_file``) or of a scenario."""
    return "suite.schema.json" if suite_file else "scenario.schema.json"


def keys_at(schema_name: SchemaName, path: Path) -> dict[str, KeyWords]:
    """The keys the schema allows in the mapping at ``path`` (keys, and :data:`ITEM` for
    a list's item) — ``()``: the file's top level; ``("given",)``; ``("when", ITEM)``: a
    turn — with their words. Empty when the schema says nothing of that place."""
    out: dict[str, KeyWords] = {}
    for node in _nodes_at(schema_name, path):
        for name, sub in (node.get("properties") or {}).items():
            if name in out or not isinstance(sub, dict):
                continue
            out[name] = key_words(schema_name, name, sub)
    return out


def value_words(schema_name: SchemaName, path: Path) -> KeyWords | None:
    """The words of the value at ``path`` (its key's description, its enum), or None."""
    if not path or not isinstance(path[-1], str):
        return None
    for node in _nodes_at(schema_name, path[:-1]):
        sub = (node.get("properties") or {}).get(path[-1])
        if isinstance(sub, dict):
            return key_words(schema_name, path[-1], sub)
    return None


def key_words(schema_name: SchemaName, name: str, node: Mapping[str, Any]) -> KeyWords:
    resolved = list(_expand(schema_name, node))
    doc = next((str(n["description"]) for n in resolved if n.get("description")), "")
    examples = next((n["examples"] for n in resolved if n.get("examples")), None)
    values = tuple(v for n in resolved for v in n.get("enum", ()))
    return KeyWords(name, doc, examples[0] if examples else None, bool(examples), values)


def _nodes_at(schema_name: SchemaName, path: Path) -> list[Mapping[str, Any]]:
    root = load_schema(schema_name)
    nodes: list[Mapping[str, Any]] = list(_expand(schema_name, root))
    for step in path:
        following: list[Mapping[str, Any]] = []
        for node in nodes:
            if step == ITEM:
                subs = [node.get("items")]
            else:
                props = node.get("properties") or {}
                subs = [props[step]] if step in props else [node.get("additionalProperties")]
            for sub in subs:
                if isinstance(sub, dict):
                    following.extend(_expand(schema_name, sub))
        nodes = following
    return nodes


def _expand(schema_name: SchemaName, node: Mapping[str, Any],
            depth: int = 0) -> Iterator[Mapping[str, Any]]:
    """The node, what its ``$ref`` points at, and its ``if``/``then``/``else``/``anyOf``/
    ``oneOf``/``allOf`` branches: every node whose keys apply at its place."""
    if depth > 12:
        return
    yield node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = load_schema(schema_name)
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        if isinstance(target, dict):
            yield from _expand(schema_name, target, depth + 1)
    for key in ("then", "else", "anyOf", "oneOf", "allOf"):
        more = node.get(key)
        for sub in more if isinstance(more, list) else [more]:
            if isinstance(sub, dict):
                yield from _expand(schema_name, sub, depth + 1)


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class ExprWords:
    """A function or a name of the expression language, as docs/expressions.md says it."""

    name: str
    kind: Literal["function", "name"]
    signature: str
    doc: str
    examples: tuple[tuple[str, str], ...]

    def explanation(self) -> str:
        out = f"`{self.signature}`\n\n{self.doc}"
        if self.examples:
            out += "\n\n" + "\n".join(f"- `{e}` — {means}" if means else f"- `{e}`"
                                       for e, means in self.examples)
        return out


@cache
def functions() -> Mapping[str, ExprWords]:
    """The expression library's functions (``count``, ``called``, …)."""
    return {f.name: ExprWords(f.name, "function", f.signature, f.doc, tuple(f.examples))
            for f in FUNCTIONS.values()}


@cache
def names() -> Mapping[str, ExprWords]:
    """The names an expression reads (``answer``, ``calls``, …)."""
    return {n: ExprWords(n, "name", n, m.doc, ((m.example, ""),) if m.example else ())
            for n, m in GLOBALS.items()}


# ---------------------------------------------------------------- codes, tools, targets


def code_words(code: str) -> str | None:
    """A diagnostic code in words, with where docs/lint.md explains it."""
    found = CODES.get(code)
    if found is None:
        return None
    return (f"**{found.id} {found.name}** — {found.summary}\n\n"
            f"docs/lint.md#{docs_anchor(found.id)}")


def tool_words(tool: ToolSpec, where: str) -> str:
    """A fake tool in words (markdown): its description, what it does, its arguments."""
    out = [f"**tool {tool.name}** ({where})"]
    if tool.description:
        out.append(tool.description)
    does = f"action: {tool.action}"
    if tool.confirm:
        does += " · the agent must ask the person to confirm before it runs"
    if tool.table is not None:
        does += f" · acts on the world table '{tool.table.table}'"
    out.append(does)
    if tool.input_schema:
        out.append("```json\n" + json.dumps(tool.input_schema, indent=2,
                                            ensure_ascii=False) + "\n```")
    return "\n\n".join(out)


def target_words(target: Target) -> str:
    """A target in words: its kind and what it runs."""
    return f"**target {target.name}** (kind: {target.kind})\n\n{describe(target)}"


def table_words(table: WorldTable, where: str) -> str:
    """A world table in words: where it is written, its rows and columns."""
    ids = [str(r["id"]) for r in table.rows if "id" in r][:8]
    out = [f"**table {table.name}** ({where}" +
           (f", from {table.file}" if table.file else "") + ")",
           f"{len(table.rows)} row(s); columns: " + ", ".join(f"`{c}`" for c in table.columns)]
    if ids:
        out.append("ids: " + ", ".join(f"`{i}`" for i in ids))
    return "\n\n".join(out)


def column_words(table: WorldTable, column: str) -> str:
    """A column of a world table in words, with a few of its values."""
    seen: list[str] = []
    for row in table.rows:
        if column in row and str(row[column]) not in seen:
            seen.append(str(row[column]))
        if len(seen) == 5:
            break
    values = ", ".join(f"`{v}`" for v in seen)
    return f"**column {column}** of the table '{table.name}'" + (
        f"\n\nvalues: {values}" if values else "")
