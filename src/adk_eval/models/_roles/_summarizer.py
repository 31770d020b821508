"""The model that summarizes a case's history: ADK's event compaction, one per case.

An `App` with ``events_compaction_config`` has ADK summarize older turns after
an invocation. Left alone, ADK writes the summarizer it makes (the first root's
model) into the user's config object, so every later case, and the user's
`App`, would summarize with the first case's model. Each case instead gets its
own copy of the config, whose summarizer runs on the case's model for the root
(``models[root]`` or ``models["*"]``; else the root's own), behind a
`CompactionWatch` that notes a summary that failed (ADK logs it and goes on
with the whole history) so the result can say so. ADK's own `LlmEventSummarizer`
calls its model through the run's gateway, as role ``summarizer``; a summarizer
of another kind is left as it is.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.apps import App
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.events import Event

from ..._errors import EvalSetupError
from ..._quiet import quiet
from ..._sandbox._scope import model_traffic
from .._gateway._pipeline import GatedLlm

__all__ = ["CompactionWatch", "case_compaction"]


class CompactionWatch(BaseEventsSummarizer):
    """A case's summarizer, noting each summary that failed (ADK then goes on without it)."""

    def __init__(self, inner: BaseEventsSummarizer) -> None:
        self.inner = inner
        """The summarizer that does the work."""
        self.failures: list[str] = []
        """What each failed summary raised (``"ConnectionError: ..."``)."""

    def warnings(self) -> tuple[str, ...]:
        """A line for each kind of summary that failed (ADK went on without it)."""
        return tuple(
            f"event compaction failed{f' {n} times' if n > 1 else ''} ({failure}); ADK went on "
            "with the whole history"
            for failure, n in Counter(self.failures).items()
        )

    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        """The inner summarizer's summary; a failure is noted and re-raised for ADK."""
        try:
            with model_traffic():
                return await self.inner.maybe_summarize_events(events=events)
        except Exception as error:
            self.failures.append(f"{type(error).__name__}: {error}")
            quiet(error)  # the result reports it: ADK need not log its traceback too
            raise


def case_compaction(
    app: App, resolve: Any, model: Any | None
) -> tuple[App, CompactionWatch | None]:
    """`app` with its own compaction config, summarizing on the case's model, and its watch.

    Args:
        app: The case's App (its ``events_compaction_config`` is not changed).
        resolve: ``spec -> BaseLlm`` (names to model objects).
        model: The case's model for the root agent, if the case sets one.

    Raises:
        EvalSetupError: Compaction is on, the root is no `LlmAgent` and no
            summarizer is given (ADK would fail at the first compaction).
    """
    config = app.events_compaction_config
    if config is None:
        return app, None
    inner = config.summarizer
    if inner is None or isinstance(inner, LlmEventSummarizer):
        if model is not None:
            llm = resolve(model)
        elif inner is not None:
            llm = inner._llm
        else:
            llm = _root_model(app.root_agent, app.name)
        template = getattr(inner, "_prompt_template", None)
        inner = LlmEventSummarizer(llm=GatedLlm.of(llm, "summarizer"), prompt_template=template)
    watch = CompactionWatch(inner)
    own = config.model_copy(update={"summarizer": watch})
    return app.model_copy(update={"events_compaction_config": own}), watch


def _root_model(root: Any, app_name: str) -> Any:
    if isinstance(root, LlmAgent):
        return root.canonical_model
    kind = type(root).__name__ if isinstance(root, BaseAgent) else "Workflow"
    raise EvalSetupError(
        f"App `{app_name}` compacts events, but its root is a {kind}, which has no model to "
        "summarize with: set EventsCompactionConfig(summarizer=LlmEventSummarizer(llm=...))"
    )
