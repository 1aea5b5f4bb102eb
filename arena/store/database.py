"""The results store: one SQLite database plus one replay file per game.

Layout of a results folder (``results/`` by default)::

    arena.db                      the database (WAL mode)
    replays/ab/ab12cd34ef567890.json.gz
    build/                        build caches of bots with a build step
    leaderboard.json, leaderboard.md   written at the end of every run

A game is recorded in two steps, in this order: its replay is written to a temporary
name and renamed (see :func:`arena.game.replay.write_replay`), then one transaction inserts
the game. A crash between the two leaves an unreferenced replay file that the next run
simply overwrites; a crash never leaves a game row without its replay, and a finished
game is recorded once (its id is the primary key).

One writer per results folder: every command that writes it holds
:func:`~arena.store.lock.results_lock` (an OS lock on ``arena.lock``, released by the OS
when its holder dies), and a second one waits for it, saying who holds it. Within the
holder, the store is written by one connection at a time (the tournament's single writer,
which inherits the lock and so keeps it until its last game is recorded); readers (``arena
leaderboard`` while a run goes on) take no lock and may open the store concurrently.

Every open (:func:`~arena.store.opening.open_store`) checks the database (``PRAGMA
quick_check``, :mod:`arena.store.schema`) unless the file is exactly as an arena left it
after a clean close (its seal, :mod:`arena.store.opening`); a damaged one is an error naming the file and
the way back: :func:`arena.store.rebuild.rebuild_store` (``arena store rebuild``) makes a
new database from the replay files, which hold every game.
"""

from __future__ import annotations

import contextlib
import functools
import json
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from arena.game.replay import PLAIN_NAME_RULE, is_plain_name
from arena.store.errors import StoreError, database_error, os_error_text, rebuild_hint
from arena.store.schema import write_transaction

DB_NAME = "arena.db"


_F = TypeVar("_F", bound=Callable[..., Any])


def _guarded(method: _F) -> _F:
    """A :class:`Store` method whose SQLite errors become one :class:`StoreError` naming
    the file (a damage found only by a query, past the check at open, included).
    Integrity and programming errors stay what they are: they are the arena's bugs."""

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.InterfaceError):
            raise
        except sqlite3.DatabaseError as exc:
            self.suspect = True
            raise database_error(self.path, exc) from None

    return wrapper  # type: ignore[return-value]


def _reading(method: _F) -> _F:
    """:func:`_guarded`, for a method that decodes what it reads (JSON, row shapes, bot
    ids): a value no arena wrote is damage too (SQLite's check does not see inside records)."""
    guarded = _guarded(method)

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return guarded(self, *args, **kwargs)
        except (ValueError, KeyError, TypeError) as exc:
            self.suspect = True
            raise StoreError(
                f"{self.path}: the database is damaged (it holds a value no arena wrote: {type(exc).__name__}: {exc}); "
                f"{rebuild_hint(self.root)}"
            ) from None

    return wrapper  # type: ignore[return-value]


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
        raise StoreError(f"{base}: cannot create the replay folders: {os_error_text(exc)}") from None


def replay_relpath(game_id: str) -> str:
    """Where a game's replay is kept, relative to the results folder; its id must be a
    plain name (one path component, no ``..``)."""
    if not is_plain_name(game_id):
        raise StoreError(f"game id {game_id!r:.60} is not a plain name ({PLAIN_NAME_RULE}): no path is made of it")
    return f"replays/{game_id[:2]}/{game_id}.json.gz"


