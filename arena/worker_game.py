"""One game in a process of its own: ``python -m arena.worker_game`` (what a cluster
worker runs for each game; see :mod:`arena.cluster_task`).

It reads a :class:`GameJob` (JSON) on stdin, builds the bots it names if they have a
build step (once per content hash and machine, under a file lock, since several games
start at once), plays the game exactly as a local run would (:func:`play_game`, the
same time settings, seed and game id) and writes the :class:`GameRecord` (JSON) on
stdout. Its bots are its children: they end with the game, and with this process if
it is killed (parent-death signal), so a game never outlives the task that asked
for it. Exit status 0 means an outcome was written (a void game included); anything
else is a failure of this machine, explained on stderr.
"""

from __future__ import annotations

import fcntl
import sys
from pathlib import Path
from typing import Any

import msgspec
import trio

from arena.bots import BotError, BotSpec
from arena.bots.manifest import BotManifest, find_bot, prepare_bot
from arena.bots.sandbox import SandboxSettings, resolve_level
from arena.engine import GameConfig, Variant
from arena.referee import GameRecord, TimeSettings, open_pool, play_game


class SeatBot(msgspec.Struct, frozen=True):
    """A bot as the game process finds it: already unpacked at ``path``."""

    name: str
    path: str  # the bot's file or folder on this machine
    content_hash: str


class GameJob(msgspec.Struct, kw_only=True):
    game_id: str
    seed: int
    players: int
    variant: str
    time: dict[str, Any]  # arena.referee.time_dict of the run's TimeSettings
    seats: list[SeatBot]
    build_cache: str  # where bots with a build step are built, on this machine
    sandbox: SandboxSettings | None = None  # the run's: the level and the caps on each bot's limits


_record_decoder = msgspec.json.Decoder(GameRecord)


def decode_record(data: bytes) -> GameRecord:
    """The :class:`GameRecord` a game process wrote (msgspec encodes the dataclass,
    its config and its replay as they are: the wire follows the record's fields)."""
    return _record_decoder.decode(data)


def prepare_locked(manifest: BotManifest, build_cache: Path, sandbox: SandboxSettings | None) -> BotSpec:
    """:func:`prepare_bot`, with other processes of this machine kept out while it
    builds: two games starting at once must not build the same bot into one folder."""
    if manifest.build is None:
        return prepare_bot(manifest, build_cache, sandbox)
    build_cache.mkdir(parents=True, exist_ok=True)
    with open(build_cache / f"{manifest.name}-{manifest.content_hash}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return prepare_bot(manifest, build_cache, sandbox)


async def play(job: GameJob) -> GameRecord:
    config = GameConfig(job.players, Variant(job.variant))
    time_settings = TimeSettings(**job.time)
    specs: dict[str, tuple[BotSpec, BotManifest]] = {}
    for seat in job.seats:
        if seat.name not in specs:
            manifest = find_bot(Path(seat.path))
            if manifest.name != seat.name or manifest.content_hash != seat.content_hash:
                raise BotError(
                    f"bot {seat.name}: {seat.path} holds {manifest.name!r} with content hash {manifest.content_hash}, "
                    f"not {seat.content_hash}"
                )
            spec = await trio.to_thread.run_sync(prepare_locked, manifest, Path(job.build_cache), job.sandbox)
            specs[seat.name] = (spec, manifest)
    async with open_pool() as pool:
        players = [
            pool.player(specs[s.name][0], version=specs[s.name][1].version, content_hash=s.content_hash)
            for s in job.seats
        ]
        return await play_game(players, config, job.seed, time_settings=time_settings, game_id=job.game_id)


def main() -> int:
    try:
        job = msgspec.json.decode(sys.stdin.buffer.read(), type=GameJob)
    except msgspec.DecodeError as exc:
        print(f"arena.worker_game: not a game job: {exc}", file=sys.stderr)
        return 2
    if job.sandbox is not None:
        try:  # a sandbox this machine cannot provide fails the game here, not each bot
            resolve_level(job.sandbox.level)
        except ValueError as exc:
            print(f"game {job.game_id}: {exc}", file=sys.stderr)
            return 3
    try:
        record = trio.run(play, job)
    except BotError as exc:  # a bot that cannot be built or found here
        print(f"game {job.game_id}: {exc}", file=sys.stderr)
        return 3
    sys.stdout.buffer.write(msgspec.json.encode(record))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
