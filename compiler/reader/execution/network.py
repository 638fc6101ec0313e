"""What a catalogue may run on this host: the handler policy, and the checked connection of http handlers.

A catalogue names its handlers, but the host decides which of them run. :class:`HandlerPolicy`
holds that decision, per handler type:

* ``python``: module prefixes (``"mypkg."``; ``"*"`` is any module);
* ``http``: ``host`` or ``host:port`` (``"*"`` any public host, ``"*.example.com"`` its subdomains);
* ``mcp``: exactly what may start: a command line or argv (``"python /srv/up.py"``,
  ``["node", "server.js"]``), a streamable-HTTP URL, or ``{"command" | "url", "env"?, "cwd"?}``.
  A handler runs only when its command, env and cwd (or its url) equal an entry;
* ``skill`` handlers read the catalogue's own verified files and always run.

A type the host does not name keeps the source's default: everything for a folder the host
built (it is trusted to name its handlers), nothing for a catalogue opened by URL. ``kind``
and every other field of a spec come from the catalogue and never widen the policy.

Whatever the policy, an http handler connects only to public addresses: a name is resolved
once, every address it resolves to is checked, and the connection goes to a checked address
(the ``Host`` header and TLS name stay the name). Loopback, private, link-local, reserved,
multicast and unspecified addresses (IPv4, IPv6, IPv4-mapped, 6to4, Teredo, and numeric host
forms such as ``2130706433`` or ``0x7f.1``) are reached only when the host lists that host
(and port) under ``http``. Redirects are not followed.

The policy itself lives in :mod:`toolcat.reader.execution.policy` (re-exported here); this module
holds the address checks and the checked connection. Stdlib only; the network modules are
imported when a call needs them.
"""

from __future__ import annotations

from typing import Any

from ...format.envelope import ReaderError
from ...format.netguard import blocked_reason, ip_of
from ...format.netguard import connection_classes as _connection_classes
from .policy import (
    HOW_TO_ALLOW,
    HandlerPolicy,
)

__all__ = ["blocked_reason", "checked_request", "http_static_refusal", "static_address_refusal"]


# -- http handlers: the address check and the checked connection (format/netguard.py) --------------------
def static_address_refusal(host: str, port: int, policy: HandlerPolicy) -> str | None:
    """Why ``host`` is refused without a DNS lookup (it is a non-public address literal), else None."""
    address = ip_of(host)
    if address is None or policy.http_listed(host, port):
        return None
    reason = blocked_reason(address)
    return f"{host} is {reason}" if reason else None


def http_static_refusal(tool_id: str, url: str, policy: HandlerPolicy) -> ReaderError | None:
    """The refusal of a filled http handler URL that needs no DNS lookup to decide (for dry runs), else None."""
    from urllib.parse import urlsplit  # noqa: PLC0415 - stdlib, imported on first use

    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        return None  # the run reports the invalid URL
    host = (parts.hostname or "").rstrip(".")
    if not policy.allows_http(host, port):
        return policy.refusal(tool_id, {"type": "http", "url": f"{parts.scheme}://{parts.netloc}/"}) or _refused(
            tool_id, host, port, "the host does not allow it"
        )
    static = static_address_refusal(host, port, policy)
    return None if static is None else _refused(tool_id, host, port, static)


def _refused(tool_id: str, host: str, port: int, why: str) -> ReaderError:
    return ReaderError(
        "NOT_AUTHORIZED",
        f"{tool_id}: http handlers do not reach {host}:{port}: {why}",
        help_path=tool_id,
        details={"handler": "http", "target": f"{host}:{port}"},
        hints=[
            f"http handlers reach only public addresses unless the host lists the host:port: {HOW_TO_ALLOW['http']}.",
            "Tell the user this endpoint is not enabled on this host; do not retry.",
        ],
    )


def _resolve(tool_id: str, host: str, port: int, policy: HandlerPolicy) -> list[tuple[Any, ...]]:
    """The addresses to connect to: every one the name resolves to, each checked (unless the host lists it)."""
    import socket  # noqa: PLC0415 - stdlib, imported on first use

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise ReaderError(
            "UNAVAILABLE",
            f"{tool_id}: cannot resolve {host}: {exc}",
            help_path=tool_id,
            details={"target": f"{host}:{port}"},
            hints=["The endpoint's name does not resolve; retry later or tell the user."],
        ) from None
    listed = policy.http_listed(host, port)
    out: list[tuple[Any, ...]] = []
    for family, _, _, _, sockaddr in infos:
        address = ip_of(str(sockaddr[0]))
        reason = None if address is None else blocked_reason(address)
        if address is None or (reason is not None and not listed):
            raise _refused(tool_id, host, port, f"it resolves to {sockaddr[0]}, {reason or 'not an IP address'}")
        if (family, sockaddr) not in out:
            out.append((family, sockaddr))
    return out


def checked_request(
    tool_id: str,
    method: str,
    url: str,
    body: bytes | None,
    headers: dict[str, str],
    *,
    timeout: float,
    limit: int,
    policy: HandlerPolicy,
) -> tuple[int, dict[str, str], bytes]:
    """Send one request for an http handler; ``(status, lowercase headers, body)``; never follows a redirect.

    The scheme must be http(s), the host allowed by ``policy`` and every address it resolves to
    public (unless the host lists it); the connection goes to those checked addresses. ``timeout``
    bounds the whole exchange; a body over ``limit`` bytes stops the read (the caller reports it).
    """
    import time  # noqa: PLC0415 - stdlib, imported on first use
    from urllib.parse import urlsplit  # noqa: PLC0415 - stdlib, imported on first use

    started = time.monotonic()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ReaderError(
            "VALIDATION_ERROR",
            f"{tool_id}: the URL {url.split('?', 1)[0]!r:.200} is invalid ({exc})",
            help_path=tool_id,
            details={"field_errors": []},
        ) from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if scheme not in ("http", "https") or not host or "@" in parts.netloc:
        raise ReaderError(
            "NOT_EXECUTABLE",
            f"{tool_id}: http handlers call http(s)://host/... URLs without "
            f"credentials, not {url.split('?', 1)[0]!r:.200}",
            help_path=tool_id,
        )
    if not all(c.isascii() and (c.isalnum() or c in ".-_:") for c in host):
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise ReaderError(
                "VALIDATION_ERROR",
                f"{tool_id}: {host!r:.100} is not a valid host name",
                help_path=tool_id,
                details={"field_errors": []},
            ) from None
    port = port or (443 if scheme == "https" else 80)
    if not policy.allows_http(host, port):
        refusal = policy.refusal(tool_id, {"type": "http", "url": f"{scheme}://{parts.netloc}/"})
        raise refusal or _refused(tool_id, host, port, "the host does not allow it")
    static = static_address_refusal(host, port, policy)
    if static is not None:
        raise _refused(tool_id, host, port, static)
    addresses = _resolve(tool_id, host, port, policy)
    plain, tls = _connection_classes()
    connection = (tls if scheme == "https" else plain)(host, port, timeout=timeout)
    connection.addresses = addresses
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            left = timeout - (time.monotonic() - started)
            if left <= 0:
                raise TimeoutError(f"the response took longer than {timeout} s")
            if connection.sock is not None:
                connection.sock.settimeout(left)
            chunk = response.read1(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return response.status, {k.lower(): v for k, v in response.getheaders()}, b"".join(chunks)
    finally:
        connection.close()
