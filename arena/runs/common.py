"""What a tournament and a match do alike around their games, written once.

- **Entering the bots** (:func:`enter_bot`): a bot is built (cached by content hash),
  registered in the store and started once (its handshake), its process kept for its first
  game; a bot that cannot be built or started is a :class:`BotEntryError` naming it and
  saying why. What to do then is the caller's: a tournament skips the bot and plays on, a
  match stops (it has no answer to give without one of its bots).
- **The store's one writer** (:class:`GameWriter`): each finished game is handed over with
  its tournament, its duplicate set and the bot row of each seat; the writer process
  (:mod:`arena.store.writer`) writes the replay file, then the row. :func:`finish_writing`
  waits, shielded from cancellation, until everything handed over is recorded.
  :func:`commit_games` records, in one transaction, games whose replay files a killed run
  left (recovered from them).
- **Ctrl-C and SIGTERM** (:func:`stop_on_signals`): the games in flight are abandoned at
  once (the executor is hurried: every game and bot ends now), the block is cancelled, and
  the caller is told that it was interrupted.
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import trio

from arena.bots import BotError
from arena.bots.build import build_in_thread
from arena.bots.manifest import BotManifest
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import SandboxSettings
from arena.errors import ArenaError
from arena.executors.jobs import Executor, SeatBot
from arena.executors.local import LocalExecutor
from arena.game.ids import time_dict
from arena.game.players import BotFault, TimeSettings
from arena.game.record import GameRecord
from arena.game.replay import encode_replay
from arena.store.database import BotRow, NewGame, Store, replay_relpath
from arena.store.rows import game_row
from arena.store.writer import StoreWriter

__all__ = [
    "BotEntryError",
    "Entrant",
    "GameWriter",
    "Interruption",
    "commit_games",
    "enter_bot",
    "finish_writing",
    "stop_on_signals",
]

#: How many of its last stderr lines a bot that cannot start is reported with.
STDERR_LINES = 3


# -- entering the bots ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot that takes part: its folder, its row in the store, its start-up time."""

    manifest: BotManifest
    row: BotRow
    startup_ms: float

    @property
    def name(self) -> str:
        return self.manifest.name


class BotEntryError(ArenaError):
    """A bot that cannot be built or started: ``reason`` says why; the message names the
    bot and its folder too."""

    def __init__(self, manifest: BotManifest, reason: str) -> None:
        super().__init__(f"{manifest.name} ({manifest.path}): {reason}")
        self.manifest = manifest
        self.reason = reason


async def enter_bot(
    local: LocalExecutor,
    store: Store,
    manifest: BotManifest,
    *,
    results: Path,
    sandbox: SandboxSettings,
    time: TimeSettings,
) -> tuple[SeatBot, Entrant]:
    """Build the bot (under ``results/build``), give it its row in the store and start it
    (its handshake, timed); its started process is kept in ``local`` for its first game.
    Returns how the executors take it and the entrant. Raises :class:`BotEntryError` when
    it cannot be built or started (no process of it is left running)."""
    try:
        spec = await build_in_thread(prepare_bot, manifest, results / "build", sandbox)
    except BotError as exc:
        raise BotEntryError(manifest, f"build failed: {exc}") from None
    m = manifest
    row = await trio.to_thread.run_sync(store.bot, m.name, m.version, m.content_hash, str(m.path))
    seat = SeatBot(spec, m)
    player = local.new_player(seat)
    t = trio.current_time()
    try:
        await player.start(time)
    except BotFault as fault:
        tail = player.stderr_tail().strip().splitlines()[-STDERR_LINES:]
        await player.close()
        raise BotEntryError(
            m, f"cannot start ({fault.kind}): {fault.message}" + (f" — stderr: {' | '.join(tail)}" if tail else "")
        ) from None
    local.keep(m.name, player)  # for its first game
    return seat, Entrant(m, row, round(1000 * (trio.current_time() - t), 1))


# -- the store's writer --------------------------------------------------------------------


