"""What the fork server of `Workers` imports once, so that each worker forked from it starts warm.

multiprocessing's fork server imports this module before it forks any worker: the
harness and ADK (through the worker's own module), then the modules named in
``ADK_EVAL_WARM_MODULES`` (ADK's and the model clients' modules the parent had
loaded; see `_process.warm_modules`), with the garbage collector off and what they
made frozen, as ``adk-eval run`` imports. A module that fails to import here is
left for the worker, which imports what its cases need and reports what fails.
The user's own modules are never imported here: they may change between two
suites of one process, and the fork server lives as long as the process.
"""

from __future__ import annotations

import contextlib
import importlib
import os

from ..._lazy import imports_without_collections

__all__: list[str] = []

os.environ.setdefault("LITELLM_MODE", "PRODUCTION")  # as ADK imports litellm: no .env autoload

with imports_without_collections():
    from . import _process

    for _name in os.environ.get(_process.WARM_ENV, "").split(","):
        if _name:
            with contextlib.suppress(Exception):
                importlib.import_module(_name)
