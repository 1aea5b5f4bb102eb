"""A small SDK for Python bots: you write the decision, it speaks protocol v1.

    from protocol.sdk import Bot, run

    class MyBot(Bot):
        name = "mybot"
        version = "1"

        def act(self, view):
            return view.legal[0]  # a Play from view.legal, or a list of card ids

    if __name__ == "__main__":
        run(MyBot())

What the SDK does for you, and what a bot may rely on:

- ``hello``: picks the highest protocol version both sides speak and answers with
  the class's ``name`` and ``version``.
- ``game_start``: stores ``self.game`` (the message), ``self.seat``, ``self.names``,
  ``self.rules`` and ``self.seed``, sets ``self.rng = random.Random(seed)`` (use it
  for every random choice: a replayed game then comes out the same), calls
  :meth:`Bot.on_game_start` and answers ``ready``.
- ``act``: calls :meth:`Bot.act` with a :class:`View` and answers with the play it
  returns. If ``act`` raises, or returns something that is not a legal play, the
  traceback or the reason goes to stderr and the SDK answers ``legal[0]``, so a bug
  costs a poor move, not a fault. A ``last_action`` whose status is not ``"ok"``
  (your previous answer was late, illegal...) is reported on stderr.
- ``game_over``: calls :meth:`Bot.on_game_over`, answers ``ack``.
- ``shutdown``, or the end of stdin: :func:`run` returns (the script then exits 0).
- Request ids, JSON, flushing: handled. While :func:`run` serves the real stdout,
  ``print()`` in your code goes to stderr, so it cannot corrupt the protocol.
  Use :meth:`Bot.log` for your own messages.

The :class:`View` also remembers what this bot saw during the game (legal card
counting, RULES "What a bot may know"): the kind of every card id seen, the hands
it held this round, which seat now holds what is left of each of them, and how
many cards of each kind it has not seen yet. A bot started in the middle of a game
(``arena replay --ask`` does that) remembers exactly the same: every ``act`` carries
the game's public log so far and the hands the seat held earlier in the round, and
the SDK rebuilds its memory from them. To make the same choice again there, keep
your own decisions a function of the view and of ``self.seed`` (``self.rng`` has
drawn fewer numbers in a process that starts mid-game).

Imports only msgspec (through the protocol package) and the standard library.
"""

from __future__ import annotations

import contextlib
import random
import sys
import time
import traceback
from collections.abc import Sequence
from typing import IO, Any, ClassVar

from .codec import ProtocolDecodeError, decode_request, encode_line
from .memory import GameMemory

# (The message types a View hands out, marked noqa, stay importable from here as they were
# before the memory and the view had modules of their own.)
from .messages import (
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Ack,
    Act,
    Action,
    Card,  # noqa: F401
    Event,  # noqa: F401
    GameOver,
    GameStart,
    Hello,
    HelloReply,
    LastAction,  # noqa: F401
    LastCard,  # noqa: F401
    Play,
    Ready,
    Reply,
    Request,
    Reveal,  # noqa: F401
    RoundEnd,  # noqa: F401
    RoundStart,  # noqa: F401
    Rules,
    SeatCard,  # noqa: F401
    Shutdown,
    TableauCard,  # noqa: F401
)
from .view import View

__all__ = ["Bot", "GameMemory", "Session", "View", "run"]


class Bot:
    """Subclass it and write :meth:`act`. One instance plays every game of its process.

    Attributes set by the SDK at each ``game_start`` (before :meth:`on_game_start`):
        game: The ``game_start`` message (:class:`~protocol.GameStart`).
        seat: Your seat, from 0.
        names: Every seat's bot name.
        rules: The rules of the game (variant, hand size, directions, deck).
        seed: The seed the referee gave you for this game.
        rng: ``random.Random(seed)``: use it for every random choice.
    """

    #: Your bot's name and version, sent in the hello reply (only logged by the referee:
    #: the name in bot.toml is the bot's identity).
    name: ClassVar[str] = "python-bot"
    version: ClassVar[str] = ""
    capabilities: ClassVar[tuple[str, ...]] = ()

    game: GameStart | None = None
    seat: int = 0
    names: list[str]
    rules: Rules | None = None
    seed: int = 0
    rng: random.Random

    def __init__(self) -> None:
        self.names = []
        self.rng = random.Random(0)

    def act(self, view: View) -> Play | Sequence[int]:
        """Choose this turn's cards. Return one of ``view.legal``, or the card ids in
        order (one, or two with chopsticks); when you control the dummy
        (``view.dummy``), the last id is the dummy's card. Must be overridden."""
        raise NotImplementedError(f"{type(self).__name__} must define act(self, view)")

    def on_game_start(self, game: GameStart) -> None:
        """Called at each ``game_start``, after the attributes above are set."""

    def on_game_over(self, over: GameOver) -> None:
        """Called at ``game_over``: final scores, ranks, your fault counts."""

    def log(self, *parts: object) -> None:
        """Write a line to stderr (the referee keeps its tail; it is never protocol)."""
        print(*parts, file=sys.stderr, flush=True)


