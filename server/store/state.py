"""The state store: one SQLite database per user for everything derived (docs/writing.md).

`<user data dir>/memory-recall/state.sqlite3` (`$MEMORY_RECALL_STATE_DIR`
overrides the folder; `off` runs without one — recall works, writes are
refused). It holds the journal (journal.py), per-memory statistics and links
learned from writes, keyed by root (its real path) and the path inside it.
Memory files stay the truth: deleting the database loses history and
statistics, never a memory.

Several daemons share the file: WAL mode, a busy timeout, and every write in
a `BEGIN IMMEDIATE` transaction. The schema has a version (`PRAGMA
user_version`) and migrations from the first release on; later features add
theirs to `MIGRATIONS` (feedback statistics, network edges, consolidation
state, embedding vectors), each one a step that runs once, in a transaction.
A database written by a newer release is left alone and the writer says so; a
file that is not a database is moved aside and a fresh one started.

One job past 400 lines: the schema, its migrations and the few queries every
part of the daemon shares (statistics, feedback, links) are one database's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_recall.server.roots import user_data_dir
from memory_recall.server.store.errors import WriteFailed

log = logging.getLogger("memory_recall.state")

STATE_DIR_ENV = "MEMORY_RECALL_STATE_DIR"
STATE_FILE_NAME = "state.sqlite3"
BUSY_TIMEOUT_MS = 5_000  # another daemon's write transaction takes milliseconds

Migration = Callable[[sqlite3.Connection], None]


def _script(sql: str) -> Migration:
    def run(connection: sqlite3.Connection) -> None:
        for statement in sql.split(";"):
            if statement.strip():
                connection.execute(statement)

    return run


# Version N of the schema is MIGRATIONS[:N] applied in order. Append, never edit.
MIGRATIONS: list[tuple[str, Migration]] = [
    (
        "the first release: roots, the journal, per-memory statistics, links",
        _script(
            """
            CREATE TABLE roots (
                id INTEGER PRIMARY KEY,
                path TEXT NOT NULL UNIQUE
            );
            CREATE TABLE operations (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                root_id INTEGER NOT NULL REFERENCES roots(id),
                kind TEXT NOT NULL,
                trigger TEXT NOT NULL,
                state TEXT NOT NULL,
                started_ms INTEGER NOT NULL,
                finished_ms INTEGER,
                undoes TEXT,
                undone_by TEXT,
                pid INTEGER,
                note TEXT,
                result TEXT
            );
            CREATE INDEX operations_state ON operations(root_id, state);
            CREATE TABLE changes (
                operation_seq INTEGER NOT NULL REFERENCES operations(seq),
                position INTEGER NOT NULL,
                root_id INTEGER NOT NULL REFERENCES roots(id),
                path TEXT NOT NULL,
                action TEXT NOT NULL,
                title TEXT,
                before BLOB,
                after BLOB,
                before_hash TEXT,
                after_hash TEXT,
                temp TEXT,
                kept INTEGER NOT NULL DEFAULT 1,
                PRIMARY KEY (operation_seq, position)
            );
            CREATE INDEX changes_path ON changes(root_id, path);
            CREATE TABLE memory_stats (
                root_id INTEGER NOT NULL REFERENCES roots(id),
                path TEXT NOT NULL,
                created_ms INTEGER,
                updated_ms INTEGER,
                writes INTEGER NOT NULL DEFAULT 0,
                delivered INTEGER NOT NULL DEFAULT 0,
                last_delivered_ms INTEGER,
                category TEXT,
                category_hash TEXT,
                PRIMARY KEY (root_id, path)
            );
            CREATE TABLE links (
                root_id INTEGER NOT NULL REFERENCES roots(id),
                source TEXT NOT NULL,
                target TEXT NOT NULL,
                kind TEXT NOT NULL,
                operation_seq INTEGER REFERENCES operations(seq),
                created_ms INTEGER NOT NULL,
                PRIMARY KEY (root_id, source, target, kind)
            );
            CREATE INDEX links_target ON links(root_id, target)
            """
        ),
    ),
    (
        "batches: the operations of one request over several roots (a consolidation of the"
        " user's and the project's memories) are undone together",
        _script(
            """
            ALTER TABLE operations ADD COLUMN batch TEXT;
            CREATE INDEX operations_batch ON operations(batch)
            """
        ),
    ),
    (
        "embedding vectors (semantic recall): by the embedded text's hash and the model",
        _script(
            """
            CREATE TABLE embeddings (
                model TEXT NOT NULL,
                text_hash TEXT NOT NULL,
                dimension INTEGER NOT NULL,
                vector BLOB NOT NULL,
                created_ms INTEGER NOT NULL,
                PRIMARY KEY (model, text_hash)
            )
            """
        ),
    ),
    (
        "feedback (docs/network.md): recalled, used and ignored per memory; memories used together",
        _script(
            """
            ALTER TABLE memory_stats ADD COLUMN recalled INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE memory_stats ADD COLUMN used INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE memory_stats ADD COLUMN ignored INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE memory_stats ADD COLUMN last_used_ms INTEGER;
            CREATE TABLE co_use (
                root_a INTEGER NOT NULL REFERENCES roots(id),
                path_a TEXT NOT NULL,
                root_b INTEGER NOT NULL REFERENCES roots(id),
                path_b TEXT NOT NULL,
                count INTEGER NOT NULL,
                last_ms INTEGER NOT NULL,
                PRIMARY KEY (root_a, path_a, root_b, path_b)
            )
            """
        ),
    ),
    (
        "proposals: an agent's force, always and team writes wait here for the user's word"
        " (docs/safety.md)",
        _script(
            """
            CREATE TABLE proposals (
                id TEXT PRIMARY KEY,
                root_id INTEGER REFERENCES roots(id),
                kind TEXT NOT NULL,
                origin TEXT NOT NULL,
                reasons TEXT NOT NULL,
                title TEXT NOT NULL,
                request TEXT NOT NULL,
                state TEXT NOT NULL,
                created_ms INTEGER NOT NULL,
                decided_ms INTEGER,
                operation TEXT
            );
            CREATE INDEX proposals_state ON proposals(state, created_ms)
            """
        ),
    ),
    (
        "sync through git (docs/sync.md): which machine did each operation (NULL: this one),"
        " this machine's name, and per synced root the journal position already committed"
        " and the last sync's outcome",
        lambda connection: _sync_tables(connection),
    ),
]


def _sync_tables(connection: sqlite3.Connection) -> None:
    # Written to run on any schema that has the first release's tables, whatever other
    # migrations ran before it: branches that each append one may land in either order.
    columns = {row[1] for row in connection.execute("PRAGMA table_info(operations)")}
    if "machine" not in columns:
        connection.execute("ALTER TABLE operations ADD COLUMN machine TEXT")
    connection.execute("CREATE TABLE IF NOT EXISTS machine (id TEXT NOT NULL)")
    connection.execute(
        """
        CREATE TABLE IF NOT EXISTS sync_roots (
            root_id INTEGER PRIMARY KEY REFERENCES roots(id),
            committed_seq INTEGER NOT NULL DEFAULT 0,
            last_attempt_ms INTEGER,
            last_sync_ms INTEGER,
            last_error TEXT,
            failures INTEGER NOT NULL DEFAULT 0
        )
        """
    )


SCHEMA_VERSION = len(MIGRATIONS)


def now_ms() -> int:
    return int(time.time() * 1000)


def default_state_dir() -> Path | None:
    """`$MEMORY_RECALL_STATE_DIR`, else the user data dir; None when set to `off`."""
    configured = os.environ.get(STATE_DIR_ENV)
    if configured == "off":
        return None
    return Path(configured) if configured else user_data_dir()


@dataclass(frozen=True)
class MemoryStats:
    """What the store knows of one memory beyond its file."""

    created_ms: int | None = None
    updated_ms: int | None = None
    writes: int = 0
    delivered: int = 0
    last_delivered_ms: int | None = None
    recalled: int = 0
    used: int = 0
    ignored: int = 0
    last_used_ms: int | None = None


# A memory in the store: (root key, path inside the root).
MemoryKey = tuple[str, str]


class StateStore:
    """One SQLite database, shared by every daemon of this user."""

    def __init__(
        self, path: Path, *, migrations: Sequence[tuple[str, Migration]] = MIGRATIONS
    ) -> None:
        self.path = path
        self.lock_dir = path.parent / "locks"
        self._migrations = list(migrations)
        self._lock = threading.RLock()
        self._root_ids: dict[str, int] = {}
        self.problem: str | None = None  # what happened to an unusable file, for status
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._connection = self._open()
        except sqlite3.DatabaseError as exc:
            if "newer" in str(exc):
                raise
            aside = path.with_name(f"{path.name}.unreadable-{now_ms()}")
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(f"{path}{suffix}", f"{aside}{suffix}")
            self.problem = f"{path} was not a usable database ({exc}); moved to {aside}"
            log.warning("state store: %s", self.problem)
            self._connection = self._open()

    @classmethod
    def open_default(cls) -> StateStore | None:
        directory = default_state_dir()
        return None if directory is None else cls(directory / STATE_FILE_NAME)

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
            check_same_thread=False,
        )  # fmt: skip
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            connection.execute("PRAGMA journal_mode = WAL")
            # The journal must survive a crash of the daemon; NORMAL in WAL mode
            # loses at most the last transactions on power loss, never integrity.
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA foreign_keys = ON")
            self._migrate(connection)
        except BaseException:
            connection.close()
            raise
        return connection

    def _migrate(self, connection: sqlite3.Connection) -> None:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version > len(self._migrations):
            raise sqlite3.DatabaseError(
                f"{self.path} has schema version {version}, newer than this release's"
                f" {len(self._migrations)}: written by a newer memory-recall"
            )
        if version == len(self._migrations):
            return
        connection.execute("BEGIN IMMEDIATE")
        try:
            # Another daemon may have migrated while we waited for the lock.
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            for number in range(version, len(self._migrations)):
                description, migrate = self._migrations[number]
                migrate(connection)
                log.info("state store: migrated to version %d (%s)", number + 1, description)
            connection.execute(f"PRAGMA user_version = {len(self._migrations)}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

    @property
    def schema_version(self) -> int:
        return int(self.query("PRAGMA user_version")[0][0])

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    # -- access ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE): committed on success, rolled back on error."""
        with self._lock:
            connection = self._connection
            try:
                connection.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._failure(exc) from None
            try:
                yield connection
            except sqlite3.Error as exc:  # a full disk, an I/O error: said plainly
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                raise self._failure(exc) from None
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                raise
            try:
                connection.execute("COMMIT")
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                raise self._failure(exc) from None

    def _failure(self, exc: sqlite3.Error) -> WriteFailed:
        """A database error as a failure a user can act on; nothing was written."""
        text = str(exc)
        if "full" in text or "SQLITE_FULL" in text:
            return WriteFailed(
                f"the disk holding the state store ({self.path.parent}) is full: the journal"
                " cannot record the change, so nothing was written. Free some space and repeat."
            )
        if "readonly" in text or "read-only" in text:
            return WriteFailed(
                f"the state store {self.path} is read-only ({text}); nothing was written"
            )
        return WriteFailed(f"the state store {self.path} could not be written ({text});"
                           " nothing was written")  # fmt: skip

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._connection.execute(sql, params).fetchall()

    def root_id(self, key: str) -> int:
        """The id of a root (by its real path), created on first use."""
        found = self._root_ids.get(key)
        if found is not None:
            return found
        with self._lock:
            row = self._connection.execute("SELECT id FROM roots WHERE path = ?", (key,)).fetchone()
            if row is None:
                with self.transaction() as tx:
                    tx.execute("INSERT OR IGNORE INTO roots(path) VALUES (?)", (key,))
                row = self._connection.execute(
                    "SELECT id FROM roots WHERE path = ?", (key,)
                ).fetchone()
        self._root_ids[key] = int(row[0])
        return int(row[0])

    # -- statistics ----------------------------------------------------------------------------

    @staticmethod
    def record_write(
        tx: sqlite3.Connection, root_id: int, path: str, when_ms: int, *, created: bool
    ) -> None:
        tx.execute(
            "INSERT INTO memory_stats(root_id, path, created_ms, updated_ms, writes)"
            " VALUES (?, ?, ?, ?, 1)"
            " ON CONFLICT(root_id, path) DO UPDATE SET updated_ms = excluded.updated_ms,"
            " writes = writes + 1, created_ms = COALESCE(created_ms, excluded.created_ms)",
            (root_id, path, when_ms if created else None, when_ms),
        )

    @staticmethod
    def move_stats(tx: sqlite3.Connection, root_id: int, old: str, new: str) -> None:
        """A memory moved (archived, restored, renamed): its statistics go with it, and how
        often it was used together with others."""
        tx.execute("DELETE FROM memory_stats WHERE root_id = ? AND path = ?", (root_id, new))
        tx.execute(
            "UPDATE memory_stats SET path = ? WHERE root_id = ? AND path = ?", (new, root_id, old)
        )
        where = "(root_a = ? AND path_a = ?) OR (root_b = ? AND path_b = ?)"
        rows = tx.execute(
            f"SELECT root_a, path_a, root_b, path_b, count, last_ms FROM co_use WHERE {where}",
            (root_id, old, root_id, old),
        ).fetchall()
        tx.execute(f"DELETE FROM co_use WHERE {where}", (root_id, old, root_id, old))
        moved = []
        for root_a, path_a, root_b, path_b, count, last_ms in rows:
            a = (root_a, new if (root_a, path_a) == (root_id, old) else path_a)
            b = (root_b, new if (root_b, path_b) == (root_id, old) else path_b)
            if a != b:  # a pair is kept in order, as record_use writes it
                moved.append((*min(a, b), *max(a, b), count, last_ms))
        tx.executemany(
            "INSERT INTO co_use(root_a, path_a, root_b, path_b, count, last_ms)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(root_a, path_a, root_b, path_b)"
            " DO UPDATE SET count = count + excluded.count,"
            " last_ms = MAX(last_ms, excluded.last_ms)",
            moved,
        )

    def add_deliveries(self, counts: dict[tuple[str, str], tuple[int, int]]) -> None:
        """Add `(root key, path) → (times delivered, last time)` to the statistics."""
        if not counts:
            return
        rows = [(self.root_id(root), path, n, last) for (root, path), (n, last) in counts.items()]
        with self.transaction() as tx:
            tx.executemany(
                "INSERT INTO memory_stats(root_id, path, delivered, last_delivered_ms)"
                " VALUES (?, ?, ?, ?) ON CONFLICT(root_id, path) DO UPDATE SET"
                " delivered = delivered + excluded.delivered,"
                " last_delivered_ms ="
                " MAX(COALESCE(last_delivered_ms, 0), excluded.last_delivered_ms)",
                rows,
            )

    def delivered_last(self, root_keys: Sequence[str], limit: int) -> list[MemoryKey]:
        """`(root key, path)` of the memories of these roots delivered most recently, in any
        session, the latest first; at most `limit`."""
        ids = {self.root_id(key): key for key in root_keys}
        if not ids or limit <= 0:
            return []
        marks = ",".join("?" * len(ids))
        rows = self.query(
            f"SELECT root_id, path FROM memory_stats WHERE root_id IN ({marks})"
            " AND last_delivered_ms IS NOT NULL ORDER BY last_delivered_ms DESC, path LIMIT ?",
            [*ids, limit],
        )
        return [(ids[root_id], path) for root_id, path in rows]

    def add_recalls(self, counts: dict[MemoryKey, int]) -> None:
        """Add `(root key, path) → times among a recall's candidates` to the statistics."""
        if not counts:
            return
        rows = [(self.root_id(root), path, n) for (root, path), n in counts.items()]
        with self.transaction() as tx:
            tx.executemany(
                "INSERT INTO memory_stats(root_id, path, recalled) VALUES (?, ?, ?)"
                " ON CONFLICT(root_id, path) DO UPDATE SET recalled = recalled + excluded.recalled",
                rows,
            )

    def add_feedback(
        self,
        used: Sequence[MemoryKey],
        ignored: Sequence[MemoryKey],
        when_ms: int,
        *,
        together: bool = True,
    ) -> int:
        """Record one recall's feedback: each used memory's use (and when), each ignored
        one's; with `together`, every pair of used memories as used together once.
        Returns the number of co-use pairs touched."""
        used_rows = [(self.root_id(r), p, when_ms) for r, p in dict.fromkeys(used)]
        ignored_rows = [(self.root_id(r), p) for r, p in dict.fromkeys(ignored)]
        pairs = []
        if together:
            keys = sorted({(rid, p) for rid, p, _ in used_rows})
            pairs = [(*a, *b, when_ms) for i, a in enumerate(keys) for b in keys[i + 1 :]]
        with self.transaction() as tx:
            tx.executemany(
                "INSERT INTO memory_stats(root_id, path, used, last_used_ms) VALUES (?, ?, 1, ?)"
                " ON CONFLICT(root_id, path) DO UPDATE SET used = used + 1,"
                " last_used_ms = MAX(COALESCE(last_used_ms, 0), excluded.last_used_ms)",
                used_rows,
            )
            tx.executemany(
                "INSERT INTO memory_stats(root_id, path, ignored) VALUES (?, ?, 1)"
                " ON CONFLICT(root_id, path) DO UPDATE SET ignored = ignored + 1",
                ignored_rows,
            )
            tx.executemany(
                "INSERT INTO co_use(root_a, path_a, root_b, path_b, count, last_ms)"
                " VALUES (?, ?, ?, ?, 1, ?) ON CONFLICT(root_a, path_a, root_b, path_b)"
                " DO UPDATE SET count = count + 1, last_ms = excluded.last_ms",
                pairs,
            )
        return len(pairs)

    def co_use(self, root_keys: Sequence[str]) -> dict[tuple[MemoryKey, MemoryKey], int]:
        """How often each pair of memories (of these roots) was used together."""
        ids = {self.root_id(key): key for key in root_keys}
        marks = ",".join("?" * len(ids))
        if not ids:
            return {}
        rows = self.query(
            f"SELECT root_a, path_a, root_b, path_b, count FROM co_use"
            f" WHERE root_a IN ({marks}) AND root_b IN ({marks})",
            [*ids, *ids],
        )
        return {((ids[ra], pa), (ids[rb], pb)): int(n) for ra, pa, rb, pb, n in rows}

    def stats(self, root_key: str) -> dict[str, MemoryStats]:
        """The memories of a root the store knows more of than their category (a memory
        left out has `MemoryStats()`: nothing counted): a row that only keeps an inferred
        category is one per memory, and this is read on the event loop."""
        rows = self.query(
            "SELECT path, created_ms, updated_ms, writes, delivered, last_delivered_ms,"
            " recalled, used, ignored, last_used_ms"
            " FROM memory_stats WHERE root_id = ?"
            " AND (created_ms IS NOT NULL OR updated_ms IS NOT NULL OR writes != 0"
            " OR delivered != 0 OR last_delivered_ms IS NOT NULL OR recalled != 0"
            " OR used != 0 OR ignored != 0 OR last_used_ms IS NOT NULL)",
            (self.root_id(root_key),),
        )
        return {row[0]: MemoryStats(*row[1:]) for row in rows}

    def cached_categories(self, root_key: str) -> dict[str, tuple[str, str]]:
        """`path → (content hash, category)` inferred earlier for unchanged files."""
        rows = self.query(
            "SELECT path, category_hash, category FROM memory_stats"
            " WHERE root_id = ? AND category IS NOT NULL",
            (self.root_id(root_key),),
        )
        return {row[0]: (row[1], row[2]) for row in rows}

    def cache_categories(self, root_key: str, found: dict[str, tuple[str, str]]) -> None:
        if not found:
            return
        root_id = self.root_id(root_key)
        with self.transaction() as tx:
            tx.executemany(
                "INSERT INTO memory_stats(root_id, path, category_hash, category)"
                " VALUES (?, ?, ?, ?) ON CONFLICT(root_id, path) DO UPDATE SET"
                " category_hash = excluded.category_hash, category = excluded.category",
                [(root_id, path, h, c) for path, (h, c) in found.items()],
            )

    # -- links ------------------------------------------------------------------------------------

    @staticmethod
    def add_link(
        tx: sqlite3.Connection,
        root_id: int,
        source: str,
        target: str,
        kind: str,
        operation_seq: int,
        when_ms: int,
    ) -> None:
        tx.execute(
            "INSERT OR REPLACE INTO links(root_id, source, target, kind, operation_seq, created_ms)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (root_id, source, target, kind, operation_seq, when_ms),
        )

    def links(self, root_key: str, path: str) -> list[tuple[str, str, str]]:
        """`(source, target, kind)` of every link from or to `path`."""
        root_id = self.root_id(root_key)
        return [
            (row[0], row[1], row[2])
            for row in self.query(
                "SELECT source, target, kind FROM links WHERE root_id = ?"
                " AND (source = ? OR target = ?) ORDER BY created_ms",
                (root_id, path, path),
            )
        ]


