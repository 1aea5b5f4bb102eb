"""`arena bench tournament`: whole tournaments of instant compiled bots, so that what is
measured is the arena (schedule, referee, store, replays), not the bots.

Six copies of the instant C bot of :mod:`arena.bench.referee` (each its own bot
folder, so six distinct bots) play 4-player round-robins, each into a fresh results
folder, in the configurations of :data:`CONFIGS` interleaved over several rounds of the
same run (so that all see the same machine load): short runs (one deal of every table, 60
games, by default) with ``--jobs 1``, ``--jobs 2``, and ``--jobs 2`` recording nothing
(the baseline for the store's cost), each with the fairness rule in force (a bot process
never plays a deal twice: fresh processes where it requires them); the same two job
counts with ``--trusted-reuse`` (one process per bot per job, every game); and both of
those again in long runs (:data:`LONG_DEALS` deals), where the processes a run starts are
amortised as in a league. Reported, from the play phase only (after every bot's start):

- games/s of each, and the scaling from 1 job to 2 (with 2 jobs, each plays in a
  referee process of its own: see :mod:`arena.executors.referees`);
- the arena's CPU per game with 1 job and with 2 (its referee processes included, the
  bots not), and what each process costs a game: the run's own process (``main_``),
  the referee processes (``referee_``), the store's writer (``store_``) and the four
  bots (``bots_``, as their sandbox measured them), with 1 job (``…_jobs1``) and with 2;
- ``bot_start_ms``: the CPU time (the arena's and the bot's) of starting one instant
  bot's process, to its hello reply, and ending it, in the sandbox the tournaments use,
  timed before them: what each process a run starts costs it. A bot process never plays
  two games of one duplicate set, so each bot keeps one process per game of a set, per
  process playing games; steady play restarts none (each plays one game of every set),
  so this is a cost per run, not per game;
- ``store_share``: the share of the run's time the store costs, ``1 - (games/s
  recorded) / (games/s unrecorded)`` with 2 jobs; it is what a user waits for it;
- the writer's CPU per game (replay compression and file, database transaction; the
  writer is a process of its own, see :mod:`arena.store.writer`), and as a share of the
  arena's CPU, the writer's included (``store_cpu_share``): its cost even where a spare
  core hides it;
- ``file_create_us``: what creating one empty file costs in the scratch folder, timed
  before the games (every recorded game creates one: its replay).
- ``scaling_trusted``, ``scaling_long``, ``scaling_long_trusted``: the scaling from 1
  job to 2 of the other runs, and ``modes``: each recorded configuration's games/s and
  CPU ms per game (the arena's, the bots'), from which what each mode costs a game;
  ``cpu_scaling``: the scaling from those CPU figures, 2 × CPU per game with 1 job ÷ with
  2, what two otherwise idle cores would give (games/s depend on what else runs).

The results folders are made in a scratch folder (removed afterwards) on the disk where a
run's results would go: by default a hidden folder in the current directory, the folder of
the default ``results/``; ``scratch`` picks another (the system's temporary folder if the
current directory cannot be written). Where matters: on the 2-CPU VM these figures come
from, creating a file took from 10 µs to 450 µs depending on the folder (same ext4 disk;
the slow folders changed from hour to hour), and at 450 µs a file it is most of the
store's cost; ``file_create_us`` says which case a run was in.
"""

from __future__ import annotations

import math
import os
import resource
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import trio

from arena.bench.referee import compile_instant_bot
from arena.bots.manifest import find_bot
from arena.bots.prepare import prepare_bot
from arena.errors import ArenaError
from arena.game.players import TimeSettings, open_pool
from arena.store.opening import open_store
from arena.tournament.runner import run_tournament
from arena.tournament.settings import RunSettings, default_sandbox

