"""`claimed_actions`: an agent says it did something no tool call of the run did.

"I've refunded your order" with no refund call before it, or after a refund
call that failed, is a false claim. The verbs come from the tools (their names
and descriptions) and a built-in table of common actions; what counts as a
claim is a set of English rules (`_text`). A claim is backed by a call
made before it, whose tool performs the claimed verb (or a synonym), and that
did not fail, or by a call of the same model response that then succeeded
(the claim waits for it: `_calls`). An optional judge (a model) reads the
agent messages the rules found no claim in.

It is an `Invariant`: live (``EvalCase(invariants=)``) a false claim stops the
run at the agent turn that says it; post hoc (``metrics=``, a stored session)
the same rules give the same verdict. The judge runs post hoc only (it is a
model call), at the end of a run whose rules held.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..._errors import EvalSetupError
from ..._state import flatten_state
from ..._trace import EvalTrace, ToolCall
from .._invariants import Invariant, Said, Seen, observations
from .._types import MetricResult
from ._calls import Quiet, Vocabulary, calls_made, claim_check, leftover
from ._judge import judged
from ._verbs import lemma

__all__ = ["ClaimedActions", "claimed_actions"]


@dataclass(frozen=True)
class ClaimedActions(Invariant):
    """An agent never claims an action no successful call of the run made (module doc).

    Attributes:
        vocabulary: The verbs and what each tool performs.
        judge: A model that reads the agent messages the rules found no claim in
            (post hoc only); None: the rules only.
    """

    vocabulary: Vocabulary = field(default_factory=Vocabulary, compare=False, repr=False)
    judge: Any = field(default=None, compare=False)

    @property
    def score_errored_runs(self) -> bool:
        """A judge is not called on a conversation that errored before it finished."""
        return self.judge is None

    def for_agent(self, agent: Any) -> ClaimedActions:
        """This rule reading its verbs from `agent`'s tools too, when ``tools=`` named none.

        A run gives it the agent under test, so the descriptions of the tools the
        agent has (not only the names of those it called) say what each performs.
        """
        if self.vocabulary.described:
            return self
        vocabulary = dataclasses.replace(self.vocabulary, described=_tools_of(agent))
        check = functools.partial(claim_check, vocabulary)
        return dataclasses.replace(self, check=check, vocabulary=vocabulary)

    def with_verbs(self, verbs: Mapping[str, frozenset[str]]) -> ClaimedActions:
        """This rule with `verbs` (a family -> the tools that perform it) added to ``verbs=``."""
        mapped = dict(self.vocabulary.mapped)
        for family, tools in verbs.items():
            mapped[family] = mapped.get(family, frozenset()) | tools
        vocabulary = dataclasses.replace(self.vocabulary, mapped=mapped)
        check = functools.partial(claim_check, vocabulary)
        return dataclasses.replace(self, check=check, vocabulary=vocabulary)

    def evaluate(self, trace: EvalTrace) -> Any:
        """The rules over `trace`; with a judge, an awaitable of the rules then the judge."""
        if self.judge is not None:
            return judged(self, trace)
        breach, seen, _ = self.scan(trace)
        if breach is not None:
            return breach
        return self.held(seen, trace)

    def breached(self, reason: str, trace: EvalTrace | None = None) -> MetricResult:
        """The failed result, naming the calls of `trace` that never reached their tool."""
        result = super().breached(reason, trace)
        if trace is None:
            return result
        ignore = self.vocabulary.ignore
        never = [c for c in _calls(trace) if not trace.made(c) and c.name not in ignore]
        if never:
            lines = ", ".join(f"`{c.name}` ({trace.source_of(c)})" for c in never[:8])
            result.evidence.append(f"calls that never reached their tool: {lines}")
        return result

    def scan(self, trace: EvalTrace) -> tuple[MetricResult | None, Seen, list[Quiet]]:
        """The rules over `trace`: the breach (or None), what was seen, the quiet messages.

        The quiet messages are those the rules found no claim in (for the judge).
        """
        seen = Seen(state=flatten_state(trace.initial_state))
        quiet: list[Quiet] = []
        waited: list[tuple[Said, int]] = []  # messages sent with calls, and the calls before
        for observation in observations(trace):
            reason = self.check(seen, observation)
            if reason is not None:
                return self.breached(reason, trace), seen, quiet
            if isinstance(observation, Said):
                made = calls_made(seen, self.vocabulary.ignore)
                if not self.vocabulary.claims(observation, made):
                    quiet.append(Quiet(observation, len(seen.calls), len(seen.answers)))
                if observation.calls:
                    waited.append((observation, len(seen.calls)))
            seen.add(observation)
        for said, before in waited:
            reason = leftover(self.vocabulary, seen, said, before)
            if reason is not None:
                return self.breached(reason, trace), seen, quiet
        return None, seen, quiet


def _calls(trace: EvalTrace | None) -> list[ToolCall]:
    if trace is None:
        return []
    return [item for item in trace.all_items if isinstance(item, ToolCall)]


def _tools_of(tools: Any) -> dict[str, str]:
    """Tool name -> description, of an agent's tree (App, Workflow) or a list of tools."""
    from google.adk.agents import BaseAgent, LlmAgent
    from google.adk.apps import App
    from google.adk.tools.agent_tool import AgentTool
    from google.adk.tools.base_tool import BaseTool
    from google.adk.workflow import Workflow

    from ..._agent_tree import walk

    found: dict[str, str] = {}

    def add(tool: Any) -> None:
        if isinstance(tool, BaseAgent | Workflow | App):
            root = tool.root_agent if isinstance(tool, App) else tool
            for agent, _ in walk(root):  # type: ignore[arg-type]
                for inner in agent.tools if isinstance(agent, LlmAgent) else []:
                    add(inner)
        elif isinstance(tool, AgentTool):
            pass  # its agent acts through its own tools (walked above), not by the call itself
        elif isinstance(tool, BaseTool):
            found[tool.name] = tool.description or ""
        elif isinstance(tool, str):
            raise EvalSetupError(
                f"claimed_actions(tools=) takes the agent or its tools (functions, ADK tools), "
                f"got the name {tool!r}; to say which tools perform a verb, use verbs={{...}}"
            )
        elif callable(tool) and hasattr(tool, "__name__"):
            found[tool.__name__] = (tool.__doc__ or "").strip()
        # a toolset lists its tools only when it runs: its verbs come from its calls

    for tool in tools if isinstance(tools, list | tuple) else [tools]:
        add(tool)
    return found


