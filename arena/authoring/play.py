"""`arena play`: one game among bots named on the command line, or a person (``human``)
and bots."""

from __future__ import annotations

import signal
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import trio

from arena.authoring.human import HUMAN, find_terminal, human_spec
from arena.bots import BotError, BotSpec, lone_errors_unwrapped
from arena.bots.manifest import BotManifest, find_bot
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import SandboxSettings
from arena.engine import GameConfig
from arena.errors import ArenaError
from arena.game.deals import keyed_digest
from arena.game.players import TimeSettings, open_pool
from arena.game.referee import play_game
from arena.game.record import GameRecord
from arena.game.replay import write_replay
from arena.text import plural

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PlayOutcome:
    record: GameRecord
    replay_path: Path | None


def run_interruptible(main: Callable[[], Awaitable[T]]) -> T:
    """``trio.run(main)``, where SIGINT (Ctrl-C) or SIGTERM cancels ``main`` (its bot pool
    ends every bot process as it closes) and then raises KeyboardInterrupt. Off the main
    thread, where signals cannot be received, it is plain ``trio.run``."""
    if threading.current_thread() is not threading.main_thread():
        return trio.run(main)
    got: list[int] = []

    async def watched() -> T | None:
        # lone_errors_unwrapped: main()'s own error (an ArenaError...) comes out as
        # itself, not inside the group a nursery makes of it (trio >= 0.25).
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals, lone_errors_unwrapped():
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    async for signum in signals:
                        got.append(signum)
                        nursery.cancel_scope.cancel()
                        return

                nursery.start_soon(watch)
                value = await main()
                nursery.cancel_scope.cancel()
                return value
        return None

    value = trio.run(watched)
    if got:
        raise KeyboardInterrupt(signal.Signals(got[0]).name)
    return value  # type: ignore[return-value]


def load_bots(paths: Sequence[Path]) -> list[BotManifest]:
    bots = []
    for path in paths:
        try:
            bots.append(find_bot(path))
        except BotError as exc:
            raise ArenaError(str(exc)) from None
    return bots


def is_human(bot: str | Path) -> bool:
    """Whether a BOT argument seats a person: the word ``human`` as typed (a bot folder
    of that name is still reachable as ``./human``)."""
    return isinstance(bot, str) and bot == HUMAN


@dataclass(frozen=True, slots=True)
class _Seat:
    spec: BotSpec
    version: str = ""
    content_hash: str = ""
    untimed: bool = False


def keyed_game(key: bytes, seed: int, config: GameConfig) -> tuple[int, int]:
    """The deal seed and the card labelling (:func:`arena.game.referee.play_game`'s ``seed`` and
    ``ids``) of the single game ``seed`` of ``config`` under the deal key ``key``: the same
    key and seed give the same game, and without the key no bot can tell its deal."""
    parts = (seed, config.players, config.variant.value)
    deal = int.from_bytes(keyed_digest(key, "play", *parts)[:8], "big") >> 1
    ids = int.from_bytes(keyed_digest(key, "play-ids", *parts)[:8], "big") >> 1
    return deal, ids


def play_one(
    bots: Sequence[str | Path],
    config: GameConfig,
    seed: int,
    time_settings: TimeSettings,
    *,
    replay_path: Path | None,
    build_cache: Path,
    sandbox: SandboxSettings | None = None,
    key: bytes | None = None,
) -> PlayOutcome:
    """Build (if needed) and start the bots, play one game, write its replay.

    With a deal ``key`` (the CLI passes the results store's, or a fresh random one), the
    game's deal and card ids are keyed hashes of ``seed`` (:func:`keyed_game`); without one,
    ``seed`` is the deal seed itself, as :func:`arena.game.referee.play_game` takes it.

    A BOT given as the string ``"human"`` seats the person at this terminal, with no
    time limit; there can be one such seat, and there must be a terminal (else
    :class:`ArenaError` at once, before any bot starts). ``sandbox`` confines the bots
    (not the person's seat); None: not at all."""
    humans = sum(1 for b in bots if is_human(b))
    if humans > 1:
        raise ArenaError("only one human seat per game: every seat would show its hand on the same terminal")
    if len(bots) != config.players:
        raise ArenaError(f"{plural(len(bots), 'bot')} given for a {config.players}-player game")
    deal, ids = keyed_game(key, seed, config) if key is not None else (seed, None)
    terminal = find_terminal() if humans else ""
    manifests = load_bots([Path(b) for b in bots if not is_human(b)])
    seats: list[_Seat] = []
    loaded = iter(manifests)
    for bot in bots:
        if is_human(bot):
            seats.append(_Seat(human_spec(terminal), untimed=True))
            continue
        m = next(loaded)
        try:
            seats.append(_Seat(prepare_bot(m, build_cache, sandbox), m.version, m.content_hash))
        except BotError as exc:
            raise ArenaError(str(exc)) from None

    async def game() -> GameRecord:
        async with open_pool() as pool:
            players = [
                # A person's seat (untimed) may leave the table: that is resigning, not crashing.
                pool.player(
                    s.spec, version=s.version, content_hash=s.content_hash, untimed=s.untimed, may_resign=s.untimed
                )
                for s in seats
            ]
            return await play_game(players, config, deal, time_settings=time_settings, ids=ids)

    record = run_interruptible(game)
    if replay_path is not None:
        write_replay(replay_path, record.replay)
    return PlayOutcome(record, replay_path)
