"""Sandboxes for untrusted bots: three levels, per-bot limits, and each bot's CPU time
and peak memory per game.

Levels (``--sandbox``):

- ``none``: the bot runs as the arena does (its own session; its tree ended on close).
- ``limits``: also resource limits (CPU seconds per game, memory, open files, file size,
  no core dumps, a process-count cap where a pids cgroup exists), a private temporary
  folder (its HOME and TMPDIR, removed afterwards, capped in size) and an environment
  cleared down to PATH, HOME, LANG, TMPDIR plus what the bot's ``bot.toml`` sets.
- ``strict``: also, through bubblewrap (``bwrap``): no network (a network namespace of its
  own), a read-only view of a fixed list of folders (:func:`visible_roots`: ``/usr`` and
  its links and what toolchains there need of ``/etc``, the Python installation and the
  arena's packages, the toolchains found outside ``/usr`` (:mod:`arena.bots.toolchains`)
  and the operator's folders) with the bot's own folder read-only and a private,
  size-capped ``/tmp`` as the only writable place (a build: also its build folder and the
  bot's build cache), no view of other bots or of the results, its own PID namespace (so
  the whole tree dies with it, double-forked grandchildren included), no
  capabilities, and a system call filter (:mod:`arena.bots._seccomp`: no kernel key
  rings, no ptrace, no new namespaces…; see docs/sandbox.md). When the arena runs as root, the bot runs as an unprivileged user id of
  its own (``setpriv``), so that the process-count limit holds; a pids cgroup caps it too
  where there is one. Without root, bwrap makes a user namespace for each bot, and the
  process cap is ``RLIMIT_NPROC`` set inside it (``prlimit``), where it counts that bot's
  processes only; the one warning of :func:`resolve_level` says what else is weaker.

At every level, nothing the bot supplies is interpreted outside its sandbox: the
programs that start it (bwrap, setpriv or prlimit, env) get :func:`launcher_env`, and the bot's
environment reaches its own program only (under ``strict`` through ``env -i`` as the
last step, inside every namespace and after the user id is dropped). A bot's ``PATH`` or
argv[0] never adds to what ``strict`` shows: its program is looked for within that view
only. docs/sandbox.md says it for operators and bot authors.

Linux only; elsewhere (macOS) the arena runs bots at ``none`` with a warning.

What a caller sees: :func:`resolve_level` picks the level of a run (and the one warning
when ``strict`` is not available), :class:`SandboxSettings` carries it with the
tournament's caps, :class:`Sandbox` is one bot's policy (in its
:class:`~arena.bots.BotSpec`), :func:`open_jail` turns a spec into how to start it
(used by ``open_bot``), and :func:`run_build` runs a bot's build step in the same sandbox,
bounded in time and output (:func:`build_in_thread` makes it interruptible from trio).
:func:`env_refusal` is the check of a bot's environment variables that ``bot.toml`` is
read through.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import importlib.util
import inspect
import logging
import math
import os
import resource
import selectors
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TypeVar

import trio

from arena.text import printable

from . import _cgroup, _seccomp, toolchains
from ._errors import BotStartError, lone_errors_unwrapped, not_executable_hint
from ._proctree import child_setup_hook, children_of
from ._tail import ByteTail

T = TypeVar("T")

__all__ = [
    "BUILD_OUTPUT_CAP",
    "BuildCaps",
    "DEFAULT_BUILD_LIMITS",
    "DEFAULT_BUILD_FILES_CAP",
    "DEFAULT_BUILD_MB_CAP",
    "DEFAULT_BUILD_TIMEOUT_CAP",
    "DEFAULT_CAPS",
    "DEFAULT_LIMITS",
    "Jail",
    "Level",
    "Limits",
    "Sandbox",
    "SandboxSettings",
    "Usage",
    "build_in_thread",
    "env_refusal",
    "open_jail",
    "resolve_level",
    "remove_build_folder",
    "run_build",
    "strict_support",
]

log = logging.getLogger(__name__)

_LINUX = sys.platform.startswith("linux")
_MB = 1024 * 1024
# How often a bot's CPU time, memory and temporary folder are looked at, in seconds.
WATCH_INTERVAL = 0.2


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


@dataclass(frozen=True, slots=True)
class Usage:
    """What a bot used in one game: CPU time of all its processes, in milliseconds, and
    the peak of their memory, in MiB (None where it could not be measured)."""

    cpu_ms: float | None
    peak_mb: float | None


# -- what the machine supports ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class StrictSupport:
    ok: bool
    missing: str  # what is missing and how to get it, when not ok
    bwrap: str | None = None
    setpriv: str | None = None
    env: str | None = None  # `env`, which hands the bot's environment to the bot's program alone
    prlimit: str | None = None  # a non-root arena's process cap, set inside the bot's user namespace
    weaker: str = ""  # what a non-root arena's strict gives up against a root arena's, when ok


_strict: StrictSupport | None = None
_strict_lock = threading.Lock()


def strict_support() -> StrictSupport:
    """Whether ``strict`` works on this machine, probed once (it starts one sandbox)."""
    global _strict
    with _strict_lock:
        if _strict is None:
            _strict = _probe_strict()
        return _strict


def _probe_strict() -> StrictSupport:
    if not _LINUX:
        return StrictSupport(False, f"the strict sandbox needs Linux (this is {sys.platform})")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return StrictSupport(
            False, "bubblewrap (bwrap) is not installed: install it with `apt-get install bubblewrap` (Debian, Ubuntu) "
            "or `dnf install bubblewrap` (Fedora)"
        )
    setpriv = prlimit = None
    # From the system only: they run inside the sandbox, which shows /usr (and its links).
    env_program = shutil.which("env", path="/usr/bin:/bin")
    true_program = shutil.which("true", path="/usr/bin:/bin")
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            return StrictSupport(False, "setpriv (from util-linux) is not installed: install util-linux", bwrap)
    else:
        prlimit = shutil.which("prlimit", path="/usr/bin:/bin")
        if prlimit is None:
            return StrictSupport(False, "prlimit (from util-linux) is not in /usr/bin: install util-linux", bwrap)
    if env_program is None or true_program is None:
        return StrictSupport(False, "env and true (from coreutils) are not in /usr/bin: install coreutils", bwrap)
    try:
        _seccomp.program()
    except _seccomp.UnsupportedMachine as exc:
        return StrictSupport(False, str(exc), bwrap)
    weaker = "" if os.geteuid() == 0 else _non_root_weaker(_cgroup.support())
    probe = StrictSupport(True, "", bwrap, setpriv, env_program, prlimit, weaker)
    here = Path(tempfile.gettempdir())
    uid = _UIDS.take() if os.geteuid() == 0 else None
    seccomp_fd = _seccomp.filter_fd()
    argv = _strict_argv(
        probe, Sandbox(Level.STRICT, DEFAULT_LIMITS, here), here, [true_program], uid=uid, seccomp_fd=seccomp_fd
    )
    try:
        proc = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env=launcher_env(), pass_fds=(seccomp_fd,)
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return StrictSupport(False, f"bwrap cannot start a sandbox here: {exc}", bwrap)
    finally:
        os.close(seccomp_fd)
        _UIDS.give_back(argv)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        why = err[-1] if err else f"exit status {proc.returncode}"
        return StrictSupport(
            False, f"bwrap cannot make a sandbox here ({why}); it needs user namespaces, or to run as root", bwrap
        )
    return probe


def resolve_level(requested: str | Level | None) -> tuple[Level, str | None]:
    """The level a run uses, and a warning to show once (or None).

    ``None`` (the default) means ``strict`` where the machine supports it, else ``limits``
    (``none`` off Linux) with a warning saying what is missing and how to get it. Asking
    for ``strict`` explicitly where it cannot work is a :class:`ValueError` saying why.
    A non-root arena's ``strict`` comes with a warning too: what it gives up against a
    root arena's on this machine, and how to get the cgroup limits.
    """
    if isinstance(requested, str):
        try:
            requested = Level(requested)
        except ValueError:
            raise ValueError(
                f"--sandbox must be one of {', '.join(lv.value for lv in Level)}, not {requested!r}"
            ) from None
    if not _LINUX and requested is not Level.NONE:
        return Level.NONE, (
            f"sandbox: bots run without a sandbox or resource limits on {sys.platform} (the sandbox is Linux's); "
            "run only bots you trust here"
        )
    if requested is Level.STRICT or requested is None:
        support = strict_support()
        if support.ok:
            return Level.STRICT, support.weaker or None
        if requested is Level.STRICT:
            raise ValueError(f"--sandbox strict is not available: {support.missing}")
        return Level.LIMITS, (
            f"sandbox: strict is not available ({support.missing}); bots run at --sandbox limits: resource limits "
            "only, with no isolation of files, network or other processes" + _AS_ROOT()
        )
    if requested is Level.LIMITS and os.geteuid() == 0:
        return requested, "sandbox: limits" + _AS_ROOT()
    return requested, None


def _AS_ROOT() -> str:  # noqa: N802 - reads as the sentence it adds
    """What a root arena adds to a warning about bots at ``limits``: they are root too."""
    if os.geteuid() != 0:
        return ""
    return (
        "; the arena runs as root, and so do its bots at this level: a hostile bot can change any file and "
        "signal any process; use --sandbox strict for bots you do not trust"
    )


def _non_root_weaker(cg: _cgroup.CgroupSupport) -> str:
    """The warning of a non-root arena whose ``strict`` works: what it keeps, what it
    gives up against a root arena's (which runs each bot as a user id of its own, in the
    cgroups this machine offers), and what would give some of it back."""
    gaps = ["bots run as your own user id (each in a user namespace of its own), not as a user id of their own each"]
    if cg.memory is None:
        gaps.append("memory_mb caps each process of a bot (RLIMIT_DATA), not its processes together (no memory cgroup)")
    if cg.unified is None and cg.cpuacct is None:
        gaps.append("CPU time is read from /proc, not from a cgroup")
    text = (
        "sandbox: strict without root: bots keep its isolation (namespaces of their own, a read-only view of the "
        "system, no network, no view of your home, the results or other bots, the system call filter, a process cap "
        "per bot by RLIMIT_NPROC in its user namespace), but it is weaker than as root: " + "; ".join(gaps) + "."
    )
    if cg.memory is None:
        text += " A memory cap for a bot's processes together needs a root arena."
    if cg.unified is not None or cg.cpuacct is not None:
        return text
    # In a v2 group delegated to the user (tried: no controller needed), the arena makes
    # each bot a group of its own: its CPU time from cpu.stat, a whole-tree kill. (Memory
    # and pids controllers would need the arena to move itself out of its own group first,
    # which it does not do.)
    command = "systemd-run --user --scope -p Delegate=yes -- " + _own_command()
    if shutil.which("systemd-run") is None:
        return text + " For CPU time counted by a cgroup, run it in a cgroup v2 group delegated to your user."
    lacks = ([] if _cgroup.v2_mounted() else ["no cgroup v2 hierarchy is mounted"]) + (
        [] if _cgroup.user_manager_runs() else ["no systemd user manager runs for you"]
    )
    if not lacks:
        return text + f" For CPU time counted by a cgroup, run it in a delegated scope: `{command}`"
    return (
        text + f" For CPU time counted by a cgroup, run it as `{command}` where a systemd user manager runs with "
        f"cgroup v2 (here {' and '.join(lacks)})."
    )


def _own_command() -> str:
    """The arena's command line as typed (for a command to run it again), shell-quoted
    and made printable; ``arena ...`` when this process is not the arena's command."""
    argv = list(sys.argv)
    head = Path(argv[0]) if argv and argv[0] else Path()
    if head.name == "__main__.py" and head.parent.name == "arena":
        words = [sys.executable, "-m", "arena", *argv[1:]]
    elif head.name == "arena":
        words = ["arena" if shutil.which("arena") == str(head) else str(head), *argv[1:]]
    else:
        words = ["arena", "..."]
    return printable(shlex.join(words), limit=400)


