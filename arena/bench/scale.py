"""`arena bench scale`: the league-scale figures, each against its target, in one run.

Everything a user waits for is measured as the user runs it: the ``arena`` command in a
subprocess (this same arena, ``python -m arena``), its wall time, its stderr lines
timestamped as they come, and its resident memory read from ``/proc`` (the arena's own
process: not its store writer, not the bots). The bots are copies of the instant C bot
of :mod:`arena.bench.referee`, at ``--sandbox none``, so that what is measured is the
arena's bookkeeping, not the bots or their confinement.

- **memory flat**: a real ``arena run`` of ``games`` games among ``run_bots`` bots, its RSS
  sampled against the games played (from its one line per game): RSS after 1,000 games
  (or half the run, for a short one) against RSS after the last, the slope in bytes per
  game between them, and the peak (the end-of-run leaderboard and report included).
- **schedule streamed**: ``arena run`` of a ``bots``-bot round-robin, with ``--games`` and
  without, stopped (as by Ctrl-C) once its first game is done: the time from the last
  bot's start to the first game, and the memory the run took on in that time (the
  schedule, its ids, the resume check). A run that reaches no game within
  ``schedule_timeout`` seconds, or grows past ``memory_cap``, is stopped and reported so.
- **report incremental**: the store of a ``report_bots``-bot tournament filled with
  ``stored`` games (and another with a quarter of them), its report written, then ``k``
  more games added, twice (``k`` from ``added``): the time of ``arena report`` after each
  addition. The end of a run is this (the standings and the report) plus the
  leaderboard files. Then ``arena report`` once more with nothing new: its wall time and
  the time it says the report took (the interpreter's start-up aside).
- **resume instant**: ``arena run`` again with the same arguments on the full store of
  ``report_bots`` bots, nothing left to play: the whole command's wall time, report included.
- **ratings fast**: ``arena leaderboard`` on a store of ``stored`` games among ``bots`` bots
  (stopped after ``leaderboard_timeout_s``), cold, and again once the standings are kept in
  the store (as the end of ``arena run`` keeps them): the same table, read instead of fitted.
- **live table**: the same short run twice, interleaved with a quiet one: once with the
  console taken for a terminal (``TTY_COMPATIBLE=1``: the progress bar and live table),
  once ``--quiet``; the share is ``1 - quiet ÷ terminal`` wall time.

The stores are filled without playing (100,000 games of bots would take hours): every
game is a real game of the engine, among seats making uniformly random legal plays
(seeded by the game's id), recorded exactly as a run records a game of the same
schedule: the same game ids, seeds, card labelling, rows and replay files, through the
store's own writer process (:class:`arena.store.writer.StoreWriter`). ``arena run`` with
the same arguments then finds every game played: the resume figure checks that it does.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from arena import __version__
from arena.bench.tournament import make_instant_bots, scratch_folder
from arena.bots.manifest import discover_bots
from arena.engine import (
    KINDS,
    GameConfig,
    Variant,
    apply_turn,
    legal_plays,
    new_game,
    result,
)
from arena.errors import ArenaError
from arena.game.acts import ActWriter
from arena.game.deals import card_ids
from arena.game.ids import game_id, seat_identity, time_dict
from arena.game.players import TimeSettings
from arena.game.record import GameRecord
from arena.game.replay import (
    FAULT_KINDS,
    ActionRecord,
    Replay,
    ResultSummary,
    SeatInfo,
    SeatUsage,
    TurnRecord,
    encode_replay,
    summarize_log,
)
from arena.store.database import make_replay_folders, replay_relpath
from arena.store.lock import results_lock
from arena.store.opening import open_store
from arena.store.rows import game_row
from arena.store.writer import StoreWriter
from arena.tournament.runner import schedule_identity
from arena.tournament.schedule import make_schedule
from arena.tournament.settings import RunSettings
from arena.tournament.standings import standings

PLAYERS = 4
#: Generous budgets (the bots are instant): no game of the bench ever times out.
TIME = TimeSettings(hello_ms=30_000, turn_ms=10_000, bank_ms=60_000)
SANDBOX = "none"
#: The arena as this process imports it, for the subprocesses (whatever their current folder).
_ARENA_ROOT = str(Path(__file__).resolve().parents[2])
_GAME_LINE = re.compile(r"^\[(\d+)/(\d+)\] game ")
_RUN_DONE = re.compile(r"^\d+ game\(s\) played, .* in (\d+(?:\.\d+)?) s ")
_PLANNED = re.compile(r"^tournament \S+: .*?(\d+) games \((\d+) already played, (\d+) to play\)")
MIB = 1024 * 1024
#: The games played at which the memory figure gives the RSS (those the run reaches).
_MILESTONES = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000)
#: The parts of the bench, for --only.
PARTS = ("memory", "schedule", "report", "ratings", "live")


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured figure beside its target; ``passed`` is None where the run was too
    small for the target to apply (the note says at what size it does)."""

    name: str
    value: float | None
    unit: str
    target: str
    passed: bool | None
    note: str = ""


