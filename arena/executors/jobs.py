"""The seam between what decides games and what plays them.

A caller (a tournament, a match, a ladder) turns the games it wants into
:class:`GameJob` values and hands them to an :class:`Executor`, which plays them with
bounded concurrency and reports each :class:`~arena.game.record.GameRecord` as it finishes.
An executor knows nothing of tournaments, schedules or the store: a job is everything
that decides its game, and the record is everything the game produced.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from arena import __version__
from arena.bots import BotSpec
from arena.bots.manifest import BotManifest
from arena.engine import GameConfig, Variant, new_game
from arena.game.ids import time_dict
from arena.game.players import TimeSettings
from arena.game.record import GameRecord
from arena.game.replay import FAULT_KINDS, Replay, SeatInfo


@dataclass(frozen=True, slots=True)
class SeatBot:
    """The bot of a seat: how to start it here (``spec``, built) and its folder
    (``manifest``: its name, version and content hash, and what an executor sends to
    another machine)."""

    spec: BotSpec
    manifest: BotManifest

    @property
    def name(self) -> str:
        return self.manifest.name


@dataclass(frozen=True, slots=True)
class GameJob:
    """One game to play: everything that decides it, nothing about why it is played."""

    game_id: str
    seats: tuple[SeatBot, ...]  # in seat order (the dummy seat, if any, is not a bot)
    seed: int  # the deal
    config: GameConfig
    time: TimeSettings
    ids: int | None = None  # the card labelling (arena.game.referee.play_game's ids)


#: Told each finished game, in the caller's trio thread, once per job; a void game too.
OnRecord = Callable[[GameJob, GameRecord], None]


class Executor(Protocol):
    """Plays game jobs. :meth:`play` returns once every job is played, or once
    ``keep_going`` says no (asked before each game starts; games already running are
    finished or abandoned as the executor can), or raises what stops it. Cancelling
    the caller's scope abandons the games in flight: they are never reported.

    ``jobs`` may be any iterable, a generator of a schedule too long to hold: an executor
    takes each job only shortly before it can start it (at most a bounded window ahead,
    never ``len()`` or ``list()`` of them), so a caller's memory does not grow with the
    games."""

    async def play(
        self,
        jobs: Iterable[GameJob],
        on_record: OnRecord,
        *,
        concurrency: int | None = None,
        keep_going: Callable[[], bool] | None = None,
    ) -> None: ...

    def hurry(self) -> None:
        """The caller is stopping (Ctrl-C): every game and bot process ends at once,
        without the polite graces of a finished game."""
        ...


def void_record(job: GameJob, reason: str) -> GameRecord:
    """The void record of ``job``: the game was not played to its end through no fault of
    its bots (its referee process died, or it kept failing on a cluster's workers); nobody
    is blamed, ``reason`` is kept, and the next run plays it."""
    config = job.config
    state = new_game(config, job.seed, ids=job.ids)
    seats = [
        SeatInfo(seat=i, bot=s.name, version=s.manifest.version, hash=s.manifest.content_hash)
        for i, s in enumerate(job.seats)
    ]
    if config.variant is Variant.DUMMY:
        seats.append(SeatInfo(seat=config.players, bot="dummy"))
    replay = Replay(
        arena_version=__version__,
        game_id=job.game_id,
        seed=job.seed,
        ids=job.ids,
        players=config.seats,
        variant=config.variant.value,
        config={"players": config.players, "variant": config.variant.value},
        time=time_dict(job.time),
        seats=seats,
        cards=[state.kind(c) for c in range(len(state.kind_of))],
        status="void",
        void_reason=reason,
    )
    return GameRecord(
        game_id=job.game_id,
        status="void",
        seed=job.seed,
        config=config,
        bots=[s.name for s in job.seats],
        scores=[],
        puddings=[],
        ranks=[],
        autopilot=[False] * config.seats,
        faults=[dict.fromkeys(FAULT_KINDS, 0) for _ in range(config.seats)],
        replay=replay,
        duration_s=0.0,
        void_reason=reason,
    )
