"""``adk-eval studio TARGET`` as a user starts it: a real process, a real port."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def studio_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "adk_eval", "studio", *args]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


@pytest.mark.slow
def test_it_prints_a_loopback_url_with_a_random_token_that_every_request_needs(tmp_path):
    process = subprocess.Popen(
        studio_command(
            str(ROOT / "examples/toolbox/studio.py"), "--port", "0", "--db", str(tmp_path / "s.db")
        ),
        cwd=tmp_path,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("open "):
                break
        url = re.fullmatch(r"open (http://127\.0\.0\.1:(\d+))/\?token=(\S+)\n", lines[-1])
        assert url, "".join(lines)
        base, token = url.group(1), url.group(3)
        assert len(token) >= 24
        assert "2 target(s): Toolbox, Structured" in "".join(lines)
        assert httpx.get(f"{base}/api/targets").status_code == 401
        targets = httpx.get(f"{base}/api/targets", headers={"X-Studio-Token": token}).json()
        assert [t["name"] for t in targets] == ["Toolbox", "Structured"]
        # goldens of a config go where it says, relative to the working directory
        assert targets[0]["eval_set_path"] == str(tmp_path / "goldens/toolbox.evalset.json")
    finally:
        process.terminate()
        process.wait(30)
        process.stdout.close()


@pytest.mark.slow  # a few seconds of processes: make test runs it
def test_a_bad_target_is_one_clear_line(tmp_path):
    (tmp_path / "empty.py").write_text("x = 1\n")
    expected = {
        "nowhere.py:AGENTS": "no such file: nowhere.py",
        "empty.py": "empty.py defines no SimulatedAgentConfig and no EvalCase at module level",
        "empty.py:x": "empty.py:x is neither a SimulatedAgentConfig nor an EvalCase",
    }
    running = {  # the three at once: each pays the command's start-up
        target: subprocess.Popen(
            studio_command(target),
            cwd=tmp_path,
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for target in expected
    }
    for target, process in running.items():
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 2, stderr
        assert expected[target] in stderr
        assert stderr.count("\n") == 1, stderr


def start_studio(
    tmp_path: Path, port: int = 0, token: str | None = None
) -> tuple[subprocess.Popen, str, str]:
    """A studio process (a terminal's SIGINT, a free port by default); its process, URL, token."""
    from ..conftest import default_sigint

    extra = ["--token", token] if token else []
    process = subprocess.Popen(
        studio_command(
            str(ROOT / "examples/toolbox/studio.py"),
            *("--port", str(port), "--db", str(tmp_path / "s.db"), *extra),
        ),
        cwd=tmp_path,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=default_sigint,
    )
    lines = []
    while True:
        line = process.stdout.readline()
        assert line, "".join(lines)
        lines.append(line)
        if line.startswith("open "):
            break
    url = re.fullmatch(r"open (http://127\.0\.0\.1:\d+)/\?token=(\S+)\n", line)
    assert url, "".join(lines)
    return process, url.group(1), url.group(2)


@pytest.mark.slow  # a few seconds of processes: make test runs it
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_one_signal_stops_the_studio_with_a_page_listening_to_its_events(tmp_path, sig):
    process, base, token = start_studio(tmp_path)
    opened = threading.Event()

    def listen() -> None:  # what an open page does: hold the event stream
        with httpx.stream(
            "GET", f"{base}/api/events", headers={"X-Studio-Token": token}, timeout=None
        ) as stream:
            for _ in stream.iter_lines():
                opened.set()

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    try:
        assert opened.wait(30)
        process.send_signal(sig)
        started = time.monotonic()
        code = process.wait(20)
        took = time.monotonic() - started
        assert code == 0, process.stdout.read()
        assert took < 5, f"took {took:.1f} s to stop"
        listener.join(10)
        assert not listener.is_alive()  # the stream was ended, not left hanging
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)
        process.stdout.close()
