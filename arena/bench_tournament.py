"""`arena bench tournament`: whole tournaments of instant compiled bots, so that what is
measured is the arena (schedule, referee, store, replays), not the bots.

Six copies of the instant C bot of :mod:`arena.bench_referee` (each its own bot
folder, so six distinct bots) play 4-player round-robins into a fresh results folder,
once with ``--jobs 1`` and once with ``--jobs 2``, in the same run. Reported: games/s
of each (the play phase only, after every bot's start), the scaling between them, and
the store's cost: the CPU time of the writer thread (replay encoding and file, database
transaction) per game and as a share of the arena process's CPU time while the games
ran. CPU time, not wall time: the writer runs beside the games, and its wall time
mostly measures waiting for the GIL and the disk, which the games do not wait for.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from arena.bench_referee import compile_instant_bot
from arena.errors import ArenaError
from arena.referee import TimeSettings
from arena.store import open_store
from arena.tournament import RunSettings, run_tournament

BOTS = 6
PLAYERS = 4
GAMES_PER_DEAL = math.comb(BOTS, PLAYERS) * PLAYERS  # every table under every rotation


@dataclass(frozen=True, slots=True)
class TournamentBench:
    games: int  # per jobs setting
    games_per_s: float  # with --jobs 2
    games_per_s_jobs1: float
    scaling: float  # games/s with 2 jobs ÷ with 1
    store_ms_per_game: float  # writer CPU ms per game, with --jobs 2
    store_share: float  # writer CPU ÷ arena CPU during play, with --jobs 2
    store_share_jobs1: float
    store_wall_ms_per_game: float  # the writer's wall time per game (it overlaps the games)
    arena_cpu_ms_per_game: float  # the arena process's CPU per game (referee + writer), --jobs 2
    bots_cpu_ms_per_game: float | None  # the four bots' CPU per game, as the sandbox measured it
    store_share_of_all: float | None  # writer CPU ÷ (arena CPU + bots' CPU): the store's share of all the work

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def make_instant_bots(folder: Path, n: int) -> Path:
    """``folder/bots`` holding ``n`` distinct bots (``instant0``…), each a copy of the
    instant C bot compiled once into ``folder``; returns the bots folder."""
    exe = compile_instant_bot(folder)
    bots = folder / "bots"
    for i in range(n):
        d = bots / f"instant{i}"
        d.mkdir(parents=True)
        shutil.copy2(exe, d / "instant")
        (d / "bot.toml").write_text(f'name = "instant{i}"\nversion = "1"\nrun = ["./instant"]\n', encoding="utf-8")
    return bots


def bench_tournament(games: int = 240) -> TournamentBench:
    """Play about ``games`` 4-player games (whole duplicate sets) with 1 then 2 jobs."""
    deals = max(1, round(games / GAMES_PER_DEAL))
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-tournament-"))
    try:
        bots = make_instant_bots(folder, BOTS)
        runs = {}
        for jobs in (1, 2):
            settings = RunSettings(
                bots_dir=bots,
                results=folder / f"results-{jobs}",
                players=PLAYERS,
                deals=deals,
                jobs=jobs,
                time=TimeSettings(hello_ms=30_000, turn_ms=10_000, bank_ms=60_000),
            )
            summary = run_tournament(settings)
            if summary.void or summary.played != deals * GAMES_PER_DEAL:
                raise ArenaError(f"bench tournament: {summary.played} games played, {summary.void} void: {summary.void_reasons[:1]}")
            runs[jobs] = summary
            with open_store(settings.results, create=False) as store:
                measured = [s.cpu_ms for g in store.games() for s in g.seats]
            bots_cpu = sum(measured) / summary.played if measured and None not in measured else None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    one, two = runs[1], runs[2]
    rate1 = one.played / one.play_seconds
    rate2 = two.played / two.play_seconds
    return TournamentBench(
        games=two.played,
        games_per_s=rate2,
        games_per_s_jobs1=rate1,
        scaling=rate2 / rate1,
        store_ms_per_game=1000 * two.store_cpu_seconds / two.played,
        store_share=two.store_cpu_seconds / two.play_cpu_seconds,
        store_share_jobs1=one.store_cpu_seconds / one.play_cpu_seconds,
        store_wall_ms_per_game=1000 * two.store_seconds / two.played,
        arena_cpu_ms_per_game=1000 * two.play_cpu_seconds / two.played,
        bots_cpu_ms_per_game=bots_cpu,
        store_share_of_all=(
            None if bots_cpu is None else two.store_cpu_seconds / (two.play_cpu_seconds + bots_cpu * two.played / 1000)
        ),
    )
