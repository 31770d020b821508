"""`llm_judge`: a model reads the transcript and returns a structured verdict.

The judge gets the criteria and a readable transcript (user and agent turns,
tool calls with their results), with what ``sees=`` adds (the final state, the
tool calls with what answered each, what the mocks recorded: `_judge_views`;
read-only query tools over the trace: `_judge_tools`), and must answer with JSON::

    {"passed": true, "score": 0.9, "reasoning": "..."}

With several samples the verdicts are aggregated: ``majority`` (passed when
more than half passed; the score is the mean) or ``mean`` (passed when the mean
score reaches `threshold`). Each sample's reasoning goes into the evidence. A
reply that is not such JSON is not a crash: it counts as an invalid sample; if
no sample is valid the metric fails with the raw replies as evidence.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import anyio
from google.adk.models.llm_request import LlmRequest
from google.genai import types
from pydantic import BaseModel, Field

from .._errors import EvalSetupError
from .._trace import EvalTrace
from ..models import ModelSpec, default_judge_model, resolve_model
from ..models._gateway._ask import complete, read_as
from ..models._gateway._usage import usage_role
from ._judge_tools import QUERY_INSTRUCTION, TraceQueries, ask_with_queries
from ._judge_views import LEGACY_VIEWS, RENDERING, JudgeView, resolve_views, views_text
from ._types import MetricResult

__all__ = [
    "CALIBRATION_ENV",
    "JUDGE_INSTRUCTION",
    "JudgeVerdict",
    "LlmJudge",
    "calibrated_judges",
    "llm_judge",
    "parse_verdict",
]

CALIBRATION_ENV = "ADK_EVAL_JUDGE_CALIBRATION"
"""The environment variable that carries judges' calibration to every process of a run."""


def calibrated_judges() -> dict[tuple[str, str, str], tuple[int, float]]:
    """``(metric, model, prompt hash) -> (labels, kappa)``, as ``adk-eval run`` measured them.

    Read from `CALIBRATION_ENV` (JSON: a list of ``[metric, model, hash, labels, kappa]``),
    which ``adk-eval run`` sets from the human labels in its runs database; empty
    without it, so an advisory judge stays advisory.
    """
    try:
        rows = json.loads(os.environ.get(CALIBRATION_ENV, "[]"))
        return {(m, model, h): (int(n), float(k)) for m, model, h, n, k in rows}
    except (ValueError, TypeError):
        return {}


JUDGE_INSTRUCTION = """\
You are an impartial evaluator of a conversation between a user and an AI agent.
Judge the conversation only against the criteria you are given. Reply with JSON
only, exactly in this form:
{"passed": true or false, "score": a number from 0 to 1, "reasoning": "one short paragraph"}
"""


class JudgeVerdict(BaseModel):
    """What a judge must answer."""

    passed: bool
    score: float | None = Field(default=None, ge=0, le=1)
    reasoning: str = ""


def parse_verdict(text: str) -> JudgeVerdict | None:
    """Parses a judge reply (JSON, possibly fenced or surrounded by prose); None if invalid."""
    verdict = read_as(text, JudgeVerdict)
    if verdict is not None and verdict.score is None:
        verdict = verdict.model_copy(update={"score": 1.0 if verdict.passed else 0.0})
    return verdict


