"""The in-memory work-tracking store behind the ``onto.*`` example tools, seeded with a small demo data set.

The module fills the store when it is first imported, so the catalogue's examples work out of the
box; :func:`reset_store` empties it (or restores the demo data with ``seed=True``). Ids come from
deterministic counters: after ``reset_store()`` the first task created is ``T-0001``, the first
project ``P-0001``, the first comment ``C-0001``, goal ``G-0001``, plan ``PL-0001``, milestone
``M-0001``, risk ``R-0001``, requirement ``RQ-0001``, document ``D-0001`` and edge ``E-0001``.
Project calendars (``cal.project.get``) are keyed by project id.

Containment is held in fields: a task may sit in a plan (``plan_id``) and one of its milestones
(``milestone_id``), a milestone in its plan, a plan may serve a goal (``goal_id``), and a document is
filed under another (``parent_id``, ordered by ``position``). Every other relation is an edge.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ._shared import JSONDict

__all__ = [
    "ENTITY_PREFIXES",
    "STORE",
    "Store",
    "entity",
    "kind_of",
    "now",
    "public",
    "require_project",
    "reset_store",
    "seed_demo_data",
    "writable_project",
]

#: Which store table an id prefix names (``T-0001`` is a task, ``PL-0001`` a plan).
ENTITY_PREFIXES = {
    "P": "project",
    "T": "task",
    "C": "comment",
    "G": "goal",
    "PL": "plan",
    "M": "milestone",
    "R": "risk",
    "RQ": "requirement",
    "D": "document",
}


@dataclass(frozen=True, slots=True)
class Store:
    """Projects, tasks and comments by id, and the counters their next ids come from."""

    projects: dict[str, JSONDict] = field(default_factory=dict)
    tasks: dict[str, JSONDict] = field(default_factory=dict)
    comments: dict[str, JSONDict] = field(default_factory=dict)
    goals: dict[str, JSONDict] = field(default_factory=dict)
    plans: dict[str, JSONDict] = field(default_factory=dict)
    milestones: dict[str, JSONDict] = field(default_factory=dict)
    risks: dict[str, JSONDict] = field(default_factory=dict)
    requirements: dict[str, JSONDict] = field(default_factory=dict)
    documents: dict[str, JSONDict] = field(default_factory=dict)
    edges: dict[str, JSONDict] = field(default_factory=dict)
    calendars: dict[str, JSONDict] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)

    def next_id(self, prefix: str) -> str:
        """The next id for ``prefix`` (an :data:`ENTITY_PREFIXES` key or ``E``): ``T-0001``, ``T-0002``, ..."""
        self.counters[prefix] += 1
        return f"{prefix}-{self.counters[prefix]:04d}"


#: The one store every ``onto_*`` handler reads and changes.
STORE = Store()


def now() -> str:
    """The current UTC time, ISO 8601 to the second (``created_at``, ``updated_at``)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def public(entity: JSONDict) -> JSONDict:
    """A copy of a stored record to answer with (so a caller never changes the store by accident)."""
    return copy.deepcopy(entity)


def kind_of(entity_id: str) -> str:
    """The entity type an id names (``project``, ``task``, ``plan``, ...), or LookupError for a malformed id."""
    kind = ENTITY_PREFIXES.get(entity_id.split("-", 1)[0])
    if kind is None or not entity_id.split("-", 1)[-1].isdigit():
        known = ", ".join(f"{p}-" for p in ENTITY_PREFIXES)
        raise LookupError(f"{entity_id!r} is not an Onto id ({known} followed by digits)")
    return kind


def entity(entity_id: str, kind: str | None = None) -> JSONDict:
    """The stored record of ``entity_id`` (of type ``kind`` when given), or LookupError naming it."""
    found_kind = kind_of(entity_id)
    if kind is not None and found_kind != kind:
        raise LookupError(f"{entity_id!r} is a {found_kind}, not a {kind}")
    table: dict[str, JSONDict] = getattr(STORE, found_kind + "s")
    record = table.get(entity_id)
    if record is None:
        raise LookupError(f"{found_kind} {entity_id!r} not found")
    return record


def require_project(project_id: object) -> None:
    """LookupError unless ``project_id`` is empty or names a project."""
    if project_id and project_id not in STORE.projects:
        raise LookupError(f"project {project_id!r} not found")


