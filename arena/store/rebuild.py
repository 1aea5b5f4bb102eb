"""``arena store rebuild``: a results folder's database made again from its replay files.

The replay files hold every game (seed, seats, every play, the result, timings and the
bots' usage), so a damaged ``arena.db`` loses nothing a game needs. What only the
database holds is read from the old file as far as it can be read, table by table,
from both ends of each table (so that one damaged page costs the rows on it, not the
rest): the store's settings (the meta table, e.g. a deal key), the tournaments with
their settings and entrants, which games belong to which tournament, each game's
duplicate set and finishing time, the bots' paths.

Every replay file is read with :func:`arena.game.replay.read_replay` and re-simulated with
:func:`arena.game.verify.verify_replay`; one that fails either, or that is not at the path
of its game id, is reported and left out (the next run plays that game again). The new
database is made in a folder of its own inside the results folder, then the old one is
moved aside (renamed, never deleted, with its ``-wal`` file if any) and the new one put
in its place. The whole rebuild holds the results folder's lock.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.store.database import (
    DB_NAME,
    BotRow,
    NewGame,
    TournamentRow,
    parse_deal_key,
    replay_relpath,
)
from arena.store.errors import StoreError
from arena.store.lock import results_lock
from arena.store.opening import open_store

#: The rows read from the old database: table -> its columns (rowid first).
_SALVAGED: dict[str, str] = {
    "meta": "key, value",
    "bots": "id, name, version, hash, path",
    "tournaments": "id, created, updated, players, variant, config",
    "tournament_bots": "tournament_id, name, bot_id, status, reason, path",
    "tournament_games": "tournament_id, game_id",
    "games": "id, set_id, finished, duration_s",
}


@dataclass(slots=True)
class RebuildReport:
    """What a rebuild did and what it could not recover."""

    root: Path
    moved_to: Path | None = None  # where the old database went (None: there was none)
    old_damaged: bool = False  # the old database failed its check
    games: int = 0  # complete games recorded from their replays
    not_recovered: list[tuple[str, str]] = field(default_factory=list)  # replay file, why
    void: int = 0  # replays of void games (not recorded: the next run plays them again)
    lost: list[str] = field(default_factory=list)  # games of the old database without a usable replay
    unlinked: int = 0  # games recorded without a tournament (its row in the old database is lost)
    guessed_sets: int = 0  # games whose duplicate set had to be derived from the deal alone
    tournaments: int = 0
    unreadable_tables: list[str] = field(default_factory=list)  # old tables read in part or not at all
    kept_meta: list[str] = field(default_factory=list)  # the old store's settings kept (e.g. its deal key)
    meta_lost: bool = False  # the old meta table could not be read
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": str(self.root),
            "moved_to": str(self.moved_to) if self.moved_to else None,
            "old_damaged": self.old_damaged,
            "games": self.games,
            "tournaments": self.tournaments,
            "not_recovered": [{"file": f, "reason": r} for f, r in self.not_recovered],
            "void": self.void,
            "lost": self.lost,
            "unlinked": self.unlinked,
            "guessed_sets": self.guessed_sets,
            "unreadable_tables": self.unreadable_tables,
            "kept_meta": self.kept_meta,
            "meta_lost": self.meta_lost,
            "seconds": round(self.seconds, 3),
        }


def rebuild_store(root: Path, *, on_wait: Callable[[str], None] | None = None) -> RebuildReport:
    """Make ``root``'s database again from its replay files (see the module's docstring).
    ``on_wait`` as for :func:`arena.store.lock.results_lock`. Each replay is read and checked
    once, one at a time; what is kept of it is its row."""
    if not root.is_dir():
        raise StoreError(f"{root}: no such results folder")
    replays = root / "replays"
    if not (root / DB_NAME).exists() and not replays.is_dir():
        raise StoreError(f"{root}: nothing to rebuild here: no {DB_NAME} and no replays/ folder (is it the results folder?)")
    with results_lock(root, "arena store rebuild", on_wait=on_wait):
        t0 = time.monotonic()
        report = RebuildReport(root)
        old = root / DB_NAME
        salvage: dict[str, list[tuple[Any, ...]]] = {t: [] for t in _SALVAGED}
        if old.exists():
            if not old.is_file():
                raise StoreError(f"{old}: is not a file; move it away first")
            report.old_damaged = not _healthy(old)
            salvage, report.unreadable_tables = _salvage(old)
            report.meta_lost = "meta" in report.unreadable_tables
        files = _replay_files(replays)
        for stale in root.glob(".rebuild-*"):  # a rebuild killed half-way (none runs: we hold the lock)
            shutil.rmtree(stale, ignore_errors=True)
        work = root / f".rebuild-{os.getpid()}"
        try:
            work.mkdir()
            _build(work, root, salvage, files, report)
            if old.exists():
                report.moved_to = _swap(root, work, report.old_damaged)
            else:
                _put_in_place(work, root)
        except OSError as exc:
            raise StoreError(f"{root}: cannot rebuild the database here: {exc.strerror or exc} ({exc.filename or root})") from None
        finally:
            shutil.rmtree(work, ignore_errors=True)
        report.seconds = time.monotonic() - t0
        return report


def _healthy(path: Path) -> bool:
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=5)
        try:
            return [r[0] for r in conn.execute("PRAGMA quick_check(1)")] == ["ok"]
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False


def _salvage(path: Path) -> tuple[dict[str, list[tuple[Any, ...]]], list[str]]:
    """Every row of the salvaged tables that can be read, by rowid; and the tables that
    could not be read whole. The file is opened read-only and never written."""
    rows: dict[str, list[tuple[Any, ...]]] = {}
    partial: list[str] = []
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=5)
    except sqlite3.DatabaseError:
        return {t: [] for t in _SALVAGED}, list(_SALVAGED)
    try:
        for table, columns in _SALVAGED.items():
            found: dict[int, tuple[Any, ...]] = {}
            whole = False
            for order in ("ASC", "DESC"):  # the rows after a damaged page are read from the other end
                try:
                    for row in conn.execute(f"SELECT rowid, {columns} FROM {table} ORDER BY rowid {order}"):
                        found[row[0]] = row
                except sqlite3.DatabaseError:
                    continue
                whole = order == "ASC"
                break
            if not whole:
                partial.append(table)
            rows[table] = [found[k] for k in sorted(found)]
    finally:
        conn.close()
    return rows, partial


def _replay_files(replays: Path) -> list[Path]:
    if not replays.is_dir():
        return []
    return sorted(p for p in replays.glob("*/*.json.gz") if not p.name.startswith("."))


def _build(
    work: Path,
    root: Path,
    salvage: dict[str, list[tuple[Any, ...]]],
    files: list[Path],
    report: RebuildReport,
) -> None:
    from arena.game.record import record_from_replay
    from arena.game.replay import ReplayError, read_replay
    from arena.game.verify import verify_replay
    from arena.store.rows import game_row

    old_bots = {  # id -> name, version, hash, path
        r[1]: (r[2], str(r[3]), r[4], _text(r[5]) or "") for r in salvage["bots"] if _text(r[2]) and _text(r[4])
    }
    paths = {(name, h): path for name, _, h, path in old_bots.values()}
    old_games = {  # id -> rowid, set_id, finished, duration (each None where the old row holds garbage)
        r[1]: (r[0], _text(r[2]), _text(r[3]), r[4] if isinstance(r[4], float | int) else None)
        for r in salvage["games"]
        if isinstance(r[1], str)
    }
    links: dict[str, list[str]] = {}
    for _, tid, gid in salvage["tournament_games"]:
        links.setdefault(gid, []).append(tid)
    tournaments = []
    for _, tid, created, updated, players, variant, config in salvage["tournaments"]:
        try:
            tournaments.append(TournamentRow(tid, created, updated, int(players), str(variant), _json_object(config)))
        except (TypeError, ValueError):
            report.unreadable_tables.append(f"tournaments (row {tid!r})")
    known = {t.id for t in tournaments}
    with open_store(work) as store:
        # The old store's settings win over any a new store makes for itself (its deal key).
        kept = {k: v for _, k, v in salvage["meta"] if isinstance(k, str) and isinstance(v, str)}
        store.restore_meta(kept)
        report.kept_meta = sorted(set(kept) & set(store.meta_items()))
        try:
            deal_key: bytes | None = parse_deal_key(kept["deal_key"], "deal_key") if "deal_key" in kept else None
        except StoreError:
            deal_key = None
        bot_rows: dict[tuple[str, str], BotRow] = {}

        def bot(name: str, version: str, content_hash: str) -> BotRow:
            key = (name, content_hash)
            if key not in bot_rows:
                bot_rows[key] = store.bot(name, version, content_hash, paths.get(key, ""))
            return bot_rows[key]

        # Each replay becomes its row at once (the replays themselves are not kept: a
        # store's worth of them would not fit in memory); the rows are inserted after.
        rows: list[tuple[int | None, int, str, NewGame, list[str]]] = []
        void: set[str] = set()
        for file in files:
            rel = file.relative_to(root).as_posix()
            try:
                replay = read_replay(file)
                if replay_relpath(replay.game_id) != rel:
                    raise ReplayError(f"{file}: it holds game {replay.game_id!r}, not the game its name says")
                verify_replay(replay, name=str(file))
                if replay.status == "void":
                    report.void += 1
                    void.add(replay.game_id)
                    continue
                record = record_from_replay(replay)
            except (ReplayError, ValueError, KeyError, TypeError) as exc:
                report.not_recovered.append((rel, str(exc)))
                continue
            rowid, set_id, finished, duration = old_games.get(replay.game_id, (None, None, None, None))
            seats = replay.seats[: record.config.players]  # (not the dummy's)
            if not set_id:
                set_id, guessed = _set_of(deal_key, replay.seed, [s.bot for s in seats], tournaments)
                report.guessed_sets += guessed
            if duration is not None:
                record.duration_s = float(duration)
            written = file.stat().st_mtime_ns
            finished = finished or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(written / 1e9))
            row = game_row(record, set_id, [bot(s.bot, s.version, s.hash).id for s in seats], replay.time)
            rows.append((rowid, written, finished, row, [t for t in links.get(row.id, []) if t in known]))
        # The old store's order if it is known for all, else the order the replays were written
        # in, which is the order their rows were committed in (bar a killed run's last games).
        by_rowid = all(r[0] is not None for r in rows)
        rows.sort(key=lambda r: (r[0] if by_rowid else r[1], r[3].id))
        with store.batch():
            for t in tournaments:
                store.restore_tournament(t)
            for _, _, finished, row, tids in rows:
                store.add_game(row, tids[0] if tids else None, finished=finished)
                for tid in tids[1:]:
                    store.link_games(tid, [row.id])
                report.unlinked += not tids
                report.games += 1
            for tid in known:
                ok, skipped = [], []
                for _, t, name, bot_id, status, reason, path in salvage["tournament_bots"]:
                    if t != tid:
                        continue
                    if status == "ok" and bot_id in old_bots:
                        bname, version, h, _ = old_bots[bot_id]
                        ok.append(bot(bname, version, h))
                    elif status == "skipped":
                        skipped.append((name, path, reason))
                store.set_entrants(tid, ok, skipped)
        report.tournaments = len(known)
        got = {r[3].id for r in rows}
        report.lost = sorted(g for g in old_games if g not in got and g not in void)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _json_object(text: Any) -> dict[str, Any]:
    import json

    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


def _set_of(
    key: bytes | None, deal: int, names: list[str], tournaments: list[TournamentRow]
) -> tuple[str, int]:
    """The duplicate set of a game whose row is lost: the set of the tournament whose
    seed and deals give its deal to its table under the store's deal ``key`` (exact);
    else one named after the deal and the table, which groups the same games (1: guessed)."""
    from arena.game.deals import deal_seed, set_id

    for t in tournaments if key is not None else ():
        seed, deals = t.config.get("seed"), t.config.get("deals")
        if isinstance(seed, int) and isinstance(deals, int):
            for d in range(min(deals, 10_000)):
                if deal_seed(key, seed, names, d) == deal:
                    return set_id(key, seed, names, d), 0
    key = f"rebuilt|{deal}|{'|'.join(sorted(names))}".encode()
    return hashlib.blake2b(key, digest_size=8).hexdigest(), 1


def _put_in_place(work: Path, root: Path) -> None:
    """The new database (and its -wal, which a clean close leaves only if another
    connection kept it open) into the results folder."""
    wal = work / f"{DB_NAME}-wal"
    os.replace(work / DB_NAME, root / DB_NAME)
    if wal.exists() and wal.stat().st_size:
        os.replace(wal, root / f"{DB_NAME}-wal")


def _swap(root: Path, work: Path, damaged: bool) -> Path:
    """Move the old database aside (with its -wal and -shm files) and put the new one in
    its place; returns where the old one went."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = root / f"{DB_NAME}.{'damaged' if damaged else 'before-rebuild'}-{stamp}"
    n = 1
    while aside.exists():
        n += 1
        aside = aside.with_name(f"{DB_NAME}.{'damaged' if damaged else 'before-rebuild'}-{stamp}-{n}")
    os.replace(root / DB_NAME, aside)
    for suffix in ("-wal", "-shm"):
        side = root / f"{DB_NAME}{suffix}"
        if side.exists():
            os.replace(side, aside.with_name(aside.name + suffix))
    _put_in_place(work, root)
    return aside
