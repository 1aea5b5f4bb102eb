"""An act is self-sufficient (PROTOCOL.md, `act`): its `history` and `hands_seen`, checked
on the lines real bot processes received from the real referee.

Nothing hidden goes into them: `history` + `events` is the game's public log up to the
act (the replay's events, which every seat saw), and `hands_seen` is the seat's own hands
at the earlier turns of the round (the replay's hands, which that seat was shown).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import trio

from arena.bots import BotSpec
from arena.engine import GameConfig
from arena.game.players import TimeSettings, open_pool
from arena.game.referee import play_game
from arena.game.replay import Replay

ROOT = Path(__file__).resolve().parents[2]
TESTBOT = ROOT / "tests" / "data" / "bots" / "testbot.py"
FAST = TimeSettings(hello_ms=5_000, turn_ms=400, bank_ms=200)


def _record(specs: list[BotSpec], config: GameConfig, seed: int) -> Replay:
    async def main() -> Replay:
        async with open_pool() as pool:
            record = await play_game([pool.player(s) for s in specs], config, seed, time_settings=FAST)
        assert record.status == "complete", record.void_reason
        return record.replay

    return trio.run(main)


@pytest.mark.parametrize(
    ("players", "variant", "faulty"),
    [(3, "standard", ()), (2, "dummy", ()), (4, "alternate", ("--mode", "illegal", "--at", "2.2"))],
)
def test_history_and_hands_seen_hold_the_public_log_and_the_seats_own_hands(
    tmp_path: Path, players: int, variant: str, faulty: tuple[str, ...]
) -> None:
    logs = [tmp_path / f"seat{i}.jsonl" for i in range(players)]
    specs = [
        BotSpec(
            name=f"bot{i}",
            argv=(sys.executable, str(TESTBOT), "--name", f"bot{i}", "--log", str(logs[i]), *(faulty if i == 1 else ())),
            cwd=TESTBOT.parent,
        )
        for i in range(players)
    ]
    replay = _record(specs, GameConfig(players, variant), seed=21)
    public = replay.event_dicts()
    hands = {(t.round, t.turn): t.hands for t in replay.turns}
    checked = 0
    for seat, log in enumerate(logs):
        for line in log.read_text().splitlines():
            act = json.loads(line)
            if act["type"] != "act":
                continue
            where = (seat, act["round"], act["turn"])
            log_so_far = act["history"] + act["events"]
            assert log_so_far == public[: len(log_so_far)], where
            # ...and it is all of it: the next public event is the reveal of this very turn.
            if len(log_so_far) < len(public):
                following = public[len(log_so_far)]
                assert (following["type"], following["round"], following["turn"]) == ("reveal", act["round"], act["turn"]), where
            seen = [[c["id"] for c in hand] for hand in act["hands_seen"]]
            assert seen == [hands[(act["round"], t)][seat] for t in range(1, act["turn"])], where
            assert [c["id"] for c in act["hand"]] == hands[(act["round"], act["turn"])][seat], where
            checked += 1
    assert checked == sum(1 for t in replay.turns for a in t.actions if a.status not in ("autopilot", "auto"))
