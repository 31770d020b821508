"""Attribution over a labelled corpus of failures: the party a person would blame.

Each entry is a run that did not pass, written in the shapes real runs end in
(provider errors as LiteLLM, google-genai and httpx word them, tool and mock
errors, the harness's own errors, metric and `user_fidelity` verdicts), with the
party a careful reader blames. `test_the_corpus_agrees` holds the agreement at the
figure reached; each known miss is a strict xfail with its reason.
"""

from __future__ import annotations

from adk_eval._result._attribution import attribute
from adk_eval._result._status import EvalErrorInfo


def test_digits_of_a_path_or_an_amount_are_not_an_http_status():
    for message in (
        "[Errno 2] No such file or directory: '/tmp/pytest-of-ci/pytest-500/test_a0/orders.json'",
        "refund of 500 EUR is over the agent's limit of 200 EUR",
    ):
        error = EvalErrorInfo("system", message, "ValueError")
        assert attribute("error", error, {}, modelled_user=False).party == "agent", message
