"""Build the search index: fit TF-IDF over tool and node texts and write it as term shards and doc shards.

The analyzers come from :mod:`toolcat.reader.search.searcher`, so the stdlib reader tokenises a query
exactly as scikit-learn tokenised the documents. Documents are numbered in home-path order, so
every node's subtree is one contiguous doc-id range (tools listed there through ``categories``
are kept as an explicit list): scoping a search to a category needs only that node's entry.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
from collections.abc import Callable
from typing import Any

from ....format.analyzer import ANALYZERS, analyzer_settings, word_ngrams
from ....format.index_format import INDEX_FORMAT, word_filter
from ....format.types import Ref
from ...artifacts import SPEC_KEY, ArtifactSet, pointer
from ...memo import ToolMemo
from ...model import CompiledCatalog, Node, NodePath, Tool
from ...progress import report
from .fit import Grams, fit_space
from .segments import (
    DELTA_MAX_BYTES,
    DELTA_MAX_DOCS,
    INDEX_STATE,
    PART_FILES,
    BaseTerms,
    PartDocs,
    assign_ids,
    delta_node_entries,
    fit_delta,
    node_key,
    part_state,
    plan_delta,
    read_base,
    save_state,
    tool_key,
    write_delta,
)
from .shards import (
    SPACE_WEIGHTS,
    _write_docs,
    _write_space,
)

log = logging.getLogger(__name__)

__all__ = [
    "EMBED_FIELDS",
    "FIELD_WEIGHTS",
    "contribute",
    "doc_order",
    "node_text",
    "tool_embed_text",
    "tool_embed_texts",
    "tool_order",
    "tool_pointer",
    "tool_text",
    "tool_texts",
]

#: How many times each field is repeated in a tool's text (with sublinear tf, k copies weigh 1 + ln k).
FIELD_WEIGHTS: dict[str, int] = {
    "id": 2,
    "summary": 2,
    "description": 1,
    "tags": 1,
    "args": 1,
    "examples": 1,
    "node_titles": 1,
    "when_to_use": 1,
    "skill_name": 2,
    "skill_description": 2,
    "skill_body": 1,
    "search_hints": 2,
    "legacy_aliases": 1,
    "skill_capabilities": 1,
}
SKILL_BODY_CHARS = 1500
#: Each field is indexed up to this many characters. A multi-megabyte description (sources allow 4 MiB)
#: would cost hundreds of MB in the char n-gram space and add nothing a query could find.
FIELD_CHARS = 8_000


def _schema_text(schema: Any, depth: int = 0) -> list[str]:
    """Argument names and descriptions, two levels deep."""
    out: list[str] = []
    if not isinstance(schema, dict) or depth > 2:
        return out
    props = schema.get("properties")
    if isinstance(props, dict):
        # by name: a schema read back from the build cache has its keys sorted, and the text must not depend on it
        for name, sub in sorted(props.items()):
            out.append(str(name))
            if isinstance(sub, dict):
                if isinstance(sub.get("description"), str):
                    out.append(sub["description"])
                out.extend(_schema_text(sub, depth + 1))
                out.extend(_schema_text(sub.get("items"), depth + 1))
    return out


def _node_titles(tool: Tool, catalog: CompiledCatalog) -> list[str]:
    titles: list[str] = []
    for home in (tool.path, *tool.categories):
        for depth in range(1, len(home) + 1):
            node = catalog.nodes.get(home[:depth])
            if node is not None and node.title not in titles:
                titles.append(node.title)
    return titles


def tool_text(tool: Tool, catalog: CompiledCatalog) -> str:
    """The text a tool is indexed under: its fields, repeated by :data:`FIELD_WEIGHTS`."""
    fields: dict[str, list[str]] = {
        "id": [tool.id],
        "summary": [tool.summary],
        "description": [tool.description],
        "tags": list(tool.tags),
        "args": _schema_text(tool.args_schema),
        "examples": [str(ex.get("description", "")) for ex in tool.examples],
        "node_titles": _node_titles(tool, catalog),
        "when_to_use": [tool.when_to_use],
        "search_hints": list(tool.search_hints),
        "legacy_aliases": list(tool.legacy_aliases),
    }
    if tool.skill is not None:
        fields["skill_capabilities"] = [str(c) for c in tool.skill.meta.get("capabilities") or []]
        fields["skill_name"] = [tool.skill.name]
        fields["skill_description"] = [str(tool.skill.frontmatter.get("description", ""))]
        fields["skill_body"] = [tool.skill.body[:SKILL_BODY_CHARS]]
    lines: list[str] = []
    for name, texts in fields.items():
        text = "\n".join(t for t in texts if t)[:FIELD_CHARS]
        if text:
            lines.extend([text] * FIELD_WEIGHTS[name])
    return "\n".join(lines)


#: The fields of a tool's embedded text (the semantic tier's one vector per tool), in order: a build cuts the text
#: at 128 tokens, so the first ones count most. ``args`` is each argument's description (two levels deep, cut at
#: :data:`EMBED_ARG_CHARS`) with its enum values; ``examples`` the examples' descriptions. ``arg_names`` (argument
#: names alone) and ``path`` (the home path's titles) are available to the bench, measured and left out
#: (docs/search.md, "Fields"; ``bench/bench_search_tune.py --fields``).
EMBED_FIELDS: tuple[str, ...] = ("id", "summary", "description", "tags", "search_hints", "skill", "args", "examples")
EMBED_TEXT_CHARS = 1000
EMBED_ARG_CHARS = 200
EMBED_ENUM_VALUES = 8


def _embed_args(schema: Any, depth: int = 0) -> list[str]:
    """Each argument's description with its enum values (``desc (a, b)``), by name, two levels deep."""
    props = schema.get("properties") if isinstance(schema, dict) and depth < 2 else None
    if not isinstance(props, dict):
        return []
    out: list[str] = []
    for _, sub in sorted(props.items()):
        if not isinstance(sub, dict):
            continue
        text = sub["description"].strip()[:EMBED_ARG_CHARS] if isinstance(sub.get("description"), str) else ""
        values = sub.get("enum")
        listed = values[:EMBED_ENUM_VALUES] if isinstance(values, list) else []
        shown = [str(v) for v in listed if isinstance(v, str | int | float)]
        if shown:
            text = f"{text} ({', '.join(shown)})".strip()
        out += [text, *_embed_args(sub, depth + 1), *_embed_args(sub.get("items"), depth + 1)]
    return out


