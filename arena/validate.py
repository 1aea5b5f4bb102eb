"""`arena validate` and `arena submit`: a bot checked against every situation it must
handle before it meets a tournament, and copied into a bots folder only if it passes.

The validator starts the bot exactly as a tournament does (its build step included),
then referees scripted games in which the bot holds one seat and the validator plays
every other seat itself. The validator chooses those plays, and where a situation needs
it the seed, so that the bot meets each situation at a known turn whatever it chooses:
chopsticks in its tableau with a wasabi and a nigiri in hand, another seat's chopsticks
coming back in a reveal, the last card of a round, every player count, both passing
variants, both sides of the dummy variant, and one answer set aside on purpose so that
``last_action`` reports a fault. Every request and answer is recorded as an
:class:`Exchange`; each :class:`Check` is judged from the exchanges that show its
situation, and a failure says what was sent, what came back, what was expected and
which section of protocol/PROTOCOL.md covers it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from arena.bots import BotError
from arena.bots.files import copy_bot
from arena.bots.manifest import BotManifest, discover_bots, find_bot, name_skeleton, prepare_bot
from arena.bots.sandbox import SandboxSettings
from arena.engine import (
    GameConfig,
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
from arena.errors import ArenaError
from arena.game.acts import build_act
from arena.game.referee import BotFault, TimeSettings, game_start_message, open_pool
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
NIGIRI = ("salmon_nigiri", "squid_nigiri", "egg_nigiri")
HOUSE = "house"  # the name of the seats the validator plays itself


# -- where PROTOCOL.md covers what ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Section:
    """A numbered section of protocol/PROTOCOL.md (its heading is ``## N. title``)."""

    number: int
    title: str

    def __str__(self) -> str:
        return f"§{self.number} {self.title}"


FRAMING = Section(2, "Framing: lines of JSON")
LOCKSTEP = Section(3, "Lock-step: `id` and `re`")
RULES_BRIEF = Section(5, "The rules in brief")
MESSAGES = Section(6, "Messages")
SHARED = Section(7, "Shared objects")
EVENTS = Section(8, "Events")
LEGAL = Section(9, "The `legal` list")
DUMMY = Section(10, "The two-player dummy variant")
TIME = Section(11, "Time")
FAULTS = Section(12, "Faults")
PACKAGING = Section(15, "Packaging your bot")
SECTIONS = (FRAMING, LOCKSTEP, RULES_BRIEF, MESSAGES, SHARED, EVENTS, LEGAL, DUMMY, TIME, FAULTS, PACKAGING)

_FAULT_SECTION = {"timeout": TIME, "malformed": FRAMING, "protocol": LOCKSTEP, "illegal": LEGAL, "crash": FAULTS}
_FAULT_HINT = {
    "timeout": "answer well within time_ms, and flush stdout after every line (a buffered answer never arrives)",
    "malformed": "stdout carries only protocol lines, one JSON object each, with every field of the right type; log to stderr",
    "protocol": "answer each request exactly once, with re equal to its id and the reply type it asks for",
    "illegal": "answer with a copy of one entry of legal",
    "crash": "the process ended or stopped reading its input; its stderr says why",
}


# -- results ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the verdict: a situation the bot must handle, and how it did."""

    name: str
    passed: bool
    message: str  # the whole story: what was sent, what came back, what was expected
    protocol_section: str
    summary: str = ""  # a few words for a table; the message when empty
    #: The message as labelled parts, for a reader: ("sent", "act id=4 …"), ("got", …)…
    details: tuple[tuple[str, str], ...] = ()

    @property
    def short(self) -> str:
        return self.summary or self.message

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "message": self.message, "protocol_section": self.protocol_section}


