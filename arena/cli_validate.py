"""`arena validate` and `arena submit`: the commands gather options, arena.authoring.validate does
the work, and the verdict is printed here (a table, or one JSON object with --json)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
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
from arena.errors import ArenaError
from arena.text import LINE_LIMIT, printable

if TYPE_CHECKING:
    from arena.authoring.checks import ValidationReport
    from arena.bots.manifest import BotManifest
    from arena.bots.sandbox import SandboxSettings
    from arena.game.players import TimeSettings

BUILD_CACHE = Path("results") / "build"  # where `arena play` builds bots too

BotArgument = Annotated[Path, typer.Argument(help="A folder with bot.toml, an executable, or a .py/.js file.", metavar="BOT")]
ResultsOption = Annotated[
    Path,
    typer.Option("--results", "-r", help="The results folder whose build/ holds the bot's build (as `arena run --results`)."),
]


ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c",
        help="A run's TOML file: its sandbox level, [sandbox] expose folders and build limits apply, as in that run.",
    ),
]


def _sandbox(level: str | None, config: Path | None) -> SandboxSettings:
    """The sandbox of ``--sandbox`` (or the default), with a run's ``--config`` file over
    it (its level unless ``--sandbox`` is given, its exposed folders, its caps), so that
    the bot is built and started as in that run."""
    confined = sandbox_settings(level if level is not None or config is None else _config_level(config))
    if config is None:
        return confined
    from arena.tournament import RunSettings, load_config, settings_from

    options = {k: v for k, v in load_config(config).items() if k != "sandbox"}
    settings = settings_from(options, base=RunSettings(bots_dir=Path("."), sandbox=confined)).sandbox
    assert settings is not None
    return settings


def _config_level(config: Path) -> str | None:
    from arena.tournament import load_config

    return load_config(config).get("sandbox")


def _build_cache(results: Path) -> Path:
    """``RESULTS/build``, made if missing; an error naming the folder when it cannot be."""
    cache = results / "build"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArenaError(f"{results}: cannot make the build folder {cache} there: {exc.strerror or exc}") from None
    if not os.access(cache, os.W_OK | os.X_OK):
        raise ArenaError(f"{cache}: the build folder is not writable: choose another folder with --results")
    return cache


def render_report(report: ValidationReport) -> None:
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
    _render_stderr(report)
    out.print()
    if report.passed:
        out.print(Text(f"✓ {bot}: all {len(report.checks)} checks passed", style="green"))
    else:
        out.print(Text(f"✗ {bot}: {len(report.failed)} of {len(report.checks)} checks failed", style="red"))


def _render_stderr(report: ValidationReport) -> None:
    """What the bot wrote to stderr (its last lines), after a warning when it passed anyway."""
    from arena.cli_render import stderr_tail

    if not report.stderr.strip():
        return
    out.print()
    for warning in report.warnings:
        out.print(Text.assemble(("! ", "bold yellow"), (warning, "yellow")))
    lines, before = stderr_tail(report.stderr)
    more = f" (the last {len(lines)} lines; {before} before them, all in --json)" if before else ""
    out.print(Text(f"the bot's stderr{more}:", style="bold"))
    out.print(Text("\n".join(lines), style="dim"))


@app.command("validate")
def validate_command(
    bot: BotArgument,
    hello_ms: HelloMs = 10_000,
    turn_ms: TurnMs = 1_000,
    bank_ms: BankMs = 10_000,
    time_scale: TimeScale = 1.0,
    no_timeout: NoTimeout = False,
    sandbox: SandboxOption = None,
    config: ConfigOption = None,
    results: ResultsOption = Path("results"),
    explain: Annotated[
        bool, typer.Option("--explain", help="Say what the bot sees and may write in its sandbox, its limits and the variables set for it; then validate.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Check a bot against every situation it must handle (exit 0 only if all pass)."""
    from arena.authoring.validate import validate_bot

    ts = _time_settings(hello_ms, turn_ms, bank_ms, time_scale, no_timeout)
    confined = _sandbox(sandbox, config)
    cache = _build_cache(results)
    explained = _explain(bot, confined, cache, json_output) if explain else None
    with err.status("validating…", spinner="dots") if err.is_terminal and not json_output else nullcontext():
        report = validate_bot(bot, ts, build_cache=cache, sandbox=confined)
    if json_output:
        print(json.dumps({**report.to_dict(), **({"explain": explained} if explained is not None else {})}))
    else:
        render_report(report)
    if not report.passed:
        raise typer.Exit(1)


def _explain(bot: Path, sandbox: SandboxSettings, cache: Path, quiet: bool) -> dict | None:
    """``--explain``: what the bot gets, printed (unless ``quiet``) and returned; None when
    the bot cannot be read (validate then says why)."""
    from arena.authoring.doctor import explain_bot
    from arena.bots import BotError

    try:
        info = explain_bot(bot, sandbox, cache)
    except (BotError, OSError):
        return None
    if quiet:
        return info
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
    return info


