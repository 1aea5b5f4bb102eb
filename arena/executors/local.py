"""Games played in this process, ``concurrency`` at a time, by bot processes of one
:class:`~arena.game.players.PlayerPool` that are reused from game to game.

Process reuse is this executor's business: a process never plays two games of one
deal (:func:`~arena.game.referee.play_game` would restart it), so a bot keeps up to
:attr:`LocalExecutor.processes_per_bot` processes and each new game takes one that has
not seen its deal.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import trio

from arena.executors.jobs import GameJob, OnRecord, SeatBot
from arena.game.players import Player, PlayerPool, open_pool
from arena.game.referee import play_game


@asynccontextmanager
async def open_local_executor(*, processes_per_bot: int = 1) -> AsyncIterator[LocalExecutor]:
    """A :class:`LocalExecutor` with a pool of its own: every bot process it started
    has ended when the block is left."""
    async with open_pool() as pool:
        yield LocalExecutor(pool, processes_per_bot=processes_per_bot)


class LocalExecutor:
    """An :class:`~arena.executors.jobs.Executor` over ``pool`` (which it does not
    close: whoever opened the pool does, and so ends every process left; see
    :func:`open_local_executor`)."""

    def __init__(self, pool: PlayerPool, *, processes_per_bot: int = 1) -> None:
        self.pool = pool
        #: How many processes a bot may have before an idle one is restarted for a game
        #: instead (the caller knows how many games of one deal a bot plays at once).
        self.processes_per_bot = processes_per_bot
        self.idle: dict[str, list[Player]] = {}

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

    def _take(self, seat: SeatBot, seed: int) -> Player:
        """A player of the seat's bot for a game of the deal ``seed``: an idle one whose
        process has not seen that deal, else a new one while the bot has fewer than
        ``processes_per_bot``, else an idle one (:func:`play_game` restarts it)."""
        free = self.idle.setdefault(seat.name, [])
        for i in range(len(free) - 1, -1, -1):
            if not free[i].has_seen(seed):
                return free.pop(i)
        owned = sum(1 for p in self.pool.players if p.name == seat.name)
        if free and owned >= self.processes_per_bot:
            return free.pop()
        return self.new_player(seat)

    async def play(
        self,
        jobs: Sequence[GameJob],
        on_record: OnRecord,
        *,
        concurrency: int | None = None,
        keep_going: Callable[[], bool] | None = None,
    ) -> None:
        queue = iter(jobs)

        async def worker() -> None:
            for job in queue:  # a shared iterator: each job goes to one worker
                if keep_going is not None and not keep_going():
                    return
                players = [self._take(seat, job.seed) for seat in job.seats]
                try:
                    record = await play_game(
                        players, job.config, job.seed, time_settings=job.time, game_id=job.game_id, ids=job.ids
                    )
                finally:
                    for seat, p in zip(job.seats, players, strict=True):
                        self.idle[seat.name].append(p)
                on_record(job, record)

        async with trio.open_nursery() as games:
            for _ in range(max(1, concurrency or 1)):
                games.start_soon(worker)
