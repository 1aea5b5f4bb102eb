"""Measure how the arena contains each hostile behaviour: one short game per behaviour
(the hostile test bot against greedy, through the real referee and sandbox), printed as
a Markdown table.

    python3 tests/bench/tools/hostile_table.py                      # strict where available, else limits
    python3 tests/bench/tools/hostile_table.py --sandbox limits
    python3 tests/bench/tools/hostile_table.py --only hang-midgame,memory-hog --json

Per behaviour: what the arena did (the faults recorded for the hostile seat, whether it
ended on autopilot, why the sandbox killed it), and two times, both counted from the
start of the misbehaviour (the moment the referee sends the act that triggers it, or
starts the bot for a behaviour at hello):

- *game on*: until the referee has applied a play for that seat and the game moves on
  (the end of that turn; for hello, the end of the game's start);
- *bot stopped*: until the bot's last process is gone, when that happened during the
  game (a crash, or the sandbox killing it); ``end`` when it lived until the pool shut
  it down after the game, with the time the shutdown took in brackets.

The times come from the monotonic clock of this process, the bot's processes from /proc
(polled every few ms), so they are good to a few ms on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[3]  # the repository: tests/bench/tools/ is three below it
sys.path.insert(0, str(ROOT))

from arena.bots import _cgroup  # noqa: E402
from arena.bots.manifest import find_bot  # noqa: E402
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import Level, SandboxSettings  # noqa: E402
from arena.bots.strict import resolve_level  # noqa: E402
from arena.engine import GameConfig  # noqa: E402
from arena.game import referee as referee_module  # noqa: E402
from arena.game.players import TimeSettings, open_pool  # noqa: E402
from arena.game.referee import play_game  # noqa: E402

HOSTILE = ROOT / "tests" / "data" / "hostile_bots" / "hostile.py"
GREEDY = ROOT / "example_bots" / "greedy"
TIME = TimeSettings(hello_ms=3000, turn_ms=150, bank_ms=300)


@dataclass(frozen=True)
class Behaviour:
    name: str
    mode: str
    trigger: int = 2
    args: tuple[str, ...] = ()
    limits: dict[str, float] = field(default_factory=dict)
    #: Only measured under strict: elsewhere the bot runs as the arena's user, and as
    #: root kill(-1) would reach every process of the machine.
    strict_only: bool = False


def behaviours(base: Path, port: int) -> list[Behaviour]:
    """``port``: a TCP listener on 127.0.0.1 for the network bot to try."""
    outside = base / "outside"
    return [
        Behaviour("never answers hello", "hang", 0),
        Behaviour("sleeps past the deadline once", "slow_once"),
        Behaviour("sleeps past the deadline always (stale replies)", "slow_always"),
        Behaviour("sleeps forever mid-game", "hang"),
        Behaviour("10 MB line, no newline", "huge_line"),
        Behaviour("endless junk lines on stdout", "flood_lines"),
        Behaviour("endless flood on stderr", "flood_stderr", 1),
        Behaviour("binary garbage", "garbage"),
        Behaviour("invalid UTF-8 in a reply", "bad_utf8"),
        Behaviour("JSON nested 20000 deep", "deep_json"),
        Behaviour("JSON with 1e999", "huge_number"),
        Behaviour("JSON with duplicate keys", "duplicate_keys"),
        Behaviour("JSON with a lone surrogate", "lone_surrogate"),
        Behaviour("JSON with NaN", "nan"),
        Behaviour("valid JSON of the wrong shape", "wrong_shape"),
        Behaviour("illegal cards", "illegal"),
        Behaviour("raises an exception", "crash"),
        Behaviour("exits at turn 2", "exit0"),
        Behaviour("kills itself with SIGSEGV", "signal_self"),
        Behaviour("ignores SIGTERM and shutdown", "ignore_term", 1),
        Behaviour("double-forks a setsid'd child holding the pipes", "double_fork", 1),
        Behaviour("fork bomb (cap 16)", "fork_bomb", 1, limits={"processes": 16}),
        Behaviour("allocates memory without bound (cap 64 MB)", "memory_hog", limits={"memory_mb": 64}),
        Behaviour("spins the CPU after replying (0.5 s/game)", "cpu_spin", 1, limits={"cpu_s": 0.5}),
        Behaviour("writes a huge file (tmp 8 MB)", "huge_file", 1, (str(outside / "planted"),), {"tmp_mb": 8}),
        Behaviour("opens thousands of files (cap 64)", "many_fds", 1, limits={"open_files": 64}),
        Behaviour("TCP to 127.0.0.1 and DNS", "network", 1, (str(port),)),
        Behaviour("reads another bot's folder", "snoop", 1, (str(base / "bots" / "greedy"),)),
        Behaviour("kills its parent, kill(-1)", "kill_parent", 1, strict_only=True),
    ]


def make_bot(folder: Path, b: Behaviour) -> Path:
    bot = folder / f"{b.mode.replace('_', '-')}-{b.trigger}"
    bot.mkdir(parents=True)
    shutil.copy(HOSTILE, bot / "bot.py")
    run = ["{python}", "bot.py", b.mode, str(b.trigger), *b.args]
    text = f'name = "{bot.name}"\nversion = "1"\nrun = {json.dumps(run)}\n'
    if b.limits:
        text += "[limits]\n" + "".join(f"{k} = {v}\n" for k, v in b.limits.items())
    (bot / "bot.toml").write_text(text)
    return bot


class ProcessWatch:
    """Polls /proc for the processes whose working folder is ``folder``; remembers when
    the last one went."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)
        self.seen = False
        self.gone_at: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def count(self) -> int:
        n = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                cwd = os.readlink(f"/proc/{entry}/cwd")
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z" and (cwd == self.folder or cwd.startswith(self.folder + "/")):
                n += 1
        return n

    def _loop(self) -> None:
        while not self._stop.is_set():
            n = self.count()
            now = time.monotonic()
            if n:
                self.seen, self.gone_at = True, None
            elif self.seen and self.gone_at is None:
                self.gone_at = now
            self._stop.wait(0.003)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Row:
    behaviour: str
    did: str
    game_on_ms: float | None
    stopped: str
    detail: str


