"""The results database's schema: its migrations (:data:`MIGRATIONS`, applied in one
transaction up to :data:`SCHEMA_VERSION` when a store is opened), the check that a file is
an arena database of a version this arena reads, and SQLite's integrity check."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from arena.store.errors import StoreError, rebuild_hint

APPLICATION = "sushigo-arena"
SCHEMA_VERSION = 5

# Migrations, in order: MIGRATIONS[i] takes the schema from version i to i + 1.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS bots (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        hash TEXT NOT NULL,
        path TEXT NOT NULL,
        first_seen TEXT NOT NULL,
        UNIQUE (name, hash)
    );
    CREATE TABLE IF NOT EXISTS tournaments (
        id TEXT PRIMARY KEY,
        created TEXT NOT NULL,
        updated TEXT NOT NULL,
        players INTEGER NOT NULL,
        variant TEXT NOT NULL,
        config TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS tournament_bots (
        tournament_id TEXT NOT NULL REFERENCES tournaments(id),
        name TEXT NOT NULL,
        bot_id INTEGER REFERENCES bots(id),
        status TEXT NOT NULL CHECK (status IN ('ok', 'skipped')),
        reason TEXT NOT NULL DEFAULT '',
        path TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (tournament_id, name)
    );
    CREATE TABLE IF NOT EXISTS games (
        id TEXT PRIMARY KEY,
        status TEXT NOT NULL CHECK (status IN ('complete', 'void')),
        set_id TEXT NOT NULL,
        seed INTEGER NOT NULL,
        players INTEGER NOT NULL,
        variant TEXT NOT NULL,
        rules TEXT NOT NULL,
        time_settings TEXT NOT NULL,
        duration_s REAL NOT NULL,
        finished TEXT NOT NULL,
        replay TEXT NOT NULL,
        void_reason TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE IF NOT EXISTS game_seats (
        game_id TEXT NOT NULL REFERENCES games(id) ON DELETE CASCADE,
        seat INTEGER NOT NULL,
        bot_id INTEGER NOT NULL REFERENCES bots(id),
        points INTEGER NOT NULL,
        puddings INTEGER NOT NULL,
        rank INTEGER NOT NULL,
        autopilot INTEGER NOT NULL,
        faults TEXT NOT NULL,
        mean_ms REAL,
        max_ms REAL,
        PRIMARY KEY (game_id, seat)
    );
    CREATE INDEX IF NOT EXISTS game_seats_bot ON game_seats (bot_id);
    CREATE TABLE IF NOT EXISTS tournament_games (
        tournament_id TEXT NOT NULL REFERENCES tournaments(id),
        game_id TEXT NOT NULL REFERENCES games(id) ON DELETE CASCADE,
        PRIMARY KEY (tournament_id, game_id)
    );
    """,
    # 2: what each seat's bot used in the game (measured by its sandbox; NULL: not measured).
    """
    ALTER TABLE game_seats ADD COLUMN cpu_ms REAL;
    ALTER TABLE game_seats ADD COLUMN peak_mb REAL;
    """,
    # 3: the standings last computed, by what they depend on (Store.standings_key), so that a
    # leaderboard of a store that has not changed is read, not refitted. A game, seat or link
    # changed or removed in place (voided, its set mended, replaced) is counted by triggers;
    # new games and links change the key by themselves.
    """
    CREATE TABLE IF NOT EXISTS standings_cache (
        tournament_id TEXT NOT NULL,
        options TEXT NOT NULL,
        games INTEGER NOT NULL,
        last_rowid INTEGER NOT NULL,
        changes INTEGER NOT NULL,
        document BLOB NOT NULL,
        PRIMARY KEY (tournament_id, options)
    );
    CREATE TABLE IF NOT EXISTS results_changes (id INTEGER PRIMARY KEY CHECK (id = 1), count INTEGER NOT NULL);
    INSERT OR IGNORE INTO results_changes (id, count) VALUES (1, 0);
    CREATE TRIGGER IF NOT EXISTS games_updated AFTER UPDATE ON games
        BEGIN UPDATE results_changes SET count = count + 1 WHERE id = 1; END;
    CREATE TRIGGER IF NOT EXISTS games_deleted AFTER DELETE ON games
        BEGIN UPDATE results_changes SET count = count + 1 WHERE id = 1; END;
    CREATE TRIGGER IF NOT EXISTS game_seats_updated AFTER UPDATE ON game_seats
        BEGIN UPDATE results_changes SET count = count + 1 WHERE id = 1; END;
    CREATE TRIGGER IF NOT EXISTS game_seats_deleted AFTER DELETE ON game_seats
        BEGIN UPDATE results_changes SET count = count + 1 WHERE id = 1; END;
    CREATE TRIGGER IF NOT EXISTS tournament_games_updated AFTER UPDATE ON tournament_games
        BEGIN UPDATE results_changes SET count = count + 1 WHERE id = 1; END;
    CREATE TRIGGER IF NOT EXISTS tournament_games_deleted AFTER DELETE ON tournament_games
        BEGIN UPDATE results_changes SET count = count + 1 WHERE id = 1; END;
    """,
    # 4: a tournament whose every scheduled game a run found or played, and what that run was
    # (a digest of its settings and its bots' names and content hashes), so that running it
    # again with the same bots and settings says so without starting a bot (arena.tournament.runner).
    """
    CREATE TABLE IF NOT EXISTS schedules_played (
        tournament_id TEXT PRIMARY KEY,
        identity TEXT NOT NULL,
        games INTEGER NOT NULL,
        linked INTEGER,
        recorded TEXT NOT NULL
    );
    """,
    # 5: a competition served (arena.competition): its teams and their hashed tokens, the
    # bots they upload and the queue that validates them, the ladder's own state (paused,
    # what it waits for) and the unranked challenges teams ask for.
    """
    CREATE TABLE IF NOT EXISTS teams (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_hash TEXT NOT NULL,
        token_prefix TEXT NOT NULL,
        is_admin INTEGER NOT NULL DEFAULT 0,
        created TEXT NOT NULL,
        revoked TEXT
    );
    CREATE INDEX IF NOT EXISTS teams_token_prefix ON teams (token_prefix);
    CREATE TABLE IF NOT EXISTS submissions (
        id INTEGER PRIMARY KEY,
        team_id INTEGER NOT NULL REFERENCES teams(id),
        created TEXT NOT NULL,
        updated TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'building', 'validating', 'accepted', 'rejected')),
        archive_name TEXT NOT NULL,
        archive_sha256 TEXT NOT NULL,
        archive_bytes INTEGER NOT NULL,
        bot_name TEXT,
        version INTEGER,
        reason TEXT,
        report TEXT,
        build_log TEXT,
        bot_key TEXT
    );
    CREATE INDEX IF NOT EXISTS submissions_team ON submissions (team_id, id);
    CREATE INDEX IF NOT EXISTS submissions_status ON submissions (status, id);
    CREATE TABLE IF NOT EXISTS ladder_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS challenges (
        id INTEGER PRIMARY KEY,
        team_id INTEGER NOT NULL REFERENCES teams(id),
        created TEXT NOT NULL,
        opponents TEXT NOT NULL,
        games INTEGER NOT NULL,
        played INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL,
        tournament TEXT
    );
    CREATE INDEX IF NOT EXISTS challenges_status ON challenges (status, id);
    """,
]


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):  # (a damaged file may refuse even that: the first error counts)
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


