"""``--state sqlite:PATH``: serve's state in one SQLite file that every serve process on the host shares.

SQLite (stdlib) in WAL mode, one connection per thread, ``BEGIN IMMEDIATE`` around every
read-modify-write: a claim is an ``INSERT OR IGNORE`` inside one write transaction, so of two
processes racing for a key exactly one gets it. Times are wall-clock seconds (processes share no
monotonic clock). Safe for several processes on one host; not on a network file system (SQLite's
locks are not reliable there): use Redis for many hosts.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...format.types import Json
from ...reader.audit import AuditLog, AuditSink
from .base import (
    CLIENT_TTL_SECONDS,
    MAX_AUDIT_RECORDS,
    MAX_CLIENTS,
    ClientStates,
    SharedIdempotency,
    StateStore,
    StoredAudit,
    unavailable,
)

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS idem_claims (key TEXT PRIMARY KEY, token TEXT NOT NULL, until REAL NOT NULL);
CREATE TABLE IF NOT EXISTS idem_records (
    key TEXT PRIMARY KEY, tool_id TEXT NOT NULL, digest TEXT NOT NULL, answer TEXT NOT NULL,
    size INTEGER NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS idem_records_at ON idem_records (at);
CREATE TABLE IF NOT EXISTS clients (client TEXT PRIMARY KEY, records TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS clients_at ON clients (at);
CREATE TABLE IF NOT EXISTS audit (id INTEGER PRIMARY KEY AUTOINCREMENT, line TEXT NOT NULL);
"""
#: Seconds a write waits for another process's transaction before the store counts as unavailable.
BUSY_SECONDS = 10.0
#: The audit table is trimmed to MAX_AUDIT_RECORDS once every this many records.
AUDIT_TRIM_EVERY = 1_000


def private_file(path: Path) -> None:
    """Create ``path`` 0600 when missing; ValueError for one another user owns; our own made 0600 if it is not.

    The file keeps answers that may hold file contents or API results (issue 36: another local user read a
    kept ``file.read`` answer from a 0644 file). SQLite gives its ``-wal`` and ``-shm`` files the same mode.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise ValueError(f"--state sqlite:{path}: cannot open the file ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    if info.st_uid != os.getuid():
        raise ValueError(
            f"--state sqlite:{path}: the file belongs to another user (uid {info.st_uid}); serve keeps answers "
            "there, so it uses only a file of its own: remove it, or name another path"
        )
    if info.st_mode & 0o077:  # our own file, left readable by an older release: made private, and said so
        log.warning("%s was mode %o; made it 0600 (it keeps answers)", path, info.st_mode & 0o777)
        for file in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            if file.exists() and not file.is_symlink():
                file.chmod(0o600)


class SqliteDatabase:
    """One SQLite file, a connection per thread, and a transaction helper that maps failures to UNAVAILABLE."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = f"sqlite:{path}"
        self._local = threading.local()
        private_file(path)
        try:
            self.connection().executescript(SCHEMA)  # its own transaction (executescript commits first)
        except sqlite3.Error as exc:
            raise unavailable(self.name, exc) from exc

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use, WAL mode)."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=True)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """A write (``BEGIN IMMEDIATE``) or read transaction; any SQLite failure is ReaderError UNAVAILABLE."""
        try:
            db = self.connection()
            db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise unavailable(self.name, exc) from exc


class SqliteIdempotency(SharedIdempotency):
    """Claims and answers in two tables of the shared file."""

    def __init__(self, db: SqliteDatabase, **limits: Any) -> None:
        super().__init__(**limits)
        self.db = db

    def claim(self, key: str, token: str) -> bool:
        """Take the key unless a live claim holds it (one write transaction)."""
        now = time.time()
        with self.db.transaction() as db:
            db.execute("DELETE FROM idem_claims WHERE key = ? AND until < ?", (key, now))
            cursor = db.execute(
                "INSERT OR IGNORE INTO idem_claims VALUES (?, ?, ?)", (key, token, now + self.lease_seconds)
            )
            return cursor.rowcount == 1

    def release(self, key: str, token: str) -> None:
        """Drop our claim."""
        with self.db.transaction() as db:
            db.execute("DELETE FROM idem_claims WHERE key = ? AND token = ?", (key, token))

    def load(self, key: str) -> tuple[str, str, str] | None:
        """The kept answer, unless older than the TTL."""
        with self.db.transaction(write=False) as db:
            row = db.execute(
                "SELECT tool_id, digest, answer FROM idem_records WHERE key = ? AND at >= ?",
                (key, time.time() - self.ttl_seconds),
            ).fetchone()
        return (str(row[0]), str(row[1]), str(row[2])) if row is not None else None

    def save(self, key: str, tool_id: str, digest: str, text: str, size: int) -> None:
        """Keep the answer; drop expired ones, then the oldest beyond max_keys and max_bytes."""
        now = time.time()
        with self.db.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO idem_records VALUES (?, ?, ?, ?, ?, ?)", (key, tool_id, digest, text, size, now)
            )
            db.execute("DELETE FROM idem_records WHERE at < ?", (now - self.ttl_seconds,))
            count, total = db.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM idem_records").fetchone()
            if count <= self.max_keys and total <= self.max_bytes:
                return
            doomed = []
            for old_key, old_size in db.execute("SELECT key, size FROM idem_records ORDER BY at, rowid"):
                if count <= self.max_keys and total <= self.max_bytes:
                    break
                doomed.append((old_key,))
                count, total = count - 1, total - old_size
            db.executemany("DELETE FROM idem_records WHERE key = ?", doomed)

    def count(self) -> int:
        """Answers kept and not expired."""
        with self.db.transaction(write=False) as db:
            row = db.execute(
                "SELECT COUNT(*) FROM idem_records WHERE at >= ?", (time.time() - self.ttl_seconds,)
            ).fetchone()
        return int(row[0])


class SqliteClients(ClientStates):
    """Working sets as JSON, one row per client."""

    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db

    def load(self, client: str) -> list[Json]:
        """The client's records unless older than CLIENT_TTL_SECONDS."""
        with self.db.transaction(write=False) as db:
            row = db.execute(
                "SELECT records FROM clients WHERE client = ? AND at >= ?", (client, time.time() - CLIENT_TTL_SECONDS)
            ).fetchone()
        records: list[Json] = json.loads(row[0]) if row is not None else []
        return records

    def save(self, client: str, records: list[Json]) -> None:
        """Replace the client's records; the least recently changed clients leave beyond MAX_CLIENTS."""
        with self.db.transaction() as db:
            db.execute("INSERT OR REPLACE INTO clients VALUES (?, ?, ?)", (client, json.dumps(records), time.time()))
            db.execute(
                "DELETE FROM clients WHERE client IN (SELECT client FROM clients ORDER BY at DESC LIMIT -1 OFFSET ?)",
                (MAX_CLIENTS,),
            )

    def clear_all(self) -> None:
        """Forget every client's records."""
        with self.db.transaction() as db:
            db.execute("DELETE FROM clients")


