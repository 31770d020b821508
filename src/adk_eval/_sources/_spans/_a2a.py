"""Spans of agents calling one another over A2A: what did not join, said once.

An ADK agent calling another service's agent (ADK's ``RemoteA2aAgent``, the
other side served by ``to_a2a()``) makes one conversation of two services' spans
when the HTTP request carries W3C trace context: the served invocation's spans
are then in the caller's trace, under the caller's ``invoke_agent NAME`` span,
and are read as that agent's events like a local sub-agent's. Neither ADK nor
the a2a SDK carries it by themselves: without it, each side's spans are a trace
of their own, and so a conversation of its own.

The a2a SDK's own spans (``a2a.client.*`` in the caller, ``a2a.server.*`` in
the served app; on by default, ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED``) tell
those cases apart: a served invocation whose ``a2a.server`` root span has no
parent got no trace context; a caller's ``invoke_agent`` span with ``a2a.client``
spans under it (a message was sent: a card that could not be read leaves none)
and no agent invocation of the remote side lacks what the remote agent did. Each
is said in one line, on the conversation that lacks it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from ._span import Span

__all__ = ["unjoined_notes"]

_SERVER, _CLIENT = "a2a.server.", "a2a.client."
_INVOCATION = ("invocation", "invoke_workflow", "invoke_agent", "call_llm", "generate_content")

SERVED_UNJOINED = (
    "a remote agent's invocation served over A2A not joined to its caller (no trace "
    "context): scored as a conversation of its own"
)
SERVED_ORPHAN = (
    "a remote agent's invocation served over A2A whose caller's spans are not in this "
    "source: its caller's part of the conversation is missing"
)


def _call_unjoined(name: str) -> str:
    return (
        f"a call of remote agent `{name}` not joined to its remote side (no trace context, "
        "or the remote side's spans are not in this source): what the remote agent did is not "
        "in this conversation"
    )


def _below(top: Span, children: Mapping[str, list[Span]]) -> Iterator[Span]:
    """The spans under `top` (not itself), without recursion."""
    stack = list(children.get(top.span_id, []))
    while stack:
        span = stack.pop()
        yield span
        stack.extend(children.get(span.span_id, []))


def _invocation(span: Span) -> bool:
    return span.name.startswith(_INVOCATION)


def unjoined_notes(roots: Sequence[Span], children: Mapping[str, list[Span]]) -> list[str]:
    """One line for each side of an A2A call these spans hold without the other (see module)."""
    notes: list[str] = []
    for root in roots:
        if root.name.startswith(_SERVER) and any(map(_invocation, _below(root, children))):
            notes.append(SERVED_UNJOINED if root.parent_id is None else SERVED_ORPHAN)
        stack = [root]
        while stack:
            span = stack.pop()
            below = children.get(span.span_id, [])
            if span.name.startswith("invoke_agent") and any(
                child.name.startswith(_CLIENT) for child in below
            ):
                if not any(map(_invocation, _below(span, children))):
                    name = span.attributes.get("gen_ai.agent.name") or span.name.removeprefix(
                        "invoke_agent "
                    )
                    notes.append(_call_unjoined(str(name)))
                continue
            stack.extend(below)
    return list(dict.fromkeys(notes))