BOTS = 6
PLAYERS = 4
GAMES_PER_DEAL = math.comb(BOTS, PLAYERS) * PLAYERS  # every table under every rotation
#: Deals of a long run: 600 games, in which the ~30 bot processes a run starts under the
#: fairness rule (each bot keeps one per game of a set it may play at once) cost ~1 ms a
#: game instead of ~10 (at ~20 ms a start), as in a league's runs of thousands of games.
LONG_DEALS = 10


@dataclass(frozen=True, slots=True)
class TournamentBench:
    games: int  # per configuration, over every round
    rounds: int
    scratch: str  # the folder the results folders were made in
    file_create_us: float  # creating one empty file there
    games_per_s: float  # with --jobs 2
    games_per_s_jobs1: float
    games_per_s_unrecorded: float  # with --jobs 2, recording nothing
    scaling: float  # games/s with 2 jobs ÷ with 1
    store_share: float  # 1 - recorded ÷ unrecorded games/s, with --jobs 2
    store_ms_per_game: float  # writer CPU ms per game, with --jobs 2
    store_cpu_share: float  # writer CPU ÷ arena CPU during play, with --jobs 2
    store_wall_ms_per_game: float  # the writer's wall time per game (it overlaps the games)
    arena_cpu_ms_per_game: float  # the arena's CPU per game (referee processes + writer + the run's own), --jobs 2
    arena_cpu_ms_per_game_jobs1: float  # the same with --jobs 1 (the games played in the run's process)
    bots_cpu_ms_per_game: float | None  # the four bots' CPU per game, as the sandbox measured it
    bots_cpu_ms_per_game_jobs1: float | None
    main_cpu_ms_per_game: float  # the run's own process, with --jobs 2 (it plays no game: it hands them out)
    main_cpu_ms_per_game_jobs1: float
    referee_cpu_ms_per_game: float  # the two referee processes, with --jobs 2
    store_ms_per_game_jobs1: float  # writer CPU ms per game, with --jobs 1
    bot_start_ms: float  # CPU (arena + bot) of starting one bot process and ending it
    long_deals: int  # deals per long run (60 games each)
    scaling_trusted: float  # games/s with 2 jobs ÷ with 1, short runs, --trusted-reuse
    scaling_long: float  # the same, long runs, the fairness rule in force
    scaling_long_trusted: float  # the same, long runs, --trusted-reuse
    modes: dict[str, dict[str, object]]  # every recorded configuration's Mode (see CONFIGS)
    # 2 × (CPU per game with 1 job) ÷ (with 2), the arena's and the bots': the scaling two
    # free cores would give, for "short", "trusted", "long" and "long_trusted" runs.
    cpu_scaling: dict[str, float | None]

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


def scratch_folder(parent: Path | None = None) -> Path:
    """A new hidden scratch folder in ``parent`` (default: the current directory, or the
    system's temporary folder if that cannot be written)."""
    if parent is None:
        try:
            return Path(tempfile.mkdtemp(prefix=".arena-bench-tournament-", dir=Path.cwd()))
        except OSError:
            return Path(tempfile.mkdtemp(prefix="arena-bench-tournament-"))
    try:
        parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=".arena-bench-tournament-", dir=parent))
    except OSError as exc:
        raise ArenaError(f"{parent}: cannot make a scratch folder there: {exc.strerror or exc}") from None


