"""The referee: the only place where the engine and bot processes meet.

:func:`play_game` runs one game among :class:`~arena.game.players.Player`\\ s (bot processes speaking
protocol v1, reused across games, but never for two games of one deal):
``game_start`` to every seat, then each turn every deciding seat's ``act`` written
and all replies awaited in parallel, each against its own deadline; faults become
seeded random legal fallbacks, strikes and autopilot as protocol/PROTOCOL.md says;
and everything is recorded in a :class:`~arena.game.replay.Replay`. A failure of the referee or the OS (not of a bot)
voids the game instead of blaming anyone.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import logging
import math
import random
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import trio

from arena import __version__
from arena.bots import (
    Answer,
    BotGroup,
    Question,
    lone_errors_unwrapped,
)
from arena.engine import (
    KINDS,
    RULES_VERSION,
    GameConfig,
    GameState,
    PlayError,
    Variant,
    apply_turn,
    check_play,
    deck_composition,
    legal_plays,
    new_game,
    result,
)
from arena.game.acts import ActWriter
from arena.game.ids import default_game_id, seat_identity, time_dict
from arena.game.record import GameRecord
from arena.game.players import (
    DEFAULT_TIME,
    BotFault,
    Player,
    TimeSettings,
    check_reply,
    hello_budget,
)
from arena.game.replay import (
    ENDING_KINDS,
    FAULT_KINDS,
    ActionRecord,
    FaultRecord,
    Replay,
    ResultSummary,
    SeatInfo,
    TurnRecord,
    summarize_log,
)
from protocol import (
    Ack,
    Action,
    GameOver,
    GameStart,
    LastAction,
    Ready,
    Rules,
    TimeControl,
    encode_line,
)

MAX_DEBUG_BYTES = 4096  # a bot's debug object is kept in the replay up to this size
STDERR_TAIL_BYTES = 16 * 1024  # per seat and game, in the replay

log = logging.getLogger(__name__)



@dataclass(slots=True)
class _Seat:
    index: int
    player: Player | None  # None for the dummy seat
    bank_s: float
    autopilot: bool = False
    strikes: int = 0
    faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAULT_KINDS, 0))
    event_cursor: int = 0
    last_action: LastAction | None = None
    elapsed: list[float] = field(default_factory=list)
    # The request of the exchange under way, and what came of it (see _Referee.ask).
    request_id: int = 0
    question: Question | None = None
    outcome: Any = None
    act_question: Question | None = None


def fallback_play(state: GameState, seat: int, game_seed: int) -> tuple[int, ...]:
    """The seeded random legal play applied for a seat that faulted or is on autopilot:
    a random index into the R16-ordered legal list, from a generator seeded by the
    game's seed, the seat, the round and the turn (reproducible, independent of timing)."""
    legal = legal_plays(state, seat)
    key = f"fallback:{game_seed}:{seat}:{state.round}:{state.turn}".encode()
    rng = random.Random(int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big"))
    return legal[rng.randrange(len(legal))]


def bot_seed(game_seed: int, seat: int, ids: int | None = None) -> int:
    """The seed given to a bot in game_start: a hash of the game's secrets (its seed and
    its card labelling ``ids``, both keyed with the store's deal key in a tournament) and
    the seat. It reveals nothing of the deal (no bot can invert it), and differs between
    the games of a duplicate set (their ``ids`` differ)."""
    key = f"bot:{game_seed}:{seat}" if ids is None else f"bot:{game_seed}:{ids}:{seat}"
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") >> 1


def game_start_message(
    config: GameConfig,
    seat: int,
    names: list[str],
    game_id: str,
    time_settings: TimeSettings,
    game_seed: int,
    request_id: int,
    ids: int | None = None,
) -> GameStart:
    """The ``game_start`` a seat receives (also used to put a recorded position to a bot);
    ``ids`` is the game's card labelling (see :func:`play_game`)."""
    ts = time_settings
    return GameStart(
        id=request_id,
        game_id=game_id,
        seat=seat,
        players=config.players,
        seats=config.seats,
        names=names,
        rules=game_rules(config),
        time=TimeControl(turn_ms=ts.scaled_ms(ts.turn_ms), bank_ms=ts.scaled_ms(ts.bank_ms)),
        seed=bot_seed(game_seed, seat, ids),
    )


@functools.lru_cache(maxsize=16)
def game_rules(config: GameConfig) -> Rules:
    """The rules a ``game_start`` states for games of ``config`` (made once per format;
    read, never changed)."""
    return Rules(
        rules_version=RULES_VERSION,
        variant=config.variant.value,
        hand_size=config.hand_size,
        rounds=3,
        directions=["left" if config.direction(r) > 0 else "right" for r in (1, 2, 3)],
        deck=deck_composition(),
    )


async def play_game(
    players: Sequence[Player],
    config: GameConfig,
    seed: int,
    *,
    time_settings: TimeSettings = DEFAULT_TIME,
    game_id: str | None = None,
    max_strikes: int = 3,
    ids: int | None = None,
    fresh_per_deal: bool = True,
) -> GameRecord:
    """Play one game; ``players[i]`` sits at seat i. Never raises for a bot's misdeeds:
    they are faults in the record. A referee or OS failure returns a void record.

    ``seed`` fixes the deal; ``ids`` (see :func:`arena.engine.new_game`) relabels its card
    ids, and goes into every bot's ``game_start`` seed. Both are the game's secrets: a
    tournament derives them from its store's deal key (the twin games of a duplicate set
    share ``seed`` and differ in ``ids``), so that no bot can compute or confirm them.

    A bot process never plays two games of one deal: a player whose current process has
    played (or was dealt) ``seed`` before is restarted first, so that it starts the game
    remembering nothing of it (a fresh process, and under ``--sandbox strict`` a fresh
    ``/tmp``). ``fresh_per_deal=False`` (a run's ``--trusted-reuse``, for bots trusted
    not to remember a deal) lifts that rule: a running process plays whatever it is dealt,
    and only a crash or a broken stream restarts it."""
    if len(players) != config.players:
        raise ValueError(f"{config.players} players needed, {len(players)} given")
    if len({id(p) for p in players}) != len(players):
        raise ValueError("one process never plays two seats: give each seat its own Player")
    gid = game_id or default_game_id(config, seed, [seat_identity(p.name, p.content_hash) for p in players], time_settings)
    if fresh_per_deal:
        for p in players:
            if p.has_seen(seed):
                p.needs_restart = True
    started = time.time()
    t0 = trio.current_time()
    seats = [_Seat(i, p, p.timeout_s(time_settings, time_settings.bank_ms)) for i, p in enumerate(players)]
    if config.variant is Variant.DUMMY:
        seats.append(_Seat(2, None, 0.0))
    state = new_game(config, seed, ids=ids)
    replay = Replay(
        arena_version=__version__,
        game_id=gid,
        seed=seed,
        ids=ids,
        players=config.seats,
        variant=config.variant.value,
        config={"players": config.players, "variant": config.variant.value},
        time=time_dict(time_settings),
        seats=[SeatInfo(seat=i, bot=p.name, version=p.version, hash=p.content_hash) for i, p in enumerate(players)]
        + ([SeatInfo(seat=2, bot="dummy")] if config.variant is Variant.DUMMY else []),
        cards=[KINDS[k] for k in state.kind_of],
    )
    referee = _Referee(state, seats, config, seed, gid, time_settings, max_strikes, replay, ids)
    for p in players:
        p.begin_game()
    try:
        await referee.run()
        status, reason = "complete", ""
    except Exception as exc:  # the referee's or the OS's fault: void, blame nobody
        # Once the result is decided (a failure while telling the bots game_over), the game
        # stands: every play is recorded, and a verified replay of it is a complete game.
        status = "complete" if replay.result is not None else "void"
        reason = "" if status == "complete" else f"{type(exc).__name__}: {exc}\n" + "".join(traceback.format_exc(limit=6))
        if status == "complete":
            log.warning("game %s: the referee failed after the result was decided: %s: %s", gid, type(exc).__name__, exc)
        for seat in seats:
            if seat.player is not None:
                seat.player.needs_restart = True
    replay.status = status
    replay.void_reason = reason
    replay.stderr = [s.player.stderr_tail(reset=True)[-STDERR_TAIL_BYTES:] if s.player else "" for s in seats]
    replay.usage = [p.usage(i) for i, p in enumerate(players)]
    for p in players:
        p.end_game()
    duration = trio.current_time() - t0
    replay.timing = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "duration_s": round(duration * 1000) / 1000,
        "mean_ms": [round(1e6 * sum(s.elapsed) / len(s.elapsed)) / 1000 if s.elapsed else None for s in seats],
        "max_ms": [round(1e6 * max(s.elapsed)) / 1000 if s.elapsed else None for s in seats],
    }
    res = replay.result
    return GameRecord(
        game_id=gid,
        status=status,
        seed=seed,
        config=config,
        bots=[s.bot for s in replay.seats],
        scores=list(res.scores) if res else [],
        puddings=list(res.puddings) if res else [],
        ranks=list(res.ranks) if res else [],
        autopilot=[s.autopilot for s in seats],
        faults=[dict(s.faults) for s in seats],
        replay=replay,
        duration_s=duration,
        void_reason=reason,
    )


