"""The streamed schedule: the same games in the same order as the schedule made up front
(kept below as a reference, only here), and games made one at a time, without a list."""

from __future__ import annotations

import itertools
import math
import random
import tracemalloc
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from size_helpers import held_entries

import arena.tournament.schedule as schedule_module
from arena.game.deals import deal_seed, keyed_digest
from arena.tournament.schedule import (
    ScheduledGame,
    _set_games,
    games_cap,
    iter_schedule,
    make_schedule,
    schedule_games,
)

KEY = bytes(range(32))


# -- the reference: the schedule as it was made up front, every table or set in a list ------


def reference_schedule(bots, *, players, deals=1, seatings="rotations", games=None, seed=0, gauntlet=None):
    names = sorted(bots)
    cap = games_cap(len(names), players=players, deals=deals, seatings=seatings, games=games, gauntlet=gauntlet)
    if cap is not None and not cap.full:
        sets = _reference_balanced_sets(names, players, deals, cap.sets, KEY, seed, gauntlet)
        return [g for table, deal in sets for g in _set_games(table, deal, KEY, seed, seatings)]
    if gauntlet is None:
        tables = list(itertools.combinations(names, players))
    else:
        field = [n for n in names if n != gauntlet]
        tables = [tuple(sorted((gauntlet, *rest))) for rest in itertools.combinations(field, players - 1)]
    out: list[ScheduledGame] = []
    for deal in range(deals):
        for table in sorted(tables, key=lambda t: (deal_seed(KEY, seed, t, deal), t)):
            out.extend(_set_games(table, deal, KEY, seed, seatings))
    return out


def _reference_balanced_sets(names, players, deals, wanted, key, seed, gauntlet):
    rng = random.Random(int.from_bytes(keyed_digest(key, "capped", seed, names, players, gauntlet)[:8], "big"))
    index = {n: i for i, n in enumerate(names)}
    n = len(names)
    played = [0] * n
    met = [[0] * n for _ in range(n)]
    uses: dict[tuple[int, ...], int] = {}
    chosen = []
    for _ in range(wanted):
        tie = [rng.random() for _ in range(n)]
        members = [index[gauntlet]] if gauntlet is not None else [min(range(n), key=lambda b: (played[b], tie[b]))]
        while len(members) < players:
            last = len(members) == players - 1
            best = None
            for b in range(n):
                if b in members:
                    continue
                if last and uses.get(tuple(sorted((*members, b))), 0) >= deals:
                    continue
                k = (sum(met[b][m] for m in members), played[b], tie[b])
                if best is None or k < best[0]:
                    best = (k, b)
            if best is None:
                break
            members.append(best[1])
        if len(members) < players:
            g = None if gauntlet is None else index[gauntlet]
            top = None
            for table in itertools.combinations(range(n), players):
                if (g is not None and g not in table) or uses.get(table, 0) >= deals:
                    continue
                k = (
                    sum(met[a][b] for a, b in itertools.combinations(table, 2)),
                    sum(played[a] for a in table),
                    sum(tie[a] for a in table),
                )
                if top is None or k < top[0]:
                    top = (k, table)
            members = list(top[1])
        table = tuple(sorted(members))
        deal = uses.get(table, 0)
        uses[table] = deal + 1
        for a in table:
            played[a] += 1
            for b in table:
                if a != b:
                    met[a][b] += 1
        chosen.append((tuple(names[i] for i in table), deal))
    return chosen


