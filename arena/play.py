"""`arena play`: one game among bots named on the command line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from arena.bots import BotError
from arena.bots.manifest import BotManifest, find_bot, prepare_bot
from arena.engine import GameConfig
from arena.errors import ArenaError
from arena.referee import GameRecord, TimeSettings, open_pool, play_game
from arena.replay import write_replay


@dataclass(frozen=True, slots=True)
class PlayOutcome:
    record: GameRecord
    replay_path: Path | None


def load_bots(paths: Sequence[Path]) -> list[BotManifest]:
    bots = []
    for path in paths:
        try:
            bots.append(find_bot(path))
        except BotError as exc:
            raise ArenaError(str(exc)) from None
    return bots


def play_one(
    bot_paths: Sequence[Path],
    config: GameConfig,
    seed: int,
    time_settings: TimeSettings,
    *,
    replay_path: Path | None,
    build_cache: Path,
) -> PlayOutcome:
    """Build (if needed) and start the bots, play one game, write its replay."""
    manifests = load_bots(bot_paths)
    if len(manifests) != config.players:
        raise ArenaError(f"{len(manifests)} bots given for a {config.players}-player game")
    specs = []
    for m in manifests:
        try:
            specs.append(prepare_bot(m, build_cache))
        except BotError as exc:
            raise ArenaError(str(exc)) from None

    async def run() -> GameRecord:
        async with open_pool() as pool:
            players = [
                pool.player(spec, version=m.version, content_hash=m.content_hash)
                for spec, m in zip(specs, manifests, strict=True)
            ]
            return await play_game(players, config, seed, time_settings=time_settings)

    record = trio.run(run)
    if replay_path is not None:
        write_replay(replay_path, record.replay)
    return PlayOutcome(record, replay_path)
