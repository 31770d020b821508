"""ADK's own log of an error the harness reports itself is left out.

When a mock or an injected fault raises and no callback of the agent handles
the error, ADK fails the node and logs the exception with its traceback (twice:
the node and the root), about 200 lines per run on stderr, while the run's
result already names the error ("The mock for tool `x` raised ..."); the same
holds for a `ScriptedLlm` that refuses a step (its script is exhausted, or a
scripted call does not fit the tool). `quiet`
marks such an exception; a filter on ADK's loggers drops the records whose
exception (or an exception it was raised from or during) is marked. Any other
record of ADK's, every other exception included, is logged as usual. The filter
also drops a record that logs a marked exception as its message (ADK's warning
about a call to a tool the agent does not have, which the trace reports).
`quiet_harness_app` leaves out ADK's context-cache advice about an App the
harness made, which the user cannot act on.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

__all__ = ["quiet", "quiet_harness_app"]

_ADK_LOGGERS = "google_adk"
"""The prefix of the names of ADK's loggers."""

_MARKED_AT_MOST = 256
"""Marked exceptions kept (ADK logs an error as it fails the node, right after it is raised)."""

_marked: OrderedDict[int, BaseException] = OrderedDict()
"""The latest exceptions the harness reports itself, by id (kept, so no id is reused)."""


class _ReportedElsewhere(logging.Filter):
    """Drops a record whose exception chain holds a marked exception."""

    def filter(self, record: logging.LogRecord) -> bool:
        logged = [record.exc_info[1]] if record.exc_info else []
        if isinstance(record.args, tuple):  # ``logger.warning("%s", error)``
            logged.extend(arg for arg in record.args if isinstance(arg, BaseException))
        return not any(_is_marked(error) for error in logged)


def _is_marked(error: BaseException | None) -> bool:
    """Whether `error`, or an exception it was raised from or during, is marked."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if _marked.get(id(error)) is error:
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


_FILTER = _ReportedElsewhere()


def quiet(error: BaseException) -> None:
    """Marks `error` as reported by the harness: ADK does not log it again."""
    _marked[id(error)] = error
    while len(_marked) > _MARKED_AT_MOST:
        _marked.popitem(last=False)
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if not name.startswith(_ADK_LOGGERS) or not isinstance(logger, logging.Logger):
            continue
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


_RUNNER_LOGGER = "google_adk.google.adk.runners"
"""ADK's runner's logger."""

_CACHE_ADVICE = "can transfer between agents but has no context_cache_config"
"""ADK's advice (once per app name) to set a context cache on an App that transfers."""

_harness_apps: set[str] = set()


class _AdviceForTheHarness(logging.Filter):
    """Drops ADK's context-cache advice about an App the harness made around an agent."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _CACHE_ADVICE not in str(record.msg) or not isinstance(record.args, tuple):
            return True
        return not (record.args and record.args[0] in _harness_apps)


_ADVICE_FILTER = _AdviceForTheHarness()


def quiet_harness_app(app_name: str) -> None:
    """Leaves out ADK's context-cache advice about the App named `app_name`.

    The harness makes that App around an agent that came without one: the advice
    is about an object the user never wrote and cannot set anything on. An App
    the user passes is the user's, and keeps ADK's advice.
    """
    _harness_apps.add(app_name)
    logger = logging.getLogger(_RUNNER_LOGGER)
    if _ADVICE_FILTER not in logger.filters:
        logger.addFilter(_ADVICE_FILTER)
