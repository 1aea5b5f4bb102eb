"""Replays checked: a replay re-simulated from its seed and applied plays with the engine,
every outcome it records re-derived (the faults and fallbacks the referee's rules imply,
the events, the result), and its game id re-computed. What cannot be checked is listed
in protocol/REPLAY.md."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import msgspec

from arena.engine import (
    DECK_SIZE,
    RULES_VERSION,
    GameConfig,
    GameState,
    PlayError,
    Variant,
    apply_turn,
    events,
    new_game,
    result,
)
from arena.game.ids import default_game_id, game_id, seat_identity
from arena.game.players import TimeSettings
from arena.game.record import GameRecord, record_from_replay
from arena.game.referee import MAX_DEBUG_BYTES, fallback_play
from arena.game.replay import (
    ENDING_KINDS,
    MAX_STRIKES,
    FaultRecord,
    Replay,
    ReplayError,
    TurnRecord,
    read_replay,
    summarize_log,
    summarize_rounds,
)


class _Faults:
    """The referee's fault bookkeeping (``_Referee.fault``), replayed: which faults the
    recorded plays imply, in which order, and which seats that puts on autopilot. Each
    recorded fault is matched against the next one expected; anything else is an error."""

    def __init__(self, replay: Replay, label: str, players: int, max_strikes: int) -> None:
        self.faults = replay.faults
        self.label = label
        self.players = players
        self.max_strikes = max_strikes
        self.next = 0  # the first recorded fault not yet accounted for
        self.strikes = [0] * players
        self.autopilot = [False] * players

    def peek(self) -> FaultRecord | None:
        return self.faults[self.next] if self.next < len(self.faults) else None

    def take(self, where: str, seat: int, rnd: int, turn: int, kind: str | None) -> FaultRecord:
        """The next recorded fault, which must be ``seat``'s at ``rnd.turn`` (of ``kind``,
        or any fault kind for None); then its consequences: strikes and autopilot."""
        f = self.peek()
        want = f"seat {seat}'s {kind or ''} fault at {rnd}.{turn}".replace("  ", " ")
        if f is None:
            raise ReplayError(f"{where}: the faults lack {want}, which the recorded action implies")
        if (f.seat, f.round, f.turn) != (seat, rnd, turn) or (f.kind != kind if kind else f.kind == "autopilot"):
            raise ReplayError(f"{where}: fault {self.next} is seat {f.seat}'s {f.kind} at {f.round}.{f.turn}; the plays imply {want}")
        self.next += 1
        if f.kind in ENDING_KINDS:
            self.autopilot[seat] = True
            return f
        self.strikes[seat] += 1
        if self.strikes[seat] >= self.max_strikes and not self.autopilot[seat]:
            self.autopilot[seat] = True
            mark = self.peek()
            if mark is None or (mark.seat, mark.round, mark.turn, mark.kind) != (seat, rnd, turn, "autopilot"):
                raise ReplayError(f"{where}: seat {seat} reached {self.max_strikes} strikes, but no autopilot fault follows")
            self.next += 1
        return f

    def start(self, first: TurnRecord | None) -> None:
        """The faults of ``hello``/``game_start``: a seat that could not get ready is on
        autopilot from the first turn, and only such a seat had one (one each, in any order)."""
        if first is None:  # void before the first turn: at most one fault a seat, at game_start
            seen: set[int] = set()
            while (f := self.peek()) is not None and f.round == 0 and f.seat not in seen and f.kind != "autopilot":
                seen.add(f.seat)
                self.take(self.label, f.seat, 0, 0, None)
            return
        waiting = {a.seat for a in first.actions if a.status == "autopilot"}
        while (f := self.peek()) is not None and f.round == 0 and f.seat in waiting:
            waiting.discard(f.seat)
            self.take(f"{self.label}, game_start", f.seat, 0, 0, None)
            self.autopilot[f.seat] = True  # not getting ready is autopilot, whatever the fault
        if waiting:
            seat = min(waiting)
            raise ReplayError(f"{self.label}: seat {seat} is on autopilot from the first turn, but no game_start fault says why")

    def finish(self, complete: bool, position: tuple[int, int]) -> None:
        """The faults after the last turn: of a complete game, at most one a seat not on
        autopilot (answering ``game_over``, in seat order, no strike); of a void game, those
        of the turn under way when it failed."""
        last = -1
        while (f := self.peek()) is not None:
            where = f"{self.label}, fault {self.next} (seat {f.seat}'s {f.kind} at {f.round}.{f.turn})"
            if f.seat >= self.players or self.autopilot[f.seat] and f.kind != "autopilot":
                raise ReplayError(f"{where}: that seat was not asked anything then")
            if complete:
                if (f.round, f.turn) != (0, 0):
                    raise ReplayError(f"{where}: no play implies it (no action of seat {f.seat} then has that status)")
                if f.kind == "autopilot" or f.seat <= last:
                    raise ReplayError(f"{where}: no play implies it (after the last turn, one game_over fault a seat at most)")
                last = f.seat
                self.next += 1
            else:
                if (f.round, f.turn) != position or f.kind == "autopilot" or f.seat <= last:
                    raise ReplayError(f"{where}: no play implies it (the game was void at {position[0]}.{position[1]})")
                last = f.seat
                self.take(where, f.seat, *position, f.kind)


def verify_replay(replay: Replay, *, name: str = "", max_strikes: int = MAX_STRIKES) -> None:
    """Re-simulate the game from its seed and applied plays, and re-derive from them every
    outcome the replay records; raise :class:`ReplayError` naming the game, and the turn
    or the field, at the first difference. Checked: the configuration and seats' shape,
    the deck, every turn's hands, controller and seats that act, every applied play's
    legality, every fallback play a fault or autopilot implies (the referee's seeded
    choice), the faults themselves (one per faulty action, the autopilot marks strikes
    imply, game_start and game_over faults only where they can be), the events, the round
    summaries, and the whole result: scores, puddings, pudding points, rules ranks,
    autopilot and the arena's ranks. A void game's plays must re-simulate as far as they
    go and stop before the game's end. What cannot be checked is listed in REPLAY.md."""
    label = name or f"game {replay.game_id}"
    if replay.rules_version != RULES_VERSION:
        raise ReplayError(
            f"{label}: recorded under rules {replay.rules_version}, this engine is {RULES_VERSION}"
        )
    config = _config_of(replay, label)
    seats, players = config.seats, config.players
    _check_seats(replay, label, config)
    state = new_game(config, replay.seed, ids=replay.ids)
    kinds = [state.kind(c) for c in range(len(replay.cards))]
    if len(kinds) != DECK_SIZE or kinds != replay.cards:
        raise ReplayError(f"{label}: the card kinds do not match the deck of seed {replay.seed}")
    cursor = 0  # position in the engine's log, and in replay.events (same numbering)
    try:
        recorded = replay.event_dicts()
    except msgspec.DecodeError as exc:
        raise ReplayError(f"{label}: malformed events: {exc}") from None
    except RecursionError:
        raise ReplayError(f"{label}: malformed events: nested too deeply") from None
    void = replay.status == "void"
    faults = _Faults(replay, label, players, max_strikes)
    faults.start(replay.turns[0] if replay.turns else None)
    for t in replay.turns:
        where = f"{label}, round {t.round} turn {t.turn}"
        if state.over:
            raise ReplayError(f"{where}: the game was already over")
        if (state.round, state.turn) != (t.round, t.turn):
            raise ReplayError(f"{where}: the engine is at round {state.round} turn {state.turn}")
        if [list(h) for h in state.hands] != t.hands:
            raise ReplayError(f"{where}: the recorded hands differ from the engine's")
        controller = state.controller if state.controller >= 0 else None
        if t.controller != controller:
            raise ReplayError(f"{where}: the recorded controller {t.controller} is not the engine's {controller}")
        _check_actions(state, t, where, faults, replay.seed, fallback_play)
        try:
            apply_turn(state, replay.applied_plays(t))
        except PlayError as exc:
            raise ReplayError(f"{where}: recorded play rejected by the engine: {exc}") from None
        if void:
            continue  # a void game records no events (they are written when it ends)
        fresh = events(state, cursor)
        if fresh != recorded[cursor : cursor + len(fresh)]:
            raise ReplayError(f"{where}: the recorded events of this turn differ from the engine's")
        cursor += len(fresh)
    if void:
        _check_void(replay, label, state)
        faults.finish(False, (state.round, state.turn))
        return
    if replay.void_reason:
        raise ReplayError(f"{label}: a complete game has a void_reason")
    if not state.over:
        raise ReplayError(f"{label}: the replay ends at round {state.round} turn {state.turn}, before the game does")
    faults.finish(True, (0, 0))
    if events(state) != recorded:
        for i, (a, b) in enumerate(zip(events(state), recorded, strict=False)):
            if a != b:
                raise ReplayError(f"{label}: event {i} ({a.get('type')}) differs: engine {a} vs replay {b}")
        raise ReplayError(f"{label}: the number of events differs")
    _check_result(replay, label, state, faults.autopilot + [False] * (seats - players))
    if summarize_rounds(recorded, seats) != replay.rounds or summarize_log(state) != replay.rounds:
        raise ReplayError(f"{label}: the round summary does not match the events")


