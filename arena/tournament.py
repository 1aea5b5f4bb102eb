"""`arena run`: a tournament's schedule played with bounded concurrency, one writer.

What a run does, in order:

1. finds every bot in the bots folder (bad manifests and duplicate names are reported
   and skipped), builds those with a ``build`` step (cached by content hash), and runs
   each one's handshake; a bot that cannot be built, started or understood is reported
   and skipped, the others play on;
2. makes the schedule (:mod:`arena.schedule`) and gives every game its id: a hash of
   what decides the game (rules version, variant, deal seed, each seat's bot as its
   name and content hash, time settings), not of the tournament, so a game already in
   the store, from this run killed half-way or from any earlier run, is never played
   again, and two seatings are two games even of bots with identical files;
3. records from its replay file any game a killed run wrote but did not commit, then
   plays the missing games, ``jobs`` at a time, reusing bot processes across games but
   never within a duplicate set (each bot keeps one process per game of a set);
   each finished game is handed to the one writer, a process of its own
   (:mod:`arena.store.writer`): replay file first, then the database rows;
4. on Ctrl-C (SIGINT) or SIGTERM: the games in flight are abandoned (not recorded),
   the finished ones are kept, every bot process ends, and running the same command
   again resumes.

The whole run holds the results folder's lock (:func:`arena.store.database.results_lock`), and
so does its writer process, which inherits it: a second run on the same folder waits
until the first, and its writer, are done, then plays only what is missing.

Nothing here prints: progress goes to a :class:`Reporter` (the CLI draws it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import signal
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import trio

from arena.bots import BotError
from arena.bots.manifest import BotManifest, discover_bots, prepare_bot
from arena.bots.sandbox import Level, Limits, SandboxSettings, build_in_thread, resolve_level
from arena.engine import GameConfig, Variant
from arena.errors import ArenaError
from arena.game.deals import card_ids
from arena.game.ids import game_id, seat_identity, time_dict
from arena.game.players import DEFAULT_TIME, BotFault, Player, PlayerPool, TimeSettings, open_pool
from arena.game.referee import GameRecord, play_game, record_from_replay
from arena.game.replay import ReplayError, encode_replay, read_replay
from arena.game.verify import check_recorded_game, verify_replay
from arena.schedule import ScheduledGame, games_cap, games_per_set, make_schedule
from arena.store.database import (
    BotRow,
    NewGame,
    Store,
    make_replay_folders,
    open_store,
    replay_relpath,
    results_lock,
)
from arena.store.rows import game_row
from arena.store.writer import StoreWriter

SEATINGS = ("rotations", "all")


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Everything that decides a tournament (and where it is written)."""

    bots_dir: Path
    results: Path = Path("results")
    players: int | None = None  # default: 4, or the number of bots if fewer
    variant: Variant = Variant.STANDARD
    deals: int = 1
    seatings: str = "rotations"
    games: int | None = None
    seed: int = 0
    gauntlet: str | None = None
    jobs: int | None = None  # default: about cores ÷ seats per game, at least 1
    time: TimeSettings = DEFAULT_TIME
    name: str | None = None  # the tournament's id; default derived from the settings
    sandbox: SandboxSettings | None = None  # None: strict where the machine supports it, else limits
    cluster: str | None = None  # play the games on Dask: a scheduler's address or local:N (arena.cluster)
    record: bool = True  # False: play the games without storing them (only for measuring the store's cost)

    def format_players(self, n_bots: int) -> int:
        if self.players is not None:
            return self.players
        if self.variant is Variant.DUMMY:
            return 2
        return max(2, min(4, n_bots))

    def schedule_config(self, players: int) -> dict[str, Any]:
        """The settings that decide which games are played (the tournament's identity)."""
        return {
            "players": players,
            "variant": self.variant.value,
            "deals": self.deals,
            "seatings": self.seatings,
            "games": self.games,
            "seed": self.seed,
            "gauntlet": self.gauntlet,
            "time": time_dict(self.time),
        }

    def tournament_id(self, players: int) -> str:
        if self.name:
            return self.name
        digest = hashlib.blake2b(json.dumps(self.schedule_config(players), sort_keys=True).encode(), digest_size=3)
        base = self.bots_dir.resolve().name or "bots"
        return f"{base}-{players}p-{self.variant.value}-{digest.hexdigest()}"


