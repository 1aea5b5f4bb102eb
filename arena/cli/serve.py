"""`arena serve`: the competition server (arena.web does the work): the web application under
uvicorn, and the ladder process (`arena ladder`) beside it, started and watched."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.console import err


def serve_command(
    results: Annotated[Path, typer.Option("--results", "-r", help="The competition's results folder (made if missing).")] = Path("results"),
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="The competition's TOML file (default: 4 players, standard, strict sandbox).")
    ] = None,
    host: Annotated[str, typer.Option(help="The address to listen on (default: this machine only; put TLS in front with a reverse proxy).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="The port to listen on.")] = 8000,
    no_ladder: Annotated[
        bool, typer.Option("--no-ladder", help="Do not start the ladder process (it runs elsewhere: `arena ladder`).")
    ] = False,
) -> None:
    """Serve the competition: the leaderboard, bots, games and replays for everyone, uploads,
    logs and challenges for teams (log in with the token of `arena team add`), the admin's
    pages; and play the ladder in a child process. Ctrl-C (or SIGTERM) stops both."""
    from arena.competition import load_competition
    from arena.store.opening import open_store
    from arena.web.app import create_app
    from arena.web.server import LadderChild, is_loopback, ladder_command, serve

    competition = load_competition(config)  # a bad file: one error naming the key, before anything starts
    open_store(results).close()  # made, checked and brought up to date before either process reads it
    if not is_loopback(host):
        err.print(
            f"[yellow]warning:[/yellow] listening on {escape(host)}, not only on this machine: the server speaks "
            "plain HTTP, so put a reverse proxy with TLS in front of it (docs/competition.md)",
            highlight=False,
        )
    ladder = None if no_ladder else LadderChild(ladder_command(results, config), say=_say)
    app = create_app(results, competition)
    serve(app, host=host, port=port, ladder=ladder, on_ready=lambda url: err.print(
        f"serving {escape(competition.name)} at {url} (results {escape(str(results))})"
        + ("" if ladder is None or ladder.proc is None else f"; ladder process pid {ladder.proc.pid}"),
        highlight=False,
    ))


def _say(message: str) -> None:
    err.print(f"[yellow]{escape(message)}[/yellow]", highlight=False)


#: The commands of this module by name, for the app to register.
COMMANDS = {"serve": serve_command}
