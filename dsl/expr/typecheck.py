"""Typecheck: every node gets a type (``dsl.expr.types``) before anything runs.

This is where an expression's meaning is settled at lint time:

* every name is resolved — a value of the attempt (``answer``), the current item inside
  ``[...]`` or a condition (``item``), or one of the item's fields (``name`` in
  ``calls[name == 'x']``); unknown names and functions are reported with "did you mean";
* every function call has the right number of arguments of the right types;
* comparisons, ``in``, ``matches`` and arithmetic get operands they can work with —
  ``answer == 5`` is reported here, not discovered on the hundredth run;
* each ``[...]`` is decided to be an index (``calls[0]``) or a selection by a condition
  (``calls[name == 'x']``), and each ``matches`` pattern is compiled.

Problems are collected, not raised one by one; after a problem the node's type becomes
``json`` (unknown), so one mistake is reported once rather than cascading.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import did_you_mean
from ..source.saferegex import PatternError, SafePattern, compile_pattern
from .errors import Problem
from .functions import FUNCTIONS, ArgTypeError, Function
from .nodes import (
    Arith,
    Bind,
    BoolOp,
    Compare,
    Const,
    Field,
    FuncCall,
    IfElse,
    ListOf,
    Loc,
    Name,
    Neg,
    Node,
    Not,
    ObjectOf,
    Subscript,
    snippet,
)
from .types import (
    ARGS,
    BOOL,
    CASE,
    DATE,
    GLOBALS,
    ITEM,
    JSON,
    LIVE_ONLY,
    NULL,
    NUMBER,
    ROW,
    TEXT,
    WORLD,
    WORLD_NAMES,
    Member,
    Type,
    describe,
    equatable,
    fields_of,
    join,
    list_of,
    maybe,
    orderable,
    plural,
)


@dataclass(frozen=True, slots=True)
class GlobalRef:
    """A value of the attempt: ``answer``."""

    name: str


@dataclass(frozen=True, slots=True)
class ItemRef:
    """``item``: the current item of the condition at nesting ``level`` (0 = outermost)."""

    level: int


@dataclass(frozen=True, slots=True)
class ItemFieldRef:
    """A field of the current item at ``level``. ``kind`` is the item's: ``object`` (a call,
    a tool: the field is known), ``date``, or ``json`` (fields known only at run time; then
    ``fallback`` names the attempt's value used when the item has no such field, so
    ``answer`` inside a condition over JSON items still means the answer)."""

    level: int
    field: str
    kind: str
    fallback: str | None = None


Ref = GlobalRef | ItemRef | ItemFieldRef

_CONDITION_NODES = (Compare, BoolOp, Not)
_WRONG_CASE = {"True": "true", "False": "false", "None": "null", "Null": "null",
               "NULL": "null", "TRUE": "true", "FALSE": "false", "nil": "null",
               "none": "null", "undefined": "null"}


@dataclass(slots=True)
class Typed:
    """What the checker found: a type per node and the decisions ``compile`` needs."""

    source: str
    types: dict[int, Type] = field(default_factory=dict)
    refs: dict[int, Ref] = field(default_factory=dict)
    selections: set[int] = field(default_factory=set)  # Subscripts that select
    conditions: set[int] = field(default_factory=set)  # Calls with a per-item condition
    patterns: dict[int, SafePattern] = field(default_factory=dict)  # 'matches' nodes
    # Tools named in called('x') / call('x'): (function, tool, offset of the quoted name)
    tool_refs: list[tuple[str, str, int]] = field(default_factory=list)
    # The case's values read as case.NAME: (name, offset of NAME)
    case_refs: list[tuple[str, int]] = field(default_factory=list)
    # Values only a live attempt measures (types.LIVE_ONLY), as read: (name, offset)
    live_refs: list[tuple[str, int]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    reads_attempt: bool = False  # whether any part looks at the attempt's data

    def type_of(self, node: Node) -> Type:
        return self.types[id(node)]


def typecheck(node: Node, source: str, named_checks: Collection[str] = (),
              condition: bool = True, case: Type | None = None,
              world: Type | None = None,
              names: Mapping[str, Type] | None = None) -> Typed:
    """Type every node of ``node`` (parsed from ``source``). With ``condition``, the whole
    expression must be true or false (as an ``expect`` check's is). ``case``: the type of
    ``case`` in a scenario with cases (without one, the name ``case`` is unknown).
    ``names``: the values the expression reads instead of an attempt's (a table tool's
    rules read ``args``, ``row`` and ``world``: dsl/compiler/rules.py)."""
    checker = _Checker(source, named_checks, case, world, names)
    top = checker.visit(node)
    if condition and not maybe(top, "bool") and top.kind != "null":
        what = "an expect expression" if names is None else "this condition"
        checker.problem(
            "X303", f"{what} must be true or false; this one is {describe(top)}",
            node.loc, _bool_hint(checker.src(node), top))
    return checker.typed


def _bool_hint(src: str, t: Type) -> str:
    if t.kind == "number":
        return f"compare it with something, e.g. {src} > 0"
    if t.kind == "text":
        return f"compare it, e.g. {src} == 'yes', or look inside it: 'yes' in {src}"
    if t.kind == "object" and t.shape == "call":
        name = src[len("call("):-1] if src.startswith("call(") and src.endswith(")") else "'x'"
        return f"to ask whether a tool was called, use called({name})"
    if t.kind == "list":
        return f"compare its size, e.g. count({src}) > 0, or test its items with any(...)"
    return "compare it with something using == != < <= > >= in or matches"


class _Checker:
    def __init__(self, source: str, named_checks: Collection[str],
                 case: Type | None = None, world: Type | None = None,
                 names: Mapping[str, Type] | None = None) -> None:
        self.typed = Typed(source)
        self.named_checks = named_checks
        self.case = case
        self.world = world  # world and world_before (types.world_of); None: no world
        # the values it reads by name: an attempt's, or those given (a tool's rules)
        self.globals: Mapping[str, Member] = GLOBALS if names is None else {
            n: Member(t, "") for n, t in names.items()}
        self.own_names = names is not None
        self.frames: list[Type] = []  # item types of the enclosing conditions
        self.bound: list[str | None] = []  # the name each frame's items were given (as)

    # -------------------------------------------------------------- helpers

    def src(self, node: Node) -> str:
        return snippet(self.typed.source, node.loc)

    def problem(self, code: str, message: str, loc: Loc, hint: str = "") -> Type:
        self.typed.problems.append(Problem(code, message, loc.start, hint))
        return JSON

    def visit(self, node: Node) -> Type:
        t = self._visit(node)
        self.typed.types[id(node)] = t
        return t

    def _visit(self, node: Node) -> Type:
        match node:
            case Const(value=v):
                return _const_type(v)
            case ListOf(items=items):
                return list_of(join([self.visit(i) for i in items]))
            case Name():
                return self.name(node)
            case Field():
                return self.field(node)
            case Subscript():
                return self.subscript(node)
            case FuncCall():
                return self.call(node)
            case Not(operand=operand):
                t = self.visit(operand)
                if not maybe(t, "bool", "null"):
                    self.problem("X303", f"'not' needs a condition (true or false); "
                                         f"{self.src(operand)} is {describe(t)}", operand.loc,
                                 _bool_hint(self.src(operand), t))
                return BOOL
            case Neg(operand=operand):
                t = self.visit(operand)
                if not maybe(t, "number", "null"):
                    self.problem("X303", f"'-' needs a number; {self.src(operand)} is "
                                         f"{describe(t)}", operand.loc)
                return NUMBER
            case BoolOp(op=op, operands=operands):
                for o in operands:
                    t = self.visit(o)
                    if not maybe(t, "bool", "null"):
                        self.problem("X303", f"'{op}' joins conditions that are true or "
                                             f"false; {self.src(o)} is {describe(t)}", o.loc,
                                     _bool_hint(self.src(o), t))
                return BOOL
            case Compare():
                return self.compare(node)
            case Arith():
                return self.arith(node)
            case ObjectOf(entries=entries):
                seen: set[str] = set()
                for key, value in entries:
                    self.visit(value)
                    if key in seen:
                        self.problem("X303", f"the mapping has the key '{key}' twice",
                                     value.loc, "give each key once")
                    seen.add(key)
                return JSON
            case IfElse(then=then, condition=cond, otherwise=otherwise):
                ct = self.visit(cond)
                if not maybe(ct, "bool", "null"):
                    self.problem("X303", f"the condition after 'if' must be true or false; "
                                         f"{self.src(cond)} is {describe(ct)}", cond.loc,
                                 _bool_hint(self.src(cond), ct))
                a, b = self.visit(then), self.visit(otherwise)
                if a.kind == "null":
                    return b
                if b.kind == "null":
                    return a
                return a if a == b else join([a, b])
            case Bind(value=value):
                t = self.visit(value)
                return self.problem(
                    "X303", f"'as {node.name}' names the items of a list only as the first "
                            "argument of count, any, all, sum or map", node.loc,
                    f"for example: all({self.src(value)} as {node.name}, {node.name} != null)")

    # -------------------------------------------------------------- names

    def name(self, node: Name) -> Type:
        n = node.name
        for level in range(len(self.bound) - 1, -1, -1):
            if self.bound[level] == n:  # a name given with `as` means those items
                self.typed.refs[id(node)] = ItemRef(level)
                return self.frames[level]
        if n == ITEM and self.frames:
            level = len(self.frames) - 1
            self.typed.refs[id(node)] = ItemRef(level)
            return self.frames[level]
        for level in range(len(self.frames) - 1, -1, -1):
            frame = self.frames[level]
            known = fields_of(frame)
            if known is not None and n in known:
                self.typed.refs[id(node)] = ItemFieldRef(level, n, frame.kind)
                return known[n].type
            if frame.kind == "json":
                fallback = n if n in self.globals else None
                self.typed.refs[id(node)] = ItemFieldRef(level, n, "json", fallback)
                return JSON
        member = self.globals.get(n)
        if member is not None:
            self.typed.refs[id(node)] = GlobalRef(n)
            self.typed.reads_attempt = True
            if n in LIVE_ONLY:
                self.typed.live_refs.append((n, node.loc.start))
            return member.type
        if n == CASE and self.case is not None:
            self.typed.refs[id(node)] = GlobalRef(n)
            return self.case
        if n in WORLD_NAMES and self.world is not None and not self.own_names:
            self.typed.refs[id(node)] = GlobalRef(n)
            self.typed.reads_attempt = True
            return self.world
        return self.unknown_name(node)

    def resolvable(self, n: str) -> bool:
        """Whether the name means something here (a value, the item or an item's field)."""
        if n in self.globals or (n == ITEM and self.frames) or n in self.bound:
            return True
        return any(f.kind == "json" or n in (fields_of(f) or ()) for f in self.frames)

    def unknown_name(self, node: Name) -> Type:
        n = node.name
        if self.own_names:
            return self.unknown_own_name(node)
        if n in FUNCTIONS:
            example = FUNCTIONS[n].examples[0][0]
            return self.problem("X302", f"'{n}' is a function; write its arguments in "
                                        f"parentheses after it, e.g. {example}", node.loc)
        if n in _WRONG_CASE:
            return self.problem("X302", f"unknown name '{n}'; write {_WRONG_CASE[n]}", node.loc)
        if n in self.named_checks:
            return self.problem(
                "X302", f"'{n}' is a check defined in scenarist.yaml; use it on its own line: "
                        f"- expect: {n}", node.loc,
                "a named check cannot be part of another expression")
        if n == CASE:
            return self.problem(
                "X302", "'case' is the values of a scenario's case, and this scenario has no "
                        "cases", node.loc,
                "give the scenario cases: (or a cases_file:); then case.NAME is that case's "
                "value NAME")
        if n in WORLD_NAMES:
            return self.problem(
                "X302", f"'{n}' is the tables of the scenario's world, and this scenario has "
                        "no world", node.loc,
                "give the suite a world: (or the scenario a given.world:); then "
                f"{n}.TABLE is that table's rows")
        if n == ITEM:
            return self.problem(
                "X302", "'item' is the current item, and exists only inside [ ] after a list "
                        "or in the condition of count, any or all", node.loc,
                "for example: calls[item.name == 'search'] or any(calls, item.pending)")
        fields: list[str] = []
        for frame in self.frames:
            fields.extend(fields_of(frame) or ())
        known = [*GLOBALS, *(WORLD_NAMES if self.world is not None else ())]
        candidates = [*fields, *known, *([ITEM] if self.frames else [])]
        hint = f"the values are {', '.join(known)}"
        if fields:
            hint += f"; inside [ ] also the item's fields {', '.join(dict.fromkeys(fields))}"
        hint += f"; if you meant the text '{n}', put it in quotes"
        return self.problem("X302", f"unknown name '{n}'{did_you_mean(n, candidates)}",
                            node.loc, hint)

    def unknown_own_name(self, node: Name) -> Type:
        """A name that is none of the values given (``args``, ``row``, ``world``) nor an
        item's field."""
        n = node.name
        fields: list[str] = []
        for frame in self.frames:
            fields.extend(fields_of(frame) or ())
        known = list(self.globals)
        named = [b for b in self.bound if b]
        candidates = [*fields, *known, *named, *([ITEM] if self.frames else [])]
        if n in FUNCTIONS:
            return self.problem("X302", f"'{n}' is a function; write its arguments in "
                                        f"parentheses after it", node.loc)
        if n in _WRONG_CASE:
            return self.problem("X302", f"unknown name '{n}'; write {_WRONG_CASE[n]}", node.loc)
        if n in GLOBALS:
            return self.problem(
                "X302", f"'{n}' is part of an attempt, which a tool's rule cannot read",
                node.loc, f"a tool's rule reads {', '.join(known)}")
        hint = f"a tool's rule reads {', '.join(known)}"
        if fields:
            hint += f"; inside [ ] also the item's fields {', '.join(dict.fromkeys(fields))}"
        hint += f"; if you meant the text '{n}', put it in quotes"
        return self.problem("X302", f"unknown name '{n}'{did_you_mean(n, candidates)}",
                            node.loc, hint)

    # -------------------------------------------------------------- fields and [ ]

    def field(self, node: Field) -> Type:
        t = self.visit(node.target)
        name = node.name
        known = fields_of(t)
        if known is not None:
            if name in known:
                if t.shape == CASE:
                    self.typed.case_refs.append((name, node.name_loc.start))
                return known[name].type
            if t.shape == CASE:
                return self.problem(
                    "X302", f"the cases have no value '{name}'{did_you_mean(name, known)}",
                    node.name_loc, f"the cases' values are {', '.join(known) or 'none'}")
            if t.shape == WORLD:
                return self.problem(
                    "X302", f"the world has no table '{name}'{did_you_mean(name, known)}",
                    node.name_loc, f"the tables are {', '.join(known) or 'none'}")
            if t.shape == ROW:
                return self.problem(
                    "X302", f"the rows have no column '{name}'{did_you_mean(name, known)}",
                    node.name_loc, f"the columns are {', '.join(known) or 'none'}")
            if t.shape == ARGS:
                return self.problem(
                    "X302", f"the tool has no argument '{name}'{did_you_mean(name, known)}",
                    node.name_loc, f"its arguments (input_schema) are "
                                   f"{', '.join(known) or 'none'}")
            return self.problem(
                "X302", f"{describe(t)} has no field '{name}'{did_you_mean(name, known)}",
                node.name_loc, f"the fields of {describe(t)} are {', '.join(known)}")
        if t.kind in ("json", "null") or t.navigable:
            return JSON if t.kind != "null" else NULL
        target = self.src(node.target)
        if t.kind == "text":
            hint = f"to read a field of JSON written in a text, use json({target}).{name}"
        elif t.kind == "list":
            one = (f"call('...').{name}" if t.item is not None and t.item.shape == "call"
                   else f"{target}[0].{name}")
            hint = f"take one item first, e.g. {one}, or select items: {target}[{name} == ...]"
        else:
            hint = ""
        return self.problem("X303", f"{target} is {describe(t)}, which has no fields",
                            node.name_loc, hint)

    def subscript(self, node: Subscript) -> Type:
        t = self.visit(node.target)
        inner = node.inner
        if isinstance(inner, _CONDITION_NODES) or (isinstance(inner, Const) and
                                                    isinstance(inner.value, bool)):
            return self.select(node, t)
        if isinstance(inner, Name) and t.kind == "list" and t.item is not None:
            known = fields_of(t.item)
            if known is not None and inner.name in known:
                if known[inner.name].type == BOOL:
                    return self.select(node, t)  # calls[pending]
                if not self.resolvable(inner.name):  # calls[args]
                    target = self.src(node.target)
                    return self.problem(
                        "X303", f"an index is a number, and '{inner.name}' is a field of each "
                                f"item of {target}", inner.loc,
                        f"to select items by a field, write a condition: "
                        f"{target}[{inner.name} != null]")
        return self.index(node, t)

    def select(self, node: Subscript, t: Type) -> Type:
        self.typed.selections.add(id(node))
        target = self.src(node.target)
        if t.kind == "list":
            item = t.item or JSON
        elif t.kind in ("json", "null") or t.navigable:
            item = JSON
        else:
            self.problem("X303", f"[ ] with a condition selects items of a list; {target} is "
                                 f"{describe(t)}", node.target.loc)
            item = JSON
        self.condition(node.inner, item, "the condition in [ ]")
        return t if t.kind == "list" else JSON

    def per_item(self, value: Node, item: Type, bound: str | None = None) -> Type:
        """The type of ``value``, read once per item of a list whose items are ``item``
        (called ``bound`` when the list was written ``LIST as NAME``)."""
        self.frames.append(item)
        self.bound.append(bound)
        try:
            return self.visit(value)
        finally:
            self.frames.pop()
            self.bound.pop()

    def condition(self, cond: Node, item: Type, what: str, bound: str | None = None) -> None:
        ct = self.per_item(cond, item, bound)
        if not maybe(ct, "bool", "null"):
            self.problem("X303", f"{what} must be true or false for each item; "
                                 f"{self.src(cond)} is {describe(ct)}", cond.loc,
                         _bool_hint(self.src(cond), ct))

    def index(self, node: Subscript, t: Type) -> Type:
        it = self.visit(node.inner)
        target = self.src(node.target)
        inner = node.inner
        if t.kind == "list":
            if not maybe(it, "number"):
                return self.problem(
                    "X303", f"a list's index is a number (0 for the first item); "
                            f"{self.src(inner)} is {describe(it)}", inner.loc,
                    f"to select items by a condition, write one: {target}[name == 'x']")
            return t.item or JSON
        if t.kind in ("json", "null") or t.navigable:
            if not maybe(it, "number", "text"):
                return self.problem("X303", f"an index is a number (a position) or a text "
                                            f"(a field's name); {self.src(inner)} is "
                                            f"{describe(it)}", inner.loc)
            return JSON if t.kind != "null" else NULL
        known = fields_of(t)
        if known is not None and isinstance(inner, Const) and isinstance(inner.value, str):
            if inner.value in known:
                return known[inner.value].type
            return self.problem("X302", f"{describe(t)} has no field '{inner.value}'"
                                        f"{did_you_mean(inner.value, known)}", inner.loc)
        hint = ("to look for a text inside it use in, or matches for a pattern"
                if t.kind == "text" else "")
        return self.problem("X303", f"{target} is {describe(t)}, which cannot be indexed "
                                    "with [ ]", inner.loc, hint)

    # -------------------------------------------------------------- functions

    def call(self, node: FuncCall) -> Type:
        f = FUNCTIONS.get(node.func)
        if f is None:
            for a in node.args:
                self.visit(a)
            if node.func in GLOBALS:
                return self.problem("X302", f"'{node.func}' is a value, not a function; "
                                            "remove the parentheses", node.func_loc)
            return self.problem(
                "X302", f"unknown function '{node.func}'"
                        f"{did_you_mean(node.func, FUNCTIONS)}", node.func_loc,
                f"the functions are {', '.join(FUNCTIONS)}")
        lo, hi = f.arity
        n = len(node.args)
        if not lo <= n <= hi:
            for a in node.args:
                self.visit(a)
            return self.problem("X304", f"{f.name} takes {_arity(lo, hi)}; it was given "
                                        f"{_count(n)}", node.func_loc,
                                f"write it as {f.signature.split(' → ')[0]}")
        if f.name in ("called", "call") and n == 1:
            self.typed.reads_attempt = True
            arg = node.args[0]
            if isinstance(arg, Const) and isinstance(arg.value, str):
                self.typed.tool_refs.append((f.name, arg.value, arg.loc.start))
            if isinstance(arg, Name) and not self.resolvable(arg.name):
                return self.problem("X302", f"unknown name '{arg.name}'; a tool's name is "
                                            f"written in quotes: {f.name}('{arg.name}')",
                                    arg.loc)
        head = node.args[0] if n else None
        bound = head if isinstance(head, Bind) else None
        if bound is not None:
            first = self.visit(bound.value)
            self.typed.types[id(bound)] = first
        else:
            first = self.visit(head) if head is not None else NULL
        if n == 2 and (f.takes_condition(first) or f.per_value is not None):
            self.typed.conditions.add(id(node))
            listed = self.src(bound.value if bound is not None else node.args[0])
            what = "a condition" if f.per_value is None else "a value for each item"
            if not maybe(first, "list", "null") and not first.navigable:
                return self.problem("X303", f"{f.name} with {what} needs a list; "
                                            f"{listed} is {describe(first)}",
                                    node.args[0].loc)
            item = first.item if first.kind == "list" and first.item else JSON
            name = bound.name if bound is not None else None
            if bound is not None and name is not None and (name in self.globals
                                                           or name == ITEM):
                self.problem("X302", f"'{name}' already names a value; give the items "
                                     "another name", bound.name_loc)
            if f.per_value is None:
                self.condition(node.args[1], item, f"the condition of {f.name}", name)
                return f.condition_result
            vt = self.per_item(node.args[1], item, name)
            try:
                return f.per_value_type(vt)
            except ArgTypeError as exc:
                return self.problem("X303", f"{f.name} needs {exc.expected} for each item; "
                                            f"{self.src(node.args[1])} is {describe(vt)}",
                                    node.args[1].loc, exc.hint)
        if bound is not None:
            self.problem("X303", f"'as {bound.name}' names the items of a list only when "
                                 f"{f.name} goes through them with a condition or a value",
                         bound.loc, "for example: count(args.item_ids as id, id != '')")
        types = [first, *(self.visit(a) for a in node.args[1:])]
        return self.apply(f, node, types)

    def apply(self, f: Function, node: FuncCall, types: Sequence[Type]) -> Type:
        try:
            return f.typing(types)
        except ArgTypeError as exc:
            arg = node.args[exc.index]
            return self.problem("X303", f"{f.name} needs {exc.expected}; {self.src(arg)} is "
                                        f"{describe(types[exc.index])}", arg.loc, exc.hint)

    # -------------------------------------------------------------- operators

    def compare(self, node: Compare) -> Type:
        op = node.op
        lt = self.visit(node.left)
        if op == "matches":
            self.matches(node, lt)
            return BOOL
        rt = self.visit(node.right)
        if op in ("==", "!="):
            if not equatable(lt, rt):
                never = "never true" if op == "==" else "always true"
                self.problem("X303", f"'{op}' compares {describe(lt)} with {describe(rt)}, so "
                                     f"it is {never}", node.op_loc, _compare_hint(lt, rt))
        elif op in ("in", "not in"):
            self.contains(node, lt, rt)
        elif not orderable(lt, rt):
            if lt.kind == rt.kind or "json" in (lt.kind, rt.kind):
                what = describe(lt) if lt.kind != "json" else describe(rt)
                message = f"'{op}' puts numbers, texts or dates in order, not {what}"
            else:
                message = f"'{op}' cannot compare {describe(lt)} with {describe(rt)}"
            self.problem("X303", message, node.op_loc, _compare_hint(lt, rt))
        return BOOL

    def contains(self, node: Compare, lt: Type, rt: Type) -> None:
        op = node.op
        if rt.kind in ("json", "null"):
            return
        if rt.kind == "text":
            if not maybe(lt, "text", "null"):
                self.problem("X303", f"'{op}' looks for a text inside a text; "
                                     f"{self.src(node.left)} is {describe(lt)}", node.left.loc,
                             f"write it as text: '{self.src(node.left)}', or use text(...)")
            return
        if rt.kind == "list":
            item = rt.item or JSON
            if not equatable(lt, item):
                never = "never true" if op == "in" else "always true"
                self.problem("X303", f"'{op}' looks for {describe(lt)} in a list of "
                                     f"{plural(item)}, so it is {never}", node.op_loc,
                             _compare_hint(lt, item))
            return
        self.problem("X303", f"'{op}' looks inside a text or a list; {self.src(node.right)} "
                             f"is {describe(rt)}", node.right.loc)

    def matches(self, node: Compare, lt: Type) -> None:
        if not maybe(lt, "text", "null"):
            self.problem("X303", f"'matches' looks for a pattern in a text; "
                                 f"{self.src(node.left)} is {describe(lt)}", node.left.loc,
                         "to match a number, turn it into text first: text(...) matches "
                         "'...'")
        right = node.right
        if not (isinstance(right, Const) and isinstance(right.value, str)):
            self.visit(right)
            self.problem("X303", "the pattern after 'matches' must be written in quotes",
                         right.loc, "for example: answer matches '18[:.]00'")
            return
        self.typed.types[id(right)] = TEXT
        compiled = compile_pattern(right.value)
        if isinstance(compiled, PatternError):
            raw = self.typed.source[right.loc.start:right.loc.end]
            at = _pattern_error_at(right.value, compiled)
            # The caret shows the place: the engine's "at position N" would only confuse.
            message = re.sub(r" at position \d+", "", compiled.message)
            self.typed.problems.append(Problem(
                "E204", f"{message} in the pattern '{right.value}'",
                right.loc.start + _raw_offset(raw, at),
                "escape special characters with a backslash, e.g. \\( or \\."))
            return
        self.typed.patterns[id(node)] = compiled

    def arith(self, node: Arith) -> Type:
        op = node.op
        lt = self.visit(node.left)
        rt = self.visit(node.right)
        kinds = {lt.kind, rt.kind}
        if "null" in kinds:
            return JSON
        if op == "+":
            if "list" in kinds and maybe(lt, "list") and maybe(rt, "list"):
                items = [t.item or JSON for t in (lt, rt) if t.kind == "list"]
                return list_of(join(items)) if "json" not in kinds else JSON
            if maybe(lt, "number") and maybe(rt, "number") and kinds != {"json"}:
                return NUMBER
            if maybe(lt, "text") and maybe(rt, "text") and kinds != {"json"}:
                return TEXT
            if lt.kind == "date" and maybe(rt, "number"):
                return DATE
            if kinds == {"json"}:
                return JSON
            return self.problem("X303", f"'+' cannot add {describe(lt)} and {describe(rt)}",
                                node.op_loc, _arith_hint(lt, rt))
        if op == "-":
            if lt.kind == "date":
                if rt.kind == "date":
                    return NUMBER  # days between
                if maybe(rt, "number"):
                    return DATE
            elif maybe(lt, "number") and maybe(rt, "number"):
                return NUMBER
            return self.problem("X303", f"'-' cannot subtract {describe(rt)} from "
                                        f"{describe(lt)}", node.op_loc, _arith_hint(lt, rt))
        for side, t in ((node.left, lt), (node.right, rt)):
            if not maybe(t, "number"):
                return self.problem("X303", f"'{op}' needs numbers on both sides; "
                                            f"{self.src(side)} is {describe(t)}", side.loc)
        return NUMBER


def _pattern_error_at(pattern: str, error: PatternError) -> int:
    """Where to point in a pattern that does not compile. The regex engine reports an
    unclosed group or set at the pattern's end; the bracket that opened it is the place."""
    opener = "(" if "missing )" in error.message else \
        "[" if "unterminated character set" in error.message else ""
    if not opener:
        return error.offset
    stack: list[int] = []
    i = 0
    in_set = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_set:
            in_set = c != "]"
        elif c == "[":
            in_set = True
            if opener == "[":
                stack.append(i)
        elif c == "(" and opener == "(":
            stack.append(i)
        elif c == ")" and opener == "(" and stack:
            stack.pop()
        i += 1
    return stack[-1] if stack else error.offset


def _const_type(v: object) -> Type:
    if v is None:
        return NULL
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int | float):
        return NUMBER
    return TEXT


