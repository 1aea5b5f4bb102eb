"""`arena run`: a tournament's schedule played with bounded concurrency, one writer.

What a run does, in order:

1. finds every bot in the bots folder (bad manifests and duplicate names are reported
   and skipped), builds those with a ``build`` step (cached by content hash), and runs
   each one's handshake; a bot that cannot be built, started or understood is reported
   and skipped, the others play on;
2. makes the schedule (:mod:`arena.tournament.schedule`) and gives every game its id: a hash of
   what decides the game (rules version, variant, deal seed, each seat's bot as its
   name and content hash, time settings), not of the tournament, so a game already in
   the store, from this run killed half-way or from any earlier run, is never played
   again, and two seatings are two games even of bots with identical files;
3. records from its replay file any game a killed run wrote but did not commit, then
   hands the missing games, as game jobs, to an executor (:mod:`arena.executors`): the
   local one plays them ``jobs`` at a time, reusing bot processes across games but
   never within a duplicate set (each bot keeps one process per game of a set), the
   Dask one (``--cluster``) as tasks on many machines; each finished game is handed to
   the one writer, a process of its own (:mod:`arena.store.writer`): replay file first,
   then the database rows;
4. on Ctrl-C (SIGINT) or SIGTERM: the games in flight are abandoned (not recorded),
   the finished ones are kept, every bot process ends, and running the same command
   again resumes.

The whole run holds the results folder's lock (:func:`arena.store.lock.results_lock`), and
so does its writer process, which inherits it: a second run on the same folder waits
until the first, and its writer, are done, then plays only what is missing.

Nothing here prints: progress goes to a :class:`~arena.tournament.progress.Reporter` (the CLI draws it).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import trio

from arena.bots import BotError
from arena.bots.build import build_in_thread
from arena.bots.manifest import BotManifest, discover_bots
from arena.bots.prepare import prepare_bot
from arena.engine import GameConfig
from arena.errors import ArenaError
from arena.executors.jobs import Executor, GameJob, SeatBot
from arena.executors.local import LocalExecutor, open_local_executor
from arena.game.deals import card_ids
from arena.game.ids import game_id, seat_identity, time_dict
from arena.game.players import BotFault, TimeSettings
from arena.game.record import GameRecord, record_from_replay
from arena.game.replay import ReplayError, encode_replay, read_replay
from arena.game.verify import check_recorded_game, verify_replay
from arena.store.database import NewGame, Store, make_replay_folders, replay_relpath
from arena.store.lock import results_lock
from arena.store.opening import open_store
from arena.store.rows import game_row
from arena.store.writer import StoreWriter
from arena.tournament.progress import Entrant, Plan, Reporter, RunSummary, SilentReporter, Skipped
from arena.tournament.schedule import ScheduledGame, games_cap, games_per_set, make_schedule
from arena.tournament.settings import SEATINGS, RunSettings, default_jobs, default_sandbox

# -- game ids ---------------------------------------------------------------------------


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
        # The writer starts first, so that its start overlaps the bots': it is ready
        # when the games begin.
        self.writer = StoreWriter(self.s.results, self._frame, lock_fd=self.lock_fd) if self.s.record else _NullWriter()
        try:
            return await self._main(t0, ts)
        finally:
            with trio.CancelScope(shield=True):  # every finished game reaches the store
                await trio.to_thread.run_sync(self.writer.close)

    async def _main(self, t0: float, ts: TimeSettings) -> RunSummary:
        assert self.writer is not None
        if self.s.players is not None:  # a format that cannot be: said before any bot starts
            try:
                GameConfig(self.s.players, self.s.variant)
            except ValueError as exc:
                raise ArenaError(str(exc)) from None
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
                schedule = make_schedule(
                    names,
                    players=players,
                    deals=self.s.deals,
                    seatings=self.s.seatings,
                    games=self.s.games,
                    seed=self.s.seed,
                    gauntlet=self.s.gauntlet,
                    key=self.key,
                )
            except ValueError as exc:
                raise ArenaError(str(exc)) from None
            ids = [game_id(config, g.seed, [seat_identity(b, self.entrants[b].row.hash) for b in g.seats], ts) for g in schedule]
            if len(set(ids)) != len(ids):  # one id, one play, one row: never two games under one name
                twice = next(g for g in ids if ids.count(g) > 1)
                raise ArenaError(f"tournament {tid}: the schedule holds game {twice} twice (the same deal and seating)")
            done_ids = await trio.to_thread.run_sync(self.store.completed_ids, ids)
            set_of = {gid: g.set_id for g, gid in zip(schedule, ids, strict=True) if gid in done_ids}
            await trio.to_thread.run_sync(self.store.link_games, tid, sorted(done_ids), set_of)
            todo = [(g, gid) for g, gid in zip(schedule, ids, strict=True) if gid not in done_ids]
            recovered: set[str] = set()
            if self.s.record and todo:
                recovered = await trio.to_thread.run_sync(self._recover, tid, config, todo)
                todo = [(g, gid) for g, gid in todo if gid not in recovered]
            jobs = self.s.jobs or default_jobs(config.seats)
            jobs = max(1, min(jobs, len(todo))) if todo else max(1, jobs)
            # A process never plays two games of one duplicate set (play_game restarts it);
            # a bot keeps as many processes as a set has games (up to the players, plus one per
            # extra job), each playing one game of every set, so that steady play restarts none.
            local.processes_per_bot = min(games_per_set(players, self.s.seatings), players) + jobs - 1
            summary = RunSummary(
                tournament_id=tid,
                results=self.s.results,
                players=players,
                variant=self.s.variant.value,
                entrants=[self.entrants[n] for n in names],
                skipped=list(self.skipped),
                total=len(schedule),
                already=len(schedule) - len(todo),
                recovered=len(recovered),
            )
            cap = games_cap(
                len(names), players=players, deals=self.s.deals, seatings=self.s.seatings, games=self.s.games,
                gauntlet=self.s.gauntlet,
            )
            if cap is not None and cap.note:
                summary.games_note = f"--games {cap.asked} comes to {cap.games} games: {cap.note}"
            plan = Plan(tid, players, self.s.variant.value, summary.total, summary.already, jobs, summary.games_note)
            if self.s.cluster is None:  # a cluster run reports it once the cluster's size is known
                self.rep.planned(plan)
            t_play, c_play = time.monotonic(), time.process_time()
            await trio.to_thread.run_sync(make_replay_folders, self.s.results)
            try:
                if self.s.cluster is None:
                    await self._play_all(local, jobs, config, tid, todo, summary)
                else:
                    await self._play_on_cluster(local, config, tid, todo, summary, plan)
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

    def _register(self, tid: str, players: int, cfg: Mapping[str, Any]) -> None:
        self.store.tournament(tid, players, self.s.variant.value, cfg)
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

    def _jobs(self, config: GameConfig, todo: Sequence[tuple[ScheduledGame, str]]) -> list[GameJob]:
        """The games to play as the executors take them (each bot known by its seat)."""
        return [
            GameJob(gid, tuple(self.seats[name] for name in game.seats), game.seed, config, self.s.time, card_ids(self.key, gid))
            for game, gid in todo
        ]

    async def _play_all(
        self,
        executor: Executor,
        concurrency: int | None,
        config: GameConfig,
        tid: str,
        todo: list[tuple[ScheduledGame, str]],
        summary: RunSummary,
    ) -> None:
        """Play ``todo`` through ``executor``, handing each finished game to the one
        writer and to the reporter; on SIGINT or SIGTERM, the games in flight are
        abandoned and the run is marked interrupted."""
        games = {gid: game for game, gid in todo}
        done = summary.already

        writer = self.writer
        assert writer is not None

        def finished(job: GameJob, record: GameRecord) -> None:
            nonlocal done
            game = games[job.game_id]
            writer.submit(tid, game, record, config)
            if record.status == "void":
                summary.void += 1
                summary.void_reasons.append(f"game {job.game_id}: {record.void_reason.splitlines()[0]}")
            else:
                summary.played += 1
                done += 1
            self.rep.game_done(game, record, done, summary.total)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_signals, nursery.cancel_scope, summary, executor)
            # The store failed: no new game starts; the error is raised once all have stopped.
            await executor.play(
                self._jobs(config, todo), finished, concurrency=concurrency, keep_going=lambda: writer.error is None
            )
            nursery.cancel_scope.cancel()  # all played: stop watching signals

    async def _play_on_cluster(
        self,
        local: LocalExecutor,
        config: GameConfig,
        tid: str,
        todo: list[tuple[ScheduledGame, str]],
        summary: RunSummary,
        plan: Plan,
    ) -> None:
        """Play ``todo`` on the run's cluster; the plan is reported once the cluster is
        known (its games at once replace the local ``jobs``)."""
        from arena.executors.cluster import (
            ClusterLostError,
            DaskExecutor,
            parse_cluster,
            require_dask,
        )

        require_dask()
        target = parse_cluster(self.s.cluster or "")
        if not todo:  # everything is in the store already: no cluster needed
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
            await self._play_all(executor, self.s.jobs, config, tid, todo, summary)
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
            path = self.s.results / replay_relpath(gid)
            if not os.path.lexists(path):
                continue
            try:
                replay = read_replay(path)
                if replay.game_id != gid:
                    raise ReplayError(f"{path}: it holds game {replay.game_id}")
                verify_replay(replay, name=str(path))
                entrants = [self.entrants[name] for name in game.seats]
                check_recorded_game(
                    replay, label=str(path), seed=game.seed, players=config.players, variant=config.variant.value,
                    bots=[(e.name, e.manifest.version, e.row.hash) for e in entrants], time=time_dict(self.s.time),
                )
                record = record_from_replay(replay)
            except (ReplayError, ValueError, KeyError) as exc:
                logging.getLogger(__name__).warning("%s: not recovered, the game is played again (%s)", path, exc)
                continue
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


class _NullWriter:
    """The writer of a run that records nothing (the store's cost measured by its absence)."""

    error: ArenaError | None = None
    busy = cpu = 0.0

    def submit(self, *item: Any) -> None:
        pass

    def close(self) -> None:
        pass