def _turn_clock() -> dict[tuple[int, int], list[float]]:
    """Wrap the referee's turn and start so their start and end times are recorded."""
    marks: dict[tuple[int, int], list[float]] = {}
    cls = referee_module._Referee
    play_turn, start = cls.play_turn, cls.start

    async def timed_turn(self: Any) -> None:
        key = (self.state.round, self.state.turn)
        marks[key] = [time.monotonic()]
        await play_turn(self)
        marks[key].append(time.monotonic())

    async def timed_start(self: Any) -> None:
        marks[(0, 0)] = [time.monotonic()]
        await start(self)
        marks[(0, 0)].append(time.monotonic())

    cls.play_turn, cls.start = timed_turn, timed_start  # type: ignore[method-assign]
    return marks


def measure(b: Behaviour, base: Path, level: Level, marks: dict[tuple[int, int], list[float]]) -> Row:
    bots = base / "bots"
    bot = make_bot(bots, b)
    settings = SandboxSettings(level)
    spec = prepare_bot(find_bot(bot), base / "build", settings)
    good = prepare_bot(find_bot(bots / "greedy"), base / "build", settings)
    marks.clear()
    watch = ProcessWatch(spec.cwd)  # where the bot runs: its copy in the build cache
    ended: list[float] = []

    async def main() -> Any:
        async with open_pool() as pool:
            record = await play_game([pool.player(spec), pool.player(good)], GameConfig(2), seed=11, time_settings=TIME)
            ended.append(time.monotonic())
        return record

    try:
        record = trio.run(main)
        closed = time.monotonic()
        deadline = closed + 5
        while watch.gone_at is None and watch.seen and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        watch.stop()
    replay = record.replay
    key = (0, 0) if b.trigger == 0 else (1, b.trigger)
    began = marks[key][0]
    game_on = (marks[key][1] - began) * 1000 if len(marks[key]) > 1 else None
    faults = [f for f in replay.faults if f.seat == 0]
    kinds: dict[str, int] = {}
    for f in faults:
        kinds[f.kind] = kinds.get(f.kind, 0) + 1
    did = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in kinds.items() if k != "autopilot") or "no fault: plays on"
    if faults:
        first = next(f for f in faults if f.kind != "autopilot")
        did = f"{did} (first at {first.round}.{first.turn})"
    if replay.result is not None and replay.result.autopilot[0]:
        did += "; autopilot"
    if watch.gone_at is not None and watch.gone_at < ended[0]:
        stopped = f"{(watch.gone_at - began) * 1000:.0f} ms"
    elif watch.gone_at is not None:
        stopped = f"end (+{(watch.gone_at - ended[0]) * 1000:.0f} ms)"
    else:
        stopped = "still running!"
    messages = [f.message for f in faults if f.kind != "autopilot"]
    detail = messages[0] if messages else ""
    reports = [line[7:] for line in replay.stderr[0].splitlines() if line.startswith("REPORT ")]
    if reports:
        detail = (detail + "; " if detail else "") + "; ".join(reports)
    detail = detail.replace("|", "/").replace("\n", " ")
    if len(detail) > 160:
        detail = detail[:157] + "..."
    if replay.status != "complete":
        did = f"VOID game: {replay.void_reason.splitlines()[0]}"
    greedy_faults = [f for f in replay.faults if f.seat == 1]
    if greedy_faults:
        did += f"; the good bot faulted too: {greedy_faults[0].kind}"
    return Row(b.name, did, game_on, stopped, detail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sandbox", choices=["limits", "strict"], default=None)
    parser.add_argument("--only", default="", help="comma-separated modes of hostile.py to run (default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    level, warning = resolve_level(args.sandbox)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    rows = []
    marks = _turn_clock()
    listener = socket.create_server(("127.0.0.1", 0))  # so a refused connection means blocked
    port = listener.getsockname()[1]
    with listener, tempfile.TemporaryDirectory(prefix="hostile-table-") as tmp:
        base = Path(tmp)
        (base / "outside").mkdir()
        shutil.copytree(GREEDY, base / "bots" / "greedy", ignore=shutil.ignore_patterns("__pycache__"))
        only = {m for m in args.only.split(",") if m}
        for b in behaviours(base, port):
            if only and b.mode not in only:
                continue
            if b.strict_only and level is not Level.STRICT:
                print(f"  {b.name}: skipped, measured under strict only", file=sys.stderr)
                continue
            if b.mode == "fork_bomb" and level is not Level.STRICT and _cgroup.support().pids is None:
                print(f"  {b.name}: skipped, no pids cgroup to cap it at {level.value}", file=sys.stderr)
                continue
            rows.append(measure(b, base, level, marks))
            if not args.json:
                print(f"  {b.name}: {rows[-1].did}", file=sys.stderr)
    if args.json:
        print(json.dumps({"sandbox": level.value, "rows": [r.__dict__ for r in rows]}))
        return
    print(f"Sandbox `{level.value}`; turn {TIME.turn_ms} ms, bank {TIME.bank_ms} ms, hello {TIME.hello_ms} ms.\n")
    print("| Hostile behaviour | What the arena did | Game on after | Bot stopped after | Detail |")
    print("|---|---|---:|---:|---|")
    for r in rows:
        on = "—" if r.game_on_ms is None else f"{r.game_on_ms:.0f} ms"
        print(f"| {r.behaviour} | {r.did} | {on} | {r.stopped} | {r.detail} |")


if __name__ == "__main__":
    main()
