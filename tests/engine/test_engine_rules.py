"""One or more tests per rule of docs/RULES.md (R1–R16), each named after its rule and
quoting it, on constructed situations played through the real engine.

Deals are stacked with ``tests/helpers/engine_helpers.py``: a fresh ``new_game`` is dealt as
usual and its dealt positions are given the kinds a test needs, so the 108 cards,
their ids and the pile stay exactly as the engine made them.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from engine_helpers import (
    EXPECTED_DECK,
    EXPECTED_HAND,
    KIND,
    ScriptedDummyGame,
    ScriptedGame,
    all_cards,
    first_legal,
    first_of,
    kinds_of,
    pick,
    snapshot,
    stacked_game,
    tableau_kinds,
)

from arena.engine import (
    DECK_COUNTS,
    DECK_SIZE,
    HAND_SIZE,
    KINDS,
    GameConfig,
    IllegalPlayError,
    InvalidPlayError,
    PlayError,
    Variant,
    apply_turn,
    check_play,
    deck_composition,
    events,
    legal_plays,
    maki_points,
    new_game,
    observe,
    pudding_points,
    rank,
    result,
    set_points,
)

TWO = GameConfig(players=2)
THREE = GameConfig(players=3)
FOUR = GameConfig(players=4)
FIVE = GameConfig(players=5)
DUMMY = GameConfig(players=2, variant=Variant.DUMMY)
ZERO_CARDS = ["wasabi"] * 6 + ["chopsticks"] * 4  # score nothing on their own


def counts_of(kinds: list[str]) -> list[int]:
    c = Counter(kinds)
    return [c[k] for k in KINDS]


def play_first_until(state, rnd: int, turn: int) -> None:
    while not state.over and (state.round, state.turn) < (rnd, turn):
        apply_turn(state, first_legal(state))


def one_round(config: GameConfig, tableaus: list[list[str | None]]) -> ScriptedGame:
    g = ScriptedGame(config, [tableaus])
    g.play_round()
    return g


def round_end(state, rnd: int = 1) -> dict:
    return next(e for e in events(state) if e["type"] == "round_end" and e["round"] == rnd)


# ---------------------------------------------------------------------------------------
# R1 — cards
# ---------------------------------------------------------------------------------------


def test_R1_deck_has_108_cards_with_exact_counts_and_wire_names():
    """R1: "108 cards, 12 kinds" — tempura 14, sashimi 14, dumpling 14, maki1 6,
    maki2 12, maki3 8, salmon 10, squid 5, egg 5, pudding 10, wasabi 6, chopsticks 4."""
    assert deck_composition() == EXPECTED_DECK
    assert DECK_SIZE == 108 == sum(DECK_COUNTS)
    assert list(KINDS) == list(EXPECTED_DECK)
    # the maki counts that other engines swapped: 6 one-symbol, 12 two, 8 three
    comp = deck_composition()
    assert (comp["maki1"], comp["maki2"], comp["maki3"]) == (6, 12, 8)
    for seed in (0, 1, 99):
        state = new_game(FOUR, seed)
        assert sorted(all_cards(state)) == list(range(108))
        assert Counter(state.kind(c) for c in range(108)) == Counter(EXPECTED_DECK)


@pytest.mark.parametrize(("n", "points"), [(0, 0), (1, 1), (2, 3), (3, 6), (4, 10), (5, 15), (6, 15), (7, 15)])
def test_R1_dumplings_score_1_3_6_10_15_and_six_or_more_still_15(n, points):
    """R1: "Dumpling … by count: 1→1, 2→3, 3→6, 4→10, 5 or more→15"."""
    seat0 = ["dumpling"] * n + ZERO_CARDS[: 10 - n]
    g = one_round(TWO, [seat0, ["tempura"] * 10])
    assert g.state.round_points[0][0] == points
    assert set_points(counts_of(["dumpling"] * n), 0) == points


@pytest.mark.parametrize(("n", "points"), [(1, 0), (2, 5), (3, 5), (4, 10), (5, 10), (6, 15)])
def test_R1_tempura_scores_5_per_complete_pair(n, points):
    """R1: "Tempura … 5 points per complete pair"."""
    g = one_round(TWO, [["tempura"] * n + ZERO_CARDS[: 10 - n], ["dumpling"] * 10])
    assert g.state.round_points[0][0] == points


@pytest.mark.parametrize(("n", "points"), [(1, 0), (2, 0), (3, 10), (4, 10), (5, 10), (6, 20)])
def test_R1_sashimi_scores_10_per_complete_set_of_three(n, points):
    """R1: "Sashimi … 10 points per complete set of three"."""
    g = one_round(TWO, [["sashimi"] * n + ZERO_CARDS[: 10 - n], ["dumpling"] * 10])
    assert g.state.round_points[0][0] == points


def test_R1_nigiri_values_and_zero_point_cards():
    """R1: "Salmon nigiri 2, or 6 on wasabi; Squid nigiri 3, or 9 on wasabi; Egg nigiri
    1, or 3 on wasabi; Wasabi 0; Chopsticks 0"."""
    plain = ["salmon_nigiri", "squid_nigiri", "egg_nigiri", "chopsticks", "chopsticks"] + ["tempura"]
    g = one_round(TWO, [plain + ["sashimi"] * 4, ["dumpling"] * 10])
    assert g.state.round_points[0][0] == 2 + 3 + 1 + 0 + 10  # a lone tempura scores 0
    tripled = ["wasabi", "salmon_nigiri", "wasabi", "squid_nigiri", "wasabi", "egg_nigiri", "wasabi"]
    g = one_round(TWO, [tripled + ["chopsticks"] * 3, ["dumpling"] * 10])
    assert g.state.round_points[0][0] == 6 + 9 + 3


def test_R1_two_player_norwegian_round_worth_27_points():
    """R1/R10, the Norwegian guide's example: "to tempura, tre sashimi, en laksenigiri på wasabi og
    flest maki-symboler … 5 + 10 + 6 + 6 … Til sammen får du 27 poeng"; an extra lone
    tempura adds nothing."""
    mine = ["tempura", "wasabi", "sashimi", "tempura", "sashimi", "salmon_nigiri", "sashimi", "maki3", "tempura", "chopsticks"]
    theirs = ["maki1", "dumpling", "dumpling", "dumpling", "pudding", "pudding", "egg_nigiri", "squid_nigiri", "sashimi", "tempura"]
    g = one_round(TWO, [mine, theirs])
    end = round_end(g.state)
    assert end["points"][0] == 27
    assert end["maki_symbols"] == [3, 1]
    assert end["maki_points"] == [6, 3]
    assert end["points"][1] == 3 + 6 + 1 + 3  # maki second, 3 dumplings, egg, squid


# ---------------------------------------------------------------------------------------
# R2–R3 — setup and deal
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_R2_seat_i_passes_to_seat_i_plus_1(players):
    """R2: "'Left' is the next seat: seat i passes to seat (i+1) mod n"."""
    state = new_game(GameConfig(players), 5)
    before = [h[:] for h in state.hands]
    plays = first_legal(state)
    apply_turn(state, plays)
    for i in range(players):
        expected = [c for c in before[i] if c != plays[i][0]]
        assert state.hands[(i + 1) % players] == expected


