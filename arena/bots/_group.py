"""Several bots asked at once from one task: every request written, then every reply read
as it comes, each against its own deadline.

Why not one task per bot: on the referee's hot path (a turn of four instant bots) a
nursery with one task per bot and a cancel scope per task costs several times what the
pipes themselves cost. Here one task writes without waiting (a request fits in the pipe
unless the bot stopped reading), takes the replies that are already there, and waits, if
it must, on a private epoll instance that watches every bot's stdout and exit at once, so
that one wake-up serves every reply that has arrived; one cancel scope carries the
earliest pending deadline.

Anything out of the ordinary (a broken pipe, the output's end, the process's exit) is
finished afterwards, bot by bot, through :meth:`BotProcess.send` and
:meth:`BotProcess.receive_line`, whose crash reports wait briefly for the exit status and
the last stderr bytes.

What a bot cannot do to the others, nor to the task (every bound holds whatever the bot
writes, and however fast):

- Stall it: one wake-up reads at most a few lines (and makes at most as many reads) from
  each bot before it serves the others and goes back to the scheduler, so deadlines,
  signals and the other tasks always get their turn.
- Gain time: a request's clock starts when the referee begins to write it, before the
  first byte, and its deadline is fixed then. Time the request waits for room in the
  bot's stdin counts; a request that cannot be written by its deadline is a
  :class:`BotWriteTimeout`. A reply whose newline is read at or after the deadline is a
  :class:`BotTimeout`, whatever it says and however it got there.
- Drown the reply in stale lines: the lines ``accept`` drops are counted per request;
  past :data:`MAX_STALE_LINES` lines or :data:`MAX_STALE_BYTES` bytes the request fails
  with :class:`StaleFlood` (a bot that keeps step sends one late reply per timed-out
  request, never that many).
- Cost another bot its time: each bot's time runs from its own request's first byte to
  its own reply's newline, and serving one bot between two of another's reads is bounded
  by the first rule.
"""

from __future__ import annotations

import contextlib
import math
import select
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import trio

from ._errors import BotCrashed, BotError, BotTimeout, BotWriteTimeout, LineTooLong
from ._process import DEFAULT_MAX_LINE, BotProcess

__all__ = ["MAX_STALE_BYTES", "MAX_STALE_LINES", "Answer", "BotGroup", "Question", "StaleCount", "StaleFlood"]

T = TypeVar("T")

_READ, _EXIT, _WRITE = 0, 1, 2  # what a watched fd is to its bot
# Without a wait, an exchange still yields to other tasks at least this often.
_YIELD_EVERY = 4
# At most this many lines taken from one bot (each at most one read) per wake-up; a bot
# with more to read is served again after a checkpoint.
_LINES_PER_WAKE = 8

#: Stale lines (those ``accept`` drops) one request tolerates, in number and in bytes
#: (newlines counted; or four line caps, if more). One more is a :class:`StaleFlood`.
MAX_STALE_LINES = 16
MAX_STALE_BYTES = 256 * 1024


class StaleFlood(BotError):
    """More stale lines came while one request was pending than a bot that keeps step
    could send (see :data:`MAX_STALE_LINES`): the ``protocol`` fault. ``lines`` and
    ``size`` (bytes) are what was dropped. The bot stays usable; what it sent after
    that is read, and counted, with the next request."""

    def __init__(self, message: str, *, bot: str | None = None, lines: int, size: int) -> None:
        super().__init__(message, bot=bot)
        self.lines = lines
        self.size = size


