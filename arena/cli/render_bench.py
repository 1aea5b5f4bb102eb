"""How `arena bench` prints its figures: a table and the line that says what they mean, or
one JSON object with --json."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def print_engine(console: Console, results: list[Any], variant: str, *, as_json: bool) -> None:
    """`arena bench engine`: a row per player count; the JSON headline is the 4-player one."""
    headline = next((r for r in results if r.players == 4), results[0])
    if as_json:
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
    table = Table(title=f"Engine: random {variant} games through the public API", title_justify="left")
    for col in ("players", "games/s", "µs/decision", "baseline games/s", "ratio"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(
            str(r.players), f"{r.games_per_s:,.0f}", f"{r.us_per_decision:.2f}", f"{r.baseline_games_per_s:,.0f}", f"{r.ratio:.2f}"
        )
    console.print(table)
    console.print("[dim]ratio = engine games/s ÷ plain-playout games/s, measured interleaved in this run.[/dim]")


def print_env(console: Console, results: list[Any], variant: str, *, as_json: bool) -> None:
    """`arena bench env`: a row per player count; the JSON headline is the 4-player one."""
    headline = next((r for r in results if r.players == 4), results[0])
    if as_json:
        print(json.dumps({"benchmark": "env", "players": headline.players, "cost": headline.cost,
                          "env_us_per_decision": headline.env_us_per_decision,
                          "per_players": {str(r.players): r.to_dict() for r in results}}))
        return
    table = Table(title=f"Environment: random masked {variant} steps vs the engine's random playout", title_justify="left")
    for col in ("players", "env µs/decision", "engine µs/decision", "cost", "with observe() µs", "observe() cost"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(
            str(r.players), f"{r.env_us_per_decision:.1f}", f"{r.engine_us_per_decision:.2f}", f"{r.cost:.2f}",
            f"{r.observe_us_per_decision:.1f}", f"{r.observe_cost:.2f}",
        )
    console.print(table)
    console.print("[dim]cost = CPU per decision ÷ the engine's, measured interleaved in this run; "
                  "observe(): the playout that also observes each deciding seat (any observation's floor).[/dim]")


def print_search(console: Console, results: list[Any], variant: str, *, as_json: bool) -> None:
    """`arena bench search`: a row per player count; the JSON headline is the 4-player one."""
    headline = next((r for r in results if r.players == 4), results[0])
    if as_json:
        print(json.dumps({"benchmark": "search", **headline.to_dict(), "per_players": {str(r.players): r.to_dict() for r in results}}))
        return
    table = Table(title=f"Search path: {variant} games, determinize + clone + the round played out", title_justify="left")
    for col in ("players", "samples", "determinizations/s", "playouts/s", "samples/s", "determinize share"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(
            str(r.players), f"{r.samples:,}", f"{r.determinizations_per_s:,.0f}", f"{r.playouts_per_s:,.0f}",
            f"{r.samples_per_s:,.0f}", f"{r.determinize_share:.0%}",
        )
    console.print(table)
    console.print("[dim]per CPU second of this process; a playout is a clone and the rest of the round at random.[/dim]")


def print_referee(console: Console, r: Any, *, as_json: bool) -> None:  # noqa: ANN401 - a RefereeBench
    """`arena bench referee`: the referee's cost per cycle beside raw pipes'."""
    if as_json:
        print(json.dumps({"benchmark": "referee", "players": 4, **r.to_dict()}))
        return
    table = Table(title="Referee: 4-player games among four instant C bots", title_justify="left")
    for col in ("", "games", "cycles", "games/s", "µs/cycle"):
        table.add_column(col, justify="right")
    table.add_row("referee", f"{r.games:,}", f"{r.cycles:,}", f"{r.games_per_s:,.0f}", f"{r.referee_us_per_cycle:.1f}")
    raw_games_per_s = r.raw_games / r.raw_seconds
    table.add_row("raw pipes", f"{r.raw_games:,}", f"{r.raw_cycles:,}", f"{raw_games_per_s:,.0f}", f"{r.raw_us_per_cycle:.1f}")
    console.print(table)
    console.print(f"overhead ratio: {r.overhead_ratio:.2f}", highlight=False)
    console.print(
        "[dim]cycle = four acts written, four replies read (plus each game's game_start and game_over, "
        "spread over its 21 cycles); ratio = referee µs/cycle ÷ raw µs/cycle (the same bytes, "
        f"blocking os.write/os.read, no decoding), measured interleaved in {r.slices} slices in this run"
        + (f", everything on CPU {r.pinned_cpu}.[/dim]" if r.pinned_cpu is not None else ", CPUs not pinned.[/dim]")
    )


def print_sandbox(console: Console, err: Console, costs: list[Any], missing: str | None, *, as_json: bool) -> None:
    """`arena bench sandbox`: a row per level; why strict was not measured goes to ``err``."""
    if as_json:
        print(json.dumps({"benchmark": "sandbox", "levels": [c.to_dict() for c in costs], "strict_missing": missing}))
        return
    table = Table(title="Sandbox levels: an instant C bot", title_justify="left")
    for col in ("level", "start ms (median)", "start ms (min)", "µs/cycle"):
        table.add_column(col, justify="right")
    for c in costs:
        table.add_row(c.level, f"{c.start_ms:.1f}", f"{c.start_min_ms:.1f}", f"{c.cycle_us:.0f}")
    console.print(table)
    if missing:
        err.print(f"[yellow]strict not measured:[/yellow] {escape(str(missing))}", highlight=False)
    console.print(
        "[dim]unconfined = no sandbox object at all; start = spawn to the hello reply, levels interleaved; "
        "cycle = four acts written and four replies read, in whole games.[/dim]"
    )


def print_tournament(console: Console, r: Any, *, as_json: bool) -> None:  # noqa: ANN401 - a TournamentBench
    """`arena bench tournament`: games/s of each configuration, the scaling, the store's share."""
    if as_json:
        print(json.dumps({"benchmark": "tournament", "players": 4, **r.to_dict()}))
        return
    table = Table(title=f"Tournament: four-player games among six instant C bots, {r.rounds} rounds", title_justify="left")
    for col in ("configuration", "games", "games/s", "arena CPU ms/game"):
        table.add_column(col, justify="right")
    table.add_row("--jobs 1", f"{r.games:,}", f"{r.games_per_s_jobs1:,.1f}", f"{r.arena_cpu_ms_per_game_jobs1:.2f}")
    table.add_row("--jobs 2", f"{r.games:,}", f"{r.games_per_s:,.1f}", f"{r.arena_cpu_ms_per_game:.2f}")
    table.add_row("--jobs 2, nothing recorded", f"{r.games:,}", f"{r.games_per_s_unrecorded:,.1f}", "")
    console.print(table)
    console.print(
        f"scaling (2 jobs ÷ 1): {r.scaling:.2f} · store share of the time: {100 * r.store_share:.1f}% "
        f"(1 − recorded ÷ unrecorded games/s) · store writer: {r.store_ms_per_game:.2f} ms CPU per game, "
        f"{100 * r.store_cpu_share:.1f}% of the arena's CPU · results written under {r.scratch} "
        f"(creating a file there: {r.file_create_us:.0f} µs)",
        highlight=False,
    )
    bots, bots1 = (f"{v:.2f}" if v is not None else "?" for v in (r.bots_cpu_ms_per_game, r.bots_cpu_ms_per_game_jobs1))
    console.print(
        f"CPU ms per game by process — --jobs 1: run {r.main_cpu_ms_per_game_jobs1:.2f}, writer "
        f"{r.store_ms_per_game_jobs1:.2f}, bots {bots1} · --jobs 2: run {r.main_cpu_ms_per_game:.2f}, referee "
        f"{r.referee_cpu_ms_per_game:.2f}, writer {r.store_ms_per_game:.2f}, bots {bots} · starting and ending "
        f"one bot process: {r.bot_start_ms:.1f} ms",
        highlight=False,
    )
    modes = Table(
        title=f"Process reuse: short runs ({r.modes['jobs1']['games'] // r.rounds:,} games) and long runs "
        f"({r.long_deals} deals, {r.modes['long_jobs1']['games'] // r.rounds:,} games)",
        title_justify="left",
    )
    for col in ("run", "processes", "jobs", "games/s", "scaling", "CPU scaling", "arena CPU ms/game", "bots CPU ms/game"):
        modes.add_column(col, justify="right")
    scalings = {"": r.scaling, "trusted_": r.scaling_trusted, "long_": r.scaling_long, "long_trusted_": r.scaling_long_trusted}
    for (prefix, scaling), cpu_scaling in zip(scalings.items(), r.cpu_scaling.values(), strict=True):
        for jobs in (1, 2):
            m = r.modes[f"{prefix}jobs{jobs}"]
            bots_ms = m["bots_cpu_ms_per_game"]
            modes.add_row(
                "long" if prefix.startswith("long") else "short",
                "trusted reuse" if m["trusted_reuse"] else "fresh per deal",
                str(jobs),
                f"{m['games_per_s']:,.1f}",
                f"{scaling:.2f}" if jobs == 2 else "",
                (f"{cpu_scaling:.2f}" if cpu_scaling is not None else "?") if jobs == 2 else "",
                f"{m['arena_cpu_ms_per_game']:.2f}",
                f"{bots_ms:.2f}" if bots_ms is not None else "?",
            )
    console.print(modes)


