"""Cross-file rules and the typed catalogue: unique ids, known categories, provider aliases."""

from __future__ import annotations

import difflib
import logging
from dataclasses import replace
from typing import Any

from ...format.aliases import assign_aliases, plain_alias
from ...format.schema_text import schema_text
from ..errors import Diagnostics
from ..model import CompiledCatalog, Node, NodePath, Origin, SkillInfo, SkillResource, Tool, path_str
from ..tokens import count_tokens
from .load import Loaded
from .skill_meta import TaskArguments
from .skills import skill_tool_id

log = logging.getLogger(__name__)

SKILL_LEVEL1_BUDGET = 100
SKILL_LEVEL2_BUDGET = 5000

#: A call with ``resource`` reads one bundled file (level 3) instead of running the task.
RESOURCE_ARG: dict[str, Any] = {
    "type": "string",
    "description": "Relative path of a bundled file to read (level 3) instead of running the task.",
}
#: 004's ``task.list()``: generated when the catalogue has skills or agents and no tool of that id.
TASK_LIST_ID = "task.list"


def task_args_schema(arguments: TaskArguments | None, has_resources: bool) -> dict[str, Any]:
    """The args_schema of a skill or agent: its declared task arguments, ``resource`` when it bundles files.

    Other arguments are passed to the task as context (``additionalProperties: true``). Required
    arguments are said in their description and checked when the task runs, not by the schema, so
    that reading a bundled file (``resource`` alone) needs no task arguments.
    """
    declared = arguments.properties if arguments is not None else {}
    required = arguments.required if arguments is not None else ()
    properties: dict[str, Any] = {
        name: {**prop, "description": f"Required. {prop.get('description', '')}".strip()} if name in required else prop
        for name, prop in declared.items()
    }
    if has_resources:
        properties["resource"] = RESOURCE_ARG
    return {"type": "object", "properties": properties, "additionalProperties": True}


def _parse_category(text: str) -> NodePath:
    return tuple(part for part in text.split("/") if part)


def _skill_tool(record: dict[str, Any]) -> Tool:
    info = SkillInfo(
        name=record["name"],
        frontmatter=record["frontmatter"],
        body=record["body"],
        resources=tuple(SkillResource(r["rel_path"], r["data"], r["media_type"]) for r in record["resources"]),
        meta=dict(record.get("meta") or {}),
        kind=record.get("kind", "skill"),
        markdown=record.get("markdown"),
        markdown_frontmatter=record.get("markdown_frontmatter"),
    )
    arguments: TaskArguments | None = record.get("arguments")
    handler: dict[str, Any] = {"type": "skill"}
    if arguments is not None and arguments.required:
        handler["requires"] = list(arguments.required)  # checked by the reader when the task runs
    return Tool(
        id=record["id"],
        summary=record["summary"],
        description=record["description"],
        args_schema=task_args_schema(arguments, bool(record["resources"])),
        path=tuple(record["path"]),
        origin=Origin(record["file"], 1),
        tags=tuple(record["tags"]),
        kind="read",
        optional=True,
        when_to_use=record["description"],
        annotations={"readOnlyHint": True, "title": record["name"]},
        handler=handler,
        version=record.get("version"),
        skill=info,
    )


def _check_alias_hijacks(
    tools: dict[str, Tool],
    explicit: dict[str, str],
    alias_paths: dict[str, str],
    defined_at: dict[str, str],
    diags: Diagnostics,
) -> None:
    """An explicit alias may not take a name by which agents already reach another tool or skill.

    Readers resolve a tool by its id, its provider alias or a skill's name (the lookup artifacts),
    so an alias equal to one of those, even in another case, would take that tool over. This is
    not the provider-alias renaming of :mod:`toolcat.format.aliases`, which settles two *derived*
    aliases (``a.b_c`` and ``a_b.c``) deterministically: an author-chosen alias has no such excuse.
    """
    names: dict[str, list[tuple[str, str, str]]] = {}  # casefolded name -> (name, what it is, owner id)
    for tool_id, tool in tools.items():
        owned = [
            (tool_id, "tool id"),
            (explicit[tool_id], "alias") if tool_id in explicit else (plain_alias(tool_id), "provider alias"),
        ]
        if tool.skill is not None:
            owned.append((tool.skill.name, "skill name"))
        for name, what in owned:
            names.setdefault(name.casefold(), []).append((name, what, tool_id))
    for tool_id, alias in sorted(explicit.items()):
        tool = tools[tool_id]
        for name, what, owner in names.get(alias.casefold(), []):
            if owner == tool_id:
                continue
            case = " (they differ only in case, which agents and some providers ignore)" if name != alias else ""
            diags.error(
                tool.origin.file,
                f"alias {alias!r} of {tool_id!r} collides with the {what} {name!r} of "
                f"{owner!r} ({defined_at.get(owner, tools[owner].origin.file)}){case}",
                line=tool.origin.line,
                json_path=alias_paths.get(tool_id),
                code="alias_collision",
                expected="a name no other tool or skill answers to",
                got=repr(alias),
                hint=f"Agents call tools by id, alias or skill name, so these share one namespace: choose "
                f"another alias for {tool_id!r}, or drop it to use the default {plain_alias(tool_id)!r}.",
            )


