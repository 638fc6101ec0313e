"""The spec side of ``toolcat import openapi``'s http handlers: version, servers, security, parameters, request body.

:class:`SpecReader` holds one spec and reads, per operation, the parts its handler is built
from; :class:`~toolcat.importers.openapi.operations.OpenApiImporter` builds on it to make the tools.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, urldefrag, urljoin

from ...format.types import Json
from ..common import ImporterError, Warnings, segment
from .refs import Resolver, pointer
from .schema import SchemaConverter

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


class SpecReader:
    """One spec: its version, and an operation's server, security, parameters and request body."""

    def __init__(
        self,
        doc: Any,
        uri: str,
        *,
        namespace: str,
        allow_remote_refs: bool,
        server: str | None,
        server_vars: dict[str, str],
        env_prefix: str | None = None,
        ref_root: Path | None = None,
    ) -> None:
        if not isinstance(doc, dict):
            raise ImporterError(f"{uri}: at /: expected an OpenAPI document (a mapping), got {type(doc).__name__}")
        self.doc = doc
        self.uri = urldefrag(uri)[0]
        self.version = self._version()
        self.swagger = self.version.startswith("2")
        self.namespace = namespace
        self.warnings = Warnings()
        self.resolver = Resolver(self.uri, doc, allow_remote_refs=allow_remote_refs, ref_root=ref_root)
        self.schemas = SchemaConverter(self.resolver, self.warnings, self.version)
        self.server_override = server
        self.server_vars = server_vars
        self.env_names: dict[str, str] = {}
        #: What auth variables are named after: the namespace the user chose, never text of the spec.
        self.env_prefix = env_prefix if env_prefix is not None else namespace

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
        found = self.doc.get("components")
        components: Json = found if isinstance(found, dict) else {}
        schemes = (self.doc.get("securityDefinitions") if self.swagger else components.get("securitySchemes")) or {}
        if not isinstance(schemes, dict):
            raise self.fail(where, "the security schemes (components.securitySchemes) must be a mapping")
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
        plain = f"{self.env_prefix}_{suffix}".upper()
        taken = set(self.env_names.values())
        name = plain if plain not in taken else f"{self.env_prefix}_{segment(scheme_name)}_{suffix}".upper()
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
