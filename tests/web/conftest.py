"""A real `arena serve` on a free loopback port, over a results store filled with games, and
the teams made with `arena team add --json`: what the web tests drive with httpx and Chromium."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from arena.bench.scale import TIME, fill_store
from arena.bench.tournament import make_instant_bots
from arena.tournament.settings import RunSettings

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """One `arena serve` subprocess and what the tests need of it."""

    results: Path
    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    tokens: dict[str, str] = field(default_factory=dict)

    def client(self, token: str | None = None, **kwargs: object) -> httpx.Client:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0, **kwargs)  # type: ignore[arg-type]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def arena(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=120, check=check)


def start_server(results: Path, *extra: str, teams: tuple[str, ...] = (), admin: str | None = None) -> Server:
    """`arena serve --results RESULTS --port FREE --no-ladder EXTRA...`, once it answers."""
    tokens = {}
    for name in teams:
        tokens[name] = json.loads(arena("team", "add", name, "--results", str(results), "--json").stdout)["token"]
    if admin is not None:
        tokens[admin] = json.loads(arena("team", "add", admin, "--admin", "--results", str(results), "--json").stdout)["token"]
    port = free_port()
    log = results.parent / f"serve-{port}.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--results", str(results), "--port", str(port), *extra],
        stdout=log.open("wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    give_up = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"arena serve exited {proc.returncode}: {log.read_text()}")
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > give_up:
            proc.kill()
            raise AssertionError(f"arena serve did not answer within 60 s: {log.read_text()}")
        time.sleep(0.2)
    return Server(results, url, proc, log, tokens)


def filled_store(folder: Path, games: int, *, bots: int = 6) -> RunSettings:
    """A results store with the first ``games`` games of a round-robin of instant bots,
    recorded as `arena run` would (no bot plays: the games are the engine's random ones)."""
    bots_dir = folder / "bots"
    bots_dir.mkdir(parents=True, exist_ok=True)
    settings = RunSettings(
        bots_dir=make_instant_bots(bots_dir.resolve(), bots), results=(folder / "results").resolve(), players=4,
        games=200, jobs=1, time=TIME,
    )
    fill_store(settings, 0, games)
    return settings


@pytest.fixture(scope="module")
def public_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, RunSettings]]:
    folder = tmp_path_factory.mktemp("public")
    settings = filled_store(folder, 40)
    server = start_server(settings.results, "--no-ladder", teams=("alpha", "beta"), admin="boss")
    try:
        yield server, settings
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    # The server is on this machine: no proxy of the environment is asked for it.
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    os.environ.setdefault("no_proxy", "127.0.0.1,localhost")
