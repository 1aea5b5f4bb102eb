"""Reinforcement-learning environments on the exact engine: PettingZoo (parallel and AEC),
Gymnasium ``SushiGo-v0`` (registered on import) with arena bots as opponents, their
encodings and rewards. May import the engine, bots, game and protocol; needs the ``rl`` extra.

    import arena.env, gymnasium
    par = arena.env.parallel_env(players=4, variant="standard")
    aec = arena.env.env(players=3, variant="alternate")
    gym_env = gymnasium.make("SushiGo-v0", players=4, opponents=["greedy", "random", "mcts"])
"""

try:
    import gymnasium  # noqa: F401
    import pettingzoo  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"arena.env needs the 'rl' extra ({exc.name} is missing): pip install 'sushigo-arena[rl]'"
    ) from None

from .encoding import N_ACTIONS, NO_DECISION, OBS_SIZE, SeatMemory, action_mask, describe_action, encode, legal_actions
from .parallel import SushiGoParallelEnv, env, parallel_env
from .rewards import REWARDS, RewardSpec
from .single import ENV_ID, SushiGoEnv, register

register()

__all__ = [
    "ENV_ID",
    "NO_DECISION",
    "N_ACTIONS",
    "OBS_SIZE",
    "REWARDS",
    "RewardSpec",
    "SeatMemory",
    "SushiGoEnv",
    "SushiGoParallelEnv",
    "action_mask",
    "describe_action",
    "encode",
    "env",
    "legal_actions",
    "parallel_env",
    "register",
]
