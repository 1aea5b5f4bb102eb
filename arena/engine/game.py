"""One playthrough of Sushi Go!: setup, legal plays and the application of a turn.

The state is mutable and cheap to :meth:`GameState.clone`. Inside, cards are
small ints (per-game ids) with a kind table, and every tableau keeps running
counts, so that a turn costs a few list operations and a round is scored from
counts. Nothing here does I/O, reads a clock or touches the global random
generator: all randomness comes from the seed given to :func:`new_game`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .cards import (
    CHOPSTICKS,
    DECK_COUNTS,
    DECK_SIZE,
    DUMMY_HAND_SIZE,
    HAND_SIZE,
    KINDS,
    MAKI3,
    NIGIRI_VALUE,
    PUDDING,
    ROUNDS,
    WASABI,
    WASABI_FACTOR,
)
from .errors import IllegalPlayError, InvalidPlayError
from .scoring import maki_points, maki_symbols, pudding_points, rank, set_points

# The kind order of cards.py puts the plain set cards (0..5) and the nigiri (6..8)
# before pudding, wasabi and chopsticks; the hot path relies on it.
MAKI3_KIND, PUDDING_KIND = MAKI3, PUDDING
assert MAKI3_KIND == 5 and PUDDING_KIND == 9 and WASABI > PUDDING and CHOPSTICKS > PUDDING

#: Stamped on every replay and game record: bump it whenever a rule's effect changes.
RULES_VERSION = "sushigo-rules/1.0"

#: A play names card ids in order. For the dummy's controller (R15) the last id
#: is the card given to the dummy: ``(own,) + (dummy,)`` or ``(own1, own2, dummy)``.
Play = tuple[int, ...]

LEFT, RIGHT = 1, -1


class Variant(StrEnum):
    STANDARD = "standard"  # every round passes left (R6)
    ALTERNATE = "alternate"  # rounds 1 and 3 pass left, round 2 right (R14)
    DUMMY = "dummy"  # two players and a dummy third seat (R15)


@dataclass(frozen=True, slots=True)
class GameConfig:
    """The static rules of a game: how many players and which variant."""

    players: int = 4
    variant: Variant = Variant.STANDARD

    def __post_init__(self) -> None:
        object.__setattr__(self, "variant", Variant(self.variant))
        if type(self.players) is not int or not 2 <= self.players <= 5:
            raise ValueError(f"players must be 2 to 5 (R2), not {self.players!r}")
        if self.variant is Variant.DUMMY and self.players != 2:
            raise ValueError(f"the dummy variant is for 2 players (R15), not {self.players}")

    @property
    def seats(self) -> int:
        """Seats at the table: the players, plus the dummy in that variant (its seat is last)."""
        return 3 if self.variant is Variant.DUMMY else self.players

    @property
    def hand_size(self) -> int:
        return DUMMY_HAND_SIZE if self.variant is Variant.DUMMY else HAND_SIZE[self.players]

    def direction(self, round: int) -> int:
        """Passing direction of a round (1-based): ``LEFT`` (+1) or ``RIGHT`` (-1) (R6, R14)."""
        if self.variant is Variant.ALTERNATE and round == 2:
            return RIGHT
        return LEFT


class GameState:
    """A game in progress. Read it through :func:`observe` and the properties below;
    change it only through :func:`apply_turn`."""

    __slots__ = (
        "config",
        "seed",
        "kind_of",
        "pile",
        "round",
        "turn",
        "direction",
        "hands",
        "tableaus",
        "counts",
        "nigiri_points",
        "free_wasabi",
        "chopsticks",
        "wasabi_of",
        "kept_puddings",
        "discard",
        "scores",
        "round_points",
        "controller",
        "log",
        "over",
        "_result",
    )

    config: GameConfig
    seed: int
    kind_of: list[int]  # card id -> kind
    pile: list[int]  # the draw pile, top first (R3)
    round: int  # 1..3
    turn: int  # 1.. within the round
    direction: int
    hands: list[list[int]]  # per table seat; the dummy's pile in that variant (top first)
    tableaus: list[list[int]]  # per table seat, in the order cards entered (R16)
    counts: list[list[int]]  # per table seat, per kind, what the tableau holds
    nigiri_points: list[int]  # per table seat, this round, wasabi included
    free_wasabi: list[list[int]]  # per table seat, empty wasabi, oldest first (R7)
    chopsticks: list[list[int]]  # per table seat, chopsticks in the tableau, oldest first
    wasabi_of: dict[int, int]  # nigiri id -> the wasabi it sits on, this round
    kept_puddings: list[list[int]]  # per table seat, puddings of finished rounds (R11)
    discard: list[int]
    scores: list[int]  # per table seat, points of finished rounds (pudding at the end)
    round_points: list[list[int]]  # one list per finished round
    controller: int  # the seat controlling the dummy this turn (R15); -1 otherwise
    log: list[tuple[Any, ...]]  # compact events; see arena.engine.view.events
    over: bool
    _result: GameResult | None

    # -- derived facts -------------------------------------------------------------
    @property
    def seats(self) -> int:
        return len(self.hands)

    @property
    def players(self) -> int:
        return self.config.players

    def kind(self, card: int) -> str:
        """The wire name of a card id."""
        return KINDS[self.kind_of[card]]

    def puddings(self) -> list[int]:
        """Puddings per table seat: kept from earlier rounds plus this round's tableau."""
        return [len(k) + c[PUDDING] for k, c in zip(self.kept_puddings, self.counts, strict=True)]

    def deciding_seats(self) -> list[int]:
        """The seats that choose this turn. Everyone in the standard game (the last
        card of a round is played for them, R6a); in the dummy variant the
        controller, and the other player while holding two or more cards (R15)."""
        if self.over:
            return []
        if self.controller < 0:
            return list(range(len(self.hands)))
        other = 1 - self.controller
        if len(self.hands[other]) >= 2:
            return [0, 1]
        return [self.controller]

    def clone(self) -> GameState:
        """An independent copy, for search. Costs a few list copies, no deep copy."""
        new = GameState.__new__(GameState)
        new.config = self.config
        new.seed = self.seed
        new.kind_of = self.kind_of  # never changes during a game: shared
        new.pile = self.pile[:]
        new.round = self.round
        new.turn = self.turn
        new.direction = self.direction
        new.hands = [h[:] for h in self.hands]
        new.tableaus = [t[:] for t in self.tableaus]
        new.counts = [c[:] for c in self.counts]
        new.nigiri_points = self.nigiri_points[:]
        new.free_wasabi = [w[:] for w in self.free_wasabi]
        new.chopsticks = [c[:] for c in self.chopsticks]
        new.wasabi_of = dict(self.wasabi_of)
        new.kept_puddings = [k[:] for k in self.kept_puddings]
        new.discard = self.discard[:]
        new.scores = self.scores[:]
        new.round_points = [r[:] for r in self.round_points]
        new.controller = self.controller
        new.log = self.log[:]
        new.over = self.over
        new._result = self._result
        return new

    def __repr__(self) -> str:
        status = "over" if self.over else f"round {self.round} turn {self.turn}"
        return (
            f"<GameState {self.config.players}p {self.config.variant.value} "
            f"seed={self.seed} {status}>"
        )


