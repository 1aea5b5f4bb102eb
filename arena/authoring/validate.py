"""`arena validate`: a bot checked against every situation it must handle before it meets
a tournament (:mod:`arena.authoring.submit` copies it into a bots folder only if it passes).

The validator starts the bot exactly as a tournament does (its build step included),
then referees scripted games in which the bot holds one seat and the validator plays
every other seat itself. The validator chooses those plays, and where a situation needs
it the seed, so that the bot meets each situation at a known turn whatever it chooses:
chopsticks in its tableau with a wasabi and a nigiri in hand, another seat's chopsticks
coming back in a reveal, the last card of a round, every player count, both passing
variants, both sides of the dummy variant, and one answer set aside on purpose so that
``last_action`` reports a fault. Every request and answer is recorded as an
:class:`Exchange`; each :class:`Check` is judged from the exchanges that show its
situation (:mod:`arena.authoring.verdict`), and a failure says what was sent, what came
back, what was expected and which section of protocol/PROTOCOL.md covers it.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from arena.authoring.checks import (
    DUMMY,
    FAULT_HINT,
    FAULT_SECTION,
    FAULTS,
    LEGAL,
    MESSAGES,
    PACKAGING,
    Check,
    Exchange,
    Section,
    ValidationReport,
)
from arena.authoring.situations import (
    AFTER_FAULT,
    GameScript,
    event_situations,
    house_play,
    scripts,
    situations_of,
)
from arena.authoring.verdict import Seen, judge
from arena.bots import BotError
from arena.bots.manifest import BotManifest, find_bot
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import SandboxSettings
from arena.engine import (
    GameState,
    PlayError,
    Variant,
    apply_turn,
    check_play,
    events,
    legal_plays,
    new_game,
    result,
)
from arena.game.acts import build_act
from arena.game.players import BotFault, TimeSettings, open_pool
from arena.game.referee import game_start_message
from protocol import (
    SUPPORTED_VERSIONS,
    Ack,
    Act,
    Action,
    GameOver,
    GameStart,
    LastAction,
    Ready,
)

FAULT_KINDS = ("timeout", "malformed", "protocol", "illegal", "crash")
#: What the report keeps of the bot's stderr: the last STDERR_KEEP characters of it.
STDERR_KEEP = 16 * 1024
#: What a start-up crash quotes of the bot's stderr: its first lines, each cut.
TRACE_LINES = 12
TRACE_LINE_LIMIT = 200
MAX_STRIKES = 3  # as in a tournament: then the seat plays on autopilot for the rest of the game
HOUSE = "house"  # the name of the seats the validator plays itself


# -- describing requests and answers ------------------------------------------------------------


def trace_excerpt(stderr: str, lines: int = TRACE_LINES, width: int = TRACE_LINE_LIMIT) -> str:
    """The first ``lines`` lines of a bot's stderr (where a trace says what went wrong:
    the exception of a Java trace, the first frames of a Python one), each cut to
    ``width`` characters, then how many lines were left out and the last line."""
    all_lines = [line for line in stderr.rstrip().splitlines() if line.strip()]

    def cut(line: str) -> str:
        return line if len(line) <= width else line[: width - 1] + "…"

    if len(all_lines) <= lines + 1:
        return "\n".join(cut(line) for line in all_lines)
    head = [cut(line) for line in all_lines[:lines]]
    left = len(all_lines) - lines - 1
    return "\n".join([*head, f"[… {left} more line(s) …]", cut(all_lines[-1])])



def _cards(cards: Sequence[Any]) -> str:
    return "[" + ", ".join(f"{c.id} {c.card}" for c in cards) + "]"


def _play_json(play: Any) -> str:
    out: dict[str, Any] = {"cards": list(play.cards)}
    if play.dummy_card is not None:
        out["dummy_card"] = play.dummy_card
    return json.dumps(out)


def _describe_act(act: Act, set_aside: bool) -> str:
    singles = sum(1 for p in act.legal if len(p.cards) == 1)
    pairs = len(act.legal) - singles
    legal = f"{len(act.legal)} legal plays"
    if pairs:
        legal += f": {singles} with one card of yours, {pairs} with two (chopsticks)"
    text = f"act id={act.id} (seat {act.seat}, hand {_cards(act.hand)}, {legal}"
    if act.dummy:
        text += ", dummy: true so every legal play names a dummy_card"
    if act.last_action is not None and act.last_action.status != "ok":
        text += f", last_action.status {act.last_action.status!r}"
        if set_aside:
            text += " (the validator set your previous answer aside on purpose)"
    return text + ")"


def _describe_action(reply: Action) -> str:
    out: dict[str, Any] = {"type": "action", "re": reply.re, "cards": list(reply.cards)}
    if reply.dummy_card is not None:
        out["dummy_card"] = reply.dummy_card
    return json.dumps(out)


def _expected_action(act: Act) -> str:
    return f'an action with "re": {act.id} and the fields of one entry of legal, e.g. {{"type": "action", "re": {act.id}, {_play_json(act.legal[0])[1:]}'


# -- the validator --------------------------------------------------------------------------


@dataclass(slots=True)
class _Seat:
    """The bot's seat in one game (the referee's bookkeeping, for one seat)."""

    bank_s: float
    strikes: int = 0
    autopilot: bool = False
    cursor: int = 0
    hands: list[list[int]] = field(default_factory=list)  # its hands at the earlier turns of hands_round
    hands_round: int = 0
    last_action: LastAction | None = None
    after_fault: bool = False  # the set-aside of the fault check has happened in this game
    set_aside: bool = False  # last_action reports an answer the validator set aside on purpose
    faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAULT_KINDS, 0))


class _Validator:
    def __init__(self, manifest: BotManifest, time_settings: TimeSettings) -> None:
        self.manifest = manifest
        self.ts = time_settings
        self.turn_s = time_settings.seconds(time_settings.turn_ms)
        self.seen = Seen(time_settings)  # what the verdict is judged from
        self.startup_ms: float | None = None
        self.player: Any = None
        self.stderr: list[str] = []  # what the bot wrote to stderr, in pieces as taken

    def take_stderr(self, where: str) -> str:
        """What the bot wrote to stderr since the last take (its process's capped tail),
        kept for the report under a header naming ``where``; returned as it is."""
        text = self.player.stderr_tail(reset=True) if self.player is not None else ""
        if text.strip():
            self.stderr.append(f"[{where}]\n{text.rstrip()}\n")
        return text

    def stderr_kept(self) -> str:
        text = "".join(self.stderr)
        if len(text) <= STDERR_KEEP:
            return text
        tail = text[-STDERR_KEEP:]
        start = tail.find("\n") + 1  # from a whole line on, when there is one
        return f"[… {len(text) - len(tail) + start} earlier characters dropped …]\n" + tail[start:]

    # -- start-up ---------------------------------------------------------------------
    async def run(self, spec: Any, games: list[GameScript]) -> None:
        async with open_pool() as pool:
            self.player = pool.player(spec, version=self.manifest.version, content_hash=self.manifest.content_hash)
            if not await self.handshake():
                for g in games:
                    self.seen.unplayed[g.label] = "not played: the bot did not complete the handshake (see hello)"
                return
            for g in games:
                await self.play(g)
                self.take_stderr(g.label)

    async def handshake(self) -> bool:
        ts = self.ts
        hello_ms = ts.scaled_ms(ts.hello_ms)
        sent = f"hello id=1 (versions {list(SUPPORTED_VERSIONS)}, hello_ms {hello_ms if not ts.no_timeout else 'off'})"
        expected = f'{{"type": "hello", "re": 1, "version": {SUPPORTED_VERSIONS[-1]}, "name": "{self.manifest.name}"}} within hello_ms'
        t0 = trio.current_time()
        try:
            reply = await self.player.start(ts)
        except BotFault as fault:
            section = MESSAGES if fault.kind == "protocol" else FAULT_SECTION.get(fault.kind, MESSAGES)
            hint = FAULT_HINT.get(fault.kind, "")
            if fault.kind == "crash" and fault.message.startswith("cannot start"):  # the process never ran
                section = PACKAGING
                hint = "the run command could not be started: check `run` (an argv, relative to the bot's folder)"
            trace = trace_excerpt(self.take_stderr("hello")) if fault.kind in ("crash", "timeout", "malformed") else ""
            quoted = f"; its stderr began:\n{trace}" if trace else ""
            self.seen.hello_check = Check(
                "hello",
                False,
                f"sent {sent}; got {fault.message}; expected {expected} (fault: {fault.kind}; {hint}){quoted}",
                str(section),
                summary=fault.message,
                details=(
                    ("sent", sent), ("got", fault.message), ("expected", expected), ("fault", f"{fault.kind}: {hint}"),
                    *((("stderr began", trace),) if trace else ()),
                ),
            )
            return False
        self.startup_ms = (trio.current_time() - t0) * 1000
        note = ""
        if reply.name != self.manifest.name:
            note = f" (its identity is the name {self.manifest.name!r} from how it is packaged; the name in the reply is only logged)"
        self.seen.hello_check = Check(
            "hello",
            True,
            f"started and answered hello in {self.startup_ms:.0f} ms: protocol version {reply.version}, name {reply.name!r}{note}",
            str(MESSAGES),
            summary=f"answered in {self.startup_ms:.0f} ms: protocol {reply.version}, name {reply.name!r}",
        )
        return True

    async def restart(self, label: str) -> bool:
        """Start the process again if it is not running (after a crash or autopilot), as a
        tournament does before the bot's next game."""
        try:
            await self.player.start(self.ts)
        except BotFault as fault:
            trace = trace_excerpt(self.take_stderr(f"{label}: restart"))
            got = f"{fault.message}; its stderr began:\n{trace}" if trace else fault.message
            self.record(label, "game_start", 0, 0, "hello (the process had ended and was restarted)", frozenset(),
                        fault.kind, got, "a hello reply", FAULT_SECTION.get(fault.kind, MESSAGES))
            return False
        return True

    def record(self, game: str, what: str, rnd: int, turn: int, sent: str, situations: frozenset[str], status: str,
               received: str, expected: str, section: Section, elapsed_ms: float | None = None) -> Exchange:
        ex = Exchange(game, what, rnd, turn, sent, situations, status, received, expected, section, elapsed_ms)
        self.seen.exchanges.append(ex)
        return ex

    # -- one game -----------------------------------------------------------------------
    async def play(self, script: GameScript) -> None:
        label, config, me = script.label, script.config, script.seat
        if not await self.restart(label):
            return
        state = new_game(config, script.seed)
        game_id = f"validate-{config.players}p-{config.variant.value}-{script.seed}"
        ts = self.ts
        start = self.game_start(script, game_id)
        seat = _Seat(bank_s=ts.seconds(ts.bank_ms))
        try:
            await self.player.request(start, Ready, ts.seconds(ts.hello_ms))
        except BotFault as fault:
            hint = ""
            if fault.kind == "crash" and self.seen.games_played:
                hint = " — one process plays many games in a row: after game_over, wait for the next game_start (§1)"
            self.record(label, "game_start", 0, 0, f"game_start id={start.id} (seat {me} of {config.seats})", frozenset(),
                        fault.kind, fault.message + hint, f'{{"type": "ready", "re": {start.id}}} within hello_ms',
                        FAULT_SECTION.get(fault.kind, MESSAGES))
            await self.player.close()
            return
        self.seen.games_played.add(label)
        rng = random.Random(f"house:{script.seed}")
        while not state.over:
            plays: list[tuple[int, ...] | None] = [None] * config.players
            deciding = state.deciding_seats()
            for s in deciding:
                if s != me:
                    plays[s] = house_play(state, s, rng)
            if me in deciding:
                plays[me] = await self.decide(script, state, seat, game_id, rng)
            apply_turn(state, plays)
        if not seat.autopilot:
            await self.game_over(script, state, seat, game_id)
        else:
            await self.player.close()  # a tournament restarts a bot that ended a game on autopilot

    def game_start(self, script: GameScript, game_id: str) -> GameStart:
        config, ts = script.config, self.ts
        names = [self.manifest.name if s == script.seat else f"{HOUSE}-{s}" for s in range(config.players)]
        if config.variant is Variant.DUMMY:
            names.append("dummy")
        # exactly the game_start a tournament's referee sends that seat
        return game_start_message(config, script.seat, names, game_id, ts, script.seed, self.player.next_id())

    def build_act(self, script: GameScript, state: GameState, seat: _Seat, game_id: str) -> tuple[Act, list[dict[str, Any]]]:
        """The act a tournament's referee would send the bot's seat now (the one builder)."""
        ts, me = self.ts, script.seat
        history = events(state)[: seat.cursor]
        evs = events(state, seat.cursor)
        seat.cursor = len(state.log)
        if seat.hands_round != state.round:
            seat.hands, seat.hands_round = [], state.round
        hands_seen = list(seat.hands)
        seat.hands.append(list(state.hands[me]))
        full_bank = 0 if ts.no_timeout else ts.scaled_ms(ts.bank_ms)
        my_bank = 0 if ts.no_timeout else round(seat.bank_s * 1000)
        banks = [my_bank if s == me else full_bank for s in range(script.config.players)]
        if script.config.variant is Variant.DUMMY:
            banks.append(0)
        act = build_act(
            state, me,
            request_id=self.player.next_id(),
            game_id=game_id,
            time_ms=0 if ts.no_timeout else ts.scaled_ms(ts.turn_ms) + my_bank,
            banks_ms=banks,
            last_action=seat.last_action,
            events=evs,
            history=history,
            hands_seen=hands_seen,
        )
        return act, evs

    async def decide(self, script: GameScript, state: GameState, seat: _Seat, game_id: str, rng: random.Random) -> tuple[int, ...]:
        me = script.seat
        here = (state.round, state.turn)
        legal = legal_plays(state, me)
        forced = here == script.force_chopsticks
        chopsticks = [p for p in legal if len(p) == 1 and state.kind(p[0]) == "chopsticks"]

        def fallback() -> tuple[int, ...]:
            return chopsticks[0] if forced and chopsticks else rng.choice(legal)

        if seat.autopilot:
            return fallback()
        act, evs = self.build_act(script, state, seat, game_id)
        situations = frozenset(situations_of(state, act, evs, seat.after_fault))
        sent = _describe_act(act, seat.set_aside)
        seat.set_aside = False
        expected = _expected_action(act)
        controller = act.dummy
        try:
            reply, elapsed = await self.player.request(act, Action, self.turn_s + seat.bank_s)
        except BotFault as fault:
            elapsed_ms = None
            if fault.kind == "timeout":
                seat.bank_s = 0.0
                received = f"no answer within time_ms={act.time_ms} ms ({fault.message})"
            else:
                received = fault.message
            section = FAULT_SECTION.get(fault.kind, FAULTS)
            self.record(script.label, "act", *here, sent, situations, fault.kind, received, expected, section, elapsed_ms)
            play = fallback()
            self.strike(seat, fault.kind, play, controller, f"{fault.message}; a legal play was applied instead", elapsed_ms)
            if seat.autopilot:
                await self.player.close()
            return play
        elapsed_ms = elapsed * 1000
        self.seen.decisions_ms.append(elapsed_ms)
        if elapsed > self.turn_s:
            seat.bank_s = max(0.0, seat.bank_s - (elapsed - self.turn_s))
        received = _describe_action(reply)
        problem = ""
        ids = tuple(reply.cards) + ((reply.dummy_card,) if reply.dummy_card is not None else ())
        if controller and reply.dummy_card is None:
            problem = "no dummy_card, but you control the dummy this turn (act.dummy is true): name the card it gets in dummy_card (R15)"
        elif not controller and reply.dummy_card is not None:
            problem = "a dummy_card, but act.dummy is false: only the player controlling the dummy names one (R15)"
        else:
            try:
                check_play(state, me, ids)
            except PlayError as exc:
                problem = str(exc)
        if problem:
            section = DUMMY if state.config.variant is Variant.DUMMY and "dummy" in problem else LEGAL
            self.record(script.label, "act", *here, sent, situations, "illegal", f"{received}: {problem}", expected, section, elapsed_ms)
            play = fallback()
            self.strike(seat, "illegal", play, controller, f"{problem}; a legal play was applied instead", elapsed_ms)
            if seat.autopilot:
                await self.player.close()
            return play
        play = ids
        status = "ok"
        if here == script.set_aside:
            others = [p for p in legal if p != ids]
            play = others[0] if others else ids
            status = "set_aside"
            message = ("validate: this answer was set aside on purpose and reported as a timeout, to check that your bot "
                       "reads last_action and plays on; a legal play was applied instead (your bank was left as it was)")
            seat.faults["timeout"] += 1
            seat.last_action = _last(play, controller, "timeout", message, elapsed_ms)
            seat.after_fault = seat.set_aside = True
            received += f" (set aside on purpose; {list(play)} applied instead)"
        elif forced and chopsticks and len(ids) == 1 and state.kind(ids[0]) == "chopsticks":
            seat.last_action = _last(play, controller, "ok", "", elapsed_ms)
        elif forced and chopsticks:
            play = chopsticks[0]
            status = "set_aside"
            message = ("validate: this answer was set aside on purpose and reported as a timeout, and your chopsticks card "
                       "taken instead, so that your bot meets the chopsticks turns that follow (your bank was left as it was)")
            seat.faults["timeout"] += 1
            seat.last_action = _last(play, controller, "timeout", message, elapsed_ms)
            seat.set_aside = True
            received += f" (set aside on purpose; the chopsticks {list(play)} taken instead)"
        else:
            seat.last_action = _last(play, controller, "ok", "", elapsed_ms)
        self.record(script.label, "act", *here, sent, situations, status, received, expected, LEGAL, elapsed_ms)
        return play

    def strike(self, seat: _Seat, kind: str, play: tuple[int, ...], controller: bool, message: str, elapsed_ms: float | None) -> None:
        seat.faults[kind] += 1
        if kind == "crash":
            seat.autopilot = True
            return
        seat.last_action = _last(play, controller, kind, message, elapsed_ms)
        seat.strikes += 1
        if seat.strikes >= MAX_STRIKES:
            seat.autopilot = True

    async def game_over(self, script: GameScript, state: GameState, seat: _Seat, game_id: str) -> None:
        res = result(state)
        evs = events(state, seat.cursor)
        msg = GameOver(
            id=self.player.next_id(),
            game_id=game_id,
            scores=list(res.scores),
            puddings=list(res.puddings),
            ranks=list(res.ranks),
            faults=dict(seat.faults),
            reason="complete",
            last_action=seat.last_action,
            events=evs,
        )
        situations = frozenset(event_situations(evs) | ({AFTER_FAULT} if seat.after_fault else set()))
        sent = f"game_over id={msg.id} (scores {msg.scores}, ranks {msg.ranks})"
        expected = f'{{"type": "ack", "re": {msg.id}}}'
        try:
            await self.player.request(msg, Ack, max(self.turn_s, self.ts.seconds(1000)))
        except BotFault as fault:
            self.record(script.label, "game_over", 0, 0, sent, situations, fault.kind, fault.message, expected,
                        FAULT_SECTION.get(fault.kind, MESSAGES))
            await self.player.close()
            return
        self.record(script.label, "game_over", 0, 0, sent, situations, "ok", expected, expected, MESSAGES)


def _last(play: tuple[int, ...], controller: bool, status: str, message: str, elapsed_ms: float | None) -> LastAction:
    return LastAction(
        status=status,  # type: ignore[arg-type]
        cards=list(play[:-1]) if controller else list(play),
        dummy_card=play[-1] if controller else None,
        message=message,
        elapsed_ms=0.0 if elapsed_ms is None else round(elapsed_ms, 3),
    )


# -- the entry points -----------------------------------------------------------------------------


def validate_bot(
    path: Path, time_settings: TimeSettings, *, build_cache: Path, sandbox: SandboxSettings | None = None
) -> ValidationReport:
    """Find, build and start the bot at ``path`` as a tournament would (in ``sandbox``;
    None: unconfined), run the handshake and the scripted games, and judge every check.
    Never raises for the bot's faults: they are failed checks in the report."""
    try:
        manifest = find_bot(path)
    except BotError as exc:
        return ValidationReport(str(path), str(path), [Check("bot found", False, str(exc), str(PACKAGING))])
    except OSError as exc:
        return ValidationReport(str(path), str(path), [Check("bot found", False, f"{path}: cannot read: {exc}", str(PACKAGING))])
    run = " ".join("python" if a == sys.executable else a for a in manifest.run)
    version = f" version {manifest.version}" if manifest.version else ""
    found = Check(
        "bot found", True, f"{manifest.name!r}{version} at {manifest.path}, started with: {run}", str(PACKAGING),
        summary=f"{manifest.name!r}{version}, started with: {run}",
    )
    level = sandbox.level.value if sandbox is not None else "none"
    report = ValidationReport(manifest.name, str(manifest.path), [found], manifest=manifest, sandbox=level)
    t0 = time.monotonic()
    try:
        spec = prepare_bot(manifest, build_cache, sandbox)
    except (BotError, OSError) as exc:
        report.checks.append(Check("build", False, str(exc), str(PACKAGING)))
        return report
    if manifest.build is not None:
        took = time.monotonic() - t0
        report.checks.append(Check(
            "build", True, f"{' '.join(manifest.build)}: done in {took:.1f} s (built once per content, in {build_cache})",
            str(PACKAGING), summary=f"{' '.join(manifest.build)}: {took:.1f} s",
        ))
    games = scripts()
    validator = _Validator(manifest, time_settings)
    trio.run(validator.run, spec, games)
    report.checks += judge(games, validator.seen)
    report.stderr = validator.stderr_kept()
    report.startup_ms = validator.startup_ms
    report.decisions_ms = validator.seen.decisions_ms
    return report