@dataclass(slots=True)
class ValidationReport:
    """The verdict on one bot. ``passed`` only if every check passed."""

    bot: str
    path: str
    checks: list[Check]
    startup_ms: float | None = None
    decisions_ms: list[float] = field(default_factory=list)
    manifest: BotManifest | None = None
    sandbox: str = ""  # the sandbox level the bot was built and started at
    #: The last STDERR_KEEP characters of what the bot wrote to stderr during the validation.
    stderr: str = ""

    @property
    def warnings(self) -> list[str]:
        """What passed but deserves a look: a bot that writes to stderr may have hit an
        error it covered up (an SDK falls back to a legal play), which no check sees."""
        if not self.stderr.strip():
            return []
        lines = len(self.stderr.rstrip().splitlines())
        if not self.passed:
            return [f"the bot wrote to stderr during the validation ({lines} line(s) kept, below): it may say what went wrong"]
        aside = next((g.label for g in scripts() if g.set_aside), "")
        return [
            f"the bot wrote to stderr during the validation ({lines} line(s) kept, below): "
            "a bot that recovers from its own errors (say by playing a random card) passes every check, "
            f"so read it (in '{aside}' the validator sets an answer aside on purpose: a note about that is expected)"
        ]

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    @property
    def decision_median_ms(self) -> float | None:
        return round(statistics.median(self.decisions_ms), 3) if self.decisions_ms else None

    @property
    def decision_max_ms(self) -> float | None:
        return round(max(self.decisions_ms), 3) if self.decisions_ms else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "path": self.path,
            "passed": self.passed,
            "checks": [c.to_dict() for c in self.checks],
            "startup_ms": None if self.startup_ms is None else round(self.startup_ms, 3),
            "decision_ms": {"median": self.decision_median_ms, "max": self.decision_max_ms, "count": len(self.decisions_ms)},
            "sandbox": self.sandbox or None,
            "stderr": self.stderr,
            "warnings": self.warnings,
        }


@dataclass(slots=True)
class Exchange:
    """One request to the bot and what came of it."""

    game: str  # the label of the scripted game
    what: str  # "game_start", "act" or "game_over"
    round: int
    turn: int
    sent: str  # the request, summarised
    situations: frozenset[str]
    status: str  # "ok", "set_aside" (the validator's own doing), or a fault kind
    received: str  # the answer, or what went wrong instead
    expected: str
    section: Section
    elapsed_ms: float | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "set_aside")

    @property
    def where(self) -> str:
        if self.what == "act":
            return f"{self.game}, round {self.round} turn {self.turn}"
        return f"{self.game}, {self.what}"

    @property
    def summary(self) -> str:
        return f"{self.status} at {self.where}"

    def describe(self) -> str:
        text = f"{self.where}: sent {self.sent}; got {self.received}; expected {self.expected}"
        if not self.ok:
            text += f" (fault: {self.status}; {_FAULT_HINT.get(self.status, '')})"
        return text

    def details(self, situation: str = "") -> tuple[tuple[str, str], ...]:
        parts = [("situation", situation)] if situation else []
        parts += [("at", self.where), ("sent", self.sent), ("got", self.received), ("expected", self.expected)]
        if not self.ok:
            parts.append(("fault", f"{self.status}: {_FAULT_HINT.get(self.status, '')}"))
        return tuple(parts)


# -- the scripted games -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameScript:
    """One scripted game: the bot sits at ``seat``; the validator plays the others."""

    label: str
    config: GameConfig
    seat: int
    seed: int
    #: (round, turn) at which the bot's answer is set aside on purpose (as if late).
    set_aside: tuple[int, int] | None = None
    #: (round, turn) at which the bot's seat takes a chopsticks card, whatever it answers.
    force_chopsticks: tuple[int, int] | None = None


def _holds(state: GameState, seat: int, *wanted: Sequence[str]) -> bool:
    kinds = {state.kind(c) for c in state.hands[seat]}
    return all(kinds & set(options) for options in wanted)


def chopsticks_seed(config: GameConfig) -> int:
    """The first seed whose first two hands each hold chopsticks, a wasabi and a nigiri:
    with seat 0 made to take its chopsticks and seat 1 taking its own, seat 0 is offered
    two-card plays (a wasabi-then-nigiri pair among them) at turn 2 and sees seat 1
    play wasabi then nigiri with chopsticks, the chopsticks coming back, at turn 3."""
    for seed in range(1, 100_000):
        state = new_game(config, seed)
        if all(_holds(state, s, ("chopsticks",), ("wasabi",), NIGIRI) for s in (0, 1)):
            return seed
    raise RuntimeError("no seed deals the chopsticks situation")  # the deal would have to have changed


def scripts() -> list[GameScript]:
    """The games of a validation, in the order they are played (one bot process for all)."""
    two = GameConfig(2, Variant.STANDARD)
    return [
        GameScript("2 players, standard", two, seat=0, seed=chopsticks_seed(two), force_chopsticks=(1, 1)),
        GameScript("3 players, alternate", GameConfig(3, Variant.ALTERNATE), seat=2, seed=2, set_aside=(1, 2)),
        GameScript("4 players, standard", GameConfig(4, Variant.STANDARD), seat=1, seed=3),
        GameScript("5 players, alternate", GameConfig(5, Variant.ALTERNATE), seat=4, seed=4),
        GameScript("2 players, dummy variant", GameConfig(2, Variant.DUMMY), seat=0, seed=5),
    ]