@dataclass(frozen=True, slots=True)
class GameResult:
    """The outcome (R12–R13), per table seat. In the dummy variant the dummy is the
    last seat: it is scored like a player but can win nothing, so its rank is
    always ``players + 1`` and the real players are ranked between themselves."""

    scores: tuple[int, ...]  # totals, pudding included
    puddings: tuple[int, ...]
    pudding_points: tuple[int, ...]
    round_points: tuple[tuple[int, ...], ...]
    ranks: tuple[int, ...]

    @property
    def winners(self) -> tuple[int, ...]:
        return tuple(i for i, r in enumerate(self.ranks) if r == 1)


_CANONICAL = tuple(k for k, n in enumerate(DECK_COUNTS) for _ in range(n))  # kind of printed card i
_IDS = range(DECK_SIZE)
_SINGLES: tuple[Play, ...] = tuple((c,) for c in _IDS)  # shared one-card plays: no allocation


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
    keys = [rnd() for _ in range(2 * DECK_SIZE)]
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


def legal_plays(state: GameState, seat: int) -> list[Play]:
    """Every legal play of ``seat`` this turn, in the fixed order of R16: single
    cards in hand order, then ordered pairs (i, j), i != j, by i then j (pairs
    only with chopsticks in the tableau, R8).

    For the dummy's controller (R15) each play ends with the dummy's card:
    ``(own, dummy)`` for every ordered pair of hand positions, then
    ``(own1, own2, dummy)`` for every ordered triple when chopsticks allow it.
    An empty list means the seat does not decide this turn.
    """
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
    plays = list(map(_SINGLES.__getitem__, hand))
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
    chop = state.chopsticks
    controller = state.controller
    checked: list[Play] = []
    if controller < 0:
        # Fast path for the common case: one card that is in the hand.
        for seat in range(players):
            p = plays[seat]
            if type(p) is tuple and len(p) == 1 and type(p[0]) is int and p[0] in hands[seat] or type(p) is tuple and len(p) == 2 and chop[seat] and p[0] != p[1] and p[0] in hands[seat] and p[1] in hands[seat] and type(p[0]) is int and type(p[1]) is int:
                checked.append(p)
            else:
                checked.append(check_play(state, seat, p))
        _reveal_standard(state, checked)
        return
    deciding = state.deciding_seats()
    for seat in range(players):
        p = plays[seat]
        if seat in deciding:
            checked.append(check_play(state, seat, p))
        elif p is not None:
            check_play(state, seat, p)  # raises: this seat does not decide
        else:
            checked.append(tuple(hands[seat]))  # the last card, played for it
    _reveal(state, checked)


