"""`arena report`: the tournament as a static web site (see :mod:`arena.report.site`)."""

from __future__ import annotations

import json
import os
import webbrowser
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.cli.console import err, out
from arena.cli.options import JsonOption, ResultsArgument, TournamentOption
from arena.cli.render_results import print_report_summary
from arena.text import LINE_LIMIT, printable


def report_command(
    results: ResultsArgument = Path("results"),
    tournament: TournamentOption = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Where to write the site (default: RESULTS/<tournament>/report/)."),
    ] = None,
    open_page: Annotated[bool, typer.Option("--open", help="Open the report in the web browser when it is written.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Write a tournament's report: a static site (leaderboard, ratings over time, head to
    head, faults, a page per bot, every game in a replay viewer) that opens from the disk."""
    from arena.report.site import ReportError, write_report
    from arena.store.opening import open_store

    with open_store(results, create=False, read_only=True) as store:
        try:
            summary = write_report(store, tournament, out_dir)
        except ReportError as exc:
            if (out_dir is None and not os.access(results, os.W_OK)) or "Read-only" in str(exc):
                raise ReportError(f"{exc}; give the report another place with --out DIR") from None
            raise
    if json_output:
        print(json.dumps(summary.to_dict()))
        for problem in summary.problems:
            err.print(f"[yellow]warning:[/yellow] {escape(printable(str(problem), limit=LINE_LIMIT))}", highlight=False)
    else:
        print_report_summary(err, summary, quiet=True)
        out.print(f"report: {summary.index}", highlight=False)
        err.print(
            f"{summary.games} games, {summary.files} files, {summary.bytes / 1024:,.0f} KB, written in {summary.seconds:.1f} s",
            highlight=False,
        )
    if open_page:
        webbrowser.open(summary.index.resolve().as_uri())


#: The commands of this module by name, for the app to register.
COMMANDS = {"report": report_command}
