"""`arena validate` and `arena submit`: the commands gather options, arena.validate does
the work, and the verdict is printed here (a table, or one JSON object with --json)."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from arena.cli import (
    BankMs,
    HelloMs,
    JsonOption,
    NoTimeout,
    SandboxOption,
    TimeScale,
    TurnMs,
    _time_settings,
    app,
    err,
    out,
    sandbox_settings,
)

if TYPE_CHECKING:
    from arena.validate import ValidationReport

BUILD_CACHE = Path("results") / "build"  # where `arena play` builds bots too

BotArgument = Annotated[Path, typer.Argument(help="A folder with bot.toml, an executable, or a .py/.js file.")]


def render_report(report: ValidationReport) -> None:
    """The verdict as a table (one line per check), then the whole story of every failure."""
    table = Table(title=f"arena validate {report.bot}", title_justify="left")
    table.add_column("", width=1)
    table.add_column("check", no_wrap=True)
    table.add_column("result", ratio=1)
    table.add_column("see", no_wrap=True)
    for check in report.checks:
        mark = Text("✓", style="bold green") if check.passed else Text("✗", style="bold red")
        section = check.protocol_section.split(" ", 1)[0]  # "§9"; the title is in the details
        table.add_row(mark, Text(check.name), Text(check.short), Text(section))
    out.print(table)
    if report.startup_ms is not None:
        timing = f"start-up {report.startup_ms:.0f} ms"
        if report.decisions_ms:
            timing += (
                f"; per decision: median {report.decision_median_ms:.2f} ms, "
                f"worst {report.decision_max_ms:.2f} ms ({len(report.decisions_ms)} decisions)"
            )
        out.print(timing, highlight=False)
    shown: dict[tuple[tuple[str, str], ...], str] = {}
    for check in report.failed:
        out.print()
        out.print(Text.assemble(("✗ ", "bold red"), (check.name, "bold"), f" — PROTOCOL.md {check.protocol_section}"))
        details = check.details or (("", check.message),)
        core = tuple(d for d in details if d[0] != "situation")
        if core in shown:
            out.print(Text(f"  the same failure as '{shown[core]}' above"))
            continue
        shown[core] = check.name
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column()
        for label, value in details:
            grid.add_row(Text(f"  {label}"), Text(value))
        out.print(grid)
    out.print()
    if report.passed:
        out.print(Text(f"✓ {report.bot}: all {len(report.checks)} checks passed", style="green"))
    else:
        out.print(Text(f"✗ {report.bot}: {len(report.failed)} of {len(report.checks)} checks failed", style="red"))


@app.command("validate")
def validate_command(
    bot: BotArgument,
    hello_ms: HelloMs = 10_000,
    turn_ms: TurnMs = 1_000,
    bank_ms: BankMs = 10_000,
    time_scale: TimeScale = 1.0,
    no_timeout: NoTimeout = False,
    sandbox: SandboxOption = None,
    json_output: JsonOption = False,
) -> None:
    """Check a bot against every situation it must handle (exit 0 only if all pass)."""
    from arena.validate import validate_bot

    ts = _time_settings(hello_ms, turn_ms, bank_ms, time_scale, no_timeout)
    confined = sandbox_settings(sandbox)
    with err.status("validating…", spinner="dots") if err.is_terminal and not json_output else nullcontext():
        report = validate_bot(bot, ts, build_cache=BUILD_CACHE, sandbox=confined)
    if json_output:
        print(json.dumps(report.to_dict()))
    else:
        render_report(report)
    if not report.passed:
        raise typer.Exit(1)


@app.command("submit")
def submit_command(
    bot: BotArgument,
    bots: Annotated[Path, typer.Option("--bots", help="The bots folder to copy it into (created if missing).")],
    hello_ms: HelloMs = 10_000,
    turn_ms: TurnMs = 1_000,
    bank_ms: BankMs = 10_000,
    time_scale: TimeScale = 1.0,
    no_timeout: NoTimeout = False,
    sandbox: SandboxOption = None,
) -> None:
    """Validate a bot, then copy it into a bots folder under its name (refused if it fails, or if a different bot has that name there)."""
    from arena.validate import submit_bot

    ts = _time_settings(hello_ms, turn_ms, bank_ms, time_scale, no_timeout)
    outcome = submit_bot(bot, bots, ts, build_cache=BUILD_CACHE, on_validated=render_report, sandbox=sandbox_settings(sandbox))
    if outcome.report is None:
        out.print(f"{outcome.destination} is already this bot (identical files): nothing to do", highlight=False)
    elif outcome.copied:
        out.print(Text(f"✓ submitted: {outcome.destination}", style="green"))
    else:
        out.print(f"{outcome.destination} arrived meanwhile with identical files: nothing copied", highlight=False)
