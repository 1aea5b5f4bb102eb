"""What a Python bot's ``act`` gets from the SDK: the ``act`` message with its fields as
properties, what the bot remembers (card counting), the time left, and the turning of
an answer into a legal play.

Imports only msgspec (through the protocol package) and the standard library.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from . import cards as card_table
from .memory import GameMemory
from .messages import Act, Action, Card, Event, GameStart, LastAction, Play, TableauCard


class View:
    """What :meth:`~protocol.sdk.Bot.act` gets: the ``act`` message plus what the bot remembers.

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

