"""The fixed opponents of the Gymnasium environment: the example policies in this process
(``random``, ``greedy``, ``mcts``: the very code of ``example_bots/``, run through the SDK)
and any protocol bot folder as a subprocess, started, sandboxed, timed and ended by the
referee's bot layer exactly as in a tournament.

Both are told the game as a bot is (``game_start``, each ``act`` as its wire line, whose
decoding is what a bot process would read, ``game_over``) and both answer with an engine
play. A bot's fault (late, malformed, illegal, crashed) is met as the referee meets it:
the seeded fallback play, strikes, autopilot; it is recorded, never raised.
"""

from __future__ import annotations

import importlib.util
import math
import os
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from arena.bots import BotError
from arena.bots.manifest import find_bot
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import SandboxSettings
from arena.bots.strict import resolve_level
from arena.engine import GameConfig, GameState, PlayError, check_play, result
from arena.errors import ArenaError
from arena.game.acts import ActWriter
from arena.game.players import BotFault, Player, TimeSettings, open_pool
from arena.game.referee import fallback_play, game_start_message
from protocol import Ack, Action, GameOver, LastAction, Ready, decode_request, encode_line
from protocol.sdk import Bot, Session

#: The example policies that run in this process, by name.
EXAMPLE_POLICIES = ("random", "greedy", "mcts")
#: Playouts per decision of the in-process ``mcts`` (it thinks by the clock as a bot;
#: a fixed budget keeps an episode reproducible). ``MCTS_ITERATIONS`` overrides it.
MCTS_ENV_ITERATIONS = 200
MAX_STRIKES = 3

def example_bot_file(name: str) -> Path:
    return Path(__file__).resolve().parents[2] / "example_bots" / name / "bot.py"

def load_example_bot(name: str) -> Bot:
    """A fresh instance of the SDK bot of ``example_bots/NAME/bot.py``."""
    path = example_bot_file(name)
    if not path.is_file():
        raise ArenaError(
            f"opponent {name!r}: the example policy is {path}, which is not there "
            "(an install without the source tree): give a bot folder's path instead"
        )
    spec = importlib.util.spec_from_file_location(f"arena_env_policy_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if name == "mcts" and not os.environ.get("MCTS_ITERATIONS"):
        module.ITERATIONS = MCTS_ENV_ITERATIONS
    classes = [
        v for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, Bot) and v is not Bot and v.__module__ == module.__name__
    ]
    if len(classes) != 1:
        raise ArenaError(f"opponent {name!r}: {path} defines {len(classes)} Bot classes, expected one")
    return classes[0]()

@dataclass
class Fault:
    """A fault of an opponent, as the referee records one."""

    seat: int
    bot: str
    round: int
    turn: int
    kind: str
    message: str

@dataclass
class _SeatState:
    seat: int
    request_id: int = 0
    cursor: int = 0  # event cursor: the log position of this seat's previous request
    bank_s: float = 0.0
    strikes: int = 0
    autopilot: bool = False
    last_action: LastAction | None = None
    faults: dict[str, int] = field(default_factory=dict)

