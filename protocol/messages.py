"""Every message of bot protocol v1, as msgspec Structs.

The rules every message follows, which a bot author may rely on:

- A message is one JSON object whose ``type`` field names it. The referee's
  messages (:data:`Request`) carry ``id``, increasing per bot process; every
  reply (:data:`Reply`) carries ``re``, the ``id`` of the request it answers.
- Unknown fields are ignored, in both directions and at any depth, so a later
  revision of v1 may add fields without breaking old bots or referees. An
  unknown message or event ``type`` is an error: new types need a new version.
- A missing required field, or a field of the wrong JSON type, is an error.
  Types are strict: ``true``/``false`` is never an integer, ``1.0`` is never an
  integer and ``"3"`` is never a number (msgspec's strict mode, the default).
- An optional field may be left out; a reader takes its default. The referee
  always writes every field of its messages except ``dummy_card`` of a
  :class:`Play`, which is left out when it is ``null``.
- Card kinds are the wire names of RULES R1 (``"salmon_nigiri"``...). Card ids
  are per-game integers that say nothing about a card's kind or position.

Docstrings here are the field reference of the protocol: the JSON Schema
(:mod:`protocol.schema`) carries them, and ``PROTOCOL.md`` is written from them.
This module imports only msgspec and the standard library.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

import msgspec

#: The protocol's name, sent in :class:`Hello`.
PROTOCOL_NAME: Final = "sushigo-bot"
#: The version this package speaks.
PROTOCOL_VERSION: Final = 1
#: Every version this package can speak; a bot picks one in :class:`HelloReply`.
SUPPORTED_VERSIONS: Final[tuple[int, ...]] = (1,)
#: The default cap on one line from a bot, newline included (a longer line is a fault).
MAX_LINE_BYTES: Final = 65536

Variant = Literal["standard", "alternate", "dummy"]
Direction = Literal["left", "right"]
#: What happened to a bot's last answer (:class:`LastAction`).
ActionStatus = Literal["ok", "timeout", "illegal", "malformed", "protocol"]


# -- shared pieces -------------------------------------------------------------------


class Card(msgspec.Struct, frozen=True, gc=False):
    """A card in a hand or a reveal.

    Attributes:
        id: The card's id in this game (unique within the game, hides its kind and position).
        card: The card's kind, as its wire name (RULES R1), e.g. "salmon_nigiri".
    """

    id: int
    card: str


class TableauCard(msgspec.Struct, frozen=True, omit_defaults=True, gc=False):
    """A card in a tableau, face up.

    Attributes:
        id: The card's id in this game.
        card: The card's kind, as its wire name (RULES R1).
        wasabi: For a nigiri sitting on a wasabi: that wasabi's id (R7). Left out otherwise.
    """

    id: int
    card: str
    wasabi: int | None = None


def _play_ids(cards: list[int], dummy_card: int | None, dummy: bool | None) -> tuple[int, ...]:
    if dummy is not None:
        if dummy and dummy_card is None:
            raise ValueError("the dummy's controller must name the dummy's card in dummy_card (R15)")
        if not dummy and dummy_card is not None:
            raise ValueError("dummy_card is only for the player who controls the dummy this turn (R15)")
    ids = tuple(cards)
    return ids if dummy_card is None else (*ids, dummy_card)


class Play(msgspec.Struct, omit_defaults=True):
    """One legal play, as listed in :attr:`Act.legal`.

    Its fields are exactly those of an :class:`Action` reply, so a bot may answer
    ``{"type": "action", "re": ID, **legal[k]}``.

    Attributes:
        cards: The ids of the cards to take from your hand, in order: one, or two with
            chopsticks (R8; the order matters for wasabi, R7a).
        dummy_card: Only when you control the dummy (R15): the id of the card from your
            hand that goes to the dummy. Left out otherwise.
    """

    cards: list[int]
    dummy_card: int | None = None

    def ids(self, *, dummy: bool | None = None) -> tuple[int, ...]:
        """The play as the engine spells it: ``cards``, then ``dummy_card`` if any.

        With ``dummy`` given (whether this seat controls the dummy this turn), a
        ``dummy_card`` that is missing for the controller or present for anyone
        else raises ``ValueError`` instead of being misread.
        """
        return _play_ids(self.cards, self.dummy_card, dummy)

    def to_action(self, re: int, debug: Any = None) -> Action:
        """The :class:`Action` reply that makes this play, answering request ``re``."""
        return Action(re=re, cards=list(self.cards), dummy_card=self.dummy_card, debug=debug)


def play_from_ids(ids: Sequence[int], dummy: bool) -> Play:
    """The :class:`Play` for an engine-style play: a sequence of card ids where, for
    the dummy's controller (``dummy=True``), the last id is the dummy's card.

    Raises ``ValueError`` for a controller's play of fewer than two ids.
    """
    if not dummy:
        return Play(cards=list(ids))
    if len(ids) < 2:
        raise ValueError(f"a dummy controller's play names its own card(s), then the dummy's card; got {list(ids)}")
    return Play(cards=list(ids[:-1]), dummy_card=ids[-1])


class LastAction(msgspec.Struct, kw_only=True):
    """What was actually applied for you at your previous decision.

    Attributes:
        status: "ok" (your action was applied), or the fault that made the referee apply a
            seeded random legal play instead: "timeout", "illegal", "malformed" or "protocol".
        cards: The ids of your own cards that were played, in order.
        dummy_card: The id of the card given to the dummy, when you controlled it; else null.
        message: A human-readable explanation (empty when status is "ok").
        elapsed_ms: How long your answer took, from request written to reply read, in ms.
    """

    status: ActionStatus
    cards: list[int]
    dummy_card: int | None
    message: str
    elapsed_ms: float


# -- events: public news, carried inside the next request ----------------------------


class _Event(msgspec.Struct, tag_field="type", kw_only=True):
    """Base of the public events; ``type`` names the event."""


class RoundStart(_Event, tag="round_start", kw_only=True):
    """A round begins: hands are dealt (R3).

    Attributes:
        round: The round, 1 to 3.
        direction: Where hands pass this round: "left" (seat i to seat i+1) or "right" (R6, R14).
        hand_size: The number of cards dealt to each hand.
    """

    round: int
    direction: Direction
    hand_size: int


class RevealedPlay(msgspec.Struct, kw_only=True):
    """One seat's cards of a turn, revealed.

    Attributes:
        seat: The seat that played them (the dummy's seat in that variant, R15).
        cards: The cards that entered the seat's tableau, in order (R5, R7a).
        chopsticks_returned: The id of the chopsticks that went back into the hand this
            seat passed on (R8), or null.
    """

    seat: int
    cards: list[Card]
    chopsticks_returned: int | None


class WasabiPlacement(msgspec.Struct, kw_only=True):
    """A nigiri placed on a wasabi (R7).

    Attributes:
        seat: The seat whose tableau it is.
        nigiri: The nigiri's id.
        wasabi: The id of the wasabi it sits on.
    """

    seat: int
    nigiri: int
    wasabi: int


class Reveal(_Event, tag="reveal", kw_only=True):
    """Every seat's choice of a turn, revealed at once (R4, R5).

    Attributes:
        round: The round, 1 to 3.
        turn: The turn that was revealed, from 1.
        plays: Every seat's cards, in seat order (the dummy's card last in that variant).
        wasabi: The nigiri that went onto a wasabi this turn (R7).
        controller: In the dummy variant, the seat that controlled the dummy this turn; else null.
    """

    round: int
    turn: int
    plays: list[RevealedPlay]
    wasabi: list[WasabiPlacement]
    controller: int | None


class SeatCard(msgspec.Struct, kw_only=True):
    """A card that entered one seat's tableau.

    Attributes:
        seat: The seat.
        id: The card's id.
        card: The card's kind (RULES R1).
    """

    seat: int
    id: int
    card: str


class LastCard(_Event, tag="last_card", kw_only=True):
    """The last card of every hand, played for its holder without asking (R6a).

    Not sent in the dummy variant, where the last cards are part of the final reveal (R15).

    Attributes:
        round: The round, 1 to 3.
        turn: The turn of the last card (the hand size).
        cards: Every seat's last card, in seat order: what each seat received and played.
        wasabi: The last cards that went onto a wasabi (R7).
    """

    round: int
    turn: int
    cards: list[SeatCard]
    wasabi: list[WasabiPlacement]


class RoundEnd(_Event, tag="round_end", kw_only=True):
    """A round is scored (R9, R10). Every list is per seat.

    Attributes:
        round: The round that ended, 1 to 3.
        points: The points each seat scored this round, maki included.
        maki_symbols: The maki symbols each seat had (R10).
        maki_points: The maki points each seat got (R10).
        scores: The totals after this round.
    """

    round: int
    points: list[int]
    maki_symbols: list[int]
    maki_points: list[int]
    scores: list[int]


class GameEnd(_Event, tag="game_end", kw_only=True):
    """Puddings are scored and the game is over (R12, R13). Every list is per seat.

    Attributes:
        pudding_points: The pudding bonus or penalty of each seat (R12).
        scores: The final totals, pudding included.
        puddings: The number of puddings each seat kept.
        ranks: Each seat's place, 1 is best; tied seats share a place (R13). In the dummy
            variant the dummy ranks last.
    """

    pudding_points: list[int]
    scores: list[int]
    puddings: list[int]
    ranks: list[int]


#: A public event, as produced by ``arena.engine.events()``.
Event = RoundStart | Reveal | LastCard | RoundEnd | GameEnd
EVENT_TYPES: Final = (RoundStart, Reveal, LastCard, RoundEnd, GameEnd)


# -- referee -> bot ------------------------------------------------------------------


class _Request(msgspec.Struct, tag_field="type", kw_only=True):
    """Base of the referee's messages."""

    id: int


