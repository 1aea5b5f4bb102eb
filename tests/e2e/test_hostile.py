"""Hostile bots can't hurt the arena: a tournament of real misbehaving programs
(tests/data/hostile_bots/hostile.py) against a good bot, through the real `arena run` under the
strict sandbox, and focused checks of what each sandbox level holds.

For every behaviour: the tournament finishes, the fault is attributed to the right bot,
seat, turn and kind with a clear message, the good bot's games are unaffected, no process
is left behind (checked in /proc), and nothing outside the sandbox is changed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import proc_helpers
import pytest
import trio
from proc_helpers import STRICT, needs_strict

from arena.bots import _cgroup
from arena.bots.manifest import find_bot
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import DEFAULT_LIMITS, Level, SandboxSettings
from arena.engine import GameConfig
from arena.game.players import DEFAULT_TIME, open_pool
from arena.game.referee import play_game
from arena.game.replay import read_replay
from arena.store.opening import open_store

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parents[1] / "data" / "hostile_bots" / "hostile.py"
GOOD = ROOT / "example_bots" / "greedy"



def make_hostile(folder: Path, name: str, behaviour: str, trigger: int = 2, args: tuple[str, ...] = (), **limits: float) -> Path:
    bot = folder / name
    bot.mkdir(parents=True)
    shutil.copy(HOSTILE, bot / "bot.py")
    run = ["{python}", "bot.py", behaviour, str(trigger), *args]
    text = f'name = "{name}"\nversion = "1"\nrun = {json.dumps(run)}\n'
    if limits:
        text += "[limits]\n" + "".join(f"{k} = {v}\n" for k, v in limits.items())
    (bot / "bot.toml").write_text(text)
    return bot


def processes_in(folder: Path) -> list[str]:
    """Processes whose working folder is inside ``folder`` (a bot left behind)."""
    return [f"{pid}: {cmd}" for pid, cmd in proc_helpers.processes_in(folder).items()]


def running_from(results: Path) -> Path:
    """Where the bots of a run into ``results`` run: their copies in its build cache."""
    return results / "build"


def tree_snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


class Listener:
    """A TCP server on 127.0.0.1 counting the connections it gets."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = False
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.sock.close()


