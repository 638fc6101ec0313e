"""``$ref`` resolution for ``toolcat import openapi``: reading the spec and the documents it refers to, and a ``referencing`` resolver.

Files are read relative to the spec; remote documents only when the caller allows them
(``--allow-remote-refs``), and no document larger than :data:`MAX_SPEC_BYTES`.
"""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit
from urllib.request import pathname2url, url2pathname

import yaml

from ..common import ImporterError

#: The largest spec or referenced document read (bytes).
MAX_SPEC_BYTES = 64 * 1024 * 1024
FETCH_TIMEOUT_S = 30.0


def pointer(*parts: object) -> str:
    """A JSON pointer (RFC 6901) from its unescaped parts."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


# -- loading ---------------------------------------------------------------------------------------


class _SpecLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML without the timestamp rule: ``2024-01-01`` stays the string JSON would hold."""


_SpecLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in rules if tag != "tag:yaml.org,2002:timestamp"]
    for key, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def read_bytes(uri: str, *, remote_ok: bool, what: str) -> bytes:
    """The bytes of a ``file:`` or (when ``remote_ok``) ``http(s):`` document; ``what`` names it in errors."""
    scheme = urlsplit(uri).scheme
    if scheme == "file":
        path = Path(url2pathname(urlsplit(uri).path))
        try:
            size = path.stat().st_size
            if size > MAX_SPEC_BYTES:
                raise ImporterError(f"{path}: {size:,} bytes, more than the {MAX_SPEC_BYTES:,} an import reads")
            return path.read_bytes()
        except OSError as exc:
            raise ImporterError(f"{what}: cannot read {path}: {exc.strerror or exc}") from None
    if scheme in ("http", "https"):
        if not remote_ok:
            raise ImporterError(
                f"{what}: {uri} is a remote document; it is not fetched unless you pass --allow-remote-refs"
            )
        request = urllib.request.Request(uri, headers={"Accept": "application/json, application/yaml, */*"})  # noqa: S310 - scheme checked above
        try:
            with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as response:  # noqa: S310
                data = bytes(response.read(MAX_SPEC_BYTES + 1))
        except OSError as exc:
            raise ImporterError(f"{what}: cannot fetch {uri}: {exc}") from None
        if len(data) > MAX_SPEC_BYTES:
            raise ImporterError(f"{what}: {uri} is larger than the {MAX_SPEC_BYTES:,} bytes an import reads")
        return data
    raise ImporterError(f"{what}: {uri!r} is neither a file nor an http(s) URL")


def parse_document(data: bytes, name: str) -> Any:
    """A JSON or YAML document; a syntax error names the line and column."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImporterError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if text.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError as exc:
            line = getattr(exc, "lineno", 0)
            column = getattr(exc, "colno", 0)
            raise ImporterError(f"{name}:{line}:{column}: not valid JSON: {getattr(exc, 'msg', exc)}") from None
    try:
        return yaml.load(text, Loader=_SpecLoader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ImporterError(f"{name}{where}: not valid YAML: {problem}") from None


def spec_uri(spec: str) -> str:
    """An absolute URI for a spec given as a path or a URL."""
    if re.match(r"^https?://", spec):
        return spec
    path = Path(spec).resolve()
    return "file://" + pathname2url(str(path))


class Resolver:
    """``$ref`` lookups through ``referencing``: documents are loaded once, remote ones only when allowed."""

    def __init__(self, root_uri: str, root: Any, *, allow_remote_refs: bool) -> None:
        from referencing import Registry, Specification  # noqa: PLC0415 - the build extra

        self.allow_remote = allow_remote_refs
        self.root_uri = root_uri
        self.label = unquote(root_uri.removeprefix("file://"))
        opaque: Any = Specification.OPAQUE  # OpenAPI documents are not JSON Schema: no $id, no anchors
        self._resource = opaque.create_resource
        self._documents: dict[str, Any] = {root_uri: root}

        def retrieve(uri: str) -> Any:
            return self._resource(self.document(uri))

        self._registry: Any = Registry(retrieve=retrieve).with_resource(root_uri, self._resource(root))  # type: ignore[call-arg]
        self._resolver = self._registry.resolver(base_uri=root_uri)
        self._cache: dict[str, Any] = {}

    def document(self, uri: str) -> Any:
        """The parsed document at ``uri`` (no fragment)."""
        if uri not in self._documents:
            data = read_bytes(uri, remote_ok=self.allow_remote, what="$ref")
            self._documents[uri] = parse_document(data, uri)
        return self._documents[uri]

    def lookup(self, ref: str, base: str, where: str) -> tuple[str, Any]:
        """The absolute URI of ``ref`` (relative to ``base``) and the value it names."""
        from referencing.exceptions import Unresolvable  # noqa: PLC0415

        target = urljoin(base, ref) if not ref.startswith("#") else urldefrag(base)[0] + ref
        if target in self._cache:
            return target, self._cache[target]
        try:
            value = self._resolver.lookup(target).contents
        except ImporterError as exc:
            raise ImporterError(f"{self.label}: {self.show(where)}: $ref {ref!r}: {exc}") from None
        except Unresolvable as exc:
            cause: BaseException | None = exc
            while cause is not None and not isinstance(cause, ImporterError):
                cause = cause.__cause__ or cause.__context__
            if cause is not None:
                raise ImporterError(f"{self.label}: {self.show(where)}: $ref {ref!r}: {cause}") from None
            raise ImporterError(
                f"{self.label}: {self.show(where)}: $ref {ref!r} does not resolve (nothing at "
                f"{unquote(urldefrag(target)[1]) or '/'} in {urldefrag(target)[0]})"
            ) from None
        self._cache[target] = value
        return target, value

    def show(self, where: str) -> str:
        """``where`` (an absolute URI with a pointer) as the reader wants it: the pointer in the spec, or file#pointer."""
        document, fragment = urldefrag(where)
        if document == urldefrag(self.root_uri)[0]:
            return f"at {unquote(fragment) or '/'}"
        return f"at {document}#{unquote(fragment)}"

    def deref(self, node: Any, base: str, where: str) -> tuple[Any, str, str]:
        """Follow ``$ref`` s (not into schemas) until a value: (value, its document URI, its pointer URI)."""
        seen: set[str] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            target, node = self.lookup(node["$ref"], base, where)
            if target in seen:
                raise ImporterError(f"{self.label}: {self.show(where)}: $ref {target} refers to itself")
            seen.add(target)
            base, where = urldefrag(target)[0], target
        return node, base, where