def test_R2_two_to_five_players_only():
    """R2: "2 to 5 players sit in a fixed seat order 0..n-1"."""
    for bad in (0, 1, 6, 2.0, True):
        with pytest.raises(ValueError):
            GameConfig(players=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        GameConfig(players=3, variant=Variant.DUMMY)
    for n in (2, 3, 4, 5):
        assert new_game(GameConfig(n), 0).seats == n


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_R3_hand_sizes_10_9_8_7(players):
    """R3: "10 cards with 2 players, 9 with 3, 8 with 4, 7 with 5"."""
    assert HAND_SIZE == EXPECTED_HAND
    state = new_game(GameConfig(players), 3)
    assert [len(h) for h in state.hands] == [EXPECTED_HAND[players]] * players
    assert len(state.pile) == 108 - players * EXPECTED_HAND[players]


@pytest.mark.parametrize(
    "config", [TWO, THREE, FOUR, FIVE, GameConfig(4, Variant.ALTERNATE)], ids=["2p", "3p", "4p", "5p", "4p-alt"]
)
def test_R3_one_shuffle_rounds_2_and_3_deal_the_next_cards_of_the_same_pile(config):
    """R3: "The whole deck is shuffled once per game … Rounds 2 and 3 deal from what is
    left; there is no reshuffle. Cards still in the pile after round 3 are not used"
    (and R16: hands are dealt in deck order)."""
    state = new_game(config, 11)
    n, h = config.players, config.hand_size
    deck = [c for hand in state.hands for c in hand] + state.pile
    kinds_before = list(state.kind_of)
    for rnd in (1, 2, 3):
        assert state.round == rnd
        base = (rnd - 1) * n * h
        assert state.hands == [deck[base + s * h : base + (s + 1) * h] for s in range(n)]
        assert state.pile == deck[base + n * h :]
        play_first_until(state, rnd + 1, 1)
    assert state.over
    unused = deck[3 * n * h :]
    assert state.pile == unused and len(unused) == 108 - 3 * n * h
    assert state.kind_of == kinds_before  # kinds never reassigned
    seen = {c["id"] for e in events(state) if e["type"] == "reveal" for p in e["plays"] for c in p["cards"]}
    seen |= {c["id"] for e in events(state) if e["type"] == "last_card" for c in e["cards"]}
    assert not seen & set(unused)


def test_R3_dummy_variant_deals_three_hands_of_nine_from_the_same_pile():
    """R3 with R15: "Deal three hands of 9 cards each round"; rounds 2 and 3 deal on
    from the same pile, the dummy's hand being the third one."""
    state = new_game(DUMMY, 4)
    deck = state.hands[0][:-1] + state.hands[1] + [state.hands[0][-1]] + state.hands[2] + state.pile
    for rnd in (1, 2, 3):
        base = (rnd - 1) * 27
        first = 0 if rnd != 2 else 1  # control alternates across rounds (9 turns a round)
        assert state.controller == first
        hands = [deck[base : base + 9], deck[base + 9 : base + 18]]
        hands[first] = hands[first] + [deck[base + 18]]
        assert state.hands[:2] == hands
        assert state.hands[2] == deck[base + 19 : base + 27]
        play_first_until(state, rnd + 1, 1)
    assert state.pile == deck[81:]


def test_R3_the_deal_depends_only_on_the_seed():
    """R3: "The whole deck is shuffled once per game from the game's seed"."""
    a, b, c = new_game(FOUR, 123), new_game(FOUR, 123), new_game(FOUR, 124)
    assert (a.hands, a.pile, a.kind_of) == (b.hands, b.pile, b.kind_of)
    assert [kinds_of(a, h) for h in a.hands] != [kinds_of(c, h) for h in c.hands]
    with pytest.raises(ValueError):
        new_game(FOUR, -1)


# ---------------------------------------------------------------------------------------
# R4–R6a — a turn
# ---------------------------------------------------------------------------------------


def test_R4_choices_are_simultaneous_and_invisible_until_the_reveal():
    """R4: "All players choose at the same time … No player sees another's choice of
    this turn before the reveal." Checking a play changes nothing anyone can see, and
    the only record of a turn's choices is the one reveal event of that turn."""
    state = new_game(FOUR, 8)
    views = [observe(state, s) for s in range(4)]
    log_len = len(state.log)
    plays = first_legal(state)
    for s in range(4):
        check_play(state, s, plays[s])
    assert [observe(state, s) for s in range(4)] == views
    assert len(state.log) == log_len
    apply_turn(state, plays)
    reveals = [e for e in events(state, log_len) if e["type"] == "reveal"]
    assert len(reveals) == 1
    assert [[c["id"] for c in p["cards"]] for p in reveals[0]["plays"]] == [list(p) for p in plays]


def test_R5_cards_enter_own_tableau_in_chosen_order_and_never_another():
    """R5: "each player's chosen cards go face up into their own tableau, in the order
    that player chose them. One player's choice never changes another player's tableau"."""
    state = stacked_game(TWO, [[["chopsticks"] + ["tempura"] * 9, ["dumpling", "egg_nigiri", "maki2", "squid_nigiri"]]])
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "dumpling")])
    a, b = pick(state, 0, "squid_nigiri", "egg_nigiri")
    other = state.clone()
    apply_turn(state, [(b, a), pick(state, 1, "tempura")])
    apply_turn(other, [(pick(other, 0, "maki2")), pick(other, 1, "tempura")])
    assert state.tableaus[0] == [b, a]  # chopsticks went back to the hand
    assert [t.id for t in observe(state, 1).tableaus[0]] == [b, a]
    assert state.tableaus[1] == other.tableaus[1]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_R6_every_hand_passes_on_one_card_smaller(players):
    """R6: "every hand goes to the next player in the round's passing direction …
    Each hand is one card smaller than before"."""
    state = new_game(GameConfig(players), 21)
    size = EXPECTED_HAND[players]
    for turn in range(1, size - 1):
        before = [h[:] for h in state.hands]
        plays = first_legal(state)
        apply_turn(state, plays)
        assert [len(h) for h in state.hands] == [size - turn] * players
        for i in range(players):
            assert state.hands[(i + 1) % players] == [c for c in before[i] if c not in plays[i]]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_R6a_last_card_is_played_for_everyone_hand_size_minus_one_decisions(players):
    """R6a: "when hands are down to one card, that card is not chosen: each player
    receives it as usual and it goes straight into their tableau … the referee plays it
    without asking the bot, so a round has (hand size − 1) decisions per player; the bot
    is still told what it received"."""
    state = new_game(GameConfig(players), 2)
    size = EXPECTED_HAND[players]
    for rnd in (1, 2, 3):
        decisions = 0
        while state.round == rnd and not state.over:
            assert all(legal_plays(state, s) for s in range(players))
            assert state.deciding_seats() == list(range(players))
            assert all(len(h) >= 2 for h in state.hands)
            if len(state.hands[0]) == 2:
                left_over = [h[1] for h in state.hands]  # first_legal takes h[0]
            apply_turn(state, first_legal(state))
            decisions += 1
        assert decisions == size - 1
        last = [e for e in events(state) if e["type"] == "last_card" and e["round"] == rnd]
        assert len(last) == 1
        assert [c["seat"] for c in last[0]["cards"]] == list(range(players))
        # each seat received the card left in the hand of the seat before it
        assert [c["id"] for c in last[0]["cards"]] == [left_over[(s - 1) % players] for s in range(players)]


# ---------------------------------------------------------------------------------------
# R7 — wasabi
# ---------------------------------------------------------------------------------------


def wasabi_links(state, seat: int) -> dict[int, int]:
    return {t.id: t.wasabi for t in observe(state, seat).tableaus[seat] if t.wasabi is not None}


def play_until_before_last(g: ScriptedGame) -> None:
    size = g.config.hand_size
    while g.state.turn < size - 1:
        g.play_turn()


def test_R7_nigiri_after_wasabi_is_tripled_and_it_is_mandatory_even_for_egg():
    """R7: "A nigiri that enters a tableau holding an empty wasabi … is placed on that
    wasabi and triples its value. This is mandatory, even for an egg nigiri … Wasabi
    never affects a nigiri already in the tableau"."""
    seat0 = ["squid_nigiri", "wasabi", "egg_nigiri", "squid_nigiri", "tempura", "sashimi", "sashimi", "dumpling", "chopsticks", "chopsticks"]
    g = ScriptedGame(TWO, [[seat0, ["tempura"] * 10]])
    play_until_before_last(g)
    s = g.state
    squid1, wasabi, egg, squid2 = s.tableaus[0][:4]
    assert kinds_of(s, [squid1, wasabi, egg, squid2]) == ["squid_nigiri", "wasabi", "egg_nigiri", "squid_nigiri"]
    assert wasabi_links(s, 0) == {egg: wasabi}
    g.play_round()
    assert g.state.round_points[0][0] == 3 + 3 * 1 + 3 + 1


def test_R7_several_empty_wasabi_each_hold_one_nigiri_oldest_first():
    """R7: "With several empty wasabi, it goes on the oldest one … Each wasabi holds at
    most one nigiri"."""
    seat0 = ["wasabi", "wasabi", "wasabi", "salmon_nigiri", "squid_nigiri", "egg_nigiri", "salmon_nigiri", "tempura", "tempura", "sashimi"]
    g = ScriptedGame(TWO, [[seat0, ["dumpling"] * 10]])
    play_until_before_last(g)
    s = g.state
    w1, w2, w3, salmon, squid, egg, salmon2 = s.tableaus[0][:7]
    assert wasabi_links(s, 0) == {salmon: w1, squid: w2, egg: w3}
    assert salmon2 not in wasabi_links(s, 0)
    g.play_round()
    assert g.state.round_points[0][0] == 6 + 9 + 3 + 2 + 5


