"""What the public pages show, read from the results store and kept per change of it.

The web process reads the store read-only, a short connection per read. Every figure first asks whether
anything was committed since the last one (the size and time of the database and its
write-ahead log: two stat calls), and only then whether what a figure depends on changed
(:meth:`Store.standings_key`): while nothing did, every client gets the same bytes. A figure
that must be computed again is computed by one thread at a time; the others meanwhile get
the figure as it was (a live page is at most one computation behind), and none is computed
more often than once per ``refresh_s``, so that a flood of requests never takes the cores the
ladder's referees need.

Replays are public without what the bots wrote of themselves: stderr and each action's
``debug`` value are shown only to the team the seat belongs to (and the admin).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.game.replay import ReplayError, is_plain_name, read_replay
from arena.report.figures import rating_timeline
from arena.report.viewer import GameDataError, card_table, game_view
from arena.store.database import DB_NAME, GameRow, Store
from arena.store.errors import StoreError
from arena.store.opening import open_store
from arena.tournament.standings import Standings, standings

#: The tournament the ladder records its ranked games in (the public leaderboard's default).
LADDER_TOURNAMENT = "ladder"
#: How many of the latest game rows the lists of recent games look through.
RECENT_WINDOW = 2000


class NotFoundError(ArenaError):
    """A page or figure asked for something the store does not have (a 404)."""


@dataclass
class _Kept:
    """One figure as last computed: what it depended on, its value, when."""

    key: Any = None
    value: Any = None
    at: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


class PublicData:
    """The store as the web pages read it. Thread-safe: each read has its own connection."""

    def __init__(self, results: Path, *, refresh_s: float = 1.0) -> None:
        self.results = results
        self.refresh_s = refresh_s
        self._checked = False
        self._kept: dict[Any, _Kept] = {}
        self._kept_lock = threading.Lock()
        self._responses: dict[Any, tuple[tuple[int, ...], float, bytes]] = {}

    # -- the connection ----------------------------------------------------------------

    def read(self, fn: Callable[[Store], Any]) -> Any:
        """``fn(store)`` on a connection of its own, opened for it and closed after (a
        connection kept open could keep reading an old snapshot of the file). The store is
        checked once, by the first read."""
        with open_store(self.results, create=False, read_only=True, check=not self._checked) as store:
            self._checked = True
            return fn(store)

    def close(self) -> None:
        """Nothing stays open between reads (for the app's shutdown hook)."""

    def data_version(self) -> tuple[int, ...]:
        """What changes whenever anyone committed to the store: the size and time of the
        database file and of its write-ahead log (every commit appends to the log, and a
        checkpoint writes the file). Two stat calls, no lock, nothing read."""
        stamp: list[int] = []
        for path in (self.results / DB_NAME, self.results / (DB_NAME + "-wal")):
            try:
                st = os.stat(path)
            except FileNotFoundError:
                stamp += [0, 0]
            else:
                stamp += [st.st_mtime_ns, st.st_size]
        return tuple(stamp)

    def exists(self) -> bool:
        try:
            self.read(lambda s: None)
        except StoreError:
            return False
        return True

    # -- kept responses ----------------------------------------------------------------

    def response(self, key: Any) -> bytes | None:
        """A response body kept by :meth:`keep_response`, while the store has not changed and
        for at most ``refresh_s`` (a figure computed late is then picked up)."""
        hit = self._responses.get(key)
        if hit is None or time.monotonic() - hit[1] > self.refresh_s:
            return None
        return hit[2] if hit[0] == self.data_version() else None

    def keep_response(self, key: Any, version: tuple[int, ...], body: bytes) -> None:
        if len(self._responses) > 1000:
            self._responses.clear()
        self._responses[key] = (version, time.monotonic(), body)

    # -- kept figures ------------------------------------------------------------------

    def kept(self, name: Any, key_of: Callable[[Store], Any], compute: Callable[[Store], Any]) -> Any:
        """The figure ``name``: computed by ``compute`` when ``key_of`` (cheap) changed since it
        was last computed; while another thread computes it, the last value."""
        with self._kept_lock:
            kept = self._kept.setdefault(name, _Kept())
        version = self.data_version()
        if kept.value is not None and kept.key is not None and kept.key[0] == version:
            return kept.value
        if kept.value is not None and time.monotonic() - kept.at < self.refresh_s:
            return kept.value
        if not kept.lock.acquire(blocking=kept.value is None):
            return kept.value  # someone computes it now: the last value meanwhile
        try:
            if kept.value is not None and kept.key is not None and kept.key[0] == version:
                return kept.value
            key = self.read(key_of)
            if kept.value is None or kept.key is None or kept.key[1] != key:
                kept.value = self._compute(compute)
            kept.key = (version, key)
            kept.at = time.monotonic()
            return kept.value
        finally:
            kept.lock.release()

    def _compute(self, compute: Callable[[Store], Any]) -> Any:
        return self.read(compute)

    # -- the figures -------------------------------------------------------------------

    def tournament_id(self, asked: str | None) -> str:
        """The tournament a public page shows: the one asked for, else the ladder's, else the
        latest one. A name that is not one of the store's is a 404."""

        def pick(store: Store) -> str:
            if asked is not None:
                if store.get_tournament(asked) is None:
                    raise NotFoundError(f"no tournament {asked!r}")
                return asked
            if store.get_tournament(LADDER_TOURNAMENT) is not None:
                return LADDER_TOURNAMENT
            latest = store.latest_tournament()
            if latest is None:
                raise NotFoundError("no tournament recorded yet")
            return latest.id

        return self.read(pick)

    def _tournament_key(self, tid: str) -> Callable[[Store], Any]:
        return lambda store: (store.standings_key(tid), sorted(store.entrant_ids(tid)))

    def leaderboard(self, tid: str, *, h2h: bool = False) -> Standings:
        """``arena leaderboard --tournament TID --json``'s standings (with ``h2h``: ``--h2h``)."""
        return self.kept(("leaderboard", tid, h2h), self._tournament_key(tid), lambda s: standings(s, tid, h2h=h2h))

    def leaderboard_json(self, tid: str) -> bytes:
        """The leaderboard as ``arena leaderboard --json`` prints it, encoded once per change."""
        return self.kept(
            ("leaderboard.json", tid), self._tournament_key(tid),
            lambda s: json.dumps(standings(s, tid).to_dict()).encode(),
        )

    def timeline(self, tid: str) -> dict[str, Any]:
        """Every bot's Elo as the tournament's games accumulated (the report's figure)."""

        def compute(store: Store) -> dict[str, Any]:
            st = standings(store, tid)
            keys = {r["key"] for r in st.rows}
            games = [g for g in store.games(tid) if all(s.bot.key in keys for s in g.seats)]
            return rating_timeline(games, points=60)

        return self.kept(("timeline", tid), self._tournament_key(tid), compute)

    def recent_games(self, tid: str, *, limit: int = 50, bot: str | None = None) -> list[dict[str, Any]]:
        """The tournament's latest games (newest first) among the last :data:`RECENT_WINDOW`
        game rows, optionally only those where ``bot`` (a name or name@hash) sat."""

        def compute(store: Store) -> list[dict[str, Any]]:
            start = max(0, store.last_rowid() - RECENT_WINDOW)
            return [game_summary(g) for _, g in reversed(store.games_after(tid, start))]

        games = self.kept(("games", tid), lambda store: store.standings_key(tid), compute)
        if bot is not None:
            games = [g for g in games if any(bot in (s["bot"], s["key"]) for s in g["seats"])]
        return games[:limit]

    def tournaments(self) -> list[dict[str, Any]]:
        return self.read(
            lambda s: [
                {"id": t.id, "players": t.players, "variant": t.variant, "created": t.created, "updated": t.updated}
                for t in s.tournaments()
            ]
        )

    def game(self, game_id: str) -> tuple[GameRow, list[str]]:
        """The store's row of one game and the tournaments that list it."""
        found = self.read(lambda store: store.game(game_id)) if is_plain_name(game_id) else None
        if found is None:
            raise NotFoundError(f"no game {game_id[:64]!r}")
        return found

    def game_view(self, game_id: str, *, own_bots: Iterable[str] = (), everything: bool = False) -> dict[str, Any]:
        """What the replay viewer shows of one game; stderr and debug values only of the seats
        whose bot is one of ``own_bots`` (all of them with ``everything``)."""
        row, _ = self.game(game_id)
        try:
            view = game_view(read_replay(self.results / row.replay))
        except (ReplayError, GameDataError) as exc:
            raise NotFoundError(f"game {game_id}: its replay cannot be shown ({exc})") from None
        return redacted(view, set(own_bots), everything=everything)


def card_script() -> str:
    """The viewer's card table as the script the report's viewer reads."""
    from arena.report.figures import script_json

    return f"window.ARENA_CARDS={script_json(card_table())};"


def redacted(view: dict[str, Any], own_bots: set[str], *, everything: bool = False) -> dict[str, Any]:
    """A game's view without the stderr and debug values of seats whose bot is not one of
    ``own_bots``: what a bot writes of itself is its team's to read."""
    if everything:
        return view
    mine = [seat.get("bot") in own_bots for seat in view["seats"]]
    out = dict(view)
    out["stderr"] = [text if i < len(mine) and mine[i] else "" for i, text in enumerate(view.get("stderr", []))]
    steps = []
    for step in view["steps"]:
        acts = step.get("acts")
        if acts:
            step = dict(step)
            step["acts"] = [
                None if a is None else ({k: v for k, v in a.items() if k != "debug"} if not (i < len(mine) and mine[i]) else a)
                for i, a in enumerate(acts)
            ]
        steps.append(step)
    out["steps"] = steps
    return out


def game_summary(g: GameRow) -> dict[str, Any]:
    """One game as the games list shows it (and ``GET /api/games`` returns it)."""
    return {
        "id": g.id,
        "status": g.status,
        "players": g.players,
        "variant": g.variant,
        "finished": g.finished,
        "duration_s": g.duration_s,
        "void_reason": g.void_reason or None,
        "seats": [
            {
                "seat": s.seat, "bot": s.bot.name, "version": s.bot.version, "key": s.bot.key, "points": s.points,
                "rank": s.rank, "faults": sum(s.faults.values()),
            }
            for s in g.seats
        ],
        "replay": f"/games/{g.id}",
        "replay_data": f"/api/games/{g.id}/replay",
    }
