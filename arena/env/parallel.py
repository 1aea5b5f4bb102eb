"""The PettingZoo environments: :class:`SushiGoParallelEnv` (every player picks at once,
as in the game) and, through PettingZoo's own conversion, the AEC one.

Agents are ``player_0`` .. ``player_{n-1}`` (the dummy of the two-player variant is not
an agent: its card is chosen by the player who controls it, R15). Each observation is
``{"observation": float32 vector, "action_mask": int8 vector}`` (arena.env.encoding);
``infos[agent]`` holds the same mask, the engine's raw ``Observation`` (``raw``) and the
play each legal action stands for (``plays``).
"""

from __future__ import annotations

import functools
import random
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec

from arena.engine import GameConfig, GameState, Variant, apply_turn, new_game, observe, result
from arena.env.encoding import (
    N_ACTIONS,
    OBS_HIGH,
    OBS_LOW,
    SeatMemory,
    action_mask,
    describe_action,
    encode,
    legal_actions,
)
from arena.env.rewards import RewardSpec
from arena.game.referee import fallback_play

#: What an action the mask forbids does: ``fallback`` plays the seeded random legal play
#: the referee gives a faulting bot (``info["illegal"]`` says so, ``illegal_penalty`` is
#: taken off the reward); ``raise`` raises ValueError naming the seat, turn and legal actions.
ILLEGAL = ("fallback", "raise")


def observation_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "observation": spaces.Box(OBS_LOW, OBS_HIGH, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(N_ACTIONS,), dtype=np.int8),
        }
    )


class Table:
    """One game seen seat by seat: the state, each seat's memory, and the encoded
    observation and legal actions of every player at this turn. Shared by the
    PettingZoo and the Gymnasium environments."""

    def __init__(self, config: GameConfig, seed: int, illegal: str = "fallback") -> None:
        if illegal not in ILLEGAL:
            raise ValueError(f"illegal must be one of {', '.join(ILLEGAL)}, not {illegal!r}")
        self.illegal = illegal
        self.illegal_seats: set[int] = set()  # who played an illegal action this turn
        self.config = config
        self.seed = seed
        self.state: GameState = new_game(config, seed)
        self.memories = [SeatMemory() for _ in range(config.players)]
        self.look()

    def look(self) -> None:
        """Observe every player; a player's memory takes in what it sees when it decides
        (as a bot's: it is asked only then)."""
        self.raw = [observe(self.state, s) for s in range(self.config.players)]
        for memory, obs in zip(self.memories, self.raw, strict=True):
            if obs.legal:
                memory.update(obs)
        self.actions = [legal_actions(obs) for obs in self.raw]
        self.masks = [action_mask(a) for a in self.actions]

    def observation(self, seat: int) -> dict[str, np.ndarray]:
        return {"observation": encode(self.raw[seat], self.memories[seat]), "action_mask": self.masks[seat]}

    def info(self, seat: int, illegal: bool = False) -> dict[str, Any]:
        """``illegal``: the seat's last action was not legal (a fallback was played)."""
        return {
            "action_mask": self.masks[seat],
            "raw": self.raw[seat],
            "plays": dict(self.actions[seat]),
            "illegal": illegal,
        }

    def play_of(self, seat: int, action: Any, who: str) -> tuple[int, ...] | None:
        """The engine play of ``seat``'s action (None if it does not decide this turn)."""
        actions = self.actions[seat]
        if not actions:
            return None
        try:
            a = int(action)
        except (TypeError, ValueError, OverflowError):
            if self.illegal == "raise":
                raise ValueError(f"{who}: an action is an integer, not {action!r}") from None
            a = None
        play = actions.get(a) if type(a) is int else None
        if play is None and self.illegal == "fallback":
            self.illegal_seats.add(seat)
            return fallback_play(self.state, seat, self.seed)
        if play is None:
            obs = self.raw[seat]
            legal = ", ".join(sorted(describe_action(x) for x in actions))
            raise ValueError(
                f"{who}: action {a} ({describe_action(a)}) is not legal in round {obs.round} turn {obs.turn}; "
                f"legal: {legal} (see action_mask)"
            )
        return play

    def apply(self, plays: list[tuple[int, ...] | None]) -> None:
        apply_turn(self.state, plays)
        self.illegal_seats = set()
        self.look()


def _config(players: int, variant: str) -> GameConfig:
    return GameConfig(players=players, variant=Variant(variant))


