"""Builds ``schemas/scenario.schema.json``, ``schemas/suite.schema.json`` and
``schemas/labels.schema.json`` (the judge's labelled examples).

The check registry is the source of the checks' parameter schemas (STYLE.md §6); this
module puts them together with the rest of the format. The JSON files in ``schemas/`` are
what the validator and editors read; ``python -m dsl._buildtools.schemagen`` rewrites them
and a test fails when they differ from what this module builds, so they cannot drift.

Every property carries ``description``, ``markdownDescription`` and ``examples`` so that
editors (VS Code's YAML extension, JetBrains) show help while people type.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

from ..checks import REGISTRY
from ..checks.registry import MODIFIERS, schema_doc
from ..compiler.suite import DEFAULTS
from ..model import ACTIONS
from ..targets.kinds import KINDS

DIALECT = "https://json-schema.org/draft/2020-12/schema"
ID_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.\-/]*$"
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_\-]*$"
CHECK_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"  # a bare name in `- expect: NAME`


def _tool(named: bool) -> dict[str, Any]:
    props: dict[str, Any] = {
        "name": {
            "type": "string",
            "pattern": NAME_PATTERN,
            "maxLength": 64,
            **schema_doc(
                "The tool's name, as the model sees it (letters, digits, `_` and `-`).",
                "book_appointment",
            ),
        },
        "description": {
            "type": "string",
            **schema_doc(
                "What the tool does, as the model reads it. Write it as the real tool's "
                "description.",
                "Book an appointment for a patient.",
            ),
        },
        "input_schema": {
            "type": "object",
            **schema_doc(
                "A JSON Schema of the tool's arguments (an object), as in the OpenAI "
                "tools format. Default: no arguments.",
                {
                    "type": "object",
                    "properties": {"day": {"type": "string"}},
                    "required": ["day"],
                },
            ),
        },
        "action": {
            "enum": list(ACTIONS),
            **schema_doc(
                "What calling the tool does to the world: `read` (default), `create`, "
                "`update` or `delete`. `does_not_modify` fails when a non-read tool runs.",
                "update",
            ),
        },
        "confirm": {
            "type": "boolean",
            **schema_doc(
                "When true, the agent must ask the person before this tool runs: a call is "
                "held as *pending*, not executed, and the turn ends there (a later turn may "
                "confirm or cancel it).",
                True,
            ),
        },
        "returns": {
            **schema_doc(
                "What the tool gives back to the model: fixed text or data (mappings and "
                "lists are sent as JSON). Any text in it may be a template over the call's "
                "arguments, e.g. `Booked {{ args.date }}`. Default: `OK` (none when the "
                "tool has `answers`: a call that matches no answer is then an error).",
                "Open 09:00-18:00",
                {"monday": "09:00-18:00"},
                "Hours for {{ args.day }} updated.",
                {"id": "{{ args.patient_id }}", "found": True},
            ),
        },
        "answers": {
            "type": "array",
            "items": _tool_answer(),
            **schema_doc(
                "Answers by argument, tried in order: the first whose `when` arguments "
                "are all in the call, with equal values, gives its `returns` (or fails "
                "with its `error`). When none matches, the tool's `returns` answers; "
                "without one, the model gets the error \"no record for these arguments\".",
                [{"when": {"patient_id": "P-1"}, "returns": {"name": "Ana Gómez"}},
                 {"when": {"patient_id": "P-999"}, "error": "No patient P-999."}],
            ),
        },
        "error": {
            "type": "string",
            "minLength": 1,
            **schema_doc(
                "The tool always fails: the model gets this text as an error (it may be a "
                "template over the arguments). Not together with `returns` or `answers`.",
                "The booking system is down.",
            ),
        },
        "ends_conversation": {
            "type": "boolean",
            **schema_doc(
                "When true (a transfer to a human), calling this tool ends the conversation: "
                "the turn it is called in is the last one (later turns and the simulated "
                "user are not played). Recorded as `ended_by` and shown in the report.",
                True,
            ),
        },
        **_table_keys(),
    }
    schema: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "properties": props,
        **schema_doc(
            "A fake tool: what the model sees, and what it gets back when it calls it.",
            {
                "name": "set_business_hours",
                "description": "Change the opening hours of one day.",
                "input_schema": {"type": "object", "properties": {"day": {"type": "string"}},
                                 "required": ["day"]},
                "action": "update",
                "confirm": True,
                "returns": "Hours for {{ args.day }} updated.",
            },
        ),
    }
    if named:
        schema["required"] = ["name"]
    else:
        del props["name"]
    return schema


def _columns(what: str, example: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "minProperties": 1,
            "propertyNames": {"minLength": 1},
            **schema_doc(what, example)}


def _table_keys() -> dict[str, Any]:
    """A fake tool's keys that make it act on a table of the world."""
    return {**_step_keys(), **_rule_keys(), "effects": _effects()}


