"""``toolcat import openapi``: every operation of an OpenAPI 3.0/3.1 or Swagger 2.0 spec as a tool with an http handler.

One tool per operation, id ``<namespace>.<operationId in snake_case>`` (else method + path),
at the node of its first tag; ``args_schema`` is one flat object of the path, query, header
and cookie parameters and the request body's properties (the whole body under ``body``
when a name collides or the body is not an object). ``$ref`` s are resolved with
``referencing`` (files relative to the spec; remote documents only with
``allow_remote_refs``); recursive schemas are cut at their first re-entry, deep ones at
:data:`MAX_SCHEMA_DEPTH`; OpenAPI's schema dialect becomes JSON Schema 2020-12. Every lossy
step is a warning naming its JSON pointer. docs/sources.md ("Importing") lists the rules.

This module turns operations into tools and nodes and writes them; reading documents and
resolving ``$ref`` s is in :mod:`.openapi_refs`, schema conversion in :mod:`.openapi_schema`,
and an operation's servers, security, parameters and body in :mod:`.openapi_handler`.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ...format.http_headers import header_name_problem
from ...format.types import Json
from ..common import (
    STATE_DIR,
    STATE_FILE,
    ImporterError,
    ImportResult,
    apply_overrides,
    claim_out,
    dump_yaml,
    node_file,
    read_overrides,
    read_state,
    segment,
    snake,
    summary_of,
    write_tree,
)
from .handler import DEFAULT_STYLE, SpecReader
from .refs import parse_document, pointer, read_bytes, spec_uri

__all__ = ["METHODS", "READ_METHODS", "RESERVED_HEADERS", "OpenApiImporter", "import_openapi", "render"]

log = logging.getLogger(__name__)

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
READ_METHODS = frozenset({"GET", "HEAD"})
#: Headers OpenAPI says to ignore as parameters: the handler sets them itself.
RESERVED_HEADERS = frozenset({"accept", "content-type", "authorization"})
#: The longest response description kept in ``errors[].when`` and ``result_schema``.
ERROR_TEXT_CHARS = 500
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(slots=True)
class _Arguments:
    """An operation's arguments as they are gathered.

    args_schema's properties and required names, how each parameter is sent (``wire``), and the path
    template with each path parameter under its argument's name.
    """

    template: str
    properties: Json = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    wire: Json = field(default_factory=dict)

    def schema(self) -> Json:
        """The args_schema: one flat object, no other properties."""
        args_schema: Json = {"type": "object", "properties": self.properties}
        if self.required:
            args_schema["required"] = list(dict.fromkeys(self.required))
        args_schema["additionalProperties"] = False
        return args_schema


def _properties(schema: Any) -> Json | None:
    """A schema's ``properties`` when it is an object schema that names them."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return properties if isinstance(properties, dict) else None