def writable_project(project_id: str) -> JSONDict:
    """The project, or LookupError if unknown, PermissionError if archived (archived projects are read-only)."""
    project = entity(project_id, "project")
    if project["status"] == "archived":
        raise PermissionError(f"project {project_id!r} is archived; nothing in it can change")
    return project


def reset_store(seed: bool = False) -> None:
    """Empty the work-tracking store and its id counters; ``seed=True`` loads the demo data."""
    STORE.projects.clear()
    STORE.tasks.clear()
    STORE.comments.clear()
    for table in (STORE.goals, STORE.plans, STORE.milestones, STORE.risks, STORE.requirements):
        table.clear()
    STORE.documents.clear()
    STORE.edges.clear()
    STORE.calendars.clear()
    STORE.counters.clear()
    STORE.counters.update(dict.fromkeys((*ENTITY_PREFIXES, "E"), 0))
    if seed:
        seed_demo_data()


#: The fields every seeded record gets the seed's time in.
_STAMPS = ("created_at", "updated_at")


def _seed(prefix: str, fields: str, rows: Iterable[Sequence[object]], stamp: str, **fixed: object) -> list[str]:
    """Add one demo record per row to the table of ``prefix`` (a new id each); returns the ids in order.

    ``fields`` names the record's keys in order after ``id``: ``created_at`` and ``updated_at`` get ``stamp``,
    a key given in ``fixed`` its value, and the others the row's values, in order.
    """
    names = fields.split()
    given = [name for name in names if name not in fixed and name not in _STAMPS]
    table: dict[str, JSONDict] = getattr(STORE, ENTITY_PREFIXES[prefix] + "s")
    ids = []
    for row in rows:
        values = {**dict(zip(given, row, strict=True)), **fixed, **dict.fromkeys(_STAMPS, stamp)}
        rid = STORE.next_id(prefix)
        table[rid] = {"id": rid, **{name: values[name] for name in names}}
        ids.append(rid)
    return ids


def seed_demo_data() -> None:
    """Add the demo projects, tasks and comments the catalogue's examples refer to."""
    stamp = "2026-11-02T09:00:00+00:00"
    projects = [
        (
            "PAY",
            "Payments platform",
            "Card and wallet payments: checkout API, ledger, reconciliation.",
            "maria.lopez@acme.example",
            "active",
            "2027-03-31",
        ),
        (
            "WEB",
            "Website redesign",
            "New marketing site on the design system, with localisation.",
            "sam.okafor@acme.example",
            "active",
            "2027-01-15",
        ),
        (
            "OPS",
            "Infrastructure cost reduction",
            "Cut cloud spend 20% by rightsizing and storage tiering.",
            "li.wei@acme.example",
            "on_hold",
            None,
        ),
    ]
    _seed(
        "P",
        "key name description owner status target_date created_at updated_at archived_at",
        projects,
        stamp,
        archived_at=None,
    )
    tasks = [
        (
            "P-0001",
            "Retry failed card captures with exponential backoff",
            (
                "Captures that fail with a 5xx from the acquirer are dropped. Add a retry queue "
                "(max 5 attempts, jittered backoff) and alert after the last failure."
            ),
            "in_progress",
            "high",
            "dev.patel@acme.example",
            ["backend", "reliability"],
            "2026-12-04",
        ),
        (
            "P-0001",
            "Reconcile ledger against the acquirer settlement file",
            "Nightly job comparing ledger entries with the settlement CSV; report mismatches to #payments-ops.",
            "todo",
            "medium",
            None,
            ["backend", "finance"],
            "2026-12-18",
        ),
        (
            "P-0001",
            "Checkout API returns 500 on expired 3-D Secure session",
            "Expired 3DS sessions raise an unhandled exception instead of a 409 with a retry hint.",
            "todo",
            "urgent",
            "dev.patel@acme.example",
            ["bug", "checkout"],
            "2026-11-27",
        ),
        (
            "P-0002",
            "Migrate pricing page to the design system",
            "Rebuild the pricing page with DS components; keep the existing URLs and analytics events.",
            "in_review",
            "medium",
            "sam.okafor@acme.example",
            ["frontend"],
            "2026-12-11",
        ),
        (
            "P-0002",
            "Add German and French translations for the landing page",
            "Strings are in locales/en.json; translations come from the localisation vendor.",
            "blocked",
            "low",
            None,
            ["frontend", "i18n"],
            None,
        ),
        (
            "P-0003",
            "Move cold log archives to the infrequent-access storage tier",
            "Log buckets older than 90 days are on the standard tier. Add a lifecycle rule.",
            "todo",
            "medium",
            "li.wei@acme.example",
            ["infra", "cost"],
            None,
        ),
    ]
    task_fields = "project_id title description status priority assignee labels due_date plan_id milestone_id"
    _seed("T", f"{task_fields} created_at updated_at", tasks, stamp, plan_id=None, milestone_id=None)
    cid = STORE.next_id("C")
    STORE.comments[cid] = {
        "id": cid,
        "task_id": "T-0001",
        "author": "maria.lopez@acme.example",
        "body": "Please cap total retry time at 10 minutes so captures stay inside the auth window.",
        "created_at": stamp,
    }
    _seed_plans(stamp)