def claimed_actions(
    *,
    tools: Any = None,
    verbs: Mapping[str, str | Sequence[str]] | None = None,
    ignore: Sequence[str] = (),
    ignore_verbs: Sequence[str] = (),
    judge: Any = None,
    name: str = "claimed_actions",
    on_breach: Literal["stop", "record"] = "stop",
) -> ClaimedActions:
    """An agent never says it did what no successful tool call before it did.

    Args:
        tools: The agent (its tree's tools are read: sub-agents, `AgentTool`s) or
            a list of tools and functions: their names and descriptions add
            verbs. Without it the verbs are the built-in ones and those of the
            tools the run calls.
        verbs: A verb (its base form) -> the tools that perform it
            (``{"refund": ["issue_credit"]}``),
            besides those whose names or descriptions say so.
        ignore: Tools whose calls back no claim and add no verb.
        ignore_verbs: Verbs whose claims are not checked (``["charge"]`` where the
            agent reports charges a lookup found).
        judge: A model (name or object; ``True``: the judge model) that reads the
            agent messages the rules found no claim in, post hoc. Off by default.
        name: The metric's name.
        on_breach: ``"stop"`` ends a live run at the false claim; ``"record"``
            lets it finish and fails at the end.
    """
    _check_options(verbs, ignore=ignore, ignore_verbs=ignore_verbs)
    mapped = {
        (lemma(verb) or verb.lower()): frozenset([tools_] if isinstance(tools_, str) else tools_)
        for verb, tools_ in (verbs or {}).items()
    }
    for verb in mapped:
        if not verb.isalpha():
            raise EvalSetupError(f"claimed_actions(verbs=): {verb!r} is not a verb (one word)")
    vocabulary = Vocabulary(
        described=_tools_of(tools) if tools is not None else {},
        mapped=mapped,
        ignore=frozenset(ignore),
        ignore_verbs=frozenset(lemma(v) or v.lower() for v in ignore_verbs),
    )
    return ClaimedActions(
        name,
        functools.partial(claim_check, vocabulary),
        on_breach,
        needs=frozenset({"content", "tools"}),  # a claim is checked against the tool calls
        vocabulary=vocabulary,
        judge=judge if judge is not False else None,
    )


def _check_options(verbs: Any, **names: Any) -> None:
    """Refuses `verbs` that is not a mapping, and a string where a list of names goes."""
    if verbs is not None and not isinstance(verbs, Mapping):
        raise EvalSetupError(
            f"claimed_actions(verbs=) maps a verb to the tools that perform it, "
            f"e.g. {{'refund': ['issue_voucher']}}, got {verbs!r}"
        )
    for option, value in names.items():
        if isinstance(value, str):
            raise EvalSetupError(
                f"claimed_actions({option}=) takes a list of names, got the string {value!r}; "
                f"write {option}=[{value!r}]"
            )