def print_serve(console: Console, r: Any, *, as_json: bool) -> None:  # noqa: ANN401 - a ServeBench
    """`arena bench serve`: each route's requests/s and latency, the games' throughput alone and under load."""
    if as_json:
        print(json.dumps({"benchmark": "serve", **r.to_dict()}))
        return
    doc = r.to_dict()
    table = Table(
        title=f"Server: {r.clients} clients over {r.stored:,} stored games", title_justify="left",
    )
    for col in ("route", "while", "requests", "req/s", "p50 ms", "p99 ms", "errors"):
        table.add_column(col, justify="right")
    for label, figures in (("web alone", r.web), (f"games, {r.rate:g}/s/client", r.web_during_games)):
        for name, lat in figures.items():
            route = "page /" if name == "page" else "/api/leaderboard"
            table.add_row(route, label, f"{lat.requests:,}", f"{lat.per_s:,.1f}", f"{lat.p50_ms:.1f}", f"{lat.p99_ms:.1f}", str(lat.errors))
    console.print(table)
    met = doc["targets"]
    console.print(
        f"games/s of {r.games} games: {r.games_per_s_alone:.1f} alone, {r.games_per_s_loaded:.1f} under the live "
        f"pages' load ({r.clients} × {r.rate:g}/s: {100 * r.throughput_change:+.1f}%; target within "
        f"±{100 * met['throughput_change']:.0f}%: {'met' if met['throughput_met'] else 'not met'}), "
        f"{r.games_per_s_flooded:.1f} under a flood ({100 * r.flooded_change:+.1f}%) · p99 target {met['p99_ms']:.0f} ms (web alone): "
        f"{'met' if met['p99_met'] else 'not met'} · first leaderboard {r.first_leaderboard_ms:,.0f} ms · "
        f"store filled in {r.fill_s:.0f} s under {r.scratch}",
        highlight=False,
    )


