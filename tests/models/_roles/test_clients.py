"""Model clients imported with the eval files: litellm when ADK's LiteLlm is in use, as ADK does."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, os, sys
from adk_eval.models._roles._clients import warm_clients
if sys.argv[1] == "litellm":
    from google.adk.models.lite_llm import LiteLlm
    LiteLlm(model="openai/x", api_base="http://127.0.0.1:9/v1", api_key="k")
loaded_before = "litellm" in sys.modules
imported = warm_clients()
print(json.dumps({"before": loaded_before, "imported": imported,
                  "loaded": "litellm" in sys.modules, "mode": os.environ.get("LITELLM_MODE"),
                  "dotenv_secret": os.environ.get("ADK_EVAL_TEST_DOTENV")}))
"""


def probe(tmp_path, uses: str) -> dict:
    (tmp_path / ".env").write_text("ADK_EVAL_TEST_DOTENV=loaded\n")  # litellm's DEV mode reads it
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_MODE"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, uses],
        cwd=tmp_path,
        env={**env, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # a few seconds of processes: make test runs it
def test_litellm_is_imported_ahead_when_adks_litellm_model_is_in_use(tmp_path):
    seen = probe(tmp_path, "litellm")
    assert seen["before"] is False  # ADK's LiteLlm imports it only at its first call
    assert seen["imported"] == ["litellm"]
    assert seen["loaded"] is True
    assert seen["mode"] == "PRODUCTION"  # as ADK imports it:
    assert seen["dotenv_secret"] is None  # no .env file loaded into the environment


def test_nothing_is_imported_for_cases_that_do_not_use_it(tmp_path):
    seen = probe(tmp_path, "none")
    assert seen["imported"] == []
    assert seen["loaded"] is False
