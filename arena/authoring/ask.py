"""`arena replay FILE --ask BOT --seat S --turn R.T`: put a recorded position to a bot.

The position is rebuilt from the replay through the engine: the game is dealt
again from its seed and the recorded plays are applied up to the turn. The
``act`` that seat received then is rebuilt with the referee's own builder
(:func:`arena.game.acts.build_act`, and :func:`arena.game.referee.game_start_message` for the
``game_start``) from what the replay says the referee knew: the
seat's events since its previous request (and the history before them), its
hands at the earlier turns of the round, what was applied for it last time,
and every seat's time bank. BOT is started as a referee would start it
(``hello``, then ``game_start`` for that game and seat), gets that ``act``,
and its answer is checked against the rules and timed like in a game.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import trio

from arena.authoring.play import run_interruptible
from arena.bots import BotError
from arena.bots.manifest import find_bot
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import SandboxSettings
from arena.engine import (
    RULES_VERSION,
    GameConfig,
    GameState,
    PlayError,
    Variant,
    apply_turn,
    check_play,
    events,
    new_game,
)
from arena.errors import ArenaError
from arena.game.acts import build_act
from arena.game.players import BotFault, TimeSettings, open_pool
from arena.game.referee import game_start_message
from arena.game.replay import ActionRecord, Replay, ReplayError, read_replay
from protocol import Act, Action, LastAction, Ready

#: Statuses of a recorded action for which the referee sent no act.
NOT_ASKED = ("autopilot", "auto")


@dataclass(slots=True)
class Position:
    """A seat's decision point rebuilt from a replay: the state before the turn's
    plays and the act the referee sent that seat then (request id aside)."""

    replay: Replay
    state: GameState
    seat: int
    act: Act
    recorded: ActionRecord  # what the seat did at that turn in the recorded game
    time_settings: TimeSettings


@dataclass(slots=True)
class AskReport:
    """What BOT answered at a recorded position, and what the recorded bot had done."""

    file: str
    game_id: str
    seat: int
    round: int
    turn: int
    bot: str  # the name of the bot asked
    recorded_bot: str  # the name of the bot that sat there in the recorded game
    act: Act
    status: str  # "ok" (a legal answer), or the fault: illegal, malformed, protocol, timeout, crash
    message: str  # why, when status is not "ok"
    answer: Action | None  # the bot's reply, when it sent a well-formed one
    elapsed_ms: float | None  # from the act written to the reply read
    recorded: ActionRecord
    stderr: str = ""  # what the bot wrote to stderr meanwhile
    kinds: list[str] = field(default_factory=list)  # the kind of every card id

    @property
    def legal(self) -> bool:
        return self.status == "ok"

    @property
    def same_as_recorded(self) -> bool:
        """The bot chose exactly what the recorded bot chose (and that was its own choice)."""
        if self.answer is None or self.recorded.status != "ok":
            return False
        return list(self.answer.cards) == self.recorded.cards and self.answer.dummy_card == self.recorded.dummy_card

    def to_dict(self) -> dict[str, Any]:
        """A plain summary for --json."""
        rec = self.recorded
        return {
            "file": self.file,
            "game_id": self.game_id,
            "seat": self.seat,
            "round": self.round,
            "turn": self.turn,
            "bot": self.bot,
            "status": self.status,
            "legal": self.legal,
            "message": self.message,
            "answer": None
            if self.answer is None
            else {"cards": list(self.answer.cards), "dummy_card": self.answer.dummy_card, "debug": _dumpable(self.answer.debug)},
            "elapsed_ms": self.elapsed_ms,
            "recorded": {
                "bot": self.recorded_bot,
                "cards": rec.cards,
                "dummy_card": rec.dummy_card,
                "status": rec.status,
                "elapsed_ms": rec.elapsed_ms,
                "message": rec.message,
                "debug": _dumpable(rec.debug),
            },
            "same_as_recorded": self.same_as_recorded,
            "stderr": self.stderr,
            "act": msgspec.to_builtins(self.act),
        }


def _dumpable(debug: Any) -> Any:
    """A bot's debug value as it is, or a note when it is nested too deeply for the
    standard JSON encoder (a value the decoder took can still be that deep)."""
    try:
        json.dumps(debug)
    except RecursionError:
        return {"not_shown": "nested too deeply"}
    except (TypeError, ValueError):
        return {"not_shown": "not JSON"}
    return debug


def parse_turn(value: str) -> tuple[int, int]:
    """``"2.3"`` as ``(2, 3)``; anything else is an :class:`ArenaError`."""
    try:
        rnd, turn = (int(x) for x in value.split("."))
    except ValueError:
        raise ArenaError(f"--turn takes ROUND.TURN, e.g. 2.3; not {value!r}") from None
    return rnd, turn


def rebuild_position(replay: Replay, seat: int, rnd: int, turn: int, *, name: str = "") -> Position:
    """The act ``seat`` received at turn ``rnd.turn`` of ``replay``, rebuilt through the
    engine. Raises :class:`ArenaError` naming the file, seat or turn at fault."""
    label = name or f"game {replay.game_id}"
    if replay.rules_version != RULES_VERSION:
        raise ArenaError(f"{label}: recorded under rules {replay.rules_version}; this arena's engine is {RULES_VERSION}")
    try:
        config = GameConfig(replay.config["players"], Variant(replay.config["variant"]))
        ts = TimeSettings(**replay.time) if replay.time else TimeSettings()
    except (KeyError, TypeError, ValueError) as exc:
        raise ArenaError(f"{label}: bad game settings in the replay ({exc})") from None
    seats = config.seats
    if not 0 <= seat < seats:
        raise ArenaError(f"--seat {seat}: this game has seats 0 to {seats - 1}")
    if seat >= config.players:
        raise ArenaError(f"--seat {seat} is the dummy's seat: it never decides (R15); ask seat 0 or 1")
    target = next((t for t in replay.turns if (t.round, t.turn) == (rnd, turn)), None)
    if target is None:
        raise ArenaError(f"{label}: no turn {rnd}.{turn} in this game; {_turns_held(replay, rnd)}")
    recorded = next((a for a in target.actions if a.seat == seat), None)
    if recorded is None or recorded.status in NOT_ASKED:
        why = "its last card was played for it (R15)" if recorded is not None and recorded.status == "auto" else (
            "it was on autopilot (after a crash or too many faults)" if recorded is not None else "it did not decide then"
        )
        raise ArenaError(f"{label}: seat {seat} was sent no act at turn {rnd}.{turn}: {why}")

    state = new_game(config, replay.seed, ids=replay.ids)
    if [state.kind(c) for c in range(len(replay.cards))] != replay.cards:
        raise ArenaError(f"{label}: the card kinds do not match the deck of seed {replay.seed}")
    # What the referee knew of each seat: where its events start, what was applied for it
    # last time, and its bank (an infinite bank, of an untimed seat or a run without
    # deadlines, is recorded as null).
    cursor = [0] * seats
    last: list[LastAction | None] = [None] * seats
    infinite = [
        ts.no_timeout or any(a.bank_ms is None for t in replay.turns for a in t.actions if a.seat == s and a.status not in NOT_ASKED)
        for s in range(seats)
    ]
    banks = [math.inf if infinite[s] else ts.seconds(ts.bank_ms) for s in range(config.players)] + [0.0] * (seats - config.players)
    hands_seen: list[list[int]] = []  # the seat's hands at the earlier turns of the target's round
    for record in replay.turns:
        where = f"{label}, turn {record.round}.{record.turn}"
        if (state.round, state.turn) != (record.round, record.turn) or [list(h) for h in state.hands] != record.hands:
            raise ArenaError(f"{where}: the replay does not match the engine (run `arena verify` on it)")
        if record is target:
            break
        if record.round == rnd:
            hands_seen.append(list(state.hands[seat]))
        for action in record.actions:
            if action.status in NOT_ASKED:
                continue
            cursor[action.seat] = len(state.log)
            if action.status != "crash":
                last[action.seat] = _last_action(action)
            if action.bank_ms is not None:
                banks[action.seat] = action.bank_ms / 1000
        try:
            apply_turn(state, replay.applied_plays(record))
        except PlayError as exc:
            raise ArenaError(f"{where}: a recorded play is rejected by the engine: {exc}") from None
    bank_s = banks[seat]
    act = build_act(
        state,
        seat,
        request_id=3,  # after hello (1) and game_start (2), as for a freshly started bot
        game_id=replay.game_id,
        time_ms=ts.scaled_ms(ts.turn_ms) + round(bank_s * 1000) if math.isfinite(bank_s) else 0,
        banks_ms=[round(b * 1000) if math.isfinite(b) else 0 for b in banks],
        last_action=last[seat],
        events=events(state, cursor[seat]),
        history=events(state)[: cursor[seat]],
        hands_seen=hands_seen,
    )
    return Position(replay=replay, state=state, seat=seat, act=act, recorded=recorded, time_settings=ts)


def _turns_held(replay: Replay, rnd: int) -> str:
    turns = [t.turn for t in replay.turns if t.round == rnd]
    if not turns:
        rounds = sorted({t.round for t in replay.turns})
        return f"it has rounds {rounds[0]} to {rounds[-1]}" if rounds else "it has no turns (a void game)"
    return (
        f"round {rnd} has decisions at turns {min(turns)} to {max(turns)} "
        "(the last card of a round is played for everyone, R6a)"
    )


def _last_action(action: ActionRecord) -> LastAction:
    """What the referee told the seat at its next request about this action."""
    return LastAction(
        status=action.status,  # type: ignore[arg-type]  # a fault kind or "ok": never autopilot/auto/crash here
        cards=list(action.cards),
        dummy_card=action.dummy_card,
        message=action.message,
        elapsed_ms=action.elapsed_ms if action.elapsed_ms is not None else 0.0,
    )


def ask_bot(
    file: Path,
    bot_path: Path,
    seat: int,
    rnd: int,
    turn: int,
    *,
    build_cache: Path,
    no_timeout: bool = False,
    sandbox: SandboxSettings | None = None,
) -> AskReport:
    """Start the bot at ``bot_path``, greet it, start the recorded game for ``seat``, send
    it the act of turn ``rnd.turn`` and check its answer. A bot that cannot start or get
    ready is an :class:`ArenaError`; a bad answer is reported, not raised. ``sandbox``
    confines the bot (and its build step) as in a game; None: not at all. SIGINT or
    SIGTERM stops the bot and raises KeyboardInterrupt."""
    try:
        replay = read_replay(file)
    except ReplayError as exc:
        raise ArenaError(str(exc)) from None
    position = rebuild_position(replay, seat, rnd, turn, name=str(file))
    try:
        manifest = find_bot(bot_path)
        spec = prepare_bot(manifest, build_cache, sandbox)
    except BotError as exc:
        raise ArenaError(str(exc)) from None
    ts = position.time_settings
    config = position.state.config
    act = position.act

    async def run() -> AskReport:
        async with open_pool() as pool:
            player = pool.player(spec, version=manifest.version, content_hash=manifest.content_hash)
            try:
                await player.start(ts)
            except BotFault as fault:
                raise ArenaError(f"bot {manifest.name} ({bot_path}): {fault.message}") from None
            names = [s.bot for s in replay.seats]
            start = game_start_message(config, seat, names, replay.game_id, ts, replay.seed, player.next_id(), replay.ids)
            try:
                await player.request(start, Ready, ts.seconds(ts.hello_ms))
            except BotFault as fault:
                raise ArenaError(
                    f"bot {manifest.name} ({bot_path}): game_start: {fault.kind}: {fault.message}"
                ) from None
            sent_act = msgspec.structs.replace(act, id=player.next_id())
            position.act = sent_act
            budget = math.inf if no_timeout or sent_act.time_ms == 0 else sent_act.time_ms / 1000
            answer: Action | None = None
            elapsed: float | None = None
            try:
                sent = await player.send(sent_act, budget)
                answer = await player.receive(sent_act.id, Action, sent + budget)
                elapsed = trio.current_time() - sent
                status, message = _check(position, answer)
            except BotFault as fault:
                status, message = fault.kind, fault.message
            stderr = player.stderr_tail()
        return AskReport(
            file=str(file),
            game_id=replay.game_id,
            seat=seat,
            round=rnd,
            turn=turn,
            bot=manifest.name,
            recorded_bot=replay.seats[seat].bot,
            act=position.act,
            status=status,
            message=message,
            answer=answer,
            elapsed_ms=None if elapsed is None else round(elapsed * 1000, 3),
            recorded=position.recorded,
            stderr=stderr,
            kinds=list(replay.cards),
        )

    return run_interruptible(run)


def _check(position: Position, answer: Action) -> tuple[str, str]:
    """("ok", "") for a legal answer, else ("illegal", why) as the referee would say it."""
    try:
        ids = answer.ids(dummy=position.act.dummy)
        check_play(position.state, position.seat, ids)
    except (ValueError, PlayError) as exc:
        return "illegal", str(exc)
    return "ok", ""
