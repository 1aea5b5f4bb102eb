"""How the bot-author commands print: the verdict of `arena validate` (a table, then every
failure's story and the bot's stderr), its --explain, and `arena doctor`'s report."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from arena.cli.render import stderr_tail
from arena.text import LINE_LIMIT, printable

if TYPE_CHECKING:
    from arena.authoring.checks import ValidationReport


def render_report(out: Console, report: ValidationReport) -> None:
    """The verdict as a table (one line per check), then the whole story of every failure.
    What a check quotes of the bot (its answers, its stderr) is shown printable."""
    bot = printable(str(report.bot))
    table = Table(title=Text(f"arena validate {bot}"), title_justify="left")
    table.add_column("", width=1)
    table.add_column("check", no_wrap=True)
    table.add_column("result", ratio=1)
    table.add_column("see", no_wrap=True)
    for check in report.checks:
        mark = Text("✓", style="bold green") if check.passed else Text("✗", style="bold red")
        section = check.protocol_section.split(" ", 1)[0]  # "§9"; the title is in the details
        table.add_row(mark, Text(check.name), Text(printable(check.short, limit=LINE_LIMIT)), Text(section))
    out.print(table)
    if report.sandbox:
        out.print(f"sandbox: {report.sandbox}", highlight=False)
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
            limit = None if label == "stderr began" else LINE_LIMIT  # already cut to its first lines, each bounded
            grid.add_row(Text(f"  {label}"), Text(printable(value, multiline=True, limit=limit)))
        out.print(grid)
    _render_stderr(out, report)
    out.print()
    if report.passed:
        out.print(Text(f"✓ {bot}: all {len(report.checks)} checks passed", style="green"))
    else:
        out.print(Text(f"✗ {bot}: {len(report.failed)} of {len(report.checks)} checks failed", style="red"))


def _render_stderr(out: Console, report: ValidationReport) -> None:
    """What the bot wrote to stderr (its last lines), after a warning when it passed anyway."""
    if not report.stderr.strip():
        return
    out.print()
    for warning in report.warnings:
        out.print(Text.assemble(("! ", "bold yellow"), (warning, "yellow")))
    lines, before = stderr_tail(report.stderr)
    more = f" (the last {len(lines)} lines; {before} before them, all in --json)" if before else ""
    out.print(Text(f"the bot's stderr{more}:", style="bold"))
    out.print(Text("\n".join(lines), style="dim"))


def render_explain(out: Console, info: dict[str, Any]) -> None:
    """`arena validate --explain`: what the bot sees and may write, its limits in a game and
    in its build, and the variables set for it."""
    out.print(Text(f"{printable(info['bot'])} at sandbox level {info['sandbox']}, run from {printable(info['runs_from'])}", style="bold"))
    out.print(Text("  sees (read-only): " + ", ".join(printable(s) for s in info["sees"])))
    if "tmp" in info:
        out.print(Text(f"  writable: {info['tmp']}"))
    limits = ", ".join(f"{k} {v:g}" for k, v in info["game_limits"].items())
    out.print(Text(f"  limits in a game: {limits}"))
    if "build" in info:
        b = info["build"]
        out.print(Text(f"  build: {printable(' '.join(b['command']))} (at most {b['timeout_s']:g} s)"))
        out.print(Text("    writable: " + ", ".join(printable(w) for w in b["writable"])))
        out.print(Text("    limits: " + ", ".join(f"{k} {v:g}" for k, v in b["limits"].items())))
        out.print(Text("    set for it: " + " ".join(f"{k}={printable(v)}" for k, v in b["env"].items())))
    if info["env"]:
        out.print(Text("  set for it when it plays: " + " ".join(f"{k}={printable(v)}" for k, v in info["env"].items())))
    out.print()


def render_doctor(out: Console, report: Any) -> None:  # noqa: ANN401 - a doctor Diagnosis
    """`arena doctor`: the sandbox level and why, the cgroups, what a strict bot sees of the
    machine, and a row per toolchain (its version, or why it does not run)."""
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
