"""Bot processes as the referee's players: a :class:`PlayerPool` owns a run's bot
processes, each :class:`Player` one process speaking protocol v1 (started on demand,
greeted with ``hello``, asked one request at a time against its deadline, restarted
when it crashed or has seen a deal before), reused across games."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import AsyncIterator, Iterator
from typing import Any

import trio

from arena import __version__
from arena.bots import (
    BotCrashed,
    BotError,
    BotGroup,
    BotSpec,
    BotStartError,
    BotTimeout,
    BotWriteTimeout,
    Budget,
    LineTooLong,
    StaleCount,
    StaleFlood,
    lone_errors_unwrapped,
    open_bot,
)
from arena.engine import (
    RULES_VERSION,
)
from arena.game.replay import RESIGN_STATUS, SeatUsage
from protocol import (
    MAX_LINE_BYTES,
    PROTOCOL_NAME,
    SUPPORTED_VERSIONS,
    Hello,
    HelloReply,
    Limits,
    ProtocolDecodeError,
    Shutdown,
    decode_reply,
    encode_line,
)

#: The time budgets of a run (PROTOCOL.md "Time"); one definition, in arena.bots.
TimeSettings = Budget
DEFAULT_TIME = Budget()


def hello_budget(time_settings: TimeSettings) -> str:
    """The start-up budget as a bot's author reads it: the ms it had, and the --hello-ms
    and time scale that made it when they differ."""
    real = time_settings.scaled_ms(time_settings.hello_ms)
    if real == time_settings.hello_ms:
        return f"{time_settings.hello_ms:g} ms"
    return f"{real:g} ms: --hello-ms {time_settings.hello_ms:g} × time scale {time_settings.time_scale:g}"


class BotFault(Exception):
    """A bot did something wrong; ``kind`` is one of :data:`FAULT_KINDS`."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


#: Seconds an interrupted pool gives a bot to exit by itself after stdin closes, then
#: after SIGTERM, before SIGKILL (a run's normal end gives 0.5 and 0.5).
HURRIED_GRACES = (0.1, 0.2)


class PlayerPool:
    """Owns the bot processes of a run. A process lives in a task of the pool's
    nursery (trio ties a process's helper tasks to the task that opened it), so
    it outlives the game that started it and is reused by the next one.

    Use :func:`open_pool`; leaving it shuts every bot down.
    """

    def __init__(self, nursery: trio.Nursery) -> None:
        self.nursery = nursery
        self.players: list[Player] = []
        self.hurried = False
        self._groups: list[BotGroup] = []  # idle, for the next game (one per game at once)

    @contextlib.contextmanager
    def bot_group(self) -> Iterator[BotGroup]:
        """A :class:`BotGroup` for one game: an idle one if there is one (setting one
        up and closing it costs about a turn's worth of the referee's time), else a new
        one. It is kept for the next game unless the game ended in an error."""
        group = self._groups.pop() if self._groups else BotGroup()
        try:
            yield group
        except BaseException:
            group.close()
            raise
        group.drop_closed()
        self._groups.append(group)

    def hurry(self) -> None:
        """Interrupted (Ctrl-C, SIGTERM, an error): from now on every bot is ended at
        once, with :data:`HURRIED_GRACES` instead of the polite ones of a run's end."""
        self.hurried = True

    def player(
        self,
        spec: BotSpec,
        *,
        version: str = "",
        content_hash: str = "",
        max_line_bytes: int = MAX_LINE_BYTES,
        untimed: bool = False,
        may_resign: bool = False,
    ) -> Player:
        """A :class:`Player` for ``spec``, owned by this pool. ``untimed=True`` makes it
        never time out (hello, game_start, act, game_over), whatever a game's
        :class:`TimeSettings` say: its bank is never charged and each ``act`` carries
        ``time_ms`` 0 and ``banks_ms`` 0 for its seat, "no deadline" (e.g. a human seat).
        ``may_resign=True`` (a person's seat): its process ending with exit status
        :data:`~arena.game.replay.RESIGN_STATUS` is the ``resigned`` fault, not a crash."""
        p = Player(
            spec, self, version=version, content_hash=content_hash, max_line_bytes=max_line_bytes, untimed=untimed,
            may_resign=may_resign,
        )
        self.players.append(p)
        return p

    async def aclose(self) -> None:
        for group in self._groups:
            group.close()
        self._groups.clear()
        with trio.CancelScope(shield=True), lone_errors_unwrapped():
            async with trio.open_nursery() as nursery:
                for p in self.players:
                    nursery.start_soon(p.shutdown, "the arena is done")


