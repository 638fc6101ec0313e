"""``$ref`` resolution for ``toolcat import openapi``: reading the spec and the documents it refers to, and a ``referencing`` resolver.

Files are read relative to the spec and only inside its folder (or the ``--ref-root`` the user
names): no ``../`` or ``file:///`` escape, no symbolic link, nothing but regular files (so not
``/dev/zero``). A spec fetched by URL never reads the local disk. Remote documents are fetched
only when the caller allows them (``--allow-remote-refs``, off by default), and then through the network
guard of http handlers (issue 36; :func:`toolcat.reader.execution.network.checked_request`): public
addresses only (a name is resolved once, every address checked, the connection goes to a checked one),
no proxy from the environment, and a redirect followed only within the same origin (scheme, host,
port), at most :data:`MAX_REDIRECTS` hops. Every document is held to the build's
source limits (docs/sources.md, "Limits"): at most :data:`MAX_SPEC_BYTES`, read within
:data:`FETCH_TIMEOUT_S` in all, YAML aliases, nesting and integer literals bounded, and at most
:data:`MAX_DOCUMENTS` documents per import.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit
from urllib.request import pathname2url, url2pathname

import yaml

from ...build.sources.limits import (
    MAX_DEPTH,
    SCALAR_ERRORS,
    SourceParseError,
    YAMLSyntaxError,
    guard_yaml,
    json_int,
    json_too_deep,
    nesting,
    value_problems,
)
from ..common import ImporterError

#: The largest spec or referenced document read (bytes).
MAX_SPEC_BYTES = 64 * 1024 * 1024
#: One deadline for a remote document: connect, headers and the whole body (seconds).
FETCH_TIMEOUT_S = 30.0
#: Documents one import may read (the spec and every file or URL its $refs name).
MAX_DOCUMENTS = 1_000
#: Same-origin redirects a remote $ref may take.
MAX_REDIRECTS = 3
#: ``host:port`` entries a remote $ref may reach although they are not public (tests only; empty by default).
REF_PRIVATE_HOSTS: tuple[str, ...] = ()
_CHUNK = 1 << 16


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


def read_bytes(uri: str, *, remote_ok: bool, what: str, root: Path | None = None) -> bytes:
    """The bytes of a ``file:`` or (when ``remote_ok``) ``http(s):`` document; ``what`` names it in errors.

    A file must be a regular file, not a link, inside ``root`` when one is given.
    """
    scheme = urlsplit(uri).scheme
    if scheme == "file":
        return _read_file(Path(url2pathname(urlsplit(uri).path)), what, root)
    if scheme in ("http", "https"):
        if not remote_ok:
            raise ImporterError(
                f"{what}: {uri} is a remote document; it is not fetched unless you pass --allow-remote-refs"
            )
        return _fetch_guarded(uri, what) if what == "$ref" else _fetch(uri, what)
    raise ImporterError(f"{what}: {uri!r} is neither a file nor an http(s) URL")


def _read_file(path: Path, what: str, root: Path | None) -> bytes:
    resolved = Path(os.path.abspath(path))  # noqa: PTH100 - opened with O_NOFOLLOW, so not resolved here
    if root is not None and not path.resolve().is_relative_to(root):  # root is resolved: links and .. both count
        raise ImporterError(
            f"{what}: {path} is outside {root}, the folder $refs may read; move the file there, or name "
            "another folder with --ref-root"
        )
    try:
        fd = os.open(resolved, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ImporterError(f"{what}: cannot read {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ImporterError(f"{what}: {path} is not a regular file (a device, folder or pipe is never read)")
        if info.st_size > MAX_SPEC_BYTES:
            raise ImporterError(f"{path}: {info.st_size:,} bytes, more than the {MAX_SPEC_BYTES:,} an import reads")
        data = handle.read(MAX_SPEC_BYTES + 1)
    if len(data) > MAX_SPEC_BYTES:
        raise ImporterError(f"{path}: more than the {MAX_SPEC_BYTES:,} bytes an import reads")
    return data


def _fetch(uri: str, what: str) -> bytes:
    """A remote document, within :data:`FETCH_TIMEOUT_S` in all and :data:`MAX_SPEC_BYTES`."""
    request = urllib.request.Request(uri, headers={"Accept": "application/json, application/yaml, */*"})  # noqa: S310 - scheme checked by the caller
    deadline = time.monotonic() + FETCH_TIMEOUT_S
    chunks: list[bytes] = []
    size = 0
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as response:  # noqa: S310
            while True:
                if time.monotonic() > deadline:
                    raise ImporterError(f"{what}: {uri} took longer than {FETCH_TIMEOUT_S:.0f} s to download")
                chunk = response.read1(_CHUNK) if hasattr(response, "read1") else response.read(_CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_SPEC_BYTES:
                    raise ImporterError(f"{what}: {uri} is larger than the {MAX_SPEC_BYTES:,} bytes an import reads")
                chunks.append(chunk)
    except OSError as exc:
        raise ImporterError(f"{what}: cannot fetch {uri}: {exc}") from None
    return b"".join(chunks)


def _fetch_guarded(uri: str, what: str) -> bytes:
    """A remote ``$ref`` document through the handlers' network guard: public addresses, same-origin redirects."""
    deadline = time.monotonic() + FETCH_TIMEOUT_S
    current = uri
    origin = _origin(uri)
    for _hop in range(MAX_REDIRECTS + 1):
        status, location, body = _checked_get(current, what, deadline)
        if status in (301, 302, 303, 307, 308) and location:
            target = urljoin(current, location)
            if _origin(target) != origin:
                raise ImporterError(
                    f"{what}: {uri} redirects to another host ({_origin(target)}); a $ref's redirect is followed "
                    "only within its own scheme, host and port. Write the final URL in the $ref."
                )
            current = target
            continue
        if status != 200:
            raise ImporterError(f"{what}: cannot fetch {uri}: HTTP {status}")
        return body
    raise ImporterError(f"{what}: {uri} redirects more than {MAX_REDIRECTS} times")


