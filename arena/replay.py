"""Replays: one gzip-compressed JSON file per game, and their verification.

A replay holds everything needed to re-simulate the game with the engine (the
seed and the plays actually applied) plus what a viewer wants without the
engine (the kind of every card id, every turn's hands, and a plain summary of
the rounds and the result). The format is documented in protocol/REPLAY.md.
"""

from __future__ import annotations

import gzip
import os
import threading
import zlib
from pathlib import Path
from typing import Any, Literal

import msgspec

from arena.engine import (
    KINDS,
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

REPLAY_FORMAT = "sushigo-replay"
REPLAY_FORMAT_VERSION = 1
ActionStatus = Literal["ok", "timeout", "illegal", "malformed", "protocol", "crash", "autopilot", "auto"]


class ReplayError(Exception):
    """A replay file that cannot be read or does not match the engine; names the file/game."""


class SeatInfo(msgspec.Struct, kw_only=True):
    seat: int
    bot: str  # the bot's name (bot.toml), "dummy" for the dummy seat
    version: str = ""
    hash: str = ""  # content hash of the bot's folder


class SeatUsage(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What one seat's bot used in the game, as its sandbox measured it (like ``timing``,
    it differs between reruns). None: not measured (e.g. no sandbox)."""

    seat: int
    cpu_ms: float | None = None  # CPU time of all the bot's processes during the game
    peak_mb: float | None = None  # the peak of their memory during the game, in MiB
    sandbox: str = "none"  # the level it ran at: none, limits or strict
    limits: dict[str, float] | None = None  # memory_mb, cpu_s, processes, tmp_mb, open_files


class ActionRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What one seat did in one turn, and what was applied for it."""

    seat: int
    cards: list[int]  # the seat's own cards applied, in order
    dummy_card: int | None = None  # the card given to the dummy, for its controller
    #: "ok" (the bot's choice), a fault ("timeout", "illegal", "malformed", "protocol",
    #: "crash": a seeded fallback was applied), "autopilot" (the seat no longer plays) or "auto"
    #: (the dummy variant's last card, played for the player, R15).
    status: ActionStatus = "ok"
    elapsed_ms: float | None = None
    bank_ms: int | None = None  # what was left of the seat's bank after this turn
    message: str = ""
    debug: Any = None


class TurnRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    round: int
    turn: int
    hands: list[list[int]]  # every seat's hand before the choice (omniscient); the dummy's pile last
    controller: int | None = None
    actions: list[ActionRecord]


class FaultRecord(msgspec.Struct, kw_only=True):
    seat: int
    round: int  # 0 for faults outside a turn (hello, game_start, game_over)
    turn: int
    kind: str  # timeout, malformed, protocol, illegal, crash
    message: str


class RoundSummary(msgspec.Struct, kw_only=True):
    tableaus: list[list[str]]  # per seat, card kinds in the order they entered the tableau
    points: list[int]  # per seat, this round's points


class ResultSummary(msgspec.Struct, kw_only=True):
    scores: list[int]
    puddings: list[int]
    ranks: list[int]  # the arena's ranks: seats that ended on autopilot below the others
    rules_ranks: list[int]  # the ranks by the rules alone (R13)
    pudding_points: list[int]
    autopilot: list[bool]


class Replay(msgspec.Struct, kw_only=True):
    format: str = REPLAY_FORMAT
    format_version: int = REPLAY_FORMAT_VERSION
    rules_version: str = RULES_VERSION
    protocol_version: int = 1
    arena_version: str = ""
    game_id: str
    seed: int
    ids: int | None = None  # the card ids' labelling (new_game's ids); None: the ids of the seed
    players: int  # seats at the table (the dummy included, as the last seat)
    variant: str
    config: dict[str, Any]  # GameConfig: players (bots) and variant
    time: dict[str, Any] = {}
    seats: list[SeatInfo]
    cards: list[str]  # the kind of every card id: cards[id]
    status: Literal["complete", "void"] = "complete"
    void_reason: str = ""
    turns: list[TurnRecord] = []
    # Each public event as its JSON, kept as read (or as the referee sent it): decoded
    # only when asked for, by event_dicts().
    events: list[msgspec.Raw] = []
    faults: list[FaultRecord] = []
    stderr: list[str] = []  # per seat, the tail of what the bot wrote to stderr
    rounds: list[RoundSummary] = []
    result: ResultSummary | None = None
    timing: dict[str, Any] = {}  # wall-clock facts; with usage, the only parts that differ between reruns
    usage: list[SeatUsage] = []  # per bot seat (format_version 1 files may lack it)

    def event_dicts(self) -> list[dict[str, Any]]:
        """The events as dicts, as :func:`arena.engine.events` makes them."""
        if not self.events:
            return []
        return msgspec.json.decode(b"[" + b",".join(self.events) + b"]")

    def applied_plays(self, turn: TurnRecord) -> list[tuple[int, ...] | None]:
        """The plays applied in ``turn``, as the engine takes them (one per player seat)."""
        plays: list[tuple[int, ...] | None] = [None] * self.config["players"]
        for action in turn.actions:
            if action.status == "auto":
                continue
            ids = tuple(action.cards)
            if action.dummy_card is not None:
                ids += (action.dummy_card,)
            plays[action.seat] = ids
        return plays


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Replay)


