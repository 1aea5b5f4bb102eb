"""Bot processes: spawn, talk over stdin/stdout, drain stderr, end the whole tree.

Design notes (the why):

- Spawning happens synchronously in the trio thread with :class:`subprocess.Popen`, not
  with ``trio.open_process``/``run_process``, which fork from a worker thread that exits
  after ~10 s idle: the parent-death signal we arm (see ``_proctree.child_setup_hook``)
  is tied to the forking *thread*, so the bot would be killed then.
- We pass our own pipes to Popen, make our ends non-blocking, and wait for exit on a
  pidfd, so nothing ever blocks the trio thread.
- The main process is not reaped until its tree has been ended (``WNOWAIT``), so its pid,
  which is also its process group and session id, cannot name anyone else meanwhile.
- The bot's own background tasks (exit watcher, stderr drain, descendant tracker) run in
  a shielded scope, so that closing the bot *because* of a cancellation still works.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import subprocess
from collections.abc import AsyncIterator

import trio

from ._errors import (
    BotCrashed,
    BotStartError,
    LineTooLong,
    lone_errors_unwrapped,
    not_executable_hint,
)
from ._linereader import BoundedLineReader
from ._proctree import ProcessTree, become_subreaper, child_setup_hook
from ._spec import BotSpec, minimal_env
from ._tail import ByteTail
from .jail import Jail, open_jail

__all__ = ["DEFAULT_MAX_LINE", "DEFAULT_STDERR_CAP", "BotProcess", "open_bot", "serve_bot"]

log = logging.getLogger(__name__)

DEFAULT_MAX_LINE = 64 * 1024
"""The protocol's default cap on one line from a bot, in bytes."""

# How long a crash report may wait for the exit status and the last stderr bytes.
_CRASH_REPORT_WAIT = 0.1
# Beyond grace + term_grace, how long aclose() may take to see the tree die and reap it.
_KILL_WAIT = 2.0
_STDERR_READ = 65536

DEFAULT_STDERR_CAP = 64 * 1024
#: How much less often an idle bot (see :meth:`BotProcess.pace`) has its descendants
#: recorded and its usage looked at: a run keeps many idle processes (each bot one per
#: game of a duplicate set it may play), and watching each as closely as a playing one
#: cost ~2 ms of the arena's CPU per second per process.
IDLE_SLOWDOWN = 10
"""Default size of the stderr tail kept per bot, in bytes."""


