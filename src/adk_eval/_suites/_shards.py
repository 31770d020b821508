"""CI shards: a deterministic share of a suite per machine, and the merge of their results.

A shard is chosen from the case names alone (sorted, then dealt round-robin), so
every machine that discovers the same cases picks the same share, whatever its
Python hash seed. Given the run times of an earlier run (`read_durations`), the
cases are dealt longest first to the shard with the least time so far instead
(cases the earlier run lacks count as its mean), still from sorted names. All
repeats of a case run on the same shard, so pass^k is computed as in one process.
Each shard writes a results file (`write_results`); `merge_results` turns the
files back into one `EvalSuiteResult`.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from .. import _strict_json as strict_json
from .._errors import EvalSetupError
from .._result import EvalResult
from ._inventory import RunsForReal
from ._results import EvalSuiteResult, suite_from_results

__all__ = [
    "RESULTS_FORMAT",
    "RESULTS_SCHEMA",
    "RESULTS_VERSION",
    "merge_results",
    "parse_shard",
    "read_durations",
    "shard_names",
    "write_results",
]

RESULTS_FORMAT = "adk-eval.results"
RESULTS_VERSION = 1
"""The version of the results file format (`merge_results` refuses another)."""

RESULTS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["format", "repeat", "cases", "duration_ms", "stopped_early", "results"],
    "properties": {
        "format": {"const": RESULTS_FORMAT},
        "version": {"const": RESULTS_VERSION},
        "repeat": {"type": "integer", "minimum": 1},
        "cases": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "position"],
                "properties": {
                    "name": {"type": "string"},
                    "position": {"type": "integer", "minimum": 0},
                },
            },
        },
        "duration_ms": {"type": "number", "minimum": 0},
        "stopped_early": {"type": "boolean"},
        "runs_for_real": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
        "results": {"type": "array", "items": {"type": "object"}},
    },
}
"""A results file (version `RESULTS_VERSION`); each result is `EvalResult.to_data()`."""

_VALIDATOR = Draft202012Validator(RESULTS_SCHEMA)


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)``, with 1 <= K <= N.

    Raises:
        ValueError: For anything else.
    """
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise EvalSetupError(f"--shard takes K/N with 1 <= K <= N (e.g. 2/4), got {text!r}")
    return int(match.group(1)), int(match.group(2))


def shard_names(
    names: Iterable[str],
    shard: int,
    shards: int,
    durations: Mapping[str, float] | None = None,
) -> set[str]:
    """The case names of shard `shard` of `shards`.

    Without `durations`: sorted names, dealt round-robin (balanced by count).
    With them (seconds per run, by name): longest first, each to the shard with
    the least time so far, ties to the lower shard (balanced by time).
    """
    ordered = sorted(names)
    if not durations:
        return {name for index, name in enumerate(ordered) if index % shards == shard - 1}
    known = [durations[name] for name in ordered if name in durations]
    default = sum(known) / len(known) if known else 0.0
    loads = [0.0] * shards
    chosen: set[str] = set()
    for name in sorted(ordered, key=lambda n: -durations.get(n, default)):
        target = min(range(shards), key=lambda k: (loads[k], k))
        loads[target] += durations.get(name, default)
        if target == shard - 1:
            chosen.add(name)
    return chosen


def read_durations(path: Path) -> dict[str, float]:
    """Mean seconds per run, by case name, from a JSON report or a results file.

    Raises:
        AdkEvalError: The file is unreadable or holds no runs.
    """
    data = strict_json.load_file(path, "a JSON report or results file")
    try:
        runs = [(str(run["name"]), float(run["duration_ms"])) for run in data["results"]]
        if not all(math.isfinite(seconds) and seconds >= 0 for _, seconds in runs):
            raise ValueError("a duration is not a number of milliseconds")
    except (KeyError, TypeError, ValueError):
        raise EvalSetupError(
            f"{path} is not a JSON report or results file of adk-eval run (--json or --results)"
        ) from None
    totals: dict[str, list[float]] = {}
    for name, duration_ms in runs:
        totals.setdefault(name, []).append(duration_ms / 1000)
    return {name: sum(times) / len(times) for name, times in totals.items()}