def test_R7_wasabi_alone_scores_zero_and_the_last_card_also_lands_on_wasabi():
    """R7: "A wasabi alone scores 0"; the last card played for a seat (R6a) enters
    the tableau like any other, so a nigiri among them still lands on an empty wasabi."""
    alone = ["wasabi", "wasabi", "tempura", "tempura"] + ZERO_CARDS[2:8]
    g = one_round(TWO, [alone, ["dumpling"] * 10])
    assert g.state.round_points[0][0] == 5
    last_on_wasabi = ["wasabi", "tempura", "tempura", "sashimi", "chopsticks", "chopsticks", "chopsticks", "chopsticks", "dumpling", "squid_nigiri"]
    g = one_round(TWO, [last_on_wasabi, ["maki1"] * 6 + ["egg_nigiri"] * 4])
    assert g.state.round_points[0][0] == 5 + 1 + 9
    last = next(e for e in events(g.state) if e["type"] == "last_card")
    assert [w["seat"] for w in last["wasabi"]] == [0]


def tableau_kinds_at_end(state, seat: int, rnd: int = 1) -> list[str]:
    """Kinds of every card that stayed in ``seat``'s tableau in round ``rnd`` (from events)."""
    kinds: list[str] = []
    for e in events(state):
        if e.get("round") != rnd:
            continue
        if e["type"] == "reveal":
            kinds += [c["card"] for c in e["plays"][seat]["cards"]]
            if e["plays"][seat]["chopsticks_returned"] is not None:
                kinds.remove("chopsticks")
        elif e["type"] == "last_card":
            kinds.append(e["cards"][seat]["card"])
    return kinds


def chopsticks_deal(seat0: list[str], seat1: list[str]):
    return stacked_game(TWO, [[seat0, seat1]])


def test_R7a_wasabi_then_squid_with_chopsticks_triples_the_squid():
    """R7a: "the two cards enter the tableau in the order the player lists them.
    `[wasabi, squid_nigiri]` puts the squid on the new wasabi"."""
    state = chopsticks_deal(["chopsticks"] + ["tempura"] * 9, ["dumpling", "wasabi", "squid_nigiri"] + ["sashimi"] * 7)
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "dumpling")])
    wasabi, squid = pick(state, 0, "wasabi", "squid_nigiri")
    apply_turn(state, [(wasabi, squid), pick(state, 1, "tempura")])
    assert wasabi_links(state, 0) == {squid: wasabi}
    reveal = [e for e in events(state) if e["type"] == "reveal"][-1]
    assert reveal["wasabi"] == [{"seat": 0, "nigiri": squid, "wasabi": wasabi}]
    while state.round == 1:
        apply_turn(state, first_legal(state))
    # seat 0 kept wasabi, squid, then (first card of each hand) 4 tempura and 3 sashimi
    assert tableau_kinds_at_end(state, 0).count("tempura") == 4
    assert state.round_points[0][0] == 9 + 10 + 10


def test_R7a_squid_then_wasabi_with_chopsticks_does_not_triple():
    """R7a: "`[squid_nigiri, wasabi]` does not [put the squid on the new wasabi]"; that
    wasabi stays empty and takes the next nigiri."""
    state = chopsticks_deal(["chopsticks", "salmon_nigiri"] + ["tempura"] * 8, ["dumpling", "wasabi", "squid_nigiri"] + ["sashimi"] * 7)
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "dumpling")])
    squid, wasabi = pick(state, 0, "squid_nigiri", "wasabi")
    apply_turn(state, [(squid, wasabi), pick(state, 1, "tempura")])
    assert wasabi_links(state, 0) == {}
    assert state.tableaus[0] == [squid, wasabi]
    salmon = first_of(state, 0, "salmon_nigiri")
    apply_turn(state, [(salmon,), pick(state, 1, "sashimi")])
    assert wasabi_links(state, 0) == {salmon: wasabi}


def test_R7a_squid_then_wasabi_goes_on_an_older_empty_wasabi():
    """R7a: "`[squid_nigiri, wasabi]` does not (unless an older empty wasabi was
    already there)"."""
    state = chopsticks_deal(
        ["wasabi", "tempura", "squid_nigiri", "wasabi"] + ["tempura"] * 6,
        ["dumpling", "chopsticks"] + ["sashimi"] * 8,
    )
    apply_turn(state, [pick(state, 0, "wasabi"), pick(state, 1, "dumpling")])
    old = state.tableaus[0][0]
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "tempura")])
    squid, new = pick(state, 0, "squid_nigiri", "wasabi")
    apply_turn(state, [(squid, new), pick(state, 1, "sashimi")])
    assert wasabi_links(state, 0) == {squid: old}
    assert state.tableaus[0] == [old, squid, new]


# ---------------------------------------------------------------------------------------
# R8 — chopsticks
# ---------------------------------------------------------------------------------------

SEAT1_MIXED = ["dumpling", "tempura", "sashimi", "egg_nigiri", "squid_nigiri", "salmon_nigiri", "maki1", "maki2", "maki3", "pudding"]


@pytest.mark.parametrize(("i", "j"), [(1, 3), (3, 1), (0, 8), (7, 6)])
def test_R8_second_card_is_taken_by_id_never_by_a_shifted_index(i, j):
    """R8: "may take two cards from their hand instead of one"; a play names card ids,
    so after the first card leaves the hand the second is still exactly the named card
    (LESSONS: "the second pick taken by a hand index that shifted")."""
    state = chopsticks_deal(["chopsticks"] + ["tempura"] * 9, SEAT1_MIXED)
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "dumpling")])
    hand = state.hands[0][:]
    chopsticks = state.tableaus[0][0]
    a, b = hand[i], hand[j]
    apply_turn(state, [(a, b), pick(state, 1, "tempura")])
    assert state.tableaus[0] == [a, b]
    assert state.hands[1] == [c for c in hand if c not in (a, b)] + [chopsticks]


def test_R8_oldest_chopsticks_returns_to_the_end_of_the_passed_hand_and_travels_on():
    """R8: "exactly one of those chopsticks cards — the oldest — leaves their tableau and
    goes back into the hand they pass on (so it travels on and can be taken again)"; R16:
    "a chopsticks card returned to a hand goes to its end"."""
    state = stacked_game(
        THREE,
        [[["chopsticks", "tempura", "tempura", "maki1", "tempura"] + ["sashimi"] * 4,
          ["dumpling", "tempura", "dumpling"] + ["sashimi"] * 6,
          ["egg_nigiri", "chopsticks", "maki2", "squid_nigiri"] + ["dumpling"] * 5]],
    )
    # turn 1: seat 0 takes chopsticks (1st); turn 2 (holding seat 2's dealt hand): chopsticks (2nd)
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "dumpling"), pick(state, 2, "egg_nigiri")])
    first = state.tableaus[0][0]
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "sashimi"), pick(state, 2, "tempura")])
    second = state.tableaus[0][1]
    assert state.chopsticks[0] == [first, second]
    # turn 3: seat 0 holds seat 1's dealt hand; takes two
    hand = state.hands[0][:]
    a, b = pick(state, 0, "dumpling", "sashimi")
    apply_turn(state, [(a, b), pick(state, 1, "dumpling"), pick(state, 2, "sashimi")])
    assert state.tableaus[0] == [second, a, b]
    assert state.chopsticks[0] == [second]
    assert state.hands[1] == [c for c in hand if c not in (a, b)] + [first]
    reveal = [e for e in events(state) if e["type"] == "reveal"][-1]
    assert reveal["plays"][0]["chopsticks_returned"] == first
    assert [p["chopsticks_returned"] for p in reveal["plays"][1:]] == [None, None]
    # the returned chopsticks travel on: seat 1 takes them now and uses them next turn
    apply_turn(state, [pick(state, 0, "sashimi"), (first,), pick(state, 2, "dumpling")])
    assert state.chopsticks[1] == [first]
    assert any(len(p) == 2 for p in legal_plays(state, 1))


