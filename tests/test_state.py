"""Scopes <-> ADK prefixes, and the with_state_change merge rule."""

import pytest

from adk_eval import EvalSetupError, replace_value
from adk_eval._state import ScopedState, flatten_state, merge_changes, scoped_view, state_key


def test_scopes_map_to_adk_prefixes():
    assert state_key("session", "x") == "x"
    assert state_key("user", "x") == "user:x"
    assert state_key("app", "x") == "app:x"
    assert state_key("temp", "x") == "temp:x"
    assert state_key("patient", "age") == "patient:age"


def test_flatten_and_view_round_trip():
    scoped = {"session": {"mode": "triage"}, "patient": {"age": 55}, "user": {"tier": "gold"}}
    flat = flatten_state(scoped)
    assert flat == {"mode": "triage", "patient:age": 55, "user:tier": "gold"}
    assert scoped_view(flat) == scoped


def test_flatten_deep_copies_values():
    source = {"patient": {"conditions": ["asthma"]}}
    flat = flatten_state(source)
    flat["patient:conditions"].append("x")
    assert source["patient"]["conditions"] == ["asthma"]


def test_view_always_has_session_and_hides_adk_internals():
    assert scoped_view({"_adk_internal": 1}) == {"session": {}}


def test_flatten_rejects_a_flat_dict_with_a_fix():
    with pytest.raises(EvalSetupError, match=r"initial_state\['age'\]` must be a dict"):
        flatten_state({"age": 55})


def test_bad_scope_name():
    with pytest.raises(EvalSetupError, match="identifiers"):
        state_key("pa tient", "x")


def test_merge_dicts_recursively_and_lists_by_appending_new_items():
    current = {"patient:revealed": ["asthma"], "beliefs": {"pain": "mild", "onset": "1h"}}
    delta = merge_changes(
        current,
        [
            {"patient": {"revealed": ["hypertension"]}, "session": {"beliefs": {"pain": "severe"}}},
            {"patient": {"revealed": ["asthma", "cholesterol"]}},
        ],
    )
    assert delta == {
        "patient:revealed": ["asthma", "hypertension", "cholesterol"],
        "beliefs": {"pain": "severe", "onset": "1h"},
    }


def test_scalars_replace_and_replace_value_overwrites():
    delta = merge_changes(
        {"count": 1, "tags": ["a"]},
        [{"session": {"count": 2, "tags": replace_value(["b"])}}, {"session": {"count": 3}}],
    )
    assert delta == {"count": 3, "tags": ["b"]}


def test_merge_does_not_mutate_current_state():
    current = {"beliefs": {"pain": "mild"}}
    merge_changes(current, [{"session": {"beliefs": {"pain": "severe"}}}])
    assert current == {"beliefs": {"pain": "mild"}}


def test_scoped_state_reads_and_writes_prefixed_keys():
    backing: dict = {"patient:age": 55}
    state = ScopedState(backing)
    assert state.get("age", scope="patient") == 55
    assert state.get("missing", "dflt") == "dflt"
    state.set("escalated", True)
    state.set("flag", 1, scope="practice")
    assert backing == {"patient:age": 55, "escalated": True, "practice:flag": 1}
    assert state.scope("patient") == {"age": 55}
