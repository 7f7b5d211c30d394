"""A fast yes/no JSON Schema check, compiled to Python code.

jsonschema explains *why* data is invalid and we need that for messages (``validate.py``);
but it spends 3–4 ms on a valid scenario to find nothing, while ``scenarist lint`` has a
budget of about one millisecond per file. Most files are valid, so validation goes in two
passes: :func:`compile_schema` turns a schema into a predicate that answers "valid?" with
the same semantics as ``jsonschema.Draft202012Validator`` (without format assertions, as
jsonschema's default) — one generated function per schema node, about 40 µs for a
scenario — and only data it rejects is given to jsonschema for the messages.

The compiler handles the keywords our schemas use — and the rest of the common ones —
and refuses (returns ``None``, so callers use jsonschema alone) any schema with a keyword
it does not implement, so it can never accept what jsonschema would reject. The tests
compare the two on generated data.

:func:`plainly_valid_schema` is the same idea for authors' ``input_schema``: a
conservative check that a schema is valid under the 2020-12 meta-schema, for the shapes
people write; anything else goes to ``check_schema``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Predicate = Callable[[Any], bool]

# The assertion and applicator keywords of JSON Schema 2020-12 that jsonschema implements
# (Draft202012Validator.VALIDATORS; a test keeps this list in step). A schema that uses
# one we do not compile is refused; any other key is an annotation and is ignored, as
# jsonschema ignores it.
VALIDATION_KEYWORDS = frozenset({
    "$dynamicRef", "$ref", "additionalProperties", "allOf", "anyOf", "const", "contains",
    "dependentRequired", "dependentSchemas", "enum", "exclusiveMaximum", "exclusiveMinimum",
    "format", "if", "items", "maxItems", "maxLength", "maxProperties", "maximum", "minItems",
    "minLength", "minProperties", "minimum", "multipleOf", "not", "oneOf", "pattern",
    "patternProperties", "prefixItems", "properties", "propertyNames", "required", "type",
    "unevaluatedItems", "unevaluatedProperties", "uniqueItems",
})
# Keywords that change how other keywords are read; we do not follow them.
_REFUSED_CORE = frozenset({"$id", "$anchor", "$dynamicAnchor", "$recursiveRef",
                           "$recursiveAnchor", "$vocabulary"})
COMPILED = frozenset({
    "$ref", "additionalProperties", "allOf", "anyOf", "const", "dependentRequired", "enum",
    "exclusiveMaximum", "exclusiveMinimum", "format", "if", "items", "maxItems", "maxLength",
    "maxProperties", "maximum", "minItems", "minLength", "minProperties", "minimum", "not",
    "oneOf", "pattern", "patternProperties", "properties", "propertyNames", "required",
    "type", "uniqueItems",
})


def _code_of(source: str) -> Any:
    """``source`` compiled, from the per-user cache when it was compiled before (issue 27:
    compiling the two schemas' code is ~30 ms of every run, plan and lint), keyed by the
    source itself and the Python that compiles it."""
    import hashlib
    import marshal
    import sys

    key = hashlib.sha256(f"{sys.version}\0{source}".encode()).hexdigest()[:32]
    folder = _cache_folder()
    path = folder / f"fastschema-{key}.code" if folder is not None else None
    if path is not None:
        try:
            # a file of this user's own cache folder (checked: no one else may write to it),
            # written below, as Python's own __pycache__ is
            code = marshal.loads(path.read_bytes())  # noqa: S302
            if isinstance(code, type(_code_of.__code__)):
                return code
        except (OSError, ValueError, EOFError, TypeError):
            pass
    code = compile(source, "<dsl.source.fastschema>", "exec")
    if path is not None:
        import contextlib
        import os

        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            tmp.write_bytes(marshal.dumps(code))
            os.replace(tmp, path)
    return code


def _cache_folder() -> Any:
    """``$XDG_CACHE_HOME/scenarist`` (or ``~/.cache/scenarist``) when it is a folder of
    this user's that no one else may write to; None otherwise (then nothing is cached)."""
    import os
    import stat
    from pathlib import Path

    if not hasattr(os, "getuid"):
        return None
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        folder = base / "scenarist"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.lstat()
    except (OSError, RuntimeError):  # (RuntimeError: no home folder)
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return None
    return folder


class Unsupported(Exception):
    """The schema uses something this compiler does not implement."""


def compile_schema(schema: Any) -> Predicate | None:
    """A predicate equivalent to ``Draft202012Validator(schema).is_valid``, or ``None``
    when the schema uses a keyword this module does not compile."""
    try:
        return _Compiler(schema).build()
    except Unsupported:
        return None


# ---------------------------------------------------------------- JSON equality


def _unbool(x: Any) -> Any:
    return ("\x00bool", x) if isinstance(x, bool) else x


def equal(one: Any, two: Any) -> bool:
    """JSON equality as jsonschema sees it: ``true`` is not ``1``, lists and objects are
    compared item by item."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list | tuple) and isinstance(two, list | tuple):
        return len(one) == len(two) and all(equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return one.keys() == two.keys() and all(equal(one[k], two[k]) for k in one)
    return bool(_unbool(one) == _unbool(two))


def _unique(items: list[Any]) -> bool:
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            if equal(a, b):
                return False
    return True


# ---------------------------------------------------------------- types


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


_TYPE_TESTS: dict[str, str] = {  # Python conditions on ``x``, as jsonschema's type checker
    "string": "isinstance(x, str)",
    "object": "isinstance(x, dict)",
    "array": "isinstance(x, list)",
    "boolean": "isinstance(x, bool)",
    "null": "x is None",
    "integer": "(isinstance(x, int) and not isinstance(x, bool) or isinstance(x, float) "
               "and x.is_integer())",
    "number": "(isinstance(x, (int, float)) and not isinstance(x, bool))",
}
_BOUNDS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


def _true(x: Any) -> bool:
    return True


def _false(x: Any) -> bool:
    return False


class _Compiler:
    """Writes one Python function per schema node (``$ref`` targets included, so recursive
    schemas work) and compiles them together: one call per subschema, every keyword of a
    node inline. Values from the schema — names, patterns, enums, bounds — reach the code
    as named constants, never as source text."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.names: dict[int, str] = {}  # id(schema node) -> its function's name
        self.todo: list[tuple[str, Any]] = []
        self.consts: dict[str, Any] = {"_true": _true, "_false": _false, "_equal": equal,
                                       "_unique": _unique}
        self.tables: list[str] = []  # constants that name functions, resolved after exec
        self.code: list[str] = []

    def build(self) -> Predicate:
        entry = self.func(self.root, root=True)
        while self.todo:
            name, schema = self.todo.pop()
            self.emit(name, schema)
        namespace = dict(self.consts)
        # our own generated source; the schema's values are in `namespace`, not in the code
        exec(_code_of("\n".join(self.code)), namespace)  # noqa: S102
        for c in self.tables:
            value = namespace[c]
            if isinstance(value, dict):
                namespace[c] = {k: namespace[f] for k, f in value.items()}
            else:
                namespace[c] = [(rx, namespace[f]) for rx, f in value]
        fn: Predicate = namespace[entry]
        return fn

    def const(self, value: Any) -> str:
        name = f"c{len(self.consts)}"
        self.consts[name] = value
        return name

    def func(self, schema: Any, *, root: bool = False) -> str:
        if schema is True:
            return "_true"
        if schema is False:
            return "_false"
        if not isinstance(schema, Mapping):
            raise Unsupported(f"a schema must be an object or a boolean: {schema!r}")
        keys = set(schema)
        refused = (keys & VALIDATION_KEYWORDS) - COMPILED
        if refused or (keys & _REFUSED_CORE and not root):
            raise Unsupported(", ".join(sorted(refused | (keys & _REFUSED_CORE))))
        if not keys & VALIDATION_KEYWORDS:  # annotations only: it accepts every value
            return "_true"
        name = self.names.get(id(schema))
        if name is None:
            name = self.names[id(schema)] = f"v{len(self.names)}"
            self.todo.append((name, schema))
        return name

    def emit(self, name: str, schema: Mapping[str, Any]) -> None:
        body: list[str] = []  # "return False" on the first failure
        if "type" in schema:
            body.append(f"if not ({self.type_test(schema['type'])}): return False")
        if "enum" in schema:
            options = schema["enum"]
            if not isinstance(options, list):
                raise Unsupported("enum")
            if all(isinstance(o, str) for o in options):
                c = self.const(frozenset(options))
                body.append(f"if not (isinstance(x, str) and x in {c}): return False")
            else:
                c = self.const(tuple(options))
                body.append(f"if not any(_equal(o, x) for o in {c}): return False")
        if "const" in schema:
            body.append(f"if not _equal({self.const(schema['const'])}, x): return False")
        self.object_part(schema, body)
        self.array_part(schema, body)
        self.string_part(schema, body)
        self.number_part(schema, body)
        if "$ref" in schema:
            body.append(f"if not {self.ref(schema['$ref'])}(x): return False")
        if "allOf" in schema:
            self.all_of(schema["allOf"], body)
        if "anyOf" in schema:
            calls = " or ".join(f"{self.func(s)}(x)" for s in _schemas(schema["anyOf"]))
            body.append(f"if not ({calls}): return False")
        if "oneOf" in schema:
            calls = ", ".join(f"{self.func(s)}(x)" for s in _schemas(schema["oneOf"]))
            body.append(f"if sum(({calls},)) != 1: return False")
        if "not" in schema:
            body.append(f"if {self.func(schema['not'])}(x): return False")
        if "if" in schema:
            cond = self.func(schema["if"])
            then = self.func(schema["then"]) if "then" in schema else None
            other = self.func(schema["else"]) if "else" in schema else None
            if then is None and other is not None:  # only an else: no call to _true
                body.append(f"if not {cond}(x) and not {other}(x): return False")
            elif other is None and then is not None:
                body.append(f"if {cond}(x) and not {then}(x): return False")
            elif then is not None and other is not None:
                body.append(f"if not ({then}(x) if {cond}(x) else {other}(x)): "
                            "return False")
        self.code.append(f"def {name}(x):")
        self.code += [f"    {line}" for line in body]
        self.code.append("    return True")

    def type_test(self, want: Any) -> str:
        names = [want] if isinstance(want, str) else want
        if not isinstance(names, list) or not names or not all(
                isinstance(n, str) and n in _TYPE_TESTS for n in names):
            raise Unsupported(f"type {want!r}")
        return " or ".join(_TYPE_TESTS[n] for n in names)

    def ref(self, ref: Any) -> str:
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise Unsupported(f"$ref {ref!r}")
        return self.func(_pointer(self.root, ref))

    def table(self, value: Any) -> str:
        c = self.const(value)
        self.tables.append(c)
        return c

    def all_of(self, subschemas: Any, body: list[str]) -> None:
        subs = _schemas(subschemas)
        # {if: {type: object, required: [K]}, then: S} for many K (our check branches):
        # dispatch on the keys the object has instead of trying every branch.
        table: dict[str, str] = {}
        for sub in subs:
            key = _branch_key(sub)
            if key is None or key in table:
                break
            table[key] = self.func(sub["then"])
        else:
            c = self.table(table)
            body += ["if isinstance(x, dict):",
                     "    for k in x:",
                     f"        f = {c}.get(k)",
                     "        if f is not None and not f(x): return False"]
            return
        body += [f"if not {self.func(sub)}(x): return False" for sub in subs]

    def object_part(self, schema: Mapping[str, Any], body: list[str]) -> None:
        part: list[str] = []
        props, patterns = schema.get("properties"), schema.get("patternProperties")
        additional = schema.get("additionalProperties")
        if props is not None or patterns is not None or additional is not None:
            if props is not None and not isinstance(props, Mapping):
                raise Unsupported("properties")
            if patterns is not None and not isinstance(patterns, Mapping):
                raise Unsupported("patternProperties")
            table = {k: self.func(v) for k, v in (props or {}).items()}
            pats = [(_regex(k), self.func(v)) for k, v in (patterns or {}).items()]
            checked = {k: f for k, f in table.items() if f != "_true"}
            if checked or pats or additional is not None:
                part.append("for k, v in x.items():")
            if checked:
                c = self.table(checked)
                part += [f"    f = {c}.get(k)",
                         "    if f is not None and not f(v): return False"]
            if pats:
                c = self.table(pats)
                part += ["    m = False",
                         f"    for rx, g in {c}:",
                         "        if rx.search(k):",
                         "            m = True",
                         "            if not g(v): return False"]
            if additional is not None:
                extra = self.func(additional)
                known = self.const(frozenset(table))
                also = " and not m" if pats else ""
                part.append(f"    if k not in {known}{also} and not {extra}(v): return False")
        if "required" in schema:
            if not isinstance(schema["required"], list):
                raise Unsupported("required")
            c = self.const(tuple(schema["required"]))
            part += [f"for k in {c}:", "    if k not in x: return False"]
        if "dependentRequired" in schema:
            deps = schema["dependentRequired"]
            if not isinstance(deps, Mapping):
                raise Unsupported("dependentRequired")
            c = self.const({k: tuple(v) for k, v in deps.items()})
            part += [f"for k, need in {c}.items():",
                     "    if k in x and not all(d in x for d in need): return False"]
        if "propertyNames" in schema:
            names = self.func(schema["propertyNames"])
            part += ["for k in x:", f"    if not {names}(k): return False"]
        if "minProperties" in schema:
            part.append(f"if len(x) < {_count(schema['minProperties'])}: return False")
        if "maxProperties" in schema:
            part.append(f"if len(x) > {_count(schema['maxProperties'])}: return False")
        if part:
            body.append("if isinstance(x, dict):")
            body += [f"    {line}" for line in part]

    def array_part(self, schema: Mapping[str, Any], body: list[str]) -> None:
        part: list[str] = []
        if "items" in schema:
            item = self.func(schema["items"])
            part += ["for i in x:", f"    if not {item}(i): return False"]
        if "minItems" in schema:
            part.append(f"if len(x) < {_count(schema['minItems'])}: return False")
        if "maxItems" in schema:
            part.append(f"if len(x) > {_count(schema['maxItems'])}: return False")
        if schema.get("uniqueItems") is True:
            part.append("if not _unique(x): return False")
        if part:
            body.append("if isinstance(x, list):")
            body += [f"    {line}" for line in part]

    def string_part(self, schema: Mapping[str, Any], body: list[str]) -> None:
        part: list[str] = []
        if "minLength" in schema:
            part.append(f"if len(x) < {_count(schema['minLength'])}: return False")
        if "maxLength" in schema:
            part.append(f"if len(x) > {_count(schema['maxLength'])}: return False")
        if "pattern" in schema:
            rx = self.const(_regex(schema["pattern"]))
            part.append(f"if {rx}.search(x) is None: return False")
        if part:
            body.append("if isinstance(x, str):")
            body += [f"    {line}" for line in part]

    def number_part(self, schema: Mapping[str, Any], body: list[str]) -> None:
        part: list[str] = []
        for key, op in _BOUNDS.items():
            if key in schema:
                bound = schema[key]
                if not _is_number(bound) or (isinstance(bound, float) and math.isnan(bound)):
                    raise Unsupported(key)
                # `not (x >= b)`, not `x < b`: a NaN fails here, and jsonschema decides
                part.append(f"if not (x {op} {self.const(bound)}): return False")
        if part:
            body.append(f"if {_TYPE_TESTS['number']}:")
            body += [f"    {line}" for line in part]


def _branch_key(s: Any) -> str | None:
    if not isinstance(s, Mapping) or set(s) != {"if", "then"}:
        return None
    cond = s["if"]
    if not isinstance(cond, Mapping) or set(cond) != {"type", "required"}:
        return None
    req = cond["required"]
    if cond["type"] != "object" or not isinstance(req, list) or len(req) != 1:
        return None
    return req[0] if isinstance(req[0], str) else None


def _schemas(value: Any) -> Sequence[Any]:
    if not isinstance(value, list) or not value:
        raise Unsupported("a list of schemas")
    return value


def _count(value: Any) -> int:
    if isinstance(value, bool) or not _is_integer(value) or value < 0:
        raise Unsupported(f"count {value!r}")
    return int(value)


def _regex(source: Any) -> re.Pattern[str]:
    if not isinstance(source, str):
        raise Unsupported("pattern")
    try:
        return re.compile(source)
    except re.error as exc:
        raise Unsupported(f"pattern {source!r}: {exc}") from None


def _pointer(root: Any, ref: str) -> Any:
    node = root
    for raw in ref[2:].split("/") if ref != "#" else ():
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise Unsupported(f"$ref {ref!r} points nowhere")
    return node


# ---------------------------------------------------------------- authors' schemas

_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object",
                           "string"})
