"""Rate limits: said as N/WINDOW in code, on the command line, in pyproject.toml."""

from __future__ import annotations

import math

import pytest

from adk_eval._errors import EvalSetupError
from adk_eval.models import RateLimit
from adk_eval.models._pacing._limits import (
    limit_for,
    limits_from_options,
    limits_from_pyproject,
    parse_amount,
    project_pyproject,
)


def test_a_limit_per_window():
    limit = RateLimit(rpm=120, tpm=6000, window=10)
    assert (limit.requests, limit.tokens) == (20, 1000)
    assert RateLimit(tpm=10).requests == math.inf


@pytest.mark.parametrize("bad", [dict(rpm=0), dict(tpm=-1), dict(rpm=True), dict(window=0)])
def test_a_bad_limit_is_refused(bad):
    with pytest.raises(EvalSetupError, match="RateLimit"):
        RateLimit(**bad)


def test_the_most_specific_pattern_wins():
    limits = {
        "*": RateLimit(rpm=1),
        "openai/*": RateLimit(rpm=2),
        "openai/gpt-4o*": RateLimit(rpm=3),
        "gemini-2.5-flash": RateLimit(rpm=4),
    }
    assert limit_for("openai/gpt-4o-mini", limits).rpm == 3
    assert limit_for("openai/o3", limits).rpm == 2
    assert limit_for("gemini-2.5-flash", limits).rpm == 4
    assert limit_for("anthropic/claude", limits).rpm == 1
    assert limit_for("x", {"gemini-*": RateLimit(rpm=1)}) is None


def test_options_for_every_model_or_one_and_rpm_with_tpm_merged():
    limits = limits_from_options(["60", "gemini-2.5-flash=10"], ["gemini-2.5-flash=250000"])
    assert limits["*"] == RateLimit(rpm=60)  # a bare number is still per minute
    assert limits["gemini-2.5-flash"] == RateLimit(rpm=10, tpm=250000)


def test_a_limit_is_said_as_the_provider_states_it_n_per_window():
    limits = limits_from_options(["20/10s", "openai/*=500/1m"], ["openai/*=30000/1m"])
    assert (limits["*"].requests, limits["*"].window) == (20, 10)  # not 20 a minute
    assert limits["openai/*"] == RateLimit(rpm=500, tpm=30000, window=60)
    assert RateLimit.parse(rpm="7/9s").requests == 7  # exact, though 7 * 60 / 9 is not
    assert RateLimit.parse(rpm="1500/1d").describe() == "1,500 requests in any 1 d"
    assert RateLimit.parse(rpm="3/s") == RateLimit(rpm=180, window=1)
    assert parse_amount("250000/1m") == (250000, 60)
    assert parse_amount(60) == (60, None)


def test_the_banner_says_requests_per_window():
    assert RateLimit.parse(rpm="20/10s").describe() == "20 requests in any 10 s"
    assert RateLimit(rpm=60).describe() == "60 requests in any 1 min"
    # the old trap, --rpm 20 --quota-window 10, now reads as what it is
    assert RateLimit.parse(rpm=20, window=10).describe() == "3.33333 requests in any 10 s"


def test_requests_and_tokens_over_different_windows_are_paced_over_the_shorter():
    limit = RateLimit.parse(rpm="20/10s", tpm="60000/1m")
    assert (limit.requests, limit.tokens, limit.window) == (20, 10000, 10)
    assert limit.describe() == "20 requests and 10,000 tokens in any 10 s"
    merged = RateLimit(tpm=60000).merged(RateLimit.parse(rpm="20/10s"))
    assert merged == limit


def test_a_window_that_contradicts_quota_window_is_one_line():
    with pytest.raises(EvalSetupError) as raised:
        limits_from_options(["20/10s"], window=60)
    message = str(raised.value)
    assert message.startswith("--quota-window 60: rpm '20/10s' is counted over 10 s")
    assert "drop the window" in message
    assert "\n" not in message
    assert limits_from_options(["20/10s"], window=10)["*"] == RateLimit(rpm=120, window=10)
    assert limits_from_options(["20"], window=10)["*"] == RateLimit(rpm=20, window=10)  # as before


@pytest.mark.parametrize(
    "bad", ["fast", "m=", "m=-3", "0", "20/10", "20/10parsecs", "20/0s", "nan", "inf/1m"]
)
def test_a_bad_option_is_one_line_with_the_fix(bad):
    with pytest.raises(EvalSetupError, match=r"^--rpm .* is not a limit: give \[MODEL=\]N/WINDOW"):
        limits_from_options([bad])


def test_pyproject_table(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text(
        '[project]\nname = "x"\n\n[tool.adk-eval.limits]\n'
        '"gemini-2.5-flash" = { rpm = "10/1m", tpm = "250000/1m" }\n'
        '"openai/*" = { rpm = "20/10s" }\n'
        '"old/*" = { rpm = 500, window = 10 }\n'
    )
    limits = limits_from_pyproject(path)
    assert limits == {
        "gemini-2.5-flash": RateLimit(rpm=10, tpm=250000),
        "openai/*": RateLimit(rpm=120, window=10),  # 20 in any 10 s
        "old/*": RateLimit(rpm=500, window=10),  # the old form still reads as it did
    }
    assert limits_from_pyproject(tmp_path / "missing.toml") == {}
    (tmp_path / "sub").mkdir()
    assert project_pyproject(tmp_path / "sub") == path


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ('"m" = 10', "must be a table like"),
        ('"m" = { rpm = 10, burst = 3 }', "unknown ['burst']"),
        ('"m" = { rpm = -1 }', "is not a limit: give N/WINDOW"),
        ('"m" = { rpm = "20/10s", window = 60 }', "counted over 10 s, but the window says 1 min"),
    ],
)
def test_a_malformed_pyproject_entry_names_the_file_and_the_entry(tmp_path, table, says):
    path = tmp_path / "pyproject.toml"
    path.write_text(f"[tool.adk-eval.limits]\n{table}\n")
    with pytest.raises(EvalSetupError) as raised:
        limits_from_pyproject(path)
    assert str(path) in str(raised.value)
    assert '"m"' in str(raised.value)
    assert says in str(raised.value)


def test_a_file_that_is_not_toml(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.adk-eval.limits\n")
    with pytest.raises(EvalSetupError, match="cannot read it as TOML"):
        limits_from_pyproject(path)