def _step_keys() -> dict[str, Any]:
    """A table step's table, where, set, row, fields and one."""
    return {
        "table": {
            "type": "string",
            "minLength": 1,
            **schema_doc(
                "The table of the world this tool acts on (`world:` in scenarist.yaml, "
                "`given.world` in the scenario), by its `action`: `read` answers the rows "
                "`where` matches, `update` changes them (`set`), `create` adds `row`, "
                "`delete` removes them. See \"A world with state\" in docs/scenarios.md.",
                "cards",
            ),
        },
        "where": _columns(
            "The rows the tool acts on: every column given must have this value (each a "
            "template over the call, e.g. `{{ args.card_id }}`). A where that matches "
            "nothing is an error the agent sees: `no row in cards with id = C-9` (for "
            "update, delete, and read with `one: true`). Default: every row.",
            {"id": "{{ args.card_id }}"}),
        "set": _columns(
            "`action: update`: the columns to change in every row `where` matches, and "
            "their new values (templates over the call).",
            {"status": "blocked"}),
        "row": _columns(
            "`action: create`: the row the tool adds (templates over the call). A row "
            "whose `id` already exists is an error the agent sees.",
            {"id": "{{ args.id }}", "card": "{{ args.card_id }}", "status": "ordered"}),
        "fields": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "minItems": 1,
            "uniqueItems": True,
            **schema_doc("The only columns the tool answers with (a tool that must not "
                         "reveal a column). Default: every column.", ["id", "type", "status"]),
        },
        "one": {
            "type": "boolean",
            **schema_doc("`action: read`: answer the single matching row (a JSON object), "
                         "or an error when none matches.", True),
        },
    }


def _effects() -> dict[str, Any]:
    return {
            "type": "array",
            "minItems": 1,
            "items": _effect(),
            **schema_doc(
                "Further steps of the same call, applied in order after the tool's own: "
                "each acts on a table as a table tool does. All or nothing: when a step is "
                "refused or matches no row, no table changes and the agent gets that "
                "step's error.",
                [{"table": "payment_methods", "action": "update",
                  "where": {"id": "{{ args.payment_method_id }}"},
                  "if": "row.source == 'gift_card'",
                  "compute": {"balance": "row.balance + args.amount"}}]),
    }


_EXPRESSION = {"type": "string", "minLength": 1}


def _rule_keys() -> dict[str, Any]:
    """A table step's rules and computed changes (the tool's own, and each effect's)."""
    return {
        "require": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["if", "else"],
                "properties": {
                    "if": {**_EXPRESSION, **schema_doc(
                        "What must be true for the call to run: an expression (the language "
                        "of `expect`) reading `args`, `row` and `world`.",
                        "row.status == 'pending'")},
                    "else": {"type": "string", "minLength": 1, **schema_doc(
                        "What the agent gets when it is false (a template over `args` and "
                        "`row`); the call is recorded with the error kind `refused`.",
                        "Error: non-pending order cannot be cancelled")},
                },
                **schema_doc("One rule: `{if: EXPRESSION, else: TEXT}`.",
                             {"if": "row.status == 'pending'",
                              "else": "Error: non-pending order cannot be cancelled"}),
            },
            **schema_doc(
                "Rules the call must keep, checked in order before anything changes: the "
                "first that is false refuses the call with its `else` text, and nothing "
                "changes. For several rows, each must keep them.",
                [{"if": "row.status == 'pending'",
                  "else": "Error: non-pending order cannot be cancelled"},
                 {"if": "any(world.payment_methods, id == args.payment_method_id and "
                        "user_id == row.user_id)",
                  "else": "Error: payment method not found"}]),
        },
        "compute": _columns(
            "`action: update` or `create`: columns worked out by an expression (the language "
            "of `expect`) reading `args`, `row` (the row before the change) and `world`. "
            "Numbers with decimals stay exact.",
            {"balance": "row.balance + args.amount", "item_ids": "sorted(args.item_ids)"})
        | {"additionalProperties": _EXPRESSION},
        "append": _columns(
            "`action: update`: a value added at the end of a list column (a mapping or "
            "text; templates allowed).",
            {"payment_history": {"transaction_type": "refund",
                                 "amount": "{{ row.payment_history[0].amount }}"}}),
    }


def _effect() -> dict[str, Any]:
    """One step of ``effects``."""
    table = _step_keys()
    props: dict[str, Any] = {
        "table": table["table"],
        "action": {
            "enum": list(ACTIONS),
            **schema_doc("What the step does to its table: `read` (its rules only check), "
                         "`create`, `update` (the default) or `delete`.", "update"),
        },
        "where": table["where"],
        "set": table["set"],
        "row": table["row"],
        **_rule_keys(),
        "if": {**_EXPRESSION, **schema_doc(
            "The step happens only when this expression is true (asked of each row its "
            "`where` matches).", "row.source == 'gift_card'")},
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["table"],
        "properties": props,
        **schema_doc("A further step of the call: a table, an action, and its where, set, "
                     "compute, row, append, require and if.",
                     {"table": "payment_methods", "action": "update",
                      "where": {"id": "{{ args.payment_method_id }}"},
                      "compute": {"balance": "row.balance - args.amount"}}),
    }


def world_schema(where: str) -> dict[str, Any]:
    """``world:`` (the suite's) and ``given.world`` (a scenario's)."""
    row = {"type": "object", **schema_doc("A row: its columns and their values. Its `id` "
                                          "identifies it.", {"id": "C-1", "status": "active"})}
    return {
        "type": "object",
        "propertyNames": {"pattern": NAME_PATTERN},
        "additionalProperties": {
            "if": {"type": "array"},
            "then": {"items": row},
            "else": {
                "type": "object",
                "required": ["file"],
                "additionalProperties": False,
                "properties": {"file": {
                    "type": "string",
                    "minLength": 1,
                    **schema_doc("A `.csv` file with a header row, or a `.jsonl` file of one "
                                 "JSON object a line, relative to this file's folder.",
                                 "cards.csv")}},
            },
            **schema_doc("A table: a list of rows, or `{file: PATH}` (CSV or JSONL).",
                         [{"id": "C-1", "type": "debit", "status": "active"}],
                         {"file": "cards.csv"}),
        },
        **schema_doc(
            f"A world with state: named tables of rows that tools with `table:` read and "
            f"change, and that the `world` check and `world.TABLE` in expressions look at. "
            f"{where} Every attempt starts from a fresh copy.",
            {"cards": [{"id": "C-1", "owner": "ana", "type": "debit", "status": "active"},
                       {"id": "C-2", "owner": "ana", "type": "credit", "status": "active"}]},
        ),
    }


