"""One playthrough of Sushi Go!: setup, the application of a turn, the end of a round
and of the game.

The state (:mod:`arena.engine.state`) is mutable and cheap to clone. Inside, cards
are small ints (per-game ids) with a kind table, and every tableau keeps running
counts, so that a turn costs a few list operations and a round is scored from
counts. Nothing here does I/O, reads a clock or touches the global random
generator: all randomness comes from the seed given to :func:`new_game`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import repeat
from operator import call

from .cards import (
    CHOPSTICKS,
    DECK_COUNTS,
    DECK_SIZE,
    KINDS,
    MAKI3,
    NIGIRI_VALUE,
    PUDDING,
    ROUNDS,
    WASABI,
    WASABI_FACTOR,
)
from .errors import IllegalPlayError, InvalidPlayError
from .plays import SINGLES, check_play
from .scoring import pudding_points, rank, round_points
from .state import LEFT, GameConfig, GameResult, GameState, Play, Variant

# The kind order of cards.py puts the plain set cards (0..5) and the nigiri (6..8)
# before pudding, wasabi and chopsticks; the hot path relies on it.
MAKI3_KIND, PUDDING_KIND = MAKI3, PUDDING
assert MAKI3_KIND == 5 and PUDDING_KIND == 9 and WASABI > PUDDING and CHOPSTICKS > PUDDING

_CANONICAL = tuple(k for k, n in enumerate(DECK_COUNTS) for _ in range(n))  # kind of printed card i
_IDS = range(DECK_SIZE)


def new_game(config: GameConfig, seed: int, *, ids: int | None = None) -> GameState:
    """Shuffle the deck once from ``seed`` and deal round 1 (R2, R3).

    Card ids are a random permutation of 0..107 drawn from the same seeded
    generator, so an id says nothing about a card's kind or deck position.

    ``ids`` (a non-negative int) relabels the cards: the deal (the kinds in pile
    order, hence every hand of every round) is exactly the one of ``seed``, but the
    ids are a permutation drawn from ``ids`` alone, so two games of one deal with
    different ``ids`` show the same cards under unrelated ids. Without it, the ids
    are those of ``seed``.
    """
    if type(seed) is not int or seed < 0:
        raise ValueError(f"seed must be a non-negative int, not {seed!r}")
    if ids is not None and (type(ids) is not int or ids < 0):
        raise ValueError(f"ids must be a non-negative int or None, not {ids!r}")
    # Two uniform random permutations from one seeded stream, by sorting random
    # keys (stable, so even a tie is deterministic): card id j is the printed card
    # _CANONICAL[order[j]], and the pile is the ids in an independent random order.
    rnd = random.Random(seed).random
    keys = list(map(call, repeat(rnd, 2 * DECK_SIZE)))  # [rnd() for ...], without a Python loop
    order = sorted(_IDS, key=keys.__getitem__)
    kind_of = [_CANONICAL[i] for i in order]
    pile = sorted(_IDS, key=keys[DECK_SIZE:].__getitem__)
    if ids is not None:
        # Card c of the deal above becomes id relabel[c]: a uniform permutation from
        # its own generator (independent of ``seed``), so the kinds in pile order are
        # unchanged and no id of one labelling says anything about another's.
        relabel = random.Random(ids).sample(_IDS, DECK_SIZE)
        relabelled = [0] * DECK_SIZE
        for c, k in enumerate(kind_of):
            relabelled[relabel[c]] = k
        kind_of = relabelled
        pile = [relabel[c] for c in pile]

    seats = config.seats
    state = GameState.__new__(GameState)
    state.config = config
    state.seed = seed
    state.kind_of = kind_of
    state.pile = pile
    state.round = 0
    state.turn = 0
    state.direction = LEFT
    state.hands = [[] for _ in range(seats)]
    state.singles = None if config.variant is Variant.DUMMY else [[] for _ in range(seats)]
    state.tableaus = [[] for _ in range(seats)]
    state.counts = [[0] * len(KINDS) for _ in range(seats)]
    state.nigiri_points = [0] * seats
    state.free_wasabi = [[] for _ in range(seats)]
    state.chopsticks = [[] for _ in range(seats)]
    state.wasabi_of = {}
    state.kept_puddings = [[] for _ in range(seats)]
    state.discard = []
    state.scores = [0] * seats
    state.round_points = []
    state.controller = 0 if config.variant is Variant.DUMMY else -1
    state.log = []
    state.over = False
    state._result = None
    _deal(state)
    return state

def apply_turn(state: GameState, plays: Sequence[Play | None]) -> None:
    """Apply one turn's simultaneous choices (R4–R8, R15), then pass the hands.

    ``plays[seat]`` is that seat's play for every player seat (the dummy's card
    is part of its controller's play); a seat that does not decide this turn
    gets ``None``. Every play is checked before anything changes: on a
    :class:`~arena.engine.errors.PlayError` the state is untouched. When the
    hands are down to one card, those cards are played for everyone (R6a), the
    round is scored (R9–R11) and the next is dealt, or the game ends (R12–R13).
    """
    if state.over:
        raise IllegalPlayError("the game is over", seat=None, round=state.round, turn=state.turn, cards=plays, rule="R13")
    players = state.config.players
    if type(plays) is not list and type(plays) is not tuple and (
        not isinstance(plays, Sequence) or isinstance(plays, str | bytes)
    ):
        raise InvalidPlayError(
            f"a turn is a sequence of one play per player seat, not {type(plays).__name__}",
            seat=None, round=state.round, turn=state.turn, cards=plays, rule="R4",
        )
    if len(plays) != players:
        raise InvalidPlayError(
            f"expected one entry per player seat ({players}), got {len(plays)}",
            seat=None, round=state.round, turn=state.turn, cards=plays, rule="R4",
        )
    hands = state.hands
    controller = state.controller
    if controller < 0:
        # Fast path for the common case: every play one card in the hand, or two with
        # chopsticks in the tableau; the plays are then used as given, without a copy.
        chop = state.chopsticks
        seat = 0
        for p in plays:
            if type(p) is not tuple or not (
                len(p) == 1 and type(p[0]) is int and p[0] in hands[seat]
                or len(p) == 2 and chop[seat] and p[0] != p[1] and p[0] in hands[seat] and p[1] in hands[seat]
                and type(p[0]) is int and type(p[1]) is int
            ):
                break
            seat += 1
        else:
            _reveal_standard(state, plays if type(plays) is tuple else tuple(plays))
            return
        _reveal_standard(state, tuple([check_play(state, seat, p) for seat, p in enumerate(plays)]))
        return
    checked: list[Play] = []
    deciding = state.deciding_seats()
    for seat in range(players):
        p = plays[seat]
        if seat in deciding:
            checked.append(check_play(state, seat, p))
        elif p is not None:
            check_play(state, seat, p)  # raises: this seat does not decide
        else:
            checked.append(tuple(hands[seat]))  # the last card, played for it
    _reveal_dummy(state, checked)


# -- internals -----------------------------------------------------------------------


def _reveal_standard(state: GameState, plays: tuple[Play, ...]) -> None:
    """The turn of a game without a dummy: the reveal (R5, R7, R8), the pass (R6, R14) and the
    last cards (R6a), with the common card kinds handled inline."""
    hands = state.hands
    tableaus = state.tableaus
    counts = state.counts
    kind_of = state.kind_of
    singles = state.singles
    attached: list[tuple[int, int, int]] | None = None
    returned: list[tuple[int, int]] | None = None
    seat = 0
    for play in plays:
        hand = hands[seat]
        if len(play) == 1:
            c = play[0]
            hand.remove(c)
            singles[seat].remove(play)
            kind = kind_of[c]
            tableaus[seat].append(c)
            counts[seat][kind] += 1
            if kind > MAKI3_KIND:  # a nigiri (R7), pudding, wasabi or chopsticks
                if kind < PUDDING_KIND:
                    free = state.free_wasabi[seat]
                    if free:
                        wasabi = free.pop(0)
                        state.wasabi_of[c] = wasabi
                        state.nigiri_points[seat] += WASABI_FACTOR * NIGIRI_VALUE[kind]
                        if attached is None:
                            attached = []
                        attached.append((seat, c, wasabi))
                    else:
                        state.nigiri_points[seat] += NIGIRI_VALUE[kind]
                elif kind == WASABI:
                    state.free_wasabi[seat].append(c)
                elif kind == CHOPSTICKS:
                    state.chopsticks[seat].append(c)
        else:
            if attached is None:
                attached = []
            own = singles[seat]
            for c in play:
                hand.remove(c)
                own.remove(SINGLES[c])
                _enter(state, seat, c, kind_of[c], attached)
            c = _return_chopsticks(state, seat)
            hand.append(c)
            own.append(SINGLES[c])
            if returned is None:
                returned = []
            returned.append((seat, hand[-1]))
        seat += 1
    state.log.append(("reveal", state.round, state.turn, plays, returned, attached or None, -1))
    state.turn += 1
    # Pass the hands (R6, R14), their one-card plays with them; with one card left, play it (R6a).
    if state.direction == 1:
        hands.insert(0, hands.pop())  # seat i's hand goes to seat i+1
        singles.insert(0, singles.pop())
    else:
        hands.append(hands.pop(0))
        singles.append(singles.pop(0))
    if len(hands[0]) == 1:
        _play_last_cards(state)


def _return_chopsticks(state: GameState, seat: int) -> int:
    """After a two-card take, the oldest chopsticks leave the tableau (R8); the caller
    puts them at the end of the hand passed on (R16)."""
    c = state.chopsticks[seat].pop(0)
    state.tableaus[seat].remove(c)
    state.counts[seat][CHOPSTICKS] -= 1
    return c


def _play_last_cards(state: GameState) -> None:
    """Every seat's last card enters its tableau (R6a), then the round ends."""
    kind_of = state.kind_of
    last = tuple([h.pop() for h in state.hands])
    if state.singles is not None:
        state.singles = [[] for _ in last]
    on_wasabi: list[tuple[int, int, int]] = []
    for seat, c in enumerate(last):
        _enter(state, seat, c, kind_of[c], on_wasabi)
    state.log.append(("last", state.round, state.turn, last, on_wasabi or None))
    _end_round(state)


