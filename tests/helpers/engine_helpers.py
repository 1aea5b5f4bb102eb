"""Helpers shared by the engine tests: stacked deals, scripted games, snapshots, and a
second, independent scorer written from docs/RULES.md (it never imports
``arena.engine.scoring``), so the engine's results can be checked against it.

Stacking works on the public state of a fresh game: ``new_game`` deals from the top
of one shuffled pile (R3), so the order in which it dealt is known. Rather than
moving card ids around, a stacked game gives the dealt positions the kinds a test
asks for by rewriting ``state.kind_of`` (a permutation of the same 108 kinds), so
hands, pile and ids stay exactly as the engine dealt them and the deck stays whole.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Sequence

from arena.engine import (
    DECK_COUNTS,
    KINDS,
    GameConfig,
    GameState,
    Variant,
    apply_turn,
    legal_plays,
    new_game,
)

KIND = {name: k for k, name in enumerate(KINDS)}

# -- the rules, restated independently from RULES.md (R1, R7, R10, R12, R13) ---------

TEMPURA_PAIR = 5
SASHIMI_TRIPLE = 10
DUMPLINGS = {0: 0, 1: 1, 2: 3, 3: 6, 4: 10}  # 5 or more: 15
NIGIRI = {"salmon_nigiri": 2, "squid_nigiri": 3, "egg_nigiri": 1}
MAKI = {"maki1": 1, "maki2": 2, "maki3": 3}
EXPECTED_DECK = {
    "tempura": 14,
    "sashimi": 14,
    "dumpling": 14,
    "maki1": 6,
    "maki2": 12,
    "maki3": 8,
    "salmon_nigiri": 10,
    "squid_nigiri": 5,
    "egg_nigiri": 5,
    "pudding": 10,
    "wasabi": 6,
    "chopsticks": 4,
}
EXPECTED_HAND = {2: 10, 3: 9, 4: 8, 5: 7}


def ref_dumplings(n: int) -> int:
    return DUMPLINGS.get(n, 15)


def ref_split(total: int, ways: int) -> int:
    """An even share of ``total`` points; the remainder is lost, never rounded away
    from zero (R10, R12): -6 over 4 is -1."""
    share = abs(total) // ways
    return share if total >= 0 else -share


def ref_maki(symbols: Sequence[int]) -> list[int]:
    """R10: 6 for most symbols, 3 for second most, ties split, no second after a
    tie for first, nothing for 0 symbols."""
    out = [0] * len(symbols)
    levels = sorted({s for s in symbols if s > 0}, reverse=True)
    if not levels:
        return out
    first = [i for i, s in enumerate(symbols) if s == levels[0]]
    for i in first:
        out[i] = ref_split(6, len(first))
    if len(first) == 1 and len(levels) > 1:
        second = [i for i, s in enumerate(symbols) if s == levels[1]]
        for i in second:
            out[i] = ref_split(3, len(second))
    return out


def ref_pudding(puddings: Sequence[int], penalty: bool) -> list[int]:
    """R12: most +6, fewest -6, split with the remainder lost; all equal: nothing."""
    out = [0] * len(puddings)
    if len(set(puddings)) == 1:
        return out
    most = [i for i, p in enumerate(puddings) if p == max(puddings)]
    for i in most:
        out[i] += ref_split(6, len(most))
    if penalty:
        fewest = [i for i, p in enumerate(puddings) if p == min(puddings)]
        for i in fewest:
            out[i] += ref_split(-6, len(fewest))
    return out


def ref_rank(points: Sequence[int], puddings: Sequence[int]) -> list[int]:
    """R13: by points, then puddings; equal on both share the place (1, 1, 3)."""
    order = sorted(range(len(points)), key=lambda i: (-points[i], -puddings[i]))
    ranks = [0] * len(points)
    for pos, i in enumerate(order):
        if pos and (points[i], puddings[i]) == (points[order[pos - 1]], puddings[order[pos - 1]]):
            ranks[i] = ranks[order[pos - 1]]
        else:
            ranks[i] = pos + 1
    return ranks


def ref_set_points(kinds: Iterable[str], nigiri_points: int = 0) -> int:
    """Tempura, sashimi and dumplings of one tableau (R1), plus given nigiri points."""
    c = Counter(kinds)
    return (
        TEMPURA_PAIR * (c["tempura"] // 2)
        + SASHIMI_TRIPLE * (c["sashimi"] // 3)
        + ref_dumplings(c["dumpling"])
        + nigiri_points
    )


class RefTableau:
    """One tableau during a round, simulated from RULES.md R7/R8 alone."""

    def __init__(self) -> None:
        self.cards: list[int] = []  # ids in the order they entered, minus returned chopsticks
        self.kinds: dict[int, str] = {}
        self.empty_wasabi: list[int] = []  # oldest first
        self.on_wasabi: dict[int, int] = {}  # nigiri id -> wasabi id
        self.chopsticks: list[int] = []  # oldest first

    def enter(self, card: int, kind: str) -> tuple[int, int] | None:
        """A card enters; returns (nigiri, wasabi) when a nigiri lands on a wasabi."""
        self.cards.append(card)
        self.kinds[card] = kind
        if kind == "wasabi":
            self.empty_wasabi.append(card)
        elif kind == "chopsticks":
            self.chopsticks.append(card)
        elif kind in NIGIRI and self.empty_wasabi:
            wasabi = self.empty_wasabi.pop(0)
            self.on_wasabi[card] = wasabi
            return card, wasabi
        return None

    def give_back_chopsticks(self) -> int:
        card = self.chopsticks.pop(0)
        self.cards.remove(card)
        del self.kinds[card]
        return card

    def kind_list(self) -> list[str]:
        return [self.kinds[c] for c in self.cards]

    def symbols(self) -> int:
        return sum(MAKI.get(k, 0) for k in self.kind_list())

    def nigiri_points(self) -> int:
        total = 0
        for c in self.cards:
            value = NIGIRI.get(self.kinds[c], 0)
            total += 3 * value if c in self.on_wasabi else value
        return total

    def points_without_maki(self) -> int:
        return ref_set_points(self.kind_list(), self.nigiri_points())

    def puddings(self) -> int:
        return self.kind_list().count("pudding")


def ref_round_points(tableaus: Sequence[RefTableau]) -> tuple[list[int], list[int], list[int]]:
    """(points, maki symbols, maki points) of every seat for one round (R9, R10)."""
    symbols = [t.symbols() for t in tableaus]
    maki = ref_maki(symbols)
    return [t.points_without_maki() + m for t, m in zip(tableaus, maki, strict=True)], symbols, maki


# -- stacked deals ------------------------------------------------------------------

#: Order in which unnamed ("don't care") positions are filled from what is left of
#: the deck: harmless cards first, pudding last so that pudding counts stay as scripted.
FILLER_ORDER = (
    "tempura",
    "sashimi",
    "dumpling",
    "salmon_nigiri",
    "squid_nigiri",
    "egg_nigiri",
    "maki1",
    "maki2",
    "maki3",
    "wasabi",
    "chopsticks",
    "pudding",
)


def deal_order(state: GameState) -> list[int]:
    """The card ids of a fresh game in the order ``new_game`` took them from the pile:
    round 1 hands seat by seat (the dummy's pile last), then the rest of the pile."""
    assert state.round == 1 and state.turn == 1 and not any(state.tableaus)
    if state.config.variant is Variant.DUMMY:
        h0, h1, dummy = state.hands
        # seat 0 controls turn 1 and has drawn the top of the dummy pile (R15)
        return h0[:-1] + h1 + [h0[-1]] + dummy + state.pile
    return [c for hand in state.hands for c in hand] + state.pile


def stacked_game(
    config: GameConfig, deals: Sequence[Sequence[Sequence[str | None]]], seed: int = 0
) -> GameState:
    """A fresh game whose deal is stacked: ``deals[r][s]`` lists the kinds (top first)
    of the hand dealt to seat ``s`` in round ``r + 1`` (for the dummy variant, seat 2
    is the dummy pile). ``None`` entries, short hands and missing rounds are filled
    from what is left of the deck (FILLER_ORDER). The 108 kinds are unchanged."""
    state = new_game(config, seed)
    size = config.hand_size
    seats = config.seats
    order = deal_order(state)
    wanted: list[str | None] = []
    for rnd in deals:
        assert len(rnd) <= seats, "more hands than seats"
        for s in range(seats):
            hand = list(rnd[s]) if s < len(rnd) else []
            assert len(hand) <= size, f"hand of {len(hand)} cards, the deal is {size}"
            wanted += hand + [None] * (size - len(hand))
    wanted += [None] * (len(order) - len(wanted))
    pool = Counter(EXPECTED_DECK)
    for k in wanted:
        if k is not None:
            assert k in KIND, f"unknown kind {k!r}"
            pool[k] -= 1
            assert pool[k] >= 0, f"the deck has only {EXPECTED_DECK[k]} {k}"
    filled: list[str] = []
    for k in wanted:
        if k is None:
            k = next(f for f in FILLER_ORDER if pool[f] > 0)
            pool[k] -= 1
        filled.append(k)
    for card, k in zip(order, filled, strict=True):
        state.kind_of[card] = KIND[k]
    assert Counter(state.kind_of) == Counter(dict(enumerate(DECK_COUNTS)))
    return state


def hands_for_picks(targets: Sequence[Sequence[str | None]], direction: int = 1) -> list[list[str | None]]:
    """The hands to deal so that, passing in ``direction`` (+1 left), seat ``s`` can
    take ``targets[s][t]`` on turn ``t`` (the last entry is the card played for it, R6a).
    With hands passed left, on turn t seat s holds the hand dealt to seat s - t."""
    n = len(targets)
    size = len(targets[0])
    assert all(len(t) == size for t in targets)
    return [[targets[(h + direction * t) % n][t] for t in range(size)] for h in range(n)]


def fill_targets(config: GameConfig, rounds: Sequence[Sequence[Sequence[str | None]]]) -> list[list[list[str]]]:
    """Scripted tableaus for all three rounds, ``None`` entries and missing rounds/seats
    replaced by filler kinds from what the script leaves of the deck."""
    size = config.hand_size
    seats = config.seats
    full = [
        [list(rnd[s]) + [None] * (size - len(rnd[s])) if s < len(rnd) else [None] * size for s in range(seats)]
        for rnd in rounds
    ]
    while len(full) < 3:
        full.append([[None] * size for _ in range(seats)])
    pool = Counter(EXPECTED_DECK)
    for rnd in full:
        for hand in rnd:
            for k in hand:
                if k is not None:
                    pool[k] -= 1
                    assert pool[k] >= 0, f"the deck has only {EXPECTED_DECK[k]} {k}"
    for rnd in full:
        for hand in rnd:
            for i, k in enumerate(hand):
                if k is None:
                    k = next(f for f in FILLER_ORDER if pool[f] > 0)
                    pool[k] -= 1
                    hand[i] = k
    return full  # type: ignore[return-value]


class ScriptedGame:
    """A standard or alternate game in which every seat's tableau is scripted:
    ``rounds[r][s]`` lists the kinds seat ``s`` takes in round ``r + 1``, one per
    turn, the last one being the card played for it (R6a). The deal is stacked so
    that the script is possible, then the game is played through ``apply_turn``."""

    def __init__(self, config: GameConfig, rounds: Sequence[Sequence[Sequence[str | None]]], seed: int = 0):
        assert config.variant is not Variant.DUMMY
        self.config = config
        self.targets = fill_targets(config, rounds)
        deals = [hands_for_picks(self.targets[r], config.direction(r + 1)) for r in range(3)]
        self.state = stacked_game(config, deals, seed)

    def plays(self) -> list[tuple[int, ...]]:
        s = self.state
        t = s.turn - 1
        return [(first_of(s, seat, self.targets[s.round - 1][seat][t]),) for seat in range(s.players)]

    def play_turn(self) -> None:
        apply_turn(self.state, self.plays())

    def play_round(self) -> None:
        rnd = self.state.round
        while not self.state.over and self.state.round == rnd:
            self.play_turn()

    def play_all(self) -> GameState:
        while not self.state.over:
            self.play_turn()
        return self.state


class ScriptedDummyGame:
    """The two-player dummy variant (R15) with a scripted game: ``rounds[r]`` is a list
    of 9 turns ``(controller's own kind, kind given to the dummy, other player's kind)``.

    Because the two players swap hands every turn and control alternates every turn,
    the hand dealt to the round's first controller always sits with the controller
    and receives every draw; so the deal is: first controller's hand = the own kinds,
    the other's hand = the other's kinds, dummy pile = the dummy's kinds."""

    def __init__(self, rounds: Sequence[Sequence[tuple[str | None, str | None, str | None]]], seed: int = 0):
        self.config = GameConfig(players=2, variant=Variant.DUMMY)
        self.turns: list[list[tuple[str, str, str]]] = []
        scripted = []
        for r in range(3):
            turns = list(rounds[r]) if r < len(rounds) else []
            turns += [(None, None, None)] * (9 - len(turns))
            first = 0 if r % 2 == 0 else 1  # 9 turns a round: control alternates across rounds
            own = [t[0] for t in turns]
            other = [t[2] for t in turns]
            dummy = [t[1] for t in turns]
            seat_hands = [own, other] if first == 0 else [other, own]
            scripted.append([seat_hands[0], seat_hands[1], dummy])
        filled = fill_targets(self.config, scripted)
        for r in range(3):
            first = 0 if r % 2 == 0 else 1
            own, other, dummy = filled[r][first], filled[r][1 - first], filled[r][2]
            self.turns.append(list(zip(own, dummy, other, strict=True)))
        self.state = stacked_game(self.config, filled, seed)

    def plays(self) -> list[tuple[int, ...] | None]:
        s = self.state
        own, dummy, other = self.turns[s.round - 1][s.turn - 1]
        c = s.controller
        mine = first_of(s, c, own)
        give = first_of(s, c, dummy, exclude=(mine,))
        out: list[tuple[int, ...] | None] = [None, None]
        out[c] = (mine, give)
        if 1 - c in s.deciding_seats():
            out[1 - c] = (first_of(s, 1 - c, other),)
        else:
            assert s.kind(s.hands[1 - c][0]) == other
        return out

    def play_turn(self) -> None:
        apply_turn(self.state, self.plays())

    def play_round(self) -> None:
        rnd = self.state.round
        while not self.state.over and self.state.round == rnd:
            self.play_turn()

    def play_all(self) -> GameState:
        while not self.state.over:
            self.play_turn()
        return self.state


# -- small conveniences ---------------------------------------------------------------


def first_of(state: GameState, seat: int, kind: str, exclude: Iterable[int] = ()) -> int:
    """The first card of ``kind`` in ``seat``'s hand (R16 hand order)."""
    skip = set(exclude)
    for c in state.hands[seat]:
        if c not in skip and state.kind(c) == kind:
            return c
    raise AssertionError(f"no {kind} in seat {seat}'s hand {kinds_of(state, state.hands[seat])}")


def pick(state: GameState, seat: int, *kinds: str) -> tuple[int, ...]:
    """A play of the first cards of the given kinds in ``seat``'s hand, in that order."""
    chosen: list[int] = []
    for k in kinds:
        chosen.append(first_of(state, seat, k, exclude=chosen))
    return tuple(chosen)


def kinds_of(state: GameState, cards: Iterable[int]) -> list[str]:
    return [state.kind(c) for c in cards]


def tableau_kinds(state: GameState, seat: int) -> list[str]:
    return kinds_of(state, state.tableaus[seat])


def all_cards(state: GameState) -> list[int]:
    """Every card id the state holds anywhere (hands, dummy pile, draw pile,
    tableaus, kept puddings, discard)."""
    out = list(state.pile) + list(state.discard)
    for group in (state.hands, state.tableaus, state.kept_puddings):
        for cards in group:
            out += cards
    return out


def snapshot(state: GameState) -> dict[str, object]:
    """A deep copy of every field of the state, to compare before and after."""
    return {name: copy.deepcopy(getattr(state, name)) for name in GameState.__slots__ if name != "config"}


def first_legal(state: GameState) -> list[tuple[int, ...] | None]:
    """Every player's first legal single-card play (the dummy controller: first pair)."""
    out: list[tuple[int, ...] | None] = []
    for seat in range(state.players):
        plays = legal_plays(state, seat)
        out.append(plays[0] if plays else None)
    return out


# -- an independent referee, fed with the engine's public events ------------------------


class RefReferee:
    """Replays a game from ``events()`` alone and re-derives everything from RULES.md:
    which card sits on which wasabi (R7), which chopsticks go back (R8), every round's
    points (R9, R10), puddings (R11, R12), totals and places (R13). Any disagreement with
    what the engine reported raises AssertionError."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.seats = config.seats
        self.players = config.players
        self.round = 0
        self.tableaus: list[RefTableau] = []
        self.puddings = [0] * self.seats
        self.totals = [0] * self.seats
        self.round_points: list[list[int]] = []
        self.final: dict | None = None

    def feed(self, events_: Iterable[dict]) -> None:
        for e in events_:
            getattr(self, "_" + e["type"])(e)

    def tableau_ids(self) -> list[list[int]]:
        return [t.cards[:] for t in self.tableaus]

    def _round_start(self, e: dict) -> None:
        self.round += 1
        assert e["round"] == self.round
        assert e["hand_size"] == self.config.hand_size
        assert e["direction"] == ("right" if self.config.variant is Variant.ALTERNATE and self.round == 2 else "left")
        self.tableaus = [RefTableau() for _ in range(self.seats)]

    def _reveal(self, e: dict) -> None:
        assert e["round"] == self.round
        assert len(e["plays"]) == self.seats
        attached = []
        for seat, play in enumerate(e["plays"]):
            tab = self.tableaus[seat]
            cards = play["cards"]
            could_use = bool(tab.chopsticks)  # chopsticks in the tableau at the start of the turn
            assert len(cards) in (1, 2), f"seat {seat} took {len(cards)} cards"
            if len(cards) == 2:
                assert could_use, f"seat {seat} took two cards without chopsticks (R8)"
                assert seat < self.players, "the dummy never uses chopsticks (R15)"
            for c in cards:
                hit = tab.enter(c["id"], c["card"])
                if hit:
                    attached.append((seat, *hit))
            if len(cards) == 2:
                assert play["chopsticks_returned"] == tab.give_back_chopsticks(), "the oldest chopsticks go back (R8)"
            else:
                assert play["chopsticks_returned"] is None
        got = sorted((w["seat"], w["nigiri"], w["wasabi"]) for w in e["wasabi"])
        assert got == sorted(attached), f"wasabi {got} != {sorted(attached)} (R7)"

    def _last_card(self, e: dict) -> None:
        assert self.config.variant is not Variant.DUMMY
        assert [c["seat"] for c in e["cards"]] == list(range(self.seats))
        attached = []
        for c in e["cards"]:
            hit = self.tableaus[c["seat"]].enter(c["id"], c["card"])
            if hit:
                attached.append((c["seat"], *hit))
        got = sorted((w["seat"], w["nigiri"], w["wasabi"]) for w in e["wasabi"])
        assert got == sorted(attached)

    def _round_end(self, e: dict) -> None:
        assert e["round"] == self.round
        points, symbols, maki = ref_round_points(self.tableaus)
        assert e["maki_symbols"] == symbols, (e["maki_symbols"], symbols)
        assert e["maki_points"] == maki, (e["maki_points"], maki)
        assert e["points"] == points, (e["points"], points)
        for s, t in enumerate(self.tableaus):
            self.puddings[s] += t.puddings()
            self.totals[s] += points[s]
        assert e["scores"] == self.totals
        self.round_points.append(points)

    def _game_end(self, e: dict) -> None:
        assert self.round == 3
        extra = ref_pudding(self.puddings, penalty=self.seats > 2)
        assert e["puddings"] == self.puddings
        assert e["pudding_points"] == extra, (e["pudding_points"], extra)
        scores = [t + x for t, x in zip(self.totals, extra, strict=True)]
        assert e["scores"] == scores
        ranks = ref_rank(scores[: self.players], self.puddings[: self.players])
        ranks += [self.players + 1] * (self.seats - self.players)
        assert e["ranks"] == ranks, (e["ranks"], ranks)
        self.final = {"scores": scores, "puddings": self.puddings[:], "pudding_points": extra, "ranks": ranks}
