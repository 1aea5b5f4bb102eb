"""`arena bench`: the benchmarks, each a ratio against a baseline measured in the same run
(the arena.bench* modules measure; render_bench prints the figures)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from arena.cli.console import HELP, busy, err, out
from arena.cli.options import JsonOption
from arena.cli.render_bench import (
    print_cluster,
    print_engine,
    print_env,
    print_referee,
    print_sandbox,
    print_scale,
    print_serve,
    print_search,
    print_tournament,
)
from arena.engine import Variant
from arena.errors import ArenaError

bench_app = typer.Typer(
    help="Benchmarks, each reported as a ratio against a baseline measured in the same run.",
    no_args_is_help=True,
    **HELP,
)


@contextlib.contextmanager
def _stopped_by_signal(bench: str) -> Iterator[None]:
    """A bench stopped by Ctrl-C or SIGTERM says so in one line and exits with status 130
    (by then its commands and bots are stopped and its scratch folder is removed)."""
    try:
        yield
    except KeyboardInterrupt:
        err.print(f"\n[yellow]interrupted[/yellow]: {bench} stopped; its scratch folder is removed, no figure was measured.", highlight=False)
        raise typer.Exit(130) from None


#: Where the tournament benches make their results folders (both take the same option).
ScratchOption = Annotated[
    Path | None,
    typer.Option(help="Where to make the (temporary) results folders: a folder on the disk your results go to. [default: the current directory]"),
]


#: The options of the benches that measure the engine per player count (engine, env, search).
PlayersOption = Annotated[
    list[int] | None,
    typer.Option("--players", "-p", min=2, max=5, help="Player counts to measure (repeatable). Default: 2 to 5."),
]
SecondsOption = Annotated[float, typer.Option("--seconds", "-s", min=0.1, help="CPU seconds per player count.")]
VariantOption = Annotated[Variant, typer.Option(help="Rules variant (dummy: 2 players).")]


def _player_counts(players: list[int] | None, variant: Variant) -> list[int]:
    """The player counts to measure: the ones asked for, else every count the variant allows."""
    counts = players or ([2] if variant is Variant.DUMMY else [2, 3, 4, 5])
    if variant is Variant.DUMMY and counts != [2]:
        raise ArenaError("--variant dummy is a two-player variant: use --players 2")
    return counts


@bench_app.command("engine")
def bench_engine_command(
    players: PlayersOption = None,
    seconds: SecondsOption = 2.0,
    variant: VariantOption = Variant.STANDARD,
    json_output: JsonOption = False,
) -> None:
    """Random games through the engine's public API vs a plain 60-line random playout."""
    from arena.bench.engine import bench_engine

    counts = _player_counts(players, variant)
    with busy("benchmarking the engine…"):
        results = [bench_engine(n, seconds, variant.value) for n in counts]
    print_engine(out, results, variant.value, as_json=json_output)


@bench_app.command("env")
def bench_env_command(
    players: PlayersOption = None,
    seconds: SecondsOption = 2.0,
    variant: VariantOption = Variant.STANDARD,
    json_output: JsonOption = False,
) -> None:
    """PettingZoo steps with random masked actions vs the engine's own random playout, per decision (needs the rl extra)."""
    try:
        from arena.bench.env import bench_env
    except ImportError as exc:
        raise ArenaError(str(exc)) from None

    counts = _player_counts(players, variant)
    with busy("benchmarking the environment…"):
        results = [bench_env(n, seconds, variant.value) for n in counts]
    print_env(out, results, variant.value, as_json=json_output)


@bench_app.command("search")
def bench_search_command(
    players: PlayersOption = None,
    seconds: SecondsOption = 2.0,
    variant: VariantOption = Variant.STANDARD,
    json_output: JsonOption = False,
) -> None:
    """A searching bot's path: determinize a seat's view, clone it, play the round out at random."""
    from arena.bench.search import bench_search

    counts = _player_counts(players, variant)
    with busy("benchmarking the search path…"):
        results = [bench_search(n, seconds, variant.value) for n in counts]
    print_search(out, results, variant.value, as_json=json_output)