# -- internals -----------------------------------------------------------------------


def _reveal_standard(state: GameState, plays: list[Play]) -> None:
    """The hot path of :func:`_reveal` for games without a dummy (same effects)."""
    hands = state.hands
    tableaus = state.tableaus
    counts = state.counts
    kind_of = state.kind_of
    attached: list[tuple[int, int, int]] = []
    returned: list[tuple[int, int]] | None = None
    for seat, play in enumerate(plays):
        hand = hands[seat]
        if len(play) == 1:
            c = play[0]
            hand.remove(c)
            kind = kind_of[c]
            if kind < PUDDING_KIND:  # no side effects beyond the count: the common case
                tableaus[seat].append(c)
                counts[seat][kind] += 1
                if kind > MAKI3_KIND:
                    _nigiri(state, seat, c, kind, attached)
            else:
                _enter(state, seat, c, kind, attached)
        else:
            for c in play:
                hand.remove(c)
                _enter(state, seat, c, kind_of[c], attached)
            hand.append(_return_chopsticks(state, seat))
            if returned is None:
                returned = []
            returned.append((seat, hand[-1]))
    state.log.append(("reveal", state.round, state.turn, tuple(plays), returned, attached or None, -1))
    state.turn += 1
    _pass_hands(state)


def _return_chopsticks(state: GameState, seat: int) -> int:
    """After a two-card take, the oldest chopsticks leave the tableau (R8); the caller
    puts them at the end of the hand passed on (R16)."""
    c = state.chopsticks[seat].pop(0)
    state.tableaus[seat].remove(c)
    state.counts[seat][CHOPSTICKS] -= 1
    return c


def _pass_hands(state: GameState) -> None:
    """Pass every hand one seat on (R6, R14); with one card left, play it (R6a)."""
    hands = state.hands
    if state.direction == 1:
        hands.insert(0, hands.pop())  # seat i's hand goes to seat i+1
    else:
        hands.append(hands.pop(0))
    if len(hands[0]) == 1:
        kind_of = state.kind_of
        last = tuple([h.pop() for h in hands])
        on_wasabi: list[tuple[int, int, int]] = []
        for seat, c in enumerate(last):
            _enter(state, seat, c, kind_of[c], on_wasabi)
        state.log.append(("last", state.round, state.turn, last, on_wasabi or None))
        _end_round(state)


def _reveal(state: GameState, plays: list[Play]) -> None:
    """Reveal (R5): every seat's cards enter its tableau in the order chosen."""
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
    if controller >= 0:
        dummy_card = plays[controller][-1]
        _enter(state, 2, dummy_card, kind_of[dummy_card], attached)
        revealed.append((dummy_card,))
    state.log.append(("reveal", state.round, state.turn, tuple(revealed), returned, attached or None, controller))
    state.turn += 1
    if controller >= 0:
        hands[0], hands[1] = hands[1], hands[0]  # the players swap hands; the pile stays (R15)
        state.controller = 1 - controller
        if hands[0]:
            _draw_for_controller(state)
        else:
            _end_round(state)
        return
    _pass_hands(state)


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
    symbols = [maki_symbols(c) for c in counts]
    maki = maki_points(symbols)
    points = [set_points(counts[s], state.nigiri_points[s]) + maki[s] for s in range(seats)]
    for s in range(seats):
        state.scores[s] += points[s]
    state.round_points.append(points)
    kind_of = state.kind_of
    discard = state.discard
    for s in range(seats):
        if counts[s][PUDDING]:
            for c in state.tableaus[s]:
                if kind_of[c] == PUDDING:
                    state.kept_puddings[s].append(c)
                else:
                    discard.append(c)
        else:
            discard += state.tableaus[s]
        state.tableaus[s] = []
        state.counts[s] = [0] * len(KINDS)
        state.free_wasabi[s] = []
        state.chopsticks[s] = []
        state.nigiri_points[s] = 0
    state.wasabi_of = {}
    state.log.append(("scored", state.round, tuple(points), tuple(symbols), tuple(maki), tuple(state.scores)))
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


def _describe(state: GameState, cards: Sequence[int]) -> str:
    return "[" + ", ".join(f"{c} {KINDS[state.kind_of[c]]}" for c in cards) + "]"


def _check_seat(state: GameState, seat: int) -> None:
    if type(seat) is not int or not 0 <= seat < len(state.hands):
        raise ValueError(f"seat must be an int from 0 to {len(state.hands) - 1}, not {seat!r}")
