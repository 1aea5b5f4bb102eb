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
import math
import random
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import IO, Any, ClassVar

from . import cards as card_table
from .codec import ProtocolDecodeError, decode_request, encode_line
from .messages import (
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Ack,
    Act,
    Action,
    Card,
    Event,
    GameOver,
    GameStart,
    Hello,
    HelloReply,
    LastAction,
    LastCard,
    Play,
    Ready,
    Reply,
    Request,
    Reveal,
    RoundEnd,
    RoundStart,
    Rules,
    SeatCard,
    Shutdown,
    TableauCard,
)

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


class _Packet:
    """A hand this bot held this round: the ids still known in it, and who holds it."""

    __slots__ = ("holder", "cards")

    def __init__(self, holder: int, cards: Iterable[Card]) -> None:
        self.holder = holder
        self.cards = {c.id: c for c in cards}


class GameMemory:
    """What one seat has seen during one game; fed by every request, read through :class:`View`.

    Attributes:
        kinds: The kind of every card id seen so far (hands, tableaus, reveals).
        hands_seen: The hands this seat held this round, by turn.
        round: The round of the last request.
    """

    def __init__(self, game: GameStart | None = None) -> None:
        self.game = game
        self.kinds: dict[int, str] = {}
        self.hands_seen: dict[int, list[Card]] = {}
        self.round = 0
        self._packets: list[_Packet] = []
        self._deck: dict[str, int] = dict(game.rules.deck) if game else dict(card_table.DECK)
        self._log_len = 0  # how many events of the game's public log were taken in

    def _players(self, act: Act | None) -> int:
        if self.game is not None:
            return self.game.players
        if act is None:
            return 2
        return len(act.tableaus) - (1 if act.controller is not None else 0)  # the dummy's seat is last

    def _direction(self, round_: int, fallback: str) -> int:
        directions = self.game.rules.directions if self.game is not None else []
        name = directions[round_ - 1] if 0 < round_ <= len(directions) else fallback
        return 1 if name == "left" else -1

    def see(self, cards: Iterable[Card | TableauCard | SeatCard]) -> None:
        for c in cards:
            self.kinds[c.id] = c.card

    def apply_events(self, events: Iterable[Event], act: Act | None = None) -> None:
        """Take in public events, oldest first: cards revealed, hands passed, rounds over."""
        fallback = act.direction if act is not None else "left"
        for event in events:
            if isinstance(event, Reveal):
                played: set[int] = set()
                for play in event.plays:
                    self.see(play.cards)
                    played.update(c.id for c in play.cards)
                for packet in self._packets:
                    for card_id in played & packet.cards.keys():
                        del packet.cards[card_id]
                # A returned chopsticks goes into the hand its owner passes on (R8).
                returned = {p.seat: p.chopsticks_returned for p in event.plays if p.chopsticks_returned is not None}
                for packet in self._packets:
                    if packet.holder in returned:
                        card_id = returned.pop(packet.holder)
                        packet.cards[card_id] = Card(id=card_id, card="chopsticks")
                # ...also a hand we never held: from now on we know that card is in it.
                for holder, card_id in returned.items():
                    self._packets.append(_Packet(holder, [Card(id=card_id, card="chopsticks")]))
                # Then every hand moves on (R6); in the dummy variant the two players swap.
                step = self._direction(event.round, fallback)
                players = self._players(act)
                for packet in self._packets:
                    packet.holder = (packet.holder + step) % players
            elif isinstance(event, LastCard):
                self.see(event.cards)
                self._packets.clear()
            elif isinstance(event, RoundStart | RoundEnd):
                self._packets.clear()

    def update(self, act: Act) -> None:
        """Take in one ``act``: its events, then the hand and tableaus it shows.

        When the act's ``history`` is not what this memory took in so far (a bot
        started mid-game, e.g. by ``arena replay --ask``, or one that missed requests),
        the memory is rebuilt from the act alone (``history``, ``events`` and
        ``hands_seen``), as it would stand had it seen every request of the game.
        """
        if act.history and len(act.history) != self._log_len:
            self._rebuild(act)
        else:
            self._step(act.events, act, act.turn, act.hand)
        for tableau in act.tableaus:
            self.see(tableau)
        self._log_len = len(act.history) + len(act.events)

    def _step(self, events: Sequence[Event], act: Act, turn: int, hand: Sequence[Card]) -> None:
        """One request of ``act``'s round: the events it brought, then the hand it showed."""
        self.apply_events(events, act)
        if act.round != self.round:
            self.round = act.round
            self.hands_seen = {}
            self._packets.clear()
        self.see(hand)
        self.hands_seen[turn] = list(hand)
        # The hand in front of us is known exactly: it replaces whatever we guessed of it.
        self._packets = [p for p in self._packets if p.holder != act.seat]
        self._packets.append(_Packet(act.seat, hand))

    def _rebuild(self, act: Act) -> None:
        """Forget everything, then take in the whole public log and this round's hands in
        the order the requests brought them: the act of turn t came right after the
        round's ``round_start`` (t = 1) or after the reveal of turn t - 1."""
        self.kinds, self.hands_seen, self.round, self._packets = {}, {}, 0, []
        log = [*act.history, *act.events]
        start = 0
        for turn, hand in enumerate(act.hands_seen, 1):
            end = _received_after(log, act.round, turn, start)
            if end is None:  # not a log this round's requests could have brought: keep the rest whole
                break
            self._step(log[start:end], act, turn, hand)
            start = end
        self._step(log[start:], act, act.turn, act.hand)

    def known_hands(self, me: int) -> dict[int, list[Card]]:
        """For every other seat holding a hand this seat saw this round: the cards of it
        still known to be there (a subset when unseen cards joined it, R15's draw)."""
        out: dict[int, list[Card]] = {}
        for packet in self._packets:
            if packet.holder != me and packet.cards:
                out.setdefault(packet.holder, []).extend(packet.cards.values())
        return out

    def unseen_counts(self) -> dict[str, int]:
        """The deck minus every card seen this game, by kind (kinds with 0 left included)."""
        seen = Counter(self.kinds.values())
        return {kind: max(0, count - seen[kind]) for kind, count in self._deck.items()}