def encode_replay(replay: Replay) -> bytes:
    """The replay as JSON (uncompressed): what a replay file holds, gunzipped."""
    return _encoder.encode(replay)


def summarize_log(state: GameState) -> list[RoundSummary]:
    """:func:`summarize_rounds` of the game's events, read straight from the engine's
    log (the referee's way: no event dicts; :func:`verify_replay` checks the two agree)."""
    name = list(map(KINDS.__getitem__, state.kind_of)).__getitem__  # card id -> kind
    seats = state.seats
    rounds: list[RoundSummary] = []
    tableaus: list[list[str]] = [[] for _ in range(seats)]
    for entry in state.log:
        tag = entry[0]
        if tag == "reveal":
            for tableau, play in zip(tableaus, entry[3], strict=True):
                tableau += map(name, play)
        elif tag == "last":
            for tableau, c in zip(tableaus, entry[3], strict=True):
                tableau.append(name(c))
        elif tag == "scored":
            rounds.append(RoundSummary(tableaus=tableaus, points=list(entry[2])))
            tableaus = [[] for _ in range(seats)]
    return rounds


def summarize_rounds(all_events: list[dict[str, Any]], seats: int) -> list[RoundSummary]:
    """Per round, every seat's card kinds in entry order and points, from engine events."""
    rounds: list[RoundSummary] = []
    tableaus: list[list[str]] = [[] for _ in range(seats)]
    for ev in all_events:
        if ev["type"] == "reveal":
            for play in ev["plays"]:
                tableaus[play["seat"]].extend(c["card"] for c in play["cards"])
        elif ev["type"] == "last_card":
            for c in ev["cards"]:
                tableaus[c["seat"]].append(c["card"])
        elif ev["type"] == "round_end":
            rounds.append(RoundSummary(tableaus=tableaus, points=list(ev["points"])))
            tableaus = [[] for _ in range(seats)]
    return rounds


def write_replay(path: Path, replay: Replay, *, durable: bool = True) -> None:
    """Write atomically: a temporary file in the same folder, then rename, so that a
    crash of the arena leaves either no file or the whole file. With ``durable`` the
    file is also fsynced before the rename (it then survives a power cut too); a
    tournament skips that and instead re-checks replay files when it resumes (see
    :meth:`arena.store.Store.completed_ids`). gzip's mtime is 0 so that the same game
    gives the same bytes."""
    write_replay_json(path, _encoder.encode(replay), durable=durable)


def write_replay_json(path: Path, data: bytes, *, durable: bool = True) -> None:
    """:func:`write_replay` of a replay already encoded (:func:`encode_replay`)."""
    data = gzip.compress(data, compresslevel=1, mtime=0)  # 3x faster than 6, files 1.3x larger
    # A temporary name of this process and thread (tempfile's random names cost more than
    # the write); one left by a crash is taken over.
    tmp = path.parent / f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o644)
    except FileNotFoundError:  # the folder is made on first need (a tournament makes them all at once)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, flags, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_replay(path: Path) -> Replay:
    """Read a replay; a file that is not one raises :class:`ReplayError` naming it."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    except (OSError, EOFError, zlib.error) as exc:
        raise ReplayError(f"{path}: not a replay: not a readable gzip file ({exc})") from None
    try:
        head = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise ReplayError(f"{path}: not a replay: not JSON ({exc})") from None
    if not isinstance(head, dict):
        raise ReplayError(f"{path}: not a Sushi Go! Arena replay (JSON {_json_kind(head)}, not an object)")
    form = head.get("format")
    if form != REPLAY_FORMAT:
        if not isinstance(form, str):
            what = 'no "format" field' if form is None else '"format" is not a string'
        else:
            what = f"format is {form[:40]!r}" + ("…" if len(form) > 40 else "")
        raise ReplayError(f"{path}: not a Sushi Go! Arena replay ({what})")
    version = head.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ReplayError(f'{path}: malformed replay: no integer "format_version" field')
    if version > REPLAY_FORMAT_VERSION:
        raise ReplayError(
            f"{path}: replay format version {version!r} is newer than this arena reads "
            f"({REPLAY_FORMAT_VERSION}); upgrade the arena"
        )
    try:
        return _decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise ReplayError(f"{path}: malformed replay: {exc}") from None


def _json_kind(value: Any) -> str:
    """What a decoded JSON value is, in a word or two (for messages that must not dump it)."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "true/false"
    if value is None:
        return "null"
    return "number"