class SqliteAudit(StoredAudit):
    """Audit records as rows of the shared file (the newest MAX_AUDIT_RECORDS); a failed write is logged once."""

    def __init__(self, db: SqliteDatabase, session_id: str) -> None:
        super().__init__(session_id)
        self.db = db
        self._written = 0

    def keep(self, line: str) -> None:
        """Insert the line; every AUDIT_TRIM_EVERY writes, drop all but the newest MAX_AUDIT_RECORDS."""
        with self.db.transaction() as db:
            db.execute("INSERT INTO audit (line) VALUES (?)", (line,))
            self._written += 1
            if self._written % AUDIT_TRIM_EVERY == 0:
                db.execute("DELETE FROM audit WHERE id <= (SELECT MAX(id) FROM audit) - ?", (MAX_AUDIT_RECORDS,))


class SqliteState(StateStore):
    """serve's state in ``PATH`` (created when missing), shared by every process that opens it."""

    shared = True

    def __init__(self, path: str | Path, **limits: Any) -> None:
        self.db = SqliteDatabase(Path(path))
        self.name = self.db.name
        self.idempotency = SqliteIdempotency(self.db, **limits)
        self.clients = SqliteClients(self.db)

    def audit_sink(self, session_id: str, path: str | None) -> AuditSink | None:
        """The --audit file when given, else the audit table of the shared file."""
        return AuditLog(path, session_id) if path is not None else SqliteAudit(self.db, session_id)

    def audit_records(self) -> list[Json]:
        """Every audit record kept, oldest first."""
        with self.db.transaction(write=False) as db:
            lines = [row[0] for row in db.execute("SELECT line FROM audit ORDER BY id")]
        return [json.loads(line) for line in lines]

    def ping(self) -> None:
        """A trivial read; UNAVAILABLE when the file cannot be read."""
        with self.db.transaction(write=False) as db:
            db.execute("SELECT 1").fetchone()
