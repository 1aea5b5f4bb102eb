"""The `arena` command line: the Typer app (app.py), its shared options, a module per command
group, and the output rendering; it may import everything below it, and nothing imports it."""

from __future__ import annotations


def main() -> None:
    """The `arena` console script: the app is imported only when it runs, so that
    importing a module of this package (the human seat's process) stays light."""
    from arena.cli.app import main as run_app

    run_app()