def _path_titles(tool: Tool, catalog: CompiledCatalog) -> list[str]:
    """The titles of the nodes on a tool's home path, root first (its place in the hierarchy)."""
    nodes = (catalog.nodes.get(tool.path[:depth]) for depth in range(1, len(tool.path) + 1))
    return [node.title for node in nodes if node is not None and node.title]


def _description_rest(tool: Tool) -> str:
    """The description, less a leading copy of the summary."""
    summary = tool.summary.rstrip(".")
    if summary and tool.description.startswith(summary):
        return tool.description[len(summary) :].lstrip(". \n")
    return tool.description


def _arg_names(tool: Tool) -> list[str]:
    props = tool.args_schema.get("properties") if isinstance(tool.args_schema, dict) else None
    return [" ".join(str(n).replace("_", " ") for n in sorted(props))] if isinstance(props, dict) else []


def _embed_fields(tool: Tool, catalog: CompiledCatalog | None) -> dict[str, Callable[[], list[str]]]:
    """Each field a tool's embedded text may hold, made only when :data:`EMBED_FIELDS` names it."""
    return {
        "id": lambda: [tool.id.replace(".", " ").replace("_", " ").replace("-", " ")],
        "summary": lambda: [tool.summary],
        "description": lambda: [_description_rest(tool)],
        "tags": lambda: [" ".join(tool.tags)],
        "search_hints": lambda: list(tool.search_hints),
        "skill": lambda: [tool.skill.name, str(tool.skill.frontmatter.get("description", ""))] if tool.skill else [],
        "args": lambda: _embed_args(tool.args_schema),
        "examples": lambda: [str(ex.get("description", "")) for ex in tool.examples],
        "arg_names": lambda: _arg_names(tool),
        "path": lambda: [" / ".join(_path_titles(tool, catalog))] if catalog is not None else [],
    }


