"""Games played on this machine, ``concurrency`` at a time, by bot processes that are
reused from game to game: with one job, in this process, by the bot processes of one
:class:`~arena.game.players.PlayerPool`; with more, each job in a referee process of its
own (:mod:`arena.executors.referees`), so that the games use every core (one trio thread
plays one game at a time, and the arena's own CPU per game is most of what an instant
bot's game costs). This process then only hands out jobs and takes in records: what it
does for the run (the store's hand-off, the reporter, a live table) never delays a timed
game.

Process reuse is this executor's business: a process never plays two games of one
deal (:func:`~arena.game.referee.play_game` would restart it), so a bot keeps up to
:attr:`LocalExecutor.processes_per_bot` processes and each new game takes one that has
not seen its deal. With :attr:`LocalExecutor.trusted_reuse` (a run's ``--trusted-reuse``,
off by default) that rule is lifted for bots trusted not to remember a deal: a bot keeps
one process per job at once, which plays every game it is dealt, the games of one deal
included, and is restarted only when it crashed.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager

import trio

from arena.errors import ArenaError
from arena.executors.jobs import GameJob, OnRecord, SeatBot, void_record
from arena.executors.referees import RefereeGone, RefereeProcess
from arena.game.players import Player, PlayerPool, open_pool
from arena.game.referee import play_game
from arena.game.record import GameRecord

#: A run stops (an error) when this many referee processes in a row die before
#: finishing a game: the machine cannot run them, and every game would be void.
MAX_REFEREE_DEATHS = 3

#: With several processes playing, how many jobs ahead (per process) the next one is
#: chosen from, and how many recent deals each process remembers having played.
LOOKAHEAD = 8
REMEMBERED_DEALS = 64
#: Jobs sent to a referee process at once: the one it plays and the next.
AHEAD = 2


class _Dealer:
    """Hands the jobs to the processes that play them, each job once. With one process,
    in order. With several, each takes, of the next few jobs, the earliest of a deal it
    has played least lately: the games of a duplicate set (one deal) are spread over the
    processes, so that each needs fewer bot processes that have not seen the deal (a
    process never plays two games of one deal; with 2 processes, each plays about half of
    every set instead of up to all of it, and starts about half the bot processes).
    Which process plays a game never changes the game. Memory is bounded: a window of
    jobs and a few deals per process, whatever the number of jobs."""

    def __init__(self, jobs: Iterable[GameJob], players: int) -> None:
        self._source = iter(jobs)
        self._window: list[GameJob] = []
        self._size = 1 if players < 2 else LOOKAHEAD * players
        self._played: list[OrderedDict[int, int]] = [OrderedDict() for _ in range(players)]

    def take(self, player: int) -> GameJob | None:
        """The next job for process number ``player``; None when every job is taken."""
        window = self._window
        while len(window) < self._size:
            job = next(self._source, None)
            if job is None:
                break
            window.append(job)
        if not window:
            return None
        played = self._played[player]
        best = min(range(len(window)), key=lambda i: (played.get(window[i].seed, 0), i))
        job = window.pop(best)
        played[job.seed] = played.get(job.seed, 0) + 1
        played.move_to_end(job.seed)
        if len(played) > REMEMBERED_DEALS:
            played.popitem(last=False)
        return job


@asynccontextmanager
async def open_local_executor(*, processes_per_bot: int = 1, jobs: int | None = None) -> AsyncIterator[LocalExecutor]:
    """A :class:`LocalExecutor` with a pool of its own: every bot process and referee
    process it started has ended when the block is left. ``jobs`` (the concurrency the
    caller expects, if known) starts that many referee processes now, so that their
    start overlaps the caller's (e.g. greeting the bots) instead of the first games."""
    async with open_pool() as pool:
        local = LocalExecutor(pool, processes_per_bot=processes_per_bot)
        try:
            if jobs is not None and jobs >= 2:
                local.referees = [RefereeProcess() for _ in range(jobs)]
            yield local
        finally:
            await local.close_referees()


