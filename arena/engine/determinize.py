"""Determinization: a full game state that agrees with what one seat has seen.

A bot that searches needs a whole :class:`~arena.engine.state.GameState` to simulate
on, but a seat sees only its own hand and the public facts (RULES "What a bot may
know"). :func:`determinize` builds a state that agrees with all of that — every
tableau (wasabi included), puddings, scores, round, turn, passing direction, the
dummy's controller, hand sizes, the seat's own hand in its order, and the cards the
seat knows to be in other hands (what is left of the hands it held this round) —
and deals everything else (the rest of the other hands, the dummy's pile, the draw
pile) from the cards the seat has not seen, shuffled by the caller's generator.

It reads only what it is given, never a true state: the same view, knowledge and
generator state always give the same sample. Pure: no I/O, no global random.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from .cards import (
    CHOPSTICKS,
    DECK_COUNTS,
    DECK_SIZE,
    KIND_INDEX,
    KINDS,
    NIGIRI_VALUE,
    PUDDING,
    WASABI,
    WASABI_FACTOR,
)
from .plays import SINGLES
from .state import LEFT, RIGHT, GameConfig, GameState, Variant


class CardLike(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def card(self) -> str: ...


class TableauCardLike(CardLike, Protocol):
    @property
    def wasabi(self) -> int | None: ...


class SeatView(Protocol):
    """What :func:`determinize` reads: the fields that an engine
    :class:`~arena.engine.view.Observation` and the SDK's ``View`` share."""

    @property
    def seat(self) -> int: ...
    @property
    def players(self) -> int: ...
    @property
    def seats(self) -> int: ...
    @property
    def variant(self) -> str: ...
    @property
    def round(self) -> int: ...
    @property
    def turn(self) -> int: ...
    @property
    def direction(self) -> str: ...
    @property
    def controller(self) -> int | None: ...
    @property
    def hand(self) -> Sequence[CardLike]: ...
    @property
    def tableaus(self) -> Sequence[Sequence[TableauCardLike]]: ...
    @property
    def puddings(self) -> Sequence[int]: ...
    @property
    def scores(self) -> Sequence[int]: ...
    @property
    def hand_sizes(self) -> Sequence[int]: ...