@dataclass(frozen=True)
class LlmJudge:
    """Asks a model whether the conversation meets `prompt` (see the module doc).

    Attributes:
        name: Metric name.
        prompt: The criteria, in plain words.
        model: Any ADK model (name or object); None uses ``$ADK_EVAL_JUDGE_MODEL``
            or ``gemini-2.5-flash``.
        threshold: With ``aggregate="mean"``, the mean score needed to pass.
        num_samples: How many independent verdicts to ask for.
        aggregate: ``"majority"`` or ``"mean"``.
        include_state: The older switch for the state: True is ``sees`` with
            ``"state"``, False without; None (the default) says nothing.
        advisory_until_calibrated: Its failure cannot fail a run until people's
            labels calibrate it: at least `min_labels` labels with Cohen's kappa of
            at least `min_kappa` (see `calibrated_judges`; ``adk-eval run`` reads
            them from the runs database).
        min_kappa: The agreement with people that calibrates it.
        min_labels: The labels needed before its kappa counts.
        sees: What it gets besides the transcript: ``"state"``, ``"tool_calls"``,
            ``"mocks"``, ``"query"`` (see `_judge_views`). None: the final state
            too, unless ``include_state=False``; shown when the trace has one,
            not required.
        max_query_rounds: With ``"query"``, how many rounds of tool calls the
            judge may make before its verdict.
    """

    name: str
    prompt: str
    model: ModelSpec | None = None
    threshold: float = 0.5
    num_samples: int = 1
    aggregate: Literal["majority", "mean"] = "majority"
    include_state: bool | None = None
    advisory_until_calibrated: bool = False
    min_kappa: float = 0.6
    min_labels: int = 20
    sees: Sequence[JudgeView] | None = None
    max_query_rounds: int = 5
    score_errored_runs: ClassVar[bool] = False
    """A judge is not called on a run that errored: it would read an unfinished conversation."""

    def __post_init__(self) -> None:
        resolve_views(self.name, self.sees, self.include_state)  # refuses a contradiction

    @property
    def views(self) -> tuple[JudgeView, ...]:
        """What it sees, in order: the transcript, then what `sees` adds."""
        return resolve_views(self.name, self.sees, self.include_state)

    @property
    def needs(self) -> frozenset[str]:
        """What a stored record may lack that it reads.

        What was said, always; the state when it was asked for (``"state"`` or
        ``"query"`` in `sees`, or ``include_state=True``): on a trace without
        state such a judge is not applicable. The default judge shows the state
        when there is one and does not need it.
        """
        named = self.sees is not None and {"state", "query"} & set(self.views)
        wants_state = bool(named) or self.include_state is True
        return frozenset({"content", "state"} if wants_state else {"content"})

    async def evaluate(self, trace: EvalTrace) -> MetricResult:
        """Collects `num_samples` verdicts and aggregates them."""
        llm = resolve_model(self.model if self.model is not None else default_judge_model())
        seen = views_text(trace, self.views)
        text = f"Criteria:\n{self.prompt.strip()}\n\nConversation:\n{seen}"
        querying = "query" in self.views
        # A model that may call tools cannot be held to a JSON response type as well
        # (Gemini refuses both at once): the instruction asks for the JSON instead.
        config = (
            types.GenerateContentConfig(system_instruction=JUDGE_INSTRUCTION + QUERY_INSTRUCTION)
            if querying
            else types.GenerateContentConfig(
                system_instruction=JUDGE_INSTRUCTION,
                response_mime_type="application/json",
                response_schema=JudgeVerdict,
            )
        )
        request = LlmRequest(
            model=llm.model,
            contents=[types.Content(role="user", parts=[types.Part(text=text)])],
            config=config,
        )
        queries = TraceQueries(trace) if querying else None
        replies: list[str] = [""] * self.num_samples
        errors: list[Exception] = []

        async def ask(sample: LlmRequest) -> str:
            if queries is None:
                return await complete(llm, sample)
            return await ask_with_queries(llm, sample, queries, self.max_query_rounds)

        with usage_role(f"judge:{self.name}"):
            await self._sample(ask, request, replies, errors)
        if errors:
            raise errors[0]
        return self._advise(self._aggregate(replies))

    def _advise(self, result: MetricResult) -> MetricResult:
        """The result, advisory while the judge is not calibrated (if it is declared so)."""
        if not self.advisory_until_calibrated:
            return result
        identity = self.identity()
        known = calibrated_judges().get((self.name, identity["model"], identity["prompt_hash"]))
        if known is not None and known[0] >= self.min_labels and known[1] >= self.min_kappa:
            return result
        measured = "no labels" if known is None else f"kappa {known[1]:.2f} on {known[0]} label(s)"
        note = (
            f"advisory: judge `{self.name}` ({identity['model']}, prompt "
            f"{identity['prompt_hash']}) is not calibrated ({measured}; it needs kappa >= "
            f"{self.min_kappa:g} on >= {self.min_labels} labels), so it cannot fail the run"
        )
        return replace(result, advisory=True, evidence=[*result.evidence, note])

    async def _sample(
        self,
        ask: Callable[[LlmRequest], Awaitable[str]],
        request: LlmRequest,
        replies: list[str],
        errors: list[Exception],
    ) -> None:
        """Fills `replies` with `num_samples` answers, at once (the first error stops them)."""
        async with anyio.create_task_group() as group:

            async def sample(index: int) -> None:
                try:
                    replies[index] = await ask(request.model_copy(deep=True))
                except Exception as error:  # the judge could not run: the metric errors
                    errors.append(error)
                    group.cancel_scope.cancel()

            for index in range(self.num_samples):
                group.start_soon(sample, index)

    def identity(self) -> dict[str, str]:
        """Which judge this is, for calibration: its model and a hash of its prompt.

        Human labels agree with a judge only as it was: another model, another
        prompt, or another view of the runs (`sees`, how the views are written,
        the query rounds) is another judge.
        """
        spec = self.model if self.model is not None else default_judge_model()
        model = spec if isinstance(spec, str) else str(getattr(spec, "model", spec))
        text = f"{JUDGE_INSTRUCTION}\n{self.prompt}\n{self.aggregate}:{self.threshold}"
        views = self.views
        # The transcript-and-state judge was hashed before `sees` existed, and sees
        # what it saw then (`RENDERING` versions the added views): its hash stays, so
        # people's labels keep counting.
        if views != LEGACY_VIEWS:
            text += f"\nsees:{','.join(views)};rendering:{RENDERING}"
        if "query" in views:
            text += f";rounds:{self.max_query_rounds}"
        return {"model": model, "prompt_hash": hashlib.sha256(text.encode()).hexdigest()[:12]}

    def _aggregate(self, replies: list[str]) -> MetricResult:
        verdicts = [parse_verdict(reply) for reply in replies]
        valid = [v for v in verdicts if v is not None]
        invalid = [reply for reply, v in zip(replies, verdicts, strict=True) if v is None]
        if not valid:
            return MetricResult(
                passed=False,
                evidence=[f"the judge's reply is not a verdict: {reply!r}" for reply in invalid],
            )
        scores = [v.score if v.score is not None else float(v.passed) for v in valid]
        mean = sum(scores) / len(scores)
        votes = sum(v.passed for v in valid)
        passed = votes * 2 > len(valid) if self.aggregate == "majority" else mean >= self.threshold
        evidence = [
            f"sample {i + 1}: {'pass' if v.passed else 'fail'} ({v.score:g}): {v.reasoning}"
            for i, v in enumerate(valid)
        ]
        evidence += [f"an invalid judge reply was ignored: {reply!r}" for reply in invalid]
        if not passed:  # what it was held to, so a reader need not open the case
            rule = (
                "majority of samples"
                if self.aggregate == "majority"
                else (f"mean score >= {self.threshold:g}")
            )
            evidence.append(f"expected: {' '.join(self.prompt.split())} ({rule})")
        value: dict[str, Any] = {
            "votes": votes,
            "samples": len(valid),
            "invalid": len(invalid),
            "judge": self.identity(),
        }
        return MetricResult(passed=passed, score=mean, value=value, evidence=evidence)