#: At most this many of quick_check's findings are named in the error.
_CHECK_SHOWN = 3


def check_integrity(conn: sqlite3.Connection, path: Path) -> None:
    """``PRAGMA quick_check``: every page of the file read once, b-trees and records
    checked (not whether each index matches its table, which costs a sort). It reads the
    file at the disk's speed; about 30 ms for a store of 10,000 games."""
    found = [row[0] for row in conn.execute(f"PRAGMA quick_check({_CHECK_SHOWN})")]
    if found != ["ok"]:
        shown = "; ".join(str(f) for f in found[:_CHECK_SHOWN])
        raise StoreError(f"{path}: the database is damaged (SQLite's check: {shown}); {rebuild_hint(path.parent)}")


def read_schema_version(conn: sqlite3.Connection, path: Path) -> int:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return 0
    if "meta" not in tables:
        raise StoreError(f"{path}: an SQLite database, but not an arena results database (tables: {', '.join(sorted(tables))})")
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if meta.get("application") != APPLICATION:
        raise StoreError(f"{path}: an SQLite database of another application ({meta.get('application')!r})")
    try:
        version = int(meta.get("schema_version", "0"))
    except ValueError:
        raise StoreError(f"{path}: its schema version is not a number ({meta.get('schema_version')!r})") from None
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: made by a newer arena (schema {version}; this arena knows up to {SCHEMA_VERSION}): upgrade the arena"
        )
    return version


def migrate_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to :data:`SCHEMA_VERSION`. The version is read again inside the
    write transaction, so that two processes opening a new or old store at once migrate
    it once: the second finds it done (a reader may open a store a run is creating)."""
    if read_schema_version(conn, path) == SCHEMA_VERSION:
        return
    with write_transaction(conn):
        version = read_schema_version(conn, path)
        for step in range(version, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[step]):
                conn.execute(statement)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('application', ?)", (APPLICATION,))
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))


def _statements(script: str) -> Iterator[str]:
    """The statements of a migration, one at a time: split at each ``;`` that ends one (a
    trigger's body holds statements of its own, each with its ``;``)."""
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                yield pending
            pending = ""
    if pending.strip(" \n;"):
        yield pending