class SushiGoParallelEnv(ParallelEnv):
    """Sushi Go! for 2-5 players, every variant, on the arena's engine.

    ``reward``: ``margin`` (default), ``points`` or ``rank``; ``per_round=True`` pays
    margin or points at each round's end (see :class:`~arena.env.rewards.RewardSpec`).
    ``illegal``: what an action the mask forbids does (:data:`ILLEGAL`).
    ``reset(seed=s)`` fixes the deal and every later unseeded reset's deal."""

    metadata = {"name": "sushigo_v0", "render_modes": ["ansi"], "is_parallelizable": True}

    def __init__(
        self,
        players: int = 4,
        variant: str = "standard",
        *,
        reward: str = "margin",
        per_round: bool = False,
        illegal: str = "fallback",
        illegal_penalty: float = 0.0,
        render_mode: str | None = None,
    ) -> None:
        self.config = _config(players, variant)
        if illegal not in ILLEGAL:
            raise ValueError(f"illegal must be one of {', '.join(ILLEGAL)}, not {illegal!r}")
        self.illegal, self.illegal_penalty = illegal, float(illegal_penalty)
        self.rewards_spec = RewardSpec(reward, per_round)
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self.agents: list[str] = []
        self._rng = random.Random()
        self.table: Table | None = None

    @functools.lru_cache(maxsize=None)  # noqa: B019 (PettingZoo wants the same space object each call)
    def observation_space(self, agent: str) -> spaces.Dict:
        return observation_space()

    @functools.lru_cache(maxsize=None)  # noqa: B019
    def action_space(self, agent: str) -> spaces.Discrete:
        return spaces.Discrete(N_ACTIONS)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self._rng = random.Random(seed)
            for i, agent in enumerate(self.possible_agents):
                self.action_space(agent).seed(seed + i)
                self.observation_space(agent).seed(seed + i)
        self.table = Table(self.config, self._rng.getrandbits(63), self.illegal)
        self.agents = list(self.possible_agents)
        self._values = [0.0] * self.config.players
        return self._observations(), self._infos()

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        table = self.table
        return {a: table.observation(i) for i, a in enumerate(self.possible_agents)}  # type: ignore[union-attr]

    def _infos(self) -> dict[str, dict[str, Any]]:
        table = self.table
        return {a: table.info(i) for i, a in enumerate(self.possible_agents)}  # type: ignore[union-attr]

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        table = self.table
        if table is None or not self.agents:
            raise RuntimeError("step() before reset(), or after the game ended: call reset()")
        plays = []
        for i, agent in enumerate(self.possible_agents):
            if table.actions[i] and agent not in actions:
                raise ValueError(f"{agent}: no action given; it chooses this turn")
            plays.append(table.play_of(i, actions.get(agent), agent))
        illegal = table.illegal_seats
        table.apply(plays)
        state, players, spec = table.state, self.config.players, self.rewards_spec
        rewards = dict.fromkeys(self.possible_agents, 0.0)
        if state.over:
            res = result(state)
            for i, agent in enumerate(self.possible_agents):
                rewards[agent] = spec.final(res.scores, res.ranks, players, i) - (self._values[i] if spec.per_round else 0.0)
        elif spec.per_round:
            scores = state.scores
            for i, agent in enumerate(self.possible_agents):
                now = spec.value(scores, players, i)
                rewards[agent], self._values[i] = now - self._values[i], now
        for i in illegal:
            rewards[self.possible_agents[i]] -= self.illegal_penalty
        done = state.over
        observations = self._observations()
        infos = {a: table.info(i, i in illegal) for i, a in enumerate(self.possible_agents)}
        terminations = dict.fromkeys(self.possible_agents, done)
        truncations = dict.fromkeys(self.possible_agents, False)
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.table is None:
            return None
        return render_text(self.table)

    def close(self) -> None:
        pass

    def state(self) -> np.ndarray:
        """Every player's observation vector, stacked (a centralized critic's input:
        it holds every hand, so it is not any one player's view)."""
        if self.table is None:
            raise RuntimeError("state() before reset()")
        return np.stack([self.table.observation(i)["observation"] for i in range(self.config.players)])


def render_text(table: Table) -> str:
    """The table in plain words: round, turn, every seat's tableau and score."""
    obs = table.raw[0]
    lines = [f"round {obs.round} turn {obs.turn} ({obs.direction})"]
    for s in range(obs.seats):
        name = "dummy" if s >= table.config.players else f"player_{s}"
        cards = " ".join(c.card for c in obs.tableaus[s]) or "-"
        lines.append(f"{name}: {obs.scores[s]} pts, {obs.puddings[s]} pudding, tableau: {cards}")
    return "\n".join(lines)


def parallel_env(players: int = 4, variant: str = "standard", **kwargs: Any) -> SushiGoParallelEnv:
    """A PettingZoo ParallelEnv: ``arena.env.parallel_env(players=4, variant="standard")``."""
    return SushiGoParallelEnv(players, variant, **kwargs)


def env(players: int = 4, variant: str = "standard", **kwargs: Any) -> Any:
    """The same game as a PettingZoo AEC environment (players in seat order each turn;
    the turn is applied once every player has chosen)."""
    return parallel_to_aec(SushiGoParallelEnv(players, variant, **kwargs))
