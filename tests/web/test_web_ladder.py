"""The whole server: `arena serve` with its ladder child (no --no-ladder). Two teams upload
bots through the API; the ladder process validates them and plays ranked games, which appear
on the public leaderboard; killed with SIGKILL, the ladder is started again by the server and
plays on; SIGTERM to the server stops both."""

from __future__ import annotations

import io
import os
import signal
import tarfile
import time
from pathlib import Path

import pytest
from conftest import ROOT, start_server

MINIMAL = ROOT / "example_bots" / "minimal"
RANDOM = ROOT / "example_bots" / "random"


def archive(name: str, source: Path) -> bytes:
    toml = (source / "bot.toml").read_text().replace(f'name = "{source.name}"', f'name = "{name}"')
    files = {"bot.toml": toml.encode(), "bot.py": (source / "bot.py").read_bytes()}
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for fname, data in files.items():
            info = tarfile.TarInfo(f"{name}/{fname}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(") ", 1)[1].split()
            except (FileNotFoundError, IndexError):
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def _wait(what: str, check, timeout: float = 180.0):  # noqa: ANN001, ANN202
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        got = check()
        if got:
            return got
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_serve_validates_plays_and_restarts_its_ladder(tmp_path: Path) -> None:
    results = tmp_path / "results"
    config = tmp_path / "competition.toml"
    config.write_text('[game]\nplayers = 2\nsandbox = "limits"\n')
    server = start_server(results, "--config", str(config), teams=("alpha", "beta"))
    try:
        ladders = _wait("the ladder child", lambda: _children(server.proc.pid))
        assert len(ladders) == 1
        for team, source in (("alpha", MINIMAL), ("beta", RANDOM)):
            with server.client(server.tokens[team]) as c:
                assert c.post("/api/submissions", files={"archive": ("b.tar.gz", archive(f"{team}bot", source))}).status_code == 201

        def accepted() -> bool:
            out = []
            for team in ("alpha", "beta"):
                with server.client(server.tokens[team]) as c:
                    out += [s["status"] for s in c.get("/api/submissions").json()["submissions"]]
            assert "rejected" not in out, out
            return out == ["accepted", "accepted"]

        _wait("both bots accepted", accepted)

        def ranked() -> int:
            with server.client() as c:
                r = c.get("/api/leaderboard")
            return r.json()["games"] if r.status_code == 200 and r.json()["tournament"] == "ladder" else 0

        first = _wait("ranked games on the leaderboard", ranked)
        with server.client() as c:
            board = c.get("/api/leaderboard").json()
            assert {r["bot"] for r in board["rows"]} == {"alphabot", "betabot"}
            game = c.get("/api/games", params={"limit": 1}).json()["games"][0]
            assert c.get(game["replay_data"]).status_code == 200
        os.kill(ladders[0], signal.SIGKILL)
        again = _wait("the ladder started again", lambda: [p for p in _children(server.proc.pid) if p != ladders[0]], 30)
        assert again
        _wait("games after the restart", lambda: ranked() > first)
    finally:
        server.stop()
    # Stopped as every arena command is by SIGTERM: status 130, no traceback, no child left.
    assert server.proc.returncode == 130 and "Traceback" not in server.log.read_text(), server.log.read_text()[-2000:]
    assert _children(server.proc.pid) == []


def test_a_killed_server_takes_its_ladder_with_it(tmp_path: Path) -> None:
    """SIGKILL of `arena serve`: its ladder child gets SIGTERM from the kernel and stops, so a
    server started again never finds a second ladder on the store."""
    config = tmp_path / "competition.toml"
    config.write_text('[game]\nplayers = 2\nsandbox = "limits"\n')
    server = start_server(tmp_path / "results", "--config", str(config))
    ladders = _wait("the ladder child", lambda: _children(server.proc.pid))
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait(10)

    def gone() -> bool:
        try:
            with open(f"/proc/{ladders[0]}/stat") as f:
                return f.read().rsplit(") ", 1)[1].split()[0] == "Z"
        except FileNotFoundError:
            return True

    _wait("the ladder to stop", gone, 30)
