"""The tournament schedule: tables, duplicate sets, seeds, the capped balanced design, gauntlets."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.errors import ArenaError
from arena.game.deals import deal_seed
from arena.tournament.schedule import (
    ScheduledGame,
    ScheduleError,
    games_cap,
    iter_schedule,
    make_schedule,
)

BOTS = [f"bot{i}" for i in range(6)]
KEY = bytes(range(32))  # a fixed deal key: the schedule is pure, the key is an argument


def sets_of(schedule: list[ScheduledGame]) -> dict[str, list[ScheduledGame]]:
    sets: dict[str, list[ScheduledGame]] = defaultdict(list)
    for game in schedule:
        sets[game.set_id].append(game)
    return dict(sets)


def meetings(schedule: list[ScheduledGame], bots: list[str]) -> tuple[Counter, Counter]:
    """Per pair of bots, and per bot, the number of duplicate sets they share / play."""
    pairs: Counter = Counter()
    plays: Counter = Counter()
    for games in sets_of(schedule).values():
        table = games[0].table
        pairs.update(itertools.combinations(table, 2))
        plays.update(table)
    for a, b in itertools.combinations(sorted(bots), 2):
        pairs.setdefault((a, b), 0)
    for bot in bots:
        plays.setdefault(bot, 0)
    return pairs, plays


@pytest.mark.parametrize("players", [2, 3, 4, 5])
@pytest.mark.parametrize("deals", [1, 3])
def test_every_subset_every_rotation_every_deal(players: int, deals: int) -> None:
    schedule = make_schedule(key=KEY, bots=BOTS, players=players, deals=deals, seed=7)
    assert len(schedule) == math.comb(len(BOTS), players) * players * deals
    sets = sets_of(schedule)
    assert len(sets) == math.comb(len(BOTS), players) * deals
    tables = Counter(games[0].table for games in sets.values())
    assert set(tables) == set(itertools.combinations(sorted(BOTS), players))
    assert set(tables.values()) == {deals}
    for games in sets.values():
        table = games[0].table
        assert table == tuple(sorted(table))
        assert len(games) == players
        assert {g.table for g in games} == {table} and len({g.deal for g in games}) == 1
        # One deal under every rotation of one cyclic order: each bot sits in each seat once.
        first = games[0].seats
        assert sorted(first) == list(table)
        assert [g.seats for g in games] == [first[i:] + first[:i] for i in range(players)]
        assert len({g.seed for g in games}) == 1
    assert len({(g.set_id, g.seats) for g in schedule}) == len(schedule)


def test_all_seatings_are_every_permutation() -> None:
    schedule = make_schedule(key=KEY, bots=BOTS[:4], players=4, seatings="all", deals=2)
    sets = sets_of(schedule)
    assert len(sets) == 2
    for games in sets.values():
        assert len(games) == 24
        assert {g.seats for g in games} == set(itertools.permutations(BOTS[:4]))


def test_a_sets_games_are_consecutive_and_deals_come_in_rounds() -> None:
    schedule = make_schedule(key=KEY, bots=BOTS, players=3, deals=2)
    order = [g.set_id for g in schedule]
    runs = [key for key, _ in itertools.groupby(order)]
    assert len(runs) == len(set(runs)), "a duplicate set's games are split"
    half = len(schedule) // 2
    assert {g.deal for g in schedule[:half]} == {0} and {g.deal for g in schedule[half:]} == {1}


def test_seeds_differ_across_tables_and_deals_and_follow_the_tournament_seed() -> None:
    schedule = make_schedule(key=KEY, bots=BOTS, players=4, deals=2, seed=1)
    seeds = {g.set_id: g.seed for g in schedule}
    assert len(set(seeds.values())) == len(seeds)
    assert all(0 <= s < 2**63 for s in seeds.values())
    other = make_schedule(key=KEY, bots=BOTS, players=4, deals=2, seed=2)
    assert not set(seeds.values()) & {g.seed for g in other}
    assert not set(seeds) & {g.set_id for g in other}


def test_same_arguments_same_schedule_whatever_the_bot_order() -> None:
    a = make_schedule(key=KEY, bots=BOTS, players=4, deals=2, seed=5)
    b = make_schedule(key=KEY, bots=list(reversed(BOTS)), players=4, deals=2, seed=5)
    assert a == b
    assert make_schedule(key=KEY, bots=BOTS, players=4, games=30, seed=5) == make_schedule(key=KEY, bots=
        list(reversed(BOTS)), players=4, games=30, seed=5
    )


def test_adding_a_bot_keeps_every_existing_game() -> None:
    """The ladder: an old table's games (set id, seed, seats) do not depend on the other bots."""
    before = make_schedule(key=KEY, bots=BOTS, players=4, deals=2, seed=3)
    after = make_schedule(key=KEY, bots=[*BOTS, "newcomer"], players=4, deals=2, seed=3)
    assert set(before) <= set(after)
    new = set(after) - set(before)
    assert new and all("newcomer" in g.table for g in new)
    # And the old games keep their relative order.
    old_in_after = [g for g in after if g in set(before)]
    assert old_in_after == before


