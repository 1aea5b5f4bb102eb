"""Finding bots: a folder with ``bot.toml``, a folder with a ``bot`` executable or a
``main.py``/``main.js``, or a single executable, ``.py`` or ``.js`` file.

A bot's identity is its name plus the content hash of its files; a folder is
never modified (a ``build`` step runs on a copy in a cache keyed by that hash).
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ._errors import BotError, BotStartError, describe_returncode
from ._process import BotSpec
from .sandbox import (
    DEFAULT_BUILD_TIMEOUT_CAP,
    MAX_ENV_BYTES,
    Limits,
    SandboxSettings,
    env_refusal,
    run_build,
)

MANIFEST = "bot.toml"
_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
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
    """SHA-256 over the relative paths, modes and bytes of every file (sorted), so
    that any change to a bot's files makes it a new version."""
    h = hashlib.sha256()
    if path.is_file():
        h.update(path.name.encode() + b"\0" + path.read_bytes())
        return h.hexdigest()[:16]
    for file in sorted(_files(path)):
        rel = file.relative_to(path).as_posix()
        mode = "x" if os.access(file, os.X_OK) else "-"
        h.update(f"{rel}\0{mode}\0".encode())
        h.update(file.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _files(folder: Path) -> list[Path]:
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        out += [Path(root, f) for f in files if not f.endswith((".pyc", ".pyo"))]
    return out


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
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{file}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{file}: cannot read: {exc}") from None
    known = {"name", "version", "run", "build", "build_timeout_s", "env", "description", "author", "limits"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ManifestError(f"{file}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    name = data.get("name", folder.name)
    if not isinstance(name, str):
        raise ManifestError(f"{file}: field 'name' must be a string, not {name!r}")
    name = name.strip()
    if not _good_name(name):
        what = "field 'name'" if "name" in data else f"the folder's name (the default for field 'name') {name!r}"
        raise ManifestError(f"{file}: {what} must be {NAME_RULE}" + ("" if "name" in data else "; set name in bot.toml"))
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


def find_bot(path: Path) -> BotManifest:
    """The bot at ``path``: a folder (bot.toml, or an executable ``bot``, ``main.py``,
    ``main.js``) or a single executable / ``.py`` / ``.js`` file."""
    path = path.resolve()
    if not path.exists():
        raise ManifestError(f"{path}: no such bot (not a file or folder)")
    if path.is_dir():
        if (path / MANIFEST).is_file():
            return load_manifest(path)
        candidates = [
            ((path / "bot"), ("./bot",)),
            ((path / "main.py"), (sys.executable, "main.py")),
            ((path / "main.js"), ("node", "main.js")),
        ]
        for file, argv in candidates:
            if file.is_file() and (file.name != "bot" or os.access(file, os.X_OK)):
                if not _good_name(path.name):
                    raise ManifestError(f"{path}: a bot's name (here the folder's) must be {NAME_RULE}; rename it, or add a {MANIFEST} with a name")
                return BotManifest(name=path.name, version="", path=path, run=argv, content_hash=content_hash(path))
        raise ManifestError(
            f"{path}: not a bot folder: it needs a {MANIFEST}, an executable 'bot', a main.py or a main.js"
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
    if not _good_name(name):
        raise ManifestError(f"{path}: a bot's name (here the file's, {name!r}) must be {NAME_RULE}; rename the file")
    return BotManifest(name=name, version="", path=path, run=argv, content_hash=content_hash(path))


#: What a bot's name may be (it shows in tables, file names and keys such as name@hash).
NAME_RULE = "1 to 64 letters, digits, '.', '_', '+' or '-', starting with a letter or digit"


def _good_name(name: str) -> bool:
    return 0 < len(name) <= 64 and name[0].isalnum() and all(c.isalnum() or c in "._+-" for c in name)


def discover_bots(folder: Path) -> tuple[list[BotManifest], list[tuple[Path, str]]]:
    """Every bot directly inside ``folder``; returns the bots and the (path, error) of
    entries that look like bots but cannot be read. Names must be unique. A folder
    that is itself a bot (it has a ``bot.toml``) is an error, not a folder of bots."""
    if not folder.is_dir():
        raise ManifestError(f"{folder}: not a folder of bots")
    if (folder / MANIFEST).is_file():  # the bot itself, not the folder that holds it
        parent = folder.parent if folder.name not in ("", "..") else folder.resolve().parent
        raise ManifestError(
            f"{folder} is a bot (it has a {MANIFEST}); --bots takes the folder that holds the bots, e.g. --bots {parent}"
        )
    bots: list[BotManifest] = []
    errors: list[tuple[Path, str]] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith((".", "_")) or entry.name in _SKIP_DIRS:
            continue
        if entry.is_file() and not (entry.suffix in {".py", ".js"} or os.access(entry, os.X_OK)):
            continue  # READMEs and the like
        try:
            bots.append(find_bot(entry))
        except ManifestError as exc:
            errors.append((entry, str(exc)))
    seen: dict[str, Path] = {}
    unique: list[BotManifest] = []
    for bot in bots:
        if bot.name in seen:
            errors.append((bot.path, f"{bot.path}: bot name {bot.name!r} is already used by {seen[bot.name]}"))
            continue
        seen[bot.name] = bot.path
        unique.append(bot)
    return unique, errors


class BuildError(BotError):
    """A bot's build step failed; the message names the bot and where its log is."""


def prepare_bot(manifest: BotManifest, cache_dir: Path, sandbox: SandboxSettings | None = None) -> BotSpec:
    """A runnable spec: for a bot with a ``build`` step, the folder is copied into
    ``cache_dir/<name>-<hash>/`` and built there once per content hash (the log is
    kept as ``build.log`` beside it); otherwise it runs in its own folder.

    With ``sandbox`` the bot runs (and builds) at that level, with its ``[limits]``
    within the run's caps; without, it is not confined at all."""
    sandboxed = sandbox is not None and sandbox.level.value != "none"
    if manifest.build is None:
        cwd = manifest.path if manifest.is_folder else manifest.path.parent
        policy = sandbox.for_bot(manifest.path, manifest.limits) if sandbox is not None else None
        return BotSpec(name=manifest.name, argv=manifest.run, cwd=cwd, env=_env(manifest, sandboxed=sandboxed), sandbox=policy)
    # Absolute: the build and the bot run in another working folder (and, sandboxed,
    # another mount namespace), where a relative cache path means nothing.
    base = cache_dir.resolve() / f"{manifest.name}-{manifest.content_hash}"
    work = base / "src"
    done = base / "built.ok"
    log = base / "build.log"
    if not done.exists():
        if base.exists():
            shutil.rmtree(base)
        base.mkdir(parents=True)
        shutil.copytree(manifest.path, work, ignore=shutil.ignore_patterns(*_SKIP_DIRS))
        policy = sandbox.for_bot(work, manifest.limits, writable=True) if sandbox is not None else None
        # The operator's cap over the bot's wish (without a sandbox: the default cap).
        cap = sandbox.build_timeout_s if sandbox is not None else DEFAULT_BUILD_TIMEOUT_CAP
        timeout = min(manifest.build_timeout_s, cap)
        capped = manifest.build_timeout_s > cap
        note = f"the bot asks {manifest.build_timeout_s:g} s for its build (build_timeout_s); the run's cap is {cap:g} s\n" if capped else ""
        try:
            built = run_build(
                manifest.name, policy, list(manifest.build), work, _env(manifest, sandboxed=sandboxed),
                timeout, log=log, header=note,
            )
        except BotStartError as exc:
            log.write_text(note + f"{exc.reason}\n")
            raise BuildError(f"bot {manifest.name}: build command {manifest.build[0]!r}: {exc.reason} (log: {log})") from None
        if built.returncode is None:
            whose = f"the run's cap; the bot asks {manifest.build_timeout_s:g} s" if capped else "its build_timeout_s"
            raise BuildError(f"bot {manifest.name}: build timed out after {timeout:g} s ({whose}) (log: {log})")
        if built.returncode != 0:
            # The build's own words, in one line of printable text (no terminal escapes).
            lines = built.output[-4096:].decode(errors="replace").strip().splitlines()[-3:]
            tail = ["".join(c if c.isprintable() else "?" for c in line)[:300] for line in lines]
            why = f" ({built.explanation})" if built.explanation else ""
            how = f"exit status {built.returncode}" if built.returncode > 0 else describe_returncode(built.returncode)
            raise BuildError(f"bot {manifest.name}: build failed with {how}{why} (log: {log}): " + " | ".join(tail))
        done.write_text(manifest.content_hash + "\n")
    policy = sandbox.for_bot(work, manifest.limits) if sandbox is not None else None
    return BotSpec(name=manifest.name, argv=manifest.run, cwd=work, env=_env(manifest, sandboxed=sandboxed), sandbox=policy)


def _env(manifest: BotManifest, *, sandboxed: bool = False) -> dict[str, str]:
    """The bot's environment: PATH, LANG (and, unconfined, HOME, PYTHONPATH, TMPDIR) from
    the arena's, then what bot.toml sets. A sandbox sets HOME and TMPDIR itself."""
    keep = ("PATH", "LANG") if sandboxed else ("PATH", "LANG", "HOME", "PYTHONPATH", "TMPDIR")
    env = {k: v for k in keep if (v := os.environ.get(k))}
    env.setdefault("LANG", "C.UTF-8")
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(manifest.env)
    return env
