"""Strict JSON: NaN and infinity in state, tool answers and metrics never reach a file as such."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from click.testing import CliRunner

from adk_eval._cli import main
from adk_eval._strict_json import dumps, finite
from adk_eval.reporting import RunStore
from adk_eval.reporting._viewer import HEADER, create_viewer_app

from .conftest import serving

NON_FINITE = """
from adk_eval import ToolMock
from adk_eval.metrics import MetricResult

def measure(what: str) -> dict:
    '''Measures something.'''

class Ratio:
    name = "ratio"
    async def evaluate(self, trace):
        return MetricResult(passed=True, score=1.0, value=float("nan"), evidence=["0/0"])

agent = LlmAgent(name="a", model=ScriptedLlm([tool_call("measure", {"what": "x"}), "Done."]),
                 tools=[measure])
case = EvalCase(
    name="odd-numbers", agent=agent, first_message="go",
    initial_state={"session": {"limit": float("inf"), "floor": float("-inf")}},
    tool_mocks={"measure": ToolMock.returning({"mean": float("nan"), "max": float("inf")})},
    metrics=[Ratio()],
)
"""


def strict(text: str):
    """Parses `text` as JSON proper: NaN, Infinity and -Infinity are refused."""

    def refuse(token: str):
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_finite_names_every_non_finite_float_and_leaves_the_rest():
    value = {"a": [1.5, float("nan"), (float("inf"), -float("inf"))], "b": "NaN", "c": None}
    assert finite(value) == {"a": [1.5, "NaN", ["Infinity", "-Infinity"]], "b": "NaN", "c": None}
    assert strict(dumps(value)) == finite(value)
    with pytest.raises(ValueError, match="not JSON"):
        strict(json.dumps(value))  # what Python writes by default


def test_every_file_the_cli_writes_is_strict_json(write_evals, tmp_path):
    root = write_evals({"odd_eval.py": NON_FINITE})
    out = {name: tmp_path / name for name in ("r.json", "results.json", "r.html")}
    db = tmp_path / "runs.db"
    args = ["run", str(root), "--db", str(db), "--json", str(out["r.json"])]
    args += ["--results", str(out["results.json"]), "--html", str(out["r.html"])]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = strict(out["r.json"].read_text())
    (run,) = report["results"]
    assert run["final_state"]["session"] == {"limit": "Infinity", "floor": "-Infinity"}
    assert run["metrics"]["ratio"]["value"] == "NaN"
    (call,) = [c for c in run["conversation"] if c["kind"] == "tool_call"]
    assert call["response"] == {"mean": "NaN", "max": "Infinity"}
    strict(out["results.json"].read_text())
    data = re.search(r'id="adk-eval-data">(.*?)</script>', out["r.html"].read_text(), re.S)
    assert strict(data.group(1))["results"][0]["metrics"]["ratio"]["value"] == "NaN"
    store = RunStore(db)
    (stored,) = store.runs()
    assert store.load(stored.id)["results"][0]["final_state"]["session"]["limit"] == "Infinity"
    with serving(create_viewer_app(db, "t0ken-0123456789")) as url:
        answer = httpx.get(f"{url}/api/runs/{stored.id}", headers={HEADER: "t0ken-0123456789"})
        assert answer.status_code == 200
        strict(answer.text)