def test_deal_seed_depends_on_the_table_names_only() -> None:
    assert deal_seed(KEY, 0, ["b", "a"], 0) == deal_seed(KEY, 0, ["a", "b"], 0)
    assert deal_seed(KEY, 0, ["a", "b"], 0) != deal_seed(KEY, 0, ["a", "c"], 0)
    assert deal_seed(KEY, 0, ["a", "b"], 0) != deal_seed(KEY, 0, ["a", "b"], 1)
    # Names are encoded unambiguously: no separator can make two tables collide.
    assert deal_seed(KEY, 0, ["a,b", "c"], 0) != deal_seed(KEY, 0, ["a", "b,c"], 0)


def test_the_first_seating_is_not_always_alphabetical() -> None:
    """Who passes to whom matters; the cyclic order varies from set to set."""
    schedule = make_schedule(key=KEY, bots=BOTS, players=3, deals=2)
    starts = {g.seats for g in schedule if g.seats[0] == g.table[0]}
    rotated_alphabetical = {g.table for g in schedule}
    assert starts - rotated_alphabetical


def test_cap_off_when_the_full_design_fits() -> None:
    full = make_schedule(key=KEY, bots=BOTS, players=4, deals=1)
    assert make_schedule(key=KEY, bots=BOTS, players=4, games=len(full)) == full
    assert make_schedule(key=KEY, bots=BOTS, players=4, games=10_000) == full


def test_cap_chooses_whole_balanced_sets() -> None:
    bots = [f"b{i:02d}" for i in range(10)]
    schedule = make_schedule(key=KEY, bots=bots, players=4, games=120, seed=11)
    assert len(schedule) == 120
    sets = sets_of(schedule)
    assert len(sets) == 30 and all(len(games) == 4 for games in sets.values())
    pairs, plays = meetings(schedule, bots)
    # 30 tables x 6 pairs over 45 pairs: 4 meetings each on average.
    assert max(pairs.values()) - min(pairs.values()) <= 2, pairs
    assert min(pairs.values()) >= 3
    assert max(plays.values()) - min(plays.values()) <= 2, plays
    # Every prefix of whole sets is about balanced too: a run cut short is a fair sample.
    half = schedule[:60]
    _, half_plays = meetings(half, bots)
    assert max(half_plays.values()) - min(half_plays.values()) <= 2


def test_cap_rounds_down_to_whole_sets_and_reuses_deals_of_the_full_design() -> None:
    bots = [f"b{i}" for i in range(8)]
    schedule = make_schedule(key=KEY, bots=bots, players=4, deals=4, games=1002, seed=2)
    assert len(schedule) == 1000
    pairs, plays = meetings(schedule, bots)
    assert max(pairs.values()) - min(pairs.values()) <= 2
    assert max(plays.values()) - min(plays.values()) <= 2
    per_table = defaultdict(set)
    for game in schedule:
        per_table[game.table].add(game.deal)
    for deals in per_table.values():
        assert deals == set(range(len(deals))), "a table's deals are 0, 1, ... in order"
        assert len(deals) <= 4
    # Every capped set is a set of the full design: same id, seed and seats.
    full = set(make_schedule(key=KEY, bots=bots, players=4, deals=4, seed=2))
    assert set(schedule) <= full


