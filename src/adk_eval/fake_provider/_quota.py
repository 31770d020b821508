"""Quotas like a real provider's: requests and tokens per sliding window, refused with 429s.

A model's quota holds the requests it admitted in the last `Quota.window` seconds (a
request that arrived exactly one window ago has left it). A request is admitted when
one more request, and its tokens, still fit; otherwise it is refused and, as with real
providers, spends nothing. The refusal says when it would fit: when enough of the
oldest admitted requests have left the window. So no span of `window` seconds ever
holds more than the limit of admitted requests, which `max_in_any_window` checks.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from .._errors import EvalSetupError
from ._replies import Api


@dataclass(frozen=True)
class Quota:
    """Rate limits of the fake provider, per model like OpenAI's and Gemini's.

    Attributes:
        requests: Requests admitted per window; None: no request limit (with
            the default window, the provider's RPM).
        tokens: Tokens admitted per window; None: no token limit (with the
            default window, the provider's TPM). A request costs its prompt's
            characters / 4 plus its reply's completion tokens.
        window: Length of the sliding window, in seconds (60: per minute).
        per_model: Each model has its own limits; False: all models share one.
    """

    requests: int | None = None
    tokens: int | None = None
    window: float = 60.0
    per_model: bool = True

    def __post_init__(self) -> None:
        if self.requests is None and self.tokens is None:
            raise EvalSetupError("a Quota needs a limit: give it `requests=`, `tokens=` or both")
        for name in ("requests", "tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise EvalSetupError(f"Quota {name} must be >= 1 or None, got {value!r}")
        if not self.window > 0:
            raise EvalSetupError(f"Quota window must be > 0 seconds, got {self.window!r}")


@dataclass(frozen=True)
class Refusal:
    """Why a request was refused and when it would have fitted.

    Attributes:
        limit: The limit it is over.
        allowed: That limit's value.
        used: What the window already holds of it.
        requested: What the request asked for (1 request, or its tokens).
        retry_after: Seconds until it would be admitted (a request larger than
            the token limit never is: one whole window).
    """

    limit: Literal["requests", "tokens"]
    allowed: int
    used: int
    requested: int
    retry_after: float


class QuotaBook:
    """The requests each model's quota admitted in the current window."""

    def __init__(self, quota: Quota) -> None:
        self.quota = quota
        self._admitted: dict[str, deque[tuple[float, int]]] = {}

    def _window(self, model: str, now: float) -> deque[tuple[float, int]]:
        """The ``(arrived, tokens)`` of `model`'s admitted requests still in the window."""
        entries = self._admitted.setdefault(model if self.quota.per_model else "", deque())
        while entries and entries[0][0] <= now - self.quota.window:
            entries.popleft()
        return entries

    def admit(self, model: str, now: float, tokens: int) -> Refusal | None:
        """Admits a request that arrived `now` (and counts it), or says why not."""
        entries = self._window(model, now)
        refusals = []
        if self.quota.requests is not None and len(entries) >= self.quota.requests:
            leaves = entries[len(entries) - self.quota.requests][0] + self.quota.window
            refusals.append(Refusal("requests", self.quota.requests, len(entries), 1, leaves - now))
        if self.quota.tokens is not None:
            used = sum(spent for _, spent in entries)
            if used + tokens > self.quota.tokens:
                wait = self._token_wait(entries, used + tokens - self.quota.tokens, now)
                refusals.append(Refusal("tokens", self.quota.tokens, used, tokens, wait))
        if refusals:
            return max(refusals, key=lambda refusal: refusal.retry_after)
        entries.append((now, tokens))
        return None

    def _token_wait(self, entries: Iterable[tuple[float, int]], excess: int, now: float) -> float:
        """Seconds until the oldest requests leaving the window free `excess` tokens."""
        freed = 0
        for arrived, spent in entries:
            freed += spent
            if freed >= excess:
                return arrived + self.quota.window - now
        return self.quota.window

    def headers(self, model: str, now: float) -> dict[str, str]:
        """OpenAI's ``x-ratelimit-*`` headers: each limit, what remains, and when it resets."""
        entries = self._window(model, now)
        reset = _duration(entries[-1][0] + self.quota.window - now if entries else 0.0)
        headers = {}
        if self.quota.requests is not None:
            headers["x-ratelimit-limit-requests"] = str(self.quota.requests)
            headers["x-ratelimit-remaining-requests"] = str(self.quota.requests - len(entries))
            headers["x-ratelimit-reset-requests"] = reset
        if self.quota.tokens is not None:
            used = sum(spent for _, spent in entries)
            headers["x-ratelimit-limit-tokens"] = str(self.quota.tokens)
            headers["x-ratelimit-remaining-tokens"] = str(max(0, self.quota.tokens - used))
            headers["x-ratelimit-reset-tokens"] = reset
        return headers


def _duration(seconds: float) -> str:
    """A duration the way OpenAI writes one in its headers: ``120ms``, ``6.5s``, ``1m0s``."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{int(minutes)}m{text}" if minutes else text


def rate_limited(
    api: Api, model: str, quota: Quota, refusal: Refusal
) -> tuple[dict[str, Any], dict[str, str]]:
    """The 429's body in `api`'s format, and its ``Retry-After`` header.

    Both the header and Gemini's ``RetryInfo`` round the wait up to whole seconds,
    so a client that waits exactly that long is admitted.
    """
    seconds = math.ceil(refusal.retry_after)
    headers = {"retry-after": str(seconds)}
    if api == "openai":
        return _openai_rate_limited(model, quota, refusal), headers
    return _gemini_rate_limited(model, quota, refusal, seconds), headers


def _openai_rate_limited(model: str, quota: Quota, refusal: Refusal) -> dict[str, Any]:
    per = f"{quota.window:g}s"
    if quota.window == 60:
        per = "min (RPM)" if refusal.limit == "requests" else "min (TPM)"
    message = (
        f"Rate limit reached for {model} on {refusal.limit} per {per}: Limit "
        f"{refusal.allowed}, Used {refusal.used}, Requested {refusal.requested}. "
        f"Please try again in {_duration(refusal.retry_after)}."
    )
    return {
        "error": {
            "message": message,
            "type": "rate_limit_exceeded",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }


def _gemini_rate_limited(
    model: str, quota: Quota, refusal: Refusal, seconds: int
) -> dict[str, Any]:
    metric, kind = {
        "requests": ("generate_content_requests", "GenerateRequests"),
        "tokens": ("generate_content_token_count", "GenerateContentTokens"),
    }[refusal.limit]
    metric = f"generativelanguage.googleapis.com/{metric}"
    per = "Minute" if quota.window == 60 else f"{quota.window:g}Seconds"
    violation: dict[str, Any] = {
        "quotaMetric": metric,
        "quotaId": f"{kind}Per{per}PerProject" + ("PerModel" if quota.per_model else ""),
        "quotaDimensions": {"location": "global"},
        "quotaValue": str(refusal.allowed),
    }
    if quota.per_model:
        violation["quotaDimensions"]["model"] = model
    message = (
        "You exceeded your current quota.\n"
        f"* Quota exceeded for metric: {metric}, limit: {refusal.allowed}, model: {model}\n"
        f"Please retry in {refusal.retry_after:.3f}s."
    )
    return {
        "error": {
            "code": 429,
            "message": message,
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{seconds}s"},
            ],
        }
    }


def max_in_any_window(arrivals: Iterable[float], window: float) -> int:
    """The most arrival times any span ``[t, t + window)`` holds."""
    times = sorted(arrivals)
    most = start = 0
    for end, arrived in enumerate(times):
        while times[start] <= arrived - window:
            start += 1
        most = max(most, end - start + 1)
    return most
