"""The address checks every outbound connection of toolcat shares (http handlers, remote OpenAPI ``$ref``s).

An address is public or it is refused: loopback, private, link-local, CGNAT, reserved, multicast and
unspecified addresses (IPv4, IPv6, IPv4-mapped, 6to4, Teredo, and numeric host forms such as
``2130706433`` or ``0x7f.1``). :func:`connection_classes` gives HTTP(S) connections that connect to a
checked address while ``Host`` and the TLS name stay the name (no DNS-rebinding window). Stdlib only;
the network modules are imported when a connection needs them. Used by
:mod:`toolcat.reader.execution.network` (http handlers) and :mod:`toolcat.importers.openapi.refs`.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["blocked_reason", "connection_classes", "ip_of"]


def blocked_reason(address: Any) -> str | None:
    """Why an http handler may not connect to ``address`` unless the host lists it (None for a public address).

    An IPv6 address that carries an IPv4 one (IPv4-mapped, 6to4, Teredo) is judged by that one too.
    """
    if address.version == 6:
        embedded = [address.ipv4_mapped, address.sixtofour, *(address.teredo or ())]
        for inner in embedded:
            if inner is not None and blocked_reason(inner) is not None:
                return f"{blocked_reason(inner)} (inside {address})"
    for name in ("loopback", "link_local", "multicast", "unspecified", "private", "reserved", "site_local"):
        if getattr(address, f"is_{name}", False):
            return f"a {name.replace('_', '-')} address"
    if not address.is_global:
        return "not a public address"
    return None


def ip_of(text: str) -> Any:
    """The address a host string is, when it is one (dotted, or a numeric form libc accepts); else None."""
    import ipaddress  # noqa: PLC0415 - stdlib, imported on first use
    import socket  # noqa: PLC0415 - stdlib, imported on first use

    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        pass
    if text and all(c in "0123456789abcdefx." for c in text.lower()) and text[0].isdigit():
        try:  # 2130706433, 0x7f.1, 0177.0.0.1, 127.1: what getaddrinfo would connect to
            return ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    return None


@functools.cache
def connection_classes() -> tuple[type, type]:
    """HTTP and HTTPS connections that connect to a checked address while Host and SNI stay the name."""
    import http.client  # noqa: PLC0415 - stdlib, imported on first use
    import socket  # noqa: PLC0415 - stdlib, imported on first use

    class CheckedHTTPConnection(http.client.HTTPConnection):
        addresses: list[tuple[Any, ...]]

        def connect(self) -> None:
            last: OSError | None = None
            for family, sockaddr in self.addresses:
                sock = socket.socket(family, socket.SOCK_STREAM)
                try:
                    sock.settimeout(self.timeout)
                    sock.connect(sockaddr)
                except OSError as exc:
                    sock.close()
                    last = exc
                    continue
                self.sock = sock
                return
            raise last or OSError("no address to connect to")

    class CheckedHTTPSConnection(http.client.HTTPSConnection, CheckedHTTPConnection):
        def connect(self) -> None:
            CheckedHTTPConnection.connect(self)
            self.sock = self._context.wrap_socket(self.sock, server_hostname=self.host)  # type: ignore[attr-defined]

    return CheckedHTTPConnection, CheckedHTTPSConnection
