"""What a seat may play this turn: the legal plays in the fixed order of R16, and the
check of one play, whose errors say why it is not a play or not legal here.

Reads a :class:`~arena.engine.state.GameState`, never changes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import DECK_SIZE, KINDS
from .errors import IllegalPlayError, InvalidPlayError
from .state import GameState, Play

#: The one-card play of each card id, shared: a list, whose ``__getitem__`` is a fast
#: method for ``map`` (a tuple's is a slot wrapper, several times slower).
SINGLES: list[tuple[int]] = [(c,) for c in range(DECK_SIZE)]


def legal_plays(state: GameState, seat: int) -> list[Play]:
    """Every legal play of ``seat`` this turn, in the fixed order of R16: single
    cards in hand order, then ordered pairs (i, j), i != j, by i then j (pairs
    only with chopsticks in the tableau, R8).

    For the dummy's controller (R15) each play ends with the dummy's card:
    ``(own, dummy)`` for every ordered pair of hand positions, then
    ``(own1, own2, dummy)`` for every ordered triple when chopsticks allow it.
    An empty list means the seat does not decide this turn.
    """
    singles = state.singles
    if singles is not None and 0 <= seat < len(singles):  # no dummy: the hot path
        plays = singles[seat][:]
        if state.chopsticks[seat] and len(plays) >= 2:
            hand = state.hands[seat]
            plays += [(a, b) for a in hand for b in hand if a != b]
        return plays
    if not 0 <= seat < state.config.players:  # (a chained compare: cheap on the hot path)
        _check_seat(state, seat)
        return []  # the dummy's seat never decides (R15)
    if state.over:
        return []
    hand = state.hands[seat]
    n = len(hand)
    if seat == state.controller:
        plays: list[Play] = [(a, b) for a in hand for b in hand if a != b]
        if state.chopsticks[seat] and n >= 3:
            plays += [(a, b, c) for a in hand for b in hand if a != b for c in hand if c != a and c != b]
        return plays
    if n < 2 and state.controller >= 0:
        return []  # the dummy variant's last card is played for this player (R15)
    plays = list(map(SINGLES.__getitem__, hand))
    if state.chopsticks[seat] and n >= 2:
        plays += [(a, b) for a in hand for b in hand if a != b]
    return plays


def check_play(state: GameState, seat: int, play: object) -> Play:
    """Validate one seat's play without changing anything; returns it as a tuple.

    Raises :class:`InvalidPlayError` if it is not a well-formed play and
    :class:`IllegalPlayError` if it is one but the rules forbid it here.
    """
    rnd, turn = state.round, state.turn
    _check_seat(state, seat)
    if state.over:
        raise IllegalPlayError("the game is over", seat=seat, round=rnd, turn=turn, cards=play, rule="R13")
    deciding = state.deciding_seats()
    if seat not in deciding:
        raise InvalidPlayError(
            "this seat does not choose this turn (its last card is played for it)",
            seat=seat, round=rnd, turn=turn, cards=play, rule="R15" if state.controller >= 0 else "R6a",
        )
    if isinstance(play, list):
        play = tuple(play)
    if type(play) is not tuple or not all(type(c) is int for c in play):
        raise InvalidPlayError(
            f"a play is a list of card ids (integers), not {play!r}",
            seat=seat, round=rnd, turn=turn, cards=play, rule="R4",
        )
    controller = seat == state.controller
    most = 3 if controller else 2
    least = 2 if controller else 1
    if not least <= len(play) <= most:
        what = "one or two of your cards, then the dummy's card" if controller else "one card, or two with chopsticks"
        raise InvalidPlayError(
            f"a play names {what}; got {len(play)} ids {list(play)}",
            seat=seat, round=rnd, turn=turn, cards=play, rule="R15" if controller else "R4",
        )
    if len(set(play)) != len(play):
        raise InvalidPlayError(
            f"a card id is named twice in {list(play)}",
            seat=seat, round=rnd, turn=turn, cards=play, rule="R4",
        )
    hand = state.hands[seat]
    for c in play:
        if c not in hand:
            # Never name the kind of a card this seat cannot see (another seat's hand).
            exists = "" if 0 <= c < DECK_SIZE else " (no such card in this game)"
            raise IllegalPlayError(
                f"card {c}{exists} is not in this seat's hand {_describe(state, hand)}",
                seat=seat, round=rnd, turn=turn, cards=play, rule="R4",
            )
    own = len(play) - 1 if controller else len(play)
    if own == 2 and not state.chopsticks[seat]:
        raise IllegalPlayError(
            f"taking two cards {_describe(state, play[:2])} needs chopsticks already in the tableau",
            seat=seat, round=rnd, turn=turn, cards=play, rule="R8",
        )
    return play

def _describe(state: GameState, cards: Sequence[int]) -> str:
    return "[" + ", ".join(f"{c} {KINDS[state.kind_of[c]]}" for c in cards) + "]"


def _check_seat(state: GameState, seat: int) -> None:
    if type(seat) is not int or not 0 <= seat < len(state.hands):
        raise ValueError(f"seat must be an int from 0 to {len(state.hands) - 1}, not {seat!r}")