def _tool_answer() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["when"],
        "additionalProperties": False,
        **schema_doc("One answer: the arguments it is for, and what the tool returns (or "
                     "the error it fails with) for them.",
                     {"when": {"patient_id": "P-1"}, "returns": {"name": "Ana Gómez"}}),
        "properties": {
            "when": {
                "type": "object",
                **schema_doc("Arguments the call must have, with these exact values (others "
                             "are allowed). `{}` matches every call.",
                             {"patient_id": "P-1"}),
            },
            "returns": {
                **schema_doc("What the tool returns for these arguments: text or data; text "
                             "in it may be a template over the arguments.",
                             {"name": "Ana Gómez", "id": "{{ args.patient_id }}"}),
            },
            "error": {
                "type": "string",
                "minLength": 1,
                **schema_doc("Instead of returns: the tool fails with this text.",
                             "No patient with this id."),
            },
        },
    }


ANCHORS = {"^x-": schema_doc("A place for YAML anchors (`x-common: &common ...`), which "
                             "Scenarist ignores: merge them with `<<: *common`, or reuse "
                             "them with `*common`.", {"x-checks": [{"non_empty": True}]})}


def _attachments() -> dict[str, Any]:
    return {
        "type": "array",
        "items": {"$ref": "#/$defs/attachment"},
        **schema_doc(
            "Files the person sends with the message: images (PNG, JPEG, WebP) go to the "
            "model as image parts, UTF-8 text files as text. Paths are relative to the "
            "suite's folder.",
            [{"path": "attachments/receipt.png", "kind": "image"},
             {"path": "attachments/notes.txt", "kind": "file", "label": "notes"}]),
    }


def _attachment() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["path", "kind"],
        "additionalProperties": False,
        **schema_doc("One file the person sends.",
                     {"path": "attachments/receipt.png", "kind": "image"}),
        "properties": {
            "path": {"type": "string", "minLength": 1, **schema_doc(
                "The file, relative to the suite's folder (no absolute paths, no `..`); at "
                "most 5 MiB.", "attachments/receipt.png")},
            "kind": {"enum": ["image", "file"], **schema_doc(
                "`image`: a PNG, JPEG or WebP image; `file`: a UTF-8 text file.", "image")},
            "mime_type": {"type": "string", "pattern": r"^[A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+$",
                          **schema_doc("The file's MIME type (default: from its extension).",
                                       "image/png")},
            "label": {"type": "string", "minLength": 1, **schema_doc(
                "What the file is called (default: its name); a text file is sent under it.",
                "receipt")},
        },
    }


def _cases() -> dict[str, Any]:
    return {
        "type": "array",
        "minItems": 1,
        "maxItems": 10000,
        "items": {
            "type": "object",
            **schema_doc(
                "One case: its values, read in the scenario's texts as `{{ name }}` and in "
                "expressions as `case.name`. `id` names it (`ID[id]`; default: its number); "
                "`runs`, `min_pass` and `tags` override the scenario's.",
                {"id": "es", "question": "¿Hasta qué hora atienden el sábado?",
                 "expected": "13:00"}),
            "properties": {
                "id": {**schema_doc("The case's name in its scenario's id: `ID[id]` "
                                    "(default: its number, 1, 2, …).", "es")},
                "runs": {**schema_doc("Runs for this case (instead of the scenario's).", 10)},
                "min_pass": {**schema_doc("How many of this case's runs must pass.", 8)},
                "tags": {**schema_doc("This case's tags (instead of the scenario's): a list, "
                                      "or text separated by spaces or commas.", ["slow"])},
            },
        },
        **schema_doc(
            "The scenario's cases: one scenario is run per case, its texts rendered with the "
            "case's values (`{{ name }}`). Not together with `cases_file`.",
            [{"id": "es", "question": "¿Hasta qué hora atienden el sábado?"},
             {"id": "en", "question": "Until what time are you open on Saturday?"}]),
    }


