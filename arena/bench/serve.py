"""`arena bench serve`: the competition server under load, in one run.

A store of ``stored`` games (random games of instant bots, recorded as a run records them) is
served by a real ``arena serve`` (a subprocess, no ladder). Then, each phase bounded in time:

1. web alone: ``clients`` concurrent clients, each asking for the leaderboard page and
   ``/api/leaderboard`` in turn, as fast as they are answered, for ``seconds``: requests/s,
   p50 and p99 latency of each (the target: p99 under 100 ms);
2. games alone: a tournament of instant bots played by ``arena run`` (the executor the ladder
   plays through), games/s of its playing time;
3. games under the live pages' load: the same tournament in another folder while each client
   asks ``rate`` times a second (an open live page fetches itself again at most once a second:
   the change events come no oftener), the target's figure (under 10 % change);
4. games under a flood: the same while every client asks as fast as it is answered (what no
   page does; on a machine of two cores the server and the clients then take one of them).

The machine is shared: the game phases are measured in the same run, one after the other,
and only their ratios are compared.
"""

from __future__ import annotations

import asyncio
import json
import math
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from arena.bench.scale import TIME, fill_store, run_args
from arena.bench.tournament import make_instant_bots, scratch_folder
from arena.errors import ArenaError
from arena.tournament.settings import RunSettings

P99_TARGET_MS = 100.0
THROUGHPUT_TARGET = 0.10
ROUTES = {"page": "/", "api": "/api/leaderboard"}
BOTS = 8
PER_DEAL = 70 * 4  # games of one deal among 8 bots: 70 tables of 4, each under its 4 rotations


@dataclass
class Latency:
    requests: int
    errors: int
    per_s: float
    p50_ms: float
    p99_ms: float


@dataclass
class ServeBench:
    stored: int
    clients: int
    seconds: float
    fill_s: float
    first_leaderboard_ms: float
    web: dict[str, Latency] = field(default_factory=dict)
    web_during_games: dict[str, Latency] = field(default_factory=dict)
    rate: float = 1.0
    games: int = 0
    games_per_s_alone: float = 0.0
    games_per_s_loaded: float = 0.0
    games_per_s_flooded: float = 0.0
    scratch: str = ""

    @property
    def throughput_change(self) -> float:
        """Games/s under the live pages' load (each client ``rate`` requests a second) against alone."""
        if not self.games_per_s_alone:
            return math.nan
        return self.games_per_s_loaded / self.games_per_s_alone - 1.0

    @property
    def flooded_change(self) -> float:
        """Games/s while every client asks as fast as it is answered, against alone."""
        if not self.games_per_s_alone:
            return math.nan
        return self.games_per_s_flooded / self.games_per_s_alone - 1.0

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["throughput_change"] = round(self.throughput_change, 4)
        doc["flooded_change"] = round(self.flooded_change, 4)
        doc["targets"] = {
            "p99_ms": P99_TARGET_MS,
            "p99_met": all(v.p99_ms < P99_TARGET_MS for v in self.web.values()),
            "throughput_change": THROUGHPUT_TARGET,
            "throughput_met": abs(self.throughput_change) < THROUGHPUT_TARGET,
        }
        return doc


def _percentile(sorted_ms: list[float], q: float) -> float:
    if not sorted_ms:
        return math.nan
    return sorted_ms[min(len(sorted_ms) - 1, max(0, math.ceil(q * len(sorted_ms)) - 1))]


