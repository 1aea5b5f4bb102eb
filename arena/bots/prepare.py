"""Preparing a found bot to run: its files copied (and built, if it has a ``build`` step)
into the build cache keyed by its content hash, and the :class:`BotSpec` that starts it.

A bot never runs where it was found, and its folder is never modified: it runs from a
copy of exactly the files its content hash covers (:mod:`arena.bots.manifest` finds it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import tempfile
from pathlib import Path

from arena.text import printable

from . import toolchains
from ._errors import BotError, BotStartError, describe_returncode
from ._process import BotSpec
from .build import BuildCaps, remove_build_folder, run_build
from .files import BotFilesError, copy_bot, read_small_file
from .manifest import BotManifest
from .sandbox import DEFAULT_BUILD_TIMEOUT_CAP, Level, Sandbox, SandboxSettings
from .strict import visible_roots

COPIED = "copied.ok"


class BuildError(BotError):
    """A bot's build step failed; the message names the bot and where its log is."""


class BotCopyError(BotError):
    """A bot's files could not be copied to run from; the message names the bot and why."""


def prepare_bot(manifest: BotManifest, cache_dir: Path, sandbox: SandboxSettings | None = None) -> BotSpec:
    """A runnable spec. A bot runs from a copy of exactly the files its content hash
    covers, never from its own folder (where files the hash leaves out, or ones added
    since, could be run): a bot with a ``build`` step is copied into
    ``cache_dir/<name>-<hash>-<build key>/src`` and built there once per content hash
    and :meth:`~SandboxSettings.build_key` (the sandbox level and the folders it shows:
    a build made where more is shown may not run where less is), the log kept as
    ``build.log`` beside it, the bot's persistent build cache in
    ``cache_dir/cache/<name>`` (writable in its builds only; Go's, cargo's, npm's, pip's
    caches); any other bot is copied there once per content hash (:func:`run_copy`) and
    reused by every later run, game and process.

    With ``sandbox`` the bot runs (and builds) at that level, with its ``[limits]``
    within the run's caps; without, it is not confined at all."""
    sandboxed = sandbox is not None and sandbox.level.value != "none"
    if manifest.build is None:
        bot = run_copy(manifest, cache_dir)
        cwd = bot if manifest.is_folder else bot.parent
        policy = sandbox.for_bot(bot, manifest.limits) if sandbox is not None else None
        return BotSpec(name=manifest.name, argv=manifest.run, cwd=cwd, env=_env(manifest, sandboxed=sandboxed), sandbox=policy)
    # Absolute: the build and the bot run in another working folder (and, sandboxed,
    # another mount namespace), where a relative cache path means nothing.
    key = (sandbox or SandboxSettings(Level.NONE, toolchains=())).build_key()
    base = cache_dir.resolve() / f"{manifest.name}-{manifest.content_hash}-{key}"
    build_cache = cache_dir.resolve() / "cache" / manifest.name
    work = base / "src"
    done = base / "built.ok"
    log = base / "build.log"
    if not done.exists():
        if base.exists():
            shutil.rmtree(base)
        base.mkdir(parents=True)
        try:
            copied = copy_bot(manifest.path, work)
        except (BotFilesError, OSError) as exc:
            raise BuildError(f"bot {manifest.name}: cannot copy its files to build them: {exc}") from None
        if copied != manifest.content_hash:
            raise BuildError(f"bot {manifest.name}: its files changed since they were read ({manifest.path}); run again")
        policy = sandbox.for_build(work, build_cache) if sandbox is not None else None
        # The operator's cap over the bot's wish (without a sandbox: the default cap).
        cap = sandbox.build_timeout_s if sandbox is not None else DEFAULT_BUILD_TIMEOUT_CAP
        timeout = min(manifest.build_timeout_s, cap)
        capped = manifest.build_timeout_s > cap
        note = f"the bot asks {manifest.build_timeout_s:g} s for its build (build_timeout_s); the run's cap is {cap:g} s\n" if capped else ""
        # What the build may leave in its folder: the run's caps (without a sandbox: the defaults).
        caps = BuildCaps(sandbox.build_mb, sandbox.build_files) if sandbox is not None else BuildCaps()
        if os.path.isdir(build_cache) and caps.breach(build_cache):
            remove_build_folder(build_cache)  # only a cache: over the caps already, it starts afresh
        try:
            built = run_build(
                manifest.name, policy, list(manifest.build), work,
                _env(manifest, sandboxed=sandboxed, build_cache=build_cache), timeout, log=log, header=note, caps=caps,
            )
        except BotStartError as exc:
            log.write_text(note + f"{exc.reason}\n")
            raise BuildError(f"bot {manifest.name}: build command {manifest.build[0]!r}: {exc.reason} (log: {log})") from None
        level = sandbox.level.value if sandbox is not None else "none"
        if built.over:
            # Never kept, not even until the next run: what it wrote goes at once (the log
            # stays); an over-full build cache goes too (it is only a cache).
            if "build cache" in built.over:
                remove_build_folder(build_cache)
            gone = remove_build_folder(work)
            left = "" if gone else f"; its build folder {work} could not be removed"
            with contextlib.suppress(OSError), open(log, "a", encoding="utf-8") as f:
                f.write(f"\n[the arena stopped the build: {built.over}]\n")
            raise BuildError(f"bot {manifest.name}: build stopped: {built.over}{left} at sandbox level {level} (log: {log})")
        if built.returncode is None:
            whose = f"the run's cap; the bot asks {manifest.build_timeout_s:g} s" if capped else "its build_timeout_s"
            raise BuildError(
                f"bot {manifest.name}: build timed out after {timeout:g} s ({whose}) at sandbox level {level} (log: {log})"
            )
        if built.returncode != 0:
            why = f" ({built.explanation})" if built.explanation else ""
            how = f"exit status {built.returncode}" if built.returncode > 0 else describe_returncode(built.returncode)
            raise BuildError(
                f"bot {manifest.name}: build failed with {how}{why} at sandbox level {level} (log: {log}): "
                + describe_build_output(built.output, policy)
            )
        done.write_text(manifest.content_hash + "\n")
    policy = sandbox.for_bot(work, manifest.limits) if sandbox is not None else None
    return BotSpec(name=manifest.name, argv=manifest.run, cwd=work, env=_env(manifest, sandboxed=sandboxed), sandbox=policy)