class Opponent:
    """One seat played by a bot. :meth:`begin` at each game's start, :meth:`play` at
    each of its decisions, :meth:`end` at the game's end, :meth:`close` once."""

    name: str

    def __init__(self, name: str) -> None:
        self.name = name
        self.faults: list[Fault] = []

    # -- what the environment calls --
    def begin(self, game: Game, seat: int) -> None:
        self.game, self.seat = game, _SeatState(seat, bank_s=game.time.seconds(game.time.bank_ms))
        self.faults = []
        start = game_start_message(game.config, seat, game.names, game.game_id, game.time, game.seed, self._next_id())
        try:
            self._ask_ready(start)
        except BotFault as f:
            self._fault(f, 0, 0)
            self.seat.autopilot = True

    def play(self) -> tuple[int, ...]:
        game, seat = self.game, self.seat
        state = game.state
        rnd, turn = state.round, state.turn
        if seat.autopilot:
            return fallback_play(state, seat.seat, game.seed)
        ts = game.time
        turn_s = ts.seconds(ts.turn_ms)
        time_ms = 0 if not math.isfinite(turn_s) else round((turn_s + seat.bank_s) * 1000)
        line = game.writer.line(seat.seat, self._next_id(), time_ms, seat.last_action, seat.cursor)
        seat.cursor = len(state.log)
        act = decode_request(line)
        try:
            reply, elapsed = self._ask_action(act, turn_s + seat.bank_s)
            seat.bank_s = max(0.0, seat.bank_s - max(0.0, elapsed - turn_s))
            play = self._checked(state, reply)
        except BotFault as f:
            self._fault(f, rnd, turn)
            play = fallback_play(state, seat.seat, game.seed)
            seat.last_action = _last(play, act.dummy, f.kind, f.message)
            return play
        seat.last_action = _last(play, act.dummy, "ok", "", elapsed)
        return play

    def end(self) -> None:
        game, seat = self.game, self.seat
        if seat.autopilot:
            return
        res = result(game.state)
        over = GameOver(
            id=self._next_id(), game_id=game.game_id, scores=list(res.scores), puddings=list(res.puddings),
            ranks=list(res.ranks), faults=dict(seat.faults), reason="complete",
            events=game.writer.event_json(seat.cursor), last_action=seat.last_action,  # type: ignore[arg-type]
        )
        over = decode_request(encode_line(over))  # the events as a bot reads them
        try:
            self._ask_ack(over)
        except BotFault as f:
            self._fault(f, game.state.round, game.state.turn)

    def close(self) -> None:
        pass

    # -- what a kind of opponent provides --
    def _next_id(self) -> int:
        raise NotImplementedError

    def _ask_ready(self, start: Any) -> None:
        raise NotImplementedError

    def _ask_action(self, act: Any, timeout_s: float) -> tuple[Action, float]:
        raise NotImplementedError

    def _ask_ack(self, over: GameOver) -> None:
        raise NotImplementedError

    # -- shared --
    def _checked(self, state: GameState, reply: Action) -> tuple[int, ...]:
        cards = list(reply.cards)
        if reply.dummy_card is not None:
            cards.append(reply.dummy_card)
        try:
            return check_play(state, self.seat.seat, cards)
        except PlayError as exc:
            raise BotFault("illegal", str(exc)) from None

    def _fault(self, f: BotFault, rnd: int, turn: int) -> None:
        seat = self.seat
        seat.faults[f.kind] = seat.faults.get(f.kind, 0) + 1
        self.faults.append(Fault(seat.seat, self.name, rnd, turn, f.kind, f.message))
        seat.strikes += 1
        if f.kind == "crash" or seat.strikes >= MAX_STRIKES:
            seat.autopilot = True

def _last(play: tuple[int, ...], dummy: bool, status: str, message: str, elapsed: float | None = None) -> LastAction:
    return LastAction(
        status=status,  # type: ignore[arg-type]
        cards=list(play[:-1]) if dummy else list(play),
        dummy_card=play[-1] if dummy else None,
        message=message,
        elapsed_ms=0.0 if elapsed is None or not math.isfinite(elapsed) else round(elapsed * 1000, 3),
    )

class InProcessOpponent(Opponent):
    """An SDK bot run in this process (no time limit: it is trusted code)."""

    def __init__(self, name: str, bot: Bot) -> None:
        super().__init__(name)
        self.session = Session(bot)
        self._id = 0

    def _next_id(self) -> int:
        self._id += 1
        return self._id

    def _ask_ready(self, start: Any) -> None:
        self.session.handle(start)

    def _ask_action(self, act: Any, timeout_s: float) -> tuple[Action, float]:
        reply = self.session.handle(act)
        assert isinstance(reply, Action)
        return reply, 0.0

    def _ask_ack(self, over: GameOver) -> None:
        self.session.handle(over)