@dataclass(slots=True)
class ScaleBench:
    bots: int
    run_bots: int
    report_bots: int
    games: int
    stored: int
    figures: list[Figure] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "bots": self.bots,
            "run_bots": self.run_bots,
            "report_bots": self.report_bots,
            "games": self.games,
            "stored": self.stored,
            "figures": [asdict(f) for f in self.figures],
            "details": self.details,
        }


# -- the arena command in a subprocess --------------------------------------------------


@dataclass(slots=True)
class Command:
    """One ``arena`` command as it ran: wall seconds, every stderr line with the second it
    came and the arena's RSS then, RSS samples against games done, the peak RSS."""

    seconds: float
    code: int | None
    lines: list[tuple[float, int, str]]  # (seconds since the start, RSS bytes, line)
    samples: list[tuple[float, int, int]]  # (seconds, games done, RSS bytes)
    peak: int  # the highest RSS (VmHWM) read while it ran
    stopped: str = ""  # why the bench stopped it, if it did

    def first(self, pattern: re.Pattern[str] | str) -> tuple[float, int, str] | None:
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern
        return next((entry for entry in self.lines if rx.search(entry[2])), None)

    def last(self, pattern: str) -> tuple[float, int, str] | None:
        rx = re.compile(pattern)
        return next((entry for entry in reversed(self.lines) if rx.search(entry[2])), None)


