"""Shared helpers: real ADK agents on ScriptedLlm, and a log of real tool executions."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# A test using one of these fixtures needs the marker of the same name, so that
# `make test-fast` (which deselects the markers) never starts a browser or the model.
_MARKED_FIXTURES = ("browser", "local_model")


# Tests of these kinds take 5 to 60 s each: they start first (see below).
_LONG_MARKERS = ("slow", "local_model", "adk_cli")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Checks the markers; with xdist's ``--maxschedchunk``, puts the long tests first.

    pytest-randomly has shuffled `items` already; the stable sort keeps that order
    within the long tests and within the others. Started first, a minute-long test
    runs while the other workers take the short ones, instead of keeping one worker
    busy alone at the end of the run. Only when workers take a few tests at a time
    (``--maxschedchunk``, as `make test` runs): xdist otherwise hands each worker
    a long run of consecutive tests at once, and one would get all the long ones.
    """
    for item in items:
        for name in _MARKED_FIXTURES:
            if name in getattr(item, "fixturenames", ()) and not item.get_closest_marker(name):
                raise pytest.UsageError(f"{item.nodeid} uses the {name} fixture: mark it {name}")
    if config.getoption("maxschedchunk", None):
        items.sort(key=lambda item: not any(item.get_closest_marker(m) for m in _LONG_MARKERS))


@pytest.fixture
def local_model():
    """The embedded local model: skips without it (fails with ADK_EVAL_REQUIRE_LOCAL_MODEL=1)."""
    from adk_eval.models._roles._local import local_model_status

    problem = local_model_status()
    if problem is not None:
        if os.environ.get("ADK_EVAL_REQUIRE_LOCAL_MODEL") == "1":
            pytest.fail(problem)
        pytest.skip(problem)


class ToolLog:
    """Records which real tool functions actually ran."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def record(self, name: str, **args: object) -> None:
        self.calls.append((name, dict(args)))

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


@pytest.fixture
def tool_log() -> ToolLog:
    return ToolLog()


@pytest.fixture
def isolated_imports(monkeypatch, tmp_path):
    """Forgets the modules a test imported from its tmp_path, and its sys.path entries.

    Library modules imported meanwhile stay: dropping them would load a second
    copy of ADK's classes later and break isinstance checks.
    """
    before = set(sys.modules)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    root = str(tmp_path.resolve())
    for name in set(sys.modules) - before:
        module = sys.modules[name]
        places = [getattr(module, "__file__", None) or "", *getattr(module, "__path__", [])]
        if any(str(place).startswith(root) for place in places):
            del sys.modules[name]


CASE_HEADER = """
from google.adk.agents import LlmAgent
from adk_eval import EvalCase, ScriptedUserAgent, TerminateWhen, UserAgents
from adk_eval.metrics import event_count_metric, state_metric
from adk_eval.testing import ScriptedLlm, tool_call
"""


@pytest.fixture
def write_evals(tmp_path, isolated_imports):
    """Writes eval files (the common imports are prepended) and returns their folder."""

    def write(files: dict[str, str]) -> Path:
        for name, source in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            body = textwrap.dedent(source)
            path.write_text(body if name.endswith("__init__.py") else CASE_HEADER + body)
        return tmp_path

    return write


CHROMIUM = Path(shutil.which("chromium") or "/usr/bin/chromium")


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright, for the tests marked `browser`."""
    if not CHROMIUM.exists():
        message = f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("ADK_EVAL_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield chromium
        chromium.close()


@contextmanager
def serving(app, host: str = "127.0.0.1") -> Iterator[str]:
    """`app` on a free port of `host`, served by uvicorn in a background thread; its URL."""
    import uvicorn

    from adk_eval._sandbox._serving import PromptServer

    server = PromptServer(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
        thread.join(30)
        sock.close()


def default_sigint() -> None:
    """`preexec_fn` giving a child a terminal's SIGINT disposition.

    A shell's background jobs (a CI runner's, say) inherit SIGINT as ignored, and
    so would the child, which then ignores Ctrl-C as it should: tests that press
    Ctrl-C must give it back the default.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def shot(page, name: str) -> None:
    """With ADK_EVAL_SCREENSHOTS=docs/images, saves the page there (the docs' screenshots)."""
    folder = os.environ.get("ADK_EVAL_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)
