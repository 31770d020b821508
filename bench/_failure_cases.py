"""The labelled failures of bench/labels/attribution.json, built by id (see `_failures`)."""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from pathlib import Path

from _failures import (
    Failure,
    anthropic_overloaded,
    by_judge,
    by_rule,
    caught,
    error,
    gemini_error,
    genai_without_key,
    httpx_error,
    judged,
    openai_error,
    output_schema_error,
    refused,
    verdicts,
)

from adk_eval._errors import (
    CassetteMissError,
    EvalRunError,
    EvalSandboxError,
    EvalSetupError,
    EvalToolError,
    EvalUserAgentError,
    ProviderWaitError,
    ScriptExhaustedError,
    ShadowDivergenceError,
    SimulatedToolError,
)
from adk_eval._result._status import EvalErrorInfo
from adk_eval.metrics._fidelity import _result

__all__ = ["BUILDERS"]

FAITHFUL = _result([], "checked by rule and judge")
RATE = (
    "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): "
    "Limit 30000, Used 29800, Requested 900. Please try again in 1.4s."
)
GEMINI_429 = "Resource has been exhausted (e.g. check quota)."
BUILDERS: dict[str, Callable[[], Failure]] = {
    "openai-429-tpm": lambda: error(
        "system", openai_error("RateLimitError", 429, RATE, "rate_limit_exceeded")
    ),
    "openai-401-key": lambda: error(
        "system",
        openai_error(
            "AuthenticationError",
            401,
            (
                "Incorrect API key provided: sk-proj-****abcd. You can find your API key at "
                "https://platform.openai.com/account/api-keys."
            ),
            "invalid_api_key",
        ),
    ),
    "openai-503-overloaded": lambda: error(
        "system",
        openai_error("InternalServerError", 503, "The server is overloaded or not ready yet."),
    ),
    "openai-500-server": lambda: error(
        "system",
        openai_error(
            "InternalServerError",
            500,
            "The server had an error while processing your request. Sorry about that!",
        ),
    ),
    "openai-502-gateway": lambda: error(
        "system", openai_error("InternalServerError", 502, "Bad gateway.")
    ),
    "openai-404-model": lambda: error(
        "system",
        openai_error(
            "NotFoundError",
            404,
            "The model `gpt-4o-mini-x` does not exist or you do not have access to it.",
            "model_not_found",
        ),
    ),
    "openai-connection": lambda: error("system", openai_error("APIConnectionError", None, "")),
    "openai-timeout": lambda: error("system", openai_error("APITimeoutError", None, "")),
    "openai-missing-key": lambda: error(
        "system",
        openai_error(
            "OpenAIError",
            None,
            (
                "The api_key client option must be set either by passing api_key to the client "
                "or by setting the OPENAI_API_KEY environment variable"
            ),
        ),
    ),
    "openai-context-window": lambda: error(
        "system",
        openai_error(
            "BadRequestError",
            400,
            (
                "This model's maximum context length is 128000 tokens. However, your messages "
                "resulted in 131072 tokens. Please reduce the length of the messages."
            ),
            "context_length_exceeded",
        ),
    ),
    "gemini-429": lambda: error("system", gemini_error(429, "RESOURCE_EXHAUSTED", GEMINI_429)),
    "gemini-400-key": lambda: error(
        "system",
        gemini_error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."),
    ),
    "gemini-500-internal": lambda: error(
        "system",
        gemini_error(
            500,
            "INTERNAL",
            (
                "An internal error has occurred. Please retry or report in "
                "https://developers.generativeai.google/guide/troubleshooting"
            ),
        ),
    ),
    "gemini-403-permission": lambda: error(
        "system",
        gemini_error(
            403,
            "PERMISSION_DENIED",
            (
                "Generative Language API has not been used in project 123456 before or it is "
                "disabled. Enable it by visiting the console then retry."
            ),
        ),
    ),
    "gemini-503-unavailable": lambda: error(
        "system",
        gemini_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
    ),
    "gemini-404-model": lambda: error(
        "system",
        gemini_error(
            404,
            "NOT_FOUND",
            (
                "models/gemini-9.0-pro is not found for API version v1beta, or is not supported "
                "for generateContent. Call ListModels to see the list of available models and "
                "their supported methods."
            ),
        ),
    ),
    "gemini-504-deadline": lambda: error(
        "system",
        gemini_error(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
    ),
    "genai-no-key": lambda: error("system", genai_without_key()),
    "httpx-connect-refused": lambda: error("system", refused()),
    "httpx-read-timeout": lambda: error("system", httpx_error(None)),
    "httpx-remote-protocol": lambda: error("system", httpx_error(b"")),
    "httpx-503-status": lambda: error(
        "system", httpx_error(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
    ),
    "json-reply": lambda: error(
        "system", caught(lambda: json.loads("<html><body>502 Bad Gateway</body></html>"))
    ),
    "provider-wait-budget": lambda: error(
        "system",
        ProviderWaitError(
            "model gemini/gemini-2.5-flash: refused 7 times over 58.2 s; the run waited 60.0 "
            "s for the provider's quota and gave up (the wait budget is 60 s: "
            "--max-provider-wait, or ModelCalls(max_wait=...)); its last answer: "
            "ClientError: 429 RESOURCE_EXHAUSTED."
        ),
    ),
    "provider-wait-spent": lambda: error(
        "system",
        ProviderWaitError(
            "model openai/gpt-4o: the provider's quota is spent and waiting will not clear "
            "it (a billing limit or a quota of 0): check the account's plan and billing; it "
            "said RateLimitError: litellm.RateLimitError: RateLimitError: OpenAIException - "
            "You exceeded your current quota, please check your plan and billing details."
        ),
    ),
    "user-model-429": lambda: error(
        "user_agent", openai_error("RateLimitError", 429, RATE, "rate_limit_exceeded")
    ),
    "judge-503": lambda: judged(
        "polite",
        gemini_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
    ),
    "unmocked-tool": lambda: error(
        "system", EvalToolError("book_room", {"day": "Tuesday"}, caller="agent `desk`")
    ),
    "no-user-agent": lambda: error(
        "user_agent", EvalUserAgentError(tool_name="approve_refund", args={"amount": 40})
    ),
    "cassette-miss": lambda: error(
        "system",
        CassetteMissError(
            "request 3 of the cassette cassettes/books.json differs from the recording: the "
            "contents' last message (re-record with --record)"
        ),
    ),
    "setup-unused": lambda: error(
        "setup",
        EvalSetupError(
            "tool_mocks names `bok_room`, which no tool of the agent has (did you mean "
            "`book_room`?)"
        ),
    ),
    "metric-raised": lambda: judged("booked_tuesday", caught(lambda: {}["booked"])),
    "mock-raised": lambda: error("system", caught(lambda: {"day": "Tuesday"}["order_id"])),
    "script-exhausted": lambda: error(
        "system",
        ScriptExhaustedError("ScriptedLlm was asked for step 4, but its script has 3 step(s)"),
    ),
    "simulated-tool": lambda: error(
        "system",
        SimulatedToolError(
            "the model simulating `lookup_order` gave no valid answer after one retry: its "
            "reply is not a JSON object"
        ),
    ),
    "sandbox-refused": lambda: error(
        "system",
        EvalSandboxError(
            "sandbox refused: tool `charge_card` connected to api.stripe.com:443 (strict): "
            "mock the tool, or allow the host"
        ),
    ),
    "user-script-exhausted": lambda: error(
        "user_agent",
        ScriptExhaustedError(
            "ScriptedUserAgent `ann` has no line left for turn 4 (its script has 3)"
        ),
    ),
    "tool-bad-date": lambda: error(
        "system", caught(lambda: datetime.datetime.strptime("2024-13-01", "%Y-%m-%d"))
    ),
    "tool-amount-500": lambda: error(
        "system", ValueError("refund of 500 EUR is over the limit of 200 EUR for this account")
    ),
    "tool-path-500": lambda: error(
        "system",
        caught(lambda: Path("/tmp/pytest-of-ci/pytest-500/test_books0/orders.json").read_text()),
    ),
    "tool-quota-words": lambda: error(
        "system", ValueError("booking refused: the room quota for 2024-06-01 is exhausted")
    ),
    "malformed-call": lambda: error(
        "system",
        EvalRunError(
            "agent `desk` ended with error `MALFORMED_FUNCTION_CALL`: Malformed function "
            "call: print(default_api.book_room(day='Tuesday'"
        ),
    ),
    "max-tokens": lambda: error(
        "system", EvalRunError("agent `desk` ended with error `MAX_TOKENS`: (no message)")
    ),
    "safety-block": lambda: error(
        "system", EvalRunError("agent `desk` ended with error `SAFETY`: (no message)")
    ),
    "output-schema": lambda: error("system", output_schema_error()),
    "shadow-divergence": lambda: error(
        "system",
        ShadowDivergenceError(
            "agent `desk` called `book_room` with {'day': 'Monday'}; the recording answered "
            "only {'day': 'Tuesday'}"
        ),
    ),
    "metric-failed-faithful": lambda: verdicts(FAITHFUL, booked_tuesday="state booked: 'Monday'"),
    "metric-failed-scripted": lambda: verdicts(
        None, modelled=False, booked_tuesday="state booked: 'Monday'"
    ),
    "terminated-faithful": lambda: ("terminated", None, {"user_fidelity": FAITHFUL}, True),
    "claim-failed-faithful": lambda: verdicts(
        FAITHFUL, claimed_actions="'I've refunded your order' but no call before it performed it"
    ),
    "fidelity-repeated": lambda: verdicts(
        by_rule("Which day suits you best?", "Which day suits you best?"),
        booked_tuesday="no booking",
    ),
    "fidelity-ended-early": lambda: verdicts(
        by_rule("Which day suits you?", "Bye. </finished>"), booked_tuesday="no booking"
    ),
    "fidelity-judge-contradicted": lambda: verdicts(
        by_judge("contradicted_facts", "Friday afternoons, I suppose."),
        booked_tuesday="state booked: 'Friday'",
    ),
    "fidelity-judge-revealed": lambda: verdicts(by_judge("revealed_held_back", "my PIN is 1234")),
    "user-state-change": lambda: error("user_agent", caught(lambda: [] + {"item": "latte"})),  # type: ignore[operator]
    "modelled-unchecked": lambda: verdicts(None, booked_tuesday="state booked: 'Monday'"),
    "worker-died": lambda: (
        "error",
        EvalErrorInfo(
            "system",
            (
                "the worker process running this case died (killed by SIGKILL); the rest of the "
                "suite went on"
            ),
            "WorkerDied",
        ),
        {},
        True,
    ),
    "worker-result": lambda: (
        "error",
        EvalErrorInfo(
            "system",
            (
                "the worker could not send this run back: PicklingError: Can't pickle <function "
                "<lambda>>: attribute lookup <lambda> on __main__ failed"
            ),
            "WorkerResultError",
        ),
        {},
        True,
    ),
    "anthropic-529-overloaded": lambda: error("system", anthropic_overloaded()),
    "user-agent-timeout": lambda: error("user_agent", openai_error("APITimeoutError", None, "")),
}
"""Each labelled failure, by id."""
