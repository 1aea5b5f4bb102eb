"""Bots' build steps: :func:`run_build` runs one in the bot's sandbox with its build
folder writable, bounded in wall-clock and CPU time, in output (its last bytes kept, and
written to its log) and in what it leaves on disk (:class:`BuildCaps`: space, entries,
depth); :func:`build_in_thread` runs a blocking preparation in a worker thread where a
cancelled caller (Ctrl-C, SIGTERM) ends the build's whole tree.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import math
import os
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import trio

from ._errors import BotStartError, lone_errors_unwrapped
from ._tail import ByteTail
from .jail import WATCH_INTERVAL, Jail, folder_size, open_jail
from .sandbox import DEFAULT_BUILD_FILES_CAP, DEFAULT_BUILD_MB_CAP, MIB, Sandbox

T = TypeVar("T")

__all__ = [
    "BUILD_CHECK_INTERVAL",
    "BUILD_DEPTH_CAP",
    "BUILD_OUTPUT_CAP",
    "BuildCaps",
    "BuildInterrupted",
    "BuildResult",
    "build_in_thread",
    "remove_build_folder",
    "run_build",
]

#: How much of a build's output is kept (its last bytes), in memory and in its log.
BUILD_OUTPUT_CAP = 256 * 1024
# After a build's main process has exited, how long its output pipe may stay open (held by
# a descendant it left behind) before the rest of its tree is ended.
_BUILD_PIPE_WAIT = 1.0
# How long a cancelled caller of build_in_thread waits for the build's tree to be ended.
_BUILD_STOP_WAIT = 10.0
_READ = 65536



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
            size, entries, deep = _tree_usage(where, self.max_mb * MIB, self.max_files)
            if size > self.max_mb * MIB:
                return f"its {what} grew over the run's cap of {self.max_mb} MB (build_mb)"
            if entries > self.max_files:
                return f"its {what} grew over the run's cap of {self.max_files} files (build_files)"
            if deep:
                return f"its {what} nests folders over {BUILD_DEPTH_CAP} deep"
        if temp is not None and folder_size(temp, temp_mb * MIB) > temp_mb * MIB:
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


