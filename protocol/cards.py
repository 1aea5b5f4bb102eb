"""The card table of RULES R1, for bot authors: counts and values by wire name.

The engine (``arena.engine.cards``) is the source of truth; bots cannot import
it, so this is a copy that ``tests/protocol/test_sdk.py`` checks against it. The deck a
game really uses is also sent in every ``game_start`` (``rules.deck``).
Standard library only.
"""

from __future__ import annotations

from typing import Final

#: Every kind's wire name (RULES R1), in the engine's order.
KINDS: Final[tuple[str, ...]] = (
    "tempura",
    "sashimi",
    "dumpling",
    "maki1",
    "maki2",
    "maki3",
    "salmon_nigiri",
    "squid_nigiri",
    "egg_nigiri",
    "pudding",
    "wasabi",
    "chopsticks",
)

#: How many cards of each kind the 108-card deck holds.
DECK: Final[dict[str, int]] = {
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

#: Maki symbols on a card (R10); kinds not listed have none.
MAKI_SYMBOLS: Final[dict[str, int]] = {"maki1": 1, "maki2": 2, "maki3": 3}
#: A nigiri's face value (R1); tripled on a wasabi (R7).
NIGIRI_VALUE: Final[dict[str, int]] = {"salmon_nigiri": 2, "squid_nigiri": 3, "egg_nigiri": 1}
WASABI_FACTOR: Final = 3
#: Dumpling points by how many a tableau holds: index n (5 or more scores 15).
DUMPLING_POINTS: Final[tuple[int, ...]] = (0, 1, 3, 6, 10, 15)
#: Tempura: 5 points per complete pair; sashimi: 10 points per complete set of three.
TEMPURA_SET, TEMPURA_POINTS = 2, 5
SASHIMI_SET, SASHIMI_POINTS = 3, 10
#: Maki majority (R10): most symbols, second most.
MAKI_FIRST, MAKI_SECOND = 6, 3
#: Pudding (R12): most puddings at the end of the game, fewest (not with 2 players).
PUDDING_BONUS, PUDDING_PENALTY = 6, -6


def dumpling_points(count: int) -> int:
    """Points for ``count`` dumplings in one tableau (R1)."""
    return DUMPLING_POINTS[min(count, len(DUMPLING_POINTS) - 1)]


def is_nigiri(kind: str) -> bool:
    return kind in NIGIRI_VALUE
