"""`GatewayPlugin`: where a runner's model calls enter the gateway, through a seam ADK documents.

ADK lets a plugin's ``before_model_callback`` answer a model call: "it can also
be used to implement caching by returning a cached `LlmResponse`, which would
skip the actual model call" (`BasePlugin.before_model_callback`). The gateway is
that plugin: last of its runner's plugins, so that every other plugin's
``before_model_callback`` has run, it calls the agent's model through the
gateway (`_pipeline.call`) and returns the answer. The agent, its model object
and ADK's context are left as they are, so ADK builds the request for the
agent's own model, as it would without the harness. (A wrapper where an
``LlmAgent.model`` goes would change that request: ADK shapes it by the
model's class, keeping function-call ids for LiteLLM and Anthropic models.)

Once a plugin answers, ADK runs nothing else of the call, so the plugin runs
what ADK would have run around the model, in ADK's order and with ADK's own
code for it:

1. the agent's own ``before_model_callback``s (ADK runs the plugins' first and
   skips the agent's once a plugin answers); the first answer wins, and the
   model is not called;
2. the model the agent resolves (``canonical_model_async``; an agent a tool
   builds at run time may be given the case's model instead, `choose`), with
   the agent's name in the request's labels, counted against the run's
   ``RunConfig.max_llm_calls``;
3. the call, wrapped in ADK's ``run_and_handle_error``: a failure goes to the
   plugins' ``on_model_error_callback``, then the agent's, and the first
   response wins; else it is raised as it is (ADK wraps what a plugin raises in
   a ``RuntimeError``: `unwrapped` gives the run the error as it was);
4. the answer, through ADK's ``handle_after_model_callback``: the plugins'
   ``after_model_callback``, then the agent's.

What differs from a call ADK makes itself: a streamed call (``StreamingMode.SSE``)
answers with its complete response alone, its partial chunks not yielded; the
call's span says a callback answered; live calls (``run_live``) are ADK's own,
not gated. ADK offers no public seam for steps 1, 3 and 4 and the label: those
functions are ADK's private ones, named in `ADK_INTERNALS`, and a test fails
when one of them changes under the plugin (tests/models/_gateway/test_plugin.py).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.agents.run_config import RunConfig
from google.adk.events import Event
from google.adk.flows.llm_flows.core._finalizer import (
    handle_after_model_callback,
    run_and_handle_error,
)
from google.adk.flows.llm_flows.core._model_call import ADK_AGENT_NAME_LABEL_KEY
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.utils._callback_pipeline import _run_callbacks, _stop_on_truthy
from google.genai import types

from ..._errors import AdkEvalError
from ..._quiet import quiet
from ._gate import RunGate, current_gate
from ._pipeline import call

__all__ = ["ADK_INTERNALS", "GATEWAY_PLUGIN", "GatewayPlugin"]

GATEWAY_PLUGIN = "adk_eval_gateway"
"""The plugin's name (ADK names it in the ``RuntimeError`` it wraps a failure in)."""

ADK_INTERNALS = (
    "google.adk.utils._callback_pipeline._run_callbacks",
    "google.adk.utils._callback_pipeline._stop_on_truthy",
    "google.adk.flows.llm_flows.core._finalizer.run_and_handle_error",
    "google.adk.flows.llm_flows.core._finalizer.handle_after_model_callback",
    "google.adk.flows.llm_flows.core._model_call.ADK_AGENT_NAME_LABEL_KEY",
)
"""The private parts of ADK the plugin calls (see the module doc)."""

Choose = Callable[[LlmAgent], BaseLlm | None]
"""The model to call for an agent instead of its own (None: its own)."""


def _own_model(agent: LlmAgent) -> BaseLlm | None:
    return None


async def _reported(
    answers: AsyncGenerator[LlmResponse, None],
) -> AsyncGenerator[LlmResponse, None]:
    """`answers`; a failure of the call is the run's to report: ADK does not log it."""
    try:
        async with aclosing(answers):
            async for answer in answers:
                yield answer
    except Exception as error:
        quiet(error)  # (ADK would log it as this plugin's, its cause wrapped)
        raise


def _streams(run_config: RunConfig | None) -> bool:
    """Whether ADK would stream the call (``StreamingMode.SSE``)."""
    streaming = run_config.streaming_mode if run_config is not None else None
    return streaming is not None and streaming.name == "SSE"


class GatewayPlugin(BasePlugin):
    """Answers every model call of its runner through the gateway (see the module doc).

    Put it last among the runner's plugins.

    Args:
        role: Whose calls these are: ``agent`` (the system), ``user:NAME``.
        choose: The model to call for an agent instead of its own.
        gate: The gate of each call (the current run's: `current_gate`).
    """

    def __init__(
        self,
        role: str,
        choose: Choose = _own_model,
        gate: Callable[[], RunGate] = current_gate,
    ) -> None:
        super().__init__(name=GATEWAY_PLUGIN)
        self.role = role
        self._choose = choose
        self._gate = gate
        self._raised: list[BaseException] = []

    def unwrapped(self, error: BaseException) -> BaseException:
        """`error` as it was raised, where ADK wrapped it as a plugin's (else `error` itself).

        That is a model call's failure this plugin let through, or the harness's
        own error (an `AdkEvalError`) that any of the runner's plugins raised.
        """
        cause = error.__cause__
        if not isinstance(error, RuntimeError) or cause is None:
            return error
        if isinstance(cause, AdkEvalError) or any(cause is raised for raised in self._raised):
            return cause
        return error

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """The answer to the call: the agent's callbacks', else its model's through the gateway.

        What it raises (the model's failure, a bug in a callback) the run gets back as
        it was raised (`unwrapped`); ADK logs a callback's bug, as it would have.
        """
        context = callback_context.get_invocation_context()
        agent = context.agent
        run_config = context.run_config
        if not isinstance(agent, LlmAgent) or context.live_request_queue is not None:
            return None  # a live call: ADK's own
        if run_config is not None and run_config.support_cfc:
            return None
        try:
            return await self._answer(agent, callback_context, llm_request, context)
        except Exception as error:
            self._raised.append(error)
            raise

    async def _answer(
        self,
        agent: LlmAgent,
        callback_context: CallbackContext,
        request: LlmRequest,
        context: InvocationContext,
    ) -> LlmResponse:
        """The agent's callbacks' answer, else its model's (see the module doc)."""
        own: LlmResponse | None = await _run_callbacks(
            agent.canonical_before_model_callbacks,  # type: ignore[arg-type]
            _stop_on_truthy,
            callback_context=callback_context,
            llm_request=request,
        )
        if own:
            return own
        model = self._choose(agent) or await agent.canonical_model_async(ReadonlyContext(context))
        config = request.config = request.config or types.GenerateContentConfig()
        config.labels = config.labels or {}
        config.labels.setdefault(ADK_AGENT_NAME_LABEL_KEY, agent.name)
        context.increment_llm_call_count()
        event = Event(
            author=agent.name, invocation_id=context.invocation_id, actions=callback_context.actions
        )
        answer: LlmResponse | None = None
        answers = call(model, request, _streams(context.run_config), self.role, self._gate())
        responses = run_and_handle_error(_reported(answers), context, request, event)
        async with aclosing(responses):
            async for response in responses:
                if answer is None or not response.partial:
                    answer = response  # a streamed call: its complete response
        answer = answer or LlmResponse()
        return await handle_after_model_callback(context, answer, event) or answer