def _memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, in bytes; (0, 0) once it is gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith(b"VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return rss, hwm


def run_arena(
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    stop_when: Callable[[str], bool] | None = None,
    timeout_s: float | None = None,
    memory_cap: int | None = None,
    sample_s: float = 0.1,
) -> Command:
    """Run ``arena ARGS`` (this arena) to its end, or until ``stop_when`` accepts one of its
    stderr lines or ``timeout_s`` passes: it is then interrupted as by Ctrl-C (SIGINT to its
    process group), and killed 15 s later if still there; or until its RSS exceeds
    ``memory_cap``: its process group is then killed at once."""
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, (_ARENA_ROOT, os.environ.get("PYTHONPATH"))))
    full_env.setdefault("COLUMNS", "132")
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=full_env,
        start_new_session=True,
    )
    lines: list[tuple[float, int, str]] = []
    samples: list[tuple[float, int, int]] = []
    done = 0
    peak = 0
    stop = threading.Event()

    def read() -> None:
        nonlocal done
        assert proc.stderr is not None
        for raw in proc.stderr:
            t = time.monotonic() - t0
            line = raw.decode("utf-8", "replace").rstrip("\n")
            m = _GAME_LINE.match(line)
            if m:
                done = int(m.group(1))
            lines.append((t, _memory(proc.pid)[0], line))
            if stop_when is not None and stop_when(line):
                stop.set()

    reader = threading.Thread(target=read, name="bench-scale-stderr", daemon=True)
    reader.start()
    stopped = ""
    while proc.poll() is None:
        rss, hwm = _memory(proc.pid)
        peak = max(peak, hwm)
        samples.append((time.monotonic() - t0, done, rss))
        if not stopped:
            if stop.is_set():
                stopped = "stopped after its first game"
            elif timeout_s is not None and time.monotonic() - t0 > timeout_s:
                stopped = f"stopped after {timeout_s:g} s"
            elif memory_cap is not None and rss > memory_cap:
                # Killed at once: a Ctrl-C waits for the work under way, which may go on growing.
                stopped = f"killed at {rss / MIB:,.0f} MiB after {time.monotonic() - t0:.0f} s"
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            if stopped and not stopped.startswith("killed"):
                _interrupt(proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(sample_s)
    seconds = time.monotonic() - t0
    reader.join()
    return Command(seconds, proc.returncode, lines, samples, peak, stopped)


def _interrupt(proc: subprocess.Popen[bytes]) -> None:
    """Ctrl-C to the command's process group, then, in a thread, SIGKILL 15 s later if it is still there."""
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        return

    def kill_later() -> None:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

    threading.Thread(target=kill_later, daemon=True).start()


def _check(cmd: Command, what: str) -> None:
    if cmd.code != 0 and not cmd.stopped:
        tail = " | ".join(line for _, _, line in cmd.lines[-3:])
        raise ArenaError(f"bench scale: {what} failed (exit status {cmd.code}): {tail}")


def run_args(settings: RunSettings) -> list[str]:
    """The ``arena run`` arguments of these settings (the bench's fixed time and sandbox)."""
    args = [
        "run", "--bots", str(settings.bots_dir), "--results", str(settings.results),
        "--players", str(settings.players), "--seed", str(settings.seed), "--sandbox", SANDBOX,
        "--hello-ms", str(TIME.hello_ms), "--turn-ms", str(TIME.turn_ms), "--bank-ms", str(TIME.bank_ms),
    ]
    if settings.games is not None:
        args += ["--games", str(settings.games)]
    if settings.jobs is not None:
        args += ["--jobs", str(settings.jobs)]
    return args


def _settings(bots: Path, results: Path, games: int | None, jobs: int = 2) -> RunSettings:
    return RunSettings(bots_dir=bots, results=results, players=PLAYERS, games=games, jobs=jobs, time=TIME)


# -- stores filled without playing ------------------------------------------------------


def random_game(
    config: GameConfig, seed: int, ids: int, gid: str, seats: list[SeatInfo], ts: TimeSettings, rng: random.Random
) -> GameRecord:
    """A complete game of the engine in which every seat makes a uniformly random legal
    play, recorded as the referee records a game of instant bots (no faults; each reply's
    time drawn from ``rng``, tens of µs)."""
    state = new_game(config, seed, ids=ids)
    players = config.players
    bank = None if ts.no_timeout else ts.scaled_ms(ts.bank_ms)
    replay = Replay(
        arena_version=__version__,
        game_id=gid,
        seed=seed,
        ids=ids,
        players=config.seats,
        variant=config.variant.value,
        config={"players": players, "variant": config.variant.value},
        time=time_dict(ts),
        seats=list(seats) + ([SeatInfo(seat=2, bot="dummy")] if config.variant is Variant.DUMMY else []),
        cards=[KINDS[k] for k in state.kind_of],
    )
    elapsed: list[list[float]] = [[] for _ in range(config.seats)]
    while not state.over:
        controller = state.controller
        record = TurnRecord(
            round=state.round,
            turn=state.turn,
            hands=[list(h) for h in state.hands],
            controller=controller if controller >= 0 else None,
            actions=[],
        )
        deciding = state.deciding_seats()
        plays: list[tuple[int, ...] | None] = [None] * players
        for seat in deciding:
            legal = legal_plays(state, seat)
            play = legal[rng.randrange(len(legal))]
            ms = round(rng.uniform(20, 200)) / 1000
            elapsed[seat].append(ms / 1000)
            dummy = seat == controller
            cards, dummy_card = (list(play[:-1]), play[-1]) if dummy else (list(play), None)
            record.actions.append(ActionRecord(seat=seat, cards=cards, dummy_card=dummy_card, elapsed_ms=ms, bank_ms=bank))
            plays[seat] = play
        if config.variant is Variant.DUMMY:
            for seat in range(2):
                if seat not in deciding:
                    record.actions.append(ActionRecord(seat=seat, cards=list(state.hands[seat]), status="auto"))
            record.actions.sort(key=lambda a: a.seat)
        apply_turn(state, plays)
        replay.turns.append(record)
    res = result(state)
    keys = [(res.scores[i], res.puddings[i]) for i in range(players)]
    ranks = [1 + sum(1 for k in keys if k > key) for key in keys] + list(res.ranks[players:])
    autopilot = [False] * config.seats
    replay.events = ActWriter(state, gid).event_json()
    replay.rounds = summarize_log(state)
    replay.result = ResultSummary(
        scores=list(res.scores),
        puddings=list(res.puddings),
        ranks=ranks,
        rules_ranks=list(res.ranks),
        pudding_points=list(res.pudding_points),
        autopilot=autopilot,
    )
    replay.stderr = [""] * config.seats
    replay.usage = [SeatUsage(seat=i, sandbox=SANDBOX) for i in range(players)]
    duration = sum(sum(e) for e in elapsed) / max(1, players) + 0.0005
    replay.timing = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "duration_s": round(duration * 1000) / 1000,
        "mean_ms": [round(1e6 * sum(e) / len(e)) / 1000 if e else None for e in elapsed],
        "max_ms": [round(1e6 * max(e)) / 1000 if e else None for e in elapsed],
    }
    return GameRecord(
        game_id=gid,
        status="complete",
        seed=seed,
        config=config,
        bots=[s.bot for s in replay.seats],
        scores=list(res.scores),
        puddings=list(res.puddings),
        ranks=ranks,
        autopilot=autopilot,
        faults=[dict.fromkeys(FAULT_KINDS, 0) for _ in range(config.seats)],
        replay=replay,
        duration_s=duration,
    )


