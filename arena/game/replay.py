"""Replays: one gzip-compressed JSON file per game (checked by :mod:`arena.game.verify`).

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
    GameState,
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
    log (the referee's way: no event dicts; :func:`arena.game.verify.verify_replay` checks the two agree)."""
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