def tool_embed_text(tool: Tool, catalog: CompiledCatalog | None = None) -> str:
    """What a tool is embedded as: its :data:`EMBED_FIELDS`, joined by ``. ``, at most 1,000 characters.

    Each part loses its final full stop and repeats are dropped (a description that starts with the summary keeps
    only the rest): MiniLM averages its tokens, and repeated text and a trailing ``.`` moved the vector away from
    a query's (docs/search.md, "Fields").
    """
    fields = _embed_fields(tool, catalog)
    texts = (text for name in EMBED_FIELDS if name in fields for text in fields[name]())
    parts = (text.strip().rstrip(".").strip() for text in texts)
    return ". ".join(dict.fromkeys(p for p in parts if p))[:EMBED_TEXT_CHARS]


def doc_terms_text(tool: Tool, catalog: CompiledCatalog | None = None) -> str:
    """The text a tool's learned-expansion vector is made from (:mod:`.terms`): the semantic tier's embedded text."""
    return tool_embed_text(tool, catalog)


#: Part of every text key: a new value when the texts change in a way the code fingerprint would not show.
TEXT_KEY_SALT = b"toolcat-texts-1\x00"


def _text_salt() -> bytes:
    """:data:`TEXT_KEY_SALT` and the settings the texts are made with, which a bench or a tuning run may change."""
    settings = (tuple(EMBED_FIELDS), sorted(FIELD_WEIGHTS.items()), EMBED_TEXT_CHARS, SKILL_BODY_CHARS)
    return TEXT_KEY_SALT + marshal.dumps(settings, 2)


def _text_inputs(tool: Tool, catalog: CompiledCatalog) -> tuple[Any, ...]:
    """Everything :func:`tool_text` and :func:`tool_embed_text` read: the tool's fields and the node titles above it.

    Each home (the path, then each category) gives the title at every depth (None where no node is), so an edit of
    a node's title changes the key of every tool below it (``tests/build/test_incremental_texts.py``).
    """
    return (
        (tool.id, tool.summary, tool.description, tool.when_to_use),
        (list(tool.tags), list(tool.search_hints), list(tool.legacy_aliases)),
        (tool.args_schema, list(tool.examples), _titles(tool, catalog)),
        _skill_inputs(tool),
    )


def _titles(tool: Tool, catalog: CompiledCatalog) -> list[list[str | None]]:
    """The node title at every depth of each of the tool's homes (None where no node is)."""
    return [
        [
            node.title if (node := catalog.nodes.get(home[:depth])) is not None else None
            for depth in range(len(home) + 1)
        ]
        for home in (tool.path, *tool.categories)
    ]


def _skill_inputs(tool: Tool) -> tuple[Any, ...] | None:
    skill = tool.skill
    if skill is None:
        return None
    return (
        skill.name,
        skill.frontmatter.get("description", ""),
        skill.meta.get("capabilities"),
        skill.body[:SKILL_BODY_CHARS],
    )


def text_key(tool: Tool, catalog: CompiledCatalog, spec_key: str | None = None) -> str | None:
    """The key a tool's texts are kept under from one build to the next: the sha256 of their inputs' ``marshal`` bytes.

    ``marshal`` writes each value with its type, so equal keys mean equal inputs (two equal inputs may still get two
    keys, which only misses). None when an input is not one ``marshal`` writes (a YAML date...): then the texts are made.

    ``spec_key``: the key of the tool's stored spec (:func:`toolcat.build.artifacts.payload_key`, the sha256 of the
    spec's ``marshal`` bytes), when the planner made one. The spec holds every field of the tool the texts read but
    its search hints, skill and the titles above it, so the key is the spec's key with those: a 10,000-tool build does
    not write the tools' schemas and examples to ``marshal`` a second time (issue 33).
    """
    try:
        if spec_key is not None:
            rest = (list(tool.search_hints), _titles(tool, catalog), _skill_inputs(tool))
            return hashlib.sha256(_text_salt() + f"spec:{spec_key}\0".encode() + marshal.dumps(rest, 2)).hexdigest()
        return hashlib.sha256(_text_salt() + marshal.dumps(_text_inputs(tool, catalog), 2)).hexdigest()
    except ValueError:
        return None


def _remembered(
    kind: str, make: Callable[[Tool, CompiledCatalog], str], tools: list[Tool], catalog: CompiledCatalog, memo: ToolMemo
) -> list[str]:
    """``make(tool, catalog)`` for each tool, the last build's when the tool's :func:`text_key` is the same."""

    def one(tool: Tool) -> str:
        key = memo.once("text_key", tool.id, lambda: text_key(tool, catalog, memo.once(SPEC_KEY, tool.id, _none)))
        text: str = make(tool, catalog) if key is None else memo.get(kind, key, lambda: make(tool, catalog))
        return text

    return [one(tool) for tool in tools]


