"""A run folder's typed files, read and written by msgspec: the one decoder and the one
encoder of every Struct the store keeps (an attempt record, plan.json, run.json,
summary.json), and the words a damaged file is refused in.

Reading (:func:`read`, and :func:`read_fast` first for each line of results.jsonl;
:func:`from_data` for JSON already parsed): msgspec decodes the bytes straight into the
file's frozen Struct, checking every field's type — a Struct's
fields are its JSON object's keys, a missing key takes the field's default (so a file
written before a field existed reads as it always did). ``schema_version`` is the
Struct's tag (``tag_field="schema_version"``): msgspec refuses another version, and
:func:`check_version` — the one place — says so in words, and refuses a file without one.
A line the json module reads and msgspec does not (``NaN``, which the json module writes
for a number that is not one; a lone surrogate kept as ``\\ud83d``) is read by the json
module and converted by msgspec; ``Infinity`` is refused (no value Scenarist keeps is
infinite). msgspec's located error (``Expected `int`, got `str` - at `$.run```) becomes one
sentence with the place (:func:`refusal`): ``runs/x/results.jsonl:3 is not an attempt
record: 'run' is text, not a whole number``.

Writing (:func:`encode` a line, :func:`file_bytes` a file, :func:`builtins` and
:func:`json_data` plain data): msgspec encodes the Struct
as it is, in the order of its fields, after :func:`written` has left out what its class
writes only when set: the fields ``only_when_set`` names, at their default, or those its
``unwritten()`` names (a rule that depends on its other fields). A shape no Struct can hold
(a target's settings beside its name and kind) is a class with ``from_json`` and
``as_json``, which msgspec calls through its hooks.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET, Struct
from msgspec.structs import force_setattr

from ..errors import RunDirError
from ..model import SCHEMA_VERSION

T = TypeVar("T")


# ---- writing -----------------------------------------------------------------------------

def _enc_hook(value: Any) -> Any:
    as_json = getattr(value, "as_json", None)
    if as_json is None:
        raise NotImplementedError(f"{type(value).__name__} is not a value Scenarist writes")
    return as_json()


_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)


class _Plan(typing.NamedTuple):
    """What :func:`written` does to a Struct of one class."""

    defaults: tuple[tuple[str, Any], ...]  # only_when_set, with each field's default
    custom: Callable[[Any], Iterable[str]] | None  # the class's unwritten()
    nested: tuple[str, ...]  # fields that may hold a Struct that leaves keys out


@functools.cache
def _plan(cls: type[Struct]) -> _Plan:
    custom = getattr(cls, "unwritten", None)
    wanted = set(getattr(cls, "only_when_set", ()))
    fields = msgspec.structs.fields(cls)
    defaults = tuple((f.name, f.default) for f in fields if f.name in wanted)
    nested = tuple(f.name for f in fields if _may_hold(f.type))
    return _Plan(defaults, custom, nested)


def _may_hold(tp: Any) -> bool:
    """Whether a value of this type may hold a Struct that leaves keys out."""
    if isinstance(tp, type) and issubclass(tp, Struct):
        p = _plan(tp)
        return bool(p.defaults or p.custom or p.nested)
    return any(_may_hold(arg) for arg in typing.get_args(tp))


def written(value: T) -> T:
    """``value`` (a Struct) with every field its class writes only when set, and that is
    not set, replaced by ``msgspec.UNSET`` (which msgspec leaves out), in every Struct it
    holds. Anything but a Struct is ``value`` itself (plain JSON data is written as is)."""
    if isinstance(value, Struct):
        return _written_struct(value)  # type: ignore[return-value]
    return value


def _inside(value: Any) -> Any:
    """A field's value, its Structs :func:`written` (in a tuple, a list, a dict's values)."""
    if isinstance(value, Struct):
        return _written_struct(value)
    if isinstance(value, tuple | list):
        items = [_inside(v) for v in value]
        if any(a is not b for a, b in zip(items, value, strict=True)):
            return type(value)(items)
        return value
    if isinstance(value, dict):
        out = {k: _inside(v) for k, v in value.items()}
        if any(out[k] is not v for k, v in value.items()):
            return out
        return value
    return value


def _written_struct(value: Struct) -> Struct:
    plan = _plan(type(value))
    changes: dict[str, Any] = {}
    if plan.custom is not None:
        for name in plan.custom(value):
            changes[name] = UNSET
    else:
        for name, default in plan.defaults:
            if getattr(value, name) == default:
                changes[name] = UNSET
    for name in plan.nested:
        if name in changes:
            continue
        inner = getattr(value, name)
        new = _inside(inner)
        if new is not inner:
            changes[name] = new
    if not changes:
        return value
    # a copy, changed in place: replace() would run the class's __post_init__, which is
    # for values, not for a copy with keys left out
    out = copy.copy(value)
    for name, new in changes.items():
        force_setattr(out, name, new)
    return out


def builtins(value: Any) -> Any:
    """``value`` as plain JSON data (dicts, lists, text, numbers) as its file keeps it:
    msgspec's plain data, with the keys :func:`written` leaves out taken out of each
    Struct's new object (no Struct copied: a third less time for an attempt record)."""
    data = msgspec.to_builtins(value, enc_hook=_enc_hook)
    _unwrite(value, data)
    return data