def _reveal_dummy(state: GameState, plays: list[Play]) -> None:
    """The turn of the dummy variant: the reveal (R5), the dummy's card (R15), the
    players' swap of hands and the controller's draw (R15)."""
    hands = state.hands
    kind_of = state.kind_of
    controller = state.controller
    returned: list[tuple[int, int]] | None = None
    attached: list[tuple[int, int, int]] = []
    revealed: list[Play] = []
    for seat, play in enumerate(plays):
        hand = hands[seat]
        own = play
        if seat == controller:
            own = play[:-1]
            dummy_card = play[-1]
            hand.remove(dummy_card)
        for c in own:
            hand.remove(c)
            kind = kind_of[c]
            if kind < PUDDING_KIND:  # no side effects beyond the count: the common case
                state.tableaus[seat].append(c)
                state.counts[seat][kind] += 1
                if kind > MAKI3_KIND:
                    _nigiri(state, seat, c, kind, attached)
            else:
                _enter(state, seat, c, kind, attached)
        if len(own) == 2:
            c = _return_chopsticks(state, seat)
            hand.append(c)
            if returned is None:
                returned = []
            returned.append((seat, c))
        revealed.append(own)
    dummy_card = plays[controller][-1]
    _enter(state, 2, dummy_card, kind_of[dummy_card], attached)
    revealed.append((dummy_card,))
    state.log.append(("reveal", state.round, state.turn, tuple(revealed), returned, attached or None, controller))
    state.turn += 1
    hands[0], hands[1] = hands[1], hands[0]  # the players swap hands; the pile stays (R15)
    state.controller = 1 - controller
    if hands[0]:
        _draw_for_controller(state)
    else:
        _end_round(state)


