"""Which bots sit at the ladder's next table: pure (no I/O, no clock; randomness passed in).

The policy (docs/competition.md says it for organisers):

1. **The seed** is the bot whose rank is least certain: a bot with fewer than
   :data:`NEW_SETS` sets (a new version) first, fewest sets first; then the widest Elo
   interval (``high - low``); ties by fewer sets, then by name.
2. **Its opponents** are drawn one at a time, without replacement, each with a weight that
   is high for a bot near the seed in rating and for a pair that has met rarely:
   ``exp(-(Δelo / SPREAD)² / 2) / (1 + meetings)``; the weights are then mixed with a uniform
   share :data:`EXPLORE`, so that every pair of bots keeps meeting over time.

Each table is played as whole duplicate sets (every seat rotation of the same deals), so
that the deal's luck cancels within the set."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Sets below which a bot counts as new and is seeded first.
NEW_SETS = 3
#: Elo distance at which an opponent's weight has fallen to exp(-1/2) of a level one's.
SPREAD = 150.0
#: The share of every draw that is uniform over the bots left (every pair meets over time).
EXPLORE = 0.15


@dataclass(frozen=True, slots=True)
class Entry:
    """One bot the ladder may seat: its key, rating and interval (NaN when unknown), sets played."""

    key: str
    elo: float = 1500.0
    low: float = math.nan
    high: float = math.nan
    sets: int = 0

    @property
    def width(self) -> float:
        w = self.high - self.low
        return math.inf if math.isnan(w) else w


def seed_of(entries: Sequence[Entry]) -> Entry:
    """The bot the next table is made around (rule 1)."""
    def urgency(e: Entry) -> tuple:
        new = e.sets < NEW_SETS
        return (0 if new else 1, e.sets if new else 0, -e.width, e.sets, e.key)

    return min(entries, key=urgency)


def choose_table(
    entries: Sequence[Entry],
    seats: int,
    rng: random.Random,
    meetings: Mapping[tuple[str, str], int] | None = None,
) -> list[str]:
    """The keys of the bots of the next table: the seed first, then its opponents (rule 2).
    ``meetings[(a, b)]`` (``a < b``) counts the sets or games the pair has shared."""
    if seats < 2 or len(entries) < seats:
        raise ValueError(f"a table of {seats} needs at least {seats} bots, not {len(entries)}")
    met = meetings or {}
    seed = seed_of(entries)
    table = [seed]
    left = [e for e in entries if e.key != seed.key]
    while len(table) < seats:
        weights = []
        for e in left:
            near = math.exp(-0.5 * ((e.elo - seed.elo) / SPREAD) ** 2)
            pair = (seed.key, e.key) if seed.key < e.key else (e.key, seed.key)
            weights.append(near / (1.0 + met.get(pair, 0)))
        total = sum(weights)
        mixed = [(1 - EXPLORE) * (w / total if total > 0 else 1 / len(left)) + EXPLORE / len(left) for w in weights]
        pick = rng.choices(range(len(left)), weights=mixed)[0]
        table.append(left.pop(pick))
    return [e.key for e in table]


def uniform_table(entries: Sequence[Entry], seats: int, rng: random.Random) -> list[str]:
    """The baseline the policy is measured against: any ``seats`` bots, uniformly."""
    return [e.key for e in rng.sample(list(entries), seats)]
