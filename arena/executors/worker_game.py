"""One game in a process of its own (what a cluster worker runs for each game; see
:mod:`arena.executors.cluster_task`), forked by the worker's zygote (:func:`serve`, started as
``python -m arena.executors.worker_game --zygote``).

A game process reads a :class:`ProcessJob` (JSON), builds the bots it names if they have a
build step (once per content hash and machine, under a file lock, since several games
start at once), plays the game exactly as a local run would (:func:`play_game`, the
same time settings, seed, card labelling and game id, in a fresh process per bot) and
writes the :class:`GameRecord` (JSON). Its
bots are its children: they end with the game, and with this process if it is killed
(parent-death signal), so a game never outlives the worker that asked for it. Status 0
means a record was written (a void game included); anything else is a failure of this
machine, and the reason is written instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import socket
import sys
from pathlib import Path, PurePath
from typing import Any

import msgspec
import trio

from arena.bots import BotError, BotSpec
from arena.bots._proctree import child_setup_hook
from arena.bots.build import build_in_thread
from arena.bots.manifest import BotManifest
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import SandboxSettings
from arena.bots.strict import resolve_level
from arena.engine import GameConfig, Variant
from arena.game.players import TimeSettings, open_pool
from arena.game.referee import play_game
from arena.game.record import GameRecord


class ProcessJob(msgspec.Struct, kw_only=True):
    """What a game process is sent: a game job with each seat's bot as unpacked on this
    machine (the Dask executor's :class:`~arena.executors.jobs.GameJob` once on a worker)."""

    game_id: str
    seed: int
    ids: int | None = None  # the game's card labelling (arena.game.referee.play_game's ids)
    players: int
    variant: str
    time: dict[str, Any]  # arena.game.ids.time_dict of the run's TimeSettings
    seats: list[BotManifest]  # each seat's bot, already unpacked (and checked) on this machine
    build_cache: str  # where bots with a build step are built, on this machine
    sandbox: SandboxSettings | None = None  # the run's: the level and the caps on each bot's limits


_record_decoder = msgspec.json.Decoder(GameRecord)


def _enc_path(obj: Any) -> Any:
    if isinstance(obj, PurePath):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


def _dec_path(kind: type, obj: Any) -> Any:
    if kind is Path:
        return Path(obj)
    raise NotImplementedError(f"cannot decode {kind}")


_job_encoder = msgspec.json.Encoder(enc_hook=_enc_path)
_job_decoder = msgspec.json.Decoder(ProcessJob, dec_hook=_dec_path)


def encode_job(job: ProcessJob) -> bytes:
    return _job_encoder.encode(job)




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


async def play(job: ProcessJob) -> GameRecord:
    config = GameConfig(job.players, Variant(job.variant))
    time_settings = TimeSettings(**job.time)
    specs: dict[str, BotSpec] = {}
    for manifest in job.seats:
        if manifest.name not in specs:
            specs[manifest.name] = await build_in_thread(prepare_locked, manifest, Path(job.build_cache), job.sandbox)
    async with open_pool() as pool:
        players = [pool.player(specs[m.name], version=m.version, content_hash=m.content_hash) for m in job.seats]
        return await play_game(
            players, config, job.seed, time_settings=time_settings, game_id=job.game_id, ids=job.ids
        )


def run_job(data: bytes) -> tuple[int, bytes]:
    """Play the game of a job given as JSON: ``(0, the record as JSON)``, or a nonzero
    status and the reason (2: not a job; 3: this machine cannot play it)."""
    try:
        job = _job_decoder.decode(data)
    except msgspec.DecodeError as exc:
        return 2, f"arena.executors.worker_game: not a game job: {exc}".encode()
    if job.sandbox is not None:
        try:  # a sandbox this machine cannot provide fails the game here, not each bot
            resolve_level(job.sandbox.level)
        except ValueError as exc:
            return 3, f"game {job.game_id}: {exc}".encode()
    try:
        record = trio.run(play, job)
    except BotError as exc:  # a bot that cannot be built or found here
        return 3, f"game {job.game_id}: {exc}".encode()
    return 0, msgspec.json.encode(record)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] != "--zygote" or not (argv[1].isdigit() and argv[2].isdigit()):
        print("usage: python -m arena.executors.worker_game --zygote LISTEN_FD ALIVE_FD (started by a cluster worker)", file=sys.stderr)
        return 2
    return serve(int(argv[1]), int(argv[2]))


# -- the zygote: one per worker process, forking a game process per game ------------------


def serve(listen_fd: int, alive_fd: int) -> int:
    """The loop of ``python -m arena.executors.worker_game --zygote LISTEN_FD ALIVE_FD``.

    Started once per worker process (see :mod:`arena.executors.cluster_task`), with the arena
    already imported, it forks one game process per connection on the listening
    socket, so that a game starts in milliseconds instead of paying for an interpreter
    and its imports. It never runs trio or a thread itself (forking is safe). It exits
    when ``ALIVE_FD`` (a pipe whose other end only the worker holds) reaches its end,
    i.e. when the worker is gone; each game process gets SIGKILL then (parent-death
    signal), and its bots with it.

    On a connection: the game process writes its pid and a newline at once, reads the
    job (JSON) until the other side shuts its writing down, plays it, and writes its
    status, a newline and the payload of :func:`run_job`, then closes."""
    listener = socket.socket(fileno=listen_fd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps finished games
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the worker decides when to stop
    zygote = os.getpid()
    path = listener.getsockname()
    while True:
        ready, _, _ = select.select([listener, alive_fd], [], [])
        if alive_fd in ready:
            with contextlib.suppress(OSError):  # its private folder (see arena.executors.cluster_task)
                os.unlink(path)
                os.rmdir(os.path.dirname(path))
            return 0
        try:
            conn, _ = listener.accept()
        except OSError:
            continue
        if os.fork() == 0:  # the game process
            code = 70
            try:
                listener.close()
                os.close(alive_fd)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # it waits for its bots
                signal.signal(signal.SIGINT, signal.default_int_handler)  # bots get what they would locally
                os.setsid()
                hook = child_setup_hook(zygote)  # SIGKILL when the zygote dies
                if hook is not None:
                    hook()
                code = _serve_game(conn)
            finally:
                os._exit(code)
        conn.close()


def _serve_game(conn: socket.socket) -> int:
    with conn:
        conn.sendall(f"{os.getpid()}\n".encode())
        chunks = []
        while chunk := conn.recv(1 << 16):
            chunks.append(chunk)
        status, payload = run_job(b"".join(chunks))
        conn.sendall(f"{status}\n".encode() + payload)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