@contextlib.asynccontextmanager
async def open_pool() -> AsyncIterator[PlayerPool]:
    """A :class:`PlayerPool`; every bot process ends when the block is left, even on
    an error or Ctrl-C."""
    # The nursery wraps an error of the block in a group from trio 0.25 on: the caller
    # gets it as itself.
    with lone_errors_unwrapped():
        async with trio.open_nursery() as nursery:
            pool = PlayerPool(nursery)
            try:
                yield pool
            except BaseException:
                pool.hurry()  # cancelled or failing: no time for politeness
                raise
            finally:
                await pool.aclose()
                nursery.cancel_scope.cancel()


class Player:
    """One bot process speaking protocol v1, started on demand and reused across
    games. One process never plays two seats at once: a self-play game uses two
    :class:`Player` objects of the same spec. Made by :meth:`PlayerPool.player`."""

    def __init__(
        self,
        spec: BotSpec,
        pool: PlayerPool,
        *,
        version: str = "",
        content_hash: str = "",
        max_line_bytes: int = MAX_LINE_BYTES,
        untimed: bool = False,
        may_resign: bool = False,
    ) -> None:
        self.spec = spec
        self.pool = pool
        self.name = spec.name
        self.version = version
        self.content_hash = content_hash
        self.max_line_bytes = max_line_bytes
        self.untimed = untimed
        self.may_resign = may_resign
        self.hello: HelloReply | None = None
        self.needs_restart = False
        self.starts = 0
        self.deals: set[int] = set()  # the deal seeds this process has played (or seen dealt)
        self._proc: Any = None
        self._release: trio.Event | None = None  # set to end the process's task
        self._ended: trio.Event | None = None  # set when that task has cleaned up
        self._next_id = 1
        self._closed_tail = ""  # stderr of the last process closed (see stderr_tail)
        self._in_game = False  # between begin_game and end_game

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.alive and not self._proc.broken

    def has_seen(self, seed: int) -> bool:
        """Whether this bot's current process has played (or been dealt) the deal of ``seed``:
        it must not play it again (a duplicate set replays one deal), see :func:`play_game`."""
        return self.running and seed in self.deals

    @property
    def started(self) -> bool:
        """Running, greeted, and not due for a restart: :meth:`start` has nothing to do."""
        return self.running and not self.needs_restart and self.hello is not None

    async def start(self, time_settings: TimeSettings) -> HelloReply:
        """Start the process (if not running) and run the handshake. Raises
        :class:`BotFault` (kind ``crash``) if it cannot start or speaks no supported version."""
        if self.started:
            return self.hello  # type: ignore[return-value]
        await self.close()
        self.needs_restart = False
        release, ended = trio.Event(), trio.Event()
        try:
            self._proc = await self.pool.nursery.start(self._own_process, release, ended)
        except BotStartError as exc:
            raise BotFault("crash", f"cannot start: {exc}") from None
        self._release, self._ended = release, ended
        self._next_id = 1
        self.starts += 1
        self.deals = set()  # a fresh process (and, sandboxed, fresh writable storage) has seen no deal
        hello = Hello(
            id=self._take_id(),
            protocol=PROTOCOL_NAME,
            versions=list(SUPPORTED_VERSIONS),
            rules_version=RULES_VERSION,
            arena_version=__version__,
            limits=Limits(
                max_line_bytes=self.max_line_bytes,
                hello_ms=time_settings.scaled_ms(time_settings.hello_ms),
                turn_ms=time_settings.scaled_ms(time_settings.turn_ms),
                bank_ms=time_settings.scaled_ms(time_settings.bank_ms),
            ),
        )
        try:
            reply, _ = await self.request(hello, HelloReply, self.timeout_s(time_settings, time_settings.hello_ms))
        except BotFault as fault:
            await self.close()
            message = fault.message
            if fault.kind == "timeout":
                message += f" (the start-up budget is {hello_budget(time_settings)}: raise it with --hello-ms)"
            raise BotFault(fault.kind, f"hello: {message}") from None
        if reply.version not in SUPPORTED_VERSIONS:
            await self.close()
            raise BotFault(
                "protocol",
                f"hello: the bot chose protocol version {reply.version}; the arena speaks {list(SUPPORTED_VERSIONS)}",
            )
        self.hello = reply
        if self._proc is not None:
            if self._proc.jail is not None:
                self._proc.jail.sample()  # a bot that crashes at once has its memory measured too
            self._proc.pace(idle=not self._in_game)  # a process started to greet its bot waits for a game
        return reply

    def timeout_s(self, time_settings: TimeSettings, nominal_ms: float) -> float:
        """The real timeout of a request with a nominal budget: ``inf`` if untimed."""
        return math.inf if self.untimed else time_settings.seconds(nominal_ms)

    def _take_id(self) -> int:
        i = self._next_id
        self._next_id += 1
        return i

    def next_id(self) -> int:
        return self._take_id()

    async def send(self, message: Any, deadline_s: float) -> float:
        """Write one message within ``deadline_s``; returns the monotonic time the write
        began, from which the reply's deadline runs too. (A write that wakes the bot may
        return only after the bot has read the message and answered, and a bot that
        keeps its stdin full must not gain the time its request waits there.)"""
        data = encode_line(message)
        began = trio.current_time()
        try:
            with trio.fail_at(began + deadline_s) if math.isfinite(deadline_s) else contextlib.nullcontext():
                await self._proc.send(data)
        except trio.TooSlowError:
            self.needs_restart = True  # a partial message may have been written
            raise BotFault("timeout", "the bot did not read its input in time (write timed out)") from None
        except BotError as exc:
            self.needs_restart = True
            raise BotFault("crash", f"{exc}") from None
        return began

    async def receive(self, request_id: int, expected: type, deadline: float) -> Any:
        """Read lines until the reply to ``request_id`` arrives or ``deadline`` (absolute,
        monotonic) passes. Stale replies (an earlier ``re``) are discarded, up to the
        bot layer's limit (see :class:`StaleCount`); a line read at or after the deadline
        is a timeout, whatever it says."""
        stale = StaleCount(self.max_line_bytes)
        while True:
            try:
                with trio.fail_at(deadline) if math.isfinite(deadline) else contextlib.nullcontext():
                    line = await self._proc.receive_line(self.max_line_bytes)  # a checkpoint per line
            except trio.TooSlowError:
                raise BotFault("timeout", "no reply before the deadline") from None
            except LineTooLong:
                raise BotFault("malformed", f"a reply line longer than {self.max_line_bytes} bytes") from None
            except BotCrashed as exc:
                self.needs_restart = True
                raise self._ended_fault(exc) from None
            if trio.current_time() >= deadline:
                raise BotFault("timeout", "no reply before the deadline")
            reply = check_reply(line, request_id, expected)
            if isinstance(reply, BotFault):
                raise reply
            if reply is not None:
                return reply
            flood = stale.drop(line, self.name)
            if flood is not None:
                raise self.fault_for(flood)

    def fault_for(self, error: BotError) -> BotFault:
        """The fault for what the bot layer reported about one request to this bot."""
        if isinstance(error, BotWriteTimeout):
            self.needs_restart = True  # a partial message may have been written
            return BotFault("timeout", "the bot did not read its input in time (write timed out)")
        if isinstance(error, BotTimeout):
            return BotFault("timeout", "no reply before the deadline")
        if isinstance(error, LineTooLong):
            return BotFault("malformed", f"a reply line longer than {self.max_line_bytes} bytes")
        if isinstance(error, StaleFlood):
            return BotFault("protocol", error.reason)
        self.needs_restart = True
        if isinstance(error, BotCrashed):
            return self._ended_fault(error)
        return BotFault("crash", str(error))

    def _ended_fault(self, error: BotCrashed) -> BotFault:
        """The fault of a process that can no longer be talked to: a crash, or (a person's
        seat that left the table) a resignation."""
        if self.may_resign and error.returncode == RESIGN_STATUS:
            return BotFault("resigned", "left the table: seeded random plays for the rest of the game")
        return BotFault("crash", str(error))

    async def request(self, message: Any, expected: type, timeout_s: float) -> tuple[Any, float]:
        """Send ``message`` and wait for its reply; returns the reply and elapsed seconds."""
        sent = await self.send(message, timeout_s)
        reply = await self.receive(message.id, expected, sent + timeout_s)
        return reply, trio.current_time() - sent

    def stderr_tail(self, reset: bool = False) -> str:
        """What the bot wrote to stderr lately (capped); with no process running, what the
        last one wrote before it was closed in this game (e.g. why it could not start)."""
        if self._proc is None:
            tail = self._closed_tail
            if reset:
                self._closed_tail = ""
            return tail
        return self._proc.stderr_tail(reset=reset)

    # -- what the bot uses (its sandbox measures it) -------------------------------------
    def begin_game(self) -> None:
        """Count CPU time and peak memory (and the per-game CPU limit) from now."""
        self._closed_tail = ""  # an earlier game's
        self._in_game = True  # a process started from now on is watched as a playing one
        if self._proc is None:
            return
        self._proc.pace(idle=False)
        if self._proc.jail is not None:
            self._proc.jail.begin_game()

    def end_game(self) -> None:
        """The game's usage is taken: the process is idle until its next game (watched
        less often, see :meth:`arena.bots.BotProcess.pace`)."""
        self._in_game = False
        if self._proc is not None:
            self._proc.pace(idle=True)

    def usage(self, seat: int) -> SeatUsage:
        """This seat's CPU time and peak memory since :meth:`begin_game` (or since the
        process started, if it started later), and the sandbox it ran in."""
        jail = self._proc.jail if self._proc is not None else None
        sandbox = self.spec.sandbox
        if jail is None:
            return SeatUsage(seat=seat, sandbox=sandbox.level.value if sandbox else "none")
        used = jail.usage()
        limits = dataclasses.asdict(jail.limits) if jail.level.value != "none" else None
        return SeatUsage(seat=seat, cpu_ms=used.cpu_ms, peak_mb=used.peak_mb, sandbox=jail.level.value, limits=limits)

    async def shutdown(self, reason: str = "") -> None:
        """Ask the bot to exit, then end its process tree (grace, SIGTERM, SIGKILL)."""
        if self._proc is not None and self.running:
            with contextlib.suppress(BotError, trio.TooSlowError), trio.fail_after(0.1 if self.pool.hurried else 0.5):
                await self._proc.send(encode_line(Shutdown(id=self._take_id(), reason=reason)))
        await self.close()

    async def _own_process(
        self, release: trio.Event, ended: trio.Event, task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            async with open_bot(self.spec) as proc:
                task_status.started(proc)
                try:
                    await release.wait()
                except trio.Cancelled:
                    self.pool.hurry()  # the pool itself is cancelled: an interrupt
                    raise
                finally:
                    if self.pool.hurried:  # else the polite graces, as the block ends
                        grace, term_grace = HURRIED_GRACES
                        await proc.aclose(grace, term_grace=term_grace)
        finally:
            ended.set()

    async def close(self) -> None:
        """End the process tree (if any) and wait until it is reaped. What it wrote to
        stderr is kept for the game's record (:meth:`stderr_tail`)."""
        proc, release, ended = self._proc, self._release, self._ended
        self._release = self._ended = None
        self._proc = None
        self.hello = None
        if release is not None and ended is not None:
            release.set()
            with trio.CancelScope(shield=True):
                await ended.wait()
        if proc is not None:
            self._closed_tail = proc.stderr_tail(reset=True)


def check_reply(line: bytes, request_id: int, expected: type) -> Any:
    """The reply to ``request_id`` in ``line``; None for a late reply to an earlier
    request (it never counts for this one); a :class:`BotFault` for anything else."""
    try:
        reply = decode_reply(line)
    except ProtocolDecodeError as exc:
        return BotFault("malformed", str(exc))
    re = reply.re
    if re == request_id and isinstance(reply, expected):
        return reply
    if re < request_id:
        return None
    if re != request_id:
        return BotFault("protocol", f"reply has re={re}, expected re={request_id}")
    got = type(reply).__name__
    return BotFault("protocol", f"expected a {_type_name(expected)!r} reply, got {_type_name(type(reply))!r} ({got})")


def _type_name(cls: type) -> str:
    return getattr(getattr(cls, "__struct_config__", None), "tag", None) or cls.__name__
