"""Random playouts over thousands of seeded games, every player count and variant, with
the engine checked at every step against invariants and against a second, independent
referee (``engine_helpers.RefReferee``) that re-scores every round and the game end
from the public events alone, from docs/RULES.md.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from engine_helpers import RefReferee, all_cards, snapshot

from arena.engine import (
    DECK_COUNTS,
    GameConfig,
    GameState,
    Variant,
    apply_turn,
    events,
    legal_plays,
    new_game,
    observe,
    result,
)

GAMES_PER_PLAYER_COUNT = 2000  # split between the standard and the alternate variant
DUMMY_GAMES = 2000
BLOCK = 500  # seeds per test case
REPLAY_EVERY = 25  # every n-th game is also replayed and cloned

CASES = [
    (GameConfig(n, variant), block)
    for n in (2, 3, 4, 5)
    for variant in (Variant.STANDARD, Variant.ALTERNATE)
    for block in range(GAMES_PER_PLAYER_COUNT // 2 // BLOCK)
] + [(GameConfig(2, Variant.DUMMY), block) for block in range(DUMMY_GAMES // BLOCK)]


def case_id(case: tuple[GameConfig, int]) -> str:
    config, block = case
    return f"{config.players}p-{config.variant.value}-{block}"


def random_plays(
    state: GameState, rng: random.Random, taste: list[dict[str, int]] | None = None
) -> list[tuple[int, ...] | None]:
    """A random legal play per player: half of the time the plainest kind (one card;
    the controller's own + dummy pair), otherwise any legal play (chopsticks included).
    With ``taste`` (a per-seat ranking of kinds), a seat mostly takes the play whose
    own cards it likes best, which piles up sets, maki, dumplings and puddings and so
    reaches the extremes (6+ dumplings, ties, big pudding gaps) uniform play rarely does."""
    plays: list[tuple[int, ...] | None] = []
    for seat in range(state.players):
        legal = legal_plays(state, seat)
        if not legal:
            plays.append(None)
            continue
        if taste is not None and rng.random() < 0.8:
            controls = seat == state.controller
            own = len(legal[0]) - 1 if controls else len(legal[0])

            def score(p: tuple[int, ...], like=taste[seat], own=own, controls=controls) -> int:
                cards = p[:-1] if controls else p
                return sum(like[state.kind(c)] for c in cards) + (3 if len(cards) > own else 0)

            best = max(map(score, legal))
            plays.append(rng.choice([p for p in legal if score(p) == best]))
            continue
        if rng.random() < 0.5:
            shortest = len(legal[0])
            legal = [p for p in legal if len(p) == shortest]
        plays.append(rng.choice(legal))
    return plays


def random_taste(state: GameState, rng: random.Random) -> list[dict[str, int]] | None:
    """Every other game, each seat gets a random ranking of the kinds (see random_plays)."""
    if rng.random() < 0.5:
        return None
    kinds = sorted({state.kind(c) for c in range(108)})
    out = []
    for _ in range(state.players):
        rng.shuffle(kinds)
        out.append({k: 12 - i for i, k in enumerate(kinds)})
    return out


def expected_hand_sizes(state: GameState) -> list[int]:
    h = state.config.hand_size
    t = state.turn
    if state.config.variant is Variant.DUMMY:
        c = state.controller
        sizes = [0, 0, 9 - t]
        sizes[c] = 11 - t  # the drawn card (R15)
        sizes[1 - c] = 10 - t
        return sizes
    return [h - (t - 1)] * state.players


def check_cards(state: GameState, kinds: Counter) -> None:
    cards = all_cards(state)
    assert len(cards) == 108 and set(cards) == set(range(108)), "a card was lost or duplicated"
    assert Counter(state.kind_of) == kinds


def check_views(state: GameState) -> None:
    """observe(state, seat) holds the seat's own hand and nothing of any other hand."""
    for seat in range(state.players):
        obs = observe(state, seat)
        own = state.hands[seat]
        assert [c.id for c in obs.hand] == own
        assert [c.card for c in obs.hand] == [state.kind(c) for c in own]
        assert obs.legal == [list(p) for p in legal_plays(state, seat)]
        assert all(c in own for p in obs.legal for c in p), "a legal play names a card not in the hand"
        seen = {c.id for c in obs.hand} | {c for p in obs.legal for c in p}
        for tab in obs.tableaus:
            for t in tab:
                seen.add(t.id)
                if t.wasabi is not None:
                    seen.add(t.wasabi)
        hidden = {c for s, h in enumerate(state.hands) if s != seat for c in h} | set(state.pile)
        assert not seen & hidden, f"seat {seat} sees hidden cards {seen & hidden}"
        assert obs.hand_sizes == [len(h) for h in state.hands]
        assert obs.puddings == state.puddings()
        assert obs.scores == state.scores


def check_between_turns(state: GameState, ref: RefReferee, kinds: Counter, views: bool) -> None:
    check_cards(state, kinds)
    if state.over:
        assert state.singles is None or state.singles == [[]] * state.seats
        assert state.hands == [[]] * state.seats or all(not h for h in state.hands)
        return
    assert [len(h) for h in state.hands] == expected_hand_sizes(state)
    if state.singles is not None:  # the one-card plays kept beside the hands
        assert state.singles == [[(c,) for c in h] for h in state.hands]
    assert state.tableaus == ref.tableau_ids(), "tableaus differ from the independent replay"
    seats = state.seats
    per_round = state.config.hand_size * seats if state.config.variant is not Variant.DUMMY else 27
    kept = [c for k in state.kept_puddings for c in k]
    assert all(state.kind(c) == "pudding" for c in kept), "only puddings are kept (R11)"
    assert all(state.kind(c) != "pudding" for c in state.discard), "a pudding was discarded (R11)"
    assert len(kept) + len(state.discard) == (state.round - 1) * per_round
    assert state.puddings() == [p + t.puddings() for p, t in zip(ref.puddings, ref.tableaus, strict=True)]
    assert len(state.pile) == 108 - state.round * per_round
    if views:
        check_views(state)


def check_deciding(state: GameState) -> list[int]:
    deciding = state.deciding_seats()
    if state.config.variant is Variant.DUMMY:
        c = state.controller
        expected = sorted([c] + ([1 - c] if len(state.hands[1 - c]) >= 2 else []))
    else:
        expected = list(range(state.players))
    assert deciding == expected
    assert [bool(legal_plays(state, s)) for s in range(state.players)] == [s in deciding for s in range(state.players)]
    return deciding


def play_checked_game(config: GameConfig, seed: int, views: bool) -> tuple[GameState, list, RefReferee]:
    state = new_game(config, seed)
    rng = random.Random(seed ^ 0x5EED)
    ref = RefReferee(config)
    kinds = Counter(dict(enumerate(DECK_COUNTS)))
    since = 0
    ref.feed(events(state, since))
    since = len(state.log)
    record: list = []
    taste = random_taste(state, rng)
    decisions = [[0] * state.players for _ in range(3)]
    turns = [0, 0, 0]
    check_between_turns(state, ref, kinds, views)
    while not state.over:
        rnd = state.round
        for s in check_deciding(state):
            decisions[rnd - 1][s] += 1
        turns[rnd - 1] += 1
        plays = random_plays(state, rng, taste)
        record.append(plays)
        apply_turn(state, plays)
        ref.feed(events(state, since))
        since = len(state.log)
        check_between_turns(state, ref, kinds, views)
        if not state.over and state.round != rnd:
            assert state.turn == 1 and state.tableaus == [[]] * state.seats
            assert all(not c for c in state.chopsticks), "chopsticks cleared with the tableau (R8a)"
    # decisions per seat and round (R6a; R15)
    if config.variant is Variant.DUMMY:
        assert turns == [9, 9, 9]
        assert decisions == [[9, 8], [8, 9], [9, 8]]
    else:
        h = config.hand_size
        assert turns == [h - 1] * 3
        assert decisions == [[h - 1] * config.players] * 3
    # the end, re-derived independently
    res = result(state)
    assert ref.final is not None
    assert list(res.scores) == ref.final["scores"]
    assert list(res.puddings) == ref.final["puddings"]
    assert list(res.pudding_points) == ref.final["pudding_points"]
    assert list(res.ranks) == ref.final["ranks"]
    assert [list(r) for r in res.round_points] == ref.round_points
    assert state.scores == list(res.scores)
    if config.variant is Variant.DUMMY:
        assert res.ranks[2] == 3 and 2 not in res.winners
    assert res.winners and min(res.ranks) == 1
    return state, record, ref


def check_determinism(config: GameConfig, seed: int, state: GameState, record: list) -> None:
    """Same seed and same plays: identical events and result; clone() plays on alike and
    is independent of the original."""
    again = new_game(config, seed)
    for plays in record:
        apply_turn(again, plays)
    assert events(again) == events(state)
    assert result(again) == result(state)

    rng = random.Random(seed)
    cut = rng.randrange(len(record))
    original = new_game(config, seed)
    for plays in record[:cut]:
        apply_turn(original, plays)
    twin = original.clone()
    stray = original.clone()
    before = snapshot(original)
    apply_turn(stray, random_plays(stray, random.Random(seed + 1)))
    assert snapshot(original) == before, "playing a clone changed the original"
    for plays in record[cut:]:
        apply_turn(twin, plays)
    assert snapshot(original) == before
    for plays in record[cut:]:
        apply_turn(original, plays)
    assert events(twin) == events(original) == events(state)
    assert result(twin) == result(original)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_random_playouts_keep_every_invariant(case):
    """108 cards accounted for at every step; equal hand sizes (R8c; dummy: R15's
    counts); (hand size − 1) decisions per seat per round (R6a; dummy: R15); puddings
    kept, the rest discarded (R11); observe() shows no other hand (R4); every round and
    the end re-scored by an independent referee (R7–R13); determinism and clone()."""
    config, block = case
    for i in range(BLOCK):
        seed = block * BLOCK + i
        views = i % 2 == 0  # views are checked every step of every other game
        state, record, _ = play_checked_game(config, seed, views)
        if i % REPLAY_EVERY == 0:
            check_determinism(config, seed, state, record)


def test_chopsticks_and_wasabi_are_exercised():
    """The random playouts are worth something only if they reach the hard cases: two-card
    turns, returned chopsticks, nigiri on wasabi (also in a two-card turn and in the
    dummy's tableau), the dummy controller's three-card turns."""
    stats = Counter()
    for config in (GameConfig(3), GameConfig(2, Variant.DUMMY)):
        for seed in range(60):
            state, _, _ = play_checked_game(config, 10_000 + seed, views=False)
            for e in events(state):
                if e["type"] != "reveal":
                    continue
                for seat, p in enumerate(e["plays"]):
                    if p["chopsticks_returned"] is not None:
                        stats["chopsticks"] += 1
                        if e["controller"] == seat:
                            stats["dummy-triple"] += 1
                    if len(p["cards"]) == 2 and any(w["seat"] == seat for w in e["wasabi"]):
                        stats["pair-onto-wasabi"] += 1
                stats["on-wasabi"] += len(e["wasabi"])
                if config.variant is Variant.DUMMY:
                    stats["dummy-on-wasabi"] += sum(1 for w in e["wasabi"] if w["seat"] == 2)
    assert stats["chopsticks"] > 50 and stats["dummy-triple"] > 5
    assert stats["on-wasabi"] > 100 and stats["pair-onto-wasabi"] > 0 and stats["dummy-on-wasabi"] > 0
