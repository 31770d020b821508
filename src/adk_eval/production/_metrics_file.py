"""The metrics of ``--metrics FILE[:NAME]``: the metric objects cases use, from a Python file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._errors import EvalSetupError
from ..metrics._types import Metric

__all__ = ["END_NAME", "is_metric", "load_end", "load_metrics"]

END_NAME = "conversation_finished"
"""The function a metrics file may bind to tell ``watch`` a conversation has ended."""


def is_metric(value: Any) -> bool:
    """Whether `value` is a metric: a ``name`` string and a callable ``evaluate``."""
    return isinstance(getattr(value, "name", None), str) and callable(
        getattr(value, "evaluate", None)
    )


def load_metrics(spec: str) -> list[Metric]:
    """The metrics `spec` names.

    ``FILE``: every metric the file binds at module level (lists included);
    ``FILE:NAME``: that metric, or that list of them.

    Raises:
        EvalSetupError: A missing file, a file that does not import, a missing or
            wrong NAME, no metric found, or two metrics of one name: one line each.
    """
    from .._errors import DiscoveryError
    from .._suites._discovery import import_file

    file, _, name = spec.partition(":") if not Path(spec).exists() else (spec, "", "")
    path = Path(file)
    if not path.is_file():
        raise EvalSetupError(f"no such metrics file: {file} (give FILE or FILE:NAME)")
    try:
        module = import_file(path)
    except DiscoveryError as error:
        raise EvalSetupError(str(error)) from None
    if name:
        if not hasattr(module, name):
            raise EvalSetupError(f"{file} has no `{name}` (give a metric or a list of metrics)")
        value = getattr(module, name)
        found = list(value) if isinstance(value, list | tuple) else [value]
        wrong = [repr(v)[:60] for v in found if not is_metric(v)]
        if wrong:
            raise EvalSetupError(f"`{name}` in {file} holds what is not a metric: {wrong[0]}")
    else:
        found = []
        for attribute, value in vars(module).items():
            if attribute.startswith("_"):
                continue
            for candidate in value if isinstance(value, list | tuple) else [value]:
                if is_metric(candidate) and all(candidate is not f for f in found):
                    found.append(candidate)
    if not found:
        raise EvalSetupError(
            f"{file} binds no metric at module level (a metric has a `name` and an `evaluate`)"
        )
    names = [metric.name for metric in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise EvalSetupError(f"two metrics named `{twice[0]}` in {spec}; give each its own name")
    return found


def load_end(spec: str) -> Callable[[Any], bool] | None:
    """The end a metrics file declares: its module-level `END_NAME` function, if any.

    ``conversation_finished(session) -> bool`` reads an ADK `Session` (redacted as
    the metrics read it) and says whether the conversation has ended (a goodbye, a
    handoff, a closing tool call): ``watch`` then scores it at once rather than
    after its idle time. Called after `load_metrics` (the file is imported once).

    Raises:
        EvalSetupError: It binds something that is not callable under that name.
    """
    from .._suites._discovery import import_file

    file = spec if Path(spec).exists() else spec.partition(":")[0]
    found = getattr(import_file(Path(file)), END_NAME, None)
    if found is not None and not callable(found):
        raise EvalSetupError(
            f"`{END_NAME}` in {file} is {type(found).__name__}, not a function of a session; "
            f"define `def {END_NAME}(session) -> bool` or remove it"
        )
    return found
