"""What a match tells as it goes (a :class:`MatchReporter`: bots ready, the plan, each pair
counted) and what it comes to (:class:`MatchSummary`). Nothing here prints: the CLI draws a
reporter."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arena.match.stats import Estimate, SprtSpec
from arena.runs.common import Entrant

__all__ = ["MatchPlan", "MatchReporter", "MatchStatus", "MatchSummary", "SilentMatchReporter"]


@dataclass(frozen=True, slots=True)
class MatchPlan:
    match_id: str
    a: str
    b: str
    opponents: tuple[str, ...]
    players: int
    variant: str
    sprt: SprtSpec | None
    max_pairs: int
    counted: int  # pairs already in the store and counted
    jobs: int


@dataclass(slots=True)
class MatchStatus:
    """The test after a pair: what the status line shows."""

    pairs: int
    max_pairs: int
    llr: float
    lower: float
    upper: float
    verdict: str
    estimate: Estimate
    unit: float | None = None  # the last pair's unit (0..1), None before any

    def to_dict(self) -> dict[str, Any]:
        e = self.estimate
        return {
            "verdict": self.verdict, "llr": self.llr, "llr_lower": self.lower, "llr_upper": self.upper,
            "elo": e.elo, "elo_low": e.elo_low, "elo_high": e.elo_high, "adjusted": e.adjusted,
            "nelo": e.nelo, "nelo_low": e.nelo_low, "nelo_high": e.nelo_high,
            "los": e.los, "score": e.score, "pairs": self.pairs, "games": 2 * self.pairs,
        }


@dataclass(slots=True)
class MatchSummary:
    """What a match came to."""

    match_id: str
    results: Path
    players: int
    variant: str
    a: str
    b: str
    opponents: tuple[str, ...]
    sprt: SprtSpec | None
    status: MatchStatus
    counts: list[int]
    already: int = 0  # pairs counted from the store
    stored: int = 0  # games of the match in the store when it started (recovered ones aside)
    played: int = 0  # games played by this run (counted or not)
    recovered: int = 0  # games recorded from a killed match's replay files
    void: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    bots: list[Entrant] = field(default_factory=list)
    #: Each counted pair's rank-based scores in half points, in schedule order: (A's in A's
    #: game, B's in the twin). For the benchmark's unpaired comparison; not in the JSON.
    halves: list[tuple[int, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.status.to_dict(),
            "match": self.match_id,
            "a": self.a,
            "b": self.b,
            "opponents": list(self.opponents),
            "players": self.players,
            "variant": self.variant,
            "sprt": None if self.sprt is None else self.sprt.to_dict(),
            "max_pairs": self.status.max_pairs,
            "counts": list(self.counts),
            "already": self.already,
            "stored": self.stored,
            "played": self.played,
            "recovered": self.recovered,
            "void": self.void,
            "interrupted": self.interrupted,
            "seconds": round(self.seconds, 3),
            "results": str(self.results),
        }


class MatchReporter(Protocol):
    def bot_ready(self, bot: Entrant) -> None: ...

    def planned(self, plan: MatchPlan) -> None: ...

    def pair_done(self, status: MatchStatus) -> None: ...


class SilentMatchReporter:
    def bot_ready(self, bot: Entrant) -> None:
        pass

    def planned(self, plan: MatchPlan) -> None:
        pass

    def pair_done(self, status: MatchStatus) -> None:
        pass