@bench_app.command("referee")
def bench_referee_command(
    seconds: Annotated[
        float, typer.Option("--seconds", "-s", min=0.1, help="Seconds of measuring, shared by the referee and the raw baseline.")
    ] = 2.0,
    pin: Annotated[
        bool, typer.Option("--pin/--no-pin", help="Run it all on one CPU, so that where the OS puts the bots cannot sway the baseline.")
    ] = True,
    json_output: JsonOption = False,
) -> None:
    """The referee's cost per 4-seat decision cycle with four instant C bots (needs `cc`)
    vs the same bytes over plain blocking pipes."""
    from arena.bench.referee import bench_referee

    with busy("benchmarking the referee…"):
        r = bench_referee(seconds, pin=pin)
    print_referee(out, r, as_json=json_output)


@bench_app.command("sandbox")
def bench_sandbox_command(
    starts: Annotated[int, typer.Option("--starts", min=1, help="Bot starts per level.")] = 20,
    games: Annotated[int, typer.Option("--games", min=1, help="4-player games per level, for the cost per decision.")] = 20,
    json_output: JsonOption = False,
) -> None:
    """What each sandbox level costs: ms to start a bot (spawn to hello reply) and µs per
    4-seat decision cycle, with the instant C bot (needs `cc`)."""
    from arena.bench.sandbox import bench_sandbox

    with busy("benchmarking the sandbox levels…"):
        costs, missing = bench_sandbox(starts, games)
    print_sandbox(out, err, costs, missing, as_json=json_output)


@bench_app.command("tournament")
def bench_tournament_command(
    games: Annotated[
        int,
        typer.Option("--games", "-g", min=60, help="About this many 4-player games per configuration (whole rounds of 60 games, one deal of every table)."),
    ] = 180,
    rounds: Annotated[int, typer.Option(min=1, help="Interleaved rounds the games are split over.")] = 3,
    long_deals: Annotated[int, typer.Option("--long-deals", min=1, help="Deals (60 games each) of each long run, one per round and configuration.")] = 10,
    scratch: ScratchOption = None,
    json_output: JsonOption = False,
) -> None:
    """Whole tournaments of six instant C bots (needs `cc`) with --jobs 1, --jobs 2, and
    --jobs 2 recording nothing, then both job counts with --trusted-reuse, and long runs
    of each: games/s, the scaling, and what the store and each mode cost."""
    from arena.bench.tournament import bench_tournament

    with busy("benchmarking tournaments…"), _stopped_by_signal("bench tournament"):
        r = bench_tournament(games, rounds, scratch, long_deals)
    print_tournament(out, r, as_json=json_output)


@bench_app.command("serve")
def bench_serve_command(
    stored: Annotated[int, typer.Option(min=1, help="Games in the store the server serves.")] = 10_000,
    clients: Annotated[int, typer.Option(min=1, max=1000, help="Concurrent clients.")] = 50,
    seconds: Annotated[float, typer.Option(min=0.5, help="Seconds of web load alone.")] = 10.0,
    games: Annotated[int, typer.Option(min=60, help="Games of the tournament played alone and under each load.")] = 600,
    rate: Annotated[float, typer.Option(min=0.01, help="Requests a second per client while games are played (a live page: at most 1).")] = 1.0,
    scratch: ScratchOption = None,
    json_output: JsonOption = False,
) -> None:
    """The competition server (needs `cc` and the `serve` extra): requests/s and p50/p99
    latency of the leaderboard page and API with concurrent clients over a store of games,
    and games/s of a tournament played alone and under that load, in one run."""
    from arena.bench.serve import bench_serve

    with busy("benchmarking the server…"):
        r = bench_serve(stored, clients, seconds, games, scratch, rate)
    print_serve(out, r, as_json=json_output)


@bench_app.command("cluster")
def bench_cluster_command(
    deals: Annotated[int, typer.Option(min=1, help="Duplicate deals: 60 four-player games each, per side.")] = 1,
    json_output: JsonOption = False,
) -> None:
    """The same tournament of instant C bots (needs `cc` and the `cluster` extra) with
    --jobs 2 and with --cluster local:2: games/s side by side, and what Dask costs per game."""
    from arena.bench.cluster import SLOTS, bench_cluster

    with busy("benchmarking the cluster path…"):
        r = bench_cluster(deals)
    print_cluster(out, r, SLOTS, as_json=json_output)


