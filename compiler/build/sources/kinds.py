"""The source-kind seam: each kind of entry in ``catalog_src/`` declares which entries it claims and reads them.

:func:`toolcat.build.sources.load.load` walks the tree and hands every entry (a file or folder that is not
hidden, not a link and not ``_node.yaml``) to the first kind in :data:`KINDS` whose :meth:`SourceKind.claims`
says yes; it has no branch of its own per kind. Order matters: an ``AGENT.md`` folder is an agent before it
could be a skill, a misnamed ``skill.md`` is caught before the folder becomes a node.

Adding a source kind (docs/architecture.md, "Add a source kind"), for example ``PROMPT.md`` folders:

.. code-block:: python

    class PromptFolder:
        name = "prompt"

        def claims(self, entry: Entry) -> bool:
            return entry.is_dir and os.path.lexists(entry.path / "PROMPT.md")

        def read(self, entry: Entry, walk: Walk) -> None:
            walk.out.skills.append(check_prompt(walk.root, entry.path, entry.node))  # a SkillResult

    KINDS = (AgentFolder(), SkillFolder(), PromptFolder(), ...)

``read`` records what it found on ``walk.out`` (:class:`~toolcat.build.sources.load.Loaded`): diagnostics with
their file and line, skills, tools files, or a folder to descend into (``walk.descend``). A kind checks one
entry at a time; rules across files belong to :mod:`toolcat.build.sources.assemble`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ...format.names import MAX_NODE_NAME, RULES, node_name_problem
from .agents import AGENT_FILE, check_agent, is_agent_file
from .skills import check_skill

if TYPE_CHECKING:
    from .load import Walk

__all__ = ["KINDS", "Entry", "SourceKind"]

#: Root folders that are not catalogue nodes (``evals/`` holds labelled queries).
RESERVED_ROOT_DIRS = {"evals"}
TOOL_SUFFIXES = (".yaml", ".yml", ".json")
#: The catalogue's settings files at the root: read by toolcat.build.config, never as tools.
CONFIG_FILES = ("toolcat.yaml", "toolcat.yml")


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a source folder: its path, its path relative to the root, and the node it sits in."""

    path: Path
    rel: str
    node: tuple[str, ...]
    is_dir: bool

    @property
    def name(self) -> str:
        """The file or folder name."""
        return self.path.name


class SourceKind(Protocol):
    """One kind of source entry: which entries it claims, and how it reads one."""

    name: str

    def claims(self, entry: Entry) -> bool:
        """Whether this kind reads ``entry`` (the first kind of :data:`KINDS` that claims it does)."""

    def read(self, entry: Entry, walk: Walk) -> None:
        """Read and check ``entry``, recording results and diagnostics on ``walk.out``."""


class SkippedFolder:
    """``_private`` folders and reserved root folders (``evals/``): not part of the catalogue."""

    name = "skipped"

    def claims(self, entry: Entry) -> bool:
        return entry.is_dir and (entry.name.startswith("_") or (not entry.node and entry.name in RESERVED_ROOT_DIRS))

    def read(self, entry: Entry, walk: Walk) -> None:
        """Nothing to read."""


class AgentFolder:
    """A folder holding ``AGENT.md`` (seed 004): an agent, served like a skill."""

    name = "agent folder"

    def claims(self, entry: Entry) -> bool:
        return entry.is_dir and os.path.lexists(entry.path / AGENT_FILE)

    def read(self, entry: Entry, walk: Walk) -> None:
        walk.out.skills.append(check_agent(walk.root, entry.path, entry.node))


class SkillFolder:
    """A folder holding ``SKILL.md``: an Agent Skill."""

    name = "skill"

    def claims(self, entry: Entry) -> bool:
        return entry.is_dir and os.path.lexists(entry.path / "SKILL.md")

    def read(self, entry: Entry, walk: Walk) -> None:
        walk.out.skills.append(check_skill(walk.root, entry.path, entry.node))


class MisnamedSkill:
    """A folder holding ``skill.md``: skipped, with a warning that names the fix."""

    name = "misnamed skill"

    def claims(self, entry: Entry) -> bool:
        return entry.is_dir and (entry.path / "skill.md").is_file()

    def read(self, entry: Entry, walk: Walk) -> None:
        walk.out.diagnostics.warning(
            f"{entry.rel}/skill.md",
            "skill file is named skill.md; it is skipped",
            code="skill_filename",
            hint="Rename it to SKILL.md.",
        )


class BadNodeName:
    """A folder whose name is not a valid node name: an error with the name to use."""

    name = "bad node name"

    def claims(self, entry: Entry) -> bool:
        return entry.is_dir and node_name_problem(entry.name) is not None

    def read(self, entry: Entry, walk: Walk) -> None:
        fixed = re.sub(r"[^a-z0-9_-]+", "-", entry.name.lower()).strip("-_")[:MAX_NODE_NAME] or "node"
        walk.out.diagnostics.error(
            repr(entry.rel)[1:-1],  # a name with a newline would break the diagnostic's line
            f"folder name {entry.name!r} is not a valid node name",
            expected=RULES["node name"],
            got=repr(entry.name),
            code="bad_node_name",
            hint=f"Rename the folder to {fixed!r}.",
        )


class NodeFolder:
    """Any other folder: a node of the ontology, walked in turn."""

    name = "node"

    def claims(self, entry: Entry) -> bool:
        return entry.is_dir

    def read(self, entry: Entry, walk: Walk) -> None:
        walk.descend(entry.path, (*entry.node, entry.name))


class AgentFile:
    """``agents/<name>.md``: an agent in one file."""

    name = "agent file"

    def claims(self, entry: Entry) -> bool:
        return not entry.is_dir and is_agent_file(entry.path, entry.node)

    def read(self, entry: Entry, walk: Walk) -> None:
        walk.out.skills.append(check_agent(walk.root, entry.path, entry.node))


class SettingsFile:
    """``toolcat.yaml`` at the root: the build's settings (toolcat.build.config reads it), not tools."""

    name = "settings"

    def claims(self, entry: Entry) -> bool:
        return not entry.is_dir and not entry.node and entry.name in CONFIG_FILES

    def read(self, entry: Entry, walk: Walk) -> None:
        """Read by toolcat.build.config."""


class ToolsFile:
    """A YAML or JSON file of tool definitions, checked in worker processes when there are many."""

    name = "tools"

    def claims(self, entry: Entry) -> bool:
        return not entry.is_dir and entry.path.suffix in TOOL_SUFFIXES

    def read(self, entry: Entry, walk: Walk) -> None:
        walk.add_tools_file(entry)


#: Every source kind, in the order they are asked; an entry no kind claims is ignored (a README, an image).
KINDS: tuple[SourceKind, ...] = (
    SkippedFolder(),
    AgentFolder(),
    SkillFolder(),
    MisnamedSkill(),
    BadNodeName(),
    NodeFolder(),
    AgentFile(),
    SettingsFile(),
    ToolsFile(),
)
