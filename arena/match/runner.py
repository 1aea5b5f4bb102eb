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

Nothing here prints: what happens goes to a :class:`MatchReporter` (the CLI draws it).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import trio

import arena
from arena.bots import BotError
from arena.bots.build import build_in_thread
from arena.bots.manifest import BotManifest, find_bot
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import SandboxSettings
from arena.engine import GameConfig, Variant
from arena.errors import ArenaError
from arena.executors.jobs import GameJob, SeatBot
from arena.executors.local import LocalExecutor, open_local_executor
from arena.game.deals import card_ids
from arena.game.ids import game_id, seat_identity, time_dict
from arena.game.players import DEFAULT_TIME, BotFault, TimeSettings
from arena.game.record import GameRecord
from arena.game.replay import encode_replay
from arena.game.verify import recover_record
from arena.match.schedule import MatchPair, match_pairs
from arena.match.stats import Estimate, SequentialTest, SprtSpec, seat_half_points, unit_of
from arena.store.database import BotRow, NewGame, Store, make_replay_folders, replay_relpath
from arena.store.lock import results_lock
from arena.store.opening import open_store
from arena.store.rows import game_row
from arena.store.writer import StoreWriter
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


@dataclass(frozen=True, slots=True)
class MatchBot:
    """A bot of the match, ready: its folder, its row in the store, its start-up time."""

    manifest: BotManifest
    row: BotRow
    startup_ms: float

    @property
    def name(self) -> str:
        return self.manifest.name


@dataclass(frozen=True, slots=True)
class MatchPlan:
    match_id: str
    a: str
    b: str
    opponents: tuple[str, ...]
    players: int
    variant: str
    sprt: SprtSpec | None
    max_pairs: int
    counted: int  # pairs already in the store and counted
    jobs: int


@dataclass(slots=True)
class MatchStatus:
    """The test after a pair: what the status line shows."""

    pairs: int
    max_pairs: int
    llr: float
    lower: float
    upper: float
    verdict: str
    estimate: Estimate
    unit: float | None = None  # the last pair's unit (0..1), None before any

    def to_dict(self) -> dict[str, Any]:
        e = self.estimate
        return {
            "verdict": self.verdict, "llr": self.llr, "llr_lower": self.lower, "llr_upper": self.upper,
            "elo": e.elo, "elo_low": e.elo_low, "elo_high": e.elo_high,
            "nelo": e.nelo, "nelo_low": e.nelo_low, "nelo_high": e.nelo_high,
            "los": e.los, "score": e.score, "pairs": self.pairs, "games": 2 * self.pairs,
        }


@dataclass(slots=True)
class MatchSummary:
    """What a match came to."""

    match_id: str
    results: Path
    players: int
    variant: str
    a: str
    b: str
    opponents: tuple[str, ...]
    sprt: SprtSpec | None
    status: MatchStatus
    counts: list[int]
    already: int = 0  # pairs counted from the store
    stored: int = 0  # games of the match in the store when it started (recovered ones aside)
    played: int = 0  # games played by this run (counted or not)
    recovered: int = 0  # games recorded from a killed match's replay files
    void: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    bots: list[MatchBot] = field(default_factory=list)
    #: Each counted pair's rank-based scores in half points, in schedule order: (A's in A's
    #: game, B's in the twin). For the benchmark's unpaired comparison; not in the JSON.
    halves: list[tuple[int, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.status.to_dict(),
            "match": self.match_id,
            "a": self.a,
            "b": self.b,
            "opponents": list(self.opponents),
            "players": self.players,
            "variant": self.variant,
            "sprt": None if self.sprt is None else self.sprt.to_dict(),
            "max_pairs": self.status.max_pairs,
            "counts": list(self.counts),
            "already": self.already,
            "stored": self.stored,
            "played": self.played,
            "recovered": self.recovered,
            "void": self.void,
            "interrupted": self.interrupted,
            "seconds": round(self.seconds, 3),
            "results": str(self.results),
        }


class MatchReporter(Protocol):
    def bot_ready(self, bot: MatchBot) -> None: ...

    def planned(self, plan: MatchPlan) -> None: ...

    def pair_done(self, status: MatchStatus) -> None: ...


class SilentMatchReporter:
    def bot_ready(self, bot: MatchBot) -> None:
        pass

    def planned(self, plan: MatchPlan) -> None:
        pass

    def pair_done(self, status: MatchStatus) -> None:
        pass


# -- finding the bots ---------------------------------------------------------------------


def example_bots_folder() -> Path:
    """Where the example bots are: beside the arena package, in its source tree."""
    return Path(arena.__file__).resolve().parents[1] / "example_bots"


def resolve_bot(text: str, what: str) -> BotManifest:
    """The bot ``text`` names, for ``what`` (e.g. ``--opponent``): a path to a bot, or the
    name of an example bot. An error naming ``what`` and the text otherwise."""
    path = Path(text)
    examples = example_bots_folder()
    if not os.path.lexists(path) and "/" not in text and (examples / text).is_dir():
        path = examples / text
    if not os.path.lexists(path):
        known = sorted(p.name for p in examples.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))) if examples.is_dir() else []
        also = f", nor an example bot ({', '.join(known)})" if known else ""
        raise ArenaError(f"{what} {text!r}: no such bot (not a file or folder{also})")
    try:
        return find_bot(path)
    except BotError as exc:
        raise ArenaError(f"{what} {text!r}: {exc}") from None