def _nigiri(state: GameState, seat: int, card: int, kind: int, attached: list[tuple[int, int, int]]) -> None:
    """Score a nigiri that just entered a tableau, on the oldest empty wasabi if any (R7)."""
    value = NIGIRI_VALUE[kind]
    free = state.free_wasabi[seat]
    if free:
        wasabi = free.pop(0)
        state.wasabi_of[card] = wasabi
        state.nigiri_points[seat] += WASABI_FACTOR * value
        attached.append((seat, card, wasabi))
    else:
        state.nigiri_points[seat] += value


def _enter(state: GameState, seat: int, card: int, kind: int, attached: list[tuple[int, int, int]]) -> None:
    """A card enters a tableau (R5), with wasabi (R7) and chopsticks bookkeeping."""
    state.tableaus[seat].append(card)
    state.counts[seat][kind] += 1
    if NIGIRI_VALUE[kind]:
        _nigiri(state, seat, card, kind, attached)
    elif kind == WASABI:
        state.free_wasabi[seat].append(card)
    elif kind == CHOPSTICKS:
        state.chopsticks[seat].append(card)


def _deal(state: GameState) -> None:
    """Start the next round: deal from the top of the one pile (R3)."""
    state.round += 1
    state.turn = 1
    state.direction = state.config.direction(state.round)
    size = state.config.hand_size
    pile = state.pile
    for seat in range(len(state.hands)):
        state.hands[seat] = pile[:size]
        del pile[:size]
    if state.singles is not None:
        single = SINGLES.__getitem__
        state.singles = [list(map(single, hand)) for hand in state.hands]
    state.log.append(("round", state.round, state.direction, size))
    if state.controller >= 0:
        _draw_for_controller(state)