class GameWriter:
    """The store's one writer (:class:`~arena.store.writer.StoreWriter`), handed finished
    games: :meth:`submit` takes a game's record with its tournament, duplicate set and the
    bot row id of each seat (seat order), and returns at once; the row and the replay's
    JSON are made on the writer's own thread. :attr:`error` is set once the writer has
    failed (nothing more is recorded); :attr:`busy` and :attr:`cpu` are the writer's wall
    and CPU seconds, known once it is closed."""

    def __init__(self, results: Path, time: TimeSettings, *, lock_fd: int | None = None) -> None:
        self._time = time_dict(time)
        self._writer = StoreWriter(results, self._frame, lock_fd=lock_fd)

    @property
    def error(self) -> ArenaError | None:
        return self._writer.error

    @property
    def busy(self) -> float:
        return self._writer.busy

    @property
    def cpu(self) -> float:
        return self._writer.cpu

    def submit(self, tournament_id: str, record: GameRecord, set_id: str, bot_ids: Sequence[int]) -> None:
        # The record third: the writer names a game it cannot record by the item's third field.
        self._writer.submit(tournament_id, set_id, record, tuple(bot_ids))

    @property
    def backlog(self) -> int:
        """Games handed over and not yet on their way to the writer's process."""
        return self._writer.backlog

    def wait_for_room(self, limit: int) -> None:
        """Return once at most ``limit`` handed-over games wait for the writer (see
        :meth:`~arena.store.writer.StoreWriter.wait_for_room`)."""
        self._writer.wait_for_room(limit)

    def close(self) -> None:
        """Wait until every game handed over is recorded (or the writer has failed). Idempotent."""
        self._writer.close()

    def _frame(self, item: tuple[Any, ...]) -> tuple[str, NewGame, str, bytes]:
        tournament_id, set_id, record, bot_ids = item
        return (
            tournament_id, game_row(record, set_id, bot_ids, self._time), replay_relpath(record.game_id),
            encode_replay(record.replay),
        )


class _Closable(Protocol):
    def close(self) -> None: ...


async def finish_writing(writer: _Closable) -> None:
    """Close ``writer`` from a thread, shielded: every finished game reaches the store even
    when the caller is being cancelled (Ctrl-C, an error)."""
    with trio.CancelScope(shield=True):
        await trio.to_thread.run_sync(writer.close)


def commit_games(store: Store, games: Iterable[tuple[str, GameRecord, str, Sequence[int]]], time: TimeSettings) -> None:
    """The rows of games whose replay files are written (a killed run's, recovered from
    them), in one transaction: each ``(tournament id, record, set id, bot row id of each
    seat)``."""
    settings = time_dict(time)
    with store.batch():
        for tournament_id, record, set_id, bot_ids in games:
            store.add_game(game_row(record, set_id, bot_ids, settings), tournament_id)


# -- Ctrl-C and SIGTERM --------------------------------------------------------------------


@dataclass(slots=True)
class Interruption:
    """Whether a SIGINT or SIGTERM stopped the block of :func:`stop_on_signals`."""

    interrupted: bool = False


@asynccontextmanager
async def stop_on_signals(executor: Executor) -> AsyncIterator[Interruption]:
    """Run the block until it ends or the first SIGINT or SIGTERM: then every game and bot
    of ``executor`` ends at once (:meth:`~arena.executors.jobs.Executor.hurry`), the block
    is cancelled (its games in flight are abandoned, never reported) and the
    :class:`Interruption` it was given says so."""
    stop = Interruption()

    async def watch(scope: trio.CancelScope, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            task_status.started()  # the block starts once the signals are caught: no window for a KeyboardInterrupt
            async for _ in signals:
                stop.interrupted = True
                executor.hurry()  # every game and bot ends at once, not with a run's polite graces
                scope.cancel()
                return

    async with trio.open_nursery() as nursery:
        await nursery.start(watch, nursery.cancel_scope)
        yield stop
        nursery.cancel_scope.cancel()  # the block is done: stop watching