def assemble(loaded: Loaded) -> tuple[CompiledCatalog, Diagnostics]:
    """Apply the cross-file rules; return the catalogue and every diagnostic found."""
    diags = Diagnostics()
    diags.extend(loaded.diagnostics.items)
    for file_result in loaded.tool_files.values():
        diags.extend(file_result.diagnostics)
    for skill in loaded.skills:
        diags.extend(skill.diagnostics)

    nodes: dict[NodePath, Node] = {
        rec.path: Node(rec.path, rec.title, rec.summary, tuple(rec.tags), Origin(rec.file)) for rec in loaded.nodes
    }
    ids = _Ids(nodes, diags)
    for rel, result in sorted(loaded.tool_files.items()):
        home = loaded.tool_paths[rel]
        for rec in result.tools:
            ids.add_tool(rel, rec, home)
    # skills that name their task_id come last, so a collision is reported at the task_id an author chose
    for skill in sorted(loaded.skills, key=lambda s: bool(s.record and s.record.get("task_id_at"))):
        if skill.record is not None:
            ids.add_skill(skill.record)

    _add_task_list(ids.tools, diags)
    _check_alias_hijacks(ids.tools, ids.explicit_aliases, ids.alias_paths, ids.defined_at, diags)
    alias_result = assign_aliases(list(ids.tools), ids.explicit_aliases)
    for provider, tool_id, reason in alias_result.adjustments:
        tool = ids.tools[tool_id]
        diags.warning(
            tool.origin.file,
            f"{provider} alias of {tool_id!r} {reason}",
            line=tool.origin.line,
            code="alias_adjusted",
            hint="Set an explicit 'alias:' on the tool to choose the name yourself.",
        )
    final = {tool_id: _with_aliases(ids.tools[tool_id], alias_result.aliases[tool_id]) for tool_id in sorted(ids.tools)}
    final = _check_legacy_aliases(final, diags)
    final = _check_always_load_names(final, diags)
    _check_always_load_count(final, diags)
    root = nodes.get(())
    catalog = CompiledCatalog(
        title=root.title if root else "Catalogue",
        summary=root.summary if root else "",
        nodes=dict(sorted(nodes.items())),
        tools=final,
        alias_collisions=alias_result.adjustments,
        git_sources=tuple(loaded.git_sources),
    )
    return catalog, diags