def fill_store(settings: RunSettings, start: int = 0, stop: int | None = None) -> tuple[int, int]:
    """Record games ``start`` to ``stop`` (default: to the end) of the schedule that ``arena
    run`` with these settings plays, as random games (:func:`random_game`), through the
    store's writer, as the run would: the tournament and its entrants registered, every row
    and replay file the run's. Games already recorded are left alone. Returns (games
    recorded, the schedule's length)."""
    manifests, errors = discover_bots(settings.bots_dir)
    if errors:
        raise ArenaError(f"bench scale: bad bot in {settings.bots_dir}: {errors[0][1]}")
    players = settings.format_players(len(manifests))
    config = GameConfig(players, settings.variant)
    ts = settings.time
    with results_lock(settings.results, "arena bench scale") as lock, open_store(settings.results) as store:
        rows = {m.name: store.bot(m.name, m.version, m.content_hash, str(m.path)) for m in manifests}
        seat_info = {m.name: (m.version, rows[m.name].hash) for m in manifests}
        names = sorted(rows)
        tid = settings.tournament_id(players)
        store.tournament(tid, players, settings.variant.value, {**settings.schedule_config(players), "bots_dir": str(settings.bots_dir)})
        store.set_entrants(tid, list(rows.values()), [])
        key = store.deal_key()
        schedule = make_schedule(
            names, players=players, deals=settings.deals, seatings=settings.seatings, games=settings.games,
            seed=settings.seed, gauntlet=settings.gauntlet, key=key,
        )
        make_replay_folders(settings.results)
        times = time_dict(ts)

        def frame(item: tuple[Any, ...]) -> tuple[str, Any, str, bytes]:
            game, record = item
            row = game_row(record, game.set_id, [rows[n].id for n in game.seats], times)
            return tid, row, replay_relpath(record.game_id), encode_replay(record.replay)

        writer = StoreWriter(settings.results, frame, lock_fd=lock.fd)
        recorded = length = 0
        try:
            for length, game in enumerate(schedule, 1):
                if length <= start or (stop is not None and length > stop):
                    continue
                seats = [SeatInfo(seat=i, bot=b, version=seat_info[b][0], hash=seat_info[b][1]) for i, b in enumerate(game.seats)]
                gid = game_id(config, game.seed, [seat_identity(b, seat_info[b][1]) for b in game.seats], ts)
                record = random_game(config, game.seed, card_ids(key, gid), gid, seats, ts, random.Random(gid))
                writer.submit(game, record)
                recorded += 1
                if writer.error is not None:
                    break
        finally:
            writer.close()
        if writer.error is not None:
            raise writer.error
        if stop is None or stop >= length:
            # The whole schedule is recorded: as a run that played its last game says so.
            identity = schedule_identity(settings, players, [(m.name, rows[m.name].hash) for m in manifests])
            store.mark_schedule_played(tid, identity, length, counted=False)  # as a run that played games
    return recorded, length


