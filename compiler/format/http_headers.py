"""Which request headers a catalogue or an agent may set, shared by the importer, the build and the reader.

Framing and hop-by-hop headers (``Host``, ``Content-Length``, ``Transfer-Encoding``, ``Connection`` ...)
belong to the HTTP client: one set by a spec, a handler or an agent could split or smuggle requests,
so they are refused everywhere. Names must be RFC 9110 tokens; values may not hold control characters
(CR, LF, NUL, tab and the rest of C0, and DEL), which would let a value start a new header line.
"""

from __future__ import annotations

import re

#: Header names (lowercase) only the HTTP client sets; docs/security.md ("The http request builder").
FRAMING_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "upgrade",
        "expect",
    }
)
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def header_name_problem(name: str) -> str | None:
    """Why ``name`` may not be sent as a request header, or None when it may."""
    if not _TOKEN.match(name):
        return "is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)"
    if name.lower() in FRAMING_HEADERS:
        return "is a framing or hop-by-hop header that only the HTTP client sets"
    return None


def has_control(text: str) -> bool:
    """True when ``text`` holds a control character (CR, LF, NUL, tab, ...) that may not reach a header."""
    return _CONTROL.search(text) is not None