def default_jobs(seats: int) -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, seats))


def default_sandbox() -> SandboxSettings:
    """``strict`` where the machine supports it, else ``limits`` (logging why, once)."""
    level, warning = resolve_level(None)
    if warning:
        _log_once(warning)
    return SandboxSettings(level)


_warned: set[str] = set()


def _log_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        logging.getLogger(__name__).warning("%s", message)


# -- the config file --------------------------------------------------------------------

_CONFIG_KEYS: dict[str, type | tuple[type, ...]] = {
    "bots": str,
    "results": str,
    "players": int,
    "variant": str,
    "deals": int,
    "seatings": str,
    "games": int,
    "seed": int,
    "gauntlet": str,
    "jobs": int,
    "hello_ms": int,
    "turn_ms": int,
    "bank_ms": int,
    "time_scale": (int, float),
    "no_timeout": bool,
    "name": str,
    "anchor": str,
    "sandbox": (str, dict),
    "limits": dict,
    "toolchains": list,
    "build_timeout_s": (int, float),
    "build_mb": int,
    "build_files": int,
    "build_memory_mb": int,
    "build_processes": int,
    "build_tmp_mb": int,
    "cluster": str,
}


def load_config(path: Path) -> dict[str, Any]:
    """A competition's settings from a TOML file: any of `arena run`'s options, by
    their long names with ``_`` for ``-`` (``turn_ms = 500``), at the top level or
    under ``[run]``. Paths are relative to the file's folder. Unknown keys and wrong
    types are errors naming the file and the key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ArenaError(f"{path}: cannot read the config file: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ArenaError(f"{path}: not valid TOML: {exc}") from None
    if isinstance(data.get("run"), dict):
        data = {**{k: v for k, v in data.items() if k != "run"}, **data["run"]}
    if isinstance(data.get("sandbox"), dict):
        data = _sandbox_table(path, data)
    out: dict[str, Any] = {}
    for key, value in data.items():
        norm = key.replace("-", "_")
        if norm not in _CONFIG_KEYS:
            known = ", ".join(sorted(_CONFIG_KEYS))
            raise ArenaError(f"{path}: unknown setting {key!r} (known: {known})")
        want = _CONFIG_KEYS[norm]
        if isinstance(value, bool) and want is not bool or not isinstance(value, want):
            names = " or ".join(t.__name__ for t in (want if isinstance(want, tuple) else (want,)))
            raise ArenaError(f"{path}: setting {key!r} must be {names}, not {type(value).__name__} ({value!r})")
        if norm == "limits" and isinstance(value, dict) and value.keys() & _BUILD_CAPS:
            # The caps on a bot's build may also sit with the other caps.
            value = dict(value)
            for name in sorted(value.keys() & _BUILD_CAPS):
                cap = value.pop(name)
                if name != "build_timeout_s" and (isinstance(cap, bool) or not isinstance(cap, int)):
                    raise ArenaError(f"{path}: limits.{name} must be a positive whole number, not {cap!r}")
                _check_config_value(path, f"limits.{name}", name, cap)
                out[name] = cap
        _check_config_value(path, key, norm, value)
        if norm in ("bots", "results"):
            value = str((path.parent / value).resolve()) if not Path(value).is_absolute() else value
        if norm == "toolchains":
            value = [str((path.parent / v).resolve()) for v in value]
        out[norm] = value
    return out


def _sandbox_table(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """A config's ``[sandbox]`` table (``level = "strict"``, ``expose = [...]``: host
    folders shown read-only to every bot) folded into the flat settings: ``level`` is
    ``sandbox``, ``expose`` adds to ``toolchains`` (its older name)."""
    table = data["sandbox"]
    unknown = sorted(set(table) - {"level", "expose"})
    if unknown:
        raise ArenaError(f"{path}: unknown setting {unknown[0]!r} in the sandbox table (known: expose, level)")
    flat = {k: v for k, v in data.items() if k != "sandbox"}
    if "level" in table:
        flat["sandbox"] = table["level"]
    if "expose" in table:
        expose = table["expose"]
        if not isinstance(expose, list):
            raise ArenaError(f"{path}: sandbox.expose must be a list of folders, not {type(expose).__name__} ({expose!r})")
        for v in expose:
            if not isinstance(v, str) or not (path.parent / v).is_dir():
                raise ArenaError(f"{path}: sandbox.expose must list folders to show every bot, and {v!r} is not a folder")
            if os.path.realpath(path.parent / v) == "/":
                raise ArenaError(f"{path}: sandbox.expose lists '/': that would show every bot the whole machine")
        old = flat.get("toolchains", [])
        flat["toolchains"] = [*(old if isinstance(old, list) else [old]), *expose]
    return flat


# The caps on a bot's build step (also accepted within [limits]).
_BUILD_CAPS = {"build_timeout_s", "build_mb", "build_files", "build_memory_mb", "build_processes", "build_tmp_mb"}
#: The build limits apart from a bot's game limits, and the field of Limits each sets.
_BUILD_LIMITS = {"build_memory_mb": "memory_mb", "build_processes": "processes", "build_tmp_mb": "tmp_mb"}

# The bounds of `arena run`'s options, for the same settings given in a config file.
_CONFIG_MINIMUM: dict[str, int | float] = {
    "build_mb": 1, "build_files": 1, "build_memory_mb": 16, "build_processes": 8, "build_tmp_mb": 1,
    "deals": 1, "games": 1, "seed": 0, "jobs": 1, "hello_ms": 1, "turn_ms": 1, "bank_ms": 0, "time_scale": 0.001,
}
_CONFIG_CHOICES: dict[str, tuple[str, ...]] = {
    "variant": tuple(v.value for v in Variant),
    "seatings": SEATINGS,
    "sandbox": tuple(lv.value for lv in Level),
}


def _check_config_value(path: Path, key: str, norm: str, value: Any) -> None:
    """A config file's value checked where it is read, so that a mistake in it is
    reported as the file's and the key's (the same mistake as a flag names the flag)."""
    where = f"{path}: {key}"
    if norm in _CONFIG_CHOICES and value not in _CONFIG_CHOICES[norm]:
        raise ArenaError(f"{where} must be one of {', '.join(_CONFIG_CHOICES[norm])}, not {value!r}")
    if norm == "toolchains":
        for v in value:
            if not isinstance(v, str) or not (path.parent / v).is_dir():
                raise ArenaError(f"{where} must list the folders of toolchains to show every bot, and {v!r} is not a folder")
    if norm == "build_timeout_s" and (isinstance(value, bool) or not (isinstance(value, int | float) and 0 < value < math.inf)):
        raise ArenaError(f"{where} must be a positive, finite number of seconds, not {value!r}")
    if norm == "players" and not 2 <= value <= 5:
        raise ArenaError(f"{where} must be from 2 to 5, not {value!r}")
    if norm in _CONFIG_MINIMUM and not value >= _CONFIG_MINIMUM[norm]:  # `not >=`: NaN too
        raise ArenaError(f"{where} must be at least {_CONFIG_MINIMUM[norm]:g}, not {value!r}")
    if norm == "limits":
        try:
            # (No "[limits]" in the message: the CLI prints errors as Rich markup, which would eat it.)
            Limits.from_table(value, f"{path}: the run's caps on bots' limits")
        except ValueError as exc:
            raise ArenaError(str(exc)) from None
    if norm == "anchor":
        bot, sep, elo = value.partition("=")
        try:
            if not sep or not bot or not math.isfinite(float(elo)):
                raise ValueError
        except ValueError:
            raise ArenaError(f"{where} takes BOT=ELO, e.g. {key} = \"greedy=1500\"; not {value!r}") from None
    if norm == "cluster":
        from arena.cluster import parse_cluster  # Dask itself is imported only to play

        try:
            parse_cluster(value)
        except ArenaError as exc:
            raise ArenaError(f"{path}: {key}{str(exc).removeprefix('--cluster')}") from None


# -- progress ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot that takes part in the run."""

    manifest: BotManifest
    row: BotRow
    startup_ms: float

    @property
    def name(self) -> str:
        return self.manifest.name