def run_copy(manifest: BotManifest, cache_dir: Path) -> Path:
    """Where the bot (its folder, or its single file) is in its run copy,
    ``cache_dir/<name>-<hash>/src``: made once per content hash, verified (the files are
    hashed again as they are copied, and must be the bot that was read), and then reused
    as it is. The copy is made in a temporary folder beside it and renamed into place
    with :data:`COPIED` inside, so that a copy is there whole or not at all: of two
    processes copying at once, the one whose rename comes second uses the first's.
    Raises :class:`BotCopyError` (naming the bot) if the files cannot be copied, or
    changed since they were read."""
    # Absolute: the bot runs in another working folder (and, sandboxed, another mount
    # namespace), where a relative cache path means nothing.
    base = cache_dir.resolve() / f"{manifest.name}-{manifest.content_hash}"
    where = base / "src" if manifest.is_folder else base / "src" / manifest.path.name
    if _copied(base, manifest.content_hash):
        return where
    if manifest.is_folder and base.is_relative_to(manifest.path):
        raise BotCopyError(
            f"bot {manifest.name}: its run copy would go into {base.parent}, inside the bot's own folder "
            f"{manifest.path}, and change the bot: run the arena from outside that folder"
        )
    try:
        base.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{base.name}.", suffix=".tmp", dir=base.parent))
    except OSError as exc:
        raise BotCopyError(f"bot {manifest.name}: cannot copy its files to run them into {base.parent}: {exc.strerror or exc}") from None
    try:
        os.chmod(temp, 0o755)
        if not manifest.is_folder:
            os.mkdir(temp / "src", 0o755)
            os.chmod(temp / "src", 0o755)
        try:
            copied = copy_bot(manifest.path, temp / where.relative_to(base))
        except (BotFilesError, OSError) as exc:
            raise BotCopyError(f"bot {manifest.name}: cannot copy its files to run them: {exc}") from None
        if copied != manifest.content_hash:
            raise BotCopyError(f"bot {manifest.name}: its files changed since they were read ({manifest.path}); run again")
        (temp / COPIED).write_text(manifest.content_hash + "\n")
        try:
            os.rename(temp, base)  # atomic: the copy is whole, or not there
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY) or not _copied(base, manifest.content_hash):
                why = "is in the way (not a copy the arena made: remove it)" if exc.errno in (errno.EEXIST, errno.ENOTEMPTY) else f"cannot be made: {exc.strerror}"
                raise BotCopyError(f"bot {manifest.name}: its run copy {base} {why}") from None
            # Another process made the same copy first: it is the same files, use it.
    except OSError as exc:
        raise BotCopyError(f"bot {manifest.name}: cannot copy its files to run them into {temp}: {exc.strerror or exc}") from None
    finally:
        if os.path.lexists(temp):
            shutil.rmtree(temp, ignore_errors=True)
    return where


