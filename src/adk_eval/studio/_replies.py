"""The JSON the studio's routes shape themselves, as response models.

What the engine already builds as plain data (a session's view, the session
list, an export's summary) is served as it is; these are the small answers
around it. Their fields are in the order the page has always received them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from ._config import StudioTarget
from ._kinds import Role, tool_user_role
from ._views import agent_view

__all__ = ["Answered", "Created", "Done", "RemoteRequested", "TargetEntry"]


class TargetEntry(BaseModel):
    """One entry of the start page: an agent to play, or an eval case to run."""

    name: str
    kind: Literal["case", "agent"]
    description: str | None
    """The case's description, else the agent's (None when neither has one)."""
    agent: dict[str, Any] | None
    """The agent as the page describes it (`agent_view`)."""
    roles: list[Role]
    """What the person may play: the model, and a case's user agents."""
    eval_set_path: str
    """Where the target's goldens are exported."""
    first_message: str | None
    """A case's fixed first message (None when it has none or it is not text)."""

    @classmethod
    def of(cls, target: StudioTarget) -> TargetEntry:
        """The entry of `target`."""
        case = target.case
        roles: list[Role] = ["model"]
        if case is not None:
            if case.user_agents.loop is not None:
                roles.append("loop_user")
            roles += [tool_user_role(name) for name in case.user_agents.tools]
        first = case.first_message if case is not None else None
        return cls(
            name=target.name,
            kind="case" if case is not None else "agent",
            description=(case.description if case else None) or target.agent.description,
            agent=agent_view(target.agent),
            roles=roles,
            eval_set_path=str(target.export_path),
            first_message=first if isinstance(first, str) else None,
        )


class Created(BaseModel):
    """A session was created."""

    id: str


class Done(BaseModel):
    """What was asked is done."""

    ok: Literal[True] = True


class Answered(BaseModel):
    """A request's answer, as the engine checked and completed it."""

    answer: dict[str, Any]


class RemoteRequested(BaseModel):
    """A `StudioPlugin`'s model call is queued for the person; the plugin polls this id."""

    request_id: str