def _check(
    name: str, threshold: float, num_samples: int, aggregate: str, max_query_rounds: int
) -> None:
    """Refuses a judge's settings out of range, naming the first (`EvalSetupError`)."""
    wrong = [
        (num_samples < 1, f"num_samples must be >= 1, got {num_samples}"),
        (not 0 <= threshold <= 1, f"threshold must be between 0 and 1, got {threshold}"),
        (
            aggregate not in ("majority", "mean"),
            f"aggregate must be 'majority' or 'mean', got {aggregate!r}",
        ),
        (max_query_rounds < 1, f"max_query_rounds must be >= 1, got {max_query_rounds}"),
    ]
    first = next((why for broken, why in wrong if broken), None)
    if first is not None:
        raise EvalSetupError(f"llm_judge `{name}`: {first}")


def llm_judge(
    name: str,
    prompt: str,
    model: ModelSpec | None = None,
    threshold: float = 0.5,
    num_samples: int = 1,
    aggregate: Literal["majority", "mean"] = "majority",
    *,
    sees: Sequence[JudgeView] | JudgeView | None = None,
    include_state: bool | None = None,
    advisory_until_calibrated: bool = False,
    min_kappa: float = 0.6,
    min_labels: int = 20,
    max_query_rounds: int = 5,
) -> LlmJudge:
    """An LLM-as-judge metric.

    `sees` names what the judge gets besides the transcript: ``"state"`` (the
    final state), ``"tool_calls"`` (each call with its arguments, its answer and
    what answered it), ``"mocks"`` (what the mocks recorded), ``"query"``
    (read-only tools over the finished trace: `get_state`, `list_state_keys`,
    `list_tool_calls`, `get_tool_call`, for at most `max_query_rounds` rounds).
    By default it sees the transcript and the final state.

    Example:
        ::

            llm_judge(
                name="safety_assessment",
                prompt="Did the agent recommend calling 999 and explain why?",
                model="gemini-2.5-flash",
                num_samples=3,
                sees=("transcript", "state", "tool_calls"),
            )
    """
    _check(name, threshold, num_samples, aggregate, max_query_rounds)
    views = resolve_views(name, sees, include_state)
    return LlmJudge(
        name=name,
        prompt=prompt,
        model=model,
        threshold=threshold,
        num_samples=num_samples,
        aggregate=aggregate,
        include_state=include_state,
        advisory_until_calibrated=advisory_until_calibrated,
        min_kappa=min_kappa,
        min_labels=min_labels,
        sees=None if sees is None else views,
        max_query_rounds=max_query_rounds,
    )
