"""The `adk-eval` command group: one command module per group of commands, registered here.

* running suites (`_running`): ``run``, ``merge``, ``report``, ``list``
* stored runs (`_stored`): ``runs``, ``compare``, ``judges``, ``view``
* servers and set-up (`_servers`): ``studio``, ``models``, ``setup-local``
* production sessions (`_production`, `_shadow`, `_watch`): ``score``, ``shadow``, ``watch``
* the model-output cache (`_cache`): ``cache path|list|clear|prune``
* a mock MCP server (`_mock_mcp`): ``mock-mcp``
* a mock A2A server (`_mock_a2a`): ``mock-a2a``

Every command imports what it needs (ADK, FastAPI, uvicorn, litellm) when it
runs, so ``adk-eval --help`` and ``adk-eval runs`` import none of them. The group
itself imports a command's module only when that command is asked for (or the
group's help lists it): ``adk-eval run`` pays for no other command's code.
"""

from __future__ import annotations

import importlib

import click

from .. import __version__
from ._common import whole_process

__all__ = ["COMMANDS", "entry", "main"]

COMMANDS = {
    "run": "_running:run",
    "merge": "_running:merge",
    "report": "_running:report",
    "list": "_running:list_cases",
    "score": "_production:score",
    "watch": "_watch:watch",
    "shadow": "_shadow:shadow",
    "mine": "_realism:mine",
    "realism": "_realism:realism",
    "collect": "_collect:collect",
    "mock-mcp": "_mock_mcp:mock_mcp",
    "mock-a2a": "_mock_a2a:mock_a2a",
    "runs": "_stored:runs",
    "compare": "_stored:compare",
    "judges": "_stored:judges",
    "view": "_stored:view",
    "studio": "_servers:studio",
    "models": "_servers:models",
    "setup-local": "_servers:setup_local",
    "cache": "_cache:cache",
}
"""Each command's name and where it is (``module:attribute`` in this package)."""


class _OnDemand(click.Group):
    """A group whose commands are imported from `COMMANDS` when first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        module, attribute = COMMANDS[cmd_name].split(":")
        command = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
        self.add_command(command, cmd_name)
        return command  # type: ignore[no-any-return]


@click.group(cls=_OnDemand, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="adk-eval")
def main() -> None:
    """Evaluate Google ADK agents by simulation."""


def entry() -> None:
    """The `adk-eval` command (and ``python -m adk_eval``): `main`, as the whole process."""
    whole_process()
    main(prog_name="adk-eval")
