"""`arena bench referee`: what the referee costs per decision cycle, against the raw cost
of the same bytes going through the same kind of pipes, measured in the same run.

A decision cycle of a 4-player game: write four ``act`` lines, read four replies,
decode and validate them, apply the turn and record it. The bots are four copies of a
tiny C bot (:data:`INSTANT_C`, compiled with ``cc -O2`` into a temporary folder) that
answer at once, so what is measured is the arena, not the bots.

- Referee: whole games with :func:`~arena.game.referee.play_game` among four instant bots
  in one :func:`~arena.game.referee.open_pool` (processes reused across games, as in a
  tournament), every game from the same seed. Per cycle: game time /
  ``len(replay.turns)``, so a game's ``game_start`` and ``game_over`` exchanges and its
  bookkeeping are spread over its 21 cycles.
- Raw baseline: four fresh instant processes (plain ``subprocess.Popen`` pipes) are
  sent, with blocking ``os.write``, the exact lines the referee wrote in one game
  (recorded once, outside the timing, by instant bots started with a record file):
  per message the four lines, then each bot's reply read with ``os.read`` up to its
  newline. No event loop, no decoding. Per cycle: time of the game's exchanges
  (``game_start``, 21 acts, ``game_over``) / 21, like the referee.
- Both are measured in alternating slices of the same run, so both see the same load.
- By default everything (this process and every bot) runs on one CPU. Left free, the
  OS places the five processes as it likes, and the raw baseline's cost then depends
  mostly on that placement: a wake-up on another CPU costs far more than a plain
  context switch (above all in a VM). Measured on a 2-CPU VM: raw 24 µs/cycle pinned,
  every run; 25 to 70 µs/cycle unpinned, from one run to the next. The referee, busy
  in Python, moves much less.
- Other work on the pinned CPU inflates both figures, but not equally (the referee,
  which uses far more CPU, loses more time slices to it): compare ratios from a quiet
  machine. Measured on a quiet 2-CPU VM: referee 92–95 µs/cycle against raw 24 (ratio
  3.8–3.9; 12.5 before the referee asked all seats from one task and built the acts'
  common parts once per turn, 4.6 before events went from the engine's log straight to
  JSON). Where the time goes, roughly: 48 µs in the exchange (39 of them the system calls
  and the bots' turns: each write to a bot's pipe lets that bot run at once, because the
  referee, busy in Python, is always behind the bots in the scheduler's count, so the
  referee's process is switched out 3.7 times a cycle against 0.7 for the raw loop),
  20 building the acts, 6 applying the turn in the engine, 8 checking and recording the
  replies, and 12 per game (new game, game_start, game_over, the replay's shell) spread
  over its 21 cycles.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import trio

from arena.bots import BotSpec
from arena.engine import GameConfig
from arena.errors import ArenaError
from arena.game.players import Player, TimeSettings, open_pool
from arena.game.referee import play_game
from arena.game.record import GameRecord

PLAYERS = 4
#: Generous budgets: an instant bot never comes near them, but deadlines stay armed
#: as in a real run.
BENCH_TIME = TimeSettings(hello_ms=30_000, turn_ms=10_000, bank_ms=60_000)

#: The instant bot's C source: the one copy, compiled into a temporary folder at bench time.
INSTANT_C = r"""/* instant: a protocol-v1 bot that answers every message at once, for `arena bench referee`.
 *
 *   instant [RECORD_FILE]
 *
 * hello -> hello (version 1), game_start -> ready, act -> the first entry of `legal`
 * copied verbatim, game_over -> ack, shutdown or end of input -> exit. Anything else
 * is ignored. With RECORD_FILE, every line received is also appended to that file
 * (the bench records the referee's exact bytes this way, once, outside the timing).
 *
 * No JSON parser: it relies on the referee writing `type` first, then `id`, and
 * `legal` before the large fields (msgspec encodes fields in declaration order).
 * read(2)/write(2) with its own buffering: no stdio streams, one write per reply.
 *
 * The arena ships this source as INSTANT_C in arena/bench/referee.py; a test keeps
 * the two identical.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int record_fd = -1;

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            _exit(1);
        }
        p += w;
        n -= (size_t)w;
    }
}

/* The text after the first occurrence of key (e.g. "\"id\":") in [s, end), or NULL. */
static const char *after(const char *s, const char *end, const char *key) {
    size_t k = strlen(key);
    for (; s + k <= end; s++)
        if (*s == key[0] && memcmp(s, key, k) == 0) return s + k;
    return NULL;
}

