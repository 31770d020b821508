"""Golden export: good real conversations become regression cases.

``adk-eval score ... --export-goldens FILE --where "METRIC passed"`` appends every
scored session the condition selects to an ADK EvalSet (`to_golden`,
`append_golden`), as the studio and `run_eval` results do; the default condition
is that every metric that applies passed. A stored session records its final
state, not the state it started with, so a golden exported from one starts from
an empty state.

The file is checked before anything is scored (`GoldenExport` refuses one that
could not be appended to: not an EvalSet, an older format, read-only, a FIFO, in
a folder that cannot be made), so a mistake costs one line, not a whole score.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from google.adk.sessions import Session

from .._errors import EvalSetupError
from .._result import EvalResult
from .._sources._files import not_a_file
from ..goldens import append_golden, load_eval_set, to_golden
from ..metrics._types import Metric

__all__ = ["GoldenExport"]


class GoldenExport:
    """Appends the scored sessions a condition selects to an EvalSet.

    Args:
        path: The EvalSet file (created if missing, appended to otherwise).
        where: ``"METRIC passed"`` or ``"METRIC failed"``; None: the run passed.
        metrics: The metrics being scored (the condition must name one).

    Raises:
        EvalSetupError: A condition that does not parse or names no metric.
        AdkEvalError: A file that cannot be appended to (one line naming it and why).
    """

    def __init__(self, path: Path, where: str | None, metrics: Sequence[Metric]) -> None:
        _check_appendable(path)
        self.path = path
        self.exported = 0
        self.metric: str | None = None
        self.wanted = True
        if where is not None:
            match = re.fullmatch(r"\s*(\S+)\s+(passed|failed)\s*", where)
            if match is None:
                raise EvalSetupError(f"--where {where!r} is not 'METRIC passed' or 'METRIC failed'")
            names = [metric.name for metric in metrics]
            if match.group(1) not in names:
                close = difflib.get_close_matches(match.group(1), names, n=1)
                hint = f"; did you mean `{close[0]}`?" if close else f" ({', '.join(names)})"
                raise EvalSetupError(f"--where names no metric `{match.group(1)}`{hint}")
            self.metric, self.wanted = match.group(1), match.group(2) == "passed"

    def selects(self, result: EvalResult) -> bool:
        """Whether the condition holds for `result`."""
        if self.metric is None:
            return result.passed
        metric = result.metrics.get(self.metric)
        return metric is not None and metric.applicable and metric.passed == self.wanted

    def offer(self, result: EvalResult, session: Session) -> None:
        """Appends `session` (scored as `result`) when the condition selects it."""
        if not self.selects(result):
            return
        try:
            golden = to_golden(
                session,
                eval_id=session.id,
                app_name=session.app_name,
                user_id=session.user_id,
            )
        except ValueError:  # no user turn: nothing to replay
            return
        append_golden(self.path, golden, session.app_name)
        self.exported += 1

    def summary(self) -> str:
        """One line: how many sessions went where."""
        condition = (
            f"where `{self.metric}` {'passed' if self.wanted else 'failed'}"
            if self.metric
            else "that passed"
        )
        return f"goldens: {self.exported} session(s) {condition} appended to {self.path}"


def _check_appendable(path: Path) -> None:
    """Refuses, before any scoring, an EvalSet file that goldens could not be appended to.

    Raises:
        EvalSetupError: Not a regular file, read-only, an older format, or a folder
            that cannot be made or written.
        EvalSetFileError: An existing file that is not an EvalSet.
    """
    flag = f"--export-goldens {path}"
    kind = not_a_file(path)
    if kind is not None:
        raise EvalSetupError(f"{flag}: it is {kind}, not a file; name an EvalSet .json file")
    if path.exists():
        load_eval_set(path)  # not an EvalSet: EvalSetFileError, one line
        if not isinstance(json.loads(path.read_text(encoding="utf-8")), dict):
            raise EvalSetupError(
                f"{flag}: it holds an older EvalSet format, which is read but never "
                "rewritten; export to a new file"
            )
        marked = path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        if not marked or not os.access(path, os.W_OK):
            raise EvalSetupError(f"{flag}: it is read-only; make it writable or choose another")
        return
    folder = next((p for p in path.absolute().parents if p.exists()), None)
    if folder is None or not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise EvalSetupError(
            f"{flag}: cannot create it, {folder} is not a writable folder; choose another path"
        )