class Limits(msgspec.Struct, kw_only=True):
    """The limits a bot must respect.

    Attributes:
        max_line_bytes: The longest line a bot may send, newline included; longer is a fault.
        hello_ms: Time to answer hello (start-up included), in ms.
        turn_ms: Time per act, in ms, before the bank is drawn on.
        bank_ms: Extra time per game that any act may draw on, in ms.
    """

    max_line_bytes: int
    hello_ms: int
    turn_ms: int
    bank_ms: int


class Hello(_Request, tag="hello", kw_only=True):
    """The first message to a new bot process. Reply: :class:`HelloReply`.

    Attributes:
        id: The request id; the reply's re.
        protocol: Always "sushigo-bot".
        versions: The protocol versions the referee speaks; the bot picks one.
        rules_version: The version of the rules the engine enforces, e.g. "sushigo-rules/1.0".
        arena_version: The arena's version.
        limits: The line cap and time budgets.
    """

    protocol: str
    versions: list[int]
    rules_version: str
    arena_version: str
    limits: Limits


class Rules(msgspec.Struct, kw_only=True):
    """The static rules of one game.

    Attributes:
        rules_version: The version of the rules the engine enforces.
        variant: "standard", "alternate" (round 2 passes right, R14) or "dummy" (two players
            and a dummy seat, R15).
        hand_size: Cards dealt per hand each round (R3, R15).
        rounds: The number of rounds (3).
        directions: The passing direction of each round, "left" or "right".
        deck: How many cards of each kind the deck holds, by wire name (R1).
    """

    rules_version: str
    variant: Variant
    hand_size: int
    rounds: int
    directions: list[Direction]
    deck: dict[str, int]


