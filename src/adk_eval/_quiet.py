"""ADK's own log of an error the harness reports itself is left out.

When a mock or an injected fault raises and no callback of the agent handles
the error, ADK fails the node and logs the exception with its traceback (twice:
the node and the root), about 150 lines per run on stderr, while the run's
result already names the error ("The mock for tool `x` raised ..."); the same
holds for a `ScriptedLlm` that refuses a step (its script is exhausted, or a
scripted call does not fit the tool). `quiet` marks such an exception; a
filter on ADK's loggers drops the records whose exception (or an exception it
was raised from or during) is marked.

The harness's expected stops are left out whether marked or not: a cassette
miss, an unmocked tool refused, a provider's wait budget spent, a strict
sandbox's refusal (`EXPECTED_STOPS`) each end the run with one line in its
result. A record is dropped when its exception is one, or is ADK's own error
raised from or during one (the root node's ``DynamicNodeFailError``); an
exception of the user's code raised while handling one is kept, as is any
other record of ADK's, every other exception included. `quiet_adk_logs`
puts the filter on ADK's loggers (a run does, as it starts).

The filter also drops a record that logs a marked exception as its message
(ADK's warning about a call to a tool the agent does not have, which the trace
reports). `quiet_harness_app` leaves out ADK's context-cache advice about an
App the harness made, which the user cannot act on.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

from ._errors import CassetteMissError, EvalRunError, ScriptedCallError, ScriptExhaustedError

__all__ = ["EXPECTED_STOPS", "quiet", "quiet_adk_logs", "quiet_harness_app"]

EXPECTED_STOPS: tuple[type[BaseException], ...] = (
    EvalRunError,  # refusals (tools, nodes, the sandbox), wait budgets, user agents, shadows
    CassetteMissError,
    ScriptExhaustedError,
    ScriptedCallError,
)
"""The harness's own stops of a run: its result reports each in one line."""

_ADK_LOGGERS = "google_adk"
"""The prefix of the names of ADK's loggers."""

_MARKED_AT_MOST = 256
"""Marked exceptions kept (ADK logs an error as it fails the node, right after it is raised)."""

_marked: OrderedDict[int, BaseException] = OrderedDict()
"""The latest exceptions the harness reports itself, by id (kept, so no id is reused)."""


class _ReportedElsewhere(logging.Filter):
    """Drops a record of a marked exception or of an expected stop (see the module doc)."""

    def filter(self, record: logging.LogRecord) -> bool:
        logged = [record.exc_info[1]] if record.exc_info else []
        if isinstance(record.args, tuple):  # ``logger.warning("%s", error)``
            logged.extend(arg for arg in record.args if isinstance(arg, BaseException))
        return not any(_is_marked(error) or _is_expected_stop(error) for error in logged)


def _is_marked(error: BaseException | None) -> bool:
    """Whether `error`, or an exception it was raised from or during, is marked."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if _marked.get(id(error)) is error:
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def _is_expected_stop(error: BaseException | None) -> bool:
    """Whether `error` is an expected stop, or ADK's error raised from or during one."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, EXPECTED_STOPS):
            return True
        if not type(error).__module__.startswith("google.adk."):  # the user's own, or Python's
            return False
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


_FILTER = _ReportedElsewhere()
_FILTERED: list[int] = [0]
"""How many loggers there were when the filter was last put on ADK's."""


def quiet(error: BaseException) -> None:
    """Marks `error` as reported by the harness: ADK does not log it again."""
    _marked[id(error)] = error
    while len(_marked) > _MARKED_AT_MOST:
        _marked.popitem(last=False)
    quiet_adk_logs()


def quiet_adk_logs(harness_app: str | None = None) -> None:
    """Leaves out ADK's logs a run need not show: what the harness reports, advice it made moot.

    A run calls it as it starts. Cheap when no logger was made since the last call.

    Args:
        harness_app: The name of the App the harness made around the agent under
            test (None: the user passed an App): see `quiet_harness_app`.
    """
    if harness_app is not None:
        quiet_harness_app(harness_app)
    loggers = logging.Logger.manager.loggerDict
    if len(loggers) == _FILTERED[0]:
        return
    for name, logger in list(loggers.items()):
        if not name.startswith(_ADK_LOGGERS) or not isinstance(logger, logging.Logger):
            continue
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    _FILTERED[0] = len(loggers)


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
