"""The typed, immutable catalogue: what validation produces and planning consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..format.types import JSON

NodePath = tuple[str, ...]


def path_str(path: NodePath) -> str:
    """``("coding", "refactoring")`` → ``"coding/refactoring"``; the root is ``""``."""
    return "/".join(path)


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a thing was defined: the source file (relative to the root) and line."""

    file: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Node:
    """One ontology node: a folder of the source tree."""

    path: NodePath
    title: str
    summary: str
    tags: tuple[str, ...]
    origin: Origin

    @property
    def name(self) -> str:
        """The last path segment (``""`` for the root)."""
        return self.path[-1] if self.path else ""


@dataclass(frozen=True, slots=True)
class SkillResource:
    """A file bundled with a skill (level 3), read only on demand."""

    rel_path: str
    data: bytes
    media_type: str


@dataclass(frozen=True, slots=True)
class SkillInfo:
    """The Agent Skill behind a ``task.*`` tool."""

    name: str
    frontmatter: dict[str, JSON]
    body: str
    resources: tuple[SkillResource, ...]
    #: 004's skill metadata (author, capabilities, constraints, tools), from frontmatter or metadata.yaml.
    meta: dict[str, JSON] = field(default_factory=dict)
    #: ``skill`` for an Agent Skill, ``agent`` for an AGENT.md agent (both run as ``task.*`` tools).
    kind: str = "skill"
    #: An Agent Skill's SKILL.md bytes exactly as authored (None for an agent): stored as ``skill.skill_md``.
    markdown: bytes | None = None
    #: That file's own frontmatter as JSON, as a YAML reader of it gets it: what the Skills extension lists beside it.
    markdown_frontmatter: dict[str, JSON] | None = None


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool (or a skill exposed as a tool), validated and normalised."""

    id: str
    summary: str
    description: str
    args_schema: dict[str, JSON]
    path: NodePath
    origin: Origin
    result_schema: dict[str, JSON] | None = None
    examples: tuple[dict[str, JSON], ...] = ()
    errors: tuple[dict[str, JSON], ...] = ()
    tags: tuple[str, ...] = ()
    kind: str = "read"
    optional: bool = False
    when_to_use: str = ""
    policy: dict[str, tuple[str, ...]] = field(default_factory=dict)
    annotations: dict[str, JSON] = field(default_factory=dict)
    categories: tuple[NodePath, ...] = ()
    handler: dict[str, JSON] | None = None
    version: str | None = None
    deprecated: bool | str = False
    skill: SkillInfo | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    #: Old names (ids, function names) that still resolve to this tool.
    legacy_aliases: tuple[str, ...] = ()
    #: Exposed directly beside the discovery tools in every dialect and export.
    always_load: bool = False
    #: Phrases users say for this tool: indexed, never shown to the model.
    search_hints: tuple[str, ...] = ()
    #: What the tool acts on and what it does to it (001's analytics and UI events); "" derives them from the id.
    entity: str = ""
    action: str = ""
    #: Top-level arguments the host fills from its context (``Catalog.open(context=...)``), sorted.
    contexts: tuple[str, ...] = ()

    @property
    def type(self) -> str:
        """``"skill"`` for an Agent Skill, ``"agent"`` for an AGENT.md agent, else ``"tool"``."""
        return self.skill.kind if self.skill is not None else "tool"

    @property
    def namespace(self) -> str:
        """The first id segment: ``file`` for ``file.read``."""
        return self.id.split(".", 1)[0]


@dataclass(frozen=True, slots=True)
class CompiledCatalog:
    """Everything a build compiles: nodes by path and tools by id, both sorted."""

    title: str
    summary: str
    nodes: dict[NodePath, Node]
    tools: dict[str, Tool]
    alias_collisions: tuple[tuple[str, str, str], ...] = ()
    #: Skills fetched from Git at build time (``skills_from``): url, commit, path, into and the skill names.
    git_sources: tuple[dict[str, Any], ...] = ()
    #: Namespaces with a per-domain discovery tool (``discovery.per_domain`` in toolcat.yaml; seed 002).
    discover_domains: tuple[str, ...] = ()
    #: Servers list the pinned (always_load) tools beside the discovery tools (``discovery.pinned``; seed 001 says no).
    pin_tools: bool = False
    #: Lookups built on first use (a catalogue is not changed once compiled): tools and child nodes by node.
    _by_node: dict[str, dict[NodePath, list[Any]]] = field(default_factory=dict, compare=False, repr=False)

    def tools_at(self, path: NodePath) -> list[Tool]:
        """Tools listed directly at a node: their home node or an extra category."""
        if "tools" not in self._by_node:
            table: dict[NodePath, list[Any]] = {}
            for tool in self.tools.values():
                for home in dict.fromkeys((tool.path, *tool.categories)):
                    table.setdefault(home, []).append(tool)
            self._by_node["tools"] = table
        return list(self._by_node["tools"].get(path, ()))

    def children(self, path: NodePath) -> list[Node]:
        """Direct child nodes, sorted by name."""
        if "children" not in self._by_node:
            table: dict[NodePath, list[Any]] = {}
            for node_path, node in self.nodes.items():
                if node_path:
                    table.setdefault(node_path[:-1], []).append(node)
            self._by_node["children"] = table
        return list(self._by_node["children"].get(path, ()))

    @property
    def skills(self) -> list[Tool]:
        """The tools that are Agent Skills."""
        return [t for t in self.tools.values() if t.skill is not None]
