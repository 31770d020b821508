"""Export: a finished studio session appended to its target's EvalSet file as a golden."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import anyio
from google.adk.events import Event
from google.adk.sessions import Session

from .._errors import StudioConflictError
from .._state import flatten_state
from .._turns import DEFAULT_USER_ID
from ..goldens._evalset import EvalSetFileError, append_golden
from ..goldens._export import to_golden
from ._config import StudioTarget
from ._store import SessionRow

__all__ = ["case_session", "export_golden"]


def case_session(row: SessionRow, events: list[Event]) -> Session:
    """An eval-case session as an ADK `Session`: its events and the run's final state."""
    final_state = flatten_state((row.detail.get("result") or {}).get("final_state", {}))
    return Session(
        id=row.id, app_name="studio", user_id=DEFAULT_USER_ID, events=events, state=final_state
    )


async def export_golden(
    target: StudioTarget,
    session: Session,
    initial_state: Mapping[str, Mapping[str, Any]] | None,
) -> dict[str, Any]:
    """Appends `session` to the target's EvalSet file as a golden case.

    Returns:
        The export record the page lists: path, eval id, case count, whether the
        file was created, and when.

    Raises:
        StudioError: The file is not a valid EvalSet (409; it is left untouched).
    """
    agent = target.agent
    golden = to_golden(
        session, agent_name=agent.name, app_name=agent.name, initial_state=initial_state
    )
    try:
        result = await anyio.to_thread.run_sync(
            append_golden, target.export_path, golden, agent.name
        )
    except EvalSetFileError as error:
        raise StudioConflictError(str(error)) from None
    return {
        "path": str(result.path),
        "eval_id": result.eval_id,
        "cases": result.cases,
        "created": result.created,
        "at": time.time(),
    }