static void handle(const char *line, const char *end) {
    char out[512];
    const char *t = after(line, end, "\"type\":\"");
    const char *i = after(line, end, "\"id\":");
    long id = i ? strtol(i, NULL, 10) : 0;
    int n;
    if (!t) return;
    if (end - t >= 4 && memcmp(t, "act\"", 4) == 0) {
        const char *a = after(line, end, "\"legal\":[{");
        const char *b = a;
        while (b && b < end && *b != '}') b++;
        if (a && b < end && (size_t)(b - a) < sizeof out - 64) {
            n = snprintf(out, sizeof out, "{\"type\":\"action\",\"re\":%ld,%.*s}\n", id, (int)(b - a), a);
        } else {
            n = snprintf(out, sizeof out, "{\"type\":\"action\",\"re\":%ld,\"cards\":[]}\n", id);
        }
    } else if (end - t >= 6 && memcmp(t, "hello\"", 6) == 0) {
        n = snprintf(out, sizeof out, "{\"type\":\"hello\",\"re\":%ld,\"version\":1,\"name\":\"instant\"}\n", id);
    } else if (end - t >= 11 && memcmp(t, "game_start\"", 11) == 0) {
        n = snprintf(out, sizeof out, "{\"type\":\"ready\",\"re\":%ld}\n", id);
    } else if (end - t >= 10 && memcmp(t, "game_over\"", 10) == 0) {
        n = snprintf(out, sizeof out, "{\"type\":\"ack\",\"re\":%ld}\n", id);
    } else if (end - t >= 9 && memcmp(t, "shutdown\"", 9) == 0) {
        _exit(0);
    } else {
        return;
    }
    write_all(1, out, (size_t)n);
}

int main(int argc, char **argv) {
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) return 1;
    if (argc > 1) {
        record_fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
        if (record_fd < 0) return 1;
    }
    for (;;) {
        if (len == cap) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) return 1;
            buf = bigger;
            cap *= 2;
        }
        ssize_t r = read(0, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        if (r == 0) return 0;
        size_t scanned = len;
        len += (size_t)r;
        size_t start = 0;
        char *nl;
        while ((nl = memchr(buf + scanned, '\n', len - scanned)) != NULL) {
            size_t stop = (size_t)(nl - buf);
            if (record_fd >= 0) write_all(record_fd, buf + start, stop + 1 - start);
            handle(buf + start, buf + stop);
            start = stop + 1;
            scanned = start;
        }
        if (start > 0) {
            memmove(buf, buf + start, len - start);
            len -= start;
        }
    }
}
"""


@dataclass(frozen=True, slots=True)
class RefereeBench:
    games: int
    cycles: int
    seconds: float
    referee_us_per_cycle: float
    games_per_s: float
    raw_games: int
    raw_cycles: int
    raw_seconds: float
    raw_us_per_cycle: float
    overhead_ratio: float  # referee µs per cycle / raw µs per cycle (1.0 = no overhead)
    slices: int
    pinned_cpu: int | None  # the one CPU everything ran on, or None (not pinned)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def compile_instant_bot(folder: Path) -> Path:
    """Compile :data:`INSTANT_C` with ``cc -O2`` into ``folder``; returns the executable."""
    cc = shutil.which("cc")
    if cc is None:
        raise ArenaError("the referee benchmark compiles a tiny C bot, but no `cc` is on PATH")
    source = folder / "instant.c"
    source.write_text(INSTANT_C, encoding="utf-8")
    exe = folder / "instant"
    proc = subprocess.run([cc, "-O2", "-o", str(exe), str(source)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise ArenaError(f"cc could not compile the instant bot:\n{proc.stderr.strip()}")
    return exe


def _check(record: GameRecord) -> int:
    """The game's decision cycles; raises if it did not run cleanly (a bench of fallbacks
    would measure the wrong thing)."""
    if record.status != "complete":
        raise ArenaError(f"a benchmark game was void: {record.void_reason}")
    faults = record.replay.faults
    if faults:
        first = faults[0]
        raise ArenaError(f"an instant bot faulted ({len(faults)} faults), first: seat {first.seat} {first.kind}: {first.message}")
    return len(record.replay.turns)


def _recorded_exchanges(files: Sequence[Path]) -> list[list[bytes]]:
    """The lines each seat received in the recorded game, hello and shutdown left out,
    grouped by message: ``[[seat0, seat1, ...] for each message]``."""
    per_seat = []
    for path in files:
        lines = path.read_bytes().splitlines(keepends=True)
        if not lines or b'"type":"hello"' not in lines[0]:
            raise ArenaError(f"the recording bot did not get a hello first: {path}")
        per_seat.append([line for line in lines[1:] if not line.startswith(b'{"type":"shutdown"')])
    if len({len(lines) for lines in per_seat}) != 1:
        raise ArenaError("the recording bots received different numbers of messages")
    return [list(group) for group in zip(*per_seat, strict=True)]


class _RawBots:
    """Four instant processes on plain pipes, spoken to with blocking os.write/os.read."""

    def __init__(self, exe: Path, n: int) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        try:
            for _ in range(n):
                self.procs.append(
                    subprocess.Popen([str(exe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, cwd=exe.parent)
                )
        except BaseException:
            self.close()
            raise
        self.ins = [p.stdin.fileno() for p in self.procs]  # type: ignore[union-attr]
        self.outs = [p.stdout.fileno() for p in self.procs]  # type: ignore[union-attr]

    def exchange(self, lines: Sequence[bytes]) -> None:
        """Write line i to bot i, then read every bot's one-line reply."""
        write, read = os.write, os.read
        for fd, line in zip(self.ins, lines, strict=True):
            view = memoryview(line)
            while view:
                view = view[write(fd, view):]
        for fd in self.outs:
            reply = read(fd, 65536)
            while not reply.endswith(b"\n"):
                more = read(fd, 65536)
                if not more:
                    raise ArenaError("an instant bot of the raw baseline exited")
                reply += more

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait()
            for pipe in (p.stdin, p.stdout):
                if pipe is not None:
                    pipe.close()