def _copied(base: Path, content_hash: str) -> bool:
    """Whether ``base`` is a finished run copy of the bot with this content hash."""
    try:
        return read_small_file(base, COPIED, 64).decode(errors="replace").strip() == content_hash
    except BotFilesError:
        return False


def _env(manifest: BotManifest, *, sandboxed: bool = False, build_cache: Path | None = None) -> dict[str, str]:
    """The bot's environment: PATH, LANG (and, unconfined, HOME, PYTHONPATH, TMPDIR) from
    the arena's, with the found toolchains' folders after PATH's own and their variables
    (:func:`~arena.bots.toolchains.toolchain_env`; for a build, its ``build_cache``), then
    what bot.toml sets. A sandbox sets HOME and TMPDIR itself."""
    keep = ("PATH", "LANG") if sandboxed else ("PATH", "LANG", "HOME", "PYTHONPATH", "TMPDIR")
    env = {k: v for k in keep if (v := os.environ.get(k))}
    env.setdefault("LANG", "C.UTF-8")
    env["PATH"] = toolchains.toolchain_path(env.get("PATH", "/usr/local/bin:/usr/bin:/bin"))
    env["PYTHONUNBUFFERED"] = "1"
    env.update(toolchains.toolchain_env(cache=build_cache))
    env.update(manifest.env)
    return env


#: Words that mark a line of a build's output as an error (the first ones say why).
_ERROR_LINE = re.compile(r"error|exception|fatal|cannot|can't|could not|not found|no such file|undefined|denied", re.I)
#: A stack trace's frame (Java's, Node's "    at …"; Python's "  File …"): never the cause.
_FRAME = re.compile(r"\s+(?:at |File \")")
#: Lines that say a file is missing or unreadable, whose paths may be ones the sandbox hides.
_MISSING_LINE = re.compile(
    r"no such file|not found|cannot find|can't find|could not (?:find|open|read|load|create)|does not exist|"
    r"permission denied|read-only file system|cannot open|failed to (?:open|read|load)", re.I,
)
_PATH = re.compile(r"(?<![\w.~-])/[\w.+@/-]+")
#: How many lines of a failed build's output are quoted from its start, and how many paths
#: it names are looked up on the host for the hint (each one stat).
_FIRST_LINES = 3
_PATHS_LOOKED_UP = 20


def describe_build_output(output: bytes, policy: Sandbox | None) -> str:
    """What a failed build said, in one line of printable text: its first error lines
    (the cause, where a stack trace's tail says little), its last line, and under
    ``strict`` a hint naming a path it could not find that exists on the host but that
    the sandbox hides (and how the operator shows it)."""
    lines = [line for line in output.decode(errors="replace").splitlines() if line.strip()]
    first = [line for line in lines if _ERROR_LINE.search(line) and not _FRAME.match(line)][:_FIRST_LINES] or lines[:_FIRST_LINES]
    parts = [printable(line.strip(), limit=200) for line in first]
    if lines and lines[-1] not in first:
        parts.append("… " + printable(lines[-1].strip(), limit=200))
    text = " | ".join(parts) or "(it printed nothing)"
    hidden = _hidden_path(lines, policy)
    if hidden:
        folder = hidden if os.path.isdir(hidden) else os.path.dirname(hidden)
        text += (
            f"; hint: {printable(hidden, limit=300)} exists on this machine but the strict sandbox does not show it: "
            f"if the bot needs it, the operator can show it to every bot with [sandbox] expose = "
            f"[\"{printable(folder, limit=300)}\"] in the run's --config file"
        )
    return text


def _hidden_path(lines: list[str], policy: Sandbox | None) -> str:
    """The first path named by a "not found" line that exists on the host and is outside
    what ``policy``'s strict sandbox shows (``""`` if none, or not strict)."""
    if policy is None or policy.level is not Level.STRICT:
        return ""
    roots = visible_roots(policy)
    looked = 0
    for line in lines:
        if not _MISSING_LINE.search(line):
            continue
        for match in _PATH.finditer(line[:4096]):
            path = os.path.normpath(match.group(0))
            if path in ("/", "/tmp") or path.startswith(("/proc/", "/dev/")):
                continue
            looked += 1
            if looked > _PATHS_LOOKED_UP:
                return ""
            if os.path.lexists(path) and not any(path == str(r) or path.startswith(str(r).rstrip("/") + "/") for r in roots):
                return path
    return ""
