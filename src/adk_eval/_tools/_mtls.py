"""MCP toolsets that connect to this machine skip ADK's client-certificate probe.

Before an `McpToolset` over HTTP (streamable HTTP or SSE) opens a session, ADK's
``MCPSessionManager._get_mtls_transport`` looks for a client certificate for
mutual TLS unless ``GOOGLE_API_USE_CLIENT_CERTIFICATE`` is set to something
other than ``true`` (ADK reads an unset variable as ``true``). It asks
``google.auth.default()`` for credentials: without a credentials file that
probes the cloud metadata server (3 s x 3 tries off Google Cloud) before every
case's first connection, and when a certificate is found, all of the toolset's
traffic goes through google-auth's session with a Google access token, sent to
the MCP server's URL.

Neither is wanted for a server on a loopback address (``localhost``,
``127.0.0.0/8``, ``::1``), so `skip_mtls_probe` gives that one toolset's
session manager a probe that answers "no mutual TLS". Toolsets to any other
host, and every toolset when the user set ``GOOGLE_API_USE_CLIENT_CERTIFICATE=true``
explicitly, keep ADK's behaviour; nothing global changes.
"""

from __future__ import annotations

import os
import sys
import urllib.parse

from .._sandbox._loopback import is_loopback

__all__ = ["is_loopback_url", "skip_mtls_probe"]

_SESSION_MANAGER_MODULE = "google.adk.tools.mcp_tool.mcp_session_manager"


def is_loopback_url(url: str) -> bool:
    """Whether `url` names this machine (the loopback rule of `_sandbox._loopback`)."""
    try:
        host = urllib.parse.urlparse(url).hostname
    except ValueError:  # a malformed address: not this machine's
        return False
    return host is not None and is_loopback(host)


async def _no_mtls() -> None:
    """The probe of a loopback toolset: plain HTTP, no credentials looked up."""
    return None


def skip_mtls_probe(toolset: object) -> bool:
    """Spares an MCP toolset to a loopback URL ADK's mutual-TLS probe; True when it did.

    Only that toolset's session manager changes (an instance attribute replaces
    ADK's ``_get_mtls_transport``). A toolset of another kind, over stdio, to any
    other host, or any toolset when ``GOOGLE_API_USE_CLIENT_CERTIFICATE`` is
    ``true``, is left as it is.
    """
    module = sys.modules.get(_SESSION_MANAGER_MODULE)
    if module is None:  # ADK's MCP support was never imported: there is no MCP toolset
        return False
    manager = getattr(toolset, "_mcp_session_manager", None)
    if not isinstance(manager, module.MCPSessionManager):
        return False
    url = getattr(manager._connection_params, "url", None)
    if not isinstance(url, str) or not is_loopback_url(url):
        return False
    if os.environ.get("GOOGLE_API_USE_CLIENT_CERTIFICATE", "").lower() == "true":
        return False  # asked for explicitly: ADK's probe runs
    if not hasattr(manager, "_get_mtls_transport"):  # pragma: no cover - another ADK
        return False
    manager._get_mtls_transport = _no_mtls
    return True