def _own_count(play: Sequence[int], controller: bool) -> int:
    return len(play) - 1 if controller else len(play)


def house_play(state: GameState, seat: int, rng: random.Random) -> tuple[int, ...]:
    """The validator's own choice for a seat it plays: use chopsticks for wasabi then
    nigiri when it can, take chopsticks when it has none, else mostly random, so that
    the bot sees chopsticks and wasabi at work in the reveals."""
    legal = legal_plays(state, seat)
    controller = seat == state.controller
    pairs = [p for p in legal if _own_count(p, controller) == 2]
    wasabi_nigiri = [p for p in pairs if state.kind(p[0]) == "wasabi" and state.kind(p[1]) in NIGIRI]
    if wasabi_nigiri:
        return wasabi_nigiri[0]
    if pairs and rng.random() < 0.5:
        return rng.choice(pairs)
    if not state.chopsticks[seat]:
        takes_chopsticks = [p for p in legal if state.kind(p[0]) == "chopsticks" and _own_count(p, controller) == 1]
        if takes_chopsticks:
            return takes_chopsticks[0]
    return rng.choice(legal)


# -- situations: what an act (or game_over) puts in front of the bot ---------------------------

CHOPSTICKS = "chopsticks offered"
WASABI_PAIR = "wasabi then nigiri offered"
WASABI_SHOWN = "wasabi then nigiri revealed"
RETURNED = "chopsticks returned"
LAST_CARD = "last card"
CONTROLLER = "dummy controller"
OTHER = "dummy other player"
AFTER_FAULT = "after a fault"
RIGHT = "passing right"


def _situations(state: GameState, act: Act, evs: list[dict[str, Any]], after_fault: bool) -> set[str]:
    found: set[str] = set()
    controller = act.dummy
    pairs = [p for p in act.legal if len(p.cards) == 2]
    if pairs:
        found.add(CHOPSTICKS)
        if any(state.kind(p.cards[0]) == "wasabi" and state.kind(p.cards[1]) in NIGIRI for p in pairs):
            found.add(WASABI_PAIR)
    if controller:
        found.add(CONTROLLER)
    elif state.config.variant is Variant.DUMMY:
        found.add(OTHER)
    if act.direction == "right":
        found.add(RIGHT)
    found |= _event_situations(evs)
    if after_fault:
        found.add(AFTER_FAULT)
    return found