class BotThread:
    """A trio event loop in a thread of its own, holding a :func:`open_pool` of bot
    processes: the environment's synchronous calls run coroutines there. Closing it
    leaves the pool, which ends every bot process tree."""

    def __init__(self) -> None:
        self._ready: queue.Queue[Any] = queue.Queue()
        self._thread = threading.Thread(target=trio.run, args=(self._main,), name="arena-env-bots", daemon=True)
        self._thread.start()
        got = self._ready.get()
        if isinstance(got, BaseException):
            raise got
        self.token, self.pool, self._stop = got

    async def _main(self) -> None:
        try:
            async with open_pool() as pool:
                stop = trio.Event()
                self._ready.put((trio.lowlevel.current_trio_token(), pool, stop))
                await stop.wait()
        except BaseException as exc:  # noqa: BLE001 (handed to the waiting thread)
            self._ready.put(exc)
            raise

    def run(self, afn: Callable[..., Any], *args: Any) -> Any:
        return trio.from_thread.run(afn, *args, trio_token=self.token)

    def run_sync(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the bots' thread (what touches a bot's watchers must run there)."""
        return trio.from_thread.run_sync(fn, *args, trio_token=self.token)

    def close(self) -> None:
        if self._thread.is_alive():
            try:
                trio.from_thread.run_sync(self._stop.set, trio_token=self.token)
            except trio.RunFinishedError:
                pass
            self._thread.join()

class ProcessOpponent(Opponent):
    """A protocol bot folder as a subprocess: the referee's :class:`Player`, in the
    sandbox a tournament would give it, within the game's :class:`TimeSettings`."""

    def __init__(self, name: str, player: Player, thread: BotThread) -> None:
        super().__init__(name)
        self.player, self.thread = player, thread

    def _next_id(self) -> int:
        return self.player.next_id() if self.player.running else 0

    def begin(self, game: Game, seat: int) -> None:
        player = self.player
        if player.has_seen(game.seed):
            player.needs_restart = True  # a process never plays one deal twice
        self.game, self.seat = game, _SeatState(seat, bank_s=game.time.seconds(game.time.bank_ms))
        try:
            self.thread.run(player.start, game.time)
        except BotFault as f:
            self.faults = []
            self._fault(f, 0, 0)
            self.seat.autopilot = True
            return
        player.deals.add(game.seed)
        self.thread.run_sync(player.begin_game)
        super().begin(game, seat)

    def _ask_ready(self, start: Any) -> None:
        self.thread.run(self.player.request, start, Ready, self.player.timeout_s(self.game.time, self.game.time.hello_ms))

    def _ask_action(self, act: Any, timeout_s: float) -> tuple[Action, float]:
        timeout = math.inf if self.player.untimed else timeout_s
        return self.thread.run(self.player.request, act, Action, timeout)

    def _ask_ack(self, over: GameOver) -> None:
        self.thread.run(self.player.request, over, Ack, self.game.time.seconds(max(self.game.time.turn_ms, 1000)))

    def stderr_tail(self) -> str:
        return self.player.stderr_tail()

@dataclass
class Game:
    """One game as the opponents see it."""

    config: GameConfig
    state: GameState
    seed: int
    names: list[str]
    game_id: str
    time: TimeSettings
    writer: ActWriter

def make_opponents(
    specs: Sequence[str | os.PathLike[str]],
    *,
    sandbox: SandboxSettings | None,
    build_cache: Path,
    thread_factory: Callable[[], BotThread],
) -> list[Opponent]:
    """One :class:`Opponent` per spec: an example policy's name, or a bot's path."""
    out: list[Opponent] = []
    thread: BotThread | None = None
    for spec in specs:
        text = os.fspath(spec)
        if text in EXAMPLE_POLICIES and not Path(text).exists():
            out.append(InProcessOpponent(text, load_example_bot(text)))
            continue
        path = Path(text)
        if not path.exists():
            raise ArenaError(
                f"opponent {text!r}: neither an example policy ({', '.join(EXAMPLE_POLICIES)}) nor a bot's path"
            )
        try:
            manifest = find_bot(path)
            if sandbox is None:
                level, _warning = resolve_level(None)
                sandbox = SandboxSettings(level)
            bot_spec = prepare_bot(manifest, build_cache, sandbox)
        except BotError as exc:
            raise ArenaError(f"opponent {text!r}: {exc}") from None
        if thread is None:
            thread = thread_factory()
        player = thread.pool.player(bot_spec, version=manifest.version, content_hash=manifest.content_hash)
        out.append(ProcessOpponent(manifest.name, player, thread))
    return out
