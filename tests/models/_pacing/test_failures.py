"""What a failed model call says: the errors real clients raise, read as the pacing reads them."""

from __future__ import annotations

import email.utils
import time

import httpx
import litellm
import pytest
from google.adk.models.google_llm import _ResourceExhaustedError
from google.genai import errors

from adk_eval.models._pacing._failures import classify

GEMINI_429 = {
    "error": {
        "code": 429,
        "message": "You exceeded your current quota. Please retry in 7.5s.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "8s"},
        ],
    }
}


def litellm_429(headers: dict[str, str]) -> Exception:
    response = httpx.Response(429, headers=headers, request=httpx.Request("POST", "http://x"))
    return litellm.RateLimitError("rate limited", "openai", "fake", response=response)


def test_litellm_rate_limit_with_retry_after_seconds():
    failure = classify(litellm_429({"retry-after": "7"}))
    assert (failure.kind, failure.retry_after, failure.status) == ("rate_limit", 7.0, 429)


def test_openai_retry_after_ms_wins_over_seconds():
    failure = classify(litellm_429({"retry-after-ms": "1500", "retry-after": "7"}))
    assert failure.retry_after == 1.5


def test_retry_after_as_an_http_date():
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    failure = classify(litellm_429({"retry-after": when}))
    assert failure.retry_after is not None
    assert 25 <= failure.retry_after <= 31


def test_gemini_resource_exhausted_reads_retry_info_through_adks_wrapping():
    error = _ResourceExhaustedError(errors.ClientError(429, GEMINI_429))  # what ADK's Gemini raises
    failure = classify(error)
    assert (failure.kind, failure.retry_after, failure.status) == ("rate_limit", 8.0, 429)


def test_a_message_that_says_when_to_retry():
    failure = classify(RuntimeError("429 Too Many Requests. Please retry in 250ms"))
    assert (failure.kind, failure.retry_after) == ("rate_limit", 0.25)


@pytest.mark.parametrize(
    "error",
    [
        errors.ServerError(503, {"error": {"code": 503, "status": "UNAVAILABLE"}}),
        litellm.InternalServerError("boom", "openai", "fake"),
        litellm.ServiceUnavailableError("down", "openai", "fake"),
        httpx.ReadTimeout("timed out"),
        TimeoutError(),
    ],
    ids=lambda error: type(error).__name__,
)
def test_server_errors_and_timeouts(error):
    assert classify(error).kind == "server"


@pytest.mark.parametrize(
    "error",
    [
        errors.ClientError(400, {"error": {"code": 400, "message": "bad request"}}),
        litellm.BadRequestError("bad", "fake", "openai"),
        ValueError("the model's own mistake"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_the_calls_own_errors_are_neither(error):
    assert classify(error).kind == "other"


def test_a_cause_is_read_when_the_error_wraps_it():
    try:
        try:
            raise litellm_429({"retry-after": "3"})
        except Exception as inner:
            raise RuntimeError("the client gave up") from inner
    except RuntimeError as outer:
        failure = classify(outer)
    assert (failure.kind, failure.retry_after) == ("rate_limit", 3.0)


@pytest.mark.parametrize(
    "headers",
    [
        {"retry-after": "-30"},
        {"retry-after": "nan"},
        {"retry-after": "inf"},
        {"retry-after-ms": "-5"},
    ],
)
def test_a_time_one_cannot_wait_counts_as_none_said(headers):
    failure = classify(litellm_429(headers))
    assert (failure.kind, failure.retry_after) == ("rate_limit", None)


@pytest.mark.parametrize(
    "error",
    [
        litellm_429({"retry-after": "0"}),
        litellm_429({"retry-after-ms": "0"}),
        RuntimeError("429 Too Many Requests. Please retry in 0ms"),
    ],
    ids=["retry-after", "retry-after-ms", "message"],
)
def test_a_zero_wait_is_read_as_zero_the_pacer_floors_it(error):
    assert classify(error).retry_after == 0.0


@pytest.mark.parametrize("delay", ["1.5.3s", "-2s", ".s"])
def test_a_malformed_retry_delay_is_no_time_not_a_crash(delay):
    body = {"error": {**GEMINI_429["error"], "message": "You exceeded your current quota."}}
    body["error"]["details"] = [{"@type": "google.rpc.RetryInfo", "retryDelay": delay}]
    assert classify(errors.ClientError(429, body)).retry_after is None


def test_a_billing_429_is_spent_not_a_rate_limit():
    body = {
        "error": {
            "message": "You exceeded your current quota, please check your plan and billing.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    }
    response = httpx.Response(429, json=body, request=httpx.Request("POST", "http://x"))
    error = litellm.RateLimitError(str(body), "openai", "fake", response=response)
    assert classify(error).kind == "spent"


def test_a_gemini_quota_of_zero_is_spent():
    body = {"error": {**GEMINI_429["error"]}}
    violation = {"quotaMetric": "generate_content_free_tier_requests", "quotaValue": "0"}
    body["error"]["details"] = [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "20s"},
    ]
    assert classify(errors.ClientError(429, body)).kind == "spent"
    assert classify(errors.ClientError(429, GEMINI_429)).kind == "rate_limit"
