"""The adk-eval pytest plugin (registered by entry point; opt-in; light to import).

Nothing happens unless a test asks for the ``adk_eval`` fixture::

    import pytest
    from my_agent.evals import CASES

    @pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
    async def test_eval(adk_eval, case):
        await adk_eval.check(case)

`check` runs the case (``--adk-eval-repeat`` times, concurrently up to
``--adk-eval-concurrency``), records the outcome in the test's properties (so it
lands in pytest's own ``--junitxml`` report), and fails the test with a readable
explanation: status, failed metrics with their evidence, the termination reason
and the last turns. Per test, ``@pytest.mark.adk_eval(repeat=5, min_pass_rate=0.8)``
overrides the options.

``--adk-eval-record-models DIR`` records every model call of the fixture's runs
into cassettes in DIR; ``--adk-eval-replay-models DIR`` answers them from there,
offline and without keys (``--adk-eval-on-miss call`` asks the model when a
request differs from its recording, and updates the cassette). The plugin reads
them once, over the project's settings, into the `ModelCalls` the fixture
passes to each suite it runs (`EvalChecker.model_calls`). The test modules are
imported under them too, as ``adk-eval run`` imports eval files: a module that
resolves a keyed model at import (``resolve_model("gemini-2.5-flash")``) asks
for no key while a cassette replays.

Without the plugin, the canonical test is ``result = await run_eval(case)``
followed by ``assert result.passed, result.explain()``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ._case import EvalCase
    from ._suites._results import EvalSuiteResult
    from .models._gateway._settings import ModelCalls

__all__ = ["EvalChecker"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Adds the ``--adk-eval-*`` options."""
    group = parser.getgroup("adk-eval", "adk-eval: evaluating ADK agents by simulation")
    group.addoption(
        "--adk-eval-repeat",
        type=int,
        default=1,
        metavar="N",
        help="run every case checked by the adk_eval fixture N times (default 1)",
    )
    group.addoption(
        "--adk-eval-concurrency",
        type=int,
        default=None,
        metavar="N",
        help="runs of one case in flight at once (default 8)",
    )
    group.addoption(
        "--adk-eval-min-pass-rate",
        type=float,
        default=1.0,
        metavar="RATE",
        help="pass rate (0-1) a repeated case needs (default 1.0: every run passes)",
    )
    group.addoption(
        "--adk-eval-record-models",
        default=None,
        metavar="DIR",
        help="record every model call of the runs into cassettes in DIR (by case and attempt)",
    )
    group.addoption(
        "--adk-eval-replay-models",
        default=None,
        metavar="DIR",
        help="answer every model call from the cassettes in DIR: offline, no key; a request "
        "that differs from its recording ends that run with one line saying where",
    )
    group.addoption(
        "--adk-eval-on-miss",
        choices=("error", "call"),
        default=None,
        help="with --adk-eval-replay-models, a request that differs from the recording: end "
        "the run (error, the default) or call the model and update the cassette (call)",
    )


_MODEL_CALLS = pytest.StashKey["ModelCalls | None"]()


def pytest_configure(config: pytest.Config) -> None:
    """Registers the ``adk_eval`` marker; reads the cassette options (see the module doc)."""
    config.addinivalue_line(
        "markers",
        "adk_eval(repeat=None, min_pass_rate=None, concurrency=None): settings for the "
        "adk_eval fixture in this test",
    )
    config.stash[_MODEL_CALLS] = _model_calls(config)


def _model_calls(config: pytest.Config) -> ModelCalls | None:
    """The project's `ModelCalls` with the cassette options over them (None: none given)."""
    record = config.getoption("adk_eval_record_models", None)
    replay = config.getoption("adk_eval_replay_models", None)
    on_miss = config.getoption("adk_eval_on_miss", None)
    if record is None and replay is None and on_miss is None:
        return None
    from ._errors import EvalSetupError
    from .models._gateway._settings import project_settings

    if record is not None and replay is not None:
        raise pytest.UsageError(
            "--adk-eval-record-models and --adk-eval-replay-models: record or replay, not both"
        )
    here = config.invocation_params.dir
    changes: dict[str, Any] = {"given_by": "pytest"}  # a miss names these options
    if on_miss is not None:
        changes["on_miss"] = on_miss
    if record is not None:
        changes["record"] = here / record
    if replay is not None:
        if not (here / replay).is_dir():
            raise pytest.UsageError(
                f"--adk-eval-replay-models {replay}: no such folder; record one with "
                "--adk-eval-record-models first"
            )
        changes["replay"] = here / replay
    try:
        settings = project_settings().replace(**changes)
    except EvalSetupError as error:
        raise pytest.UsageError(str(error)) from None
    if on_miss is not None and settings.replay is None:
        raise pytest.UsageError(
            "--adk-eval-on-miss applies to --adk-eval-replay-models: give the folder to replay"
        )
    return settings


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """Collects (imports the test modules) under the cassette options, when given."""
    settings = session.config.stash.get(_MODEL_CALLS, None)
    if settings is None:
        return (yield)
    from .models._gateway._gate import outside_runs

    with outside_runs(settings):  # a cassette that replays needs no key, here either
        return (yield)


