"""Reading and appending ADK EvalSet files, safely.

Appends: a missing file is created (``eval_set_id``
``{snake_name}_evals``, a ``creation_timestamp``); an existing one gets the case
appended, its ``eval_id`` made unique. Every write goes to a temporary file that
replaces the target in one rename, under an exclusive lock on the folder, so
concurrent writers (threads or processes) lose nothing. A file that exists but
is not a valid EvalSet is never overwritten. Files are written the way ADK's
`LocalEvalSetsManager` writes them (snake_case JSON, unset/default/None fields
left out).
"""

from __future__ import annotations

import glob
import json
import os
import re
import stat
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
from google.adk.evaluation.eval_set import EvalSet
from pydantic import ValidationError

from .._errors import EvalSetFileError
from .._file_kinds import not_a_file
from ._export import snake_case

__all__ = [
    "AppendResult",
    "EvalSetFileError",
    "append_eval_case",
    "append_golden",
    "load_eval_set",
    "resolve_path",
]


@dataclass(frozen=True)
class AppendResult:
    """Where an exported case went.

    Attributes:
        path: The EvalSet file (absolute).
        eval_set_id: Its id.
        eval_id: The id the case was stored under (made unique in the set).
        cases: How many cases the set holds now.
        created: Whether the file was created by this append.
    """

    path: Path
    eval_set_id: str
    eval_id: str
    cases: int
    created: bool