def _unwrite(value: Any, data: Any) -> None:
    """Take out of ``data`` (``value`` as msgspec's plain data) what :func:`written` leaves
    out of ``value``, in every Struct it holds where :func:`written` looks."""
    if isinstance(value, Struct):
        plan = _plan(type(value))
        if plan.custom is not None:
            for name in plan.custom(value):
                data.pop(name, None)
        else:
            for name, default in plan.defaults:
                if getattr(value, name) == default:
                    data.pop(name, None)
        for name in plan.nested:
            if name in data:
                _unwrite(getattr(value, name), data[name])
    elif isinstance(value, tuple | list):
        for v, d in zip(value, data, strict=True):
            _unwrite(v, d)
    elif isinstance(value, dict):
        for v, d in zip(value.values(), data.values(), strict=True):
            _unwrite(v, d)


def json_data(value: Any) -> Any:
    """``value`` as the json module reads its JSON back (lists, not tuples)."""
    text = encode(value)
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:  # a lone surrogate, kept as its escape
        return json.loads(text)


def encode(value: Any) -> bytes:
    """``value`` as compact JSON on one line (without the newline). A lone surrogate that a
    model's reply may hold (``"\\ud83d"``), which UTF-8 cannot carry, is kept as a ``\\u``
    escape (the json module writes that line)."""
    value = written(value)
    try:
        return _ENCODER.encode(value)
    except UnicodeEncodeError:
        return json.dumps(_plain(value), separators=(",", ":"),
                          allow_nan=False).encode("ascii")


def file_bytes(value: Any) -> bytes:
    """``value`` as the indented JSON text of a file, ending with a newline."""
    value = written(value)
    try:
        return msgspec.json.format(_ENCODER.encode(value), indent=2) + b"\n"
    except UnicodeEncodeError:
        return (json.dumps(_plain(value), indent=2, allow_nan=False)
                + "\n").encode("ascii")


def _plain(value: Any) -> Any:
    """``value`` as plain data for the json module, a number that is not one (``NaN``,
    which is not JSON) as ``null``, as msgspec writes it."""
    def finite(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, list | tuple):
            return [finite(x) for x in v]
        if isinstance(v, dict):
            return {k: finite(x) for k, x in v.items()}
        return v

    return finite(msgspec.to_builtins(value, enc_hook=_enc_hook))


# ---- reading -----------------------------------------------------------------------------

def _dec_hook(tp: Any, data: Any) -> Any:
    from_json = getattr(tp, "from_json", None)
    if from_json is None:
        raise NotImplementedError(f"{tp!r} is not a value Scenarist reads")
    return from_json(data)


_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def _decoder(kind: type[T]) -> msgspec.json.Decoder[T]:
    decoder = _DECODERS.get(kind)
    if decoder is None:
        decoder = _DECODERS[kind] = msgspec.json.Decoder(kind, dec_hook=_dec_hook)
    return decoder


# Scenarist writes schema_version first: a file that starts so has one, which its Struct's
# tag checked; any other is parsed to find it (check_version)
_VERSION_FIRST = re.compile(rb'\s*\{\s*"schema_version"\s*:')


class NotJSONNumber(ValueError):
    """Infinity in a file: not JSON, and no value of Scenarist's is (it would overflow
    whatever counts with it: a latency, a mean)."""


def _constant(name: str) -> Any:
    if name == "NaN":  # what the json module writes for a value that is not a number
        return float("nan")
    raise NotJSONNumber(f"{name} is not a number JSON allows")