# -- unprivileged user ids for bots of a root arena ---------------------------------------

class _UidPool:
    """A user id per running sandbox, unused by anyone else on the machine (none are in
    /etc/passwd so high), so that one bot's process count is never another's."""

    BASE = 1_000_000_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._free: list[int] = []
        self._next = 0

    def take(self) -> int:
        with self._lock:
            if self._free:
                return self._free.pop()
            slot = self._next
            self._next += 1
        return self.BASE + (os.getpid() % 100_000) * 10_000 + slot % 10_000

    def give_back(self, argv_or_uid: list[str] | int) -> None:
        if isinstance(argv_or_uid, int):
            uid = argv_or_uid
        else:
            uid = next((int(a.split("=", 1)[1]) for a in argv_or_uid if a.startswith("--reuid=")), -1)
        if uid >= self.BASE:
            with self._lock:
                self._free.append(uid)


_UIDS = _UidPool()


# -- building the command line -------------------------------------------------------------

def _system_binds() -> list[str]:
    """``/usr`` read-only, the top-level links into it (``/bin``, ``/lib``…) as they are on
    the host, and the few files of ``/etc`` that programs need to load libraries."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/", name)
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    args += ["--perms", "0755", "--dir", "/etc"]
    for etc in _ETC:
        args += ["--ro-bind-try", etc, etc]
    return args


#: What ``strict`` shows of ``/etc`` always (and :func:`toolchains.etc_links`, what the
#: toolchains under ``/usr`` link into).
_ETC = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")


def _arena_packages() -> list[Path]:
    """The folders of the ``protocol`` and ``arena`` packages this arena runs (SDK bots
    import them; the mcts bot imports the engine)."""
    dirs = []
    for name in ("protocol", "arena"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            dirs += [Path(p) for p in spec.submodule_search_locations]
    return dirs


def _package_dirs() -> list[Path]:
    """The Python installation that runs the arena, and the arena's own packages."""
    return [Path(sys.base_prefix), Path(sys.prefix), Path(sys.exec_prefix), *_arena_packages()]