def resolve_path(path: str | Path) -> Path:
    """A relative path resolves against the working directory."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else Path.cwd() / candidate


def _dump(eval_set: EvalSet) -> str:
    return eval_set.model_dump_json(
        indent=2, exclude_unset=True, exclude_defaults=True, exclude_none=True
    )


def load_eval_set(path: str | Path) -> EvalSet:
    """Reads an EvalSet file, or one of ADK's two older formats (through ADK's converter).

    The older formats are a list of ``{"name", "data", "initial_session"}`` cases
    (read by ``adk eval``) and a flat list of ``{"query", "expected_tool_use",
    "reference"}`` turns (one case, read by ADK's ``AgentEvaluator``).

    Raises:
        EvalSetFileError: Naming the file and what is wrong with it.
    """
    return _read(resolve_path(path))[0]


def _check_regular(path: Path, shown: Path) -> bool:
    """Whether `path` exists; refuses one that is not a regular file (a FIFO would block).

    Raises:
        EvalSetFileError: `path` is a folder, FIFO, socket or device, or cannot be examined.
    """
    try:
        path.stat()
    except FileNotFoundError:
        return False
    except OSError as error:
        raise EvalSetFileError(f"cannot reach EvalSet file {shown}: {error}") from None
    kind = not_a_file(path)
    if kind is not None:
        raise EvalSetFileError(
            f"{shown} is {kind}, not a file: an EvalSet must be a regular .json file; "
            "point at one (it was left untouched)"
        )
    return True


def _read(target: Path) -> tuple[EvalSet, str | None, Any]:
    """The EvalSet in `target`, the name of its older format (None: current), the raw JSON."""
    _check_regular(target, target)
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvalSetFileError(f"no EvalSet file at {target}") from None
    except UnicodeDecodeError as error:
        raise EvalSetFileError(
            f"{target} is not UTF-8 text ({error.reason} at byte {error.start}): not an "
            "EvalSet file; it was left untouched"
        ) from None
    except OSError as error:
        raise EvalSetFileError(f"cannot read EvalSet file {target}: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise EvalSetFileError(
            f"{target} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}); "
            "it was left untouched"
        ) from None
    try:
        return EvalSet.model_validate(data), None, data
    except ValidationError as error:
        legacy = _legacy_format(data)
        if legacy is not None:
            return _convert_legacy(target, data, legacy), legacy, data
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise EvalSetFileError(
            f"{target} is not a valid ADK EvalSet ({where}: {first['msg']}; "
            f"{error.error_count()} problem(s)); {_looks_like(data)}; it was left untouched"
        ) from None


_CASE_LIST = "a list of {name, data, initial_session} cases (the older `adk eval` format)"
_TURN_LIST = "a flat list of {query, expected_tool_use, reference} turns (AgentEvaluator's format)"


def _legacy_format(data: object) -> str | None:
    if not isinstance(data, list) or not data or not all(isinstance(i, dict) for i in data):
        return None
    if all("data" in item and "name" in item for item in data):
        return _CASE_LIST
    if all("query" in item for item in data):
        return _TURN_LIST
    return None


def _convert_legacy(target: Path, data: list[dict[str, object]], legacy: str) -> EvalSet:
    """Converts an older format with ADK's own converter."""
    from google.adk.evaluation.local_eval_sets_manager import (
        convert_eval_set_to_pydantic_schema,
    )

    cases = data if legacy == _CASE_LIST else [{"name": target.stem, "data": data}]
    try:
        return convert_eval_set_to_pydantic_schema(target.stem, cases)
    except (KeyError, TypeError, ValueError, ValidationError) as error:
        raise EvalSetFileError(
            f"{target} looks like {legacy}, but ADK's converter refused it "
            f"({type(error).__name__}: {error}); it was left untouched"
        ) from None


def _looks_like(data: object) -> str:
    """What a file that is no EvalSet seems to hold, and what to do about it."""
    if isinstance(data, dict) and "eval_cases" not in data and "evalCases" not in data:
        keys = ", ".join(sorted(map(str, data))[:5])
        return f"it is a JSON object with keys {keys} but no eval_cases: is it an EvalSet file?"
    if isinstance(data, list):
        return f"it is a JSON list, but neither of ADK's older formats ({_CASE_LIST}; {_TURN_LIST})"
    return "fix the field named above, or export the goldens again"


_THREAD_LOCKS: dict[Path, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


@contextmanager
def _exclusive(folder: Path, target: Path) -> Iterator[None]:
    with _THREAD_LOCKS_GUARD:
        thread_lock = _THREAD_LOCKS.setdefault(folder, threading.Lock())
    with thread_lock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: threads are still serialised
            yield
            return
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError as error:
            raise EvalSetFileError(
                f"cannot open the folder of EvalSet file {target}: {error}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _unique_id(wanted: str, taken: set[str]) -> str:
    if wanted not in taken:
        return wanted
    n = 2
    while f"{wanted}_{n}" in taken:
        n += 1
    return f"{wanted}_{n}"


_TEMP_SUFFIX = ".adk-eval-tmp"
_TEMP_NAME = re.compile(
    r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{32}" + re.escape(_TEMP_SUFFIX) + "$"
)


def _temporary_for(target: Path) -> Path:
    """``.<name>.<pid>.<random>.adk-eval-tmp`` next to `target`: recognisable as ours."""
    return target.parent / f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}{_TEMP_SUFFIX}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _remove_stale_temporaries(target: Path) -> None:
    """Removes temp files of writers of `target` that died (``kill -9``) mid-write.

    Only files named exactly as `_temporary_for` names them, for this target,
    whose writer process no longer exists; called under the folder lock.
    """
    for candidate in target.parent.glob(f".{glob.escape(target.name)}.*{_TEMP_SUFFIX}"):
        match = _TEMP_NAME.match(candidate.name)
        if match and match["name"] == target.name and not _alive(int(match["pid"])):
            candidate.unlink(missing_ok=True)


def _write_atomically(target: Path, text: str) -> None:
    """Replaces `target`'s content at once, keeping its mode (a symlink's target is written)."""
    target = target.resolve()  # write through a symlink to the file it points at
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    _remove_stale_temporaries(target)
    temporary = _temporary_for(target)
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def append_golden(path: str | Path, golden: AdkEvalCase, agent_name: str) -> AppendResult:
    """Appends `golden` (ADK's `EvalCase`) to the EvalSet at `path`, creating the file if needed.

    Args:
        path: The EvalSet file; relative paths resolve against the working directory.
        golden: The golden (its ``eval_id`` gets a ``_2``, ``_3``... suffix if taken).
        agent_name: Names a new set: ``eval_set_id`` is ``{snake_case(agent_name)}_evals``.

    Raises:
        EvalSetFileError: If the file exists but is not a valid EvalSet (it is
            left untouched), or cannot be written.
    """
    target = resolve_path(path)
    try:
        real = target.resolve()  # a symlinked set is written at the file it points to
        real.parent.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError) as error:  # a parent that is a file, no permission, a loop
        raise EvalSetFileError(
            f"cannot create the folder of EvalSet file {target}: {error}; choose a path "
            "under a writable folder"
        ) from None
    with _exclusive(real.parent, target):
        created = not _check_regular(real, target)
        if created:
            snake = snake_case(agent_name)
            eval_set = EvalSet(
                eval_set_id=f"{snake}_evals",
                name=f"{snake}_evals",
                description=f"Golden traces of {agent_name}, captured with adk-eval",
                eval_cases=[],
                creation_timestamp=time.time(),
            )
            document: dict[str, Any] = json.loads(_dump(eval_set))
        else:
            eval_set, document = _appendable(target, real)
        taken = {case.eval_id for case in eval_set.eval_cases}
        stored = golden.model_copy(update={"eval_id": _unique_id(golden.eval_id, taken)})
        camel = "evalCases" in document and "eval_cases" not in document
        cases = document.setdefault("evalCases" if camel else "eval_cases", [])
        cases.append(json.loads(_dump_case(stored, by_alias=camel)))
        try:
            _write_atomically(real, json.dumps(document, indent=2, ensure_ascii=False))
        except OSError as error:
            raise EvalSetFileError(f"cannot write EvalSet file {target}: {error}") from None
    return AppendResult(
        path=target,
        eval_set_id=eval_set.eval_set_id,
        eval_id=stored.eval_id,
        cases=len(cases),
        created=created,
    )


def _appendable(target: Path, real: Path) -> tuple[EvalSet, dict[str, Any]]:
    """The set in an existing file and its JSON document (kept as written, unknown keys too).

    Raises:
        EvalSetFileError: The file is read-only, invalid, or in an older format.
    """
    read_only = not real.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    if read_only or not os.access(real, os.W_OK):  # marked read-only (even for root)
        raise EvalSetFileError(
            f"{target} is read-only; adk_eval does not change it. Make it writable, or "
            "append to another file; it was left untouched"
        )
    eval_set, legacy, document = _read(real)
    if legacy is not None or not isinstance(document, dict):
        raise EvalSetFileError(
            f"{target} holds {legacy}; adk_eval reads it but does not rewrite it. "
            "Append to a new file (or convert this one to an EvalSet first); "
            "it was left untouched"
        )
    return eval_set, document


def append_eval_case(path: str | Path, eval_case: AdkEvalCase, agent_name: str) -> AppendResult:
    """Deprecated alias of `append_golden` (it takes ADK's `EvalCase`, a golden, not ours)."""
    warnings.warn(
        "append_eval_case is deprecated (it takes ADK's EvalCase, a golden); use append_golden",
        DeprecationWarning,
        stacklevel=2,
    )
    return append_golden(path, eval_case, agent_name)


def _dump_case(eval_case: AdkEvalCase, *, by_alias: bool) -> str:
    return eval_case.model_dump_json(
        exclude_unset=True, exclude_defaults=True, exclude_none=True, by_alias=by_alias
    )
