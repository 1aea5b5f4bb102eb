"""The fixed-size observation and the discrete actions of the environments.

Everything here reads an engine :class:`~arena.engine.Observation` (what
:func:`arena.engine.observe` lets one seat see) and the :class:`SeatMemory` built from
that seat's earlier observations, never a game state: an observation cannot depend on a
card the seat has not seen. docs/research.md documents every field.

Actions are by card kind, not by card id (cards of one kind are interchangeable in
every rule): a single card, an ordered chopsticks pair (the order matters for wasabi,
R7a), the dummy's controller's (own, dummy) pair and (own, own, dummy) triple (R15),
and "no decision" for a seat whose card is played for it this turn. An action stands
for the first legal play (R16 order) whose cards have those kinds.
"""

from __future__ import annotations

import numpy as np

from arena.engine import DECK_COUNTS, KIND_INDEX, KINDS, Observation

K = len(DECK_COUNTS)  # 12 kinds, in the engine's order (RULES R1)
MAX_SEATS = 5
WASABI = KIND_INDEX["wasabi"]

# -- actions -------------------------------------------------------------------------
SINGLE = 0  # + kind
PAIR = SINGLE + K  # + a*K + b: chopsticks, kinds a then b
DUMMY_PAIR = PAIR + K * K  # + own*K + dummy
DUMMY_TRIPLE = DUMMY_PAIR + K * K  # + (a*K + b)*K + dummy
NO_DECISION = DUMMY_TRIPLE + K * K * K
N_ACTIONS = NO_DECISION + 1  # 2029


def action_of(kinds: tuple[int, ...], dummy: bool) -> int:
    """The action index of a play whose cards have ``kinds`` (the dummy's card last
    when ``dummy``)."""
    if dummy:
        if len(kinds) == 2:
            return DUMMY_PAIR + kinds[0] * K + kinds[1]
        return DUMMY_TRIPLE + (kinds[0] * K + kinds[1]) * K + kinds[2]
    if len(kinds) == 1:
        return SINGLE + kinds[0]
    return PAIR + kinds[0] * K + kinds[1]


def describe_action(action: int) -> str:
    """An action in words, for error messages: ``"squid_nigiri"``, ``"wasabi+squid_nigiri"``..."""
    a = int(action)
    if not 0 <= a < N_ACTIONS:
        return f"{a} (not an action: 0 to {N_ACTIONS - 1})"
    if a == NO_DECISION:
        return "no decision"
    if a >= DUMMY_TRIPLE:
        r = a - DUMMY_TRIPLE
        return f"{KINDS[r // (K * K)]}+{KINDS[r // K % K]}, dummy {KINDS[r % K]}"
    if a >= DUMMY_PAIR:
        r = a - DUMMY_PAIR
        return f"{KINDS[r // K]}, dummy {KINDS[r % K]}"
    if a >= PAIR:
        r = a - PAIR
        return f"{KINDS[r // K]}+{KINDS[r % K]}"
    return KINDS[a]


def legal_actions(obs: Observation) -> dict[int, tuple[int, ...]]:
    """Each legal action of the seat, with the play it stands for (the first legal play,
    in R16 order, with those kinds). Empty when the seat does not decide this turn."""
    index = KIND_INDEX
    kind_of = {c.id: index[c.card] for c in obs.hand}
    out: dict[int, tuple[int, ...]] = {}
    dummy = obs.dummy
    for play in obs.legal:
        if len(play) == 1:  # a single card: its kind is its action (SINGLE is 0)
            a = kind_of[play[0]]
        else:
            a = action_of(tuple(map(kind_of.__getitem__, play)), dummy)
        if a not in out:
            out[a] = tuple(play)
    return out


def action_mask(actions: dict[int, tuple[int, ...]]) -> np.ndarray:
    """1 for every legal action, 0 elsewhere; a seat that does not decide has only
    ``NO_DECISION``, so a mask is never empty."""
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    if actions:
        mask[list(actions)] = 1
    else:
        mask[NO_DECISION] = 1
    return mask


# -- observations ----------------------------------------------------------------------
class SeatMemory:
    """What one seat has seen this game: the kind of every card id that was in its hand
    or in a tableau when it looked (legal card counting, RULES "What a bot may know").
    Fed with that seat's observations at its decisions, in order: exactly the acts a bot
    of that seat receives, so that a bot's memory (arena.env.agent) is the same."""

    __slots__ = ("seen", "counts")

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}
        self.counts = [0] * K  # per kind, len(seen) split by kind

    def update(self, obs: Observation) -> None:
        seen, counts = self.seen, self.counts
        for cards in (obs.hand, *obs.tableaus):
            for c in cards:
                if c.id not in seen:
                    k = seen[c.id] = KIND_INDEX[c.card]
                    counts[k] += 1

    def seen_counts(self, obs: Observation) -> list[int]:
        """Per kind, the cards seen so far, those ``obs`` shows included."""
        seen, counts = self.seen, self.counts[:]
        extra: set[int] = set()
        for cards in (obs.hand, *obs.tableaus):
            for c in cards:
                if c.id not in seen and c.id not in extra:
                    extra.add(c.id)
                    counts[KIND_INDEX[c.card]] += 1
        return counts


