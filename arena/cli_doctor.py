"""`arena doctor`: the sandbox level this machine gives and why, what a bot sees, and the
toolchains found (each started once inside that sandbox). arena.authoring.doctor does the work."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from arena.cli import JsonOption, app, err, out
from arena.text import printable


@app.command("doctor")
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
        from arena.tournament import load_config

        options = load_config(config)
        if options.get("toolchains") is not None:
            exposed = tuple(options["toolchains"])
    with err.status("starting each toolchain in the sandbox…", spinner="dots") if err.is_terminal and not json_output else nullcontext():
        report = diagnose(exposed)
    if json_output:
        print(json.dumps(report.to_dict()))
        return
    out.print(Text.assemble(("sandbox: ", "bold"), report.level, (" (as root)" if report.root else " (not root)")))
    if report.why:
        out.print(Text(printable(report.why, multiline=True)))
    if report.cgroups:
        out.print(Text(f"cgroups: {', '.join(report.cgroups)}"))
    else:
        out.print(Text("cgroups: none usable (process and memory caps fall back to rlimits)"))
    out.print()
    out.print(Text("what a strict bot sees of this machine (read-only), besides its own folder and a private /tmp:", style="bold"))
    for root in report.visible:
        why = " (found: a toolchain)" if root in report.found else " (the operator's: [sandbox] expose)" if root in report.exposed else ""
        out.print(Text(f"  {printable(root)}{why}"))
    groups: dict[str, int] = {}
    for e in report.etc:  # /etc/java-17-openjdk/… as one line with its count
        top = "/".join(e.split("/")[:3])
        groups[top] = groups.get(top, 0) + 1
    etc = [printable(top) + (f" ({n} files)" if n > 1 else "") for top, n in groups.items()]
    out.print(Text(f"  of /etc: {', '.join(etc) or 'nothing'}"))
    out.print()
    table = Table(title=Text(f"toolchains (each started once at sandbox level {report.level})"), title_justify="left")
    table.add_column("", width=1)
    table.add_column("toolchain", no_wrap=True)
    table.add_column("program", no_wrap=True)
    table.add_column("version, or why it does not run", ratio=1)
    for t in report.toolchains:
        if not t.program:
            table.add_row(Text("-", style="dim"), Text(t.name), Text("not found", style="dim"), Text(""))
            continue
        mark = Text("✓", style="bold green") if t.runs else Text("✗", style="bold red")
        table.add_row(mark, Text(t.name), Text(printable(t.program)), Text(printable(t.version if t.runs else t.problem)))
    out.print(table)
    out.print(Text(
        "A folder a bot needs that is not listed: add it to the run's --config file, "
        "[sandbox] expose = [\"/path\"] (read-only, for every bot; a bot.toml cannot widen it)."
    ))