def _none() -> None:
    return None


def tool_texts(tools: list[Tool], catalog: CompiledCatalog, memo: ToolMemo) -> list[str]:
    """:func:`tool_text` of each tool, kept from the last build for an unchanged tool (issue 29)."""
    return _remembered("text", tool_text, tools, catalog, memo)


def tool_embed_texts(tools: list[Tool], catalog: CompiledCatalog, memo: ToolMemo) -> list[str]:
    """:func:`tool_embed_text` of each tool, kept from the last build for an unchanged tool (issue 29)."""
    return _remembered("embed_text", tool_embed_text, tools, catalog, memo)


def tool_pointer(tool: Tool, spec_ref: Ref, memo: ToolMemo) -> dict[str, Any]:
    """The tool's pointer, made once per build (node shards, namespace shards and index docs share it; none edits it)."""
    return memo.once("pointer", tool.id, lambda: pointer(tool, spec_ref))


def node_text(node: Node, catalog: CompiledCatalog) -> str:
    """A node's text: title and path (twice), summary, tags, and the ids and summaries of its direct tools."""
    tools = catalog.tools_at(node.path)
    parts = [node.title, " ".join(node.path)] * 2 + [node.summary, " ".join(node.tags)]
    parts += [f"{t.id} {t.summary}" for t in tools]
    return "\n".join(p for p in parts if p)