class TimeControl(msgspec.Struct, kw_only=True):
    """The time budgets of one game.

    Attributes:
        turn_ms: Time per act, in ms.
        bank_ms: Extra time for the whole game that any act may draw on, in ms.
    """

    turn_ms: int
    bank_ms: int


class GameStart(_Request, tag="game_start", kw_only=True):
    """A game begins. Reply: :class:`Ready`.

    Attributes:
        id: The request id; the reply's re.
        game_id: The game's id, repeated in every message of the game.
        seat: Your seat, from 0. Seat i passes left to seat i+1 (R2).
        players: The number of players (bots), 2 to 5.
        seats: The number of seats at the table: the players, plus the dummy (the last
            seat) in the dummy variant.
        names: Every seat's bot name, in seat order; the dummy's seat is named "dummy".
        rules: The rules of this game.
        time: The time budgets of this game.
        seed: A seed for your own random choices, fixed by the game's seed and your seat:
            using it makes a replayed game come out the same.
    """

    game_id: str
    seat: int
    players: int
    seats: int
    names: list[str]
    rules: Rules
    time: TimeControl
    seed: int


class Act(_Request, tag="act", kw_only=True):
    """Choose your cards for this turn. Reply: :class:`Action`.

    Self-sufficient: it holds everything your seat may know now (RULES "What a bot
    may know"): the public log in history and events, your own earlier hands of
    this round in hands_seen. Lists of "every seat" are in seat order and include the dummy's
    seat in that variant.

    Attributes:
        id: The request id; the reply's re.
        game_id: The game's id.
        seat: Your seat.
        round: The round, 1 to 3.
        turn: The turn within the round, from 1.
        direction: Where hands pass after this turn: "left" or "right".
        time_ms: This turn's deadline in ms: turn_ms plus what is left of your bank
            (0 when the run has no deadlines, a debugging mode).
        hand: Your hand, in order (R16).
        legal: Every legal play, in the fixed order of R16. Answer with one of them.
        dummy: True when you control the dummy this turn (R15): every legal play then
            has a dummy_card, and so must your action.
        controller: In the dummy variant, the seat that controls the dummy this turn; else null.
        tableaus: Every seat's tableau, in the order the cards entered it (R16).
        puddings: Every seat's puddings, kept and in this round's tableau.
        scores: Every seat's points from finished rounds.
        hand_sizes: Every seat's hand size (at the dummy's seat: its pile).
        banks_ms: Every seat's remaining time bank in ms (0 at the dummy's seat).
        last_action: What was actually applied for you at your previous decision of this
            game (null before the first).
        events: The public events since your previous request, oldest first.
        history: Every public event of this game before those of events, oldest first:
            history followed by events is the game's whole public log so far (empty at
            your first act). Lets a bot that starts mid-game count cards as one that saw
            every request.
        hands_seen: The hands you held at the earlier turns of this round, oldest first
            (turn 1 first; this turn's is hand), each in its order then. With history,
            everything your seat has seen this game.
    """

    game_id: str
    seat: int
    round: int
    turn: int
    direction: Direction
    time_ms: int
    hand: list[Card]
    legal: list[Play]
    dummy: bool = False
    controller: int | None = None
    tableaus: list[list[TableauCard]]
    puddings: list[int]
    scores: list[int]
    hand_sizes: list[int]
    banks_ms: list[int]
    last_action: LastAction | None
    events: list[Event]
    history: list[Event] = []
    hands_seen: list[list[Card]] = []


