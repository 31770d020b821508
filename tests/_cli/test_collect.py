"""adk-eval collect: the command's address and file checks, and the real process end to end."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from adk_eval._cli import main


def one_span(span_id: str) -> dict:
    span = {"traceId": "0" * 16 + span_id, "spanId": span_id, "name": "invocation"}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


@pytest.mark.parametrize(
    ("address", "error"),
    [
        ("0.0.0.0:4318", "pass --allow-remote to listen on it"),
        ("localhost", "is not HOST:PORT"),
        ("127.0.0.1:70000", "is not HOST:PORT"),
    ],
)
def test_an_address_it_will_not_use_is_one_line(tmp_path, address, error):
    result = CliRunner().invoke(main, ["collect", "--otlp", address, "--out", tmp_path / "t.db"])
    assert result.exit_code == 2
    assert error in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "t.db").exists()


def test_a_fifo_as_out_is_one_line(tmp_path):
    os.mkfifo(tmp_path / "spans")
    result = CliRunner().invoke(
        main, ["collect", "--otlp", "127.0.0.1:0", "--out", tmp_path / "spans"]
    )
    assert result.exit_code == 2
    assert "is a FIFO (named pipe), not a file" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_file_that_is_not_a_spans_file_is_refused_unchanged(tmp_path):
    other = tmp_path / "runs.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE runs (id INTEGER)")
    connection.close()
    before = other.read_bytes()
    result = CliRunner().invoke(main, ["collect", "--otlp", "127.0.0.1:0", "--out", other])
    assert result.exit_code == 2
    assert "exists and is not a spans file (its tables: runs)" in result.stderr
    assert other.read_bytes() == before


@pytest.mark.slow
def test_the_command_collects_until_sigterm(tmp_path):
    out = tmp_path / "traces.db"
    command = [sys.executable, "-m", "adk_eval", "collect", "--otlp", "127.0.0.1:0"]
    process = subprocess.Popen(
        [*command, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        first = process.stdout.readline()
        endpoint = re.search(r"OTLP_TRACES_ENDPOINT=(http://127\.0\.0\.1:\d+/v1/traces) ", first)
        assert endpoint, first
        url = endpoint.group(1)
        for number in (1, 2, 3):
            reply = httpx.post(url, json=one_span(f"{number:016x}"))
            assert (reply.status_code, reply.content) == (200, b"{}")
        assert httpx.post(url, content=b"junk", headers={"Content-Type": "x/y"}).status_code == 415
        time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0, stderr
    assert stdout.strip().splitlines() == [
        f"adk-eval collect: stopped; {out}: 3 span(s) kept, 3 received in 3 request(s); "
        "1 refused: 1 unsupported_type"
    ]
    assert not Path(f"{out}-wal").exists()  # closed cleanly: the log checkpointed away
    with sqlite3.connect(out) as connection:
        kept = connection.execute("SELECT span_id, resource_json FROM spans ORDER BY 1").fetchall()
    assert kept == [(f"{n:016x}", json.dumps({})) for n in (1, 2, 3)]