def verify_replay(replay: Replay, *, name: str = "") -> None:
    """Re-simulate the game from its seed and applied plays; raise :class:`ReplayError`
    naming the game and the turn at the first difference."""
    label = name or f"game {replay.game_id}"
    if replay.rules_version != RULES_VERSION:
        raise ReplayError(
            f"{label}: recorded under rules {replay.rules_version}, this engine is {RULES_VERSION}"
        )
    if replay.status == "void":
        return  # nothing was decided; a void game has no plays to check
    try:
        config = GameConfig(replay.config["players"], Variant(replay.config["variant"]))
    except (KeyError, ValueError) as exc:
        raise ReplayError(f"{label}: bad config {replay.config!r}: {exc}") from None
    state = new_game(config, replay.seed, ids=replay.ids)
    kinds = [state.kind(c) for c in range(len(replay.cards))]
    if kinds != replay.cards:
        raise ReplayError(f"{label}: the card kinds do not match the deck of seed {replay.seed}")
    cursor = 0  # position in the engine's log, and in replay.events (same numbering)
    try:
        recorded = replay.event_dicts()
    except msgspec.DecodeError as exc:
        raise ReplayError(f"{label}: malformed events: {exc}") from None
    for t in replay.turns:
        where = f"{label}, round {t.round} turn {t.turn}"
        if state.over:
            raise ReplayError(f"{where}: the game was already over")
        if (state.round, state.turn) != (t.round, t.turn):
            raise ReplayError(f"{where}: the engine is at round {state.round} turn {state.turn}")
        if [list(h) for h in state.hands] != t.hands:
            raise ReplayError(f"{where}: the recorded hands differ from the engine's")
        try:
            apply_turn(state, replay.applied_plays(t))
        except PlayError as exc:
            raise ReplayError(f"{where}: recorded play rejected by the engine: {exc}") from None
        fresh = events(state, cursor)
        if fresh != recorded[cursor : cursor + len(fresh)]:
            raise ReplayError(f"{where}: the recorded events of this turn differ from the engine's")
        cursor += len(fresh)
    if not state.over:
        raise ReplayError(f"{label}: the replay ends at round {state.round} turn {state.turn}, before the game does")
    if events(state) != recorded:
        for i, (a, b) in enumerate(zip(events(state), recorded, strict=False)):
            if a != b:
                raise ReplayError(f"{label}: event {i} ({a.get('type')}) differs: engine {a} vs replay {b}")
        raise ReplayError(f"{label}: the number of events differs")
    res = result(state)
    if replay.result is None or list(res.scores) != replay.result.scores or list(res.puddings) != replay.result.puddings:
        raise ReplayError(f"{label}: the final result differs from the engine's {list(res.scores)}")
    if list(res.ranks) != replay.result.rules_ranks:
        raise ReplayError(f"{label}: the ranks differ from the engine's {list(res.ranks)}")
    if summarize_rounds(recorded, state.seats) != replay.rounds or summarize_log(state) != replay.rounds:
        raise ReplayError(f"{label}: the round summary does not match the events")


def iter_replays(target: Path) -> list[Path]:
    """The replay files of a file or folder (recursively); a folder with none is an error."""
    if target.is_file():
        return [target]
    if not target.is_dir():
        raise ReplayError(f"{target}: no such file or folder")
    found = sorted(p for p in target.rglob("*.json.gz") if not p.name.startswith("."))
    if not found:
        raise ReplayError(f"{target}: no replay (*.json.gz) in this folder")
    return found