def _checked_addresses(host: str, port: int, what: str, uri: str) -> list[tuple[Any, ...]]:
    """Every address ``host`` resolves to, each public (unless listed in REF_PRIVATE_HOSTS); else ImporterError."""
    import socket  # noqa: PLC0415 - stdlib, imported on first use

    from ...format.netguard import blocked_reason, ip_of  # noqa: PLC0415 - only when a $ref is remote

    listed = f"{host}:{port}" in REF_PRIVATE_HOSTS
    literal = ip_of(host)
    if literal is not None and not listed and (reason := blocked_reason(literal)) is not None:
        raise ImporterError(f"{what}: {uri} is not fetched: {host} is {reason}")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise ImporterError(f"{what}: cannot resolve {host}: {exc}") from None
    out: list[tuple[Any, ...]] = []
    for family, _, _, _, sockaddr in infos:
        address = ip_of(str(sockaddr[0]))
        reason = "not an IP address" if address is None else blocked_reason(address)
        if reason is not None and not listed:
            raise ImporterError(f"{what}: {uri} is not fetched: {host} resolves to {sockaddr[0]}, {reason}")
        if (family, sockaddr) not in out:
            out.append((family, sockaddr))
    return out


def _checked_get(uri: str, what: str, deadline: float) -> tuple[int, str | None, bytes]:
    """One GET to checked addresses (no proxy, no redirect followed): status, Location, body within the caps."""
    from ...format.netguard import connection_classes  # noqa: PLC0415 - only when a $ref is remote

    try:
        parts = urlsplit(uri)
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        raise ImporterError(f"{what}: {uri!r} is not a valid URL") from None
    host = (parts.hostname or "").rstrip(".")
    if parts.scheme.lower() not in ("http", "https") or not host or "@" in parts.netloc:
        raise ImporterError(f"{what}: {uri!r} is not an http(s) URL without credentials")
    addresses = _checked_addresses(host, port, what, uri)
    plain, tls = connection_classes()
    left = deadline - time.monotonic()
    if left <= 0:
        raise ImporterError(f"{what}: {uri} took longer than {FETCH_TIMEOUT_S:.0f} s to download")
    connection = (tls if parts.scheme.lower() == "https" else plain)(host, port, timeout=left)
    connection.addresses = addresses
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = {"Accept": "application/json, application/yaml, */*", "User-Agent": "toolcat-import"}
    chunks: list[bytes] = []
    size = 0
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        while chunk := response.read1(_CHUNK):
            if time.monotonic() > deadline:
                raise ImporterError(f"{what}: {uri} took longer than {FETCH_TIMEOUT_S:.0f} s to download")
            size += len(chunk)
            if size > MAX_SPEC_BYTES:
                raise ImporterError(f"{what}: {uri} is larger than the {MAX_SPEC_BYTES:,} bytes an import reads")
            chunks.append(chunk)
            if connection.sock is not None:
                connection.sock.settimeout(max(0.01, deadline - time.monotonic()))
        return response.status, response.getheader("location"), b"".join(chunks)
    except OSError as exc:
        raise ImporterError(f"{what}: cannot fetch {uri}: {exc}") from None
    finally:
        connection.close()