class Session:
    """Answers the referee's messages for one bot, one at a time, without any I/O of its
    own: :func:`run` is the loop around it, and tests can drive it directly."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.memory = GameMemory()
        self.game: GameStart | None = None

    def handle(self, request: Request, received: float | None = None) -> Reply | None:
        """The reply to ``request`` (None for shutdown). ``received`` is the monotonic
        time the line was read, for :meth:`View.time_left_ms`."""
        if isinstance(request, Act):
            return self._act(request, received)
        if isinstance(request, GameStart):
            return self._game_start(request)
        if isinstance(request, GameOver):
            return self._game_over(request)
        if isinstance(request, Hello):
            return self._hello(request)
        return None

    def _hello(self, hello: Hello) -> HelloReply:
        common = set(hello.versions) & set(SUPPORTED_VERSIONS)
        if common:
            version = max(common)
        else:
            version = PROTOCOL_VERSION
            self.bot.log(
                f"sdk: the referee speaks protocol versions {hello.versions}, this SDK only {list(SUPPORTED_VERSIONS)}"
            )
        bot = self.bot
        return HelloReply(
            re=hello.id,
            version=version,
            name=bot.name,
            bot_version=str(bot.version),
            capabilities=list(bot.capabilities),
        )

    def _game_start(self, start: GameStart) -> Ready:
        bot = self.bot
        self.game = start
        self.memory = GameMemory(start)
        bot.game, bot.seat, bot.names = start, start.seat, list(start.names)
        bot.rules, bot.seed = start.rules, start.seed
        bot.rng = random.Random(start.seed)
        self._guard("on_game_start", bot.on_game_start, start)
        return Ready(re=start.id)

    def _act(self, act: Act, received: float | None) -> Action:
        bot = self.bot
        last = act.last_action
        if last is not None and last.status != "ok":
            bot.log(
                f"sdk: warning: your previous action was not applied ({last.status}): {last.message}; "
                f"played for you instead: cards={last.cards}"
                + (f", dummy_card={last.dummy_card}" if last.dummy_card is not None else "")
            )
        try:
            self.memory.update(act)
        except Exception:  # a bug in the SDK's bookkeeping must not cost the turn
            bot.log(
                f"sdk: error while remembering round {act.round} turn {act.turn}:\n{traceback.format_exc()}"
            )
        view = View(act, self.memory, self.game, received)
        if not act.legal:
            bot.log(
                f"sdk: round {act.round} turn {act.turn}: the act lists no legal play; answering with no cards"
            )
            return Action(re=act.id, cards=[])
        try:
            choice = bot.act(view)
        except Exception:
            bot.log(
                f"sdk: act() raised in round {act.round} turn {act.turn}; answering legal[0] instead:\n{traceback.format_exc()}"
            )
            return act.legal[0].to_action(act.id)
        try:
            play = view.to_play(choice)
        except ValueError as exc:
            bot.log(f"sdk: round {act.round} turn {act.turn}: {exc}; answering legal[0] instead")
            play = act.legal[0]
        return play.to_action(act.id, view.debug)

    def _game_over(self, over: GameOver) -> Ack:
        bot = self.bot
        last = over.last_action
        if last is not None and last.status != "ok":
            bot.log(
                f"sdk: warning: your last action was not applied ({last.status}): {last.message}"
            )
        if any(over.faults.values()):  # a kind may be listed with 0
            bot.log(f"sdk: warning: faults this game: {over.faults} (game ended: {over.reason})")
        with contextlib.suppress(Exception):
            self.memory.apply_events(over.events)
        self._guard("on_game_over", bot.on_game_over, over)
        return Ack(re=over.id)

    def _guard(self, what: str, hook: Any, message: Any) -> None:
        try:
            hook(message)
        except Exception:
            self.bot.log(f"sdk: {what}() raised; carrying on:\n{traceback.format_exc()}")


def run(bot: Bot, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """Serve the referee until ``shutdown`` or the end of stdin, then return.

    Reads one line at a time from ``stdin`` (default: the process's binary stdin),
    answers each with one flushed line on ``stdout`` (default: the binary stdout).
    With the default stdout, ``sys.stdout`` points to stderr meanwhile, so that a
    stray ``print()`` is logged instead of breaking the protocol.
    """
    source = sys.stdin.buffer if stdin is None else stdin
    sink = sys.stdout.buffer if stdout is None else stdout
    session = Session(bot)
    redirect = (
        contextlib.redirect_stdout(sys.stderr) if stdout is None else contextlib.nullcontext()
    )
    with redirect:
        while True:
            line = source.readline()
            if not line:
                return  # the referee is gone
            received = time.monotonic()
            if not line.strip():
                continue
            try:
                request = decode_request(line)
            except ProtocolDecodeError as exc:
                bot.log(f"sdk: cannot read a line from the referee, skipped: {exc}")
                continue
            if isinstance(request, Shutdown):
                return
            reply = session.handle(request, received)
            if reply is not None:
                try:
                    sink.write(encode_line(reply))
                    sink.flush()
                except BrokenPipeError:
                    return  # the referee closed our stdout: it is gone
