"""Benchmarks: each measures the arena against a baseline run in the same process,
so that the ratio means something on a shared, noisy machine."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from arena.engine import GameConfig, Variant, apply_turn, legal_plays, new_game


@dataclass(frozen=True, slots=True)
class EngineBench:
    players: int
    variant: str
    games: int
    decisions: int
    seconds: float
    games_per_s: float
    us_per_decision: float
    baseline_games_per_s: float
    ratio: float  # engine speed / baseline speed (1.0 = as fast as the plain playout)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def engine_random_game(config: GameConfig, seed: int, rng: random.Random) -> int:
    """One uniformly random game through the public API; returns the number of decisions."""
    state = new_game(config, seed)
    players = config.players
    decisions = 0
    randbelow = rng.randrange
    if config.variant is Variant.DUMMY:
        while not state.over:
            plays: list = [None] * players
            for seat in state.deciding_seats():
                legal = legal_plays(state, seat)
                plays[seat] = legal[randbelow(len(legal))]
                decisions += 1
            apply_turn(state, plays)
        return decisions
    seats = range(players)
    while not state.over:
        plays = []
        for seat in seats:
            legal = legal_plays(state, seat)
            plays.append(legal[randbelow(len(legal))])
        decisions += players
        apply_turn(state, plays)
    return decisions


# The baseline: the plainest correct random playout, card kinds in lists, no API.
_DECK = (
    ["tempura"] * 14 + ["sashimi"] * 14 + ["dumpling"] * 14 + ["maki1"] * 6 + ["maki2"] * 12
    + ["maki3"] * 8 + ["salmon"] * 10 + ["squid"] * 5 + ["egg"] * 5 + ["pudding"] * 10
    + ["wasabi"] * 6 + ["chopsticks"] * 4
)
_NIGIRI = {"salmon": 2, "squid": 3, "egg": 1}
_MAKI = {"maki1": 1, "maki2": 2, "maki3": 3}
_DUMPLING = (0, 1, 3, 6, 10, 15)


def baseline_random_game(players: int, rng: random.Random) -> list[int]:
    deck = _DECK[:]
    rng.shuffle(deck)
    size = {2: 10, 3: 9, 4: 8, 5: 7}[players]
    scores = [0] * players
    puddings = [0] * players
    for _ in range(3):
        hands = [deck[i * size:(i + 1) * size] for i in range(players)]
        del deck[: size * players]
        tableaus: list[list[str]] = [[] for _ in range(players)]
        while hands[0]:
            for p in range(players):
                tableaus[p].append(hands[p].pop(rng.randrange(len(hands[p]))))
            hands = hands[-1:] + hands[:-1]
        makis = []
        for p, tab in enumerate(tableaus):
            wasabi = nigiri = 0
            for card in tab:
                if card == "wasabi":
                    wasabi += 1
                elif card in _NIGIRI:
                    nigiri += _NIGIRI[card] * (3 if wasabi else 1)
                    wasabi -= 1 if wasabi else 0
            scores[p] += (tab.count("tempura") // 2 * 5 + tab.count("sashimi") // 3 * 10
                          + _DUMPLING[min(tab.count("dumpling"), 5)] + nigiri)
            puddings[p] += tab.count("pudding")
            makis.append(sum(_MAKI.get(card, 0) for card in tab))
        top = max(makis)
        firsts = [p for p in range(players) if makis[p] == top and top > 0]
        for p in firsts:
            scores[p] += 6 // len(firsts)
        rest = [m for m in makis if 0 < m < top]
        if len(firsts) == 1 and rest:
            seconds = [p for p in range(players) if makis[p] == max(rest)]
            for p in seconds:
                scores[p] += 3 // len(seconds)
    most, least = max(puddings), min(puddings)
    if most != least:
        for p in range(players):
            scores[p] += (6 // puddings.count(most)) if puddings[p] == most else 0
            if players > 2 and puddings[p] == least:
                scores[p] -= 6 // puddings.count(least)
    return scores


def _rate(play_one: Callable[[int], int], seconds: float) -> tuple[int, int, float]:
    """Run ``play_one(i)`` for about ``seconds`` of CPU time; returns games, decisions, CPU seconds."""
    games = decisions = 0
    clock = time.process_time  # CPU time: other load on the machine sways it less than wall time
    start = clock()
    deadline = start + seconds
    now = start
    while now < deadline:
        for _ in range(20):
            decisions += play_one(games)
            games += 1
        now = clock()
    return games, decisions, now - start


def bench_engine(players: int, seconds: float = 2.0, variant: str = "standard", seed: int = 0) -> EngineBench:
    """Random games through the public API against the plain baseline, interleaved in
    slices so that both see the same machine load."""
    config = GameConfig(players, Variant(variant))
    rng = random.Random(seed)
    base_rng = random.Random(seed)
    size = config.hand_size
    base_players = players

    def engine_one(i: int) -> int:
        return engine_random_game(config, seed * 1_000_003 + i, rng)

    def baseline_one(i: int) -> int:
        baseline_random_game(base_players, base_rng)
        return 3 * (size - 1) * base_players

    engine_totals = [0, 0, 0.0]
    base_totals = [0, 0, 0.0]
    slices = max(1, round(seconds / 0.25))
    for _ in range(slices):
        for totals, fn in ((engine_totals, engine_one), (base_totals, baseline_one)):
            g, d, el = _rate(fn, seconds / slices / 2)
            totals[0] += g
            totals[1] += d
            totals[2] += el
    games, decisions, elapsed = engine_totals
    games_per_s = games / elapsed
    base_per_s = base_totals[0] / base_totals[2]
    return EngineBench(
        players=players,
        variant=config.variant.value,
        games=int(games),
        decisions=int(decisions),
        seconds=round(elapsed, 3),
        games_per_s=round(games_per_s, 1),
        us_per_decision=round(elapsed / decisions * 1e6, 3),
        baseline_games_per_s=round(base_per_s, 1),
        ratio=round(games_per_s / base_per_s, 3),
    )
