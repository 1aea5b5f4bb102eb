"""Ratings from game results: a joint Elo fit with bootstrap intervals, per-bot statistics
(the method: :mod:`arena.tournament.ratings.fit`)."""

from arena.tournament.ratings.fit import (
    ELO_PER_LOGIT,
    BotStats,
    GameResult,
    LeaderRow,
    Rating,
    RatingError,
    Tally,
    bot_stats,
    fit_elo,
    head_to_head,
    leaderboard,
    pair_scores,
    rate,
)

__all__ = [
    "ELO_PER_LOGIT",
    "BotStats",
    "GameResult",
    "LeaderRow",
    "Rating",
    "RatingError",
    "Tally",
    "bot_stats",
    "fit_elo",
    "head_to_head",
    "leaderboard",
    "pair_scores",
    "rate",
]
