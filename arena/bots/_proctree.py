"""Linux process-tree bookkeeping: child subreaper, descendants by identity, reaping.

How a bot's whole process tree is reached, and why it is safe for other bots:

- The bot is started in a new session, so its process group id is its pid. We never reap
  the bot's main process before the cleanup is over, so that pid (hence that group id)
  cannot be reused meanwhile, and ``killpg(pid)`` can only hit the bot's own group.
- A descendant may leave the group (``setsid``, ``setpgid``) and be orphaned by a double
  fork. Two things keep it in reach. The arena makes itself a *child subreaper* once
  (:func:`become_subreaper`), and the bot is made one too just before it execs
  (:func:`child_setup_hook`), so such orphans are re-parented to the bot while it lives
  (and stay visible in its tree), and to the arena after it dies (never to init, out of
  reach). And :class:`ProcessTree` records every descendant seen, by *identity*
  ``(pid, start time)``, by walking ``/proc/<pid>/task/*/children`` periodically and at
  close, so a descendant is still known after its parent has gone. At close it also
  looks for the bot's session and process group members, and for orphans re-parented to
  the arena that still hold one of the bot's stdio pipes.
- Signals go through a pidfd opened after checking the start time, so a recorded pid that
  was reused by an unrelated process is never signalled.
- Reaping: only the recorded descendants that have become *our* children (re-parented
  orphans, ``ppid == os.getpid()``) and are zombies with the recorded start time are
  reaped, each with ``waitpid(pid, WNOHANG)``. We never call ``waitpid(-1)``: that could
  steal the status of a child owned by someone else (another bot's main process, a build
  step run by trio), whose owner would then never learn how it ended.

Known limit: a descendant that leaves the session, closes the bot's stdio pipes and is
orphaned between two scans (while the bot has turned its own subreaper flag off, or
after the bot died) is not reached; re-parented to the arena, it stays a zombie after
it exits, until the arena exits. A sandbox with its own pid namespace
(or a cgroup per bot) is the complete answer; this module is the best effort without one.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["ProcessTree", "become_subreaper", "child_setup_hook", "read_stat"]

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36

_LINUX = sys.platform.startswith("linux")
_prctl: Callable[..., int] | None = None
_subreaper = False


def _get_prctl() -> Callable[..., int] | None:
    global _prctl
    if _prctl is None and _LINUX:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            _prctl = libc.prctl
        except (OSError, AttributeError):  # pragma: no cover - exotic libc
            return None
    return _prctl


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``), once.

    From then on, orphaned descendants of our children are re-parented to us instead of
    init. Only recorded bot descendants are ever reaped by this package (see the module
    docstring); an unrelated orphan re-parented to the arena stays a zombie until the
    arena exits. Returns whether the process is a subreaper.
    """
    global _subreaper
    if not _subreaper:
        prctl = _get_prctl()
        if prctl is not None and prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
            _subreaper = True
        else:
            log.warning("could not become a child subreaper; escaped bot processes may linger")
    return _subreaper


