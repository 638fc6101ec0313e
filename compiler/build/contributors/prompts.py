"""Prompt sections: Markdown and XML an agent developer pastes into a system prompt, rendered into the build.

Rendered with Jinja2 from ``templates/prompts/`` (package data, ``StrictUndefined``):

* tool sections in the ADR format (``## <Category> Tools``, ``### id (required|optional)``,
  Parameters, When to use, Example), per top-level category and for the whole catalogue,
  each in a ``short`` and a ``full`` variant;
* tool-selection guidelines and the invocation format;
* the discovery system prompt of each dialect (spec, gateway, namespaced);
* Claude's ``<available_skills>`` block (as ``skills-ref`` emits it) and a Markdown skills list;
* per-tool snippets (short and full) with their token counts, so the stdlib reader can
  assemble a focused section at run time without Jinja
  (:func:`toolcat.reader.prompting.prompt_section`).

Everything lands under ``prompts/``; ``manifest["prompts"]`` holds the index ref and the
token count of every section.
"""

from __future__ import annotations

import functools
import html
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jinja2

from ...format.buckets import LOOKUP_HASH, lookup_bucket
from ...format.dialects import DIALECT_NAMES
from ...format.schema_text import limit_rules, type_text
from ..tokens import ENCODING, count_tokens

if TYPE_CHECKING:
    from ...format.types import Ref
    from ..artifacts import ArtifactSet
    from ..model import CompiledCatalog, Tool
from ...format.types import JSON

log = logging.getLogger(__name__)

#: What joins snippets in a section: a blank line between full entries, a plain newline in a short list.
SEPARATORS = {"short": "\n", "full": "\n\n"}
SECTION_JOIN = "\n\n"
_NEGATIVE = re.compile(r"^(don't|do not|never|avoid|no)\b", re.IGNORECASE)
SNIPPET_BUCKET_TARGET = 128
MAX_GROUPS_IN_PROMPT = 12
DETAILS: tuple[str, ...] = ("short", "full")
#: Tokens one tool's examples may take in its full snippet (the first example is always shown).
EXAMPLES_TOKEN_BUDGET = 400


