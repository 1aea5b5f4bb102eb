"""`arena bench cluster`: the same tournament played locally with ``--jobs 2`` and on a
LocalCluster with ``--cluster local:2``, side by side, and what going through Dask
costs per game.

The bots are the instant C bots of :mod:`arena.bench.tournament` (six folders, 4-player
games), so that what is measured is the arena, not the bots. Both runs play the same
schedule into fresh results folders; games/s is measured over the play phase (from the
moment the run reports its plan, i.e. after the cluster is up, to the last game). The
cluster path's extra cost per game is given in *slot-milliseconds* (a slot being one
game at a time: 2 here on both sides), split into what was measured apart on this
machine: a Dask task's round trip through the scheduler and a worker (no-op tasks on a
LocalCluster of the same shape), the start of the game process (forked by the worker's
zygote, which holds the arena's imports), and the rest, mostly starting each game's
bots afresh where the local run reuses them. Also reported: the
CPU time per game of the arena process itself on the cluster side (the Dask client,
the one writer and, for a LocalCluster, the scheduler, which runs in that process),
which bounds how many games per second one arena can drive.
"""

from __future__ import annotations

import shutil
import socket
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from arena.bench.tournament import BOTS, GAMES_PER_DEAL, PLAYERS, make_instant_bots
from arena.errors import ArenaError
from arena.game.players import TimeSettings
from arena.tournament.progress import SilentReporter
from arena.tournament.runner import run_tournament
from arena.tournament.settings import RunSettings

SLOTS = 2  # --jobs 2 and local:2 (one seat per worker on 2 cores: one game each)


@dataclass(frozen=True, slots=True)
class ClusterBench:
    games: int  # per side
    local_games_per_s: float  # --jobs 2
    cluster_games_per_s: float  # --cluster local:2
    cluster_setup_s: float  # starting the LocalCluster and checking its workers, before the first game
    overhead_ms_per_game: float  # slot-ms a game costs more on the cluster
    dask_task_ms: float  # slot-ms of one no-op task through the scheduler and a worker
    game_process_ms: float  # wall ms to fork a game process from a zygote and hear from it
    bots_and_rest_ms: float  # the remainder: fresh bot processes per game, result transfer, decoding
    coordinator_cpu_ms: float  # CPU ms per game of the arena process (client, writer, in-process scheduler)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


class _Clock(SilentReporter):
    """When the play phase started (the plan is reported) and when the last game ended."""

    def __init__(self) -> None:
        self.start = self.planned_at = self.last = 0.0
        self.cpu_planned = self.cpu_last = 0.0
        self.games = 0

    def planned(self, plan: Any) -> None:
        self.planned_at = time.monotonic()
        self.cpu_planned = time.process_time()

    def game_done(self, game: Any, record: Any, done: int, total: int) -> None:
        self.games += 1
        self.last = time.monotonic()
        self.cpu_last = time.process_time()


def bench_cluster(deals: int = 1) -> ClusterBench:
    """Play ``deals`` × 60 four-player games locally (2 jobs), then on ``local:2``."""
    from arena.executors.cluster import require_dask

    require_dask()
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-cluster-"))
    try:
        bots = make_instant_bots(folder, BOTS)
        clocks: dict[str, _Clock] = {}
        for side, cluster in (("local", None), ("cluster", f"local:{SLOTS}")):
            clock = _Clock()
            clock.start = time.monotonic()
            summary = run_tournament(
                RunSettings(
                    bots_dir=bots,
                    results=folder / f"results-{side}",
                    players=PLAYERS,
                    deals=deals,
                    jobs=SLOTS if cluster is None else None,
                    cluster=cluster,
                    time=TimeSettings(hello_ms=30_000, turn_ms=10_000, bank_ms=60_000),
                ),
                clock,
            )
            if summary.void or summary.played != deals * GAMES_PER_DEAL:
                raise ArenaError(f"bench cluster ({side}): {summary.played} games played, {summary.void} void: {summary.void_reasons[:1]}")
            clocks[side] = clock
        task_ms = _dask_task_ms()
        process_ms = _game_process_ms()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    local, cluster = clocks["local"], clocks["cluster"]
    local_rate = local.games / (local.last - local.planned_at)
    cluster_rate = cluster.games / (cluster.last - cluster.planned_at)
    overhead = 1000 * SLOTS * (1 / cluster_rate - 1 / local_rate)
    return ClusterBench(
        games=cluster.games,
        local_games_per_s=local_rate,
        cluster_games_per_s=cluster_rate,
        cluster_setup_s=(cluster.planned_at - cluster.start) - (local.planned_at - local.start),
        overhead_ms_per_game=overhead,
        dask_task_ms=task_ms,
        game_process_ms=process_ms,
        bots_and_rest_ms=overhead - task_ms - process_ms,
        coordinator_cpu_ms=1000 * (cluster.cpu_last - cluster.cpu_planned) / cluster.games,
    )


def _noop(i: int) -> int:
    return i


def _dask_task_ms(tasks: int = 400) -> float:
    """Slot-ms per no-op task on a LocalCluster shaped like ``local:2``, tasks asking
    for a seat as games do."""
    import logging

    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=SLOTS, threads_per_worker=1, resources={"seats": 1}, dashboard_address=None, silence_logs=logging.ERROR) as cluster,
        Client(cluster, set_as_default=False) as client,
    ):
        client.gather([client.submit(_noop, i, resources={"seats": 1}, pure=False) for i in range(20)])  # warm up
        t = time.perf_counter()
        client.gather([client.submit(_noop, i, resources={"seats": 1}, pure=False) for i in range(tasks)])
        return 1000 * SLOTS * (time.perf_counter() - t) / tasks


def _game_process_ms(runs: int = 20) -> float:
    """Median wall ms from asking a worker's zygote for a game process to its answer, for
    a job it rejects at once: the fork, the connection, the reply (the zygote itself
    starts once per worker process, before the first game, and is not counted)."""
    from arena.executors.cluster_task import zygote

    def once() -> float:
        t = time.perf_counter()
        with zygote().connect() as conn:
            conn.shutdown(socket.SHUT_WR)
            while conn.recv(1 << 16):
                pass
        return 1000 * (time.perf_counter() - t)

    once()  # starts the zygote
    return statistics.median(once() for _ in range(runs))