def determinize(
    view: SeatView,
    rng: random.Random,
    *,
    known_hands: Mapping[int, Iterable[CardLike]] | None = None,
    unseen: Mapping[str, int] | None = None,
) -> GameState:
    """A state consistent with ``view`` and the seat's card counting, the unknown
    cards dealt at random from ``rng``; simulate on it with ``apply_turn`` and ``clone()``.

    ``view`` is an engine ``Observation`` or the SDK's ``View`` (same fields).
    ``known_hands`` maps a seat to the cards this seat knows are in that seat's hand
    now; ``unseen`` counts, by kind, the cards this seat has not seen this game
    (its hands, every tableau, every reveal). For an SDK ``View`` they default to
    ``view.known_hands()`` and ``view.unseen_counts()``. Otherwise ``known_hands``
    defaults to none known, and ``unseen`` to what the observation alone shows,
    which is only possible in round 1 (later, the cards of earlier rounds are
    not in an observation).

    What a caller may rely on: the seat's own hand keeps its ids and order (so
    ``legal_plays(state, view.seat)`` lists the same plays as the view); tableaus,
    known cards and their ids are the view's; every other card gets an id that the
    view does not use. The history is not rebuilt: the log starts empty, the
    discard holds the right kinds under made-up ids, ``seed`` is -1, and
    ``round_points`` holds the earlier rounds' totals (the scores) in its first
    entry, as an observation shows only totals.

    Raises ``ValueError``, naming the field, when the view and the knowledge do not
    fit together (or the game is over: there is nothing left to sample).
    """
    players, seats, me, rnd = view.players, view.seats, view.seat, view.round
    try:
        config = GameConfig(players, Variant(view.variant))
    except ValueError as exc:
        raise ValueError(f"determinize: {exc}") from None
    if seats != config.seats:
        raise ValueError(f"determinize: seats is {seats}, but {players} players in the {view.variant} variant sit at {config.seats}")
    if type(me) is not int or not 0 <= me < players:
        raise ValueError(f"determinize: seat must be a player's seat, 0 to {players - 1}, not {me!r}")
    if rnd not in (1, 2, 3):
        raise ValueError(f"determinize: round must be 1, 2 or 3, not {rnd!r}")
    sizes = list(view.hand_sizes)
    for name, values in (("hand_sizes", sizes), ("tableaus", view.tableaus), ("puddings", view.puddings), ("scores", view.scores)):
        if len(values) != seats:
            raise ValueError(f"determinize: {name} lists {len(values)} seats, expected {seats}")
    if not any(sizes):
        raise ValueError("determinize: the game is over (every hand is empty): nothing to sample")
    if len(view.hand) != sizes[me]:
        raise ValueError(f"determinize: the hand holds {len(view.hand)} cards but hand_sizes[{me}] is {sizes[me]}")
    dummy = config.variant is Variant.DUMMY
    controller = view.controller if dummy else -1
    if dummy and controller not in (0, 1):
        raise ValueError(f"determinize: the dummy variant needs the controller (0 or 1), not {controller!r}")
    if known_hands is None:
        method = getattr(view, "known_hands", None)
        known_hands = method() if callable(method) else {}
    if unseen is None:
        method = getattr(view, "unseen_counts", None)
        unseen = method() if callable(method) else None

    kind_of = [-1] * DECK_SIZE

    def place(card: CardLike, where: str) -> tuple[int, int]:
        cid, name = card.id, card.card
        if type(cid) is not int or not 0 <= cid < DECK_SIZE:
            raise ValueError(f"determinize: {where}: card id {cid!r} is not an id from 0 to {DECK_SIZE - 1}")
        if name not in KIND_INDEX:
            raise ValueError(f"determinize: {where}: card {cid} has unknown kind {name!r}")
        if kind_of[cid] >= 0:
            raise ValueError(f"determinize: {where}: card {cid} is already placed elsewhere in the view")
        kind = kind_of[cid] = KIND_INDEX[name]
        return cid, kind

    own = [place(c, f"seat {me}'s hand")[0] for c in view.hand]
    state = GameState.__new__(GameState)
    state.config = config
    state.seed = -1
    state.round, state.turn = rnd, view.turn
    state.direction = {"left": LEFT, "right": RIGHT}.get(view.direction, 0)
    if not state.direction:
        raise ValueError(f"determinize: direction must be 'left' or 'right', not {view.direction!r}")
    state.tableaus = [[] for _ in range(seats)]
    state.counts = [[0] * len(KINDS) for _ in range(seats)]
    state.nigiri_points = [0] * seats
    state.free_wasabi = [[] for _ in range(seats)]
    state.chopsticks = [[] for _ in range(seats)]
    state.wasabi_of = {}
    for s in range(seats):
        used: set[int] = set()
        for card in view.tableaus[s]:
            cid, kind = place(card, f"seat {s}'s tableau")
            state.tableaus[s].append(cid)
            state.counts[s][kind] += 1
            if kind == WASABI:
                state.free_wasabi[s].append(cid)
            elif kind == CHOPSTICKS:
                state.chopsticks[s].append(cid)
            elif NIGIRI_VALUE[kind]:
                w = card.wasabi  # type: ignore[attr-defined]
                if w is None:
                    state.nigiri_points[s] += NIGIRI_VALUE[kind]
                    continue
                if w not in state.free_wasabi[s] or w in used:
                    raise ValueError(f"determinize: seat {s}'s tableau: nigiri {cid} sits on {w}, not an earlier free wasabi there")
                used.add(w)
                state.wasabi_of[cid] = w
                state.nigiri_points[s] += WASABI_FACTOR * NIGIRI_VALUE[kind]
        state.free_wasabi[s] = [w for w in state.free_wasabi[s] if w not in used]

    known: list[list[int]] = [[] for _ in range(seats)]
    for s, cards in known_hands.items():
        if s == me or type(s) is not int or not 0 <= s < seats:
            raise ValueError(f"determinize: known_hands names seat {s!r}: expected another seat, 0 to {seats - 1}")
        known[s] = [place(c, f"known_hands[{s}]")[0] for c in cards]
        if len(known[s]) > sizes[s]:
            raise ValueError(f"determinize: known_hands[{s}] holds {len(known[s])} cards, but that hand has {sizes[s]}")

    in_round = sum(sizes) + sum(len(t) for t in state.tableaus)
    if in_round != seats * config.hand_size:
        raise ValueError(
            f"determinize: hands {sizes} and tableaus hold {in_round} cards; a round deals {seats * config.hand_size}"
        )
    kept = [p - c[PUDDING] for p, c in zip(view.puddings, state.counts, strict=True)]
    if min(kept) < 0:
        raise ValueError(f"determinize: puddings {list(view.puddings)} are fewer than the tableaus show")
    out_of_play = (rnd - 1) * seats * config.hand_size  # cards of earlier rounds: discarded or kept puddings
    pile_size = DECK_SIZE - rnd * seats * config.hand_size
    visible = [0] * len(KINDS)
    for k in kind_of:
        if k >= 0:
            visible[k] += 1
    if unseen is None:
        if out_of_play:
            raise ValueError(
                f"determinize: round {rnd}: pass unseen (the cards not seen this game, by kind); "
                "an observation does not show the cards of earlier rounds"
            )
        unseen = {name: DECK_COUNTS[k] - visible[k] for k, name in enumerate(KINDS)}
    unknown_kinds = [n for n in unseen if n not in KIND_INDEX]
    if unknown_kinds:
        raise ValueError(f"determinize: unseen names unknown kinds {unknown_kinds}")
    hidden = [unseen.get(name, 0) for name in KINDS]
    gone = [DECK_COUNTS[k] - visible[k] - hidden[k] for k in range(len(KINDS))]
    if min(hidden) < 0 or min(gone) < 0 or gone[PUDDING] < sum(kept) or sum(gone) != out_of_play:
        raise ValueError(
            f"determinize: the counts do not add up: {sum(visible)} cards in view and {sum(hidden)} unseen "
            f"leave {sum(gone)} for earlier rounds (expected {out_of_play}, with {sum(kept)} kept puddings); "
            f"unseen={dict(unseen)}"
        )

    # Cards the view does not show get the ids it does not use: first the past
    # (kept puddings, then the discard), then the unseen cards, whose kinds are shuffled.
    free = iter([c for c in range(DECK_SIZE) if kind_of[c] < 0])
    gone[PUDDING] -= sum(kept)
    state.kept_puddings = [[next(free) for _ in range(n)] for n in kept]
    for pile in state.kept_puddings:
        for c in pile:
            kind_of[c] = PUDDING
    state.discard = []
    for k, n in enumerate(gone):
        for _ in range(n):
            c = next(free)
            kind_of[c] = k
            state.discard.append(c)
    shuffled = [k for k, n in enumerate(hidden) for _ in range(n)]
    rng.shuffle(shuffled)
    deal = []
    for k in shuffled:
        c = next(free)
        kind_of[c] = k
        deal.append(c)
    state.hands = []
    for s in range(seats):
        if s == me:
            state.hands.append(own)
            continue
        missing = sizes[s] - len(known[s])
        state.hands.append(known[s] + deal[:missing])
        del deal[:missing]
    state.pile = deal
    state.singles = None if dummy else [list(map(SINGLES.__getitem__, hand)) for hand in state.hands]
    state.kind_of = kind_of
    state.scores = list(view.scores)
    state.round_points = [list(view.scores)] + [[0] * seats for _ in range(rnd - 2)] if rnd > 1 else []
    state.controller = controller
    state.log = []
    state.over = False
    state._result = None
    assert len(state.pile) == pile_size  # the count checks above make anything else impossible
    return state
