"""`arena run`: a tournament's schedule played with bounded concurrency, one writer.

What a run does, in order:

0. if the last run of this tournament found or made every game of its schedule, with these
   very bots (names and content hashes, as found by :func:`discover_bots`, every one of them
   started then) and settings, and the tournament still holds as many complete games as it
   did then, it says so at once: no bot is built or started, no writer either;
1. finds every bot in the bots folder (bad manifests and duplicate names are reported
   and skipped), builds those with a ``build`` step (cached by content hash), and runs
   each one's handshake; a bot that cannot be built, started or understood is reported
   and skipped, the others play on;
2. walks the schedule (:mod:`arena.tournament.schedule`), made a game at a time, in chunks
   (:class:`_Walk`), and gives every game its id: a hash of
   what decides the game (rules version, variant, deal seed, each seat's bot as its
   name and content hash, time settings), not of the tournament, so a game already in
   the store, from this run killed half-way or from any earlier run, is never played
   again, and two seatings are two games even of bots with identical files; neither the
   schedule nor its ids are ever held whole;
3. records from its replay file any game a killed run wrote but did not commit, then
   hands the missing games, as game jobs, to an executor (:mod:`arena.executors`): the
   local one plays them ``jobs`` at a time, reusing bot processes across games but
   never within a duplicate set (each bot keeps one process per game of a set), the
   Dask one (``--cluster``) as tasks on many machines; each finished game is handed to
   the one writer, a process of its own (:mod:`arena.store.writer`): replay file first,
   then the database rows; once every game of the schedule is found or played, that is
   recorded for step 0 (:meth:`~arena.store.database.Store.mark_schedule_played`), which
   counts the games in the store again before it trusts it;
4. on Ctrl-C (SIGINT) or SIGTERM: the games in flight are abandoned (not recorded),
   the finished ones are kept, every bot process ends, and running the same command
   again resumes.

The whole run holds the results folder's lock (:func:`arena.store.lock.results_lock`), and
so does its writer process, which inherits it: a second run on the same folder waits
until the first, and its writer, are done, then plays only what is missing.

Nothing here prints: progress goes to a :class:`~arena.tournament.progress.Reporter` (the CLI draws it).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import hashlib
import itertools
import json
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import trio

from arena.bots import BotError
from arena.bots.build import build_in_thread
from arena.bots.manifest import BotManifest, discover_bots
from arena.bots.prepare import prepare_bot
from arena import __version__
from arena.engine import RULES_VERSION, GameConfig
from arena.errors import ArenaError
from arena.executors.jobs import Executor, GameJob, SeatBot
from arena.executors.local import LocalExecutor, open_local_executor
from arena.game.deals import card_ids
from arena.game.ids import game_id, seat_identity, time_dict
from arena.game.players import BotFault, TimeSettings
from arena.game.record import GameRecord
from arena.game.replay import encode_replay
from arena.game.verify import recover_record
from arena.store.database import NewGame, Store, make_replay_folders, replay_relpath
from arena.store.lock import results_lock
from arena.store.opening import open_store
from arena.store.rows import game_row
from arena.store.writer import StoreWriter
from arena.tournament.progress import Entrant, Plan, Reporter, RunSummary, SilentReporter, Skipped
from arena.tournament.schedule import ScheduledGame, games_cap, games_per_set, iter_schedule, schedule_games
from arena.tournament.settings import SEATINGS, RunSettings, default_jobs, default_sandbox

#: The games of the schedule looked up in the store at once (their ids in one query).
CHUNK = 4096
#: The first chunk's size (each next one twice the last, up to CHUNK).
FIRST_CHUNK = 256
#: At most this many games to play are kept while the store is searched before the first game.
AHEAD = 8 * CHUNK
#: A run's summary keeps the reasons of this many void games (and counts them all).
VOID_EXAMPLES = 20

# -- running ----------------------------------------------------------------------------


def run_tournament(
    settings: RunSettings,
    reporter: Reporter | None = None,
    *,
    hold: contextlib.ExitStack | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> RunSummary:
    """Run (or resume) the tournament these settings describe; returns what happened.
    Raises :class:`ArenaError` for what the user must fix (no bots, bad settings);
    a bot's failure is never an error of the run.

    The run holds the results folder's lock (:func:`arena.store.lock.results_lock`; ``on_wait``
    is told whom it waits for), taken once the settings and the bots folder are found
    good. With ``hold``, the lock is entered on that stack and stays held until the
    caller closes it (to write the leaderboard and the report as the same writer)."""
    rep = reporter or SilentReporter()
    if settings.cluster is not None:  # only then is Dask needed: fail before any work if it is missing
        from arena.executors.cluster import check_reachable, parse_cluster, require_dask

        target = parse_cluster(settings.cluster)
        require_dask()
        check_reachable(target)
    if settings.seatings not in SEATINGS:
        raise ArenaError(f"--seatings must be one of {', '.join(SEATINGS)}, not {settings.seatings!r}")
    if settings.deals < 1:
        raise ArenaError(f"--deals must be at least 1, not {settings.deals}")
    try:
        manifests, errors = discover_bots(settings.bots_dir)
    except BotError as exc:
        raise ArenaError(str(exc)) from None
    with contextlib.ExitStack() as own:
        lock = (own if hold is None else hold).enter_context(results_lock(settings.results, "arena run", on_wait=on_wait))
        store = open_store(settings.results)
        try:
            return trio.run(_Run(settings, store, rep, manifests, errors, lock_fd=lock.fd).main)
        finally:
            store.close()


def schedule_identity(settings: RunSettings, players: int, bots: Iterable[tuple[str, str]]) -> str:
    """What decides a tournament's schedule and its games' ids, as one digest: the arena and
    rules versions, the schedule's settings (format, deals, seatings, cap, seed, gauntlet,
    time) and every entrant's ``(name, content hash)`` (of its sources, for a bot with a
    build step). The store's deal key, the rest, is the store's own and never changes. What
    :meth:`~arena.store.database.Store.mark_schedule_played` records a schedule by."""
    doc = {
        "arena": __version__,
        "rules": RULES_VERSION,
        "schedule": settings.schedule_config(players),
        "bots": sorted([name, content_hash] for name, content_hash in bots),
    }
    return hashlib.blake2b(json.dumps(doc, sort_keys=True).encode(), digest_size=16).hexdigest()


class _Run:
    def __init__(
        self,
        settings: RunSettings,
        store: Store,
        reporter: Reporter,
        manifests: list[BotManifest],
        errors: list[tuple[Path, str]],
        *,
        lock_fd: int | None = None,
    ) -> None:
        self.s = settings
        self.lock_fd = lock_fd  # the results folder's lock, handed to the writer
        self.sandbox = settings.sandbox or default_sandbox()
        self.store = store
        self.rep = reporter
        self.manifests = manifests
        self.skipped = [Skipped(p.name.split(".")[0], str(p), msg) for p, msg in errors]
        self.seats: dict[str, SeatBot] = {}  # each entrant's bot, as the executors take it
        self.entrants: dict[str, Entrant] = {}
        self.writer: StoreWriter | _NullWriter | None = None
        # The store's secret: every deal seed, set id and card labelling of this run is keyed
        # with it, so that the same store and seed give the same games and no bot can compute one.
        self.key = store.deal_key()

    async def main(self) -> RunSummary:
        t0 = time.monotonic()
        for sk in self.skipped:
            self.rep.bot_skipped(sk)
        ts = self.s.time
        if self.s.players is not None:  # a format that cannot be: said before any bot starts
            try:
                GameConfig(self.s.players, self.s.variant)
            except ValueError as exc:
                raise ArenaError(str(exc)) from None
        # Nothing left to play (the last run found or made every game of this schedule, with
        # these very bots): said without starting a bot or the writer.
        summary = await trio.to_thread.run_sync(self._nothing_to_play)
        if summary is not None:
            summary.seconds = time.monotonic() - t0
            return summary
        # The writer starts first, so that its start overlaps the bots': it is ready
        # when the games begin.
        self.writer = StoreWriter(self.s.results, self._frame, lock_fd=self.lock_fd) if self.s.record else _NullWriter()
        try:
            return await self._main(t0, ts)
        finally:
            with trio.CancelScope(shield=True):  # every finished game reaches the store
                await trio.to_thread.run_sync(self.writer.close)

    def _identity(self, players: int, bots: Iterable[tuple[str, str]]) -> str:
        return schedule_identity(self.s, players, bots)

    def _nothing_to_play(self) -> RunSummary | None:
        """The run's summary if every game of its schedule is in the store already, found
        from the bots' manifests, the settings and the store alone; None if it may not be
        (then the bots are started and the schedule walked, as ever). It is when the last
        run of this tournament that went past its start recorded that it found or played
        every game (:meth:`~arena.store.database.Store.mark_schedule_played`), that run had
        these very bots, every one of them started, and these settings (a bot skipped then,
        changed or added since is not in that record), and the store still holds them: the
        first time, the tournament's complete games among these bots are counted (every one
        of that run's games was committed, none was lost since), and the number of games
        linked to it is kept; from then on, that number alone (read from an index) tells
        that none was lost."""
        if not self.s.record or len(self.manifests) < 2:
            return None
        players = self.s.format_players(len(self.manifests))
        if len(self.manifests) < players:
            return None
        tid = self.s.tournament_id(players)
        mine = [(m.name, m.content_hash) for m in self.manifests]
        known = self.store.schedule_played(tid)
        if known is None or known[0] != self._identity(players, mine):
            return None
        total = schedule_games(
            len(self.manifests), players=players, deals=self.s.deals, seatings=self.s.seatings,
            games=self.s.games, gauntlet=self.s.gauntlet,
        )
        rows = self.store.find_bots(mine)
        if known[1] != total or len(rows) != len(mine):
            return None
        if known[2] is None:  # its run had games to commit yet: count them, once
            if self.store.tournament_games_among(tid, [r.id for r in rows.values()]) != total:
                return None
            self.store.count_schedule_played(tid)
        elif self.store.linked_games(tid) != known[2]:  # a game lost since (its link went with it)
            return None
        config = GameConfig(players, self.s.variant)
        self.entrants = {m.name: Entrant(m, rows[(m.name, m.content_hash)], 0.0) for m in self.manifests}  # none started
        self._register(tid, players, {**self.s.schedule_config(players), "bots_dir": str(self.s.bots_dir)}, keep=True)
        summary = self._summary(tid, players, total)
        summary.already = total
        jobs = max(1, self.s.jobs or default_jobs(config.seats))
        self.rep.planned(Plan(tid, players, self.s.variant.value, total, total, jobs, summary.games_note))
        return summary

    def _summary(self, tid: str, players: int, total: int) -> RunSummary:
        names = sorted(self.entrants)
        summary = RunSummary(
            tournament_id=tid,
            results=self.s.results,
            players=players,
            variant=self.s.variant.value,
            entrants=[self.entrants[n] for n in names],
            skipped=list(self.skipped),
            total=total,
            already=0,
        )
        cap = games_cap(
            len(names), players=players, deals=self.s.deals, seatings=self.s.seatings, games=self.s.games,
            gauntlet=self.s.gauntlet,
        )
        if cap is not None and cap.note:
            summary.games_note = f"--games {cap.asked} comes to {cap.games} games: {cap.note}"
        return summary

    async def _main(self, t0: float, ts: TimeSettings) -> RunSummary:
        assert self.writer is not None
        async with open_local_executor(jobs=self.s.jobs) as local:  # it plays the games here, and greets the bots in any case
            await self._enter_bots(local, ts)
            names = sorted(self.entrants)
            players = self.s.format_players(len(names))
            try:
                config = GameConfig(players, self.s.variant)
            except ValueError as exc:
                raise ArenaError(str(exc)) from None
            if len(names) < max(2, players):
                found = ", ".join(names) or "none"
                why = "; ".join(f"{k.name}: {k.reason}" for k in self.skipped)
                raise ArenaError(
                    f"{self.s.bots_dir}: {len(names)} bot(s) ready ({found}), a {players}-player tournament needs at "
                    f"least {max(2, players)}" + (f" — skipped: {why}" if why else "")
                )
            tid = self.s.tournament_id(players)
            cfg = {**self.s.schedule_config(players), "bots_dir": str(self.s.bots_dir)}
            await trio.to_thread.run_sync(self._register, tid, players, cfg)
            try:
                walk = _Walk(self, config, tid, players)
            except ValueError as exc:
                raise ArenaError(str(exc)) from None
            summary = self._summary(tid, players, walk.total)
            await walk.look_ahead(summary)
            left = summary.total - summary.already
            jobs = self.s.jobs or default_jobs(config.seats)
            jobs = max(1, min(jobs, left)) if left else max(1, jobs)
            # A process never plays two games of one duplicate set (play_game restarts it);
            # a bot keeps as many processes as a set has games (up to the players, plus one per
            # extra job), each playing one game of every set, so that steady play restarts none.
            local.processes_per_bot = min(games_per_set(players, self.s.seatings), players) + jobs - 1
            plan = Plan(tid, players, self.s.variant.value, summary.total, summary.already, jobs, summary.games_note)
            if self.s.cluster is None:  # a cluster run reports it once the cluster's size is known
                self.rep.planned(plan)
            t_play, c_play = time.monotonic(), time.process_time()
            await trio.to_thread.run_sync(make_replay_folders, self.s.results)
            try:
                if self.s.cluster is None:
                    await self._play_all(local, jobs, config, tid, walk, summary)
                else:
                    await self._play_on_cluster(local, config, tid, walk, summary, plan)
                if self.s.record and not summary.interrupted and self.writer.error is None and summary.done == summary.total:
                    # Every game of the schedule is found or handed to the writer: the next run
                    # with these bots need start none. Recorded now, while the writer lives (its
                    # connection's end may fold the log into the database: no write of this
                    # process follows it); a run that played games leaves them to the next
                    # run to count, as the writer may not have committed its last ones yet.
                    identity = self._identity(players, [(e.name, e.row.hash) for e in self.entrants.values()])
                    await trio.to_thread.run_sync(
                        functools.partial(
                            self.store.mark_schedule_played, tid, identity, summary.total, counted=summary.played == 0
                        )
                    )
            finally:
                with trio.CancelScope(shield=True):  # every finished game reaches the store
                    await trio.to_thread.run_sync(self.writer.close)
            summary.play_seconds = time.monotonic() - t_play
            summary.play_cpu_seconds = (  # the writer's process and the referee processes too
                time.process_time() - c_play + self.writer.cpu + local.referee_cpu
            )
            summary.referee_cpu_seconds = local.referee_cpu
            summary.store_seconds = self.writer.busy
            summary.store_cpu_seconds = self.writer.cpu
            if self.writer.error is not None:
                raise self.writer.error
        summary.seconds = time.monotonic() - t0
        return summary

    def _register(self, tid: str, players: int, cfg: Mapping[str, Any], *, keep: bool = False) -> None:
        """The tournament and this run's entrants in the store. Unless ``keep`` (a run that
        plays nothing), what an earlier run recorded of the whole schedule being played is
        dropped first: until this run has found or made every game, the next one must look."""
        self.store.tournament(tid, players, self.s.variant.value, cfg)
        if not keep:
            self.store.forget_schedule_played(tid)
        self.store.set_entrants(
            tid, [e.row for e in self.entrants.values()], [(k.name, k.path, k.reason) for k in self.skipped]
        )

    async def _enter_bots(self, local: LocalExecutor, ts: TimeSettings) -> None:
        """Build and start every bot once (the handshake); keep the started process
        for the first game. Bots are entered one at a time, so that start-up times
        are measured on a quiet machine."""
        build_cache = self.s.results / "build"
        for m in self.manifests:
            try:
                spec = await build_in_thread(prepare_bot, m, build_cache, self.sandbox)
            except BotError as exc:
                self._skip(m, f"build failed: {exc}")
                continue
            row = await trio.to_thread.run_sync(self.store.bot, m.name, m.version, m.content_hash, str(m.path))
            seat = SeatBot(spec, m)
            player = local.new_player(seat)
            t = trio.current_time()
            try:
                await player.start(ts)
            except BotFault as fault:
                tail = player.stderr_tail().strip().splitlines()[-3:]
                self._skip(m, f"cannot start ({fault.kind}): {fault.message}" + (f" — stderr: {' | '.join(tail)}" if tail else ""))
                await player.close()
                continue
            self.seats[m.name] = seat
            local.keep(m.name, player)  # for its first game
            entrant = Entrant(m, row, round(1000 * (trio.current_time() - t), 1))
            self.entrants[m.name] = entrant
            self.rep.bot_ready(entrant)

    def _skip(self, m: BotManifest, reason: str) -> None:
        sk = Skipped(m.name, str(m.path), reason)
        self.skipped.append(sk)
        self.rep.bot_skipped(sk)

    async def _play_all(
        self,
        executor: Executor,
        concurrency: int | None,
        config: GameConfig,
        tid: str,
        walk: _Walk,
        summary: RunSummary,
    ) -> None:
        """Play the games the walk finds missing through ``executor``, handing each finished
        game to the one writer and to the reporter; on SIGINT or SIGTERM, the games in
        flight are abandoned and the run is marked interrupted."""
        writer = self.writer
        assert writer is not None

        def finished(job: GameJob, record: GameRecord) -> None:
            game = walk.pending.pop(job.game_id)
            writer.submit(tid, game, record, config)
            if record.status == "void":
                summary.void += 1
                if len(summary.void_reasons) < VOID_EXAMPLES:
                    summary.void_reasons.append(f"game {job.game_id}: {record.void_reason.splitlines()[0]}")
            else:
                summary.played += 1
            self.rep.game_done(game, record, summary.done, summary.total)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_signals, nursery.cancel_scope, summary, executor)
            # The store failed: no new game starts; the error is raised once all have stopped.
            await executor.play(walk.jobs(summary), finished, concurrency=concurrency, keep_going=lambda: writer.error is None)
            nursery.cancel_scope.cancel()  # all played: stop watching signals

    async def _play_on_cluster(
        self,
        local: LocalExecutor,
        config: GameConfig,
        tid: str,
        walk: _Walk,
        summary: RunSummary,
        plan: Plan,
    ) -> None:
        """Play the games the walk finds missing on the run's cluster; the plan is reported
        once the cluster is known (its games at once replace the local ``jobs``)."""
        from arena.executors.cluster import (
            ClusterLostError,
            DaskExecutor,
            parse_cluster,
            require_dask,
        )

        require_dask()
        target = parse_cluster(self.s.cluster or "")
        if summary.done == summary.total:  # everything is in the store already: no cluster needed
            self.rep.planned(plan)
            return
        await local.release("the games are played on a cluster")  # started only to greet the bots

        def ready(info: Any, at_once: int) -> None:
            self.rep.planned(replace(plan, jobs=at_once))
            cluster_ready = getattr(self.rep, "cluster_ready", None)
            if cluster_ready is not None:
                cluster_ready(info)

        executor = DaskExecutor(
            target, self.sandbox, local_cache=self.s.results.resolve() / "worker-cache", on_ready=ready
        )
        try:
            await self._play_all(executor, self.s.jobs, config, tid, walk, summary)
        except ClusterLostError as exc:
            raise ArenaError(
                f"lost the Dask scheduler at {exc.scheduler} ({summary.done} games of {summary.total} are in the "
                "store); once it is back, run the same command again to play the rest"
            ) from None

    async def _watch_signals(self, scope: trio.CancelScope, summary: RunSummary, executor: Executor) -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                summary.interrupted = True
                executor.hurry()  # every game and bot ends at once, not with a run's polite graces
                scope.cancel()
                return

    def _recover(self, tid: str, config: GameConfig, todo: Sequence[tuple[ScheduledGame, str]]) -> set[str]:
        """Games to play whose replay file is there but whose row is not (the arena was
        killed after writing the file and before committing the row): each file is trusted
        only once it is the very game expected (id, seed, format, time settings, and every
        seat's bot, version and content hash) and re-simulating it re-derives every outcome
        it records (:func:`verify_replay`); it is then recorded from its file instead of
        being played again. A file that fails is reported (a warning naming it and why) and
        the game is played again, overwriting it: the game was never recorded, the bots are
        at hand, and a game played now is one to trust (voiding it would only have the next
        run play it). Returns the ids recorded."""
        found: list[tuple[str, ScheduledGame, GameRecord, GameConfig]] = []
        for game, gid in todo:
            entrants = [self.entrants[name] for name in game.seats]
            record = recover_record(
                self.s.results / replay_relpath(gid), gid, seed=game.seed, config=config,
                bots=[(e.name, e.manifest.version, e.row.hash) for e in entrants], time=time_dict(self.s.time),
            )
            if record is not None:
                found.append((tid, game, record, config))
        if found:
            self._commit_games(found)
        return {item[2].game_id for item in found}

    def _frame(self, item: tuple[str, ScheduledGame, GameRecord, GameConfig]) -> tuple[str, NewGame, str, bytes]:
        """What the writer records for a finished game: its row and its replay's JSON."""
        tid, game, record, config = item
        return tid, self._new_game(game, record, config), replay_relpath(record.game_id), encode_replay(record.replay)

    def _commit_games(self, items: Sequence[tuple[str, ScheduledGame, GameRecord, GameConfig]]) -> None:
        """The rows of games whose replays are written, in one transaction."""
        with self.store.batch():
            for tid, game, record, config in items:
                self.store.add_game(self._new_game(game, record, config), tid)

    def _new_game(self, game: ScheduledGame, record: GameRecord, config: GameConfig) -> NewGame:
        return game_row(record, game.set_id, [self.entrants[name].row.id for name in game.seats], time_dict(self.s.time))


def _batches(games: Iterable[ScheduledGame], size: int) -> Iterator[list[ScheduledGame]]:
    """``games`` in lists of ``size``, the first ones smaller (from :data:`FIRST_CHUNK`,
    doubling), so that the first game waits for a few ids only."""
    it = iter(games)
    n = min(size, FIRST_CHUNK)
    while chunk := list(itertools.islice(it, n)):
        yield chunk
        n = min(size, 2 * n)


class _Walk:
    """A run's schedule, walked once in schedule order, :data:`CHUNK` games at a time: each
    chunk's game ids, one look-up in the store of which are complete (linked to the
    tournament), the recovery of those a killed run wrote but did not commit, and the rest
    handed to the executor as jobs, lazily (:meth:`jobs`). Neither the schedule nor its ids
    are ever held whole: what is held is one chunk, the games handed out and not yet
    finished (:attr:`pending`), and what :meth:`look_ahead` found to play (at most
    :data:`AHEAD` games)."""

    def __init__(self, run: _Run, config: GameConfig, tid: str, players: int) -> None:
        self.run = run
        self.config = config
        self.tid = tid
        self.names = sorted(run.entrants)
        s = run.s
        self._args: dict[str, Any] = {
            "players": players, "deals": s.deals, "seatings": s.seatings, "games": s.games, "seed": s.seed,
            "gauntlet": s.gauntlet, "key": run.key,
        }
        # iter_schedule checks its arguments at once (a ScheduleError, a ValueError), then makes the games as asked.
        self._chunks = _batches(iter_schedule(self.names, **self._args), CHUNK)
        self.total = schedule_games(
            len(self.names), players=players, deals=s.deals, seatings=s.seatings, games=s.games, gauntlet=s.gauntlet
        )
        self._identity = {n: seat_identity(n, run.entrants[n].row.hash) for n in self.names}
        self._ahead: collections.deque[tuple[ScheduledGame, str]] = collections.deque()
        self._looked = 0  # games of the schedule looked up by look_ahead
        self._resume_at: int | None = None  # where the walk goes on after what look_ahead holds (None: where it stopped)
        #: The games handed to the executor and not yet finished, by id.
        self.pending: dict[str, ScheduledGame] = {}

    async def look_ahead(self, summary: RunSummary) -> None:
        """Walk the schedule before the first game until every stored game it can hold is
        found (the store's count of complete games of the format and time settings among
        these bots, :meth:`~arena.store.database.Store.possible_games`), so that the plan
        says how many are played already: for a new tournament, at once; for a resumed one,
        as far as its last stored game. The games to play found on the way are kept for
        :meth:`jobs`, up to :data:`AHEAD`; past that, the walk takes them up again from the
        first one it did not keep."""
        run = self.run
        ts = run.s.time
        possible = await trio.to_thread.run_sync(
            functools.partial(
                run.store.possible_games, players=self.config.players, variant=self.config.variant.value,
                rules=RULES_VERSION, time_settings=json.dumps(time_dict(ts), sort_keys=True),
                bot_ids=[e.row.id for e in run.entrants.values()],
            )
        )
        found = 0
        while found < possible:
            chunk = await trio.to_thread.run_sync(next, self._chunks, None)
            if chunk is None:
                break
            todo, done, recovered = await trio.to_thread.run_sync(self._look_up, chunk)
            found += done
            summary.already += done + recovered
            summary.recovered += recovered
            if self._resume_at is None:
                if len(self._ahead) + len(todo) <= AHEAD:
                    self._ahead.extend(todo)
                else:
                    self._resume_at = self._looked
            self._looked += len(chunk)

    def jobs(self, summary: RunSummary) -> Iterator[GameJob]:
        """The games to play, in schedule order, as the executor takes them; the games of
        the chunks looked up now (not ahead) that are in the store are counted in
        ``summary`` as they are found."""
        while self._ahead:
            yield self._job(*self._ahead.popleft())
        if self._resume_at is None:
            chunks, at = self._chunks, self._looked
        else:  # the walk again from the first game to play not kept: those before are in hand
            rest = itertools.islice(iter_schedule(self.names, **self._args), self._resume_at, None)
            chunks, at = _batches(rest, CHUNK), self._resume_at
        for chunk in chunks:
            todo, done, recovered = self._look_up(chunk)
            if at >= self._looked:  # (a chunk look_ahead saw is counted already)
                summary.already += done + recovered
                summary.recovered += recovered
            at += len(chunk)
            for game, gid in todo:
                yield self._job(game, gid)

    def _job(self, game: ScheduledGame, gid: str) -> GameJob:
        """A game to play as the executors take it (each bot known by its seat)."""
        run = self.run
        self.pending[gid] = game
        return GameJob(gid, tuple(run.seats[name] for name in game.seats), game.seed, self.config, run.s.time, card_ids(run.key, gid))

    def _look_up(self, chunk: list[ScheduledGame]) -> tuple[list[tuple[ScheduledGame, str]], int, int]:
        """One chunk's games to play (with their ids), how many of them are complete in the
        store (now linked to the tournament) and how many were recorded from the replay files
        of a killed run."""
        run, ts = self.run, self.run.s.time
        ids = [game_id(self.config, g.seed, [self._identity[b] for b in g.seats], ts) for g in chunk]
        # One id, one play, one row: never two games under one name. A (table, deal) comes once
        # in a schedule and the seatings of a set differ, so two games of two chunks could share
        # an id only if two keyed 63-bit deal seeds did; a set repeated by mistake is caught here.
        if len(set(ids)) != len(ids):
            twice = next(g for g in ids if ids.count(g) > 1)
            raise ArenaError(f"tournament {self.tid}: the schedule holds game {twice} twice (the same deal and seating)")
        done = run.store.completed_ids(ids)
        if done:
            set_of = {gid: g.set_id for g, gid in zip(chunk, ids, strict=True) if gid in done}
            run.store.link_games(self.tid, sorted(done), set_of)
        todo = [(g, gid) for g, gid in zip(chunk, ids, strict=True) if gid not in done]
        recovered: set[str] = set()
        if run.s.record and todo:
            recovered = run._recover(self.tid, self.config, todo)
            if recovered:
                todo = [(g, gid) for g, gid in todo if gid not in recovered]
        return todo, len(done), len(recovered)


class _NullWriter:
    """The writer of a run that records nothing (the store's cost measured by its absence)."""

    error: ArenaError | None = None
    busy = cpu = 0.0

    def submit(self, *item: Any) -> None:
        pass

    def close(self) -> None:
        pass
