"""Control groups for bots: one group per bot process tree, for a whole-tree kill, its CPU
time and peak memory, and caps on its memory and process count.

Linux offers these through two kinds of hierarchy that may coexist: the unified one
(cgroup v2: ``cgroup.kill``, ``cpu.stat``, and, when its controllers are enabled,
``memory.max``/``memory.peak``/``pids.max``) and per-controller ones (cgroup v1:
``memory``, ``pids``, ``cpuacct``). Each feature is taken from wherever it works, and
each may be missing; :func:`support` says what is there.

Every group is made *below the arena's own group* in each hierarchy (the arena is never
moved), in a folder ``sushigo-arena-<pid>`` of this arena process, and removed when its
bot has been closed. A bot's process joins its groups itself, between fork and exec
(:meth:`BotCgroup.join_hook`), so that it cannot fork before it is inside.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import itertools
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BotCgroup", "CgroupSupport", "support", "user_manager_runs", "v2_mounted"]

log = logging.getLogger(__name__)

_counter = itertools.count(1)


@dataclass(frozen=True, slots=True)
class CgroupSupport:
    """Where this arena process may make bot groups, per feature (``None``: not here)."""

    unified: Path | None = None  # a v2 folder we can make groups in (kill, cpu, procs)
    memory: Path | None = None  # folder for memory caps and peaks
    memory_v2: bool = False  # ``memory`` is a v2 folder (memory.max) rather than v1
    pids: Path | None = None
    pids_v2: bool = False
    cpuacct: Path | None = None  # v1 CPU accounting, when there is no v2 folder
    problems: tuple[str, ...] = field(default=())

    @property
    def kill(self) -> bool:
        return self.unified is not None and (self.unified / "cgroup.kill").exists()

    def describe(self) -> str:
        parts = []
        parts.append("whole-tree kill" if self.kill else "no cgroup.kill")
        parts.append("memory cap" if self.memory else "no memory cgroup")
        parts.append("process cap" if self.pids else "no pids cgroup")
        parts.append("CPU accounting" if (self.unified or self.cpuacct) else "no CPU accounting cgroup")
        return ", ".join(parts)


def _mounts() -> list[tuple[str, Path, str, set[str]]]:
    """(fstype, mount point, root inside the hierarchy, super options) of cgroup mounts."""
    out = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3 or rest[0] not in ("cgroup", "cgroup2"):
            continue
        mount_point = fields[4].replace("\\040", " ")
        out.append((rest[0], Path(mount_point), fields[3], set(rest[2].split(","))))
    return out


def _own_paths() -> dict[str, str]:
    """This process's group in each hierarchy: ``"0"`` (v2) or a controller name → path."""
    out: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                hier, controllers, path = line.rstrip("\n").split(":", 2)
                if hier == "0":
                    out["0"] = path
                for c in controllers.split(","):
                    if c:
                        out[c] = path
    except (OSError, ValueError):
        pass
    return out


def _folder(mount: Path, root: str, own: str) -> Path | None:
    """The folder of group ``own`` under a mount whose root is ``root``."""
    root = root.rstrip("/") or "/"
    if root != "/" and not (own == root or own.startswith(root + "/")):
        return None  # our group is not visible in this mount
    rel = own[len(root) :] if root != "/" else own
    folder = mount / rel.lstrip("/")
    return folder if folder.is_dir() else None


def _sweep(folder: Path) -> None:
    """Remove the groups of arena processes that are gone (killed before they could
    clean up), ending first what is left in them: bots of that arena that outlived it
    (at the limits level, a setsid'd grandchild escapes the parent-death signal)."""
    with contextlib.suppress(OSError):
        for old in folder.glob("sushigo-arena-*"):
            pid = old.name.rsplit("-", 1)[-1]
            if not pid.isdigit() or os.path.exists(f"/proc/{pid}"):
                continue
            for child in old.iterdir():
                if child.is_dir():
                    _end_stale(child)
                    with contextlib.suppress(OSError):
                        child.rmdir()
            with contextlib.suppress(OSError):
                old.rmdir()