def _when() -> dict[str, Any]:
    """``when``: one message, a list of turns, or a simulated user."""
    turn = {
        "type": ["string", "object"],
        **schema_doc(
            "One turn: what the person says (text, or `say: TEXT`), or `confirm: TOOL` / "
            "`cancel: TOOL` (or `all`) — the person presses confirm or cancel on the calls "
            "the agent holds for confirmation. `then:` adds checks on this turn alone.",
            "Cerramos los sábados. Cambialo.",
            {"say": "Cerramos los sábados. Cambialo."},
            {"confirm": "set_business_hours", "then": [{"contains": "sábado"}]},
        ),
        "if": {"type": "string"},
        "then": {"minLength": 1},
        "else": {
            "additionalProperties": False,
            "properties": {
                "say": {"type": "string", "minLength": 1,
                        **schema_doc("What the person says.", "Sí, cambialo.")},
                "confirm": {"type": "string", "minLength": 1, **schema_doc(
                    "The person presses confirm on the pending calls to this tool (`all`: "
                    "every pending call): they run, and their result goes back to the agent.",
                    "set_business_hours", "all")},
                "cancel": {"type": "string", "minLength": 1, **schema_doc(
                    "The person presses cancel on the pending calls to this tool (`all`: "
                    "every pending call): they do not run, and the agent is told so.",
                    "set_business_hours", "all")},
                "then": {
                    "type": "array",
                    "items": {"$ref": "#/$defs/check"},
                    **schema_doc("Checks on this turn: its answer and the calls the agent "
                                 "made during it.", [{"contains": "Listo"}]),
                },
                "attachments": _attachments(),
            },
        },
    }
    user = {
        "type": "object",
        "required": ["goal", "target"],
        "additionalProperties": False,
        **schema_doc("A model of the suite plays the person: it writes to the agent until it "
                     "says its goal is reached, or has written max_turns messages.",
                     {"goal": "Book a cleaning next Tuesday afternoon.",
                      "persona": "Ana, a patient who writes short messages.",
                      "target": "local", "max_turns": 4}),
        "properties": {
            "goal": {"type": "string", "minLength": 1, **schema_doc(
                "What the person wants, as you would tell an actor.",
                "Book a cleaning next Tuesday afternoon.")},
            "persona": {"type": "string", **schema_doc(
                "Who the person is and how they write (optional).",
                "Ana Gómez, a patient; writes short messages in Spanish.")},
            "target": {"type": "string", "minLength": 1, **schema_doc(
                "The suite's target (kind: openai or replay) that plays the person.",
                "local")},
            "max_turns": {"type": "integer", "minimum": 1, "maximum": 50, **schema_doc(
                "The most messages the person writes (default 5).", 4)},
        },
    }
    return {
        "type": ["string", "array", "object"],
        **schema_doc(
            "What the person says to the agent (or a conversation: a list of turns, or "
            "`{user: {goal, target}}` for a simulated user).",
            "¿Hasta qué hora atienden hoy?",
            ["Cerramos los sábados. Cambialo.", {"confirm": "set_business_hours"}],
            {"user": {"goal": "Book a cleaning next Tuesday.", "target": "local"}},
        ),
        "minLength": 1,
        "items": {"$ref": "#/$defs/turn"},
        "minItems": 1,
        "if": {"type": "object"},
        "then": {"required": ["user"], "additionalProperties": False,
                 "properties": {"user": {"$ref": "#/$defs/user"}}},
        "$defs_turn": turn,
        "$defs_user": user,
    }


def _history() -> dict[str, Any]:
    call = {
        "type": "object",
        "required": ["name"],
        "additionalProperties": False,
        **schema_doc("A tool call the agent made earlier, and its result.",
                     {"name": "find_patient", "args": {"name": "Ana"},
                      "returns": {"patient_id": "P-1"}}),
        "properties": {
            "name": {"type": "string", "minLength": 1,
                     **schema_doc("One of the scenario's tools.", "find_patient")},
            "args": {"type": "object", **schema_doc("Its arguments.", {"name": "Ana"})},
            "returns": {**schema_doc("What it returned (text or data; default OK).",
                                     {"patient_id": "P-1"})},
        },
    }
    return {
        "type": "array",
        **schema_doc(
            "Earlier messages the conversation starts from: `user: TEXT`, `assistant: "
            "TEXT`, or `assistant: {text, calls: [{name, args, returns}]}`. Calls here were "
            "not made by the agent: no check counts them.",
            [{"user": "Hola, soy Ana Gómez."},
             {"assistant": {"calls": [{"name": "find_patient", "args": {"name": "Ana Gómez"},
                                       "returns": {"patient_id": "P-1"}}]}},
             {"assistant": "Hola Ana, ¿en qué te ayudo?"}],
        ),
        "items": {
            "type": "object",
            "minProperties": 1,
            "maxProperties": 1,
            "additionalProperties": False,
            **schema_doc("One earlier message: user or assistant.",
                         {"user": "Hola, soy Ana Gómez."}),
            "properties": {
                "user": {"type": "string", **schema_doc("What the person said.",
                                                        "Hola, soy Ana Gómez.")},
                "assistant": {
                    "type": ["string", "object"],
                    **schema_doc("What the agent said, or the tool calls it made (with "
                                 "optional text).", "Hola Ana, ¿en qué te ayudo?",
                                 {"calls": [{"name": "find_patient",
                                             "args": {"name": "Ana Gómez"}}]}),
                    "if": {"type": "object"},
                    "then": {
                        "required": ["calls"],
                        "additionalProperties": False,
                        "properties": {
                            "text": {"type": "string", **schema_doc(
                                "Text the agent wrote beside its calls.", "Let me look.")},
                            "calls": {"type": "array", "minItems": 1, "items": call,
                                      **schema_doc("The calls, each with its result.",
                                                   [{"name": "find_patient",
                                                     "args": {"name": "Ana"}}])},
                        },
                    },
                },
            },
        },
    }


BOOLEAN_CHECKS_NOTE = "Checks that take `true` may also be written as a bare name: `- non_empty`."


def _one_check() -> dict[str, Any]:
    """As many keys as the item has modifiers, plus one (the check). An item of one key
    (the usual one) is decided by the first test."""
    mods = list(MODIFIERS)
    out: dict[str, Any] = {"maxProperties": 1}
    # the outermost count is "every modifier present"; each else, one fewer
    for k in range(1, len(mods) + 1):
        combos = [list(c) for c in itertools.combinations(mods, k)]
        out = {"if": {"anyOf": [{"required": c} for c in combos]} if len(combos) > 1
               else {"required": combos[0]},
               "then": {"minProperties": k + 1, "maxProperties": k + 1}, "else": out}
    return {"if": {"maxProperties": 1}, "else": out}


