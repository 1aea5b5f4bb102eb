"""Errors of the bot-process layer, split by cause.

The referee maps them onto protocol faults:

- :class:`BotStartError`: the process could not be started at all (the bot is unusable).
- :class:`BotCrashed`: end of output, exit, or a broken pipe: the ``crash`` fault. The
  process must be restarted before its next game.
- :class:`BotTimeout`: a deadline passed: the ``timeout`` fault. The process is still usable
  (a late reply stays buffered, to be discarded by ``re``), unless it is a
  :class:`BotWriteTimeout`, which leaves the bot :attr:`~arena.bots.BotProcess.broken`.
- :class:`LineTooLong`: a line over the cap: the ``malformed`` fault. The reader skips the
  rest of that line by itself, so the process stays usable.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
from collections.abc import Iterator

__all__ = [
    "BotCrashed",
    "BotError",
    "BotStartError",
    "BotTimeout",
    "BotWriteTimeout",
    "LineTooLong",
    "describe_returncode",
    "lone_errors_unwrapped",
]


def not_executable_hint(program: str, cwd: os.PathLike[str] | str) -> str:
    """For a program named by a path (``./bot``) that is a file without its execute bit: what
    to do about it, in a few words; else "". (A bot folder copied without the modes, or a
    file written by an editor or unpacked from a zip, often lacks it.)"""
    if "/" not in program:
        return ""
    try:
        mode = os.stat(os.path.join(cwd, program)).st_mode
    except OSError:
        return ""
    if not stat.S_ISREG(mode) or mode & 0o111:
        return ""
    return f"its program {program!r} is a file without the execute bit: `chmod +x {program}` in the bot's folder"


def describe_returncode(returncode: int | None) -> str:
    """Say how a process ended, in words: ``"exited with status 3"``,
    ``"killed by signal 9 (SIGKILL)"``, or ``"still running"`` for ``None``.

    Negative codes are signals, as in :attr:`subprocess.Popen.returncode`.
    """
    if returncode is None:
        return "still running"
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        return f"killed by signal {-returncode}"
    return f"killed by signal {-returncode} ({name})"


class BotError(Exception):
    """Base class of every error raised about one bot process.

    ``bot`` is the bot's name (from its :class:`~arena.bots.BotSpec`), or ``None`` when the
    error was raised by a component that does not know it (the bare line reader).
    """

    def __init__(self, message: str, *, bot: str | None = None) -> None:
        super().__init__(f"bot {bot!r}: {message}" if bot is not None else message)
        self.bot = bot
        self.reason = message


class BotStartError(BotError):
    """The process could not be started: missing executable or working directory,
    permission denied, not an executable format. ``argv`` is what was tried."""

    def __init__(self, message: str, *, bot: str, argv: tuple[str, ...]) -> None:
        super().__init__(f"{message} (argv: {list(argv)!r})", bot=bot)
        self.argv = argv


class BotCrashed(BotError):
    """The bot can no longer be talked to: its output ended, it exited, its stdin pipe
    broke, or an earlier write to it failed part-way (see ``BotProcess.broken``).

    ``returncode`` is the exit status (negative: killed by that signal) when the process
    had exited by the time this was raised, else ``None``. ``stderr_tail`` is the bot's
    recent stderr, for the crash report; the message itself carries only its last line.
    """

    def __init__(
        self,
        message: str,
        *,
        bot: str | None = None,
        returncode: int | None = None,
        stderr_tail: str = "",
    ) -> None:
        if returncode is not None:
            message = f"{message}; {describe_returncode(returncode)}"
        last = _last_line(stderr_tail)
        if last:
            message = f"{message}; last stderr line: {last!r}"
        super().__init__(message, bot=bot)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class BotTimeout(BotError):
    """A deadline passed before the bot answered. ``timeout_s`` is the budget that
    was given and ``elapsed_s`` the time actually waited (both in seconds)."""

    def __init__(
        self, message: str, *, bot: str | None = None, timeout_s: float, elapsed_s: float
    ) -> None:
        super().__init__(message, bot=bot)
        self.timeout_s = timeout_s
        self.elapsed_s = elapsed_s


class BotWriteTimeout(BotTimeout):
    """The request could not even be written in time (the bot does not read its stdin).
    Part of it may have been written, so the bot is now broken and must be restarted."""


class LineTooLong(BotError):
    """A line was longer than the cap. ``limit`` is the cap in bytes.

    The overlong line is skipped up to and including its newline (now, or during the
    next read if it has not all arrived yet), so the next line read is the one after it.
    """

    def __init__(self, message: str, *, bot: str | None = None, limit: int) -> None:
        super().__init__(message, bot=bot)
        self.limit = limit


def _last_line(text: str, limit: int = 200) -> str:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line:
            return line if len(line) <= limit else "…" + line[-limit:]
    return ""


@contextlib.contextmanager
def lone_errors_unwrapped() -> Iterator[None]:
    """Re-raise the only exception of an exception group as itself.

    A trio nursery that runs the caller's code in its block (``open_bot``, the
    referee's player pool) raises what that code raised inside an exception group
    from trio 0.25 on (strict exception groups), and as itself before. Callers catch
    ``BotError``, ``ArenaError`` or ``KeyboardInterrupt``, not groups: a group of one is
    unwrapped (its traceback kept, and its context as it was); a group of several
    stays a group.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
            inner = group.exceptions[0]
            if not isinstance(inner, BaseExceptionGroup):
                context = inner.__context__
                try:
                    raise inner  # noqa: B904 - the group is a wrapper, not a cause
                finally:
                    inner.__context__ = context
            group = inner
        raise
