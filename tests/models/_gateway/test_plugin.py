"""The gateway's seam: a plugin answers each model call; ADK's model, agent and context untouched.

The plugin runs what ADK skips once a plugin answers (the agent's callbacks, its
error and after callbacks) with ADK's own code; these tests pin that each runs
once, in ADK's order, and the tripwire tests fail when ADK changes under it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

import adk_eval
from adk_eval import EvalCase, EvalRunner, run_eval
from adk_eval.models._gateway._plugin import ADK_INTERNALS, GATEWAY_PLUGIN
from adk_eval.testing import ScriptedLlm

SOURCE = Path(adk_eval.__file__).parent


def said(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def text_of(response: LlmResponse | None) -> str:
    assert response is not None
    assert response.content is not None
    return "".join(part.text or "" for part in response.content.parts or [])


class Logged(BasePlugin):
    """A user's plugin that logs the model callbacks it sees."""

    def __init__(self, log: list[str]) -> None:
        super().__init__(name="logged")
        self.log = log

    async def before_model_callback(self, *, callback_context, llm_request):
        self.log.append("plugin before")

    async def after_model_callback(self, *, callback_context, llm_response):
        self.log.append(f"plugin after: {text_of(llm_response)}")


def answering(log: list[str], *texts: str) -> ScriptedLlm:
    def respond(request):
        log.append("model")
        return texts[min(sum(entry == "model" for entry in log) - 1, len(texts) - 1)]

    return ScriptedLlm(responder=respond)


async def test_every_callback_runs_once_in_adks_order_around_the_model():
    log: list[str] = []
    agent = LlmAgent(
        name="a",
        model=answering(log, "hello"),
        before_model_callback=lambda callback_context, llm_request: log.append("agent before"),
        after_model_callback=lambda callback_context, llm_response: log.append(
            f"agent after: {text_of(llm_response)}"
        ),
    )
    app = App(name="app", root_agent=agent, plugins=[Logged(log)])
    result = await run_eval(EvalCase(name="c", agent=app, first_message="hi"))
    assert result.status == "passed", result.explain()
    # ADK runs the plugins' callbacks, then the agent's; once a plugin answers it skips the
    # agent's and every after callback, which the gateway then runs: each exactly once.
    assert log == [
        "plugin before",
        "agent before",
        "model",
        "plugin after: hello",
        "agent after: hello",
    ]


async def test_an_agents_before_callback_answers_instead_of_the_model():
    log: list[str] = []
    agent = LlmAgent(
        name="a",
        model=answering(log, "from the model"),
        before_model_callback=lambda callback_context, llm_request: said("from the callback"),
    )
    result = await run_eval(EvalCase(name="c", agent=agent, first_message="hi"))
    assert result.status == "passed", result.explain()
    assert result.trace.final_response == "from the callback"
    assert log == []  # the model was not called
    assert result.provider.calls == 0


async def test_an_after_callbacks_answer_replaces_the_models_keeping_its_usage():
    agent = LlmAgent(
        name="a",
        model=ScriptedLlm(["raw"]),
        after_model_callback=lambda callback_context, llm_response: said("edited"),
    )
    result = await run_eval(EvalCase(name="c", agent=agent, first_message="hi"))
    assert result.trace.final_response == "edited"
    assert result.token_usage.total_tokens > 0  # the model's usage, carried over as ADK does


class Failing(BaseLlm):
    """A model whose every call fails as a client library's error would."""

    async def generate_content_async(self, llm_request, stream=False):
        raise ValueError("the model is down")
        yield  # pragma: no cover - a generator


async def test_an_error_callback_turns_a_failure_into_the_answer():
    def recover(callback_context, llm_request, error):
        return said(f"recovered from {type(error).__name__}")

    agent = LlmAgent(name="a", model=Failing(model="failing"), on_model_error_callback=recover)
    result = await run_eval(EvalCase(name="c", agent=agent, first_message="hi"))
    assert result.status == "passed", result.explain()
    assert result.trace.final_response == "recovered from ValueError"


async def test_a_failure_no_callback_handles_ends_the_run_as_the_model_raised_it(caplog):
    agent = LlmAgent(name="a", model=Failing(model="failing"))
    result = await run_eval(EvalCase(name="c", agent=agent, first_message="hi"))
    assert result.status == "error"
    assert result.error is not None
    assert (result.error.type, result.error.message) == ("ValueError", "the model is down")
    assert GATEWAY_PLUGIN not in caplog.text  # not as ADK wraps a plugin's error, nor logged


async def test_adk_sees_the_agent_and_the_model_object_the_user_gave():
    seen: list[object] = []
    model = ScriptedLlm(["one", "two"])

    def look(callback_context, llm_response):
        seen.append(callback_context.get_invocation_context().agent.model)

    agent = LlmAgent(name="a", model=model, after_model_callback=look)
    result = await run_eval(EvalCase(name="c", agent=agent, first_message="hi"))
    assert result.status == "passed", result.explain()
    assert seen == [model]  # not a copy of the agent on a stand-in of another class
    assert type(seen[0]) is ScriptedLlm


class Streaming(BaseLlm):
    """A model that streams two chunks and then the whole answer."""

    async def generate_content_async(self, llm_request, stream=False):
        if stream:
            for chunk in ("Hel", "lo"):
                response = said(chunk)
                response.partial = True
                yield response
        yield said("Hello")


async def test_a_streamed_call_answers_with_its_complete_response():
    runner = EvalRunner(LlmAgent(name="a", model=Streaming(model="streaming")))
    session = await runner.create_session()
    events = [
        event
        async for event in runner.run_async(
            session_id=session.id,
            new_message="hi",
            run_config=RunConfig(streaming_mode=StreamingMode.SSE),
        )
    ]
    await runner.close()
    assert [(text_of(e), bool(e.partial)) for e in events if e.content] == [("Hello", False)]


# -- where ADK offers no seam: its private parts the plugin calls -------------------------------


def test_the_adk_internals_the_gateway_calls_are_there_as_it_calls_them():
    found = {}
    for path in ADK_INTERNALS:
        module, name = path.rsplit(".", 1)
        found[name] = getattr(importlib.import_module(module), name)
    assert found["ADK_AGENT_NAME_LABEL_KEY"] == "adk_agent_name"
    assert list(inspect.signature(found["run_and_handle_error"]).parameters)[:4] == [
        "response_generator",
        "invocation_context",
        "llm_request",
        "model_response_event",
    ]
    assert list(inspect.signature(found["handle_after_model_callback"]).parameters) == [
        "invocation_context",
        "llm_response",
        "model_response_event",
    ]
    assert list(inspect.signature(found["_run_callbacks"]).parameters)[:2] == [
        "callbacks",
        "_stop_condition",
    ]
    assert found["_stop_on_truthy"](said("x"))
    assert not found["_stop_on_truthy"](None)


def test_nothing_rewrites_a_class_or_pydantics_private_state_by_hand():
    written = []
    for path in SOURCE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "object.__setattr__":
                what = node.args[1] if len(node.args) > 1 else None
                if isinstance(what, ast.Constant) and str(what.value).startswith("__"):
                    written.append(f"{path.relative_to(SOURCE)}:{node.lineno}")
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == "__class__":
                    written.append(f"{path.relative_to(SOURCE)}:{node.lineno}")
    assert written == []
