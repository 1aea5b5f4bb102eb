"""The continuous ladder: :func:`run_ladder` (the process `arena ladder` and `arena serve` run)
and :class:`Ladder`, what the web application reads and asks of it.

One loop, each turn doing the first of these that has work: validate the oldest waiting
upload (:mod:`arena.competition.validation`); if the admin paused the ladder, wait; play the
oldest queued challenge (unranked: a tournament ``challenge-<id>`` of its own, never linked to
the ladder); with fewer accepted bots than seats, wait and say so; else play one ranked
duplicate set at the table :mod:`arena.competition.matchmaking` chooses.

Every game is played by :func:`arena.tournament.runner.run_tournament`, the runner of `arena
run`, with the set's bots copied into a table folder: so a game's id is the hash of what decides
it, a game already stored is never played again, and a SIGTERM or a kill -9 loses only the games
in flight. A ranked set is played into the tournament ``_ladder-pending`` and its games are linked
to the tournament ``ladder`` only when every game of the set is recorded (a set counts whole or
not at all); the set about to be played is written down first (``ladder_state``), so that after
a kill the same set (same bots, same seed, the same games' ids) is finished, not begun anew. The
ladder's entrants are each team's latest accepted version: an older version's games leave the
table and stay in the history (`arena leaderboard --all`). `arena leaderboard --results DIR`
shows the ladder, the tournament touched last.

What the loop keeps between turns is bounded by the number of teams (a hash per accepted bot);
everything else is read from the store each turn."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from arena.bots import BotError
from arena.bots.files import copy_bot
from arena.bots.manifest import find_bot
from arena.competition.config import Competition
from arena.competition.db import ago, connect, now, seconds_until, transaction
from arena.competition.errors import CompetitionError, Forbidden, NotFound, RateLimited
from arena.competition.matchmaking import Entry, choose_table
from arena.competition.submissions import Submission, Submissions
from arena.competition.teams import Team
from arena.competition.validation import SUBMISSIONS, validate_next
from arena.store.opening import open_store
from arena.tournament.runner import run_tournament
from arena.tournament.schedule import games_per_set
from arena.tournament.standings import standings

LADDER = "ladder"
PENDING = "_ladder-pending"  # sorts before "ladder": of two touched in one second, the ladder is the latest
TABLES = "ladder-tables"
IDLE_S = 1.0  # how long the loop sleeps when it has nothing to do
log = logging.getLogger(__name__)


class _Stop(Protocol):
    def is_set(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class LadderState:
    paused: bool
    waiting: str | None  # why no ranked game is played now (None: playing)
    games_played: int  # ranked games of the ladder
    games_in_flight: int  # of the set or challenge being played
    accepted_bots: int
    validation_queue: int
    challenge_queue: int
    current: dict[str, Any] | None  # what is being played: {"kind", "bots", "games", ...}
    updated: str | None  # the ladder process's last word

    def to_dict(self) -> dict[str, Any]:
        return {
            "paused": self.paused, "waiting": self.waiting, "games_played": self.games_played,
            "games_in_flight": self.games_in_flight, "accepted_bots": self.accepted_bots,
            "queues": {"validation": self.validation_queue, "challenges": self.challenge_queue},
            "current": self.current, "updated": self.updated,
        }


@dataclass(frozen=True, slots=True)
class Challenge:
    id: int
    team_id: int
    created: str
    opponents: list[str]
    games: int
    played: int
    status: str  # queued, playing, done, failed
    tournament: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "team_id": self.team_id, "created": self.created, "opponents": self.opponents,
            "games": self.games, "played": self.played, "status": self.status, "tournament": self.tournament,
        }


def _challenge(row: tuple) -> Challenge:
    return Challenge(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], row[6], row[7])


_CH = "id, team_id, created, opponents, games, played, status, tournament"


def _read_state(conn) -> dict[str, str]:  # noqa: ANN001
    return dict(conn.execute("SELECT key, value FROM ladder_state").fetchall())


def _write_state(results: Path, **items: str | None) -> None:
    with transaction(results) as conn:
        for key, value in items.items():
            if value is None:
                conn.execute("DELETE FROM ladder_state WHERE key = ?", (key,))
            else:
                conn.execute("INSERT OR REPLACE INTO ladder_state (key, value) VALUES (?, ?)", (key, value))


class Ladder:
    """The ladder of the competition whose store is in ``results``, as the web sees it."""

    def __init__(self, results: Path, competition: Competition) -> None:
        self.results = results
        self.competition = competition

    def state(self) -> LadderState:
        subs = Submissions(self.results, self.competition)
        with connect(self.results) as conn:
            kv = _read_state(conn)
            (played,) = conn.execute("SELECT count(*) FROM tournament_games WHERE tournament_id = ?", (LADDER,)).fetchone()
            (queued,) = conn.execute("SELECT count(*) FROM challenges WHERE status IN ('queued', 'playing')").fetchone()
        counts = subs.counts()
        current = json.loads(kv["current"]) if "current" in kv else None
        return LadderState(
            paused=kv.get("paused") == "1",
            waiting=kv.get("waiting"),
            games_played=int(played),
            games_in_flight=int(current.get("games", 0)) if current else 0,
            accepted_bots=len(subs.accepted()),
            validation_queue=counts["queued"] + counts["building"] + counts["validating"],
            challenge_queue=int(queued),
            current=current,
            updated=kv.get("updated"),
        )

    def pause(self) -> None:
        """No new ranked set or challenge starts (the one being played finishes); uploads are still validated."""
        _write_state(self.results, paused="1")

    def resume(self) -> None:
        _write_state(self.results, paused=None)

    def challenge(self, team: Team, opponents: list[str], games: int) -> Challenge:
        """Queue ``games`` unranked games of the team's bot against ``opponents`` (1 to 4
        teams or bot names with an accepted bot; the table has one seat per bot). Refused:
        no accepted bot of the team's, an unknown or repeated opponent, too many games
        (:class:`CompetitionError`), past the team's hourly cap or a full queue (:class:`RateLimited`)."""
        c = self.competition
        if team.revoked:
            raise Forbidden(f"team {team.name!r} is revoked")
        if isinstance(games, bool) or not isinstance(games, int) or not 1 <= games <= c.challenge_max_games:
            raise CompetitionError(f"a challenge is 1 to {c.challenge_max_games} games, not {games!r:.20}")
        if not isinstance(opponents, list) or not 1 <= len(opponents) <= 4:
            raise CompetitionError("a challenge names 1 to 4 opponents")
        accepted = {s.team: s for s in Submissions(self.results, c).accepted()}
        by_bot = {s.bot_name: s for s in accepted.values()}
        mine = accepted.get(team.name)
        if mine is None:
            raise CompetitionError(f"team {team.name!r} has no accepted bot yet: a challenge needs one")
        chosen: list[str] = []
        for name in opponents:
            sub = accepted.get(name) if isinstance(name, str) else None
            sub = sub or (by_bot.get(name) if isinstance(name, str) else None)
            if sub is None:
                raise NotFound(f"no bot or team {str(name)!r:.60} with an accepted bot to challenge")
            if sub.team == team.name or sub.team in chosen:
                raise CompetitionError(f"opponent {str(name)!r:.60} is named twice or is the team's own bot")
            chosen.append(sub.team)
        with transaction(self.results) as conn:
            recent = conn.execute(
                "SELECT created FROM challenges WHERE team_id = ? AND created > ? ORDER BY created DESC LIMIT ?",
                (team.id, ago(3600), c.challenges_per_hour),
            ).fetchall()
            if len(recent) >= c.challenges_per_hour:
                raise RateLimited(f"team {team.name!r} has asked for {c.challenges_per_hour} challenges in the last hour",
                                  seconds_until(recent[-1][0], 3600))
            (waiting,) = conn.execute("SELECT count(*) FROM challenges WHERE status IN ('queued', 'playing')").fetchone()
            if waiting >= c.challenge_max_queued:
                raise RateLimited(f"the challenge queue is full ({waiting} waiting)", 60)
            cur = conn.execute(
                "INSERT INTO challenges (team_id, created, opponents, games, status) VALUES (?, ?, ?, ?, 'queued')",
                (team.id, now(), json.dumps(chosen), games),
            )
            row = conn.execute(f"SELECT {_CH} FROM challenges WHERE id = ?", (cur.lastrowid,)).fetchone()
        return _challenge(row)

    def challenges(self, team_id: int | None = None, limit: int = 100) -> list[Challenge]:
        """A team's challenges (None: every team's), newest first."""
        with connect(self.results) as conn:
            if team_id is None:
                rows = conn.execute(f"SELECT {_CH} FROM challenges ORDER BY id DESC LIMIT ?", (limit,))
            else:
                rows = conn.execute(f"SELECT {_CH} FROM challenges WHERE team_id = ? ORDER BY id DESC LIMIT ?", (team_id, limit))
            return [_challenge(r) for r in rows]