def _config_of(replay: Replay, label: str) -> GameConfig:
    """The game's configuration, which ``config``, ``players`` and ``variant`` all state."""
    cfg = replay.config
    if set(cfg) != {"players", "variant"} or type(cfg["players"]) is not int or not isinstance(cfg["variant"], str):
        raise ReplayError(f"{label}: config must be {{\"players\": N, \"variant\": NAME}}, not {_short(cfg)}")
    try:
        config = GameConfig(cfg["players"], Variant(cfg["variant"]))
    except ValueError as exc:
        raise ReplayError(f"{label}: bad config {_short(cfg)}: {exc}") from None
    if (replay.players, replay.variant) != (config.seats, config.variant.value):
        raise ReplayError(
            f"{label}: players {replay.players} and variant {replay.variant!r} do not match the config "
            f"({config.seats} seats, {config.variant.value})"
        )
    return config


def _check_seats(replay: Replay, label: str, config: GameConfig) -> None:
    """One seat record per seat in order (the dummy last, as ``dummy``), and per-seat lists
    of the right length (which a run stores from a replay it recovers)."""
    if [s.seat for s in replay.seats] != list(range(config.seats)):
        raise ReplayError(f"{label}: seats must be numbered 0 to {config.seats - 1} in order")
    if config.variant is Variant.DUMMY and (replay.seats[-1].bot, replay.seats[-1].hash) != ("dummy", ""):
        raise ReplayError(f"{label}: the last seat of a dummy game is the dummy")
    if replay.stderr and len(replay.stderr) != config.seats:
        raise ReplayError(f"{label}: stderr has {len(replay.stderr)} entries for {config.seats} seats")
    timing = replay.timing
    for key, kind in (("started", str), ("duration_s", float), ("mean_ms", list), ("max_ms", list)):
        value = timing.get(key)
        if value is not None and (not isinstance(value, kind) or kind is list and len(value) != config.seats):
            raise ReplayError(f"{label}: timing.{key} is not {'one time per seat' if kind is list else kind.__name__}")
    used = [u.seat for u in replay.usage]
    if used and used != list(range(config.players)):
        raise ReplayError(f"{label}: usage must list the bot seats 0 to {config.players - 1} in order")