def _origin(uri: str) -> str:
    try:
        parts = urlsplit(uri)
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        return "?"
    return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}:{port}"


def parse_document(data: bytes, name: str) -> Any:
    """A JSON or YAML document; a syntax error names the line and column."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImporterError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        data = _parse(text, name)
    except SourceParseError as exc:
        where = f":{exc.line}:{exc.column}" if exc.line is not None else ""
        raise ImporterError(f"{name}{where}: {exc.message}; {exc.hint}") from None
    problems: list[tuple[str, str, str, Any, str]] = []
    value_problems(data, "$", problems)
    if problems:
        path, message, hint, value, _code = problems[0]
        raise ImporterError(f"{name}: at {path}: {message.replace('{text}', repr(value)[:40])}; {hint}")
    return data


def _parse(text: str, name: str) -> Any:
    """JSON or YAML under the build's source limits (depth, aliases, integer literals); syntax errors located."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            data = json.loads(text, parse_int=json_int)
        except RecursionError:
            raise json_too_deep(text) from None
        except ValueError as exc:
            line = getattr(exc, "lineno", 0)
            column = getattr(exc, "colno", 0)
            raise ImporterError(f"{name}:{line}:{column}: not valid JSON: {getattr(exc, 'msg', exc)}") from None
        if nesting(data) > MAX_DEPTH:
            raise json_too_deep(text)
        return data
    try:
        guard_yaml(text)
        return yaml.load(text, Loader=_SpecLoader)  # noqa: S506 - a safe loader
    except SCALAR_ERRORS as exc:  # !!int "", !!timestamp null
        raise ImporterError(f"{name}: not valid YAML: a value cannot be read ({type(exc).__name__}: {exc})") from None
    except (yaml.YAMLError, YAMLSyntaxError) as exc:  # the source limits' walk wraps PyYAML's error with its path
        error = exc.error if isinstance(exc, YAMLSyntaxError) else exc
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ImporterError(f"{name}{where}: not valid YAML: {problem}") from None


def spec_uri(spec: str) -> str:
    """An absolute URI for a spec given as a path or a URL."""
    if re.match(r"^https?://", spec):
        return spec
    path = Path(spec).resolve()
    return "file://" + pathname2url(str(path))


class Resolver:
    """``$ref`` lookups through ``referencing``: documents are loaded once, remote ones only when allowed."""

    def __init__(self, root_uri: str, root: Any, *, allow_remote_refs: bool, ref_root: Path | None = None) -> None:
        from referencing import Registry, Specification  # noqa: PLC0415 - the build extra

        self.allow_remote = allow_remote_refs
        #: The folder file $refs may read: the spec's own (or --ref-root); None for a spec fetched by URL (no file at all).
        spec_folder = Path(url2pathname(urlsplit(root_uri).path)).parent
        self.file_root: Path | None = (
            None if not root_uri.startswith("file:") else (ref_root if ref_root is not None else spec_folder).resolve()
        )
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
            if urlsplit(uri).scheme == "file" and self.file_root is None:
                raise ImporterError(f"{uri} is a local file; a spec fetched by URL never reads the local disk")
            if len(self._documents) >= MAX_DOCUMENTS:
                raise ImporterError(f"{uri}: the spec's $refs name more than {MAX_DOCUMENTS:,} documents")
            data = read_bytes(uri, remote_ok=self.allow_remote, what="$ref", root=self.file_root)
            self._documents[uri] = parse_document(data, uri)
        return self._documents[uri]

    def lookup(self, ref: str, base: str, where: str) -> tuple[str, Any]:
        """The absolute URI of ``ref`` (relative to ``base``) and the value it names."""
        from referencing.exceptions import Unresolvable  # noqa: PLC0415 - referencing is an optional extra

        target = urljoin(base, ref) if not ref.startswith("#") else urldefrag(base)[0] + ref
        if target in self._cache:
            return target, self._cache[target]
        try:
            value = self._resolver.lookup(target).contents
        except (TypeError, AttributeError, KeyError, IndexError, ValueError):  # a pointer through a scalar
            raise ImporterError(
                f"{self.label}: {self.show(where)}: $ref {ref!r} does not resolve (its pointer passes through a "
                "value that is not a mapping or a list)"
            ) from None
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
