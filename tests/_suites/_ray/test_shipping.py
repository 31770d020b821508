"""What `Ray` ships, planned for a real project in tmp_path and checked against Ray's own zip.

No Ray is started: the plan, the preview lines and the refusal of a plan over Ray's
upload limit need no cluster. The test in test_executor.py that runs a suite on a real
head node checks the cluster's own copy of what was shipped.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from adk_eval import EvalSetupError, Ray, run_eval_suite
from adk_eval._suites._discovery import import_file
from adk_eval._suites._ray._shipping import (
    EXCLUDES,
    FORWARDED_ENV_PREFIXES,
    plan_shipping,
    project_packages,
)
from adk_eval._suites._ray._traversal import Walker

from .test_executor import RAY_ENV

AGENT = """
from google.adk.agents import LlmAgent
from adk_eval.testing import ScriptedLlm


def build():
    return LlmAgent(name="shop", model=ScriptedLlm(["welcome"]))
"""

CASES = """
from adk_eval import EvalCase

import helpers
import installed_pkg
from shop import agent

CASES = [EvalCase(name="greets", agent=agent.build(), first_message=helpers.GREETING)]
"""

FILES = {
    "pyproject.toml": "[project]\nname = 'shop'\n",
    ".gitignore": "data/\n",
    ".env": "PASSWORD=x\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    "runs.sqlite": "not a database\n",
    ".adk_eval/runs.sqlite": "not a database\n",
    "unused.py": "UNUSED = 1\n",
    "helpers.py": "GREETING = 'hi'\n",
    "evals/greet_eval.py": CASES,  # a plain folder: the namespace package `evals`
    "shop/__init__.py": "",
    "shop/agent.py": AGENT,
    "shop/prompts/greeting.txt": "hello " * 5000,  # 30,000 bytes: the largest file
    "shop/.rayignore": "notes.txt\n",
    "shop/notes.txt": "left out by shop/.rayignore\n",
    "shop/data/big.json": "{}\n",  # left out by the project's .gitignore
    "shop/.env": "PASSWORD=x\n",
    "shop/.env.local": "PASSWORD=x\n",
    "shop/server.pem": "PASSWORD=x\n",
    "shop/id_rsa": "PASSWORD=x\n",
    "shop/orders.db": "PASSWORD=x\n",
    "shop/.adk/session.json": "PASSWORD=x\n",
    "shop/.git/config": "PASSWORD=x\n",
    "shop/__pycache__/stale.cpython-311.pyc": "PASSWORD=x\n",
    ".venv/pyvenv.cfg": "home = /usr/bin\n",
    ".venv/lib/python3.11/site-packages/installed_pkg/__init__.py": "",
}

SHOP_FILES = {
    "shop/__init__.py",
    "shop/agent.py",
    "shop/prompts/greeting.txt",
    "shop/.rayignore",
}


@pytest.fixture(scope="module", autouse=True)
def local_ray_settings():
    # Ray reads these when it is imported, and planning imports Ray's packaging (see test_executor).
    for name, value in RAY_ENV.items():
        os.environ[name] = value


@pytest.fixture
def project(tmp_path, monkeypatch, isolated_imports):
    """The project in tmp_path, its eval file imported from its root: (root, module)."""
    root = tmp_path / "project"
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root / ".venv/lib/python3.11/site-packages"))
    module = import_file(root / "evals" / "greet_eval.py")
    assert module.__name__ == "evals.greet_eval"
    return root, module


@pytest.fixture
def ray_packaging():
    """Ray's private packaging module: skips without Ray (fails with ADK_EVAL_REQUIRE_RAY=1)."""
    if importlib.util.find_spec("ray") is None:
        if os.environ.get("ADK_EVAL_REQUIRE_RAY") == "1":
            pytest.fail("Ray is not installed: pip install -e '.[ray]' (make install does)")
        pytest.skip("Ray is not installed (pip install 'adk-eval[ray]')")
    from ray._private.runtime_env import packaging

    return packaging


def shipped(plan) -> dict[str, set[str]]:
    return {package.label: {name for name, _ in package.files} for package in plan.packages}


def test_by_default_ray_ships_the_modules_the_suite_loaded_and_no_secret(project):
    root, _ = project
    plan = plan_shipping(["evals.greet_eval"])
    assert plan.kind == "py_modules"
    assert [package.path for package in plan.packages] == [
        root / "evals",
        root / "helpers.py",
        root / "shop",
    ]  # not unused.py, not the package installed in .venv, not adk_eval
    assert shipped(plan) == {
        "evals/": {"evals/greet_eval.py"},
        "helpers.py": {"helpers.py"},
        "shop/": SHOP_FILES,
    }
    env = plan.runtime_env()
    assert "working_dir" not in env
    assert env["py_modules"] == [str(root / "evals"), str(root / "helpers.py"), str(root / "shop")]
    assert set(EXCLUDES) <= set(env["excludes"])
    assert "/data/" in env["excludes"]  # the project's .gitignore, which Ray does not read
    for package in plan.packages:
        for name, size in package.files:
            path = root / name
            assert "PASSWORD" not in path.read_text()
            assert size == path.stat().st_size
    left_out = dict(next(p for p in plan.packages if p.label == "shop/").left_out)
    assert left_out == {
        "shop/.env": "never shipped: secrets",
        "shop/.env.local": "never shipped: secrets",
        "shop/server.pem": "never shipped: secrets",
        "shop/id_rsa": "never shipped: secrets",
        "shop/orders.db": "never shipped: databases",
        "shop/.adk/session.json": "never shipped: ADK's local state",
        "shop/data/": ".gitignore",
        "shop/notes.txt": "shop/.rayignore",
    }  # .git and __pycache__ are left out without a word


