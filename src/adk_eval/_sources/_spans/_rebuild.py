"""One conversation's spans rebuilt as the ADK `Session` a session store would hold.

`rebuild` reads ADK's own spans (`_adk_spans`) or OpenInference spans
(`_openinference`, Phoenix/Arize instrumentation) into a `Session` whose events
match, as far as the spans carry them, the events ADK's `DatabaseSessionService`
stored: authors, invocation ids, event ids, the user's messages, the model's text
and function calls (with ADK's call ids), function responses (parallel calls
merged into one event, in call order), transfers, token usage and errors. What
the spans never carry (state, the user's id, the app's name unless the resource
names it) is said in `Rebuilt.lacks` and `Rebuilt.notes`.

A remote agent's invocation in another service, joined to its caller's trace by
trace context over A2A, is read as that agent's events in the caller's
invocation, as a local sub-agent's would be; the session's app is the caller's
service. A side of an A2A call whose other side is not in the spans says so
(`_a2a`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from google.adk.sessions import Session

from ._a2a import unjoined_notes
from ._adk_spans import adk_events, content_captured
from ._openinference import is_openinference, openinference_events
from ._span import Span, conversation_of

__all__ = ["Rebuilt", "rebuild"]


@dataclass(frozen=True)
class Rebuilt:
    """A conversation rebuilt from its spans.

    Attributes:
        session: The session (``state`` is always empty).
        lacks: Facts these spans do not carry: ``state`` (never in spans),
            ``content`` (the model calls were traced with content capture off),
            ``usage`` (the model's answers have no token counts). A conversation
            with no model call lacks neither.
        notes: One line each about spans left out or kept oddly.
    """

    session: Session
    lacks: frozenset[str]
    notes: tuple[str, ...]


@dataclass
class _Graph:
    by_id: dict[str, Span]
    children: dict[str, list[Span]]
    roots: list[Span]
    notes: list[str]


def _order(span: Span) -> tuple[int, str]:
    return (span.start_ns, span.span_id)


def _graph(key: str, spans: Sequence[Span]) -> _Graph:
    by_id: dict[str, Span] = {}
    duplicated = 0
    for span in spans:
        known = by_id.get(span.span_id)
        if known is not None:
            duplicated += 1
            if len(span.attributes) <= len(known.attributes):
                continue
        by_id[span.span_id] = span
    notes = [f"{duplicated} duplicated span(s) counted once"] if duplicated else []
    children: dict[str, list[Span]] = {}
    roots: list[Span] = []
    orphans = 0
    for span in sorted(by_id.values(), key=_order):
        if span.parent_id and span.parent_id in by_id:
            children.setdefault(span.parent_id, []).append(span)
        else:
            orphans += span.parent_id is not None
            roots.append(span)
    if orphans:
        notes.append(f"{orphans} span(s) without their parent, kept as roots")
    graph = _Graph(by_id, children, roots, notes)
    _break_cycles(graph)
    _drop_other_conversations(key, graph)
    return graph


def _below(tops: Sequence[Span], children: Mapping[str, list[Span]]) -> Iterator[Span]:
    """The spans under `tops` (themselves included), depth first in start order, no recursion."""
    stack = list(reversed(tops))
    while stack:
        span = stack.pop()
        yield span
        stack.extend(reversed(children.get(span.span_id, [])))


def _break_cycles(graph: _Graph) -> None:
    """Makes a root of the earliest span of each cycle of parent ids, and says so.

    A span whose parent chain loops (a self-parent, or an ``invoke_workflow``
    whose parent is its own ``invoke_agent``) is reached from no root: without
    this its whole subtree would be left out without a word.
    """
    reached = {span.span_id for span in _below(graph.roots, graph.children)}
    for span in sorted(graph.by_id.values(), key=_order):
        if span.span_id in reached:
            continue
        loop: list[Span] = []
        seen: set[str] = set()
        while span.span_id not in seen:  # unreached spans' parents are unreached: it loops
            seen.add(span.span_id)
            loop.append(span)
            span = graph.by_id[span.parent_id or ""]
        top = min(loop[loop.index(span) :], key=_order)
        graph.children[top.parent_id or ""].remove(top)
        graph.roots.append(top)
        reached.update(below.span_id for below in _below([top], graph.children))
        graph.notes.append(f"a cycle of parent ids broken at {top.name} (kept as a root)")
    graph.roots.sort(key=_order)


def _drop_other_conversations(key: str, graph: _Graph) -> None:
    """Leaves out roots naming another conversation (an `AgentTool`'s own session)."""
    if key.startswith("trace:"):
        return
    kept = []
    for root in graph.roots:
        named = next(
            (found for span in _below([root], graph.children) if (found := conversation_of(span))),
            None,
        )
        if named is None or named == key:
            kept.append(root)
    if len(kept) < len(graph.roots):
        graph.notes.append(
            f"{len(graph.roots) - len(kept)} root span(s) of other sessions left out"
        )
    graph.roots = kept


def _app_name(roots: Sequence[Span]) -> str:
    """The service the conversation's invocations began in (a remote agent's is not the app)."""
    for span in roots:
        name = span.resource.get("service.name")
        if isinstance(name, str) and name and not name.startswith("unknown_service"):
            return name
    return ""


def rebuild(key: str, spans: Sequence[Span]) -> Rebuilt:
    """Rebuilds the session of one conversation from all its spans.

    Args:
        key: The conversation's key: its session id, or ``trace:<trace_id>``
            when no span named one (the key becomes the session's id).
        spans: Its spans, in any order (duplicates allowed).

    Returns:
        The session, what the spans lack and notes on what was left out.
    """
    graph = _graph(key, spans)
    graph.notes.extend(unjoined_notes(graph.roots, graph.children))
    lacks = {"state"}
    user_id = ""
    if is_openinference(spans):
        events, captured, user_id = openinference_events(graph.roots, graph.children)
    else:
        captured = content_captured(spans)
        events = adk_events(graph.roots, graph.children, graph.by_id, bool(captured))
    if captured is False:  # None: no model or tool call, so nothing to lack
        lacks.add("content")
    answers = [e for e in events if e.author != "user" and e.content and e.content.role == "model"]
    if answers and not any(e.usage_metadata for e in answers):
        lacks.add("usage")
    if not user_id:
        graph.notes.append("the spans name no user: the sessions' user_id is empty")
    # an evaluation result written beside the conversation (adk-eval watch's verdicts) is
    # not news of it: its time must not make a finished conversation look updated
    ends = [
        span.end_ns
        for span in graph.by_id.values()
        if span.end_ns and span.name != "gen_ai.evaluation.result"
    ]
    session = Session(
        id=key,
        app_name=_app_name(graph.roots),
        user_id=user_id,
        state={},
        events=events,
        last_update_time=max(ends) / 1e9 if ends else 0.0,
    )
    return Rebuilt(session, frozenset(lacks), tuple(graph.notes))