def _python_path() -> str:
    """A PYTHONPATH under which a bot's Python imports the very ``protocol`` and ``arena``
    packages the arena runs, however the arena was installed (or not)."""
    return os.pathsep.join(dict.fromkeys(str(p.parent) for p in _arena_packages()))


def _under(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


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


def _check_passable(name: str, argv: Sequence[str], env: Mapping[str, str]) -> None:
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


# -- what the strict sandbox shows ------------------------------------------------------------

def visible_roots(sandbox: Sandbox) -> list[Path]:
    """What ``strict`` shows of the host, read-only unless the bot's folder is writable:
    the system (``/usr`` and the top-level folders or links into it), the Python that runs
    the arena and the arena's packages, the operator's toolchain folders, and the bot's
    own folder (or file). Nothing a bot supplies adds to it."""
    roots = [Path("/usr")]
    roots += [Path("/", n) for n in _TOP_LEVEL if os.path.lexists(Path("/", n))]
    roots += [Path(p) for p in _ETC]
    roots += [Path(p) for p in toolchains.etc_links(sandbox.shown)]
    roots += [p for p in _package_dirs() if p.exists()]
    roots += [Path(t) for t in sandbox.shown if os.path.isdir(t)]
    if sandbox.cache is not None:
        roots.append(Path(os.path.abspath(sandbox.cache)))
    roots.append(Path(os.path.abspath(sandbox.expose)))
    return roots


_TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


def _strict_program(name: str, argv0: str, cwd: Path, env: Mapping[str, str], sandbox: Sandbox) -> str:
    """Where the bot's program is, as a path that the sandbox shows (found in the bot's
    folder or on its ``PATH``, but only within :func:`visible_roots`): absolute, or
    ``./…`` within the working folder (so that an operator's folder names never matter).
    Raises :class:`BotStartError` naming the bot and the program when it is not there."""
    roots = visible_roots(sandbox)
    real_roots = [Path(os.path.realpath(r)) for r in roots]

    def shown(candidate: str) -> bool:
        lexical = Path(os.path.abspath(candidate))
        return _under(lexical, roots) and _under(Path(os.path.realpath(candidate)), real_roots)

    def runnable(candidate: str) -> bool:
        return os.path.isfile(candidate) and os.access(candidate, os.X_OK)

    if "/" in argv0:
        candidates = [os.path.join(cwd, argv0)]
    else:  # as exec would search the bot's PATH (an empty entry is its working folder)
        candidates = [os.path.join(cwd, d, argv0) for d in env.get("PATH", os.defpath).split(os.pathsep)]
    hidden = None
    for candidate in candidates:
        if runnable(candidate):
            if shown(candidate):
                program = os.path.abspath(candidate)
                inside = os.path.relpath(program, cwd)
                if not inside.startswith(".."):  # in the bot's folder: by its name there, wherever that is
                    program = "./" + inside
                if "=" in program:
                    raise BotStartError(
                        f"cannot start: the path of its program {program!r} holds '=', which the sandbox cannot pass on; rename it",
                        bot=name, argv=(argv0,),
                    )
                return program
            hidden = hidden or candidate
    if hidden is None and "/" not in argv0:
        hidden = shutil.which(argv0)  # on the arena's own PATH: say where the operator has it
        if hidden is not None and shown(hidden):
            raise BotStartError(f"cannot start: {argv0!r} not found on its PATH (it is at {hidden})", bot=name, argv=(argv0,))
    if hidden is None:
        hint = not_executable_hint(argv0, cwd)
        raise BotStartError(f"cannot start: {hint or f'{argv0!r} not found'}", bot=name, argv=(argv0,))
    real = Path(os.path.realpath(hidden))
    folder = real.parent.parent if real.parent.name == "bin" else real.parent
    what = repr(argv0) if os.path.abspath(os.path.join(cwd, argv0)) == os.path.abspath(hidden) else f"{argv0!r} ({hidden})"
    raise BotStartError(
        f"cannot start: its program {what} is outside what the strict sandbox shows (the system's /usr, "
        "the arena's Python and packages, the bot's own folder and the operator's toolchain folders); if it is a "
        f"toolchain to offer every bot, the operator can add its folder: [sandbox] expose = [\"{folder}\"] (or "
        f"toolchains = [\"{folder}\"]) in the run's --config file, or {TOOLCHAINS_VAR}={folder} in the arena's environment",
        bot=name, argv=(argv0,),
    )


def _check_enterable(name: str, expose: Path, argv: Sequence[str]) -> None:
    """A root arena's strict bot runs as a user id of its own, with no rights on files
    but those of "other": its folder must let others in (a build folder is handed to it)."""
    with contextlib.suppress(OSError):
        mode = os.stat(expose).st_mode
        if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
            raise BotStartError(
                f"cannot start: its folder {expose} is mode {stat.S_IMODE(mode):04o}; the strict sandbox runs the bot as "
                f"an unprivileged user, who must be able to enter it: chmod o+rx {expose}", bot=name, argv=tuple(argv),
            )


#: Files of ``/proc`` that show the kernel's key rings (every key others may view, and each
#: user's key counts): not namespaced by bwrap, so they are covered (unreadable) under
#: ``strict``; the key system calls themselves are refused by the filter.
_MASKED_PROC = ("/proc/keys", "/proc/key-users")


def _strict_argv(
    support: StrictSupport, sandbox: Sandbox, cwd: Path, argv: list[str], *, uid: int | None, seccomp_fd: int,
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """bwrap's command line for ``argv`` (whose program is a path with a ``/`` that the
    sandbox shows, see :func:`_strict_program`). The launchers (bwrap, setpriv, env) get
    :func:`launcher_env`; ``env`` is handed by ``env -i`` to the bot's program alone, as
    the last step inside every confinement. ``seccomp_fd`` is the system call filter
    (:func:`arena.bots._seccomp.filter_fd`), which the spawn must pass on (``pass_fds``):
    bwrap installs it before it execs setpriv, so it holds for everything after."""
    assert support.bwrap is not None and support.env is not None
    limits = sandbox.limits
    args = [
        support.bwrap,
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", "--seccomp", str(seccomp_fd),
    ]
    if uid is None:
        # Not root: a user namespace gives bwrap its rights; no further one may be made in
        # it (the filter refuses that too; this holds even for a call the filter misses).
        args += ["--unshare-user", "--disable-userns"]
    args += _system_binds()
    args += ["--proc", "/proc"]
    for masked in _MASKED_PROC:  # kernel state of the whole machine, not of the PID namespace
        args += ["--ro-bind", "/dev/null", masked]
    args += ["--dev", "/dev", "--perms", "1777", "--size", str(limits.tmp_mb * _MB), "--tmpfs", "/tmp"]
    made = {Path("/"), Path("/usr"), Path("/tmp"), Path("/proc"), Path("/dev"), Path("/etc")}
    bound = [Path("/usr")]
    extra = [p for p in _package_dirs() if p.exists()]
    extra += [Path(os.path.realpath(t)) for t in sandbox.shown if os.path.isdir(t)]

    def bind(kind: str, path: Path) -> None:
        nonlocal args
        if _under(path, bound) and kind == "--ro-bind":
            return  # already visible
        for parent in reversed(path.parents):
            if parent not in made and not _under(parent, bound):
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        args += [kind, str(path), str(path)]
        bound.append(path)
        made.add(path)

    for p in sorted(set(extra), key=lambda x: len(x.parts)):
        bind("--ro-bind", p)
    etc_shown: list[Path] = []
    for etc in toolchains.etc_links(sandbox.shown):
        if _under(Path(etc), etc_shown):
            continue  # within a folder of /etc already shown
        etc_shown.append(Path(etc))
        # At the path the link names, from where it leads (a link in /etc to elsewhere).
        for parent in reversed(Path(etc).parents):
            if parent not in made:
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        args += ["--ro-bind-try", os.path.realpath(etc), etc]
    if sandbox.cache is not None and sandbox.writable:
        bind("--bind", Path(os.path.realpath(sandbox.cache)))
    me = sandbox.expose.resolve() if sandbox.expose.exists() else sandbox.expose
    bind("--bind" if sandbox.writable else "--ro-bind", me)
    # The root bwrap builds (a tmpfs, holding the folders made above) read-only too: it has
    # no size cap, and without root the bot owns those folders (it could fill memory there).
    args += ["--remount-ro", "/", "--remount-ro", "/dev", "--chdir", str(cwd)]
    if uid is not None:
        assert support.setpriv is not None
        args += [
            "--", support.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--",
        ]
    else:
        # Not root: the process cap is RLIMIT_NPROC set here, inside the bot's own user
        # namespace, where the kernel counts it per (namespace, user): this bot's
        # processes and threads only. Set before bwrap instead, it would count every
        # process of the user (and bwrap's namespace would take it as its own ceiling).
        # bwrap's own process 1 of the namespace counts too, hence the one more.
        assert support.prlimit is not None
        nproc = limits.processes + 1
        args += ["--cap-drop", "ALL", "--", support.prlimit, f"--nproc={nproc}:{nproc}", "--"]
    # `env -i -- NAME=VALUE… PROGRAM ARGS`: names are checked ([A-Za-z_][A-Za-z0-9_]*) and
    # the program is a path with a '/' and without '=', so nothing can be taken for an
    # option, an assignment or a command looked up on PATH.
    args += [support.env, "-i", "--", *(f"{k}={v}" for k, v in (env or {}).items())]
    return args + list(argv)


# -- one bot's jail -----------------------------------------------------------------------

def _rlimits(limits: Limits, *, file_mb: int, memory_rlimit: bool, nproc: bool) -> list[tuple[int, int]]:
    out = [
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_FSIZE, file_mb * _MB),
    ]
    if memory_rlimit:
        # RLIMIT_AS would break Node, Go and the JVM (they reserve address space they
        # never use); RLIMIT_DATA counts what is actually writable.
        out.append((resource.RLIMIT_DATA, limits.memory_mb * _MB))
    if nproc:
        # Counted per user id: only meaningful for a bot with a user id of its own (a
        # root arena's strict sandbox). Root itself is never held by it.
        out.append((resource.RLIMIT_NPROC, limits.processes))
    return out


def _proc_usage(root: int) -> tuple[float, int]:
    """CPU seconds and resident memory of ``root`` and its live descendants, from /proc:
    each live process's own time plus what it collected from children it waited for."""
    tick = os.sysconf("SC_CLK_TCK")
    cpu, rss = 0.0, 0
    page = resource.getpagesize()
    pending, seen = [root], set()
    while pending:
        pid = pending.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                raw = f.read()
        except OSError:
            continue
        fields_ = raw[raw.rfind(b")") + 2 :].split()
        try:
            own, reaped = (int(fields_[11]) + int(fields_[12])) / tick, (int(fields_[13]) + int(fields_[14])) / tick
            rss += int(fields_[21]) * page
        except (IndexError, ValueError):
            continue
        # Clock ticks (10 ms) round a quick bot's time down to nothing: its threads' run
        # time in nanoseconds says more, where the kernel keeps it.
        cpu += max(own, _threads_run_time(pid)) + reaped
        pending.extend(children_of(pid))
    return cpu, rss


#: The most threads of one process whose run times :func:`_threads_run_time` reads.
_THREADS_READ = 256


def _threads_run_time(pid: int) -> float:
    """Seconds the threads of ``pid`` have run, from ``/proc/PID/task/*/schedstat`` (0.0
    where it is not there, or when the process has more than :data:`_THREADS_READ`
    threads: its clock ticks then serve)."""
    total = 0
    try:
        with os.scandir(f"/proc/{pid}/task") as it:
            for count, entry in enumerate(it):
                if count >= _THREADS_READ:
                    return 0.0
                with contextlib.suppress(OSError, ValueError, IndexError), open(f"{entry.path}/schedstat", "rb") as f:
                    total += int(f.read(64).split()[0])
    except OSError:
        return 0.0
    return total / 1e9


class Jail:
    """How one bot process is started and watched: made by :func:`open_jail` before the
    spawn, told the pid with :meth:`started`, watched by :meth:`watch` while it runs, and
    closed with :meth:`close` once its tree is dead."""

    def __init__(self, name: str, sandbox: Sandbox, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.name = name
        self.sandbox = sandbox
        self.level = sandbox.level
        self.limits = sandbox.limits
        self.cwd = cwd
        self.pid: int | None = None
        self.reason = ""  # why the jail killed the bot, if it did
        self._temp: Path | None = None
        self._uid: int | None = None
        self.cgroup: _cgroup.BotCgroup | None = None
        self._game_cpu0 = 0.0
        self._cpu_last = 0.0
        self._peak_sampled = 0
        self._oom0 = 0
        self._closed = False
        self.wrapped = False  # the main process is bwrap, which reports a signal as 128 + N
        self._seccomp_fd: int | None = None  # the filter bwrap reads, until the spawn has it
        limits = self.limits
        try:
            if self.level is not Level.NONE:
                self.cgroup = _cgroup.BotCgroup(
                    name, memory_bytes=limits.memory_mb * _MB, max_processes=limits.processes
                )
                if not self.cgroup.active:
                    self.cgroup.remove()
                    self.cgroup = None
            env = dict(env)  # the bot's own: it reaches the bot's program only
            _check_passable(name, argv, env)
            if self.level is Level.NONE:
                env.setdefault("PYTHONPATH", _python_path())
            else:
                env["PYTHONPATH"] = _python_path()
            launcher = env
            if self.level is Level.STRICT:
                support = strict_support()
                if not support.ok:
                    raise BotStartError(f"the strict sandbox is not available: {support.missing}", bot=name, argv=tuple(argv))
                env["HOME"] = env["TMPDIR"] = "/tmp"
                program = _strict_program(name, argv[0], cwd, env, sandbox)
                if os.geteuid() == 0 and not sandbox.writable:
                    _check_enterable(name, sandbox.expose, argv)
                self._uid = _UIDS.take() if os.geteuid() == 0 else None
                self._seccomp_fd = _seccomp.filter_fd(build=sandbox.writable)  # writable: a build step
                argv = _strict_argv(
                    support, sandbox, cwd, [program, *argv[1:]], uid=self._uid, seccomp_fd=self._seccomp_fd, env=env
                )
                launcher = launcher_env()
                self.wrapped = True
            elif self.level is Level.LIMITS:
                # No program stands between the arena and the bot here: Popen's child
                # (Python, already loaded) execs the bot's program with its environment.
                sweep_stale_temps()
                self._temp = Path(tempfile.mkdtemp(prefix=f"{_TEMP_PREFIX}{os.getpid()}-{_safe(name)}-"))
                env["HOME"] = env["TMPDIR"] = str(self._temp)
        except BaseException:
            self.close()
            raise
        self.argv = argv
        self.env = launcher  # what the process the arena execs gets
        self.bot_env = env  # what the bot's own program gets
        mem_rlimit = self.level is not Level.NONE and not (self.cgroup and self.cgroup.memory_capped)
        self._rlimits = (
            _rlimits(limits, file_mb=limits.tmp_mb, memory_rlimit=mem_rlimit, nproc=self._uid is not None)
            if self.level is not Level.NONE
            else []
        )

    # -- starting ----------------------------------------------------------------------

    def preexec(self, parent_pid: int, *, extra_rlimits: Sequence[tuple[int, int]] = ()) -> Callable[[], None]:
        """The function the child runs between fork and exec: join the groups, set the
        limits, then the usual set-up (parent-death signal, subreaper)."""
        setup = child_setup_hook(parent_pid)
        join = self.cgroup.join_hook() if self.cgroup is not None else None
        limits = [*self._rlimits, *extra_rlimits]
        setrlimit = resource.setrlimit

        def hook() -> None:
            if join is not None:
                join()
            for which, value in limits:
                setrlimit(which, (value, value))
            if setup is not None:
                setup()

        return hook

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """The fds the spawn must hand on to the process it execs (``Popen(pass_fds=...)``):
        under ``strict``, the system call filter bwrap reads."""
        return () if self._seccomp_fd is None else (self._seccomp_fd,)

    def _close_seccomp_fd(self) -> None:
        if self._seccomp_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._seccomp_fd)
            self._seccomp_fd = None

    def started(self, pid: int) -> None:
        """After the spawn: the jail learns the pid, and the parent's copy of the filter's
        fd is closed (the child has its own)."""
        self._close_seccomp_fd()
        self.pid = pid
        if self.cgroup is not None:
            self.cgroup.spawned()
            self._oom0 = self.cgroup.oom_kills()

    def returncode(self, code: int) -> int:
        """The bot's exit status as Popen would give it (negative: killed by a signal)
        when bwrap, which reports a signal as 128 + its number, stands in between."""
        if self.wrapped and 128 < code < 128 + 65:
            return -(code - 128)
        return code

    # -- measuring ---------------------------------------------------------------------

    def _cpu_and_rss(self) -> tuple[float | None, int | None]:
        cg = self.cgroup
        cpu = cg.cpu_seconds() if cg is not None else None
        rss = cg.memory_now() if cg is not None and cg.memory is not None else None
        if (cpu is None or rss is None) and self.pid is not None and _LINUX and not self._closed:
            pcpu, prss = _proc_usage(self.pid)
            cpu = pcpu if cpu is None else cpu
            rss = prss if rss is None else rss
        if cpu is not None:
            cpu = self._cpu_last = max(cpu, self._cpu_last)  # processes gone take their time along
        return cpu, rss

    def begin_game(self) -> None:
        """Start counting one game: CPU time from now, and the memory peak afresh."""
        cpu, rss = self._cpu_and_rss()
        self._game_cpu0 = cpu or 0.0
        self._peak_sampled = rss or 0
        if self.cgroup is not None:
            self.cgroup.reset_peak()

    def usage(self) -> Usage:
        """What the bot used since :meth:`begin_game` (or since it started)."""
        cpu, rss = self._cpu_and_rss()
        peak = self._peak_sampled = max(self._peak_sampled, rss or 0)
        if self.cgroup is not None and self.cgroup.memory is not None:
            peak = max(peak, self.cgroup.memory_peak() or 0)
        return Usage(
            cpu_ms=None if cpu is None else round(1000 * (cpu - self._game_cpu0), 1),
            peak_mb=round(peak / _MB, 1) if peak else None,
        )

    async def watch(self) -> None:
        """Until cancelled: sample the memory, and kill the bot when it goes over its CPU
        time for this game or its temporary folder's size."""
        limits = self.limits
        if self.level is Level.NONE:
            return
        beat = 0
        while True:
            await trio.sleep(WATCH_INTERVAL)
            cpu, rss = self._cpu_and_rss()
            if rss:
                self._peak_sampled = max(self._peak_sampled, rss)
            if cpu is not None and cpu - self._game_cpu0 > limits.cpu_s:
                self._kill_for(f"it used {cpu - self._game_cpu0:.1f} s of CPU time in this game, over its limit of {limits.cpu_s:g} s")
                return
            beat += 1
            if self._temp is not None and beat % 5 == 0:
                size = await trio.to_thread.run_sync(_folder_size, self._temp, limits.tmp_mb * _MB)
                if size > limits.tmp_mb * _MB:
                    self._kill_for(f"its temporary folder grew over its limit of {limits.tmp_mb} MB")
                    return

    def _kill_for(self, reason: str) -> None:
        self.reason = reason
        log.info("bot %r: killed by the sandbox: %s", self.name, reason)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the whole tree at once where a group allows it, else the main
        process's group and the main process (the caller ends the rest)."""
        if self.cgroup is not None and self.cgroup.kill():
            return
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)

    def explain(self, returncode: int | None) -> str:
        """Why the bot ended, when the sandbox knows more than the exit status says."""
        if self.reason:
            return f"the sandbox killed it: {self.reason}"
        if self.cgroup is not None and self.cgroup.oom_kills() > self._oom0:
            return f"the sandbox killed it: it went over its memory limit of {self.limits.memory_mb} MB"
        if returncode == -signal.SIGXFSZ:
            return f"it wrote a file over the size limit of {self.limits.tmp_mb} MB"
        if returncode == -signal.SIGXCPU:
            return "it went over its CPU time limit"
        if returncode == -signal.SIGSYS and self.level is Level.STRICT:
            return (
                "the sandbox killed it: it made a system call through an ABI the strict sandbox's filter does not "
                "allow (32-bit or x32)"
            )
        return ""

    def remaining(self) -> list[int]:
        """Pids still in the bot's groups (none once its tree is dead)."""
        return self.cgroup.processes() if self.cgroup is not None else []

    def close(self) -> None:
        """After the tree is dead: remove the groups and the temporary folder, and free
        the user id. Idempotent."""
        self._close_seccomp_fd()
        if self._closed:
            return
        self._closed = True
        if self.cgroup is not None:
            if self.cgroup.processes():
                self.cgroup.kill()
            left = self.cgroup.remove()
            if left:
                self._uid = None  # never reuse a user id that may still have a process
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
        if self._uid is not None:
            _UIDS.give_back(self._uid)
            self._uid = None


