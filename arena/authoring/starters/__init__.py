"""Starter bots: ``arena new NAME --lang LANG`` writes a folder that plays random legal
plays with correct protocol handling, in one of several languages.

Each language's files are package data under ``templates/<lang>/``; a file's name there
ends in ``.tmpl`` (so that no tool takes a template for the project's own code) and its
text holds ``{{name}}`` (the bot's name), ``{{crate}}`` (a Cargo package name) and
``{{module}}`` (a Go module path) where those go.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from arena.bots.manifest import NAME_RULE, good_name, name_rule_for
from arena.errors import ArenaError

#: The languages ``arena new`` writes, in the order its help lists them.
LANGUAGES = ("python", "js", "c", "java", "rust", "go")

#: What each language needs on the machine that builds and runs the bot.
TOOLCHAINS: dict[str, tuple[str, ...]] = {
    "python": (),
    "js": ("node",),
    "c": ("cc",),
    "java": ("javac", "java"),
    "rust": ("cargo",),
    "go": ("go",),
}

_SUFFIX = ".tmpl"


class StarterError(ArenaError):
    """A starter bot that cannot be written: a bad name, language or folder."""


@dataclass(frozen=True, slots=True)
class Starter:
    """A starter bot just written: its folder and its files (relative, in order)."""

    name: str
    lang: str
    path: Path
    files: tuple[str, ...]


def check_name(name: str) -> None:
    """Refuse a name that bot.toml would refuse (the rules every bot name follows)."""
    if not good_name(name):
        raise StarterError(f"bot name {name!r}: a bot's name must be {name_rule_for(name)}")


def write_starter(name: str, lang: str, parent: Path) -> Starter:
    """Write the starter bot ``parent/name`` in ``lang``. Refuses a bad name or language, a
    parent whose own parent is missing (a missing ``parent`` alone is made) and a folder
    (or file) that is already there, naming it; never writes into an existing folder. If writing fails half-way, the new folder is removed."""
    check_name(name)
    if lang not in LANGUAGES:
        raise StarterError(f"--lang {lang!r}: not a language of `arena new`; choose one of {', '.join(LANGUAGES)}")
    if not parent.exists() and not parent.is_symlink() and parent.parent.is_dir():
        try:
            parent.mkdir()  # `--dir bots` in a fresh checkout: the bots folder, one level, is made
        except OSError as exc:
            raise StarterError(f"{parent}: cannot create the folder: {os.strerror(exc.errno or errno.EIO)}") from None
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist, nor does its parent"
        raise StarterError(f"{parent}: {what}; give an existing folder with --dir")
    target = parent / name
    try:
        target.mkdir()  # the refusal of an existing folder, file or link is this mkdir's
    except FileExistsError:
        raise StarterError(f"{target}: already exists; nothing was written (choose another name, or another --dir)") from None
    except OSError as exc:
        raise StarterError(f"{target}: cannot create the folder: {os.strerror(exc.errno or errno.EIO)}") from None
    values = {"name": name, "crate": _crate_name(name), "module": _module_path(name)}
    written: list[str] = []
    try:
        for relative, text in _templates(lang):
            file = target / relative
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(_fill(text, values), encoding="utf-8")
            written.append(relative)
    except OSError as exc:
        shutil.rmtree(target, ignore_errors=True)  # only the folder made above: ours
        where = exc.filename or target
        raise StarterError(f"{where}: cannot write the starter: {os.strerror(exc.errno or errno.EIO)}; nothing was kept") from None
    return Starter(name=name, lang=lang, path=target, files=tuple(written))


def _templates(lang: str) -> list[tuple[str, str]]:
    """Every template of ``lang`` as (path in the bot's folder, text), sorted."""
    root = resources.files(__name__) / "templates" / lang
    found: list[tuple[str, str]] = []

    def walk(folder, prefix: str) -> None:  # type: ignore[no-untyped-def]
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(_SUFFIX):
                found.append((prefix + entry.name[: -len(_SUFFIX)], entry.read_text(encoding="utf-8")))

    walk(root, "")
    if not found:  # a broken install, not the user's doing: say what is missing
        raise StarterError(f"the {lang} starter's files are missing from this installation of the arena ({root})")
    return sorted(found)


def _fill(text: str, values: dict[str, str]) -> str:
    """``text`` with each ``{{key}}`` of ``values`` filled in; other braces (Rust's ``{{``
    escapes, say) stay as they are."""
    pattern = r"\{\{(" + "|".join(map(re.escape, values)) + r")\}\}"
    return re.sub(pattern, lambda m: values[m.group(1)], text)


def _crate_name(name: str) -> str:
    """A Cargo package name for ``name``: letters, digits, '-' and '_', starting with a letter."""
    crate = re.sub(r"[^A-Za-z0-9_-]", "_", name)
    return crate if crate[0].isalpha() else f"bot_{crate}"


def _module_path(name: str) -> str:
    """A Go module path for ``name``: letters, digits and ``._~-``, not ending in a dot."""
    return re.sub(r"[^A-Za-z0-9._~-]", "_", name).rstrip(".") or "bot"


__all__ = ["LANGUAGES", "NAME_RULE", "TOOLCHAINS", "Starter", "StarterError", "check_name", "write_starter"]
