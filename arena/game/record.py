"""What one game produced, as the tournament stores it: the :class:`GameRecord` the referee
returns, and the same record rebuilt from a complete game's replay."""

from __future__ import annotations

from dataclasses import dataclass

from arena.engine import GameConfig, Variant
from arena.game.replay import FAULT_KINDS, Replay


@dataclass(slots=True)
class GameRecord:
    """The outcome of one game as the tournament stores it."""

    game_id: str
    status: str  # "complete" or "void"
    seed: int
    config: GameConfig
    bots: list[str]
    scores: list[int]
    puddings: list[int]
    ranks: list[int]
    autopilot: list[bool]
    faults: list[dict[str, int]]
    replay: Replay
    duration_s: float
    void_reason: str = ""


def record_from_replay(replay: Replay) -> GameRecord:
    """The :class:`GameRecord` that :func:`play_game` returned for a complete game,
    rebuilt from its replay (all a record holds is in it; its ``duration_s`` to the
    millisecond). For a run resuming after a kill that came between a game's replay
    file and its database row. Raises ValueError if the replay is not of a complete game."""
    res = replay.result
    if replay.status != "complete" or res is None:
        raise ValueError(f"game {replay.game_id} is not complete ({replay.status})")
    config = GameConfig(replay.config["players"], Variant(replay.config["variant"]))
    faults = [dict.fromkeys(FAULT_KINDS, 0) for _ in replay.seats]
    for f in replay.faults:
        if f.kind != "autopilot":  # the strikes' consequence, not a fault of its own
            faults[f.seat][f.kind] = faults[f.seat].get(f.kind, 0) + 1
    return GameRecord(
        game_id=replay.game_id,
        status="complete",
        seed=replay.seed,
        config=config,
        bots=[s.bot for s in replay.seats],
        scores=list(res.scores),
        puddings=list(res.puddings),
        ranks=list(res.ranks),
        autopilot=list(res.autopilot),
        faults=faults,
        replay=replay,
        duration_s=float(replay.timing.get("duration_s", 0.0)),
    )