#: A limits-level bot's private temp folder: ``sushigo-bot-<arena pid>-<bot>-<random>``.
_TEMP_PREFIX = "sushigo-bot-"
_swept = False


def sweep_stale_temps(folder: Path | None = None, *, force: bool = False) -> list[Path]:
    """Remove the bots' temp folders left by arenas that are gone (killed before they
    could clean up), once per process (``force``: again); returns what was removed. A
    folder whose arena still runs, or whose name has no arena pid, is left alone."""
    global _swept
    if _swept and not force:
        return []
    _swept = True
    removed = []
    base = folder or Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for old in base.glob(f"{_TEMP_PREFIX}*"):
            pid = old.name[len(_TEMP_PREFIX) :].split("-", 1)[0]
            if not pid.isdigit() or _alive(int(pid)) or not old.is_dir():
                continue
            shutil.rmtree(old, ignore_errors=True)
            if not old.exists():
                removed.append(old)
    if removed:
        log.info("removed %d stale bot temp folder(s) of arenas that are gone", len(removed))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:32]


def _folder_size(folder: Path, stop_above: int) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
        if total > stop_above:
            break
    return total


#: How deep a build folder's folders may nest (its walk holds one open folder per level).
BUILD_DEPTH_CAP = 128
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _tree_usage(folder: Path, max_bytes: int, max_entries: int) -> tuple[int, int, bool]:
    """The disk space (allocated blocks) and the number of entries (files, folders,
    links…) under ``folder``, and whether its folders nest deeper than
    :data:`BUILD_DEPTH_CAP`. Stops counting once over either cap, so one call costs at most
    about ``max_entries`` stats however big the tree has grown. It walks by folder
    descriptors (no path grows with the depth, so no name is too long to look at) and
    holds one per level; entries that vanish while it looks are not counted."""
    total = entries = 0
    try:
        top = os.open(folder, _DIR_FLAGS)
    except OSError:
        return 0, 0, False
    stack: list[tuple[int, list[str]]] = []
    try:
        fd = top
        while True:
            subdirs: list[str] = []
            stack.append((fd, subdirs))
            with contextlib.suppress(OSError), os.scandir(fd) as it:
                for entry in it:
                    entries += 1
                    with contextlib.suppress(OSError):
                        st = entry.stat(follow_symlinks=False)
                        total += st.st_blocks * 512
                        if stat.S_ISDIR(st.st_mode):
                            subdirs.append(entry.name)
                    if total > max_bytes or entries > max_entries:
                        return total, entries, False
            fd = -1
            while stack and fd < 0:
                parent, pending = stack[-1]
                if not pending:
                    stack.pop()
                    if parent != top:
                        os.close(parent)
                    continue
                if len(stack) > BUILD_DEPTH_CAP:
                    return total, entries, True
                with contextlib.suppress(OSError):
                    fd = os.open(pending.pop(), _DIR_FLAGS, dir_fd=parent)
            if fd < 0:
                return total, entries, False
    finally:
        for parent, _ in stack:
            if parent != top:
                os.close(parent)
        os.close(top)


