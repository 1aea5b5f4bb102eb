"""Sandboxes for untrusted bots: three levels, per-bot limits, and each bot's CPU time
and peak memory per game.

Levels (``--sandbox``):

- ``none``: the bot runs as the arena does (its own session; its tree ended on close).
- ``limits``: also resource limits (CPU seconds per game, memory, open files, file size,
  no core dumps, a process-count cap where a pids cgroup exists), a private temporary
  folder (its HOME and TMPDIR, removed afterwards, capped in size) and an environment
  cleared down to PATH, HOME, LANG, TMPDIR plus what the bot's ``bot.toml`` sets.
- ``strict``: also, through bubblewrap (``bwrap``): no network (a network namespace of its
  own), a read-only view of a fixed list of folders
  (:func:`~arena.bots.strict.visible_roots`: ``/usr`` and its links and what toolchains
  there need of ``/etc``, the Python installation and the arena's packages, the toolchains
  found outside ``/usr`` (:mod:`arena.bots.toolchains`) and the operator's folders) with
  the bot's own folder read-only and a private,
  size-capped ``/tmp`` as the only writable place (a build: also its build folder and the
  bot's build cache), no view of other bots or of the results, its own PID namespace (so
  the whole tree dies with it, double-forked grandchildren included), no
  capabilities, and a system call filter (:mod:`arena.bots._seccomp`: no kernel key
  rings, no ptrace, no new namespaces…; see docs/sandbox.md). When the arena runs as root, the bot runs as an unprivileged user id of
  its own (``setpriv``), so that the process-count limit holds; a pids cgroup caps it too
  where there is one. Without root, bwrap makes a user namespace for each bot, and the
  process cap is ``RLIMIT_NPROC`` set inside it (``prlimit``), where it counts that bot's
  processes only; the one warning of :func:`~arena.bots.strict.resolve_level` says what
  else is weaker.

At every level, nothing the bot supplies is interpreted outside its sandbox: the
programs that start it (bwrap, setpriv or prlimit, env) get :func:`launcher_env`, and the bot's
environment reaches its own program only (under ``strict`` through ``env -i`` as the
last step, inside every namespace and after the user id is dropped). A bot's ``PATH`` or
argv[0] never adds to what ``strict`` shows: its program is looked for within that view
only. docs/sandbox.md says it for operators and bot authors.

Linux only; elsewhere (macOS) the arena runs bots at ``none`` with a warning.

This module holds what a sandbox is: the levels, a bot's limits and the defaults and caps
on them, :class:`SandboxSettings` (a run's level with the tournament's caps),
:class:`Sandbox` (one bot's policy, in its :class:`~arena.bots.BotSpec`), and the rules
on a bot's environment (:func:`env_refusal`, the check ``bot.toml`` is read through).
Beside it: :mod:`arena.bots.strict` probes what the machine supports, picks the level
of a run (:func:`~arena.bots.strict.resolve_level`, and the one warning when ``strict``
is not available) and builds bwrap's command line; :mod:`arena.bots.jail` starts and
watches one bot process (:func:`~arena.bots.jail.open_jail`, used by ``open_bot``);
:mod:`arena.bots.build` runs a bot's build step in the same sandbox, bounded in time,
output and disk (:func:`~arena.bots.build.run_build`, and
:func:`~arena.bots.build.build_in_thread`, which makes it interruptible from trio).
"""

from __future__ import annotations

import enum
import logging
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from . import toolchains
from ._errors import BotStartError

__all__ = [
    "DEFAULT_BUILD_FILES_CAP",
    "DEFAULT_BUILD_LIMITS",
    "DEFAULT_BUILD_MB_CAP",
    "DEFAULT_BUILD_TIMEOUT_CAP",
    "DEFAULT_CAPS",
    "DEFAULT_LIMITS",
    "Level",
    "Limits",
    "MAX_ENV_BYTES",
    "Sandbox",
    "SandboxSettings",
    "TOOLCHAINS_VAR",
    "env_refusal",
    "launcher_env",
]

log = logging.getLogger(__name__)

LINUX = sys.platform.startswith("linux")
MIB = 1024 * 1024


class Level(enum.Enum):
    NONE = "none"
    LIMITS = "limits"
    STRICT = "strict"