@dataclass(frozen=True, slots=True)
class Skipped:
    name: str
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Plan:
    tournament_id: str
    players: int
    variant: str
    total: int  # games in the schedule
    already: int  # of those, already in the store
    jobs: int
    games_note: str = ""  # what --games N came to, and why, when it is not N


class Reporter(Protocol):
    def bot_ready(self, entrant: Entrant) -> None: ...
    def bot_skipped(self, skipped: Skipped) -> None: ...
    def planned(self, plan: Plan) -> None: ...
    def game_done(self, game: ScheduledGame, record: GameRecord, done: int, total: int) -> None: ...


class SilentReporter:
    def bot_ready(self, entrant: Entrant) -> None:
        pass

    def bot_skipped(self, skipped: Skipped) -> None:
        pass

    def planned(self, plan: Plan) -> None:
        pass

    def game_done(self, game: ScheduledGame, record: GameRecord, done: int, total: int) -> None:
        pass


@dataclass(slots=True)
class RunSummary:
    tournament_id: str
    results: Path
    players: int
    variant: str
    entrants: list[Entrant]
    skipped: list[Skipped]
    total: int
    already: int  # recorded before this run started its games (recovered ones included)
    played: int = 0
    recovered: int = 0  # of those, recorded now from replay files a killed run left
    void: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    play_seconds: float = 0.0  # the games themselves (after every bot's start)
    store_seconds: float = 0.0  # wall time the writer spent on replays and database rows
    store_cpu_seconds: float = 0.0  # CPU time of that writing
    play_cpu_seconds: float = 0.0  # CPU time of the whole arena process while the games ran
    void_reasons: list[str] = field(default_factory=list)
    games_note: str = ""  # what --games N came to, and why, when it is not N

    @property
    def done(self) -> int:
        return self.already + self.played