def bench_referee(seconds: float = 2.0, seed: int = 0, *, pin: bool = True) -> RefereeBench:
    """Referee games among four instant C bots against the raw pipe baseline, interleaved
    in slices so that both see the same machine load. With ``pin`` (where the OS allows
    it) this thread and every bot run on one CPU; the thread's CPUs are restored after.
    Every process started here has ended when it returns."""
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-referee-"))
    cpus = _pin_to_one_cpu() if pin else None
    try:
        exe = compile_instant_bot(folder)
        return trio.run(_bench, exe, folder, seconds, seed, min(cpus) if cpus else None)
    finally:
        if cpus:
            os.sched_setaffinity(0, cpus)
        shutil.rmtree(folder, ignore_errors=True)


def _pin_to_one_cpu() -> set[int] | None:
    """Pin the calling thread (and so the processes it starts) to the lowest of its
    CPUs; returns the CPUs it had, or None if the OS has no affinity call."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cpus)})
    return cpus


async def _bench(exe: Path, folder: Path, seconds: float, seed: int, pinned_cpu: int | None) -> RefereeBench:
    config = GameConfig(PLAYERS)
    async with open_pool() as pool:
        # 1. Record the exact lines the referee writes in one game (not timed).
        files = [folder / f"seat{i}.jsonl" for i in range(PLAYERS)]
        recorders = [
            pool.player(BotSpec(name=f"instant{i}", argv=(str(exe), str(f)), cwd=folder)) for i, f in enumerate(files)
        ]
        record = await play_game(recorders, config, seed, time_settings=BENCH_TIME)
        raw_cycles_per_game = _check(record)
        for p in recorders:
            await p.shutdown("recorded")
        exchanges = _recorded_exchanges(files)
        acts = sum(1 for group in exchanges if b'"type":"act"' in group[0])
        if acts != raw_cycles_per_game:
            raise ArenaError(f"recorded {acts} acts per seat for {raw_cycles_per_game} turns")

        # 2. The measured players: one warm-up game starts them and runs the handshake.
        players = [pool.player(BotSpec(name=f"instant{i}", argv=(str(exe),), cwd=folder)) for i in range(PLAYERS)]
        _check(await play_game(players, config, seed, time_settings=BENCH_TIME))

        raw = _RawBots(exe, PLAYERS)
        try:
            raw.exchange([b'{"type":"hello","id":1}\n'] * PLAYERS)
            for group in exchanges:  # warm-up
                raw.exchange(group)
            slices = max(1, round(seconds / 0.25))
            per_slice = seconds / slices / 2
            ref = [0, 0, 0.0]  # games, cycles, seconds
            base = [0, 0, 0.0]
            for _ in range(slices):
                g, c, el = await _referee_slice(players, config, seed, per_slice)
                ref[0] += g
                ref[1] += c
                ref[2] += el
                g, el = _raw_slice(raw, exchanges, per_slice)
                base[0] += g
                base[1] += g * raw_cycles_per_game
                base[2] += el
        finally:
            raw.close()
    ref_us = ref[2] / ref[1] * 1e6
    raw_us = base[2] / base[1] * 1e6
    return RefereeBench(
        games=int(ref[0]),
        cycles=int(ref[1]),
        seconds=round(ref[2], 3),
        referee_us_per_cycle=round(ref_us, 2),
        games_per_s=round(ref[0] / ref[2], 1),
        raw_games=int(base[0]),
        raw_cycles=int(base[1]),
        raw_seconds=round(base[2], 3),
        raw_us_per_cycle=round(raw_us, 2),
        overhead_ratio=round(ref_us / raw_us, 3),
        slices=slices,
        pinned_cpu=pinned_cpu,
    )


async def _referee_slice(players: list[Player], config: GameConfig, seed: int, seconds: float) -> tuple[int, int, float]:
    """Whole games for about ``seconds`` (at least one); returns games, cycles, elapsed."""
    games = cycles = 0
    elapsed = 0.0
    while True:
        start = time.perf_counter()
        # A new deal each game: a process is restarted before a deal it has played (fairness).
        record = await play_game(players, config, seed + 1 + games, time_settings=BENCH_TIME)
        elapsed += time.perf_counter() - start
        games += 1
        cycles += _check(record)
        if elapsed >= seconds:
            return games, cycles, elapsed


def _raw_slice(raw: _RawBots, exchanges: list[list[bytes]], seconds: float) -> tuple[int, float]:
    """The recorded game's exchanges, whole games for about ``seconds`` (at least one);
    returns games, elapsed."""
    games = 0
    start = time.perf_counter()
    deadline = start + seconds
    exchange = raw.exchange
    while True:
        for group in exchanges:
            exchange(group)
        games += 1
        now = time.perf_counter()
        if now >= deadline:
            return games, now - start
