"""The referee process: ``python -m arena.executors.referee_process JOBS_FD RECORDS_FD``,
started by :class:`arena.executors.referees.RefereeProcess` (see that module for what it
does and how it ends)."""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import sys
import time

import trio

from arena.executors.jobs import SeatBot
from arena.executors.local import open_local_executor
from arena.executors.referees import encode_record, read_frame, write_frame


async def serve(jobs_fd: int, records_fd: int) -> None:
    """Play the jobs read from ``jobs_fd`` one at a time, answering each on ``records_fd``,
    until the input ends or SIGTERM."""
    inbox = trio.lowlevel.FdStream(jobs_fd)
    outbox = trio.lowlevel.FdStream(records_fd)
    async with open_local_executor() as local, trio.open_nursery() as nursery:

        async def on_sigterm() -> None:
            with trio.open_signal_receiver(signal.SIGTERM) as signals:
                async for _ in signals:
                    local.hurry()  # its bots end at once, as the pool closes
                    nursery.cancel_scope.cancel()
                    return

        nursery.start_soon(on_sigterm)
        seats: dict[str, SeatBot] = {}  # each bot is sent once, then named (see RefereeProcess.play)
        cpu0 = time.process_time()
        while (message := await read_frame(inbox)) is not None:
            slim, names, new_seats, processes_per_bot, trusted_reuse = message
            seats.update((seat.name, seat) for seat in new_seats)
            job = dataclasses.replace(slim, seats=tuple(seats[name] for name in names))
            local.processes_per_bot = processes_per_bot
            local.trusted_reuse = trusted_reuse
            data = encode_record(await local.play_one(job))
            cpu = time.process_time()
            await write_frame(outbox, (data, cpu - cpu0))
            cpu0 = cpu
        nursery.cancel_scope.cancel()  # the input ended: stop watching for SIGTERM


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not all(a.isdigit() for a in argv):
        print("usage: python -m arena.executors.referee_process JOBS_FD RECORDS_FD (started by the arena)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the arena decides when to stop
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        trio.run(serve, int(argv[0]), int(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
