"""Discovery: the documented rule, and one clear line for every problem."""

from __future__ import annotations

import sys

import pytest

from adk_eval._errors import DiscoveryError
from adk_eval._suites._discovery import discover, filter_cases, keyword_matches

TWO_CASES = """
agent = LlmAgent(name="a", model=ScriptedLlm(["hi"]))
first = EvalCase(name="first", agent=agent, first_message="x")
CASES = [first, EvalCase(name="second", agent=agent, first_message="y")]
_hidden = EvalCase(name="hidden", agent=agent, first_message="z")
"""


def test_a_file_gives_its_module_level_cases_in_order(write_evals):
    root = write_evals({"my_evals.py": TWO_CASES})
    found = discover([root / "my_evals.py"])
    assert [(f.case.name, f.attribute) for f in found] == [("first", "first"), ("second", "CASES")]
    assert found[0].source.endswith("my_evals.py")


def test_a_folder_is_searched_for_eval_files(write_evals):
    root = write_evals(
        {
            "pkg/evals.py": TWO_CASES,
            "other/eval_more.py": TWO_CASES.replace('"first"', '"third"').replace(
                '"second"', '"fourth"'
            ),
            "helpers.py": "raise RuntimeError('not an eval file: never imported')",
            ".hidden/evals.py": "raise RuntimeError('hidden folders are skipped')",
        }
    )
    names = [f.case.name for f in discover([root])]
    assert sorted(names) == ["first", "fourth", "second", "third"]


def test_files_in_packages_can_use_relative_imports(write_evals):
    root = write_evals(
        {
            "agentpkg/__init__.py": "",
            "agentpkg/agent.py": 'root_agent = LlmAgent(name="a", model=ScriptedLlm(["hi"]))\n',
            "agentpkg/evals.py": (
                "from .agent import root_agent\n"
                'case = EvalCase(name="rel", agent=root_agent, first_message="x")\n'
            ),
        }
    )
    [found] = discover([root / "agentpkg"])
    assert found.case.name == "rel"


def test_a_module_name_works(write_evals, monkeypatch):
    root = write_evals({"dotted_cases.py": TWO_CASES})
    monkeypatch.syspath_prepend(str(root))
    assert len(discover(["dotted_cases"])) == 2


@pytest.mark.parametrize(
    ("files", "target", "message"),
    [
        ({}, "missing_dir", "no such file, folder or module: "),
        ({"notes.txt": ""}, "notes.txt", "is not a Python file"),
        ({"empty/readme.md": ""}, "empty", "no eval files under"),
        ({"none_eval.py": "x = 1\n"}, "none_eval.py", "defines no EvalCase"),
    ],
)
def test_problems_are_one_line(write_evals, files, target, message):
    root = write_evals({k: v for k, v in files.items() if k.endswith(".py")})
    for name in files:
        if not name.endswith(".py"):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("")
    with pytest.raises(DiscoveryError) as error:
        discover([root / target])
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_an_import_error_names_the_file_and_line(write_evals):
    root = write_evals({"broken_eval.py": "x = 1\ny = undefined_name + 1\n"})
    with pytest.raises(DiscoveryError) as error:
        discover([root / "broken_eval.py"])
    text = str(error.value)
    assert "cannot import" in text
    assert "broken_eval.py:" in text
    assert "NameError: name 'undefined_name' is not defined" in text
    assert "\n" not in text


def test_a_syntax_error_names_the_file_and_line(write_evals):
    root = write_evals({"syntax_eval.py": "def broken(:\n"})
    with pytest.raises(DiscoveryError, match=r"syntax_eval\.py:\d+\): SyntaxError"):
        discover([root / "syntax_eval.py"])


def test_duplicate_case_names_are_refused(write_evals):
    root = write_evals({"dup_a_eval.py": TWO_CASES, "dup_b_eval.py": TWO_CASES})
    with pytest.raises(DiscoveryError, match="two cases are named `first`"):
        discover([root])


@pytest.mark.parametrize(
    ("expression", "name", "expected"),
    [
        ("chest", "chest-pain-escalation", True),
        ("CHEST", "chest-pain-escalation", True),
        ("chest and not fail", "chest-pain-escalation", True),
        ("chest and not pain", "chest-pain-escalation", False),
        ("headache or routine", "routine-appointment", True),
        ("(a or b) and c", "b-c", True),
    ],
)
def test_keyword_expressions(expression, name, expected):
    assert keyword_matches(expression, name) is expected


def test_a_malformed_keyword_expression_is_a_clear_error():
    with pytest.raises(DiscoveryError, match="invalid -k expression"):
        keyword_matches("chest and", "x")


def test_filter_cases(write_evals):
    root = write_evals({"filter_evals.py": TWO_CASES})
    found = discover([root])
    assert [f.case.name for f in filter_cases(found, "sec")] == ["second"]
    assert filter_cases(found, None) == found


def test_eval_files_import_the_project_and_each_other_as_pytest_would(
    write_evals, tmp_path, monkeypatch
):
    root = write_evals(
        {
            "shop/__init__.py": "",
            "shop/agent.py": 'root_agent = LlmAgent(name="shop", model=ScriptedLlm(["hi"]))\n',
            "evals/eval_refund.py": (
                "from shop.agent import root_agent\n"
                'REFUND = EvalCase(name="refund", agent=root_agent, first_message="x")\n'
            ),
            "evals/eval_smoke.py": (
                "from evals.eval_refund import REFUND\n"
                "from shop.agent import root_agent\n"
                'SMOKE = [REFUND, EvalCase(name="smoke", agent=root_agent, first_message="y")]\n'
            ),
        }
    )
    (root / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    monkeypatch.chdir(root / "evals")  # from a subfolder: the root is found upwards
    found = discover(["."])
    assert sorted(f.case.name for f in found) == ["refund", "smoke"]  # REFUND once
    assert str(root) == sys.path[0]
    assert sys.modules["evals.eval_refund"].REFUND is found[0].case


@pytest.mark.parametrize("agent_on_the_path", ["before", "after"])
def test_an_eval_folder_named_like_an_agent_package_imports_as_pytest_would(
    write_evals, monkeypatch, agent_on_the_path
):
    root = write_evals(
        {
            "agents/llm_auditor/__init__.py": "from . import agent\n",
            "agents/llm_auditor/agent.py": (
                'root_agent = LlmAgent(name="auditor", model=ScriptedLlm(["ok"]))\n'
            ),
            "llm_auditor/eval_auditor.py": (
                "from llm_auditor.agent import root_agent\n"
                'case = EvalCase(name="audit", agent=root_agent, first_message="x")\n'
            ),
            "data_science/eval_ds.py": (
                'ds = EvalCase(name="ds", agent=LlmAgent(name="ds", model=ScriptedLlm(["ok"])),'
                ' first_message="x")\n'
            ),
        }
    )
    (root / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    monkeypatch.chdir(root)
    if agent_on_the_path == "before":
        monkeypatch.syspath_prepend(str(root / "agents"))
    else:
        monkeypatch.setattr(sys, "path", [*sys.path, str(root / "agents")])

    found = discover(["llm_auditor", "data_science"])

    assert sorted(f.case.name for f in found) == ["audit", "ds"]
    assert sys.modules["llm_auditor"].__file__.endswith("agents/llm_auditor/__init__.py")
