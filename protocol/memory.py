"""What one seat of a Python bot remembers of a game: legal card counting (RULES "What
a bot may know") for the SDK.

Fed by every request, read through :class:`~protocol.view.View`: the kind of every
card id seen, the hands held this round, which seat now holds what is left of each,
and what of the deck was not seen yet. A memory started mid-game rebuilds itself from
an act's public log and ``hands_seen``. Imports only msgspec (through the protocol
package) and the standard library.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from . import cards as card_table
from .messages import (
    Act,
    Card,
    Event,
    GameStart,
    LastCard,
    Reveal,
    RoundEnd,
    RoundStart,
    SeatCard,
    TableauCard,
)


class _Packet:
    """A hand this bot held this round: the ids still known in it, and who holds it."""

    __slots__ = ("holder", "cards")

    def __init__(self, holder: int, cards: Iterable[Card]) -> None:
        self.holder = holder
        self.cards = {c.id: c for c in cards}


class GameMemory:
    """What one seat has seen during one game; fed by every request, read through :class:`~protocol.view.View`.

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