def print_cluster(console: Console, r: Any, slots: int, *, as_json: bool) -> None:  # noqa: ANN401 - a ClusterBench
    """`arena bench cluster`: local and Dask games/s side by side, and what Dask adds per game."""
    if as_json:
        print(json.dumps({"benchmark": "cluster", "players": 4, "slots": slots, **r.to_dict()}))
        return
    table = Table(title=f"{r.games} four-player games among six instant C bots, {slots} at a time", title_justify="left")
    table.add_column("executor")
    table.add_column("games/s", justify="right")
    table.add_row(f"local, --jobs {slots}", f"{r.local_games_per_s:,.1f}")
    table.add_row(f"Dask, --cluster local:{slots}", f"{r.cluster_games_per_s:,.1f}")
    console.print(table)
    console.print(
        f"cluster path: +{r.overhead_ms_per_game:,.0f} ms per game per slot = Dask task {r.dask_task_ms:.1f} + "
        f"game process start {r.game_process_ms:.0f} + fresh bots and the rest {r.bots_and_rest_ms:.0f}; "
        f"cluster start {r.cluster_setup_s:.1f} s (not in games/s); the arena process: {r.coordinator_cpu_ms:.1f} ms CPU "
        "per game (client, writer, scheduler)",
        highlight=False,
    )


def print_scale(console: Console, r: Any, *, as_json: bool) -> None:  # noqa: ANN401 - a ScaleBench
    """`arena bench scale`: a row per figure, with its target and whether it is met."""
    if as_json:
        print(json.dumps({"benchmark": "scale", "players": 4, **r.to_dict()}))
        return
    table = Table(title=f"League scale: four-player games, instant C bots ({r.bots} bots; {r.run_bots} in the runs that play, {r.report_bots} in the report's stores)", title_justify="left")
    for col, justify in (("figure", "left"), ("value", "right"), ("of", "left"), ("target", "left"), ("met", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for f in r.figures:
        value = "-" if f.value is None else f"{f.value:,.3g}" if abs(f.value) < 100 else f"{f.value:,.0f}"
        met = "[dim]n/a[/dim]" if f.passed is None else "[green]yes[/green]" if f.passed else "[red]no[/red]"
        table.add_row(escape(f.name), value, escape(f.unit), escape(f.target), met)
    console.print(table)
    for f in r.figures:
        if f.note:
            console.print(f"[dim]{escape(f.name)}: {escape(f.note)}[/dim]", highlight=False)
    console.print(
        "[dim]each figure is the arena command a user runs (a subprocess: wall time, RSS of the arena's process); "
        "n/a: this run was smaller than the size its target is set at.[/dim]"
    )
