"""A finished game's database row, made from its :class:`~arena.game.record.GameRecord`:
the same from the game just played (a tournament) and from its replay (a killed run's
game, a rebuilt store)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.engine import RULES_VERSION
from arena.game.record import GameRecord
from arena.store.database import NewGame, replay_relpath


def game_row(record: GameRecord, set_id: str, bot_ids: Sequence[int], time_settings: Mapping[str, Any]) -> NewGame:
    """A finished game's database row (``bot_ids``: the bot row of each seat, in seat
    order), from its record: the same from the game just played and from its replay
    (:func:`arena.game.record.record_from_replay`, for a killed run's game or a rebuilt store)."""
    config = record.config
    n = config.players  # the dummy seat (if any) is not a bot: not stored
    timing = record.replay.timing or {}
    mean_ms = list(timing.get("mean_ms") or [None] * n)[:n]
    max_ms = list(timing.get("max_ms") or [None] * n)[:n]
    usage = {u.seat: u for u in record.replay.usage}
    return NewGame(
        id=record.game_id,
        status=record.status,
        set_id=set_id,
        seed=record.seed,
        players=n,
        variant=config.variant.value,
        rules=RULES_VERSION,
        time_settings=time_settings,
        duration_s=record.duration_s,
        replay=replay_relpath(record.game_id),
        bot_ids=list(bot_ids),
        points=(record.scores or [0] * n)[:n],
        puddings=(record.puddings or [0] * n)[:n],
        ranks=(record.ranks or [0] * n)[:n],
        autopilot=record.autopilot[:n],
        faults=record.faults[:n],
        mean_ms=mean_ms,
        max_ms=max_ms,
        cpu_ms=[usage[i].cpu_ms if i in usage else None for i in range(n)],
        peak_mb=[usage[i].peak_mb if i in usage else None for i in range(n)],
        void_reason=record.void_reason,
    )
