"""What counts as this machine: the one loopback rule of the sandbox and of every server.

The sandbox notes connections, binds and name lookups off loopback
(`_channels`); the servers adk-eval starts (the run viewer, the studio, the
mock MCP server, the span collector) listen on loopback only unless told
otherwise (``--allow-remote``), since anyone who reaches them could use them;
the viewer's and studio's ``Host`` check and the ADK toolsets spared a
client-certificate probe ask the same question. All of them ask `is_loopback`,
and every server refuses a remote host with `refuse_remote`: the same
`EvalSetupError`, in the same words.
"""

from __future__ import annotations

import ipaddress

from .._errors import EvalSetupError

__all__ = ["is_loopback", "refuse_remote"]

_LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine: a loopback address, or the name ``localhost``.

    An IPv6 address may come in brackets (``[::1]``) or with a zone
    (``::1%lo``); an IPv4 address mapped into IPv6 (``::ffff:127.0.0.1``) counts.
    ``*.localhost`` is not: RFC 6761 asks resolvers to answer loopback for those,
    but glibc's, without systemd's ``nss-myhostname`` or ``resolved`` (the default
    of most containers), sends the query to the name server, so the name leaves the
    machine, and the connection goes wherever its answer points. The empty host
    (every interface, to a server) is not.
    """
    host = host.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host.rstrip(".").lower() in _LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def refuse_remote(host: str, allow_remote: bool) -> None:
    """Refuses to serve on `host` unless it is loopback or `allow_remote` (``--allow-remote``).

    Raises:
        EvalSetupError: `host` is not loopback and `allow_remote` is false; one
            line, the same for every server.
    """
    if not allow_remote and not is_loopback(host):
        shown = host or "''"
        raise EvalSetupError(
            f"{shown} is not a loopback address, and anyone who can reach it could use this "
            "server; listen on 127.0.0.1 (or ::1), or pass --allow-remote to listen on it"
        )
