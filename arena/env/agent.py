"""A trained agent as a protocol bot: the environments' observation made from what the
bot is told (the SDK's View), the agent's action turned back into a play.

    # bot.py of a bot folder (bot.toml: run = ["{python}", "bot.py"])
    from arena.env.agent import run_agent
    run_agent(lambda obs: choose(obs["observation"], obs["action_mask"]), name="my-agent")

The observation equals, field for field, the one the environments give that seat at
that decision: the act a bot receives holds what :func:`arena.engine.observe` shows,
and the agent remembers the acts of its game as the environments' seats do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from arena.engine import Observation
from arena.env.encoding import NO_DECISION, SeatMemory, action_mask, encode, legal_actions
from protocol.messages import GameStart
from protocol.policy import PolicyBot
from protocol.sdk import run
from protocol.view import View

Agent = Callable[[dict[str, np.ndarray]], Any]


def observation_of(view: View) -> Observation:
    """The engine's observation of the seat the view is for (the same fields)."""
    dummy = view.dummy
    return Observation(
        seat=view.seat,
        players=view.players,
        seats=view.seats,
        variant=view.variant,
        round=view.round,
        turn=view.turn,
        direction=view.direction,
        hand=list(view.hand),  # type: ignore[arg-type]  # protocol Cards: the same fields
        tableaus=[list(t) for t in view.tableaus],  # type: ignore[misc]
        puddings=list(view.puddings),
        scores=list(view.scores),
        hand_sizes=list(view.hand_sizes),
        legal=[[*p.cards, p.dummy_card] if dummy else list(p.cards) for p in view.legal],  # type: ignore[list-item]
        controller=view.controller,
        dummy=dummy,
    )


class AgentPolicy:
    """``agent(observation) -> action`` as a view policy for :class:`protocol.policy.PolicyBot`:
    ``observation`` is ``{"observation": ..., "action_mask": ...}`` as the environments
    give it. An action the mask forbids is answered with the first legal play (the SDK
    logs it on stderr)."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.memory = SeatMemory()

    def on_game_start(self, game: GameStart) -> None:
        self.memory = SeatMemory()

    def __call__(self, view: View) -> list[int]:
        obs = observation_of(view)
        self.memory.update(obs)
        actions = legal_actions(obs)
        action = self.agent({"observation": encode(obs, self.memory), "action_mask": action_mask(actions)})
        try:
            play = actions.get(int(action))
        except (TypeError, ValueError, OverflowError):
            play = None
        if play is None or int(action) == NO_DECISION:
            raise ValueError(f"the agent chose action {action!r}, which is not legal here")
        return list(play)


def agent_bot(agent: Agent, *, name: str = "agent", version: str = "1") -> PolicyBot:
    policy = AgentPolicy(agent)
    return PolicyBot(policy, name=name, version=version, on_game_start=policy.on_game_start)


def run_agent(agent: Agent, *, name: str = "agent", version: str = "1") -> None:
    """Serve the referee with ``agent`` until ``shutdown`` (see :func:`protocol.sdk.run`)."""
    run(agent_bot(agent, name=name, version=version))