def _received_after(log: Sequence[Event], round_: int, turn: int, start: int) -> int | None:
    """The log position right after the event that came last before the act of turn
    ``round_.turn``: the round's start for turn 1, else the reveal of the turn before."""
    for i in range(start, len(log)):
        event = log[i]
        if turn == 1:
            if isinstance(event, RoundStart) and event.round == round_:
                return i + 1
        elif isinstance(event, Reveal) and event.round == round_ and event.turn == turn - 1:
            return i + 1
    return None


class View:
    """What :meth:`Bot.act` gets: the ``act`` message plus what the bot remembers.

    ``view.act`` is the message itself; its fields are also properties here.
    Set ``view.debug`` to any JSON-ready value to have it kept in the replay.
    """

    def __init__(
        self,
        act: Act,
        memory: GameMemory,
        game: GameStart | None = None,
        received: float | None = None,
    ) -> None:
        self.act = act
        self.memory = memory
        self.game = game
        self.received = time.monotonic() if received is None else received
        self.debug: Any = None

    # -- the message ---------------------------------------------------------------

    @property
    def seat(self) -> int:
        return self.act.seat

    @property
    def round(self) -> int:
        return self.act.round

    @property
    def turn(self) -> int:
        return self.act.turn

    @property
    def direction(self) -> str:
        """Where hands pass after this turn: "left" (to seat + 1) or "right"."""
        return self.act.direction

    @property
    def hand(self) -> list[Card]:
        return self.act.hand

    @property
    def legal(self) -> list[Play]:
        """Every legal play (R16 order); returning one of them is always right."""
        return self.act.legal

    @property
    def dummy(self) -> bool:
        """True when you control the dummy this turn: each play ends with the dummy's card."""
        return self.act.dummy

    @property
    def controller(self) -> int | None:
        return self.act.controller

    @property
    def tableaus(self) -> list[list[TableauCard]]:
        """Every seat's public tableau, in the order cards entered it (the dummy's last)."""
        return self.act.tableaus

    @property
    def my_tableau(self) -> list[TableauCard]:
        return self.act.tableaus[self.act.seat]

    @property
    def puddings(self) -> list[int]:
        return self.act.puddings

    @property
    def scores(self) -> list[int]:
        return self.act.scores

    @property
    def hand_sizes(self) -> list[int]:
        return self.act.hand_sizes

    @property
    def events(self) -> list[Event]:
        """The public events since your previous request."""
        return self.act.events

    @property
    def history(self) -> list[Event]:
        """Every public event of the game before :attr:`events` (with them: the whole log)."""
        return self.act.history

    @property
    def last_action(self) -> LastAction | None:
        return self.act.last_action

    # -- the game ------------------------------------------------------------------

    @property
    def players(self) -> int:
        """The number of players (the dummy is not one)."""
        return self.game.players if self.game is not None else len(self.act.tableaus)

    @property
    def seats(self) -> int:
        """Seats at the table: the players, plus the dummy in that variant."""
        return len(self.act.tableaus)

    @property
    def variant(self) -> str:
        return (
            self.game.rules.variant
            if self.game is not None
            else ("dummy" if self.act.controller is not None else "standard")
        )

    def time_left_ms(self) -> float:
        """Milliseconds left before this turn's deadline (``inf`` when the run has none)."""
        if self.act.time_ms <= 0:
            return math.inf
        return max(0.0, self.act.time_ms - (time.monotonic() - self.received) * 1000.0)

    # -- card counting -------------------------------------------------------------

    def kind(self, card_id: int) -> str | None:
        """The kind of any card id this bot has seen this game, else None."""
        return self.memory.kinds.get(card_id)

    @property
    def hands_seen(self) -> dict[int, list[Card]]:
        """The hands you held this round, by turn (this turn's included)."""
        return self.memory.hands_seen

    def known_hands(self) -> dict[int, list[Card]]:
        """seat -> the cards you know are in that seat's hand now: what is left of the
        hands you held this round, followed as they passed, and the chopsticks you saw
        returned into a hand (legal card counting)."""
        return self.memory.known_hands(self.act.seat)

    def unseen_counts(self) -> dict[str, int]:
        """How many cards of each kind this bot has not seen yet this game: the deck
        minus every card seen in its hands, tableaus and reveals."""
        return self.memory.unseen_counts()

    def counts(self, seat: int | None = None) -> Counter[str]:
        """The kinds in a seat's tableau (yours by default), counted."""
        return Counter(c.card for c in self.act.tableaus[self.act.seat if seat is None else seat])

    def maki_symbols(self, seat: int | None = None) -> int:
        """The maki symbols in a seat's tableau (yours by default), R10."""
        tableau = self.act.tableaus[self.act.seat if seat is None else seat]
        return sum(card_table.MAKI_SYMBOLS.get(c.card, 0) for c in tableau)

    def free_wasabi(self, seat: int | None = None) -> int:
        """How many wasabi in a seat's tableau (yours by default) wait for a nigiri (R7)."""
        tableau = self.act.tableaus[self.act.seat if seat is None else seat]
        used = {c.wasabi for c in tableau if c.wasabi is not None}
        return sum(1 for c in tableau if c.card == "wasabi" and c.id not in used)

    # -- the answer ----------------------------------------------------------------

    def to_play(self, choice: object) -> Play:
        """The legal :class:`Play` that ``choice`` names: a Play (or Action), or card
        ids in order (ints or Cards; for the dummy's controller the last one is the
        dummy's card). Raises ``ValueError`` saying why when it is not legal."""
        if isinstance(choice, Play | Action):
            play = Play(cards=list(choice.cards), dummy_card=choice.dummy_card)
        elif isinstance(choice, int | Card):
            play = self._from_ids([choice])
        elif isinstance(choice, Sequence) and not isinstance(choice, str | bytes):
            play = self._from_ids(choice)
        else:
            raise ValueError(
                f"act() must return a Play from view.legal or a list of card ids, not {choice!r}"
            )
        if play not in self.act.legal:
            hand = ", ".join(f"{c.id}={c.card}" for c in self.act.hand)
            who = " (you control the dummy: name its card last)" if self.act.dummy else ""
            raise ValueError(
                f"act() returned {_describe(play)}, which is not a legal play{who}; hand: {hand}"
            )
        return play

    def _from_ids(self, items: Sequence[object]) -> Play:
        ids: list[int] = []
        for item in items:
            if isinstance(item, Card | TableauCard):
                ids.append(item.id)
            elif isinstance(item, int) and not isinstance(item, bool):
                ids.append(item)
            else:
                raise ValueError(
                    f"act() returned a list holding {item!r}: expected card ids (ints) or Cards"
                )
        if self.act.dummy:
            if len(ids) < 2:
                raise ValueError(
                    f"act() returned {ids}: you control the dummy, so name your card(s), then the dummy's card"
                )
            return Play(cards=ids[:-1], dummy_card=ids[-1])
        return Play(cards=ids)


def _describe(play: Play) -> str:
    extra = f", dummy_card={play.dummy_card}" if play.dummy_card is not None else ""
    return f"cards={play.cards}{extra}"


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