def _draw_for_controller(state: GameState) -> None:
    """The controller draws the top card of the dummy pile into their hand (R15)."""
    card = state.hands[2].pop(0)
    state.hands[state.controller].append(card)


def _end_round(state: GameState) -> None:
    """Score the round (R9, R10), discard all but pudding (R11), deal or end (R12)."""
    seats = len(state.hands)
    counts = state.counts
    points, symbols, maki = round_points(counts, state.nigiri_points)
    scores = state.scores
    for s in range(seats):
        scores[s] += points[s]
    state.round_points.append(points)
    kind_of = state.kind_of
    discard = state.discard
    s = 0
    for tableau in state.tableaus:
        if counts[s][PUDDING]:
            for c in tableau:
                if kind_of[c] == PUDDING:
                    state.kept_puddings[s].append(c)
                else:
                    discard.append(c)
        else:
            discard += tableau
        s += 1
    state.tableaus = [[] for _ in range(seats)]
    state.counts = [[0] * len(KINDS) for _ in range(seats)]
    state.free_wasabi = [[] for _ in range(seats)]
    state.chopsticks = [[] for _ in range(seats)]
    state.nigiri_points = [0] * seats
    state.wasabi_of = {}
    state.log.append(("scored", state.round, tuple(points), tuple(symbols), tuple(maki), tuple(scores)))
    if state.round < ROUNDS:
        _deal(state)
        return
    _end_game(state)


def _end_game(state: GameState) -> None:
    puddings = [len(k) for k in state.kept_puddings]
    penalty = state.config.seats > 2  # two players: no penalty; the dummy counts as a seat (R12, R15)
    extra = pudding_points(puddings, penalty=penalty)
    scores = [s + e for s, e in zip(state.scores, extra, strict=True)]
    state.scores = scores
    players = state.config.players
    ranks = rank(scores[:players], puddings[:players]) + [players + 1] * (len(scores) - players)
    state._result = GameResult(
        scores=tuple(scores),
        puddings=tuple(puddings),
        pudding_points=tuple(extra),
        round_points=tuple(tuple(r) for r in state.round_points),
        ranks=tuple(ranks),
    )
    state.over = True
    state.log.append(("over", tuple(extra), tuple(scores), tuple(puddings), tuple(ranks)))


def result(state: GameState) -> GameResult:
    """The final result. Raises ``ValueError`` if the game is not over."""
    if state._result is None:
        raise ValueError(f"the game is not over ({state!r})")
    return state._result