_SCHEMA_KEYS = frozenset({"items", "additionalProperties", "not", "propertyNames", "if",
                          "then", "else", "contains"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf"})
_TEXT_KEYS = frozenset({"description", "title", "$comment", "format"})
_COUNT_KEYS = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minProperties",
                         "maxProperties"})
_NUMBER_KEYS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_BOOL_KEYS = frozenset({"uniqueItems", "readOnly", "writeOnly", "deprecated"})
MAX_SCHEMA_DEPTH = 32


def plainly_valid_schema(schema: Any, depth: int = 0) -> bool:
    """True only when ``schema`` is certainly valid under the JSON Schema 2020-12
    meta-schema (formats included, as ``check_schema`` checks them). False means "ask
    jsonschema": unusual keywords and shapes are not judged here."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or depth > MAX_SCHEMA_DEPTH:
        return False
    for key, value in schema.items():
        if key == "type":
            if isinstance(value, str):
                ok = value in _SIMPLE_TYPES
            else:
                ok = (isinstance(value, list) and len(value) > 0
                      and all(isinstance(v, str) and v in _SIMPLE_TYPES for v in value)
                      and len(set(value)) == len(value))
        elif key == "properties":
            ok = isinstance(value, dict) and all(
                plainly_valid_schema(v, depth + 1) for v in value.values())
        elif key in _SCHEMA_KEYS:
            ok = plainly_valid_schema(value, depth + 1)
        elif key in _SCHEMA_LISTS:
            ok = isinstance(value, list) and len(value) > 0 and all(
                plainly_valid_schema(v, depth + 1) for v in value)
        elif key == "required":
            ok = (isinstance(value, list) and all(isinstance(v, str) for v in value)
                  and len(set(value)) == len(value))
        elif key == "enum" or key == "examples":
            ok = isinstance(value, list)
        elif key in ("const", "default"):
            ok = True
        elif key in _TEXT_KEYS:
            ok = isinstance(value, str)
        elif key in _COUNT_KEYS:
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        elif key in _NUMBER_KEYS:
            ok = _is_number(value) and math.isfinite(value)
        elif key in _BOOL_KEYS:
            ok = isinstance(value, bool)
        elif key == "pattern":
            ok = isinstance(value, str) and _compiles(value)
        else:
            ok = False
        if not ok:
            return False
    return True


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True