def check_schema() -> dict[str, Any]:
    """One item of ``then``: a bare flag check, or a mapping of exactly one check (its key
    and parameter, each check's parameter chosen with if/then on its key) and, beside it,
    the modifiers (``always``, ``name``)."""
    names = sorted(REGISTRY)
    flag_names = sorted(n for n, c in REGISTRY.items() if c.schema.get("const") is True)
    branches = [
        {
            "if": {"type": "object", "required": [name]},
            "then": {"properties": {name: {"$ref": f"#/$defs/params/{name}"}}},
        }
        for name in names
    ] + [  # the modifiers, checked the same way: only when the item has them
        {
            "if": {"type": "object", "required": [name]},
            "then": {"properties": {name: dict(schema)}},
        }
        for name, schema in MODIFIERS.items()
    ]
    return {
        "type": ["object", "string"],
        **schema_doc(
            "One check: a mapping with the check's name and its parameter, and optionally "
            "`always: true` (it must pass in every attempt) and `name:` (how people see it). "
            + BOOLEAN_CHECKS_NOTE,
            {"contains": "18:00"},
            {"calls": "list_business_hours"},
            "non_empty",
            {"not_calls": "create_refill_request", "always": True,
             "name": "never refills an empty prescription"},
        ),
        "if": {"type": "string"},
        "then": {"enum": flag_names},
        "else": {
            "minProperties": 1,
            "propertyNames": {"enum": [*names, *MODIFIERS]},
            # for editors: what each modifier is (they are checked in the branches)
            "properties": {k: {d: v[d] for d in ("description", "markdownDescription",
                                                  "examples") if d in v}
                           for k, v in MODIFIERS.items()},
            "allOf": branches,  # one if/then per check, chosen by its key
            # exactly one key is a check, the others modifiers: with the keys limited to
            # checks and modifiers, that is a count of keys (cheaper than a oneOf of every
            # check: lint checks it on every item of every file)
            **_one_check(),
        },
    }


def scenario_schema() -> dict[str, Any]:
    params = {}
    for name, c in sorted(REGISTRY.items()):
        p = dict(c.schema)
        p.setdefault("description", c.doc)
        p["markdownDescription"] = f"**{name}** — {c.doc}\n\n" + "\n".join(
            f"    - {e}" for e in c.examples
        )
        params[name] = p
    when = _when()
    defs = {"turn": when.pop("$defs_turn"), "user": when.pop("$defs_user")}
    then = {
        "type": "array",
        "items": {"$ref": "#/$defs/check"},
        **schema_doc(
            "The checks. An attempt passes when all of them pass (and, in a conversation, "
            "every turn's own checks too). In a conversation they see the last answer and "
            "every call of the whole conversation.",
            [{"calls": "list_business_hours"}, {"contains": "18:00"}],
        ),
    }
    return {
        "$schema": DIALECT,
        "$id": "https://scenarist.dev/schemas/scenario.schema.json",
        "title": "Scenarist scenario",
        **schema_doc(
            "A scenario: given a moment and some tools, when someone says something, then "
            "the agent should do this and not that — tried `runs` times."
        ),
        "type": "object",
        "required": ["given", "when"],
        # a list of turns may keep all its checks in its turns
        "if": {"properties": {"when": {"type": "array"}}},
        "else": {"required": ["then"]},  # then itself is described once, below
        "additionalProperties": False,
        "patternProperties": ANCHORS,
        "properties": {
            "id": {
                "type": "string",
                "pattern": ID_PATTERN,
                **schema_doc(
                    "A unique name for the scenario. Default: the file's path inside the "
                    "suite, with '.' for '/' and without '.yaml'.",
                    "clinic.hours_today",
                ),
            },
            "description": {
                "type": "string",
                **schema_doc(
                    "One sentence for the report: what situation this is.",
                    "A clerk asks until what time the clinic is open today.",
                ),
            },
            "tags": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "uniqueItems": True,
                **schema_doc("Labels to filter by in the report.", ["clinic", "smoke"]),
            },
            "given": {
                "type": "object",
                "required": ["at"],
                "additionalProperties": False,
                **schema_doc(
                    "The situation: the moment, optional extra instructions, the tools.",
                    {"at": "2026-09-29T10:00:00-03:00", "tools": ["list_business_hours"]},
                ),
                "properties": {
                    "at": {
                        "type": "string",
                        **schema_doc(
                            "The moment the person speaks: date, time and UTC offset "
                            "(ISO 8601). The agent is told this date and time.",
                            "2026-09-29T10:00:00-03:00",
                            "2026-12-24T18:30:00Z",
                        ),
                    },
                    "system": {
                        "type": "string",
                        **schema_doc(
                            "Extra instructions for the agent in this scenario, added to "
                            "the target's system prompt.",
                            "You are the assistant of Clínica Sonrisa.",
                        ),
                    },
                    "history": _history(),
                    "attachments": _attachments(),
                    "world": world_schema("A table given here replaces the suite's table of "
                                          "the same name; values may read a case's "
                                          "`{{ name }}`."),
                    "tools": {
                        "type": "array",
                        "items": {
                            "type": ["string", "object"],
                            **schema_doc(
                                "The name of a tool from the suite's library, or a tool "
                                "defined here.",
                                "list_business_hours",
                            ),
                            "if": {"type": "object"},
                            "then": {"$ref": "#/$defs/tool"},
                            "else": {"minLength": 1},
                        },
                        **schema_doc(
                            "The fake tools the agent can call: names from the suite's "
                            "library, or tools defined here.",
                            ["list_business_hours", "search_slots"],
                        ),
                    },
                },
            },
            "when": when,
            "then": then,
            "cases": _cases(),
            "cases_file": {
                "type": "string",
                "minLength": 1,
                **schema_doc(
                    "A file of cases, relative to this scenario's folder (inside the suite): "
                    "`.csv` with a header row (a spreadsheet saved as CSV), or `.jsonl` with "
                    "one JSON object a line. One scenario is run per case.",
                    "hours_questions.csv"),
            },
            "targets": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "uniqueItems": True,
                **schema_doc("The suite's targets this scenario is meant for; against the "
                             "others it is skipped (shown as skipped, not failed). Default: "
                             "every target.", ["local", "recorded"]),
            },
            "runs": {
                "type": "integer",
                "minimum": 1,
                "maximum": 10000,
                **schema_doc("How many times to try the scenario (default from the suite).", 10),
            },
            "min_pass": {
                "type": "integer",
                "minimum": 0,
                **schema_doc("How many of the runs must pass for the scenario to pass.", 9),
            },
            "min_pass_rate": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                **schema_doc(
                    "The share of runs that must pass, instead of min_pass "
                    "(min_pass = rate × runs, rounded up).",
                    0.8,
                ),
            },
            "max_steps": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                **schema_doc(f"The most model calls in one turn (default {DEFAULTS.max_steps}): "
                             "in a one-message "
                             "scenario, the whole attempt.", 6),
            },
        },
        "$defs": {"tool": _tool(True), "check": check_schema(), "params": params,
                  "attachment": _attachment(), **defs},
    }


