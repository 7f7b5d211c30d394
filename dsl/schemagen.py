"""Builds ``schemas/scenario.schema.json`` and ``schemas/suite.schema.json``.

The check registry is the source of the checks' parameter schemas (STYLE.md §6); this
module puts them together with the rest of the format. The JSON files in ``schemas/`` are
what the validator and editors read; ``python -m dsl.schemagen`` rewrites them and a test
fails when they differ from what this module builds, so they cannot drift.

Every property carries ``description``, ``markdownDescription`` and ``examples`` so that
editors (VS Code's YAML extension, JetBrains) show help while people type.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .checks import REGISTRY
from .checks.answer import _d
from .model import ACTIONS

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
            **_d(
                "The tool's name, as the model sees it (letters, digits, `_` and `-`).",
                "book_appointment",
            ),
        },
        "description": {
            "type": "string",
            **_d(
                "What the tool does, as the model reads it. Write it as the real tool's "
                "description.",
                "Book an appointment for a patient.",
            ),
        },
        "input_schema": {
            "type": "object",
            **_d(
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
            **_d(
                "What calling the tool does to the world: `read` (default), `create`, "
                "`update` or `delete`. `does_not_modify` fails when a non-read tool runs.",
                "update",
            ),
        },
        "confirm": {
            "type": "boolean",
            **_d(
                "When true, the agent must ask the person before this tool runs: a call is "
                "held as *pending*, never executed, and the attempt ends there.",
                True,
            ),
        },
        "returns": {
            **_d(
                "What the tool gives back to the model: fixed text or data (mappings and "
                "lists are sent as JSON), or a text template over the call's arguments, "
                "e.g. `Booked {{ args.date }}`. Default: `OK`.",
                "Open 09:00-18:00",
                {"monday": "09:00-18:00"},
                "Hours for {{ args.day }} updated.",
            ),
        },
    }
    schema: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "properties": props,
        **_d(
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


BOOLEAN_CHECKS_NOTE = "Checks that take `true` may also be written as a bare name: `- non_empty`."


def check_schema() -> dict[str, Any]:
    names = sorted(REGISTRY)
    flag_names = sorted(n for n, c in REGISTRY.items() if c.schema.get("const") is True)
    branches = [
        {
            "if": {"type": "object", "required": [name]},
            "then": {"properties": {name: {"$ref": f"#/$defs/params/{name}"}}},
        }
        for name in names
    ]
    return {
        "type": ["object", "string"],
        **_d(
            "One check: a mapping with one key, the check's name, and its parameter. "
            + BOOLEAN_CHECKS_NOTE,
            {"contains": "18:00"},
            {"calls": "list_business_hours"},
            "non_empty",
        ),
        "if": {"type": "string"},
        "then": {"enum": flag_names},
        "else": {
            "minProperties": 1,
            "maxProperties": 1,
            "propertyNames": {"enum": names},
            "allOf": branches,
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
    return {
        "$schema": DIALECT,
        "$id": "https://scenarist.dev/schemas/scenario.schema.json",
        "title": "Scenarist scenario",
        **_d(
            "A scenario: given a moment and some tools, when someone says something, then "
            "the agent should do this and not that — tried `runs` times."
        ),
        "type": "object",
        "required": ["given", "when", "then"],
        "additionalProperties": False,
        "properties": {
            "id": {
                "type": "string",
                "pattern": ID_PATTERN,
                **_d(
                    "A unique name for the scenario. Default: the file's path inside the "
                    "suite, with '.' for '/' and without '.yaml'.",
                    "clinic.hours_today",
                ),
            },
            "description": {
                "type": "string",
                **_d(
                    "One sentence for the report: what situation this is.",
                    "A clerk asks until what time the clinic is open today.",
                ),
            },
            "tags": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "uniqueItems": True,
                **_d("Labels to filter by in the report.", ["clinic", "smoke"]),
            },
            "given": {
                "type": "object",
                "required": ["at"],
                "additionalProperties": False,
                **_d(
                    "The situation: the moment, optional extra instructions, the tools.",
                    {"at": "2026-09-29T10:00:00-03:00", "tools": ["list_business_hours"]},
                ),
                "properties": {
                    "at": {
                        "type": "string",
                        **_d(
                            "The moment the person speaks: date, time and UTC offset "
                            "(ISO 8601). The agent is told this date and time.",
                            "2026-09-29T10:00:00-03:00",
                            "2026-12-24T18:30:00Z",
                        ),
                    },
                    "system": {
                        "type": "string",
                        **_d(
                            "Extra instructions for the agent in this scenario, added to "
                            "the target's system prompt.",
                            "You are the assistant of Clínica Sonrisa.",
                        ),
                    },
                    "tools": {
                        "type": "array",
                        "items": {
                            "type": ["string", "object"],
                            **_d(
                                "The name of a tool from the suite's library, or a tool "
                                "defined here.",
                                "list_business_hours",
                            ),
                            "if": {"type": "object"},
                            "then": {"$ref": "#/$defs/tool"},
                            "else": {"minLength": 1},
                        },
                        **_d(
                            "The fake tools the agent can call: names from the suite's "
                            "library, or tools defined here.",
                            ["list_business_hours", "search_slots"],
                        ),
                    },
                },
            },
            "when": {
                "type": "string",
                "minLength": 1,
                **_d("What the person says to the agent.", "¿Hasta qué hora atienden hoy?"),
            },
            "then": {
                "type": "array",
                "items": {"$ref": "#/$defs/check"},
                **_d(
                    "The checks. An attempt passes when all of them pass.",
                    [{"calls": "list_business_hours"}, {"contains": "18:00"}],
                ),
            },
            "runs": {
                "type": "integer",
                "minimum": 1,
                "maximum": 10000,
                **_d("How many times to try the scenario (default from the suite).", 10),
            },
            "min_pass": {
                "type": "integer",
                "minimum": 0,
                **_d("How many of the runs must pass for the scenario to pass.", 9),
            },
            "min_pass_rate": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                **_d(
                    "The share of runs that must pass, instead of min_pass "
                    "(min_pass = rate × runs, rounded up).",
                    0.8,
                ),
            },
            "max_steps": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                **_d("The most model calls in one attempt (default 6).", 6),
            },
        },
        "$defs": {"tool": _tool(True), "check": check_schema(), "params": params},
    }


def _target() -> dict[str, Any]:
    common = {
        "kind": {
            "enum": ["openai", "replay", "python"],
            **_d(
                "`openai`: any OpenAI-compatible chat-completions endpoint; `replay`: "
                "answers from a recorded cassette; `python`: your own agent.",
                "openai",
            ),
        },
        "concurrency": {
            "type": "integer",
            "minimum": 1,
            **_d("The most attempts in flight against this target at once (halved while "
                 "the endpoint answers HTTP 429, then grown back).", 4),
        },
    }
    attempt_timeout = {
        "attempt_timeout_ms": {
            "type": "integer",
            "minimum": 1,
            **_d("The most one whole attempt (all its model calls and tool calls) may take, "
                 "in milliseconds; past it the attempt ends as a timeout error. Default: "
                 "no limit.", 300000),
        },
    }
    openai_props = {
        **common,
        **attempt_timeout,
        "base_url": {
            "type": "string",
            "pattern": "^https?://",
            **_d("The endpoint's base URL, up to and including /v1.",
                 "http://127.0.0.1:8080/v1"),
        },
        "model": {"type": "string", "minLength": 1,
                  **_d("The model name sent in each request.", "qwen2.5-0.5b-instruct")},
        "api_key_env": {
            "type": "string",
            "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
            **_d(
                "The name of the environment variable that holds the API key (sent as "
                "`Authorization: Bearer ...`). The key itself is never written anywhere.",
                "OPENAI_API_KEY",
            ),
        },
        "timeout_ms": {"type": "integer", "minimum": 1,
                       **_d("The most one request may take, in milliseconds: connecting, "
                            "sending and the whole reply (a reply still arriving then is "
                            "a timeout).", 60000)},
        "max_reply_bytes": {"type": "integer", "minimum": 1024,
                            **_d("The most bytes one reply may hold once decoded (default "
                                 "8 MiB); a longer reply ends its attempt as a malformed "
                                 "error, and reading stops there.", 8388608)},
        "temperature": {"type": "number", "minimum": 0, "maximum": 2,
                        **_d("Sampling temperature sent with each request.", 0.7)},
        "params": {
            "type": "object",
            **_d("Extra request fields sent as they are.", {"top_p": 0.9, "max_tokens": 512}),
        },
        "headers": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            **_d("Extra HTTP headers (not secrets: use api_key_env).", {"X-Team": "clinic"}),
        },
        "system_prompt": {
            "type": "string",
            **_d(
                "The agent's system prompt, a template: `{{ now }}` is the moment in words, "
                "`{{ system }}` the scenario's given.system, `{{ at }}` the moment itself.",
                "You are a clinic assistant.\n{{ system }}\nCurrent date and time: {{ now }}.",
            ),
        },
        "retry": {
            "type": "object",
            "additionalProperties": False,
            **_d("How failed requests are retried.",
                 {"max_attempts": 3, "backoff_ms": 500, "retry_on_status": [429, 503]}),
            "properties": {
                "max_attempts": {"type": "integer", "minimum": 1, "maximum": 20,
                                 **_d("Tries per request, the first included.", 3)},
                "backoff_ms": {"type": "integer", "minimum": 0,
                               **_d("Wait before the first retry; doubles each time.", 500)},
                "retry_on_status": {"type": "array", "items": {"type": "integer"},
                                    **_d("HTTP statuses worth retrying.", [429, 500, 503])},
            },
        },
    }
    return {
        "type": "object",
        "required": ["kind"],
        **_d("A system under test.",
             {"kind": "openai", "base_url": "http://127.0.0.1:8080/v1",
              "model": "qwen2.5-0.5b-instruct"},
             {"kind": "replay", "cassette": "cassettes/local.jsonl"}),
        "properties": {"kind": common["kind"]},
        "allOf": [
            {
                "if": {"properties": {"kind": {"const": "openai"}}, "required": ["kind"]},
                "then": {
                    "required": ["base_url", "model"],
                    "additionalProperties": False,
                    "properties": openai_props,
                },
            },
            {
                "if": {"properties": {"kind": {"const": "replay"}}, "required": ["kind"]},
                "then": {
                    "required": ["cassette"],
                    "additionalProperties": False,
                    "properties": {
                        **common,
                        "cassette": {
                            "type": "string",
                            **_d("The cassette file, relative to scenarist.yaml.",
                                 "cassettes/qwen.jsonl"),
                        },
                    },
                },
            },
            {
                "if": {"properties": {"kind": {"const": "python"}}, "required": ["kind"]},
                "then": {
                    "required": ["entry"],
                    "additionalProperties": False,
                    "properties": {
                        **common,
                        **attempt_timeout,
                        "entry": {
                            "type": "string",
                            "pattern": r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$",
                            **_d("module:function of your agent.", "myapp.agent:run"),
                        },
                    },
                },
            },
        ],
    }


def suite_schema() -> dict[str, Any]:
    return {
        "$schema": DIALECT,
        "$id": "https://scenarist.dev/schemas/suite.schema.json",
        "title": "Scenarist suite (scenarist.yaml)",
        **_d("The suite: the targets under test, defaults, the shared tool library and "
             "named checks."),
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "targets": {
                "type": "object",
                "propertyNames": {"pattern": NAME_PATTERN},
                "additionalProperties": {"$ref": "#/$defs/target"},
                **_d("The systems under test, by name.",
                     {"local": {"kind": "openai", "base_url": "http://127.0.0.1:8080/v1",
                                "model": "qwen2.5-0.5b-instruct"}}),
            },
            "defaults": {
                "type": "object",
                "additionalProperties": False,
                **_d("Values every scenario gets unless it says otherwise.",
                     {"target": "local", "runs": 5, "min_pass_rate": 0.8}),
                "properties": {
                    "target": {"type": "string",
                               **_d("The target used when --target is not given.", "local")},
                    "runs": {"type": "integer", "minimum": 1, "maximum": 10000,
                             **_d("Runs per scenario (default 5).", 5)},
                    "min_pass_rate": {
                        "type": "number", "minimum": 0, "maximum": 1,
                        **_d("Share of runs that must pass (default 0.8).", 0.8),
                    },
                    "concurrency": {"type": "integer", "minimum": 1, "maximum": 1024,
                                    **_d("Attempts in flight at once (default 8).", 8)},
                    "max_steps": {"type": "integer", "minimum": 1, "maximum": 100,
                                  **_d("Most model calls per attempt (default 6).", 6)},
                },
            },
            "tools": {
                "type": "object",
                "propertyNames": {"pattern": NAME_PATTERN},
                "additionalProperties": {"$ref": "#/$defs/library_tool"},
                **_d("Tools defined once and used by name in scenarios' given.tools.",
                     {"list_business_hours": {
                         "description": "List the clinic's opening hours, by day.",
                         "returns": {"monday": "09:00-18:00"}}}),
            },
            "judge": {
                "type": "object",
                "required": ["target"],
                "additionalProperties": False,
                **_d("The LLM judge for checks like faithful, answers_the_question, judge and "
                     "criteria.", {"target": "local", "min_confidence": 0.8}),
                "properties": {
                    "target": {"type": "string", **_d(
                        "The target that judges: any kind: openai (or replay) target.",
                        "local")},
                    "model": {"type": "string", **_d(
                        "A model name to send instead of the target's.", "qwen2.5-7b-instruct")},
                    "temperature": {"type": "number", "minimum": 0, "maximum": 2, **_d(
                        "The judge's temperature (default 0: the same question gets the "
                        "same answer).", 0)},
                    "seed": {"type": "integer", **_d("The judge's seed (default 0).", 0)},
                    "min_confidence": {"type": "number", "minimum": 0, "maximum": 1, **_d(
                        "Below this confidence a verdict is 'unsure', never a pass "
                        "(default 0.8).", 0.8)},
                    "max_attempts": {"type": "integer", "minimum": 1, "maximum": 10, **_d(
                        "How many times to ask when the reply cannot be read (default 3).",
                        3)},
                    "cache": {"type": ["string", "boolean"], **_d(
                        "Where judged questions are kept, relative to scenarist.yaml "
                        "(default .scenarist/judge-cache); false for no cache.",
                        ".scenarist/judge-cache", False)},
                    "prompts": {
                        "type": "object",
                        "additionalProperties": {"type": "string"},
                        **_d("Your own prompt templates (files relative to scenarist.yaml) "
                             "for system, faithful, answers_the_question, rubric, criterion.",
                             {"faithful": "prompts/faithful.j2"}),
                    },
                },
            },
            "redact": {
                "type": "object",
                "additionalProperties": False,
                **_d("Secrets replaced by [REDACTED:NAME] before anything reaches the judge "
                     "or a file. The values of every target's api_key_env are always "
                     "redacted.", {"env": ["CRM_TOKEN"], "patterns": {"ticket": "TCK-\\d+"}}),
                "properties": {
                    "env": {"type": "array", "items": {"type": "string"}, **_d(
                        "More environment variables whose values are secrets.",
                        ["CRM_TOKEN"])},
                    "patterns": {"type": "object", "additionalProperties": {"type": "string"},
                                 **_d("Named regular expressions of secrets.",
                                      {"patient-id": "PAT-\\d{6}"})},
                    "default_patterns": {"type": "boolean", **_d(
                        "Also redact common key formats: sk-..., Bearer ..., AWS and GitHub "
                        "keys (default true).", True)},
                },
            },
            "exclude": {
                "type": "array",
                "items": {"type": "string"},
                **_d("Glob patterns of YAML files under the suite that are not scenarios.",
                     ["fixtures/**"]),
            },
            "checks": {
                "type": "object",
                "propertyNames": {"pattern": CHECK_NAME_PATTERN},
                "additionalProperties": {
                    "type": "string",
                    "minLength": 1,
                    **_d(
                        "An expression (docs/expressions.md) that scenarios use by its "
                        "name: `- expect: books_a_weekday`.",
                        "weekday(date(call('book_table').args.date)) < 5",
                    ),
                },
                **_d(
                    "Named checks: expressions written once and used in any scenario as "
                    "`- expect: NAME`. Names use letters, digits and `_`.",
                    {"books_a_weekday": "weekday(date(call('book_table').args.date)) < 5"},
                ),
            },
        },
        "$defs": {"target": _target(), "library_tool": _tool(False)},
    }


def labels_schema() -> dict[str, Any]:
    judged = sorted(n for n, c in REGISTRY.items() if c.judge)
    return {
        "$schema": DIALECT,
        "$id": "https://scenarist.dev/schemas/labels.schema.json",
        "title": "Scenarist judge labels (scenarist judge-check)",
        **_d("Hand-labelled examples to measure how often the judge agrees with people."),
        "type": "object",
        "required": ["examples"],
        "additionalProperties": False,
        "properties": {
            "judge": {"type": "string", **_d(
                "The target that judges (default: the suite's judge.target).", "grader")},
            "examples": {
                "type": "array",
                "minItems": 1,
                **_d("The labelled examples.",
                     [{"check": "faithful", "message": "¿Hasta qué hora atienden hoy?",
                       "answer": "Hoy atendemos hasta las 18:00.", "expected": "pass"}]),
                "items": {
                    "type": "object",
                    "required": ["check", "message", "answer", "expected"],
                    "additionalProperties": False,
                    **_d("One answer, the judge check to ask, and the verdict a person gave."),
                    "properties": {
                        "id": {"type": "string", **_d("A name for the example.",
                                                      "hours-invented")},
                        "check": {
                            "type": ["string", "object"],
                            **_d(f"The judge check: {', '.join(judged)} (with its parameter "
                                 "when it takes one).", "faithful",
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
                        "at": {"type": "string", **_d(
                            "The moment of the conversation (default 2026-01-01T12:00:00Z).",
                            "2026-09-29T10:00:00-03:00")},
                        "message": {"type": "string", **_d("What the person wrote.",
                                                           "¿Hasta qué hora atienden hoy?")},
                        "answer": {"type": "string", **_d("The answer being judged.",
                                                          "Hoy atendemos hasta las 18:00.")},
                        "tool_results": {
                            "type": "array",
                            **_d("What the tools returned to the assistant.",
                                 [{"name": "list_business_hours",
                                   "output": {"tuesday": "09:00-18:00"}}]),
                            "items": {
                                "type": "object",
                                "required": ["name", "output"],
                                "additionalProperties": False,
                                **_d("One tool call and its result."),
                                "properties": {
                                    "name": {"type": "string", **_d("The tool.",
                                                                    "list_business_hours")},
                                    "args": {"type": "object", **_d("Its arguments.", {})},
                                    "output": {**_d("What it returned (text or data).",
                                                    '{"tuesday": "09:00-18:00"}')},
                                },
                            },
                        },
                        "expected": {"enum": ["pass", "fail"], **_d(
                            "The verdict a careful person gives.", "pass")},
                        "note": {"type": "string", **_d("Why, for the next reader.",
                                                        "18:00 is Tuesday's closing time.")},
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
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "schemas"
    for name, schema in build().items():
        (out / name).write_text(dump(schema), "utf-8")
        print(f"wrote {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
