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
from dataclasses import dataclass
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

__all__ = ["JUDGE_INSTRUCTION", "JudgeVerdict", "LlmJudge", "llm_judge", "parse_verdict"]

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
    """

    name: str
    prompt: str
    model: ModelSpec | None = None
    threshold: float = 0.5
    num_samples: int = 1
    aggregate: Literal["majority", "mean"] = "majority"
    include_state: bool = True
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
        return self._aggregate(replies)

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
    )
