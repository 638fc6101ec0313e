"""The in-memory work-tracking store behind the ``onto.*`` example tools, seeded with a small demo data set.

The module fills the store when it is first imported, so the catalogue's examples work out of the
box; :func:`reset_store` empties it (or restores the demo data with ``seed=True``). Ids come from
deterministic counters: after ``reset_store()`` the first task created is ``T-0001``, the first
project ``P-0001``, the first comment ``C-0001``, goal ``G-0001``, document ``D-0001`` and edge
``E-0001``. Project calendars (``cal.project.get``) are keyed by project id.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from ._shared import JSONDict

__all__ = ["STORE", "Store", "now", "reset_store", "seed_demo_data"]


@dataclass(frozen=True, slots=True)
class Store:
    """Projects, tasks and comments by id, and the counters their next ids come from."""

    projects: dict[str, JSONDict] = field(default_factory=dict)
    tasks: dict[str, JSONDict] = field(default_factory=dict)
    comments: dict[str, JSONDict] = field(default_factory=dict)
    goals: dict[str, JSONDict] = field(default_factory=dict)
    documents: dict[str, JSONDict] = field(default_factory=dict)
    edges: dict[str, JSONDict] = field(default_factory=dict)
    calendars: dict[str, JSONDict] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)

    def next_id(self, prefix: str) -> str:
        """The next id for ``prefix`` (``P``, ``T``, ``C``, ``G``, ``D`` or ``E``): ``T-0001``, ``T-0002``, ..."""
        self.counters[prefix] += 1
        return f"{prefix}-{self.counters[prefix]:04d}"


#: The one store every ``onto_*`` handler reads and changes.
STORE = Store()


def now() -> str:
    """The current UTC time, ISO 8601 to the second (``created_at``, ``updated_at``)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def reset_store(seed: bool = False) -> None:
    """Empty the work-tracking store and its id counters; ``seed=True`` loads the demo data."""
    STORE.projects.clear()
    STORE.tasks.clear()
    STORE.comments.clear()
    STORE.goals.clear()
    STORE.documents.clear()
    STORE.edges.clear()
    STORE.calendars.clear()
    STORE.counters.clear()
    STORE.counters.update(dict.fromkeys(("P", "T", "C", "G", "D", "E"), 0))
    if seed:
        seed_demo_data()


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
    for key, name, description, owner, status, target in projects:
        pid = STORE.next_id("P")
        STORE.projects[pid] = {
            "id": pid,
            "key": key,
            "name": name,
            "description": description,
            "owner": owner,
            "status": status,
            "target_date": target,
            "created_at": stamp,
            "updated_at": stamp,
            "archived_at": None,
        }
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
    for project_id, title, description, status, priority, assignee, labels, due in tasks:
        tid = STORE.next_id("T")
        STORE.tasks[tid] = {
            "id": tid,
            "project_id": project_id,
            "title": title,
            "description": description,
            "status": status,
            "priority": priority,
            "assignee": assignee,
            "labels": labels,
            "due_date": due,
            "created_at": stamp,
            "updated_at": stamp,
        }
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
    for project_id, title, description, status, target, owner in goals:
        gid = STORE.next_id("G")
        STORE.goals[gid] = {
            "id": gid,
            "project_id": project_id,
            "title": title,
            "description": description,
            "status": status,
            "target_date": target,
            "owner": owner,
            "created_at": stamp,
            "updated_at": stamp,
        }
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
    ]
    for project_id, parent_id, title, doc_type, body in documents:
        did = STORE.next_id("D")
        STORE.documents[did] = {
            "id": did,
            "project_id": project_id,
            "parent_id": parent_id,
            "title": title,
            "type": doc_type,
            "body": body,
            "created_at": stamp,
            "updated_at": stamp,
        }
    for source, target, relation in (("T-0001", "D-0002", "documented_by"), ("T-0001", "G-0001", "supports")):
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


reset_store(seed=True)
