"""Plan the artifact set: the validated catalogue → ``{relative path: bytes}`` plus the manifest.

Nothing is written here. Every file except ``catalog.json`` is named by its content
hash, so it never changes once published; every file is reached through a *ref*
(``{"path", "sha256", "bytes"}``) held by the file that points to it, so a reader can
verify everything it fetches. The layout is documented in docs/format.md and each
artifact kind has a JSON Schema in ``compiler/format/schemas/``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..format.aliases import PROVIDER_RULES, PROVIDERS
from ..format.buckets import LOOKUP_HASH, lookup_bucket
from ..format.canonical import dumps, sha256
from ..format.names import entity_action
from ..format.types import Ref
from ..format.version import FORMAT_VERSION, __version__
from .artifacts import SPEC_KEY, ArtifactSet, Contributor, Specs, payload_key, pointer
from .filestore import FileStore
from .memo import ToolMemo
from .model import CompiledCatalog, NodePath, Tool
from .parallel import run_beside
from .tokens import count_tokens, token_counter_version

log = logging.getLogger(__name__)

NODE_PAGE_SIZE = 100
NAMESPACE_PAGE_SIZE = 200
LOOKUP_BUCKET_TARGET = 256
GENERATOR = f"toolcat {__version__}"


def node_slug(path: NodePath) -> str:
    """File stem of a node shard: ``coding.refactoring``; the root is ``_root``."""
    return ".".join(path) if path else "_root"


def pointer_tokens(tool: Tool) -> int:
    """Tokens of the level-1 pointer as an agent sees it (no ref)."""
    shown = {k: v for k, v in pointer(tool, {}).items() if k != "spec"}
    return count_tokens(dumps(shown).decode())


def _pointer(tool: Tool, spec_ref: Ref, artifacts: ArtifactSet) -> dict[str, Any]:
    """The tool's pointer, made once per build: node shards, namespace shards and the index's docs share it.

    The same entry as :func:`toolcat.build.contributors.index.texts.tool_pointer` (a contributor may not import the
    planner); nothing edits a pointer once made.
    """
    return artifacts.memo.once("pointer", tool.id, lambda: pointer(tool, spec_ref))


def _skill_section(tool: Tool, artifacts: ArtifactSet) -> dict[str, Any]:
    assert tool.skill is not None  # noqa: S101 - only called for skills
    skill = tool.skill
    directory = f"skills/{skill.name}"
    body_ref = artifacts.add_in_folder(directory, "SKILL.md", skill.body.encode("utf-8"))
    resources = [
        {
            "path": res.rel_path,
            "media_type": res.media_type,
            "ref": artifacts.add_in_folder(directory, res.rel_path, res.data),
        }
        for res in skill.resources
    ]
    source: dict[str, Any] = {}
    if skill.markdown is not None:
        source["skill_md"] = artifacts.add_in_folder(directory, "SKILL.md", skill.markdown)
        source["skill_md_frontmatter"] = skill.markdown_frontmatter or {}
    return {
        "name": skill.name,
        "frontmatter": skill.frontmatter,
        "body": body_ref,
        **source,
        "body_tokens": count_tokens(skill.body),
        "level1_tokens": count_tokens(f"{skill.name}: {skill.frontmatter.get('description', '')}"),
        "resources": resources,
    }


def tool_spec(tool: Tool) -> dict[str, Any]:
    """The full level-2 spec of a tool, as stored (without its skill section and token counts)."""
    return {
        "artifact": "tool",
        "tool_id": tool.id,
        "type": tool.type,
        "aliases": tool.aliases,
        "path": list(tool.path),
        "categories": [list(c) for c in tool.categories],
        "summary": tool.summary,
        "description": tool.description,
        "args_schema": tool.args_schema,
        "result_schema": tool.result_schema,
        "examples": list(tool.examples),
        "errors": list(tool.errors),
        "tags": list(tool.tags),
        "kind": tool.kind,
        "optional": tool.optional,
        "when_to_use": tool.when_to_use,
        "policy": {k: list(v) for k, v in tool.policy.items()},
        "annotations": tool.annotations,
        "handler": tool.handler,
        "version": tool.version,
        "deprecated": tool.deprecated,
        "source": {"file": tool.origin.file, "line": tool.origin.line},
        **_host_fields(tool),
        **({"legacy_aliases": list(tool.legacy_aliases)} if tool.legacy_aliases else {}),
        **_arg_order(tool.args_schema),
        **({"always_load": True} if tool.always_load else {}),
        **(skill_meta(tool)),
    }


def _host_fields(tool: Tool) -> dict[str, Any]:
    """``entity`` and ``action`` (the id's, unless the source names them) and ``contexts``: what the reader audits."""
    entity, action = entity_action(tool.id)
    return {"entity": tool.entity or entity, "action": tool.action or action, "contexts": list(tool.contexts)}


def _arg_order(schema: Any) -> dict[str, Any]:
    """``arg_order``: the author's order of the top-level arguments, which the stored (sorted-key) schema loses."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return {"arg_order": list(properties)} if isinstance(properties, dict) and properties else {}


def skill_meta(tool: Tool) -> dict[str, Any]:
    """004's skill metadata as top-level spec fields: author, capabilities, constraints, tools (when set)."""
    if tool.skill is None:
        return {}
    return {k: tool.skill.meta[k] for k in ("author", "capabilities", "constraints", "tools") if tool.skill.meta.get(k)}


def _plan_always_load(catalog: CompiledCatalog, specs: Specs) -> list[dict[str, Any]]:
    return [
        {"tool_id": t.id, "alias": t.aliases.get("openai", t.id), "ref": specs[t.id][1]}
        for t in sorted(catalog.tools.values(), key=lambda t: t.id)
        if t.always_load
    ]


def _plan_tools(catalog: CompiledCatalog, artifacts: ArtifactSet) -> Specs:
    specs: Specs = {}
    salt = _spec_key_salt()
    for tool in catalog.tools.values():
        spec = tool_spec(tool)
        if tool.skill is not None:
            spec["skill"] = _skill_section(tool, artifacts)
            ref, spec["tokens"] = _stored_spec(tool, spec, artifacts)
        else:
            ref, spec["tokens"] = _remembered_spec(tool, spec, artifacts, salt)
        specs[tool.id] = (spec, ref)
    return specs


def _spec_key_salt() -> bytes:
    """What a spec's stored file and counts depend on beside the spec: the format and the token counter."""
    return f"{FORMAT_VERSION}\x00{GENERATOR}\x00{token_counter_version()}\x00".encode()


def _remembered_spec(tool: Tool, spec: dict[str, Any], artifacts: ArtifactSet, salt: bytes) -> tuple[Ref, Any]:
    """The ref and token counts of a tool's stored spec: the last build's, kept, when its spec was the same.

    Issue 29: dumping, counting and hashing 10,000 specs took most of a one-tool edit's planning. The last build's
    file is carried (linked) as it is; a spec the memo lacks is dumped and stored as in a fresh build.
    """
    key = payload_key(spec, salt)
    if key is None:
        return _stored_spec(tool, spec, artifacts)
    artifacts.memo.once(SPEC_KEY, tool.id, lambda: key)  # the texts' key builds on it (index.texts.text_key)
    made: list[bool] = []

    def make() -> dict[str, Any]:
        made.append(True)
        ref, tokens = _stored_spec(tool, spec, artifacts)
        return {"ref": ref, "tokens": tokens}

    kept = artifacts.memo.get("spec", key, make)
    if not made:
        artifacts.carry(kept["ref"])
    return kept["ref"], kept["tokens"]


def _add_json(artifacts: ArtifactSet, directory: str, stem: str, payload: dict[str, Any]) -> Ref:
    """``artifacts.add_json``, or the last build's file (carried) when the payload is the same (issue 29).

    Node, namespace, lookup, alias and stats files are keyed like specs (:func:`payload_key`, with their name and the
    specs' salt), in the memo's kind ``json``: a one-tool edit dumps the few whose content changed, not all of them.
    """
    salt = artifacts.memo.once("salt", "spec", _spec_key_salt)  # the token counter's version is read once a build
    return artifacts.add_json_remembered(directory, stem, payload, "json", salt)


def _stored_spec(tool: Tool, spec: dict[str, Any], artifacts: ArtifactSet) -> tuple[Ref, dict[str, int]]:
    """Dump ``spec`` (without ``tokens``) once, count it, and store it with its counts: its ref and the counts."""
    head, tail = _spec_halves(spec)
    tokens = {"pointer": pointer_tokens(tool), "spec": count_tokens(_joined(head, tail))}
    data = _joined(_joined(head, dumps({"tokens": tokens}).decode("utf-8")), tail)
    return artifacts.add("tools", tool.id, ".json", data.encode("utf-8")), tokens


def _spec_halves(spec: dict[str, Any]) -> tuple[str, str]:
    """A spec's canonical JSON in two objects: its keys sorted before ``tokens``, and after.

    The spec is dumped once: its token count reads the two joined (the spec without ``tokens``), and its file
    puts ``"tokens"`` between them, byte for byte what dumping the spec with its counts gives (issue 29: a
    10,000-tool build dumped every spec twice).
    """
    head = dumps({k: v for k, v in spec.items() if k < "tokens"}).decode("utf-8")
    tail = dumps({k: v for k, v in spec.items() if k > "tokens"}).decode("utf-8")
    return head, tail


def _joined(head: str, tail: str) -> str:
    """The canonical JSON of two objects' keys together (each sorted, every key of ``head`` before ``tail``'s)."""
    if len(tail) <= 2:
        return head
    if len(head) <= 2:
        return tail
    return f"{head[:-1]},{tail[1:]}"


def _subtree_counts(catalog: CompiledCatalog) -> dict[NodePath, int]:
    """Distinct tools at or below each node (a DAG: a tool counts once per subtree)."""
    below: dict[NodePath, set[str]] = {path: set() for path in catalog.nodes}
    for tool in catalog.tools.values():
        for home in (tool.path, *tool.categories):
            for depth in range(len(home) + 1):
                prefix = home[:depth]
                if prefix in below:
                    below[prefix].add(tool.id)
    return {path: len(ids) for path, ids in below.items()}


def _plan_nodes(catalog: CompiledCatalog, artifacts: ArtifactSet, specs: Specs) -> Ref:
    counts = _subtree_counts(catalog)
    refs: dict[NodePath, Ref] = {}
    for path in sorted(catalog.nodes, key=lambda p: (-len(p), p)):  # leaves first: parents hold child hashes
        node = catalog.nodes[path]
        pointers = [_pointer(t, specs[t.id][1], artifacts) for t in sorted(catalog.tools_at(path), key=lambda t: t.id)]
        pages = [pointers[i : i + NODE_PAGE_SIZE] for i in range(0, len(pointers), NODE_PAGE_SIZE)] or [[]]
        page_refs = [
            _add_json(
                artifacts,
                "nodes",
                f"{node_slug(path)}.p{number}",
                {"artifact": "node_page", "path": list(path), "page": number, "tools": page},
            )
            for number, page in enumerate(pages[1:], start=2)
        ]
        children = [
            {
                "name": child.name,
                "path": list(child.path),
                "title": child.title,
                "summary": child.summary,
                "tags": list(child.tags),
                "tool_count": counts[child.path],
                "ref": refs[child.path],
            }
            for child in catalog.children(path)
        ]
        shard = {
            "artifact": "node",
            "path": list(path),
            "title": node.title,
            "summary": node.summary,
            "tags": list(node.tags),
            "children": children,
            "tools": pages[0],
            "tool_count": counts[path],
            "direct_tools": len(pointers),
            "page_size": NODE_PAGE_SIZE,
            "pages": page_refs,
        }
        refs[path] = _add_json(artifacts, "nodes", node_slug(path), shard)
    return refs[()]


def _plan_namespaces(catalog: CompiledCatalog, artifacts: ArtifactSet, specs: Specs) -> Ref:
    """One pointer shard per id namespace (paged like nodes): what gateway help needs for a group.

    Their refs go in a ``namespace_index`` file, not in the manifest: the manifest is read by every
    ``list()`` at the root, and must not grow with the number of namespaces.
    """
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    for tool in catalog.tools.values():
        by_namespace.setdefault(tool.namespace, []).append(_pointer(tool, specs[tool.id][1], artifacts))
    refs: dict[str, Ref] = {}
    for namespace, pointers in sorted(by_namespace.items()):
        pages = [pointers[i : i + NAMESPACE_PAGE_SIZE] for i in range(0, len(pointers), NAMESPACE_PAGE_SIZE)]
        page_refs = [
            _add_json(
                artifacts,
                "namespaces",
                f"{namespace}.p{number}",
                {"artifact": "namespace_page", "namespace": namespace, "page": number, "tools": page},
            )
            for number, page in enumerate(pages[1:], start=2)
        ]
        refs[namespace] = _add_json(
            artifacts,
            "namespaces",
            namespace,
            {
                "artifact": "namespace",
                "namespace": namespace,
                "tool_count": len(pointers),
                "page_size": NAMESPACE_PAGE_SIZE,
                "tools": pages[0],
                "pages": page_refs,
            },
        )
    return _add_json(artifacts, "namespaces", "_index", {"artifact": "namespace_index", "namespaces": refs})


def _plan_lookup(catalog: CompiledCatalog, artifacts: ArtifactSet, specs: Specs) -> dict[str, Any]:
    entries: dict[str, dict[str, Any]] = {}
    for tool in catalog.tools.values():
        value = {"tool_id": tool.id, "spec": specs[tool.id][1]}
        names = {tool.id, *tool.aliases.values(), *tool.legacy_aliases}
        if tool.skill is not None:
            names.add(tool.skill.name)
        for name in names:
            entries.setdefault(name, value)
    count = 1 << max(0, math.ceil(math.log2(max(1, math.ceil(len(entries) / LOOKUP_BUCKET_TARGET)))))
    buckets: list[dict[str, Any]] = [{} for _ in range(count)]
    for name, value in sorted(entries.items()):
        buckets[lookup_bucket(name, count)][name] = value
    refs = [
        _add_json(
            artifacts,
            "lookup",
            f"b{index}",
            {"artifact": "lookup", "bucket": index, "buckets": count, "entries": bucket},
        )
        for index, bucket in enumerate(buckets)
    ]
    return {"buckets": count, "hash": LOOKUP_HASH, "refs": refs}


def _plan_aliases(catalog: CompiledCatalog, artifacts: ArtifactSet) -> dict[str, Ref]:
    out: dict[str, Ref] = {}
    for provider in PROVIDERS:
        to_alias = {tool.id: tool.aliases[provider] for tool in catalog.tools.values()}
        rule = PROVIDER_RULES[provider]
        doc = {
            "artifact": "aliases",
            "provider": provider,
            "rule": {"pattern": rule.pattern.pattern, "max_length": rule.max_length, "doc": rule.doc},
            "to_alias": to_alias,
            "to_id": {alias: tool_id for tool_id, alias in to_alias.items()},
        }
        out[provider] = _add_json(artifacts, "aliases", provider, doc)
    return out


def _plan_stats(artifacts: ArtifactSet, specs: Specs) -> Ref:
    per_tool = {
        tool_id: {
            "pointer": spec["tokens"]["pointer"],
            "spec": spec["tokens"]["spec"],
            **(
                {"skill_level1": spec["skill"]["level1_tokens"], "skill_level2": spec["skill"]["body_tokens"]}
                if "skill" in spec
                else {}
            ),
        }
        for tool_id, (spec, _) in specs.items()
    }
    totals = {
        "pointers": sum(v["pointer"] for v in per_tool.values()),
        "specs": sum(v["spec"] for v in per_tool.values()),
    }
    return _add_json(
        artifacts,
        "stats",
        "tokens",
        {"artifact": "stats", "encoding": "o200k_base", "tools": per_tool, "totals": totals},
    )


def registry_version(manifest: dict[str, Any]) -> str:
    """A hash of the manifest without its own name: every file the build publishes, by content.

    The manifest holds the sha256 of every artifact (specs, node shards, index segments, vectors,
    prompts, exports), the format version and the generator, so two builds share a registry_version
    only when a reader would fetch the same bytes from both: a lexical build and an ``--embedder`` build
    of the same sources differ, and ``Catalog.open(..., version=)`` can tell them apart. A fresh build of
    the same sources and settings gives the same manifest, hence the same version, on any machine.
    """
    unnamed = {key: value for key, value in manifest.items() if key != "registry_version"}
    return sha256(dumps(unnamed))[:16]


@dataclass(frozen=True, slots=True)
class Plan:
    """A planned build: every file, the manifest and the ref that points to it."""

    files: FileStore
    manifest: dict[str, Any]
    manifest_ref: Ref
    registry_version: str
    #: Files kept from the previous build (path → ref), and build-private files (name → bytes, or a staged file).
    carried: dict[str, Ref] = field(default_factory=dict)
    private: dict[str, bytes | Path] = field(default_factory=dict)


def _core_manifest(catalog: CompiledCatalog, artifacts: ArtifactSet, specs: Specs) -> dict[str, Any]:
    """The manifest's own fields, with the node, namespace, lookup, alias and stats files they point to."""
    manifest: dict[str, Any] = {
        "artifact": "manifest",
        "format_version": FORMAT_VERSION,
        "generator": GENERATOR,
        "title": catalog.title,
        "summary": catalog.summary,
        "counts": {
            "nodes": len(catalog.nodes),
            "tools": sum(1 for t in catalog.tools.values() if t.skill is None),
            "skills": len(catalog.skills),
        },
        "namespaces": sorted({t.namespace for t in catalog.tools.values()}),
        "root": _plan_nodes(catalog, artifacts, specs),
        "namespace_index": _plan_namespaces(catalog, artifacts, specs),
        "lookup": _plan_lookup(catalog, artifacts, specs),
        "aliases": _plan_aliases(catalog, artifacts),
        "stats": _plan_stats(artifacts, specs),
    }
    if always_load := _plan_always_load(catalog, specs):
        manifest["always_load"] = always_load
    if catalog.git_sources:  # where skills fetched at build time came from (never fetched at read time)
        manifest["sources"] = {"git": [dict(source) for source in catalog.git_sources]}
    return manifest


def plan(
    catalog: CompiledCatalog,
    contributors: Sequence[Contributor] = (),
    previous: Path | None = None,
    *,
    out: Path | None = None,
    stage: Path | None = None,
    beside: Sequence[Contributor] = (),
) -> Plan:
    """Every artifact of a build, in memory; the manifest comes last because it points to the rest.

    ``contributors`` (search index, prompt sections, provider exports...) run in order after the
    core artifacts, each adding files and manifest entries (``build.py`` passes them in). ``previous``: the
    last good build of the same settings, which a contributor may build on (the search index's segment).
    ``out`` and ``stage``: where files the last build has are linked from, and where files beyond the memory
    budget are written (:class:`toolcat.build.filestore.FileStore`). ``beside``: contributors that read only the
    catalogue and the specs (prompts, exports), run beside the others (:func:`toolcat.build.parallel.run_beside`).
    """
    artifacts = ArtifactSet(files=FileStore(out, stage), previous=previous, memo=ToolMemo(previous, stage))
    specs = _plan_tools(catalog, artifacts)
    manifest: dict[str, Any] = {}

    def in_order() -> None:
        # the node, namespace and lookup shards need only the specs: planned here, beside the forked worker (issue 29)
        manifest.update(_core_manifest(catalog, artifacts, specs))
        for contribute in contributors:
            contribute(catalog, artifacts, specs)

    run_beside(catalog, artifacts, specs, beside, in_order, out=out, stage=stage)
    manifest.update(artifacts.manifest)
    version = registry_version(manifest)
    manifest = {**manifest, "registry_version": version}
    manifest_ref = artifacts.add_json("manifests", "manifest", manifest)
    artifacts.private.update(artifacts.memo.close_all())
    return Plan(artifacts.files, manifest, manifest_ref, version, artifacts.carried, artifacts.private)