class BotProcess:
    """A running bot, owned by :func:`open_bot` or :func:`serve_bot`. Not thread-safe;
    one trio run.

    At most one task may :meth:`send` and one task :meth:`receive_line` at a time.
    Deadlines are the caller's cancel scopes (or see :func:`arena.bots.request`).
    """

    def __init__(
        self,
        spec: BotSpec,
        popen: subprocess.Popen[bytes],
        pidfd: int,
        stdin_fd: int,
        stdout_fd: int,
        stderr_fd: int,
        stderr_cap: int,
        jail: Jail | None = None,
    ) -> None:
        self.spec = spec
        self._jail = jail  # the sandbox's handle on the bot (limits, usage, whole-tree kill)
        self._popen = popen
        self._pidfd = pidfd
        self._stdin = trio.lowlevel.FdStream(stdin_fd)  # non-blocking from here on
        self._stdin_fd = stdin_fd
        # stdout is read straight from the fd, not through an FdStream, because a read
        # must be able to stop when the process exits (a grandchild may still hold the
        # pipe open) and then take whatever the bot wrote before exiting without waiting.
        os.set_blocking(stdout_fd, False)
        self._stdout_fd = stdout_fd
        self._read_stdout = functools.partial(os.read, stdout_fd)  # for try_receive_line
        self._stdout_wake: trio.CancelScope | None = None
        self._reader = BoundedLineReader(self._receive_stdout)
        self._stderr = trio.lowlevel.FdStream(stderr_fd)
        self._stderr_tail = ByteTail(stderr_cap)
        self._stderr_done = trio.Event()
        self._exited = trio.Event()
        self._returncode: int | None = None
        self._tree = ProcessTree(popen.pid, pipes=(stdin_fd, stdout_fd, stderr_fd))
        self._broken = False
        self._closing = False
        self._close_done = trio.Event()
        self._background = trio.CancelScope(shield=True)
        self._background_done = trio.Event()
        self._reaped = False
        self._released = False
        self._idle = False
        self._naps: set[trio.CancelScope] = set()  # the watchers' sleeps, cut short by pace(idle=False)

    # -- state ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        """``None`` while the process runs; then its exit status, negative for a signal."""
        return self._returncode

    @property
    def alive(self) -> bool:
        """The main process has not exited (it may still be useless if :attr:`broken`)."""
        return self._returncode is None

    @property
    def closed(self) -> bool:
        """:meth:`aclose` has released the process and its fds."""
        return self._released

    @property
    def broken(self) -> bool:
        """A write failed or was interrupted, so a partial message may sit in the bot's
        stdin: nothing more can be sent, and the bot must be restarted."""
        return self._broken

    def stderr_tail(self, reset: bool = False) -> str:
        """The last ``stderr_cap`` bytes the bot wrote to stderr (decoded, undecodable
        bytes replaced), after a ``[… N bytes dropped …]`` line if more were written.
        ``reset=True`` starts a new tail (e.g. per game) after returning this one."""
        return self._stderr_tail.text(reset=reset)

    @property
    def jail(self) -> Jail | None:
        """The bot's sandbox (see :mod:`arena.bots.sandbox`), None without one."""
        return self._jail

    @property
    def stderr_bytes(self) -> int:
        """Total bytes read from the bot's stderr so far."""
        return self._stderr_tail.total

    def __repr__(self) -> str:
        return f"<BotProcess {self.name!r} pid={self.pid} returncode={self._returncode}>"

    # -- talking -------------------------------------------------------------------------

    async def send(self, data: bytes) -> None:
        """Write all of ``data`` to the bot's stdin.

        Raises :class:`BotCrashed` if the pipe is broken (the bot exited or closed its
        stdin), if the bot is closed, or if it is already :attr:`broken`. If the write is
        interrupted (cancelled by the caller's deadline, or fails), the bot becomes
        :attr:`broken` and the interruption propagates unchanged.
        """
        self._check_writable()
        try:
            await self._stdin.send_all(data)
        except trio.BusyResourceError:
            raise  # a caller bug (two senders), nothing was written
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            self._broken = True
            raise await self._crash_error("broken pipe while writing to the bot") from exc
        except BaseException:
            self._broken = True
            raise

    def _check_writable(self) -> None:
        """Raise :class:`BotCrashed` if nothing may be written to the bot any more."""
        if self._closing:
            raise BotCrashed("the bot is closed", bot=self.name, returncode=self._returncode)
        if self._broken:
            raise BotCrashed(
                "an earlier write failed part-way; the bot must be restarted",
                bot=self.name,
                returncode=self._returncode,
            )

    def try_send(self, data: bytes | memoryview) -> int | None:
        """Write as much of ``data`` as the pipe takes now, without waiting: the number
        of bytes written (0 when the pipe is full). Returns None, having written
        nothing, when the pipe is broken: :meth:`send` then raises the full error.

        For a caller that waits for writability itself (see :class:`BotGroup`); if it
        gives up after writing part of a message, it must call :meth:`mark_broken`.
        Raises :class:`BotCrashed` like :meth:`send` if the bot is closed or broken.
        """
        if self._closing or self._broken:
            self._check_writable()  # raises
        try:
            return os.write(self._stdin_fd, data)
        except BlockingIOError:
            return 0
        except OSError:
            return None

    def mark_broken(self) -> None:
        """Record that a message was left partly written: the bot must be restarted."""
        self._broken = True

    def try_receive_line(self, max_bytes: int = DEFAULT_MAX_LINE) -> bytes | None:
        """The bot's next stdout line if one can be had without waiting, else None
        (:meth:`receive_line` would wait; after the output ended it raises the crash).

        Lines come in the same order, and with the same :class:`LineTooLong` handling,
        as from :meth:`receive_line`; the two may be mixed, but not at the same time.
        """
        if self._released:
            return None
        try:
            return self._reader.receive_line_nowait(self._read_stdout, max_bytes)
        except LineTooLong as exc:
            raise LineTooLong(exc.reason, bot=self.name, limit=exc.limit) from None

    @property
    def output_ended(self) -> bool:
        """The bot's stdout has reached its end (lines read before it may still be buffered)."""
        return self._reader.at_eof

    @property
    def fds(self) -> tuple[int, int, int]:
        """``(stdin, stdout, exit)``: the fds of the bot's stdin and stdout pipes, and one
        that becomes readable when the main process exits. Valid until the bot is closed;
        for waiting on with poll/epoll only (read and write through the methods above)."""
        if self._released:
            raise BotCrashed("the bot is closed", bot=self.name, returncode=self._returncode)
        return self._stdin_fd, self._stdout_fd, self._pidfd

    async def receive_line(self, max_bytes: int = DEFAULT_MAX_LINE) -> bytes:
        """Return the bot's next stdout line, without ``\\n`` or ``\\r\\n``.

        Cancellation-safe: if the caller's deadline cancels the call, no byte is lost and
        the next call returns the same line (a late reply stays buffered).

        Raises :class:`LineTooLong` for a line over ``max_bytes`` (the rest of it is
        skipped, the bot stays usable); :class:`BotCrashed` when the output ends or the
        process has exited and nothing more is pending (lines written before the exit
        are still returned first).
        """
        try:
            return await self._reader.receive_line(max_bytes)
        except LineTooLong as exc:
            raise LineTooLong(exc.reason, bot=self.name, limit=exc.limit) from None
        except EOFError as exc:
            partial = exc.args[0] if exc.args else 0
            what = "the bot's output ended"
            if partial:
                what += f" in the middle of a line ({partial} bytes)"
            raise await self._crash_error(what) from None

    async def _receive_stdout(self, max_bytes: int) -> bytes:
        """Read at most ``max_bytes`` from stdout; ``b""`` at EOF, or when the process has
        exited and nothing is left in the pipe. Consumes nothing when cancelled."""
        # A checkpoint before every read, even when data is waiting: a bot that writes
        # endlessly must neither starve the other tasks nor escape the caller's deadline.
        # Cancellation strikes here, before anything is consumed.
        await trio.lowlevel.checkpoint()
        if self._released:
            return b""
        while True:
            try:
                return os.read(self._stdout_fd, max_bytes)
            except BlockingIOError:
                pass
            if self._returncode is not None:
                return b""
            with trio.CancelScope() as wake:
                # _watch_exit cancels this scope when the process exits.
                self._stdout_wake = wake
                try:
                    await trio.lowlevel.wait_readable(self._stdout_fd)
                except trio.ClosedResourceError:
                    return b""  # closed under us (a close that could not kill the bot)
                finally:
                    self._stdout_wake = None

    async def _crash_error(self, what: str) -> BotCrashed:
        """A BotCrashed for ``what``, with the exit status and stderr if they come soon.

        The short wait is shielded so that a crash is always reported as a crash, even
        when the caller's deadline strikes meanwhile (it overruns it by at most 0.1 s).
        """
        with trio.CancelScope(shield=True, deadline=trio.current_time() + _CRASH_REPORT_WAIT):
            await self._exited.wait()
            await self._stderr_done.wait()
        why = self._jail.explain(self._returncode) if self._jail is not None else ""
        if why:
            what = f"{what} ({why})"
        return BotCrashed(
            what, bot=self.name, returncode=self._returncode, stderr_tail=self.stderr_tail()
        )

    def pace(self, *, idle: bool) -> None:
        """Tell the watchers whether the bot is idle (between games: no request of a game
        pending) or playing. An idle bot is watched :data:`IDLE_SLOWDOWN` times less
        often (its CPU and memory limits still hold, checked later); a bot that starts
        playing is looked at at once, then at the usual pace."""
        if idle == self._idle:
            return
        self._idle = idle
        if not idle:
            for scope in self._naps:
                scope.cancel()

    async def _nap(self, seconds: float) -> None:
        """Sleep ``seconds`` while playing, :data:`IDLE_SLOWDOWN` times that while idle."""
        with trio.CancelScope() as scope:
            self._naps.add(scope)
            try:
                await trio.sleep(seconds * IDLE_SLOWDOWN if self._idle else seconds)
            finally:
                self._naps.discard(scope)

    # -- background tasks (run by open_bot) ----------------------------------------------

    async def _run_background(self, track_interval: float) -> None:
        """Run the bot's own tasks until :meth:`_close` cancels them. They are shielded
        from the caller's cancellation: when the bot is closed *because* of one, they must
        keep watching for the exit and draining stderr while the tree is ended."""
        try:
            with self._background:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._watch_exit)
                    nursery.start_soon(self._drain_stderr)
                    nursery.start_soon(self._track_descendants, track_interval)
                    if self._jail is not None:
                        nursery.start_soon(self._jail.watch, self._nap)
        finally:
            self._background_done.set()

    async def _watch_exit(self) -> None:
        """Wait for the main process to exit and record its status, *without* reaping it:
        its pid, which is also its process group id, must stay ours until aclose()."""
        while self._returncode is None:
            await trio.lowlevel.wait_readable(self._pidfd)
            try:
                info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
            except ChildProcessError:
                # Someone else reaped our child (a waitpid(-1) elsewhere in the arena).
                log.warning("bot %r (pid %d) was reaped by someone else", self.name, self.pid)
                self._returncode = 0
                self._reaped = True
                self._tree.root = None
                break
            if info is None:  # pragma: no cover - the pidfd only becomes readable at exit
                await trio.sleep(0.01)
                continue
            if info.si_code == os.CLD_EXITED:
                self._returncode = info.si_status
                if self._jail is not None:  # bwrap reports the bot's death by a signal as 128 + N
                    self._returncode = self._jail.returncode(info.si_status)
            else:
                self._returncode = -info.si_status
        self._exited.set()
        if self._stdout_wake is not None:
            self._stdout_wake.cancel()

    async def _drain_stderr(self) -> None:
        """Read stderr until EOF into the capped tail, so a chatty bot never blocks."""
        try:
            while True:
                data = await self._stderr.receive_some(_STDERR_READ)
                if not data:
                    break
                self._stderr_tail.append(data)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass
        finally:
            self._stderr_done.set()

    async def _track_descendants(self, interval: float) -> None:
        """Record the bot's descendants now and then, so that a process that leaves the
        tree later (double fork) is still known when the bot is closed."""
        while not self._closing:
            self._tree.scan()
            self._tree.reap_orphans()
            await self._nap(interval)

    # -- closing -------------------------------------------------------------------------

    async def aclose(self, grace: float = 0.5, *, term_grace: float = 0.5) -> None:
        """End the bot's whole process tree and reap it. Idempotent.

        Closes stdin, waits up to ``grace`` seconds for the bot to exit by itself, sends
        SIGTERM to its process group and every recorded descendant, waits up to
        ``term_grace`` seconds, then stops and SIGKILLs them all and reaps the main process
        and any re-parented orphan. Runs to completion (bounded by about
        ``grace + term_grace + 2`` s) even if the caller is cancelled; the cancellation is
        delivered afterwards. :attr:`returncode` is set afterwards (unless the kernel
        would not let the process die in time, which is logged).
        """
        await self._close(grace, term_grace)
        await trio.lowlevel.checkpoint()

    async def _close(self, grace: float = 0.5, term_grace: float = 0.5) -> None:
        """aclose() without the final checkpoint: safe in a ``finally`` under cancellation."""
        if self._closing:
            with trio.CancelScope(shield=True):  # bounded: the first closer is
                await self._close_done.wait()
            return
        self._closing = True
        limit = grace + term_grace + _KILL_WAIT
        try:
            with trio.CancelScope(shield=True, deadline=trio.current_time() + limit) as scope:
                await self._end_tree(grace, term_grace)
            if scope.cancelled_caught:
                log.warning(
                    "bot %r (pid %d): process tree not confirmed dead after %.1f s; left: %s",
                    self.name,
                    self.pid,
                    limit,
                    self._tree.remaining(),
                )
        finally:
            self._background.cancel()
            with trio.CancelScope(shield=True):  # prompt: every background wait is cancellable
                await self._background_done.wait()
            self._release()
            self._close_done.set()

    async def _end_tree(self, grace: float, term_grace: float) -> None:
        self._stdin.close()  # EOF on stdin: the polite way to ask a bot to leave
        # While the tree is intact; the whole-session pass also finds children that the
        # main process left behind if it died before a periodic scan saw them.
        self._tree.scan(whole_session=True)
        with trio.move_on_after(grace):
            await self._exited.wait()
        self._tree.scan()
        if not self._exited.is_set() or self._tree.running():
            self._signal_group(signal.SIGTERM)
            self._tree.signal_all(signal.SIGTERM)
            with trio.move_on_after(term_grace):
                while not self._exited.is_set() or self._tree.running():
                    await trio.sleep(0.02)
                    self._tree.scan()
        # Always finish with SIGKILL: group members we never saw may remain. Stop them
        # first, so nothing can fork between our last look at the tree and the kill.
        if self._jail is not None:
            self._jail.kill()  # the whole tree at once, wherever it hangs, where a cgroup allows
        for _ in range(5):
            self._signal_group(signal.SIGSTOP)
            self._tree.signal_all(signal.SIGSTOP)
            if not self._tree.scan():
                break
        self._signal_group(signal.SIGKILL)
        self._tree.signal_all(signal.SIGKILL)
        await self._exited.wait()
        while True:
            self._tree.reap_orphans()
            if not self._tree.remaining():
                break
            await trio.sleep(0.01)
        self._reap_main()
        with trio.move_on_after(0.5):  # the last stderr bytes, for the crash report
            await self._stderr_done.wait()

    def _signal_group(self, sig: int) -> None:
        if self._reaped:
            return  # the group id may belong to someone else now
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def _reap_main(self) -> None:
        if self._reaped:
            return
        self._tree.root = None  # its pid is about to be free for reuse
        self._reaped = True
        self._popen.poll()

    def _abandon(self) -> None:
        """Last resort when the bot cannot be closed properly: kill its group, drop our
        fds, and leave reaping to ``subprocess`` (which polls abandoned children)."""
        self._signal_group(signal.SIGKILL)
        self._tree.signal_all(signal.SIGKILL)
        self._release()

    def _release(self) -> None:
        """Close our fds (once the background tasks have stopped)."""
        if self._released:
            return
        self._released = True
        if self._jail is not None:
            self._jail.close()
        self._stdin.close()
        self._stderr.close()
        for fd in (self._stdout_fd, self._pidfd):
            with contextlib.suppress(OSError):
                trio.lowlevel.notify_closing(fd)
                os.close(fd)