# -- the ladder's process -----------------------------------------------------------------------


def set_seed(competition: Competition, number: int) -> int:
    digest = hashlib.blake2b(f"{competition.seed}:{number}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


class _Loop:
    def __init__(self, results: Path, competition: Competition, on_event: Callable[[str], None]) -> None:
        self.results = results
        self.c = competition
        self.say = on_event
        self.subs = Submissions(results, competition)
        self.hashes: dict[str, str] = {}  # bot folder -> content hash (one per accepted version kept)

    # The accepted bots: each team's latest version, as (submission, folder, content hash).
    def current_bots(self) -> list[tuple[Submission, Path, str]]:
        out = []
        for sub in self.subs.accepted():
            folder = self.results / SUBMISSIONS / sub.team / str(sub.version) / str(sub.bot_name)
            key = str(folder)
            if key not in self.hashes:
                try:
                    self.hashes[key] = find_bot(folder).content_hash
                except BotError as exc:
                    log.warning("accepted bot of team %s cannot be read (%s): left out", sub.team, exc)
                    continue
            out.append((sub, folder, self.hashes[key]))
        live = {str(f) for _, f, _ in out}
        self.hashes = {k: v for k, v in self.hashes.items() if k in live}  # bounded by the teams
        return out

    def turn(self) -> bool:
        """One step of work; False when there was none (the caller sleeps)."""
        if validate_next(self.results, self.c) is not None:
            return True
        with connect(self.results) as conn:
            kv = _read_state(conn)
        if kv.get("paused") == "1":
            self._waiting("paused by the organiser")
            return False
        if self._play_challenge():
            return True
        bots = self.current_bots()
        if len(bots) < self.c.players:
            self._waiting(f"waiting for bots: {len(bots)} accepted, {self.c.players} needed for a table")
            return False
        self._play_set(bots, kv)
        return True

    def _waiting(self, why: str) -> None:
        _write_state(self.results, waiting=why, updated=now())

    def _table_folder(self, entries: list[tuple[Submission, Path, str]]) -> Path:
        table = self.results / TABLES
        shutil.rmtree(table, ignore_errors=True)
        table.mkdir(parents=True)
        for _, folder, content in entries:
            if copy_bot(folder, table / folder.name) != content:
                raise CompetitionError(f"{folder}: the accepted bot's files changed on disk")
        return table

    def _play_set(self, bots: list[tuple[Submission, Path, str]], kv: dict[str, str]) -> None:
        by_key = {f"{s.bot_name}@{h[:8]}": (s, f, h) for s, f, h in bots}
        pending = json.loads(kv["pending"]) if "pending" in kv else None
        if pending is None or not all(k in by_key for k in pending["bots"]):
            number = int(kv.get("sets", "0")) + 1
            table = choose_table(self._entries(by_key), self.c.players, random.Random(set_seed(self.c, number)), self._meetings())
            pending = {"set": number, "bots": table, "seed": set_seed(self.c, number)}
            with transaction(self.results) as conn:  # what a set given up left is never counted
                conn.execute("DELETE FROM tournament_games WHERE tournament_id = ?", (PENDING,))
            _write_state(self.results, pending=json.dumps(pending))
        seated = [by_key[k] for k in pending["bots"]]
        games = games_per_set(self.c.players, "rotations") * self.c.deals
        current = {"kind": "ranked set", "set": pending["set"], "bots": pending["bots"], "games": games}
        _write_state(self.results, waiting=None, current=json.dumps(current), updated=now())
        self.say(f"set {pending['set']}: {', '.join(pending['bots'])}")
        settings = self.c.run_settings(self._table_folder(seated), self.results, PENDING)
        settings = replace(settings, seed=pending["seed"], deals=self.c.deals, jobs=self.c.jobs or None)
        summary = run_tournament(settings)
        _write_state(self.results, current=None)
        if summary.interrupted:
            raise KeyboardInterrupt
        if summary.done < summary.total:  # a bot could not start: the set is dropped, its games never count
            self.say(f"set {pending['set']} not whole ({summary.done} of {summary.total}): "
                     + "; ".join(f"{s.name}: {s.reason}" for s in summary.skipped))
        self._touch_ladder(bots)  # (the ladder's row first: its links refer to it)
        if summary.done >= summary.total:
            self._count_set()
        _write_state(self.results, pending=None, sets=str(pending["set"]))

    def _count_set(self) -> None:
        """Link every game of the whole set just played to the ladder, in one transaction."""
        with transaction(self.results) as conn:
            conn.execute(
                "INSERT OR IGNORE INTO tournament_games (tournament_id, game_id) "
                "SELECT ?, game_id FROM tournament_games WHERE tournament_id = ?", (LADDER, PENDING),
            )
            conn.execute("DELETE FROM tournament_games WHERE tournament_id = ?", (PENDING,))

    def _touch_ladder(self, bots: list[tuple[Submission, Path, str]]) -> None:
        """The ladder tournament's row and entrants (each team's latest version), touched last
        so that `arena leaderboard` shows it."""
        store = open_store(self.results, check=False)
        try:
            store.tournament(LADDER, self.c.players, self.c.variant, {"competition": self.c.name, "players": self.c.players})
            rows = store.find_bots([(s.bot_name, h) for s, _, h in bots])
            store.set_entrants(LADDER, list(rows.values()), [])
        finally:
            store.close()

    def _entries(self, by_key: dict[str, tuple[Submission, Path, str]]) -> list[Entry]:
        rows = {r["key"]: r for r in self._standings().rows} if self._has_games() else {}
        per_set = games_per_set(self.c.players, "rotations") * self.c.deals
        out = []
        for key in sorted(by_key):
            r = rows.get(key)
            if r is None:
                out.append(Entry(key))
            else:
                low, high = r.get("elo_low"), r.get("elo_high")
                out.append(Entry(key, float(r["elo"]), math.nan if low is None else float(low),
                                 math.nan if high is None else float(high), int(r["games"]) // per_set))
        return out

    def _has_games(self) -> bool:
        with connect(self.results) as conn:
            return conn.execute("SELECT 1 FROM tournament_games WHERE tournament_id = ? LIMIT 1", (LADDER,)).fetchone() is not None

    def _standings(self, h2h: bool = False):  # noqa: ANN202
        store = open_store(self.results, check=False)
        try:
            return standings(store, LADDER, h2h=h2h)
        finally:
            store.close()

    def _meetings(self) -> dict[tuple[str, str], int]:
        if not self._has_games():
            return {}
        matrix = self._standings(h2h=True).h2h or {}
        met: dict[tuple[str, str], int] = {}
        for a, row in matrix.items():
            for b, (w, d, lo) in row.items():
                if a < b:
                    met[(a, b)] = int(round(w + d + lo))
        return met

    def _play_challenge(self) -> bool:
        with connect(self.results) as conn:
            row = conn.execute(f"SELECT {_CH} FROM challenges WHERE status IN ('queued', 'playing') ORDER BY id LIMIT 1").fetchone()
        if row is None:
            return False
        ch = _challenge(row)
        bots = {s.team: (s, f, h) for s, f, h in self.current_bots()}
        team = next((s.team for s, _, _ in bots.values() if s.team_id == ch.team_id), None)
        missing = [t for t in [team, *ch.opponents] if t is None or t not in bots]
        tid = f"challenge-{ch.id}"
        if missing:
            with transaction(self.results) as conn:
                conn.execute("UPDATE challenges SET status = 'failed', tournament = ? WHERE id = ?", (tid, ch.id))
            self.say(f"challenge {ch.id}: a bot of it is no longer accepted")
            return True
        seated = [bots[t] for t in [team, *ch.opponents]]
        with transaction(self.results) as conn:
            conn.execute("UPDATE challenges SET status = 'playing', tournament = ? WHERE id = ?", (tid, ch.id))
        current = {"kind": "challenge", "challenge": ch.id, "bots": [f"{s.bot_name}" for s, _, _ in seated], "games": ch.games}
        _write_state(self.results, current=json.dumps(current), updated=now())
        self.say(f"challenge {ch.id}: {', '.join(current['bots'])}, {ch.games} games")
        settings = self.c.run_settings(self._table_folder(seated), self.results, tid)
        settings = replace(settings, players=len(seated), games=ch.games, seed=set_seed(self.c, -ch.id), jobs=self.c.jobs or None)
        summary = run_tournament(settings)
        _write_state(self.results, current=None)
        if summary.interrupted:
            with transaction(self.results) as conn:
                conn.execute("UPDATE challenges SET played = ? WHERE id = ?", (summary.done, ch.id))
            raise KeyboardInterrupt
        with transaction(self.results) as conn:
            conn.execute("UPDATE challenges SET status = ?, played = ? WHERE id = ?",
                         ("done" if summary.done >= summary.total else "failed", summary.done, ch.id))
        self._touch_ladder(self.current_bots())
        return True


def run_ladder(
    results: Path,
    competition: Competition,
    *,
    stop: _Stop | None = None,
    on_event: Callable[[str], None] | None = None,
    max_turns: int | None = None,
) -> None:
    """Validate uploads and play challenges and ranked sets until ``stop`` is set (anything
    with ``is_set()``: a ``trio.Event`` or a ``threading.Event``, looked at between sets), or
    after ``max_turns`` turns with work. SIGINT and SIGTERM (turned into SIGINT by the
    command line) abandon the games in flight, keep the finished ones, and end it with
    KeyboardInterrupt; the next start finishes the set it was playing."""
    say = on_event or (lambda _m: None)
    loop = _Loop(results, competition, say)
    _write_state(results, current=None, updated=now())
    turns = 0
    while stop is None or not stop.is_set():
        if loop.turn():
            turns += 1
            if max_turns is not None and turns >= max_turns:
                return
        else:
            time.sleep(IDLE_S)
