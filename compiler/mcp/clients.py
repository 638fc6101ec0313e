"""Who is calling the server: the key of a client's own state, and the identity its calls are counted under.

Read from public request data only. A 2026-07-28 request belongs to no session; a handshake-era client is its
MCP session (``Mcp-Session-Id`` over streamable HTTP, the process over stdio); a client without a session is
what :class:`~.http_guard.ClientIdentity` named, else its network peer. Every key a server keeps starts with
its :func:`state_namespace`, so servers of other catalogues, sandboxes or policies never share one.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..reader.catalog import Catalog
from .http_guard import IDENTITY_KEY

__all__ = ["STDIO_CLIENT", "client_id", "client_key", "peer_key", "state_namespace"]

#: The one client of a stdio server: unique per process, so stdio servers sharing a --state file share no keys.
STDIO_CLIENT = f"stdio:{os.urandom(6).hex()}"


def client_key(ctx: ServerRequestContext[Any]) -> str | None:
    """Who is calling, for per-client state: a handshake-era HTTP session's id, :data:`STDIO_CLIENT`, or None.

    Read from public request data only: a 2026-07-28 request belongs to no session (None); over
    streamable HTTP the ``Mcp-Session-Id`` header names the session; over stdio the process has one client.
    """
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is None:
        return STDIO_CLIENT
    session = headers.get("mcp-session-id")
    return f"http:{session}" if session else None


def peer_key(ctx: ServerRequestContext[Any]) -> str:
    """Who sent a request without a session: its HTTP identity, else its network peer, else the stdio client.

    The HTTP identity is what :class:`~.http_guard.ClientIdentity` gave it (the token's principal, then the
    client key the server issued, else the connection); a peer is ``peer:<address>``; else :data:`STDIO_CLIENT`.
    """
    request_scope = getattr(ctx.request, "scope", None)
    if isinstance(request_scope, dict) and isinstance(request_scope.get(IDENTITY_KEY), str):
        return str(request_scope[IDENTITY_KEY])
    client = getattr(ctx.request, "client", None)
    host = getattr(client, "host", None)
    return f"peer:{host}" if host else STDIO_CLIENT


def client_id(namespace: str, ctx: ServerRequestContext[Any]) -> str:
    """Who is calling, for idempotency keys and call shares (docs/security.md, "Who a client is").

    Its MCP session (handshake era), else what :class:`~.http_guard.ClientIdentity` named (the token's
    principal, then the client key the server issued, else the connection), else the stdio process;
    prefixed by the server's :func:`state_namespace`, so servers of other catalogues or sandboxes never
    share a key.
    """
    return f"{namespace}/{client_key(ctx) or peer_key(ctx)}"


def state_namespace(catalog: Catalog) -> str:
    """What every state key of a server starts with: a digest of the catalogue and what changes its answers.

    The catalogue's location, the sandbox its file tools work in, read-only, the allowed namespaces and
    the host's context: two servers that differ in any of these never read each other's kept answers or
    working sets, even through one state file (issue 36: servers with two --sandbox folders shared one).
    """
    session = catalog.session
    facts = {
        "location": str(catalog.source.location),
        "sandbox": str(getattr(session.policy, "sandbox", None)),
        "read_only": session.read_only,
        "namespaces": session.allowed_namespaces,
        "context": sorted((str(k), repr(v)) for k, v in session.context.items()),
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:16]