@functools.cache
def environment() -> jinja2.Environment:
    """The Jinja environment over ``templates/prompts`` (package data); a missing variable is an error."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("toolcat.templates", "prompts"),
        auto_reload=False,  # templates are package data: no stat of the file on every render
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701 - Markdown and prompt text, not HTML; XML is escaped by xml_escape
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["xml_escape"] = html.escape  # the escaping skills-ref uses
    return env


def tidy(text: str) -> str:
    """Trailing spaces off, at most one blank line in a row (outside code fences it never matters), no edge blanks."""
    lines = [line.rstrip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def render(template: str, **context: Any) -> str:
    """Render one template of ``templates/prompts`` and tidy the result."""
    return tidy(environment().get_template(template).render(**context))


# -- parameters from JSON Schema -------------------------------------------------------


def _resolve(node: JSON, root: dict[str, JSON], depth: int = 0) -> JSON:
    if isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/") and depth < 8:
        target: JSON = root
        for part in node["$ref"][2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        if isinstance(target, dict):
            return _resolve({**target, **{k: v for k, v in node.items() if k != "$ref"}}, root, depth + 1)
    return node


def _js(value: JSON) -> str:
    return json.dumps(value, ensure_ascii=False)


def describe_parameters(
    schema: dict[str, JSON], root: dict[str, JSON] | None = None, depth: int = 0
) -> list[dict[str, JSON]]:
    """A readable parameter list from an object schema: name, type, required, description, default, valid values, nested."""
    root = schema if root is None else root
    schema = _resolve(schema, root)
    required = set(schema.get("required") or [])
    out = []
    for name, raw in (schema.get("properties") or {}).items():
        node = _resolve(raw, root)
        if not isinstance(node, dict):
            node = {}
        indent = "\n" + "  " * (depth + 1)
        description = indent.join(line.rstrip() for line in str(node.get("description", "")).strip().splitlines())
        if description and description[-1] not in ".!?:)`":
            description += "."
        constraints = limit_rules(node, root)
        if node.get("deprecated"):
            constraints.append("Deprecated")
        values = node.get("enum")
        if values is None and "const" in node:
            values = [node["const"]]
        children: list[dict[str, JSON]] = []
        if depth < 4:
            items = _resolve(node.get("items"), root) if node.get("type") == "array" else None
            target = items if isinstance(items, dict) and items.get("properties") else node
            if isinstance(target, dict) and target.get("properties"):
                children = describe_parameters(target, root, depth + 1)
        out.append(
            {
                "name": name,
                "type": type_text(node, root),
                "required": name in required,
                "description": description,
                "default": _js(node["default"]) if "default" in node else None,
                "enum": [f"`{_js(v) if not isinstance(v, str) else v}`" for v in values]
                if isinstance(values, list)
                else [],
                "constraints": "; ".join(constraints),
                "children": children,
            }
        )
    return out


def _placeholder(node: JSON, root: dict[str, JSON], name: str) -> JSON:
    node = _resolve(node, root)
    if not isinstance(node, dict):
        return f"<{name}>"
    for key in ("default", "const"):
        if key in node:
            return node[key]
    if node.get("examples"):
        return node["examples"][0]
    if node.get("enum"):
        return node["enum"][0]
    kind = node.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object" or node.get("properties"):
        required = node.get("required") or []
        return {k: _placeholder(v, root, k) for k, v in (node.get("properties") or {}).items() if k in required}
    if kind == "array":
        items = _resolve(node.get("items"), root)
        return [_placeholder(items, root, f"{name} item")] if isinstance(items, dict) and items else []
    return {"integer": 1, "number": 1, "boolean": True}.get(str(kind), f"<{name}>")


def example_call(tool: Tool) -> tuple[str, str]:
    """The first authored example as a JSON call (or one made from the required arguments), and its description."""
    return example_calls(tool)[0]


def example_calls(tool: Tool, budget: int = EXAMPLES_TOKEN_BUDGET) -> list[tuple[str, str]]:
    """Every authored example as ``(JSON call, description)``, as ADR-002's ``formatExamples`` prints them.

    The first always; each further one while all of them together stay within ``budget`` tokens, so
    one tool with dozens of examples cannot crowd the others out of a section. A tool without
    examples gets one call made from its required arguments.
    """
    if not tool.examples:
        return [(_js({"tool": tool.id, "args": _placeholder(tool.args_schema, tool.args_schema, "args")}), "")]
    calls: list[tuple[str, str]] = []
    spent = 0
    for example in tool.examples:
        call = _js({"tool": tool.id, "args": example.get("args", {})})
        description = str(example.get("description", "")).strip().rstrip(".")
        cost = count_tokens(f"{description} {call}")
        if calls and spent + cost > budget:
            break
        calls.append((call, description))
        spent += cost
    return calls


# -- snippets and sections -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Snippet:
    """The pre-rendered short and full text of one tool, with token counts."""

    tool_id: str
    optional: bool
    category: str
    short: str
    full: str
    short_tokens: int
    full_tokens: int

    def as_dict(self) -> dict[str, JSON]:
        """As stored in a snippet bucket."""
        return {
            "tool_id": self.tool_id,
            "optional": self.optional,
            "category": self.category,
            "short": self.short,
            "full": self.full,
            "short_tokens": self.short_tokens,
            "full_tokens": self.full_tokens,
        }


def tool_snippet(tool: Tool, category: str) -> Snippet:
    """Render one tool's short and full snippets."""
    examples = example_calls(tool)
    when = " ".join(tool.when_to_use.split())
    if when == " ".join(tool.summary.split()):
        when = ""  # saying the summary twice adds tokens, not guidance
    if not when and tool.skill is not None:
        when = "The task matches the description above: call this first to load the instructions, then follow them."
    deprecated = tool.deprecated if isinstance(tool.deprecated, str) else ("yes" if tool.deprecated else "")
    notes = [
        *tool.policy.get("do", ()),
        *(
            line if _NEGATIVE.match(line) else f"Don't {line[:1].lower()}{line[1:]}"
            for line in tool.policy.get("dont", ())
        ),
        *tool.policy.get("edge_cases", ()),
    ]
    full = render(
        "tool_full.md.j2",
        tool=tool,
        parameters=describe_parameters(tool.args_schema),
        when=when,
        examples=[{"call": call, "description": description} for call, description in examples],
        omitted_examples=len(tool.examples) - len(examples) if tool.examples else 0,
        deprecated=deprecated,
        notes=notes,
    )
    short = render("tool_short.md.j2", tool=tool)
    return Snippet(tool.id, tool.optional, category, short, full, count_tokens(short), count_tokens(full))