@bench_app.command("match")
def bench_match_command(
    players: Annotated[int, typer.Option("--players", "-p", min=2, max=5, help="Seats per game.")] = 4,
    pairs: Annotated[int, typer.Option(min=4, help="Pairs of the match measured (two games each).")] = 100,
    a: Annotated[str, typer.Option("--a", help="A: a bot's folder or file, or an example bot's name.")] = "random",
    b: Annotated[str, typer.Option("--b", help="B, as A.")] = "greedy",
    opponent: Annotated[
        list[str] | None, typer.Option("--opponent", "-o", help="The opponents with 3 to 5 players, as for `arena match` (repeatable).")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="The match's seed.")] = 0,
    scratch: ScratchOption = None,
    json_output: JsonOption = False,
) -> None:
    """How many games the paired design of `arena match` needs to resolve B's difference from
    A, against unpaired games of the same bots: both from one match, and their ratio."""
    from arena.bench.match import bench_match
    from arena.cli.match import print_bench_match

    with busy("benchmarking the match's pairing…"):
        r = bench_match(a=a, b=b, opponents=opponent or (), players=players, pairs=pairs, seed=seed, scratch=scratch)
    print_bench_match(out, r, as_json=json_output)


@bench_app.command("scale")
def bench_scale_command(
    bots: Annotated[int, typer.Option("--bots", min=4, help="Bots of the round-robin schedule and of the leaderboard's store.")] = 200,
    run_bots: Annotated[int, typer.Option("--run-bots", min=4, help="Bots of the runs that play (memory, live table).")] = 16,
    report_bots: Annotated[int, typer.Option("--report-bots", min=4, help="Bots of the report's stores and of resume.")] = 32,
    games: Annotated[int, typer.Option("--games", "-g", min=8, help="Games of the memory run (the target is at 100000).")] = 5_000,
    stored: Annotated[int, typer.Option("--stored", min=8, help="Games in the stores of the report, resume and the leaderboard (the targets are at 100000).")] = 10_000,
    added: Annotated[
        tuple[int, int], typer.Option("--added", min=4, help="The two numbers of games added to a store before the report is timed.")
    ] = (100, 400),
    live_games: Annotated[int, typer.Option("--live-games", min=8, help="Games of each live-table run.")] = 2_000,
    live_rounds: Annotated[int, typer.Option("--live-rounds", min=1, help="Interleaved pairs of live-table runs (terminal, quiet).")] = 1,
    schedule_games: Annotated[int, typer.Option("--schedule-games", min=8, help="--games of the capped schedule run.")] = 1_000,
    schedule_timeout: Annotated[float, typer.Option("--schedule-timeout", min=1, help="Seconds a schedule run may take to its first game before it is stopped.")] = 60.0,
    leaderboard_timeout: Annotated[float, typer.Option("--leaderboard-timeout", min=1, help="Seconds arena leaderboard may take before it is stopped.")] = 900.0,
    memory_cap: Annotated[int | None, typer.Option("--memory-cap", min=64, help="MiB at which a schedule run is stopped. [default: half the memory available, at most 2048]")] = None,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Only these parts (repeatable): memory, schedule, report (and resume), ratings, live.")
    ] = None,
    scratch: ScratchOption = None,
    json_output: JsonOption = False,
) -> None:
    """League-scale figures against their targets (needs `cc`): memory over a long run, the
    schedule of a big round-robin, resume, the leaderboard and the report on a big store,
    and the live table's share of a run."""
    from arena.bench.scale import PARTS, bench_scale

    unknown = sorted(set(only or ()) - set(PARTS))
    if unknown:
        raise ArenaError(f"--only takes {', '.join(PARTS)}, not {unknown[0]!r}")
    with busy("benchmarking at league scale…"), _stopped_by_signal("bench scale"):
        r = bench_scale(
            bots=bots, run_bots=run_bots, report_bots=report_bots, games=games, stored=stored, added=added, live_games=live_games,
            live_rounds=live_rounds, schedule_games=schedule_games, schedule_timeout_s=schedule_timeout,
            leaderboard_timeout_s=leaderboard_timeout,
            memory_cap_mib=memory_cap, scratch=scratch, only=only or (),
        )
    print_scale(out, r, as_json=json_output)