@dataclass(frozen=True, slots=True)
class Limits:
    """A bot's resource limits (``[limits]`` in bot.toml), or a tournament's caps on them.

    ``cpu_s`` is CPU time per game (all the bot's processes and threads together: a bot
    that thinks on two cores uses it twice as fast); the others hold at every moment.
    """

    memory_mb: int = 512  # all the bot's processes together (RAM, its /tmp included)
    cpu_s: float = 60.0  # CPU seconds per game
    processes: int = 64  # processes and threads at once
    tmp_mb: int = 64  # its temporary folder, and the largest file it may write
    open_files: int = 256  # per process

    @classmethod
    def from_table(cls, table: object, where: str, base: Limits | None = None) -> Limits:
        """Limits from a TOML table over ``base`` (default: :data:`DEFAULT_LIMITS`);
        errors name ``where`` and the key."""
        base = base or DEFAULT_LIMITS
        if not isinstance(table, Mapping):
            raise ValueError(f"{where}: [limits] must be a table, e.g. [limits] memory_mb = 256")
        known = {f.name: f.type for f in fields(cls)}
        changes: dict[str, float | int] = {}
        for key, value in table.items():
            if key not in known:
                raise ValueError(f"{where}: unknown limit {key!r} (known: {', '.join(known)})")
            whole = key != "cpu_s"
            ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0 and value < math.inf
            if not ok or (whole and value != int(value)):
                kind = "a positive whole number" if whole else "a positive number"
                raise ValueError(f"{where}: limit {key!r} must be {kind}, not {value!r}")
            changes[key] = int(value) if whole else float(min(value, 10**15))  # TOML integers go past floats
        return replace(base, **changes)

    def within(self, caps: Limits) -> Limits:
        """These limits, each lowered to the cap if it asks for more."""
        return Limits(
            **{f.name: min(getattr(self, f.name), getattr(caps, f.name)) for f in fields(self)}  # type: ignore[arg-type]
        )

    def over(self, caps: Limits) -> list[str]:
        """The limits that ask for more than ``caps`` allow, as ``"memory_mb 4096 > 2048"``."""
        return [
            f"{f.name} {getattr(self, f.name):g} > {getattr(caps, f.name):g}"
            for f in fields(self)
            if getattr(self, f.name) > getattr(caps, f.name)
        ]


DEFAULT_LIMITS = Limits()
"""What a bot gets when its bot.toml sets no ``[limits]``."""

DEFAULT_CAPS = Limits(memory_mb=2048, cpu_s=600.0, processes=256, tmp_mb=1024, open_files=4096)
"""The most a bot may ask for, unless the tournament sets other caps."""


DEFAULT_BUILD_TIMEOUT_CAP = 300.0
"""The most wall-clock seconds a bot's build step may take, unless the run sets another cap."""

DEFAULT_BUILD_MB_CAP = 1024
"""The most disk space (MiB) a bot's build folder may take, while it builds and after,
unless the run sets another cap (``build_mb``)."""

DEFAULT_BUILD_FILES_CAP = 20_000
"""The most files, folders and links a bot's build folder may hold, unless the run sets
another cap (``build_files``)."""

DEFAULT_BUILD_LIMITS = Limits(memory_mb=2048, cpu_s=DEFAULT_BUILD_TIMEOUT_CAP, processes=512, tmp_mb=512, open_files=4096)
"""What a build step gets, whatever the bot's own ``[limits]`` (those are for its games):
real toolchains need more than a game does (a Go build starts more threads than 64, javac
and rustc more memory, a compiler's temporary files more than 64 MB). ``cpu_s`` is not
used (a build's CPU time is its time limit). The run may set others: ``build_memory_mb``,
``build_processes``, ``build_tmp_mb``."""

#: The environment variable in which an operator may list toolchain folders (``:``-separated)
#: for every command that starts bots (``arena validate``, ``submit``, ``play``…).
TOOLCHAINS_VAR = "ARENA_TOOLCHAINS"


