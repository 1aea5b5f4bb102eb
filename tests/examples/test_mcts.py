"""The mcts example bot: full games through the real referee in its deterministic mode,
the same game twice, and the winning move where there is one.

The bot runs with MCTS_ITERATIONS set (a fixed number of playouts, seeded by
game_start), which is what makes it deterministic and keeps these tests fast.
"""

from __future__ import annotations

import importlib.util
import os
import random
import sys
from types import ModuleType
from typing import Any

import msgspec
import pytest
import trio
from sdk_helpers import ROOT, act_message, game_start_message

from arena.bots import BotSpec
from arena.bots.manifest import find_bot
from arena.bots.prepare import prepare_bot
from arena.engine import GameConfig, GameState, apply_turn, events, legal_plays, new_game, result
from arena.game.players import open_pool
from arena.game.referee import play_game
from arena.game.record import GameRecord
from protocol import Play
from protocol.sdk import GameMemory, View

MCTS = ROOT / "example_bots" / "mcts"
ITERATIONS = 120  # playouts per decision in these tests


def spec(name: str, iterations: int = ITERATIONS) -> BotSpec:
    base = prepare_bot(find_bot(ROOT / "example_bots" / name), ROOT / "results" / "build")
    env = dict(base.env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if name == "mcts":
        env["MCTS_ITERATIONS"] = str(iterations)
    return BotSpec(name=name, argv=base.argv, cwd=base.cwd, env=env)


def run_games(names: list[str], games: list[tuple[GameConfig, int]]) -> list[GameRecord]:
    """Play the games in a row with one process per seat, reused from game to game."""

    async def main() -> list[GameRecord]:
        async with open_pool() as pool:
            players = [pool.player(spec(n)) for n in names]
            return [await play_game(players[: config.players], config, seed) for config, seed in games]

    return trio.run(main)


def actions(record: GameRecord) -> list[Any]:
    """What every seat played, turn by turn (timings left out)."""
    return [[(a.seat, a.cards, a.dummy_card, a.status) for a in t.actions] for t in record.replay.turns]


@pytest.mark.parametrize(
    ("names", "config"),
    [
        (["mcts", "greedy"], GameConfig(2)),
        (["random", "mcts", "greedy", "mcts"], GameConfig(4)),
        (["greedy", "mcts"], GameConfig(2, "dummy")),
    ],
    ids=["2p-standard", "4p-standard", "2p-dummy"],
)
def test_full_games_through_the_referee_without_faults(names: list[str], config: GameConfig) -> None:
    records = run_games(names, [(config, 3)])
    for record in records:
        assert record.status == "complete", record.void_reason
        assert not any(sum(f.values()) for f in record.faults), record.faults
        mcts_seats = [s for s, n in enumerate(names) if n == "mcts"]
        debug = [a.debug for t in record.replay.turns for a in t.actions if a.seat in mcts_seats and a.debug]
        assert debug and all(d["playouts"] >= ITERATIONS for d in debug)  # it searched, to its cap
        assert "sdk:" not in "".join(record.replay.stderr), record.replay.stderr  # never fell back


def test_the_same_seed_gives_the_same_game() -> None:
    first, second = (run_games(["mcts", "greedy"], [(GameConfig(2), 8)])[0] for _ in range(2))
    assert actions(first) == actions(second)
    assert first.scores == second.scores


# -- decisive positions -----------------------------------------------------------------


def load_bot(iterations: int) -> ModuleType:
    module_spec = importlib.util.spec_from_file_location("mcts_bot_under_test", MCTS / "bot.py")
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules.pop("mcts_bot_under_test", None)
    module_spec.loader.exec_module(module)
    module.ITERATIONS = iterations
    return module


def play_to_last_decision(seed: int) -> tuple[GameState, View]:
    """A 2-player game of seeded random plays up to seat 0's last decision, and seat
    0's view of it, remembered from every act it would have been sent."""
    config = GameConfig(2)
    state, rng = new_game(config, seed), random.Random(seed)
    start = msgspec.structs.replace(game_start_message(config, 0, seed), id=1)
    memory, cursor = GameMemory(start), 0
    while True:
        act = act_message(state, 0, events(state, cursor), None)
        cursor = len(state.log)
        memory.update(act)
        if state.round == 3 and len(state.hands[0]) == 2:
            return state, View(act, memory, start)
        apply_turn(state, [rng.choice(legal_plays(state, s)) for s in range(2)])


def decisive(state: GameState) -> tuple[int, ...] | None:
    """Seat 0's play that wins the game whatever seat 1 does, when every other play
    loses whatever seat 1 does (seat 1's hand is known to seat 0 by now); else None."""
    outcomes = {}
    for mine in legal_plays(state, 0):
        wins = set()
        for theirs in legal_plays(state, 1):
            trial = state.clone()
            apply_turn(trial, [mine, theirs])
            wins.add(result(trial).ranks[0] == 1 and result(trial).ranks[1] == 2)
        outcomes[mine] = wins
    winning = [p for p, w in outcomes.items() if w == {True}]
    losing = [p for p, w in outcomes.items() if w == {False}]
    return winning[0] if len(winning) == 1 and len(losing) == len(outcomes) - 1 else None


def test_it_takes_the_move_that_wins_the_game() -> None:
    """At the last decision of a 2-player game, where one play wins and every other loses
    whatever the opponent does, the bot takes the winning play. (The greedy example bot
    misses some of these: it does not look at the scores.)"""
    bot = load_bot(iterations=200).MctsBot()
    found = []
    for seed in range(150):
        state, view = play_to_last_decision(seed)
        move = decisive(state)
        if move is None:
            continue
        bot.rng = random.Random(seed)
        found.append(seed)
        assert view.to_play(bot.act(view)) == Play(cards=list(move)), f"seed {seed}"
    assert len(found) >= 8, found  # the seeds hold that many such positions