def test_R8_at_most_one_chopsticks_use_per_turn():
    """R8: "At most one chopsticks use per turn, however many they own" (LESSONS: "two
    chopsticks used in one turn")."""
    state = stacked_game(TWO, [[["chopsticks", "tempura", "sashimi", "dumpling", "egg_nigiri"] + ["tempura"] * 5,
                                ["dumpling", "chopsticks", "maki1", "maki2", "maki3"] + ["sashimi"] * 5]])
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "dumpling")])
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "tempura")])
    assert len(state.chopsticks[0]) == 2
    assert max(len(p) for p in legal_plays(state, 0)) == 2
    three = pick(state, 0, "sashimi", "dumpling", "egg_nigiri")
    before = snapshot(state)
    with pytest.raises(InvalidPlayError) as err:
        apply_turn(state, [three, pick(state, 1, "maki1")])
    assert err.value.seat == 0 and err.value.rule == "R4"
    assert snapshot(state) == before
    apply_turn(state, [pick(state, 0, "sashimi", "dumpling"), pick(state, 1, "maki1")])
    assert len(state.chopsticks[0]) == 1  # one used, the other still there for a later turn
    assert any(len(p) == 2 for p in legal_plays(state, 0))


def test_R8_two_cards_without_chopsticks_are_illegal():
    """R8: "A player with at least one chopsticks card in their tableau at the start of a
    turn … may take two cards"; without one, two cards are an IllegalPlayError."""
    state = new_game(THREE, 1)
    assert all(len(p) == 1 for p in legal_plays(state, 0))
    two = tuple(state.hands[0][:2])
    before = snapshot(state)
    with pytest.raises(IllegalPlayError) as err:
        apply_turn(state, [two, (state.hands[1][0],), (state.hands[2][0],)])
    assert err.value.rule == "R8" and err.value.seat == 0
    assert snapshot(state) == before


def test_R8a_chopsticks_cannot_be_used_the_turn_they_are_taken():
    """R8a: "Chopsticks taken this turn cannot be used this turn"."""
    state = chopsticks_deal(["chopsticks", "squid_nigiri"] + ["tempura"] * 8, ["dumpling"] + ["sashimi"] * 9)
    both = pick(state, 0, "chopsticks", "squid_nigiri")
    assert both not in legal_plays(state, 0)
    before = snapshot(state)
    with pytest.raises(IllegalPlayError) as err:
        apply_turn(state, [both, pick(state, 1, "dumpling")])
    assert err.value.rule == "R8"
    assert snapshot(state) == before
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "dumpling")])
    assert any(len(p) == 2 for p in legal_plays(state, 0))  # from the next turn on


def test_R8a_chopsticks_are_cleared_at_the_end_of_the_round():
    """R8a: "Chopsticks are cleared with the tableau at the end of the round, so they only
    work within the round they were taken"."""
    seat0 = ["chopsticks", "chopsticks", "tempura", "tempura", "tempura", "tempura", "tempura", "tempura", "tempura", "chopsticks"]
    g = ScriptedGame(TWO, [[seat0, ["sashimi"] * 10]])
    g.play_round()
    s = g.state
    assert s.round == 2 and s.chopsticks == [[], []] and s.tableaus == [[], []]
    assert all(len(p) == 1 for p in legal_plays(s, 0))
    with pytest.raises(IllegalPlayError):
        check_play(s, 0, tuple(s.hands[0][:2]))
    assert sum(1 for c in s.discard if s.kind(c) == "chopsticks") == 3


def test_R8b_taking_chopsticks_as_one_of_the_two_cards_returns_the_old_one():
    """R8b: "Taking a chopsticks card as one of the two cards is allowed; the card that
    returns to the hand is one that was in the tableau at the start of the turn"."""
    state = chopsticks_deal(["chopsticks"] + ["tempura"] * 9, ["dumpling", "chopsticks", "squid_nigiri"] + ["sashimi"] * 7)
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "dumpling")])
    old = state.tableaus[0][0]
    new, squid = pick(state, 0, "chopsticks", "squid_nigiri")
    apply_turn(state, [(new, squid), pick(state, 1, "tempura")])
    assert state.tableaus[0] == [new, squid]
    assert state.chopsticks[0] == [new]
    assert state.hands[1][-1] == old
    # the new chopsticks work from the next turn on
    assert any(len(p) == 2 for p in legal_plays(state, 0))


def test_R8c_hand_sizes_stay_equal_after_a_chopsticks_turn():
    """R8c: "Hand sizes stay equal for everyone: with chopsticks a player removes two
    cards and adds one back"."""
    state = stacked_game(THREE, [[["chopsticks"] + ["tempura"] * 8, ["dumpling"] * 9, ["sashimi"] * 9]])
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "dumpling"), pick(state, 2, "sashimi")])
    apply_turn(state, [pick(state, 0, "sashimi", "sashimi"), pick(state, 1, "tempura"), pick(state, 2, "dumpling")])
    assert [len(h) for h in state.hands] == [7, 7, 7]
    assert sorted(all_cards(state)) == list(range(108))


def test_R8_chopsticks_with_two_cards_left_then_the_last_card():
    """R8 "at least two cards in hand" at the last decision: both cards are taken and the
    returned chopsticks is the card the next seat receives as its last card (R6a)."""
    seat0 = ["chopsticks"] + ["tempura"] * 9
    state = chopsticks_deal(seat0, ["sashimi"] * 10)
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "sashimi")])
    chop = state.tableaus[0][0]
    while len(state.hands[0]) > 2:
        apply_turn(state, [(state.hands[0][0],), (state.hands[1][0],)])
    pair = tuple(state.hands[0])
    assert pair in legal_plays(state, 0)
    apply_turn(state, [pair, (state.hands[1][0],)])
    last = next(e for e in events(state) if e["type"] == "last_card")
    assert last["cards"][1]["id"] == chop
    assert state.round == 2
    r1 = [e for e in events(state) if e["type"] == "reveal" and e["round"] == 1]
    taken = [c["id"] for e in r1 for c in e["plays"][0]["cards"]]
    assert len(taken) == 10  # 9 decisions: 8 single cards (the first the chopsticks), then the pair


# ---------------------------------------------------------------------------------------
# R9–R11 — end of round
# ---------------------------------------------------------------------------------------


def test_R9_round_scored_after_the_last_card_pudding_not_scored():
    """R9: "After the last card, score each tableau … Pudding is not scored now"."""
    seat0 = ["pudding"] * 4 + ["tempura", "tempura"] + ZERO_CARDS[:4]
    g = ScriptedGame(TWO, [[seat0, ["sashimi"] * 10]])
    play_until_before_last(g)
    assert g.state.round_points == [] and g.state.scores == [0, 0]
    g.play_turn()
    assert g.state.round == 2
    assert g.state.round_points == [[5, 30]]
    assert g.state.scores == [5, 30]
    assert g.state.puddings() == [4, 0]


def test_R10_worked_example_6_4_4_1_gives_6_1_1_0():
    """R10: "Symbols 6,4,4,1 → 6,1,1,0" (BRDGMZ: Anouk 6, Bram and Cas 4, Daan 1)."""
    assert maki_points([6, 4, 4, 1]) == [6, 1, 1, 0]
    g = one_round(FOUR, [["maki3", "maki3"], ["maki2", "maki2"], ["maki1", "maki3"], ["maki1"]])
    end = round_end(g.state)
    assert end["maki_symbols"] == [6, 4, 4, 1]
    assert end["maki_points"] == [6, 1, 1, 0]


def test_R10_worked_example_5_5_2_tie_for_first_no_second_place():
    """R10: "A tie for first splits 6 evenly … and then no second place is awarded.
    Symbols 5,5,2 → 3,3,0"."""
    assert maki_points([5, 5, 2]) == [3, 3, 0]
    g = one_round(THREE, [["maki3", "maki2"], ["maki2", "maki1", "maki2"], ["maki2"]])
    end = round_end(g.state)
    assert end["maki_symbols"] == [5, 5, 2]
    assert end["maki_points"] == [3, 3, 0]


def test_R10_worked_example_4_0_0_zero_symbols_never_score():
    """R10: "a player with 0 symbols never scores maki points … Symbols 4,0,0 → 6,0,0"."""
    assert maki_points([4, 0, 0]) == [6, 0, 0]
    assert maki_points([0, 0]) == [0, 0]
    assert maki_points([0, 5]) == [0, 6]
    g = one_round(THREE, [["maki2", "maki2"], [], []])
    end = round_end(g.state)
    assert end["maki_symbols"] == [4, 0, 0]
    assert end["maki_points"] == [6, 0, 0]


def test_R10_counts_symbols_not_cards_and_ties_for_second_split_3():
    """R10: "count the symbols on each player's maki cards (not the cards) … A tie for
    second splits 3 evenly, rounding down. Remainders are lost"."""
    g = one_round(FOUR, [["maki3"], ["maki1", "maki1"], ["maki2"], ["maki2"]])
    end = round_end(g.state)
    assert end["maki_symbols"] == [3, 2, 2, 2]
    assert end["maki_points"] == [6, 1, 1, 1]
    assert maki_points([3, 3, 3, 1]) == [2, 2, 2, 0]
    assert maki_points([9, 1, 1, 1, 1]) == [6, 0, 0, 0, 0]  # 3 over 4 is 0 each
    assert maki_points([2, 1, 1]) == [6, 1, 1]