def _is_agent(frontmatter: dict[str, JSON]) -> bool:
    """Whether a skill-like entry is an agent (``metadata.entry: agent``, set by the build's agents loader)."""
    metadata = frontmatter.get("metadata")
    return isinstance(metadata, dict) and metadata.get("entry") == "agent"


def _category(tool: Tool) -> str:
    return tool.path[0] if tool.path else ""


def _category_title(catalog: CompiledCatalog, key: str) -> tuple[str, str]:
    node = catalog.nodes.get((key,) if key else ())
    if not key:
        return "General", ""
    if node is None:
        return key.replace("_", " ").title(), ""
    return node.title or key.replace("_", " ").title(), node.summary


def _ordered(snippets: list[Snippet]) -> tuple[list[Snippet], list[Snippet]]:
    required = sorted((s for s in snippets if not s.optional), key=lambda s: s.tool_id)
    optional = sorted((s for s in snippets if s.optional), key=lambda s: s.tool_id)
    return required, optional


#: Where the required and the optional snippets go in a section before they are put in (:func:`tools_section`).
_REQUIRED_HOLE, _OPTIONAL_HOLE = "\x00toolcat-required\x00", "\x00toolcat-optional\x00"


def tools_section(title: str, summary: str, snippets: list[Snippet], detail: str) -> str:
    """One ``## <title> Tools`` section: required tools first, then the optional ones.

    The section is :func:`render`'s of the template with the snippets joined, made faster (issue 33: tidying the
    sections' 6 MB at 10,000 tools took a sixth of the prompts' time): the template is rendered and tidied with a
    hole where each joined list goes, and the lists are put in after. A snippet is tidy already (:func:`render`
    made it), not empty and without a newline at either end, so a list of them joined by the separator is what
    :func:`tidy` leaves as it is, and tidying the whole gives the same text (``tests/build/test_prompts.py``). An
    empty snippet, or a hole the title or summary holds, takes the plain way.
    """
    required, optional = _ordered(snippets)
    separator = SEPARATORS[detail]
    groups = {
        _REQUIRED_HOLE: [getattr(s, detail) for s in required],
        _OPTIONAL_HOLE: [getattr(s, detail) for s in optional],
    }
    context = {
        "title": title,
        "summary": summary,
        "optional_intro": render("optional_intro.md.j2", detail=detail, has_required=bool(required)),
        "separator": separator,
    }
    if all(text for texts in groups.values() for text in texts):
        holes = {hole: [hole] if texts else [] for hole, texts in groups.items()}
        text = render("tools_section.md.j2", required=holes[_REQUIRED_HOLE], optional=holes[_OPTIONAL_HOLE], **context)
        if all(text.count(hole) == len(holes[hole]) for hole in groups):
            for hole, texts in groups.items():
                if texts:
                    at = text.index(hole)
                    text = "".join((text[:at], separator.join(texts), text[at + len(hole) :]))
            return text
    return render("tools_section.md.j2", required=groups[_REQUIRED_HOLE], optional=groups[_OPTIONAL_HOLE], **context)


def _counts_text(catalog: CompiledCatalog) -> str:
    tools = sum(1 for t in catalog.tools.values() if t.skill is None)
    skills = len(catalog.skills)
    text = f"{tools} tool{'s' if tools != 1 else ''}"
    return f"{text} and {skills} skill{'s' if skills != 1 else ''}" if skills else text