class _Ids:
    """The catalogue's tools by id as they are added, each id (and explicit alias) claimed once.

    Tool records come first, then skills and agents; a record whose id, name or alias is taken is
    reported where it is written and left out.
    """

    def __init__(self, nodes: dict[NodePath, Node], diags: Diagnostics) -> None:
        self.nodes = nodes
        self.diags = diags
        self.tools: dict[str, Tool] = {}
        #: where each id is defined (``file:line`` of a tool, the file of a skill)
        self.defined_at: dict[str, str] = {}
        self.explicit_aliases: dict[str, str] = {}
        self.alias_owner: dict[str, tuple[str, str]] = {}
        self.alias_paths: dict[str, str] = {}
        self.skill_names: dict[str, str] = {}

    # -- tools -----------------------------------------------------------------------------------------------------

    def add_tool(self, rel: str, rec: dict[str, Any], home: NodePath) -> None:
        """One tool record of the tools file ``rel`` (filed at ``home``): unless its id or alias is taken."""
        where = f"{rel}:{rec['line']}" if rec["line"] else rel
        if rec["id"] in self.defined_at:
            self.diags.error(
                rel,
                f"duplicate tool id {rec['id']!r}, first defined at {self.defined_at[rec['id']]}",
                line=rec["line"],
                json_path=f"{rec['json_path']}.id",
                code="duplicate_id",
                hint="Tool ids are unique across the catalogue: rename one of them.",
            )
            return
        categories = self._categories(rel, rec, home)
        if rec["alias"] and not self._claim_alias(rel, rec, where):
            return
        self.defined_at[rec["id"]] = where
        self.tools[rec["id"]] = _tool(rec, rel, home, categories)

    def _categories(self, rel: str, rec: dict[str, Any], home: NodePath) -> list[NodePath]:
        """The tool's extra nodes, each an existing node (else an error, with a did-you-mean) other than its home."""
        categories: list[NodePath] = []
        for index, category in enumerate(rec["categories"]):
            cat_path = _parse_category(category)
            if cat_path not in self.nodes:
                known = [path_str(p) for p in self.nodes if p]
                close = difflib.get_close_matches(category, known, n=1)
                self.diags.error(
                    rel,
                    f"category {category!r} is not a node of the catalogue",
                    line=rec["line"],
                    json_path=f"{rec['json_path']}.categories[{index}]",
                    code="unknown_category",
                    expected="the folder path of an existing node",
                    got=repr(category),
                    hint=f"Did you mean {close[0]!r}?" if close else "Create the folder or fix the path.",
                )
                continue
            if cat_path != home and cat_path not in categories:
                categories.append(cat_path)
        return categories

    def _claim_alias(self, rel: str, rec: dict[str, Any], where: str) -> bool:
        """Record the tool's explicit alias; False (with an error) when another tool has it already."""
        alias = rec["alias"]
        if alias in self.alias_owner:
            other_id, other_where = self.alias_owner[alias]
            self.diags.error(
                rel,
                f"alias {alias!r} is already used by {other_id!r} ({other_where})",
                line=rec["line"],
                json_path=f"{rec['json_path']}.alias",
                code="alias_collision",
                hint="Explicit aliases must be unique: choose another alias for one of the tools.",
            )
            return False
        self.alias_owner[alias] = (rec["id"], where)
        self.explicit_aliases[rec["id"]] = alias
        self.alias_paths[rec["id"]] = f"{rec['json_path']}.alias"
        return True

    # -- skills and agents -----------------------------------------------------------------------------------------

    def add_skill(self, rec: dict[str, Any]) -> None:
        """One skill or agent record: unless its id or name is taken; its levels 1 and 2 within their budgets."""
        if self._skill_taken(rec):
            return
        self.skill_names[rec["name"]] = rec["file"]
        self.defined_at[rec["id"]] = rec["file"]
        tool = _skill_tool(rec)
        _check_skill_budgets(rec, self.diags)
        self.tools[rec["id"]] = tool

    def _skill_taken(self, rec: dict[str, Any]) -> bool:
        """Whether the skill's id (its task_id, else the derived one) or its name is taken (an error)."""
        if rec["id"] in self.defined_at and rec.get("task_id_at"):
            task_file, task_line = rec["task_id_at"]
            self.diags.error(
                task_file,
                f"task_id {rec['id']!r} of skill {rec['name']!r} is already the id of "
                f"the tool defined at {self.defined_at[rec['id']]}",
                line=task_line,
                code="duplicate_id",
                got=repr(rec["id"]),
                expected="an id no other tool or skill has",
                hint="Ids are unique across tools and skills: choose another task_id, "
                f"or remove it to use the derived {skill_tool_id(rec['name'])!r}.",
            )
        elif rec["id"] in self.defined_at:
            self.diags.error(
                rec["file"],
                f"skill {rec['name']!r} is exposed as {rec['id']!r}, "
                f"which is already defined at {self.defined_at[rec['id']]}",
                line=1,
                code="duplicate_id",
                hint="Rename the skill (and its folder) or the other tool.",
            )
        elif rec["name"] in self.skill_names:  # skills and agents share the skills/<name>/ folder and name lookup
            self.diags.error(
                rec["file"],
                f"the name {rec['name']!r} is already taken by {self.skill_names[rec['name']]}",
                line=1,
                code="duplicate_id",
                hint="Skills and agents are looked up by name: rename one of them (and its file or folder).",
            )
        else:
            return False
        return True


