"""Property tests (hypothesis) for the engine's scoring functions against independent
implementations written from docs/RULES.md (``engine_helpers.ref_*``) and against
properties a correct rule must have; and for chopsticks/wasabi: random sequences of
cards entering tableaus, played through the real engine, must score exactly as an
independent simulation of R7/R8 says.
"""

from __future__ import annotations

import random
from collections import Counter

from engine_helpers import (
    EXPECTED_DECK,
    KIND,
    RefTableau,
    ScriptedGame,
    ref_maki,
    ref_pudding,
    ref_rank,
    ref_round_points,
    ref_set_points,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from arena.engine import (
    KINDS,
    GameConfig,
    IllegalPlayError,
    apply_turn,
    check_play,
    events,
    legal_plays,
    maki_points,
    new_game,
    pudding_points,
    rank,
    set_points,
)

seats = st.integers(min_value=2, max_value=5)
symbol_lists = st.lists(st.integers(min_value=0, max_value=54), min_size=2, max_size=5)
# small ranges make ties (the interesting cases) frequent
tie_prone = st.lists(st.integers(min_value=0, max_value=4), min_size=2, max_size=5)
pudding_lists = st.lists(st.integers(min_value=0, max_value=10), min_size=2, max_size=5)


def permuted(data: st.DataObject, values: list[int]) -> list[int]:
    order = data.draw(st.permutations(range(len(values))))
    return list(order)


# -- R10 maki --------------------------------------------------------------------------


@given(st.one_of(symbol_lists, tie_prone))
def test_R10_maki_points_match_the_independent_rule(symbols):
    """R10, restated independently: 6 most, 3 second, ties split (remainder lost), no
    second after a tie for first, 0 symbols never score."""
    assert maki_points(symbols) == ref_maki(symbols)


@given(st.one_of(symbol_lists, tie_prone), st.data())
def test_R10_maki_points_properties(symbols, data):
    """At most 9 points are handed out; zero-symbol seats get 0; the points do not depend
    on seat order; more symbols never means fewer points; a sole leader gets 6."""
    points = maki_points(symbols)
    assert len(points) == len(symbols)
    assert 0 <= sum(points) <= 9
    assert all(p == 0 for s, p in zip(symbols, points, strict=True) if s == 0)
    assert all(p in (0, 1, 2, 3, 6) for p in points)
    order = permuted(data, symbols)
    assert maki_points([symbols[i] for i in order]) == [points[i] for i in order]
    for i, si in enumerate(symbols):
        for j, sj in enumerate(symbols):
            if si > sj:
                assert points[i] >= points[j]
    top = max(symbols)
    if top > 0 and symbols.count(top) == 1:
        assert points[symbols.index(top)] == 6
    if top > 0 and symbols.count(top) > 1:
        assert all(p == 0 for s, p in zip(symbols, points, strict=True) if s < top)


# -- R12 pudding -----------------------------------------------------------------------


@given(st.one_of(pudding_lists, tie_prone), st.booleans())
def test_R12_pudding_points_match_the_independent_rule(puddings, penalty):
    """R12, restated independently: +6 most, −6 fewest, split with the remainder dropped
    (never rounded away from zero), all equal nothing, penalty off with 2 players."""
    assert pudding_points(puddings, penalty=penalty) == ref_pudding(puddings, penalty)


@given(st.one_of(pudding_lists, tie_prone), st.booleans(), st.data())
def test_R12_pudding_points_properties(puddings, penalty, data):
    """Bonus at most +6 in all, penalty at least −6 in all, each share rounded toward
    zero; all equal: nothing; no penalty: nobody negative; seat order irrelevant."""
    points = pudding_points(puddings, penalty=penalty)
    gains = sum(p for p in points if p > 0)
    losses = sum(p for p in points if p < 0)
    assert gains <= 6 and losses >= -6
    if len(set(puddings)) == 1:
        assert points == [0] * len(puddings)
    else:
        most, fewest = max(puddings), min(puddings)
        k_most, k_fewest = puddings.count(most), puddings.count(fewest)
        for p, n in zip(puddings, points, strict=True):
            if p == most:
                assert n == 6 // k_most
            elif p == fewest:
                assert n == (-(6 // k_fewest) if penalty else 0)
            else:
                assert n == 0
    if not penalty:
        assert all(p >= 0 for p in points)
    order = permuted(data, puddings)
    assert pudding_points([puddings[i] for i in order], penalty=penalty) == [points[i] for i in order]


# -- R13 rank --------------------------------------------------------------------------


@given(st.data())
def test_R13_rank_matches_the_independent_rule(data):
    """R13: by points, then puddings; equal on both share the place (1, 1, 3)."""
    n = data.draw(seats)
    points = data.draw(st.lists(st.integers(-12, 12), min_size=n, max_size=n))
    puddings = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    assert rank(points, puddings) == ref_rank(points, puddings)


@given(st.data())
def test_R13_rank_properties(data):
    """Someone is first; places count the seats strictly ahead; equal keys share a place;
    better keys get better places; seat order is irrelevant (no first-seat bias)."""
    n = data.draw(seats)
    points = data.draw(st.lists(st.integers(-6, 6), min_size=n, max_size=n))
    puddings = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    places = rank(points, puddings)
    keys = list(zip(points, puddings, strict=True))
    assert min(places) == 1 and all(1 <= p <= n for p in places)
    for i in range(n):
        assert places[i] == 1 + sum(1 for k in keys if k > keys[i])
        for j in range(n):
            if keys[i] == keys[j]:
                assert places[i] == places[j]
            elif keys[i] > keys[j]:
                assert places[i] < places[j]
    order = permuted(data, points)
    assert rank([points[i] for i in order], [puddings[i] for i in order]) == [places[i] for i in order]


# -- R1 set points ---------------------------------------------------------------------


@given(st.lists(st.integers(0, 14), min_size=len(KINDS), max_size=len(KINDS)), st.integers(0, 60))
def test_R1_set_points_match_the_independent_rule(counts, nigiri):
    """R1: tempura 5 per pair, sashimi 10 per three, dumplings 1/3/6/10/15 (5 or more:
    15), plus the nigiri points as given (wasabi decided on entry)."""
    kinds = [k for k, n in zip(KINDS, counts, strict=True) for _ in range(n)]
    assert set_points(counts, nigiri) == ref_set_points(kinds, nigiri)


@given(st.lists(st.integers(0, 13), min_size=len(KINDS), max_size=len(KINDS)), st.sampled_from(KINDS))
def test_R1_set_points_never_drop_when_a_card_is_added(counts, kind):
    """One more card never lowers a tableau's set points; dumplings stop at 15."""
    more = counts[:]
    more[KIND[kind]] += 1
    assert set_points(more, 0) >= set_points(counts, 0)
    if kind == "dumpling" and counts[KIND["dumpling"]] >= 5:
        assert set_points(more, 0) == set_points(counts, 0)


# -- R7 / R8 sequences through the engine -----------------------------------------------

ALPHABET = ["wasabi", "salmon_nigiri", "squid_nigiri", "egg_nigiri", "chopsticks", "tempura", "maki2", "pudding"]
WEIGHTED = st.sampled_from(ALPHABET[:5] * 3 + ALPHABET[5:])
turn_wish = st.lists(WEIGHTED, min_size=1, max_size=2)


def force_kind(state, card: int, kind: str, fixed: set[int]) -> bool:
    """Give ``card`` (not yet revealed) the kind ``kind`` by swapping kinds with another
    unrevealed card, so the deck keeps its 108 kinds. False if no such card is left."""
    k = KIND[kind]
    if state.kind_of[card] == k:
        return True
    if card in fixed:
        return False
    for donor in [c for h in state.hands for c in h] + state.pile:
        if donor != card and donor not in fixed and state.kind_of[donor] == k:
            state.kind_of[donor], state.kind_of[card] = state.kind_of[card], k
            return True
    return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 4), seed=st.integers(0, 2**20), data=st.data())
def test_R7_R8_random_entry_sequences_score_as_an_independent_simulation(players, seed, data):
    """R7, R7a, R8, R8a, R8b: each seat wishes, turn by turn, for one or two cards of
    given kinds (wasabi, nigiri, chopsticks heavy); the hands are made to hold them (kinds
    swapped between unrevealed cards, the deck unchanged) and the round is played through
    apply_turn. Every tableau, every wasabi placement, every returned chopsticks and the
    round's points must equal an independent simulation of the rules."""
    config = GameConfig(players)
    state = new_game(config, seed)
    size = config.hand_size
    wishes = [[data.draw(turn_wish) for _ in range(size)] for _ in range(players)]
    fixed: set[int] = set()  # cards whose kind is settled: revealed, or chosen this turn
    refs = [RefTableau() for _ in range(players)]
    last_expected: list[int | None] = [None] * players
    for t in range(size - 1):
        plays: list[tuple[int, ...]] = []
        for s in range(players):
            hand = state.hands[s]
            has_chop = bool(refs[s].chopsticks)
            assert any(len(p) == 2 for p in legal_plays(state, s)) == has_chop  # R8, R8a
            wish = wishes[s][t]
            if len(wish) == 2 and not has_chop:
                try:
                    check_play(state, s, tuple(hand[:2]))
                    raise AssertionError("two cards without chopsticks accepted (R8)")
                except IllegalPlayError as e:
                    assert e.rule == "R8"
            chosen: list[int] = []
            for kind in wish if (len(wish) == 2 and has_chop) else wish[:1]:
                card = next((c for c in hand if c not in chosen and state.kind(c) == kind), None)
                if card is None:
                    free = [c for c in hand if c not in chosen and c not in fixed]
                    card = free[0] if free else next(c for c in hand if c not in chosen)
                    force_kind(state, card, kind, fixed | set(chosen))
                chosen.append(card)
            fixed.update(chosen)
            plays.append(tuple(chosen))
        if t == size - 2:  # the cards left now are played for the next seats (R6a)
            for s in range(players):
                left = [c for c in state.hands[s] if c not in plays[s]]
                receiver = (s + 1) % players
                if len(left) == 1:
                    force_kind(state, left[0], wishes[receiver][-1][0], fixed)
                    last_expected[receiver] = left[0]
                fixed.update(left)
        apply_turn(state, plays)
        backs: list[int | None] = []
        for s in range(players):
            for c in plays[s]:
                refs[s].enter(c, state.kind(c))
            backs.append(refs[s].give_back_chopsticks() if len(plays[s]) == 2 else None)
            if backs[s] is not None and t == size - 2:
                last_expected[(s + 1) % players] = backs[s]  # R8 then R6a: it is the last card
        reveal = [e for e in events(state) if e["type"] == "reveal"][-1]
        assert [p["chopsticks_returned"] for p in reveal["plays"]] == backs
        if t < size - 2:
            assert state.tableaus == [r.cards for r in refs]
            for s in range(players):
                assert {tc: w for tc, w in state.wasabi_of.items() if tc in refs[s].kinds} == refs[s].on_wasabi
    last = next(e for e in events(state) if e["type"] == "last_card")
    assert [c["id"] for c in last["cards"]] == last_expected
    for c in last["cards"]:
        refs[c["seat"]].enter(c["id"], c["card"])
    points, symbols, maki = ref_round_points(refs)
    end = next(e for e in events(state) if e["type"] == "round_end")
    assert end["maki_symbols"] == symbols
    assert end["points"] == points
    placed = sorted(
        (w["seat"], w["nigiri"], w["wasabi"])
        for e in events(state)
        if e["type"] in ("reveal", "last_card")
        for w in e["wasabi"]
    )
    assert placed == sorted((s, n, w) for s, r in enumerate(refs) for n, w in r.on_wasabi.items())
    assert Counter(state.kind(c) for c in range(108)) == Counter(EXPECTED_DECK)


@settings(max_examples=200, deadline=None)
@given(
    seq=st.lists(st.sampled_from(["wasabi", "salmon_nigiri", "squid_nigiri", "egg_nigiri", "tempura"]), min_size=10, max_size=10),
)
def test_R7_a_scripted_tableau_scores_as_the_independent_simulation(seq):
    """R7 on one tableau: a two-player round where seat 0 takes exactly ``seq`` in order
    (the last card played for it); its points equal the independent simulation."""
    counts = Counter(seq)
    assume(counts["squid_nigiri"] <= 5 and counts["egg_nigiri"] <= 5 and counts["wasabi"] <= 6)
    g = ScriptedGame(GameConfig(2), [[seq, ["dumpling"] * 10]])
    g.play_round()
    ref = RefTableau()
    for i, k in enumerate(seq):
        ref.enter(i, k)
    assert g.state.round_points[0][0] == ref.points_without_maki()


def test_force_kind_keeps_the_deck_whole():
    """The helper used above never changes the deck's composition."""
    state = new_game(GameConfig(3), 1)
    rng = random.Random(0)
    before = Counter(state.kind_of)
    for _ in range(200):
        card = rng.choice(state.hands[rng.randrange(3)])
        force_kind(state, card, rng.choice(KINDS), set())
    assert Counter(state.kind_of) == before