def _joined(names: list[str]) -> str:
    shown = names[:MAX_GROUPS_IN_PROMPT]
    more = len(names) - len(shown)
    return ", ".join(f"`{n}`" for n in shown) + (f" and {more} more" if more > 0 else "")


@dataclass(frozen=True, slots=True)
class PromptSet:
    """Every rendered section (name → text, media type) and every tool's snippet."""

    sections: dict[str, tuple[str, str]]
    snippets: dict[str, Snippet]
    focused: dict[str, JSON] = field(default_factory=dict)


def build_prompts(
    catalog: CompiledCatalog,
    skill_locations: dict[str, str] | None = None,
    render_snippet: Callable[[Tool, str], Snippet] = tool_snippet,
) -> PromptSet:
    """Render all sections of ``catalog``; ``skill_locations`` maps skill names to their SKILL.md location.

    ``render_snippet`` renders one tool's snippets (the build passes :func:`tool_snippet` through its per-tool memo).
    """
    skill_locations = skill_locations or {}
    snippets = {tool.id: render_snippet(tool, _category(tool)) for tool in catalog.tools.values()}
    sections: dict[str, tuple[str, str]] = {}
    by_category: dict[str, list[Snippet]] = {}
    for snippet in snippets.values():
        by_category.setdefault(snippet.category, []).append(snippet)
    for detail in DETAILS:
        parts = []
        for key in sorted(by_category):
            title, summary = _category_title(catalog, key)
            text = tools_section(title, summary, by_category[key], detail)
            sections[f"tools.{key or '_root'}.{detail}"] = (text, "text/markdown")
            parts.append(text)
        sections[f"tools.{detail}"] = (SECTION_JOIN.join(parts), "text/markdown")
    sections["guidelines"] = (
        render(
            "guidelines.md.j2",
            skill_count=len(catalog.skills),
            agent_count=sum(1 for t in catalog.skills if t.skill and _is_agent(t.skill.frontmatter)),
        ),
        "text/markdown",
    )
    example = next((t for t in catalog.tools.values() if t.skill is None and t.examples), None)
    example = example or next(iter(catalog.tools.values()), None)
    sections["invocation"] = (
        render(
            "invocation.md.j2",
            example_id=example.id if example else "file.read",
            example_alias=example.aliases.get("openai", example.id.replace(".", "_")) if example else "file_read",
            example_args=_js(example.examples[0].get("args", {}) if example and example.examples else {}),
        ),
        "text/markdown",
    )
    categories = _joined([n.name for n in catalog.children(())])
    namespaces = _joined(sorted({t.namespace for t in catalog.tools.values()}))
    for dialect in DIALECT_NAMES:
        # the gateway's groups are id namespaces (tool_help walks ids); spec's list walks the ontology
        sections[f"system.{dialect}"] = (
            render(
                f"system/{dialect}.md.j2",
                title=catalog.title or "catalogue",
                counts=_counts_text(catalog),
                groups=namespaces if dialect == "gateway" else categories,
                namespaces=namespaces,
                domains=_joined([f"discover_{d}_tools" for d in catalog.discover_domains]),
            ),
            "text/markdown",
        )
    skills = [
        {
            "name": t.skill.name,
            "tool_id": t.id,
            "description": str(t.skill.frontmatter.get("description", t.summary)),
            "location": skill_locations.get(t.skill.name, f"{t.skill.name}/SKILL.md"),
        }
        for t in sorted(catalog.skills, key=lambda t: t.skill.name if t.skill else t.id)
        if t.skill is not None
    ]
    sections["skills.xml"] = (render("skills.xml.j2", skills=skills), "application/xml")
    sections["skills.md"] = (
        render("skills.md.j2", skills=skills, describe_call='tool_describe("task.<name>")'),
        "text/markdown",
    )
    headers = {d: render("focused_header.md.j2", detail=d, title=catalog.title or "catalogue") for d in DETAILS}
    intros = {d: render("optional_intro.md.j2", detail=d, has_required=True) for d in DETAILS}
    focused: dict[str, JSON] = {
        "separator": SEPARATORS,
        "separator_tokens": {d: count_tokens(SEPARATORS[d]) for d in DETAILS},
        "block_separator": SECTION_JOIN,
        "block_separator_tokens": count_tokens(SECTION_JOIN),
        "header": headers,
        "header_tokens": {d: count_tokens(headers[d]) for d in DETAILS},
        "optional_intro": intros,
        "optional_intro_tokens": {d: count_tokens(intros[d]) for d in DETAILS},
    }
    return PromptSet(sections, snippets, focused)