def _bundle(word: str, char_entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The char n-gram entries of one word; an n-gram whose posting equals an earlier one is ``{"same": ngram}``."""
    bundle: dict[str, Any] = {}
    seen: dict[tuple[Any, ...], str] = {}
    for gram in dict.fromkeys(word_ngrams(word)):
        entry = char_entries.get(gram)
        if entry is None:
            continue
        key = (entry["idf"], tuple(entry["docs"]), tuple(entry["w"]))
        bundle[gram] = {"same": seen[key]} if key in seen else entry
        seen.setdefault(key, gram)
    return bundle


class _Steps:
    """The ``index`` phase's progress (:mod:`toolcat.build.progress`), counted in the steps of a fit."""

    #: texts; then for each part (tools, nodes): analyse, fit words, fit chars, write
    FULL = 1 + 2 * 4

    def __init__(self, total: int) -> None:
        self.done = 0
        self.total = total
        report("index", 0, total)

    def __call__(self) -> None:
        """One more step done (the last one is reported by :meth:`finish`)."""
        self.done = min(self.done + 1, self.total - 1)
        report("index", self.done, self.total)

    def finish(self) -> None:
        """Every step done."""
        report("index", self.total, self.total)


def filtered(name: str, space: dict[str, Any]) -> bool:
    """Whether space ``name`` (its meta entry ``space``) carries a filter of its terms.

    Every words space does, and a paged chars space (``toolcat-index-3``): there an n-gram's shard is fetched by path,
    so an n-gram the index lacks cost a shard.
    """
    return name == "words" or "term_pages" in space


def _write_part(
    artifacts: ArtifactSet,
    part: str,
    texts: list[str],
    docs: list[dict[str, Any]],
    step: Callable[[], None] = lambda: None,
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Fit and write one part in full; its meta entry and, by space, the terms max_df dropped."""
    words = [ANALYZERS["words"](text) for text in texts]
    step()
    grams = Grams()
    fitted = {"words": fit_space("words", lambda: words, len(texts), lambda: {w for doc in words for w in doc})}
    step()
    fitted["chars"] = fit_space("chars", lambda: (grams.of(doc) for doc in words), len(texts), grams.every)
    step()
    entries = {name: space.entries() for name, space in fitted.items()}
    # Each word also carries the postings of its own character n-grams (a "bundle"): a query whose words the
    # catalogue knows then needs only its words' shards. The chars shards serve the n-grams of unknown words.
    for word, entry in entries["words"].items():
        bundle = _bundle(word, entries["chars"])
        if bundle:
            entry["chars"] = bundle
    spaces = []
    for name in SPACE_WEIGHTS:
        terms = entries.pop(name)
        space = _write_space(artifacts, part, name, terms)
        space["max_df"] = fitted[name].max_df
        # Which query words the index lacks, known before any term shard (docs/search.md); in a paged chars space,
        # which n-grams of an unknown word it lacks: their shards, fetched by path, are then not fetched at all.
        if filtered(name, space):
            space["filter"] = word_filter(terms)
        spaces.append(space)
    meta = {
        "n_docs": len(docs),
        "spaces": spaces,
        "bundles": True,
        **_write_docs(artifacts, part, docs),
    }
    step()
    return meta, {name: fitted[name].dropped for name in SPACE_WEIGHTS}


def tool_order(catalog: CompiledCatalog) -> list[Tool]:
    """Tools in doc-id order: by home path, then id, so each subtree is one contiguous range."""
    return sorted(catalog.tools.values(), key=lambda t: (t.path, t.id))


def doc_order(catalog: CompiledCatalog, artifacts: ArtifactSet) -> tuple[list[Tool | None], list[NodePath | None]]:
    """The index's doc ids → tools and node paths (None where a delta deleted the document).

    After the index stage ran on ``artifacts``: with a delta segment, added documents come after the base's
    and deleted ones leave holes, so a stage keyed by doc id (the semantic tier's vectors) must read this.
    """
    ids = artifacts.doc_order
    tools = [None if tool_id is None else catalog.tools[tool_id] for tool_id in ids["tools"]]
    by_key = {node_key(path): path for path in catalog.nodes}
    nodes = [None if key is None else by_key[key] for key in ids["nodes"]]
    return tools, nodes


def _node_entries(catalog: CompiledCatalog, order: list[Tool]) -> list[dict[str, Any]]:
    doc_of = {tool.id: doc_id for doc_id, tool in enumerate(order)}
    homes = [tool.path for tool in order]
    entries = []
    for path in sorted(catalog.nodes):
        node = catalog.nodes[path]
        low = next((i for i, home in enumerate(homes) if home[: len(path)] == path), len(homes))
        high = low
        while high < len(homes) and homes[high][: len(path)] == path:
            high += 1
        direct = sum(1 for home in homes[low:high] if home == path)
        extra = sorted(
            {doc_of[t.id] for t in order for c in t.categories if c[: len(path)] == path} - set(range(low, high))
        )
        extra_direct = sorted({doc_of[t.id] for t in order if path in t.categories} - set(range(low, low + direct)))
        entries.append(
            {
                "path": list(path),
                "title": node.title,
                "summary": node.summary,
                "tags": list(node.tags),
                "range": [low, high],
                "direct": direct,
                "extra": extra,
                "extra_direct": extra_direct,
            }
        )
    return entries


def contribute_expanded(
    catalog: CompiledCatalog, artifacts: ArtifactSet, specs: dict[str, tuple[dict[str, Any], Ref]]
) -> None:
    """:func:`contribute`, with the tools' learned term expansion (``--embedder terms``, opt-in)."""
    contribute(catalog, artifacts, specs, expand=True)


def contribute(
    catalog: CompiledCatalog,
    artifacts: ArtifactSet,
    specs: dict[str, tuple[dict[str, Any], Ref]],
    *,
    expand: bool = False,
) -> None:
    """Write the index (tools and nodes) and set ``manifest["index"]`` to its meta file.

    With a previous build to build on (:mod:`toolcat.build.contributors.index.segments`), only a delta segment is written when the
    catalogue changed little since that build's base segment; otherwise every document is fitted afresh.
    With ``expand``, the tools part also gets its learned expansion (:mod:`toolcat.build.contributors.index.terms`),
    written whole for the index's doc ids.
    """
    steps = _Steps(_Steps.FULL)
    order = tool_order(catalog)
    tools_docs = PartDocs(
        [tool_key(t) for t in order],
        tool_texts(order, catalog, artifacts.memo),
        [{"pointer": tool_pointer(tool, specs[tool.id][1], artifacts.memo)} for tool in order],
    )
    node_paths: list[NodePath] = sorted(catalog.nodes)
    node_texts = [node_text(catalog.nodes[p], catalog) for p in node_paths]
    steps()
    base = read_base(artifacts.previous)
    parts = _delta_parts(catalog, artifacts, base, order, tools_docs, node_paths, node_texts) if base else None
    if parts is None:
        tools, dropped = _write_part(artifacts, "tools", tools_docs.texts, tools_docs.entries, steps)
        nodes_docs = PartDocs([node_key(p) for p in node_paths], node_texts, _node_entries(catalog, order))
        # The root is kept for scoping (its entry holds the whole range) but not ranked: it matches everything.
        nodes, node_dropped = _write_part(artifacts, "nodes", nodes_docs.texts, nodes_docs.entries, steps)
        save_state(
            artifacts,
            {
                "tools": part_state(tools, tools_docs, dropped, keep_entries=False),
                "nodes": part_state(nodes, nodes_docs, node_dropped, keep_entries=True),
            },
        )
        artifacts.doc_order["tools"] = [t.id for t in order]
        artifacts.doc_order["nodes"] = [node_key(p) for p in node_paths]
    else:
        tools, nodes = parts
    if expand:
        from .terms import write_expansion  # noqa: PLC0415 - numpy, build only

        # doc_terms_text is tool_embed_text, whose texts the memo keeps (an edit reads them back)
        embedded = dict(zip((t.id for t in order), tool_embed_texts(order, catalog, artifacts.memo), strict=True))
        by_doc = [None if tool_id is None else embedded[tool_id] for tool_id in artifacts.doc_order["tools"]]
        tools = {**tools, "expand": write_expansion(artifacts, by_doc)}
    meta = {
        "artifact": "index_meta",
        "format": INDEX_FORMAT,
        "analyzer": analyzer_settings(),
        "score": {"combine": "sum over spaces of weight * cosine(query, doc)", "weights": SPACE_WEIGHTS},
        "fields": {"weights": FIELD_WEIGHTS, "skill_body_chars": SKILL_BODY_CHARS},
        "tools": tools,
        "nodes": nodes,
    }
    artifacts.manifest["index"] = artifacts.add_json("index", "meta", meta)
    steps.finish()
    log.info(
        "search index: %d tools, %d nodes, %s",
        len(order),
        len(node_paths),
        "one segment" if parts is None else "base segment kept, delta written",
    )


def _delta_parts(
    catalog: CompiledCatalog,
    artifacts: ArtifactSet,
    base: dict[str, Any],
    order: list[Tool],
    tools_docs: PartDocs,
    node_paths: list[NodePath],
    node_texts: list[str],
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Both parts as base + delta, or None when either delta is too big (then the build merges)."""
    assert artifacts.previous is not None  # noqa: S101 - read_base found the base there
    tool_ids, tool_order_ids = assign_ids(base["tools"]["keys"], tools_docs.keys)
    n_base = len(base["tools"]["keys"])
    added = [(i, tool) for i, tool in zip(tool_ids, order, strict=True) if i >= n_base]
    nodes_docs = PartDocs(
        [node_key(p) for p in node_paths], node_texts, delta_node_entries(catalog, base["nodes"]["docs"], added)
    )
    node_ids, node_order_ids = assign_ids(base["nodes"]["keys"], nodes_docs.keys)
    deltas = {}
    for name, docs, ids, doc_order in (
        ("tools", tools_docs, tool_ids, tool_order_ids),
        ("nodes", nodes_docs, node_ids, node_order_ids),
    ):
        delta = plan_delta(base[name], docs, ids, len(doc_order))
        if delta is None:
            log.info("index: the %s delta outgrew %d documents; merging into a new base segment", name, DELTA_MAX_DOCS)
            return None
        size = fit_delta(delta, base[name], BaseTerms(artifacts.previous, base[name]["meta"]), len(docs.keys))
        if size > DELTA_MAX_BYTES:
            log.info("index: the %s delta outgrew %d bytes; merging into a new base segment", name, DELTA_MAX_BYTES)
            return None
        deltas[name] = delta
    tools, nodes = (
        write_delta(artifacts, part, base[part]["meta"], deltas[part], artifacts.previous, base[part].get(PART_FILES))
        for part in ("tools", "nodes")
    )
    artifacts.private[INDEX_STATE] = (artifacts.previous / INDEX_STATE).read_bytes()
    artifacts.doc_order["tools"] = [None if k is None else k.split("\x1f", 1)[0] for k in tool_order_ids]
    artifacts.doc_order["nodes"] = node_order_ids
    return tools, nodes
