"""The `arena` command line. Commands gather options and call one function that does
the work; output formats (tables, --json) stay apart from computing."""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from arena import __version__
from arena.engine import Variant
from arena.errors import ArenaError

app = typer.Typer(
    name="arena",
    help="Sushi Go! Arena: run bot tournaments with an exact rules engine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
bench_app = typer.Typer(
    help="Benchmarks, each reported as a ratio against a baseline measured in the same run.",
    no_args_is_help=True,
)
app.add_typer(bench_app, name="bench")

out = Console()
err = Console(stderr=True)


def _version(value: bool) -> None:
    if value:
        from arena.engine import RULES_VERSION

        out.print(f"arena {__version__} (rules {RULES_VERSION})", highlight=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Sushi Go! Arena: run bot tournaments with an exact rules engine."""


JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]


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


def main() -> None:
    """Console entry point: user errors print one clear line and exit 1, no traceback."""
    try:
        app()
    except ArenaError as exc:
        err.print(f"[bold red]error:[/bold red] {exc}", highlight=False)
        sys.exit(1)
