"""The public API is exactly the documented names (docs/api.md lists them)."""

import subprocess
import sys

import adk_eval
import adk_eval.goldens
import adk_eval.metrics
import adk_eval.studio
import adk_eval.testing

DOCUMENTED_ROOT = {
    "EvalCase",
    "UserAgents",
    "TerminateWhen",
    "Bridge",
    "YieldInfo",
    "ToolMock",
    "MockToolContext",
    "with_state_change",
    "EvalRunner",
    "run_eval",
    "run_eval_suite",
    "EvalResult",
    "EvalSuiteResult",
    "ScriptedUserAgent",
    "EvalToolError",
    "EvalUserAgentError",
    # additions documented in README "API"
    "ScriptContext",
    "HumanUserAgent",
    "STOP",
    "STOP_SIGNAL",
    "replace_value",
    "EvalErrorInfo",
    "EvalTrace",
    "Termination",
    "TokenUsage",
    "AdkEvalError",
    "EvalSetupError",
    "EvalRunError",
    "CaseStats",
    "score_session",
}


def test_root_exports_exactly_the_documented_names():
    assert set(adk_eval.__all__) == DOCUMENTED_ROOT


def test_lazy_exports_map_every_public_name():
    assert set(adk_eval._EXPORTS) == set(adk_eval.__all__)


def test_importing_the_package_does_not_import_adk():
    code = "import sys, adk_eval, adk_eval.pytest_plugin; print('google.adk' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_exported_name_exists():
    for module in (adk_eval, adk_eval.metrics, adk_eval.testing, adk_eval.goldens, adk_eval.studio):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_metrics_exports():
    assert {
        "Metric",
        "MetricResult",
        "state_metric",
        "event_count_metric",
        "llm_judge",
        "trajectory_match",
        "state_query",
        "score_session",
    } <= set(adk_eval.metrics.__all__)


def test_testing_exports_scripted_llm():
    assert "ScriptedLlm" in adk_eval.testing.__all__


def test_goldens_and_studio_exports():
    assert set(adk_eval.goldens.__all__) >= {
        "to_eval_case",
        "append_eval_case",
        "load_eval_set",
        "expected_trajectories",
        "eval_case_from_golden",
        "EvalSetFileError",
    }
    assert set(adk_eval.studio.__all__) == {"SimulatedAgentConfig", "StudioPlugin"}