def _stale_pids(group: Path) -> list[int]:
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _end_stale(group: Path, wait_s: float = 1.0) -> None:
    """SIGKILL the processes left in a gone arena's bot group, and wait (a little) until
    they are gone."""
    pids = _stale_pids(group)
    if not pids:
        return
    log.info("ending %d process(es) left in %s by an arena that is gone", len(pids), group)
    if not _write(group / "cgroup.kill", "1"):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait_s
    while _stale_pids(group) and time.monotonic() < deadline:
        time.sleep(0.01)


def _writable_parent(folder: Path) -> Path | None:
    """A ``sushigo-arena-<pid>`` folder below ``folder``, made now (None if we may not)."""
    _sweep(folder)
    mine = folder / f"sushigo-arena-{os.getpid()}"
    try:
        mine.mkdir(exist_ok=True)
    except OSError:
        return None
    return mine


_support: CgroupSupport | None = None


def support() -> CgroupSupport:
    """Probe once what this process may do with control groups (Linux only). Only the
    folders that will be used are made."""
    global _support
    if _support is not None:
        return _support
    if not sys.platform.startswith("linux"):
        _support = CgroupSupport(problems=("control groups are Linux's",))
        return _support
    own = _own_paths()
    v2_folder: Path | None = None
    v1: dict[str, Path] = {}
    for fstype, mount, root, opts in _mounts():
        if fstype == "cgroup2" and v2_folder is None and "0" in own:
            v2_folder = _folder(mount, root, own["0"])
        elif fstype == "cgroup":
            for controller in ("memory", "pids", "cpuacct"):
                if controller in opts and controller in own and controller not in v1:
                    folder = _folder(mount, root, own[controller])
                    if folder is not None:
                        v1[controller] = folder
    problems = []
    unified = _writable_parent(v2_folder) if v2_folder is not None else None
    if v2_folder is not None and unified is None:
        problems.append(f"cannot make groups in {v2_folder}")
    enabled: set[str] = set()
    if unified is not None and v2_folder is not None:
        available = set(_read_text(v2_folder / "cgroup.controllers").split())
        wanted = [c for c in ("memory", "pids") if c in available]
        if wanted:
            # The arena's folder holds no process, so it may hand controllers down.
            _write(unified / "cgroup.subtree_control", " ".join("+" + c for c in wanted))
        enabled = set(_read_text(unified / "cgroup.subtree_control").split())

    def v1_parent(controller: str) -> Path | None:
        return _writable_parent(v1[controller]) if controller in v1 else None

    memory_v2, pids_v2 = "memory" in enabled, "pids" in enabled
    memory = unified if memory_v2 else v1_parent("memory")
    pids = unified if pids_v2 else v1_parent("pids")
    cpuacct = None if unified is not None else v1_parent("cpuacct")  # v2's cpu.stat is enough
    _support = CgroupSupport(
        unified=unified,
        memory=memory,
        memory_v2=memory_v2,
        pids=pids,
        pids_v2=pids_v2,
        cpuacct=cpuacct,
        problems=tuple(problems),
    )
    if unified or memory or pids or cpuacct:
        atexit.register(remove_arena_folders)
    return _support


def v2_mounted() -> bool:
    """Whether a unified hierarchy (cgroup v2) is mounted: a group of it delegated to a
    user gives that user's bots a whole-tree kill and their CPU time (``cpu.stat`` needs
    no controller)."""
    return any(fstype == "cgroup2" for fstype, *_ in _mounts())


def user_manager_runs() -> bool:
    """Whether a systemd user manager runs for this user (``systemd-run --user`` needs it)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    return os.path.exists(os.path.join(runtime, "systemd", "private"))


def _read_text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, text: str) -> bool:
    try:
        path.write_text(text)
        return True
    except OSError as exc:
        log.debug("cannot write %r to %s: %s", text, path, exc)
        return False


def _read_small(path: Path) -> bytes | None:
    """A small control file's bytes (None if it cannot be read). One open, read and close
    and no text layer: the referee reads these every few turns for every bot."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, 1 << 16)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_int(path: Path) -> int | None:
    data = _read_small(path)
    try:
        return int(data.split()[0]) if data is not None else None
    except (ValueError, IndexError):
        return None