def _spawn(spec: BotSpec, stderr_cap: int) -> BotProcess:
    """Start the process from the calling (trio) thread; see :func:`open_bot`."""
    become_subreaper()
    env = dict(spec.env) if spec.env is not None else minimal_env()
    jail = open_jail(spec.name, spec.sandbox, list(spec.argv), env, spec.cwd)
    argv, env = (jail.argv, jail.env) if jail is not None else (spec.argv, env)
    preexec = jail.preexec(os.getpid()) if jail is not None else child_setup_hook(os.getpid())
    # Our own pipes (non-inheritable, PEP 446) rather than Popen's PIPE: Popen dups the
    # child ends onto fds 0-2 and keeps no file objects, so each fd has one owner.
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    stderr_r, stderr_w = os.pipe()
    try:
        # preexec_fn makes Popen fork rather than vfork; the hook only makes system calls.
        popen = subprocess.Popen(
            argv,
            stdin=stdin_r,
            stdout=stdout_w,
            stderr=stderr_w,
            cwd=spec.cwd,
            env=env,
            start_new_session=True,
            close_fds=True,
            pass_fds=jail.pass_fds if jail is not None else (),  # the sandbox's system call filter
            preexec_fn=preexec,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        for fd in (stdin_w, stdout_r, stderr_r):
            os.close(fd)
        if jail is not None:
            jail.close()
        if isinstance(exc, OSError) and exc.strerror:
            reason = exc.strerror + (f": {exc.filename!r}" if exc.filename else "")
        else:
            reason = str(exc)
        hint = not_executable_hint(spec.argv[0], spec.cwd) if isinstance(exc, PermissionError) else ""
        if hint:
            reason = f"{reason}: {hint}"
        raise BotStartError(f"cannot start: {reason}", bot=spec.name, argv=spec.argv) from exc
    finally:
        for fd in (stdin_r, stdout_w, stderr_w):
            os.close(fd)
    if jail is not None:
        jail.started(popen.pid)
    try:
        pidfd = os.pidfd_open(popen.pid)  # Linux >= 5.3
    except OSError:  # pragma: no cover
        popen.kill()
        popen.wait()
        if jail is not None:
            jail.close()
        for fd in (stdin_w, stdout_r, stderr_r):
            os.close(fd)
        raise
    return BotProcess(spec, popen, pidfd, stdin_w, stdout_r, stderr_r, stderr_cap, jail)


@contextlib.asynccontextmanager
async def open_bot(
    spec: BotSpec,
    *,
    stderr_cap: int = DEFAULT_STDERR_CAP,
    track_interval: float = 0.5,
) -> AsyncIterator[BotProcess]:
    """Start the bot and yield its :class:`BotProcess`; end its process tree on exit.

    The process is started from the calling trio thread (not from trio's worker threads,
    which exit when idle and would take a parent-death signal with them), in a new
    session, with stdin/stdout/stderr pipes and the spec's environment, and with all
    other fds closed. It gets SIGKILL if the arena dies, and is made a child subreaper
    so that its orphaned descendants stay in its tree; the arena process makes itself a
    child subreaper on the first call (see ``arena.bots._proctree``). Background tasks
    drain stderr into a ``stderr_cap``-byte tail, watch for exit, and record descendants
    every ``track_interval`` seconds.

    Enter and leave the block in the same task, like any trio context manager that holds
    a nursery; for a process that must outlive one block, use :func:`serve_bot`.

    Raises :class:`BotStartError` if the process cannot be started. On leaving the block
    (normally, by an exception, or by cancellation) the bot is closed as by
    ``aclose()`` with the default graces; call ``await bot.aclose(...)`` yourself first to
    choose them (e.g. after sending ``shutdown``).
    """
    bot = _spawn(spec, stderr_cap)
    try:
        # The nursery wraps an error of the block in a group from trio 0.25 on: the
        # caller gets it as itself.
        with lone_errors_unwrapped():
            async with trio.open_nursery() as nursery:
                nursery.start_soon(bot._run_background, track_interval)
                try:
                    yield bot
                finally:
                    await bot._close()
    finally:
        if not bot._close_done.is_set():  # only if the nursery itself failed
            bot._abandon()


async def serve_bot(
    spec: BotSpec,
    *,
    stderr_cap: int = DEFAULT_STDERR_CAP,
    track_interval: float = 0.5,
    task_status: trio.TaskStatus[BotProcess] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run a bot inside a nursery, for processes that outlive one block of code (reused
    across games): ``bot = await nursery.start(serve_bot, spec)``.

    ``nursery.start`` raises :class:`BotStartError` if the process cannot be started.
    The task ends when ``await bot.aclose()`` has ended the bot (from any task). If the
    nursery is cancelled first, the bot is closed as by ``aclose()``.
    """
    async with open_bot(spec, stderr_cap=stderr_cap, track_interval=track_interval) as bot:
        task_status.started(bot)
        await bot._close_done.wait()