def _check_actions(state: GameState, t: TurnRecord, where: str, faults: _Faults, seed: int, fallback: Any) -> None:
    """Every seat that acts this turn has one action, the one the rules and the faults
    imply: ``auto`` for a dummy-game seat that does not decide (its last card), the
    seeded fallback for a fault or autopilot, and a fault recorded for every fault."""
    deciding = state.deciding_seats()
    expected = list(range(2)) if state.controller >= 0 else deciding
    if [a.seat for a in t.actions] != expected:
        raise ReplayError(f"{where}: actions for seats {[a.seat for a in t.actions]}; the seats that play are {expected}")
    for a in t.actions:
        seat = a.seat
        at = f"{where}, seat {seat}"
        if seat not in deciding:
            if a.status != "auto" or a.cards != state.hands[seat] or a.dummy_card is not None:
                raise ReplayError(f"{at}: this seat does not decide: its last card is played for it (status auto)")
            continue
        if a.status == "auto":
            raise ReplayError(f"{at}: status auto, but this seat decides this turn")
        if (a.dummy_card is not None) != (seat == state.controller):
            raise ReplayError(f"{at}: dummy_card is for the seat controlling the dummy, and it must name one")
        on_autopilot = faults.autopilot[seat]
        if (a.status == "autopilot") != on_autopilot:
            why = "it is on autopilot" if on_autopilot else "no fault put it on autopilot"
            raise ReplayError(f"{at}: status {a.status}, but {why}")
        if a.debug is not None and len(msgspec.json.encode(a.debug)) > MAX_DEBUG_BYTES:
            raise ReplayError(f"{at}: a debug value larger than the referee keeps ({MAX_DEBUG_BYTES} bytes)")
        if a.status == "ok":
            continue
        play = (*a.cards, a.dummy_card) if a.dummy_card is not None else tuple(a.cards)
        implied = tuple(fallback(state, seat, seed))
        if play != implied:
            raise ReplayError(
                f"{at}: status {a.status}, but the play applied {list(play)} is not the seeded fallback "
                f"{list(implied)} that status implies"
            )
        if a.status != "autopilot":
            faults.take(at, seat, t.round, t.turn, a.status)


def _check_void(replay: Replay, label: str, state: GameState) -> None:
    """A void game stopped before its end: its plays do not finish the game, and it has no
    result, events or round summaries (the referee writes those when a game ends)."""
    if state.over:
        raise ReplayError(f"{label}: status void, but the recorded plays finish the game: it is complete")
    if not replay.void_reason:
        raise ReplayError(f"{label}: status void without a void_reason")
    if replay.result is not None or replay.events or replay.rounds:
        raise ReplayError(f"{label}: status void, but it records a result, events or rounds, which only a game's end writes")