def _target() -> dict[str, Any]:
    """A target's entry: the keys every kind shares, then each kind's own keys (from the
    kinds table, dsl/targets/kinds.py), chosen with if/then on ``kind``."""
    kinds = KINDS.values()
    common = {
        "kind": {
            "enum": [k.name for k in kinds],
            **schema_doc("; ".join(f"`{k.name}`: {k.doc}" for k in kinds) + ".", "openai"),
        },
        "concurrency": {
            "type": "integer",
            "minimum": 1,
            **schema_doc("The most attempts in flight against this target at once (halved "
                         "while the endpoint answers HTTP 429, then grown back).", 4),
        },
    }
    attempt_timeout = {
        "attempt_timeout_ms": {
            "type": "integer",
            "minimum": 1,
            **schema_doc("The most one whole attempt (all its model calls and tool calls) may "
                         "take, in milliseconds; past it the attempt ends as a timeout error. "
                         "Default: no limit.", 300000),
        },
    }
    return {
        "type": "object",
        "required": ["kind"],
        **schema_doc("A system under test.",
                     {"kind": "openai", "base_url": "http://127.0.0.1:8080/v1",
                      "model": "qwen2.5-0.5b-instruct"},
                     {"kind": "replay", "cassette": "cassettes/local.jsonl"}),
        "properties": {"kind": common["kind"]},
        "allOf": [
            {
                "if": {"properties": {"kind": {"const": k.name}}, "required": ["kind"]},
                "then": {
                    "required": list(k.required),
                    "additionalProperties": False,
                    "properties": {**common, **(attempt_timeout if k.attempt_timeout else {}),
                                   **k.schema},
                },
            }
            for k in kinds
        ],
    }


PAIR_PATTERN = "^[^:]+:[^:]+$"


