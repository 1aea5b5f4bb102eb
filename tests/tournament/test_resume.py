"""Resuming a tournament: a run with nothing left to play decides so from the bots' manifests,
the settings and the store, and starts no bot and no store writer; a changed, added or
previously failed bot still plays its games; the record behind that decision is checked
against the games in the store, so that a run killed at any moment loses nothing. The
schedule is walked in chunks: the games played, and their order, are those of the
schedule, whatever the chunk size. Real bot processes, which log each start to a file."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import arena.tournament.runner as runner
from arena.bots.sandbox import Level, SandboxSettings
from arena.cli.app import app
from arena.engine import GameConfig
from arena.game.ids import game_id, seat_identity
from arena.game.players import DEFAULT_TIME
from arena.store.database import DB_NAME
from arena.store.opening import open_store
from arena.runs import common
from arena.tournament.progress import SilentReporter
from arena.tournament.runner import run_tournament
from arena.tournament.schedule import make_schedule
from arena.tournament.settings import RunSettings

FAST = replace(DEFAULT_TIME, turn_ms=2000, bank_ms=4000, hello_ms=20_000)

# The bare protocol (as example_bots/minimal), which first appends its name to a log file, and
# fails to start (exits before its hello) while a file named FAIL is beside that log.
LOGGING_BOT = textwrap.dedent('''\
    import json, os, random, sys
    LOG = {log!r}
    with open(LOG, "a") as f:
        f.write({name!r} + "\\n")
    if os.path.exists(os.path.join(os.path.dirname(LOG), "FAIL-" + {name!r})):
        sys.exit(3)
    rng = random.Random(0)
    def send(m):
        sys.stdout.write(json.dumps(m) + "\\n")
        sys.stdout.flush()
    for line in sys.stdin:
        msg = json.loads(line)
        kind, mid = msg["type"], msg.get("id")
        if kind == "hello":
            send({{"type": "hello", "re": mid, "version": 1, "name": {name!r}, "bot_version": "1"}})
        elif kind == "game_start":
            rng = random.Random(msg["seed"])
            send({{"type": "ready", "re": mid}})
        elif kind == "act":
            send({{"type": "action", "re": mid, **rng.choice(msg["legal"])}})
        elif kind == "game_over":
            send({{"type": "ack", "re": mid}})
        elif kind == "shutdown":
            break
''')


def logging_bot(bots: Path, name: str, log: Path) -> Path:
    folder = bots / name
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(LOGGING_BOT.format(log=str(log), name=name))
    (folder / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\nrun = ["{{python}}", "bot.py"]\n')
    return folder


def starts(log: Path) -> list[str]:
    """The bots of which a process started since the log was last cleared (a bot may have
    had several: one per game of a duplicate set), and clear it."""
    if not log.exists():
        return []
    names = log.read_text().split()
    log.unlink()
    return sorted(set(names))


class Order(SilentReporter):
    """The games as the run finished them, and the plans it reported."""

    def __init__(self) -> None:
        self.games: list[str] = []
        self.plans: list[Any] = []

    def planned(self, plan: Any) -> None:
        self.plans.append(plan)

    def game_done(self, game: Any, record: Any, done: int, total: int) -> None:
        self.games.append(record.game_id)


def settings(tmp_path: Path, **changes: Any) -> RunSettings:
    base = RunSettings(
        bots_dir=tmp_path / "bots", results=tmp_path / "res", players=2, jobs=1, time=FAST,
        sandbox=SandboxSettings(Level.NONE),
    )
    return replace(base, **changes)


@pytest.fixture
def league(tmp_path: Path) -> tuple[RunSettings, Path]:
    log = tmp_path / "log" / "starts.txt"
    log.parent.mkdir()
    for name in ("alpha", "beta", "gamma"):
        logging_bot(tmp_path / "bots", name, log)
    return settings(tmp_path), log


def no_writer(*args: object, **kwargs: object) -> None:
    raise AssertionError("a run with nothing to play started the store writer")


def test_a_rerun_with_nothing_to_play_starts_no_bot_and_no_writer(
    league: tuple[RunSettings, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    run, log = league
    first = run_tournament(run)
    assert (first.played, first.already, first.total) == (6, 0, 6)  # 3 tables of 2, each deal under 2 seatings
    assert starts(log) == ["alpha", "beta", "gamma"]
    monkeypatch.setattr(common, "StoreWriter", no_writer)
    seen = Order()
    again = run_tournament(run, seen)
    assert starts(log) == []  # no bot process was started
    assert (again.played, again.already, again.total, again.recovered, again.void) == (0, 6, 6, 0, 0)
    assert [e.name for e in again.entrants] == ["alpha", "beta", "gamma"]
    assert [e.row for e in again.entrants] == [e.row for e in first.entrants]
    assert (again.tournament_id, again.players, again.variant, again.skipped) == (
        first.tournament_id, first.players, first.variant, first.skipped,
    )
    # The plan is reported as before: every game already played, nothing to play.
    [plan] = seen.plans
    assert (plan.tournament_id, plan.total, plan.already) == (first.tournament_id, 6, 6)
    with open_store(run.results, create=False) as store:
        assert store.entrants(first.tournament_id) == [
            {"bot": n, "path": str(run.bots_dir / n)} for n in ("alpha", "beta", "gamma")
        ]


def test_the_command_line_says_the_same_with_nothing_to_play(league: tuple[RunSettings, Path]) -> None:
    """`arena run` again: the same JSON and the same plan line, and no bot started."""
    run, log = league
    args = [
        "run", "--bots", str(run.bots_dir), "--results", str(run.results), "--players", "2", "--jobs", "1",
        "--sandbox", "none", "--no-report",
    ]
    first = CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    starts(log)
    again = CliRunner().invoke(app, args, catch_exceptions=False)
    assert again.exit_code == 0, again.output
    assert "6 games (6 already played, 0 to play)" in again.stderr
    assert "0 game(s) played, 6 already in the store, 0 void" in again.stderr
    as_json = CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False)
    assert starts(log) == []
    before, after = json.loads(first.stdout), json.loads(as_json.stdout)
    assert {**after["run"], "seconds": 0} == {**before["run"], "seconds": 0, "played": 0, "already": 6}
    assert after["rows"] == before["rows"]


def test_a_changed_or_added_bot_plays_its_new_games(league: tuple[RunSettings, Path]) -> None:
    run, log = league
    run_tournament(run)
    starts(log)
    (run.bots_dir / "beta" / "NOTES.txt").write_text("tuned\n")  # a new version of beta
    changed = run_tournament(run)
    assert starts(log) == ["alpha", "beta", "gamma"]
    assert (changed.played, changed.already) == (4, 2)  # the two tables with the new beta
    logging_bot(run.bots_dir, "delta", log)
    added = run_tournament(run)
    assert starts(log) == ["alpha", "beta", "delta", "gamma"]
    assert (added.played, added.already, added.total) == (6, 6, 12)  # delta's three tables
    assert run_tournament(run).already == 12 and starts(log) == []


def test_a_bot_that_failed_to_start_is_tried_again(league: tuple[RunSettings, Path]) -> None:
    run, log = league
    fail = log.parent / "FAIL-gamma"
    fail.write_text("")
    first = run_tournament(run)
    assert [s.name for s in first.skipped] == ["gamma"] and first.played == 2  # alpha and beta's table
    assert starts(log) == ["alpha", "beta", "gamma"]
    second = run_tournament(run)  # gamma is tried again (and fails again): the others start with it
    assert starts(log) == ["alpha", "beta", "gamma"]
    assert [s.name for s in second.skipped] == ["gamma"] and (second.played, second.already) == (0, 2)
    fail.unlink()
    third = run_tournament(run)
    assert starts(log) == ["alpha", "beta", "gamma"]
    assert (third.played, third.already, third.skipped) == (4, 2, [])
    assert run_tournament(run).already == 6 and starts(log) == []


def test_a_game_lost_since_the_record_is_found_and_played_again(league: tuple[RunSettings, Path]) -> None:
    """The record that every game was played is a claim the store's games are counted
    against: rows that a kill never let commit (the replay file written, the row not) or
    games that are gone are seen, and the next run recovers or plays them."""
    run, log = league
    first = run_tournament(run)
    starts(log)
    with open_store(run.results, create=False) as store:
        games = store.games()
    uncommitted, gone = games[1], games[4]
    with sqlite3.connect(run.results / DB_NAME) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        for g in (uncommitted, gone):
            conn.execute("DELETE FROM games WHERE id = ?", (g.id,))
    conn.close()
    (run.results / gone.replay).unlink()
    again = run_tournament(run)
    assert starts(log) == ["alpha", "beta", "gamma"]
    assert (again.recovered, again.played, again.already) == (1, 1, 5)
    with open_store(run.results, create=False) as store:
        assert {g.id for g in store.games()} == {g.id for g in games}
    assert run_tournament(run).already == first.total and starts(log) == []


def test_a_run_that_stops_short_leaves_no_record(league: tuple[RunSettings, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose games are not all played (here: its last one void) records nothing, and the
    next run starts the bots and plays what is missing."""
    run, log = league
    real = runner.LocalExecutor.play_one
    played: list[str] = []

    async def void_the_last(self: Any, job: Any, *args: Any) -> Any:
        record = await real(self, job, *args)
        played.append(job.game_id)
        if len(played) == 6:
            record.replay.status = "void"  # as a game voided by the host's failure is recorded
            record = replace(record, status="void", void_reason="the host failed")
        return record

    monkeypatch.setattr(runner.LocalExecutor, "play_one", void_the_last)
    first = run_tournament(run)
    assert (first.played, first.void) == (5, 1)
    monkeypatch.setattr(runner.LocalExecutor, "play_one", real)
    starts(log)
    with open_store(run.results, create=False) as store:
        assert store.schedule_played(first.tournament_id) is None
    again = run_tournament(run)
    assert starts(log) == ["alpha", "beta", "gamma"] and (again.played, again.already) == (1, 5)


@pytest.mark.parametrize(("first", "chunk", "ahead"), [(1, 3, 4), (2, 2, 100), (256, 4096, 4 * 4096)])
def test_the_walk_plays_the_missing_games_in_schedule_order_whatever_its_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: int, chunk: int, ahead: int
) -> None:
    """Chunks of the schedule looked up one at a time, the games found to play before the
    first game kept up to a bound (past it, the walk takes them up again): the games are
    those missing, in the schedule's order, and the counts are exact."""
    log = tmp_path / "log" / "starts.txt"
    log.parent.mkdir()
    for name in ("alpha", "beta", "gamma", "delta"):
        logging_bot(tmp_path / "bots", name, log)
    run = settings(tmp_path, deals=2)
    monkeypatch.setattr(runner, "FIRST_CHUNK", first)
    monkeypatch.setattr(runner, "CHUNK", chunk)
    monkeypatch.setattr(runner, "AHEAD", ahead)
    order = Order()
    first = run_tournament(run, order)
    with open_store(run.results, create=False) as store:
        key = store.deal_key()
        rows = {b.name: b for b in store.bots().values()}
    config = GameConfig(2, run.variant)
    schedule = make_schedule(sorted(rows), players=2, deals=2, key=key)
    ids = [game_id(config, g.seed, [seat_identity(b, rows[b].hash) for b in g.seats], FAST) for g in schedule]
    assert order.games == ids and first.played == len(ids) == 24
    # Games gone from all over the schedule (rows and files): played again, in schedule order.
    lost = ids[1::5]
    with sqlite3.connect(run.results / DB_NAME) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.executemany("DELETE FROM games WHERE id = ?", [(g,) for g in lost])
    conn.close()
    for g in lost:
        (run.results / "replays" / g[:2] / f"{g}.json.gz").unlink()
    order = Order()
    again = run_tournament(run, order)
    assert order.games == lost
    assert (again.played, again.already, again.total) == (len(lost), 24 - len(lost), 24)
    assert [(p.total, p.already) for p in order.plans] == [(24, 24 - len(lost))]


def test_a_store_made_before_the_record_is_walked_once_then_resumes_at_once(league: tuple[RunSettings, Path]) -> None:
    """A store of schema 3 (no record of played schedules) is brought up to date when opened;
    its first re-run walks the schedule with the bots started, finds every game, and
    records so: the next starts none."""
    run, log = league
    first = run_tournament(run)
    with sqlite3.connect(run.results / DB_NAME) as conn:
        conn.execute("DROP TABLE schedules_played")
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    conn.close()
    starts(log)
    walked = run_tournament(run)
    assert starts(log) == ["alpha", "beta", "gamma"] and (walked.played, walked.already) == (0, first.total)
    assert run_tournament(run).already == first.total and starts(log) == []


def _count_complete(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT count(*) FROM games WHERE status = 'complete'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def test_a_run_killed_after_it_dropped_the_record_is_walked_again(league: tuple[RunSettings, Path]) -> None:
    """SIGKILL to a run that adds a bot to a played tournament, once it has recorded a game:
    the record of the old schedule is gone (a run drops it before its first game), so that
    the same command, and the old bots alone, both look at the store again; nothing is lost
    or played twice."""
    run, log = league
    run_tournament(run)
    logging_bot(run.bots_dir, "delta", log)
    db = run.results / DB_NAME
    before = _count_complete(db)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", "--bots", str(run.bots_dir), "--results", str(run.results),
         "--players", "2", "--jobs", "1", "--sandbox", "none", "--hello-ms", "20000", "--turn-ms", "2000",
         "--bank-ms", "4000", "--no-report"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1"},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while _count_complete(db) <= before:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run recorded no game in time"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    with open_store(run.results, create=False) as store:
        tid = store.latest_tournament().id  # type: ignore[union-attr]
        assert store.schedule_played(tid) is None
        kept = {g.id for g in store.games()}
    starts(log)
    resumed = run_tournament(run)
    assert starts(log) == ["alpha", "beta", "delta", "gamma"]
    assert resumed.total == 12 and resumed.already + resumed.played == 12
    with open_store(run.results, create=False) as store:
        assert kept <= {g.id for g in store.games()} and store.count_games(tid) == 12
    assert run_tournament(run).already == 12 and starts(log) == []


def test_a_game_lost_after_the_count_is_kept_is_seen_too(league: tuple[RunSettings, Path]) -> None:
    """The first run with nothing to play counts the games and keeps the number of the
    tournament's links; a game deleted later takes its link with it, and is played again."""
    run, log = league
    run_tournament(run)
    run_tournament(run)  # nothing to play: the games counted, the links' number kept
    with open_store(run.results, create=False) as store:
        tid = store.latest_tournament().id  # type: ignore[union-attr]
        _, games, linked = store.schedule_played(tid)  # type: ignore[misc]
        assert (games, linked) == (6, 6)
        gone = store.games()[2]
    starts(log)
    assert run_tournament(run).already == 6 and starts(log) == []
    with sqlite3.connect(run.results / DB_NAME) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("DELETE FROM games WHERE id = ?", (gone.id,))
    conn.close()
    (run.results / gone.replay).unlink()
    again = run_tournament(run)
    assert starts(log) == ["alpha", "beta", "gamma"] and (again.played, again.already) == (1, 5)

