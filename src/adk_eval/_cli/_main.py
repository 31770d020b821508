"""The `adk-eval` command group: one command module per group of commands, registered here.

* running suites (`_running`): ``run``, ``merge``, ``report``, ``list``
* stored runs (`_stored`): ``runs``, ``compare``, ``judges``, ``view``
* servers and set-up (`_servers`): ``studio``, ``models``, ``setup-local``
* production sessions (`_production`, `_shadow`, `_watch`): ``score``, ``shadow``, ``watch``
* the model-output cache (`_cache`): ``cache path|list|clear|prune``
* a mock MCP server (`_mock_mcp`): ``mock-mcp``
* a mock A2A server (`_mock_a2a`): ``mock-a2a``

Every command imports what it needs (ADK, FastAPI, uvicorn, litellm) when it
runs, so ``adk-eval --help`` and ``adk-eval runs`` import none of them.
"""

from __future__ import annotations

import click

from .. import __version__
from ._cache import cache
from ._collect import collect
from ._common import whole_process
from ._mock_a2a import mock_a2a
from ._mock_mcp import mock_mcp
from ._production import score
from ._realism import mine, realism
from ._running import list_cases, merge, report, run
from ._servers import models, setup_local, studio
from ._shadow import shadow
from ._stored import compare, judges, runs, view
from ._watch import watch

__all__ = ["entry", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="adk-eval")
def main() -> None:
    """Evaluate Google ADK agents by simulation."""


for command in (
    run,
    merge,
    report,
    list_cases,
    score,
    watch,
    shadow,
    mine,
    realism,
    collect,
    mock_mcp,
    mock_a2a,
    runs,
    compare,
    judges,
    view,
    studio,
    models,
    setup_local,
    cache,
):
    main.add_command(command)


def entry() -> None:
    """The `adk-eval` command (and ``python -m adk_eval``): `main`, as the whole process."""
    whole_process()
    main(prog_name="adk-eval")
