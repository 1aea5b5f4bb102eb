"""The authoritative rules of Sushi Go! (RULES R1–R16) as a pure library.

No I/O, no clock, no global random: a game is decided by its config, its seed
and the plays applied to it. Typical use::

    from arena.engine import GameConfig, new_game, legal_plays, apply_turn, result
    state = new_game(GameConfig(players=4), seed=7)
    while not state.over:
        apply_turn(state, [legal_plays(state, s)[0] for s in range(4)])
    print(result(state).scores)
"""

from .cards import DECK_COUNTS, DECK_SIZE, HAND_SIZE, KIND_INDEX, KINDS, deck_composition
from .determinize import SeatView, determinize
from .errors import IllegalPlayError, InvalidPlayError, PlayError
from .game import apply_turn, new_game, result
from .plays import check_play, legal_plays
from .scoring import maki_points, maki_symbols, pudding_points, rank, set_points
from .state import LEFT, RIGHT, RULES_VERSION, GameConfig, GameResult, GameState, Play, Variant
from .view import Card, Observation, TableauCard, events, observe

__all__ = [
    "DECK_COUNTS",
    "DECK_SIZE",
    "HAND_SIZE",
    "KINDS",
    "KIND_INDEX",
    "LEFT",
    "RIGHT",
    "RULES_VERSION",
    "Card",
    "GameConfig",
    "GameResult",
    "GameState",
    "IllegalPlayError",
    "InvalidPlayError",
    "Observation",
    "Play",
    "PlayError",
    "SeatView",
    "TableauCard",
    "Variant",
    "apply_turn",
    "check_play",
    "deck_composition",
    "determinize",
    "events",
    "legal_plays",
    "maki_points",
    "maki_symbols",
    "new_game",
    "observe",
    "pudding_points",
    "rank",
    "result",
    "set_points",
]
