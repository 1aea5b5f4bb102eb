"""Time budgets and timed requests.

All budgets are configured in *nominal* milliseconds (what ``--hello-ms`` etc. say);
``time_scale`` stretches them into real time for slow machines (``Budget.scaled_ms`` and
``Bank.remaining_scaled_ms`` give the real figures, e.g. to tell the bots).
Times are measured with :func:`trio.current_time`, which is monotonic and follows a
``trio.testing.MockClock``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import trio

from ._errors import BotTimeout, BotWriteTimeout
from ._process import DEFAULT_MAX_LINE

__all__ = ["Bank", "Budget", "Reply", "await_reply", "request", "send_request"]


@dataclass(frozen=True)
class Budget:
    """The time rules of a run (``--hello-ms``, ``--turn-ms``, ``--bank-ms``,
    ``--time-scale``, ``--no-timeout``). Not to be confused with the wire message
    ``protocol.TimeControl``, which carries a game's budgets to the bots.

    ``hello_ms`` is the budget for the ``hello`` exchange (start-up), ``turn_ms`` for one
    ``act``, and ``bank_ms`` the per-game reserve that any ``act`` may draw on beyond
    ``turn_ms``. ``time_scale`` multiplies every budget when turned into a real deadline.
    With ``no_timeout`` every deadline is infinite and banks are never charged.
    """

    hello_ms: int = 10_000
    turn_ms: int = 1_000
    bank_ms: int = 10_000
    time_scale: float = 1.0
    no_timeout: bool = False

    def __post_init__(self) -> None:
        for name in ("hello_ms", "turn_ms", "bank_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, not {getattr(self, name)}")
        if not self.time_scale > 0:
            raise ValueError(f"time_scale must be > 0, not {self.time_scale}")

    def seconds(self, nominal_ms: float) -> float:
        """A nominal budget as a real timeout in seconds (``inf`` with ``no_timeout``)."""
        if self.no_timeout:
            return math.inf
        return nominal_ms * self.time_scale / 1000

    def scaled_ms(self, nominal_ms: float) -> int:
        """A nominal budget in real milliseconds, rounded (what a bot can really spend)."""
        return round(nominal_ms * self.time_scale)

    @property
    def hello_timeout_s(self) -> float:
        """The real timeout of the ``hello`` exchange, in seconds."""
        return self.seconds(self.hello_ms)

    def new_bank(self) -> Bank:
        """A full bank for one seat in one game."""
        return Bank(self)


@dataclass
class Bank:
    """One seat's time bank for one game: what is left of ``bank_ms`` (nominal ms)."""

    budget: Budget
    remaining_ms: float = field(init=False)

    def __post_init__(self) -> None:
        self.remaining_ms = float(self.budget.bank_ms)

    @property
    def remaining_scaled_ms(self) -> int:
        """What is left, in real milliseconds (rounded), e.g. to tell the bot."""
        return self.budget.scaled_ms(self.remaining_ms)

    def deadline_for_turn(self) -> float:
        """This turn's real timeout in seconds: ``turn_ms`` plus what is left of the bank,
        scaled (``inf`` with ``no_timeout``). Measured from the moment the request begins
        to be written to the reply's newline read."""
        return self.budget.seconds(self.budget.turn_ms + self.remaining_ms)

    def charge(self, elapsed_ms: float) -> float:
        """Charge one ``act`` that took ``elapsed_ms`` real milliseconds: whatever exceeds
        ``turn_ms`` (after unscaling) is drawn from the bank, which never goes below 0
        (a timed-out turn empties it). Returns the remaining bank in nominal ms.
        With ``no_timeout`` nothing is charged."""
        if not self.budget.no_timeout:
            nominal = elapsed_ms / self.budget.time_scale
            overage = max(0.0, nominal - self.budget.turn_ms)
            self.remaining_ms = max(0.0, self.remaining_ms - overage)
        return self.remaining_ms


@dataclass(frozen=True)
class Reply:
    """A reply line (without its terminator) and how long it took: from the moment the
    request began to be written to the reply's newline read, in seconds of
    :func:`trio.current_time`."""

    line: bytes
    elapsed_s: float

    @property
    def elapsed_ms(self) -> float:
        return self.elapsed_s * 1000


class Channel(Protocol):
    """What the request helpers need of a bot (a :class:`BotProcess` is one)."""

    @property
    def name(self) -> str: ...

    async def send(self, data: bytes) -> None: ...

    async def receive_line(self, max_bytes: int = ...) -> bytes: ...


async def send_request(bot: Channel, data: bytes, *, timeout_s: float) -> float:
    """Write one request and return the :func:`trio.current_time` at which its write
    began: the start of the reply's clock, so that ``timeout_s`` covers the write and
    the wait for the reply together (a bot that keeps its stdin full gains no time).

    Raises :class:`BotWriteTimeout` if it could not be written within ``timeout_s``
    (the bot is then broken), or :class:`BotCrashed` from :meth:`BotProcess.send`.
    """
    start = trio.current_time()
    with trio.move_on_at(start + timeout_s) as scope:
        await bot.send(data)
    if scope.cancelled_caught:
        raise BotWriteTimeout(
            f"request not written within {timeout_s:.3f} s (the bot does not read its stdin)",
            bot=bot.name,
            timeout_s=timeout_s,
            elapsed_s=trio.current_time() - start,
        )
    return start


async def await_reply(
    bot: Channel, *, sent_at: float, timeout_s: float, max_bytes: int = DEFAULT_MAX_LINE
) -> Reply:
    """Wait for the next line until ``sent_at + timeout_s``.

    Raises :class:`BotTimeout` when the deadline passes first, and also for a line
    whose newline was read only at or after the deadline (it never counts as in time).
    A reply still unread then stays buffered and is the next line read (the referee
    discards it by its ``re``). :class:`LineTooLong` and :class:`BotCrashed` pass through.
    """
    deadline = sent_at + timeout_s
    with trio.move_on_at(deadline):
        line = await bot.receive_line(max_bytes)
        now = trio.current_time()
        if now < deadline:
            return Reply(line, now - sent_at)
    raise BotTimeout(
        f"no reply within {timeout_s:.3f} s",
        bot=bot.name,
        timeout_s=timeout_s,
        elapsed_s=trio.current_time() - sent_at,
    )


async def request(
    bot: Channel, data: bytes, *, timeout_s: float, max_bytes: int = DEFAULT_MAX_LINE
) -> Reply:
    """Send one request and wait for one line, both within ``timeout_s``.

    The reply's clock starts when the request begins to be written (see
    :func:`send_request` and :func:`await_reply`, which the referee can also use apart,
    e.g. to write every seat's ``act`` first and then await all replies in parallel).
    """
    sent_at = await send_request(bot, data, timeout_s=timeout_s)
    return await await_reply(bot, sent_at=sent_at, timeout_s=timeout_s, max_bytes=max_bytes)
