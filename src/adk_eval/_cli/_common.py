"""What every command shares: exit codes, one-line errors, the console, option groups.

Exit codes: 0 every gate passed, 1 one failed (`adk_eval._cli._gates`),
2 a usage or set-up error (one line on stderr), 5 no case was selected,
130 interrupted by Ctrl-C, 143 by SIGTERM (what finished is printed, reported and stored).

This module imports no ADK, FastAPI or litellm, so that ``adk-eval --help`` and
the commands that read stored runs stay fast.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console

from ..models import ROLE_ENV, ModelRole, missing_credentials
from ..reporting._db_path import DEFAULT_DB_PATH

__all__ = [
    "host_and_port",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_NO_CASES",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "ModelChoice",
    "console",
    "db_option",
    "deployed_instead",
    "exit_process",
    "fail",
    "grouped",
    "model_options",
    "whole_process",
]

EXIT_FAILED, EXIT_USAGE, EXIT_NO_CASES, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 5, 130, 143

_F = TypeVar("_F", bound=Callable[..., Any])

_process = {"whole": False}
"""Whether this process is the command itself (`whole_process`), so it may end itself at once."""


def whole_process() -> None:
    """Notes that this process is the `adk-eval` command itself (not a test invoking it)."""
    _process["whole"] = True


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Prints ``adk-eval: error: MESSAGE`` on one line of stderr and exits with `code`."""
    click.secho("adk-eval: error: ", fg="red", bold=True, nl=False, err=True)
    click.echo(" ".join(message.split()), err=True)
    sys.exit(code)


_ADDRESS = re.compile(r"(?:https?://)?(\[[^\]]+\]|[^:/\[\]]+):(\d{1,5})/?")


def host_and_port(value: str, option: str, example: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6, an ``http://`` prefix allowed) as (host, port).

    A value that is not one fails the command with one line naming `option` and
    showing `example`.
    """
    found = _ADDRESS.fullmatch(value.strip())
    if found is None or int(found.group(2)) > 65535:
        fail(f"{option} {value!r} is not HOST:PORT ({example}; port 0 picks a free one)")
    return found.group(1).strip("[]"), int(found.group(2))


def console() -> Console:
    """The console commands print to."""
    # soft_wrap: plain lines are not broken at 80 columns in CI logs
    return Console(highlight=False, soft_wrap=True)


def exit_process(code: int, out: Console, threads_before: set[int | None] | None) -> NoReturn:
    """Exits with `code`, even when the eval code left threads that would hold the exit.

    Python waits for every non-daemon thread before it exits, so a thread an eval
    module started and never ended would hang a CI job after its results. The
    command says so and ends the process (only when it is the whole process: the
    `adk-eval` command or ``python -m adk_eval``, not a test invoking it).
    """
    if threads_before is not None:
        left = [
            thread
            for thread in threading.enumerate()
            if thread.ident not in threads_before and not thread.daemon and thread.is_alive()
        ]
        deadline = time.monotonic() + 1.0  # a worker pool told to stop as the loop closed
        for thread in left:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        left = [thread for thread in left if thread.is_alive()]
        if left:
            names = ", ".join(thread.name for thread in left)
            out.print(
                f"[yellow]note:[/] the eval code left {len(left)} thread(s) running ({names}); "
                "exiting anyway"
            )
            if _process["whole"]:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
    sys.exit(code)


def grouped(
    name: str, build: Callable[..., Any], *options: Callable[[_F], _F]
) -> Callable[[_F], _F]:
    """A decorator adding `options` to a command, handed to it as one value.

    The command gets ``name=build(**values)`` instead of one parameter per option.
    """

    def decorate(function: _F) -> _F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {key: kwargs.pop(key) for key in list(kwargs) if key in keys}
            kwargs[name] = build(**values)
            return function(*args, **kwargs)

        before = len(getattr(wrapper, "__click_params__", []))
        for option in reversed(options):
            wrapper = option(wrapper)
        keys = {param.name for param in getattr(wrapper, "__click_params__", [])[before:]}
        return wrapper  # type: ignore[return-value]

    return decorate


db_option = click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DB_PATH,
    envvar="ADK_EVAL_DB",
    show_default=True,
    help="The SQLite file of stored runs.",
)


@dataclass(frozen=True)
class ModelChoice:
    """The models chosen on the command line, by role (None: not given)."""

    model: str | None = None
    user_model: str | None = None
    judge_model: str | None = None

    def apply(self) -> None:
        """Puts the choices in the environment (before cases are imported) and checks the keys.

        ``--model`` also becomes ADK's default model. A role whose model lacks its
        key is one error line.
        """
        chosen: Mapping[ModelRole, str | None] = {
            "model": self.model,
            "user_model": self.user_model,
            "judge_model": self.judge_model,
        }
        for role, value in chosen.items():
            if value:
                os.environ[ROLE_ENV[role]] = value
        for role in ROLE_ENV:
            value = os.environ.get(ROLE_ENV[role], "").strip()
            problem = missing_credentials(value) if value else None
            if problem is not None:
                fail(f"{ROLE_ENV[role]}: {problem}")
        if self.model:
            from google.adk.agents import LlmAgent

            from .._errors import AdkEvalError
            from ..models import resolve_model

            try:
                LlmAgent.set_default_model(resolve_model(self.model))
            except AdkEvalError as error:
                fail(str(error))


def _model_option(role: ModelRole, flag: str, what: str) -> Callable[[_F], _F]:
    return click.option(
        flag,
        role,
        metavar="MODEL",
        help=f"Model for {what}: a Gemini name, provider/model (LiteLLM) or 'local'. "
        f"Sets {ROLE_ENV[role]}.",
    )


model_options = grouped(
    "models",
    ModelChoice,
    _model_option("model", "--model", "the system agents (and the default of the other two)"),
    _model_option("user_model", "--user-model", "the user agents"),
    _model_option("judge_model", "--judge-model", "llm_judge metrics"),
)
"""``--model``, ``--user-model``, ``--judge-model``, handed to the command as ``models``."""


def deployed_instead(found: Any, url: str) -> Any:
    """The discovered case `found` driving the agent deployed at `url` (``--agent-a2a``).

    What wires the case's own agent (tool, toolset, node and remote mocks,
    per-agent models, simulated tools) is left out: that agent's tools run in
    its service. The case's users, opening, metrics and limits drive this one.
    A URL that cannot be an A2A agent is one error line.
    """
    import dataclasses

    from .._errors import EvalSetupError

    try:
        case = dataclasses.replace(
            found.case,
            agent=url,
            tool_mocks={},
            toolset_mocks={},
            node_mocks={},
            remote_mocks={},
            models=None,
            simulate_unmocked=False,
        )
    except EvalSetupError as error:
        fail(f"--agent-a2a: {error}")
    return dataclasses.replace(found, case=case)