class _Referee:
    def __init__(
        self,
        state: GameState,
        seats: list[_Seat],
        config: GameConfig,
        seed: int,
        game_id: str,
        time_settings: TimeSettings,
        max_strikes: int,
        replay: Replay,
        ids: int | None = None,
    ) -> None:
        self.state = state
        self.ids = ids
        self.seats = seats
        self.config = config
        self.seed = seed
        self.game_id = game_id
        self.ts = time_settings
        self.max_strikes = max_strikes
        self.replay = replay
        self.order_rng = random.Random(seed ^ 0x5EA75)  # write order of each turn's acts
        self.orders = _PERMUTATIONS
        self.acts = ActWriter(state, game_id)
        self.group: BotGroup  # set by run()
        self.turn_s = time_settings.seconds(time_settings.turn_ms)
        self.turn_ms = time_settings.scaled_ms(time_settings.turn_ms)
        self._banks_key: list[float] | None = None
        self._banks: list[int] = []

    # -- faults ----------------------------------------------------------------------
    def fault(self, seat: _Seat, kind: str, message: str, *, round: int, turn: int, strike: bool = True) -> None:
        seat.faults[kind] = seat.faults.get(kind, 0) + 1  # (resigned: only where it happened)
        self.replay.faults.append(FaultRecord(seat=seat.index, round=round, turn=turn, kind=kind, message=message))
        if not strike:  # after the last turn: counted and reported, but the result stands
            if seat.player is not None:
                seat.player.needs_restart = True
            return
        if kind in ENDING_KINDS:
            seat.autopilot = True
            if seat.player is not None:
                seat.player.needs_restart = True
            return
        seat.strikes += 1
        if seat.strikes >= self.max_strikes and not seat.autopilot:
            seat.autopilot = True
            if seat.player is not None:
                seat.player.needs_restart = True
            self.replay.faults.append(
                FaultRecord(
                    seat=seat.index, round=round, turn=turn, kind="autopilot",
                    message=f"{self.max_strikes} strikes: seeded random plays for the rest of the game",
                )
            )

    # -- the game --------------------------------------------------------------------
    def pool_group(self) -> contextlib.AbstractContextManager[BotGroup]:
        """The game's bot group: from the players' pool when they share one."""
        pools = {id(s.player.pool): s.player.pool for s in self.seats if s.player is not None}
        if len(pools) == 1:
            return next(iter(pools.values())).bot_group()
        return BotGroup()

    async def run(self) -> None:
        with self.pool_group() as self.group:
            await self.start()
            while not self.state.over:
                await self.play_turn()
            await self.finish()

    async def start(self) -> None:
        """Start (or restart) whoever needs it, then ``game_start`` to every seat at once."""
        seats = [s for s in self.seats if s.player is not None]
        cold = [s for s in seats if not s.player.started]  # type: ignore[union-attr]
        if len(cold) == 1:
            await self.start_seat(cold[0])
        elif cold:
            with lone_errors_unwrapped():  # a referee bug voids the game with its own message
                async with trio.open_nursery() as nursery:
                    for seat in cold:
                        nursery.start_soon(self.start_seat, seat)
        for seat in seats:  # from here on, each of these processes has seen this deal
            if seat.player.running:  # type: ignore[union-attr]
                seat.player.deals.add(self.seed)  # type: ignore[union-attr]
        asking = [s for s in seats if not s.autopilot]
        for seat in asking:
            player = seat.player
            assert player is not None
            line = self.game_start(seat)
            self.question(seat, line, player.timeout_s(self.ts, self.ts.hello_ms))
        await self.ask(asking, Ready)
        for seat in asking:
            if isinstance(seat.outcome, BotFault):
                self.not_ready(seat, seat.outcome)
            seat.outcome = None

    async def start_seat(self, seat: _Seat) -> None:
        player = seat.player
        assert player is not None
        try:
            await player.start(self.ts)
        except BotFault as f:
            self.not_ready(seat, f)

    def not_ready(self, seat: _Seat, f: BotFault) -> None:
        message = f.message
        if f.kind == "timeout" and "--hello-ms" not in message:  # getting ready has the start-up budget too
            message += f" (the start-up budget is {hello_budget(self.ts)}: raise it with --hello-ms)"
        self.fault(seat, f.kind, f"game_start: {message}", round=0, turn=0)
        if f.kind != "crash":
            # A seat that cannot even get ready plays no part: autopilot now.
            seat.autopilot = True
            seat.player.needs_restart = True  # type: ignore[union-attr]

    def game_start(self, seat: _Seat) -> bytes:
        assert seat.player is not None
        names = [s.bot for s in self.replay.seats]
        return encode_line(
            game_start_message(
                self.config, seat.index, names, self.game_id, self.ts, self.seed, seat.player.next_id(), self.ids
            )
        )

    def banks_ms(self) -> list[int]:
        """Every seat's bank in ms (0 for no deadline), remade only after a bank changed."""
        key = [s.bank_s for s in self.seats]
        if key != self._banks_key:
            self._banks_key = key
            self._banks = [0 if not math.isfinite(b) else round(b * 1000) for b in key]
        return self._banks

    def question(self, seat: _Seat, line: bytes, timeout_s: float) -> None:
        """Make ``line`` (the request whose id the seat's player handed out last) the
        seat's question for the next :meth:`ask`."""
        player = seat.player
        assert player is not None
        seat.request_id = player._next_id - 1
        proc = player._proc
        seat.question = None if proc is None else Question(proc, line, timeout_s, player.max_line_bytes)

    async def ask(self, seats: Sequence[_Seat], expected: type) -> None:
        """Ask every seat its question at once, each against its own timeout, and set
        each seat's ``outcome``: the reply and the seconds it took, or the fault."""
        questions: list[Question] = []
        ids: list[int] = []
        asked: list[_Seat] = []
        for seat in seats:
            q = seat.question
            if q is None:
                seat.outcome = BotFault("crash", "the bot is not running")
            else:
                questions.append(q)
                ids.append(seat.request_id)
                asked.append(seat)
        if not questions:
            return

        def accept(i: int, line: bytes) -> Any:
            return check_reply(line, ids[i], expected)

        answers = await self.group.exchange(questions, accept)
        for seat, answer in zip(asked, answers, strict=True):
            seat.question = None
            if type(answer) is Answer:
                value = answer.value
                seat.outcome = value if type(value) is BotFault else (value, answer.elapsed_s)
            else:
                seat.outcome = seat.player.fault_for(answer)  # type: ignore[union-attr,arg-type]

    async def play_turn(self) -> None:
        state = self.state
        seats = self.seats
        rnd, turn = state.round, state.turn
        deciding = state.deciding_seats()
        controller = state.controller
        record = TurnRecord(
            round=rnd,
            turn=turn,
            hands=[list(h) for h in state.hands],
            controller=controller if controller >= 0 else None,
            actions=[],
        )
        asking = [seats[i] for i in deciding if not seats[i].autopilot]
        if len(asking) > 1:  # the write order of this turn's acts: a seeded random permutation
            orders = self.orders[len(asking)]
            asking = [asking[j] for j in orders[int(self.order_rng.random() * len(orders))]]
        writer = self.acts
        turn_ms, turn_s = self.turn_ms, self.turn_s
        writer.begin_turn(self.banks_ms())  # every turn: it notes the hands for later acts' hands_seen
        if asking:
            cursor = len(state.log)
            line = writer.line
            for seat in asking:
                bank_s = seat.bank_s
                player = seat.player
                assert player is not None
                seat.request_id = request_id = player.next_id()
                data = line(
                    seat.index,
                    request_id,
                    # An infinite bank means no deadline (--no-timeout, an untimed player): 0.
                    turn_ms + round(bank_s * 1000) if bank_s != math.inf else 0,
                    seat.last_action,
                    seat.event_cursor,
                )
                seat.event_cursor = cursor
                proc = player._proc
                q = seat.act_question  # one per seat and game, asked again each turn
                if proc is None:
                    q = None
                elif q is None or q.bot is not proc:
                    q = seat.act_question = Question(proc, data, turn_s + bank_s, player.max_line_bytes)
                else:
                    q.data = data
                    q.timeout_s = turn_s + bank_s
                seat.question = q
            await self.ask(asking, Action)

        plays: list[tuple[int, ...] | None] = [None] * self.config.players
        actions = record.actions
        for seat_index in deciding:
            seat = seats[seat_index]
            dummy = seat_index == controller
            outcome = seat.outcome
            seat.outcome = None
            if type(outcome) is tuple:  # a reply (the usual case)
                reply, elapsed = outcome
                seat.elapsed.append(elapsed)
                over = elapsed - turn_s
                if over > 0:
                    seat.bank_s = max(0.0, seat.bank_s - over)
                dummy_card = reply.dummy_card
                ids = tuple(reply.cards) if dummy_card is None else (*reply.cards, dummy_card)
                if (dummy_card is not None) is dummy and ids in writer.legal(seat_index):
                    play = ids  # one of the plays the act listed
                    cards = reply.cards
                    ms = round(elapsed * 1_000_000) / 1000  # to the µs (round(x, 3) is 10x slower)
                    bank_s = seat.bank_s
                    actions.append(
                        ActionRecord(
                            seat=seat_index,
                            cards=cards,
                            dummy_card=dummy_card,
                            elapsed_ms=ms,
                            bank_ms=round(bank_s * 1000) if bank_s != math.inf else None,
                            debug=_cap_debug(reply.debug),
                        )
                    )
                    seat.last_action = LastAction(status="ok", cards=cards, dummy_card=dummy_card, message="", elapsed_ms=ms)
                else:
                    play = self.unlisted(seat, reply, ids, elapsed, dummy, actions)
            elif outcome is None:  # on autopilot: no request
                play = fallback_play(state, seat_index, self.seed)
                actions.append(_action(seat_index, play, dummy, "autopilot", None, seat, ""))
            else:
                play = self.failed(seat, outcome, dummy, actions)
            plays[seat_index] = play
        if self.config.variant is Variant.DUMMY:
            for seat_index in range(2):
                if seat_index not in deciding:
                    last = tuple(state.hands[seat_index])
                    actions.append(ActionRecord(seat=seat_index, cards=list(last), status="auto"))
            actions.sort(key=_by_seat)
        apply_turn(state, plays)  # every play was checked: a failure here is the referee's bug
        self.replay.turns.append(record)

    def failed(self, seat: _Seat, outcome: BotFault, dummy: bool, actions: list[ActionRecord]) -> tuple[int, ...]:
        """No usable reply: a fault, and the seeded fallback play."""
        state = self.state
        elapsed = None
        if outcome.kind == "timeout":
            elapsed = self.turn_s + seat.bank_s
            seat.bank_s = 0.0
        play = fallback_play(state, seat.index, self.seed)
        message = f"{outcome.message}; a seeded random legal play was applied instead"
        self.fault(seat, outcome.kind, outcome.message, round=state.round, turn=state.turn)
        actions.append(_action(seat.index, play, dummy, outcome.kind, elapsed, seat, message))
        if outcome.kind not in ENDING_KINDS:
            seat.last_action = _last(play, dummy, outcome.kind, message, elapsed)
        return play

    def unlisted(
        self, seat: _Seat, reply: Action, ids: tuple[int, ...], elapsed: float, dummy: bool, actions: list[ActionRecord]
    ) -> tuple[int, ...]:
        """A reply whose play the act did not list: say exactly what is wrong with it, and
        apply the seeded fallback play instead."""
        state = self.state
        try:
            if dummy and reply.dummy_card is None:
                raise BotFault("illegal", "you control the dummy this turn (R15): name its card in dummy_card")
            if not dummy and reply.dummy_card is not None:
                raise BotFault("illegal", "dummy_card is only for the player controlling the dummy this turn (R15)")
            play = check_play(state, seat.index, ids)
            status, message = "ok", ""
        except (PlayError, BotFault) as exc:
            kind = exc.kind if isinstance(exc, BotFault) else "illegal"
            text = exc.message if isinstance(exc, BotFault) else str(exc)
            play = fallback_play(state, seat.index, self.seed)
            received = f"(received cards={list(reply.cards)} dummy_card={reply.dummy_card})"
            self.fault(seat, kind, f"{text} {received}", round=state.round, turn=state.turn)
            status = kind
            message = f"{text}; a seeded random legal play was applied instead"
        actions.append(_action(seat.index, play, dummy, status, elapsed, seat, message, _cap_debug(reply.debug)))
        seat.last_action = _last(play, dummy, status, message, elapsed)
        return play

    async def finish(self) -> None:
        state = self.state
        res = result(state)
        players = self.config.players
        # Seats that ended on autopilot rank below every seat that did not (PROTOCOL.md).
        keys = [(not self.seats[i].autopilot, res.scores[i], res.puddings[i]) for i in range(players)]
        ranks = [1 + sum(1 for k in keys if k > key) for key in keys] + list(res.ranks[players:])
        self.replay.events = self.acts.event_json()
        self.replay.rounds = summarize_log(state)
        self.replay.result = ResultSummary(
            scores=list(res.scores),
            puddings=list(res.puddings),
            ranks=ranks,
            rules_ranks=list(res.ranks),
            pudding_points=list(res.pudding_points),
            autopilot=[s.autopilot for s in self.seats],
        )
        telling = [s for s in self.seats if s.player is not None and not s.autopilot]
        for seat in telling:
            player = seat.player
            assert player is not None
            msg = GameOver(
                id=player.next_id(),
                game_id=self.game_id,
                scores=list(res.scores),
                puddings=list(res.puddings),
                ranks=ranks,
                faults={k: v for k, v in seat.faults.items()},
                reason="complete",
                events=self.acts.event_json(seat.event_cursor),  # type: ignore[arg-type]  # encoded as is
                last_action=seat.last_action,
            )
            self.question(seat, encode_line(msg), player.timeout_s(self.ts, max(self.ts.turn_ms, 1000)))
        await self.ask(telling, Ack)
        for seat in telling:
            if isinstance(seat.outcome, BotFault):
                self.fault(seat, seat.outcome.kind, f"game_over: {seat.outcome.message}", round=0, turn=0, strike=False)
            seat.outcome = None