def test_R11_puddings_kept_everything_else_discarded():
    """R11: "Everything but pudding goes to the discard pile. Puddings stay in front of
    their owner until the end of the game"."""
    g = ScriptedGame(THREE, [[["pudding", "pudding", "maki1"], ["pudding"], []]])
    g.play_round()
    s = g.state
    assert [kinds_of(s, k) for k in s.kept_puddings] == [["pudding"] * 2, ["pudding"], []]
    assert len(s.discard) == 27 - 3 and "pudding" not in kinds_of(s, s.discard)
    assert s.tableaus == [[], [], []]
    assert observe(s, 2).puddings == [2, 1, 0]
    assert sorted(all_cards(s)) == list(range(108))


# ---------------------------------------------------------------------------------------
# R12 — pudding
# ---------------------------------------------------------------------------------------


def pudding_game(config: GameConfig, counts: list[int]) -> tuple:
    g = ScriptedGame(config, [[["pudding"] * n for n in counts]])
    res = result(g.play_all())
    return res.puddings, res.pudding_points


def test_R12_worked_example_3_2_0_0():
    """R12: "Examples: 3,2,0,0 → +6, 0, −3, −3" (BRDGMZ: Anouk 3, Bram 2, Cas and Daan
    none)."""
    assert pudding_points([3, 2, 0, 0]) == [6, 0, -3, -3]
    assert pudding_game(FOUR, [3, 2, 0, 0]) == ((3, 2, 0, 0), (6, 0, -3, -3))


def test_R12_worked_example_4_3_0_0():
    """R12: "4,3,0,0 → +6, 0, −3, −3" (Spelregelwijzer's rulebook example)."""
    assert pudding_points([4, 3, 0, 0]) == [6, 0, -3, -3]
    assert pudding_game(FOUR, [4, 3, 0, 0]) == ((4, 3, 0, 0), (6, 0, -3, -3))


def test_R12_minus_6_over_4_tied_lowest_is_minus_1_each_not_minus_2():
    """R12: "ties split evenly and the remainder is lost, for the bonus and the penalty
    alike (−6 over 4 players is −1 each) … not as rounding −1.5 down to −2"."""
    assert pudding_points([1, 0, 0, 0, 0]) == [6, -1, -1, -1, -1]
    assert pudding_game(FIVE, [4, 1, 1, 1, 1]) == ((4, 1, 1, 1, 1), (6, -1, -1, -1, -1))
    assert pudding_points([5, 0, 0, 0]) == [6, -2, -2, -2]
    assert pudding_points([3, 3, 3, 0, 0]) == [2, 2, 2, -3, -3]
    assert pudding_points([2, 2, 2, 2, 0]) == [1, 1, 1, 1, -6]


def test_R12_all_equal_nobody_gains_or_loses():
    """R12: "If all players have the same count, nobody gains or loses"."""
    assert pudding_points([2, 2, 2, 2]) == [0, 0, 0, 0]
    assert pudding_points([0, 0, 0]) == [0, 0, 0]
    assert pudding_game(FOUR, [2, 2, 2, 2]) == ((2, 2, 2, 2), (0, 0, 0, 0))
    assert pudding_game(TWO, [1, 1]) == ((1, 1), (0, 0))


def test_R12_two_players_only_the_bonus():
    """R12: "With 2 players (standard game) nobody loses points: only the +6 is awarded"."""
    assert pudding_points([3, 1], penalty=False) == [6, 0]
    assert pudding_game(TWO, [3, 1]) == ((3, 1), (6, 0))
    assert pudding_game(TWO, [0, 2]) == ((0, 2), (0, 6))
    assert pudding_game(TWO, [0, 0]) == ((0, 0), (0, 0))


def test_R12_no_pudding_counts_as_zero_and_takes_the_penalty():
    """R12: "A player with no pudding counts as having 0 and can take the penalty"."""
    assert pudding_game(THREE, [2, 1, 0]) == ((2, 1, 0), (6, 0, -6))
    assert pudding_game(THREE, [2, 2, 0]) == ((2, 2, 0), (3, 3, -6))


def test_R12_pudding_is_scored_once_after_round_3():
    """R12: "After round 3's scoring, pudding"; puddings of all rounds count."""
    g = ScriptedGame(THREE, [[["pudding"], [], []], [["pudding"], [], []], [[], ["pudding"], []]])
    g.play_round()
    g.play_round()
    assert g.state.scores == [sum(r[0] for r in g.state.round_points), sum(r[1] for r in g.state.round_points), sum(r[2] for r in g.state.round_points)]
    res = result(g.play_all())
    assert res.puddings == (2, 1, 0)
    assert res.pudding_points == (6, 0, -6)
    assert list(res.scores) == [sum(r[s] for r in res.round_points) + res.pudding_points[s] for s in range(3)]


# ---------------------------------------------------------------------------------------
# R13 — winner and places
# ---------------------------------------------------------------------------------------

TIE_ROUND = ["tempura", "tempura", "dumpling", "dumpling", "sashimi", "sashimi", "maki2", "wasabi", "salmon_nigiri", "maki3"]


def test_R13_ranks_points_then_puddings_shared_places_1_1_3():
    """R13: "Highest total wins. A tie is broken by most puddings … if still tied, those
    players share the place … shared places are numbered as in sport (1, 1, 3)"."""
    assert rank([10, 10, 5], [1, 1, 0]) == [1, 1, 3]
    assert rank([10, 10, 5], [0, 1, 3]) == [2, 1, 3]
    assert rank([5, 10, 10, 10], [0, 2, 2, 1]) == [4, 1, 1, 3]
    assert rank([-3, -3], [0, 0]) == [1, 1]
    assert rank([7, 7, 7, 7, 7], [1, 1, 1, 1, 1]) == [1] * 5


@pytest.mark.parametrize("swap", [False, True])
def test_R13_tie_on_points_broken_by_puddings_in_a_real_game(swap):
    """R13: "A tie is broken by most puddings" — and the first seat wins no tie by
    default: the seat with more puddings wins whichever seat it is."""
    more = ["pudding", "pudding", "tempura", "tempura", "sashimi", "sashimi", "sashimi", "dumpling", "dumpling", "wasabi"]
    fewer = ["pudding", "tempura", "tempura", "sashimi", "sashimi", "sashimi", "dumpling", "dumpling", "dumpling", "squid_nigiri"]
    r1 = [fewer, more] if swap else [more, fewer]
    g = ScriptedGame(TWO, [r1, [TIE_ROUND, TIE_ROUND], [TIE_ROUND, TIE_ROUND]])
    res = result(g.play_all())
    assert res.round_points[0] == ((24, 18) if swap else (18, 24))
    assert res.scores == (58, 58)
    assert res.ranks == ((2, 1) if swap else (1, 2))


def test_R13_full_tie_is_shared_the_first_seat_never_wins_ties():
    """R13: "if still tied, those players share the place (a draw between them)"
    (LESSONS: "the first seat winning ties")."""
    g = ScriptedGame(TWO, [[TIE_ROUND, TIE_ROUND]] * 3)
    res = result(g.play_all())
    assert res.scores[0] == res.scores[1] and res.puddings == (0, 0)
    assert res.ranks == (1, 1)
    assert res.winners == (0, 1)


def test_R13_scores_can_be_negative_never_clamped():
    """R12/R13: pudding's −6 can take a total below zero (LESSONS: "scores clamped at
    zero (they can be negative)")."""
    zero = ["tempura", "sashimi", "sashimi", "wasabi", "wasabi", "chopsticks"]
    g = ScriptedGame(
        THREE,
        [
            [["maki3", "maki3", "pudding"], ["maki3", "maki2", "pudding"], zero + ["maki1"] * 3],
            [["maki3", "maki3", "pudding"], ["maki3", "maki2"], zero + ["maki1"] * 3],
            [["maki2", "maki2", "maki2", "pudding"], ["maki3", "maki2"], zero + ["chopsticks", "maki2", "maki2"]],
        ],
    )
    res = result(g.play_all())
    assert [r[2] for r in res.round_points] == [0, 0, 0]
    assert res.puddings == (3, 1, 0)
    assert res.pudding_points == (6, 0, -6)
    assert res.scores[2] == -6
    assert res.ranks[2] == 3


