"""Export: a finished studio session appended to an EvalSet file as a golden.

Agent and eval-case sessions go to their target's file. A remote session goes
to ``{snake_case(app name)}.evalset.json`` in the studio's working directory,
its golden's ``app_name`` the remote app's (``adk eval`` runs the agent folder of
that name).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
from google.adk.events import Event
from google.adk.sessions import Session

from .._errors import StudioConflictError
from .._state import flatten_state
from .._turns import DEFAULT_USER_ID
from ..goldens._evalset import EvalSetFileError, append_golden, resolve_path
from ..goldens._export import snake_case, to_golden
from ._store import RequestRow, SessionRow
from ._views import remote_events

__all__ = [
    "case_session",
    "export_golden",
    "remote_app_name",
    "remote_export_path",
    "remote_session",
]


def case_session(row: SessionRow, events: list[Event]) -> Session:
    """An eval-case session as an ADK `Session`: its events and the run's final state."""
    final_state = flatten_state((row.detail.get("result") or {}).get("final_state", {}))
    return Session(
        id=row.id, app_name="studio", user_id=DEFAULT_USER_ID, events=events, state=final_state
    )


def remote_app_name(row: SessionRow) -> str:
    """The name of the remote app a remote session came from."""
    return str(row.detail.get("client_session", "")).split("/", 1)[0] or "remote_app"


def remote_export_path(row: SessionRow) -> Path:
    """Where a remote session's export goes: ``{snake_case(app)}.evalset.json``."""
    return resolve_path(f"{snake_case(remote_app_name(row))}.evalset.json")


def remote_session(row: SessionRow, requests: Sequence[RequestRow]) -> Session:
    """A remote session as an ADK `Session`: the conversation the played model saw.

    Its state is empty: the studio never sees the remote app's state.
    """
    parts = str(row.detail.get("client_session", "")).split("/")
    user_id = parts[1] if len(parts) > 2 else DEFAULT_USER_ID
    return Session(
        id=row.id, app_name=remote_app_name(row), user_id=user_id, events=remote_events(requests)
    )


async def export_golden(
    path: Path,
    session: Session,
    *,
    agent_name: str,
    app_name: str | None = None,
    initial_state: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Appends `session` to the EvalSet file at `path` as a golden case.

    Args:
        path: The EvalSet file.
        session: The conversation.
        agent_name: Names the default eval id (and a new file's set).
        app_name: The golden's ``session_input.app_name`` (default: `agent_name`).
        initial_state: Scoped state the conversation started with.

    Returns:
        The export record the page lists: path, eval id, case count, whether the
        file was created, and when.

    Raises:
        StudioError: The file is not a valid EvalSet (409; it is left untouched).
    """
    golden = to_golden(
        session,
        agent_name=agent_name,
        app_name=app_name or agent_name,
        user_id=session.user_id,
        initial_state=initial_state,
    )
    try:
        result = await anyio.to_thread.run_sync(append_golden, path, golden, app_name or agent_name)
    except EvalSetFileError as error:
        raise StudioConflictError(str(error)) from None
    return {
        "path": str(result.path),
        "eval_id": result.eval_id,
        "cases": result.cases,
        "created": result.created,
        "at": time.time(),
    }