class StaleCount:
    """Counts the stale lines dropped while one request is pending (the rule of
    :class:`BotGroup`, for callers that read lines themselves)."""

    __slots__ = ("cap", "lines", "size")

    def __init__(self, max_bytes: int = DEFAULT_MAX_LINE) -> None:
        self.lines = 0
        self.size = 0
        self.cap = max(MAX_STALE_BYTES, 4 * max_bytes)

    def drop(self, line: bytes, bot: str | None = None) -> StaleFlood | None:
        """Count ``line`` as dropped; the error once there have been too many."""
        self.lines += 1
        self.size += len(line) + 1
        if self.lines > MAX_STALE_LINES or self.size > self.cap:
            return StaleFlood(
                f"{self.lines} stale replies ({self.size} bytes) while one request was pending: "
                f"more than the {MAX_STALE_LINES} lines or {self.cap} bytes allowed",
                bot=bot,
                lines=self.lines,
                size=self.size,
            )
        return None


class Question:
    """One request of an exchange: ``data`` (a whole line) for ``bot``, with ``timeout_s``
    from the moment the referee begins to write it to the reply's newline read (``inf``:
    no deadline): the write, however long the bot keeps it waiting, is part of that
    time. ``max_bytes`` caps a reply line.

    An exchange keeps its progress in its questions; a question may be asked again in
    a later exchange (with new ``data``), never in two at once."""

    __slots__ = (
        "_deadline", "_hot", "_index", "_rest", "_sent_at", "_stale",
        "bot", "data", "max_bytes", "timeout_s",
    )

    def __init__(self, bot: BotProcess, data: bytes, timeout_s: float, max_bytes: int = DEFAULT_MAX_LINE) -> None:
        self.bot = bot
        self.data = data
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self._index = 0
        self._rest: memoryview | None = None  # what is left to write, if the pipe was full
        self._sent_at = math.nan  # when the referee began to write it: the clock's start
        self._deadline = math.inf  # fixed then: _sent_at + timeout_s
        self._stale: StaleCount | None = None  # the stale lines dropped in this exchange
        self._hot = False  # left with lines to read after a wake-up's budget

    @property
    def _partly_written(self) -> bool:
        return self._rest is not None and 0 < len(self._rest) < len(self.data)


class Answer(Generic[T]):
    """What ``accept`` made of a bot's reply line, and how long the reply took: from the
    moment the referee began to write the request to the reply's newline read, in
    seconds of :func:`trio.current_time` (always less than the question's timeout)."""

    __slots__ = ("elapsed_s", "value")

    def __init__(self, value: T, elapsed_s: float) -> None:
        self.value = value
        self.elapsed_s = elapsed_s

    def __repr__(self) -> str:
        return f"Answer({self.value!r}, elapsed_s={self.elapsed_s!r})"