def test_the_plan_lists_what_rays_own_zip_holds(project, ray_packaging, tmp_path):
    root, _ = project
    plans = [plan_shipping(["evals.greet_eval"]), plan_shipping([], working_dir=root)]
    defaults = Walker.make().defaults
    for plan in plans:
        assert plan.exact
        for package in plan.packages:
            zip_path = tmp_path / f"{len(list(tmp_path.glob('*.zip')))}.zip"
            folder = package.path.is_dir() and plan.kind == "py_modules"
            excludes = [*(defaults if plan.kind == "working_dir" else ()), *plan.excludes]
            ray_packaging.create_package(
                str(package.path),
                zip_path,
                include_gitignore=True,
                include_parent_dir=folder,
                excludes=excludes,
            )
            with zipfile.ZipFile(zip_path) as archive:
                zipped = {i.filename: i.file_size for i in archive.infolist() if not i.is_dir()}
            assert zipped == dict(package.files)
    assert not (root / "_ray_pkg").exists()


@pytest.mark.slow
def test_working_dir_is_an_opt_in_with_the_same_excludes(project):
    root, module = project
    assert (
        Ray(working_dir=root)
        .shipping(module.CASES)[0]
        .startswith("ray ships working_dir ./ (9 files, ")
    )
    plan = plan_shipping(["evals.greet_eval"], working_dir=root)
    assert plan.kind == "working_dir"
    env = plan.runtime_env()
    assert env["working_dir"] == str(root)
    assert "py_modules" not in env
    assert set(EXCLUDES) <= set(env["excludes"])
    (package,) = plan.packages
    assert {name for name, _ in package.files} == {
        "pyproject.toml",
        ".gitignore",
        "unused.py",
        "helpers.py",
        "evals/greet_eval.py",
        *SHOP_FILES,
    }
    assert dict(package.left_out)[".env"] == "never shipped: secrets"
    assert dict(package.left_out)["runs.sqlite"] == "never shipped: databases"
    assert dict(package.left_out)[".adk_eval/runs.sqlite"] == "never shipped: databases"


def test_the_preview_says_what_goes_where_and_what_is_left_out(project, monkeypatch):
    _, module = project
    for name in [name for name in os.environ if name.startswith(FORWARDED_ENV_PREFIXES)]:
        monkeypatch.delenv(name)  # this machine's own (CI sets ADK_EVAL_REQUIRE_*)
    monkeypatch.setenv("GOOGLE_API_KEY", "the-key")
    monkeypatch.setenv("ADK_EVAL_SERVICE_TOKEN", "the-token")
    monkeypatch.setenv("OPENAI_DB_PASSWORD", "the-password")
    monkeypatch.setenv("UNRELATED_SETTING", "1")
    lines = Ray(address="ray://127.0.0.1:10001").shipping(module.CASES)
    code, env, installed = lines
    evals, helpers = len(FILES["evals/greet_eval.py"]), len(FILES["helpers.py"])
    assert code.startswith(
        f"ray ships py_modules evals/ (1 file, {evals} B), helpers.py (1 file, {helpers} B), "
        "shop/ (4 files, 29 KiB) to ray://127.0.0.1:10001; "
        "largest: shop/prompts/greeting.txt (29 KiB); left out: "
    )
    assert "shop/.env (never shipped: secrets)" in code
    assert "shop/data/ (.gitignore)" in code
    assert env.startswith("ray forwards env vars GOOGLE_API_KEY")
    assert env.endswith(
        "; held back: ADK_EVAL_SERVICE_TOKEN, OPENAI_DB_PASSWORD (names with PASSWORD, SECRET "
        "or TOKEN)"
    )
    assert "UNRELATED_SETTING" not in env
    assert not any(secret in "".join(lines) for secret in ("the-key", "the-token", "the-password"))
    assert installed.startswith("ray ships no installed package")
    forwarded = plan_shipping(["evals.greet_eval"]).runtime_env()["env_vars"]
    assert forwarded["GOOGLE_API_KEY"] == "the-key"
    assert not {"ADK_EVAL_SERVICE_TOKEN", "OPENAI_DB_PASSWORD", "UNRELATED_SETTING"} & set(
        forwarded
    )
    if "ray" in sys.modules:  # the preview read Ray's packaging; it started nothing
        assert not sys.modules["ray"].is_initialized()


