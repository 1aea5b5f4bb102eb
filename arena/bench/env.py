"""`arena bench env`: PettingZoo parallel steps with random masked actions against the
engine's own random playout (arena.bench.engine), interleaved in one run, in CPU time,
per decision. The environment needs the `rl` extra."""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass

import numpy as np

from arena.bench.engine import engine_random_game
from arena.engine import GameConfig, Variant, apply_turn, new_game, observe


@dataclass(frozen=True, slots=True)
class EnvBench:
    players: int
    variant: str
    env_decisions: int
    env_us_per_decision: float
    engine_decisions: int
    engine_us_per_decision: float
    observe_us_per_decision: float  # the engine's playout plus observe() for each deciding seat
    cost: float  # environment CPU per decision / engine CPU per decision (target: at most 2)
    observe_cost: float  # the same for the playout with observe(): the floor of any observation

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def env_random_game(env, seed: int, rng: np.random.Generator) -> int:  # noqa: ANN001 - a SushiGoParallelEnv
    """One game of random masked actions through the environment; its decisions."""
    obs, infos = env.reset(seed=seed if seed == 0 else None)
    decisions = 0
    while env.agents:
        actions = {}
        for agent in env.agents:
            legal = np.flatnonzero(obs[agent]["action_mask"])
            actions[agent] = int(legal[rng.integers(len(legal))])
            decisions += bool(infos[agent]["plays"])
        obs, _, _, _, infos = env.step(actions)
    return decisions


def observed_random_game(config: GameConfig, seed: int, rng: random.Random) -> int:
    """The engine's random playout, plus ``observe()`` of every deciding seat each turn
    (what any observation built only from ``observe()`` costs at least)."""
    state = new_game(config, seed)
    decisions = 0
    randbelow = rng.randrange
    while not state.over:
        plays: list = [None] * config.players
        for seat in state.deciding_seats():
            legal = observe(state, seat).legal
            plays[seat] = tuple(legal[randbelow(len(legal))])
            decisions += 1
        apply_turn(state, plays)
    return decisions


def bench_env(players: int = 4, seconds: float = 2.0, variant: str = "standard", seed: int = 0) -> EnvBench:
    from arena.env import parallel_env

    config = GameConfig(players, Variant(variant))
    env = parallel_env(players=players, variant=variant)
    np_rng, rng = np.random.default_rng(seed), random.Random(seed)
    totals = {"env": [0, 0.0], "engine": [0, 0.0], "observe": [0, 0.0]}
    slices = max(1, round(seconds / 0.25))
    games = 0
    for _ in range(slices):
        for name in totals:
            began = time.process_time()
            end = began + seconds / slices / 2
            while True:
                games += 1
                if name == "env":
                    totals[name][0] += env_random_game(env, seed * 1_000_003 + games, np_rng)
                elif name == "engine":
                    totals[name][0] += engine_random_game(config, seed * 1_000_003 + games, rng)
                else:
                    totals[name][0] += observed_random_game(config, seed * 1_000_003 + games, rng)
                now = time.process_time()
                if now >= end:
                    break
            totals[name][1] += now - began
    env_us = totals["env"][1] / totals["env"][0] * 1e6
    engine_us = totals["engine"][1] / totals["engine"][0] * 1e6
    observe_us = totals["observe"][1] / totals["observe"][0] * 1e6
    return EnvBench(
        players=players,
        variant=config.variant.value,
        env_decisions=int(totals["env"][0]),
        env_us_per_decision=round(env_us, 2),
        engine_decisions=int(totals["engine"][0]),
        engine_us_per_decision=round(engine_us, 2),
        observe_us_per_decision=round(observe_us, 2),
        cost=round(env_us / engine_us, 2),
        observe_cost=round(observe_us / engine_us, 2),
    )
