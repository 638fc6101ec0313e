"""``toolcat import openapi``: every operation of an OpenAPI 3.0/3.1 or Swagger 2.0 spec as a tool with an http handler.

One tool per operation, id ``<namespace>.<operationId in snake_case>`` (else method + path),
at the node of its first tag; ``args_schema`` is one flat object of the path, query, header
and cookie parameters and the request body's properties (the whole body under ``body``
when a name collides or the body is not an object). ``$ref`` s are resolved with
``referencing`` (files relative to the spec; remote documents only with
``allow_remote_refs``); recursive schemas are cut at their first re-entry, deep ones at
:data:`MAX_SCHEMA_DEPTH`; OpenAPI's schema dialect becomes JSON Schema 2020-12. Every lossy
step is a warning naming its JSON pointer. docs/sources.md ("Importing") lists the rules.
"""

from __future__ import annotations

import json
import logging
import re
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urldefrag, urljoin, urlsplit
from urllib.request import pathname2url, url2pathname

import yaml

from .common import (
    STATE_DIR,
    STATE_FILE,
    ImporterError,
    ImportResult,
    Json,
    Warnings,
    apply_overrides,
    dump_yaml,
    node_file,
    read_overrides,
    read_state,
    segment,
    snake,
    summary_of,
    write_tree,
)

log = logging.getLogger(__name__)

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
READ_METHODS = frozenset({"GET", "HEAD"})
#: Nesting of schemas (properties, items, ...) kept; deeper ones become ``{}`` with a warning.
MAX_SCHEMA_DEPTH = 12
#: A ``$ref`` met again inside itself is expanded this many times, then cut with a warning.
MAX_RECURSION = 1
#: The largest spec or referenced document read (bytes).
MAX_SPEC_BYTES = 64 * 1024 * 1024
FETCH_TIMEOUT_S = 30.0
#: Headers OpenAPI says to ignore as parameters: the handler sets them itself.
RESERVED_HEADERS = frozenset({"accept", "content-type", "authorization"})
#: Annotation-only keywords JSON Schema has no place for; dropped with a warning.
DROPPED_KEYWORDS = ("discriminator", "xml", "externalDocs")
#: Swagger 2.0 collectionFormat → OpenAPI 3 (style, explode) for query parameters.
COLLECTION_FORMATS = {
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "tsv": ("form", False),
    "pipes": ("pipeDelimited", False),
    "multi": ("form", True),
}
DEFAULT_STYLE = {
    "query": ("form", True),
    "cookie": ("form", True),
    "path": ("simple", False),
    "header": ("simple", False),
}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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


def _read_bytes(uri: str, *, remote_ok: bool, what: str) -> bytes:
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
            data = _read_bytes(uri, remote_ok=self.allow_remote, what="$ref")
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


# -- schemas -----------------------------------------------------------------------------------------


