"""The `arena` app: the root command with --version, every command group registered on it,
and main(), the console script. Command modules never import this one."""

from __future__ import annotations

import logging
import os
import signal
import sys
from typing import Annotated

import typer
from rich.markup import escape

from arena import __version__
from arena.cli import bench, doctor, ladder, match, new, play, replay, report, run, schema, serve, store, team, validate
from arena.cli.console import HELP, err, out
from arena.cli.render import ConsoleLogHandler
from arena.errors import ArenaError

app = typer.Typer(
    name="arena",
    help="Sushi Go! Arena: run bot tournaments with an exact rules engine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    **HELP,
)


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


# In this order in `arena --help`: a run and its results first, then one game, then the
# bot author's tools.
for module in (run, match, report, play, replay, validate, new, doctor, schema, serve, ladder):
    for name, command in module.COMMANDS.items():
        app.command(name)(command)
app.add_typer(bench.bench_app, name="bench")
app.add_typer(store.store_app, name="store")
app.add_typer(team.team_app, name="team")


def main() -> None:
    """Console entry point: user errors print one clear line and exit 1, no traceback."""
    # Warnings logged below the CLI (a replay not recovered, a sandbox fallback) quote
    # files and bots: they are printed through the stderr console too, not raw.
    logging.basicConfig(level=logging.WARNING, handlers=[ConsoleLogHandler(err)])
    # SIGTERM stops a command as Ctrl-C does, at every moment: while games are played the
    # tournament listens for both itself; before (bots building or starting) and after,
    # it is turned into the SIGINT that every command already handles (exit 130).
    signal.signal(signal.SIGTERM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
    try:
        app()
    except ArenaError as exc:
        err.print(f"[bold red]error:[/bold red] {escape(str(exc))}", highlight=False)
        sys.exit(1)

