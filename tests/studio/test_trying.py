"""Try on the page (dsl/studio/trying.py): the endpoint's error in plain words, checks of
a conversation that ended in an error never shown as passed or failed, goal_reached not
applicable, and each turn's world changes by table, before → after."""

from __future__ import annotations

from dsl.model import WorldRun
from dsl.studio.trying import _check, plain_words, world_tables


def test_an_endpoints_json_error_is_said_by_its_message() -> None:
    line = ('  what the endpoint said: HTTP 500 from http://127.0.0.1:9/v1: '
            '{"error": {"message": "model not loaded", "code": 500}}')
    assert plain_words(line) == ("  what the endpoint said: HTTP 500 from "
                                 "http://127.0.0.1:9/v1: model not loaded")
    assert plain_words("agent: {not json}") == "agent: {not json}"
    assert plain_words('x {"detail": "busy"}') == "x busy"


def test_checks_of_a_conversation_that_failed_are_not_evaluated() -> None:
    assert _check("contains 'x'", "fail", "no x", False, "error") == {
        "label": "contains 'x'", "status": "not_evaluated",
        "reason": "the conversation ended in an error", "always": False}
    assert _check("goal_reached", "fail", "no goal", False, "fail")["status"] == \
        "not_applicable"
    assert _check("contains 'x'", "pass", "", True, "pass")["status"] == "pass"


def test_a_turns_world_changes_by_table() -> None:
    before = {"cards": ({"id": "C-1", "status": "active"}, {"id": "C-2", "status": "x"})}
    after = {"cards": ({"id": "C-1", "status": "blocked"}, {"id": "C-3", "status": "new"})}
    from dsl.compiler.world import changes

    run = WorldRun(before, after)
    assert world_tables(run, changes(run)) == [{"name": "cards", "rows": [
        {"id": "C-1", "kind": "changed",
         "cells": [{"column": "status", "before": "'active'", "after": "'blocked'"}]},
        {"id": "C-2", "kind": "removed",
         "cells": [{"column": "id", "before": "'C-2'", "after": None},
                   {"column": "status", "before": "'x'", "after": None}]},
        {"id": "C-3", "kind": "added",
         "cells": [{"column": "id", "before": None, "after": "'C-3'"},
                   {"column": "status", "before": None, "after": "'new'"}]}]}]