class SchemaConverter:
    """OpenAPI / Swagger schema objects as self-contained JSON Schema 2020-12 (refs inlined, cycles cut)."""

    def __init__(self, resolver: Resolver, warnings: Warnings, version: str) -> None:
        self.resolver = resolver
        self.warnings = warnings
        self.swagger = version.startswith("2")
        self.v31 = version.startswith("3.1")

    def convert(
        self, node: Any, base: str, where: str, *, request: bool = True, stack: tuple[str, ...] = (), depth: int = 0
    ) -> Any:
        """``node`` (at the absolute pointer URI ``where``) in the project's schema dialect."""
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            raise ImporterError(
                f"{self.resolver.label}: {self.resolver.show(where)}: a schema must be an object, got {type(node).__name__}"
            )
        show = self.resolver.show(where).removeprefix("at ")
        if depth > MAX_SCHEMA_DEPTH:
            self.warnings.add(f"schema nested deeper than {MAX_SCHEMA_DEPTH} levels cut to any value", show)
            return {"description": "(nested deeper than the import keeps; any value)"}
        ref = node.get("$ref")
        if isinstance(ref, str):
            target, value = self.resolver.lookup(ref, base, where)
            if stack.count(target) >= MAX_RECURSION:
                self.warnings.add("recursive $ref cut (nested values are any value of its type)", show)
                out: Json = {
                    "description": f"(recursive: {unquote(urldefrag(target)[1]).rsplit('/', 1)[-1]}, "
                    "same shape as its parent)"
                }
                if isinstance(value, dict) and isinstance(value.get("type"), str):
                    out["type"] = value["type"]
                return out
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if siblings and not self.v31 and not isinstance(value, bool):
                siblings = {k: v for k, v in siblings.items() if k in ("description", "summary")}
            merged = value if not siblings or not isinstance(value, dict) else {**value, **siblings}
            return self.convert(
                merged, urldefrag(target)[0], target, request=request, stack=(*stack, target), depth=depth
            )
        return self._object(node, base, where, show, request=request, stack=stack, depth=depth)

    def _object(
        self, node: Json, base: str, where: str, show: str, *, request: bool, stack: tuple[str, ...], depth: int
    ) -> Json:
        out: Json = {}
        nullable = bool(node.get("nullable")) or bool(node.get("x-nullable"))
        for key, value in node.items():
            here = f"{where}/{key}"
            if key.startswith("x-") or key == "nullable":
                continue
            if key in DROPPED_KEYWORDS:
                self.warnings.add(f"'{key}' dropped (JSON Schema has no such keyword)", f"{show}/{key}")
                continue
            if key == "example":
                out.setdefault("examples", [value])
            elif key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(value, dict):
                props: Json = {}
                for name, sub in value.items():
                    if request and key == "properties" and isinstance(sub, dict) and sub.get("readOnly") is True:
                        continue
                    props[name] = self.convert(
                        sub, base, f"{here}/{pointer(name)[1:]}", request=request, stack=stack, depth=depth + 1
                    )
                out[key] = props
            elif key in (
                "items",
                "additionalProperties",
                "not",
                "contains",
                "propertyNames",
                "additionalItems",
                "unevaluatedProperties",
                "unevaluatedItems",
                "if",
                "then",
                "else",
            ):
                if isinstance(value, list) and key == "items":  # draft-4 tuple form
                    out["prefixItems"] = [
                        self.convert(v, base, f"{here}/{i}", request=request, stack=stack, depth=depth + 1)
                        for i, v in enumerate(value)
                    ]
                else:
                    out[key] = self.convert(value, base, here, request=request, stack=stack, depth=depth + 1)
            elif key in ("allOf", "anyOf", "oneOf", "prefixItems") and isinstance(value, list):
                out[key] = [
                    self.convert(v, base, f"{here}/{i}", request=request, stack=stack, depth=depth + 1)
                    for i, v in enumerate(value)
                ]
            elif key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
                bound = "minimum" if key == "exclusiveMinimum" else "maximum"
                if value and bound in node:
                    out[key] = node[bound]
            elif key in ("minimum", "maximum") and node.get(f"exclusive{key.capitalize()}") is True:
                continue
            elif key == "type" and value == "file":
                self.warnings.add("Swagger 'type: file' became a binary string (upload the content as text)", show)
                out["type"] = "string"
                out["format"] = "binary"
            else:
                out[key] = value
        if "required" in out and isinstance(out.get("properties"), dict) and request:
            kept = [r for r in out["required"] if r in out["properties"] or "properties" not in node]
            if kept != out["required"]:
                out["required"] = kept
            if not out["required"]:
                del out["required"]
        if nullable:
            self._nullable(out, show)
        return out

    def _nullable(self, out: Json, show: str) -> None:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"] if kind != "null" else "null"
        elif isinstance(kind, list):
            if "null" not in kind:
                out["type"] = [*kind, "null"]
        elif any(k in out for k in ("anyOf", "oneOf", "allOf", "$ref")):
            inner = {k: out.pop(k) for k in list(out) if k not in ("description", "title", "default", "examples")}
            out["anyOf"] = [inner, {"type": "null"}]
            return
        else:
            self.warnings.add("'nullable' without a type has nothing to add null to (dropped)", show)
            return
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]


# -- operations ------------------------------------------------------------------------------------------


