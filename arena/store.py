"""The results store: one SQLite database plus one replay file per game.

Layout of a results folder (``results/`` by default)::

    arena.db                      the database (WAL mode)
    replays/ab/ab12cd34ef567890.json.gz
    build/                        build caches of bots with a build step
    leaderboard.json, leaderboard.md   written at the end of every run

A game is recorded in two steps, in this order: its replay is written to a temporary
name and renamed (see :func:`arena.replay.write_replay`), then one transaction inserts
the game. A crash between the two leaves an unreferenced replay file that the next run
simply overwrites; a crash never leaves a game row without its replay, and a finished
game is recorded once (its id is the primary key).

The store is written by one connection at a time (the tournament's single writer);
readers (``arena leaderboard`` while a run goes on) may open it concurrently.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ArenaError

DB_NAME = "arena.db"
APPLICATION = "sushigo-arena"
SCHEMA_VERSION = 2

# Migrations, in order: MIGRATIONS[i] takes the schema from version i to i + 1.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE bots (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        hash TEXT NOT NULL,
        path TEXT NOT NULL,
        first_seen TEXT NOT NULL,
        UNIQUE (name, hash)
    );
    CREATE TABLE tournaments (
        id TEXT PRIMARY KEY,
        created TEXT NOT NULL,
        updated TEXT NOT NULL,
        players INTEGER NOT NULL,
        variant TEXT NOT NULL,
        config TEXT NOT NULL
    );
    CREATE TABLE tournament_bots (
        tournament_id TEXT NOT NULL REFERENCES tournaments(id),
        name TEXT NOT NULL,
        bot_id INTEGER REFERENCES bots(id),
        status TEXT NOT NULL CHECK (status IN ('ok', 'skipped')),
        reason TEXT NOT NULL DEFAULT '',
        path TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (tournament_id, name)
    );
    CREATE TABLE games (
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
    CREATE TABLE game_seats (
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
    CREATE INDEX game_seats_bot ON game_seats (bot_id);
    CREATE TABLE tournament_games (
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
]


class StoreError(ArenaError):
    """The results store cannot be used; the message names the file."""


@dataclass(frozen=True, slots=True)
class BotRow:
    id: int
    name: str
    version: str
    hash: str
    path: str

    @property
    def key(self) -> str:
        """How a bot version is named in ratings and tables: ``name`` plus the first
        hash characters, so that two versions of one bot never merge."""
        return f"{self.name}@{self.hash[:8]}"


@dataclass(frozen=True, slots=True)
class SeatRow:
    seat: int
    bot: BotRow
    points: int
    puddings: int
    rank: int
    autopilot: bool
    faults: dict[str, int]
    mean_ms: float | None
    max_ms: float | None
    cpu_ms: float | None = None  # CPU time of the bot's processes in this game
    peak_mb: float | None = None  # their peak memory in this game, MiB


@dataclass(frozen=True, slots=True)
class GameRow:
    id: str
    status: str
    set_id: str
    seed: int
    players: int
    variant: str
    duration_s: float
    finished: str
    replay: str  # relative to the results folder
    void_reason: str
    seats: tuple[SeatRow, ...]


@dataclass(frozen=True, slots=True)
class TournamentRow:
    id: str
    created: str
    updated: str
    players: int
    variant: str
    config: dict[str, Any]


@dataclass(frozen=True, slots=True)
class NewGame:
    """A finished game as the tournament hands it to the store."""

    id: str
    status: str
    set_id: str
    seed: int
    players: int
    variant: str
    rules: str
    time_settings: Mapping[str, Any]
    duration_s: float
    replay: str
    bot_ids: Sequence[int]
    points: Sequence[int]
    puddings: Sequence[int]
    ranks: Sequence[int]
    autopilot: Sequence[bool]
    faults: Sequence[Mapping[str, int]]
    mean_ms: Sequence[float | None]
    max_ms: Sequence[float | None]
    void_reason: str = ""
    cpu_ms: Sequence[float | None] = ()  # per seat; empty: not measured
    peak_mb: Sequence[float | None] = ()


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


_INSERT_GAME = (
    "INSERT INTO games (id, status, set_id, seed, players, variant, rules, time_settings, duration_s, "
    "finished, replay, void_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _faults_json(faults: Mapping[str, int]) -> str:
    """A seat's faults by kind, the kinds it had only."""
    if not any(faults.values()):
        return "{}"
    return json.dumps({k: v for k, v in faults.items() if v})


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def make_replay_folders(root: Path) -> None:
    """Create ``replays/00`` … ``replays/ff`` once, so that recording a game never has
    to create a folder (on ext4 a new folder costs more than the replay file itself)."""
    base = root / "replays"
    try:
        for i in range(256):
            (base / f"{i:02x}").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"{base}: cannot create the replay folders: {exc.strerror or exc}") from None


