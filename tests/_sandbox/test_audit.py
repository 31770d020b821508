"""The sandbox sees what a run's own code does outside its mocks, names it, refuses it if strict.

Processes and file writes are safe to do for real here. Connections off the
machine are only ever tried with the strict sandbox refusing them before the
system call (203.0.113.5 is a documentation address, routed nowhere), or in
`test_network_namespace.py`, in a network namespace of their own.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.plugins.base_plugin import BasePlugin

from adk_eval import EvalCase, ToolMock, run_eval
from adk_eval.testing import ScriptedLlm, tool_call

from .._tools.test_toolsets import ANSWER, READS, SERVER, files_toolset

OUTSIDE = ("203.0.113.5", 443)


def lookup(order: str) -> dict:
    """Looks an order up."""
    return {"order": order}


def shop(model, **callbacks) -> LlmAgent:
    return LlmAgent(name="shop", model=model, tools=[lookup], **callbacks)


def script() -> ScriptedLlm:
    return ScriptedLlm([tool_call("lookup", {"order": "A1"}), "It is on its way."])


def case(agent, **options) -> EvalCase:
    return EvalCase(
        name="order",
        agent=agent,
        tool_mocks={"lookup": ToolMock.returning({"status": "shipped"})},
        first_message="Where is A1?",
        **options,
    )


async def test_warn_lists_a_callbacks_process_and_file_and_the_run_still_passes(tmp_path):
    written = tmp_path / "audit.log"

    def before_model(callback_context, llm_request):
        subprocess.run(["true"], check=True)  # on every model call, as a real guardrail might

    def after_tool(tool, args, tool_context, tool_response):
        written.write_text(str(tool_response))

    result = await run_eval(
        case(shop(script(), before_model_callback=before_model, after_tool_callback=after_tool))
    )

    assert result.status == "passed", result.explain()
    warnings = [line for line in result.warnings if line.startswith("sandbox:")]
    assert warnings == [
        f"sandbox: process `true` started, by before_model_callback {__name__}."
        "test_warn_lists_a_callbacks_process_and_file_and_the_run_still_passes.<locals>."
        "before_model of agent `shop`",
        f"sandbox: file written: {written}, by after_tool_callback {__name__}."
        "test_warn_lists_a_callbacks_process_and_file_and_the_run_still_passes.<locals>."
        "after_tool of agent `shop`",
    ]
    assert written.exists()  # warn lets it happen
    assert "sandbox: process `true`" in result.explain()


async def test_strict_refuses_a_provided_tools_connection_before_it_is_made():
    attempts = []

    def notify(order: str) -> dict:
        """Tells the warehouse."""
        attempts.append(order)
        with socket.create_connection(OUTSIDE, timeout=1):
            return {"sent": True}

    agent = LlmAgent(
        name="shop",
        model=ScriptedLlm([tool_call("notify", {"order": "A1"}), "Done."]),
        tools=[notify],
    )
    result = await run_eval(
        EvalCase(
            name="notifies",
            agent=agent,
            tool_mocks={"notify": notify},  # the real body, on purpose
            first_message="Ship A1",
            sandbox="strict",
        )
    )

    assert attempts == ["A1"]
    assert result.status == "error"
    assert result.error is not None
    assert result.error.type == "EvalSandboxError"
    assert result.error.message == (
        "sandbox: connection to 203.0.113.5:443, by tool `notify` of agent `shop` "
        "(refused: strict sandbox)"
    )
    assert len(result.trace.tool_calls) == 1


async def test_strict_still_ends_the_run_when_the_code_swallows_the_refusal():
    def before_model(callback_context, llm_request):
        with contextlib.suppress(Exception):  # a guardrail that never lets an error out
            subprocess.run(["true"], check=True)
        return None

    result = await run_eval(
        case(shop(script(), before_model_callback=before_model), sandbox="strict")
    )

    assert result.status == "error"
    assert result.error is not None
    assert result.error.type == "EvalSandboxError"
    assert "process `true` started, by before_model_callback" in result.error.message


async def test_off_watches_nothing(tmp_path):
    def after_tool(tool, args, tool_context, tool_response):
        (tmp_path / "x").write_text("x")

    result = await run_eval(case(shop(script(), after_tool_callback=after_tool), sandbox="off"))

    assert result.status == "passed"
    assert not [line for line in result.warnings if line.startswith("sandbox:")]


async def test_a_mocked_run_does_nothing_the_sandbox_notes():
    result = await run_eval(case(shop(script()), sandbox="strict"))

    assert result.status == "passed", result.explain()
    assert result.warnings == ()


async def test_an_import_in_a_tool_is_named_as_the_import(tmp_path, monkeypatch):
    (tmp_path / "noisy_module.py").write_text(
        "from pathlib import Path\nPath(__file__).with_name('imported.txt').write_text('x')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    def lookup(order: str) -> dict:
        """Looks an order up."""
        import noisy_module  # noqa: F401

        return {"order": order}

    agent = LlmAgent(name="shop", model=script(), tools=[lookup])
    result = await run_eval(
        EvalCase(name="imports", agent=agent, tool_mocks={"lookup": lookup}, first_message="A1?")
    )

    assert result.status == "passed", result.explain()
    assert result.warnings == (
        f"sandbox: file written: {tmp_path / 'imported.txt'}, by the import of "
        f"{tmp_path / 'noisy_module.py'} in tool `lookup` of agent `shop`",
    )
    sys.modules.pop("noisy_module", None)


class Writer(BasePlugin):
    """An App's plugin that writes a file before every model call, as a debug logger might."""

    def __init__(self, path: Path) -> None:
        super().__init__(name="writer")
        self.path = path

    async def before_model_callback(self, *, callback_context, llm_request):
        self.path.write_text("seen")
        return None


