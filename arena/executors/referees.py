"""Referee processes: the local executor's games played in processes of their own, one
per job at once, so that games use every core (one trio thread cannot).

A referee process (``python -m arena.executors.referee_process JOBS_FD RECORDS_FD``,
started by :class:`RefereeProcess`) runs its own trio loop and its own
:class:`~arena.executors.local.LocalExecutor` with its own bot processes, reused from game
to game under the same rule as in one process (a process never plays two games of one
deal, unless the run trusts its bots: ``--trusted-reuse``). It reads one
:class:`~arena.executors.jobs.GameJob` at a time (its seats by name, each bot's spec sent
the first time the process plays it) and answers with the
game's record and the CPU time it spent on it; the caller, the one arena process, keeps
everything else (the schedule, the store's one writer, the reporter). Both ends are arena
code: the frames are pickles, never anything a bot wrote; the record inside is msgspec's
JSON of it (as a cluster's game process sends it), not a pickle: a record that went
through a pickle encodes fields left at their defaults again (``"status":"ok"`` on every
action), and its replay file would not be the one the same game writes in one process.

Lifetimes: a referee process gets SIGKILL when the arena dies (parent-death signal) and
its bots get SIGKILL when it dies; it ignores SIGINT (the arena decides: a Ctrl-C at the
terminal reaches the arena, which tells its referees with SIGTERM); on SIGTERM it ends
its bots at once (the hurried graces) and exits; at the end of its jobs (its input
closed) it shuts its bots down politely. A referee process that dies with a game in
flight has that game reported void (nobody is blamed; the next run plays it again), never
lost or reported twice; what its bots left in their control groups is ended.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import pickle
import signal
import struct
import subprocess
import sys
import time
from typing import Any

import msgspec
import trio

from arena.bots._cgroup import sweep_gone_groups
from arena.bots._proctree import child_setup_hook
from arena.executors.jobs import GameJob, SeatBot
from arena.game.record import GameRecord

_HEADER = struct.Struct("!I")
#: A record is ~10-100 KB; a frame past this is a broken peer, not a game.
MAX_FRAME = 64 << 20
#: Seconds a referee process has to end its bots and exit once told to (SIGTERM or the
#: end of its input), before it is killed.
EXIT_GRACE = 5.0


_record_encoder = msgspec.json.Encoder()
_record_decoder = msgspec.json.Decoder(GameRecord)


def encode_record(record: GameRecord) -> bytes:
    """The record as a referee process sends it (see the module's docstring)."""
    return _record_encoder.encode(record)


def decode_record(data: bytes) -> GameRecord:
    """The record :func:`encode_record` sent: equal to it, and its replay encodes to the
    same bytes."""
    return _record_decoder.decode(data)


class RefereeGone(Exception):
    """The referee process ended (or broke its stream) before answering."""


async def _read_exactly(stream: trio.lowlevel.FdStream, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = await stream.receive_some(n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


async def read_frame(stream: trio.lowlevel.FdStream) -> Any:
    """The next object sent by :func:`write_frame`; None at the end of the stream."""
    head = await _read_exactly(stream, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    if size > MAX_FRAME:
        raise RefereeGone(f"a frame of {size} bytes")
    body = await _read_exactly(stream, size)
    if body is None:
        return None
    return pickle.loads(body)


async def write_frame(stream: trio.lowlevel.FdStream, obj: Any) -> None:
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    await stream.send_all(_HEADER.pack(len(body)) + body)


class RefereeProcess:
    """One referee process, seen from the arena: :meth:`play` one job at a time,
    :meth:`aclose` to end it. Started at once by the constructor (from the calling trio
    thread: the parent-death signal is tied to the thread that forks), it imports the
    arena while the caller goes on."""

    def __init__(self) -> None:
        jobs_r, jobs_w = os.pipe()
        records_r, records_w = os.pipe()
        try:
            self.popen = subprocess.Popen(
                [sys.executable, "-m", "arena.executors.referee_process", str(jobs_r), str(records_w)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=(jobs_r, records_w),
                start_new_session=True,  # a Ctrl-C at the terminal is the arena's to handle
                preexec_fn=child_setup_hook(os.getpid()),
            )
        except BaseException:
            for fd in (jobs_r, jobs_w, records_r, records_w):
                os.close(fd)
            raise
        os.close(jobs_r)
        os.close(records_w)
        self.pid = self.popen.pid
        self.pidfd = os.pidfd_open(self.pid)
        self._jobs = trio.lowlevel.FdStream(jobs_w)
        self._records = trio.lowlevel.FdStream(records_r)
        self.games = 0
        self._closed = False
        self._seats_sent: dict[str, SeatBot] = {}  # the bots the process knows, by name

    def terminate(self) -> None:
        """Tell the process to end its bots at once and exit (SIGTERM); no wait."""
        if self.popen.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)

    def describe_end(self) -> str:
        code = self.popen.poll()
        if code is None:
            return "its referee process broke its stream"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"its referee process (pid {self.pid}) was killed by {name}"
        return f"its referee process (pid {self.pid}) exited with status {code}"

    async def play(
        self, job: GameJob, processes_per_bot: int, *, trusted_reuse: bool = False
    ) -> tuple[GameRecord, float]:
        """The record of ``job`` and the process's CPU seconds for it, its bots reused as
        a :class:`~arena.executors.local.LocalExecutor` with these settings reuses them.
        Raises :class:`RefereeGone` if the process ended first."""
        await self.send(job, processes_per_bot, trusted_reuse=trusted_reuse)
        return await self.receive()

    async def send(self, job: GameJob, processes_per_bot: int, *, trusted_reuse: bool = False) -> None:
        """Hand ``job`` to the process, which plays its jobs in the order sent; its record
        is what the matching :meth:`receive` returns. A job sent while the process plays
        the one before starts as soon as that one ends, without waiting for this process
        to take in a record and send the next. Never raises: a process that is gone is
        reported by :meth:`receive`."""
        # Each bot's spec and manifest go once: a job names its seats (pickling them again
        # for every game was most of this process's CPU per game at --jobs 2).
        new = []
        for seat in job.seats:
            sent = self._seats_sent.get(seat.name)
            if sent is not seat and sent != seat:
                new.append(seat)
                self._seats_sent[seat.name] = seat
        frame = (
            dataclasses.replace(job, seats=()), tuple(s.name for s in job.seats), new, processes_per_bot, trusted_reuse
        )
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await write_frame(self._jobs, frame)

    async def receive(self) -> tuple[GameRecord, float]:
        """The record of the earliest job sent and not yet received, and the process's CPU
        seconds for it. Raises :class:`RefereeGone` if the process ended first."""
        try:
            answer = await read_frame(self._records)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError, pickle.UnpicklingError, EOFError):
            answer = None  # the process is gone or broke the stream: say which
        if answer is None:
            await self._wait(EXIT_GRACE)
            raise RefereeGone(self.describe_end())
        data, cpu = answer
        self.games += 1
        return decode_record(data), cpu

    async def _wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the process to exit (and reap it)."""
        with trio.move_on_after(timeout):
            await trio.lowlevel.wait_readable(self.pidfd)
        if self.popen.poll() is None:
            return False
        return True

    async def aclose(self, *, hurried: bool = False) -> None:
        """End the process: politely (its input closed: it shuts its bots down), or
        ``hurried`` (SIGTERM: its bots end at once); killed if it takes longer than
        :data:`EXIT_GRACE`. Whatever its bots left behind is ended too."""
        if self._closed:
            return
        self._closed = True
        with trio.CancelScope(shield=True):
            if hurried:
                self.terminate()
            with contextlib.suppress(trio.ClosedResourceError, OSError):
                await self._jobs.aclose()
            if not await self._wait(EXIT_GRACE):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                await self._wait(math.inf)
            with contextlib.suppress(OSError):
                await self._records.aclose()
            os.close(self.pidfd)
            if self.popen.returncode != 0:  # killed: its bots' groups may hold what outlived them
                await trio.to_thread.run_sync(sweep_gone_groups)