def suite_schema() -> dict[str, Any]:
    return {
        "$schema": DIALECT,
        "$id": "https://scenarist.dev/schemas/suite.schema.json",
        "title": "Scenarist suite (scenarist.yaml)",
        **schema_doc("The suite: the targets under test, defaults, the shared tool library and "
                     "named checks."),
        "type": "object",
        "additionalProperties": False,
        "patternProperties": ANCHORS,
        "properties": {
            "world": world_schema("A scenario's `given.world` may replace a table by "
                                  "name."),
            "targets": {
                "type": "object",
                "propertyNames": {"pattern": NAME_PATTERN},
                "additionalProperties": {"$ref": "#/$defs/target"},
                **schema_doc("The systems under test, by name.",
                             {"local": {"kind": "openai", "base_url": "http://127.0.0.1:8080/v1",
                                        "model": "qwen2.5-0.5b-instruct"}}),
            },
            "defaults": {
                "type": "object",
                "additionalProperties": False,
                **schema_doc("Values every scenario gets unless it says otherwise.",
                             {"target": "local", "runs": DEFAULTS.runs,
                              "min_pass_rate": DEFAULTS.min_pass_rate}),
                "properties": {
                    "target": {"type": "string",
                               **schema_doc("The target used when --target is not given.",
                                            "local")},
                    "runs": {"type": "integer", "minimum": 1, "maximum": 10000,
                             **schema_doc(f"Runs per scenario (default {DEFAULTS.runs}).",
                                          DEFAULTS.runs)},
                    "min_pass": {
                        "type": "integer", "minimum": 0,
                        **schema_doc("How many of each scenario's runs must pass, as a count "
                                     "(instead of min_pass_rate; a scenario's own min_pass "
                                     "or min_pass_rate wins).", 2),
                    },
                    "min_pass_rate": {
                        "type": "number", "minimum": 0, "maximum": 1,
                        **schema_doc("Share of runs that must pass (default "
                                     f"{DEFAULTS.min_pass_rate}; min_pass = rate × runs, "
                                     "rounded up).", DEFAULTS.min_pass_rate),
                    },
                    "concurrency": {"type": "integer", "minimum": 1, "maximum": 1024,
                                    **schema_doc("Attempts in flight at once (default "
                                                 f"{DEFAULTS.concurrency}).",
                                                 DEFAULTS.concurrency)},
                    "max_steps": {"type": "integer", "minimum": 1, "maximum": 100,
                                  **schema_doc("Most model calls per attempt (default "
                                               f"{DEFAULTS.max_steps}).", DEFAULTS.max_steps)},
                },
            },
            "tools": {
                "type": "object",
                "propertyNames": {"pattern": NAME_PATTERN},
                "additionalProperties": {"$ref": "#/$defs/library_tool"},
                **schema_doc("Tools defined once and used by name in scenarios' given.tools.",
                             {"list_business_hours": {
                                 "description": "List the clinic's opening hours, by day.",
                                 "returns": {"monday": "09:00-18:00"}}}),
            },
            "judge": {
                "type": "object",
                "required": ["target"],
                "additionalProperties": False,
                **schema_doc("The LLM judge for checks like faithful, answers_the_question, judge "
                             "and criteria.", {"target": "local", "min_confidence": 0.8}),
                "properties": {
                    "target": {"type": "string", **schema_doc(
                        "The target that judges: any kind: openai (or replay) target.",
                        "local")},
                    "model": {"type": "string", **schema_doc(
                        "A model name to send instead of the target's.", "qwen2.5-7b-instruct")},
                    "temperature": {"type": "number", "minimum": 0, "maximum": 2, **schema_doc(
                        "The judge's temperature (default 0: the same question gets the "
                        "same answer).", 0)},
                    "seed": {"type": "integer", **schema_doc("The judge's seed (default 0).", 0)},
                    "min_confidence": {"type": "number", "minimum": 0, "maximum": 1, **schema_doc(
                        "Below this confidence a verdict is 'unsure', never a pass "
                        "(default 0.8).", 0.8)},
                    "max_attempts": {"type": "integer", "minimum": 1, "maximum": 10, **schema_doc(
                        "How many times to ask when the reply cannot be read (default 3).",
                        3)},
                    "cache": {"type": ["string", "boolean"], **schema_doc(
                        "Where judged questions are kept, relative to scenarist.yaml "
                        "(default .scenarist/judge-cache); false for no cache.",
                        ".scenarist/judge-cache", False)},
                    "prompts": {
                        "type": "object",
                        "additionalProperties": {"type": "string"},
                        **schema_doc(
                            "Your own prompt templates (files relative to scenarist.yaml) for "
                            "system, faithful, answers_the_question, rubric, criterion.",
                            {"faithful": "prompts/faithful.j2"}),
                    },
                    **_judge_logprobs_keys(),
                },
            },
            "redact": {
                "type": "object",
                "additionalProperties": False,
                **schema_doc(
                    "Secrets replaced by [REDACTED:NAME] before anything reaches the judge or a "
                    "file. The values of every target's api_key_env are always redacted.",
                    {"env": ["CRM_TOKEN"], "patterns": {"ticket": "TCK-\\d+"}}),
                "properties": {
                    "env": {"type": "array", "items": {"type": "string"}, **schema_doc(
                        "More environment variables whose values are secrets.",
                        ["CRM_TOKEN"])},
                    "patterns": {"type": "object", "additionalProperties": {"type": "string"},
                                 **schema_doc("Named regular expressions of secrets.",
                                              {"patient-id": "PAT-\\d{6}"})},
                    "default_patterns": {"type": "boolean", **schema_doc(
                        "Also redact common key formats: sk-..., Bearer ..., AWS and GitHub "
                        "keys (default true).", True)},
                },
            },
            "exclude": {
                "type": "array",
                "items": {"type": "string"},
                **schema_doc("Glob patterns of YAML files under the suite that are not scenarios.",
                             ["fixtures/**"]),
            },
            "history": {
                "type": ["string", "boolean"],
                **schema_doc(
                    "Where runs are remembered (docs/history.md): a SQLite file relative to "
                    "scenarist.yaml (default .scenarist/history.db), a PostgreSQL server "
                    "shared by a team (postgresql://user@host/database, without the "
                    "password: set PGPASSWORD), or false for none. The SCENARIST_HISTORY "
                    "environment variable overrides it.",
                    "postgresql://ci@db.internal:5432/scenarist", False),
            },
            "compare": {
                "type": ["string", "array"],
                "pattern": PAIR_PATTERN,
                "items": {"type": "string", "pattern": PAIR_PATTERN,
                          **schema_doc("Two targets, old:new.", "current:candidate")},
                "minItems": 1,
                **schema_doc(
                    "Targets compared within a run when both run (like --compare): old:new, "
                    "or a list of such pairs. Each scenario shows both pass rates, the "
                    "difference and its 95% interval.",
                    "current:candidate", ["v1:v2", "v1:v3"]),
            },
            "checks": {
                "type": "object",
                "propertyNames": {"pattern": CHECK_NAME_PATTERN},
                "additionalProperties": {
                    "type": "string",
                    "minLength": 1,
                    **schema_doc(
                        "An expression (docs/expressions.md) that scenarios use by its "
                        "name: `- expect: books_a_weekday`.",
                        "weekday(date(call('book_table').args.date)) < 5",
                    ),
                },
                **schema_doc(
                    "Named checks: expressions written once and used in any scenario as "
                    "`- expect: NAME`. Names use letters, digits and `_`.",
                    {"books_a_weekday": "weekday(date(call('book_table').args.date)) < 5"},
                ),
            },
        },
        "$defs": {"target": _target(), "library_tool": _tool(False)},
    }


