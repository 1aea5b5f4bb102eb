"""A match's pairs: pure, no I/O; the pairs are made one at a time, in schedule order.

Pair ``i`` is one deal played twice. In A's game, A sits in seat ``s``; in its twin, B sits
in seat ``s`` and nothing else changes: the same deal, the same opponents in the same seats.

- Two players: the opponent is the other bot of the match, so A's game is A against B and its
  twin is the same deal with the seats swapped (fishtest's game pair, colours swapped).
- Three to five players: B *replaces* A. The opponents are the ``--opponent`` bots, cycled
  over the seats and the pairs (pair ``i``'s ``j``-th opponent is the
  ``(i(k-1) + j) mod m``-th of the ``m`` given), so that each sits at every table position
  about as often.

Seat ``s`` rotates over the pairs (``s = i mod k``). Why this cancels luck: the difference
between B's result and A's in twin games is a difference between two bots dealt the same
cards, in the same seat, against the same bots: what the deal gave the seat (a hand rich in
sashimi, the pudding race of the table), the seat itself (who passes to whom) and the
opponents' strength are the same on both sides and drop out of the difference, which is
left with what A and B did differently (and the opponents' answers to it). The rotation
spreads the pairs over every seat, so no seat's peculiarity dominates.

A pair's deal and set id depend only on the store's deal key, the match's seed and the
pair's number (not on the bots): the deals of a seed are the same for every match in a
store, and no bot can compute them (keyed hashes, as the tournament's). With three or more
players, A's game of pair ``i`` is then the very game (the same id) for every B tried
against the same A, opponents and seed: it is played once, and a later match finds it in
the store.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from arena.game.deals import keyed_digest


@dataclass(frozen=True, slots=True)
class MatchPair:
    """One pair: ``seat`` is A's in A's game and B's in the twin; ``games`` holds the
    bot of each seat in A's game, then in the twin."""

    index: int
    seat: int
    seed: int  # the deal
    set_id: str
    games: tuple[tuple[str, ...], tuple[str, ...]]


def pair_deal(key: bytes, seed: int, index: int) -> tuple[int, str]:
    """Pair ``index``'s deal seed (63 bits) and duplicate-set id (16 hex digits)."""
    deal = int.from_bytes(keyed_digest(key, "match deal", seed, index)[:8], "big") >> 1
    set_id = keyed_digest(key, "match set", seed, index)[:8].hex()
    return deal, set_id


def pair_at(
    index: int, a: str, b: str, opponents: Sequence[str], *, players: int, seed: int, key: bytes
) -> MatchPair:
    """The ``index``-th pair of the match of B against A (bot names) with ``opponents``
    (three or more players: at least one; two players: none)."""
    if not 2 <= players <= 5:
        raise ValueError(f"a match has 2 to 5 players, not {players}")
    if index < 0:
        raise ValueError(f"pairs are numbered from 0, not {index}")
    seat = index % players
    deal, set_id = pair_deal(key, seed, index)
    if players == 2:
        if opponents:
            raise ValueError("a two-player match has no opponents: B plays A")
        first = (a, b) if seat == 0 else (b, a)
        return MatchPair(index, seat, deal, set_id, (first, tuple(reversed(first))))
    if not opponents:
        raise ValueError(f"a {players}-player match needs at least one opponent")
    m = len(opponents)
    others = [opponents[(index * (players - 1) + j) % m] for j in range(players - 1)]
    a_game = (*others[:seat], a, *others[seat:])
    b_game = (*others[:seat], b, *others[seat:])
    return MatchPair(index, seat, deal, set_id, (a_game, b_game))


def match_pairs(
    a: str, b: str, opponents: Sequence[str], *, players: int, seed: int, key: bytes, pairs: int
) -> Iterator[MatchPair]:
    """The first ``pairs`` pairs, in schedule order, made one at a time."""
    for index in range(pairs):
        yield pair_at(index, a, b, opponents, players=players, seed=seed, key=key)