def toolchains_from_environment() -> tuple[str, ...]:
    """The toolchain folders the operator lists in :data:`TOOLCHAINS_VAR` (absolute
    paths only; others are ignored with a warning)."""
    out = []
    for entry in os.environ.get(TOOLCHAINS_VAR, "").split(os.pathsep):
        if not entry:
            continue
        if not os.path.isabs(entry):
            log.warning("%s: %r is not an absolute path; ignored", TOOLCHAINS_VAR, entry)
            continue
        out.append(os.path.normpath(entry))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """A run's sandbox: its level, the caps on what a bot may ask for, the operator's
    toolchain folders (shown read-only to every bot under ``strict``, beside the system
    and the arena's own Python), and the caps on a build step: its wall-clock time, the
    disk space and the number of entries of its build folder."""

    level: Level = Level.STRICT
    caps: Limits = DEFAULT_CAPS
    #: The operator's folders shown to every bot (``[sandbox] expose``; ``toolchains``).
    toolchains: tuple[str, ...] = field(default_factory=toolchains_from_environment)
    build_timeout_s: float = DEFAULT_BUILD_TIMEOUT_CAP
    build_mb: int = DEFAULT_BUILD_MB_CAP
    build_files: int = DEFAULT_BUILD_FILES_CAP
    build_limits: Limits = DEFAULT_BUILD_LIMITS

    def for_bot(self, path: Path, requested: Limits | None = None, *, writable: bool = False) -> Sandbox | None:
        """The policy of one bot at ``path`` (its folder or single file): its own limits
        (default :data:`DEFAULT_LIMITS`), each within the caps."""
        limits = (requested or DEFAULT_LIMITS).within(self.caps)
        return Sandbox(self.level, limits, Path(path), writable=writable, toolchains=tuple(self.toolchains))

    def for_build(self, path: Path, cache: Path | None = None) -> Sandbox:
        """The policy of one bot's build step in ``path`` (its build folder, writable):
        the run's build limits, not the bot's game limits, and ``cache`` (the bot's
        persistent build cache) writable too."""
        return Sandbox(
            self.level, self.build_limits, Path(path), writable=True, toolchains=tuple(self.toolchains), cache=cache
        )

    @property
    def shown(self) -> tuple[str, ...]:
        """Every folder outside the system shown to every bot under ``strict``: the ones
        the arena found (rustup, /usr/local/go) and the operator's."""
        return tuple(dict.fromkeys((*toolchains.found_homes(), *self.toolchains)))

    def build_key(self) -> str:
        """What decides a build besides the bot's files: the level and what it is shown
        (a build made at ``limits`` may use what ``strict`` hides)."""
        import hashlib

        text = "\n".join((self.level.value, *sorted(self.shown)))
        return f"{self.level.value}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


@dataclass(frozen=True, slots=True)
class Sandbox:
    """One bot's policy: the level, its limits, and the file or folder that is the bot
    (visible read-only under ``strict``; read-write for a build step, ``writable``),
    and the operator's toolchain folders (visible read-only under ``strict``)."""

    level: Level
    limits: Limits
    expose: Path
    writable: bool = False
    toolchains: tuple[str, ...] = ()
    #: A build's persistent per-bot cache folder (writable in its builds only), if any.
    cache: Path | None = None

    @property
    def shown(self) -> tuple[str, ...]:
        """The folders outside the system it is shown: found toolchains, the operator's."""
        return tuple(dict.fromkeys((*toolchains.found_homes(), *self.toolchains)))



# -- what a bot may put in its environment ----------------------------------------------------