# ---------------------------------------------------------------------------------------
# R14 — alternating direction
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [3, 4, 5])
def test_R14_alternate_rounds_1_and_3_pass_left_round_2_right(players):
    """R14: "Alternating direction: rounds 1 and 3 pass left, round 2 passes right"."""
    state = new_game(GameConfig(players, Variant.ALTERNATE), 6)
    expected = {1: ("left", 1), 2: ("right", -1), 3: ("left", 1)}
    for rnd in (1, 2, 3):
        assert state.round == rnd
        name, step = expected[rnd]
        assert observe(state, 0).direction == name
        start = [e for e in events(state) if e["type"] == "round_start"][-1]
        assert start["direction"] == name
        before = [h[:] for h in state.hands]
        plays = first_legal(state)
        apply_turn(state, plays)
        for i in range(players):
            assert state.hands[(i + step) % players] == [c for c in before[i] if c not in plays[i]]
        play_first_until(state, rnd + 1, 1)
    standard = new_game(GameConfig(players), 6)
    play_first_until(standard, 2, 1)
    assert observe(standard, 0).direction == "left"


# ---------------------------------------------------------------------------------------
# R15 — the two-player dummy variant
# ---------------------------------------------------------------------------------------


def test_R15_seat_0_controls_first_and_draws_the_top_of_the_dummy_pile():
    """R15: "Each turn one player controls the dummy: they draw the top card of the dummy
    pile into their hand … seat 0 controls on the first turn of round 1"."""
    state = new_game(DUMMY, 9)
    assert state.controller == 0
    assert [len(h) for h in state.hands] == [10, 9, 8]
    assert observe(state, 0).dummy and observe(state, 0).controller == 0
    assert not observe(state, 1).dummy
    for _ in range(8):
        pile = state.hands[2][:]
        apply_turn(state, first_legal(state))
        assert state.hands[state.controller][-1] == pile[0]
        assert state.hands[2] == pile[1:]


def test_R15_control_alternates_every_turn_and_across_rounds():
    """R15: "Control alternates every turn … control keeps alternating across rounds"."""
    state = new_game(DUMMY, 10)
    seen: dict[int, list[int]] = {1: [], 2: [], 3: []}
    while not state.over:
        seen[state.round].append(state.controller)
        apply_turn(state, first_legal(state))
    assert seen[1] == [0, 1, 0, 1, 0, 1, 0, 1, 0]
    assert seen[2] == [1, 0, 1, 0, 1, 0, 1, 0, 1]
    assert seen[3] == seen[1]
    reveals = [e for e in events(state) if e["type"] == "reveal"]
    assert [e["controller"] for e in reveals] == seen[1] + seen[2] + seen[3]


def test_R15_controller_takes_one_card_and_gives_one_to_the_dummy():
    """R15: "then choose one card for themselves and one for the dummy; the other player
    chooses one card for themselves. Reveal, then the two players swap hands; the dummy
    pile stays"."""
    state = new_game(DUMMY, 12)
    hand0, hand1, pile = (h[:] for h in state.hands)
    legal = legal_plays(state, 0)
    assert legal == [(a, b) for a in hand0 for b in hand0 if a != b]
    assert legal_plays(state, 1) == [(c,) for c in hand1]
    own, dummy = hand0[3], hand0[7]
    other = hand1[2]
    apply_turn(state, [(own, dummy), (other,)])
    assert state.tableaus == [[own], [other], [dummy]]
    assert state.hands[0] == [c for c in hand1 if c != other]
    assert state.hands[1] == [c for c in hand0 if c not in (own, dummy)] + [pile[0]]
    assert state.hands[2] == pile[1:]
    reveal = events(state)[-1]
    assert [[c["id"] for c in p["cards"]] for p in reveal["plays"]] == [[own], [other], [dummy]]


def test_R15_controller_must_name_the_dummys_card():
    """R15: the controller's play is their card(s) then the dummy's card; anything else
    is refused and the state is unchanged."""
    state = new_game(DUMMY, 13)
    h0, h1 = state.hands[0], state.hands[1]
    before = snapshot(state)
    with pytest.raises(InvalidPlayError) as err:
        apply_turn(state, [(h0[0],), (h1[0],)])
    assert err.value.rule == "R15" and err.value.seat == 0
    with pytest.raises(IllegalPlayError):
        apply_turn(state, [(h0[0], h1[1]), (h1[0],)])
    with pytest.raises(IllegalPlayError):
        apply_turn(state, [(h0[0], state.hands[2][0]), (h1[0],)])  # the pile is not in hand
    with pytest.raises(InvalidPlayError):
        apply_turn(state, [(h0[0], h0[1]), None])  # the other player decides this turn
    with pytest.raises(IllegalPlayError):
        apply_turn(state, [(h0[0], h0[1]), (h1[0], h1[1])])  # no chopsticks
    assert snapshot(state) == before


def test_R15_the_dummy_seat_never_decides():
    """R15: the dummy's hand "stays face down as a pile"; only the two players choose.
    legal_plays documents "An empty list means the seat does not decide this turn"."""
    state = new_game(DUMMY, 3)
    assert 2 not in state.deciding_seats()
    with pytest.raises(InvalidPlayError):
        check_play(state, 2, (state.hands[2][0],))
    assert legal_plays(state, 2) == []
    assert not observe(state, 2).deciding


def test_R15_decisions_controller_every_turn_other_while_holding_two_or_more():
    """R15: "each turn the controller decides and the other player decides only while
    holding two or more cards, and hand sizes differ by the drawn card during a turn"."""
    state = new_game(DUMMY, 14)
    per_round: dict[int, list[list[int]]] = {}
    while not state.over:
        rnd, turn, c = state.round, state.turn, state.controller
        assert [len(state.hands[c]), len(state.hands[1 - c]), len(state.hands[2])] == [11 - turn, 10 - turn, 9 - turn]
        deciding = state.deciding_seats()
        assert (1 - c in deciding) == (turn <= 8)
        assert [bool(legal_plays(state, s)) for s in (0, 1)] == [s in deciding for s in (0, 1)]
        per_round.setdefault(rnd, []).append(sorted(deciding))
        apply_turn(state, first_legal(state))
    for rnd in (1, 2, 3):
        assert len(per_round[rnd]) == 9


def test_R15_the_other_players_last_card_is_played_for_them():
    """R15: "With one card left in each hand and one in the pile, the controller still
    chooses which of their two cards goes to the dummy; the other player's last card is
    played for them"."""
    state = new_game(DUMMY, 15)
    play_first_until(state, 1, 9)
    c = state.controller
    assert c == 0 and len(state.hands[0]) == 2 and len(state.hands[1]) == 1 and state.hands[2] == []
    a, b = state.hands[0]
    assert legal_plays(state, 0) == [(a, b), (b, a)]
    assert legal_plays(state, 1) == []
    last = state.hands[1][0]
    with pytest.raises(InvalidPlayError) as err:
        apply_turn(state, [(b, a), (last,)])
    assert err.value.rule == "R15" and err.value.seat == 1
    tab = [t[:] for t in state.tableaus]
    apply_turn(state, [(b, a), None])
    reveal = [e for e in events(state) if e["type"] == "reveal"][-1]
    assert [[x["id"] for x in p["cards"]] for p in reveal["plays"]] == [[b], [last], [a]]
    assert state.round == 2
    assert [len(t) for t in tab] == [8, 8, 8]


def test_R15_controller_chopsticks_need_three_cards_after_the_draw():
    """R15: "the controller may use chopsticks for their own two cards when their hand
    holds at least three cards after the draw (then three cards leave the hand and one
    chopsticks returns)"."""
    state = stacked_game(DUMMY, [[["chopsticks"] + ["tempura"] * 8, ["sashimi"] * 9, ["dumpling"] * 9]])
    c0 = pick(state, 0, "chopsticks")[0]
    apply_turn(state, [(c0, first_of(state, 0, "dumpling")), pick(state, 1, "sashimi")])
    apply_turn(state, [pick(state, 0, "sashimi"), pick(state, 1, "tempura", "dumpling")])
    # turn 3: seat 0 controls again, 8 cards after the draw
    assert state.controller == 0 and len(state.hands[0]) == 8
    triples = [p for p in legal_plays(state, 0) if len(p) == 3]
    assert len(triples) == 8 * 7 * 6
    hand = state.hands[0][:]
    a, b, d = hand[0], hand[5], hand[7]
    apply_turn(state, [(a, b, d), (state.hands[1][0],)])
    assert kinds_of(state, state.tableaus[0][:1]) == ["sashimi"]  # turn 2, as the other player
    assert state.tableaus[0][1:] == [a, b] and c0 not in state.tableaus[0]
    assert state.tableaus[2][-1] == d
    assert [len(state.hands[0]), len(state.hands[1])] == [6, 7]  # 6 each, plus seat 1's draw
    assert state.hands[1][-2] == c0 and state.hands[1][:-2] == [x for x in hand if x not in (a, b, d)]
    reveal = [e for e in events(state) if e["type"] == "reveal"][-1]
    assert reveal["plays"][0]["chopsticks_returned"] == c0