class BotGroup:
    """Asks several bots at once from one task (see the module's docstring).

    Use as a context manager (``with BotGroup() as group:``); one exchange at a time.
    The group keeps watching the fds of the bots it has asked until it is closed, so
    keep one per game (or reuse one game after game, calling :meth:`drop_closed` in
    between), not one per exchange.
    """

    def __init__(self) -> None:
        self._epoll = select.epoll()
        self._epfd = self._epoll.fileno()
        # The fds registered in our epoll instance: fd -> (bot, what the fd is), and per
        # bot its (stdout, exit) pair. Kept across exchanges; the fds of a bot that is not
        # being asked are dropped when they stir (they would wake every wait).
        self._owner: dict[int, tuple[BotProcess, int]] = {}
        self._watched: dict[BotProcess, tuple[int, int]] = {}
        self._busy = False
        self._closed = False
        self._unyielded = 0
        self._hot: list[Question] = []  # bots to read again after a checkpoint (see _read)
        self._now: Callable[[], float] = trio.current_time  # the clock's, during an exchange

    def __enter__(self) -> BotGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the epoll instance. Idempotent; the bots are not touched."""
        if self._closed:
            return
        self._closed = True
        trio.lowlevel.notify_closing(self._epfd)
        self._epoll.close()
        self._owner.clear()
        self._watched.clear()

    async def exchange(
        self, questions: Sequence[Question], accept: Callable[[int, bytes], T | None]
    ) -> list[Answer[T] | BotError]:
        """Write every question's request (in the order given), then read replies until
        each bot has given one that ``accept(index, line)`` takes (returns non-None) or
        has failed. A line that ``accept`` returns None for (say, a late reply to an
        earlier request) is dropped, and reading goes on.

        Returns, per question, an :class:`Answer` or the error for that bot:
        :class:`BotWriteTimeout` (the bot is then broken), :class:`BotTimeout` (a late
        reply stays buffered, or was read too late), :class:`LineTooLong` (that line is
        skipped), :class:`StaleFlood`, or :class:`BotCrashed`. One bot's failure never
        cuts another's time short, nor does its output, however much of it comes.
        Exceptions from ``accept`` propagate. On cancellation, a bot left with a partly
        written request is marked broken.

        Cancellation is checked on every call; when every reply was there at once (no
        wait), the call yields to other tasks only every few calls.
        """
        if self._closed:
            raise RuntimeError("the bot group is closed")
        if self._busy:
            raise trio.BusyResourceError("one exchange at a time per bot group")
        if len({q.bot for q in questions}) != len(questions):  # (bots hash by identity)
            raise ValueError("a bot is asked twice in one exchange")
        await trio.lowlevel.checkpoint_if_cancelled()
        self._busy = True
        try:
            return await self._exchange(questions, accept)
        finally:
            self._busy = False

    async def _exchange(
        self, questions: Sequence[Question], accept: Callable[[int, bytes], T | None]
    ) -> list[Answer[T] | BotError]:
        results: list[Answer[T] | BotError | None] = [None] * len(questions)
        active: dict[BotProcess, Question] = {}
        later: list[Question] = []  # to finish through the bot's own awaitable methods
        # trio.current_time() without its lookup of the run, for every timestamp here.
        now = self._now = trio.lowlevel.current_clock().current_time
        watched = self._watched
        for index, q in enumerate(questions):
            q._index = index
            q._rest = None
            q._stale = None
            bot = q.bot
            try:
                if bot not in watched:
                    self._watch_bot(bot)
                # The clock starts, and the deadline is fixed, before the first byte is
                # written: a write that wakes the bot may return only after the bot has
                # read the request and answered, and a bot that keeps its stdin full
                # must not keep the request's time from running either.
                q._sent_at = t = now()
                q._deadline = t + q.timeout_s
                written = bot.try_send(q.data)
            except BotCrashed as exc:
                results[index] = exc
                continue
            if written == len(q.data):
                active[bot] = q
            elif written is None:  # a broken pipe: send() will say how the bot ended
                q._rest = memoryview(q.data)
                later.append(q)
            else:
                q._rest = memoryview(q.data)[written:]
                self._watch_fd(bot.fds[0], bot, _WRITE)
                active[bot] = q

        waited = False
        try:
            # Replies already there (or already buffered) are taken before any wait.
            for q in list(active.values()):
                if q._rest is None:
                    self._read(q, active, later, results, accept)
            while active:
                with trio.CancelScope() as scope:
                    while active:
                        scope.deadline = min([q._deadline for q in active.values()])
                        if self._hot:  # lines already read are waiting: no wait, a checkpoint
                            await trio.lowlevel.checkpoint()
                        else:
                            await trio.lowlevel.wait_readable(self._epfd)
                        waited = True
                        self._service(active, later, results, accept)
                if scope.cancelled_caught:
                    self._expire(active, results)
        except BaseException:
            for q in [*active.values(), *later]:
                if q._partly_written:
                    q.bot.mark_broken()  # a partial request sits in its stdin
            raise
        finally:
            for q in self._hot:
                q._hot = False
            self._hot.clear()
        for q in later:
            results[q._index] = await self._finish(q, accept)
            waited = True
        if waited:
            self._unyielded = 0
        else:
            self._unyielded += 1
            if self._unyielded >= _YIELD_EVERY:
                self._unyielded = 0
                await trio.lowlevel.cancel_shielded_checkpoint()
        return results  # type: ignore[return-value]

    def drop_closed(self) -> None:
        """Forget the bots that have been closed since they were asked (their fds are
        gone, and their numbers may come back for other bots)."""
        for bot in [b for b in self._watched if b.closed]:
            self._forget(bot)

    # -- the fast path ------------------------------------------------------------------

    def _watch_bot(self, bot: BotProcess) -> None:
        _, stdout, exit_fd = bot.fds  # raises BotCrashed if the bot is closed
        self._watch_fd(stdout, bot, _READ)
        self._watch_fd(exit_fd, bot, _EXIT)
        self._watched[bot] = (stdout, exit_fd)

    def _watch_fd(self, fd: int, bot: BotProcess, role: int) -> None:
        events = select.EPOLLOUT if role == _WRITE else select.EPOLLIN
        try:
            self._epoll.register(fd, events)
        except FileExistsError:  # still registered for a closed bot whose fd was reused
            self._epoll.modify(fd, events)
        self._owner[fd] = (bot, role)

    def _unwatch_fd(self, fd: int) -> None:
        if self._owner.pop(fd, None) is not None:
            with contextlib.suppress(OSError):  # already gone with its file (the bot was closed)
                self._epoll.unregister(fd)

    def _unwatch_bot(self, bot: BotProcess) -> None:
        """Stop watching the bot's stdout and exit."""
        for fd in self._watched.pop(bot, ()):
            self._unwatch_fd(fd)

    def _forget(self, bot: BotProcess) -> None:
        """Stop watching every fd of the bot (its stdin too)."""
        self._watched.pop(bot, None)
        for fd, (owner, _) in list(self._owner.items()):
            if owner is bot:
                self._unwatch_fd(fd)

    def _service(
        self,
        active: dict[BotProcess, Question],
        later: list[Question],
        results: list[Answer[T] | BotError | None],
        accept: Callable[[int, bytes], T | None],
    ) -> None:
        """Act on every fd that is ready now, and read on from the bots left with lines
        to read at the last wake-up."""
        if self._hot:
            hot, self._hot = self._hot, []
            for q in hot:
                q._hot = False
                if active.get(q.bot) is q:
                    self._read(q, active, later, results, accept)
        for fd, _ in self._epoll.poll(0):
            owner = self._owner.get(fd)
            if owner is None:
                continue
            bot, role = owner
            q = active.get(bot)
            if q is None:
                # Not asked now (answered already, or not in this exchange): stop
                # watching it until it is asked again.
                if role == _WRITE:
                    self._unwatch_fd(fd)
                else:
                    self._unwatch_bot(bot)
            elif role == _WRITE:
                self._write(q, fd, active, later)
            elif q._rest is not None:  # output or exit before the request is all written
                if role == _EXIT:
                    self._defer(q, active, later)
                else:  # read it once the request is written
                    self._unwatch_bot(bot)
            elif role == _EXIT:
                self._read(q, active, later, results, accept)
                if bot in active:
                    self._defer(q, active, later)  # exited without a reply (yet): finish it
            elif not q._hot:  # (a bot left with lines is read once per wake-up)
                self._read(q, active, later, results, accept)

    def _write(self, q: Question, fd: int, active: dict[BotProcess, Question], later: list[Question]) -> None:
        rest = q._rest
        assert rest is not None
        # The clock has been running since the first byte (see _exchange): finishing the
        # write does not restart it.
        written = q.bot.try_send(rest)
        if written is None:
            self._defer(q, active, later)
            return
        if written < len(rest):
            q._rest = rest[written:]
            return
        q._rest = None
        self._unwatch_fd(fd)
        if q.bot not in self._watched:
            self._watch_bot(q.bot)

    def _read(
        self,
        q: Question,
        active: dict[BotProcess, Question],
        later: list[Question],
        results: list[Answer[T] | BotError | None],
        accept: Callable[[int, bytes], T | None],
    ) -> None:
        """Take the bot's lines (at most a wake-up's budget of them) until one is its
        answer, or the question fails."""
        bot = q.bot
        now = self._now
        for _ in range(_LINES_PER_WAKE):
            try:
                line = bot.try_receive_line(q.max_bytes)
            except LineTooLong as exc:
                del active[bot]
                results[q._index] = exc
                return
            if line is None:
                if bot.output_ended:
                    self._defer(q, active, later)
                return
            t = now()  # its newline has been read: taken before accept, which is not the bot's time
            if t >= q._deadline:  # too late, whatever it says
                del active[bot]
                results[q._index] = _timeout(q, t)
                return
            value = accept(q._index, line)
            if value is not None:
                del active[bot]
                results[q._index] = Answer(value, t - q._sent_at)
                return
            flood = self._drop(q, line)
            if flood is not None:
                del active[bot]
                results[q._index] = flood
                return
        # The budget is spent, and more lines may already be buffered, where no wait
        # would see them: read on after a checkpoint.
        if not q._hot:
            q._hot = True
            self._hot.append(q)

    def _drop(self, q: Question, line: bytes) -> StaleFlood | None:
        """Count a stale line of ``q``'s bot; the error once it has sent too many."""
        count = q._stale
        if count is None:
            count = q._stale = StaleCount(q.max_bytes)
        return count.drop(line, q.bot.name)

    def _defer(self, q: Question, active: dict[BotProcess, Question], later: list[Question]) -> None:
        """Leave this bot to :meth:`_finish` (its output ended, or it exited): stop
        watching its fds, which would now stay ready."""
        del active[q.bot]
        self._forget(q.bot)
        later.append(q)

    def _expire(self, active: dict[BotProcess, Question], results: list[Answer[T] | BotError | None]) -> None:
        """Fail every bot whose deadline has passed."""
        t = trio.current_time()
        for q in list(active.values()):
            if q._deadline > t:
                continue
            bot = q.bot
            del active[bot]
            if q._rest is not None:
                bot.mark_broken()
                self._forget(bot)
                results[q._index] = _write_timeout(q, t)
            else:
                results[q._index] = _timeout(q, t)

    # -- the slow path -----------------------------------------------------------------

    async def _finish(self, q: Question, accept: Callable[[int, bytes], T | None]) -> Answer[T] | BotError:
        """Finish one question through the bot's awaitable methods, within its deadline."""
        bot = q.bot
        try:
            with trio.move_on_at(q._deadline):
                if q._rest is not None:
                    await bot.send(q._rest)  # marks the bot broken if cut short
                    q._rest = None
                while True:  # (receive_line checkpoints for every line)
                    line = await bot.receive_line(q.max_bytes)
                    t = trio.current_time()
                    if t >= q._deadline:
                        return _timeout(q, t)
                    value = accept(q._index, line)
                    if value is not None:
                        return Answer(value, t - q._sent_at)
                    flood = self._drop(q, line)
                    if flood is not None:
                        return flood
        except (BotCrashed, LineTooLong) as exc:
            return exc
        t = trio.current_time()
        if q._rest is not None:
            return _write_timeout(q, t)
        return _timeout(q, t)


def _timeout(q: Question, t: float) -> BotTimeout:
    return BotTimeout(
        f"no reply within {q.timeout_s:.3f} s", bot=q.bot.name, timeout_s=q.timeout_s, elapsed_s=t - q._sent_at
    )


def _write_timeout(q: Question, t: float) -> BotWriteTimeout:
    return BotWriteTimeout(
        f"request not written within {q.timeout_s:.3f} s (the bot does not read its stdin)",
        bot=q.bot.name,
        timeout_s=q.timeout_s,
        elapsed_s=t - q._sent_at,
    )