class MemoryWatch:
    """Samples a process's peak resident memory (VmHWM, which only grows) until it ends."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_kb = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                text = Path(f"/proc/{self.pid}/status").read_text()
            except OSError:
                return
            for line in text.splitlines():
                if line.startswith("VmHWM:"):
                    self.peak_kb = max(self.peak_kb, int(line.split()[1]))
                    self.samples += 1
            self._stop.wait(0.05)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


# -- the tournament ---------------------------------------------------------------------------

@dataclass
class Tournament:
    base: Path
    bots: Path
    results: Path
    outside: Path
    listener: Listener
    proc: subprocess.Popen[bytes]
    before: dict[str, tuple[int, int]]
    memory: MemoryWatch
    done: dict | None = None

    def wait(self) -> dict:
        if self.done is None:
            out, err = self.proc.communicate(timeout=240)
            self.memory.stop()
            self.listener.close()
            assert self.proc.returncode == 0, err.decode(errors="replace")[-3000:]
            self.done = {"doc": json.loads(out), "stderr": err.decode(errors="replace")}
        return self.done

    def replays(self, bot: str) -> list[tuple[int, object]]:
        """(seat of ``bot``, replay) of every game it played."""
        self.wait()
        out = []
        with open_store(self.results, create=False) as store:
            for g in store.games(bot=bot):
                replay = read_replay(self.results / g.replay)
                seat = next(s.seat for s in replay.seats if s.bot == bot)
                out.append((seat, replay))
        assert out, f"{bot} played no game"
        return out


# name: (behaviour, trigger act, extra args, limits)
def _behaviours(outside: Path, results: Path, good: Path, port: int) -> dict[str, tuple]:
    return {
        "hang-hello": ("hang", 0, (), {}),
        "hang-midgame": ("hang", 2, (), {}),
        "huge-line": ("huge_line", 2, (), {}),
        "flood-lines": ("flood_lines", 2, (), {}),
        "flood-stderr": ("flood_stderr", 1, (), {}),
        "garbage": ("garbage", 2, (), {}),
        "crasher": ("crash", 2, (), {}),
        "exit-early": ("exit0", 2, (), {}),
        "fork-bomb": ("fork_bomb", 1, (), {"processes": 16}),
        "double-fork": ("double_fork", 1, (), {}),
        "memory-hog": ("memory_hog", 2, (), {"memory_mb": 64}),
        "cpu-spin": ("cpu_spin", 1, (), {"cpu_s": 0.5}),
        "huge-file": ("huge_file", 1, (str(outside / "planted"), str(results / "planted")), {"tmp_mb": 8}),
        "many-fds": ("many_fds", 1, (), {"open_files": 64}),
        "network": ("network", 1, (str(port),), {}),
        "snoop": ("snoop", 1, (str(good), str(good / "bot.py"), str(results / "arena.db"), str(results)), {}),
        "kill-parent": ("kill_parent", 1, (), {}),
        "slow-once": ("slow_once", 2, (), {}),
        "slow-always": ("slow_always", 2, (), {}),
        "bad-utf8": ("bad_utf8", 2, (), {}),
        "deep-json": ("deep_json", 2, (), {}),
        "huge-number": ("huge_number", 2, (), {}),
        "duplicate-keys": ("duplicate_keys", 2, (), {}),
        "lone-surrogate": ("lone_surrogate", 2, (), {}),
        "nan": ("nan", 2, (), {}),
        "wrong-shape": ("wrong_shape", 2, (), {}),
        "illegal": ("illegal", 2, (), {}),
        "signal-self": ("signal_self", 2, (), {}),
        "ignore-term": ("ignore_term", 1, (), {}),
    }


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Tournament:
    """Starts `arena run` on the hostile bots and a good one in the background (the tests
    that need its results wait for it)."""
    if not STRICT.ok:
        pytest.skip(f"strict sandbox unavailable: {STRICT.missing}")
    base = tmp_path_factory.mktemp("hostile")
    bots, results, outside = base / "bots", base / "results", base / "outside"
    outside.mkdir()
    (outside / "canary.txt").write_text("untouched")
    results.mkdir()
    good = bots / "greedy"
    shutil.copytree(GOOD, good, ignore=shutil.ignore_patterns("__pycache__"))
    listener = Listener()
    for name, (behaviour, trigger, args, limits) in _behaviours(outside, results, good, listener.port).items():
        make_hostile(bots, name, behaviour, trigger, args, **limits)
    before = {**{f"bots/{k}": v for k, v in tree_snapshot(bots).items()}, **{f"outside/{k}": v for k, v in tree_snapshot(outside).items()}}
    argv = [
        sys.executable, "-m", "arena", "run", "--bots", str(bots), "--results", str(results), "--players", "2",
        "--gauntlet", "greedy", "--hello-ms", "3000", "--turn-ms", "150", "--bank-ms", "300", "--jobs", "2",
        "--sandbox", "strict", "--json",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=base)
    return Tournament(base, bots, results, outside, listener, proc, before, MemoryWatch(proc.pid))


def faults_of(replay: object, seat: int) -> list:
    return [f for f in replay.faults if f.seat == seat]  # type: ignore[attr-defined]


def stderr_reports(replay: object, seat: int) -> dict[str, str]:
    out = {}
    for line in replay.stderr[seat].splitlines():  # type: ignore[attr-defined]
        if line.startswith("REPORT "):
            key, _, value = line[7:].partition("=")
            out[key] = value
    return out


@needs_strict
def test_a_strict_bot_survives_more_than_15_s_idle_between_turns(tournament: Tournament, tmp_path: Path) -> None:
    """Nothing tied to a thread that exits when idle (trio's worker threads do after
    ~10 s) may end a bot: a game paused for 16 s between two requests goes on. (Runs
    while the hostile tournament plays in the background.)"""
    spec = prepare_bot(find_bot(GOOD), tmp_path / "build", SandboxSettings(Level.STRICT))

    async def main() -> list[str]:
        async with open_pool() as pool:
            a, b = pool.player(spec), pool.player(replace(spec, name="good2"))
            await a.start(DEFAULT_TIME)
            await b.start(DEFAULT_TIME)
            await trio.sleep(16)
            record = await play_game([a, b], GameConfig(2), seed=5)
            assert record.status == "complete"
            return [f.kind for f in record.replay.faults]

    assert trio.run(main) == []


@needs_strict
def test_hostile_tournament_completes_and_the_good_bot_is_unaffected(tournament: Tournament) -> None:
    done = tournament.wait()
    doc = done["doc"]
    assert doc["run"]["void"] == 0
    assert doc["run"]["interrupted"] is False
    rows = {r["bot"]: r for r in doc["rows"]}
    assert rows["greedy"]["faults"] == {} or sum(rows["greedy"]["faults"].values()) == 0
    for _seat, replay in tournament.replays("greedy"):
        good_seat = next(s.seat for s in replay.seats if s.bot == "greedy")
        assert replay.status == "complete"
        assert faults_of(replay, good_seat) == [], replay.faults
    # The leaderboard shows the faults per kind, and what each bot used.
    assert rows["crasher"]["faults"].get("crash", 0) >= 2
    assert rows["hang-midgame"]["faults"].get("timeout", 0) >= 2
    assert all(r["cpu_ms"] is not None and r["peak_mb"] is not None for r in doc["rows"])
    md = (tournament.results / "leaderboard.md").read_text()
    assert "CPU ms/game" in md and "crash 2" in md


@needs_strict
def test_no_process_is_left_and_nothing_outside_is_changed(tournament: Tournament) -> None:
    tournament.wait()
    deadline = time.monotonic() + 5
    while processes_in(running_from(tournament.results)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_in(running_from(tournament.results)) == []
    after = {
        **{f"bots/{k}": v for k, v in tree_snapshot(tournament.bots).items()},
        **{f"outside/{k}": v for k, v in tree_snapshot(tournament.outside).items()},
    }
    assert after == tournament.before
    assert not (tournament.results / "planted").exists()
    assert tournament.listener.connections == 0
    leftover = [p for p in Path("/sys/fs/cgroup").rglob("sushigo-arena-*") if p.is_dir()] if _cgroup.support().unified else []
    assert not [p for p in leftover if str(tournament.proc.pid) in p.name]


@needs_strict
def test_a_bot_that_never_answers_hello_is_skipped_with_the_reason(tournament: Tournament) -> None:
    skipped = {s["bot"]: s["reason"] for s in tournament.wait()["doc"]["skipped"]}
    assert "hang-hello" in skipped
    assert "timeout" in skipped["hang-hello"] and "hello" in skipped["hang-hello"]


EXPECTED_FAULT = {
    # bot: (kind at round 1 turn 2, words its message must hold)
    "hang-midgame": ("timeout", "no reply before the deadline"),
    "huge-line": ("malformed", "longer than 65536 bytes"),
    "flood-lines": ("malformed", ""),
    "garbage": ("malformed", ""),
    "crasher": ("crash", "RuntimeError: hostile bot crashes on purpose"),
    "exit-early": ("crash", "exited with status 0"),
    "memory-hog": ("crash", "memory limit of 64 MB"),
    "slow-always": ("timeout", "no reply before the deadline"),
    "bad-utf8": ("malformed", "invalid UTF-8 at byte"),
    "deep-json": ("malformed", "nested too deeply"),
    "huge-number": ("malformed", "number out of range"),
    "duplicate-keys": ("illegal", "(received cards=[100000] dummy_card=None)"),
    "lone-surrogate": ("malformed", "surrogate"),
    "nan": ("malformed", "invalid JSON"),
    "wrong-shape": ("malformed", 'invalid "action" reply at $.cards: expected `array`, got `object`'),
    "illegal": ("illegal", "(received cards=[100000] dummy_card=None)"),
    "signal-self": ("crash", "SIGSEGV"),
}


@needs_strict
@pytest.mark.parametrize("bot", sorted(EXPECTED_FAULT))
def test_each_fault_is_attributed_to_the_bot_its_seat_and_turn(tournament: Tournament, bot: str) -> None:
    kind, words = EXPECTED_FAULT[bot]
    for seat, replay in tournament.replays(bot):
        assert replay.status == "complete"
        faults = faults_of(replay, seat)
        assert faults, f"{bot}: no fault recorded"
        first = faults[0]
        assert (first.kind, first.round, first.turn) == (kind, 1, 2), first
        if bot == "memory-hog" and not _cgroup.support().memory:
            words = "MemoryError"  # RLIMIT_DATA stops it, the sandbox cannot tell why it ended
        assert words in first.message, first.message
        assert replay.result.autopilot[seat]  # three strikes, or a crash: autopilot for the rest
        other = 1 - seat
        assert faults_of(replay, other) == []


def action_of(replay: object, seat: int, rnd: int, turn: int) -> object:
    record = next(t for t in replay.turns if (t.round, t.turn) == (rnd, turn))  # type: ignore[attr-defined]
    return next(a for a in record.actions if a.seat == seat)


@needs_strict
def test_a_late_reply_is_a_timeout_and_never_counts_for_the_next_request(tournament: Tournament) -> None:
    """slow-once answers act 2 just past its deadline, so its reply arrives while the
    referee waits for act 3's: a timeout at turn 2, and the stale reply (cards from the
    hand it no longer holds) is not taken for act 3 (that would be an illegal play)."""
    for seat, replay in tournament.replays("slow-once"):
        assert replay.status == "complete"
        faults = faults_of(replay, seat)
        assert faults and (faults[0].kind, faults[0].round, faults[0].turn) == ("timeout", 1, 2), faults
        # Under load the answer to act 3 may miss its own (bank-less) deadline too, but
        # nothing else: never an illegal play or a protocol fault from the stale line.
        assert {f.kind for f in faults} <= {"timeout", "autopilot"}, faults
        assert action_of(replay, seat, 1, 2).status == "timeout"  # type: ignore[attr-defined]
        later = [a for t in replay.turns if (t.round, t.turn) > (1, 3) for a in t.actions if a.seat == seat]
        assert later and all(a.status in ("ok", "timeout", "autopilot") for a in later)
    # Recovery: in at least one game the very next turn is the bot's own choice again.
    assert any(
        action_of(replay, seat, 1, 3).status == "ok" for seat, replay in tournament.replays("slow-once")  # type: ignore[attr-defined]
    )


@needs_strict
def test_a_bot_always_late_reaches_autopilot_on_timeouts_alone(tournament: Tournament) -> None:
    for seat, replay in tournament.replays("slow-always"):
        kinds = [f.kind for f in faults_of(replay, seat)]
        assert kinds[:4] == ["timeout", "timeout", "timeout", "autopilot"], kinds
        assert replay.result.autopilot[seat]


@needs_strict
def test_a_bot_that_ignores_sigterm_and_shutdown_is_ended_without_a_fault(tournament: Tournament) -> None:
    for seat, replay in tournament.replays("ignore-term"):
        assert faults_of(replay, seat) == [] and not replay.result.autopilot[seat]
    # Its process is gone too: test_no_process_is_left_and_nothing_outside_is_changed.


@needs_strict
def test_the_leaderboard_counts_faults_per_kind(tournament: Tournament) -> None:
    rows = {r["bot"]: r for r in tournament.wait()["doc"]["rows"]}
    games = {bot: len(tournament.replays(bot)) for bot in ("bad-utf8", "illegal", "signal-self", "slow-always")}
    # Three strikes each game, then autopilot (a crash: autopilot at once).
    assert rows["bad-utf8"]["faults"].get("malformed") == 3 * games["bad-utf8"], rows["bad-utf8"]
    assert rows["illegal"]["faults"].get("illegal") == 3 * games["illegal"], rows["illegal"]
    assert rows["signal-self"]["faults"].get("crash") == games["signal-self"], rows["signal-self"]
    assert rows["slow-always"]["faults"].get("timeout") == 3 * games["slow-always"], rows["slow-always"]
    hostile = [r for bot, r in rows.items() if bot != "greedy"]
    assert sum(1 for r in hostile if sum(r["faults"].values())) >= len(rows) // 2


@needs_strict
def test_the_referee_memory_and_time_stay_bounded(tournament: Tournament) -> None:
    """Floods (a 10 MB line, endless junk lines, endless stderr), deep JSON and the rest
    cost the arena process little: its peak RSS stays far below what the bots sent, and
    every game ends in seconds."""
    tournament.wait()
    watch = tournament.memory
    assert watch.samples > 10
    peak_mb = watch.peak_kb / 1024
    assert peak_mb < 400, f"arena peak RSS {peak_mb:.0f} MB"
    with open_store(tournament.results, create=False) as store:
        durations = {g.id: g.duration_s for g in store.games()}
    slowest = max(durations.values())
    assert slowest < 30, f"slowest game {slowest:.1f} s"
    print(f"arena peak RSS {peak_mb:.0f} MB over {len(durations)} games; slowest game {slowest:.2f} s")


@needs_strict
def test_cpu_hog_is_killed_for_its_cpu_time_with_a_clear_message(tournament: Tournament) -> None:
    for seat, replay in tournament.replays("cpu-spin"):
        crash = [f for f in faults_of(replay, seat) if f.kind == "crash"]
        assert crash, replay.faults
        assert "CPU time in this game, over its limit of 0.5 s" in crash[0].message


@needs_strict
def test_fork_bomb_and_double_fork_are_contained_and_the_bot_plays_on(tournament: Tournament) -> None:
    for bot in ("fork-bomb", "double-fork"):
        for seat, replay in tournament.replays(bot):
            assert replay.status == "complete"
            assert [f for f in faults_of(replay, seat) if f.kind == "crash"] == [], replay.faults
            usage = replay.usage[seat]
            assert usage.sandbox == "strict" and usage.cpu_ms is not None
            assert usage.limits["processes"] == (16 if bot == "fork-bomb" else DEFAULT_LIMITS.processes)


@needs_strict
def test_stderr_flood_is_drained_and_capped(tournament: Tournament) -> None:
    for seat, replay in tournament.replays("flood-stderr"):
        assert faults_of(replay, seat) == []
        # Far more was written than the replay keeps: its last 16 KiB.
        assert len(replay.stderr[seat]) == 16 * 1024
        assert replay.stderr[seat].rstrip().endswith("noise")


@needs_strict
def test_strict_blocks_network_snooping_files_and_signals(tournament: Tournament) -> None:
    (net_seat, net), *_ = tournament.replays("network")
    reports = stderr_reports(net, net_seat)
    assert reports["tcp"].startswith("blocked") and reports["dns"].startswith("blocked"), reports
    (seat, snoop), *_ = tournament.replays("snoop")
    reports = stderr_reports(snoop, seat)
    reads = {k: v for k, v in reports.items() if k.startswith("read ")}
    results = reads.pop(f"read {tournament.results}")
    assert len(reads) == 3 and all(v.startswith("blocked") for v in reads.values()), reports
    # The bot runs from its copy in results/build: of the results folder it sees only the
    # empty way there that the sandbox makes, never what the folder holds.
    assert results.startswith("blocked") or results == "ALLOWED ['build']", reports
    assert "greedy" not in reports["list_parent"]
    (seat, killer), *_ = tournament.replays("kill-parent")
    killed = stderr_reports(killer, seat)["kill_parent"]
    if os.geteuid() == 0:  # its parent is bwrap, root's
        assert killed.startswith("blocked PermissionError")
    else:  # its parent is process 1 of its own PID namespace, which the kernel keeps from its signal
        assert killed.startswith(("blocked PermissionError", "ALLOWED")) and not faults_of(killer, seat), killed
    (seat, files), *_ = tournament.replays("huge-file")
    reports = stderr_reports(files, seat)
    assert reports["write_own_folder"].startswith("blocked"), reports
    for key, value in reports.items():
        if not key.startswith("write /"):
            continue
        target = Path(key[len("write ") :])
        assert not target.exists(), key
        # Without root the bot owns the folders the sandbox makes on the way to its own:
        # a target under /tmp is then written in its private, capped /tmp, not the host's.
        assert value.startswith("blocked") or (os.geteuid() != 0 and target.is_relative_to("/tmp")), reports
    (seat, fds), *_ = tournament.replays("many-fds")
    opened = int(stderr_reports(fds, seat)["many_fds"].split()[0])
    assert opened < 64


@needs_strict
def test_sigkill_of_the_arena_leaves_no_strict_bot_running(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    a = make_hostile(bots, "sleepy", "hang", 2)
    b = make_hostile(bots, "forky", "double_fork", 1)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", str(a), str(b), "--sandbox", "strict", "--no-timeout"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
    )
    deadline = time.monotonic() + 20
    while len(processes_in(running_from(tmp_path / "results"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_in(running_from(tmp_path / "results")), "the bots never started"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while processes_in(running_from(tmp_path / "results")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_in(running_from(tmp_path / "results")) == []


# -- the arena itself under signals -------------------------------------------------------------

def _signal_bots(folder: Path) -> list[Path]:
    """Three bots that make stopping hard: one hangs mid-game, one double-forks a setsid'd
    grandchild that ignores SIGTERM, one ignores SIGTERM and shutdown."""
    return [
        make_hostile(folder, "sleepy", "hang", 2),
        make_hostile(folder, "forky", "double_fork", 1),
        make_hostile(folder, "stubborn", "ignore_term", 1),
    ]


SIGNAL_CASES = [
    ("run", signal.SIGINT, "strict"),
    ("run", signal.SIGTERM, "strict"),
    ("run", signal.SIGTERM, "limits"),
    ("play", signal.SIGINT, "strict"),
    ("play", signal.SIGTERM, "strict"),
    ("play", signal.SIGTERM, "limits"),
]


@pytest.mark.parametrize(("command", "signum", "level"), SIGNAL_CASES, ids=[f"{c}-{s.name}-{lv}" for c, s, lv in SIGNAL_CASES])
def test_a_signal_to_the_arena_ends_every_bot_and_says_so(tmp_path: Path, command: str, signum: signal.Signals, level: str) -> None:
    """SIGINT (Ctrl-C) or SIGTERM to a running `arena run` or `arena play`, while a game
    waits on a hung bot: every bot process (grandchildren too) is gone within seconds,
    and the arena exits 130 with a clear message."""
    if level == "strict" and not STRICT.ok:
        pytest.skip(f"strict sandbox unavailable: {STRICT.missing}")
    if level == "limits" and not _cgroup.support().unified:
        pytest.skip("no cgroup v2 hierarchy: a setsid'd grandchild escapes the whole-tree kill at limits")
    bots = tmp_path / "bots"
    paths = _signal_bots(bots)
    timing = ["--turn-ms", "60000", "--bank-ms", "0", "--sandbox", level]
    if command == "run":
        argv = ["run", "--bots", str(bots), "--results", str(tmp_path / "results"), "--players", "3", "--no-report", *timing]
    else:
        argv = ["play", *map(str, paths), *timing]
    proc = subprocess.Popen([sys.executable, "-m", "arena", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        # Wait until the game is under way: every bot and the grandchild are running (the
        # grandchild is forked at the first act; under strict, bwrap's two processes per bot
        # carry the bot's command line too, so they are told apart by their program).
        def forky_and_grandchild() -> int:
            return sum(
                1 for cmd in proc_helpers.processes_in(running_from(tmp_path / "results")).values()
                if "double_fork" in cmd and not cmd.split()[0].endswith("bwrap")
            )

        deadline = time.monotonic() + 30
        while forky_and_grandchild() < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        running = processes_in(running_from(tmp_path / "results"))
        assert len(running) >= 4 and forky_and_grandchild() >= 2, running
        time.sleep(0.3)  # the hung bot is now being waited on
        sent = time.monotonic()
        proc.send_signal(signum)
        while processes_in(running_from(tmp_path / "results")) and time.monotonic() < sent + 10:
            time.sleep(0.01)
        gone_s = time.monotonic() - sent
        left = processes_in(running_from(tmp_path / "results"))
        _, err = proc.communicate(timeout=20)
        exited_s = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print(f"{command} {signum.name} {level}: last bot gone {gone_s * 1000:.0f} ms, arena exited {exited_s * 1000:.0f} ms after the signal")
    assert left == []
    assert gone_s < 5, f"bots still running {gone_s:.1f} s after {signum.name}"
    text = " ".join(err.decode(errors="replace").split())  # as one line, however the console wrapped it
    assert proc.returncode == 130, text[-2000:]
    assert "interrupted" in text
    if command == "run":
        assert "run the same command again to play the rest" in text
    else:
        assert f"interrupted: the game was not finished and no replay was written; every bot was stopped ({signum.name})" in text


@needs_strict
def test_sigkill_of_a_tournament_leaves_no_strict_bot_running(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    _signal_bots(bots)
    argv = ["run", "--bots", str(bots), "--results", str(tmp_path / "results"), "--players", "3", "--no-report",
            "--turn-ms", "60000", "--bank-ms", "0", "--sandbox", "strict"]
    proc = subprocess.Popen([sys.executable, "-m", "arena", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    deadline = time.monotonic() + 30
    while len(processes_in(running_from(tmp_path / "results"))) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(processes_in(running_from(tmp_path / "results"))) >= 4
    sent = time.monotonic()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    while processes_in(running_from(tmp_path / "results")) and time.monotonic() < sent + 10:
        time.sleep(0.01)
    print(f"run SIGKILL strict: last bot gone {(time.monotonic() - sent) * 1000:.0f} ms after the signal")
    assert processes_in(running_from(tmp_path / "results")) == []


def test_sigkill_at_limits_leaves_what_the_next_start_sweeps(tmp_path: Path) -> None:
    """A SIGKILLed arena cannot clean up after its limits-level bots: a setsid'd
    grandchild escapes the parent-death signal, and the private temp folders stay. Both
    carry the arena's pid (its cgroup folder, the temp folders' names), so the next start
    ends the one and removes the others once that pid is gone, leaving the folders of
    arenas still running alone."""
    bots = tmp_path / "bots"
    a = make_hostile(bots, "sleepy", "hang", 2)
    b = make_hostile(bots, "player", "double_fork", 1)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", str(a), str(b), "--sandbox", "limits", "--no-timeout"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
    )
    temp = Path(tempfile.gettempdir())
    deadline = time.monotonic() + 20
    while (len(list(temp.glob(f"sushigo-bot-{proc.pid}-*"))) < 2 or len(processes_in(running_from(tmp_path / "results"))) < 3) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = sorted(temp.glob(f"sushigo-bot-{proc.pid}-*"))
    assert [p.name.split("-")[3] for p in left] == ["player", "sleepy"], left
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(0.3)
    # Left behind by the killed arena: its temp folders and the grandchild (unless an
    # arena started meanwhile, elsewhere on this machine, has swept them already).
    cgroups = _cgroup.support().unified is not None
    alive = Path(tempfile.mkdtemp(prefix=f"sushigo-bot-{os.getpid()}-mine-"))
    try:
        # The next start: a fresh process finds its cgroup support, and its first limits
        # bot sweeps the temp folders.
        code = "from arena.bots import _cgroup, jail; _cgroup.support(); jail.sweep_stale_temps()"
        subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, cwd=ROOT)
        assert not any(p.exists() for p in left)
        assert alive.is_dir()
    finally:
        shutil.rmtree(alive)
    if cgroups:
        assert processes_in(running_from(tmp_path / "results")) == []


def test_the_containment_table_tool_measures_each_behaviour() -> None:
    """tests/bench/tools/hostile_table.py (the closing table: what the arena did with each
    hostile behaviour, and how fast) on two behaviours."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "bench" / "tools" / "hostile_table.py"),
         "--only", "crash,slow_once", "--json", "--sandbox", "limits"],
        capture_output=True, text=True, timeout=60, check=True,
    )
    doc = json.loads(out.stdout)
    assert doc["sandbox"] == "limits"
    rows = {r["behaviour"]: r for r in doc["rows"]}
    crash, late = rows["raises an exception"], rows["sleeps past the deadline once"]
    assert crash["did"].startswith("crash (first at 1.2); autopilot"), crash
    assert "RuntimeError: hostile bot crashes on purpose" in crash["detail"]
    # Gone at once: during the game, or (when the rest of the game, on autopilot, took
    # less than the tool's polling of /proc) within moments of its end.
    stopped = re.fullmatch(r"(\d+) ms|end \(\+(\d+) ms\)", crash["stopped"])
    assert stopped and (stopped[1] or int(stopped[2]) < 500), crash
    assert late["did"].startswith("timeout") and "autopilot" not in late["did"], late
    assert late["game_on_ms"] is not None and late["stopped"].startswith("end")