def test_R15_controller_with_two_cards_cannot_use_chopsticks():
    """R15: chopsticks for the controller need "at least three cards after the draw"; on
    the last turn (two cards) only (own, dummy) pairs are legal."""
    turns = [("chopsticks", "tempura", "sashimi")] + [(None, None, None)] * 8
    g = ScriptedDummyGame([turns])
    while g.state.turn < 9:
        g.play_turn()
    s = g.state
    assert s.controller == 0 and s.chopsticks[0] and len(s.hands[0]) == 2
    assert all(len(p) == 2 for p in legal_plays(s, 0))


def test_R15_other_player_may_use_chopsticks_as_usual():
    """R15: "the other player may use chopsticks as usual (two cards from a hand of at
    least two)"."""
    state = stacked_game(DUMMY, [[["dumpling"] * 9, ["chopsticks"] + ["sashimi"] * 8, ["tempura"] * 9]])
    apply_turn(state, [pick(state, 0, "dumpling", "tempura"), pick(state, 1, "chopsticks")])
    chop = state.tableaus[1][0]
    # turn 2: seat 1 controls; turn 3: seat 1 is the other player again, with chopsticks
    apply_turn(state, [pick(state, 0, "sashimi"), pick(state, 1, "dumpling", "tempura")])
    assert state.controller == 0
    assert any(len(p) == 2 for p in legal_plays(state, 1))
    two = tuple(state.hands[1][:2])
    apply_turn(state, [first_legal(state)[0], two])
    assert state.tableaus[1][-2:] == list(two)
    assert chop not in state.tableaus[1]
    assert len(state.hands[1]) == len(state.hands[0]) + 1  # seat 1 now controls and drew
    assert state.hands[0][-1] == chop  # returned to the hand seat 1 passed (swapped) on


def test_R15_the_dummys_chopsticks_are_never_used():
    """R15: "chopsticks in the dummy's tableau are never used"."""
    turns = [("tempura", "chopsticks", "sashimi")] + [(None, None, None)] * 8
    g = ScriptedDummyGame([turns])
    while g.state.turn < 9:
        g.play_turn()
        assert len(g.state.tableaus[2]) == g.state.turn - 1
    assert "chopsticks" in tableau_kinds(g.state, 2)
    g.play_all()
    for e in events(g.state):
        if e["type"] == "reveal":
            assert len(e["plays"][2]["cards"]) == 1
            assert e["plays"][2]["chopsticks_returned"] is None


def test_R15_the_dummys_wasabi_works():
    """R15: "the dummy's cards enter its tableau under R7 (its wasabi work)"."""
    dummy = ["wasabi", "squid_nigiri", "tempura", "tempura", "sashimi", "dumpling", "egg_nigiri", "chopsticks", "chopsticks"]
    g = ScriptedDummyGame([[(None, d, None) for d in dummy]])
    g.play_round()
    assert g.state.round_points[0][2] == 9 + 5 + 0 + 1 + 1
    r1 = [e for e in events(g.state) if e["type"] == "reveal" and e["round"] == 1]
    assert [w["seat"] for e in r1 for w in e["wasabi"]] == [2]


def test_R15_dummy_scored_as_a_third_player_but_wins_nothing():
    """R15: "the dummy is scored as a third player under 3-player rules (maki, and
    pudding with the penalty …), and its total can win nothing: the winner is the better
    of the two real players"."""
    r1 = [
        ("pudding", "wasabi", "pudding"),  # seat 0 controls odd turns
        ("tempura", "squid_nigiri", "pudding"),  # seat 1 controls, seat 0 is the other
        ("maki1", "maki3", "tempura"),
        ("maki1", "maki3", "tempura"),
        ("tempura", "maki3", "sashimi"),
        ("sashimi", "dumpling", "sashimi"),
        ("sashimi", "dumpling", "dumpling"),
        ("dumpling", "dumpling", "salmon_nigiri"),
        ("salmon_nigiri", "dumpling", "egg_nigiri"),
    ]
    big = [(None, d, None) for d in ["tempura", "tempura", "sashimi", "sashimi", "sashimi", "dumpling", "dumpling", "maki3", "squid_nigiri"]]
    g = ScriptedDummyGame([r1, big, big])
    g.play_round()
    end = round_end(g.state)
    assert end["maki_symbols"][2] == 9 and end["maki_points"][2] == 6
    assert end["points"][2] == 9 + 6 + 10  # squid on wasabi, maki first, 4 dumplings
    res = result(g.play_all())
    assert res.puddings == (2, 1, 0)
    assert res.pudding_points == (6, 0, -6)  # three seats: the penalty applies
    assert res.scores[2] > max(res.scores[:2])
    assert res.ranks[2] == 3
    assert 2 not in res.winners and res.winners
    assert sorted(res.ranks[:2]) in ([1, 2], [1, 1])


# ---------------------------------------------------------------------------------------
# R16 — order
# ---------------------------------------------------------------------------------------


def test_R16_legal_plays_singles_in_hand_order_then_ordered_pairs():
    """R16: "Legal plays are listed in a fixed order: single cards in hand order, then
    ordered pairs (i, j), i ≠ j, by i then j"."""
    state = chopsticks_deal(["chopsticks"] + ["tempura"] * 9, SEAT1_MIXED)
    apply_turn(state, [pick(state, 0, "chopsticks"), pick(state, 1, "dumpling")])
    hand = state.hands[0]
    n = len(hand)
    expected = [(hand[i],) for i in range(n)] + [(hand[i], hand[j]) for i in range(n) for j in range(n) if i != j]
    assert legal_plays(state, 0) == expected
    assert observe(state, 0).legal == [list(p) for p in expected]
    assert legal_plays(state, 1) == [(c,) for c in state.hands[1]]


def test_R16_hands_keep_order_and_tableaus_keep_entry_order():
    """R16: "every hand is an ordered list: dealt in deck order … passing keeps the order
    … Tableaus keep the order cards entered them"."""
    state = new_game(FOUR, 31)
    taken: list[list[int]] = [[] for _ in range(4)]
    while state.round == 1:
        before = [h[:] for h in state.hands]
        plays = [(h[-1],) for h in state.hands]
        apply_turn(state, plays)
        for s in range(4):
            taken[s].append(plays[s][0])
        if state.round == 1:
            for s in range(4):
                assert state.hands[(s + 1) % 4] == before[s][:-1]
            assert [list(state.tableaus[s]) for s in range(4)] == taken
    last = next(e for e in events(state) if e["type"] == "last_card")
    for s in range(4):
        taken[s].append(last["cards"][s]["id"])
    entered = [[c["id"] for e in events(state) if e["type"] == "reveal" for c in e["plays"][s]["cards"]] for s in range(4)]
    assert [t[:-1] for t in taken] == entered


def test_R16_a_seeded_fallback_pick_is_reproducible():
    """R16: "With this, a seeded fallback pick (a random index into the legal list) is
    reproducible"."""

    def run(seed: int, config: GameConfig) -> list[dict]:
        state = new_game(config, seed)
        rng = random.Random(seed * 7 + 1)
        while not state.over:
            plays = []
            for s in range(config.players):
                legal = legal_plays(state, s)
                plays.append(legal[rng.randrange(len(legal))] if legal else None)
            apply_turn(state, plays)
        return events(state)

    for config in (FOUR, DUMMY, GameConfig(3, Variant.ALTERNATE)):
        assert run(5, config) == run(5, config)


# ---------------------------------------------------------------------------------------
# Errors (R4, R8): not a play vs not legal here, named precisely, state unchanged
# ---------------------------------------------------------------------------------------


def state_at_round_2_turn_3():
    state = new_game(THREE, 40)
    play_first_until(state, 2, 3)
    return state