def _flat_keyed(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    data = _read_small(path)
    if data is None:
        return out
    for line in data.decode(errors="replace").splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            out[key] = int(value)
    return out


def _usage_usec(data: bytes | None) -> int | None:
    """``usage_usec`` of a cgroup v2 ``cpu.stat`` (its first line, where the kernel puts it)."""
    if data is None:
        return None
    for line in data.split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == b"usage_usec":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BotCgroup:
    """The groups of one bot process tree. Make it before the spawn, pass
    :meth:`join_hook` to run in the child, and :meth:`remove` it after the tree is gone."""

    def __init__(self, label: str, *, memory_bytes: int | None, max_processes: int | None) -> None:
        self.support = support()
        name = f"{label[:40]}-{next(_counter)}"
        self.folders: list[Path] = []
        self.unified = self._make(self.support.unified, name)
        s = self.support
        self.memory = self._make(s.memory, name) if s.memory is not None and s.memory != s.unified else (
            self.unified if s.memory is not None else None
        )
        self.pids = self._make(s.pids, name) if s.pids is not None and s.pids != s.unified else (
            self.unified if s.pids is not None else None
        )
        self.cpuacct = self._make(s.cpuacct, name) if s.cpuacct is not None else None
        self.memory_bytes = memory_bytes
        self.max_processes = max_processes
        self.memory_capped = False
        self.processes_capped = False
        if self.memory is not None and memory_bytes is not None:
            if s.memory_v2:
                self.memory_capped = _write(self.memory / "memory.max", str(memory_bytes))
                _write(self.memory / "memory.swap.max", "0")
            else:
                self.memory_capped = _write(self.memory / "memory.limit_in_bytes", str(memory_bytes))
                _write(self.memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
        if self.pids is not None and max_processes is not None:
            self.processes_capped = _write(self.pids / "pids.max", str(max_processes))
        self._procs_fds: list[int] = []
        for folder in dict.fromkeys(f for f in (self.unified, self.memory, self.pids, self.cpuacct) if f is not None):
            with contextlib.suppress(OSError):
                self._procs_fds.append(os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC))
        self._peak_sampled = 0
        self._final: tuple[float, int] | None = None
        # The files read at every game's start and end, kept open (an open of a control
        # file costs more than its read) and closed by remove().
        self._kept: dict[Path, int] = {}

    def _make(self, base: Path | None, name: str) -> Path | None:
        if base is None:
            return None
        folder = base / name
        try:
            folder.mkdir()
        except OSError as exc:
            log.debug("cannot make cgroup %s: %s", folder, exc)
            return None
        self.folders.append(folder)
        return folder

    @property
    def active(self) -> bool:
        return bool(self._procs_fds)

    @property
    def can_kill(self) -> bool:
        return self.unified is not None and (self.unified / "cgroup.kill").exists()

    def join_hook(self) -> Callable[[], None]:
        """For the child between fork and exec: move itself into every group. Only
        writes to files opened beforehand, so it is safe there."""
        fds = tuple(self._procs_fds)

        def join() -> None:
            for fd in fds:
                os.write(fd, b"0")

        return join

    def spawned(self) -> None:
        """Close the parent's copies of the files the child wrote itself into."""
        for fd in self._procs_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._procs_fds = []

    # -- measuring ---------------------------------------------------------------------

    def _read_kept(self, path: Path) -> bytes | None:
        """``path``'s bytes, read again from the start of a file kept open."""
        fd = self._kept.get(path)
        if fd is None:
            try:
                fd = self._kept[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
        try:
            return os.pread(fd, 1 << 16, 0)
        except OSError:
            return None

    def _kept_int(self, path: Path) -> int | None:
        data = self._read_kept(path)
        try:
            return int(data.split()[0]) if data is not None else None
        except (ValueError, IndexError):
            return None

    def _close_kept(self) -> None:
        for fd in self._kept.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._kept.clear()

    def __del__(self) -> None:
        self._close_kept()  # a group dropped without remove() (a spawn that failed) leaks no fd

    def cpu_seconds(self) -> float | None:
        """CPU time used by every process that was ever in the group (user + system)."""
        if self._final is not None:
            return self._final[0]
        if self.unified is not None:
            usec = _usage_usec(self._read_kept(self.unified / "cpu.stat"))
            if usec is not None:
                return usec / 1e6
        if self.cpuacct is not None:
            ns = self._kept_int(self.cpuacct / "cpuacct.usage")
            if ns is not None:
                return ns / 1e9
        return None

    def memory_now(self) -> int | None:
        if self.memory is None:
            return None
        name = "memory.current" if self.support.memory_v2 else "memory.usage_in_bytes"
        return self._kept_int(self.memory / name)

    def memory_peak(self, now: int | None = None) -> int | None:
        """Peak memory (bytes) since the last :meth:`reset_peak`, as the kernel keeps it
        (or, where it keeps none, the highest of the samples taken); ``now``: the memory
        the caller has just read (:meth:`memory_now`), else it is read here."""
        if self._final is not None:
            return self._final[1]
        if self.memory is None:
            return None
        if self.support.memory_v2:
            peak = self._kept_int(self.memory / "memory.peak")
        else:
            peak = self._kept_int(self.memory / "memory.max_usage_in_bytes")
        now = (self.memory_now() if now is None else now) or 0
        self._peak_sampled = max(self._peak_sampled, now)
        return max(peak or 0, self._peak_sampled) if peak is not None or now else None

    def reset_peak(self, now: int | None = None) -> None:
        """Count the peak afresh from now (``now``: as in :meth:`memory_peak`)."""
        self._peak_sampled = 0
        if self.memory is not None and not self.support.memory_v2:
            _write(self.memory / "memory.max_usage_in_bytes", "0")
        # v2's memory.peak can only be reset per open file (Linux 6.12): the samples
        # above serve instead there.
        if self.memory is not None and self.support.memory_v2:
            self._peak_sampled = (self.memory_now() if now is None else now) or 0

    def oom_kills(self) -> int:
        """How many processes of the group the kernel killed for going over its memory cap."""
        if self.memory is None:
            return 0
        if self.support.memory_v2:
            return _flat_keyed(self.memory / "memory.events").get("oom_kill", 0)
        return _flat_keyed(self.memory / "memory.oom_control").get("oom_kill", 0)

    def pids_refused(self) -> int:
        """How many forks the process cap refused."""
        if self.pids is None:
            return 0
        return _flat_keyed(self.pids / "pids.events").get("max", 0)

    def processes(self) -> list[int]:
        """The pids in the group now (from the first hierarchy that has it)."""
        for folder in (self.unified, self.pids, self.memory, self.cpuacct):
            if folder is None:
                continue
            try:
                return [int(p) for p in (folder / "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                continue
        return []

    # -- ending ------------------------------------------------------------------------

    def kill(self) -> bool:
        """SIGKILL every process in the group, wherever it hangs in the process tree
        (double-forked, setsid'd, re-parented). Returns whether a kill was sent."""
        if self.can_kill and _write(self.unified / "cgroup.kill", "1"):  # type: ignore[operator]
            return True
        # No cgroup.kill: signal the members until none is left (the process cap bounds
        # how many can appear meanwhile).
        sent = False
        for _ in range(50):
            pids = self.processes()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    sent = True
        return sent

    def remove(self, wait_s: float = 2.0) -> list[int]:
        """Record the final usage, then remove the groups (waiting up to ``wait_s`` for
        their last processes, killed already, to be gone). Returns the pids that were
        still there, if any (the groups then stay, and are logged)."""
        if self._final is None:
            self._final = (self.cpu_seconds() or 0.0, self.memory_peak() or 0)
        self._close_kept()
        self.spawned()
        deadline = time.monotonic() + wait_s
        left: list[int] = []
        for folder in reversed(self.folders):
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        left = self.processes()
                        log.warning("cannot remove cgroup %s (%s); processes in it: %s", folder, exc, left)
                        break
                    time.sleep(0.01)
        self.folders = []
        return left


def sweep_gone_groups() -> None:
    """End what is left in the groups of arena processes that are gone, and remove those
    groups: e.g. after a referee process of this arena (an arena process of its own, with
    its own ``sushigo-arena-<pid>`` folders beside this one's) was killed."""
    s = support()
    for base in {s.unified, s.memory, s.pids, s.cpuacct}:
        if base is not None:
            _sweep(base.parent)


def remove_arena_folders() -> None:
    """Remove this arena process's ``sushigo-arena-<pid>`` folders (at exit; they are
    empty once every bot is closed)."""
    s = _support
    if s is None:
        return
    for base in {s.unified, s.memory, s.pids, s.cpuacct}:
        if base is not None:
            with contextlib.suppress(OSError):
                base.rmdir()
