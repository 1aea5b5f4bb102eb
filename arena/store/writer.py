"""The tournament's one writer, in a process of its own: replay files and database rows.

Why a process and not a thread: the games are played by one Python thread, and a writer
thread in the same process takes the GIL for its Python work and again after each of its
system calls (a dozen per game: compressing, creating, writing and renaming the replay,
the SQLite statements), so the games kept waiting for it. Measured with instant bots on
a 2-CPU VM: a writer thread cost the games about 10% of their rate (store share 9–10%, or
10–17% on a loaded host, against 5–9% for this process in the same runs); here the games'
process only hands each game over (encoding its replay and row, one pipe write: about
45 µs a game, measured apart; the NewGame row is built on the handing-over thread).

The arena's side (:class:`StoreWriter`) turns each finished game into its database row
(:class:`~arena.store.database.NewGame`) and its replay's JSON, and sends both down a pipe as one
length-prefixed msgpack frame, from a thread, so that a slow disk never blocks the games.
The writer (``python -m arena.store.writer RESULTS``) writes each replay file as soon as
its game arrives (temporary name, then rename), and commits the rows of the games whose
replays are written in one transaction (a group commit) at most :data:`LINGER` seconds
after the first of them, or once :data:`BATCH` are waiting. It reports on its stdout, as
JSON lines: ``{"type": "error", "message": ...}`` for the first failure (it then records
nothing more), and ``{"type": "done", ...}`` with its totals before it exits.

A game already recorded as complete (or waiting for its commit here) is not written
again: its replay file stays the one of the play its row records.

The writer holds the results folder's lock (:func:`arena.store.lock.results_lock`) with the
arena: it inherits the arena's open lock file, so the lock is held until the writer too
has exited, and a next run cannot start while it still records a killed arena's games.

Nothing finished is lost when the arena dies: the writer ignores SIGINT and SIGTERM (a
Ctrl-C reaches the whole process group) and, when its input ends (the arena closed it,
or was killed), commits what it has and exits. A game whose replay is written but whose
row is not is recorded from its file by the next run (``_Run._recover``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import queue
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from arena.errors import ArenaError
from arena.store.database import NewGame
from arena.store.errors import disk_full, os_error_text
from arena.store.opening import open_store

__all__ = ["BATCH", "LINGER", "StoreWriter"]

#: At most this many games in one group commit.
BATCH = 32
#: A written game's row waits at most this long for others to share its commit.
LINGER = 0.05

#: The writer's niceness (added to the arena's).
NICE = 10

_ARENA_ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding the arena package
_HEADER = struct.Struct(">I")  # the length of the frame that follows
_Frame = tuple[str | None, NewGame, str, bytes]  # tournament id, row, replay path, replay JSON
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(_Frame).decode


class StoreWriter:
    """The arena's handle on the writer process (see the module's docstring).

    ``prepare(item)`` turns what :meth:`submit` was given into ``(tournament id, row,
    replay path relative to the results folder, replay JSON)``; it runs on this
    object's thread. :attr:`error` is set (an :class:`ArenaError`) once the writer has
    failed; :meth:`close` waits until everything submitted is recorded. ``lock_fd``,
    the results folder's held lock (:class:`arena.store.lock.ResultsLock`), is shared with the
    writer process, which then holds the lock as long as it lives."""

    def __init__(
        self, results: Path, prepare: Callable[[tuple[Any, ...]], _Frame], *, lock_fd: int | None = None
    ) -> None:
        self._prepare = prepare
        self.error: ArenaError | None = None
        self.busy = 0.0  # the writer's wall seconds spent writing (it overlaps the games)
        self.cpu = 0.0  # the writer's CPU seconds spent writing
        self.games = 0
        self._closed = False
        self._done = threading.Event()  # the writer has recorded everything, or is gone
        self._queue: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        # The same arena as this process's, whatever the current folder holds (-P: the
        # current folder is not on the writer's import path).
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (_ARENA_ROOT, env.get("PYTHONPATH"))))
        self._proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "arena.store.writer", str(results)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=() if lock_fd is None else (lock_fd,),
        )
        self._sender = threading.Thread(target=self._send_loop, name="arena-store-sender", daemon=True)
        self._sender.start()
        self._listener = threading.Thread(target=self._listen, name="arena-store-listener", daemon=True)
        self._listener.start()

    def submit(self, *item: Any) -> None:
        self._queue.put(item)

    @property
    def backlog(self) -> int:
        """Games submitted and not yet taken to be handed down the pipe (each holds its
        whole record, replay included, until then)."""
        return self._queue.qsize()

    def wait_for_room(self, limit: int) -> None:
        """Return once at most ``limit`` games wait to be handed down the pipe (at once
        unless the writer process is behind), or the writer has failed or is closed: the
        caller submits no faster than it records, so the games waiting stay few."""
        while self._queue.qsize() > limit and self.error is None and not self._done.is_set():
            time.sleep(0.005)

    def _fail(self, message: str) -> None:
        if self.error is None:
            self.error = ArenaError(message)

    def _send_loop(self) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            while (item := self._queue.get()) is not None:
                if self.error is not None:
                    continue  # the writer has stopped recording; the run is stopping
                try:
                    frame = _encode(self._prepare(item))
                except Exception as exc:  # noqa: BLE001 - reported with the game's id
                    self._fail(f"cannot record game {item[2].game_id}: {type(exc).__name__}: {exc}")
                    continue
                try:
                    stdin.write(_HEADER.pack(len(frame)) + frame)
                    stdin.flush()
                except OSError:
                    pass  # the writer is gone: the listener says why
        finally:
            with contextlib.suppress(OSError):
                stdin.close()  # the writer commits what it has, then exits

    def _listen(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        for line in stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("type") == "error":
                self._fail(str(msg.get("message")))
            elif msg.get("type") == "done":
                self.busy, self.cpu, self.games = msg["busy"], msg["cpu"], msg["games"]
                self._done.set()  # everything is recorded: close() need not wait for the exit
        code = self._proc.wait()
        if code != 0:
            tail = (self._proc.stderr.read() if self._proc.stderr else b"").decode(errors="replace").strip()
            self._fail(f"the store writer exited with status {code}" + (f": {tail.splitlines()[-1]}" if tail else ""))
        for pipe in (self._proc.stdout, self._proc.stderr):
            if pipe is not None:
                pipe.close()
        self._done.set()

    def close(self) -> None:
        """Wait until every submitted game is recorded (or the writer has failed).
        Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._sender.join()
        self._done.wait()  # its exit is reaped by the listener thread


