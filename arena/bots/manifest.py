"""Finding bots: a folder with ``bot.toml``, a folder with a ``bot`` executable or a
``main.py``/``main.js``, or a single executable, ``.py`` or ``.js`` file.

A bot's identity is its name plus the content hash of its files. A bot never runs
where it was found, and its folder is never modified: it runs (and a ``build`` step
runs) from a copy of exactly the files that hash covers, in a cache keyed by it.
"""

from __future__ import annotations

import math
import os
import stat
import sys
import tomllib
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ._errors import BotError, not_executable_hint
from .files import MAX_MANIFEST_BYTES, SKIP_DIRS, BotFilesError, hash_bot, read_small_file
from .sandbox import MAX_ENV_BYTES, Limits, env_refusal

MANIFEST = "bot.toml"
# Entries of a folder of bots that are not bots: those of any bot folder, and the JS
# packages bots there might share (no bot sees them: each runs from a copy of its own).
_SKIP_DIRS = SKIP_DIRS | {"node_modules"}
#: The marker of a bot's finished run copy (beside its ``src``), as ``built.ok`` is of a build.
DEFAULT_BUILD_TIMEOUT_S = 300.0
_MAX_ARGV_BYTES = 32 * 1024  # `run` or `build`, all its arguments together


class ManifestError(BotError):
    """A bot that cannot be understood: names the file and the field at fault."""


@dataclass(frozen=True, slots=True)
class BotManifest:
    """A bot as found on disk, before it is built or started."""

    name: str
    version: str
    path: Path  # the folder (or the single file)
    run: tuple[str, ...]  # argv; {python} already replaced; relative to the working folder
    build: tuple[str, ...] | None = None
    build_timeout_s: float = DEFAULT_BUILD_TIMEOUT_S
    env: dict[str, str] = field(default_factory=dict)
    content_hash: str = ""
    limits: Limits | None = None  # [limits] of bot.toml; None: the defaults


    @property
    def is_folder(self) -> bool:
        return self.path.is_dir()


def content_hash(path: Path) -> str:
    """SHA-256 over the relative paths, modes and bytes of every file (sorted), the
    targets of the links kept inside the folder and the empty folders: everything but
    the caches and version control of :data:`~arena.bots.files.SKIP_DIRS`, so that any
    change to a bot's files makes it a new version. A bot runs from a copy of exactly
    these files (:func:`prepare_bot`), so the hash pins what it runs. Raises
    :class:`~arena.bots.files.BotFilesError` for what a bot folder may not hold
    (:mod:`arena.bots.files`: outside links, FIFOs, devices, outside hard links, too
    much)."""
    return hash_bot(path)