def test_cap_near_the_full_design_never_repeats_a_set() -> None:
    bots = [f"b{i}" for i in range(7)]
    full = make_schedule(key=KEY, bots=bots, players=3, deals=1)
    capped = make_schedule(key=KEY, bots=bots, players=3, deals=1, games=len(full) - 3)
    assert len(capped) == len(full) - 3
    assert len(sets_of(capped)) == len(capped) // 3
    assert set(capped) <= set(full)


def test_gauntlet_plays_only_that_bots_tables() -> None:
    schedule = make_schedule(key=KEY, bots=BOTS, players=3, gauntlet="bot2", deals=2)
    assert len(schedule) == math.comb(5, 2) * 3 * 2
    assert all("bot2" in g.seats for g in schedule)
    assert {g.table for g in schedule} == {
        t for t in itertools.combinations(BOTS, 3) if "bot2" in t
    }
    # A gauntlet's games are the same games as the round robin's.
    assert set(schedule) <= set(make_schedule(key=KEY, bots=BOTS, players=3, deals=2))


def test_capped_gauntlet_meets_the_field_evenly() -> None:
    bots = [f"b{i:02d}" for i in range(10)]
    schedule = make_schedule(key=KEY, bots=bots, players=4, games=120, gauntlet="b03")
    assert len(schedule) == 120 and all("b03" in g.table for g in schedule)
    pairs, plays = meetings(schedule, bots)
    vs_gauntlet = [c for (a, b), c in pairs.items() if "b03" in (a, b)]
    assert max(vs_gauntlet) - min(vs_gauntlet) <= 1
    field = [c for bot, c in plays.items() if bot != "b03"]
    assert max(field) - min(field) <= 1


def test_fewer_bots_than_players_is_the_callers_to_resolve() -> None:
    assert len(make_schedule(key=KEY, bots=BOTS[:3], players=3)) == 3
    with pytest.raises(ValueError, match=r"players=4 needs at least 4 bots, but there are 3"):
        make_schedule(key=KEY, bots=BOTS[:3], players=4)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bots": ["a", "b", "a", "c"]}, "duplicate bot names: a"),
        ({"bots": ["a", "", "c"]}, "non-empty"),
        ({"players": 1}, "players must be 2 to 5, got 1"),
        ({"players": 6}, "players must be 2 to 5, got 6"),
        ({"deals": 0}, "deals must be at least 1, got 0"),
        ({"seatings": "random"}, "seatings must be one of rotations, all, got 'random'"),
        ({"gauntlet": "nobody"}, "gauntlet bot 'nobody' is not among the bots"),
        ({"games": 0}, "games must be a positive number, got 0"),
    ],
)
def test_clear_errors(kwargs: dict, message: str) -> None:
    args = {"bots": BOTS, "players": 4} | kwargs
    bots = args.pop("bots")
    with pytest.raises(ScheduleError, match=message) as caught:
        make_schedule(key=KEY, bots=bots, **args)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ArenaError)
    # The lazy form checks its arguments at the call, not at the first game.
    with pytest.raises(ScheduleError):
        iter_schedule(bots, key=KEY, **args)


def test_iter_schedule_is_make_schedule_lazily() -> None:
    assert list(iter_schedule(BOTS, players=4, deals=2, key=KEY)) == make_schedule(key=KEY, bots=BOTS, players=4, deals=2)


