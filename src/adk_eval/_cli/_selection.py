"""Which cases a command runs, and where and how its runs go: the options of ``run``.

`Selection` finds the cases (``PATHS``, ``-k``, ``--shard``, ``--durations``; ``--agent-a2a``
puts a deployed agent in place of each case's own), `Placement` chooses the executor
(``--workers``, ``--executor``, ``--address``, ``--ray-working-dir``) and `RunOptions` holds the
rest (``--repeat``, ``--concurrency``, ``-x``, ``--timeout``, ``--seed``, ``--sandbox``,
``--telemetry``, ``--faults``). Each is one value the command gets, built by an option group.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from .._suites._plan import DEFAULT_MAX_CONCURRENCY, Adaptive
from ._common import EXIT_NO_CASES, deployed_instead, fail, grouped

if TYPE_CHECKING:
    from .._sandbox._scope import SandboxMode, TelemetryMode
    from .._suites._discovery import DiscoveredCase
    from .._suites._run import Executor
    from .._termination import Budget

__all__ = [
    "Placement",
    "RunOptions",
    "Selection",
    "discover",
    "keyword_option",
    "placement_options",
    "run_options",
    "selection_options",
]


def discover(paths: tuple[str, ...], keyword: str | None) -> list[DiscoveredCase]:
    """The cases under `paths` that match ``-k`` `keyword`; any problem is one error line."""
    from .._errors import DiscoveryError, SharedModelWarning
    from .._suites._discovery import discover as find
    from .._suites._discovery import filter_cases

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SharedModelWarning)
            found = find(paths)
        selected = filter_cases(found, keyword)
    except DiscoveryError as error:
        fail(str(error))
    for warning in caught:
        if issubclass(warning.category, SharedModelWarning):
            click.echo(f"adk-eval: warning: {warning.message}", err=True)
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    if not selected:
        names = ", ".join(f.case.name for f in found)
        fail(f"no case matches -k {keyword!r} (found: {names})", EXIT_NO_CASES)
    return selected


@dataclass(frozen=True)
class Selection:
    """The cases to run (``-k``, a CI shard, durations) and the agent they drive.

    ``--agent-a2a``: a deployed agent stands in for each case's own.
    """

    keyword: str | None = None
    shard: str | None = None
    durations_path: Path | None = None
    agent_a2a: str | None = None

    def durations(self) -> dict[str, float] | None:
        """Seconds per run of the earlier run (``--durations``), by case name."""
        if self.durations_path is None:
            return None
        from .._errors import AdkEvalError
        from .._suites._shards import read_durations

        try:
            return read_durations(self.durations_path)
        except AdkEvalError as error:
            fail(str(error))

    def cases(
        self, paths: tuple[str, ...], durations: dict[str, float] | None
    ) -> list[DiscoveredCase]:
        """The selected cases, in discovery order (this shard's only, with ``--shard``).

        With `durations` (`Selection.durations`) the shards are balanced by run time.
        """
        selected = discover(paths, self.keyword)
        if self.agent_a2a is not None:
            selected = [deployed_instead(found, self.agent_a2a) for found in selected]
        if self.shard is None:
            return selected
        from .._errors import AdkEvalError
        from .._suites._shards import parse_shard, shard_names

        try:
            part, parts = parse_shard(self.shard)
        except AdkEvalError as error:
            fail(str(error))
        names = [found.case.name for found in selected]
        chosen = shard_names(names, part, parts, durations)
        return [found for found in selected if found.case.name in chosen]


keyword_option = click.option(
    "-k", "keyword", metavar="EXPR", help="Only cases whose name matches (pytest-style)."
)

selection_options = grouped(
    "selection",
    Selection,
    keyword_option,
    click.option(
        "--shard", metavar="K/N", help="Run shard K of N (a deterministic 1/N of the cases)."
    ),
    click.option(
        "--durations",
        "durations_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="An earlier run's JSON report or results file: balance --shard by its run times "
        "and start the longest cases first.",
    ),
    click.option(
        "--agent-a2a",
        metavar="URL",
        help="Evaluate the agent served over A2A at URL instead of each case's own: the cases' "
        "users and metrics drive it, for real; metrics reading its tool calls or state are N/A.",
    ),
)


class _Repeat(click.ParamType):  # type: ignore[type-arg]
    """``--repeat``: a number of runs, or ``auto[:MAX]`` (adaptive repeats)."""

    name = "N|auto[:MAX]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int):
            return value
        text = str(value).strip()
        if text.isdigit() and int(text) >= 1:
            return int(text)
        if text == "auto" or (text.startswith("auto:") and text[5:].isdigit() and int(text[5:])):
            return Adaptive(max=int(text[5:])) if ":" in text else Adaptive()
        self.fail(f"{value!r} is neither a number of runs (>= 1) nor auto[:MAX] (auto:10)")


class _Rate(click.ParamType):  # type: ignore[type-arg]
    """``--faults``: a share of calls, 0 < RATE <= 1."""

    name = "RATE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float):
            return value
        try:
            rate = float(str(value).strip())
        except ValueError:
            rate = math.nan
        if not 0 < rate <= 1:
            self.fail(f"{value!r} is not a share of the calls above 0 and at most 1 (0.2 for 20%)")
        return rate


@dataclass(frozen=True)
class RunOptions:
    """How each case runs: repeats, concurrency, stopping, its time limit, the seed."""

    repeat: int | Adaptive = 1
    concurrency: int = DEFAULT_MAX_CONCURRENCY
    stop_on_first_failure: bool = False
    timeout: float | None = None
    seed: int | None = None
    sandbox: SandboxMode | None = None
    telemetry: TelemetryMode | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    explain_failures: bool = False
    rerun_budget: int = 3
    faults: float | None = None
    max_robustness_drop: float | None = None

    @property
    def budget(self) -> Budget | None:
        """``--max-cost`` and ``--max-tokens`` as the suite's budget (None: neither)."""
        from .._termination import Budget

        return Budget.of(self.max_tokens, self.max_cost)

    @property
    def runs(self) -> int:
        """Runs per case asked for (adaptive repeats: their maximum)."""
        return self.repeat if isinstance(self.repeat, int) else self.repeat.max


run_options = grouped(
    "options",
    RunOptions,
    click.option(
        "--max-cost",
        type=click.FloatRange(min=0, min_open=True),
        metavar="USD",
        help="Stop the suite once its model calls cost this much (litellm's prices); runs "
        "not finished are reported as not run.",
    ),
    click.option(
        "--explain-failures",
        is_flag=True,
        help="Re-run each failed run with one change at a time (the simulated user replaced, a "
        "new seed, the judges resampled) to find what flips it; costs re-runs.",
    ),
    click.option(
        "--rerun-budget",
        type=click.IntRange(min=1),
        default=3,
        show_default=True,
        metavar="N",
        help="With --explain-failures: the most re-runs per failed run.",
    ),
    click.option(
        "--max-tokens",
        type=click.IntRange(min=1),
        metavar="N",
        help="Stop the suite once its model calls used this many tokens.",
    ),
    click.option(
        "--repeat",
        type=_Repeat(),
        default="1",
        show_default=True,
        help="Runs per case, or auto[:MAX]: more runs only for cases whose verdict is still "
        "uncertain (their 95% interval does not yet clear a 50% pass rate), at most MAX (10).",
    ),
    click.option(
        "--concurrency",
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_CONCURRENCY,
        show_default=True,
        help="Runs in flight at once (per worker process or Ray task).",
    ),
    click.option(
        "-x", "--stop-on-first-failure", is_flag=True, help="Cancel the rest at the first failure."
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        metavar="SECONDS",
        help="Cap every run's wall time (a case's own max_duration applies when it is shorter).",
    ),
    click.option(
        "--seed",
        type=click.IntRange(min=0),
        help="The seed of injected tool faults (ToolMock.with_faults): the same seed injects "
        "the same faults at the same calls (default: a new one, printed).",
    ),
    click.option(
        "--sandbox",
        type=click.Choice(["warn", "strict", "off"]),
        help="For every case: list what its own code does outside its mocks and model calls "
        "(processes, outside connections and name lookups, file writes) in the results "
        "('warn'), refuse the first and end the run ('strict'), or do not watch ('off'). "
        "Default: each case's own (EvalCase.sandbox, 'warn' unless set).",
    ),
    click.option(
        "--faults",
        type=_Rate(),
        metavar="RATE",
        help="Run the cases again with this share of the calls of every mocked or simulated "
        "tool failing (seeded by --seed; a mock's own with_faults kept, real tools never "
        "faulted), and report each case's and the suite's pass rate without and with faults "
        "and the drop, with 95% intervals. Without --repeat, 5 runs a case each way.",
    ),
    click.option(
        "--fail-on-robustness-drop",
        "max_robustness_drop",
        type=click.FloatRange(min=0, max=100),
        metavar="POINTS",
        help="With --faults: fail when the suite's pass rate is more than POINTS percentage "
        "points lower with faults than without.",
    ),
    click.option(
        "--telemetry",
        type=click.Choice(["off", "keep"]),
        help="For every case: keep the runs' spans, logs and litellm callbacks from the "
        "exporters the agent's code installed ('off'), or send them there, tagged ('keep'). "
        "Default: each case's own (EvalCase.telemetry, 'off' unless set).",
    ),
)


class _WorkersType(click.ParamType):  # type: ignore[type-arg]
    """``--workers``: a count >= 1, or ``auto`` (one per core this process may use)."""

    name = "workers"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | Literal["auto"]:
        if isinstance(value, int):
            return value
        if str(value).strip().lower() == "auto":
            return "auto"
        try:
            count = int(value)
        except ValueError:
            count = 0
        if count < 1:
            self.fail(f"{value!r} is not a count >= 1 or 'auto'", param, ctx)
        return count


@dataclass(frozen=True)
class Placement:
    """Where the runs go: this process, worker processes, or a Ray cluster."""

    workers: int | Literal["auto"] = 1
    executor: str = "local"
    address: str | None = None
    ray_working_dir: str | None = None

    def choose(self, runs: int, default_model: str | None) -> Executor:
        """The executor these options ask for, for a suite of `runs` runs.

        Mistakes (``--workers`` with Ray, ``--address`` alone, ``--agent-a2a`` with workers) fail.
        """
        from .._suites._local import InProcess

        if self.executor == "ray" and self.workers != 1:
            fail("--workers is for --executor local; Ray decides its own workers")
        in_process = (self.executor, self.workers) == ("local", 1)
        if _agent_a2a() and not in_process:  # a worker imports each case again, its own agent
            fail("--agent-a2a runs the cases in this process: leave out --workers and --executor")
        if self.address is not None and self.executor != "ray":
            fail("--address is for --executor ray")
        if self.executor == "ray":
            from .._suites._ray._executor import Ray  # only when chosen: it ships modules

            if self.ray_working_dir == "none":  # already importable there
                return Ray(address=self.address, ship_modules=False, default_model=default_model)
            folder = Path(self.ray_working_dir) if self.ray_working_dir else None
            return Ray(address=self.address, working_dir=folder, default_model=default_model)
        workers = self.workers if self.workers == "auto" else min(self.workers, runs)
        if workers != "auto" and workers <= 1:
            return InProcess()
        from .._suites._workers._executor import Workers  # only when chosen: multiprocessing

        chosen = Workers(workers, default_model=default_model)
        return InProcess() if workers == "auto" and (chosen.processes < 2 or runs < 2) else chosen


def _agent_a2a() -> str | None:
    """``--agent-a2a`` of the command running (None: none, or no command)."""
    context = click.get_current_context(silent=True)
    return context.params.get("agent_a2a") if context is not None else None


placement_options = grouped(
    "placement",
    Placement,
    click.option(
        "--workers",
        type=_WorkersType(),
        default="1",
        show_default=True,
        metavar="N|auto",
        help="Processes running cases, this one included, each --concurrency runs at once "
        "('auto': one per core, when the suite is long enough to gain).",
    ),
    click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Where runs go: this machine (with --workers), or a Ray cluster (pip install "
        "'adk-eval[ray]').",
    ),
    click.option(
        "--address",
        metavar="HOST:PORT",
        help="With --executor ray: the cluster's head (default: start a local Ray).",
    ),
    click.option(
        "--ray-working-dir",
        default=None,
        metavar="DIR|none",
        help="With --executor ray: ship DIR as Ray's working_dir instead of the project's "
        "modules the suite imported (the default; secrets, databases and .git are never "
        "shipped); 'none': ship nothing, the eval modules are already importable there.",
    ),
)
