"""A mock A2A server: adk-eval's remote-agent mocks served to agents outside this process.

Private: users reach it through ``adk-eval mock-a2a``; the mocks themselves are
`adk_eval.RemoteMock` and `adk_eval.RemoteReply`.

* `MockA2aServer`: the remote agents a file declares (``remote_mocks``), each
  answered by its `RemoteMock` over the real A2A protocol (its agent card at
  ``/NAME/.well-known/agent-card.json``, JSON-RPC ``message/send`` and
  ``message/stream`` at ``/NAME/``), on loopback; every exchange logged to an ADK
  session store that ``adk-eval score`` reads.
* ``adk-eval mock-a2a AGENTS.py --http 127.0.0.1:PORT`` starts one (see
  ``docs/harness.md``, "Remote agents (A2A)").

The modules: `_log` (the exchange log), `_server` (the file's mocks, the
application, uvicorn). The A2A protocol side is `adk_eval._tools._a2a`, the
same code a case's in-process mocks run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from ._server import MockA2aServer as MockA2aServer

_EXPORTS = {"MockA2aServer": "._server"}

__all__, __getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
