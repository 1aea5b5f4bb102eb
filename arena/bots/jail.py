"""One bot's jail: how a sandboxed bot process is started (its command line, environment,
resource limits and groups), watched while it runs (CPU time per game, memory, its
temporary folder) and measured (:class:`Usage`), killed when it goes over a limit, and
cleaned up after (its groups, temporary folder and user id). ``open_bot`` opens one with
:func:`open_jail` for every bot it starts; a build step (:mod:`arena.bots.build`) too.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import shutil
import signal
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import trio

from . import _cgroup, _seccomp
from ._errors import BotStartError
from ._proctree import child_setup_hook, children_of
from .sandbox import LINUX, MIB, Level, Limits, Sandbox, check_passable, launcher_env
from .strict import (
    UIDS,
    check_enterable,
    python_path,
    strict_argv,
    strict_program,
    strict_support,
)

__all__ = [
    "Jail",
    "Usage",
    "WATCH_INTERVAL",
    "open_jail",
    "sweep_stale_temps",
]

log = logging.getLogger(__name__)

# How often a bot's CPU time, memory and temporary folder are looked at, in seconds.
WATCH_INTERVAL = 0.2


@dataclass(frozen=True, slots=True)
class Usage:
    """What a bot used in one game: CPU time of all its processes, in milliseconds, and
    the peak of their memory, in MiB (None where it could not be measured)."""

    cpu_ms: float | None
    peak_mb: float | None


def _rlimits(limits: Limits, *, file_mb: int, memory_rlimit: bool, nproc: bool) -> list[tuple[int, int]]:
    out = [
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_FSIZE, file_mb * MIB),
    ]
    if memory_rlimit:
        # RLIMIT_AS would break Node, Go and the JVM (they reserve address space they
        # never use); RLIMIT_DATA counts what is actually writable.
        out.append((resource.RLIMIT_DATA, limits.memory_mb * MIB))
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
                    name, memory_bytes=limits.memory_mb * MIB, max_processes=limits.processes
                )
                if not self.cgroup.active:
                    self.cgroup.remove()
                    self.cgroup = None
            env = dict(env)  # the bot's own: it reaches the bot's program only
            check_passable(name, argv, env)
            if self.level is Level.NONE:
                env.setdefault("PYTHONPATH", python_path())
            else:
                env["PYTHONPATH"] = python_path()
            launcher = env
            if self.level is Level.STRICT:
                support = strict_support()
                if not support.ok:
                    raise BotStartError(f"the strict sandbox is not available: {support.missing}", bot=name, argv=tuple(argv))
                env["HOME"] = env["TMPDIR"] = "/tmp"
                program = strict_program(name, argv[0], cwd, env, sandbox)
                if os.geteuid() == 0 and not sandbox.writable:
                    check_enterable(name, sandbox.expose, argv)
                self._uid = UIDS.take() if os.geteuid() == 0 else None
                self._seccomp_fd = _seccomp.filter_fd(build=sandbox.writable)  # writable: a build step
                argv = strict_argv(
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
        if (cpu is None or rss is None) and self.pid is not None and LINUX and not self._closed:
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
            self.cgroup.reset_peak(rss if self.cgroup.memory is not None else None)

    def sample(self) -> None:
        """Take one memory sample now (the peak of a bot that dies between two of the
        watch's samples would be lost otherwise): the referee takes one once a bot has
        said hello, when its program is loaded."""
        if self.level is Level.NONE:
            return
        _cpu, rss = self._cpu_and_rss()
        if rss:
            self._peak_sampled = max(self._peak_sampled, rss)

    def usage(self) -> Usage:
        """What the bot used since :meth:`begin_game` (or since it started)."""
        cpu, rss = self._cpu_and_rss()
        peak = self._peak_sampled = max(self._peak_sampled, rss or 0)
        if self.cgroup is not None and self.cgroup.memory is not None:
            peak = max(peak, self.cgroup.memory_peak(rss) or 0)
        return Usage(
            cpu_ms=None if cpu is None else round(1000 * (cpu - self._game_cpu0), 1),
            peak_mb=round(peak / MIB, 1) if peak else None,
        )

    async def watch(self, sleep: Callable[[float], Awaitable[None]] = trio.sleep) -> None:
        """Until cancelled: sample the memory, and kill the bot when it goes over its CPU
        time for this game or its temporary folder's size; ``sleep(WATCH_INTERVAL)``
        between two looks (the bot's process sleeps longer while the bot is idle)."""
        limits = self.limits
        if self.level is Level.NONE:
            return
        beat = 0
        while True:
            await sleep(WATCH_INTERVAL)
            cpu, rss = self._cpu_and_rss()
            if rss:
                self._peak_sampled = max(self._peak_sampled, rss)
            if cpu is not None and cpu - self._game_cpu0 > limits.cpu_s:
                self._kill_for(f"it used {cpu - self._game_cpu0:.1f} s of CPU time in this game, over its limit of {limits.cpu_s:g} s")
                return
            beat += 1
            if self._temp is not None and beat % 5 == 0:
                size = await trio.to_thread.run_sync(folder_size, self._temp, limits.tmp_mb * MIB)
                if size > limits.tmp_mb * MIB:
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
            UIDS.give_back(self._uid)
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


def folder_size(folder: Path, stop_above: int) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
        if total > stop_above:
            break
    return total



def open_jail(name: str, sandbox: Sandbox | None, argv: list[str], env: dict[str, str], cwd: Path) -> Jail | None:
    """The jail of a bot about to be started (None without a sandbox). Raises
    :class:`BotStartError` when it cannot be made (e.g. strict is not available)."""
    if sandbox is None:
        return None
    if not LINUX:
        sandbox = replace(sandbox, level=Level.NONE)
    return Jail(name, sandbox, argv, env, cwd)
