"""``run``'s first lines and what they announce: the seed, what runs for real, Vertex AI.

The seed printed repeats the same injected faults; the callbacks and the sandbox that run
for real are listed before the first case (and by ``merge`` for its shards), with their
warnings in the reports; ``--sandbox strict`` refuses them in one clean line; the Vertex AI
project and credentials a run will bill are named.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from adk_eval.reporting import load_report_schema

from .run_support import ONLY_GOOD, invoke, run_process

FAULTY = """
from adk_eval import ToolMock

def lookup(key: str) -> dict:
    '''Looks a key up.'''

agent = LlmAgent(
    name="a",
    model=ScriptedLlm([*(tool_call("lookup", {"key": f"k{i}"}) for i in range(6)), "Done."]),
    tools=[lookup],
)
flaky = ToolMock.returning({"value": 1}).with_faults(error_rate=0.5)
cases = [
    EvalCase(name=f"c{n}", agent=agent, first_message="go", tool_mocks={"lookup": flaky})
    for n in range(3)
]
"""


def test_seed_injects_the_same_faults_again_and_is_printed_and_reported(write_evals, tmp_path):
    root = write_evals({"faulty_eval.py": FAULTY})

    def faults(seed: str | None, concurrency: str) -> tuple[str, dict]:
        report = tmp_path / f"r{seed}-{concurrency}.json"
        args = ["run", str(root), "--no-store", "--repeat", "2", "--json", str(report)]
        args += ["--concurrency", concurrency] + (["--seed", seed] if seed else [])
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        data = json.loads(report.read_text())
        jsonschema.validate(data, load_report_schema())
        answers = {
            (r["name"], r["attempt"]): [
                c["answered_by"] for c in r["conversation"] if c["kind"] == "tool_call"
            ]
            for r in data["results"]
        }
        return result.output, {"seed": data["seed"], "answers": answers}

    output, first = faults("42", "1")
    assert "seed 42)" in output.splitlines()[0]
    _, again = faults("42", "6")
    assert again == first  # the same faults at the same calls, at any concurrency
    assert first["seed"] == 42
    injected = [a for calls in first["answers"].values() for a in calls]
    assert 0 < injected.count("fault") < len(injected)
    output, other = faults(None, "6")
    assert f"seed {other['seed']})" in output.splitlines()[0]  # a new seed, printed
    assert other["answers"] != first["answers"]


CALLBACK_AND_PROCESS = """
import subprocess

def guard(callback_context, llm_request):
    subprocess.run(["true"], check=True)

agent = LlmAgent(name="a", model=ScriptedLlm(["Hello."]), before_model_callback=guard)
guarded = EvalCase(name="guarded", agent=agent, first_message="hi")
"""


def test_run_says_what_runs_for_real_before_the_first_case_and_sandbox_strict_refuses(
    write_evals, tmp_path
):
    root = write_evals({"guard_eval.py": CALLBACK_AND_PROCESS})
    junit = tmp_path / "junit.xml"
    warned = invoke(
        "run",
        str(root / "guard_eval.py"),
        "--no-store",
        "--json",
        str(tmp_path / "r.json"),
        "--junit-xml",
        str(junit),
    )
    assert warned.exit_code == 0, warned.output
    lines = warned.output.splitlines()
    block = lines.index("runs for real besides the tools the cases provide:")
    assert lines[block + 1] == "  callbacks: guard_eval.guard (before_model_callback of agent `a`)"
    assert lines[block + 2].startswith("  sandbox: warn (every case): ")
    assert block < next(i for i, line in enumerate(lines) if "guarded" in line)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["runs_for_real"]["callbacks"] == [
        "guard_eval.guard (before_model_callback of agent `a`)"
    ]
    warning = (
        "sandbox: process `true` started, by before_model_callback guard_eval.guard of agent `a`"
    )
    assert report["results"][0]["warnings"] == [warning]
    # the run passed, so it is not explained: its warning is still on the terminal and in JUnit
    shown = lines.index("warnings of runs that passed:")
    assert lines[shown + 1] == f"  guarded: {warning}"
    assert shown < next(i for i, line in enumerate(lines) if line.startswith("1 passed in"))
    (case,) = ET.parse(junit).getroot().iter("testcase")
    assert case.find("failure") is None
    assert [
        (p.get("name"), p.get("value"))
        for p in case.iter("property")
        if p.get("name", "").startswith("warning.")
    ] == [("warning.1", warning)]
    assert case.findtext("system-err") == f"warning: {warning}"

    strict = invoke("run", str(root / "guard_eval.py"), "--no-store", "--sandbox", "strict")
    assert strict.exit_code == 1, strict.output
    assert "strict (every case)" in strict.output
    assert "EvalSandboxError" in strict.output
    assert "(refused: strict sandbox)" in strict.output
    assert "Traceback" not in strict.output


@pytest.mark.slow
def test_sandbox_strict_as_a_process_is_one_clean_line_and_adk_logs_no_traceback(write_evals):
    root = write_evals({"guard_eval.py": CALLBACK_AND_PROCESS})
    done = run_process(root, "guard_eval.py", "--sandbox", "strict")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == ""  # ADK logs no "Node execution failed" traceback of the refusal
    refused = (
        "sandbox: process `true` started, by before_model_callback guard_eval.guard of agent "
        "`a` (refused: strict sandbox)"
    )
    assert done.stdout.splitlines().count(f"  {refused}") == 1  # the error, not a warning too
    assert "warning:" not in done.stdout
    assert "Traceback" not in done.stdout


@pytest.mark.slow
def test_run_names_the_vertex_project_and_credentials_it_will_bill(write_evals, tmp_path):
    root = write_evals({"good_eval.py": ONLY_GOOD})
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "x",
                "client_secret": "y",
                "refresh_token": "z",
            }
        )
    )
    env = {
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_APPLICATION_CREDENTIALS": str(adc),
        "GOOGLE_CLOUD_PROJECT": "eval-project",
        "HOME": str(tmp_path),
    }
    done = run_process(root, "good_eval.py", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("Vertex AI:")]
    assert line.startswith("Vertex AI: project eval-project (from GOOGLE_CLOUD_PROJECT), ")
    assert str(adc) in line


def test_merge_says_what_ran_for_real_in_the_shards_and_their_warnings(write_evals, tmp_path):
    root = write_evals({"guard_eval.py": CALLBACK_AND_PROCESS})
    results = tmp_path / "1.json"
    shard = invoke(
        "run",
        str(root / "guard_eval.py"),
        "--no-store",
        "--shard",
        "1/1",
        "--results",
        str(results),
    )
    assert shard.exit_code == 0, shard.output

    merged = invoke("merge", str(results), "--no-store")
    assert merged.exit_code == 0, merged.output
    lines = merged.output.splitlines()
    assert lines[0].endswith("merged 1 shard(s), 1 case(s)")
    assert lines[1:4] == [
        "runs for real besides the tools the cases provide:",
        "  callbacks: guard_eval.guard (before_model_callback of agent `a`)",
        "  sandbox: warn (every case): processes, signals, connections off this machine or to "
        "Unix sockets, binds, name lookups and file writes of the cases' own code (threads it "
        "starts included) are listed in each run's warnings",
    ]
    assert (
        "  guarded: sandbox: process `true` started, by before_model_callback guard_eval.guard "
        "of agent `a`"
    ) in lines
