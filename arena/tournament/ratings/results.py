"""What the ratings take and give: a finished game as they see it (:class:`GameResult`), its
pairs of seats (:func:`pair_scores`), a rating, a bot's statistics, a leaderboard row.

Pure: no I/O, no clock, no global random.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from arena.errors import ArenaError

#: Elo points per logit of the Bradley-Terry model: 400 Elo is a factor of 10 in the odds.
ELO_PER_LOGIT = 400.0 / math.log(10.0)


class RatingError(ArenaError, ValueError):
    """Results that cannot be rated as asked; the message names the game or bot at fault."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game, as the ratings see it.

    ``seats`` holds the bot key per seat (a two-player dummy variant's dummy seat is left out);
    ``ranks`` 1 = best, shared places share a number; ``autopilot`` (optional) marks the seats
    that ended the game on autopilot; ``faults`` (optional) maps fault kind to count per seat.
    """

    game_id: str
    set_id: str
    seats: tuple[str, ...]
    ranks: tuple[int, ...]
    points: tuple[int, ...]
    autopilot: tuple[bool, ...] = ()
    faults: tuple[Mapping[str, int], ...] = ()

    def __post_init__(self) -> None:
        n = len(self.seats)
        if len(self.ranks) != n or len(self.points) != n:
            raise RatingError(
                f"game {self.game_id}: {n} seats but {len(self.ranks)} ranks and {len(self.points)} points"
            )
        if self.autopilot and len(self.autopilot) != n:
            raise RatingError(
                f"game {self.game_id}: {n} seats but {len(self.autopilot)} autopilot flags"
            )
        if self.faults and len(self.faults) != n:
            raise RatingError(f"game {self.game_id}: {n} seats but {len(self.faults)} fault counts")


@dataclass(frozen=True, slots=True)
class Rating:
    """An Elo rating and its bootstrap interval (``low``/``high`` are NaN without a bootstrap)."""

    elo: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class BotStats:
    """Per-bot figures. ``games`` counts seats played (a bot in two seats of a game plays two).

    ``wins``: a seat ranked 1 wins; a first place shared by k seats is 1/k of a win.
    ``points_vs_table``: the mean, over the duplicate sets the bot played, of its mean points in
    the set minus the mean points of all seats in that set (0 = as good as its tables).
    """

    games: int
    wins: float
    win_share: float
    mean_points: float
    mean_rank: float
    points_vs_table: float
    faults: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LeaderRow:
    """One line of the leaderboard: rank by Elo, the rating, and the bot's :class:`BotStats`."""

    rank: int
    bot: str
    elo: float
    low: float
    high: float
    games: int
    wins: float
    win_share: float
    mean_points: float
    mean_rank: float
    points_vs_table: float
    faults: dict[str, int]


def pair_scores(game: GameResult) -> list[tuple[str, str, float]]:
    """The game as pairs of seats held by different bots: ``(a, b, a's score)``, 1, 0.5 or 0.

    Seats ``i < j`` give ``(seats[i], seats[j], ...)``. A seat on autopilot loses to one that is
    not; otherwise the lower rank wins and equal ranks draw.
    """
    seats, ranks, auto = game.seats, game.ranks, game.autopilot
    out = []
    for i in range(len(seats)):
        for j in range(i + 1, len(seats)):
            if seats[i] == seats[j]:
                continue  # self-play says nothing about the bot's strength
            if auto and auto[i] != auto[j]:
                score = 0.0 if auto[i] else 1.0
            elif ranks[i] < ranks[j]:
                score = 1.0
            elif ranks[i] > ranks[j]:
                score = 0.0
            else:
                score = 0.5
            out.append((seats[i], seats[j], score))
    return out
