"""`arena match`: B against A in pairs of duplicate games until the test decides.

What a match does, in order:

1. finds A, B and the opponents (a path, or the name of an example bot), builds each once
   (cached by content hash, as a run does) and runs its handshake; a bot that cannot be
   built or started stops the match with an error naming it: a match without one of its
   bots has no answer to give;
2. registers the match in the results store as a tournament (its id from the bots'
   identities, the format and the seed), so that `arena games`, `leaderboard`, `replay`
   and `verify` see its games like any others;
3. makes the pairs (:mod:`arena.match.schedule`) and the ids of their games (the
   tournament's game ids: a hash of what decides the game), finds which are in the store
   already (from this match killed half-way, or, for A's games with three or more
   players, from another match of the same A, opponents and seed), and records from its
   replay file any game a killed match wrote but did not commit;
4. counts the stored pairs in schedule order, then plays the rest through the local
   executor, each finished game handed to the store's one writer (replay file, then row):
   the test (:class:`~arena.match.stats.SequentialTest`) takes a pair when both its games
   are in, in schedule order only, so that the verdict, the LLR and the counts are the
   same whatever ``jobs`` and however often the match was stopped. A pair whose twin is
   missing is completed, never counted half. Games still in flight when the test stops are
   finished and stored, and not counted;
5. on Ctrl-C (SIGINT) or SIGTERM: the games in flight are abandoned, the finished ones
   are kept, every bot process ends, and running the same command again resumes.

What is shared with the tournament (entering the bots, the store's writer, Ctrl-C) is
:mod:`arena.runs.common`; the bots are found by :mod:`arena.match.bots`, the pairs counted
by :mod:`arena.match.ledger`. Nothing here prints: what happens goes to a
:class:`~arena.match.progress.MatchReporter` (the CLI draws it).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from arena.bots.manifest import BotManifest
from arena.bots.sandbox import SandboxSettings
from arena.engine import GameConfig, Variant
from arena.errors import ArenaError
from arena.executors.jobs import GameJob, SeatBot
from arena.executors.local import LocalExecutor, open_local_executor
from arena.game.deals import card_ids
from arena.game.ids import game_id, seat_identity, time_dict
from arena.game.players import DEFAULT_TIME, TimeSettings
from arena.game.record import GameRecord
from arena.game.verify import recover_record
from arena.match.bots import check_names, match_id, resolve_bot
from arena.match.ledger import PairLedger
from arena.match.progress import MatchPlan, MatchReporter, MatchStatus, MatchSummary, SilentMatchReporter
from arena.match.schedule import MatchPair, match_pairs
from arena.match.stats import SequentialTest, SprtSpec
from arena.runs.common import Entrant, GameWriter, commit_games, enter_bot, finish_writing, stop_on_signals
from arena.store.database import Store, make_replay_folders, replay_relpath
from arena.store.lock import results_lock
from arena.store.opening import open_store
from arena.tournament.settings import default_jobs, default_sandbox

#: The example bots a match of three or more players plays against by default.
DEFAULT_OPPONENTS = ("greedy", "random")
#: Games a match plays at most: without --sprt, the fixed number; with it, the cap.
DEFAULT_GAMES = 200
DEFAULT_SPRT_GAMES = 10_000
#: The most games a match may be asked for (every game id of the match is made up front).
MAX_GAMES = 200_000
#: A game that comes back void (its referee process died) is played again at most this often.
MAX_VOID_TRIES = 3


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """Everything that decides a match (and where it is written)."""

    a: str  # the bot to beat: a path, or an example bot's name
    b: str  # the candidate
    opponents: tuple[str, ...] = ()  # three or more players; empty: the example greedy and random
    players: int = 2
    variant: Variant = Variant.STANDARD
    sprt: SprtSpec | None = None  # None: a fixed number of pairs
    games: int | None = None  # the fixed number of games, or the SPRT's cap
    seed: int = 0
    jobs: int | None = None
    time: TimeSettings = DEFAULT_TIME
    results: Path = Path("results")
    sandbox: SandboxSettings | None = None

    @property
    def max_games(self) -> int:
        if self.games is not None:
            return self.games
        return DEFAULT_GAMES if self.sprt is None else DEFAULT_SPRT_GAMES


# -- the match ----------------------------------------------------------------------------


def check_settings(settings: MatchSettings) -> None:
    """What can be said wrong before any bot is looked at."""
    try:
        GameConfig(settings.players, settings.variant)
    except ValueError as exc:
        raise ArenaError(str(exc)) from None
    if settings.players == 2 and settings.opponents:
        raise ArenaError("--opponent is for matches of 3 to 5 players: in a two-player match B plays A")
    games = settings.max_games
    if games < 2 or games % 2:
        raise ArenaError(f"--games {games}: a match plays whole pairs of games: give an even number, at least 2")
    if games > MAX_GAMES:
        raise ArenaError(f"--games {games}: at most {MAX_GAMES} games in one match")


def run_match(
    settings: MatchSettings,
    reporter: MatchReporter | None = None,
    *,
    on_wait: Callable[[str], None] | None = None,
) -> MatchSummary:
    """Play (or resume) the match these settings describe; returns what it came to.
    Raises :class:`ArenaError` for what the user must fix (a bot that cannot be found or
    started, bad settings)."""
    check_settings(settings)
    a = resolve_bot(settings.a, "A")
    b = resolve_bot(settings.b, "B")
    opponent_texts = settings.opponents or (DEFAULT_OPPONENTS if settings.players > 2 else ())
    opponents = [resolve_bot(t, "--opponent") for t in opponent_texts]
    check_names(a, b, opponents)
    with results_lock(settings.results, "arena match", on_wait=on_wait) as lock:
        store = open_store(settings.results)
        try:
            match = _Match(settings, store, reporter or SilentMatchReporter(), a, b, opponents, lock.fd)
            match.check_store()  # before any bot starts
            return trio.run(match.main)
        finally:
            store.close()


class _Match:
    def __init__(
        self,
        settings: MatchSettings,
        store: Store,
        reporter: MatchReporter,
        a: BotManifest,
        b: BotManifest,
        opponents: list[BotManifest],
        lock_fd: int,
    ) -> None:
        self.s = settings
        self.store = store
        self.rep = reporter
        self.a, self.b = a, b
        self.opponents = opponents
        self.lock_fd = lock_fd
        self.sandbox = settings.sandbox or default_sandbox()
        self.config = GameConfig(settings.players, settings.variant)
        self.key = store.deal_key()  # every deal and card labelling is keyed with the store's secret
        self.seats: dict[str, SeatBot] = {}
        self.bots: dict[str, Entrant] = {}
        self.tid = match_id(a, b, opponents, settings.players, settings.variant.value, settings.seed, settings.time)
        self.max_pairs = settings.max_games // 2
        self.test = SequentialTest(settings.players, settings.sprt, self.max_pairs)
        self.failure: ArenaError | None = None  # what stops the match once the games in flight are done

    def _bot_list(self) -> list[BotManifest]:
        unique: dict[str, BotManifest] = {}
        for m in (self.a, self.b, *self.opponents):
            unique.setdefault(m.name, m)
        return list(unique.values())

    async def main(self) -> MatchSummary:
        t0 = time.monotonic()
        writer = GameWriter(self.s.results, self.s.time, lock_fd=self.lock_fd)
        try:
            summary = await self._main(writer)
        finally:
            await finish_writing(writer)  # every finished game reaches the store
        if writer.error is not None:
            raise writer.error
        summary.seconds = time.monotonic() - t0
        return summary

    async def _main(self, writer: GameWriter) -> MatchSummary:
        jobs = self.s.jobs or default_jobs(self.config.seats)
        async with open_local_executor(jobs=jobs) as local:
            for m in self._bot_list():  # one at a time: start-up times measured on a quiet machine
                seat, bot = await enter_bot(local, self.store, m, results=self.s.results, sandbox=self.sandbox, time=self.s.time)
                self.seats[m.name], self.bots[m.name] = seat, bot
                self.rep.bot_ready(bot)
            await trio.to_thread.run_sync(self._register)
            ledger = await trio.to_thread.run_sync(self._plan)  # (a game's id names its bots' identities)
            summary = MatchSummary(
                match_id=self.tid, results=self.s.results, players=self.s.players, variant=self.s.variant.value,
                a=self.a.name, b=self.b.name, opponents=tuple(m.name for m in self.opponents), sprt=self.s.sprt,
                status=self._status(None), counts=self.test.counts, bots=[self.bots[m.name] for m in self._bot_list()],
            )
            summary.stored = len(ledger.outcomes)
            summary.recovered = await trio.to_thread.run_sync(self._recover, ledger)
            for _ in ledger.count_ready():
                pass
            summary.already = self.test.pairs
            todo = ledger.missing()
            jobs = max(1, min(jobs, todo)) if todo else max(1, jobs)
            local.processes_per_bot = 2 * self.s.players + jobs - 1
            self.rep.planned(
                MatchPlan(
                    self.tid, self.a.name, self.b.name, summary.opponents, self.s.players, self.s.variant.value,
                    self.s.sprt, self.max_pairs, summary.already, jobs,
                )
            )
            if todo:
                await trio.to_thread.run_sync(make_replay_folders, self.s.results)
                await self._play(local, jobs, summary, writer, ledger)
            summary.status = self._status(None)
            summary.counts = list(self.test.counts)
            summary.halves = list(ledger.halves)
        return summary

    def _status(self, unit: int | None) -> MatchStatus:
        spec = self.test.judge
        steps = len(self.test.counts) - 1
        return MatchStatus(
            pairs=self.test.pairs, max_pairs=self.max_pairs, llr=self.test.llr, lower=spec.lower, upper=spec.upper,
            verdict=self.test.decided, estimate=self.test.estimate(), unit=None if unit is None else unit / steps,
        )

    def _config(self) -> dict[str, Any]:
        return {
            "match": {
                "a": self.a.name, "b": self.b.name, "opponents": [m.name for m in self.opponents],
                "sprt": None if self.s.sprt is None else self.s.sprt.to_dict(), "games": self.s.max_games,
            },
            "players": self.s.players,
            "variant": self.s.variant.value,
            "seed": self.s.seed,
            "time": time_dict(self.s.time),
        }

    def check_store(self) -> None:
        """A tournament of the match's id already in the store must be this match: the same
        bots, format, seed and time settings (its --sprt and --games may differ: the stored
        pairs are counted again under the test asked for now). Another one (a match whose
        id's hash is the same, a run's tournament of that name) is an error naming it."""
        found = self.store.get_tournament(self.tid)
        if found is None:
            return
        cfg, stored = self._config(), found.config
        theirs = stored.get("match") if isinstance(stored, dict) else None
        if not isinstance(theirs, dict):
            what = "a tournament of `arena run`, not a match"
        elif any(theirs.get(k) != cfg["match"][k] for k in ("a", "b", "opponents")) or any(
            stored.get(k) != cfg[k] for k in ("players", "variant", "seed", "time")
        ):
            what = "another match: its bots, format, seed or time settings differ"
        else:
            return
        raise ArenaError(
            f"{self.store.path}: holds a tournament {self.tid} that is not this match ({what}); use another --results folder"
        )

    def _register(self) -> None:
        """The match in the store as a tournament of its id, with its bots."""
        self.store.tournament(self.tid, self.s.players, self.s.variant.value, self._config())
        self.store.set_entrants(self.tid, [b.row for b in self.bots.values()], [])

    # -- the pairs and what the store holds of them --

    def _plan(self) -> PairLedger:
        """Every pair's games and ids; the complete ones already stored are linked to the
        match and their outcomes read."""
        names = [m.name for m in self.opponents]
        ident = {n: seat_identity(n, self.seats[n].manifest.content_hash) for n in self.seats}
        pairs: list[MatchPair] = []
        ids: list[tuple[str, str]] = []  # each pair's game ids: A's game, B's twin
        for pair in match_pairs(
            self.a.name, self.b.name, names, players=self.s.players, seed=self.s.seed, key=self.key, pairs=self.max_pairs
        ):
            pairs.append(pair)
            a_id, b_id = (game_id(self.config, pair.seed, [ident[n] for n in seats], self.s.time) for seats in pair.games)
            ids.append((a_id, b_id))
        flat = [g for two in ids for g in two]
        if len(set(flat)) != len(flat):  # one id, one play: never two games under one name
            raise ArenaError(f"match {self.tid}: two of its games would be the same game (the same deal and seating)")
        ledger = PairLedger(self.s.players, pairs, ids, self.test)
        done = self.store.completed_ids(flat)
        self.store.link_games(self.tid, sorted(done))
        for gid, (ranks, autopilot) in self.store.seat_outcomes(sorted(done)).items():
            ledger.record(gid, ranks, autopilot)
        return ledger

    def _recover(self, ledger: PairLedger) -> int:
        """Games of the match whose replay file is there but whose row is not (the arena was
        killed after writing the file and before committing the row): each file is trusted
        only once it is the very game expected and re-simulating it re-derives every outcome
        it records; it is then recorded from its file instead of being played again. A file
        that fails is reported and the game is played again. Returns how many were recorded."""
        found: list[tuple[str, GameRecord, str, list[int]]] = []
        for pair, ids in zip(ledger.pairs, ledger.ids, strict=True):
            for gid, seats in zip(ids, pair.games, strict=True):
                if ledger.known(gid):
                    continue
                record = recover_record(
                    self.s.results / replay_relpath(gid), gid, seed=pair.seed, config=self.config,
                    bots=[(n, self.seats[n].manifest.version, self.seats[n].manifest.content_hash) for n in seats],
                    time=time_dict(self.s.time),
                )
                if record is not None:
                    found.append((self.tid, record, pair.set_id, self._bot_ids(seats)))
        if found:
            commit_games(self.store, found, self.s.time)
            for _, record, _, _ in found:
                ledger.record(record.game_id, record.ranks, record.autopilot)
        return len(found)

    def _bot_ids(self, seats: tuple[str, ...]) -> list[int]:
        return [self.bots[n].row.id for n in seats]

    # -- playing --

    def _jobs(self, ledger: PairLedger, retry: deque[GameJob]) -> Iterator[GameJob]:
        """The games still to play, in schedule order, made as the executor takes them
        (a void game first, to be played again); none once the test has stopped."""
        for pair, gid, seats in ledger.to_play():
            while retry:
                yield retry.popleft()
            if ledger.known(gid):  # (not while the retries were taken)
                continue
            yield GameJob(gid, tuple(self.seats[n] for n in seats), pair.seed, self.config, self.s.time, card_ids(self.key, gid))
        while retry and not self.test.stopped:
            yield retry.popleft()

    async def _play(
        self, local: LocalExecutor, jobs: int, summary: MatchSummary, writer: GameWriter, ledger: PairLedger
    ) -> None:
        pair_of = {gid: ledger.pairs[i] for i in range(ledger.next_pair, self.max_pairs) for gid in ledger.ids[i]}
        retry: deque[GameJob] = deque()
        tries: dict[str, int] = {}

        def finished(job: GameJob, record: GameRecord) -> None:
            pair = pair_of[job.game_id]
            writer.submit(self.tid, record, pair.set_id, self._bot_ids(ledger.seats_of(pair, job.game_id)))
            if record.status == "void":
                summary.void += 1
                tries[job.game_id] = tries.get(job.game_id, 0) + 1
                if tries[job.game_id] >= MAX_VOID_TRIES and self.failure is None:
                    self.failure = ArenaError(
                        f"game {job.game_id}: void {MAX_VOID_TRIES} times ({record.void_reason.splitlines()[0]}); "
                        "the match stops: run the same command again to go on"
                    )
                else:
                    retry.append(job)
                return
            summary.played += 1
            ledger.record(record.game_id, record.ranks, record.autopilot)
            for counted in ledger.count_ready():
                self.rep.pair_done(self._status(counted.unit))

        async with stop_on_signals(local) as stop:
            await local.play(
                self._jobs(ledger, retry), finished, concurrency=jobs,
                keep_going=lambda: writer.error is None and self.failure is None and not self.test.stopped,
            )
        if stop.interrupted:
            summary.interrupted = True
        if self.failure is not None:
            raise self.failure


__all__ = [
    "DEFAULT_OPPONENTS",
    "MatchPlan",
    "MatchReporter",
    "MatchSettings",
    "MatchStatus",
    "MatchSummary",
    "SilentMatchReporter",
    "check_settings",
    "run_match",
]
