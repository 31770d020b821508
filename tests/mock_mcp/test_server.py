"""The mock MCP server's own lines on stderr: what a client sent is shown, never obeyed."""

from __future__ import annotations

from adk_eval.mock_mcp import LoggedCall
from adk_eval.mock_mcp._server import echo_call


def test_a_clients_tool_name_and_argument_keys_reach_the_terminal_escaped(capsys):
    tool = "get_order\x1b[2J\x1b]0;owned\x07"
    echo_call(
        LoggedCall(
            "1",
            tool,
            {"order\x1b[31m_id\r": "A\x1b[0m", "note\u202e": 1},
            {},
            error=f"unknown tool `{tool}`\x9b",
            answered_by="refused",
        )
    )
    line = capsys.readouterr().err
    assert line.count("\n") == 1
    assert line.endswith("\n")
    shown = line[:-1]
    assert all(ch.isprintable() for ch in shown), repr(shown)
    assert shown == (
        "adk-eval mock-mcp: get_order\\x1b[2J\\x1b]0;owned\\x07("
        "order\\x1b[31m_id\\r='A\\x1b[0m', note\\u202e=1) -> error: unknown tool "
        "`get_order\\x1b[2J\\x1b]0;owned\\x07`\\x9b"
    )