def _arity(lo: int, hi: int) -> str:
    if hi >= 10:
        return f"at least {_count(lo)}"
    if lo == hi:
        return _count(lo)
    if hi - lo == 1:
        return f"{_count(lo)} or {hi}"
    return f"{lo} to {hi} arguments"


def _count(n: int) -> str:
    return f"{n} argument" if n == 1 else f"{n} arguments"


def _compare_hint(a: Type, b: Type) -> str:
    kinds = {a.kind, b.kind}
    if kinds == {"text", "number"}:
        return ("write the number in quotes ('5'), or turn the text into a number with "
                "number(...)")
    if "date" in kinds and kinds & {"text", "json"}:
        return "turn the text into a date with date(...), e.g. date(args.date) == " \
               "date('2026-10-06')"
    if kinds == {"bool", "text"}:
        return "write true or false without quotes"
    if "object" in kinds:
        return "compare one of its fields, e.g. call('book').args.date == '2026-10-06'"
    if "list" in kinds:
        return "to look for a value in a list use in: 'x' in list"
    return ""


def _arith_hint(a: Type, b: Type) -> str:
    kinds = {a.kind, b.kind}
    if kinds == {"text", "number"}:
        return "turn the number into text with text(...), or the text into a number with " \
               "number(...)"
    if "date" in kinds:
        return "dates can be subtracted (days between them) and a number of days added"
    return ""


def _raw_offset(raw: str, index: int) -> int:
    from .parse import raw_offset  # not at import time: it brings in Lark

    return raw_offset(raw, index)