def test_every_derivation_is_keyed() -> None:
    # Another key: other deal seeds and set ids for the very same tables and deals; a key
    # too short to be secret is refused.
    a = make_schedule(key=KEY, bots=BOTS, players=4, deals=2, seed=0)
    b = make_schedule(key=bytes(32), bots=BOTS, players=4, deals=2, seed=0)
    assert {(g.table, g.deal) for g in a} == {(g.table, g.deal) for g in b}
    assert not {g.seed for g in a} & {g.seed for g in b}
    assert not {g.set_id for g in a} & {g.set_id for g in b}
    with pytest.raises(ScheduleError, match="deal key must be at least 16 bytes"):
        make_schedule(key=b"short", bots=BOTS, players=4)


# -- a cap never leaves a bot out ----------------------------------------------------------


def test_a_cap_below_what_seats_every_bot_is_rounded_up_and_says_why() -> None:
    """7 bots at 4-player tables with --games 3: fewer games than one duplicate set, and one
    set would seat 4 of the 7. Two sets (8 games) seat every bot."""
    bots = [f"b{i}" for i in range(7)]
    cap = games_cap(7, players=4, games=3)
    assert cap is not None and (cap.games, cap.sets, cap.full) == (8, 2, False)
    assert "a duplicate set is 4 games" in cap.note and cap.note.endswith("and 2 sets are the fewest in which every one of the 7 bots plays")
    schedule = make_schedule(key=KEY, bots=bots, players=4, games=3)
    assert len(schedule) == 8
    assert {b for g in schedule for b in g.seats} == set(bots)
    # --games 4 (one whole set) is rounded up the same way: one set would leave 3 bots out.
    assert len(make_schedule(key=KEY, bots=bots, players=4, games=4)) == 8


def test_a_cap_between_whole_sets_is_rounded_down_and_says_so() -> None:
    cap = games_cap(10, players=4, games=30)
    assert cap is not None and (cap.games, cap.sets) == (28, 7)
    assert cap.note == "a duplicate set is 4 games (4 players, every rotation of the seats): only whole sets are played"
    exact = games_cap(10, players=4, games=28)
    assert exact is not None and (exact.games, exact.note) == (28, "")
    assert games_cap(10, players=4, games=None) is None


def test_a_cap_that_holds_the_whole_design_is_the_whole_design() -> None:
    cap = games_cap(5, players=4, games=10_000)
    assert cap is not None and cap.full and cap.games == 5 * 4 and cap.note == ""
    # Fewer games than one set, and the whole design is one set (4 bots, 4 seats): that set, said.
    few = games_cap(4, players=4, games=1)
    assert few is not None and few.full and few.games == 4 and "whole design" in few.note
    assert len(make_schedule(key=KEY, bots=BOTS[:4], players=4, games=1)) == 4


def test_a_capped_gauntlet_meets_every_bot_of_the_field() -> None:
    bots = [f"b{i}" for i in range(9)]
    schedule = make_schedule(key=KEY, bots=bots, players=3, games=3, gauntlet="b4")
    assert len(schedule) == 12  # 8 others, 2 a table: 4 sets of 3 games
    assert {b for g in schedule for b in g.seats} == set(bots)
    assert all("b4" in g.seats for g in schedule)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(2, 14),
    players=st.integers(2, 5),
    games=st.integers(1, 200),
    deals=st.integers(1, 3),
    seatings=st.sampled_from(["rotations", "all"]),
    gauntlet=st.booleans(),
)
def test_every_bot_plays_whatever_the_cap(n: int, players: int, games: int, deals: int, seatings: str, gauntlet: bool) -> None:
    if players > n:
        players = n
    bots = [f"b{i:02d}" for i in range(n)]
    g = bots[n // 2] if gauntlet else None
    schedule = make_schedule(key=KEY, bots=bots, players=players, games=games, deals=deals, seatings=seatings, gauntlet=g)
    assert {b for game in schedule for b in game.seats} == set(bots)
    cap = games_cap(n, players=players, deals=deals, seatings=seatings, games=games, gauntlet=g)
    assert cap is not None and len(schedule) == cap.games
    assert (cap.games == games) == (cap.note == "") or cap.full
