"""`arena new`: write a starter bot folder (arena.authoring.starters does the work)."""

from __future__ import annotations

import json
import shlex
import shutil
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from arena.authoring.starters import LANGUAGES, TOOLCHAINS, StarterError, check_name, write_starter
from arena.cli.console import err, out
from arena.cli.options import JsonOption

Language = Enum("Language", {lang: lang for lang in LANGUAGES}, type=str)  # type: ignore[misc]


def new_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The bot's name, and its folder's: letters, digits, '.', '_', '+', '-'.")],
    lang: Annotated[Language, typer.Option("--lang", "-l", help="The bot's language.", case_sensitive=False)],
    parent: Annotated[
        Path, typer.Option("--dir", "-d", help="The folder to write the bot's folder in (default: the current one).")
    ] = Path("."),
    json_output: JsonOption = False,
) -> None:
    """Write a starter bot: bot.toml, the source and a README.md (how to run it, how to
    bring dependencies without network). It plays random legal plays and handles the
    whole protocol; an existing folder is never touched."""
    if "/" in name:  # a path given as the name: say where the folder goes instead
        try:
            check_name(name)
        except StarterError as exc:
            raise StarterError(f"{exc}; to write it in another folder, give that folder with --dir") from None
    starter = write_starter(name, lang.value, parent)
    missing = [tool for tool in TOOLCHAINS[starter.lang] if shutil.which(tool) is None]
    if json_output:
        print(json.dumps({
            "name": starter.name, "lang": starter.lang, "path": str(starter.path),
            "files": list(starter.files), "missing_tools": missing,
        }))
    else:
        folder = shlex.quote(str(starter.path))
        steps = [
            (f"arena validate {folder}", "the arena's checks, in its sandbox"),
            (f"arena play {folder} {folder}", "one game against itself"),
            (f"arena submit {folder} --bots bots", "once it passes: copied into bots/, a folder of bots"),
            ("arena run --bots bots", "a tournament of every bot in bots/"),
        ]
        width = max(len(command) for command, _ in steps)
        out.print(f"wrote {starter.path}/ ({starter.lang}): {', '.join(starter.files)}; next:", highlight=False)
        for command, what in steps:
            out.print(f"  {command.ljust(width)}  # {what}", highlight=False)
    for tool in missing:
        err.print(
            f"[yellow]note:[/yellow] `{tool}` is not on this machine's PATH: the arena cannot build or run "
            f"this bot here until it is installed",
            highlight=False,
        )


#: The commands of this module by name, for the app to register.
COMMANDS = {"new": new_command}