def open_jail(name: str, sandbox: Sandbox | None, argv: list[str], env: dict[str, str], cwd: Path) -> Jail | None:
    """The jail of a bot about to be started (None without a sandbox). Raises
    :class:`BotStartError` when it cannot be made (e.g. strict is not available)."""
    if sandbox is None:
        return None
    if not _LINUX:
        sandbox = replace(sandbox, level=Level.NONE)
    return Jail(name, sandbox, argv, env, cwd)


# -- build steps ------------------------------------------------------------------------------

#: How much of a build's output is kept (its last bytes), in memory and in its log.
BUILD_OUTPUT_CAP = 256 * 1024
# After a build's main process has exited, how long its output pipe may stay open (held by
# a descendant it left behind) before the rest of its tree is ended.
_BUILD_PIPE_WAIT = 1.0
# How long a cancelled caller of build_in_thread waits for the build's tree to be ended.
_BUILD_STOP_WAIT = 10.0
_READ = 65536


class BuildInterrupted(Exception):
    """The build was stopped because its caller was cancelled (Ctrl-C, SIGTERM)."""


class _BuildOver(Exception):
    """The build went over a cap on what it may write (the message says which)."""


# How often a running build's folder is measured, in seconds.
BUILD_CHECK_INTERVAL = WATCH_INTERVAL