def _seed_plans(stamp: str) -> None:
    """Goals, documents, the edges between entities and the project calendars of the demo data."""
    goals = [
        (
            "P-0001",
            "Card capture success rate at 99.5%",
            "Measured weekly on the payments dashboard.",
            "on_track",
            "2027-03-31",
            "maria.lopez@acme.example",
        ),
        (
            "P-0001",
            "Zero unreconciled ledger entries older than 2 days",
            "",
            "at_risk",
            "2027-01-31",
            "maria.lopez@acme.example",
        ),
        (
            "P-0002",
            "Launch the redesigned site in EN, DE and FR",
            "All marketing pages on the design system.",
            "on_track",
            "2027-01-15",
            "sam.okafor@acme.example",
        ),
        (
            "P-0003",
            "Cut monthly cloud spend by 20%",
            "Baseline: October 2026 invoice.",
            "off_track",
            None,
            "li.wei@acme.example",
        ),
    ]
    _seed("G", "project_id title description status target_date owner created_at updated_at", goals, stamp)
    documents = [
        (
            "P-0001",
            None,
            "Payments runbook",
            "runbook",
            "How to pause captures, replay the retry queue and page on-call.",
        ),
        (
            "P-0001",
            "D-0001",
            "Retry queue design",
            "spec",
            "Exponential backoff with jitter, at most 5 attempts, 10 minute cap.",
        ),
        (
            "P-0002",
            None,
            "Design system migration plan",
            "plan",
            "Page order, owners and the analytics events to keep.",
        ),
        ("P-0003", None, "Storage tiering proposal", "proposal", "Move logs older than 90 days to infrequent access."),
        (
            "P-0001",
            "D-0001",
            "Acquirer outage playbook",
            "runbook",
            "Who to call at the acquirer, how to switch captures to the backup route, when to tell merchants.",
        ),
        (
            "P-0001",
            None,
            "Settlement reconciliation spec",
            "spec",
            "Match ledger entries to the settlement CSV by capture id; flag amount and currency mismatches.",
        ),
        (
            "P-0002",
            "D-0003",
            "Pricing page copy",
            "notes",
            "Final EN copy for the three plans; legal review pending on the refund wording.",
        ),
    ]
    for project_id, parent_id, title, doc_type, body in documents:
        did = STORE.next_id("D")
        siblings = sum(
            1 for d in STORE.documents.values() if d["project_id"] == project_id and d["parent_id"] == parent_id
        )
        STORE.documents[did] = {
            "id": did,
            "project_id": project_id,
            "parent_id": parent_id,
            "position": siblings,
            "title": title,
            "type": doc_type,
            "body": body,
            "created_at": stamp,
            "updated_at": stamp,
        }
    _seed_planning(stamp)
    edges = (
        ("T-0001", "D-0002", "documented_by"),
        ("T-0001", "G-0001", "supports"),
        ("T-0001", "R-0001", "mitigates"),
        ("T-0001", "RQ-0001", "addresses"),
        ("T-0002", "RQ-0003", "addresses"),
        ("T-0002", "D-0006", "documented_by"),
        ("T-0005", "R-0003", "relates_to"),
    )
    for source, target, relation in edges:
        eid = STORE.next_id("E")
        STORE.edges[eid] = {
            "id": eid,
            "source_id": source,
            "target_id": target,
            "relation": relation,
            "created_at": stamp,
        }
    for project_id, time_zone in (("P-0001", "Europe/Madrid"), ("P-0002", "America/New_York")):
        STORE.calendars[project_id] = {
            "project_id": project_id,
            "calendar_id": f"{project_id.lower()}@calendar.acme.example",
            "time_zone": time_zone,
            "sync_tasks_with_due_dates": True,
            "default_event_minutes": 30,
        }


