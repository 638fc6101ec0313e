"""The JSON type aliases every module shares."""

from __future__ import annotations

from typing import Any

#: A JSON object, as parsed.
Json = dict[str, Any]

#: Any JSON value.
JSON = Any

#: An artifact reference: ``{path, sha256, bytes}``.
Ref = dict[str, Any]
