"""Remote agents (A2A) answered by mocks: the replies, and the A2A server that gives them.

* `_replies`: `RemoteReply` (one answer: text, task state, artifacts) and
  `RemoteMock` (scripted replies, or a model playing the agent from its card).
* `_served`: a mock as an a2a-sdk server application, and the stand-in
  `RemoteA2aAgent` that reaches it in process through ``httpx.ASGITransport``.
* `_local`: ``RemoteMock.local``, the remote agent's own ADK code served the
  way ``to_a2a()`` serves it, on a runner with the run's plugins (`_harness`).

The a2a SDK is imported only when a mock is served or stood in, and the replies
when a case names a remote mock: a run of a case without one imports `_harness`
alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from ._replies import RemoteMock as RemoteMock
    from ._replies import RemoteReply as RemoteReply
    from ._replies import remote_mock as remote_mock

__all__, __getattr__, __dir__ = lazy_names(
    __name__, {"RemoteMock": "._replies", "RemoteReply": "._replies", "remote_mock": "._replies"}
)
