"""SushiGo-v0: Gymnasium's checker, seeding, the in-process example policies, and bot
folders as real subprocesses (a good one and hostile ones): bounded, and never left behind."""

from __future__ import annotations

import gc
import json
import shutil
import time
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from proc_helpers import processes_in

import arena.env
from arena.errors import ArenaError
from arena.game.players import TimeSettings

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "data" / "hostile_bots" / "hostile.py"


def _episode(env: gymnasium.Env, seed: int, pick=lambda mask: int(np.flatnonzero(mask)[0])) -> tuple[list, dict]:
    obs, info = env.reset(seed=seed)
    trace, done = [], False
    while not done:
        obs, reward, done, truncated, info = env.step(pick(obs["action_mask"]))
        assert not truncated
        trace.append((obs["observation"].tobytes(), reward))
    return trace, info


@pytest.mark.parametrize(("players", "variant"), [(4, "standard"), (3, "alternate"), (2, "dummy"), (5, "standard")])
def test_check_env_passes(players: int, variant: str) -> None:
    env = gymnasium.make("SushiGo-v0", players=players, variant=variant, opponents=["greedy"] * (players - 1))
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_registered_on_import_and_seeded_episodes_repeat() -> None:
    assert arena.env.ENV_ID in gymnasium.registry
    env = gymnasium.make("SushiGo-v0", players=4, opponents=["greedy", "random", "mcts"])
    first, info = _episode(env, 21)
    again, _ = _episode(env, 21)
    other, _ = _episode(env, 22)
    env.close()
    assert first == again and first != other
    assert len(info["scores"]) == 4 and info["faults"] == []
    assert first[-1][1] == info["scores"][0] - max(info["scores"][1:])  # the margin reward


def test_learner_may_sit_anywhere_and_unknown_opponents_are_named() -> None:
    env = arena.env.SushiGoEnv(3, opponents=["random", "greedy"], seat=2, reward="rank")
    _, info = _episode(env, 1)
    assert info["ranks"][2] in (1, 2, 3)
    env.close()
    with pytest.raises(ArenaError, match="opponent 'nosuchbot'"):
        arena.env.SushiGoEnv(2, opponents=["nosuchbot"])
    with pytest.raises(ValueError, match="needs 3 opponents"):
        arena.env.SushiGoEnv(4, opponents=["random"])


def test_a_bot_folder_plays_as_a_subprocess_and_ends_with_close(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = arena.env.SushiGoEnv(3, opponents=[ROOT / "example_bots" / "greedy", "random"], build_cache=cache)
    _, info = _episode(env, 5)
    assert info["faults"] == [] and len(info["scores"]) == 3
    assert processes_in(cache), "the bot runs from the build cache while the environment is open"
    _episode(env, 6)  # the same process plays the next game
    env.close()
    assert processes_in(cache) == {}


def _hostile(folder: Path, name: str, behaviour: str, trigger: int = 2) -> Path:
    bot = folder / name
    bot.mkdir(parents=True)
    shutil.copy(HOSTILE, bot / "bot.py")
    run = ["{python}", "bot.py", behaviour, str(trigger)]
    (bot / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\nrun = {json.dumps(run)}\n')
    return bot


@pytest.mark.parametrize(("behaviour", "kinds"), [("hang", {"timeout"}), ("crash", {"crash"}), ("garbage", {"malformed", "timeout"}), ("double_fork", set())])
def test_a_hostile_bot_costs_it_fallbacks_and_leaves_nothing_behind(tmp_path: Path, behaviour: str, kinds: set) -> None:
    cache = tmp_path / "cache"
    bot = _hostile(tmp_path / "bots", "hostile", behaviour)
    ts = TimeSettings(hello_ms=10_000, turn_ms=200, bank_ms=0)
    env = arena.env.SushiGoEnv(2, opponents=[bot], build_cache=cache, time_settings=ts)
    began = time.monotonic()
    _, info = _episode(env, 3)
    assert time.monotonic() - began < 60  # (a bound against hanging, not a speed figure)
    faults = info["faults"]
    assert {f.kind for f in faults} == kinds  # (double_fork plays on: its escaped child is the test)
    assert all(f.seat == 1 and f.bot == "hostile" for f in faults)
    assert len(info["scores"]) == 2  # the game was played to its end on fallbacks
    env.close()
    assert processes_in(cache) == {}


def test_a_forgotten_environment_ends_its_bots_when_collected(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = arena.env.SushiGoEnv(2, opponents=[ROOT / "example_bots" / "random"], build_cache=cache)
    env.reset(seed=1)
    assert processes_in(cache)
    del env
    gc.collect()
    assert processes_in(cache) == {}