class Store:
    """A results folder's database. Open with :func:`open_store`; close with :meth:`close`.

    ``after_close`` runs once the connection is closed (the seal of a store closed cleanly,
    :mod:`arena.store.opening`), unless the store was found damaged meanwhile (:attr:`suspect`:
    an SQLite error, or a value no arena wrote)."""

    def __init__(self, root: Path, conn: sqlite3.Connection, *, after_close: Callable[[], None] | None = None) -> None:
        self.root = root
        self.path = root / DB_NAME
        self._conn = conn
        self._in_batch = False
        self._after_close = after_close
        self.suspect = False

    def _tx(self) -> contextlib.AbstractContextManager[None]:
        if self._in_batch:
            return contextlib.nullcontext()  # already inside batch()'s transaction
        return write_transaction(self._conn)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction around several writes (e.g. the games that finished while the
        writer was busy: a group commit); all of them are recorded, or none."""
        if self._in_batch:
            yield
            return
        try:
            with write_transaction(self._conn):
                self._in_batch = True
                try:
                    yield
                finally:
                    self._in_batch = False
        except (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.InterfaceError):
            raise
        except sqlite3.DatabaseError as exc:
            self.suspect = True
            raise database_error(self.path, exc) from None

    # -- bots and tournaments ---------------------------------------------------------

    @_guarded
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

    @_reading
    def bots(self) -> dict[int, BotRow]:
        return {r[0]: BotRow(*r) for r in self._conn.execute("SELECT id, name, version, hash, path FROM bots")}

    @_guarded
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

    @_reading
    def get_tournament(self, tournament_id: str) -> TournamentRow | None:
        row = self._conn.execute(
            "SELECT id, created, updated, players, variant, config FROM tournaments WHERE id = ?", (tournament_id,)
        ).fetchone()
        return None if row is None else TournamentRow(*row[:5], json.loads(row[5]))

    @_reading
    def tournaments(self) -> list[TournamentRow]:
        rows = self._conn.execute(
            "SELECT id, created, updated, players, variant, config FROM tournaments ORDER BY updated, id"
        ).fetchall()
        return [TournamentRow(*r[:5], json.loads(r[5])) for r in rows]

    def latest_tournament(self) -> TournamentRow | None:
        ts = self.tournaments()
        return ts[-1] if ts else None

    @_guarded
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

    @_reading
    def entrant_ids(self, tournament_id: str) -> set[int]:
        """The bot versions (bot ids) that took part in the latest run of this tournament."""
        rows = self._conn.execute(
            "SELECT bot_id FROM tournament_bots WHERE tournament_id = ? AND status = 'ok'", (tournament_id,)
        )
        return {r[0] for r in rows}

    @_reading
    def entrants(self, tournament_id: str) -> list[dict[str, str]]:
        """The bots that took part in the latest run of this tournament: name and path."""
        rows = self._conn.execute(
            "SELECT name, path FROM tournament_bots WHERE tournament_id = ? AND status = 'ok' ORDER BY name",
            (tournament_id,),
        )
        return [{"bot": n, "path": p} for n, p in rows]

    @_reading
    def skipped(self, tournament_id: str) -> list[dict[str, str]]:
        rows = self._conn.execute(
            "SELECT name, path, reason FROM tournament_bots WHERE tournament_id = ? AND status = 'skipped' ORDER BY name",
            (tournament_id,),
        )
        return [{"bot": n, "path": p, "reason": r} for n, p, r in rows]

    @_guarded
    def restore_tournament(self, row: TournamentRow) -> None:
        """Put back a tournament as it was (created, updated, settings): for a rebuild."""
        with self._tx():
            self._conn.execute(
                "INSERT OR REPLACE INTO tournaments (id, created, updated, players, variant, config) VALUES (?, ?, ?, ?, ?, ?)",
                (row.id, row.created, row.updated, row.players, row.variant, json.dumps(row.config, sort_keys=True)),
            )

    @_reading
    def meta_items(self) -> dict[str, str]:
        """The store's own settings (the meta table) but the arena's bookkeeping of it."""
        rows = self._conn.execute("SELECT key, value FROM meta WHERE key NOT IN ('application', 'schema_version')")
        return dict(rows.fetchall())

    @_guarded
    def restore_meta(self, items: Mapping[str, str]) -> None:
        """Put back settings of the meta table (a rebuild keeps the old store's)."""
        with self._tx():
            self._conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(k, v) for k, v in items.items() if k not in ("application", "schema_version")],
            )

    # -- games ------------------------------------------------------------------------

    @_guarded
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

    @_guarded
    def link_games(self, tournament_id: str, game_ids: Iterable[str], set_ids: Mapping[str, str] | None = None) -> None:
        """Count already-played games (from an earlier run, or another tournament with
        the same settings) in this tournament too. ``set_ids``: the duplicate set of each
        game as the schedule has it, put in where the row holds another (a store rebuilt
        without its deal key could only guess which games shared a deal)."""
        with self._tx():
            self._conn.executemany(
                "INSERT OR IGNORE INTO tournament_games (tournament_id, game_id) VALUES (?, ?)",
                [(tournament_id, g) for g in game_ids],
            )
            if set_ids:
                self._conn.executemany(
                    "UPDATE games SET set_id = ?1 WHERE id = ?2 AND set_id != ?1", [(s, g) for g, s in set_ids.items()]
                )

    @_reading
    def seat_names(self, game_ids: Iterable[str]) -> dict[str, list[str]]:
        """The bot names of these games' seats, in seat order."""
        wanted = list(game_ids)
        out: dict[str, list[str]] = {}
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            rows = self._conn.execute(
                f"SELECT s.game_id, b.name FROM game_seats s JOIN bots b ON b.id = s.bot_id "
                f"WHERE s.game_id IN ({','.join('?' * len(chunk))}) ORDER BY s.game_id, s.seat",
                chunk,
            )
            for gid, name in rows:
                out.setdefault(gid, []).append(name)
        return out

    @_guarded
    def is_complete(self, game_id: str) -> bool:
        """Whether a complete game of this id is recorded."""
        row = self._conn.execute("SELECT 1 FROM games WHERE id = ? AND status = 'complete'", (game_id,)).fetchone()
        return row is not None

    @_guarded
    def add_game(self, game: NewGame, tournament_id: str | None = None, *, finished: str | None = None) -> bool:
        """Record a finished game in one transaction; returns False if a complete game
        with this id was already there (it is then left untouched). A void game is
        kept for the record and replaced when the game is played again. ``finished``:
        when it ended (default: now), for a game recorded again by a rebuild."""
        n = len(game.bot_ids)
        for field_name in ("points", "puddings", "ranks", "autopilot", "faults", "mean_ms", "max_ms", "cpu_ms", "peak_mb"):
            if field_name in ("cpu_ms", "peak_mb") and not getattr(game, field_name):
                continue
            if len(getattr(game, field_name)) != n:
                raise ValueError(f"game {game.id}: {field_name} has {len(getattr(game, field_name))} entries for {n} seats")
        row = (
            game.id, game.status, game.set_id, game.seed, game.players, game.variant, game.rules,
            json.dumps(dict(game.time_settings), sort_keys=True), round(game.duration_s, 4), finished or _now(),
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

    @_reading
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

    # -- what a report reads to update itself (cheap figures, then only the games after a row) --

    @_reading
    def report_marks(self, tournament_id: str, upto: int | None = None) -> tuple[int, int, str, list[tuple[int, str]]]:
        """What tells a report of a tournament whether the store changed since it was made,
        without reading the games: how many games the tournament lists, the store's last
        game row (its rowid and game id: a store made again from its replays numbers them
        anew) and every game row that is not complete (``(rowid, id)``, oldest first; of any
        tournament, those up to ``upto`` if given). Index and table scans only, no join."""
        linked = self._conn.execute(
            "SELECT count(*) FROM tournament_games WHERE tournament_id = ?", (tournament_id,)
        ).fetchone()[0]
        last = self._conn.execute("SELECT rowid, id FROM games ORDER BY rowid DESC LIMIT 1").fetchone()
        bound = "" if upto is None else " AND rowid <= ?"
        others = self._conn.execute(
            "SELECT rowid, id FROM games WHERE status != 'complete'" + bound + " ORDER BY rowid",
            () if upto is None else (upto,),
        ).fetchall()
        return linked, last[0] if last else 0, last[1] if last else "", [(r, i) for r, i in others]

    @_reading
    def game_id_at(self, rowid: int) -> str | None:
        """The id of the game in row ``rowid``, None if there is no such row."""
        row = self._conn.execute("SELECT id FROM games WHERE rowid = ?", (rowid,)).fetchone()
        return None if row is None else row[0]

    @_reading
    def seats_of_bots(self, bot_ids: Iterable[int], upto: int) -> int:
        """How many seats of the game rows up to ``upto`` these bot versions hold (any tournament)."""
        wanted = sorted(set(bot_ids))
        total = 0
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            total += self._conn.execute(
                f"SELECT count(*) FROM game_seats s JOIN games g ON g.id = s.game_id "
                f"WHERE s.bot_id IN ({','.join('?' * len(chunk))}) AND g.rowid <= ?",
                [*chunk, upto],
            ).fetchone()[0]
        return total

    @_reading
    def games_after(self, tournament_id: str, rowid: int) -> list[tuple[int, GameRow]]:
        """The tournament's games (every status) in rows after ``rowid``, oldest first, each
        with its rowid: what a report that saw the rows up to ``rowid`` has not read yet
        (as :meth:`games` reads them, from a range of rows instead of the whole table)."""
        member = "g.rowid > ? AND g.id IN (SELECT game_id FROM tournament_games WHERE tournament_id = ?)"
        heads = self._conn.execute(
            "SELECT g.rowid, g.id, g.status, g.set_id, g.seed, g.players, g.variant, g.duration_s, g.finished, "
            "g.replay, g.void_reason FROM games g WHERE " + member + " ORDER BY g.rowid",
            (rowid, tournament_id),
        ).fetchall()
        if not heads:
            return []
        bots = self.bots()
        seats: dict[str, list[SeatRow]] = {}
        for game_id, seat, bot_id, points, puddings, rank, autopilot, faults, mean_ms, max_ms, cpu_ms, peak_mb in (
            self._conn.execute(
                # (games first: the range of rows, then each one's seats by the seats' key)
                "SELECT s.game_id, s.seat, s.bot_id, s.points, s.puddings, s.rank, s.autopilot, s.faults, s.mean_ms, "
                "s.max_ms, s.cpu_ms, s.peak_mb FROM games g CROSS JOIN game_seats s ON s.game_id = g.id WHERE " + member
                + " ORDER BY g.rowid, s.seat",
                (rowid, tournament_id),
            )
        ):
            seats.setdefault(game_id, []).append(
                SeatRow(
                    seat, bots[bot_id], points, puddings, rank, bool(autopilot), json.loads(faults), mean_ms, max_ms,
                    cpu_ms, peak_mb,
                )
            )
        return [(h[0], GameRow(*h[1:], seats=tuple(seats.get(h[1], ())))) for h in heads]

    @_reading
    def count_games(self, tournament_id: str | None = None) -> int:
        if tournament_id is None:
            return self._conn.execute("SELECT count(*) FROM games WHERE status = 'complete'").fetchone()[0]
        return self._conn.execute(
            "SELECT count(*) FROM games g JOIN tournament_games t ON t.game_id = g.id "
            "WHERE t.tournament_id = ? AND g.status = 'complete'",
            (tournament_id,),
        ).fetchone()[0]

    # -- what a leaderboard reads, lean, and the standings it came to ---------------------

    @_reading
    def rated_columns(
        self, tournament_id: str | None, *, players: int, variant: str
    ) -> tuple[tuple[tuple[Any, ...], ...], list[tuple[int, dict[str, int]]]]:
        """What a leaderboard reads of the complete games of one format (of one tournament, or
        all), as columns with one entry per seat, games oldest first (as :meth:`games`), seats
        in seat order: ``(set id on a game's first seat and None on its others, bot id, rank,
        points, autopilot 0/1, cpu_ms, peak_mb)``; and ``(seat number, fault counts)`` for the
        seats that have a fault. One query, and no object per seat beyond its row: no game id,
        no dict of faults for a seat without one."""
        where = ["g.status = 'complete'", "g.players = ?", "g.variant = ?"]
        args: list[Any] = [players, variant]
        if tournament_id is not None:
            # "+g.id": scan the games in rowid order (no sort) and look each one up in the list.
            where.append("+g.id IN (SELECT game_id FROM tournament_games WHERE tournament_id = ?)")
            args.append(tournament_id)
        rows = self._conn.execute(
            "SELECT CASE WHEN s.seat = 0 THEN g.set_id END, s.bot_id, s.rank, s.points, s.autopilot, s.cpu_ms, s.peak_mb, "
            "NULLIF(s.faults, '{}') FROM games g JOIN game_seats s ON s.game_id = g.id WHERE " + " AND ".join(where)
            + " ORDER BY g.rowid, s.seat",
            args,
        ).fetchall()
        if not rows:
            return ((),) * 7, []
        if rows[0][0] is None:
            raise ValueError("a game's seats do not start at seat 0")
        from itertools import compress

        columns = tuple(zip(*rows))
        faults = []
        for number in compress(range(len(rows)), columns[7]):  # the few seats with a fault
            counts = json.loads(columns[7][number])
            if not (isinstance(counts, dict) and all(isinstance(k, str) and type(v) is int for k, v in counts.items())):
                raise ValueError(f"fault counts {columns[7][number][:80]!r} are not counts by kind")
            faults.append((number, counts))
        return columns[:7], faults

    @_guarded
    def standings_key(self, tournament_id: str | None) -> tuple[int, int, int]:
        """What a leaderboard's games depend on, in three numbers read from indexes: the games
        of the tournament (of the store, for None), the largest rowid among their links (their
        rows), and how many times a game, a seat or a link was changed or removed (counted by
        triggers: a game voided, its set id mended, a void game replaced). A new game, a game
        newly linked, and any such change give another key."""
        if tournament_id is None:
            games, last = self._conn.execute("SELECT count(*), ifnull(max(rowid), 0) FROM games").fetchone()
        else:
            games, last = self._conn.execute(
                "SELECT count(*), ifnull(max(rowid), 0) FROM tournament_games WHERE tournament_id = ?", (tournament_id,)
            ).fetchone()
        changes = self._conn.execute("SELECT count FROM results_changes WHERE id = 1").fetchone()
        return games, last, changes[0] if changes else 0

    @_guarded
    def cached_standings(self, tournament_id: str | None, options: str, key: tuple[int, int, int], limit: int) -> bytes | None:
        """The standings document stored for this tournament (``None``: every game of a format),
        options digest and :meth:`standings_key`, if there is one of at most ``limit`` bytes."""
        row = self._conn.execute(
            "SELECT length(document) FROM standings_cache WHERE tournament_id = ? AND options = ? AND games = ? "
            "AND last_rowid = ? AND changes = ?",
            (tournament_id or "", options, *key),
        ).fetchone()
        if row is None or not isinstance(row[0], int) or row[0] > limit:
            return None
        found = self._conn.execute(
            "SELECT document FROM standings_cache WHERE tournament_id = ? AND options = ?", (tournament_id or "", options)
        ).fetchone()
        return found[0] if found is not None and isinstance(found[0], bytes) else None

    @_guarded
    def cache_standings(self, tournament_id: str | None, options: str, key: tuple[int, int, int], document: bytes) -> bool:
        """Keep a standings document for :meth:`cached_standings`, dropping the tournament's
        documents of other keys (they can match no more). Nothing is written to a store opened
        read-only, or when the file cannot be written now (busy, full, read-only): False then;
        the document is only a cache."""
        if self._conn.execute("PRAGMA query_only").fetchone()[0]:
            return False
        scope = tournament_id or ""
        try:
            with self._tx():
                self._conn.execute(
                    "DELETE FROM standings_cache WHERE tournament_id = ? AND (games, last_rowid, changes) != (?, ?, ?)",
                    (scope, *key),
                )
                self._conn.execute(
                    "INSERT OR REPLACE INTO standings_cache (tournament_id, options, games, last_rowid, changes, document) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (scope, options, *key, document),
                )
        except sqlite3.OperationalError:
            return False
        return True

    @_reading
    def seat_outcomes(self, game_ids: Iterable[str]) -> dict[str, tuple[tuple[int, ...], tuple[bool, ...]]]:
        """The ranks and autopilot flags of these games' seats, in seat order, by game id
        (what a match's pairs are scored from); games with no seat row are left out."""
        wanted = list(game_ids)
        seats: dict[str, tuple[list[int], list[bool]]] = {}
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            rows = self._conn.execute(
                f"SELECT game_id, rank, autopilot FROM game_seats WHERE game_id IN ({','.join('?' * len(chunk))}) "
                "ORDER BY game_id, seat",
                chunk,
            )
            for gid, rank, autopilot in rows:
                ranks, auto = seats.setdefault(gid, ([], []))
                ranks.append(int(rank))
                auto.append(bool(autopilot))
        return {gid: (tuple(ranks), tuple(auto)) for gid, (ranks, auto) in seats.items()}

    # -- the deal key -------------------------------------------------------------------

    @_reading
    def stored_deal_key(self) -> bytes | None:
        """The store's deal key if it has one yet (nothing is written)."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'deal_key'").fetchone()
        return None if row is None else parse_deal_key(row[0], f"{self.path}: meta deal_key")

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
        store that holds no game yet (the games already here were dealt with its own key),
        or one that has no key of its own: a store rebuilt from its replays after the old
        one's key was lost, whose games come back to their tournament with the key."""
        key = parse_deal_key(key_hex, "the key to import")
        with self._tx():
            games = self._conn.execute("SELECT count(*) FROM games").fetchone()[0]
            own = self._conn.execute("SELECT value FROM meta WHERE key = 'deal_key'").fetchone()
            if games and own is not None and own[0] != key.hex():
                raise StoreError(
                    f"{self.path}: holds {games} game(s) dealt with its own key; a key can be imported only into a "
                    "results folder with no games yet (a fresh one)"
                )
            self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('deal_key', ?)", (key.hex(),))
        return key

    # -- a run's bookkeeping of a schedule (arena.tournament.runner) -----------------------

    @_reading
    def find_bots(self, identities: Iterable[tuple[str, str]]) -> dict[tuple[str, str], BotRow]:
        """The rows of these bot versions ``(name, content hash)`` that are known, read only
        (:meth:`bot` adds one on first sight)."""
        wanted = set(identities)
        rows = self._conn.execute("SELECT id, name, version, hash, path FROM bots").fetchall() if wanted else []
        found = (BotRow(*r) for r in rows)
        return {(b.name, b.hash): b for b in found if (b.name, b.hash) in wanted}

    @_guarded
    def possible_games(self, *, players: int, variant: str, rules: str, time_settings: str, bot_ids: Iterable[int]) -> int:
        """How many complete games of this format, rules and time settings (as recorded:
        JSON with sorted keys) sat only these bots: at least as many as a schedule among
        them finds in the store, so that a run that has found that many looks no further."""
        ids = sorted(set(bot_ids))
        if not ids:
            return 0
        marks = ",".join("?" * len(ids))
        return self._conn.execute(
            "SELECT count(*) FROM games g WHERE g.status = 'complete' AND g.players = ? AND g.variant = ? "
            "AND g.rules = ? AND g.time_settings = ? AND NOT EXISTS (SELECT 1 FROM game_seats s "
            f"WHERE s.game_id = g.id AND s.bot_id NOT IN ({marks}))",
            [players, variant, rules, time_settings, *ids],
        ).fetchone()[0]

    @_guarded
    def tournament_games_among(self, tournament_id: str, bot_ids: Iterable[int]) -> int:
        """How many complete games of this tournament sat only these bots."""
        ids = sorted(set(bot_ids))
        if not ids:
            return 0
        marks = ",".join("?" * len(ids))
        return self._conn.execute(
            "SELECT count(*) FROM tournament_games t JOIN games g ON g.id = t.game_id WHERE t.tournament_id = ? "
            "AND g.status = 'complete' AND NOT EXISTS (SELECT 1 FROM game_seats s "
            f"WHERE s.game_id = g.id AND s.bot_id NOT IN ({marks}))",
            [tournament_id, *ids],
        ).fetchone()[0]

    @_reading
    def schedule_played(self, tournament_id: str) -> tuple[str, int, int | None] | None:
        """What :meth:`mark_schedule_played` recorded of this tournament: ``(identity, games,
        linked)`` (``linked`` None: not counted yet), or None."""
        row = self._conn.execute(
            "SELECT identity, games, linked FROM schedules_played WHERE tournament_id = ?", (tournament_id,)
        ).fetchone()
        if row is None:
            return None
        identity, games, linked = row
        if not isinstance(identity, str) or not isinstance(games, int) or not isinstance(linked, int | None):
            raise ValueError(f"schedules_played row of {tournament_id!r}: {row!r}")
        return identity, games, linked

    @_guarded
    def mark_schedule_played(self, tournament_id: str, identity: str, games: int, *, counted: bool) -> None:
        """Record that a run found or played every one of the ``games`` games of the
        tournament's schedule, as ``identity`` names it (its settings and bots). A claim to
        check before it is trusted: with ``counted`` (every game is committed now), with the
        number of games linked to the tournament now, which any game lost since lowers
        (:meth:`linked_games`); without (the writer has games to commit yet), with none, and
        the next run counts the games themselves (:meth:`tournament_games_among`), then
        :meth:`count_schedule_played`."""
        with self._tx():
            linked = self.linked_games(tournament_id) if counted else None
            self._conn.execute(
                "INSERT OR REPLACE INTO schedules_played (tournament_id, identity, games, linked, recorded) "
                "VALUES (?, ?, ?, ?, ?)",
                (tournament_id, identity, games, linked, _now()),
            )

    @_guarded
    def count_schedule_played(self, tournament_id: str) -> None:
        """Put the number of games linked to the tournament now in its record (its games
        were just counted and found complete)."""
        with self._tx():
            self._conn.execute(
                "UPDATE schedules_played SET linked = ? WHERE tournament_id = ?",
                (self.linked_games(tournament_id), tournament_id),
            )

    @_guarded
    def linked_games(self, tournament_id: str) -> int:
        """How many games (of any status) are linked to the tournament: read from its index
        alone. A game deleted takes its link with it."""
        return self._conn.execute(
            "SELECT count(*) FROM tournament_games WHERE tournament_id = ?", (tournament_id,)
        ).fetchone()[0]

    @_guarded
    def forget_schedule_played(self, tournament_id: str) -> None:
        """Drop what :meth:`mark_schedule_played` recorded: a run that may change the
        tournament's games starts."""
        with self._tx():
            self._conn.execute("DELETE FROM schedules_played WHERE tournament_id = ?", (tournament_id,))

    # -- what a web server reads between its kept figures (one game, the latest row) --------

    @_guarded
    def last_rowid(self) -> int:
        """The rowid of the latest game row (0: none)."""
        return self._conn.execute("SELECT ifnull(max(rowid), 0) FROM games").fetchone()[0]

    @_reading
    def game(self, game_id: str) -> tuple[GameRow, list[str]] | None:
        """One game by its id (any status) and the tournaments that list it, or None."""
        head = self._conn.execute(
            "SELECT id, status, set_id, seed, players, variant, duration_s, finished, replay, void_reason "
            "FROM games WHERE id = ?",
            (game_id,),
        ).fetchone()
        if head is None:
            return None
        bots = self.bots()
        seats = tuple(
            SeatRow(
                seat, bots[bot_id], points, puddings, rank, bool(autopilot), json.loads(faults), mean_ms, max_ms,
                cpu_ms, peak_mb,
            )
            for seat, bot_id, points, puddings, rank, autopilot, faults, mean_ms, max_ms, cpu_ms, peak_mb in self._conn.execute(
                "SELECT seat, bot_id, points, puddings, rank, autopilot, faults, mean_ms, max_ms, cpu_ms, peak_mb "
                "FROM game_seats WHERE game_id = ? ORDER BY seat",
                (game_id,),
            )
        )
        tournaments = [
            r[0] for r in self._conn.execute(
                "SELECT tournament_id FROM tournament_games WHERE game_id = ? ORDER BY tournament_id", (game_id,)
            )
        ]
        return GameRow(*head, seats=seats), tournaments

    def close(self) -> None:
        self._conn.close()
        after, self._after_close = self._after_close, None
        if after is not None and not self.suspect:
            after()

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