class OpenApiImporter(SpecReader):
    """One spec, read and turned into tool definitions."""

    # one operation ----------------------------------------------------------------------------------------------
    def operation(self, path: str, method: str, item: Json, op: Json, item_where: str, tool_id: str) -> Json:
        """The tool definition of one operation: its parameters and body as arguments, and its http handler."""
        where = f"{item_where}/{method}"
        params = self.parameters(item, op, item_where, where)
        args = _Arguments(path)
        for param, base, at in params:
            self._parameter(args, param, base, at)
        missing = [
            m for m in re.findall(r"\{([^{}]+)\}", args.template) if m not in args.wire or args.wire[m]["in"] != "path"
        ]
        if missing:
            raise self.fail(where, f"the path names {{{missing[0]}}}, but no path parameter {missing[0]!r} is defined")
        url = self.server_url(op, item, where) + args.template
        handler: Json = {"type": "http", "method": method.upper(), "url": url}
        if args.wire:
            handler["params"] = args.wire
        body = self.request_body(op, params, where)
        if body is not None:
            handler["body"] = self._body(args, *body, where)
        auth = self.auth(op, where)
        if auth is not None:
            handler["auth"] = auth
        return self._tool(tool_id, method, path, item, op, where, args.schema(), handler)

    def _warn(self, message: str, at: str) -> None:
        self.warnings.add(message, self.resolver.show(at).removeprefix("at "))

    def _parameter(self, args: _Arguments, param: Json, base: str, at: str) -> None:
        """One path, query, header or cookie parameter as an argument (a body or form one is the body's)."""
        location = str(param["in"])
        if location in ("body", "formData"):
            return
        if location not in DEFAULT_STYLE:
            raise self.fail(
                f"{at}/in", f"unknown parameter location {location!r}; expected path, query, header or cookie"
            )
        name = param["name"]
        if location == "header" and self._header_dropped(name, at):
            return
        arg = name if location != "path" or _IDENT.match(name) else segment(name)
        if arg in args.properties:
            arg = f"{arg}_{location}"
            self._warn(f"two parameters named {name!r}: the {location} one is the argument {arg!r}", at)
        schema = self.param_schema(param, base, at)
        args.properties[arg] = schema
        if param.get("required") or location == "path":
            args.required.append(arg)
        spec = self.serialisation(param, location, schema)
        if arg != name:
            spec["name"] = name
        if location == "path":
            if "{" + name + "}" not in args.template:
                self._warn("a path parameter the path does not name (it is not sent)", at)
            args.template = args.template.replace("{" + name + "}", "{" + arg + "}")
        args.wire[arg] = spec

    def _header_dropped(self, name: str, at: str) -> bool:
        """A header the handler sets itself (Accept, Content-Type, Authorization), or one no request may carry."""
        if name.lower() in RESERVED_HEADERS:
            return True
        problem = header_name_problem(name)
        if problem is not None:
            self._warn(f"header parameter {name[:60]!r} dropped: it {problem}", at)
        return problem is not None

    def _body(self, args: _Arguments, schema: Any, encoding: str, body_required: bool, where: str) -> Json:
        """The request body's handler entry; its properties become arguments when they can, else one argument."""
        flat = (
            encoding.partition(":")[0] in ("json", "form", "multipart")
            and _properties(schema) is not None
            and schema.get("type") in ("object", None)
            and not {"allOf", "anyOf", "oneOf", "not"} & schema.keys()
            and not set(schema["properties"]) & set(args.properties)
        )
        body_spec: Json = {"encoding": encoding}
        if encoding.startswith("json:"):
            body_spec = {"encoding": "json", "media": encoding[5:]}
        if flat:
            args.properties.update(schema["properties"])
            if body_required:
                args.required.extend(r for r in schema.get("required", []) if r in schema["properties"])
            if schema.get("additionalProperties") not in (None, False):
                self._warn("a body's additionalProperties dropped (only its named properties are arguments)", where)
            return body_spec
        arg = "body" if "body" not in args.properties else "request_body"
        if set(_properties(schema) or ()) & set(args.properties):
            self._warn("body properties collide with parameters: the body is the argument 'body'", where)
        args.properties[arg] = schema
        if body_required:
            args.required.append(arg)
        body_spec["arg"] = arg
        return body_spec

    def _tool(
        self, tool_id: str, method: str, path: str, item: Json, op: Json, where: str, args_schema: Json, handler: Json
    ) -> Json:
        description = str(op.get("description") or item.get("description") or "").strip()
        summary_text = str(op.get("summary") or op.get("description") or item.get("summary") or description).strip()
        tool: Json = {"id": tool_id, "summary": summary_of(summary_text, f"{method.upper()} {path}")}
        if description and description != tool["summary"]:
            tool["description"] = description
        tool["kind"] = self._kind(method, op, where)
        api_version = (self.doc.get("info") or {}).get("version") if isinstance(self.doc.get("info"), dict) else None
        if isinstance(api_version, (str, int, float)) and not isinstance(api_version, bool) and str(api_version):
            tool["version"] = str(api_version)[:64]
        tool["tags"] = [self.namespace, "openapi"]
        if op.get("deprecated") is True:
            tool["deprecated"] = True
        tool["args_schema"] = args_schema
        errors = self.errors(op, where)
        if errors:
            tool["errors"] = errors
        result = self.result(op, where)
        if result is not None:
            tool["result_schema"] = result
        if method.upper() == "DELETE":
            tool["annotations"] = {"destructiveHint": True}
        tool["handler"] = handler
        return tool

    def _kind(self, method: str, op: Json, where: str) -> str:
        """read for GET and HEAD, write otherwise: a spec's ``x-toolcat-kind`` may narrow trust, never widen it."""
        by_method = "read" if method.upper() in READ_METHODS else "write"
        claimed = op.get("x-toolcat-kind")
        if claimed == "read" and by_method == "write":
            self.warnings.add(
                f"x-toolcat-kind: read ignored on a {method.upper()} (it changes data; the method decides; "
                "set kind: read in _import/overrides.yaml if you checked it is safe)",
                self.resolver.show(where).removeprefix("at "),
            )
            return by_method
        return claimed if claimed in ("read", "write") else by_method

    def result(self, op: Json, where: str) -> Json | None:
        """The result_schema: the description (and JSON schema, when small enough to convert) of the success response."""
        responses = op.get("responses")
        if not isinstance(responses, dict):
            return None
        for code in sorted(str(c) for c in responses):
            if not code.startswith("2"):
                continue
            at = f"{where}/responses/{pointer(code)[1:]}"
            raw = responses.get(code, responses.get(int(code)) if code.isdigit() else None)
            response, _, _ = self.resolver.deref(raw, self.uri, at)
            if not isinstance(response, dict):
                return None
            description = " ".join(str(response.get("description") or "").split())
            if code == "204" or not description:
                return {"type": "null", "description": description} if code == "204" and description else None
            return {"description": description[:ERROR_TEXT_CHARS]}
        return None

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
            when = " ".join(description.split())
            out.append({"code": text, "when": when[:ERROR_TEXT_CHARS] if when else f"HTTP {text}"})
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
            tool = self._located(f"{item_where}/{method}", self.operation, path, method, item, op, item_where, ids[key])
            tags = op.get("tags") if isinstance(op.get("tags"), list) else []
            folder = tag_folders.setdefault(str(tags[0]), self._folder_for(str(tags[0]), tag_folders)) if tags else ""
            tools.append((folder, tool))
        return tools, self._nodes(tag_folders, {f for f, _ in tools}), ids

    def _located(self, where: str, step: Any, *args: Any) -> Any:
        """``step(*args)``; a value of a type the OpenAPI schema does not allow there becomes an error naming ``where``.

        The importer checks the shapes it relies on one by one; this is the backstop for the rest
        (the fuzzer's wrong-typed specs), so no spec ends in a traceback.
        """
        try:
            return step(*args)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
            raise self.fail(
                where,
                f"a value here has a type the OpenAPI schema does not allow ({type(exc).__name__}: {str(exc)[:120]}); "
                "check this part of the spec against the OpenAPI schema",
            ) from None

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
        tags = self.doc.get("tags") or []
        if not isinstance(tags, list):
            raise self.fail(self.at("tags"), "'tags' must be a list of {name, description}")
        for tag in tags:
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
            for t in (self.doc["tags"] if isinstance(self.doc.get("tags"), list) else [])
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
    ref_root: Path | None = None,
) -> ImportResult:
    """Import every operation of ``spec`` (a file or URL) as catalogue sources in ``out``.

    Auth variables are named after the namespace: ``<NAMESPACE>_TOKEN`` when the user chose it
    (``--namespace``), ``TOOLCAT_<NAMESPACE>_TOKEN`` when it came from the spec's title, so a spec
    cannot pick a well-known variable such as ``GITHUB_TOKEN`` by its title.
    """
    uri = spec_uri(spec)
    remote_root = uri.startswith(("http://", "https://"))
    data = (
        read_bytes(uri, remote_ok=True, what="SPEC") if remote_root else read_bytes(uri, remote_ok=False, what="SPEC")
    )
    doc = parse_document(data, spec)
    info: Json = doc["info"] if isinstance(doc, dict) and isinstance(doc.get("info"), dict) else {}
    ns = segment(namespace) if namespace else segment(str(info.get("title") or Path(urlsplit(uri).path).stem))
    target = out if out is not None else src_root / ns
    importer = OpenApiImporter(
        doc,
        uri,
        namespace=ns,
        allow_remote_refs=allow_remote_refs,
        server=server,
        server_vars=server_vars or {},
        env_prefix=ns if namespace else f"toolcat_{ns}",
        ref_root=ref_root,
    )
    claim_out(target, force=force)
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
    notes = [
        f"the http handlers read credentials from ${name} (named after the namespace "
        f"{'you chose' if namespace else 'taken from the spec title; --namespace names it'}); "
        f"a host that opens the catalogue by URL must allow it: allow_secrets={{'<host>': [{name!r}]}}"
        for name in sorted(set(importer.env_names.values()))
    ]
    return ImportResult(target, ns, len(tools), tuple(t["id"] for _, t in tools), (*importer.warnings.lines(), *notes))


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