def replay_relpath(game_id: str) -> str:
    return f"replays/{game_id[:2]}/{game_id}.json.gz"


class Store:
    """A results folder's database. Open with :func:`open_store`; close with :meth:`close`."""

    def __init__(self, root: Path, conn: sqlite3.Connection) -> None:
        self.root = root
        self.path = root / DB_NAME
        self._conn = conn
        self._in_batch = False

    def _tx(self) -> contextlib.AbstractContextManager[None]:
        if self._in_batch:
            return contextlib.nullcontext()  # already inside batch()'s transaction
        return _transaction(self._conn)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction around several writes (e.g. the games that finished while the
        writer was busy: a group commit); all of them are recorded, or none."""
        if self._in_batch:
            yield
            return
        with _transaction(self._conn):
            self._in_batch = True
            try:
                yield
            finally:
                self._in_batch = False

    # -- bots and tournaments ---------------------------------------------------------

    def bot(self, name: str, version: str, content_hash: str, path: str) -> BotRow:
        """The row of this bot version, added on first sight (name + content hash)."""
        with self._tx():
            self._conn.execute(
                "INSERT OR IGNORE INTO bots (name, version, hash, path, first_seen) VALUES (?, ?, ?, ?, ?)",
                (name, version, content_hash, path, _now()),
            )
        row = self._conn.execute(
            "SELECT id, name, version, hash, path FROM bots WHERE name = ? AND hash = ?", (name, content_hash)
        ).fetchone()
        return BotRow(*row)

    def bots(self) -> dict[int, BotRow]:
        return {r[0]: BotRow(*r) for r in self._conn.execute("SELECT id, name, version, hash, path FROM bots")}

    def tournament(self, tournament_id: str, players: int, variant: str, config: Mapping[str, Any]) -> TournamentRow:
        """Create the tournament or, if it exists, mark it updated (a resumed run)."""
        now = _now()
        with self._tx():
            self._conn.execute(
                "INSERT INTO tournaments (id, created, updated, players, variant, config) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET updated = excluded.updated, config = excluded.config",
                (tournament_id, now, now, players, variant, json.dumps(dict(config), sort_keys=True)),
            )
        found = self.get_tournament(tournament_id)
        assert found is not None
        return found

    def get_tournament(self, tournament_id: str) -> TournamentRow | None:
        row = self._conn.execute(
            "SELECT id, created, updated, players, variant, config FROM tournaments WHERE id = ?", (tournament_id,)
        ).fetchone()
        return None if row is None else TournamentRow(*row[:5], json.loads(row[5]))

    def tournaments(self) -> list[TournamentRow]:
        rows = self._conn.execute(
            "SELECT id, created, updated, players, variant, config FROM tournaments ORDER BY updated, id"
        ).fetchall()
        return [TournamentRow(*r[:5], json.loads(r[5])) for r in rows]

    def latest_tournament(self) -> TournamentRow | None:
        ts = self.tournaments()
        return ts[-1] if ts else None

    def set_entrants(
        self, tournament_id: str, ok: Iterable[BotRow], skipped: Iterable[tuple[str, str, str]]
    ) -> None:
        """Record who took part in this run of the tournament: the bots that started,
        and (name, path, reason) of those skipped. Replaces the previous run's list."""
        with self._tx():
            self._conn.execute("DELETE FROM tournament_bots WHERE tournament_id = ?", (tournament_id,))
            self._conn.executemany(
                "INSERT INTO tournament_bots (tournament_id, name, bot_id, status, path) VALUES (?, ?, ?, 'ok', ?)",
                [(tournament_id, b.name, b.id, b.path) for b in ok],
            )
            self._conn.executemany(
                "INSERT OR REPLACE INTO tournament_bots (tournament_id, name, status, reason, path) "
                "VALUES (?, ?, 'skipped', ?, ?)",
                [(tournament_id, name, reason, path) for name, path, reason in skipped],
            )

    def entrant_ids(self, tournament_id: str) -> set[int]:
        """The bot versions (bot ids) that took part in the latest run of this tournament."""
        rows = self._conn.execute(
            "SELECT bot_id FROM tournament_bots WHERE tournament_id = ? AND status = 'ok'", (tournament_id,)
        )
        return {r[0] for r in rows}

    def skipped(self, tournament_id: str) -> list[dict[str, str]]:
        rows = self._conn.execute(
            "SELECT name, path, reason FROM tournament_bots WHERE tournament_id = ? AND status = 'skipped' ORDER BY name",
            (tournament_id,),
        )
        return [{"bot": n, "path": p, "reason": r} for n, p, r in rows]

    # -- games ------------------------------------------------------------------------

    def completed_ids(self, ids: Iterable[str]) -> set[str]:
        """Which of these game ids are already recorded as complete, with their replay
        file in place. A recorded game whose replay is missing or empty (a power cut
        soon after it was written) is marked void here, so that it is played again."""
        wanted = list(ids)
        found: set[str] = set()
        lost: list[str] = []
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for gid, replay in self._conn.execute(
                f"SELECT id, replay FROM games WHERE status = 'complete' AND id IN ({marks})", chunk
            ):
                file = self.root / replay
                try:
                    ok = file.stat().st_size > 0
                except OSError:
                    ok = False
                (found.add if ok else lost.append)(gid)
        if lost:
            with self._tx():
                self._conn.executemany(
                    "UPDATE games SET status = 'void', void_reason = 'its replay file was missing or empty' WHERE id = ?",
                    [(g,) for g in lost],
                )
        return found

    def link_games(self, tournament_id: str, game_ids: Iterable[str]) -> None:
        """Count already-played games (from an earlier run, or another tournament with
        the same settings) in this tournament too."""
        with self._tx():
            self._conn.executemany(
                "INSERT OR IGNORE INTO tournament_games (tournament_id, game_id) VALUES (?, ?)",
                [(tournament_id, g) for g in game_ids],
            )

    def add_game(self, game: NewGame, tournament_id: str | None = None) -> bool:
        """Record a finished game in one transaction; returns False if a complete game
        with this id was already there (it is then left untouched). A void game is
        kept for the record and replaced when the game is played again."""
        n = len(game.bot_ids)
        for field_name in ("points", "puddings", "ranks", "autopilot", "faults", "mean_ms", "max_ms", "cpu_ms", "peak_mb"):
            if field_name in ("cpu_ms", "peak_mb") and not getattr(game, field_name):
                continue
            if len(getattr(game, field_name)) != n:
                raise ValueError(f"game {game.id}: {field_name} has {len(getattr(game, field_name))} entries for {n} seats")
        row = (
            game.id, game.status, game.set_id, game.seed, game.players, game.variant, game.rules,
            json.dumps(dict(game.time_settings), sort_keys=True), round(game.duration_s, 4), _now(),
            game.replay, game.void_reason,
        )
        with self._tx():
            # The usual case, a new game, in one statement; an existing row is looked at.
            if self._conn.execute(_INSERT_GAME.replace("INSERT", "INSERT OR IGNORE", 1), row).rowcount == 0:
                old = self._conn.execute("SELECT status FROM games WHERE id = ?", (game.id,)).fetchone()
                if old[0] == "complete":
                    if tournament_id is not None:
                        self._conn.execute(
                            "INSERT OR IGNORE INTO tournament_games (tournament_id, game_id) VALUES (?, ?)",
                            (tournament_id, game.id),
                        )
                    return False
                self._conn.execute("DELETE FROM games WHERE id = ?", (game.id,))  # a void game, played again
                self._conn.execute(_INSERT_GAME, row)
            self._conn.executemany(
                "INSERT INTO game_seats (game_id, seat, bot_id, points, puddings, rank, autopilot, faults, mean_ms, max_ms, "
                "cpu_ms, peak_mb) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        game.id, s, game.bot_ids[s], game.points[s], game.puddings[s], game.ranks[s],
                        int(game.autopilot[s]), _faults_json(game.faults[s]),
                        game.mean_ms[s], game.max_ms[s],
                        game.cpu_ms[s] if game.cpu_ms else None, game.peak_mb[s] if game.peak_mb else None,
                    )
                    for s in range(n)
                ],
            )
            if tournament_id is not None:
                self._conn.execute(
                    "INSERT OR IGNORE INTO tournament_games (tournament_id, game_id) VALUES (?, ?)",
                    (tournament_id, game.id),
                )
        return True

    def games(
        self,
        tournament_id: str | None = None,
        *,
        status: str | None = "complete",
        bot: str | None = None,
        players: int | None = None,
        variant: str | None = None,
    ) -> list[GameRow]:
        """Games, oldest first: of one tournament (or all), optionally only those where
        a bot of that name sat, of one format."""
        where, args = [], []
        if tournament_id is not None:
            where.append("g.id IN (SELECT game_id FROM tournament_games WHERE tournament_id = ?)")
            args.append(tournament_id)
        if status is not None:
            where.append("g.status = ?")
            args.append(status)
        if players is not None:
            where.append("g.players = ?")
            args.append(players)
        if variant is not None:
            where.append("g.variant = ?")
            args.append(variant)
        if bot is not None:
            where.append(
                "g.id IN (SELECT s.game_id FROM game_seats s JOIN bots b ON b.id = s.bot_id WHERE b.name = ? OR "
                "b.name || '@' || substr(b.hash, 1, 8) = ?)"
            )
            args += [bot, bot]
        filters = (" WHERE " + " AND ".join(where)) if where else ""
        heads = self._conn.execute(
            "SELECT g.id, g.status, g.set_id, g.seed, g.players, g.variant, g.duration_s, g.finished, g.replay, "
            "g.void_reason FROM games g" + filters + " ORDER BY g.rowid",
            args,
        ).fetchall()
        bots = self.bots()
        seats: dict[str, list[SeatRow]] = {}
        # The same filters, once more, for the seats of exactly those games.
        for game_id, seat, bot_id, points, puddings, rank, autopilot, faults, mean_ms, max_ms, cpu_ms, peak_mb in (
            self._conn.execute(
                "SELECT s.game_id, s.seat, s.bot_id, s.points, s.puddings, s.rank, s.autopilot, s.faults, s.mean_ms, "
                "s.max_ms, s.cpu_ms, s.peak_mb FROM game_seats s JOIN games g ON g.id = s.game_id" + filters
                + " ORDER BY s.game_id, s.seat",
                args,
            )
        ):
            seats.setdefault(game_id, []).append(
                SeatRow(
                    seat, bots[bot_id], points, puddings, rank, bool(autopilot), json.loads(faults), mean_ms, max_ms,
                    cpu_ms, peak_mb,
                )
            )
        return [GameRow(*h, seats=tuple(seats.get(h[0], ()))) for h in heads]

    def count_games(self, tournament_id: str | None = None) -> int:
        if tournament_id is None:
            return self._conn.execute("SELECT count(*) FROM games WHERE status = 'complete'").fetchone()[0]
        return self._conn.execute(
            "SELECT count(*) FROM games g JOIN tournament_games t ON t.game_id = g.id "
            "WHERE t.tournament_id = ? AND g.status = 'complete'",
            (tournament_id,),
        ).fetchone()[0]

    # -- the deal key -------------------------------------------------------------------

    def deal_key(self) -> bytes:
        """The store's secret deal key (32 random bytes), made on first use and kept in the
        ``meta`` table: every deal seed, set id, card labelling and bot seed of the games
        recorded here is keyed with it, so that no bot can compute a deal from the
        tournament's seed. The same store and seed give the same games."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'deal_key'").fetchone()
        if row is None:
            with self._tx():  # another process may make it at the same time: the first one wins
                self._conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('deal_key', ?)", (secrets.token_hex(DEAL_KEY_BYTES),)
                )
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'deal_key'").fetchone()
        return parse_deal_key(row[0], f"{self.path}: meta deal_key")

    def import_deal_key(self, key_hex: str) -> bytes:
        """Make ``key_hex`` (what ``arena store key export`` printed) this store's deal key,
        so that its runs play the very games of the store it was exported from. Only into a
        store that holds no game yet: the games already here were dealt with its own key."""
        key = parse_deal_key(key_hex, "the key to import")
        with self._tx():
            games = self._conn.execute("SELECT count(*) FROM games").fetchone()[0]
            if games:
                raise StoreError(
                    f"{self.path}: holds {games} game(s) dealt with its own key; a key can be imported only into a "
                    "results folder with no games yet (a fresh one)"
                )
            self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('deal_key', ?)", (key.hex(),))
        return key

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


DEAL_KEY_BYTES = 32


def parse_deal_key(text: str, what: str) -> bytes:
    """A deal key from its 64 hex digits; :class:`StoreError` naming ``what`` otherwise."""
    value = text.strip().lower() if isinstance(text, str) else ""
    if len(value) != 2 * DEAL_KEY_BYTES or any(c not in "0123456789abcdef" for c in value):
        raise StoreError(f"{what}: a deal key is {2 * DEAL_KEY_BYTES} hex digits (as `arena store key export` prints)")
    return bytes.fromhex(value)


def read_deal_key(root: Path) -> bytes | None:
    """The deal key of the store in folder ``root`` if there is one, read without changing
    anything (None: no store there, or it has no key yet)."""
    path = root / DB_NAME
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'deal_key'").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: cannot read its deal key: {exc}") from None
    return None if row is None else parse_deal_key(row[0], f"{path}: meta deal_key")


def open_store(root: Path, *, create: bool = True) -> Store:
    """Open (or, with ``create``, make) the results store in folder ``root``. A file that
    is not an arena database, or one made by a newer arena, is an error naming it;
    nothing in it is changed then."""
    path = root / DB_NAME
    if root.exists() and not root.is_dir():
        raise StoreError(f"{root}: results location is a file, not a folder")
    if not path.exists():
        if not create:
            raise StoreError(f"{path}: no results database here (run `arena run` first, or pass the results folder)")
        root.mkdir(parents=True, exist_ok=True)
    elif path.is_dir():
        raise StoreError(f"{path}: is a folder, not a results database")
    else:
        with path.open("rb") as f:
            head = f.read(16)
        if head and head != b"SQLite format 3\x00":
            raise StoreError(f"{path}: not an SQLite database (refusing to touch it)")
    try:
        # Autocommit mode: every write goes through an explicit BEGIN IMMEDIATE ...
        # COMMIT (see _transaction), so that each game and each migration is atomic.
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        _migrate(conn, path)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: cannot use this database: {exc}") from None
    return Store(root, conn)


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        version = 0
    elif "meta" not in tables:
        raise StoreError(f"{path}: an SQLite database, but not an arena results database (tables: {', '.join(sorted(tables))})")
    else:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("application") != APPLICATION:
            raise StoreError(f"{path}: an SQLite database of another application ({meta.get('application')!r})")
        version = int(meta.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{path}: made by a newer arena (schema {version}; this arena knows up to {SCHEMA_VERSION}): upgrade the arena"
            )
    if version == SCHEMA_VERSION:
        return
    with _transaction(conn):
        for step in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[step].split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('application', ?)", (APPLICATION,))
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
