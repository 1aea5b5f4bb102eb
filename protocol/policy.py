"""The policy adapter: any function from what a bot sees to a play becomes a protocol bot.

    from protocol.policy import run_policy

    run_policy(lambda view: view.legal[0], name="first")

``policy(view)`` gets the SDK's :class:`~protocol.view.View` and returns one of
``view.legal`` (or the card ids in order, as :meth:`protocol.sdk.Bot.act` may). A policy
that needs a fresh start each game (a memory of its own) passes ``on_game_start``.
The SDK does the rest (protocol, flushing, a bad answer costs a poor move, not a fault).
Trained agents from ``arena.env`` use :func:`arena.env.agent.run_agent`, which turns
the view into the environments' observation first.

Imports only msgspec (through the protocol package) and the standard library.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .messages import GameStart, Play
from .sdk import Bot, run
from .view import View

Policy = Callable[[View], "Play | Sequence[int]"]


class PolicyBot(Bot):
    """A :class:`~protocol.sdk.Bot` whose ``act`` is ``policy``."""

    def __init__(
        self,
        policy: Policy,
        *,
        name: str = "policy",
        version: str = "1",
        on_game_start: Callable[[GameStart], Any] | None = None,
    ) -> None:
        super().__init__()
        self.policy = policy
        self._start = on_game_start
        # (Instance attributes shadow the class's: the hello reply reads them.)
        self.name = name  # type: ignore[misc]
        self.version = version  # type: ignore[misc]

    def act(self, view: View) -> Play | Sequence[int]:
        return self.policy(view)

    def on_game_start(self, game: GameStart) -> None:
        if self._start is not None:
            self._start(game)


def run_policy(
    policy: Policy,
    *,
    name: str = "policy",
    version: str = "1",
    on_game_start: Callable[[GameStart], Any] | None = None,
) -> None:
    """Serve the referee with ``policy`` until ``shutdown`` (see :func:`protocol.sdk.run`)."""
    run(PolicyBot(policy, name=name, version=version, on_game_start=on_game_start))
