"""`arena team add|list|revoke`: a competition's teams and their tokens (arena.competition
does the work). A token is printed once, by `add`, and never again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from arena.cli.console import HELP, err, out
from arena.cli.options import JsonOption

team_app = typer.Typer(
    help="A competition's teams (`arena serve`, `arena ladder`): add one and print its token once, list, revoke.",
    no_args_is_help=True,
    **HELP,
)

ResultsOption = Annotated[Path, typer.Option("--results", "-r", help="The competition's results folder.")]
NameArgument = Annotated[str, typer.Argument(help="The team's name (letters, digits, '-', '_', '.').", metavar="NAME")]


@team_app.command("add")
def team_add_command(
    name: NameArgument,
    results: ResultsOption = Path("results"),
    admin: Annotated[bool, typer.Option("--admin", help="The team may use the admin pages and routes.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Make a team and print its token: shown this once (only its hash is kept), so keep it."""
    from arena.competition.teams import Teams

    team, token = Teams(results).add(name, admin=admin)
    if json_output:
        out.print_json(json.dumps({"team": team.name, "token": token, "admin": team.is_admin}))
        return
    kind = "admin team" if team.is_admin else "team"
    out.print(f"{kind} {escape(team.name)} added; its token (shown once, keep it):", highlight=False)
    out.print(token, highlight=False, markup=False)


@team_app.command("list")
def team_list_command(results: ResultsOption = Path("results"), json_output: JsonOption = False) -> None:
    """The teams, with when each was made and revoked (never their tokens)."""
    from arena.competition.teams import Teams

    teams = Teams(results).list()
    if json_output:
        out.print_json(json.dumps({"teams": [t.to_dict() for t in teams]}))
        return
    if not out.is_terminal:
        for t in teams:
            flags = " admin" if t.is_admin else ""
            state = f" revoked {t.revoked}" if t.revoked else ""
            out.print(f"{t.name}{flags} created {t.created}{state}", highlight=False, markup=False)
        return
    if not teams:
        err.print("no teams yet: `arena team add NAME`", highlight=False)
        return
    table = Table("team", "admin", "created", "revoked")
    for t in teams:
        table.add_row(escape(t.name), "yes" if t.is_admin else "", t.created, t.revoked or "")
    out.print(table)


@team_app.command("revoke")
def team_revoke_command(name: NameArgument, results: ResultsOption = Path("results"), json_output: JsonOption = False) -> None:
    """The team's token stops working at once; its bots, games and ratings stay."""
    from arena.competition.teams import Teams

    team = Teams(results).revoke(name)
    if json_output:
        out.print_json(json.dumps(team.to_dict()))
        return
    out.print(f"team {escape(team.name)} revoked ({team.revoked})", highlight=False)
