"""A game's secrets, derived from the results store's deal key: the seed of a table's deal,
the id of its duplicate set, and each game's card labelling. Keyed hashes (HMAC-SHA256),
so that a bot that knows this code, the names and the tournament seed still cannot
compute or confirm a deal without the key."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence


def keyed_digest(key: bytes, *parts: object) -> bytes:
    """HMAC-SHA256 under ``key`` of ``parts`` (JSON-encoded), truncated to 16 bytes.

    JSON of a list is an unambiguous encoding of names that may hold any character.
    """
    data = json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hmac.new(key, data, hashlib.sha256).digest()[:16]


def deal_seed(key: bytes, seed: int, table: Sequence[str], deal: int) -> int:
    """The 63-bit seed of ``table``'s ``deal``-th deal in a tournament seeded with ``seed``."""
    return int.from_bytes(keyed_digest(key, "deal", seed, sorted(table), deal)[:8], "big") >> 1


def set_id(key: bytes, seed: int, table: Sequence[str], deal: int) -> str:
    """The id of ``table``'s ``deal``-th duplicate set: 16 hex digits."""
    return keyed_digest(key, "set", seed, sorted(table), deal)[:8].hex()


def card_ids(key: bytes, game_id: str) -> int:
    """The card labelling (``new_game``'s ``ids``) of the game ``game_id``: 63 bits keyed
    with ``key``, so that the games of one duplicate set (one deal, different game ids)
    show the same cards under unrelated ids, and no bot can compute them."""
    return int.from_bytes(keyed_digest(key, "ids", game_id)[:8], "big") >> 1