def _event_situations(evs: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()
    for ev in evs:
        if ev["type"] == "last_card":
            found.add(LAST_CARD)
        elif ev["type"] == "reveal":
            for play in ev["plays"]:
                if play["chopsticks_returned"] is not None:
                    found.add(RETURNED)
                kinds = [c["card"] for c in play["cards"]]
                if len(kinds) == 2 and kinds[0] == "wasabi" and kinds[1] in NIGIRI:
                    found.add(WASABI_SHOWN)
    return found


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
        self.exchanges: list[Exchange] = []
        self.decisions_ms: list[float] = []
        self.hello_check: Check | None = None
        self.startup_ms: float | None = None
        self.player: Any = None
        self.games_played: set[str] = set()
        self.unplayed: dict[str, str] = {}  # label -> why the game was not played
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
                    self.unplayed[g.label] = "not played: the bot did not complete the handshake (see hello)"
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
            section = MESSAGES if fault.kind == "protocol" else _FAULT_SECTION.get(fault.kind, MESSAGES)
            hint = _FAULT_HINT.get(fault.kind, "")
            if fault.kind == "crash" and fault.message.startswith("cannot start"):  # the process never ran
                section = PACKAGING
                hint = "the run command could not be started: check `run` (an argv, relative to the bot's folder)"
            trace = trace_excerpt(self.take_stderr("hello")) if fault.kind in ("crash", "timeout", "malformed") else ""
            quoted = f"; its stderr began:\n{trace}" if trace else ""
            self.hello_check = Check(
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
        self.hello_check = Check(
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
                        fault.kind, got, "a hello reply", _FAULT_SECTION.get(fault.kind, MESSAGES))
            return False
        return True

    def record(self, game: str, what: str, rnd: int, turn: int, sent: str, situations: frozenset[str], status: str,
               received: str, expected: str, section: Section, elapsed_ms: float | None = None) -> Exchange:
        ex = Exchange(game, what, rnd, turn, sent, situations, status, received, expected, section, elapsed_ms)
        self.exchanges.append(ex)
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
            if fault.kind == "crash" and self.games_played:
                hint = " — one process plays many games in a row: after game_over, wait for the next game_start (§1)"
            self.record(label, "game_start", 0, 0, f"game_start id={start.id} (seat {me} of {config.seats})", frozenset(),
                        fault.kind, fault.message + hint, f'{{"type": "ready", "re": {start.id}}} within hello_ms',
                        _FAULT_SECTION.get(fault.kind, MESSAGES))
            await self.player.close()
            return
        self.games_played.add(label)
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
        situations = frozenset(_situations(state, act, evs, seat.after_fault))
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
            section = _FAULT_SECTION.get(fault.kind, FAULTS)
            self.record(script.label, "act", *here, sent, situations, fault.kind, received, expected, section, elapsed_ms)
            play = fallback()
            self.strike(seat, fault.kind, play, controller, f"{fault.message}; a legal play was applied instead", elapsed_ms)
            if seat.autopilot:
                await self.player.close()
            return play
        elapsed_ms = elapsed * 1000
        self.decisions_ms.append(elapsed_ms)
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
        situations = frozenset(_event_situations(evs) | ({AFTER_FAULT} if seat.after_fault else set()))
        sent = f"game_over id={msg.id} (scores {msg.scores}, ranks {msg.ranks})"
        expected = f'{{"type": "ack", "re": {msg.id}}}'
        try:
            await self.player.request(msg, Ack, max(self.turn_s, self.ts.seconds(1000)))
        except BotFault as fault:
            self.record(script.label, "game_over", 0, 0, sent, situations, fault.kind, fault.message, expected,
                        _FAULT_SECTION.get(fault.kind, MESSAGES))
            await self.player.close()
            return
        self.record(script.label, "game_over", 0, 0, sent, situations, "ok", expected, expected, MESSAGES)

    # -- the verdict ----------------------------------------------------------------------
    def checks(self, games: list[GameScript]) -> list[Check]:
        checks = [self.hello_check] if self.hello_check is not None else []
        for g in games:
            checks.append(self.game_check(g))
        chop = next(g.label for g in games if g.force_chopsticks)
        fault_game = next(g.label for g in games if g.set_aside)
        dummy = next(g.label for g in games if g.config.variant is Variant.DUMMY)
        first = games[0].label
        checks += [
            self.situation_check(
                "chopsticks offered", (CHOPSTICKS,), chop, LEGAL,
                "offered two-card plays (chopsticks in its tableau)"),
            self.situation_check(
                "wasabi before nigiri", (WASABI_PAIR, WASABI_SHOWN), chop, RULES_BRIEF,
                "offered a wasabi-then-nigiri chopsticks pair (R7a), and shown another seat playing one"),
            self.situation_check(
                "chopsticks returned", (RETURNED,), chop, EVENTS,
                "shown reveals where chopsticks were used and went back into the hand passed on (R8)"),
            self.situation_check(
                "last card of a round", (LAST_CARD,), first, EVENTS,
                "shown the last_card event (the last card played for every seat, R6a) with the round_end"),
            self.situation_check(
                "dummy: controller turn", (CONTROLLER,), dummy, DUMMY,
                "asked as the dummy's controller (act.dummy true: every play names a dummy_card)"),
            self.situation_check(
                "dummy: other player's turn", (OTHER,), dummy, DUMMY,
                "asked while the other player controls the dummy (act.dummy false: no dummy_card)"),
            self.fault_check(fault_game),
            self.time_check(),
        ]
        return checks

    def _not_reached(self, name: str, label: str, section: Section, what: str = "") -> Check:
        prefix = f"{what}: " if what else ""
        if label in self.unplayed:
            return Check(name, False, prefix + self.unplayed[label], str(section), summary="not played: no handshake")
        bad = next((e for e in self.exchanges if e.game == label and not e.ok), None)
        if bad is not None:
            return Check(name, False, f"{prefix}not reached, because the bot failed earlier: {bad.describe()}",
                         str(bad.section), summary=f"not reached: {bad.summary}",
                         details=(("not reached", f"the bot failed earlier in '{label}'"), *bad.details(what)))
        return Check(name, False, f"{prefix}not reached in '{label}'", str(section), summary="not reached")

    def game_check(self, g: GameScript) -> Check:
        name = g.label
        mine = [e for e in self.exchanges if e.game == g.label]
        bad = next((e for e in mine if not e.ok), None)
        if bad is not None:
            return Check(name, False, bad.describe(), str(bad.section), summary=bad.summary, details=bad.details())
        if not any(e.what == "game_over" for e in mine):
            return self._not_reached(name, g.label, MESSAGES)
        decisions = sum(1 for e in mine if e.what == "act")
        extra = ", passing right in round 2" if g.config.variant is Variant.ALTERNATE else ""
        text = f"seat {g.seat} of {g.config.seats}{extra}: {decisions} decisions, all accepted"
        return Check(name, True, f"{text}; game_start and game_over answered", str(MESSAGES), summary=text)

    def situation_check(self, name: str, keys: tuple[str, ...], home: str, section: Section, what: str) -> Check:
        seen = [e for e in self.exchanges if any(k in e.situations for k in keys)]
        bad = next((e for e in seen if not e.ok), None)
        if bad is not None:
            # A crash or an illegal answer here is about the situation; a timeout or a bad line is not.
            where = section if bad.status in ("crash", "illegal") and bad.section is not DUMMY else bad.section
            return Check(name, False, f"{what}: {bad.describe()}", str(where), summary=bad.summary,
                         details=bad.details(what))
        if any(not any(k in e.situations for e in seen) for k in keys):
            return self._not_reached(name, home, section, what)
        text = f"{len(seen)}×, first at {seen[0].where}; all accepted"
        return Check(name, True, f"{what}: {text}", str(section), summary=text)

    def fault_check(self, label: str) -> Check:
        name = "fault in last_action"
        what = "after its answer was set aside on purpose (reported in last_action as a timeout)"
        after = [e for e in self.exchanges if AFTER_FAULT in e.situations]
        bad = next((e for e in after if not e.ok), None)
        if bad is not None:
            return Check(name, False, f"{what}: {bad.describe()}", str(bad.section), summary=bad.summary,
                         details=bad.details(what))
        aside = next((e for e in self.exchanges if e.game == label and e.status == "set_aside"), None)
        if aside is None or not any(e.what == "game_over" for e in after):
            return self._not_reached(name, label, SHARED, what)
        text = f"set aside at {aside.where}; the bot played on: {len(after)} more request(s) answered"
        return Check(
            name, True,
            f"its answer at {aside.where} was set aside on purpose (last_action.status 'timeout' in the next act); "
            f"it answered that act and the remaining {len(after) - 1} request(s) of the game correctly",
            str(SHARED), summary=text,
        )

    def time_check(self) -> Check:
        name = "time"
        ts = self.ts
        late = [e for e in self.exchanges if e.status == "timeout"]
        if late:
            return Check(name, False, f"{len(late)} request(s) not answered in time; the first: {late[0].describe()}",
                         str(TIME), summary=f"{len(late)} timeout(s), the first at {late[0].where}",
                         details=late[0].details(f"{len(late)} request(s) not answered in time; the first:"))
        if not self.decisions_ms:
            why = "not reached: no game was played" if not self.games_played else "no decision was answered"
            return Check(name, False, why, str(TIME))
        if ts.no_timeout:
            return Check(name, True, "deadlines were off (--no-timeout): nothing was timed", str(TIME))
        turn_ms = ts.scaled_ms(ts.turn_ms)
        text = (f"median {statistics.median(self.decisions_ms):.2f} ms, worst {max(self.decisions_ms):.2f} ms "
                f"(turn_ms {turn_ms})")
        over = sum(1 for d in self.decisions_ms if d > turn_ms)
        if over:
            text += f"; {over} over turn_ms, paid from the bank"
        message = f"{len(self.decisions_ms)} decisions, every one in time: {text}"
        if over:
            message += ": a loaded tournament machine could time such answers out"
        return Check(name, True, message, str(TIME), summary=text)


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
    report.checks += validator.checks(games)
    report.stderr = validator.stderr_kept()
    report.startup_ms = validator.startup_ms
    report.decisions_ms = validator.decisions_ms
    return report


# -- submit ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SubmitOutcome:
    report: ValidationReport | None  # None when an identical bot was already there
    destination: Path
    copied: bool


def _copied(manifest: BotManifest, copy: Path) -> str:
    """Copy the bot to ``copy`` with :func:`~arena.bots.files.copy_bot` (links kept inside,
    never followed); the content hash of what was copied."""
    try:
        return copy_bot(manifest.path, copy)
    except BotError as exc:
        raise ArenaError(f"bot {manifest.name!r} was not submitted: {exc}") from None
    except OSError as exc:
        raise ArenaError(f"cannot copy the bot into {copy.parent}: {exc}") from None


def submit_bot(
    path: Path,
    bots_dir: Path,
    time_settings: TimeSettings,
    *,
    build_cache: Path,
    on_validated: Callable[[ValidationReport], None] | None = None,
    sandbox: SandboxSettings | None = None,
) -> SubmitOutcome:
    """Validate the bot at ``path`` and copy it into ``bots_dir`` under its name.

    Raises :class:`ArenaError` (with the reason) if the bot cannot be found, fails
    validation, or its name is taken there by a different bot. The copy is made under a
    hidden temporary name in ``bots_dir`` (ignored by bot discovery) and renamed into
    place once complete, so a half-copied bot is never visible.
    """
    try:
        manifest = find_bot(path)
    except BotError as exc:
        raise ArenaError(str(exc)) from None
    name = manifest.name
    if name.startswith((".", "_")):
        raise ArenaError(f"bot {name!r}: a name starting with '.' or '_' is ignored in a bots folder; rename it")
    # A folder is renamed after its bot; a single file keeps its file name, which names it.
    dest = bots_dir / (name if manifest.is_folder else manifest.path.name)
    identical = _taken(bots_dir, manifest, dest)
    if identical:
        return SubmitOutcome(None, identical, copied=False)
    report = validate_bot(path, time_settings, build_cache=build_cache, sandbox=sandbox)
    if on_validated is not None:
        on_validated(report)
    if not report.passed:
        failed = report.failed
        raise ArenaError(
            f"bot {name!r} was not submitted: {len(failed)} check(s) failed ({', '.join(c.name for c in failed)}); "
            f"the first: {failed[0].message}"
        )
    if _taken(bots_dir, manifest, dest):  # the same bot arrived while it was being validated
        return SubmitOutcome(report, dest, copied=False)
    _copy_into_place(manifest, bots_dir, dest)
    return SubmitOutcome(report, dest, copied=True)


def _taken(bots_dir: Path, manifest: BotManifest, dest: Path) -> Path | None:
    """The path of an identical bot of the same name already in ``bots_dir``, None if
    the name is free; raises if the name (or the destination) belongs to a different bot."""
    if not bots_dir.exists():
        return None
    if not bots_dir.is_dir():
        raise ArenaError(f"{bots_dir}: not a folder")
    try:
        bots, _errors = discover_bots(bots_dir)
    except BotError as exc:
        raise ArenaError(str(exc)) from None
    for bot in bots:
        if bot.name != manifest.name:
            if name_skeleton(bot.name) == name_skeleton(manifest.name):
                raise ArenaError(
                    f"bot name {manifest.name!r} is too like {bot.name!r}, already taken in {bots_dir} ({bot.path}): "
                    "names that differ only in case or in lookalike characters are confused; give yours another name"
                )
            continue
        if bot.content_hash == manifest.content_hash and bot.is_folder == manifest.is_folder:
            return bot.path
        raise ArenaError(
            f"bot name {manifest.name!r} is already taken in {bots_dir} by a different bot ({bot.path}, content "
            f"{bot.content_hash}; yours is {manifest.content_hash}): remove that one first, or give yours another name"
        )
    if dest.exists() or dest.is_symlink():
        raise ArenaError(f"{dest} already exists and is not the bot {manifest.name!r}: remove it or rename your bot")
    return None


def _copy_into_place(manifest: BotManifest, bots_dir: Path, dest: Path) -> None:
    bots_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{manifest.name}.submit-", dir=bots_dir))
    try:
        if manifest.is_folder:
            copy = staging / "bot"
            # The files of its content hash only (no caches, no version control), as the arena reads them.
            if _copied(manifest, copy) != manifest.content_hash:
                raise ArenaError(f"{manifest.path}: its files changed while it was being submitted; try again")
            try:
                os.rename(copy, dest)  # atomic; fails if dest appeared meanwhile (a non-empty folder)
            except OSError as exc:
                raise ArenaError(f"cannot move the bot into {dest}: {exc}") from None
        else:
            copy = staging / manifest.path.name
            if _copied(manifest, copy) != manifest.content_hash:
                raise ArenaError(f"{manifest.path}: the file changed while it was being submitted; try again")
            try:
                os.link(copy, dest)  # atomic, and never replaces an existing file
            except FileExistsError:
                raise ArenaError(f"{dest} already exists: remove it or rename your bot") from None
            except OSError:  # a file system without hard links
                if dest.exists():
                    raise ArenaError(f"{dest} already exists: remove it or rename your bot") from None
                os.rename(copy, dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