class OpenApiImporter:
    """One spec, read and turned into tool definitions."""

    def __init__(
        self,
        doc: Any,
        uri: str,
        *,
        namespace: str,
        allow_remote_refs: bool,
        server: str | None,
        server_vars: dict[str, str],
    ) -> None:
        if not isinstance(doc, dict):
            raise ImporterError(f"{uri}: at /: expected an OpenAPI document (a mapping), got {type(doc).__name__}")
        self.doc = doc
        self.uri = urldefrag(uri)[0]
        self.version = self._version()
        self.swagger = self.version.startswith("2")
        self.namespace = namespace
        self.warnings = Warnings()
        self.resolver = Resolver(self.uri, doc, allow_remote_refs=allow_remote_refs)
        self.schemas = SchemaConverter(self.resolver, self.warnings, self.version)
        self.server_override = server
        self.server_vars = server_vars
        self.env_names: dict[str, str] = {}

    def _version(self) -> str:
        swagger, openapi = self.doc.get("swagger"), self.doc.get("openapi")
        if swagger is not None:
            if str(swagger) != "2.0":
                raise ImporterError(
                    f"{self.uri}: at /swagger: unsupported version {swagger!r}; "
                    "toolcat imports Swagger 2.0 and OpenAPI 3.0/3.1"
                )
            return "2.0"
        if isinstance(openapi, str) and re.match(r"^3\.[01](\.\d+)?(-.*)?$", openapi):
            return openapi
        if openapi is None:
            raise ImporterError(
                f"{self.uri}: at /openapi: missing; not an OpenAPI document (expected "
                "'openapi: 3.0.x', 'openapi: 3.1.x' or 'swagger: \"2.0\"' at the top)"
            )
        raise ImporterError(
            f"{self.uri}: at /openapi: unsupported version {openapi!r}; toolcat imports Swagger 2.0 and OpenAPI 3.0/3.1"
        )

    def at(self, *parts: object) -> str:
        """The absolute URI of a pointer into the spec."""
        return self.uri + "#" + quote(pointer(*parts), safe="/~:@!$&'()*+,;=-._")

    def fail(self, where: str, message: str) -> ImporterError:
        """An error naming the spec and the JSON pointer."""
        return ImporterError(f"{self.resolver.label}: {self.resolver.show(where)}: {message}")

    # servers ------------------------------------------------------------------------------------------
    def server_url(self, op: Json, item: Json, where: str) -> str:
        """The base URL for an operation: --server, else the operation's, path's or spec's first server."""
        if self.server_override:
            return self.server_override.rstrip("/")
        if self.swagger:
            host = self.doc.get("host")
            if not host:
                raise self.fail(self.at("host"), "the spec names no host; pass --server https://host/base")
            schemes = op.get("schemes") or self.doc.get("schemes") or ["https"]
            scheme = "https" if "https" in schemes else str(schemes[0])
            return f"{scheme}://{host}{self.doc.get('basePath') or ''}".rstrip("/")
        for servers, at in (
            (op.get("servers"), where + "/servers"),
            (item.get("servers"), None),
            (self.doc.get("servers"), self.at("servers")),
        ):
            if isinstance(servers, list) and servers and isinstance(servers[0], dict):
                return self._server(servers[0], at or self.at("servers"))
        raise self.fail(self.at("servers"), "the spec names no server; pass --server https://host/base")

    def _server(self, server: Json, where: str) -> str:
        url = str(server.get("url", ""))
        variables = server.get("variables") or {}

        def fill(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in self.server_vars:
                return self.server_vars[name]
            spec = variables.get(name)
            if not isinstance(spec, dict) or "default" not in spec:
                raise self.fail(where, f"server variable {name!r} has no default; pass --server-var {name}=VALUE")
            return str(spec["default"])

        url = re.sub(r"\{([^{}]+)\}", fill, url).rstrip("/")
        if not re.match(r"^https?://", url):
            joined = urljoin(self.uri, url) if re.match(r"^https?://", self.uri) else None
            if joined is None:
                raise self.fail(
                    where, f"server URL {url!r} is not an absolute http(s) URL; pass --server https://host/base"
                )
            url = joined.rstrip("/")
        return url

    # security -----------------------------------------------------------------------------------------
    def auth(self, op: Json, where: str) -> Json | None:
        """The handler's ``auth`` for the first security requirement toolcat can send, secrets from env vars."""
        requirements = op.get("security", self.doc.get("security"))
        if not isinstance(requirements, list) or not requirements:
            return None
        schemes = (
            self.doc.get("securityDefinitions")
            if self.swagger
            else (self.doc.get("components") or {}).get("securitySchemes")
        ) or {}
        optional = any(isinstance(r, dict) and not r for r in requirements)
        for requirement in requirements:
            if not isinstance(requirement, dict) or len(requirement) != 1:
                continue
            name = next(iter(requirement))
            scheme, _, _ = self.resolver.deref(schemes.get(name), self.uri, where)
            auth = self._auth_for(str(name), scheme) if isinstance(scheme, dict) else None
            if auth is not None:
                return {**auth, "optional": True} if optional else auth
        if not optional:
            self.warnings.add(
                "no supported security scheme (the handler sends no credentials)",
                self.resolver.show(where).removeprefix("at "),
            )
        return None

    def _auth_for(self, name: str, scheme: Json) -> Json | None:
        kind = str(scheme.get("type", "")).lower()
        http_scheme = str(scheme.get("scheme", "")).lower()
        if kind in ("oauth2", "openidconnect") or (kind == "http" and http_scheme == "bearer"):
            return {"type": "bearer", "env": self._env(name, "TOKEN")}
        if kind == "basic" or (kind == "http" and http_scheme == "basic"):
            return {"type": "basic", "env": self._env(name, "BASIC_AUTH")}
        if kind == "apikey" and scheme.get("in") in ("header", "query", "cookie") and scheme.get("name"):
            return {
                "type": "apiKey",
                "in": scheme["in"],
                "name": str(scheme["name"]),
                "env": self._env(name, "API_KEY"),
            }
        return None

    def _env(self, scheme_name: str, suffix: str) -> str:
        """``<NAMESPACE>_<SUFFIX>``, or with the scheme's name when two schemes would share it."""
        if scheme_name in self.env_names:
            return self.env_names[scheme_name]
        plain = f"{self.namespace}_{suffix}".upper()
        taken = set(self.env_names.values())
        name = plain if plain not in taken else f"{self.namespace}_{segment(scheme_name)}_{suffix}".upper()
        self.env_names[scheme_name] = name
        return name

    # parameters -------------------------------------------------------------------------------------------
    def parameters(self, item: Json, op: Json, item_where: str, op_where: str) -> list[tuple[Json, str, str]]:
        """The operation's parameters, path-level ones first, an operation's own replacing one of the same (name, in)."""
        merged: dict[tuple[str, str], tuple[Json, str, str]] = {}
        for params, where in ((item.get("parameters"), item_where), (op.get("parameters"), op_where)):
            if params is None:
                continue
            if not isinstance(params, list):
                raise self.fail(f"{where}/parameters", "'parameters' must be a list")
            for index, raw in enumerate(params):
                here = f"{where}/parameters/{index}"
                param, base, at = self.resolver.deref(raw, self.uri, here)
                if not isinstance(param, dict) or not isinstance(param.get("name"), str) or "in" not in param:
                    raise self.fail(here, "a parameter needs 'name' and 'in'")
                merged[(param["name"], str(param["in"]))] = (param, base, at)
        return list(merged.values())

    def param_schema(self, param: Json, base: str, where: str) -> Json:
        """A parameter's schema (Swagger 2.0 keeps it on the parameter itself), with its description."""
        if "schema" in param and param.get("in") != "body":
            schema = self.schemas.convert(param["schema"], base, f"{where}/schema")
        elif isinstance(param.get("content"), dict) and param["content"]:
            media, content = next(iter(param["content"].items()))
            self.warnings.add(
                "a parameter with 'content' is sent as plain text, not serialised as its media type",
                self.resolver.show(where).removeprefix("at "),
            )
            schema = self.schemas.convert(
                (content or {}).get("schema") or {}, base, f"{where}/content/{pointer(media)[1:]}/schema"
            )
        else:
            keys = (
                "type",
                "format",
                "items",
                "enum",
                "default",
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "minLength",
                "maxLength",
                "pattern",
                "minItems",
                "maxItems",
                "uniqueItems",
                "multipleOf",
                "x-nullable",
            )
            schema = self.schemas.convert({k: param[k] for k in keys if k in param}, base, where)
        schema = dict(schema) if isinstance(schema, dict) else {}
        description = " ".join(str(param.get("description") or "").split()) if param.get("description") else ""
        if description and "description" not in schema:
            schema = {"description": str(param["description"]).strip(), **schema}
        if param.get("deprecated") is True:
            schema["deprecated"] = True
        if "example" in param and "examples" not in schema:
            schema["examples"] = [param["example"]]
        return schema

    def serialisation(self, param: Json, location: str, schema: Json) -> Json:
        """The handler's ``{in, style?, explode?}`` for a parameter (defaults left out)."""
        if self.swagger:
            fmt = str(param.get("collectionFormat") or "csv")
            if location == "query" and schema.get("type") == "array":
                style, explode = COLLECTION_FORMATS.get(fmt, ("form", False))
                if fmt == "tsv":
                    self.warnings.add(
                        "collectionFormat tsv sent comma-separated (OpenAPI 3 has no tab style)", param.get("name", "?")
                    )
            else:
                style, explode = DEFAULT_STYLE[location]
                if fmt == "multi":
                    explode = True
        else:
            default_style, _ = DEFAULT_STYLE[location]
            style = str(param.get("style") or default_style)
            explode = bool(param.get("explode", style == "form"))
        out: Json = {"in": location}
        if (style, explode) != DEFAULT_STYLE[location]:
            out["style"] = style
            out["explode"] = explode
        if param.get("allowReserved") is True:
            out["allowReserved"] = True
        return out

    # request body ---------------------------------------------------------------------------------------------
    def request_body(self, op: Json, params: list[tuple[Json, str, str]], where: str) -> tuple[Json, str, bool] | None:
        """The body's (schema, encoding, required), from requestBody or Swagger's body/formData parameters."""
        if self.swagger:
            body = [p for p in params if p[0].get("in") == "body"]
            if body:
                param, base, at = body[0]
                schema = self.schemas.convert(param.get("schema") or {}, base, f"{at}/schema")
                if param.get("description") and isinstance(schema, dict) and "description" not in schema:
                    schema = {"description": str(param["description"]).strip(), **schema}
                return schema, "json", bool(param.get("required"))
            form = [p for p in params if p[0].get("in") == "formData"]
            if not form:
                return None
            consumes = op.get("consumes") or self.doc.get("consumes") or []
            multipart = "multipart/form-data" in consumes or any(p[0].get("type") == "file" for p in form)
            properties: Json = {}
            required = []
            for param, base, at in form:
                properties[param["name"]] = self.param_schema(param, base, at)
                if param.get("required"):
                    required.append(param["name"])
            schema = {"type": "object", "properties": properties}
            if required:
                schema["required"] = required
            return schema, "multipart" if multipart else "form", True
        raw = op.get("requestBody")
        if raw is None:
            return None
        body, base, at = self.resolver.deref(raw, self.uri, f"{where}/requestBody")
        content = body.get("content") if isinstance(body, dict) else None
        if not isinstance(content, dict) or not content:
            raise self.fail(at, "a requestBody needs 'content'")
        media = self._pick_media(content)
        encoding = (
            "json"
            if media == "application/json" or media.endswith("+json")
            else "form"
            if media == "application/x-www-form-urlencoded"
            else "multipart"
            if media == "multipart/form-data"
            else "raw"
        )
        entry = content[media] if isinstance(content[media], dict) else {}
        media_at = f"{at}/content/{pointer(media)[1:]}"
        schema = (
            self.schemas.convert(entry.get("schema") or {}, base, f"{media_at}/schema") if "schema" in entry else {}
        )
        if encoding == "raw":
            self.warnings.add(
                f"a {media} body is sent as the text of the 'body' argument",
                self.resolver.show(media_at).removeprefix("at "),
            )
            schema = {"type": "string", "description": f"The request body ({media})."}
        if len(content) > 1:
            self.warnings.add(
                "a request body with several media types: only the first JSON or form one is used",
                self.resolver.show(f"{at}/content").removeprefix("at "),
            )
        if isinstance(schema, dict) and body.get("description") and "description" not in schema:
            schema = {"description": str(body["description"]).strip(), **schema}
        if encoding == "raw":
            return schema, f"raw:{media}", bool(body.get("required"))
        return (
            schema,
            encoding if media == "application/json" or encoding != "json" else f"json:{media}",
            bool(body.get("required")),
        )

    @staticmethod
    def _pick_media(content: Json) -> str:
        for wanted in ("application/json", "application/x-www-form-urlencoded", "multipart/form-data"):
            if wanted in content:
                return wanted
        for media in content:
            if str(media).endswith("+json"):
                return str(media)
        return str(next(iter(content)))

    # one operation ----------------------------------------------------------------------------------------------
    def operation(self, path: str, method: str, item: Json, op: Json, item_where: str, tool_id: str) -> Json:
        """The tool definition of one operation."""
        where = f"{item_where}/{method}"
        params = self.parameters(item, op, item_where, where)
        properties: Json = {}
        required: list[str] = []
        wire: Json = {}
        template = path
        for param, base, at in params:
            location = str(param["in"])
            if location in ("body", "formData"):
                continue
            if location not in DEFAULT_STYLE:
                raise self.fail(
                    f"{at}/in", f"unknown parameter location {location!r}; expected path, query, header or cookie"
                )
            name = param["name"]
            if location == "header" and name.lower() in RESERVED_HEADERS:
                continue
            arg = name if location != "path" or _IDENT.match(name) else segment(name)
            if arg in properties:
                arg = f"{arg}_{location}"
                self.warnings.add(
                    f"two parameters named {name!r}: the {location} one is the argument {arg!r}",
                    self.resolver.show(at).removeprefix("at "),
                )
            schema = self.param_schema(param, base, at)
            properties[arg] = schema
            if param.get("required") or location == "path":
                required.append(arg)
            spec = self.serialisation(param, location, schema)
            if arg != name:
                spec["name"] = name
            if location == "path":
                if "{" + name + "}" not in template:
                    self.warnings.add(
                        "a path parameter the path does not name (it is not sent)",
                        self.resolver.show(at).removeprefix("at "),
                    )
                template = template.replace("{" + name + "}", "{" + arg + "}")
            wire[arg] = spec
        missing = [m for m in re.findall(r"\{([^{}]+)\}", template) if m not in wire or wire[m]["in"] != "path"]
        if missing:
            raise self.fail(where, f"the path names {{{missing[0]}}}, but no path parameter {missing[0]!r} is defined")
        handler: Json = {"type": "http", "method": method.upper(), "url": self.server_url(op, item, where) + template}
        if wire:
            handler["params"] = wire
        body = self.request_body(op, params, where)
        if body is not None:
            schema, encoding, body_required = body
            flat = (
                encoding.partition(":")[0] in ("json", "form", "multipart")
                and isinstance(schema, dict)
                and isinstance(schema.get("properties"), dict)
                and schema.get("type") in ("object", None)
                and not {"allOf", "anyOf", "oneOf", "not"} & schema.keys()
                and not set(schema["properties"]) & set(properties)
            )
            body_spec: Json = {"encoding": encoding}
            if encoding.startswith("json:"):
                body_spec = {"encoding": "json", "media": encoding[5:]}
            if flat:
                for name, sub in schema["properties"].items():
                    properties[name] = sub
                if body_required:
                    required.extend(r for r in schema.get("required", []) if r in schema["properties"])
                if schema.get("additionalProperties") not in (None, False):
                    self.warnings.add(
                        "a body's additionalProperties dropped (only its named properties are arguments)",
                        self.resolver.show(where).removeprefix("at "),
                    )
            else:
                arg = "body" if "body" not in properties else "request_body"
                if (
                    isinstance(schema, dict)
                    and isinstance(schema.get("properties"), dict)
                    and set(schema["properties"]) & set(properties)
                ):
                    self.warnings.add(
                        "body properties collide with parameters: the body is the argument 'body'",
                        self.resolver.show(where).removeprefix("at "),
                    )
                properties[arg] = schema
                if body_required:
                    required.append(arg)
                body_spec["arg"] = arg
            handler["body"] = body_spec
        auth = self.auth(op, where)
        if auth is not None:
            handler["auth"] = auth
        args_schema: Json = {"type": "object", "properties": properties}
        if required:
            args_schema["required"] = list(dict.fromkeys(required))
        args_schema["additionalProperties"] = False
        return self._tool(tool_id, method, path, item, op, where, args_schema, handler)

    def _tool(
        self, tool_id: str, method: str, path: str, item: Json, op: Json, where: str, args_schema: Json, handler: Json
    ) -> Json:
        description = str(op.get("description") or item.get("description") or "").strip()
        summary_text = str(op.get("summary") or op.get("description") or item.get("summary") or description).strip()
        tool: Json = {"id": tool_id, "summary": summary_of(summary_text, f"{method.upper()} {path}")}
        if description and description != tool["summary"]:
            tool["description"] = description
        kind = op.get("x-toolcat-kind")
        tool["kind"] = kind if kind in ("read", "write") else ("read" if method.upper() in READ_METHODS else "write")
        tool["tags"] = [self.namespace, "openapi"]
        if op.get("deprecated") is True:
            tool["deprecated"] = True
        tool["args_schema"] = args_schema
        errors = self.errors(op, where)
        if errors:
            tool["errors"] = errors
        tool["handler"] = handler
        return tool

    def errors(self, op: Json, where: str) -> list[Json]:
        """``[{code, when}]`` for the 4xx/5xx/default responses."""
        responses = op.get("responses") or {}
        if not isinstance(responses, dict):
            raise self.fail(f"{where}/responses", "'responses' must be a mapping")
        out = []
        for code, raw in responses.items():
            text = str(code)
            if not (text[:1] in ("4", "5") or text == "default"):
                continue
            response, _, _ = self.resolver.deref(raw, self.uri, f"{where}/responses/{pointer(text)[1:]}")
            description = str((response or {}).get("description") or "").strip() if isinstance(response, dict) else ""
            out.append({"code": text, "when": summary_of(description, f"HTTP {text}")})
        return out

    # the whole spec -----------------------------------------------------------------------------------------------
    def convert(self, previous_ids: dict[str, str]) -> tuple[list[tuple[str, Json]], dict[str, Json], dict[str, str]]:
        """(node folder, tool) pairs, the node files by folder, and the id of every operation (its key → id)."""
        paths = self.doc.get("paths")
        if not isinstance(paths, dict):
            raise self.fail(
                self.at("paths"), "missing or not a mapping; an OpenAPI document lists its operations under 'paths'"
            )
        operations = []
        seen_ids: dict[str, str] = {}
        for path, raw_item in paths.items():
            item_where = self.at("paths", path)
            item, _, _ = self.resolver.deref(raw_item, self.uri, item_where)
            if not isinstance(item, dict):
                raise self.fail(item_where, "a path item must be a mapping")
            for method in METHODS:
                op = item.get(method)
                if op is None:
                    continue
                where = f"{item_where}/{method}"
                if not isinstance(op, dict):
                    raise self.fail(where, "an operation must be a mapping")
                op_id = op.get("operationId")
                if op_id is not None:
                    if str(op_id) in seen_ids:
                        raise self.fail(
                            where + "/operationId",
                            f"duplicate operationId {op_id!r} (also {self.resolver.show(seen_ids[str(op_id)])}); "
                            "operationIds must be unique",
                        )
                    seen_ids[str(op_id)] = where + "/operationId"
                key = f"operationId:{op_id}" if op_id is not None else f"{method.upper()} {path}"
                base = snake(str(op_id)) if op_id is not None else segment(f"{method}_{path}")
                operations.append((key, f"{self.namespace}.{base}", path, method, item, op, item_where))
        ids = self._assign_ids([(key, base) for key, base, *_ in operations], previous_ids)
        tag_folders = self._tag_folders()
        tools: list[tuple[str, Json]] = []
        for key, _base, path, method, item, op, item_where in operations:
            tool = self.operation(path, method, item, op, item_where, ids[key])
            tags = op.get("tags") if isinstance(op.get("tags"), list) else []
            folder = tag_folders.setdefault(str(tags[0]), self._folder_for(str(tags[0]), tag_folders)) if tags else ""
            tools.append((folder, tool))
        return tools, self._nodes(tag_folders, {f for f, _ in tools}), ids

    def _assign_ids(self, wanted: list[tuple[str, str]], previous: dict[str, str]) -> dict[str, str]:
        """Each operation's id: its previous one when it still fits, else its own, else its own with ``_2``, ..."""
        ids: dict[str, str] = {}
        taken: set[str] = set()
        for key, base in wanted:
            old = previous.get(key)
            if old is not None and re.fullmatch(re.escape(base) + r"(_\d+)?", old) and old not in taken:
                ids[key] = old
                taken.add(old)
        for key, base in wanted:
            if key in ids:
                continue
            candidate, suffix = base, 2
            while candidate in taken:
                candidate, suffix = f"{base}_{suffix}", suffix + 1
            if candidate != base:
                self.warnings.add(f"id {base} is taken; a later operation became {candidate}", key)
            ids[key] = candidate
            taken.add(candidate)
        return ids

    def _tag_folders(self) -> dict[str, str]:
        folders: dict[str, str] = {}
        for tag in self.doc.get("tags") or []:
            if isinstance(tag, dict) and isinstance(tag.get("name"), str):
                folders[tag["name"]] = self._folder_for(tag["name"], folders)
        return folders

    @staticmethod
    def _folder_for(tag: str, folders: dict[str, str]) -> str:
        base = segment(tag)
        candidate, suffix = base, 2
        while candidate in folders.values() or candidate == STATE_DIR.strip("_"):
            candidate, suffix = f"{base}_{suffix}", suffix + 1
        return candidate

    def _nodes(self, tag_folders: dict[str, str], used: set[str]) -> dict[str, Json]:
        info: Json = self.doc["info"] if isinstance(self.doc.get("info"), dict) else {}
        title = str(info.get("title") or self.namespace)
        nodes = {
            "": node_file(
                title,
                str(info.get("description") or "") or f"Operations of {title}, imported from its OpenAPI description.",
                [self.namespace, "openapi"],
            )
        }
        descriptions = {
            t["name"]: str(t.get("description") or "")
            for t in self.doc.get("tags") or []
            if isinstance(t, dict) and isinstance(t.get("name"), str)
        }
        for tag, folder in tag_folders.items():
            if folder in used:
                nodes[folder] = node_file(
                    tag, descriptions.get(tag) or f"{tag} operations of {title}.", [self.namespace, "openapi"]
                )
        return nodes


def import_openapi(
    spec: str,
    *,
    namespace: str | None = None,
    out: Path | None = None,
    allow_remote_refs: bool = False,
    server: str | None = None,
    server_vars: dict[str, str] | None = None,
    force: bool = False,
    src_root: Path = Path("catalog_src"),
) -> ImportResult:
    """Import every operation of ``spec`` (a file or URL) as catalogue sources in ``out``."""
    uri = spec_uri(spec)
    remote_root = uri.startswith(("http://", "https://"))
    data = (
        _read_bytes(uri, remote_ok=True, what="SPEC") if remote_root else _read_bytes(uri, remote_ok=False, what="SPEC")
    )
    doc = parse_document(data, spec)
    info: Json = doc["info"] if isinstance(doc, dict) and isinstance(doc.get("info"), dict) else {}
    ns = segment(namespace) if namespace else segment(str(info.get("title") or Path(urlsplit(uri).path).stem))
    target = out if out is not None else src_root / ns
    importer = OpenApiImporter(
        doc, uri, namespace=ns, allow_remote_refs=allow_remote_refs, server=server, server_vars=server_vars or {}
    )
    state = read_state(target)
    previous: dict[str, str] = (
        state["ids"] if state.get("namespace") == ns and isinstance(state.get("ids"), dict) else {}
    )
    tools, nodes, ids = importer.convert(previous)
    if not tools:
        raise ImporterError(f"{spec}: at /paths: no operations to import")
    overrides, overrides_text = read_overrides(target)
    apply_overrides({t["id"]: t for _, t in tools}, nodes, overrides, importer.warnings)
    files = render(tools, nodes, f"toolcat import openapi ({importer.version})")
    files[f"{STATE_DIR}/{STATE_FILE}"] = (
        json.dumps(
            {
                "importer": "openapi",
                "source": spec,
                "namespace": ns,
                "version": importer.version,
                "auth_env": sorted(set(importer.env_names.values())),
                "ids": dict(sorted(ids.items())),
            },
            indent=1,
            sort_keys=True,
            ensure_ascii=False,
        )
        + "\n"
    )
    del overrides_text  # the file itself is carried over by write_tree
    write_tree(target, files, force=force)
    log.info("imported %d operations into %s", len(tools), target)
    return ImportResult(target, ns, len(tools), tuple(t["id"] for _, t in tools), tuple(importer.warnings.lines()))


def render(tools: list[tuple[str, Json]], nodes: dict[str, Json], how: str) -> dict[str, str]:
    """``{relative path: YAML text}``: a ``_node.yaml`` per node and a ``tools.yaml`` per folder with tools."""
    by_folder: dict[str, list[Json]] = {}
    for folder, tool in tools:
        by_folder.setdefault(folder, []).append(tool)
    files: dict[str, str] = {}
    for folder, node in nodes.items():
        files[f"{folder}/_node.yaml".lstrip("/")] = dump_yaml(node)
    for folder, items in by_folder.items():
        header = (
            f"# Generated by `{how}` ({len(items)} tools). A re-import replaces this file: put your own "
            "changes in _import/overrides.yaml.\n"
        )
        files[f"{folder}/tools.yaml".lstrip("/")] = header + dump_yaml({"tools": items})
    return files
