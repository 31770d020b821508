"""Attribution over a labelled corpus of failures: the party a person would blame.

Each entry is a run that did not pass, written in the shapes real runs end in
(provider errors as LiteLLM, google-genai and httpx word them, tool and mock
errors, the harness's own errors, metric and `user_fidelity` verdicts), with the
party a careful reader blames. `test_the_corpus_agrees` holds the agreement at the
figure reached; each known miss is a strict xfail with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from adk_eval._result._attribution import Party, attribute
from adk_eval._result._status import EvalErrorInfo
from adk_eval._statistics import wilson
from adk_eval.metrics._fidelity import UserTurn, _result, deterministic_problems
from adk_eval.metrics._types import MetricResult


def test_digits_of_a_path_or_an_amount_are_not_an_http_status():
    for message in (
        "[Errno 2] No such file or directory: '/tmp/pytest-of-ci/pytest-500/test_a0/orders.json'",
        "refund of 500 EUR is over the agent's limit of 200 EUR",
    ):
        error = EvalErrorInfo("system", message, "ValueError")
        assert attribute("error", error, {}, modelled_user=False).party == "agent", message


@dataclass(frozen=True)
class Failed:
    """One run that did not pass, and the party a careful reader blames."""

    label: str
    party: Party
    error: tuple[str, str, str] | None = None  # phase, type, message
    failed: tuple[str, ...] = ()  # metrics that failed (besides user_fidelity)
    fidelity: MetricResult | None = None
    modelled_user: bool = True
    status: str = "error"
    limit: str | None = None  # a known miss of the rules (strict xfail)

    def attributed(self) -> Party:
        error = None
        if self.error:
            phase, kind, message = self.error
            error = EvalErrorInfo(phase=phase, type=kind, message=message)  # type: ignore[arg-type]
        metrics = {name: MetricResult(passed=False, evidence=["no"]) for name in self.failed}
        if self.fidelity is not None:
            metrics["user_fidelity"] = self.fidelity
        status = self.status if error else "failed"
        found = attribute(status, error, metrics, modelled_user=self.modelled_user)
        assert found is not None
        return found.party


def rule_flag(prompt: str, reply: str) -> MetricResult:
    return _result(deterministic_problems([UserTurn(1, prompt, reply)]), "checked by rule")


FAITHFUL = _result([], "checked by rule and judge")
JUDGED = _result(
    [{"turn": 3, "in_role": False, "problem": "invented_requirement", "quote": "a sea view"}],
    "checked by rule and judge",
)
CORPUS = [
    Failed(
        "litellm-429",
        "provider",
        (
            "system",
            "RateLimitError",
            (
                "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached "
                "for gpt-4o-mini on requests per min (RPM): Limit 500, Used 500."
            ),
        ),
    ),
    Failed(
        "litellm-anthropic-529",
        "provider",
        (
            "system",
            "InternalServerError",
            (
                "litellm.InternalServerError: AnthropicException - "
                '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
            ),
        ),
    ),
    Failed(
        "gemini-503",
        "provider",
        (
            "system",
            "ServerError",
            (
                "503 UNAVAILABLE. {'error': {'code': 503, 'message': 'The model is overloaded. "
                "Please try again later.', 'status': 'UNAVAILABLE'}}"
            ),
        ),
    ),
    Failed(
        "gemini-429",
        "provider",
        (
            "system",
            "ClientError",
            (
                "429 RESOURCE_EXHAUSTED. {'error': {'code': 429, 'message': 'You exceeded your "
                "current quota.', 'status': 'RESOURCE_EXHAUSTED'}}"
            ),
        ),
    ),
    Failed(
        "httpx-refused", "provider", ("system", "ConnectError", "[Errno 111] Connection refused")
    ),
    Failed(
        "httpx-hung-up",
        "provider",
        ("system", "RemoteProtocolError", "Server disconnected without sending a response."),
    ),
    Failed(
        "httpx-status",
        "provider",
        (
            "system",
            "HTTPStatusError",
            "Server error '502 Bad Gateway' for url 'http://127.0.0.1:8088/v1/chat/completions'",
        ),
    ),
    Failed(
        "adk-error-code-http",
        "provider",
        (
            "system",
            "EvalRunError",
            "agent `desk` ended with error `503`: HTTP 503 from the model endpoint",
        ),
    ),
    Failed(
        "not-json",
        "provider",
        ("system", "JSONDecodeError", "Expecting value: line 1 column 1 (char 0)"),
    ),
    Failed(
        "user-model-timeout",
        "provider",
        ("user_agent", "Timeout", "litellm.Timeout: APITimeoutError - Request timed out."),
    ),
    Failed(
        "judge-overloaded",
        "provider",
        ("metric", "ServerError", "metric `polite` raised ServerError: 503 UNAVAILABLE. {}"),
    ),
    Failed(
        "litellm-bad-key",
        "setup",
        (
            "system",
            "AuthenticationError",
            (
                "litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect "
                "API key provided: sk-****."
            ),
        ),
    ),
    Failed(
        "litellm-no-model",
        "setup",
        (
            "system",
            "NotFoundError",
            (
                "litellm.NotFoundError: OpenAIException - The model `gpt-9` does not exist or "
                "you do not have access to it."
            ),
        ),
    ),
    Failed(
        "gemini-bad-key",
        "setup",
        (
            "system",
            "ClientError",
            (
                "400 INVALID_ARGUMENT. {'error': {'code': 400, 'message': 'API key not valid. "
                "Please pass a valid API key.'}}"
            ),
        ),
    ),
    Failed(
        "gemini-no-model",
        "setup",
        (
            "system",
            "ClientError",
            (
                "404 NOT_FOUND. {'error': {'code': 404, 'message': 'models/gemini-0 is not found "
                "for API version v1beta.'}}"
            ),
        ),
    ),
    Failed(
        "gemini-denied",
        "setup",
        (
            "system",
            "ClientError",
            (
                "403 PERMISSION_DENIED. {'error': {'code': 403, 'message': 'The caller does not "
                "have permission'}}"
            ),
        ),
    ),
    Failed(
        "unmocked",
        "setup",
        (
            "system",
            "EvalToolError",
            "Tool `refund` was called during eval but no mock was provided.",
        ),
    ),
    Failed(
        "metric-bug", "setup", ("metric", "KeyError", "metric `booked` raised KeyError: 'booked'")
    ),
    Failed(
        "no-user-agent",
        "setup",
        (
            "user_agent",
            "EvalUserAgentError",
            "Tool `approve` yielded but no user agent was provided.",
        ),
    ),
    Failed(
        "user-script-out",
        "setup",
        ("user_agent", "ScriptExhaustedError", "no line left for turn 3"),
    ),
    Failed(
        "agent-tool-date",
        "agent",
        ("system", "ValueError", "time data '31/02/2025' does not match format '%Y-%m-%d'"),
    ),
    Failed(
        "agent-tool-amount",
        "agent",
        ("system", "ValueError", "transfer of 503 USD exceeds the limit of 500 USD"),
    ),
    Failed(
        "agent-tool-order-id", "agent", ("system", "LookupError", "order 429-5002 has no line 3")
    ),
    Failed(
        "agent-room-quota",
        "agent",
        ("system", "ValueError", "the room quota for Friday is used up"),
    ),
    Failed(
        "agent-schema",
        "agent",
        (
            "system",
            "ValidationError",
            "1 validation error for Booking\nroom\n  Input should be a valid integer",
        ),
    ),
    Failed(
        "agent-max-tokens",
        "agent",
        ("system", "EvalRunError", "agent `desk` ended with error `MAX_TOKENS`: (no message)"),
    ),
    Failed("faithful-user", "agent", failed=("booked",), fidelity=FAITHFUL),
    Failed("scripted-user", "agent", failed=("booked",), modelled_user=False),
    Failed(
        "user-echoes",
        "simulated_user",
        failed=("booked",),
        fidelity=rule_flag("Which day would you like?", "Which day would you like?"),
    ),
    Failed(
        "user-quits",
        "simulated_user",
        failed=("booked",),
        fidelity=rule_flag("What can I do for you?", "</finished>"),
    ),
    Failed("user-invents", "simulated_user", failed=("booked",), fidelity=JUDGED),
    Failed(
        "user-state",
        "simulated_user",
        ("user_agent", "TypeError", 'can only concatenate list (not "dict") to list'),
    ),
    Failed("unchecked-user", "unknown", failed=("booked",)),
    Failed(
        "worker-killed",
        "unknown",
        ("system", "WorkerDied", "the worker process running this case died (killed by SIGKILL)"),
    ),
    Failed(
        "mock-bug",
        "setup",
        ("system", "KeyError", "'order_id'"),
        limit=(
            "a mock's own error is recorded as the agent's: the run keeps only its type and message"
        ),
    ),
    Failed(
        "tool-file",
        "setup",
        (
            "system",
            "FileNotFoundError",
            "[Errno 2] No such file or directory: 'fixtures/orders.json'",
        ),
        limit="a real tool's missing data file reads as the agent's error",
    ),
    Failed(
        "malformed-call",
        "agent",
        (
            "system",
            "EvalRunError",
            (
                "agent `desk` ended with error `MALFORMED_FUNCTION_CALL`: Malformed function "
                "call: book("
            ),
        ),
        limit=(
            "ADK's MALFORMED_FUNCTION_CALL is the agent's model, but 'malformed' reads as a "
            "provider's reply"
        ),
    ),
]


@pytest.mark.parametrize(
    "failed",
    [
        pytest.param(
            f,
            id=f.label,
            marks=[pytest.mark.xfail(reason=f.limit, strict=True)] if f.limit else [],
        )
        for f in CORPUS
    ],
)
def test_a_corpus_failure(failed: Failed):
    assert failed.attributed() == failed.party


def test_a_rate_limit_that_names_the_api_key_is_the_providers():
    message = (
        "429 RESOURCE_EXHAUSTED. {'error': {'code': 429, 'message': \"Quota exceeded for quota "
        "metric 'Generate Content API requests per minute' for consumer 'api_key:AIza-test'.\"}}"
    )
    error = EvalErrorInfo(phase="system", type="ClientError", message=message)
    found = attribute("error", error, {}, modelled_user=False)
    assert found is not None
    assert found.party == "provider"


def test_the_corpus_agrees():
    agreed = sum(f.attributed() == f.party for f in CORPUS)
    interval = wilson(agreed, len(CORPUS))
    assert (agreed, len(CORPUS)) == (34, 37)  # the three known misses above
    assert interval.low >= 0.78