@pytest.mark.parametrize(
    "bad",
    [5, "5", None, {"id": 1}, 1.0, [], [1.5], ["3"], [True], (False,), [None], [[1]], "own-twice", "three"],
)
def test_R4_malformed_play_is_invalid_play_error(bad):
    """R4: a play is "one card from their hand (two with chopsticks)": anything that is
    not a list of one or two distinct integer card ids is an InvalidPlayError."""
    state = state_at_round_2_turn_3()
    hand = state.hands[1]
    if bad == "own-twice":
        bad = [hand[0], hand[0]]
    elif bad == "three":
        bad = hand[:3]
    plays = first_legal(state)
    plays[1] = bad
    before = snapshot(state)
    with pytest.raises(InvalidPlayError) as err:
        apply_turn(state, plays)
    with pytest.raises(InvalidPlayError):
        check_play(state, 1, bad)
    e = err.value
    assert (e.seat, e.round, e.turn, e.rule) == (1, 2, 3, "R4")
    msg = str(e)
    assert "seat 1, round 2 turn 3" in msg and msg.endswith("[R4]")
    assert all(repr(x) in msg for x in bad) if isinstance(bad, list | tuple) else repr(bad) in msg
    assert snapshot(state) == before


def test_R4_bool_ids_are_invalid_even_when_0_or_1_is_in_hand():
    """R4: card ids are integers; ``True``/``False`` are not card ids even though they
    compare equal to 1 and 0."""
    for seed in range(200):
        state = new_game(TWO, seed)
        if 1 in state.hands[0] and 0 in state.hands[1]:
            break
    else:
        pytest.skip("no seed with cards 1 and 0 dealt")
    for plays in ([(True,), (state.hands[1][0],)], [[True], [state.hands[1][0]]], [(state.hands[0][0],), (False,)]):
        before = snapshot(state)
        with pytest.raises(InvalidPlayError):
            apply_turn(state, plays)
        assert snapshot(state) == before


@pytest.mark.parametrize("kind", ["no-such-card", "negative", "pile", "other-seat", "tableau"])
def test_R4_card_not_in_hand_is_illegal_play_error(kind):
    """R4: "each picks one card from their hand": a well-formed play naming a card that is
    not in the seat's own hand is an IllegalPlayError naming the card."""
    state = state_at_round_2_turn_3()
    card = {
        "no-such-card": 108,
        "negative": -1,
        "pile": state.pile[0],
        "other-seat": state.hands[2][0],
        "tableau": state.tableaus[1][0],
    }[kind]
    plays = first_legal(state)
    plays[1] = [card]
    before = snapshot(state)
    with pytest.raises(IllegalPlayError) as err:
        apply_turn(state, plays)
    e = err.value
    assert (e.seat, e.round, e.turn, e.rule) == (1, 2, 3, "R4")
    assert str(card) in str(e) and "seat 1" in str(e) and "round 2 turn 3" in str(e)
    assert list(e.cards) == [card]
    assert snapshot(state) == before


def test_R4_error_classes_and_whole_turn_checks():
    """Errors are split by cause (InvalidPlayError: not a play; IllegalPlayError: not
    legal here), both PlayError/ValueError; a wrong number of entries and a finished game
    are refused too, with the state unchanged."""
    assert issubclass(InvalidPlayError, PlayError) and issubclass(IllegalPlayError, PlayError)
    assert issubclass(PlayError, ValueError)
    assert not issubclass(InvalidPlayError, IllegalPlayError) and not issubclass(IllegalPlayError, InvalidPlayError)
    state = new_game(THREE, 2)
    before = snapshot(state)
    with pytest.raises(InvalidPlayError) as err:
        apply_turn(state, first_legal(state)[:2])
    assert err.value.seat is None and "round 1 turn 1" in str(err.value)
    assert snapshot(state) == before
    play_first_until(state, 4, 1)
    assert state.over and legal_plays(state, 0) == []
    with pytest.raises(IllegalPlayError):
        apply_turn(state, [(0,), (1,), (2,)])


def test_R8_two_cards_without_chopsticks_message_names_the_cards_and_rule():
    """R8 error text: seat, round, turn, the two cards and the rule id."""
    state = state_at_round_2_turn_3()
    a, b = state.hands[2][:2]
    with pytest.raises(IllegalPlayError) as err:
        check_play(state, 2, [a, b])
    msg = str(err.value)
    assert err.value.rule == "R8" and msg.endswith("[R8]")
    assert "seat 2, round 2 turn 3" in msg and str(a) in msg and str(b) in msg


def test_R4_the_state_is_unchanged_when_any_one_seat_errs():
    """A turn is all or nothing: a good play of one seat is not revealed (nor its hand
    changed) when another seat's play is refused (R4: no choice seen before the reveal)."""
    state = new_game(FIVE, 77)
    for bad_seat in range(5):
        plays = first_legal(state)
        plays[bad_seat] = (state.hands[(bad_seat + 1) % 5][0],)
        before = snapshot(state)
        views = [observe(state, s) for s in range(5)]
        with pytest.raises(IllegalPlayError) as err:
            apply_turn(state, plays)
        assert err.value.seat == bad_seat
        assert snapshot(state) == before
        assert [observe(state, s) for s in range(5)] == views


# ---------------------------------------------------------------------------------------
# The rule texts' worked examples (RULES.md names them), played through the engine turn by turn
# ---------------------------------------------------------------------------------------


def test_R10_norwegian_three_player_example_played_turn_by_turn():
    """The Norwegian guide: "A vinner runden med 18 poeng, foran C med 14 og B med 13 … B har flest
    maki-symboler, 5, og får 6 poeng. A og C har 3 hver … 1 hver. A tjener mest på
    blekksprutnigirien på wasabi, 9 poeng. Den enslige sashimien og B og Cs enslige
    tempura gir 0 … B ligger foran med 2 mot 1" (puddings)."""
    A = ["wasabi", "squid_nigiri", "maki3", "sashimi", "tempura", "tempura", "dumpling", "dumpling", "pudding"]
    B = ["maki3", "maki2", "tempura", "pudding", "pudding", "squid_nigiri", "dumpling", "dumpling", "egg_nigiri"]
    C = ["maki2", "maki1", "tempura", "sashimi", "sashimi", "sashimi", "salmon_nigiri", "egg_nigiri", "chopsticks"]
    g = ScriptedGame(THREE, [[A, B, C]])
    s = g.state
    for turn in range(1, 9):
        assert s.turn == turn and [len(h) for h in s.hands] == [10 - turn] * 3
        g.play_turn()
        if s.round == 1:
            assert [tableau_kinds(s, i) for i in range(3)] == [A[:turn], B[:turn], C[:turn]]
    assert s.round == 2
    end = round_end(s)
    assert end["points"] == [18, 13, 14]
    assert end["maki_symbols"] == [3, 5, 3]
    assert end["maki_points"] == [1, 6, 1]
    assert s.puddings() == [1, 2, 0]
    r1 = [e for e in events(s) if e["type"] == "reveal" and e["round"] == 1]
    squid_on_wasabi = [w for e in r1 for w in e["wasabi"]]
    assert len(squid_on_wasabi) == 1 and squid_on_wasabi[0]["seat"] == 0
    assert s.kind(squid_on_wasabi[0]["nigiri"]) == "squid_nigiri"


def test_R1_kind_table_indices_are_consistent():
    """R1: the wire names map to the kinds the engine counts."""
    assert {k: KIND[k] for k in KINDS} == {k: i for i, k in enumerate(KINDS)}
    assert counts_of(["maki3", "maki3", "tempura"])[KIND["maki3"]] == 2


def test_R4_seat_out_of_range_and_badly_shaped_turns_are_clear_errors():
    """R4 (robustness): a seat outside the table is a ValueError, never Python's wrap-around;
    a turn that is not a sequence is an InvalidPlayError, never a TypeError."""
    state = new_game(GameConfig(3), 1)
    for bad in (-1, 3, "0"):
        with pytest.raises((ValueError, TypeError)):
            legal_plays(state, bad)
        with pytest.raises((ValueError, TypeError)):
            observe(state, bad)
    for bad_turn in (None, 5, iter([])):
        with pytest.raises(InvalidPlayError):
            apply_turn(state, bad_turn)


def test_R4_an_error_never_names_the_kind_of_a_card_the_seat_cannot_see():
    """What a bot may know: another seat's hand is private, even in an error message."""
    state = new_game(GameConfig(3), 1)
    hidden = state.hands[0][0]
    with pytest.raises(IllegalPlayError) as info:
        check_play(state, 1, (hidden,))
    assert state.kind(hidden) not in str(info.value).split("hand")[0]