# -- running ----------------------------------------------------------------------------


def run_tournament(
    settings: RunSettings,
    reporter: Reporter | None = None,
    *,
    hold: contextlib.ExitStack | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> RunSummary:
    """Run (or resume) the tournament these settings describe; returns what happened.
    Raises :class:`ArenaError` for what the user must fix (no bots, bad settings);
    a bot's failure is never an error of the run.

    The run holds the results folder's lock (:func:`arena.store.database.results_lock`; ``on_wait``
    is told whom it waits for), taken once the settings and the bots folder are found
    good. With ``hold``, the lock is entered on that stack and stays held until the
    caller closes it (to write the leaderboard and the report as the same writer)."""
    rep = reporter or SilentReporter()
    if settings.cluster is not None:  # only then is Dask needed: fail before any work if it is missing
        from arena.cluster import check_reachable, parse_cluster, require_dask

        target = parse_cluster(settings.cluster)
        require_dask()
        check_reachable(target)
    if settings.seatings not in SEATINGS:
        raise ArenaError(f"--seatings must be one of {', '.join(SEATINGS)}, not {settings.seatings!r}")
    if settings.deals < 1:
        raise ArenaError(f"--deals must be at least 1, not {settings.deals}")
    try:
        manifests, errors = discover_bots(settings.bots_dir)
    except BotError as exc:
        raise ArenaError(str(exc)) from None
    with contextlib.ExitStack() as own:
        lock = (own if hold is None else hold).enter_context(results_lock(settings.results, "arena run", on_wait=on_wait))
        store = open_store(settings.results)
        try:
            return trio.run(_Run(settings, store, rep, manifests, errors, lock_fd=lock.fd).main)
        finally:
            store.close()


class _Run:
    def __init__(
        self,
        settings: RunSettings,
        store: Store,
        reporter: Reporter,
        manifests: list[BotManifest],
        errors: list[tuple[Path, str]],
        *,
        lock_fd: int | None = None,
    ) -> None:
        self.s = settings
        self.lock_fd = lock_fd  # the results folder's lock, handed to the writer
        self.sandbox = settings.sandbox or default_sandbox()
        self.store = store
        self.rep = reporter
        self.manifests = manifests
        self.skipped = [Skipped(p.name.split(".")[0], str(p), msg) for p, msg in errors]
        self.idle: dict[str, list[Player]] = {}
        self.specs: dict[str, Any] = {}
        self.entrants: dict[str, Entrant] = {}
        self.writer: StoreWriter | _NullWriter | None = None
        # The store's secret: every deal seed, set id and card labelling of this run is keyed
        # with it, so that the same store and seed give the same games and no bot can compute one.
        self.key = store.deal_key()
        self.processes_per_bot = 1  # set once the format is known (see _take)

    async def main(self) -> RunSummary:
        t0 = time.monotonic()
        for sk in self.skipped:
            self.rep.bot_skipped(sk)
        ts = self.s.time
        # The writer starts first, so that its start overlaps the bots': it is ready
        # when the games begin.
        self.writer = StoreWriter(self.s.results, self._frame, lock_fd=self.lock_fd) if self.s.record else _NullWriter()
        try:
            return await self._main(t0, ts)
        finally:
            with trio.CancelScope(shield=True):  # every finished game reaches the store
                await trio.to_thread.run_sync(self.writer.close)

    async def _main(self, t0: float, ts: TimeSettings) -> RunSummary:
        assert self.writer is not None
        if self.s.players is not None:  # a format that cannot be: said before any bot starts
            try:
                GameConfig(self.s.players, self.s.variant)
            except ValueError as exc:
                raise ArenaError(str(exc)) from None
        async with open_pool() as pool:
            await self._enter_bots(pool, ts)
            names = sorted(self.entrants)
            players = self.s.format_players(len(names))
            try:
                config = GameConfig(players, self.s.variant)
            except ValueError as exc:
                raise ArenaError(str(exc)) from None
            if len(names) < max(2, players):
                found = ", ".join(names) or "none"
                why = "; ".join(f"{k.name}: {k.reason}" for k in self.skipped)
                raise ArenaError(
                    f"{self.s.bots_dir}: {len(names)} bot(s) ready ({found}), a {players}-player tournament needs at "
                    f"least {max(2, players)}" + (f" — skipped: {why}" if why else "")
                )
            tid = self.s.tournament_id(players)
            cfg = {**self.s.schedule_config(players), "bots_dir": str(self.s.bots_dir)}
            await trio.to_thread.run_sync(self._register, tid, players, cfg)
            try:
                schedule = make_schedule(
                    names,
                    players=players,
                    deals=self.s.deals,
                    seatings=self.s.seatings,
                    games=self.s.games,
                    seed=self.s.seed,
                    gauntlet=self.s.gauntlet,
                    key=self.key,
                )
            except ValueError as exc:
                raise ArenaError(str(exc)) from None
            ids = [game_id(config, g.seed, [seat_identity(b, self.entrants[b].row.hash) for b in g.seats], ts) for g in schedule]
            if len(set(ids)) != len(ids):  # one id, one play, one row: never two games under one name
                twice = next(g for g in ids if ids.count(g) > 1)
                raise ArenaError(f"tournament {tid}: the schedule holds game {twice} twice (the same deal and seating)")
            done_ids = await trio.to_thread.run_sync(self.store.completed_ids, ids)
            set_of = {gid: g.set_id for g, gid in zip(schedule, ids, strict=True) if gid in done_ids}
            await trio.to_thread.run_sync(self.store.link_games, tid, sorted(done_ids), set_of)
            todo = [(g, gid) for g, gid in zip(schedule, ids, strict=True) if gid not in done_ids]
            recovered: set[str] = set()
            if self.s.record and todo:
                recovered = await trio.to_thread.run_sync(self._recover, tid, config, todo)
                todo = [(g, gid) for g, gid in todo if gid not in recovered]
            jobs = self.s.jobs or default_jobs(config.seats)
            jobs = max(1, min(jobs, len(todo))) if todo else max(1, jobs)
            # A process never plays two games of one duplicate set (play_game restarts it);
            # a bot keeps as many processes as a set has games (up to the players, plus one per
            # extra job), each playing one game of every set, so that steady play restarts none.
            self.processes_per_bot = min(games_per_set(players, self.s.seatings), players) + jobs - 1
            summary = RunSummary(
                tournament_id=tid,
                results=self.s.results,
                players=players,
                variant=self.s.variant.value,
                entrants=[self.entrants[n] for n in names],
                skipped=list(self.skipped),
                total=len(schedule),
                already=len(schedule) - len(todo),
                recovered=len(recovered),
            )
            cap = games_cap(
                len(names), players=players, deals=self.s.deals, seatings=self.s.seatings, games=self.s.games,
                gauntlet=self.s.gauntlet,
            )
            if cap is not None and cap.note:
                summary.games_note = f"--games {cap.asked} comes to {cap.games} games: {cap.note}"
            plan = Plan(tid, players, self.s.variant.value, summary.total, summary.already, jobs, summary.games_note)
            if self.s.cluster is None:  # a cluster run reports it once the cluster's size is known
                self.rep.planned(plan)
            t_play, c_play = time.monotonic(), time.process_time()
            await trio.to_thread.run_sync(make_replay_folders, self.s.results)
            try:
                if self.s.cluster is None:
                    await self._play_all(pool, config, tid, todo, jobs, summary)
                else:
                    from arena.cluster import play_on_cluster

                    await play_on_cluster(self, config, tid, todo, summary, plan)
            finally:
                with trio.CancelScope(shield=True):  # every finished game reaches the store
                    await trio.to_thread.run_sync(self.writer.close)
            summary.play_seconds = time.monotonic() - t_play
            summary.play_cpu_seconds = time.process_time() - c_play + self.writer.cpu  # the writer's process too
            summary.store_seconds = self.writer.busy
            summary.store_cpu_seconds = self.writer.cpu
            if self.writer.error is not None:
                raise self.writer.error
        summary.seconds = time.monotonic() - t0
        return summary

    def _register(self, tid: str, players: int, cfg: Mapping[str, Any]) -> None:
        self.store.tournament(tid, players, self.s.variant.value, cfg)
        self.store.set_entrants(
            tid, [e.row for e in self.entrants.values()], [(k.name, k.path, k.reason) for k in self.skipped]
        )

    async def _enter_bots(self, pool: PlayerPool, ts: TimeSettings) -> None:
        """Build and start every bot once (the handshake); keep the started process
        for the first game. Bots are entered one at a time, so that start-up times
        are measured on a quiet machine."""
        build_cache = self.s.results / "build"
        for m in self.manifests:
            try:
                spec = await build_in_thread(prepare_bot, m, build_cache, self.sandbox)
            except BotError as exc:
                self._skip(m, f"build failed: {exc}")
                continue
            row = await trio.to_thread.run_sync(self.store.bot, m.name, m.version, m.content_hash, str(m.path))
            player = pool.player(spec, version=m.version, content_hash=m.content_hash)
            t = trio.current_time()
            try:
                await player.start(ts)
            except BotFault as fault:
                tail = player.stderr_tail().strip().splitlines()[-3:]
                self._skip(m, f"cannot start ({fault.kind}): {fault.message}" + (f" — stderr: {' | '.join(tail)}" if tail else ""))
                await player.close()
                continue
            self.specs[m.name] = spec
            self.idle.setdefault(m.name, []).append(player)
            entrant = Entrant(m, row, round(1000 * (trio.current_time() - t), 1))
            self.entrants[m.name] = entrant
            self.rep.bot_ready(entrant)

    def _skip(self, m: BotManifest, reason: str) -> None:
        sk = Skipped(m.name, str(m.path), reason)
        self.skipped.append(sk)
        self.rep.bot_skipped(sk)

    def _take(self, pool: PlayerPool, name: str, seed: int) -> Player:
        """A player of bot ``name`` for a game of the deal ``seed``: an idle one whose process
        has not seen that deal, else a new one while the bot has fewer than
        ``processes_per_bot``, else an idle one (:func:`play_game` restarts it)."""
        free = self.idle.setdefault(name, [])
        for i in range(len(free) - 1, -1, -1):
            if not free[i].has_seen(seed):
                return free.pop(i)
        owned = sum(1 for p in pool.players if p.name == name)
        if free and owned >= self.processes_per_bot:
            return free.pop()
        e = self.entrants[name]
        return pool.player(self.specs[name], version=e.manifest.version, content_hash=e.manifest.content_hash)

    async def _play_all(
        self,
        pool: PlayerPool,
        config: GameConfig,
        tid: str,
        todo: list[tuple[ScheduledGame, str]],
        jobs: int,
        summary: RunSummary,
    ) -> None:
        queue = iter(todo)
        done = summary.already

        writer = self.writer
        assert writer is not None

        async def worker() -> None:
            nonlocal done
            for game, gid in queue:  # a shared iterator: each game goes to one worker
                if writer.error is not None:
                    return  # the store failed: stop, the error is raised once all have stopped
                players = [self._take(pool, name, game.seed) for name in game.seats]
                try:
                    record = await play_game(
                        players, config, game.seed, time_settings=self.s.time, game_id=gid, ids=card_ids(self.key, gid)
                    )
                finally:
                    for name, p in zip(game.seats, players, strict=True):
                        self.idle[name].append(p)
                writer.submit(tid, game, record, config)
                if record.status == "void":
                    summary.void += 1
                    summary.void_reasons.append(f"game {gid}: {record.void_reason.splitlines()[0]}")
                else:
                    summary.played += 1
                    done += 1
                self.rep.game_done(game, record, done, summary.total)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_signals, nursery.cancel_scope, summary, pool)
            async with trio.open_nursery() as games:
                for _ in range(jobs):
                    games.start_soon(worker)
            nursery.cancel_scope.cancel()  # all played: stop watching signals

    async def _watch_signals(self, scope: trio.CancelScope, summary: RunSummary, pool: PlayerPool) -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                summary.interrupted = True
                pool.hurry()  # every bot ends at once, not with a run's polite graces
                scope.cancel()
                return

    def _recover(self, tid: str, config: GameConfig, todo: Sequence[tuple[ScheduledGame, str]]) -> set[str]:
        """Games to play whose replay file is there but whose row is not (the arena was
        killed after writing the file and before committing the row): each file is trusted
        only once it is the very game expected (id, seed, format, time settings, and every
        seat's bot, version and content hash) and re-simulating it re-derives every outcome
        it records (:func:`verify_replay`); it is then recorded from its file instead of
        being played again. A file that fails is reported (a warning naming it and why) and
        the game is played again, overwriting it: the game was never recorded, the bots are
        at hand, and a game played now is one to trust (voiding it would only have the next
        run play it). Returns the ids recorded."""
        found: list[tuple[str, ScheduledGame, GameRecord, GameConfig]] = []
        for game, gid in todo:
            path = self.s.results / replay_relpath(gid)
            if not os.path.lexists(path):
                continue
            try:
                replay = read_replay(path)
                if replay.game_id != gid:
                    raise ReplayError(f"{path}: it holds game {replay.game_id}")
                verify_replay(replay, name=str(path))
                entrants = [self.entrants[name] for name in game.seats]
                check_recorded_game(
                    replay, label=str(path), seed=game.seed, players=config.players, variant=config.variant.value,
                    bots=[(e.name, e.manifest.version, e.row.hash) for e in entrants], time=time_dict(self.s.time),
                )
                record = record_from_replay(replay)
            except (ReplayError, ValueError, KeyError) as exc:
                logging.getLogger(__name__).warning("%s: not recovered, the game is played again (%s)", path, exc)
                continue
            found.append((tid, game, record, config))
        if found:
            self._commit_games(found)
        return {item[2].game_id for item in found}

    def _frame(self, item: tuple[str, ScheduledGame, GameRecord, GameConfig]) -> tuple[str, NewGame, str, bytes]:
        """What the writer records for a finished game: its row and its replay's JSON."""
        tid, game, record, config = item
        return tid, self._new_game(game, record, config), replay_relpath(record.game_id), encode_replay(record.replay)

    def _commit_games(self, items: Sequence[tuple[str, ScheduledGame, GameRecord, GameConfig]]) -> None:
        """The rows of games whose replays are written, in one transaction."""
        with self.store.batch():
            for tid, game, record, config in items:
                self.store.add_game(self._new_game(game, record, config), tid)

    def _new_game(self, game: ScheduledGame, record: GameRecord, config: GameConfig) -> NewGame:
        return game_row(record, game.set_id, [self.entrants[name].row.id for name in game.seats], time_dict(self.s.time))