class EvalChecker:
    """What the ``adk_eval`` fixture gives a test.

    Attributes:
        model_calls: The settings of its runs' model calls: the cassette options
            over the project's (None: the project's alone).
    """

    def __init__(
        self,
        node: pytest.Item,
        repeat: int,
        concurrency: int | None,
        min_pass_rate: float,
        model_calls: ModelCalls | None = None,
    ):
        self._node = node
        self.repeat = repeat
        self.concurrency = concurrency
        self.min_pass_rate = min_pass_rate
        self.model_calls = model_calls

    async def run(self, case: EvalCase) -> EvalSuiteResult:
        """Runs `case` `repeat` times and records the outcome in the test's properties."""
        from ._suites._run import run_eval_suite

        suite = await run_eval_suite(
            [case],
            max_concurrency=self.concurrency,
            repeat=self.repeat,
            model_calls=self.model_calls,
        )
        self._record(suite)
        return suite

    async def check(self, case: EvalCase) -> EvalSuiteResult:
        """Runs `case` and fails the test, with an explanation, unless it passes."""
        suite = await self.run(case)
        if not self._ok(suite):
            pytest.fail(self._explain(case, suite), pytrace=False)
        if any(result.outcome == "xfailed" for result in suite.results):  # as pytest says it
            pytest.xfail(f"EvalCase `{case.name}` is expected to fail: {case.xfail}")
        return suite

    def _ok(self, suite: EvalSuiteResult) -> bool:
        if self.min_pass_rate >= 1.0 or self.repeat == 1:
            return suite.ok
        return suite.meets(self.min_pass_rate)  # an error fails it whatever the rate

    def _explain(self, case: EvalCase, suite: EvalSuiteResult) -> str:
        if self.repeat == 1 and suite.results:
            return suite.results[0].explain()
        stats = suite.cases[0]
        head = (
            f"EvalCase `{case.name}`: {stats.passes}/{len(stats.runs)} runs passed "
            f"(pass rate {stats.pass_rate:.0%}, required {self.min_pass_rate:.0%}); {stats.label}"
        )
        failing = [result.explain() for result in suite.results if not result.ok]
        return "\n\n".join([head, *failing])

    def _record(self, suite: EvalSuiteResult) -> None:
        # The case's own rate, every run counted: an xfail case whose runs all failed
        # as expected passed none of them (the suite's rate would leave them out).
        passes = sum(result.passed for result in suite.results)
        properties: list[tuple[str, Any]] = [
            ("adk_eval.pass_rate", f"{passes / len(suite.results):.3f}" if suite.results else ""),
            ("adk_eval.runs", len(suite.results)),
        ]
        for result in suite.results:
            prefix = "adk_eval" if self.repeat == 1 else f"adk_eval[{result.attempt}]"
            properties += [
                (f"{prefix}.status", result.status),
                (f"{prefix}.outcome", result.outcome),
                (f"{prefix}.turns", result.turns),
                (f"{prefix}.termination_reason", result.termination_reason or ""),
                (f"{prefix}.tokens", result.token_usage.total_tokens),
            ]
            for name, metric in result.metrics.items():
                score = "" if metric.score is None else f" {metric.score:g}"
                properties.append((f"{prefix}.metric.{name}", metric.verdict + score))
        self._node.user_properties.extend(properties)


@pytest.fixture
def adk_eval(request: pytest.FixtureRequest) -> EvalChecker:
    """Runs eval cases inside a test and fails it with a readable explanation."""
    marker = request.node.get_closest_marker("adk_eval")
    settings = dict(marker.kwargs) if marker else {}
    config = request.config
    repeat = settings.get("repeat") or config.getoption("adk_eval_repeat")
    min_pass_rate = settings.get("min_pass_rate")
    if min_pass_rate is None:
        min_pass_rate = config.getoption("adk_eval_min_pass_rate")
    concurrency = settings.get("concurrency") or config.getoption("adk_eval_concurrency")
    if repeat < 1:
        raise pytest.UsageError(f"--adk-eval-repeat must be >= 1, got {repeat}")
    if not 0 <= min_pass_rate <= 1:
        raise pytest.UsageError(
            f"--adk-eval-min-pass-rate must be between 0 and 1, got {min_pass_rate}"
        )
    model_calls = config.stash.get(_MODEL_CALLS, None)
    return EvalChecker(request.node, repeat, concurrency, min_pass_rate, model_calls)