@dataclass(frozen=True, slots=True)
class BuildCaps:
    """What a build may leave in its build folder: disk space and entries, and (under
    ``limits``, where it has one) the size of its private temporary folder."""

    max_mb: int = DEFAULT_BUILD_MB_CAP
    max_files: int = DEFAULT_BUILD_FILES_CAP

    def breach(self, folder: Path, temp: Path | None = None, temp_mb: int = 0, cache: Path | None = None) -> str:
        """Why ``folder`` (or ``temp``, or the bot's build cache ``cache``) is over the
        caps, or ``""``."""
        for what, where in (("build folder", folder), ("build cache", cache)):
            if where is None:
                continue
            size, entries, deep = _tree_usage(where, self.max_mb * _MB, self.max_files)
            if size > self.max_mb * _MB:
                return f"its {what} grew over the run's cap of {self.max_mb} MB (build_mb)"
            if entries > self.max_files:
                return f"its {what} grew over the run's cap of {self.max_files} files (build_files)"
            if deep:
                return f"its {what} nests folders over {BUILD_DEPTH_CAP} deep"
        if temp is not None and _folder_size(temp, temp_mb * _MB) > temp_mb * _MB:
            return f"its temporary folder grew over its limit of {temp_mb} MB"
        return ""


@dataclass(slots=True)
class BuildResult:
    returncode: int | None  # None: timed out
    output: bytes  # its last BUILD_OUTPUT_CAP bytes at most (as UTF-8, after a line on what was dropped)
    explanation: str = ""
    dropped: int = 0  # bytes of output before those, not kept
    over: str = ""  # the cap on its build folder it went over (it was ended), if any


