"""The strict sandbox: whether this machine supports it, which level a run gets (and the
one warning that says what is weaker or missing), and bubblewrap's command line for one
bot: what it shows of the host (:func:`visible_roots`), where the bot's program is within
that view, the launchers (``setpriv`` as root, ``prlimit`` without) and the unprivileged
user id each bot of a root arena runs as. :mod:`arena.bots.sandbox` says what each level
confines; :mod:`arena.bots.jail` starts a bot through what is built here.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.text import printable

from . import _cgroup, _seccomp, toolchains
from ._errors import BotStartError, not_executable_hint
from .sandbox import DEFAULT_LIMITS, LINUX, MIB, TOOLCHAINS_VAR, Level, Sandbox, launcher_env

__all__ = [
    "StrictSupport",
    "resolve_level",
    "strict_support",
    "visible_roots",
]

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
    if not LINUX:
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
    uid = UIDS.take() if os.geteuid() == 0 else None
    seccomp_fd = _seccomp.filter_fd()
    argv = strict_argv(
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
        UIDS.give_back(argv)
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
    if not LINUX and requested is not Level.NONE:
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


UIDS = _UidPool()


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


def python_path() -> str:
    """A PYTHONPATH under which a bot's Python imports the very ``protocol`` and ``arena``
    packages the arena runs, however the arena was installed (or not)."""
    return os.pathsep.join(dict.fromkeys(str(p.parent) for p in _arena_packages()))


def _under(path: Path, roots: Sequence[Path]) -> bool:
    """Whether ``path`` is one of ``roots`` or lies (lexically) below one. Compared as
    text where both are absolute (``r in path.parents`` builds and compares a path per
    level: it was half of what starting a strict bot cost the arena)."""
    text = str(path)
    absolute = path.is_absolute()
    for r in roots:
        if absolute and r.is_absolute():
            root = str(r)
            if text == root or text.startswith(root if root.endswith("/") else root + "/"):
                return True
        elif path == r or r in path.parents:
            return True
    return False



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


def strict_program(name: str, argv0: str, cwd: Path, env: Mapping[str, str], sandbox: Sandbox) -> str:
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


def check_enterable(name: str, expose: Path, argv: Sequence[str]) -> None:
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


def strict_argv(
    support: StrictSupport, sandbox: Sandbox, cwd: Path, argv: list[str], *, uid: int | None, seccomp_fd: int,
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """bwrap's command line for ``argv`` (whose program is a path with a ``/`` that the
    sandbox shows, see :func:`strict_program`). The launchers (bwrap, setpriv, env) get
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
    args += ["--dev", "/dev", "--perms", "1777", "--size", str(limits.tmp_mb * MIB), "--tmpfs", "/tmp"]
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
