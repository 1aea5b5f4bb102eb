"""The Gymnasium environment ``SushiGo-v0``: one seat learns, the others are arena bots
(arena.env.opponents). Same observation, actions and rewards as the PettingZoo
environments (one seat's share of them)."""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from gymnasium import spaces

from arena.bots.sandbox import SandboxSettings
from arena.engine import GameConfig, Variant, result
from arena.env.encoding import N_ACTIONS
from arena.env.opponents import BotThread, Game, Opponent, make_opponents
from arena.env.parallel import ILLEGAL, Table, observation_space, render_text
from arena.env.rewards import RewardSpec
from arena.game.acts import ActWriter
from arena.game.players import DEFAULT_TIME, TimeSettings

ENV_ID = "SushiGo-v0"


class SushiGoEnv(gym.Env):
    """One learning seat (``seat``, default 0) against ``opponents``: one per other seat,
    each an example policy's name (``random``, ``greedy``, ``mcts``: in this process)
    or a protocol bot's path (a subprocess in the ``sandbox``, default as in a tournament:
    ``strict`` where the machine has it, else ``limits``; timed by ``time_settings``).
    Call :meth:`close` (or use ``with``) to end the bot processes; they are also ended
    when the environment is garbage-collected or the interpreter exits.

    ``info`` after reset and each step: ``action_mask``, ``raw`` (the engine's
    Observation), ``plays`` (the play each legal action stands for), ``faults`` (the
    opponents' faults this game), ``illegal`` (the action was not legal: see
    :data:`~arena.env.parallel.ILLEGAL`) and, at the end, ``scores`` and ``ranks``."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        players: int = 4,
        variant: str = "standard",
        opponents: Sequence[str | Path] | None = None,
        *,
        seat: int = 0,
        reward: str = "margin",
        per_round: bool = False,
        illegal: str = "fallback",
        illegal_penalty: float = 0.0,
        time_settings: TimeSettings = DEFAULT_TIME,
        sandbox: SandboxSettings | None = None,
        build_cache: str | Path | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.config = GameConfig(players=players, variant=Variant(variant))
        if type(seat) is not int or not 0 <= seat < players:
            raise ValueError(f"seat must be a player's seat, 0 to {players - 1}, not {seat!r}")
        opponents = list(opponents) if opponents is not None else ["random"] * (players - 1)
        if len(opponents) != players - 1:
            raise ValueError(f"a {players}-player game needs {players - 1} opponents, {len(opponents)} given")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.render_mode = render_mode
        self.learner = seat
        self.reward_spec = RewardSpec(reward, per_round)
        if illegal not in ILLEGAL:
            raise ValueError(f"illegal must be one of {', '.join(ILLEGAL)}, not {illegal!r}")
        self.illegal, self.illegal_penalty = illegal, float(illegal_penalty)
        self.time_settings = time_settings
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._owned_cache = build_cache is None
        self._cache = Path(tempfile.mkdtemp(prefix="arena-env-")) if build_cache is None else Path(build_cache)
        self._threads: list[BotThread] = []

        def new_thread() -> BotThread:
            t = BotThread()
            self._threads.append(t)
            return t

        try:
            self.opponents: list[Opponent] = make_opponents(
                opponents, sandbox=sandbox, build_cache=self._cache, thread_factory=new_thread
            )
        except BaseException:
            self._close_resources(self._threads, self._cache if self._owned_cache else None)
            raise
        self._finalizer = weakref.finalize(
            self, SushiGoEnv._close_resources, self._threads, self._cache if self._owned_cache else None
        )
        self.seats = [s for s in range(players) if s != seat]  # opponents[i] sits at seats[i]
        self.names = []
        it = iter(self.opponents)
        for s in range(players):
            self.names.append("learner" if s == seat else next(it).name)
        if self.config.variant is Variant.DUMMY:
            self.names.append("dummy")
        self.table: Table | None = None
        self._games = 0

    @staticmethod
    def _close_resources(threads: list[BotThread], cache: Path | None) -> None:
        for t in threads:
            t.close()
        threads.clear()
        if cache is not None:
            shutil.rmtree(cache, ignore_errors=True)

    # -- gymnasium ---------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        game_seed = int(self.np_random.integers(0, 2**63 - 1))
        table = self.table = Table(self.config, game_seed, self.illegal)
        self._games += 1
        self.game = Game(
            self.config, table.state, game_seed, self.names, f"env-{game_seed:016x}", self.time_settings,
            ActWriter(table.state, f"env-{game_seed:016x}"),
        )
        self._begin_turn()
        for seat, opponent in zip(self.seats, self.opponents, strict=True):
            opponent.begin(self.game, seat)
        self._value = 0.0
        self._advance()
        return table.observation(self.learner), self._info()

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        table = self.table
        if table is None or table.state.over:
            raise RuntimeError("step() before reset(), or after the game ended: call reset()")
        own = table.play_of(self.learner, action, f"seat {self.learner}")
        before = table.state.round
        illegal = self.learner in table.illegal_seats
        self._turn(own)
        self._advance()
        state, spec, players = table.state, self.reward_spec, self.config.players
        reward = 0.0
        if state.over:
            res = result(state)
            reward = spec.final(res.scores, res.ranks, players, self.learner) - (self._value if spec.per_round else 0.0)
            for opponent in self.opponents:
                opponent.end()
        elif spec.per_round and state.round != before:
            now = spec.value(state.scores, players, self.learner)
            reward, self._value = now - self._value, now
        if illegal:
            reward -= self.illegal_penalty
        return table.observation(self.learner), float(reward), state.over, False, self._info(illegal)

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.table is None:
            return None
        return render_text(self.table)

    def close(self) -> None:
        self._finalizer()

    # -- the game ------------------------------------------------------------------------
    def _begin_turn(self) -> None:
        ts = self.time_settings
        bank = 0 if ts.no_timeout else ts.scaled_ms(ts.bank_ms)
        self.game.writer.begin_turn([bank] * self.config.seats)

    def _turn(self, own: tuple[int, ...] | None) -> None:
        table = self.table
        assert table is not None
        plays: list[tuple[int, ...] | None] = [None] * self.config.players
        plays[self.learner] = own
        for seat, opponent in zip(self.seats, self.opponents, strict=True):
            if table.actions[seat]:
                plays[seat] = opponent.play()
        table.apply(plays)
        self._begin_turn()

    def _advance(self) -> None:
        """Play the turns where the learner does not choose (R15: its last card)."""
        table = self.table
        assert table is not None
        while not table.state.over and not table.actions[self.learner]:
            self._turn(None)

    def _info(self, illegal: bool = False) -> dict[str, Any]:
        table = self.table
        assert table is not None
        info = table.info(self.learner, illegal)
        info["faults"] = [f for o in self.opponents for f in o.faults]
        if table.state.over:
            res = result(table.state)
            info["scores"], info["ranks"] = list(res.scores), list(res.ranks)
        return info


def register() -> None:
    """Register ``SushiGo-v0`` with Gymnasium (done when arena.env is imported)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="arena.env.single:SushiGoEnv", disable_env_checker=False)



