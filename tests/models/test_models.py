"""Model configuration: roles, environment, CLI flags, missing keys, `adk-eval models`."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from google.adk.models.lite_llm import LiteLlm

from adk_eval._cli import main
from adk_eval._errors import EvalSetupError
from adk_eval.models import (
    configured_model,
    default_judge_model,
    missing_credentials,
    model_setting,
    resolve_model,
)
from adk_eval.testing import ScriptedLlm

KEYS = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ADK_EVAL_MODEL",
    "ADK_EVAL_USER_MODEL",
    "ADK_EVAL_JUDGE_MODEL",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for key in KEYS:
        if key.startswith("ADK_EVAL_"):
            monkeypatch.setenv(key, "")  # empty means unset; restored after (the CLI sets them)
        else:
            monkeypatch.delenv(key, raising=False)


def test_roles_come_from_their_variable_then_from_the_main_model(monkeypatch):
    assert configured_model("model") is None
    assert configured_model("user_model", default="gemini-2.5-flash") == "gemini-2.5-flash"
    monkeypatch.setenv("ADK_EVAL_MODEL", "openai/gpt-4o-mini")
    assert configured_model("user_model") == "openai/gpt-4o-mini"
    assert default_judge_model() == "openai/gpt-4o-mini"
    monkeypatch.setenv("ADK_EVAL_JUDGE_MODEL", "anthropic/claude-sonnet-4")
    assert default_judge_model() == "anthropic/claude-sonnet-4"
    with pytest.raises(EvalSetupError, match="unknown model role 'patient'"):
        configured_model("patient")  # type: ignore[arg-type]


def test_a_missing_key_is_one_line_naming_the_variable(monkeypatch):
    assert missing_credentials("gemini-2.5-flash") == (
        "model 'gemini-2.5-flash' needs a Gemini API key: set GOOGLE_API_KEY (or GEMINI_API_KEY), "
        "or GOOGLE_GENAI_USE_VERTEXAI=true for Vertex AI, or choose another model"
    )
    assert missing_credentials("openai/gpt-4o-mini") == (
        "model 'openai/gpt-4o-mini' needs OPENAI_API_KEY: set it, or choose another model"
    )
    assert "ANTHROPIC_API_KEY" in missing_credentials("anthropic/claude-sonnet-4")
    assert missing_credentials("ollama/llama3") is None  # runs on your machine
    with pytest.raises(EvalSetupError, match="needs OPENAI_API_KEY"):
        resolve_model("openai/gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("GEMINI_API_KEY", "g-test")
    assert missing_credentials("openai/gpt-4o-mini") is None
    assert missing_credentials("gemini-2.5-flash") is None
    assert isinstance(resolve_model("openai/gpt-4o-mini"), LiteLlm)


def test_model_objects_are_used_as_they_are():
    model = ScriptedLlm(["hi"])
    assert resolve_model(model) is model
    assert missing_credentials(model) is None
    with pytest.raises(EvalSetupError, match="unknown model 'not-a-model'"):
        resolve_model("not-a-model")


def test_model_setting_names_the_variable_a_role_falls_back_to(monkeypatch):
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    assert model_setting("judge_model") is None
    monkeypatch.setenv("ADK_EVAL_MODEL", "openai/gpt-4o-mini")
    assert model_setting("judge_model") == ("openai/gpt-4o-mini", "ADK_EVAL_MODEL")
    monkeypatch.setenv("ADK_EVAL_JUDGE_MODEL", " gemini-2.5-flash ")
    assert model_setting("judge_model") == ("gemini-2.5-flash", "ADK_EVAL_JUDGE_MODEL")
    assert model_setting("model") == ("openai/gpt-4o-mini", "ADK_EVAL_MODEL")


def test_the_models_command_shows_what_is_set_but_never_a_secret(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    monkeypatch.setenv("ADK_EVAL_MODEL", "openai/gpt-4o-mini")
    result = CliRunner().invoke(main, ["models"])
    assert result.exit_code == 0, result.output
    assert "sk-very-secret-value" not in result.output
    assert "model        openai/gpt-4o-mini  (from ADK_EVAL_MODEL)" in result.output
    assert "user_model   openai/gpt-4o-mini  (from ADK_EVAL_MODEL)" in result.output
    assert "openai     ready: OPENAI_API_KEY is set" in result.output
    assert "gemini     not configured: set GOOGLE_API_KEY or GEMINI_API_KEY" in result.output


def test_run_with_a_model_whose_key_is_missing_stops_with_one_line(tmp_path):
    result = CliRunner().invoke(
        main, ["run", "examples/clinician", "--user-model", "openai/gpt-4o-mini", "--no-store"]
    )
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "adk-eval: error: ADK_EVAL_USER_MODEL: model 'openai/gpt-4o-mini' needs OPENAI_API_KEY: "
        "set it, or choose another model"
    ]
