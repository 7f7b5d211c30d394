"""A fast yes/no JSON Schema check, compiled to Python closures.

jsonschema explains *why* data is invalid and we need that for messages (``validate.py``);
but it spends 3–4 ms on a valid scenario to find nothing, while ``scenarist lint`` has a
budget of about one millisecond per file. Most files are valid, so validation goes in two
passes: :func:`compile_schema` turns a schema into a predicate that answers "valid?" with
the same semantics as ``jsonschema.Draft202012Validator`` (without format assertions, as
jsonschema's default), and only data it rejects is given to jsonschema for the messages.

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


class Unsupported(Exception):
    """The schema uses something this compiler does not implement."""


def compile_schema(schema: Any) -> Predicate | None:
    """A predicate equivalent to ``Draft202012Validator(schema).is_valid``, or ``None``
    when the schema uses a keyword this module does not compile."""
    try:
        return _Compiler(schema).compile(schema, top=True)
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


_TYPE_TESTS: dict[str, Predicate] = {
    "string": lambda x: isinstance(x, str),
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "integer": _is_integer,
    "number": _is_number,
}


def _all(preds: list[Predicate]) -> Predicate:
    if not preds:
        return _true
    if len(preds) == 1:
        return preds[0]
    if len(preds) == 2:
        a, b = preds

        def both(x: Any) -> bool:
            return a(x) and b(x)

        return both
    ps = tuple(preds)

    def every(x: Any) -> bool:  # loops, not all(...): the generator costs more here
        for p in ps:  # noqa: SIM110
            if not p(x):
                return False
        return True

    return every


def _true(x: Any) -> bool:
    return True


def _false(x: Any) -> bool:
    return False


class _Compiler:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.refs: dict[str, Predicate] = {}

    def compile(self, schema: Any, top: bool = False) -> Predicate:
        if schema is True:
            return _true
        if schema is False:
            return _false
        if not isinstance(schema, Mapping):
            raise Unsupported(f"a schema must be an object or a boolean: {schema!r}")
        keys = set(schema)
        refused = (keys & VALIDATION_KEYWORDS) - COMPILED
        if refused or (keys & _REFUSED_CORE and not top):
            raise Unsupported(", ".join(sorted(refused | (keys & _REFUSED_CORE))))
        preds: list[Predicate] = []
        if "type" in schema:
            preds.append(self._type(schema["type"]))
        if "enum" in schema:
            preds.append(self._enum(schema["enum"]))
        if "const" in schema:
            want = schema["const"]
            preds.append(lambda x: equal(want, x))
        obj = self._object(schema)
        if obj is not None:
            preds.append(obj)
        arr = self._array(schema)
        if arr is not None:
            preds.append(arr)
        text = self._string(schema)
        if text is not None:
            preds.append(text)
        num = self._number(schema)
        if num is not None:
            preds.append(num)
        if "$ref" in schema:
            preds.append(self._ref(schema["$ref"]))
        if "allOf" in schema:
            preds.append(self._all_of(schema["allOf"]))
        if "anyOf" in schema:
            subs = [self.compile(s) for s in _schemas(schema["anyOf"])]
            preds.append(lambda x: any(p(x) for p in subs))
        if "oneOf" in schema:
            subs1 = [self.compile(s) for s in _schemas(schema["oneOf"])]
            preds.append(lambda x: sum(1 for p in subs1 if p(x)) == 1)
        if "not" in schema:
            neg = self.compile(schema["not"])
            preds.append(lambda x: not neg(x))
        if "if" in schema:
            preds.append(self._if(schema))
        return _all(preds)

    # -- generic

    def _type(self, want: Any) -> Predicate:
        names = [want] if isinstance(want, str) else want
        if not isinstance(names, list) or not all(n in _TYPE_TESTS for n in names):
            raise Unsupported(f"type {want!r}")
        tests = [_TYPE_TESTS[n] for n in names]
        if len(tests) == 1:
            return tests[0]
        return lambda x: any(t(x) for t in tests)

    def _enum(self, options: Any) -> Predicate:
        if not isinstance(options, list):
            raise Unsupported("enum")
        if all(isinstance(o, str) for o in options):
            strings = frozenset(options)
            return lambda x: isinstance(x, str) and x in strings
        return lambda x: any(equal(o, x) for o in options)

    def _ref(self, ref: Any) -> Predicate:
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise Unsupported(f"$ref {ref!r}")
        hit = self.refs.get(ref)
        if hit is not None:
            return hit
        cell: list[Predicate] = []

        def deferred(x: Any) -> bool:  # allows recursive schemas
            return cell[0](x)

        self.refs[ref] = deferred
        cell.append(self.compile(_pointer(self.root, ref)))
        self.refs[ref] = cell[0]
        return cell[0]

    def _all_of(self, subschemas: Any) -> Predicate:
        subs = list(_schemas(subschemas))
        # {if: {type: object, required: [K]}, then: S} for many K (our check branches):
        # dispatch on the keys the object has instead of trying every branch.
        table: dict[str, Predicate] = {}
        for s in subs:
            key = _branch_key(s)
            if key is None or key in table:
                break
            table[key] = self.compile(s["then"])
        else:
            def dispatch(x: Any) -> bool:
                if isinstance(x, dict):
                    for k in x:
                        p = table.get(k)
                        if p is not None and not p(x):
                            return False
                return True

            return dispatch
        return _all([self.compile(s) for s in subs])

    def _if(self, schema: Mapping[str, Any]) -> Predicate:
        cond = self.compile(schema["if"])
        then = self.compile(schema["then"]) if "then" in schema else _true
        other = self.compile(schema["else"]) if "else" in schema else _true
        return lambda x: then(x) if cond(x) else other(x)

    # -- objects

    def _object(self, schema: Mapping[str, Any]) -> Predicate | None:
        preds: list[Predicate] = []
        props = schema.get("properties")
        patterns = schema.get("patternProperties")
        additional = schema.get("additionalProperties")
        if props is not None:
            if not isinstance(props, Mapping):
                raise Unsupported("properties")
            compiled = {k: self.compile(v) for k, v in props.items()}

            def properties(x: dict[str, Any]) -> bool:
                for k, p in compiled.items():  # noqa: SIM110
                    if k in x and not p(x[k]):
                        return False
                return True

            preds.append(properties)
        pattern_preds: list[tuple[re.Pattern[str], Predicate]] = []
        if patterns is not None:
            if not isinstance(patterns, Mapping):
                raise Unsupported("patternProperties")
            pattern_preds = [(_regex(k), self.compile(v)) for k, v in patterns.items()]

            def pattern_properties(x: dict[str, Any]) -> bool:
                for k, v in x.items():
                    for rx, p in pattern_preds:
                        if rx.search(k) and not p(v):
                            return False
                return True

            preds.append(pattern_properties)
        if additional is not None:
            known = frozenset(props or ())
            rxs = [rx for rx, _ in pattern_preds]
            extra = self.compile(additional)

            def additional_properties(x: dict[str, Any]) -> bool:
                for k, v in x.items():
                    if k in known or any(rx.search(k) for rx in rxs):
                        continue
                    if not extra(v):
                        return False
                return True

            preds.append(additional_properties)
        if "required" in schema:
            required = schema["required"]
            if not isinstance(required, list):
                raise Unsupported("required")
            names = tuple(required)
            preds.append(lambda x: all(n in x for n in names))
        if "dependentRequired" in schema:
            deps = schema["dependentRequired"]
            if not isinstance(deps, Mapping):
                raise Unsupported("dependentRequired")
            preds.append(lambda x: all(all(d in x for d in need)
                                       for k, need in deps.items() if k in x))
        if "propertyNames" in schema:
            names_ok = self.compile(schema["propertyNames"])
            preds.append(lambda x: all(names_ok(k) for k in x))
        if "minProperties" in schema:
            lo = _count(schema["minProperties"])
            preds.append(lambda x: len(x) >= lo)
        if "maxProperties" in schema:
            hi = _count(schema["maxProperties"])
            preds.append(lambda x: len(x) <= hi)
        if not preds:
            return None
        check = _all(preds)
        return lambda x: not isinstance(x, dict) or check(x)

    # -- arrays

    def _array(self, schema: Mapping[str, Any]) -> Predicate | None:
        preds: list[Predicate] = []
        if "items" in schema:
            item = self.compile(schema["items"])
            preds.append(lambda x: all(item(i) for i in x))
        if "minItems" in schema:
            lo = _count(schema["minItems"])
            preds.append(lambda x: len(x) >= lo)
        if "maxItems" in schema:
            hi = _count(schema["maxItems"])
            preds.append(lambda x: len(x) <= hi)
        if schema.get("uniqueItems") is True:
            preds.append(_unique)
        if not preds:
            return None
        check = _all(preds)
        return lambda x: not isinstance(x, list) or check(x)

    # -- strings

    def _string(self, schema: Mapping[str, Any]) -> Predicate | None:
        preds: list[Predicate] = []
        if "minLength" in schema:
            lo = _count(schema["minLength"])
            preds.append(lambda x: len(x) >= lo)
        if "maxLength" in schema:
            hi = _count(schema["maxLength"])
            preds.append(lambda x: len(x) <= hi)
        if "pattern" in schema:
            rx = _regex(schema["pattern"])
            preds.append(lambda x: rx.search(x) is not None)
        if not preds:
            return None
        check = _all(preds)
        return lambda x: not isinstance(x, str) or check(x)

    # -- numbers

    def _number(self, schema: Mapping[str, Any]) -> Predicate | None:
        preds: list[Predicate] = []
        for key, test in (("minimum", lambda x, b: x >= b), ("maximum", lambda x, b: x <= b),
                          ("exclusiveMinimum", lambda x, b: x > b),
                          ("exclusiveMaximum", lambda x, b: x < b)):
            if key in schema:
                bound = schema[key]
                if not _is_number(bound) or (isinstance(bound, float) and math.isnan(bound)):
                    raise Unsupported(key)
                preds.append(_bound(test, bound))
        if not preds:
            return None
        check = _all(preds)
        return lambda x: not _is_number(x) or check(x)


def _bound(test: Callable[[Any, Any], bool], bound: Any) -> Predicate:
    return lambda x: test(x, bound)


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
