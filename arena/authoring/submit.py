"""`arena submit`: a bot validated, then copied into a bots folder only if it passes (and not
copied again when an identical bot is already there)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.authoring.checks import ValidationReport
from arena.authoring.validate import validate_bot
from arena.bots import BotError
from arena.bots.files import copy_bot
from arena.bots.manifest import BotManifest, discover_bots, find_bot, name_skeleton
from arena.bots.sandbox import SandboxSettings
from arena.errors import ArenaError
from arena.game.players import TimeSettings

# -- submit ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SubmitOutcome:
    report: ValidationReport | None  # None when an identical bot was already there
    destination: Path
    copied: bool


def _copied(manifest: BotManifest, copy: Path) -> str:
    """Copy the bot to ``copy`` with :func:`~arena.bots.files.copy_bot` (links kept inside,
    never followed); the content hash of what was copied."""
    try:
        return copy_bot(manifest.path, copy)
    except BotError as exc:
        raise ArenaError(f"bot {manifest.name!r} was not submitted: {exc}") from None
    except OSError as exc:
        raise ArenaError(f"cannot copy the bot into {copy.parent}: {exc}") from None


def submit_bot(
    path: Path,
    bots_dir: Path,
    time_settings: TimeSettings,
    *,
    build_cache: Path,
    on_validated: Callable[[ValidationReport], None] | None = None,
    sandbox: SandboxSettings | None = None,
) -> SubmitOutcome:
    """Validate the bot at ``path`` and copy it into ``bots_dir`` under its name.

    Raises :class:`ArenaError` (with the reason) if the bot cannot be found, fails
    validation, or its name is taken there by a different bot. The copy is made under a
    hidden temporary name in ``bots_dir`` (ignored by bot discovery) and renamed into
    place once complete, so a half-copied bot is never visible.
    """
    try:
        manifest = find_bot(path)
    except BotError as exc:
        raise ArenaError(str(exc)) from None
    name = manifest.name
    if name.startswith((".", "_")):
        raise ArenaError(f"bot {name!r}: a name starting with '.' or '_' is ignored in a bots folder; rename it")
    # A folder is renamed after its bot; a single file keeps its file name, which names it.
    dest = bots_dir / (name if manifest.is_folder else manifest.path.name)
    identical = _taken(bots_dir, manifest, dest)
    if identical:
        return SubmitOutcome(None, identical, copied=False)
    report = validate_bot(path, time_settings, build_cache=build_cache, sandbox=sandbox)
    if on_validated is not None:
        on_validated(report)
    if not report.passed:
        failed = report.failed
        raise ArenaError(
            f"bot {name!r} was not submitted: {len(failed)} check(s) failed ({', '.join(c.name for c in failed)}); "
            f"the first: {failed[0].message}"
        )
    if _taken(bots_dir, manifest, dest):  # the same bot arrived while it was being validated
        return SubmitOutcome(report, dest, copied=False)
    _copy_into_place(manifest, bots_dir, dest)
    return SubmitOutcome(report, dest, copied=True)


def _taken(bots_dir: Path, manifest: BotManifest, dest: Path) -> Path | None:
    """The path of an identical bot of the same name already in ``bots_dir``, None if
    the name is free; raises if the name (or the destination) belongs to a different bot."""
    if not bots_dir.exists():
        return None
    if not bots_dir.is_dir():
        raise ArenaError(f"{bots_dir}: not a folder")
    try:
        bots, _errors = discover_bots(bots_dir)
    except BotError as exc:
        raise ArenaError(str(exc)) from None
    for bot in bots:
        if bot.name != manifest.name:
            if name_skeleton(bot.name) == name_skeleton(manifest.name):
                raise ArenaError(
                    f"bot name {manifest.name!r} is too like {bot.name!r}, already taken in {bots_dir} ({bot.path}): "
                    "names that differ only in case or in lookalike characters are confused; give yours another name"
                )
            continue
        if bot.content_hash == manifest.content_hash and bot.is_folder == manifest.is_folder:
            return bot.path
        raise ArenaError(
            f"bot name {manifest.name!r} is already taken in {bots_dir} by a different bot ({bot.path}, content "
            f"{bot.content_hash}; yours is {manifest.content_hash}): remove that one first, or give yours another name"
        )
    if dest.exists() or dest.is_symlink():
        raise ArenaError(f"{dest} already exists and is not the bot {manifest.name!r}: remove it or rename your bot")
    return None


def _copy_into_place(manifest: BotManifest, bots_dir: Path, dest: Path) -> None:
    bots_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{manifest.name}.submit-", dir=bots_dir))
    try:
        if manifest.is_folder:
            copy = staging / "bot"
            # The files of its content hash only (no caches, no version control), as the arena reads them.
            if _copied(manifest, copy) != manifest.content_hash:
                raise ArenaError(f"{manifest.path}: its files changed while it was being submitted; try again")
            try:
                os.rename(copy, dest)  # atomic; fails if dest appeared meanwhile (a non-empty folder)
            except OSError as exc:
                raise ArenaError(f"cannot move the bot into {dest}: {exc}") from None
        else:
            copy = staging / manifest.path.name
            if _copied(manifest, copy) != manifest.content_hash:
                raise ArenaError(f"{manifest.path}: the file changed while it was being submitted; try again")
            try:
                os.link(copy, dest)  # atomic, and never replaces an existing file
            except FileExistsError:
                raise ArenaError(f"{dest} already exists: remove it or rename your bot") from None
            except OSError:  # a file system without hard links
                if dest.exists():
                    raise ArenaError(f"{dest} already exists: remove it or rename your bot") from None
                os.rename(copy, dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