def child_setup_hook(parent_pid: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` for ``subprocess.Popen`` that, in the child before exec:

    - asks for SIGKILL when the spawning thread dies (``PR_SET_PDEATHSIG``), so a killed
      arena leaves no bots behind. The kernel ties this to the *thread* that forked, which
      is why bots must be spawned from the trio thread, never from a worker thread that
      may exit while the bot still runs;
    - makes the bot a child subreaper, so that its orphaned descendants stay in its tree;
    - exits at once if the arena already died before the death signal was armed.

    Both flags survive ``execve`` (not for set-uid programs). Returns ``None`` off Linux.
    The hook only makes three system calls through an already loaded function, which is
    what makes it acceptable between fork and exec.
    """
    prctl = _get_prctl()
    if prctl is None:
        return None

    def setup() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(127)

    return setup


class Stat(NamedTuple):
    """The fields of ``/proc/<pid>/stat`` we need."""

    state: str
    ppid: int
    pgrp: int
    session: int
    starttime: int


def read_stat(pid: int) -> Stat | None:
    """Read ``/proc/<pid>/stat``; ``None`` if there is no such process (zombies exist)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain ") ": split at the last.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return Stat(
            fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19])
        )
    except (IndexError, ValueError):
        return None


def _children_from_task_files(pid: int) -> list[int] | None:
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    children: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                children.extend(int(c) for c in f.read().split())
        except FileNotFoundError:
            if os.path.isdir(f"/proc/{pid}/task/{tid}"):
                return None  # the kernel lacks CONFIG_PROC_CHILDREN
        except (OSError, ValueError):
            pass
    return children


def _children_by_scanning_proc(pid: int) -> list[int]:
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = read_stat(int(entry))
            if st is not None and st.ppid == pid:
                children.append(int(entry))
    return children


_task_children_files = True


def children_of(pid: int) -> list[int]:
    """Pids whose parent is ``pid`` right now (possibly racing with exits and forks)."""
    global _task_children_files
    if _task_children_files:
        found = _children_from_task_files(pid)
        if found is not None:
            return found
        _task_children_files = False
    return _children_by_scanning_proc(pid)


def signal_identity(pid: int, starttime: int, sig: int) -> bool:
    """Send ``sig`` to ``pid`` only if it is still the process that started at
    ``starttime``. Returns whether a signal was sent."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        # The pidfd pins one process; checking the start time after opening it proves
        # that this process is the recorded one, not a newcomer that reused the pid.
        st = read_stat(pid)
        if st is None or st.starttime != starttime:
            return False
        signal.pidfd_send_signal(pidfd, sig)
        return True
    except OSError as exc:  # ESRCH: already exited; EPERM: became set-uid
        if exc.errno not in (errno.ESRCH, errno.EPERM):
            raise
        return False
    finally:
        os.close(pidfd)


class ProcessTree:
    """Every descendant of one root process seen so far, recorded by identity.

    The caller must keep ``root`` unreaped while it is set (so its pid stays pinned), and
    set it to ``None`` before reaping it. At most ``limit`` descendants are recorded (a
    fork bomb is the sandbox's job).
    """

    def __init__(self, root: int, *, pipes: tuple[int, ...] = (), limit: int = 4096) -> None:
        self.root: int | None = root
        self.limit = limit
        self.known: dict[int, int] = {}  # pid -> start time
        # Inode numbers of the bot's stdio pipes: only the bot's tree can hold them.
        self._pipe_names = {f"pipe:[{os.fstat(fd).st_ino}]" for fd in pipes}

    def _still_known(self, pid: int) -> bool:
        st = read_stat(pid)
        return st is not None and st.starttime == self.known.get(pid)

    def _record(self, pid: int, starttime: int) -> bool:
        if self.known.get(pid) == starttime or len(self.known) >= self.limit:
            return False
        self.known[pid] = starttime
        return True

    def scan(self, *, whole_session: bool = False) -> int:
        """Record the current descendants of the root and of every recorded process;
        forget recorded ones that are gone. Returns how many new ones were found.

        ``whole_session`` also records every process in the root's session or process
        group, wherever it now hangs in the tree, and every orphan re-parented to us that
        still holds one of the bot's stdio pipes (so a child that left the session just
        before the bot died is found too). It reads all of ``/proc``, so it is meant for
        the close, not for periodic scans. The root being pinned, its pid names no other
        session or group.
        """
        for pid in [p for p in self.known if not self._still_known(p)]:
            del self.known[pid]
        new = 0
        if whole_session and self.root is not None:
            me = os.getpid()
            for entry in os.listdir("/proc"):
                if not entry.isdigit() or int(entry) == self.root:
                    continue
                pid = int(entry)
                st = read_stat(pid)
                if st is None:
                    continue
                if self.root in (st.session, st.pgrp) or (
                    st.ppid == me and pid not in self.known and self._holds_our_pipe(pid)
                ):
                    new += self._record(pid, st.starttime)
        pending = [*self.known] if self.root is None else [self.root, *self.known]
        seen: set[int] = set()
        while pending:
            parent = pending.pop()
            if parent in seen:
                continue
            seen.add(parent)
            children = children_of(parent)
            # The parent may have died and its pid been reused while we listed it.
            if parent != self.root and not self._still_known(parent):
                continue
            for child in children:
                st = read_stat(child)
                if st is None or st.ppid != parent:
                    continue
                new += self._record(child, st.starttime)
                if child in self.known:
                    pending.append(child)
        return new

    def _holds_our_pipe(self, pid: int) -> bool:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            return False
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") in self._pipe_names:
                    return True
            except OSError:
                pass
        return False

    def signal_all(self, sig: int) -> None:
        """Send ``sig`` to every recorded descendant that still exists."""
        for pid, starttime in list(self.known.items()):
            signal_identity(pid, starttime, sig)

    def reap_orphans(self) -> None:
        """Reap recorded descendants that were re-parented to us and have exited."""
        me = os.getpid()
        for pid, starttime in list(self.known.items()):
            st = read_stat(pid)
            if st is None or st.starttime != starttime:
                del self.known[pid]
            elif st.ppid == me and st.state in ("Z", "X"):
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)

    def remaining(self) -> list[int]:
        """Recorded descendants that still exist (running, stopped, or zombies)."""
        return [pid for pid in list(self.known) if self._still_known(pid)]

    def running(self) -> list[int]:
        """Recorded descendants that still exist and are not zombies."""
        out = []
        for pid, starttime in list(self.known.items()):
            st = read_stat(pid)
            if st is not None and st.starttime == starttime and st.state not in ("Z", "X"):
                out.append(pid)
        return out