def _argv(value: object, where: str, field_name: str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ManifestError(
            f"{where}: field '{field_name}' must be a list of strings (an argv, never run through a shell), "
            f"e.g. {field_name} = {value.split()!r}"
        )
    if not isinstance(value, list) or not value or not all(isinstance(a, str) and a for a in value):
        raise ManifestError(f"{where}: field '{field_name}' must be a non-empty list of strings, not {value!r}")
    if any("\0" in a for a in value):
        raise ManifestError(f"{where}: field '{field_name}': an argument cannot hold a NUL byte")
    if sum(len(a.encode()) + 1 for a in value) > _MAX_ARGV_BYTES:
        raise ManifestError(f"{where}: field '{field_name}' is over {_MAX_ARGV_BYTES // 1024} KiB")
    return tuple(sys.executable if a == "{python}" else a.replace("{python}", sys.executable) for a in value)


def load_manifest(folder: Path) -> BotManifest:
    """Read ``folder/bot.toml``. Errors name the file and the field."""
    file = folder / MANIFEST
    data = _read_toml(folder)
    known = {"name", "version", "run", "build", "build_timeout_s", "env", "description", "author", "limits"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ManifestError(f"{file}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    name = data.get("name", folder.name)
    if not isinstance(name, str):
        raise ManifestError(f"{file}: field 'name' must be a string, not {name!r}")
    name = name.strip()
    if not good_name(name):
        what = "field 'name'" if "name" in data else f"the folder's name (the default for field 'name') {name!r}"
        raise ManifestError(f"{file}: {what} must be {name_rule_for(name)}" + ("" if "name" in data else "; set name in bot.toml"))
    version = data.get("version", "")
    if not isinstance(version, str | int | float):
        raise ManifestError(f"{file}: field 'version' must be a string, not {version!r}")
    if "run" not in data:
        raise ManifestError(f"{file}: field 'run' is missing: the argv that starts the bot, e.g. run = [\"{{python}}\", \"main.py\"]")
    run = _argv(data["run"], str(file), "run")
    build = _argv(data["build"], str(file), "build") if "build" in data else None
    timeout = data.get("build_timeout_s", DEFAULT_BUILD_TIMEOUT_S)
    if isinstance(timeout, int) and not isinstance(timeout, bool):
        timeout = float(min(timeout, 10**15))  # TOML's integers may be past a float's range; any cap is far below
    # `not timeout > 0`: NaN too; a bool is not a number of seconds.
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0 or not math.isfinite(timeout):
        raise ManifestError(
            f"{file}: field 'build_timeout_s' must be a positive, finite number of seconds, not {timeout!r} "
            "(the run caps it anyway; see docs/sandbox.md)"
        )
    env = data.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ManifestError(f"{file}: field 'env' must be a table of strings, not {env!r}")
    for key, value in env.items():
        why = env_refusal(key, value)
        if why is not None:
            raise ManifestError(f"{file}: field 'env': {key!r} is refused: {why} (see docs/sandbox.md)")
    if sum(len(k.encode()) + len(v.encode()) + 2 for k, v in env.items()) > MAX_ENV_BYTES:
        raise ManifestError(f"{file}: field 'env' is over {MAX_ENV_BYTES // 1024} KiB")
    limits = None
    if "limits" in data:
        try:
            limits = Limits.from_table(data["limits"], str(file))
        except ValueError as exc:
            raise ManifestError(str(exc)) from None
    return BotManifest(
        name=name,
        version=str(version),
        path=folder,
        run=run,
        build=build,
        build_timeout_s=float(timeout),
        env=dict(env),
        content_hash=content_hash(folder),
        limits=limits,
    )


#: How deep arrays and inline tables may nest in a bot.toml (tomllib recurses on them).
MAX_TOML_DEPTH = 32


def _read_toml(folder: Path) -> dict:
    """``folder/bot.toml``, parsed: a regular file of at most 64 KiB, nested at most
    :data:`MAX_TOML_DEPTH` deep, so that reading it is bounded whatever it holds."""
    file = folder / MANIFEST
    try:
        text = read_small_file(folder, MANIFEST, MAX_MANIFEST_BYTES).decode("utf-8")
    except BotFilesError as exc:
        raise ManifestError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{file}: not UTF-8 text (byte {exc.start})") from None
    depth = _toml_depth(text)
    if depth > MAX_TOML_DEPTH:
        raise ManifestError(f"{file}: arrays or tables nested {depth} deep; at most {MAX_TOML_DEPTH} are allowed")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{file}: not valid TOML: {exc}") from None
    except RecursionError:  # the pre-check should make this unreachable; never a traceback
        raise ManifestError(f"{file}: nested too deep to read") from None


def _toml_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` outside strings and comments: an upper bound
    on how deep tomllib will recurse (table headers count 1 or 2, which is harmless)."""
    depth = deepest = i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(0, depth - 1)
        elif c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            j = i + len(quote)
            while j < n and not text.startswith(quote, j):
                if c == '"' and text[j] == "\\":
                    j += 1
                elif len(quote) == 1 and text[j] == "\n":
                    break  # an unclosed string: tomllib will say so
                j += 1
            i = j + len(quote)
            continue
        i += 1
    return deepest


def find_bot(path: Path) -> BotManifest:
    """The bot at ``path``: a folder (bot.toml, or an executable ``bot``, ``main.py``,
    ``main.js``) or a single executable / ``.py`` / ``.js`` file. The path may be a link
    (it is resolved first); what it leads to must be a folder or a regular file, and its
    files must keep the rules of :mod:`arena.bots.files`."""
    try:
        return _find_bot(path)
    except BotFilesError as exc:
        raise ManifestError(str(exc)) from None


def _find_bot(path: Path) -> BotManifest:
    try:
        path = path.resolve(strict=True)
    except FileNotFoundError:
        raise ManifestError(f"{path}: no such bot (not a file or folder)") from None
    except (OSError, RuntimeError) as exc:  # a loop of links, a folder that cannot be searched
        raise ManifestError(f"{path}: cannot be read: {exc}") from None
    try:
        mode = os.stat(path).st_mode  # a stat, never an open: a FIFO does not block here
    except OSError as exc:
        raise ManifestError(f"{path}: cannot be read: {exc.strerror}") from None
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        raise ManifestError(f"{path}: not a bot: a bot is a folder or a regular file, not a FIFO, socket or device")
    if stat.S_ISDIR(mode):
        if os.path.lexists(path / MANIFEST):
            return load_manifest(path)
        candidates = [
            ((path / "bot"), ("./bot",)),
            ((path / "main.py"), (sys.executable, "main.py")),
            ((path / "main.js"), ("node", "main.js")),
        ]
        for file, argv in candidates:
            if file.is_file() and (file.name != "bot" or os.access(file, os.X_OK)):
                if not good_name(path.name):
                    raise ManifestError(f"{path}: a bot's name (here the folder's) must be {name_rule_for(path.name)}; rename it, or add a {MANIFEST} with a name")
                return BotManifest(name=path.name, version="", path=path, run=argv, content_hash=content_hash(path))
        hint = not_executable_hint("./bot", path)
        raise ManifestError(
            f"{path}: not a bot folder: it needs a {MANIFEST}, an executable 'bot', a main.py or a main.js"
            + (f" ({hint})" if hint else "")
        )
    name = path.name.split(".")[0]
    if path.suffix == ".py":
        argv: tuple[str, ...] = (sys.executable, path.name)
    elif path.suffix == ".js":
        argv = ("node", path.name)
    elif os.access(path, os.X_OK):
        argv = (f"./{path.name}",)
    else:
        raise ManifestError(f"{path}: not a bot: a single-file bot is an executable, a .py or a .js file")
    if not good_name(name):
        raise ManifestError(f"{path}: a bot's name (here the file's, {name!r}) must be {name_rule_for(name)}; rename the file")
    return BotManifest(name=name, version="", path=path, run=argv, content_hash=content_hash(path))


#: What a bot's name may be (it shows in tables, file names and keys such as name@hash).
#: ASCII only: a name must read the same in every terminal and file system, and two names
#: must never look alike (see :func:`name_skeleton`).
NAME_RULE = "1 to 64 ASCII letters, digits, '.', '_', '+' or '-', starting with a letter or digit"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-")


def good_name(name: str) -> bool:
    return 0 < len(name) <= 64 and name[0].isalnum() and all(c in _NAME_CHARS for c in name)


# Unicode's confusables (confusables.txt) among the characters a name may hold, each to
# its prototype: digits and letters that look alike, and letters that look like two.
_LOOKALIKES = str.maketrans({"0": "O", "1": "l", "I": "l", "|": "l"})
_LOOKALIKES_FOLDED = str.maketrans({"m": "rn", "w": "vv", "d": "cl"})


def name_skeleton(name: str) -> str:
    """What ``name`` looks like: two names with the same skeleton are too alike to be
    told apart in a table (``Greedy`` and ``greedy``, ``bot1`` and ``botl``, ``m`` and
    ``rn``; ``grееdy`` with a Cyrillic е, for a name not yet checked to be ASCII). NFKC,
    Latin lookalikes of Cyrillic and Greek letters, Unicode's confusables, case folded."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(_SCRIPT_LOOKALIKES.get(c, c) for c in text).translate(_LOOKALIKES)
    return text.casefold().translate(_LOOKALIKES_FOLDED)


def name_rule_for(name: str) -> str:
    """NAME_RULE, and, for a name with a letter that only looks Latin, what it looks like."""
    odd = next((c for c in name if ord(c) > 127), None)
    if odd is None:
        return NAME_RULE
    what = f"{odd!r} (U+{ord(odd):04X} {unicodedata.name(odd, 'unnamed')}) is not ASCII"
    looks = unicodedata.normalize("NFKC", "".join(_SCRIPT_LOOKALIKES.get(c, c) for c in name))
    if looks != name and good_name(looks):
        what += f"; the name looks like {looks!r}, which it would be confused with"
    return f"{NAME_RULE}: {what}"


# Cyrillic and Greek letters that look like Latin ones (from Unicode's confusables), so
# that a name which is not ASCII is still compared by its look where it is reported.
_SCRIPT_LOOKALIKES = {
    "а": "a", "А": "A", "В": "B", "с": "c", "С": "C", "е": "e", "Е": "E", "ё": "e", "һ": "h", "Н": "H",
    "і": "i", "І": "I", "ј": "j", "Ј": "J", "к": "k", "К": "K", "М": "M", "о": "o", "О": "O", "р": "p",
    "Р": "P", "ԛ": "q", "ѕ": "s", "Ѕ": "S", "Т": "T", "у": "y", "У": "Y", "х": "x", "Х": "X", "ԝ": "w",
    "Ԝ": "W", "ӏ": "l", "Ӏ": "l", "ү": "y", "Ү": "Y", "ɡ": "g", "ԁ": "d", "ս": "u", "օ": "o", "Օ": "O",
    "α": "a", "Α": "A", "Β": "B", "ε": "e", "Ε": "E", "Ζ": "Z", "Η": "H", "ι": "i", "Ι": "I", "κ": "k",
    "Κ": "K", "Μ": "M", "ν": "v", "Ν": "N", "ο": "o", "Ο": "O", "ρ": "p", "Ρ": "P", "τ": "t", "Τ": "T",
    "υ": "u", "Υ": "Y", "χ": "x", "Χ": "X", "ϲ": "c", "Ϲ": "C", "ϳ": "j", "Ϳ": "J",
}


def discover_bots(folder: Path) -> tuple[list[BotManifest], list[tuple[Path, str]]]:
    """Every bot directly inside ``folder``; returns the bots and the (path, error) of
    entries that look like bots but cannot be read. Names must be unique. A folder
    that is itself a bot (it has a ``bot.toml``) is an error, not a folder of bots."""
    if not folder.is_dir():
        raise ManifestError(f"{folder}: not a folder of bots")
    if os.path.lexists(folder / MANIFEST):  # the bot itself, not the folder that holds it
        parent = folder.parent if folder.name not in ("", "..") else folder.resolve().parent
        raise ManifestError(
            f"{folder} is a bot (it has a {MANIFEST}); --bots takes the folder that holds the bots, e.g. --bots {parent}"
        )
    bots: list[BotManifest] = []
    errors: list[tuple[Path, str]] = []
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        raise ManifestError(f"{folder}: cannot list the folder of bots: {exc.strerror}") from None
    for entry in entries:
        if entry.name.startswith((".", "_")) or entry.name in _SKIP_DIRS:
            continue
        try:
            # lstat, then stat without opening: a FIFO or device entry is reported, never opened.
            mode = entry.stat().st_mode
        except OSError as exc:
            errors.append((entry, f"{entry}: cannot be read: {exc.strerror or exc}"))
            continue
        if stat.S_ISREG(mode) and not (entry.suffix in {".py", ".js"} or os.access(entry, os.X_OK)):
            continue  # READMEs and the like
        try:
            bots.append(find_bot(entry))
        except BotError as exc:
            errors.append((entry, str(exc)))
    seen: dict[str, BotManifest] = {}
    unique: list[BotManifest] = []
    for bot in bots:
        taken = seen.get(name_skeleton(bot.name))
        if taken is not None and taken.name == bot.name:
            errors.append((bot.path, f"{bot.path}: bot name {bot.name!r} is already used by {taken.path}"))
            continue
        if taken is not None:
            errors.append((bot.path, f"{bot.path}: bot name {bot.name!r} is too like {taken.name!r} ({taken.path}), "
                           "already in this folder: rename one of them"))
            continue
        seen[name_skeleton(bot.name)] = bot
        unique.append(bot)
    return unique, errors