async def test_a_plugins_write_is_named_by_the_plugin_its_class_and_its_callback(tmp_path):
    written = tmp_path / "plugin.log"
    app = App(name="shop", root_agent=shop(script()), plugins=[Writer(written)])

    result = await run_eval(case(app))

    assert result.status == "passed", result.explain()
    assert result.warnings == (
        f"sandbox: file written: {written}, by plugin `writer` ({__name__}.Writer) "
        "(before_model_callback)",
    )


async def test_a_toolsets_server_process_is_named_by_the_toolset_and_its_agent(tmp_path):
    agent = LlmAgent(name="lib", model=ScriptedLlm(READS), tools=[files_toolset(tmp_path / "m")])

    result = await run_eval(
        EvalCase(name="reads", agent=agent, tool_mocks=ANSWER, first_message="What is in it?")
    )

    assert result.status == "passed", result.explain()
    assert result.warnings == (
        f"sandbox: process `{sys.executable} {SERVER}` started, by McpToolset of agent `lib`",
    )


@pytest.mark.parametrize("mode", ["loud", ""])
def test_an_unknown_mode_is_one_clear_error(mode):
    from adk_eval import EvalSetupError

    with pytest.raises(EvalSetupError, match=r"`sandbox` must be one of 'warn', 'strict', 'off'"):
        case(shop(script()), sandbox=mode)


EXITS_AFTER_A_RUN = """
import asyncio, os, sys, threading, time

from google.adk.agents import LlmAgent

from adk_eval import EvalCase, ToolMock, run_eval
from adk_eval.testing import ScriptedLlm, tool_call


def lookup(order: str) -> dict:
    \"\"\"Looks an order up.\"\"\"
    return {"order": order}


script = ScriptedLlm([tool_call("lookup", {"order": "A1"}), "On its way."])
agent = LlmAgent(name="shop", model=script, tools=[lookup])
mocks = {"lookup": ToolMock.returning({"status": "shipped"})}
case = EvalCase(name="order", agent=agent, tool_mocks=mocks, first_message="A1?")
print(asyncio.run(run_eval(case)).status)


class Leftover:
    def __del__(self):
        raise ValueError("left over at exit")


os.leftover = Leftover()  # freed as `os` is wiped, after the hook's module
hook = sys.modules["adk_eval._sandbox._audit"]
threading.Thread(target=lambda kept=hook: time.sleep(60), daemon=True).start()
"""


@pytest.mark.slow
def test_the_hook_says_nothing_at_the_interpreters_exit():
    """An error reported at exit is reported as Python reports it, not as the hook's."""
    # The daemon thread (a client's worker) keeps the hook's module alive into the
    # interpreter's last clean-up, which sets its globals to None; the error then
    # (a `__del__` that raises) goes through the hook.
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-c", EXITS_AFTER_A_RUN], capture_output=True, text=True, env=env
    )

    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "passed"
    assert "ValueError: left over at exit" in done.stderr  # reported as Python reports it
    assert "Exception ignored in audit hook" not in done.stderr


def test_nothing_is_left_of_the_files(tmp_path):
    assert not list(Path(tmp_path).iterdir())