# -- the figures ------------------------------------------------------------------------


def _mib(n: float) -> float:
    return round(n / MIB, 1)


def _slope(points: Sequence[tuple[int, int]]) -> float | None:
    """Least-squares bytes per game of (games, rss) points."""
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    var = sum((p[0] - mx) ** 2 for p in points)
    if var == 0:
        return None
    return sum((p[0] - mx) * (p[1] - my) for p in points) / var


def measure_memory(bots: Path, results: Path, games: int) -> tuple[list[Figure], dict[str, Any]]:
    cmd = run_arena(run_args(_settings(bots, results, games)))
    _check(cmd, "arena run (memory)")
    last_game = cmd.last(r"^\[\d+/\d+\] game ")
    if last_game is None:
        raise ArenaError("bench scale: arena run (memory) printed no game")
    total = int(_GAME_LINE.match(last_game[2]).group(2))  # type: ignore[union-attr]
    ref = min(1000, max(1, total // 2))
    during = [(d, r) for t, d, r in cmd.samples if t <= last_game[0] and d >= ref and r > 0]
    during += [(int(_GAME_LINE.match(line).group(1)), r) for _, r, line in cmd.lines if _GAME_LINE.match(line) and r > 0]  # type: ignore[union-attr]
    during = sorted(p for p in during if p[0] >= ref)
    at_ref = during[0][1] if during else None
    at_end = during[-1][1] if during else None
    ratio = at_end / at_ref if at_ref and at_end else None
    slope = _slope(during)
    full = total >= 100_000
    # RSS at 1,000 games, 2,000, 5,000, 10,000 … and at the last game.
    marks = [m for m in _MILESTONES if ref <= m < total] + [total]
    by_games = {m: next((r for d, r in during if d >= m), None) for m in marks}
    milestones = {f"{m:,}": _mib(r) for m, r in by_games.items() if r is not None}
    figures = [
        Figure(
            "memory flat", None if ratio is None else round(ratio, 3), f"RSS after {total:,} ÷ after {ref:,} games",
            "≤ 1.10 at 100,000 games", (ratio <= 1.10) if full and ratio is not None else None,
            f"{_mib(at_ref or 0)} → {_mib(at_end or 0)} MiB; {slope or 0:,.0f} bytes per game; "
            f"peak {_mib(cmd.peak)} MiB (with the end-of-run report); MiB by games: "
            + ", ".join(f"{k} {v}" for k, v in milestones.items())
            + ("" if full else "; the target is at --games 100000"),
        )
    ]
    details = {
        "games": total, "reference_games": ref, "rss_reference_mib": _mib(at_ref or 0), "rss_end_mib": _mib(at_end or 0),
        "bytes_per_game": None if slope is None else round(slope), "peak_mib": _mib(cmd.peak), "seconds": round(cmd.seconds, 1),
        "end_of_run_s": round(cmd.seconds - last_game[0], 2), "rss_by_games_mib": milestones,
    }
    return figures, details


def measure_schedule(
    bots: Path, folder: Path, n_bots: int, games: int, timeout_s: float, memory_cap: int
) -> tuple[list[Figure], dict[str, Any]]:
    figures: list[Figure] = []
    details: dict[str, Any] = {}
    for label, capped in (("with --games", games), ("without --games", None)):
        results = folder / f"schedule-{'capped' if capped else 'all'}"
        cmd = run_arena(
            run_args(_settings(bots, results, capped)),
            stop_when=lambda line: bool(_GAME_LINE.match(line)),
            timeout_s=timeout_s,
            memory_cap=memory_cap,
        )
        ready = cmd.last("^✓ ")
        first = cmd.first(_GAME_LINE)
        if ready is None:
            _check(cmd, f"arena run ({label})")
            raise ArenaError(f"bench scale: arena run ({label}): no bot started")
        t_ready, rss_ready, _ = ready
        grown = max([r for t, _d, r in cmd.samples if t >= t_ready and (first is None or t <= first[0])] + [first[1] if first else 0])
        took = None if first is None else round(first[0] - t_ready, 3)
        mib = _mib(max(0, grown - rss_ready))
        details[label] = {
            "first_game_s": took, "schedule_mib": mib, "bots_start_s": round(t_ready, 2),
            "stopped": cmd.stopped, "rss_at_stop_mib": _mib(max(r for _t, _d, r in cmd.samples) if cmd.samples else 0),
        }
        note = f"{n_bots} bots: memory taken on meanwhile {mib:,.1f} MiB"
        if first is None:
            note += f"; no game yet: {cmd.stopped or 'the run ended'}"
        figures.append(
            Figure(
                f"schedule streamed, {label}", took, "s from the last bot's start to the first game", "≤ 2 s",
                None if n_bots < 200 else (took is not None and took <= 2.0), note,
            )
        )
    capped_mib = details["with --games"]["schedule_mib"]
    all_mib = details["without --games"]["schedule_mib"]
    figures.append(
        Figure(
            "schedule memory", round(all_mib - capped_mib, 1), "MiB more without --games than with",
            "≤ 16 MiB (O(1) in the games)", None if n_bots < 200 else all_mib - capped_mib <= 16
            and details["without --games"]["first_game_s"] is not None,
            f"{capped_mib:,.1f} MiB with --games {games:,}, {all_mib:,.1f} MiB without",
        )
    )
    return figures, details


_WRITTEN = re.compile(r"written in ([0-9.]+) s$")


def _report(settings: RunSettings, tid: str) -> float:
    return _report_command(settings, tid)[0]


def _report_command(settings: RunSettings, tid: str) -> tuple[float, float | None]:
    """``arena report``'s wall time, and the time it says the report took (its leaderboard
    included, the interpreter's start-up not; to a tenth of a second)."""
    cmd = run_arena(["report", str(settings.results), "--tournament", tid])
    _check(cmd, "arena report")
    said = cmd.last(_WRITTEN.pattern)
    m = _WRITTEN.search(said[2]) if said else None
    return cmd.seconds, float(m.group(1)) if m else None


def measure_stores(
    bots: Path, folder: Path, n_bots: int, stored: int, added: tuple[int, int]
) -> tuple[list[Figure], dict[str, Any]]:
    """The report's cost after adding k games (both values of ``added``) to a store of
    ``stored`` games and of a quarter of that; then resume on the full store."""
    details: dict[str, Any] = {}
    first_k, second_k = added
    sizes = (max(1, stored // 4), stored)
    cost: dict[int, tuple[float, float]] = {}
    unchanged: dict[int, tuple[float, float | None]] = {}
    ks: dict[int, int] = {}
    full: RunSettings | None = None
    for size in sizes:
        settings = _settings(bots, folder / f"store-{size}", size + first_k + second_k)
        tid = settings.tournament_id(PLAYERS)
        t = time.monotonic()
        n, length = fill_store(settings, 0, size)
        fill_s = time.monotonic() - t
        first_report = _report(settings, tid)
        fill_store(settings, size, size + first_k)
        after_first = _report(settings, tid)
        ks[size], _ = fill_store(settings, size + first_k)  # the rest: whole duplicate sets
        cost[size] = (after_first, _report(settings, tid))
        unchanged[size] = _report_command(settings, tid)  # nothing new: found up to date
        details[f"store {size}"] = {
            "games": length, "filled_per_s": round(n / fill_s, 1), "first_report_s": round(first_report, 2),
            "added": [first_k, ks[size]], "report_after_added_s": [round(c, 2) for c in cost[size]],
            "report_unchanged_s": round(unchanged[size][0], 2), "report_unchanged_said_s": unchanged[size][1],
        }
        full = settings
    assert full is not None
    small, big = sizes
    s_ratio = (cost[big][0] / cost[small][0] + cost[big][1] / cost[small][1]) / 2
    k_ratio = (cost[small][1] / cost[small][0] + cost[big][1] / cost[big][0]) / 2
    figures = [
        Figure(
            "report incremental", round(s_ratio, 2), f"report time at {big:,} ÷ at {small:,} stored games, same k",
            "≤ 1.5 (grows with k, not the store)", s_ratio <= 1.5,
            f"k = {first_k} then {ks[big]}: {cost[small][0]:.1f}/{cost[small][1]:.1f} s at {small:,}, "
            f"{cost[big][0]:.1f}/{cost[big][1]:.1f} s at {big:,}; k ratio {k_ratio:.2f}; with nothing new "
            f"{unchanged[big][0]:.2f} s at {big:,} (the report itself: {unchanged[big][1]} s)",
        )
    ]
    resume = run_arena(run_args(full))
    _check(resume, "arena run (resume)")
    # The first re-run counts the games the last run's writer committed; a second one reads a count.
    again = run_arena(run_args(full))
    _check(again, "arena run (resume, again)")
    planned = resume.first(_PLANNED)
    m = _PLANNED.search(planned[2]) if planned else None
    total = full.games or 0
    left = int(m.group(3)) if m else None
    at_full = total >= 100_000
    figures.append(
        Figure(
            "resume instant", round(resume.seconds, 2), f"s for arena run with nothing to play, {total:,} games stored",
            "< 2 s at 100,000", (resume.seconds < 2) if at_full and left == 0 else None if left == 0 else False,
            (f"{sum(1 for _, _, line in resume.lines if line.startswith('✓ '))} of {n_bots} bots started, "
             f"planned at {planned[0]:.2f} s" if planned else "")
            + f"; a second re-run {again.seconds:.2f} s"
            + ("" if left == 0 else f"; it found {left} games still to play: the stored games do not match the run's")
            + ("" if at_full else "; the target is at --stored 100000"),
        )
    )
    # The run's own part (run_tournament: the bots' manifests, the store's record, the plan) as
    # the run says it took, apart from the interpreter's start and the leaderboard and report after it.
    ended = resume.first(_RUN_DONE)
    run_m = _RUN_DONE.search(ended[2]) if ended else None
    details["resume"] = {
        "seconds": round(resume.seconds, 2), "to_play": left, "planned_at_s": round(planned[0], 2) if planned else None,
        "run_tournament_s": float(run_m.group(1)) if run_m else None,
        "after_plan_s": round(resume.seconds - planned[0], 2) if planned else None,
        "bots_started": sum(1 for _, _, line in resume.lines if line.startswith("✓ ")),
        "again_s": round(again.seconds, 2),
    }
    return figures, details


def measure_ratings(
    bots: Path, folder: Path, n_bots: int, stored: int, timeout_s: float
) -> tuple[list[Figure], dict[str, Any]]:
    """``arena leaderboard`` on a store of ``stored`` games among ``n_bots`` bots: cold (the
    store as a run leaves it before its standings: nothing kept), then once the standings are
    kept (as after ``arena run``: the fit is read, not computed)."""
    settings = _settings(bots, folder / "ratings", stored)
    t = time.monotonic()
    n, _ = fill_store(settings)
    fill_s = time.monotonic() - t
    args = ["leaderboard", str(settings.results), "--tournament", settings.tournament_id(PLAYERS)]
    board = run_arena(args, timeout_s=timeout_s)
    _check(board, "arena leaderboard")
    with open_store(settings.results, create=False) as store:  # what the end of a run does
        standings(store, settings.tournament_id(PLAYERS))
    kept = run_arena(args, timeout_s=timeout_s)
    _check(kept, "arena leaderboard (standings kept)")
    at_target = n_bots >= 200 and n >= 100_000
    seconds = None if board.stopped else round(board.seconds, 2)
    kept_s = None if kept.stopped else round(kept.seconds, 2)
    figures = [
        Figure(
            "ratings fast", seconds, f"s for arena leaderboard, {n_bots} bots, {n:,} games",
            "< 2 s at 200 bots, 100,000 games", (seconds is not None and seconds < 2) if at_target else None,
            (f"not done after {timeout_s:g} s" if board.stopped else "")
            + ("" if at_target else ("; " if board.stopped else "") + "the target is at --bots 200 --stored 100000")
            + (f"; {kept_s:g} s once the standings are kept" if kept_s is not None else ""),
        )
    ]
    return figures, {"games": n, "filled_per_s": round(n / fill_s, 1), "leaderboard_s": seconds, "kept_s": kept_s}


def measure_live(bots: Path, folder: Path, games: int, rounds: int) -> tuple[list[Figure], dict[str, Any]]:
    quiet: list[float] = []
    live: list[float] = []
    for r in range(rounds):
        for mode in ("quiet", "terminal"):
            settings = _settings(bots, folder / f"live-{mode}-{r}", games)
            args = [*run_args(settings), "--no-report"]
            if mode == "quiet":
                cmd = run_arena([*args, "--quiet"])
            else:
                cmd = run_arena(args, env={"TTY_COMPATIBLE": "1"})
            _check(cmd, f"arena run ({mode})")
            (quiet if mode == "quiet" else live).append(cmd.seconds)
            shutil.rmtree(settings.results, ignore_errors=True)
    share = 1 - sum(quiet) / sum(live)
    figures = [
        Figure(
            "live table", round(100 * share, 1), f"% of a {games:,}-game run's time (terminal vs --quiet)", "≤ 5%",
            share <= 0.05, f"{sum(live):.1f} s on a terminal, {sum(quiet):.1f} s quiet, over {rounds} round(s)",
        )
    ]
    return figures, {"terminal_s": [round(s, 2) for s in live], "quiet_s": [round(s, 2) for s in quiet]}


def bench_scale(
    *,
    bots: int = 200,
    run_bots: int = 16,
    report_bots: int = 32,
    games: int = 5_000,
    stored: int = 10_000,
    added: tuple[int, int] = (100, 400),
    live_games: int = 2_000,
    live_rounds: int = 1,
    schedule_games: int = 1_000,
    schedule_timeout_s: float = 60.0,
    leaderboard_timeout_s: float = 900.0,
    memory_cap_mib: int | None = None,
    scratch: Path | None = None,
    only: Sequence[str] = (),
) -> ScaleBench:
    """Every figure of the module's docstring (or those of the parts named in ``only``, from
    :data:`PARTS`), in a scratch folder made in ``scratch`` and removed afterwards."""
    if min(bots, run_bots, report_bots) < PLAYERS:
        raise ArenaError(f"bench scale: --bots, --run-bots and --report-bots must be at least {PLAYERS}")
    cap = memory_cap_mib * MIB if memory_cap_mib else _default_cap()
    out = ScaleBench(bots=bots, run_bots=run_bots, report_bots=report_bots, games=games, stored=stored)
    folder = scratch_folder(scratch)
    parts = set(only) or set(PARTS)
    try:
        few = make_instant_bots(_made(folder / "few"), run_bots)
        many = make_instant_bots(_made(folder / "many"), bots) if parts & {"schedule", "ratings"} else few
        middle = make_instant_bots(_made(folder / "middle"), report_bots) if "report" in parts else few
        steps: list[tuple[str, Callable[[], tuple[list[Figure], dict[str, Any]]]]] = [
            ("memory", lambda: measure_memory(few, folder / "memory", games)),
            ("schedule", lambda: measure_schedule(many, folder, bots, schedule_games, schedule_timeout_s, cap)),
            ("report", lambda: measure_stores(middle, folder, report_bots, stored, added)),
            ("ratings", lambda: measure_ratings(many, folder, bots, stored, leaderboard_timeout_s)),
            ("live", lambda: measure_live(few, folder, live_games, live_rounds)),
        ]
        for name, step in steps:
            if name in parts:
                figures, details = step()
                out.figures += figures
                out.details[name] = details
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


def _made(folder: Path) -> Path:
    folder.mkdir()
    return folder


def _default_cap() -> int:
    """Half the memory available now, at most 2 GiB: where a runaway schedule is stopped."""
    available = 4 * 1024 * MIB
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    available = int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return min(2 * 1024 * MIB, available // 2)


__all__ = ["PARTS", "Figure", "ScaleBench", "bench_scale", "fill_store", "random_game", "run_arena"]