def strict_loads(text: str | bytes) -> Any:
    """JSON as the standard library reads it, but Infinity and -Infinity refused."""
    return json.loads(text, parse_constant=_constant)


def check_version(data: Any, where: object) -> None:
    """Refuse a file (or line) written by another version of Scenarist's formats — the one
    place that says so."""
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION or type(version) is not int:
        raise RunDirError(
            f"{where} has schema_version {version!r}; this Scenarist reads version "
            f"{SCHEMA_VERSION} (upgrade Scenarist, or re-run to regenerate it)"
        )


class Reading(typing.NamedTuple):
    """How one kind of file is refused: ``where`` it is (``path`` or ``path:line``), what
    it is not (``an attempt record``), how its whole is called (``the line``), whether a
    place is quoted (``'run'``), the words for a key it lacks (``(no 'scenarios' list)``),
    and how JSON that is not valid is said."""

    where: object
    what: str
    whole: str = "the file"
    quoted: bool = False
    lacking: typing.Mapping[str, str] = types.MappingProxyType({})
    line: bool = False  # a line of JSON Lines: "is not valid JSON" (its place is the line)


def _parsed(raw: bytes, how: Reading) -> Any:
    try:
        return strict_loads(raw)
    except NotJSONNumber as exc:
        if how.line:
            raise RunDirError(f"{how.where} is not valid JSON: {exc}") from None
        raise RunDirError(f"cannot read {how.where}: {exc}") from None
    except (ValueError, RecursionError) as exc:
        if how.line:
            raise RunDirError(f"{how.where} is not valid JSON") from None
        raise RunDirError(f"cannot read {how.where}: {exc}") from None


def read_fast(raw: bytes, kind: type[T]) -> T | None:
    """The Struct ``kind`` that ``raw`` holds when it is as Scenarist writes it (valid,
    with its schema_version first); None for anything else, which :func:`read` reads
    or refuses. (The reader of results.jsonl asks this first, for each of its lines.)"""
    try:
        value = _decoder(kind).decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    if raw.startswith(b'{"schema_version":') or _VERSION_FIRST.match(raw) is not None:
        return value
    return None


def read(raw: bytes, kind: type[T], how: Reading) -> T:
    """The Struct ``kind`` that ``raw`` holds; RunDirError in one sentence, with its place,
    when it is not JSON, is of another ``schema_version``, or holds a value ``kind`` does
    not (see the module's docstring)."""
    try:
        value = _decoder(kind).decode(raw)
    except msgspec.ValidationError as exc:
        data = _parsed(raw, how)
        if isinstance(data, dict):  # (anything else is said to be no object)
            check_version(data, how.where)
        raise refusal(exc, kind, how, data) from None
    except msgspec.DecodeError:  # NaN, a lone surrogate: the json module reads them
        return from_data(_parsed(raw, how), kind, how)
    if _VERSION_FIRST.match(raw) is None:
        check_version(_parsed(raw, how), how.where)
    return value


def from_data(data: Any, kind: type[T], how: Reading, versioned: bool = True) -> T:
    """The Struct ``kind`` from JSON already parsed (see :func:`read`); ``versioned=False``:
    its ``schema_version`` was checked already, or it may have none (built by hand)."""
    if isinstance(data, dict) and (versioned or "schema_version" in data):
        check_version(data, how.where)
    try:
        value: T = msgspec.convert(data, kind, dec_hook=_dec_hook)
    except msgspec.ValidationError as exc:
        raise refusal(exc, kind, how, data) from None
    return value


# ---- the words of a refusal ----------------------------------------------------------------

_LOCATED = re.compile(r"(?P<said>.*?)(?: - at `\$(?P<path>[^`]*)`)?", re.S)
_SEGMENT = re.compile(r"\.(\w+)|\[(\d+|\.\.\.)\]")
_EXPECTED = {"str": "text", "int": "a whole number", "float": "a number",
             "bool": "true or false", "array": "a list", "object": "an object",
             "null": "null"}
_GOT = {"str": "text", "int": "a whole number", "float": "a decimal number",
        "bool": "true/false", "array": "a list", "object": "an object", "null": "null"}
# what a fixed-length list is, by the name of its field
_PAIRS = {"shard": "[I, N], two whole numbers", "compare": "[OLD, NEW], two target names"}


