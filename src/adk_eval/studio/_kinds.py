"""The names the studio gives its sessions and requests.

They are stored in SQLite as these very strings, so a database an earlier
studio wrote reads the same.
"""

from __future__ import annotations

from typing import Literal, NewType, TypeAlias

__all__ = [
    "Phase",
    "RequestKind",
    "RequestStatus",
    "Role",
    "SessionKind",
    "SessionStatus",
    "ToolUserRole",
    "played_tool",
    "tool_user_role",
]

SessionKind: TypeAlias = Literal["agent", "case", "remote"]
"""``agent``: a `SimulatedAgentConfig`'s agent; ``case``: an `EvalCase` that
`run_eval` runs; ``remote``: model calls a `StudioPlugin` sends from another app."""

SessionStatus: TypeAlias = Literal["active", "completed", "interrupted"]
"""``interrupted``: an eval-case run the server stopped (its history is kept)."""

Phase: TypeAlias = Literal[
    "running", "awaiting_model", "awaiting_tool_answer", "awaiting_user", "idle", "finished"
]
"""Where a session is: running, waiting for the person (as the model, for a
long-running tool's answer, or as a user agent), idle between user messages
(agent sessions) or between the runs of a remote app, or finished (eval-case
sessions)."""

RequestKind: TypeAlias = Literal["model", "user", "tool_answer"]
"""What the person answers: a model call, a user agent's turn, a long-running tool."""

RequestStatus: TypeAlias = Literal["pending", "answered", "superseded", "abandoned"]
"""``superseded``: the run that waited for it was lost (a server restart);
``abandoned``: the remote app that asked stopped waiting (its `StudioPlugin`
timed out, failed or its run ended)."""

ToolUserRole = NewType("ToolUserRole", str)
"""``tool_user:<tool>``: the person answers one tool's yields in place of its user agent."""

Role: TypeAlias = Literal["model", "loop_user"] | ToolUserRole
"""What the person plays: the model, the loop user agent, or one tool's user agent."""

_TOOL_USER = "tool_user:"


def tool_user_role(tool: str) -> ToolUserRole:
    """The role of the person answering `tool`'s yields."""
    return ToolUserRole(f"{_TOOL_USER}{tool}")


def played_tool(role: Role) -> str | None:
    """The tool whose yields the person answers in `role` (None for other roles)."""
    return role.removeprefix(_TOOL_USER) if role.startswith(_TOOL_USER) else None