def _check_names(a: BotManifest, b: BotManifest, opponents: Sequence[BotManifest]) -> None:
    if a.path == b.path or (a.name == b.name and a.content_hash == b.content_hash):
        raise ArenaError(
            f"A and B are the same bot ({a.name}, {a.path}): to test a bot against itself, copy it and give the "
            "copy another name in its bot.toml"
        )
    if a.name == b.name:
        raise ArenaError(
            f"A ({a.path}) and B ({b.path}) are both named {a.name!r}: give one of them another name in its bot.toml, "
            "so that their games and ratings never mix"
        )
    seen = {a.name: a, b.name: b}
    for m in opponents:
        other = seen.get(m.name)
        if other is not None and other.content_hash != m.content_hash:
            raise ArenaError(
                f"--opponent {m.path}: named {m.name!r} like {other.path}, but a different bot: give it another name "
                "in its bot.toml"
            )
        seen.setdefault(m.name, m)


def match_id(
    a: BotManifest, b: BotManifest, opponents: Sequence[BotManifest], players: int, variant: str, seed: int,
    ts: TimeSettings,
) -> str:
    """The match's tournament id: the bots' names (for a reader) and a hash of everything
    that decides its games (bots' identities, format, seed, time settings)."""
    decided = {
        "a": seat_identity(a.name, a.content_hash),
        "b": seat_identity(b.name, b.content_hash),
        "opponents": [seat_identity(m.name, m.content_hash) for m in opponents],
        "players": players,
        "variant": variant,
        "seed": seed,
        "time": time_dict(ts),
    }
    digest = hashlib.blake2b(json.dumps(decided, sort_keys=True).encode(), digest_size=3).hexdigest()
    return f"match-{b.name}-vs-{a.name}-{players}p-{variant}-{digest}"


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
    _check_names(a, b, opponents)
    with results_lock(settings.results, "arena match", on_wait=on_wait) as lock:
        store = open_store(settings.results)
        try:
            return trio.run(_Match(settings, store, reporter or SilentMatchReporter(), a, b, opponents, lock.fd).main)
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
        self.bots: dict[str, MatchBot] = {}
        self.writer: StoreWriter | None = None
        self.tid = match_id(a, b, opponents, settings.players, settings.variant.value, settings.seed, settings.time)
        self.max_pairs = settings.max_games // 2
        self.test = SequentialTest(settings.players, settings.sprt, self.max_pairs)
        self.pairs: list[MatchPair] = []
        self.ids: list[tuple[str, str]] = []  # each pair's game ids: A's game, B's twin
        # The outcome (ranks, autopilot) of every complete game of the match known so far.
        self.outcomes: dict[str, tuple[tuple[int, ...], tuple[bool, ...]]] = {}
        self.next_pair = 0  # the first pair not yet counted
        self.halves: list[tuple[int, int]] = []  # each counted pair's (A's, B's) half points
        self.failure: ArenaError | None = None  # what stops the match once the games in flight are done

    def _bot_list(self) -> list[BotManifest]:
        unique: dict[str, BotManifest] = {}
        for m in (self.a, self.b, *self.opponents):
            unique.setdefault(m.name, m)
        return list(unique.values())

    async def main(self) -> MatchSummary:
        t0 = time.monotonic()
        self.writer = StoreWriter(self.s.results, self._frame, lock_fd=self.lock_fd)
        try:
            summary = await self._main()
        finally:
            with trio.CancelScope(shield=True):  # every finished game reaches the store
                await trio.to_thread.run_sync(self.writer.close)
        if self.writer.error is not None:
            raise self.writer.error
        summary.seconds = time.monotonic() - t0
        return summary

    async def _main(self) -> MatchSummary:
        jobs = self.s.jobs or default_jobs(self.config.seats)
        async with open_local_executor(jobs=jobs) as local:
            await self._enter_bots(local)
            await trio.to_thread.run_sync(self._register)
            await trio.to_thread.run_sync(self._plan)
            summary = MatchSummary(
                match_id=self.tid, results=self.s.results, players=self.s.players, variant=self.s.variant.value,
                a=self.a.name, b=self.b.name, opponents=tuple(m.name for m in self.opponents), sprt=self.s.sprt,
                status=self._status(None), counts=self.test.counts, bots=[self.bots[m.name] for m in self._bot_list()],
            )
            summary.stored = len(self.outcomes)
            summary.recovered = await trio.to_thread.run_sync(self._recover)
            self._count_ready(report=False)
            summary.already = self.test.pairs
            todo = 0 if self.test.stopped else sum(
                1 for i in range(self.next_pair, self.max_pairs) for g in self.ids[i] if g not in self.outcomes
            )
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
                await self._play(local, jobs, summary)
            summary.status = self._status(None)
            summary.counts = list(self.test.counts)
            summary.halves = list(self.halves)
        return summary

    def _status(self, unit: int | None) -> MatchStatus:
        spec = self.test.judge
        steps = len(self.test.counts) - 1
        return MatchStatus(
            pairs=self.test.pairs, max_pairs=self.max_pairs, llr=self.test.llr, lower=spec.lower, upper=spec.upper,
            verdict=self.test.decided, estimate=self.test.estimate(), unit=None if unit is None else unit / steps,
        )

    # -- the bots --

    async def _enter_bots(self, local: LocalExecutor) -> None:
        """Build and start every bot of the match once (its handshake), one at a time, so
        that start-up times are measured on a quiet machine; any failure is an error."""
        build_cache = self.s.results / "build"
        for m in self._bot_list():
            try:
                spec = await build_in_thread(prepare_bot, m, build_cache, self.sandbox)
            except BotError as exc:
                raise ArenaError(f"{m.name} ({m.path}): build failed: {exc}") from None
            row = await trio.to_thread.run_sync(self.store.bot, m.name, m.version, m.content_hash, str(m.path))
            seat = SeatBot(spec, m)
            player = local.new_player(seat)
            t = trio.current_time()
            try:
                await player.start(self.s.time)
            except BotFault as fault:
                tail = player.stderr_tail().strip().splitlines()[-3:]
                await player.close()
                raise ArenaError(
                    f"{m.name} ({m.path}): cannot start ({fault.kind}): {fault.message}"
                    + (f" — stderr: {' | '.join(tail)}" if tail else "")
                ) from None
            self.seats[m.name] = seat
            local.keep(m.name, player)  # for its first game
            bot = MatchBot(m, row, round(1000 * (trio.current_time() - t), 1))
            self.bots[m.name] = bot
            self.rep.bot_ready(bot)

    def _register(self) -> None:
        cfg = {
            "match": {
                "a": self.a.name, "b": self.b.name, "opponents": [m.name for m in self.opponents],
                "sprt": None if self.s.sprt is None else self.s.sprt.to_dict(), "games": self.s.max_games,
            },
            "players": self.s.players,
            "variant": self.s.variant.value,
            "seed": self.s.seed,
            "time": time_dict(self.s.time),
        }
        self.store.tournament(self.tid, self.s.players, self.s.variant.value, cfg)
        self.store.set_entrants(self.tid, [b.row for b in self.bots.values()], [])

    # -- the pairs and what the store holds of them --

    def _plan(self) -> None:
        """Every pair's games and ids; the complete ones already stored are linked to the
        match and their outcomes read."""
        names = [m.name for m in self.opponents]
        ident = {n: seat_identity(n, self.seats[n].manifest.content_hash) for n in self.seats}
        for pair in match_pairs(
            self.a.name, self.b.name, names, players=self.s.players, seed=self.s.seed, key=self.key, pairs=self.max_pairs
        ):
            self.pairs.append(pair)
            ids = tuple(game_id(self.config, pair.seed, [ident[n] for n in seats], self.s.time) for seats in pair.games)
            self.ids.append(ids)  # type: ignore[arg-type]
        flat = [g for ids in self.ids for g in ids]
        if len(set(flat)) != len(flat):  # one id, one play: never two games under one name
            raise ArenaError(f"match {self.tid}: two of its games would be the same game (the same deal and seating)")
        done = self.store.completed_ids(flat)
        self.store.link_games(self.tid, sorted(done))
        for gid, _set, _bot, rank, _points, autopilot, *_ in self.store.rated_seats(
            self.tid, players=self.s.players, variant=self.s.variant.value
        ):
            if gid in done:
                ranks, auto = self.outcomes.get(gid, ((), ()))
                self.outcomes[gid] = ((*ranks, rank), (*auto, autopilot))

    def _recover(self) -> int:
        """Games of the match whose replay file is there but whose row is not (the arena was
        killed after writing the file and before committing the row): each file is trusted
        only once it is the very game expected and re-simulating it re-derives every outcome
        it records; it is then recorded from its file instead of being played again. A file
        that fails is reported and the game is played again. Returns how many were recorded."""
        found: list[tuple[GameRecord, MatchPair]] = []
        for pair, ids in zip(self.pairs, self.ids, strict=True):
            for gid, seats in zip(ids, pair.games, strict=True):
                if gid in self.outcomes:
                    continue
                record = recover_record(
                    self.s.results / replay_relpath(gid), gid, seed=pair.seed, config=self.config,
                    bots=[(n, self.seats[n].manifest.version, self.seats[n].manifest.content_hash) for n in seats],
                    time=time_dict(self.s.time),
                )
                if record is None:
                    continue
                found.append((record, pair))
        if found:
            with self.store.batch():
                for record, pair in found:
                    self.store.add_game(self._new_game(record, pair), self.tid)
            for record, _ in found:
                self._keep(record)
        return len(found)

    def _keep(self, record: GameRecord) -> None:
        n = self.config.players
        self.outcomes[record.game_id] = (tuple(record.ranks[:n]), tuple(record.autopilot[:n]))

    def _count_ready(self, *, report: bool = True) -> None:
        """Count the pairs whose two games are in, in schedule order, up to the first that
        is not (or until the test stops)."""
        while self.next_pair < self.max_pairs and not self.test.stopped:
            a_id, b_id = self.ids[self.next_pair]
            if a_id not in self.outcomes or b_id not in self.outcomes:
                return
            pair = self.pairs[self.next_pair]
            (a_ranks, a_auto), (b_ranks, b_auto) = self.outcomes[a_id], self.outcomes[b_id]
            a_half = seat_half_points(a_ranks, a_auto, pair.seat)
            b_half = seat_half_points(b_ranks, b_auto, pair.seat)
            unit = unit_of(self.s.players, a_half, b_half)
            self.test.add(unit)
            self.halves.append((a_half, b_half))
            self.next_pair += 1
            if report:
                self.rep.pair_done(self._status(unit))

    # -- playing --

    def _jobs(self, retry: deque[GameJob]) -> Iterator[GameJob]:
        """The games still to play, in schedule order, made as the executor takes them
        (a void game first, to be played again); none once the test has stopped."""
        for index in range(self.next_pair, self.max_pairs):
            pair = self.pairs[index]
            for gid, seats in zip(self.ids[index], pair.games, strict=True):
                while retry:
                    yield retry.popleft()
                if self.test.stopped:
                    return
                if gid in self.outcomes:
                    continue
                yield GameJob(
                    gid, tuple(self.seats[n] for n in seats), pair.seed, self.config, self.s.time, card_ids(self.key, gid)
                )
        while retry and not self.test.stopped:
            yield retry.popleft()

    async def _play(self, local: LocalExecutor, jobs: int, summary: MatchSummary) -> None:
        writer = self.writer
        assert writer is not None
        pair_of = {gid: self.pairs[i] for i in range(self.next_pair, self.max_pairs) for gid in self.ids[i]}
        retry: deque[GameJob] = deque()
        tries: dict[str, int] = {}

        def finished(job: GameJob, record: GameRecord) -> None:
            pair = pair_of[job.game_id]
            writer.submit(record, pair)
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
            self._keep(record)
            self._count_ready()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_signals, nursery.cancel_scope, summary, local)
            await local.play(
                self._jobs(retry), finished, concurrency=jobs,
                keep_going=lambda: writer.error is None and self.failure is None and not self.test.stopped,
            )
            nursery.cancel_scope.cancel()  # all played: stop watching signals
        if self.failure is not None:
            raise self.failure

    async def _watch_signals(self, scope: trio.CancelScope, summary: MatchSummary, local: LocalExecutor) -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                summary.interrupted = True
                local.hurry()  # every game and bot ends at once
                scope.cancel()
                return

    # -- the store --

    def _new_game(self, record: GameRecord, pair: MatchPair) -> NewGame:
        seats = pair.games[0] if record.game_id == self.ids[pair.index][0] else pair.games[1]
        return game_row(record, pair.set_id, [self.bots[n].row.id for n in seats], time_dict(self.s.time))

    def _frame(self, item: tuple[GameRecord, MatchPair]) -> tuple[str, NewGame, str, bytes]:
        record, pair = item
        return self.tid, self._new_game(record, pair), replay_relpath(record.game_id), encode_replay(record.replay)


__all__ = [
    "DEFAULT_OPPONENTS",
    "MatchBot",
    "MatchPlan",
    "MatchReporter",
    "MatchSettings",
    "MatchStatus",
    "MatchSummary",
    "SilentMatchReporter",
    "check_settings",
    "example_bots_folder",
    "match_id",
    "resolve_bot",
    "run_match",
]
