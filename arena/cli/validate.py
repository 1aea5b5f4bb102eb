"""`arena validate` and `arena submit`: the commands gather options, arena.authoring.validate
does the work, and render_checks prints the verdict (or one JSON object with --json)."""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from arena.cli.console import busy, out
from arena.cli.options import (
    BotArgument,
    BuildResultsOption,
    JsonOption,
    RunConfigOption,
    SandboxOption,
    sandbox_settings,
    with_time_options,
)
from arena.cli.render_checks import render_explain, render_report
from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.bots.manifest import BotManifest
    from arena.bots.sandbox import SandboxSettings
    from arena.game.players import TimeSettings

BUILD_CACHE = Path("results") / "build"  # where `arena play` builds bots too

def _sandbox(level: str | None, config: Path | None) -> SandboxSettings:
    """The sandbox of ``--sandbox`` (or the default), with a run's ``--config`` file over
    it (its level unless ``--sandbox`` is given, its exposed folders, its caps), so that
    the bot is built and started as in that run."""
    confined = sandbox_settings(level if level is not None or config is None else _config_level(config))
    if config is None:
        return confined
    from arena.tournament.settings import RunSettings, load_config, settings_from

    options = {k: v for k, v in load_config(config).items() if k != "sandbox"}
    settings = settings_from(options, base=RunSettings(bots_dir=Path("."), sandbox=confined)).sandbox
    assert settings is not None
    return settings


def _config_level(config: Path) -> str | None:
    from arena.tournament.settings import load_config

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


@with_time_options
def validate_command(
    bot: BotArgument,
    *,
    times: TimeSettings,  # --hello-ms … --no-timeout (with_time_options)
    sandbox: SandboxOption = None,
    config: RunConfigOption = None,
    results: BuildResultsOption = Path("results"),
    explain: Annotated[
        bool, typer.Option("--explain", help="Say what the bot sees and may write in its sandbox, its limits and the variables set for it; then validate.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Check a bot against every situation it must handle (exit 0 only if all pass)."""
    from arena.authoring.validate import validate_bot

    confined = _sandbox(sandbox, config)
    cache = _build_cache(results)
    explained = _explain(bot, confined, cache, json_output) if explain else None
    with busy("validating…", shown=not json_output):
        report = validate_bot(bot, times, build_cache=cache, sandbox=confined)
    if json_output:
        print(json.dumps({**report.to_dict(), **({"explain": explained} if explained is not None else {})}))
    else:
        render_report(out, report)
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
    render_explain(out, info)
    return info


@with_time_options
def submit_command(
    bot: BotArgument,
    bots: Annotated[Path | None, typer.Option("--bots", help="The bots folder to copy it into (created if missing).")] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Replace the bot of the same name in the bots folder with this one, its new version (once it passes).")] = False,
    *,
    times: TimeSettings,  # --hello-ms … --no-timeout (with_time_options)
    sandbox: SandboxOption = None,
    config: RunConfigOption = None,
    results: BuildResultsOption = Path("results"),
    server: Annotated[str | None, typer.Option("--server", help="Upload to this competition server instead (`arena serve`), e.g. http://127.0.0.1:8000.")] = None,
    token: Annotated[str | None, typer.Option("--token", help="Your team's token (with --server).", envvar="ARENA_TOKEN")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="With --server: print the new submission as JSON.")] = False,
) -> None:
    """Validate a bot, then copy it into a bots folder under its name (refused if it fails, or if a different bot has that name there, unless --replace); or, with --server, upload it to a competition server, which validates it in its queue."""
    from arena.authoring.submit import submit_bot

    if server is not None or bots is None:
        _submit_to_server(bot, bots, server, token, json_output)
        return

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
        _replace(bot, bots, old, new, times, confined, _build_cache(results))
        return
    outcome = submit_bot(bot, bots, times, build_cache=_build_cache(results), on_validated=functools.partial(render_report, out), sandbox=confined)
    if outcome.report is None:
        out.print(f"{outcome.destination} is already this bot (identical files): nothing to do", highlight=False)
    elif outcome.copied:
        out.print(Text(f"✓ submitted: {outcome.destination}", style="green"))
    else:
        out.print(f"{outcome.destination} arrived meanwhile with identical files: nothing copied", highlight=False)


def _submit_to_server(bot: Path, bots: Path | None, server: str | None, token: str | None, json_output: bool) -> None:
    from arena.web.client import submit_to_server

    if server is None:
        raise ArenaError("arena submit: give --bots DIR (a local bots folder) or --server URL --token T (a competition server)")
    if bots is not None:
        raise ArenaError("arena submit: --bots and --server go to different places: give one")
    if not token:
        raise ArenaError("arena submit --server: give your team's --token (or set ARENA_TOKEN)")
    sub = submit_to_server(bot, server, token)
    if json_output:
        print(json.dumps(sub))
        return
    out.print(
        Text(f"✓ uploaded as submission {sub['id']} ({sub['status']}): the server validates it in its queue; "
             f"{server.rstrip('/')}/team/submissions/{sub['id']} shows how it goes"),
        highlight=False,
    )


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
        outcome = submit_bot(bot, staging, ts, build_cache=build_cache, on_validated=functools.partial(render_report, out), sandbox=sandbox)
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


#: The commands of this module by name, for the app to register.
COMMANDS = {"validate": validate_command, "submit": submit_command}
