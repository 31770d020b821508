"""A readable transcript of a trace, for judges and people.

::

    [user] I have really bad chest pain
    [clinician] calls read({"policy_id": "chest_pain"})
    [read result] {"red_flags": [...]}
    [clinician] Please call 999 now.

    Final state:
      session: {"escalation": {...}}
"""

from __future__ import annotations

import json
from typing import Any

from .trace import EvalTrace, Message, ToolCall

__all__ = ["render_transcript"]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr, sort_keys=True)


def _clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters]"


def render_transcript(
    trace: EvalTrace, *, include_state: bool = True, max_chars_per_entry: int | None = 4000
) -> str:
    """Renders the conversation: user and agent turns, tool calls with results, final state.

    Args:
        trace: What to render.
        include_state: Append the final scoped state.
        max_chars_per_entry: Longer entries are cut (None keeps everything).
    """
    lines: list[str] = []
    for item in trace.items:
        if isinstance(item, Message):
            speaker = "user" if item.role == "user" else item.author
            lines.append(f"[{speaker}] {_clip(item.text, max_chars_per_entry)}")
        elif isinstance(item, ToolCall):
            lines.append(
                f"[{item.author}] calls {item.name}({_clip(_json(item.args), max_chars_per_entry)})"
            )
            if item.response is None:
                lines.append(f"[{item.name} result] (no response)")
            elif item.error is not None:
                lines.append(f"[{item.name} error] {_clip(_json(item.error), max_chars_per_entry)}")
            else:
                lines.append(
                    f"[{item.name} result] {_clip(_json(item.response), max_chars_per_entry)}"
                )
    if include_state:
        lines.append("")
        lines.append("Final state:")
        scopes = {scope: values for scope, values in trace.final_state.items() if values}
        if not scopes:
            lines.append("  (empty)")
        for scope, values in scopes.items():
            lines.append(f"  {scope}: {_clip(_json(dict(values)), max_chars_per_entry)}")
    return "\n".join(lines)