# -- the writer process ---------------------------------------------------------------


class _Input:
    """Frames from a pipe, each waited for at most until a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()
        self.ended = False

    def next(self, deadline: float) -> bytes | None:
        """The next frame, or None if none is complete by ``deadline`` (or the input ended)."""
        while True:
            if len(self.buf) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(self.buf)
                if len(self.buf) >= _HEADER.size + size:
                    frame = bytes(self.buf[_HEADER.size : _HEADER.size + size])
                    del self.buf[: _HEADER.size + size]
                    return frame
            if self.ended:
                return None
            if deadline != math.inf:
                wait = deadline - time.monotonic()
                if wait <= 0 or not select.select([self.fd], [], [], wait)[0]:
                    return None
            data = os.read(self.fd, 1 << 20)
            if not data:
                self.ended = True
            self.buf += data


def _serve(results: Path) -> int:
    from arena.game.replay import write_replay_json

    with contextlib.suppress(OSError):
        os.nice(NICE)  # background work: the bots, whose thinking is timed, come first
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the arena's to handle
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the arena ends us by closing our input
    out = sys.stdout

    def say(**msg: Any) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    try:
        store = open_store(results, create=False, check=False)  # the arena checked it just now
    except ArenaError as exc:
        say(type="error", message=str(exc))
        return 0
    source = _Input(sys.stdin.fileno())
    written: list[_Frame] = []  # replay on disk, row not yet committed
    pending: set[str] = set()  # their ids
    due = math.inf
    failed = False
    busy = cpu = 0.0
    games = 0
    recorded = 0  # games whose rows are committed

    def stop(why: str) -> None:
        """Say why the run must stop (once), and what is safe: every game committed."""
        nonlocal failed
        say(
            type="error",
            message=f"{results}: {why}: the run stopped there; the {recorded} game(s) it recorded before are "
            "kept (once the cause is fixed, the same command plays the rest)",
        )
        failed = True

    def commit() -> None:
        nonlocal written, due, recorded
        try:
            with store.batch():
                for tid, row, _, _ in written:
                    store.add_game(row, tid)
            recorded += len(written)
        except Exception as exc:  # noqa: BLE001 - the run stops with it
            ids = ", ".join(row.id for _, row, _, _ in written[:3]) + (" …" if len(written) > 3 else "")
            if disk_full(exc):
                # Their replays are written: the next run records them from the files (once there is room).
                stop(f"the disk is full: cannot record games {ids}")
            elif isinstance(exc, ArenaError):  # (it names the file and what happened)
                stop(f"cannot record games {ids}: {exc}")
            else:
                stop(f"cannot record games {ids}: {type(exc).__name__}: {exc}")
        written, due = [], math.inf
        pending.clear()

    while True:
        frame = source.next(due)
        t, c = time.perf_counter(), time.process_time()
        if frame is not None and not failed:
            tid, row, rel, data = item = _decode(frame)
            try:
                if row.id in pending:
                    pass  # (the same game twice in one commit: the first play is the one recorded)
                elif store.is_complete(row.id):
                    # Recorded already: its file stays the replay of the recorded play.
                    if tid is not None:
                        store.link_games(tid, [row.id])
                else:
                    write_replay_json(results / rel, data, durable=False)
                    if not written:
                        due = time.monotonic() + LINGER
                    written.append(item)
                    pending.add(row.id)
                    games += 1
            except OSError as exc:
                if written:
                    commit()  # the games before this one are on disk: their rows first
                if disk_full(exc):
                    stop(f"the disk is full: cannot record game {row.id} ({exc.strerror or exc})")
                else:
                    stop(f"cannot record game {row.id}: its replay cannot be written: {os_error_text(exc)}")
            except ArenaError as exc:
                if written:
                    commit()
                stop(f"cannot record game {row.id}: {exc}")
        if written and (frame is None or failed or len(written) >= BATCH):
            commit()
        busy += time.perf_counter() - t
        cpu += time.process_time() - c
        if frame is None and source.ended:
            break
    store.close()
    say(type="done", busy=busy, cpu=cpu, games=games)
    sys.stdout.close()
    os._exit(0)  # nothing left to tear down: the arena need not wait for it


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m arena.store.writer RESULTS_FOLDER")
    sys.exit(_serve(Path(sys.argv[1])))
