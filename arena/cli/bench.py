"""`arena bench`: the benchmarks, each a ratio against a baseline measured in the same run
(the arena.bench* modules measure; render_bench prints the figures)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.cli.console import HELP, busy, err, out
from arena.cli.options import JsonOption
from arena.cli.render_bench import (
    print_cluster,
    print_engine,
    print_referee,
    print_sandbox,
    print_tournament,
)
from arena.engine import Variant
from arena.errors import ArenaError

bench_app = typer.Typer(
    help="Benchmarks, each reported as a ratio against a baseline measured in the same run.",
    no_args_is_help=True,
    **HELP,
)


@bench_app.command("engine")
def bench_engine_command(
    players: Annotated[
        list[int] | None,
        typer.Option("--players", "-p", min=2, max=5, help="Player counts to measure (repeatable). Default: 2 to 5."),
    ] = None,
    seconds: Annotated[float, typer.Option("--seconds", "-s", min=0.1, help="Seconds per player count.")] = 2.0,
    variant: Annotated[Variant, typer.Option(help="Rules variant (dummy: 2 players).")] = Variant.STANDARD,
    json_output: JsonOption = False,
) -> None:
    """Random games through the engine's public API vs a plain 60-line random playout."""
    from arena.bench.engine import bench_engine

    chosen = variant
    counts = players or ([2] if chosen is Variant.DUMMY else [2, 3, 4, 5])
    if chosen is Variant.DUMMY and counts != [2]:
        raise ArenaError("--variant dummy is a two-player variant: use --players 2")
    results = []
    with busy("benchmarking the engine…"):
        for n in counts:
            results.append(bench_engine(n, seconds, chosen.value))
    print_engine(out, results, chosen.value, as_json=json_output)


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
    scratch: Annotated[
        Path | None,
        typer.Option(help="Where to make the (temporary) results folders: a folder on the disk your results go to. [default: the current directory]"),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Whole tournaments of six instant C bots (needs `cc`) with --jobs 1, --jobs 2, and
    --jobs 2 recording nothing: games/s, the scaling, and what the store costs."""
    from arena.bench.tournament import bench_tournament

    with busy("benchmarking tournaments…"):
        r = bench_tournament(games, rounds, scratch)
    print_tournament(out, r, as_json=json_output)


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
