"""The public API is exactly the documented names (STYLE.md rule 1)."""

import adk_eval
import adk_eval.metrics
import adk_eval.testing

DOCUMENTED_ROOT = {
    # DESIGN.md's public names (run_eval_suite/EvalSuiteResult arrive with suites)
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
    "EvalResult",
    "ScriptedUserAgent",
    "EvalToolError",
    "EvalUserAgentError",
    # additions documented in README "API"
    "ScriptContext",
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
}


def test_root_exports_exactly_the_documented_names():
    assert set(adk_eval.__all__) == DOCUMENTED_ROOT


def test_every_exported_name_exists():
    for module in (adk_eval, adk_eval.metrics, adk_eval.testing):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_metrics_exports():
    assert {"Metric", "MetricResult", "state_metric", "event_count_metric"} <= set(
        adk_eval.metrics.__all__
    )


def test_testing_exports_scripted_llm():
    assert "ScriptedLlm" in adk_eval.testing.__all__