@app.command("submit")
def submit_command(
    bot: BotArgument,
    bots: Annotated[Path, typer.Option("--bots", help="The bots folder to copy it into (created if missing).")],
    replace: Annotated[bool, typer.Option("--replace", help="Replace the bot of the same name in the bots folder with this one, its new version (once it passes).")] = False,
    hello_ms: HelloMs = 10_000,
    turn_ms: TurnMs = 1_000,
    bank_ms: BankMs = 10_000,
    time_scale: TimeScale = 1.0,
    no_timeout: NoTimeout = False,
    sandbox: SandboxOption = None,
    config: ConfigOption = None,
    results: ResultsOption = Path("results"),
) -> None:
    """Validate a bot, then copy it into a bots folder under its name (refused if it fails, or if a different bot has that name there, unless --replace)."""
    from arena.authoring.submit import submit_bot

    ts = _time_settings(hello_ms, turn_ms, bank_ms, time_scale, no_timeout)
    confined = _sandbox(sandbox, config)
    new = _find(bot)
    old = _same_name(bots, new)
    if old is not None and (old.content_hash, old.is_folder) != (new.content_hash, new.is_folder):
        if not replace:
            raise ArenaError(
                f"bot name {new.name!r} is already taken in {bots} by a different bot ({old.path}, {_describe(old)}; "
                f"yours is {_describe(new)}): to submit yours as its new version, add --replace; "
                "or give yours another name"
            )
        _replace(bot, bots, old, new, ts, confined, _build_cache(results))
        return
    outcome = submit_bot(bot, bots, ts, build_cache=_build_cache(results), on_validated=render_report, sandbox=confined)
    if outcome.report is None:
        out.print(f"{outcome.destination} is already this bot (identical files): nothing to do", highlight=False)
    elif outcome.copied:
        out.print(Text(f"✓ submitted: {outcome.destination}", style="green"))
    else:
        out.print(f"{outcome.destination} arrived meanwhile with identical files: nothing copied", highlight=False)


def _find(path: Path) -> BotManifest:
    from arena.bots import BotError
    from arena.bots.manifest import find_bot

    try:
        return find_bot(path)
    except BotError as exc:
        raise ArenaError(str(exc)) from None


def _same_name(bots_dir: Path, bot: BotManifest) -> BotManifest | None:
    """The bot named like ``bot`` in ``bots_dir``, if there is one."""
    from arena.bots import BotError
    from arena.bots.manifest import discover_bots

    if not bots_dir.is_dir():
        return None  # submit_bot says what is wrong with it, if anything
    try:
        found, _errors = discover_bots(bots_dir)
    except BotError as exc:
        raise ArenaError(str(exc)) from None
    return next((b for b in found if b.name == bot.name), None)


def _describe(bot: BotManifest) -> str:
    return (f"version {bot.version}, " if bot.version else "") + f"content {bot.content_hash}"


def _replace(
    bot: Path, bots_dir: Path, old: BotManifest, new: BotManifest, ts: TimeSettings, sandbox: SandboxSettings,
    build_cache: Path = BUILD_CACHE,
) -> None:
    """Validate ``bot`` as submit does, then put it in place of ``old`` (its earlier
    version, in ``bots_dir``): the new copy is made complete beside it under a hidden
    name, then swapped in by renames; the old copy is removed only once the new one is
    in place. If the bot fails validation, or the copy fails, nothing changes."""
    from arena.authoring.submit import submit_bot

    # The entry of the folder that holds the old bot (the link, if it is one: the link is replaced).
    entry = next((e for e in bots_dir.iterdir() if e.resolve() == old.path), None)
    if entry is None:
        raise ArenaError(f"{old.path}: the bot {old.name!r} is not directly in {bots_dir}; replace it by hand")
    dest = bots_dir / (new.name if new.is_folder else new.path.name)
    if dest != entry and (dest.exists() or dest.is_symlink()):
        raise ArenaError(f"{dest} already exists and is not the bot {new.name!r}: remove it or rename your bot")
    # Hidden (a leading dot): a tournament looking for bots never sees it.
    staging = Path(tempfile.mkdtemp(prefix=f".{new.name}.replace-", dir=bots_dir))
    backup = staging / f"old-{entry.name}"
    try:
        outcome = submit_bot(bot, staging, ts, build_cache=build_cache, on_validated=render_report, sandbox=sandbox)
        try:
            os.rename(entry, backup)
        except OSError as exc:
            raise ArenaError(f"cannot move the old bot {entry} aside: {exc.strerror or exc}; nothing was changed") from None
        try:
            os.rename(outcome.destination, dest)
        except OSError as exc:
            try:
                os.rename(backup, entry)  # the old one back in its place
            except OSError:
                raise ArenaError(
                    f"cannot move the new bot into {dest} ({exc.strerror or exc}), nor the old one back: "
                    f"it is in {backup}"
                ) from None
            raise ArenaError(f"cannot move the new bot into {dest}: {exc.strerror or exc}; the old one was kept") from None
    finally:
        if not os.path.lexists(backup):  # never the old copy unless the new one took its place
            shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(staging, ignore_errors=True)  # the old copy, swapped out
    out.print(Text(f"✓ replaced {dest}: {_describe(old)} → {_describe(new)}", style="green"))