#: Variables that make a program other than the bot's own code run something the bot
#: chose: the dynamic loader's (``LD_*``: a library preloaded into every program of the
#: chain, or a search path for them; ``GLIBC_TUNABLES``, the ld.so parser of
#: CVE-2023-4911), glibc's other code-loading or file-reading ones (its own list of
#: variables unsafe for set-uid programs), the start-up files and options of shells and
#: interpreters (a file sourced before any script, options that load a module), and the
#: module search paths of the interpreters the arena runs bots with (the arena sets
#: ``PYTHONPATH`` itself, so that ``{python}`` bots import its very ``protocol`` package).
#: A bot that needs a library of its own links it with an rpath (``-Wl,-rpath,'$ORIGIN'``)
#: or loads it itself; a bot's Python modules sit beside its script.
UNSAFE_ENV_NAMES: dict[str, str] = {
    "GLIBC_TUNABLES": "it is parsed by the dynamic loader of every program started",
    "GCONV_PATH": "glibc loads character-set modules from it",
    "GETCONF_DIR": "glibc reads it (an unsafe variable for privileged programs)",
    "HOSTALIASES": "glibc reads host aliases from it",
    "LOCALDOMAIN": "glibc's resolver reads it",
    "LOCPATH": "glibc loads locale files from it",
    "MALLOC_TRACE": "glibc writes a trace to the file it names",
    "NIS_PATH": "glibc reads it (an unsafe variable for privileged programs)",
    "NLSPATH": "glibc loads message catalogs from it",
    "RESOLV_HOST_CONF": "glibc's resolver reads it",
    "RES_OPTIONS": "glibc's resolver reads it",
    "TZDIR": "glibc loads time-zone files from it",
    "BASH_ENV": "bash sources the file it names before running any script",
    "ENV": "sh sources the file it names",
    "SHELLOPTS": "it turns on bash options (xtrace with PS4 runs commands)",
    "BASHOPTS": "it turns on bash options",
    "PS4": "bash expands it, running commands, for each traced line",
    "PROMPT_COMMAND": "bash runs it",
    "PYTHONPATH": "the arena sets it, so that {python} imports the arena's own protocol package",
    "PYTHONHOME": "it makes Python load its standard library from elsewhere",
    "PYTHONSTARTUP": "Python runs the file it names",
    "PYTHONINSPECT": "it makes Python read commands from stdin after the script",
    "PYTHONWARNINGS": "Python imports the modules its filters name",
    "PYTHONBREAKPOINT": "Python imports the callable it names",
    "PYTHONUSERBASE": "Python imports site packages from it",
    "PYTHONPLATLIBDIR": "it makes Python load its standard library from elsewhere",
    "PYTHONEXECUTABLE": "it changes the interpreter Python believes it is",
    "PERL5OPT": "perl takes options (-M: load a module) from it",
    "PERL5LIB": "perl loads modules from it",
    "PERLLIB": "perl loads modules from it",
    "PERL5DB": "perl runs it as its debugger",
    "RUBYOPT": "ruby takes options (-r: load a library) from it",
    "RUBYLIB": "ruby loads libraries from it",
    "NODE_OPTIONS": "node takes options (--require: load a module) from it",
    "NODE_PATH": "node loads modules from it",
    "JAVA_TOOL_OPTIONS": "the JVM takes options (-javaagent: load code) from it",
    "_JAVA_OPTIONS": "the JVM takes options (-javaagent: load code) from it",
    "JDK_JAVA_OPTIONS": "the java launcher takes options (-javaagent: load code) from it",
}
#: Prefixes of such variables (``BASH_FUNC_name%%`` is a function bash imports).
UNSAFE_ENV_PREFIXES: dict[str, str] = {
    "LD_": "the dynamic loader reads it (a library loaded into, or a search path for, every program started)",
    "BASH_FUNC_": "bash imports it as a function",
    "DYLD_": "the macOS dynamic loader reads it (a library loaded into every program started)",
}
#: The most a bot's environment (names and values) may hold, in bytes.
MAX_ENV_BYTES = 32 * 1024
_ENV_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_BAD_NAME = "a variable's name must be letters, digits and '_', not starting with a digit"
_NUL = "its value holds a NUL byte"


def check_passable(name: str, argv: Sequence[str], env: Mapping[str, str]) -> None:
    """Refuse (BotStartError) what no exec can pass on faithfully: a variable name that is
    not ``[A-Za-z_][A-Za-z0-9_]*`` (``env`` would take ``-u`` for an option, ``A=B`` for an
    assignment), a NUL byte in a value or an argument. bot.toml refuses these already."""
    bad = [k for k, v in env.items() if env_refusal(k, v) in (_BAD_NAME, _NUL)]
    if bad:
        raise BotStartError(
            f"cannot start: environment variable(s) {', '.join(map(repr, bad))}: a name must be letters, digits and "
            "'_', and a value cannot hold a NUL byte", bot=name, argv=tuple(argv),
        )
    if any("\0" in a for a in argv):
        raise BotStartError("cannot start: an argument holds a NUL byte", bot=name, argv=tuple(argv))


def env_refusal(name: str, value: str) -> str | None:
    """Why the arena refuses a bot's environment variable ``name`` (None: it is fine).

    Refused: names that are not ``[A-Za-z_][A-Za-z0-9_]*`` (they cannot be passed on
    faithfully), values holding a NUL byte, :data:`UNSAFE_ENV_NAMES`, names starting with
    one of :data:`UNSAFE_ENV_PREFIXES` (in any case: ``ld_preload`` too)."""
    if not name or not set(name) <= _ENV_NAME_CHARS or name[0].isdigit():
        return _BAD_NAME
    if "\0" in value:
        return _NUL
    upper = name.upper()
    why = UNSAFE_ENV_NAMES.get(upper)
    if why is None:
        why = next((w for prefix, w in UNSAFE_ENV_PREFIXES.items() if upper.startswith(prefix)), None)
    return why


def launcher_env() -> dict[str, str]:
    """The environment of the programs that start a bot (``bwrap``, ``setpriv``,
    ``env``): built here, never from the bot's."""
    return {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