def _file_create_us(folder: Path, n: int = 200) -> float:
    """Microseconds to create (and close) one new empty file in a fresh subfolder of ``folder``."""
    probe = folder / "create-probe"
    probe.mkdir()
    t = time.perf_counter()
    for i in range(n):
        os.close(os.open(probe / f"f{i}", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    elapsed = time.perf_counter() - t
    shutil.rmtree(probe)
    return round(elapsed / n * 1e6, 1)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bot_start_ms(bot: Path, build: Path, n: int = 10) -> float:
    """CPU milliseconds (this process's and the bot's, its sandbox's launcher included) of
    starting one process of the bot in ``bot`` to its hello reply and ending it, the mean
    of ``n``, one at a time, in the sandbox a run uses by default."""
    spec = prepare_bot(find_bot(bot), build, default_sandbox())
    time_settings = TimeSettings(hello_ms=30_000)

    async def cycle() -> float:
        async with open_pool() as pool:
            warm = pool.player(spec)  # the first start pays for what is cached after it
            await warm.start(time_settings)
            await warm.close()
            cpu, children = time.process_time(), _children_cpu()
            for _ in range(n):
                player = pool.player(spec)
                await player.start(time_settings)
                await player.close()
            return (time.process_time() - cpu) + (_children_cpu() - children)

    return round(1000 * trio.run(cycle) / n, 2)


@dataclass(frozen=True, slots=True)
class Mode:
    """One configuration's figures, over every round: games, games/s, and CPU ms per game
    of the arena (the run's process, its referee processes and the writer) and of the bots."""

    jobs: int
    trusted_reuse: bool
    deals: int  # per run: 60 games each
    games: int
    games_per_s: float
    arena_cpu_ms_per_game: float
    bots_cpu_ms_per_game: float | None


#: The configurations each round plays, in order: (jobs, recorded, trusted reuse, long).
#: ``jobs1``, ``jobs2`` and ``unrecorded`` are the short runs the fields of
#: :class:`TournamentBench` before :attr:`TournamentBench.modes` describe.
CONFIGS: dict[str, tuple[int, bool, bool, bool]] = {
    "jobs1": (1, True, False, False),
    "jobs2": (2, True, False, False),
    "unrecorded": (2, False, False, False),
    "trusted_jobs1": (1, True, True, False),
    "trusted_jobs2": (2, True, True, False),
    "long_jobs1": (1, True, False, True),
    "long_jobs2": (2, True, False, True),
    "long_trusted_jobs1": (1, True, True, True),
    "long_trusted_jobs2": (2, True, True, True),
}


def bench_tournament(
    games: int = 180, rounds: int = 3, scratch: Path | None = None, long_deals: int = LONG_DEALS
) -> TournamentBench:
    """Play about ``games`` 4-player games (whole duplicate sets) in each short
    configuration, split over ``rounds`` interleaved rounds, and in each round one run of
    ``long_deals`` deals (60 games each) per long configuration (see :data:`CONFIGS`),
    with every results folder in a scratch folder made in ``scratch`` (see the module's
    docstring) and removed afterwards."""
    deals = max(1, round(games / GAMES_PER_DEAL / rounds))
    folder = scratch_folder(scratch)
    where = folder.parent
    create_us = _file_create_us(folder)
    configs = CONFIGS
    played = dict.fromkeys(configs, 0)
    seconds = dict.fromkeys(configs, 0.0)
    cpu = dict.fromkeys(configs, 0.0)
    store_cpu = dict.fromkeys(configs, 0.0)
    store_wall = dict.fromkeys(configs, 0.0)
    referee_cpu = dict.fromkeys(configs, 0.0)
    bots_cpu: dict[str, list[float | None]] = {k: [] for k in configs}
    try:
        bots = make_instant_bots(folder, BOTS)
        start_ms = bot_start_ms(bots / "instant0", folder / "start-build")
        for r in range(rounds):
            for key, (jobs, record, trusted, long) in configs.items():
                run_deals = long_deals if long else deals
                settings = RunSettings(
                    bots_dir=bots,
                    results=folder / f"results-{key}-{r}",
                    players=PLAYERS,
                    deals=run_deals,
                    jobs=jobs,
                    time=TimeSettings(hello_ms=30_000, turn_ms=10_000, bank_ms=60_000),
                    record=record,
                    trusted_reuse=trusted,
                )
                summary = run_tournament(settings)
                if summary.interrupted:  # (the run took the Ctrl-C or SIGTERM: the bench stops with it)
                    raise KeyboardInterrupt
                if summary.void or summary.played != run_deals * GAMES_PER_DEAL:
                    raise ArenaError(
                        f"bench tournament: {summary.played} games played, {summary.void} void: {summary.void_reasons[:1]}"
                    )
                played[key] += summary.played
                seconds[key] += summary.play_seconds
                cpu[key] += summary.play_cpu_seconds
                store_cpu[key] += summary.store_cpu_seconds
                store_wall[key] += summary.store_seconds
                referee_cpu[key] += summary.referee_cpu_seconds
                if record:
                    with open_store(settings.results, create=False) as store:
                        bots_cpu[key] += [s.cpu_ms for g in store.games() for s in g.seats]
                shutil.rmtree(settings.results, ignore_errors=True)  # the long runs' replays add up
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rate = {k: played[k] / seconds[k] for k in configs}
    n = played["jobs2"]

    def bots_ms(key: str) -> float | None:
        seen = bots_cpu[key]
        return sum(seen) / played[key] if seen and None not in seen else None  # type: ignore[arg-type]

    def main_ms(key: str) -> float:  # the run's own process: all but the writer and the referees
        return 1000 * (cpu[key] - store_cpu[key] - referee_cpu[key]) / played[key]

    modes = {
        key: Mode(
            jobs=jobs,
            trusted_reuse=trusted,
            deals=long_deals if long else deals,
            games=played[key],
            games_per_s=rate[key],
            arena_cpu_ms_per_game=1000 * cpu[key] / played[key],
            bots_cpu_ms_per_game=bots_ms(key),
        )
        for key, (jobs, record, trusted, long) in configs.items()
        if record
    }
    return TournamentBench(
        games=n,
        rounds=rounds,
        scratch=str(where),
        file_create_us=create_us,
        games_per_s=rate["jobs2"],
        games_per_s_jobs1=rate["jobs1"],
        games_per_s_unrecorded=rate["unrecorded"],
        scaling=rate["jobs2"] / rate["jobs1"],
        store_share=1 - rate["jobs2"] / rate["unrecorded"],
        store_ms_per_game=1000 * store_cpu["jobs2"] / n,
        store_cpu_share=store_cpu["jobs2"] / cpu["jobs2"],
        store_wall_ms_per_game=1000 * store_wall["jobs2"] / n,
        arena_cpu_ms_per_game=1000 * cpu["jobs2"] / n,
        arena_cpu_ms_per_game_jobs1=1000 * cpu["jobs1"] / played["jobs1"],
        bots_cpu_ms_per_game=bots_ms("jobs2"),
        bots_cpu_ms_per_game_jobs1=bots_ms("jobs1"),
        main_cpu_ms_per_game=main_ms("jobs2"),
        main_cpu_ms_per_game_jobs1=main_ms("jobs1"),
        referee_cpu_ms_per_game=1000 * referee_cpu["jobs2"] / n,
        store_ms_per_game_jobs1=1000 * store_cpu["jobs1"] / played["jobs1"],
        bot_start_ms=start_ms,
        long_deals=long_deals,
        scaling_trusted=rate["trusted_jobs2"] / rate["trusted_jobs1"],
        scaling_long=rate["long_jobs2"] / rate["long_jobs1"],
        scaling_long_trusted=rate["long_trusted_jobs2"] / rate["long_trusted_jobs1"],
        modes={k: asdict(m) for k, m in modes.items()},
        cpu_scaling={
            name: _cpu_scaling(modes[f"{prefix}jobs1"], modes[f"{prefix}jobs2"])
            for name, prefix in (("short", ""), ("trusted", "trusted_"), ("long", "long_"), ("long_trusted", "long_trusted_"))
        },
    )


def _cpu_scaling(one: Mode, two: Mode) -> float | None:
    """The games/s two jobs would give over one on two free cores, from the CPU per game
    of each (the arena's and the bots'): less sensitive to the machine's other load than games/s."""
    if one.bots_cpu_ms_per_game is None or two.bots_cpu_ms_per_game is None:
        return None
    return 2 * (one.arena_cpu_ms_per_game + one.bots_cpu_ms_per_game) / (two.arena_cpu_ms_per_game + two.bots_cpu_ms_per_game)