# -- build contributor ---------------------------------------------------------------------


_SUFFIX = {"text/markdown": ".md", "application/xml": ".xml"}
#: The memo's kind for the snippet buckets' files (:meth:`toolcat.build.artifacts.ArtifactSet.add_json_remembered`;
#: their own kind: they are made in the forked worker, whose memo files are its own).
BUCKET_MEMO = "prompts.buckets"


def contribute(catalog: CompiledCatalog, artifacts: ArtifactSet, specs: dict[str, tuple[dict[str, JSON], Ref]]) -> None:
    """Render every section and snippet into ``prompts/`` and set ``manifest["prompts"]``."""
    locations = {spec["skill"]["name"]: spec["skill"]["body"]["path"] for spec, _ in specs.values() if "skill" in spec}

    def remembered(tool: Tool, category: str) -> Snippet:
        # a snippet reads only fields of the stored spec (its path gives the category): keyed by the spec's hash
        def make() -> list[JSON]:
            made = tool_snippet(tool, category)
            return [made.short, made.full, made.short_tokens, made.full_tokens]

        short, full, short_tokens, full_tokens = artifacts.memo.get("snippet", str(specs[tool.id][1]["sha256"]), make)
        return Snippet(tool.id, tool.optional, category, short, full, short_tokens, full_tokens)

    prompt_set = build_prompts(catalog, locations, remembered)
    artifacts.memo.close("snippet")
    sections: dict[str, JSON] = {}
    tokens: dict[str, int] = {}
    for name, (text, media_type) in sorted(prompt_set.sections.items()):
        ref = artifacts.add("prompts", name, _SUFFIX[media_type], text.encode("utf-8"))
        tokens[name] = count_tokens(text)
        sections[name] = {"ref": ref, "media_type": media_type, "tokens": tokens[name]}
    count = max(1, 1 << max(0, (len(prompt_set.snippets) // SNIPPET_BUCKET_TARGET).bit_length()))
    buckets: list[dict[str, JSON]] = [{} for _ in range(count)]
    for tool_id, snippet in sorted(prompt_set.snippets.items()):
        buckets[lookup_bucket(tool_id, count)][tool_id] = snippet.as_dict()
    bucket_refs = [
        artifacts.add_json_remembered(
            "prompts",
            f"snippets.b{index}",
            {"artifact": "prompt_snippets", "bucket": index, "buckets": count, "entries": entries},
            BUCKET_MEMO,
        )
        for index, entries in enumerate(buckets)
    ]
    artifacts.memo.close(BUCKET_MEMO)
    required, _ = _ordered(list(prompt_set.snippets.values()))
    index_ref = artifacts.add_json(
        "prompts",
        "index",
        {
            "artifact": "prompts",
            "encoding": ENCODING,
            "sections": sections,
            "snippets": {"buckets": count, "hash": LOOKUP_HASH, "refs": bucket_refs},
            "required": [
                {"tool_id": s.tool_id, "short_tokens": s.short_tokens, "full_tokens": s.full_tokens} for s in required
            ],
            "focused": prompt_set.focused,
        },
    )
    artifacts.manifest["prompts"] = {"index": index_ref, "tokens": tokens}
    for tool in catalog.skills:
        assert tool.skill is not None  # noqa: S101 - skills always carry their SkillInfo
        spec = specs[tool.id][0]["skill"]
        if spec["level1_tokens"] > 100 or spec["body_tokens"] > 5000:
            log.warning(
                "skill %s: level 1 is %d tokens (guidance: at most 100), level 2 is %d (at most 5,000)",
                tool.skill.name,
                spec["level1_tokens"],
                spec["body_tokens"],
            )
