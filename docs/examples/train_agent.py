"""Train a small Sushi Go! agent with numpy only, then write it out as a bot folder.

    python3 docs/examples/train_agent.py --episodes 3000 --out agents/linear
    arena validate agents/linear
    mkdir -p league && cp -r agents/linear example_bots/random league/
    arena run --bots league/ --deals 50 --results league-results/

The agent is a linear softmax policy over the legal actions of SushiGo-v0 (one weight
row per action), trained by REINFORCE with a running baseline against `random`, on
the final points margin. docs/research.md says what it reaches and how fast.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import gymnasium
import numpy as np

import arena.env  # noqa: F401  (registers SushiGo-v0)
from arena.env.encoding import N_ACTIONS, OBS_HIGH, OBS_SIZE

SCALE = np.maximum(np.abs(OBS_HIGH), 1.0)  # features brought to about [-1, 1]


def features(obs: np.ndarray) -> np.ndarray:
    return np.append(obs / SCALE, 1.0).astype(np.float64)


def policy(weights: np.ndarray, obs: dict, rng: np.random.Generator | None) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """An action (sampled with ``rng``, else the most likely), the legal actions, their
    probabilities and the features."""
    x = features(obs["observation"])
    legal = np.flatnonzero(obs["action_mask"])
    logits = weights[legal] @ x
    p = np.exp(logits - logits.max())
    p /= p.sum()
    i = int(rng.choice(len(legal), p=p)) if rng is not None else int(np.argmax(p))
    return int(legal[i]), legal, p, x


def train(episodes: int, players: int, seed: int, lr: float) -> np.ndarray:
    env = gymnasium.make("SushiGo-v0", players=players, opponents=["random"] * (players - 1))
    rng = np.random.default_rng(seed)
    weights = np.zeros((N_ACTIONS, OBS_SIZE + 1))
    baseline, margins = 0.0, []
    began = time.process_time()
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + episode)
        steps, done, reward = [], False, 0.0
        while not done:
            action, legal, p, x = policy(weights, obs, rng)
            steps.append((action, legal, p, x))
            obs, reward, done, _, _ = env.step(action)
        margins.append(reward)
        advantage = (reward - baseline) / 10.0
        baseline += 0.02 * (reward - baseline)
        for action, legal, p, x in steps:  # the gradient of log p(action) for a softmax
            grad = -p
            grad[np.flatnonzero(legal == action)[0]] += 1.0
            weights[legal] += lr * advantage * np.outer(grad, x)
        if (episode + 1) % max(1, episodes // 10) == 0:
            recent = margins[-max(1, episodes // 10):]
            print(f"episode {episode + 1}: mean margin {np.mean(recent):+.1f}, "
                  f"won {np.mean(np.asarray(recent) > 0):.0%} ({time.process_time() - began:.0f} s CPU)")
    env.close()
    return weights


def evaluate(weights: np.ndarray, players: int, games: int, seed: int) -> float:
    env = gymnasium.make("SushiGo-v0", players=players, opponents=["random"] * (players - 1))
    wins = 0
    for g in range(games):
        obs, _ = env.reset(seed=seed + g)
        done, info = False, {}
        while not done:
            obs, _, done, _, info = env.step(policy(weights, obs, None)[0])
        wins += info["ranks"][0] == 1
    env.close()
    return wins / games


BOT = '''"""A linear policy trained by docs/examples/train_agent.py (weights.npz), as a protocol bot."""

import numpy as np

from arena.env.agent import run_agent
from arena.env.encoding import OBS_HIGH

WEIGHTS = np.load("weights.npz")["weights"]
SCALE = np.maximum(np.abs(OBS_HIGH), 1.0)


def choose(obs):
    x = np.append(obs["observation"] / SCALE, 1.0)
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[np.argmax(WEIGHTS[legal] @ x)])


if __name__ == "__main__":
    run_agent(choose, name="{name}", version="1")
'''


def write_bot(folder: Path, weights: np.ndarray, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(folder / "weights.npz", weights=weights.astype(np.float32))
    (folder / "bot.py").write_text(BOT.replace("{name}", name), encoding="utf-8")
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\ndescription = "A linear policy trained against random with SushiGo-v0."\n'
        'run = ["{python}", "bot.py"]\n',
        encoding="utf-8",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--eval-games", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("agents/linear"))
    parser.add_argument("--name", default="linear")
    args = parser.parse_args()
    weights = train(args.episodes, args.players, args.seed, args.lr)
    if args.eval_games:
        rate = evaluate(weights, args.players, args.eval_games, seed=10**6)
        print(f"against random, {args.eval_games} new deals: won {rate:.0%}")
    write_bot(args.out, weights, args.name)
    print(f"bot written to {args.out}")


if __name__ == "__main__":
    main()
