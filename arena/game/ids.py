"""Game ids: a hash of everything that decides a game (rules, variant, players, seed,
time settings, each seat's bot), so that two runs that would play the very same game
share its id. One place for the referee that stamps them, the tournament that plans
with them and the replay check that re-derives them."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from arena.bots import Budget
from arena.engine import RULES_VERSION, GameConfig


def time_dict(ts: Budget) -> dict[str, Any]:
    """The time settings as recorded in replays and game ids."""
    return dict(_time_items(ts))


@functools.lru_cache(maxsize=64)
def _time_items(ts: Budget) -> tuple[tuple[str, Any], ...]:
    return tuple(dataclasses.asdict(ts).items())


def seat_identity(name: str, content_hash: str) -> str:
    """How a seat's bot enters a game id: ``name@content_hash``. The name is in it because
    two bots of one tournament may have identical files (a copy under another name): by
    hash alone their two seatings of a deal would be one game, recorded once with the
    other's replay."""
    return f"{name}@{content_hash}"


def game_id(config: GameConfig, seed: int, seats: Sequence[str], time_settings: Budget) -> str:
    """The id of a tournament's game: a hash of everything that decides it, nothing else
    (so two runs, or two tournaments, that would play the very same game share it).
    ``seats``: each seat's :func:`seat_identity`, in seat order."""
    parts = [RULES_VERSION, config.variant.value, str(config.players), str(seed), json.dumps(time_dict(time_settings), sort_keys=True)]
    parts += list(seats)
    return hashlib.blake2b("|".join(parts).encode(), digest_size=8).hexdigest()


def default_game_id(config: GameConfig, seed: int, seats: Sequence[str], time_settings: Budget) -> str:
    """The id the referee gives a game it was given none for (``arena play``): as
    :func:`game_id`, with the time settings written as Python writes a dict. ``seats``:
    each seat's :func:`seat_identity`, in seat order."""
    parts = [RULES_VERSION, config.variant.value, str(config.players), str(seed), repr(time_dict(time_settings))]
    parts += list(seats)
    return hashlib.blake2b("|".join(parts).encode(), digest_size=8).hexdigest()