class LocalExecutor:
    """An :class:`~arena.executors.jobs.Executor` over ``pool`` (which it does not
    close: whoever opened the pool does, and so ends every process left; see
    :func:`open_local_executor`)."""

    def __init__(self, pool: PlayerPool, *, processes_per_bot: int = 1) -> None:
        self.pool = pool
        #: How many processes a bot may have before an idle one is restarted for a game
        #: instead (the caller knows how many games of one deal a bot plays at once).
        self.processes_per_bot = processes_per_bot
        #: Reuse a bot's process for games of a deal it has seen (see the module's
        #: docstring): only for trusted bots, never the default.
        self.trusted_reuse = False
        self.idle: dict[str, list[Player]] = {}
        #: Referee processes started and not yet in use (see :func:`open_local_executor`).
        self.referees: list[RefereeProcess] = []
        self._running: set[RefereeProcess] = set()
        #: CPU seconds the referee processes spent on the games they played (this
        #: process's own CPU is not in it).
        self.referee_cpu = 0.0
        self._deaths = 0  # referee processes in a row that died before finishing a game
        self._failing = False  # a worker has raised that too many referee processes died: the others stop

    def new_player(self, seat: SeatBot) -> Player:
        """A new, not yet started, process of the seat's bot in this executor's pool."""
        return self.pool.player(seat.spec, version=seat.manifest.version, content_hash=seat.manifest.content_hash)

    def keep(self, name: str, player: Player) -> None:
        """An idle player of bot ``name`` to reuse (e.g. one started to greet its bot)."""
        self.idle.setdefault(name, []).append(player)

    async def release(self, reason: str) -> None:
        """Shut every idle process down now (``reason`` is told to the bots)."""
        for players in self.idle.values():
            for p in players:
                await p.shutdown(reason)
        self.idle.clear()

    def hurry(self) -> None:
        self.pool.hurry()  # every bot ends at once, not with a run's polite graces
        for referee in self._running | set(self.referees):
            referee.terminate()

    async def close_referees(self) -> None:
        """End the referee processes not in use (politely, unless hurried)."""
        referees, self.referees = self.referees, []
        for referee in referees:
            await referee.aclose(hurried=self.pool.hurried)

    def _take(self, seat: SeatBot, seed: int, most: int) -> Player:
        """A player of the seat's bot for a game of the deal ``seed``: an idle one whose
        process has not seen that deal, else a new one while the bot has fewer than
        ``most``, else an idle one (:func:`play_game` restarts it). With
        :attr:`trusted_reuse`, any idle one."""
        free = self.idle.setdefault(seat.name, [])
        if self.trusted_reuse and free:
            return free.pop()
        for i in range(len(free) - 1, -1, -1):
            if not free[i].has_seen(seed):
                return free.pop(i)
        owned = sum(1 for p in self.pool.players if p.name == seat.name)
        if free and owned >= most:
            return free.pop()
        return self.new_player(seat)

    async def play_one(self, job: GameJob, processes_per_bot: int | None = None) -> GameRecord:
        """Play one job here, in this process, with players taken from the pool (a bot
        keeping up to ``processes_per_bot`` processes, default :attr:`processes_per_bot`)."""
        most = self.processes_per_bot if processes_per_bot is None else processes_per_bot
        players = [self._take(seat, job.seed, most) for seat in job.seats]
        try:
            return await play_game(
                players, job.config, job.seed, time_settings=job.time, game_id=job.game_id, ids=job.ids,
                fresh_per_deal=not self.trusted_reuse,
            )
        finally:
            for seat, p in zip(job.seats, players, strict=True):
                self.idle[seat.name].append(p)

    async def play(
        self,
        jobs: Iterable[GameJob],
        on_record: OnRecord,
        *,
        concurrency: int | None = None,
        keep_going: Callable[[], bool] | None = None,
    ) -> None:
        at_once = max(1, concurrency or 1)
        dealer = _Dealer(jobs, at_once)  # consumed lazily, shared: each job goes to one worker
        if at_once >= 2:
            await self.release("the games are played in referee processes")  # the greeted ones are idle here
            worker = self._referee_worker
        else:
            worker = self._worker
        async with trio.open_nursery() as games:
            for k in range(at_once):
                games.start_soon(worker, _jobs_of(dealer, k), on_record, keep_going, at_once)
        await self.close_referees()  # started for more jobs than there were

    async def _worker(
        self, queue: Iterator[GameJob], on_record: OnRecord, keep_going: Callable[[], bool] | None, concurrency: int
    ) -> None:
        # processes_per_bot allows for every job at once in one pool; this process plays
        # one game at a time.
        per_game = max(1, self.processes_per_bot - (concurrency - 1))
        for job in queue:
            if self._failing or (keep_going is not None and not keep_going()):
                return
            record = await self.play_one(job, per_game)
            on_record(job, record)

    async def _referee_worker(
        self,
        queue: Iterator[GameJob],
        on_record: OnRecord,
        keep_going: Callable[[], bool] | None,
        concurrency: int,
    ) -> None:
        """Play jobs in one referee process at a time, :data:`AHEAD` sent to it at once (the
        next game starts as soon as the one before ends, not once this process has taken in
        its record and answered; ``keep_going`` is asked before each job is sent, so one
        sent job may still be played after it says stop): a process that dies has its games
        reported void, and the next job gets a new process."""
        # processes_per_bot allows for every job at once in one pool; a referee process
        # plays one game at a time.
        per_referee = max(1, self.processes_per_bot - (concurrency - 1))
        referee: RefereeProcess | None = None
        sent: deque[GameJob] = deque()  # sent to the referee process, in the order it plays them
        stopped = False  # cancelled or failing: the process's bots end at once
        try:
            while True:
                while len(sent) < AHEAD and not self._failing and (keep_going is None or keep_going()):
                    job = next(queue, None)
                    if job is None:
                        break
                    if referee is None:
                        referee = self.referees.pop() if self.referees else RefereeProcess()
                        self._running.add(referee)
                        if self.pool.hurried:
                            referee.terminate()
                    await referee.send(job, per_referee, trusted_reuse=self.trusted_reuse)
                    sent.append(job)
                if not sent or referee is None:
                    return
                try:
                    record, cpu = await referee.receive()
                except RefereeGone as gone:
                    self._running.discard(referee)
                    await referee.aclose(hurried=True)
                    self._deaths = 0 if referee.games else self._deaths + 1
                    referee = None
                    reason = f"{gone}; the game is void and is played again by the next run"
                    if self._deaths >= MAX_REFEREE_DEATHS:
                        if self._failing:  # another job's worker says it already: one error, not one per job
                            return
                        self._failing = True
                        raise ArenaError(
                            f"game {sent[0].game_id}: {MAX_REFEREE_DEATHS} referee processes in a row ended before "
                            f"finishing a game (the last: {gone})"
                        ) from None
                    while sent:  # the game in play, and those sent after it
                        job = sent.popleft()
                        on_record(job, void_record(job, reason))
                    continue
                self._deaths = 0
                self.referee_cpu += cpu
                on_record(sent.popleft(), record)
        except BaseException:
            stopped = True
            raise
        finally:
            if referee is not None:
                self._running.discard(referee)
                await referee.aclose(hurried=stopped or self.pool.hurried)


def _jobs_of(dealer: _Dealer, player: int) -> Iterator[GameJob]:
    """The jobs process number ``player`` is dealt, each taken when it asks for the next."""
    while (job := dealer.take(player)) is not None:
        yield job
