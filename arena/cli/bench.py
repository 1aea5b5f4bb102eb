"""`arena bench`: the benchmarks, each a ratio against a baseline measured in the same run
(the arena.bench* modules measure; the tables are printed here)."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.console import HELP, err, out
from arena.cli.options import JsonOption
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
    from arena.bench import bench_engine

    chosen = variant
    counts = players or ([2] if chosen is Variant.DUMMY else [2, 3, 4, 5])
    if chosen is Variant.DUMMY and counts != [2]:
        raise ArenaError("--variant dummy is a two-player variant: use --players 2")
    results = []
    with err.status("benchmarking the engine…", spinner="dots") if err.is_terminal else nullcontext():
        for n in counts:
            results.append(bench_engine(n, seconds, chosen.value))
    headline = next((r for r in results if r.players == 4), results[0])
    if json_output:
        print(
            json.dumps(
                {
                    "benchmark": "engine",
                    "players": headline.players,
                    "games_per_s": headline.games_per_s,
                    "us_per_decision": headline.us_per_decision,
                    "ratio": headline.ratio,
                    "per_players": {str(r.players): r.to_dict() for r in results},
                }
            )
        )
        return
    table = Table(title=f"Engine: random {chosen.value} games through the public API", title_justify="left")
    for col in ("players", "games/s", "µs/decision", "baseline games/s", "ratio"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(
            str(r.players), f"{r.games_per_s:,.0f}", f"{r.us_per_decision:.2f}", f"{r.baseline_games_per_s:,.0f}", f"{r.ratio:.2f}"
        )
    out.print(table)
    out.print("[dim]ratio = engine games/s ÷ plain-playout games/s, measured interleaved in this run.[/dim]")


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
    from arena.bench_referee import bench_referee

    with err.status("benchmarking the referee…", spinner="dots") if err.is_terminal else nullcontext():
        r = bench_referee(seconds, pin=pin)
    if json_output:
        print(json.dumps({"benchmark": "referee", "players": 4, **r.to_dict()}))
        return
    table = Table(title="Referee: 4-player games among four instant C bots", title_justify="left")
    for col in ("", "games", "cycles", "games/s", "µs/cycle"):
        table.add_column(col, justify="right")
    table.add_row("referee", f"{r.games:,}", f"{r.cycles:,}", f"{r.games_per_s:,.0f}", f"{r.referee_us_per_cycle:.1f}")
    raw_games_per_s = r.raw_games / r.raw_seconds
    table.add_row("raw pipes", f"{r.raw_games:,}", f"{r.raw_cycles:,}", f"{raw_games_per_s:,.0f}", f"{r.raw_us_per_cycle:.1f}")
    out.print(table)
    out.print(f"overhead ratio: {r.overhead_ratio:.2f}", highlight=False)
    out.print(
        "[dim]cycle = four acts written, four replies read (plus each game's game_start and game_over, "
        "spread over its 21 cycles); ratio = referee µs/cycle ÷ raw µs/cycle (the same bytes, "
        f"blocking os.write/os.read, no decoding), measured interleaved in {r.slices} slices in this run"
        + (f", everything on CPU {r.pinned_cpu}.[/dim]" if r.pinned_cpu is not None else ", CPUs not pinned.[/dim]")
    )


@bench_app.command("sandbox")
def bench_sandbox_command(
    starts: Annotated[int, typer.Option("--starts", min=1, help="Bot starts per level.")] = 20,
    games: Annotated[int, typer.Option("--games", min=1, help="4-player games per level, for the cost per decision.")] = 20,
    json_output: JsonOption = False,
) -> None:
    """What each sandbox level costs: ms to start a bot (spawn to hello reply) and µs per
    4-seat decision cycle, with the instant C bot (needs `cc`)."""
    from arena.bench_sandbox import bench_sandbox

    with err.status("benchmarking the sandbox levels…", spinner="dots") if err.is_terminal else nullcontext():
        costs, missing = bench_sandbox(starts, games)
    if json_output:
        print(json.dumps({"benchmark": "sandbox", "levels": [c.to_dict() for c in costs], "strict_missing": missing}))
        return
    table = Table(title="Sandbox levels: an instant C bot", title_justify="left")
    for col in ("level", "start ms (median)", "start ms (min)", "µs/cycle"):
        table.add_column(col, justify="right")
    for c in costs:
        table.add_row(c.level, f"{c.start_ms:.1f}", f"{c.start_min_ms:.1f}", f"{c.cycle_us:.0f}")
    out.print(table)
    if missing:
        err.print(f"[yellow]strict not measured:[/yellow] {escape(str(missing))}", highlight=False)
    out.print(
        "[dim]unconfined = no sandbox object at all; start = spawn to the hello reply, levels interleaved; "
        "cycle = four acts written and four replies read, in whole games.[/dim]"
    )


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
    from arena.bench_tournament import bench_tournament

    with err.status("benchmarking tournaments…", spinner="dots") if err.is_terminal else nullcontext():
        r = bench_tournament(games, rounds, scratch)
    if json_output:
        print(json.dumps({"benchmark": "tournament", "players": 4, **r.to_dict()}))
        return
    table = Table(title=f"Tournament: four-player games among six instant C bots, {r.rounds} rounds", title_justify="left")
    for col in ("configuration", "games", "games/s"):
        table.add_column(col, justify="right")
    table.add_row("--jobs 1", f"{r.games:,}", f"{r.games_per_s_jobs1:,.1f}")
    table.add_row("--jobs 2", f"{r.games:,}", f"{r.games_per_s:,.1f}")
    table.add_row("--jobs 2, nothing recorded", f"{r.games:,}", f"{r.games_per_s_unrecorded:,.1f}")
    out.print(table)
    out.print(
        f"scaling (2 jobs ÷ 1): {r.scaling:.2f} · store share of the time: {100 * r.store_share:.1f}% "
        f"(1 − recorded ÷ unrecorded games/s) · store writer: {r.store_ms_per_game:.2f} ms CPU per game, "
        f"{100 * r.store_cpu_share:.1f}% of the arena's CPU · results written under {r.scratch} "
        f"(creating a file there: {r.file_create_us:.0f} µs)",
        highlight=False,
    )


@bench_app.command("cluster")
def bench_cluster_command(
    deals: Annotated[int, typer.Option(min=1, help="Duplicate deals: 60 four-player games each, per side.")] = 1,
    json_output: JsonOption = False,
) -> None:
    """The same tournament of instant C bots (needs `cc` and the `cluster` extra) with
    --jobs 2 and with --cluster local:2: games/s side by side, and what Dask costs per game."""
    from arena.bench_cluster import SLOTS, bench_cluster

    with err.status("benchmarking the cluster path…", spinner="dots") if err.is_terminal else nullcontext():
        r = bench_cluster(deals)
    if json_output:
        print(json.dumps({"benchmark": "cluster", "players": 4, "slots": SLOTS, **r.to_dict()}))
        return
    table = Table(title=f"{r.games} four-player games among six instant C bots, {SLOTS} at a time", title_justify="left")
    table.add_column("executor")
    table.add_column("games/s", justify="right")
    table.add_row(f"local, --jobs {SLOTS}", f"{r.local_games_per_s:,.1f}")
    table.add_row(f"Dask, --cluster local:{SLOTS}", f"{r.cluster_games_per_s:,.1f}")
    out.print(table)
    out.print(
        f"cluster path: +{r.overhead_ms_per_game:,.0f} ms per game per slot = Dask task {r.dask_task_ms:.1f} + "
        f"game process start {r.game_process_ms:.0f} + fresh bots and the rest {r.bots_and_rest_ms:.0f}; "
        f"cluster start {r.cluster_setup_s:.1f} s (not in games/s); the arena process: {r.coordinator_cpu_ms:.1f} ms CPU "
        "per game (client, writer, scheduler)",
        highlight=False,
    )
