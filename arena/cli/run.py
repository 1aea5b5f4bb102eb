"""`arena run`, `arena leaderboard`, `arena games`: the tournament commands (arena.tournament,
arena.tournament.standings and arena.store do the work; render_results and progress print)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from arena.cli.console import err, out, say_waiting
from arena.cli.options import (
    JsonOption,
    ResultsArgument,
    SandboxOption,
    TournamentOption,
    parse_anchor,
    sandbox_settings,
)
from arena.cli.render_results import print_games, print_leaderboard, print_report_summary, print_run
from arena.engine import Variant
from arena.errors import ArenaError


def run_command(
    bots: Annotated[Path | None, typer.Option("--bots", "-b", help="The folder of bots: every bot in it plays.")] = None,
    players: Annotated[int | None, typer.Option("--players", "-p", min=2, max=5, help="Seats per table (default: 4, or the number of bots if fewer).")] = None,
    deals: Annotated[int | None, typer.Option(min=1, help="Duplicate deals per table (default 1).")] = None,
    seatings: Annotated[str | None, typer.Option(help="rotations (each deal under every rotation of the seats) or all (every permutation).")] = None,
    games: Annotated[int | None, typer.Option(min=1, help="Cap on the number of games: a balanced design instead of every table (whole duplicate sets, never fewer than seat every bot).")] = None,
    variant: Annotated[Variant | None, typer.Option(help="Rules variant (default standard).")] = None,
    seed: Annotated[int | None, typer.Option(min=0, help="The tournament's seed: same seed and bots, same games (default 0).")] = None,
    gauntlet: Annotated[str | None, typer.Option(help="Only the tables of this bot: that bot against the field.")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, help="Games at once (default: cores ÷ seats, at least 1).")] = None,
    trusted_reuse: Annotated[bool | None, typer.Option("--trusted-reuse", help="Reuse each bot's process for every game it is dealt, the games of one duplicate deal included (faster; only for bots trusted not to remember a deal: by default a process never plays a deal twice).")] = None,
    cluster: Annotated[str | None, typer.Option(help="Play the games on a Dask cluster: tcp://HOST:8786, or local:N worker processes here (needs the `cluster` extra; see docs/cluster.md).")] = None,
    results: Annotated[Path | None, typer.Option("--results", "-r", help="The results folder (default results/).")] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="A TOML file holding any of these settings.")] = None,
    name: Annotated[str | None, typer.Option(help="The tournament's id (default: from the folder and the settings).")] = None,
    anchor: Annotated[str | None, typer.Option(help="BOT=ELO: fix that bot's rating instead of the pool mean at 1500.")] = None,
    hello_ms: Annotated[int | None, typer.Option("--hello-ms", min=1, help="Start-up budget per bot (hello), ms (default 10000).")] = None,
    turn_ms: Annotated[int | None, typer.Option("--turn-ms", min=1, help="Time per decision, ms (default 1000).")] = None,
    bank_ms: Annotated[int | None, typer.Option("--bank-ms", min=0, help="Extra time per game, ms (default 10000).")] = None,
    time_scale: Annotated[float | None, typer.Option("--time-scale", min=0.001, help="Multiply every time budget by this.")] = None,
    no_timeout: Annotated[bool | None, typer.Option("--no-timeout", help="Never time a bot out.")] = None,
    sandbox: SandboxOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    no_report: Annotated[bool, typer.Option("--no-report", help="Do not write the HTML report (RESULTS/<tournament>/report/).")] = False,
    json_output: JsonOption = False,
) -> None:
    """Play a round-robin of every bot in a folder (resumable), then print the leaderboard
    and write the HTML report."""
    from arena.store.opening import open_store
    from arena.tournament.runner import run_tournament
    from arena.tournament.settings import RunSettings, load_config, settings_from
    from arena.tournament.standings import standings, write_leaderboard_files

    options: dict[str, Any] = load_config(config) if config is not None else {}
    given = {
        "bots": bots, "players": players, "deals": deals, "seatings": seatings, "games": games,
        "variant": variant.value if variant is not None else None, "seed": seed, "gauntlet": gauntlet, "jobs": jobs,
        "results": results, "name": name, "anchor": anchor, "hello_ms": hello_ms, "turn_ms": turn_ms,
        "bank_ms": bank_ms, "time_scale": time_scale, "no_timeout": no_timeout, "cluster": cluster,
        "sandbox": sandbox, "trusted_reuse": trusted_reuse,
    }
    options.update({k: v for k, v in given.items() if v is not None})
    options["sandbox"] = sandbox_settings(options.get("sandbox")).level.value  # the one warning, if any
    if options.get("bots") is None:
        raise ArenaError("which bots? give --bots DIR (or `bots = \"DIR\"` in the --config file)")
    settings = settings_from(options, base=RunSettings(bots_dir=Path(options["bots"])))
    anchor_pair = parse_anchor(options.get("anchor"))
    from arena.cli.progress import ConsoleReporter  # (the ratings and numpy: only for a run)

    reporter = ConsoleReporter(quiet=quiet or json_output)
    # The results folder's lock stays held from the first game to the report (a second run waits).
    with contextlib.ExitStack() as held:
        try:
            summary = run_tournament(settings, reporter, hold=held, on_wait=say_waiting)
        except KeyboardInterrupt:
            reporter.close()
            err.print("\n[yellow]interrupted[/yellow] before the games started; nothing was lost.", highlight=False)
            raise typer.Exit(130) from None
        finally:
            reporter.close()
        report = None
        # The run checked the database when it opened it, under the lock still held: not again
        # (PRAGMA quick_check reads the whole file, seconds at 100,000 games).
        with open_store(settings.results, create=False, check=False) as store:
            st = standings(store, summary.tournament_id, anchor=anchor_pair)
            write_leaderboard_files(st, settings.results)
            if not no_report:
                from arena.report.site import write_report

                report = write_report(store, summary.tournament_id, table=st)
                print_report_summary(err, report, quiet=True)
    print_run(out, err, st, summary, settings.results, report, as_json=json_output)
    if summary.interrupted:
        err.print(
            f"[yellow]interrupted:[/yellow] {summary.done} of {summary.total} games are safe in the store; "
            "run the same command again to play the rest.",
            highlight=False,
        )
        raise typer.Exit(130)


def leaderboard_command(
    results: ResultsArgument = Path("results"),
    tournament: TournamentOption = None,
    all_games: Annotated[bool, typer.Option("--all", help="Every game of the format in the store (all tournaments, all versions).")] = False,
    players: Annotated[int | None, typer.Option("--players", "-p", min=2, max=5, help="The format's player count (default: the tournament's).")] = None,
    variant: Annotated[Variant | None, typer.Option(help="The format's variant (default: the tournament's).")] = None,
    h2h: Annotated[bool, typer.Option("--h2h", help="Also the head-to-head matrix.")] = False,
    anchor: Annotated[str | None, typer.Option(help="BOT=ELO: fix that bot's rating instead of the pool mean.")] = None,
    json_output: JsonOption = False,
) -> None:
    """The leaderboard of a tournament: Elo with 95% intervals, games, wins, points, faults."""
    from arena.store.opening import open_store
    from arena.tournament.standings import standings

    with open_store(results, create=False, read_only=True) as store:
        st = standings(
            store, tournament, all_games=all_games, players=players,
            variant=variant.value if variant else None, h2h=h2h, anchor=parse_anchor(anchor),
        )
    if json_output:
        print(json.dumps(st.to_dict()))
        return
    print_leaderboard(out, st, h2h=h2h)


def games_command(
    results: ResultsArgument = Path("results"),
    tournament: Annotated[str | None, typer.Option("--tournament", "-t", help="Only this tournament's games (default: all).")] = None,
    bot: Annotated[str | None, typer.Option("--bot", help="Only games where this bot (name, or name@hash) sat.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the last N games.")] = None,
    json_output: JsonOption = False,
) -> None:
    """The list of recorded games, with the paths of their replays."""
    from arena.store.opening import open_store

    with open_store(results, create=False, read_only=True) as store:
        if tournament is not None and store.get_tournament(tournament) is None:
            raise ArenaError(f"{store.path}: no tournament {tournament!r}")
        rows = store.games(tournament, bot=bot, status=None)
    if limit is not None:
        rows = rows[-limit:]
    print_games(out, rows, results, bot=bot, as_json=json_output)


#: The commands of this module by name, for the app to register.
COMMANDS = {"run": run_command, "leaderboard": leaderboard_command, "games": games_command}