class DeliveryCounter:
    """Deliveries counted in memory on the recall path, written to the store in batches.

    A recall never waits for SQLite: it adds to a counter; the daemon flushes
    it every few seconds (and at shutdown) off the event loop.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str]] = Counter()
        self._last: dict[tuple[str, str], int] = {}
        self._recalled: Counter[MemoryKey] = Counter()

    def add(self, root_key: str, path: str, when_ms: int | None = None) -> None:
        key = (root_key, path)
        with self._lock:
            self._counts[key] += 1
            self._last[key] = when_ms or now_ms()

    def add_recalled(self, keys: Sequence[MemoryKey]) -> None:
        """Memories among one recall's candidates (counted as `recalled`)."""
        with self._lock:
            self._recalled.update(keys)

    def flush(self, store: StateStore) -> int:
        """Write what was counted; how many memories it touched."""
        with self._lock:
            counts, self._counts = self._counts, Counter()
            last, self._last = self._last, {}
            recalled, self._recalled = self._recalled, Counter()
        if not counts and not recalled:
            return 0
        try:
            if counts:
                store.add_deliveries({key: (n, last[key]) for key, n in counts.items()})
            if recalled:
                store.add_recalls(dict(recalled))
        except Exception:
            with self._lock:  # keep them for the next flush
                self._counts.update(counts)
                self._recalled.update(recalled)
                for key, when in last.items():
                    self._last[key] = max(when, self._last.get(key, 0))
            raise
        return len(counts.keys() | recalled.keys())