def test_the_users_excludes_leave_more_out_and_nothing_can_be_shipped(project):
    _, module = project
    plan = plan_shipping(["evals.greet_eval"], excludes=["prompts/"])
    shop = next(p for p in plan.packages if p.label == "shop/")
    assert {name for name, _ in shop.files} == SHOP_FILES - {"shop/prompts/greeting.txt"}
    assert dict(shop.left_out)["shop/prompts/"] == "excluded"
    (code, *_) = Ray(excludes=["prompts/"]).shipping(module.CASES)
    assert ", shop/ (3 files, " in code
    assert "shop/prompts/ (excluded)" in code
    with pytest.raises(EvalSetupError, match="list of patterns"):
        Ray(excludes="prompts/")  # type: ignore[arg-type]
    env = plan_shipping(["evals.greet_eval"], ship_modules=False).runtime_env()
    assert "py_modules" not in env
    assert "working_dir" not in env
    assert Ray(ship_modules=False).shipping(module.CASES)[0] == (
        "ray ships no code to a new local Ray: the eval modules must be importable there"
    )


@pytest.mark.slow
async def test_a_suite_over_rays_upload_limit_is_refused_before_anything_starts(project):
    root, module = project
    limit = Walker.make().limit
    with (root / "shop" / "prompts" / "model.bin").open("wb") as sparse:
        sparse.truncate(limit)  # a sparse file: as large as Ray's limit, nothing on disk
    executor = Ray(address="127.0.0.1:9")  # never reached: the run is refused first
    with pytest.raises(EvalSetupError) as refused:
        await run_eval_suite(module.CASES, executor=executor)
    message = str(refused.value)
    assert "ray would ship 512.0 MiB (largest: shop/prompts/model.bin (512.0 MiB))" in message
    assert "Ray uploads less than 512.0 MiB" in message
    assert "Ray(excludes=[...])" in message
    assert ".rayignore" in message
    assert "a smaller module" in message
    assert executor.shipping(module.CASES)[-1] == (
        "ray refuses to ship 512.0 MiB: its limit is 512.0 MiB"
    )


def test_without_rays_private_api_a_copy_lists_the_same_files(project, ray_packaging):
    root, _ = project
    ray_walker = Walker.make()
    copy = Walker(None, ray_walker.limit, ray_walker.defaults, ray_walker.include_gitignore)
    plan = plan_shipping(["evals.greet_eval"])
    for top, patterns in [
        *((package.path, plan.excludes) for package in plan.packages),
        (root, (*ray_walker.defaults, *EXCLUDES)),
    ]:
        by_ray, by_copy = ray_walker.walk(top, patterns), copy.walk(top, patterns)
        assert sorted(by_copy.kept) == sorted(by_ray.kept)
        assert by_copy.skipped() == by_ray.skipped()
    assert copy.ignored_above(root / "shop", root, EXCLUDES) == ["/data/"]


def test_python_and_installed_packages_are_never_shipped_even_from_a_wide_root(monkeypatch):
    import json

    import google.adk

    import adk_eval

    monkeypatch.chdir("/")  # every loaded module is under this root
    tops = {top for top, _ in project_packages([])}
    for installed in (json, google.adk, pytest, adk_eval):
        folder = Path(installed.__file__).resolve().parent
        assert not any(folder.is_relative_to(top) for top in tops), folder


def test_a_second_plan_looks_again_at_the_projects_modules_only(project, monkeypatch):
    root, _ = project
    plan_shipping(["evals.greet_eval"])  # looks at every loaded module once
    installed = [Path(sysconfig.get_paths()[name]).resolve() for name in ("stdlib", "purelib")]
    resolved: list[Path] = []
    resolve = Path.resolve

    def counted(self: Path, strict: bool = False) -> Path:
        resolved.append(self)
        return resolve(self, strict)

    monkeypatch.setattr(Path, "resolve", counted)
    plan = plan_shipping(["evals.greet_eval"])
    monkeypatch.setattr(Path, "resolve", resolve)
    assert [package.path for package in plan.packages] == [
        root / "evals",
        root / "helpers.py",
        root / "shop",
    ]
    assert any(path.is_relative_to(root) for path in resolved)  # the project's, looked at again
    again = [path for path in resolved if any(path.is_relative_to(p) for p in installed)]
    assert again == []  # no installed module's folder resolved a second time
    assert not any(path.is_relative_to(root / ".venv") for path in resolved)


def test_a_module_added_to_the_project_after_a_plan_is_shipped_too(project):
    root, _ = project
    before = plan_shipping(["evals.greet_eval"])
    assert root / "added.py" not in [package.path for package in before.packages]
    (root / "added.py").write_text("ADDED = 1\n")
    assert import_file(root / "added.py").__name__ == "added"
    (root / "shop" / "extra.py").write_text("EXTRA = 1\n")
    import_file(root / "shop" / "extra.py")
    after = plan_shipping(["evals.greet_eval"])
    assert [package.path for package in after.packages] == [
        root / "added.py",
        root / "evals",
        root / "helpers.py",
        root / "shop",
    ]
    assert "shop/extra.py" in shipped(after)["shop/"]
