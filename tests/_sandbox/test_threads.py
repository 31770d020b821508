"""A thread started by a run's code belongs to the run: what a library does in it is the case's.

Each channel is reached by a library function run as a thread's target (no code of
the case on that thread's stack), from a tool with its real body. Strict refuses it
before it happens; warn lets it happen and lists it. Connections off the machine
are only tried in strict mode here (refused before the system call); warn's is in
`test_network_namespace.py`.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import threading
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, EvalResult, run_eval
from adk_eval.testing import ScriptedLlm, tool_call

BY = "by a thread started by tool `work` of agent `shop`"
REFUSED = " (refused: strict sandbox)"


@dataclass(frozen=True)
class Channel:
    """A library function a thread runs, the line the sandbox writes, and whether it happened."""

    target: Callable[..., Any]
    args: tuple[Any, ...]
    line: str
    happened: Callable[[], bool] | None = None


@pytest.fixture
def source(tmp_path) -> Path:
    path = tmp_path / "orders.json"
    path.write_text("{}")
    return path


@pytest.fixture
def outsider() -> Iterator[subprocess.Popen[bytes]]:
    """A process started outside any run."""
    process = subprocess.Popen(["sleep", "30"])
    yield process
    process.kill()
    process.wait()


@pytest.fixture
def listening(tmp_path) -> Iterator[tuple[socket.socket, Path]]:
    """A Unix socket listening in `tmp_path`, as a Docker or database socket does."""
    path = tmp_path / "d.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen(1)
        server.setblocking(False)
        yield server, path


def accepted(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


@pytest.fixture
def channels(tmp_path, source, outsider, listening) -> Iterator[dict[str, Channel]]:
    marker, copy, folder = tmp_path / "touched", tmp_path / "copy.json", tmp_path / "made"
    symlink, hardlink, database = tmp_path / "sym.json", tmp_path / "hard.json", tmp_path / "o.db"
    server, path = listening
    with socket.socket(socket.AF_UNIX) as client, socket.socket() as bound:
        yield {
            "process": Channel(
                os.system, (f"touch {marker}",), f"process `touch {marker}` started", marker.exists
            ),
            "file copy": Channel(
                shutil.copyfile, (source, copy), f"file written: {copy}", copy.exists
            ),
            "unix socket": Channel(
                client.connect,
                (str(path),),
                f"connection to the Unix socket {path}",
                lambda: accepted(server),
            ),
            "signal": Channel(
                os.kill, (outsider.pid, 0), f"signal sent: signal 0 to process {outsider.pid}"
            ),
            "bind": Channel(
                bound.bind,
                (("0.0.0.0", 0),),
                "socket bound to 0.0.0.0:0, open to other machines",
                lambda: bound.fileno() != -1 and bound.getsockname()[1] != 0,
            ),
            "symlink": Channel(
                os.symlink,
                (source, symlink),
                f"file written: {symlink} (symbolic link to {source})",
                symlink.is_symlink,
            ),
            "hard link": Channel(
                os.link,
                (source, hardlink),
                f"file written: {hardlink} (hard link to {source})",
                hardlink.exists,
            ),
            "mkdir": Channel(
                os.mkdir, (folder,), f"file written: {folder} (directory made)", folder.is_dir
            ),
            "sqlite": Channel(
                sqlite3.connect,
                (str(database),),
                f"file written: {database} (SQLite database)",
                database.exists,
            ),
        }


NAMES = [
    "process",
    "file copy",
    "unix socket",
    "signal",
    "bind",
    "symlink",
    "hard link",
    "mkdir",
    "sqlite",
]


def shop(work: Callable[[str], dict], model: ScriptedLlm | None = None) -> LlmAgent:
    script = ScriptedLlm([tool_call("work", {"job": "J1"}), "Done."])
    return LlmAgent(name="shop", model=model or script, tools=[work])


async def run(agent: LlmAgent, sandbox: str) -> EvalResult:
    work = agent.tools[0]
    return await run_eval(
        EvalCase(
            name="threads",
            agent=agent,
            tool_mocks={"work": work},  # the real body, on purpose
            first_message="Do J1",
            sandbox=sandbox,
        )
    )


def in_a_thread(channel: Channel) -> Callable[[str], dict]:
    def work(job: str) -> dict:
        """Does a job in the background."""
        thread = threading.Thread(target=channel.target, args=channel.args)
        thread.start()
        thread.join()
        return {"done": job}

    return work


@pytest.mark.parametrize("name", NAMES)
async def test_warn_lists_what_a_library_does_in_a_thread_the_tool_started(name, channels):
    channel = channels[name]

    result = await run(shop(in_a_thread(channel)), "warn")

    assert result.status == "passed", result.explain()
    assert result.warnings == (f"sandbox: {channel.line}, {BY}",)
    assert channel.happened is None or channel.happened()


# The refusal is raised in the thread, where nothing catches it: threading reports it.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.parametrize("name", NAMES)
async def test_strict_refuses_what_a_library_does_in_a_thread_the_tool_started(name, channels):
    channel = channels[name]

    result = await run(shop(in_a_thread(channel)), "strict")

    assert result.status == "error"
    assert result.error is not None
    assert result.error.type == "EvalSandboxError"
    assert result.error.message == f"sandbox: {channel.line}, {BY}{REFUSED}"
    assert channel.happened is None or not channel.happened()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
async def test_strict_refuses_a_connection_off_the_machine_from_a_thread():
    channel = Channel(urllib.request.urlopen, ("http://203.0.113.5/", None, 1), "")

    result = await run(shop(in_a_thread(channel)), "strict")

    assert result.error is not None
    assert result.error.message == f"sandbox: connection to 203.0.113.5:80, {BY}{REFUSED}"


@pytest.mark.parametrize("sandbox", ["warn", "strict"])
async def test_a_pool_made_in_the_tool_runs_its_jobs_as_the_runs(sandbox, tmp_path, source):
    copy = tmp_path / "copy.json"

    def work(job: str) -> dict:
        """Copies the orders in the background."""
        with ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(shutil.copyfile, source, copy).result()
        return {"done": job}

    result = await run(shop(work), sandbox)

    line = f"sandbox: file written: {copy}, {BY}"
    if sandbox == "warn":
        assert result.warnings == (line,)
        assert copy.exists()
    else:
        assert result.error is not None
        assert result.error.message == line + REFUSED
        assert not copy.exists()


async def test_a_pool_with_workers_from_before_the_run_never_takes_its_name(tmp_path, source):
    """Such a pool's jobs come from anyone (a client shares it): its new worker is no run's."""
    fresh, shared = tmp_path / "fresh.json", tmp_path / "shared.json"
    release = threading.Event()
    with ThreadPoolExecutor(max_workers=2) as before:
        busy = before.submit(release.wait, 10)  # its one worker is taken: the next job starts one

        def work(job: str) -> dict:
            """Copies the orders in the background, on two pools."""
            before.submit(shutil.copyfile, source, shared).result()
            with ThreadPoolExecutor(max_workers=1) as pool:
                pool.submit(shutil.copyfile, source, fresh).result()
            return {"done": job}

        result = await run(shop(work), "warn")
        release.set()
        busy.result()

    assert result.warnings == (f"sandbox: file written: {fresh}, {BY}",)
    assert shared.exists()


async def test_a_model_clients_own_thread_is_model_traffic_the_tools_is_not(tmp_path, source):
    cache, copy = tmp_path / "cache", tmp_path / "copy.json"
    cache.mkdir()
    steps = iter([tool_call("work", {"job": "J1"}), "Done."])

    def respond(request):  # a client writing its cache in a thread of its own, in the call
        thread = threading.Thread(target=shutil.copyfile, args=(source, cache / "r.json"))
        thread.start()
        thread.join()
        return next(steps)

    channel = Channel(shutil.copyfile, (source, copy), "")
    result = await run(shop(in_a_thread(channel), ScriptedLlm(responder=respond)), "warn")

    assert result.status == "passed", result.explain()
    assert result.warnings == (f"sandbox: file written: {copy}, {BY}",)
    assert (cache / "r.json").exists()


async def test_the_run_may_signal_its_own_subprocess_not_another(outsider):
    def work(job: str) -> dict:
        """Starts a helper, checks on another, and stops the helper."""
        helper = subprocess.Popen(["sleep", "30"])
        os.kill(outsider.pid, 0)
        helper.terminate()
        helper.wait()
        return {"done": job}

    result = await run(shop(work), "warn")

    by = "by tool `work` of agent `shop`"
    assert result.warnings == (
        f"sandbox: process `sleep 30` started, {by}",
        f"sandbox: signal sent: signal 0 to process {outsider.pid}, {by}",
    )


async def test_strict_refuses_a_lookup_of_a_name_under_localhost():
    def work(job: str) -> dict:
        """Asks a local development server."""
        socket.getaddrinfo("api.localhost", 80)
        return {"done": job}

    result = await run(shop(work), "strict")

    assert result.error is not None
    assert result.error.message == (
        f"sandbox: name lookup of api.localhost, by tool `work` of agent `shop`{REFUSED}"
    )