def _tool(rec: dict[str, Any], rel: str, home: NodePath, categories: list[NodePath]) -> Tool:
    """The typed tool of one checked tool record (:mod:`toolcat.build.sources.tools`)."""
    return Tool(
        id=rec["id"],
        summary=rec["summary"],
        description=rec["description"],
        args_schema=rec["args_schema"],
        path=home,
        origin=Origin(rel, rec["line"]),
        result_schema=rec["result_schema"],
        examples=tuple(rec["examples"]),
        errors=tuple(rec["errors"]),
        tags=tuple(rec["tags"]),
        kind=rec["kind"],
        optional=rec["optional"],
        when_to_use=rec["when_to_use"],
        policy={k: tuple(v) for k, v in rec["policy"].items()},
        annotations=rec["annotations"],
        categories=tuple(sorted(categories)),
        handler=rec["handler"],
        version=rec["version"],
        deprecated=rec["deprecated"],
        legacy_aliases=tuple(rec["legacy_aliases"]),
        always_load=rec["always_load"],
        search_hints=tuple(rec["search_hints"]),
        entity=rec["entity"],
        action=rec["action"],
        contexts=tuple(rec["contexts"]),
    )


def _check_skill_budgets(rec: dict[str, Any], diags: Diagnostics) -> None:
    """A warning when a skill's level 1 (name + description) or level 2 (its body) is over its token budget."""
    level1 = count_tokens(f"{rec['name']}: {rec['description']}")
    level2 = count_tokens(rec["body"])
    if level1 > SKILL_LEVEL1_BUDGET:
        diags.warning(
            rec["file"],
            f"level 1 (name + description) costs {level1} tokens, over {SKILL_LEVEL1_BUDGET}",
            line=1,
            code="skill_level1_tokens",
            hint="Every agent reads level 1 of every skill: shorten the description.",
        )
    if level2 > SKILL_LEVEL2_BUDGET:
        diags.warning(
            rec["file"],
            f"the SKILL.md body costs {level2} tokens, over {SKILL_LEVEL2_BUDGET}",
            code="skill_level2_tokens",
            hint="Move detail into references/ files that are read on demand (level 3).",
        )


#: More always-loaded tools than this is a warning (an error under --strict).
MAX_ALWAYS_LOAD = 20


def _check_always_load_count(tools: dict[str, Tool], diags: Diagnostics) -> None:
    """A warning when more than :data:`MAX_ALWAYS_LOAD` tools are always loaded."""
    always = [t for t in tools.values() if t.always_load]
    if len(always) > MAX_ALWAYS_LOAD:
        diags.warning(
            always[0].origin.file,
            f"{len(always)} tools are always_load, over {MAX_ALWAYS_LOAD}: "
            + ", ".join(t.id for t in always[:5])
            + ("…" if len(always) > 5 else ""),
            line=always[0].origin.line,
            code="always_load_count",
            hint="Clients cap the tools they accept (some at 40 or 128) and every always-loaded tool costs tokens "
            "on every turn: keep a few core tools and let agents discover the rest.",
        )


def _check_legacy_aliases(tools: dict[str, Tool], diags: Diagnostics) -> dict[str, Tool]:
    """Drop (with an error) a legacy alias that is another tool's id, alias or skill name, or another's legacy alias.

    Readers resolve every one of these names through the same lookup, case-insensitively as a
    fallback, so two tools may not share one, even in another case.
    """
    taken: dict[str, tuple[str, str]] = {}
    for tool in tools.values():
        names = [(tool.id, "id"), *((a, "provider alias") for a in tool.aliases.values())]
        if tool.skill is not None:
            names.append((tool.skill.name, "skill name"))
        for name, what in names:
            taken.setdefault(name.casefold(), (tool.id, what))
    out: dict[str, Tool] = {}
    for tool_id, tool in tools.items():
        kept: list[str] = []
        for name in tool.legacy_aliases:
            owner, what = taken.get(name.casefold(), (tool_id, ""))
            if owner == tool_id and what:  # already a name of this tool (its id or alias, in some case)
                continue
            if owner != tool_id:
                diags.error(
                    tool.origin.file,
                    f"legacy alias {name!r} of {tool_id!r} collides with the {what} of {owner!r}",
                    line=tool.origin.line,
                    code="alias_collision",
                    got=repr(name),
                    expected="a name no other tool answers to (ids, aliases and skill names, in any case)",
                    hint="Agents call tools by id, alias or legacy name, so these share one namespace: "
                    f"drop {name!r} from one of the tools.",
                )
                continue
            taken[name.casefold()] = (tool_id, "legacy alias")
            kept.append(name)
        out[tool_id] = replace(tool, legacy_aliases=tuple(kept)) if len(kept) != len(tool.legacy_aliases) else tool
    return out