# The stop signal of the build_in_thread call this thread works for, if any.
_build_stop: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("_build_stop", default=None)


def run_build(
    name: str, sandbox: Sandbox | None, argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float,
    *, log: Path | None = None, header: str = "", output_cap: int = BUILD_OUTPUT_CAP,
    caps: BuildCaps | None = None,
) -> BuildResult:
    """Run a bot's build step in ``cwd`` (its build folder), sandboxed like the bot
    itself but with that folder writable, for at most ``timeout_s`` seconds of wall-clock
    and of CPU time. Blocking (call it from a worker thread, best through
    :func:`build_in_thread`).

    Its output (stdout and stderr together) is read as it comes and only the last
    ``output_cap`` bytes are kept; they are written to ``log`` (after ``header``), also
    when the build is interrupted. Its whole process tree is ended when it times out,
    when this thread gets KeyboardInterrupt, or when the caller of
    :func:`build_in_thread` is cancelled (this then raises :class:`BuildInterrupted`).

    ``caps`` (default :class:`BuildCaps`) bound what it leaves in ``cwd``: the folder is
    measured every :data:`BUILD_CHECK_INTERVAL` seconds while it runs and once more after
    its tree is dead; over a cap, its tree is ended and ``over`` says which cap (the
    caller removes the folder). Raises :class:`BotStartError` if it cannot start."""
    if not (math.isfinite(timeout_s) and timeout_s > 0):
        raise ValueError(f"bot {name}: a build's time limit must be a positive number of seconds, not {timeout_s!r}")
    if sandbox is not None:
        sandbox = replace(sandbox, expose=cwd, writable=True)
    caps = caps or BuildCaps()
    cache = sandbox.cache if sandbox is not None else None
    if cache is not None:
        try:
            cache.mkdir(parents=True, exist_ok=True, mode=0o700)
            cache_owner = os.stat(cache)
        except OSError as exc:
            raise BotStartError(f"cannot make its build cache {cache}: {exc.strerror or exc}", bot=name, argv=tuple(argv)) from None
    tail = ByteTail(output_cap)
    jail = open_jail(name, sandbox, list(argv), env, cwd)
    uid = jail._uid if jail is not None else None
    owner = os.stat(cwd)
    proc: subprocess.Popen[bytes] | None = None
    code: int | None = None
    temp = jail._temp if jail is not None else None
    temp_mb = jail.limits.tmp_mb if jail is not None else 0

    def breach() -> str:
        return caps.breach(cwd, temp, temp_mb, cache)

    try:
        if uid is not None:
            _chown_tree(cwd, uid, uid)
            if cache is not None:
                _chown_tree(cache, uid, uid)
        cpu = [(resource.RLIMIT_CPU, max(1, math.ceil(timeout_s)))]
        pre = jail.preexec(os.getpid(), extra_rlimits=cpu) if jail else None
        try:
            proc = subprocess.Popen(
                jail.argv if jail else argv, cwd=cwd, env=jail.env if jail else env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=pre,
                pass_fds=jail.pass_fds if jail else (),
            )
        except OSError as exc:
            reason = (exc.strerror or str(exc)) + (f": {exc.filename!r}" if exc.filename else "")
            raise BotStartError(f"cannot run the build: {reason}", bot=name, argv=tuple(argv)) from None
        if jail is not None:
            jail.started(proc.pid)
        try:
            code = _follow_build(proc, tail, time.monotonic() + timeout_s, breach)
        except _BuildOver as over:
            _end_build(proc, jail)
            proc = None
            return BuildResult(None, tail.text().encode(), "", tail.dropped, over=str(over))
        _end_build(proc, jail)  # what it left running is ended before the last look
        proc = None
        if code is not None and jail is not None:
            code = jail.returncode(code)
        over = breach()  # what it wrote between the last look and its end
        return BuildResult(code, tail.text().encode(), jail.explain(code) if jail else "", tail.dropped, over=over)
    finally:
        if proc is not None:
            _end_build(proc, jail)
        if log is not None:
            _write_build_log(log, header, tail)
        if jail is not None:
            jail.close()
        if uid is not None:
            _chown_tree(cwd, owner.st_uid, owner.st_gid)
            if cache is not None:
                _chown_tree(cache, cache_owner.st_uid, cache_owner.st_gid)