class GameOver(_Request, tag="game_over", kw_only=True):
    """The game is over. Reply: :class:`Ack`. Every list is per seat.

    Attributes:
        id: The request id; the reply's re.
        game_id: The game's id.
        scores: The final totals, pudding included.
        puddings: The puddings each seat kept.
        ranks: Each seat's place, 1 is best; ties share a place (R13). A seat that ended the
            game on autopilot ranks below every seat that did not.
        faults: Your faults in this game, counted by kind ("timeout", "malformed",
            "protocol", "illegal", "crash"); kinds you did not commit are left out.
        reason: Why the game ended: "complete", or "autopilot" when you ended it on
            autopilot (after a crash or too many faults).
        last_action: What was applied for you at your last decision (null if none).
        events: The public events since your previous request, oldest first.
    """

    game_id: str
    scores: list[int]
    puddings: list[int]
    ranks: list[int]
    faults: dict[str, int]
    reason: str
    last_action: LastAction | None
    events: list[Event]


class Shutdown(_Request, tag="shutdown", kw_only=True):
    """Exit now. No reply: the referee waits a short grace, then ends the process tree.

    Attributes:
        id: The request id (never answered).
        reason: Why, for the bot's log; may be empty.
    """

    reason: str = ""


#: A message from the referee to a bot.
Request = Hello | GameStart | Act | GameOver | Shutdown
REQUEST_TYPES: Final = (Hello, GameStart, Act, GameOver, Shutdown)


# -- bot -> referee ------------------------------------------------------------------


class _Reply(msgspec.Struct, tag_field="type", kw_only=True):
    """Base of the bot's replies."""

    re: int


class HelloReply(_Reply, tag="hello", kw_only=True, omit_defaults=True):
    """The answer to :class:`Hello`.

    Attributes:
        re: The id of the hello.
        version: The protocol version the bot chose, one of the hello's versions.
        name: The bot's name (only logged: the name in bot.toml is its identity).
        bot_version: The bot's own version, for the logs.
        capabilities: Optional features the bot asks for; none are defined in v1.
    """

    version: int
    name: str
    bot_version: str = ""
    capabilities: list[str] = []


class Ready(_Reply, tag="ready", kw_only=True):
    """The answer to :class:`GameStart`.

    Attributes:
        re: The id of the game_start.
    """


class Action(_Reply, tag="action", kw_only=True, omit_defaults=True):
    """The answer to :class:`Act`: the cards you take.

    Attributes:
        re: The id of the act.
        cards: The ids of the cards you take from your hand, in order: one, or two with
            chopsticks (R8; the order matters for wasabi, R7a).
        dummy_card: When the act said dummy: true, the id of the card from your hand that
            goes to the dummy (R15). Leave it out otherwise.
        debug: Optional, any JSON value (by convention an object): kept in the replay for
            you to read later, cut by the referee when too large.
    """

    cards: list[int]
    dummy_card: int | None = None
    debug: Any = None

    def ids(self, *, dummy: bool | None = None) -> tuple[int, ...]:
        """The play as the engine spells it; see :meth:`Play.ids`."""
        return _play_ids(self.cards, self.dummy_card, dummy)


class Ack(_Reply, tag="ack", kw_only=True):
    """The answer to :class:`GameOver`.

    Attributes:
        re: The id of the game_over.
    """


#: A message from a bot to the referee.
Reply = HelloReply | Ready | Action | Ack
REPLY_TYPES: Final = (HelloReply, Ready, Action, Ack)

#: The reply each request expects (a :class:`Shutdown` expects none).
EXPECTED_REPLY: Final[dict[type[Any], type[Any]]] = {
    Hello: HelloReply,
    GameStart: Ready,
    Act: Action,
    GameOver: Ack,
}