# -- the same games in the same order ---------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(2, 14),
    players=st.integers(2, 5),
    games=st.one_of(st.none(), st.integers(1, 300)),
    deals=st.integers(1, 3),
    seatings=st.sampled_from(["rotations", "all"]),
    gauntlet=st.booleans(),
    seed=st.integers(0, 5),
)
def test_the_streamed_schedule_is_the_one_made_up_front(n, players, games, deals, seatings, gauntlet, seed) -> None:
    """Every size the tests and a class's stores use (up to 14 bots here): the same games
    (set ids, seeds, seats) in the same order, so that stored results resume as before."""
    players = min(players, n)
    bots = [f"b{i:02d}" for i in range(n)]
    g = bots[n // 3] if gauntlet else None
    args = {"players": players, "deals": deals, "seatings": seatings, "games": games, "seed": seed, "gauntlet": g}
    streamed = list(iter_schedule(bots, key=KEY, **args))
    assert streamed == reference_schedule(bots, **args)
    assert len(streamed) == schedule_games(n, **{k: v for k, v in args.items() if k != "seed"})


@pytest.mark.parametrize(("n", "players"), [(20, 4), (30, 4), (20, 5), (35, 4)])
def test_a_class_sized_round_robin_keeps_its_order(n: int, players: int) -> None:
    """The largest round robins that keep the order of deal seeds (up to 65,536 tables)."""
    assert math.comb(n, players) <= schedule_module.EXACT_ORDER_TABLES
    bots = [f"bot{i}" for i in range(n)]
    first = list(itertools.islice(iter_schedule(bots, players=players, key=KEY), 4000))
    assert first == reference_schedule(bots, players=players)[:4000]


# -- past the exact order: every table once, one at a time --------------------------------------


@pytest.mark.parametrize("gauntlet", [None, "b03"])
@pytest.mark.parametrize(("n", "players", "deals"), [(9, 4, 2), (11, 3, 1), (8, 5, 1), (7, 2, 3)])
def test_a_large_round_robin_plays_every_table_once_per_deal(
    monkeypatch: pytest.MonkeyPatch, n: int, players: int, deals: int, gauntlet: str | None
) -> None:
    """With the exact order switched off (a threshold of 0 tables), the shuffled order holds the
    very games of the reference, each once, deal by deal, in another order."""
    monkeypatch.setattr(schedule_module, "EXACT_ORDER_TABLES", 0)
    bots = [f"b{i:02d}" for i in range(n)]
    streamed = list(iter_schedule(bots, players=players, deals=deals, gauntlet=gauntlet, key=KEY))
    reference = reference_schedule(bots, players=players, deals=deals, gauntlet=gauntlet)
    assert Counter(streamed) == Counter(reference) and len(set(streamed)) == len(streamed)
    assert [g.deal for g in streamed] == sorted(g.deal for g in streamed), "deals come in rounds"
    runs = [k for k, _ in itertools.groupby(g.set_id for g in streamed)]
    assert len(runs) == len(set(runs)), "a duplicate set's games are consecutive"
    assert streamed != reference
    again = list(iter_schedule(list(reversed(bots)), players=players, deals=deals, gauntlet=gauntlet, key=KEY))
    assert again == streamed, "the same bots and seed, the same order"


def test_a_cut_short_large_round_robin_has_played_a_fair_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shuffled order is no enumeration: its first tenth seats every bot about as often."""
    monkeypatch.setattr(schedule_module, "EXACT_ORDER_TABLES", 0)
    bots = [f"b{i:02d}" for i in range(16)]
    games = list(iter_schedule(bots, players=4, key=KEY))
    head = games[: len(games) // 10]
    plays = Counter(b for g in head for b in g.seats)
    mean = len(head) * 4 / 16
    assert set(plays) == set(bots)
    assert max(plays.values()) < 1.35 * mean and min(plays.values()) > 0.65 * mean, plays


def test_the_first_games_of_a_200_bot_round_robin_come_without_the_schedule() -> None:
    """200 bots, 4 seats: 64,684,950 tables (258.7 M games). Taking the first 2,000 games
    allocates a few hundred kilobytes, not the tables: O(1) in the games."""
    bots = [f"bot{i:03d}" for i in range(200)]
    assert schedule_games(200, players=4) == math.comb(200, 4) * 4
    tracemalloc.start()
    try:
        it = iter_schedule(bots, players=4, key=KEY)
        first = list(itertools.islice(it, 2000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(first) == 2000 and len({g.set_id for g in first}) == 500
    assert peak < 4 << 20, f"{peak} bytes to make 2,000 games"
    assert len({b for g in first for b in g.seats}) > 190  # already spread over the field


def test_a_capped_200_bot_design_is_made_one_set_at_a_time() -> None:
    """--games 400,000 at 200 bots: the first sets come before the 100,000th is chosen, and
    making them allocates the counts, not the design."""
    bots = [f"bot{i:03d}" for i in range(200)]
    tracemalloc.start()
    try:
        first = list(itertools.islice(iter_schedule(bots, players=4, games=400_000, key=KEY), 400))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len({g.set_id for g in first}) == 100
    assert peak < 4 << 20, f"{peak} bytes to make 100 sets"
    # The first sets seat 400 seats over 200 bots: each bot twice, as the balanced design wants.
    assert set(Counter(b for g in first[::4] for b in g.seats).values()) == {2}


def test_make_schedule_is_the_list_of_iter_schedule() -> None:
    bots = [f"b{i}" for i in range(9)]
    for games in (None, 40):
        assert make_schedule(bots, players=4, games=games, key=KEY) == list(
            iter_schedule(bots, players=4, games=games, key=KEY)
        )


class _Recorded(schedule_module._DealsUsed):
    """The capped design's count of deals used, recorded as the design makes it."""

    made: list[schedule_module._DealsUsed] = []

    def __init__(self, *args) -> None:
        super().__init__(*args)
        _Recorded.made.append(self)


def test_a_long_capped_design_stops_growing(monkeypatch: pytest.MonkeyPatch) -> None:
    """32 bots, --games 100,000 (35,960 tables): the design's record of the deals each table
    has used is a byte per table once that is smaller than a dict of the tables used (it
    once grew by a dict entry, ~70 bytes, a set chosen: 2.3 MB over the run); from then on
    it holds the same entries however many sets are chosen."""
    _Recorded.made = []
    monkeypatch.setattr(schedule_module, "_DealsUsed", _Recorded)
    bots = [f"bot{i:02d}" for i in range(32)]
    it = iter_schedule(bots, players=4, games=100_000, key=KEY)
    sizes = []
    for mark in (4_000, 8_000, 12_000):
        list(itertools.islice(it, mark - (len(sizes) and sizes[-1][0])))
        (uses,) = _Recorded.made
        sizes.append((mark, uses.size(), held_entries(uses)))
    tables = math.comb(32, 4)
    assert [s[1] for s in sizes] == [tables] * 3, sizes
    assert len({s[2] for s in sizes}) == 1, sizes  # no container inside grows either
    assert uses._sparse is None and uses._counts.itemsize * len(uses._counts) == tables


def test_a_capped_200_bot_design_counts_in_a_dict_while_that_is_smaller() -> None:
    """200 bots (64.7 M tables): a counter per possible table would be 64 MB up front; a few
    hundred sets are counted in a dict of those used."""
    uses = schedule_module._DealsUsed(200, 4, 1)
    for t in range(197):
        assert uses.take((t, 197, 198, 199)) == 0
    assert uses.take((0, 197, 198, 199)) == 1
    assert uses._counts is None and uses.size() == 197


@pytest.mark.parametrize(("n", "players", "deals"), [(9, 4, 3), (7, 3, 300), (12, 5, 2)])
def test_the_deals_used_count_as_a_dict_does_before_and_after_it_turns_dense(n: int, players: int, deals: int) -> None:
    rng = random.Random(n * deals)
    uses = schedule_module._DealsUsed(n, players, deals)
    reference: Counter[tuple[int, ...]] = Counter()
    tables = list(itertools.combinations(range(n), players))
    for _ in range(4 * len(tables)):
        table = rng.choice(tables)
        assert uses.get(table) == reference[table]
        if reference[table] < deals:
            assert uses.take(table) == reference[table]
            reference[table] += 1
    assert uses._counts is not None  # it turned dense on the way
    assert all(uses.get(t) == reference[t] for t in tables)