def _judge_logprobs_keys() -> dict[str, Any]:
    """``judge.mode`` and ``judge.calibration`` (the token-probability judge:
    dsl/judge/logprobs.py, docs/judge.md)."""

    def temperature(what: str, example: float) -> dict[str, Any]:
        return {"type": "number", "exclusiveMinimum": 0, "maximum": 100, **schema_doc(
            f"The calibration temperature of {what} (default 1.0: the probabilities as the "
            "model gives them; above 1 softens an over-confident judge). scenarist "
            "judge-check --calibrate measures it.", example)}

    return {
        "mode": {"enum": ["json", "logprobs"], **schema_doc(
            "How the verdict is read: json (default), the judge's own JSON verdict and "
            "stated confidence; logprobs, one word or digit whose token probabilities give "
            "the verdict (needs a server that returns logprobs).", "logprobs")},
        "calibration": {
            "type": "object",
            "additionalProperties": False,
            **schema_doc("logprobs mode: temperatures that calibrate the token probabilities, as "
                 "printed by scenarist judge-check --calibrate.",
                 {"yes_no": 1.56, "digits": 1.11}),
            "properties": {
                "yes_no": temperature("the yes/no questions (faithful, answers_the_question)",
                                      1.56),
                "digits": temperature("the digit scores (judge rubrics, criteria)", 1.11),
            },
        },
    }


def labels_schema() -> dict[str, Any]:
    judged = sorted(n for n, c in REGISTRY.items() if c.judge)
    return {
        "$schema": DIALECT,
        "$id": "https://scenarist.dev/schemas/labels.schema.json",
        "title": "Scenarist judge labels (scenarist judge-check)",
        **schema_doc("Hand-labelled examples to measure how often the judge agrees with people."),
        "type": "object",
        "required": ["examples"],
        "additionalProperties": False,
        "properties": {
            "judge": {"type": "string", **schema_doc(
                "The target that judges (default: the suite's judge.target).", "grader")},
            "examples": {
                "type": "array",
                "minItems": 1,
                **schema_doc("The labelled examples.",
                             [{"check": "faithful", "message": "¿Hasta qué hora atienden hoy?",
                               "answer": "Hoy atendemos hasta las 18:00.", "expected": "pass"}]),
                "items": {
                    "type": "object",
                    "required": ["check", "message", "answer", "expected"],
                    "additionalProperties": False,
                    **schema_doc(
                        "One answer, the judge check to ask, and the verdict a person gave."),
                    "properties": {
                        "id": {"type": "string", **schema_doc("A name for the example.",
                                                              "hours-invented")},
                        "check": {
                            "type": ["string", "object"],
                            **schema_doc(
                                f"The judge check: {', '.join(judged)} (with its parameter when "
                                "it takes one).", "faithful",
                                {"judge": {"rubric": "Offers a slot", "pass_score": 0.7}}),
                            "if": {"type": "string"},
                            "then": {"enum": [n for n in judged
                                              if REGISTRY[n].schema.get("const") is True]},
                            "else": {"minProperties": 1, "maxProperties": 1,
                                     "propertyNames": {"enum": judged},
                                     "allOf": [
                                         {"if": {"required": [n]},
                                          "then": {"properties": {
                                              n: {"$ref": f"#/$defs/params/{n}"}}}}
                                         for n in judged]},
                        },
                        "at": {"type": "string", **schema_doc(
                            "The moment of the conversation (default 2026-01-01T12:00:00Z).",
                            "2026-09-29T10:00:00-03:00")},
                        "message": {"type": "string", **schema_doc(
                            "What the person wrote.", "¿Hasta qué hora atienden hoy?")},
                        "answer": {"type": "string", **schema_doc(
                            "The answer being judged.", "Hoy atendemos hasta las 18:00.")},
                        "tool_results": {
                            "type": "array",
                            **schema_doc("What the tools returned to the assistant.",
                                         [{"name": "list_business_hours",
                                           "output": {"tuesday": "09:00-18:00"}}]),
                            "items": {
                                "type": "object",
                                "required": ["name", "output"],
                                "additionalProperties": False,
                                **schema_doc("One tool call and its result."),
                                "properties": {
                                    "name": {"type": "string", **schema_doc("The tool.",
                                                                            "list_business_hours")},
                                    "args": {"type": "object", **schema_doc("Its arguments.", {})},
                                    "output": {**schema_doc("What it returned (text or data).",
                                                            '{"tuesday": "09:00-18:00"}')},
                                },
                            },
                        },
                        "expected": {"enum": ["pass", "fail"], **schema_doc(
                            "The verdict a careful person gives.", "pass")},
                        "note": {"type": "string", **schema_doc(
                            "Why, for the next reader.", "18:00 is Tuesday's closing time.")},
                    },
                },
            },
        },
        "$defs": {"params": {n: REGISTRY[n].schema for n in judged}},
    }


def build() -> dict[str, dict[str, Any]]:
    return {"scenario.schema.json": scenario_schema(), "suite.schema.json": suite_schema(),
            "labels.schema.json": labels_schema()}


def dump(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / "schemas"
    for name, schema in build().items():
        (out / name).write_text(dump(schema), "utf-8")
        print(f"wrote {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
