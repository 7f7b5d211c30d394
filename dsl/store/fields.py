"""Reading the fields of a run folder's JSON files: each value checked against the type its
reader expects, a wrong one said in words with where it is (``scenarios[3].runs is text,
not a whole number``). The readers of plan.json, run.json and summary.json
(:mod:`~dsl.store.planfile`, :mod:`~dsl.store.runfile`, :mod:`~dsl.store.summaryfile`) use
these; :func:`dsl.store.jsonfile.read_file` opens such a file and checks its
``schema_version``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")
JSONObject = Mapping[str, Any]  # a JSON object as read: its values are checked by who reads it

_NAMES = {str: "text", int: "a whole number", float: "a number", list: "a list",
          dict: "an object", bool: "true or false"}


class FieldError(ValueError):
    """A value of a JSON file that is not what its reader expects; ``where`` is its place in
    the file (``scenarios[3].runs``), the reader adds the file."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where} {what}" if where else what)
        self.where = where
        self.what = what

    def inside(self, outer: str) -> FieldError:
        """The same error, placed inside ``outer`` (``scenarios[3]``)."""
        return FieldError(f"{outer}.{self.where}" if self.where else outer, self.what)


def kind_words(value: Any) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, float):
        return "a decimal number"
    return _NAMES.get(type(value), type(value).__name__)


def _is(value: Any, kind: type) -> bool:
    if kind is float:  # a JSON number: 1 and 1.0 alike, never true/false
        return type(value) in (int, float)
    return type(value) is kind


def need(d: JSONObject, key: str, kind: type[T]) -> T:
    """``d[key]``, which must be there and of ``kind``. (The readers call these for every
    field of every scenario of a plan of 10,000: the exact type is tested first.)"""
    value = d.get(key)
    if type(value) is kind:
        return value
    if not _is(value, kind):
        what = "is missing" if key not in d else \
            f"is {kind_words(value)}, not {_NAMES.get(kind, kind.__name__)}"
        raise FieldError(key, what)
    return value  # type: ignore[return-value]


def maybe(d: JSONObject, key: str, kind: type[T], default: Any = None) -> Any:
    """``d[key]`` when it is there and not null (then of ``kind``), else ``default``."""
    value = d.get(key)
    if value is None:
        return default
    if type(value) is not kind and not _is(value, kind):
        raise FieldError(key, f"is {kind_words(value)}, not {_NAMES.get(kind, kind.__name__)}")
    return value


def obj(value: Any, where: str = "") -> JSONObject:
    """A value that must be a JSON object."""
    if type(value) is not dict:
        raise FieldError(where, f"is {kind_words(value)}, not an object")
    return value


def each(d: JSONObject, key: str, read: Callable[[Any], T], required: bool = True
         ) -> tuple[T, ...]:
    """``d[key]``, a list, each item read by ``read`` (an error says which item)."""
    value = d.get(key)
    if value is None and not required:
        return ()
    if type(value) is not list:
        raise FieldError(key, "is missing" if key not in d else
                         f"is {kind_words(value)}, not a list")
    out = []
    for i, item in enumerate(value):
        try:
            out.append(read(item))
        except FieldError as exc:
            raise exc.inside(f"{key}[{i}]") from None
    return tuple(out)


def inner(d: JSONObject, key: str, read: Callable[[JSONObject], T]) -> T:
    """``d[key]``, an object read by ``read``."""
    try:
        return read(obj(d.get(key)))
    except FieldError as exc:
        raise exc.inside(key) from None


def maybe_inner(d: JSONObject, key: str, read: Callable[[JSONObject], T]) -> T | None:
    """``d[key]`` read by ``read`` when it is there and not null."""
    return None if d.get(key) is None else inner(d, key, read)


def texts(d: JSONObject, key: str) -> tuple[str, ...]:
    """``d[key]``: a list of texts (none when it is missing or null)."""
    value = d.get(key)
    if value is None:
        return ()
    if type(value) is not list or not all(type(x) is str for x in value):
        raise FieldError(key, f"is {kind_words(value)}, not a list of texts")
    return tuple(value)


def counts(d: JSONObject, key: str, kind: type = int) -> dict[str, Any]:
    """``d[key]``: an object whose values are all of ``kind`` (none when missing)."""
    value = d.get(key)
    if value is None:
        return {}
    if type(value) is not dict:
        raise FieldError(key, f"is {kind_words(value)}, not an object")
    for k, v in value.items():
        if not _is(v, kind):
            raise FieldError(f"{key}.{k}", f"is {kind_words(v)}, not "
                                           f"{_NAMES.get(kind, kind.__name__)}")
    return dict(value)


def shard(d: JSONObject, key: str = "shard") -> tuple[int, int] | None:
    """``d[key]``: ``[I, N]``, shard I of N (None when missing or null)."""
    value = d.get(key)
    if value is None:
        return None
    if not (type(value) is list and len(value) == 2 and all(type(x) is int for x in value)):
        raise FieldError(key, "is not [I, N], two whole numbers")
    return value[0], value[1]