class _NullWriter:
    """The writer of a run that records nothing (the store's cost measured by its absence)."""

    error: ArenaError | None = None
    busy = cpu = 0.0

    def submit(self, *item: Any) -> None:
        pass

    def close(self) -> None:
        pass


def settings_from(options: Mapping[str, Any], *, base: RunSettings | None = None) -> RunSettings:
    """RunSettings from option values (None = not given), over ``base``."""
    s = base or RunSettings(bots_dir=Path("."))
    changes: dict[str, Any] = {}
    for key in ("players", "deals", "seatings", "games", "seed", "gauntlet", "jobs", "name", "cluster"):
        if options.get(key) is not None:
            changes[key] = options[key]
    if options.get("bots") is not None:
        changes["bots_dir"] = Path(options["bots"])
    if options.get("results") is not None:
        changes["results"] = Path(options["results"])
    if options.get("variant") is not None:
        try:
            changes["variant"] = Variant(options["variant"])
        except ValueError:
            raise ArenaError(
                f"variant must be one of {', '.join(v.value for v in Variant)}, not {options['variant']!r}"
            ) from None
    if any(options.get(k) is not None for k in ("sandbox", "limits", "toolchains", *_BUILD_CAPS)):
        base_sandbox = s.sandbox or SandboxSettings()
        try:
            level = resolve_level(options["sandbox"])[0] if options.get("sandbox") is not None else base_sandbox.level
            caps = Limits.from_table(options["limits"], "the run's caps on bots' limits", base_sandbox.caps) if options.get("limits") else base_sandbox.caps
        except ValueError as exc:
            raise ArenaError(str(exc)) from None
        toolchains = tuple(options["toolchains"]) if options.get("toolchains") is not None else base_sandbox.toolchains
        build_cap = float(min(options.get("build_timeout_s") or base_sandbox.build_timeout_s, 10**15))
        build_size = {k: min(int(options[k]), 10**9) for k in ("build_mb", "build_files") if options.get(k) is not None}
        build_limits = replace(
            base_sandbox.build_limits,
            **{field_: min(int(options[k]), 10**6) for k, field_ in _BUILD_LIMITS.items() if options.get(k) is not None},
        )
        changes["sandbox"] = replace(
            base_sandbox, level=level, caps=caps, toolchains=toolchains, build_timeout_s=build_cap,
            build_limits=build_limits, **build_size
        )
    time_changes = {k: options[k] for k in ("hello_ms", "turn_ms", "bank_ms", "time_scale", "no_timeout") if options.get(k) is not None}
    if time_changes:
        try:
            changes["time"] = replace(s.time, **time_changes)
        except ValueError as exc:
            raise ArenaError(str(exc)) from None
    return replace(s, **changes)

