"""Ratings from game results: a joint Elo fit with bootstrap intervals, per-bot statistics.

Pure: no I/O, no clock, no global random; numpy for the algebra.

The method, as BayesElo and Ordo do it, does not depend on the order of the games:

- Every game is broken into all pairs of seats held by different bots. The better-ranked seat
  of a pair wins it; a shared place is a draw, counted as half a win each. A seat that ended the
  game on autopilot loses to every seat that did not, whatever the ranks say (the referee ranks
  them so already); two autopilot seats are compared by rank like any others.
- One Bradley-Terry model is fitted to all pairs at once on the Elo scale (:mod:`.fit`): bot
  ``a`` beats bot ``b`` with probability ``1 / (1 + 10 ** ((elo_b - elo_a) / 400))``, with a
  weak Gaussian prior on every rating, by Newton's method on the aggregated pair matrix.
- Intervals (:mod:`.bootstrap`): whole duplicate sets resampled with replacement, each resample
  refitted by one Newton step from the full fit, percentiles reported; never narrower than the
  curvature's interval.

The parts: :mod:`.results` (what the ratings take and give), :mod:`.aggregates` (games as
columns, win counts per pair and per set), :mod:`.fit`, :mod:`.bootstrap`, :mod:`.stats`
(per-bot figures, head-to-head, the leaderboard) and :mod:`.tally` (a running tally).
"""

from arena.tournament.ratings import _threads  # noqa: F401  (first: before numpy is imported)
from arena.tournament.ratings.aggregates import PairData, ResultColumns
from arena.tournament.ratings.bootstrap import rate
from arena.tournament.ratings.fit import fit_elo
from arena.tournament.ratings.results import (
    ELO_PER_LOGIT,
    BotStats,
    GameResult,
    LeaderRow,
    Rating,
    RatingError,
    pair_scores,
)
from arena.tournament.ratings.stats import bot_stats, head_to_head, leaderboard, los_from_counts, usage_by_bot
from arena.tournament.ratings.tally import Tally

__all__ = [
    "ELO_PER_LOGIT",
    "BotStats",
    "GameResult",
    "LeaderRow",
    "PairData",
    "Rating",
    "RatingError",
    "ResultColumns",
    "Tally",
    "bot_stats",
    "fit_elo",
    "head_to_head",
    "leaderboard",
    "los_from_counts",
    "pair_scores",
    "rate",
    "usage_by_bot",
]
