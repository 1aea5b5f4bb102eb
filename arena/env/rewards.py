"""The rewards of the environments (docs/research.md "Rewards"): what one seat gets for a
game, at its end or, with ``per_round``, as it changes at each round's end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

REWARDS = ("margin", "points", "rank")


@dataclass(frozen=True, slots=True)
class RewardSpec:
    """``kind``: ``margin`` (own total minus the best other player's: >0 is a win on
    points), ``points`` (own total) or ``rank`` ((players - rank) / (players - 1): 1 for
    first place, 0 for last, shared places as R13 numbers them). ``per_round``: pay
    ``margin`` or ``points`` as they change at each round's end (they sum to the same
    total); ``rank`` is only known at the end."""

    kind: str = "margin"
    per_round: bool = False

    def __post_init__(self) -> None:
        if self.kind not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {self.kind!r}")
        if self.per_round and self.kind == "rank":
            raise ValueError("reward 'rank' is only known at the game's end: per_round needs 'margin' or 'points'")

    def value(self, scores: Sequence[int], players: int, seat: int) -> float:
        """The running value of ``seat`` from the table's ``scores`` (points of finished
        rounds; only the real players' seats count)."""
        if self.kind == "points":
            return float(scores[seat])
        return float(scores[seat] - max(scores[s] for s in range(players) if s != seat))

    def final(self, scores: Sequence[int], ranks: Sequence[int], players: int, seat: int) -> float:
        if self.kind == "rank":
            return (players - ranks[seat]) / (players - 1)
        return self.value(scores, players, seat)