class _Connection:
    """One keep-alive HTTP/1.1 connection that asks for pages by GET: the least a client can
    cost, so that the load measures the server and not the client's library."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\nAccept: */*\r\n\r\n".encode())
        await self.writer.drain()
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        await self.reader.readexactly(length)
        return status

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def _load(url: str, clients: int, stop: threading.Event, seconds: float, rate: float | None = None) -> dict[str, Latency]:
    """``clients`` clients asking for each route in turn until ``stop`` or ``seconds``: each as
    fast as it is answered, or with ``rate`` at most that many requests per second."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    times: dict[str, list[float]] = {k: [] for k in ROUTES}
    errors = dict.fromkeys(ROUTES, 0)
    give_up = time.monotonic() + seconds

    async def client(number: int) -> None:
        names = list(ROUTES)
        i = number
        conn = _Connection(host, int(port))
        try:
            while not stop.is_set() and time.monotonic() < give_up:
                name = names[i % len(names)]
                i += 1
                start = time.perf_counter()
                try:
                    ok = await conn.get(ROUTES[name]) == 200
                except (OSError, asyncio.IncompleteReadError, ValueError):
                    ok = False
                    conn.close()
                    conn = _Connection(host, int(port))
                if ok:
                    times[name].append(1000 * (time.perf_counter() - start))
                else:
                    errors[name] += 1
                if rate:
                    await asyncio.sleep(max(0.0, 1 / rate - (time.perf_counter() - start)))
        finally:
            conn.close()

    started = time.monotonic()
    if rate:  # spread the clients' first requests over one period
        async def staggered(n: int) -> None:
            await asyncio.sleep(n / clients / rate)
            await client(n)

        await asyncio.gather(*(staggered(n) for n in range(clients)))
    else:
        await asyncio.gather(*(client(n) for n in range(clients)))
    spent = max(1e-9, time.monotonic() - started)
    out = {}
    for name, ms in times.items():
        ms.sort()
        out[name] = Latency(len(ms), errors[name], round(len(ms) / spent, 1), round(_percentile(ms, 0.5), 2),
                            round(_percentile(ms, 0.99), 2))
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_server(results: Path) -> tuple[subprocess.Popen[bytes], str]:
    import httpx

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--results", str(results), "--port", str(port), "--no-ladder"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    give_up = time.monotonic() + 120
    while time.monotonic() < give_up:
        if proc.poll() is not None:
            raise ArenaError(f"bench serve: arena serve exited {proc.returncode}: {proc.stderr.read(2000).decode(errors='replace') if proc.stderr else ''}")
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise ArenaError("bench serve: arena serve did not answer within 120 s")


def _play(bots: Path, results: Path, games: int) -> tuple[int, float]:
    """A tournament of the instant bots by `arena run` (one job): games played, games/s."""
    settings = RunSettings(bots_dir=bots, results=results, players=4, deals=-(-games // PER_DEAL), games=games, jobs=1, time=TIME)
    done = subprocess.run(
        [sys.executable, "-m", "arena", *run_args(settings), "--deals", str(settings.deals), "--json", "--no-report"],
        capture_output=True, text=True, timeout=1800,
    )
    if done.returncode != 0:
        raise ArenaError(f"bench serve: arena run failed: {done.stderr[-500:]}")
    doc = json.loads(done.stdout)
    played, seconds = doc["run"]["played"], doc["run"]["seconds"]
    return played, played / max(1e-9, seconds)


def _play_loaded(
    bots: Path, results: Path, games: int, url: str, clients: int, rate: float | None
) -> tuple[float, dict[str, Latency]]:
    """:func:`_play` while the clients ask (paced at ``rate``, or as fast as answered)."""
    stop = threading.Event()
    loaded: dict[str, Latency] = {}
    load = threading.Thread(target=lambda: loaded.update(asyncio.run(_load(url, clients, stop, 1800.0, rate))))
    load.start()
    try:
        time.sleep(1.0)  # the clients are all asking before the first game starts
        _, per_s = _play(bots, results, games)
    finally:
        stop.set()
        load.join()
    return per_s, loaded


def bench_serve(
    stored: int = 10_000, clients: int = 50, seconds: float = 10.0, games: int = 600, scratch: Path | None = None,
    rate: float = 1.0,
) -> ServeBench:
    if stored < 1 or clients < 1 or seconds <= 0 or games < 1 or rate <= 0:
        raise ArenaError("bench serve: --stored, --clients, --seconds, --games and --rate must be positive")
    folder = scratch_folder(scratch)
    bots = make_instant_bots(folder, BOTS)
    web = RunSettings(bots_dir=bots, results=folder / "web", players=4, deals=-(-stored // PER_DEAL), games=stored,
                      jobs=1, time=TIME)
    started = time.monotonic()
    recorded, _ = fill_store(web)
    out = ServeBench(stored=recorded, clients=clients, seconds=seconds, fill_s=round(time.monotonic() - started, 1),
                     first_leaderboard_ms=0.0, scratch=str(folder), rate=rate)
    proc, url = _start_server(web.results)
    try:
        import httpx

        first = time.perf_counter()
        httpx.get(url + "/api/leaderboard", timeout=300).raise_for_status()
        out.first_leaderboard_ms = round(1000 * (time.perf_counter() - first), 1)
        httpx.get(url + "/", timeout=300).raise_for_status()
        out.web = asyncio.run(_load(url, clients, threading.Event(), seconds))
        out.games, out.games_per_s_alone = _play(bots, folder / "alone", games)
        out.games_per_s_loaded, out.web_during_games = _play_loaded(bots, folder / "loaded", games, url, clients, rate)
        out.games_per_s_flooded, _ = _play_loaded(bots, folder / "flooded", games, url, clients, None)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return out
