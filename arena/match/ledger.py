"""A match's pairs in schedule order and what is known of their games: pure, no I/O.

The rule that makes a match's verdict the same whatever ``--jobs`` and however often it was
stopped: a pair counts in the test once both its games are in *and* every pair before it
has counted; games that finish out of order wait. A pair whose twin is missing is never
counted half, and once the test has stopped no later pair counts, even one complete."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from arena.match.schedule import MatchPair
from arena.match.stats import SequentialTest, seat_half_points, unit_of

__all__ = ["CountedPair", "Outcome", "PairLedger"]

#: A finished game's result as the pairs are scored from it: each seat's rank and whether
#: it ended on autopilot, in seat order.
Outcome = tuple[tuple[int, ...], tuple[bool, ...]]


@dataclass(frozen=True, slots=True)
class CountedPair:
    """A pair as the test counted it: its unit (a cell number) and each side's half points."""

    pair: MatchPair
    unit: int
    a_half: int  # A's rank-based score in A's game, in half points
    b_half: int  # B's in the twin


@dataclass(slots=True)
class PairLedger:
    """``pairs[i]`` and ``ids[i]`` (A's game's id, then its twin's), in schedule order, and
    the :class:`Outcome` of every game known so far; :meth:`count_ready` hands the pairs to
    ``test`` by the rule above."""

    players: int
    pairs: Sequence[MatchPair]
    ids: Sequence[tuple[str, str]]
    test: SequentialTest
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    next_pair: int = 0  # the first pair not yet counted
    halves: list[tuple[int, int]] = field(default_factory=list)  # each counted pair's (A's, B's) half points

    def __post_init__(self) -> None:
        if len(self.pairs) != len(self.ids):
            raise ValueError(f"{len(self.pairs)} pairs and {len(self.ids)} pairs of ids")

    def known(self, game_id: str) -> bool:
        return game_id in self.outcomes

    def record(self, game_id: str, ranks: Sequence[int], autopilot: Sequence[bool]) -> None:
        """A game of the match is complete (its first ``players`` seats are the bots')."""
        n = self.players
        self.outcomes[game_id] = (tuple(ranks[:n]), tuple(bool(x) for x in autopilot[:n]))

    def count_ready(self) -> Iterator[CountedPair]:
        """Count the pairs whose two games are in, in schedule order, up to the first that is
        not (or until the test stops); each one counted is yielded once the test has it."""
        while self.next_pair < len(self.pairs) and not self.test.stopped:
            a_id, b_id = self.ids[self.next_pair]
            if a_id not in self.outcomes or b_id not in self.outcomes:
                return
            pair = self.pairs[self.next_pair]
            (a_ranks, a_auto), (b_ranks, b_auto) = self.outcomes[a_id], self.outcomes[b_id]
            a_half = seat_half_points(a_ranks, a_auto, pair.seat)
            b_half = seat_half_points(b_ranks, b_auto, pair.seat)
            unit = unit_of(self.players, a_half, b_half)
            self.test.add(unit)
            self.halves.append((a_half, b_half))
            self.next_pair += 1
            yield CountedPair(pair, unit, a_half, b_half)

    def to_play(self) -> Iterator[tuple[MatchPair, str, tuple[str, ...]]]:
        """The games not yet known from the first pair not counted on, in schedule order, as
        ``(pair, game id, bot of each seat)``; none once the test has stopped (asked again
        before each game)."""
        for index in range(self.next_pair, len(self.pairs)):
            pair = self.pairs[index]
            for gid, seats in zip(self.ids[index], pair.games, strict=True):
                if self.test.stopped:
                    return
                if gid not in self.outcomes:
                    yield pair, gid, seats

    def missing(self) -> int:
        """How many games are still to play for the test to be able to stop at the cap."""
        if self.test.stopped:
            return 0
        return sum(1 for i in range(self.next_pair, len(self.pairs)) for g in self.ids[i] if g not in self.outcomes)

    def seats_of(self, pair: MatchPair, game_id: str) -> tuple[str, ...]:
        """The bot of each seat of ``game_id``, one of ``pair``'s two games."""
        return pair.games[0] if game_id == self.ids[pair.index][0] else pair.games[1]