def _seed_planning(stamp: str) -> None:
    """Plans with their milestones (and the tasks filed in them), risks and requirements of the demo data."""
    plans = [
        (
            "P-0001",
            "Capture reliability Q1",
            "Make card captures survive acquirer outages: retries, alerting and daily reconciliation.",
            "active",
            "G-0001",
            "2026-11-16",
            "2027-03-31",
            [
                ("Capture retries in production", "in_progress", "2026-12-11"),
                ("Nightly reconciliation live", "pending", "2027-01-22"),
            ],
        ),
        (
            "P-0002",
            "Design system rollout",
            "Move every marketing page to the design system, then launch the German and French site.",
            "active",
            "G-0003",
            "2026-11-02",
            "2027-01-15",
            [
                ("Pricing and landing pages migrated", "in_progress", "2026-12-18"),
                ("DE and FR locales launched", "pending", "2027-01-15"),
            ],
        ),
    ]
    plan_fields = "project_id title description status goal_id start_date end_date created_at updated_at"
    plan_ids = _seed("PL", plan_fields, [plan[:-1] for plan in plans], stamp)
    for plid, plan in zip(plan_ids, plans, strict=True):
        milestone_fields = "plan_id project_id title description status due_date created_at updated_at"
        _seed("M", milestone_fields, plan[-1], stamp, plan_id=plid, project_id=plan[0], description="")
    filed = {"T-0001": "M-0001", "T-0003": "M-0001", "T-0002": "M-0002", "T-0004": "M-0003", "T-0005": "M-0004"}
    for task_id, milestone_id in filed.items():
        STORE.tasks[task_id].update(milestone_id=milestone_id, plan_id=STORE.milestones[milestone_id]["plan_id"])
    risks = [
        (
            "P-0001",
            "Acquirer rate-limits retried captures",
            "Retrying every failed capture within minutes may trip the acquirer's rate limit and fail healthy ones.",
            "high",
            "medium",
            "identified",
            "dev.patel@acme.example",
        ),
        (
            "P-0001",
            "Settlement file format changes without notice",
            "The acquirer changed the CSV columns twice in 2026; the nightly job would stop matching silently.",
            "medium",
            "low",
            "identified",
            "maria.lopez@acme.example",
        ),
        (
            "P-0002",
            "Translation vendor delivers after the launch date",
            "German and French copy was due 2026-11-20 and has not arrived; the launch date depends on it.",
            "high",
            "high",
            "occurred",
            "sam.okafor@acme.example",
        ),
    ]
    _seed("R", "project_id title description impact likelihood status owner created_at updated_at", risks, stamp)
    requirements = [
        (
            "P-0001",
            "Captures are retried at most 5 times within 10 minutes",
            "Counted per capture; after the last attempt the capture is marked failed and on-call is alerted.",
            "functional",
            "must",
            "accepted",
        ),
        (
            "P-0001",
            "A retried capture never charges the card twice",
            "Every retry reuses the capture's idempotency key; verified by a test that replays a timeout.",
            "functional",
            "must",
            "accepted",
        ),
        (
            "P-0001",
            "Mismatches are reported within 2 hours of the settlement file",
            "Measured from the file's arrival in the SFTP drop to the report in #payments-ops.",
            "non_functional",
            "should",
            "proposed",
        ),
        (
            "P-0002",
            "Every page meets WCAG 2.2 AA",
            "Checked with axe in CI and a manual screen-reader pass before launch.",
            "constraint",
            "must",
            "accepted",
        ),
    ]
    _seed("RQ", "project_id title description type priority status created_at updated_at", requirements, stamp)


reset_store(seed=True)