def _check_always_load_names(tools: dict[str, Tool], diags: Diagnostics) -> dict[str, Tool]:
    """An always-loaded tool may not be exported under the name of a dialect's discovery tool (an error).

    Exports and the MCP server list it by its provider alias beside those tools, and a client
    cannot tell two tools of one name apart.
    """
    from ...format.dialects import DISCOVERY_TOOLS  # noqa: PLC0415 - the reader's table of discovery tools

    discovery = {tool.name: dialect for dialect, listed in DISCOVERY_TOOLS.items() for tool in listed}
    out = dict(tools)
    for tool_id, tool in tools.items():
        if not tool.always_load:
            continue
        clashes = sorted({a for a in tool.aliases.values() if a in discovery})
        if clashes:
            diags.error(
                tool.origin.file,
                f"always-loaded tool {tool_id!r} would be exported as {clashes[0]!r}, "
                f"the name of a {discovery[clashes[0]]} discovery tool",
                line=tool.origin.line,
                code="always_load_name",
                got=repr(clashes[0]),
                expected=f"a provider alias other than {', '.join(sorted(discovery))}",
                hint="Set 'alias:' on the tool to another name, or drop always_load.",
            )
            out[tool_id] = replace(tool, always_load=False)
    return out


def _with_aliases(tool: Tool, aliases: dict[str, str]) -> Tool:
    return replace(tool, aliases=dict(sorted(aliases.items())))


def arguments_summary(schema: dict[str, Any], requires: list[str]) -> str:
    """A task's arguments on one line: ``target: string, focus?: string; one of: "bugs", "style"``."""
    properties = schema.get("properties") or {}
    return ", ".join(
        f"{name}{'' if name in requires else '?'}: {schema_text(prop)}"
        for name, prop in properties.items()
        if name != "resource"
    )


def task_entry(tool: Tool) -> dict[str, Any]:
    """One row of task.list: the task's id, type (skill or agent), summary and arguments (when it has any)."""
    requires = list((tool.handler or {}).get("requires") or [])
    args = arguments_summary(tool.args_schema, requires)
    return {"task": tool.id, "type": tool.type, "summary": tool.summary, **({"arguments": args} if args else {})}


def _add_task_list(tools: dict[str, Tool], diags: Diagnostics) -> None:
    """Add 004's ``task.list`` (every skill and agent, one row each) unless the catalogue has no tasks.

    It lives at the top-level node holding most tasks and is listed under the other ones too.
    A tool the author named ``task.list`` wins (with a warning).
    """
    tasks = sorted((t for t in tools.values() if t.skill is not None), key=lambda t: t.id)
    if not tasks:
        return
    if TASK_LIST_ID in tools:
        mine = tools[TASK_LIST_ID]
        diags.warning(
            mine.origin.file,
            f"{TASK_LIST_ID!r} is the id toolcat gives the generated list of skills and agents; yours replaces it",
            line=mine.origin.line,
            code="task_list_replaced",
            hint="Rename your tool to keep the generated task.list, or keep yours if it lists the tasks too.",
        )
        return
    tops = sorted({t.path[:1] for t in tasks}, key=lambda top: (-sum(t.path[:1] == top for t in tasks), top))
    tools[TASK_LIST_ID] = Tool(
        id=TASK_LIST_ID,
        summary="List every task (skills and agents) with its type, one-line summary and arguments.",
        description="Every skill and agent of this catalogue, callable as a task tool: its id, its type (skill, "
        "or agent for a host's sub-agent runner), what it does and the arguments it takes. Call a task by its id "
        "with those arguments (other arguments reach it as context); describe it first for its full instructions.",
        args_schema={"type": "object", "additionalProperties": False},
        path=tops[0],
        origin=Origin("(generated from the skills and agents)", None),
        tags=("tasks", "skills", "agents"),
        kind="read",
        optional=True,
        when_to_use="To see which tasks (skills and sub-agents) exist and what arguments each takes.",
        annotations={"readOnlyHint": True, "title": "task list"},
        categories=tuple(tops[1:]),
        handler={"type": "skill", "tasks": [task_entry(t) for t in tasks]},
        search_hints=("list tasks", "list skills", "list agents", "which sub-agents exist"),
    )
