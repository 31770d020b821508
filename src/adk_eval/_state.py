"""State scopes: the scoped view users write, and ADK's prefixed keys.

Users speak in *scopes*: ``{"session": {...}, "user": {...}, "patient": {...}}``.
ADK stores one flat dict whose keys carry a prefix per scope:

======== ============ ==========================================
scope    ADK key      lifetime in ADK
======== ============ ==========================================
session  ``key``      this session
user     ``user:key`` every session of the user (of this case)
app      ``app:key``  every session of the app (of this case)
temp     ``temp:key`` the current invocation only
X        ``X:key``    this session (any other scope name)
======== ============ ==========================================

`initial_state`, `TerminateWhen.state_matches`, `state_metric` and
`with_state_change` all speak the scoped view; this module converts both ways
and merges state changes.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from google.adk.sessions.state import State

from ._errors import EvalSetupError

__all__ = [
    "SESSION",
    "ScopedState",
    "flatten_changes",
    "flatten_state",
    "merge_changes",
    "public_state",
    "replace_value",
    "scoped_view",
    "state_key",
]

SESSION = "session"
"""The default scope: keys without a prefix."""

_SCOPE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INTERNAL_PREFIX = "_adk"


def state_key(scope: str, key: str) -> str:
    """Returns the ADK key of `key` in `scope` (``"patient", "age"`` -> ``"patient:age"``)."""
    if scope == SESSION:
        return key
    if not _SCOPE_NAME.match(scope):
        raise EvalSetupError(f"state scope names must be identifiers like `patient`, got {scope!r}")
    return f"{scope}:{key}"


def _split_key(flat_key: str) -> tuple[str, str]:
    scope, sep, rest = flat_key.partition(":")
    if sep and _SCOPE_NAME.match(scope):
        return scope, rest
    return SESSION, flat_key


def flatten_state(
    scoped: Mapping[str, Any], *, what: str = "initial_state", deep_copy: bool = True
) -> dict[str, Any]:
    """Turns a scoped view into ADK's flat, prefixed state dict.

    Args:
        scoped: ``{scope: {key: value}}``.
        what: Name of the argument, used in error messages.
        deep_copy: Copy the values (so the caller's dicts are never shared).

    Raises:
        EvalSetupError: If `scoped` is not a mapping of scope names to mappings.
    """
    if not isinstance(scoped, Mapping):
        raise EvalSetupError(
            f"`{what}` must map scope names to dicts, like "
            f"{{'session': {{...}}, 'patient': {{...}}}}, got {type(scoped).__name__}"
        )
    flat: dict[str, Any] = {}
    for scope, values in scoped.items():
        if not isinstance(values, Mapping):
            raise EvalSetupError(
                f"`{what}[{scope!r}]` must be a dict of keys to values, got {values!r}; "
                f"write {{{scope!r}: {{'key': value}}}}"
            )
        for key, value in values.items():
            flat[state_key(scope, key)] = copy.deepcopy(value) if deep_copy else value
    return flat


def scoped_view(flat: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Turns ADK's flat state into ``{scope: {key: value}}``.

    The ``session`` scope is always present. ADK's internal keys (``_adk...``)
    are left out.
    """
    view: dict[str, dict[str, Any]] = {SESSION: {}}
    for flat_key, value in flat.items():
        if flat_key.startswith(_INTERNAL_PREFIX):
            continue
        scope, key = _split_key(flat_key)
        view.setdefault(scope, {})[key] = value
    return view


def public_state(flat: Mapping[str, Any]) -> dict[str, Any]:
    """ADK's flat state without its internal keys (``_adk...``, ``__...``)."""
    return {k: v for k, v in flat.items() if not k.startswith(("_adk", "__"))}


@dataclass(frozen=True)
class _Replace:
    value: Any


def replace_value(value: Any) -> Any:
    """Marks a state change that replaces the current value instead of merging into it.

    `with_state_change` merges by default (dicts recursively, lists by appending
    new items); wrap a value in `replace_value` to overwrite it as is::

        with_state_change(result, {"patient": {"symptoms": replace_value(["cough"])}})
    """
    return _Replace(value)


def _merge(current: Any, change: Any) -> Any:
    if isinstance(change, _Replace):
        return copy.deepcopy(change.value)
    if isinstance(current, Mapping) and isinstance(change, Mapping):
        merged = dict(current)
        for key, value in change.items():
            merged[key] = _merge(current.get(key), value)
        return merged
    if isinstance(current, list) and isinstance(change, list):
        merged_list = list(current)
        for item in change:
            if item not in merged_list:
                merged_list.append(copy.deepcopy(item))
        return merged_list
    if isinstance(change, Mapping):
        return {key: _merge(None, value) for key, value in change.items()}
    return copy.deepcopy(change)


def merge_changes(
    current: Mapping[str, Any], changes: list[Mapping[str, Mapping[str, Any]]]
) -> dict[str, Any]:
    """Folds scoped state changes over the current flat state.

    The merge rule, applied in list order: a dict merges into a dict key by key
    (recursively); a list appends the items the current list does not already
    hold; anything else, or a value wrapped in `replace_value`, replaces the
    current value.

    Args:
        current: ADK's current flat state.
        changes: Scoped changes, oldest first.

    Returns:
        The ADK ``state_delta`` holding the new value of every key touched.
    """
    delta: dict[str, Any] = {}
    for scoped in changes:
        for flat_key, value in flatten_changes(scoped).items():
            base = delta[flat_key] if flat_key in delta else current.get(flat_key)
            delta[flat_key] = _merge(base, value)
    return delta


def flatten_changes(scoped: Mapping[str, Any]) -> dict[str, Any]:
    """Checks scoped state changes and returns them keyed by ADK key (not copied).

    Raises:
        EvalSetupError: If `scoped` is not ``{scope: {key: value}}``.
    """
    return flatten_state(scoped, what="with_state_change changes", deep_copy=False)


class ScopedState:
    """Scope-aware access to an ADK state mapping (what `MockToolContext.state` is).

    Reads and writes go to the underlying ADK state, so a mock that writes state
    changes the session exactly like a real tool would.

    Example:
        ``ctx.state.get("age", scope="patient")``, ``ctx.state.set("escalated", True)``.
    """

    def __init__(self, state: State | MutableMapping[str, Any]) -> None:
        self._state = state

    def get(self, key: str, default: Any = None, *, scope: str = SESSION) -> Any:
        """Returns the value of `key` in `scope`, or `default`."""
        return self._state.get(state_key(scope, key), default)

    def set(self, key: str, value: Any, *, scope: str = SESSION) -> None:
        """Sets `key` in `scope` to `value` (recorded in the tool's state delta)."""
        self._state[state_key(scope, key)] = value

    def scope(self, scope: str) -> dict[str, Any]:
        """Returns a copy of every key of `scope`."""
        return dict(self.to_dict().get(scope, {}))

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Returns the whole state as a scoped view (a copy)."""
        state = self._state
        return scoped_view(state.to_dict() if isinstance(state, State) else dict(state))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._state

    def __repr__(self) -> str:
        return f"ScopedState({self.to_dict()!r})"
