"""The card table (RULES R1): the one place where kinds, counts and values live.

Kinds are small ints inside the engine (fast to count and index) and wire names
everywhere else. ``KINDS[k]`` is the wire name of kind ``k``; ``KIND_INDEX[name]``
goes back.
"""

from __future__ import annotations

from typing import Final

TEMPURA: Final = 0
SASHIMI: Final = 1
DUMPLING: Final = 2
MAKI1: Final = 3
MAKI2: Final = 4
MAKI3: Final = 5
SALMON_NIGIRI: Final = 6
SQUID_NIGIRI: Final = 7
EGG_NIGIRI: Final = 8
PUDDING: Final = 9
WASABI: Final = 10
CHOPSTICKS: Final = 11

#: Wire names, indexed by kind (RULES R1).
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
KIND_INDEX: Final[dict[str, int]] = {name: k for k, name in enumerate(KINDS)}

#: How many of each kind the 108-card deck holds, indexed by kind (RULES R1).
DECK_COUNTS: Final[tuple[int, ...]] = (14, 14, 14, 6, 12, 8, 10, 5, 5, 10, 6, 4)
DECK_SIZE: Final = 108

#: Maki symbols per card, indexed by kind (0 for non-maki).
MAKI_SYMBOLS: Final[tuple[int, ...]] = (0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 0, 0)
#: Face value of a nigiri, indexed by kind (0 for non-nigiri); tripled on wasabi (R7).
NIGIRI_VALUE: Final[tuple[int, ...]] = (0, 0, 0, 0, 0, 0, 2, 3, 1, 0, 0, 0)
WASABI_FACTOR: Final = 3
#: Dumpling points by count, capped at 5 (R1).
DUMPLING_POINTS: Final[tuple[int, ...]] = (0, 1, 3, 6, 10, 15)
TEMPURA_SET, TEMPURA_POINTS = 2, 5
SASHIMI_SET, SASHIMI_POINTS = 3, 10
MAKI_FIRST, MAKI_SECOND = 6, 3
PUDDING_BONUS = 6

#: Cards dealt to each player per round, by number of players (R3).
HAND_SIZE: Final[dict[int, int]] = {2: 10, 3: 9, 4: 8, 5: 7}
#: The two-player dummy variant deals three hands of this size (R15).
DUMMY_HAND_SIZE: Final = 9
ROUNDS: Final = 3

assert sum(DECK_COUNTS) == DECK_SIZE
assert len(KINDS) == len(DECK_COUNTS) == len(MAKI_SYMBOLS) == len(NIGIRI_VALUE)


def is_nigiri(kind: int) -> bool:
    return NIGIRI_VALUE[kind] > 0


def deck_composition() -> dict[str, int]:
    """The deck as ``{wire name: count}``, for game descriptions sent to bots."""
    return dict(zip(KINDS, DECK_COUNTS, strict=True))