def refusal(exc: msgspec.ValidationError, kind: type, how: Reading,
            data: Any = None) -> RunDirError:
    """msgspec's located error (``data``: the JSON it was refused in, to quote the value)
    as one sentence: ``WHERE is not WHAT: PLACE WORDS``."""
    m = _LOCATED.fullmatch(str(exc))
    said, path = (m["said"], m["path"] or "") if m else (str(exc), "")
    segments = [name or f"[{index}]" for name, index in _SEGMENT.findall(path)]
    place, words = _words(said, segments, kind, data)
    if not place:
        return RunDirError(f"{how.where} is not {how.what}: {how.whole} {words}")
    if words == "is missing" and place in how.lacking:
        return RunDirError(f"{how.where} is not {how.what} {how.lacking[place]}")
    shown = f"'{place}'" if how.quoted else place
    return RunDirError(f"{how.where} is not {how.what}: {shown} {words}")


def _join(segments: list[str]) -> str:
    out = ""
    for s in segments:
        out += s if s.startswith("[") or not out else f".{s}"
    return out.replace("[...]", " (a value)")


def _words(said: str, segments: list[str], kind: type, data: Any) -> tuple[str, str]:
    """(the place, what is wrong with what is there)."""
    place = _join(segments)
    if said.startswith("Object missing required field `"):
        return _join([*segments, said.split("`")[1]]), "is missing"
    if said.startswith("Expected `"):
        expected, _, rest = said[len("Expected `"):].partition("`")
        if rest.startswith(" of length"):  # a fixed-length list ([I, N])
            name = next((s for s in reversed(segments) if not s.startswith("[")), "")
            return place, f"is not {_PAIRS.get(name, 'a list' + rest)}"
        if "got `" in rest:
            got = rest.partition("`")[2].partition("`")[0]
            wanted = " or ".join(_EXPECTED.get(e, e) for e in expected.split(" | ")
                                 if e != "null" or expected == "null")
            return place, f"is {_GOT.get(got, got)}, not {wanted}"
        # a constraint of the field's (Count, Rate), said by its description
        return place, f"is {_value_at(data, segments)}, not {_about(kind, segments)}"
    if said.startswith("Invalid enum value "):
        value = said[len("Invalid enum value "):]
        allowed = _allowed(kind, segments)
        return place, f"is {value}, not {allowed}" if allowed else f"is {value}"
    if said == "Number out of range":
        return place, "is a number too large to keep"
    # a value's own rule (a Struct's __post_init__, a custom type): "FIELD what is wrong",
    # or "is ..." of the value itself
    if said.startswith("is "):
        return place, said
    name, _, rest = said.partition(" ")
    if rest and name.isidentifier():
        return _join([*segments, name]), rest
    return place, said


def _value_at(data: Any, segments: list[str]) -> str:
    """The JSON value at ``segments`` of ``data``, as written."""
    for s in segments:
        try:
            data = data[int(s[1:-1])] if s.startswith("[") else data[s]
        except (KeyError, IndexError, TypeError, ValueError):
            return "what it is"
    return json.dumps(data, ensure_ascii=False)


def _field(kind: Any, segments: list[str]) -> Any:
    """The type (its ``Annotated`` metadata kept) of the field at ``segments``."""
    tp = kind
    for s in segments:
        tp = _inner(tp)
        if s.startswith("["):  # an item of a tuple or list, a value of a dict
            args = typing.get_args(tp)
            tp = args[-1] if s == "[...]" else args[0]
        else:
            tp = {f.name: f.type for f in msgspec.structs.fields(tp)}[s]
    return _inner(tp)


def _about(kind: Any, segments: list[str]) -> str:
    """What the field at ``segments`` must be (its ``Meta``'s description)."""
    try:
        tp = _field(kind, segments)
    except (TypeError, KeyError, IndexError, NameError):
        return "what it may be"
    for meta in getattr(tp, "__metadata__", ()):
        if isinstance(meta, msgspec.Meta) and meta.description:
            return meta.description
    return "what it may be"


def _allowed(kind: Any, segments: list[str]) -> str:
    """The values the field at ``segments`` allows, in words (``pass, fail or error``)."""
    try:
        tp = _field(kind, segments)
    except (TypeError, KeyError, IndexError, NameError):
        return ""
    values = [str(v) for v in typing.get_args(tp)] if typing.get_origin(tp) is \
        typing.Literal else []
    return ", ".join(values[:-1]) + f" or {values[-1]}" if len(values) > 1 else ""


def _inner(tp: Any) -> Any:
    """The type in an optional one (``X | None`` → ``X``)."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp
