"""`arena bench scale` at a small size: the stores it fills without playing are what a run
records (verified replays, every game found played by `arena run`), and every figure
comes out with its target (no timing assertions: speed is the benchmark's business)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.bench.scale import PARTS, TIME, bench_scale, fill_store, random_game, run_arena, run_args
from arena.bench.tournament import make_instant_bots
from arena.cli.app import app
from arena.engine import GameConfig, Variant
from arena.errors import ArenaError
from arena.game.replay import SeatInfo, read_replay
from arena.game.verify import verify_replay
from arena.store.opening import open_store
from arena.tournament.settings import RunSettings

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="the instant bot is compiled with cc")


@pytest.mark.parametrize(("players", "variant"), [(4, Variant.STANDARD), (2, Variant.DUMMY), (5, Variant.STANDARD)])
def test_random_games_verify_as_replays(players: int, variant: Variant) -> None:
    """A filled store's games re-simulate under verify_replay (R16 plays, events, result)."""
    config = GameConfig(players, variant)
    seats = [SeatInfo(seat=i, bot=f"bot{i}", version="1", hash="0" * 16) for i in range(players)]
    for k in range(5):
        record = random_game(config, 1000 + k, 7 + k, f"game{k}", seats, TIME, random.Random(k))
        verify_replay(record.replay)
        assert record.status == "complete"
        assert sorted(record.ranks[:players])[0] == 1


def test_filled_store_is_what_the_run_would_play(tmp_path: Path) -> None:
    """`arena run` with the same arguments finds every filled game played (resume is real),
    and the replay files are the run's, verified."""
    bots = make_instant_bots(tmp_path, 6)
    settings = RunSettings(bots_dir=bots, results=tmp_path / "results", players=4, games=60, jobs=2, time=TIME)
    recorded, length = fill_store(settings, 0, 20)
    assert (recorded, length) == (20, 60)
    again, _ = fill_store(settings, 20)
    assert again == 40
    with open_store(settings.results, create=False) as store:
        games = store.games()
        assert len(games) == 60
        for g in games[:5]:
            verify_replay(read_replay(settings.results / g.replay))
    cmd = run_arena(run_args(settings))
    assert cmd.code == 0, cmd.lines[-3:]
    planned = cmd.first(r"^tournament ")
    assert planned is not None and "(60 already played, 0 to play)" in planned[2]
    assert cmd.first(r"^\[\d+/\d+\] game ") is None  # nothing was played


def test_every_figure_is_reported(tmp_path: Path) -> None:
    r = bench_scale(
        bots=8, run_bots=6, report_bots=7, games=60, stored=64, added=(8, 16), live_games=60, schedule_games=40,
        schedule_timeout_s=30, scratch=tmp_path,
    )
    names = [f.name for f in r.figures]
    assert names == [
        "memory flat", "schedule streamed, with --games", "schedule streamed, without --games", "schedule memory",
        "report incremental", "resume instant", "ratings fast", "live table",
    ]
    by_name = {f.name: f for f in r.figures}
    for f in r.figures:
        if f.name == "schedule memory":  # a difference of two small measurements: noise either way
            assert f.value is not None and abs(f.value) <= 16, f
        else:
            assert f.value is not None and f.value >= 0 or f.name == "live table", f
        assert f.target
    # Small runs: the targets set at 100,000 games or 200 bots do not apply.
    assert by_name["memory flat"].passed is None and by_name["resume instant"].passed is None
    assert r.details["report"]["resume"]["to_play"] == 0
    assert r.details["memory"]["games"] == 60 and r.details["memory"]["rss_end_mib"] > 0
    assert not list(tmp_path.iterdir())  # the scratch folder is gone


def test_cli_json_and_only(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["bench", "scale", "--only", "live", "--run-bots", "4", "--live-games", "20", "--scratch", str(tmp_path), "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["benchmark"] == "scale"
    assert [f["name"] for f in data["figures"]] == ["live table"]
    bad = CliRunner().invoke(app, ["bench", "scale", "--only", "everything"])
    assert isinstance(bad.exception, ArenaError)
    assert str(bad.exception).startswith("--only takes " + ", ".join(PARTS))


# -- stopped by a signal: real processes ----------------------------------------------


def _descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError):
                kids = {int(k) for k in (task / "children").read_text().split()}
                todo += sorted(kids - found)
                found |= kids
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] not in "ZX"
    except OSError:
        return False


def _games_in(folder: Path) -> int:
    for db in folder.glob(".arena-bench-*/*/arena.db"):
        with contextlib.suppress(sqlite3.Error):
            with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
                return conn.execute("SELECT count(*) FROM games").fetchone()[0]
    return 0


def _stop_mid_run(tmp_path: Path, args: list[str], sig: signal.Signals) -> tuple[int, str, set[int]]:
    """Start ``arena ARGS`` in a process of its own, send ``sig`` once it has recorded some
    games, and return its exit status, its stderr and the processes it had then."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", *args, "--scratch", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 600  # a guard against a hang, not a measure
        while _games_in(tmp_path) < 20:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "no game recorded in 10 minutes"
            time.sleep(0.2)
        children = _descendants(proc.pid)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, stderr.decode(), children


def test_sigterm_while_a_store_is_filled_stops_the_bench(tmp_path: Path) -> None:
    """SIGTERM while the bench fills a store (it once went on until SIGKILL): it exits with
    status 130 and one line, its store's writer has ended and its scratch folder is gone."""
    code, stderr, children = _stop_mid_run(
        tmp_path, ["bench", "scale", "--only", "ratings", "--bots", "32", "--stored", "100000"], signal.SIGTERM
    )
    assert code == 130, stderr
    assert stderr.strip().splitlines()[-1].startswith("interrupted: bench scale stopped"), stderr
    assert "Traceback" not in stderr
    assert children and not [p for p in children if _alive(p)]
    assert list(tmp_path.iterdir()) == []


def test_sigint_while_a_tournament_is_benched_stops_the_bench(tmp_path: Path) -> None:
    """Ctrl-C during `arena bench tournament` (it once only failed the round and went on)."""
    code, stderr, children = _stop_mid_run(tmp_path, ["bench", "tournament", "--games", "6000"], signal.SIGINT)
    assert code == 130, stderr
    assert stderr.strip().splitlines()[-1].startswith("interrupted: bench tournament stopped"), stderr
    assert "Traceback" not in stderr
    assert not [p for p in children if _alive(p)]
    assert list(tmp_path.iterdir()) == []