def _check_result(replay: Replay, label: str, state: GameState, autopilot: list[bool]) -> None:
    """Every field of ``result`` as the engine and the faults give it."""
    got = replay.result
    if got is None:
        raise ReplayError(f"{label}: a complete game without a result")
    res = result(state)
    players = state.config.players
    # The arena's ranks: seats that ended on autopilot rank below every seat that did
    # not (the referee's rule); the dummy keeps its rank, last.
    keys = [(not autopilot[i], res.scores[i], res.puddings[i]) for i in range(players)]
    ranks = [1 + sum(1 for k in keys if k > key) for key in keys] + list(res.ranks[players:])
    for field_name, want in (
        ("scores", list(res.scores)),
        ("puddings", list(res.puddings)),
        ("pudding_points", list(res.pudding_points)),
        ("rules_ranks", list(res.ranks)),
        ("autopilot", autopilot),
        ("ranks", ranks),
    ):
        have = getattr(got, field_name)
        if have != want:
            raise ReplayError(f"{label}: result.{field_name} is {have}; the plays give {want}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


def check_recorded_game(
    replay: Replay,
    *,
    label: str,
    seed: int,
    players: int,
    variant: str,
    bots: list[tuple[str, str, str]],
    time: dict[str, Any] | None = None,
) -> None:
    """That ``replay`` is the game another record says it is: its seed, format, time
    settings (if given) and, seat by seat, each bot's ``(name, version, hash)``. For a
    run recovering a game from its file (against the game it expected) and for
    ``arena verify`` (against the store). Raises :class:`ReplayError` naming the field."""
    cfg = replay.config
    if (replay.seed, cfg.get("players"), cfg.get("variant")) != (seed, players, variant):
        raise ReplayError(
            f"{label}: it is the game of seed {replay.seed}, {cfg.get('players')} players, {cfg.get('variant')}; "
            f"expected seed {seed}, {players} players, {variant}"
        )
    if time is not None and replay.time != time:
        raise ReplayError(f"{label}: its time settings {_short(replay.time)} are not the run's {_short(time)}")
    recorded = [(s.bot, s.version, s.hash) for s in replay.seats[:players]]
    for seat, (have, want) in enumerate(zip(recorded, bots, strict=False)):
        for what, a, b in zip(("bot", "version", "hash"), have, want, strict=True):
            if a != b:
                raise ReplayError(f"{label}: seat {seat}: {what} is {a!r}, expected {b!r}")
    if len(recorded) != len(bots):
        raise ReplayError(f"{label}: {len(recorded)} bot seats, expected {len(bots)}")


def recover_record(
    path: Path,
    game_id: str,
    *,
    seed: int,
    config: GameConfig,
    bots: list[tuple[str, str, str]],
    time: dict[str, Any],
) -> GameRecord | None:
    """The record of a game whose replay file ``path`` a killed run wrote but did not commit:
    trusted only once it is the very game expected (its id, and :func:`check_recorded_game`
    of the seed, format, time settings and every seat's ``(name, version, hash)``) and
    re-simulating it re-derives every outcome it records (:func:`verify_replay`). None when
    there is no file; a file that fails is logged (a warning naming it and why) and None is
    returned: the caller plays the game again, overwriting it."""
    if not os.path.lexists(path):
        return None
    try:
        replay = read_replay(path)
        if replay.game_id != game_id:
            raise ReplayError(f"{path}: it holds game {replay.game_id}")
        verify_replay(replay, name=str(path))
        check_recorded_game(
            replay, label=str(path), seed=seed, players=config.players, variant=config.variant.value, bots=bots, time=time,
        )
        return record_from_replay(replay)
    except (ReplayError, ValueError, KeyError) as exc:
        logging.getLogger(__name__).warning("%s: not recovered, the game is played again (%s)", path, exc)
        return None


def check_game_id(replay: Replay, label: str) -> None:
    """That ``game_id`` is the hash of what decides the game, as the arena makes it: a
    tournament's (rules, variant, players, seed, time settings, each seat's content hash)
    or ``arena play``'s (the same with each seat's name). A replay whose seed, time
    settings or a seat's bot or hash was changed no longer has its own id."""

    config = _config_of(replay, label)
    try:
        ts = TimeSettings(**replay.time) if replay.time else TimeSettings()
    except (TypeError, ValueError) as exc:
        raise ReplayError(f"{label}: time settings that no run has: {exc}") from None
    bots = replay.seats[: config.players]
    derived = {
        game_id(config, replay.seed, [seat_identity(s.bot, s.hash) for s in bots], ts),
        game_id(config, replay.seed, [s.hash for s in bots], ts),  # before names were in tournament ids
        default_game_id(config, replay.seed, [seat_identity(s.bot, s.hash) for s in bots], ts),
    }
    if replay.game_id not in derived:
        raise ReplayError(
            f"{label}: game_id {replay.game_id} is not the id of this seed, these time settings and these seats' bots "
            "and hashes: one of them was changed"
        )
