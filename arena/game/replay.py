"""Replays: one gzip-compressed JSON file per game, and their verification.

A replay holds everything needed to re-simulate the game with the engine (the
seed and the plays actually applied) plus what a viewer wants without the
engine (the kind of every card id, every turn's hands, and a plain summary of
the rounds and the result). The format is documented in protocol/REPLAY.md.
"""

from __future__ import annotations

import errno
import gzip
import os
import re
import stat
import threading
import zlib
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from arena.engine import (
    DECK_SIZE,
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
ActionStatus = Literal["ok", "timeout", "illegal", "malformed", "protocol", "crash", "resigned", "autopilot", "auto"]
FaultKind = Literal["timeout", "malformed", "protocol", "illegal", "crash", "resigned", "autopilot"]
#: The faults that make the referee apply a seeded fallback play (``autopilot`` is a consequence),
#: counted for every seat of every game. ``resigned`` too, but it is no bot's mistake: a person's
#: seat (``arena play human``) left the table; like a crash, it ends the seat's own play (seeded
#: random plays to the end, ranked below), and it is counted only where it happened.
FAULT_KINDS = ("timeout", "malformed", "protocol", "illegal", "crash")
RESIGNED = "resigned"
#: The faults after which a seat plays no more (autopilot at once, without strikes).
ENDING_KINDS = ("crash", RESIGNED)
#: The exit status with which a person's seat leaves the table: recorded as ``resigned``.
RESIGN_STATUS = 86
#: Strikes (non-crash faults) after which a seat is put on autopilot: the referee's
#: ``max_strikes``, which every game of the arena plays with (it is not recorded).
MAX_STRIKES = 3

#: The most a replay may hold once decompressed. The largest a real game can write is
#: under 3 MiB (5 seats, each striking out with faults that quote a 64 KiB reply, 4 KiB
#: of debug per action, 16 KiB of stderr per seat); the largest measured, a 5-player game
#: of bots flooding stderr, is 100 KB, a 2-player game 15 KB. Reading one at the cap
#: peaks at about 130 MiB (a 2 GiB gzip bomb is refused in 0.15 s at about 70 MiB).
MAX_REPLAY_BYTES = 16 * 1024 * 1024
_READ_CHUNK = 1024 * 1024

# What a game can hold: the bounds every number and list of a replay is decoded within.
MAX_SEATS = 5
MAX_TURNS = 3 * 10  # 3 rounds of at most 10 cards a hand (2 players)
MAX_FAULTS = MAX_SEATS * (MAX_TURNS + 3)  # one a seat a request, an autopilot mark, hello/game_start, game_over
MAX_EVENTS = 3 * (MAX_TURNS // 3 + 3) + 1  # per round: its start, every turn's reveal, a last card, its end; game end

Seat = Annotated[int, Meta(ge=0, lt=MAX_SEATS)]
CardId = Annotated[int, Meta(ge=0, lt=DECK_SIZE)]
Round = Annotated[int, Meta(ge=0, le=3)]
Turn = Annotated[int, Meta(ge=0, le=MAX_TURNS)]
Points = Annotated[int, Meta(ge=-10_000, le=10_000)]
Count = Annotated[int, Meta(ge=0, le=DECK_SIZE)]
Rank = Annotated[int, Meta(ge=1, le=MAX_SEATS)]
Text = Annotated[str, Meta(max_length=1024 * 1024)]
Name = Annotated[str, Meta(max_length=256)]
PerSeat = Meta(max_length=MAX_SEATS)
Amount = Annotated[float, Meta(ge=0)]
#: ``time``: the run's time settings (milliseconds, a scale, a flag), flat.
TimeValues = Annotated[
    dict[Name, Annotated[int, Meta(ge=0, le=10**12)] | Annotated[float, Meta(ge=0, le=1e12)] | bool], Meta(max_length=16)
]
#: ``timing``: a start time, a duration, and per-seat mean and max times, flat.
TimingValues = Annotated[dict[Name, Name | Amount | Annotated[list[Amount | None], PerSeat]], Meta(max_length=16)]

#: A plain name: what an id or a name read from a file or the store must be before it
#: becomes part of a path (letters, digits, '.', '_', '-'; no separator, no '..', not hidden).
PLAIN_NAME_RULE = "1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit"
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class ReplayError(Exception):
    """A replay file that cannot be read or does not match the engine; names the file/game."""


def is_plain_name(value: object) -> bool:
    """Whether ``value`` is a :data:`plain name <PLAIN_NAME_RULE>`."""
    return isinstance(value, str) and _PLAIN_NAME.fullmatch(value) is not None and ".." not in value


def plain_name(value: object, *, where: str, field: str) -> str:
    """``value`` if it is a plain name, safe as one component of a path (see
    :data:`PLAIN_NAME_RULE`); else a :class:`ReplayError` naming ``where`` (the file or
    the store it was read from) and ``field``."""
    if is_plain_name(value):
        return value  # type: ignore[return-value]
    shown = repr(value)
    shown = shown[:60] + "…" if len(shown) > 60 else shown
    raise ReplayError(f"{where}: {field} {shown} is not a plain name ({PLAIN_NAME_RULE}); refusing to make a path of it")


class SeatInfo(msgspec.Struct, kw_only=True):
    seat: Seat
    bot: Name  # the bot's name (bot.toml), "dummy" for the dummy seat
    version: Name = ""
    hash: Name = ""  # content hash of the bot's folder


class SeatUsage(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What one seat's bot used in the game, as its sandbox measured it (like ``timing``,
    it differs between reruns). None: not measured (e.g. no sandbox)."""

    seat: Seat
    cpu_ms: Amount | None = None  # CPU time of all the bot's processes during the game
    peak_mb: Amount | None = None  # the peak of their memory during the game, in MiB
    sandbox: Name = "none"  # the level it ran at: none, limits or strict
    limits: Annotated[dict[Name, Amount], Meta(max_length=16)] | None = None  # memory_mb, cpu_s, processes, tmp_mb, open_files


class ActionRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What one seat did in one turn, and what was applied for it."""

    seat: Seat
    cards: Annotated[list[CardId], Meta(max_length=2)]  # the seat's own cards applied, in order
    dummy_card: CardId | None = None  # the card given to the dummy, for its controller
    #: "ok" (the bot's choice), a fault ("timeout", "illegal", "malformed", "protocol",
    #: "crash", "resigned": a seeded fallback was applied), "autopilot" (the seat no longer plays) or "auto"
    #: (the dummy variant's last card, played for the player, R15).
    status: ActionStatus = "ok"
    elapsed_ms: Annotated[float, Meta(ge=0)] | None = None
    bank_ms: Annotated[int, Meta(ge=0)] | None = None  # what was left of the seat's bank after this turn
    message: Text = ""
    debug: Any = None


class TurnRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    round: Round
    turn: Turn
    # every seat's hand before the choice (omniscient); the dummy's pile last
    hands: Annotated[list[Annotated[list[CardId], Meta(max_length=DECK_SIZE)]], PerSeat]
    controller: Seat | None = None
    actions: Annotated[list[ActionRecord], PerSeat]


class FaultRecord(msgspec.Struct, kw_only=True):
    seat: Seat
    round: Round  # 0 for faults outside a turn (hello, game_start, game_over)
    turn: Turn
    kind: FaultKind  # timeout, malformed, protocol, illegal, crash, resigned; autopilot after the last strike
    message: Text


class RoundSummary(msgspec.Struct, kw_only=True):
    # per seat, card kinds in the order they entered the tableau
    tableaus: Annotated[list[Annotated[list[Name], Meta(max_length=2 * DECK_SIZE)]], PerSeat]
    points: Annotated[list[Points], PerSeat]  # per seat, this round's points


class ResultSummary(msgspec.Struct, kw_only=True):
    scores: Annotated[list[Points], PerSeat]
    puddings: Annotated[list[Count], PerSeat]
    ranks: Annotated[list[Rank], PerSeat]  # the arena's ranks: seats that ended on autopilot below the others
    rules_ranks: Annotated[list[Rank], PerSeat]  # the ranks by the rules alone (R13)
    pudding_points: Annotated[list[Points], PerSeat]
    autopilot: Annotated[list[bool], PerSeat]


class Replay(msgspec.Struct, kw_only=True):
    format: str = REPLAY_FORMAT
    format_version: int = REPLAY_FORMAT_VERSION
    rules_version: Name = RULES_VERSION
    protocol_version: int = 1
    arena_version: Name = ""
    game_id: Name  # a plain name (read_replay checks it): it names the replay's file
    seed: Annotated[int, Meta(ge=0, le=2**63 - 1)]
    ids: Annotated[int, Meta(ge=0, le=2**63 - 1)] | None = None  # the card ids' labelling (new_game's ids); None: the ids of the seed
    players: Annotated[int, Meta(ge=2, le=MAX_SEATS)]  # seats at the table (the dummy included, as the last seat)
    variant: Name
    config: Annotated[dict[Name, Any], Meta(max_length=16)]  # GameConfig: players (bots) and variant
    time: TimeValues = {}
    seats: Annotated[list[SeatInfo], PerSeat]
    cards: Annotated[list[Name], Meta(max_length=DECK_SIZE)]  # the kind of every card id: cards[id]
    status: Literal["complete", "void"] = "complete"
    void_reason: Text = ""
    turns: Annotated[list[TurnRecord], Meta(max_length=MAX_TURNS)] = []
    # Each public event as its JSON, kept as read (or as the referee sent it): decoded
    # only when asked for, by event_dicts().
    events: Annotated[list[msgspec.Raw], Meta(max_length=MAX_EVENTS)] = []
    faults: Annotated[list[FaultRecord], Meta(max_length=MAX_FAULTS)] = []
    stderr: Annotated[list[Text], PerSeat] = []  # per seat, the tail of what the bot wrote to stderr
    rounds: Annotated[list[RoundSummary], Meta(max_length=3)] = []
    result: ResultSummary | None = None
    # wall-clock facts; with usage, the only parts that differ between reruns
    timing: TimingValues = {}
    usage: Annotated[list[SeatUsage], PerSeat] = []  # per bot seat (format_version 1 files may lack it)

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
    :meth:`arena.store.database.Store.completed_ids`). gzip's mtime is 0 so that the same game
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


class _Head(msgspec.Struct):
    """The two fields that say what a JSON object is, read before the rest."""

    format: Any = None
    format_version: Any = None


_head_decoder = msgspec.json.Decoder(_Head | list | str | float | bool | None)


def read_bounded(path: Path, limit: int = MAX_REPLAY_BYTES) -> bytes | bytearray:
    """The bytes of the regular file ``path``, gunzipped if they are gzip, never more
    than ``limit`` of them read or decompressed (a file over it is an error, not cut).
    Never blocks or follows: a symbolic link, a FIFO, a device or a folder is refused
    before it is read (opened with O_NOFOLLOW and O_NONBLOCK, then fstat). Raises
    :class:`ReplayError` naming the file."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ReplayError(f"{path}: is a symbolic link, not followed: give the file it points to") from None
        raise ReplayError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ReplayError(f"{path}: not a regular file ({_file_kind(info.st_mode)}); a replay is a file")
        if info.st_size > limit:
            raise ReplayError(f"{path}: not a replay: {info.st_size} bytes, more than a replay can hold ({limit})")
        raw = bytearray()
        while len(raw) <= limit:  # the size can grow while it is read
            chunk = os.read(fd, min(_READ_CHUNK, limit + 1 - len(raw)))
            if not chunk:
                break
            raw += chunk
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise ReplayError(f"{path}: not a replay: more than {limit} bytes")
    if raw[:2] != b"\x1f\x8b":
        return raw
    return _gunzip(path, raw, limit)


def _gunzip(path: Path, raw: bytearray, limit: int) -> bytearray:
    """Decompress every gzip member of ``raw``, in chunks, stopping past ``limit`` bytes."""
    out = bytearray()
    pending = memoryview(raw)
    try:
        while pending:
            d = zlib.decompressobj(wbits=31)  # one gzip member
            while True:
                out += d.decompress(pending, limit + 1 - len(out))  # max_length >= 1: never unbounded
                if len(out) > limit:
                    raise ReplayError(f"{path}: not a replay: it decompresses to more than {limit} bytes")
                pending = memoryview(d.unconsumed_tail) if d.unconsumed_tail else memoryview(d.unused_data)
                if d.eof:
                    break
                if not d.unconsumed_tail:
                    raise ReplayError(f"{path}: not a replay: not a readable gzip file (it ends early)")
    except zlib.error as exc:
        raise ReplayError(f"{path}: not a replay: not a readable gzip file ({exc})") from None
    return out


def _file_kind(mode: int) -> str:
    for test, what in (
        (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "not a file"


def read_replay(path: Path) -> Replay:
    """Read a replay; a file that is not one raises :class:`ReplayError` naming it.
    The one reader of replay files (verify, replay, report, ask and a run's recovery
    all use it): bounded in size (:func:`read_bounded`), in nesting (msgspec's own
    depth limit) and in every number and list (the structs' constraints: a seat, a
    card id, a seed out of range is refused naming the field); its ``game_id`` is a
    plain name."""
    data = read_bounded(path)
    try:
        head = _head_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ReplayError(f"{path}: not a replay: not JSON ({exc})") from None
    except RecursionError:
        raise ReplayError(f"{path}: not a replay: JSON nested too deeply") from None
    if not isinstance(head, _Head):
        raise ReplayError(f"{path}: not a Sushi Go! Arena replay (JSON {_json_kind(head)}, not an object)")
    form = head.format
    if form != REPLAY_FORMAT:
        if not isinstance(form, str):
            what = 'no "format" field' if form is None else '"format" is not a string'
        else:
            what = f"format is {form[:40]!r}" + ("…" if len(form) > 40 else "")
        raise ReplayError(f"{path}: not a Sushi Go! Arena replay ({what})")
    version = head.format_version
    if not isinstance(version, int) or isinstance(version, bool):
        raise ReplayError(f'{path}: malformed replay: no integer "format_version" field')
    if version > REPLAY_FORMAT_VERSION:
        raise ReplayError(
            f"{path}: replay format version {version!r} is newer than this arena reads "
            f"({REPLAY_FORMAT_VERSION}); upgrade the arena"
        )
    try:
        replay = _decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise ReplayError(f"{path}: malformed replay: {exc}") from None
    except RecursionError:
        raise ReplayError(f"{path}: malformed replay: JSON nested too deeply") from None
    plain_name(replay.game_id, where=str(path), field="game_id")
    return replay


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
    from arena.game.referee import fallback_play  # the referee imports this module

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
    from arena.game.referee import MAX_DEBUG_BYTES  # the referee imports this module

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


def check_game_id(replay: Replay, label: str) -> None:
    """That ``game_id`` is the hash of what decides the game, as the arena makes it: a
    tournament's (rules, variant, players, seed, time settings, each seat's content hash)
    or ``arena play``'s (the same with each seat's name). A replay whose seed, time
    settings or a seat's bot or hash was changed no longer has its own id."""
    from types import SimpleNamespace

    from arena.game.referee import TimeSettings, default_game_id  # both import this module
    from arena.tournament import game_id, seat_identity

    config = _config_of(replay, label)
    try:
        ts = TimeSettings(**replay.time) if replay.time else TimeSettings()
    except (TypeError, ValueError) as exc:
        raise ReplayError(f"{label}: time settings that no run has: {exc}") from None
    bots = replay.seats[: config.players]
    derived = {
        game_id(config, replay.seed, [seat_identity(s.bot, s.hash) for s in bots], ts),
        game_id(config, replay.seed, [s.hash for s in bots], ts),  # before names were in tournament ids
        default_game_id(config, replay.seed, [SimpleNamespace(name=s.bot, content_hash=s.hash) for s in bots], ts),  # type: ignore[misc]
    }
    if replay.game_id not in derived:
        raise ReplayError(
            f"{label}: game_id {replay.game_id} is not the id of this seed, these time settings and these seats' bots "
            "and hashes: one of them was changed"
        )


