"""`arena ladder`: the competition's ladder process (validation queue, challenges, ranked
sets) until stopped; arena.competition does the work."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.console import err

ResultsOption = Annotated[Path, typer.Option("--results", "-r", help="The competition's results folder.")]
ConfigOption = Annotated[Path | None, typer.Option("--config", "-c", help="The competition's TOML file (default: the defaults).")]


def ladder_command(results: ResultsOption = Path("results"), config: ConfigOption = None) -> None:
    """Run the competition's ladder until stopped: validate each upload in order, play the
    challenges, then ranked duplicate sets where the ranking is least certain. Ctrl-C or
    SIGTERM abandons the games in flight and keeps every finished one; starting it again
    finishes the set it was playing."""
    from arena.competition.config import load_competition
    from arena.competition.ladder import run_ladder

    competition = load_competition(config)  # a bad file refuses to start, naming the key
    err.print(f"ladder of {escape(competition.name)} on {escape(str(results))}: {competition.players} players", highlight=False)
    try:
        run_ladder(results, competition, on_event=lambda m: err.print(escape(m), highlight=False))
    except KeyboardInterrupt:
        err.print("[yellow]stopped:[/yellow] every finished game is in the store; the next start finishes the set in flight.", highlight=False)
        raise typer.Exit(130) from None


COMMANDS = {"ladder": ladder_command}
