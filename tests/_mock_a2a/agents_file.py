"""An AGENTS.py for ``adk-eval mock-a2a``: one remote agent, scripted."""

from adk_eval import RemoteMock, RemoteReply

remote_mocks = {
    "helper": RemoteMock.scripted(
        [RemoteReply("Booked: Paris.", artifacts={"receipt": {"id": 7}})],
        description="Books flights.",
    ),
}