def fault_counts(replay: Replay) -> list[dict[str, int]]:
    """Per seat, the number of faults of each kind (an autopilot mark is not a fault)."""
    counts = [dict.fromkeys(FAULT_KINDS, 0) for _ in replay.seats]
    for f in replay.faults:
        if f.kind != "autopilot":
            counts[f.seat][f.kind] = counts[f.seat].get(f.kind, 0) + 1
    return counts


def iter_replays(target: Path) -> list[Path]:
    """The replay files of a file or folder: every ``*.json.gz`` entry in the folder and its
    subfolders (not hidden ones), whatever it is — a link, a FIFO or a device is listed,
    so that reading it reports it; links to folders are not followed. A folder with none
    is an error."""
    if not target.is_dir():
        if not os.path.lexists(target):
            raise ReplayError(f"{target}: no such file or folder")
        return [target]
    found: list[Path] = []
    folders = [target]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(Path(entry.path))
                    elif entry.name.endswith(".json.gz"):
                        found.append(Path(entry.path))
        except OSError as exc:
            if folder == target:
                raise ReplayError(f"{folder}: cannot list this folder: {exc.strerror or exc}") from None
            found.append(folder)  # reading it reports why it cannot be listed
    if not found:
        raise ReplayError(f"{target}: no replay (*.json.gz) in this folder")
    return sorted(found)
