"""Reference implementations for the bundled example catalogue (``catalog_src/``).

Small, stdlib-only Python handlers: :mod:`toolcat.examples.files`, :mod:`toolcat.examples.onto`
(tasks, comments, projects), :mod:`toolcat.examples.plans` (goals, plans and their milestones,
risks, requirements), :mod:`toolcat.examples.documents` (documents, their tree, a task's
documents), :mod:`toolcat.examples.graph` (a project's graph, an entity's edges, unlinking,
reorganizing), :mod:`toolcat.examples.workspace` (goal and document lists, links, the
cross-entity search, a project's calendar and the workspace guides of seed 001),
:mod:`toolcat.examples.util` and :mod:`toolcat.examples.refactor`; the work-tracking handlers
share the in-memory store of :mod:`toolcat.examples.onto_store`. The example tools point
at them with ``handler: "toolcat.examples.<module>:<function>"``. They exist so a new user can run
a catalogue end to end without any backend.
"""
