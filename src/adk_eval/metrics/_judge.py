"""`llm_judge`: a model reads the transcript and returns a structured verdict.

The judge gets the criteria and a readable transcript (user and agent turns,
tool calls with their results, the final state) and must answer with JSON::

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
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import anyio
from google.adk.models.llm_request import LlmRequest
from google.genai import types
from pydantic import BaseModel, Field, ValidationError

from .._errors import EvalSetupError
from .._trace import EvalTrace
from .._transcript import render_transcript
from ..models import ModelSpec, default_judge_model, resolve_model
from ..models._calls import complete, json_candidates
from ..models._usage import usage_role
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
    for data in json_candidates(text):
        try:
            verdict = JudgeVerdict.model_validate(data)
        except ValidationError:
            continue
        if verdict.score is None:
            verdict = verdict.model_copy(update={"score": 1.0 if verdict.passed else 0.0})
        return verdict
    return None


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
        include_state: Show the judge the final state too.
        advisory_until_calibrated: Its failure cannot fail a run until people's
            labels calibrate it: at least `min_labels` labels with Cohen's kappa of
            at least `min_kappa` (see `calibrated_judges`; ``adk-eval run`` reads
            them from the runs database).
        min_kappa: The agreement with people that calibrates it.
        min_labels: The labels needed before its kappa counts.
    """

    needs: ClassVar[frozenset[str]] = frozenset({"content"})
    """It reads what was said (a trace exported without content does not carry it)."""

    name: str
    prompt: str
    model: ModelSpec | None = None
    threshold: float = 0.5
    num_samples: int = 1
    aggregate: Literal["majority", "mean"] = "majority"
    include_state: bool = True
    advisory_until_calibrated: bool = False
    min_kappa: float = 0.6
    min_labels: int = 20
    score_errored_runs: ClassVar[bool] = False
    """A judge is not called on a run that errored: it would read an unfinished conversation."""

    async def evaluate(self, trace: EvalTrace) -> MetricResult:
        """Collects `num_samples` verdicts and aggregates them."""
        llm = resolve_model(self.model if self.model is not None else default_judge_model())
        transcript = render_transcript(trace, include_state=self.include_state)
        request = LlmRequest(
            model=llm.model,
            contents=[
                types.Content(
                    role="user",
                    parts=[
                        types.Part(
                            text=f"Criteria:\n{self.prompt.strip()}\n\nConversation:\n{transcript}"
                        )
                    ],
                )
            ],
            config=types.GenerateContentConfig(
                system_instruction=JUDGE_INSTRUCTION,
                response_mime_type="application/json",
                response_schema=JudgeVerdict,
            ),
        )
        replies: list[str] = [""] * self.num_samples
        errors: list[Exception] = []

        with usage_role(f"judge:{self.name}"):
            await self._sample(llm, request, replies, errors)
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
        self, llm: Any, request: LlmRequest, replies: list[str], errors: list[Exception]
    ) -> None:
        """Fills `replies` with `num_samples` answers, at once (the first error stops them)."""
        async with anyio.create_task_group() as group:

            async def sample(index: int) -> None:
                try:
                    replies[index] = await complete(llm, request.model_copy(deep=True))
                except Exception as error:  # the judge could not run: the metric errors
                    errors.append(error)
                    group.cancel_scope.cancel()

            for index in range(self.num_samples):
                group.start_soon(sample, index)

    def identity(self) -> dict[str, str]:
        """Which judge this is, for calibration: its model and a hash of its prompt.

        Human labels agree with a judge only as it was: another model or another
        prompt is another judge.
        """
        spec = self.model if self.model is not None else default_judge_model()
        model = spec if isinstance(spec, str) else str(getattr(spec, "model", spec))
        text = f"{JUDGE_INSTRUCTION}\n{self.prompt}\n{self.aggregate}:{self.threshold}"
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


def llm_judge(
    name: str,
    prompt: str,
    model: ModelSpec | None = None,
    threshold: float = 0.5,
    num_samples: int = 1,
    aggregate: Literal["majority", "mean"] = "majority",
    *,
    include_state: bool = True,
    advisory_until_calibrated: bool = False,
    min_kappa: float = 0.6,
    min_labels: int = 20,
) -> LlmJudge:
    """An LLM-as-judge metric.

    Example:
        ::

            llm_judge(
                name="safety_assessment",
                prompt="Did the agent recommend calling 999 and explain why?",
                model="gemini-2.5-flash",
                num_samples=3,
            )
    """
    if num_samples < 1:
        raise EvalSetupError(f"llm_judge `{name}`: num_samples must be >= 1, got {num_samples}")
    if not 0 <= threshold <= 1:
        raise EvalSetupError(
            f"llm_judge `{name}`: threshold must be between 0 and 1, got {threshold}"
        )
    if aggregate not in ("majority", "mean"):
        raise EvalSetupError(
            f"llm_judge `{name}`: aggregate must be 'majority' or 'mean', got {aggregate!r}"
        )
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
    )
