"""The policy adapter and the training example: a trained agent sees, as a bot, exactly
the observation the environments give it, and enters `arena run` unchanged."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import arena.env
from arena.env.agent import agent_bot
from arena.env.opponents import InProcessOpponent
from protocol.policy import PolicyBot

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "train_agent.py"


@pytest.mark.parametrize(("players", "variant"), [(4, "standard"), (3, "alternate"), (2, "dummy")])
def test_the_agent_bot_sees_the_environments_observation(players: int, variant: str) -> None:
    """Seat 1 is an agent behind the adapter, told the game through protocol acts; at
    each of its decisions its observation equals the environment's for that seat."""
    env = arena.env.SushiGoEnv(players, variant, opponents=["random"] * (players - 1))
    compared = []

    def agent(obs: dict) -> int:
        expected = env.table.observation(1)
        assert np.array_equal(obs["observation"], expected["observation"])
        assert np.array_equal(obs["action_mask"], expected["action_mask"])
        compared.append(1)
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[len(compared) % len(legal)])

    env.opponents[0] = InProcessOpponent("agent", agent_bot(agent))
    for seed in (1, 2):  # two games: the memory starts afresh with each
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, done, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        assert info["faults"] == []
    env.close()
    assert len(compared) > 20


def test_policy_bot_says_its_name_and_plays_the_policy() -> None:
    bot = PolicyBot(lambda view: view.legal[-1], name="last", version="7")
    assert (bot.name, bot.version) == ("last", "7")
    assert PolicyBot.name == "python-bot"  # the class is untouched


def _arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_the_training_example_trains_an_agent_that_enters_a_tournament(tmp_path: Path) -> None:
    """The docs' example, shortened: train briefly, write the bot, `arena validate` it,
    play it against random in `arena run`: every game is played, legally (no faults)."""
    env = dict(os.environ)
    league = tmp_path / "league"
    trained = subprocess.run(
        [sys.executable, str(EXAMPLE), "--episodes", "40", "--eval-games", "10", "--out", str(league / "linear")],
        capture_output=True, text=True, timeout=600, env=env,
    )
    assert trained.returncode == 0, trained.stderr
    assert "against random, 10 new deals: won" in trained.stdout
    assert (league / "linear" / "weights.npz").is_file()
    validated = _arena("validate", str(league / "linear"), cwd=tmp_path)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    shutil.copytree(ROOT / "example_bots" / "random", league / "random")
    ran = _arena("run", "--bots", str(league), "--deals", "2", "--results", str(tmp_path / "results"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    board = json.loads((tmp_path / "results" / "leaderboard.json").read_text())
    rows = {r["bot"]: r for r in board["rows"]} if "rows" in board else None
    assert rows is not None, board
    assert rows["linear"]["games"] == 4 and not any(rows["linear"]["faults"].values())