def _action(
    seat: int,
    play: tuple[int, ...],
    dummy: bool,
    status: str,
    elapsed: float | None,
    seat_state: _Seat,
    message: str,
    debug: Any = None,
) -> ActionRecord:
    cards = list(play[:-1]) if dummy else list(play)
    return ActionRecord(
        seat=seat,
        cards=cards,
        dummy_card=play[-1] if dummy else None,
        status=status,  # type: ignore[arg-type]
        elapsed_ms=None if elapsed is None or not math.isfinite(elapsed) else round(elapsed * 1000, 3),
        bank_ms=None if not math.isfinite(seat_state.bank_s) else round(seat_state.bank_s * 1000),
        message=message,
        debug=debug,
    )


def _last(play: tuple[int, ...], dummy: bool, status: str, message: str, elapsed: float | None) -> LastAction:
    return LastAction(
        status=status,  # type: ignore[arg-type]
        cards=list(play[:-1]) if dummy else list(play),
        dummy_card=play[-1] if dummy else None,
        message=message,
        elapsed_ms=0.0 if elapsed is None or not math.isfinite(elapsed) else round(elapsed * 1000, 3),
    )


#: Every order of n seats, for n = 0..5 (at most 5 players decide in a turn).
_PERMUTATIONS = [list(itertools.permutations(range(n))) for n in range(6)]


def _by_seat(action: ActionRecord) -> int:
    return action.seat


def _cap_debug(debug: Any) -> Any:
    if debug is None:
        return None
    raw = msgspec.json.encode(debug)
    if len(raw) <= MAX_DEBUG_BYTES:
        return debug
    return {"truncated": True, "bytes": len(raw)}
