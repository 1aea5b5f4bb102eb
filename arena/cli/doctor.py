"""`arena doctor`: the sandbox level this machine gives and why, what a bot sees, and the
toolchains found (each started once inside that sandbox). arena.authoring.doctor does the work,
render_checks prints it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from arena.cli.console import busy, out
from arena.cli.options import JsonOption
from arena.cli.render_checks import render_doctor


def doctor_command(
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="A run's TOML file: its [sandbox] expose (or toolchains) folders are shown too."),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """What a bot gets here: the sandbox level and why, what it sees of the machine, and which toolchains run in it."""
    from arena.authoring.doctor import diagnose

    exposed = None
    if config is not None:
        from arena.tournament.settings import load_config

        options = load_config(config)
        if options.get("toolchains") is not None:
            exposed = tuple(options["toolchains"])
    with busy("starting each toolchain in the sandbox…", shown=not json_output):
        report = diagnose(exposed)
    if json_output:
        print(json.dumps(report.to_dict()))
        return
    render_doctor(out, report)


#: The commands of this module by name, for the app to register.
COMMANDS = {"doctor": doctor_command}