def _follow_build(
    proc: subprocess.Popen[bytes], tail: ByteTail, deadline: float, breach: Callable[[], str] | None = None,
) -> int | None:
    """Read the build's output into ``tail`` until it has exited and its pipe is closed;
    its exit status, or None at the deadline. Every :data:`BUILD_CHECK_INTERVAL` seconds
    ``breach()`` is asked whether it went over a cap (:class:`_BuildOver` with its answer).
    Raises :class:`BuildInterrupted` when the caller of :func:`build_in_thread` is cancelled."""
    stop = _build_stop.get()
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    eof = False
    exited_at: float | None = None
    next_check = time.monotonic() + BUILD_CHECK_INTERVAL
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            if stop is not None and stop.is_set():
                raise BuildInterrupted("the build was interrupted")
            now = time.monotonic()
            if breach is not None and now >= next_check:
                why = breach()
                if why:
                    raise _BuildOver(why)
                now = time.monotonic()
                next_check = now + BUILD_CHECK_INTERVAL
            if now >= deadline:
                return None
            if proc.poll() is not None:
                exited_at = exited_at or now
                if eof or now - exited_at > _BUILD_PIPE_WAIT:
                    return proc.returncode
            wait = max(0.0, min(0.1, deadline - now, next_check - now))
            if eof:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(wait)
                continue
            if sel.select(wait):
                try:
                    data = os.read(fd, _READ)
                except BlockingIOError:
                    continue
                if data:
                    tail.append(data)
                else:
                    eof = True


def _end_build(proc: subprocess.Popen[bytes], jail: Jail | None) -> None:
    """SIGKILL what is left of the build's tree (its sandbox's group, its process group;
    under ``strict`` bwrap's death ends its PID namespace), reap it, close the pipe."""
    if jail is not None:
        jail.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
    if proc.stdout is not None:
        proc.stdout.close()


def _write_build_log(log: Path, header: str, tail: ByteTail) -> None:
    with contextlib.suppress(OSError), open(log, "wb") as f:
        f.write(header.encode() + tail.text().encode())  # the tail, after "[… N bytes dropped …]" if any


async def build_in_thread(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` (e.g. ``prepare_bot``) in a worker thread, where any build step it
    runs (:func:`run_build`) can be interrupted: if the caller is cancelled, Ctrl-C
    included, or (in the main thread) SIGTERM arrives, the build's whole tree is ended
    before this returns, then the cancellation (KeyboardInterrupt for SIGTERM) goes on."""
    stop = threading.Event()
    done = threading.Event()

    def work() -> T:
        token = _build_stop.set(stop)
        try:
            return fn(*args)
        finally:
            _build_stop.reset(token)
            done.set()

    terminated = False

    async def on_sigterm(scope: trio.CancelScope) -> None:
        nonlocal terminated
        with trio.open_signal_receiver(signal.SIGTERM) as signals:
            async for _ in signals:
                terminated = True
                scope.cancel()
                return

    result: list[T] = []
    try:
        # (unwrapped: from trio 0.25 on a nursery raises even a lone BuildError as a group)
        with lone_errors_unwrapped():
            async with trio.open_nursery() as nursery:
                if threading.current_thread() is threading.main_thread():
                    nursery.start_soon(on_sigterm, nursery.cancel_scope)
                result.append(await trio.to_thread.run_sync(work, **{_ABANDON: True}))
                nursery.cancel_scope.cancel()
    finally:
        if not done.is_set():
            stop.set()
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(done.wait, _BUILD_STOP_WAIT)
    if terminated:
        raise KeyboardInterrupt("SIGTERM during a build")
    return result[0]


# trio 0.23 renamed to_thread.run_sync's `cancellable` to `abandon_on_cancel`.
_ABANDON = "abandon_on_cancel" if "abandon_on_cancel" in inspect.signature(trio.to_thread.run_sync).parameters else "cancellable"


def _chown_tree(folder: Path, uid: int, gid: int) -> None:
    # (A tree nested deeper than Python's recursion lets os.walk go is over the build's
    # depth cap, and is removed as root: what is not handed back does not matter.)
    with contextlib.suppress(RecursionError):
        for root, dirs, files in os.walk(folder):
            for name in [*dirs, *files]:
                with contextlib.suppress(OSError):
                    os.lchown(os.path.join(root, name), uid, gid)
    with contextlib.suppress(OSError):
        os.lchown(folder, uid, gid)


def remove_build_folder(folder: Path) -> bool:
    """Remove what a build left in ``folder``, however it made it (folders it made
    unwritable, nested past what a recursive walk goes through); True once it is gone."""

    with contextlib.suppress(OSError, RecursionError):
        shutil.rmtree(folder, ignore_errors=True)
    if os.path.lexists(folder):  # what it could not enter, or too deep: chmod and rm walk any depth
        subprocess.run(["chmod", "-R", "u+rwx", "--", str(folder)], stdin=subprocess.DEVNULL, capture_output=True, check=False)
        subprocess.run(["rm", "-rf", "--", str(folder)], stdin=subprocess.DEVNULL, capture_output=True, check=False)
    return not os.path.lexists(folder)