def write_results(
    path: Path, suite: EvalSuiteResult, case_names: Sequence[str], positions: dict[str, int]
) -> None:
    """Writes every run of `suite` (whole results, events included) for `merge_results`.

    `positions` places each case in the whole suite's order (its discovery
    order), which the merge restores.
    """
    data = {
        "format": RESULTS_FORMAT,
        "version": RESULTS_VERSION,
        "repeat": suite.repeat,
        "cases": [{"name": name, "position": positions[name]} for name in case_names],
        "duration_ms": suite.duration_ms,
        "stopped_early": suite.stopped_early,
        "runs_for_real": suite.runs_for_real.to_data(),
        "results": [result.to_data() for result in suite.results],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(strict_json.dumps(data))


def merge_results(paths: Sequence[Path]) -> EvalSuiteResult:
    """One suite from the results files of its shards.

    Raises:
        EvalSetupError: One line: a file is unreadable or no results file of this
            version (`RESULTS_SCHEMA`), holds a run of a case it does not list, a run
            twice or an attempt past its ``repeat``, the shards ran with different
            ``--repeat``, or two files hold the same case.
    """
    shards = [_load(path) for path in paths]
    repeats = {shard["repeat"] for _, shard in shards}
    if len(repeats) != 1:
        raise EvalSetupError(f"the shards ran with different --repeat values: {sorted(repeats)}")
    positions: dict[str, int] = {}
    owner: dict[str, Path] = {}
    results: list[EvalResult] = []
    for path, shard in shards:
        for case in shard["cases"]:
            name = case["name"]
            if name in owner:
                raise EvalSetupError(
                    f"case `{name}` is in both {owner[name]} and {path}: merge each shard once"
                )
            owner[name] = path
            positions[name] = case["position"]
        results.extend(_runs(path, shard))
    return suite_from_results(
        results,
        case_names=sorted(positions, key=lambda name: positions[name]),
        repeat=repeats.pop(),
        duration_ms=max(shard["duration_ms"] for _, shard in shards),
        stopped_early=any(shard["stopped_early"] for _, shard in shards),
        runs_for_real=functools.reduce(
            RunsForReal.merged,
            (RunsForReal.from_data(shard.get("runs_for_real")) for _, shard in shards),
            RunsForReal(),
        ),
    )


def _runs(path: Path, shard: dict[str, Any]) -> list[EvalResult]:
    """The runs of one results file, each a run of a case it lists, once, within ``repeat``."""
    listed = {case["name"] for case in shard["cases"]}
    seen: set[tuple[str, int]] = set()
    runs = []
    for index, data in enumerate(shard["results"]):
        try:
            run = EvalResult.from_data(data)
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as error:
            problem = " ".join(f"{type(error).__name__}: {error}".split())[:200]
            raise EvalSetupError(
                f"{path}: result {index} is not a run adk-eval wrote ({problem})"
            ) from None
        if run.name not in listed:
            raise EvalSetupError(
                f"{path}: result {index} is a run of `{run.name}`, a case the file does not list"
            )
        if not 0 <= run.attempt < shard["repeat"] or (run.name, run.attempt) in seen:
            raise EvalSetupError(
                f"{path}: result {index} is attempt {run.attempt} of `{run.name}`, which is "
                f"{'there twice' if (run.name, run.attempt) in seen else 'past --repeat'}"
            )
        seen.add((run.name, run.attempt))
        runs.append(run)
    return runs


def _load(path: Path) -> tuple[Path, dict[str, Any]]:
    data = strict_json.load_file(path, "an adk-eval results file")
    if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
        raise EvalSetupError(
            f"{path} is not an adk-eval results file (write one with adk-eval run --results)"
        )
    version = data.get("version", RESULTS_VERSION)  # files of the first format had none
    if version != RESULTS_VERSION:
        raise EvalSetupError(
            f"{path} is a results file of version {version!r}; this adk-eval reads version "
            f"{RESULTS_VERSION}: merge with the adk-eval that wrote it"
        )
    problem = next(iter(_VALIDATOR.iter_errors(data)), None)
    if problem is not None:
        where = "/".join(str(part) for part in problem.absolute_path) or "the top level"
        raise EvalSetupError(
            f"{path} is not a valid results file: {problem.message[:200]} (at {where})"
        )
    return path, data