#: The observation vector's fields in order: (name, length, low, high). Seat slots are
#: relative: slot 0 is the observing seat, slot i the seat i places to its left
#: (seat + i mod seats); slots past the table's seats are 0.
FIELDS: tuple[tuple[str, int, float, float], ...] = (
    ("hand", K, 0, 11),  # own hand, cards per kind
    ("tableau", MAX_SEATS * K, 0, 20),  # per slot, cards per kind in the tableau this round
    ("free_wasabi", MAX_SEATS, 0, 6),  # per slot, wasabi with no nigiri on it yet
    ("puddings", MAX_SEATS, 0, 10),  # per slot, puddings kept so far (this round's included)
    ("scores", MAX_SEATS, -20, 250),  # per slot, points of finished rounds (pudding at the end)
    ("hand_sizes", MAX_SEATS, 0, 11),  # per slot, cards in hand (the dummy's pile at its slot)
    ("present", MAX_SEATS, 0, 1),  # per slot, 1 if a seat sits there
    ("is_dummy", MAX_SEATS, 0, 1),  # per slot, 1 for the dummy's seat (R15)
    ("round", 3, 0, 1),  # one-hot, rounds 1..3
    ("turn", 1, 0, 11),  # turn within the round, from 1
    ("direction", 1, -1, 1),  # +1 hands pass left this round, -1 right (R14)
    ("controls_dummy", 1, 0, 1),  # 1 if this seat gives the dummy a card this turn
    ("deciding", 1, 0, 1),  # 1 if this seat chooses this turn
    ("seen", K, 0, 26),  # per kind, cards this seat has seen this game (its hands, tableaus)
    ("unseen", K, 0, 14),  # per kind, the deck's count minus seen: still unseen
)
OBS_SIZE = sum(n for _, n, _, _ in FIELDS)
OBS_LOW = np.concatenate([np.full(n, lo, dtype=np.float32) for _, n, lo, _ in FIELDS])
OBS_HIGH = np.concatenate([np.full(n, hi, dtype=np.float32) for _, n, _, hi in FIELDS])
OFFSETS = {}
_at = 0
for _name, _n, _, _ in FIELDS:
    OFFSETS[_name] = _at
    _at += _n


def encode(obs: Observation, memory: SeatMemory) -> np.ndarray:
    """The observation vector of ``obs`` (float32, length :data:`OBS_SIZE`) for a seat
    that remembers ``memory`` (its earlier decisions' observations). Values past a
    field's bounds (a score over 250) are clipped to them."""
    v = [0.0] * OBS_SIZE
    index = KIND_INDEX
    at = _HAND
    for c in obs.hand:
        v[at + index[c.card]] += 1
    seats, me = obs.seats, obs.seat
    dummy_seat = obs.players if obs.variant == "dummy" else -1
    tableaus, puddings, scores, sizes = obs.tableaus, obs.puddings, obs.scores, obs.hand_sizes
    for slot in range(seats):
        s = (me + slot) % seats
        base = _TABLEAU + slot * K
        on_wasabi = 0
        wasabi = 0
        for c in tableaus[s]:
            k = index[c.card]
            v[base + k] += 1
            if k == WASABI:
                wasabi += 1
            elif c.wasabi is not None:
                on_wasabi += 1
        v[_FREE + slot] = wasabi - on_wasabi
        v[_PUDDINGS + slot] = puddings[s]
        v[_SCORES + slot] = min(max(scores[s], _SCORE_LOW), _SCORE_HIGH)
        v[_SIZES + slot] = sizes[s]
        v[_PRESENT + slot] = 1
        if s == dummy_seat:
            v[_IS_DUMMY + slot] = 1
    if 1 <= obs.round <= 3:
        v[_ROUND + obs.round - 1] = 1
    v[_TURN] = min(obs.turn, 11)
    v[_DIRECTION] = 1 if obs.direction == "left" else -1
    v[_CONTROLS] = 1 if obs.dummy else 0
    v[_DECIDING] = 1 if obs.legal else 0
    seen = memory.seen_counts(obs)
    v[_SEEN : _SEEN + K] = seen
    v[_UNSEEN : _UNSEEN + K] = [d - n for d, n in zip(DECK_COUNTS, seen, strict=True)]
    return np.array(v, dtype=np.float32)


_HAND, _TABLEAU, _FREE = OFFSETS["hand"], OFFSETS["tableau"], OFFSETS["free_wasabi"]
_PUDDINGS, _SCORES, _SIZES = OFFSETS["puddings"], OFFSETS["scores"], OFFSETS["hand_sizes"]
_PRESENT, _IS_DUMMY, _ROUND, _TURN = OFFSETS["present"], OFFSETS["is_dummy"], OFFSETS["round"], OFFSETS["turn"]
_DIRECTION, _CONTROLS, _DECIDING = OFFSETS["direction"], OFFSETS["controls_dummy"], OFFSETS["deciding"]
_SEEN, _UNSEEN = OFFSETS["seen"], OFFSETS["unseen"]
_SCORE_LOW, _SCORE_HIGH = next((lo, hi) for name, _n, lo, hi in FIELDS if name == "scores")
