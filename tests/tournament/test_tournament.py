"""`arena run` end to end, with real bot processes: a tournament completes, is
deterministic, resumes after SIGKILL or Ctrl-C without losing or repeating a game,
grows as a ladder, and skips bots that cannot take part."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.app import app
from arena.game.ids import game_id
from arena.store.database import DB_NAME
from arena.store.opening import open_store
from arena.tournament.runner import run_tournament
from arena.tournament.settings import RunSettings, load_config, settings_from

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
FAST = ("random", "greedy", "minimal")


def make_bots(folder: Path, names: tuple[str, ...] = FAST) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copytree(EXAMPLES / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def run_cli(*args: str) -> dict:
    result = CliRunner().invoke(app, ["run", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def share_deal_key(source: Path, target: Path) -> None:
    """Give the (new) store in ``target`` the deal key of ``source``'s: same seed, same games."""
    with open_store(source) as src, open_store(target) as dst:
        dst.import_deal_key(src.deal_key().hex())


def game_ids(results: Path) -> set[str]:
    with open_store(results, create=False) as store:
        return {g.id for g in store.games()}


def table(doc: dict) -> list[tuple]:
    return [(r["bot"], r["elo"], r["elo_low"], r["elo_high"], r["games"], r["wins"]) for r in doc["rows"]]


def test_run_completes_and_ranks_random_below_greedy(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots")
    doc = run_cli("--bots", str(bots), "--results", str(tmp_path / "res"), "--players", "2", "--deals", "6")
    # 3 bots, 2 seats: 3 tables × 2 rotations × 6 deals
    assert doc["run"] == {**doc["run"], "played": 36, "already": 0, "total": 36, "void": 0, "interrupted": False}
    assert doc["games"] == 36
    ranks = {r["bot"]: r["rank"] for r in doc["rows"]}
    assert ranks["greedy"] < ranks["random"]
    for row in doc["rows"]:
        assert set(row) >= {"rank", "bot", "version", "elo", "elo_low", "elo_high", "games", "wins", "mean_points", "mean_rank", "faults"}
        assert row["elo_low"] <= row["elo"] <= row["elo_high"]
        assert row["games"] == 24
    assert doc["skipped"] == []
    res = tmp_path / "res"
    assert json.loads((res / "leaderboard.json").read_text())["rows"] == doc["rows"]
    assert "| 1 |" in (res / "leaderboard.md").read_text()
    # Every game has its replay, and every replay re-simulates exactly.
    verify = CliRunner().invoke(app, ["verify", str(res / "replays"), "--json"])
    assert verify.exit_code == 0, verify.output
    checked = json.loads(verify.stdout)
    assert {k: checked[k] for k in ("checked", "failed", "failures")} == {"checked": 36, "failed": 0, "failures": []}
    assert [f["status"] for f in checked["files"]] == ["ok"] * 36
    # Re-running plays nothing and gives the same table.
    again = run_cli("--bots", str(bots), "--results", str(tmp_path / "res"), "--players", "2", "--deals", "6")
    assert again["run"]["played"] == 0 and again["run"]["already"] == 36
    assert table(again) == table(doc)


def test_same_seed_same_games_and_same_table(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots")
    args = ["--bots", str(bots), "--players", "3", "--deals", "2", "--seed", "11"]
    a = run_cli(*args, "--results", str(tmp_path / "a"))
    # The same games need the same deal key: a's, imported into a fresh folder.
    with open_store(tmp_path / "a") as sa, open_store(tmp_path / "b") as sb:
        sb.import_deal_key(sa.deal_key().hex())
    b = run_cli(*args, "--results", str(tmp_path / "b"))
    assert game_ids(tmp_path / "a") == game_ids(tmp_path / "b")
    assert table(a) == table(b)
    with open_store(tmp_path / "a") as sa, open_store(tmp_path / "b") as sb:
        pa = {g.id: [s.points for s in g.seats] for g in sa.games()}
        pb = {g.id: [s.points for s in g.seats] for g in sb.games()}
    assert pa == pb
    with open_store(tmp_path / "a") as sa, open_store(tmp_path / "c") as sc:
        sc.import_deal_key(sa.deal_key().hex())
    c = run_cli(*args[:-1], "12", "--results", str(tmp_path / "c"))
    assert game_ids(tmp_path / "c").isdisjoint(game_ids(tmp_path / "a"))
    assert c["games"] == a["games"]


def test_a_game_id_hashes_what_decides_the_game_only() -> None:
    from arena.engine import GameConfig
    from arena.game.players import TimeSettings

    cfg = GameConfig(2)
    ts = TimeSettings()
    base = game_id(cfg, 5, ["aa", "bb"], ts)
    assert game_id(cfg, 5, ["aa", "bb"], TimeSettings()) == base
    assert game_id(cfg, 6, ["aa", "bb"], ts) != base  # deal
    assert game_id(cfg, 5, ["bb", "aa"], ts) != base  # seating
    assert game_id(cfg, 5, ["aa", "cc"], ts) != base  # a bot's content
    assert game_id(cfg, 5, ["aa", "bb"], TimeSettings(turn_ms=500)) != base  # time
    assert game_id(GameConfig(2, "alternate"), 5, ["aa", "bb"], ts) != base  # variant


def test_ladder_adding_a_bot_plays_only_its_games(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots", ("random", "greedy"))
    res = tmp_path / "res"
    first = run_cli("--bots", str(bots), "--results", str(res), "--players", "2", "--deals", "2")
    assert first["run"]["played"] == 4
    before = game_ids(res)
    make_bots(bots, ("minimal",))
    second = run_cli("--bots", str(bots), "--results", str(res), "--players", "2", "--deals", "2")
    # 3 tables now; the old one's 4 games are reused, the 2 new tables' 8 are played.
    assert second["run"] == {**second["run"], "total": 12, "already": 4, "played": 8}
    after = game_ids(res)
    assert before <= after and len(after) == 12
    with open_store(res) as store:
        new = [g for g in store.games() if g.id not in before]
    assert all("minimal" in {s.bot.name for s in g.seats} for g in new)
    # A changed bot is a new version: rated apart, the old version's games stay.
    (bots / "greedy" / "NOTES.txt").write_text("tuned\n")
    third = run_cli("--bots", str(bots), "--results", str(res), "--players", "2", "--deals", "2")
    assert third["run"]["played"] == 8  # the two tables with the new greedy
    assert len(game_ids(res)) == 20
    lb = CliRunner().invoke(app, ["leaderboard", str(res), "--all", "--players", "2", "--json"])
    rows = json.loads(lb.stdout)["rows"]
    greedy_versions = {r["key"] for r in rows if r["bot"] == "greedy"}
    assert len(greedy_versions) == 2
    # The run's table (and the tournament's leaderboard) are of the bots as they are now:
    # the current greedy only, over the 12 games among the current versions.
    new_greedy = next(r["key"] for r in third["rows"] if r["bot"] == "greedy")
    assert [r["bot"] for r in third["rows"]].count("greedy") == 1 and third["games"] == 12
    lb = json.loads(CliRunner().invoke(app, ["leaderboard", str(res), "--json"]).stdout)
    assert lb["games"] == 12 and [r["key"] for r in lb["rows"] if r["bot"] == "greedy"] == [new_greedy]


def test_bots_that_cannot_take_part_are_reported_and_skipped(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots", ("random", "greedy"))
    broken_build = bots / "nobuild"
    broken_build.mkdir()
    (broken_build / "bot.toml").write_text('name = "nobuild"\nrun = ["./bot"]\nbuild = ["sh", "-c", "echo compiler says no >&2; exit 3"]\n')
    (bots / "crasher.py").write_text("import sys\nsys.stderr.write('I give up\\n')\nsys.exit(2)\n")
    (bots / "future.py").write_text(
        "import json, sys\n"
        "hello = json.loads(sys.stdin.readline())\n"
        "print(json.dumps({'type': 'hello', 're': hello['id'], 'version': 99, 'name': 'future'}), flush=True)\n"
        "sys.stdin.read()\n"
    )
    bad = bots / "badtoml"
    bad.mkdir()
    (bad / "bot.toml").write_text("name = \n")
    doc = run_cli("--bots", str(bots), "--results", str(tmp_path / "res"), "--players", "2", "--time-scale", "0.2")
    assert {r["bot"] for r in doc["rows"]} == {"random", "greedy"}
    skipped = {s["bot"]: s["reason"] for s in doc["skipped"]}
    assert set(skipped) == {"nobuild", "crasher", "badtoml", "future"}
    assert "protocol version 99" in skipped["future"], skipped["future"]
    assert "build failed" in skipped["nobuild"] and "build.log" in skipped["nobuild"]
    assert "cannot start" in skipped["crasher"] and "I give up" in skipped["crasher"]
    assert "bot.toml" in skipped["badtoml"]
    assert doc["run"]["played"] == 2


def test_too_few_bots_is_a_clear_error(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots", ("random",))
    result = CliRunner().invoke(app, ["run", "--bots", str(bots), "--results", str(tmp_path / "r")])
    assert result.exit_code == 1
    message = str(result.exception)
    assert "1 bot(s) ready (random)" in message and "needs at least 2" in message


def test_config_file_holds_the_settings_and_rejects_unknown_keys(tmp_path: Path) -> None:
    make_bots(tmp_path / "bots", ("random", "greedy"))
    cfg = tmp_path / "league.toml"
    cfg.write_text('bots = "bots"\nresults = "out"\nplayers = 2\ndeals = 3\nseed = 4\n')
    loaded = load_config(cfg)
    assert loaded["bots"] == str(tmp_path / "bots") and loaded["deals"] == 3
    s = settings_from(loaded, base=RunSettings(bots_dir=Path(loaded["bots"])))
    assert (s.players, s.deals, s.seed, s.results) == (2, 3, 4, tmp_path / "out")
    result = CliRunner().invoke(app, ["run", "--config", str(cfg), "--deals", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["run"]["total"] == 2  # --deals on the command line wins
    cfg.write_text("plyers = 3\n")
    with pytest.raises(Exception, match=r"league\.toml: unknown setting 'plyers'"):
        load_config(cfg)
    cfg.write_text('players = "four"\n')
    with pytest.raises(Exception, match=r"league\.toml: setting 'players' must be int"):
        load_config(cfg)


def test_gauntlet_plays_only_that_bots_tables(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots")
    summary = run_tournament(
        RunSettings(bots_dir=bots, results=tmp_path / "res", players=2, gauntlet="minimal", jobs=2)
    )
    assert summary.played == 4  # minimal vs random, minimal vs greedy, both seatings
    with open_store(tmp_path / "res") as store:
        assert all("minimal" in {s.bot.name for s in g.seats} for g in store.games())


def _count_complete(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT count(*) FROM games WHERE status = 'complete'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def _arena(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "run", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )


def _wait_for_games(db: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while _count_complete(db) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the run did not record games in time"
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    """The process runs (not ended, not a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:  # (ProcessLookupError included) gone
        return False


def _children_of(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


@pytest.mark.parametrize("how", ["sigkill", "sigint"])
def test_a_run_stopped_at_any_moment_resumes_without_losing_or_repeating_a_game(tmp_path: Path, how: str) -> None:
    bots = make_bots(tmp_path / "bots")
    args = ["--bots", str(bots), "--players", "2", "--deals", "5", "--seed", "3"]
    reference = run_cli(*args, "--results", str(tmp_path / "ref"))
    res = tmp_path / "res"
    share_deal_key(tmp_path / "ref", res)
    proc = _arena(*args, "--results", str(res))
    _wait_for_games(res / DB_NAME, 4, proc)
    bot_pids = _children_of(proc.pid)
    if how == "sigkill":
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    else:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 130, stderr
        assert b"run the same command again" in stderr
    # No bot outlives the arena.
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in bot_pids):
        assert time.monotonic() < deadline, f"bot processes left behind: {bot_pids}"
        time.sleep(0.05)
    kept = game_ids(res)
    assert 4 <= len(kept) < 30
    resumed = run_cli(*args, "--results", str(res))
    # Games whose replay was written but whose row was not yet committed are recorded
    # from their files, not played again.
    assert resumed["run"]["already"] == len(kept) + resumed["run"]["recovered"]
    assert resumed["run"]["played"] == 30 - resumed["run"]["already"]
    assert game_ids(res) == game_ids(tmp_path / "ref")
    assert table(resumed) == table(reference)


def test_games_with_a_replay_file_but_no_row_are_recorded_from_the_file(tmp_path: Path) -> None:
    """A kill between a game's replay file and its row: the next run checks the file and
    records the game from it. A file that fails the check is replaced by playing again."""
    bots = make_bots(tmp_path / "bots")
    args = ["--bots", str(bots), "--players", "2", "--deals", "2", "--seed", "5"]
    res = tmp_path / "res"
    first = run_cli(*args, "--results", str(res))
    with open_store(res) as store:
        games = store.games()
    lost, broken = games[3:7], games[7]
    with sqlite3.connect(res / DB_NAME) as conn:  # the rows a kill never let commit
        conn.execute("PRAGMA foreign_keys = ON")
        for g in [*lost, broken]:
            conn.execute("DELETE FROM tournament_games WHERE game_id = ?", (g.id,))
            conn.execute("DELETE FROM game_seats WHERE game_id = ?", (g.id,))
            conn.execute("DELETE FROM games WHERE id = ?", (g.id,))
    (res / broken.replay).write_bytes((res / broken.replay).read_bytes()[:100])  # cut short
    resumed = run_cli(*args, "--results", str(res))
    assert resumed["run"]["recovered"] == len(lost)
    assert resumed["run"]["played"] == 1  # the broken one
    assert game_ids(res) == {g.id for g in games}
    assert table(resumed) == table(first)
    verify = CliRunner().invoke(app, ["verify", str(res / "replays")])
    assert verify.exit_code == 0, verify.output


def test_a_store_that_cannot_be_written_stops_the_run_with_the_game_named(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots", ("random", "greedy"))
    args = ["--bots", str(bots), "--players", "2", "--deals", "3"]
    run_cli(*args, "--results", str(tmp_path / "ref"))
    with open_store(tmp_path / "ref") as store:
        order = [g.id for g in store.games()]
    # The third game's replay path is taken by a folder that cannot be replaced.
    res = tmp_path / "res"
    share_deal_key(tmp_path / "ref", res)
    blocker = res / "replays" / order[2][:2] / f"{order[2]}.json.gz"
    (blocker / "keep").mkdir(parents=True)
    result = CliRunner().invoke(app, ["run", *args, "--results", str(res), "--jobs", "1"])
    assert result.exit_code == 1
    message = str(result.exception)
    assert f"cannot record game {order[2]}" in message or order[2] in message, message
    assert (blocker / "keep").is_dir()  # nothing of the user's was removed
    assert set(order[:2]) <= game_ids(res)  # what was recorded before stays
    assert order[2] not in game_ids(res)


def test_a_results_folder_that_cannot_hold_replays_is_named(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots", ("random", "greedy"))
    res = tmp_path / "res"
    res.mkdir()
    (res / "replays").write_text("not a folder\n")
    result = CliRunner().invoke(app, ["run", "--bots", str(bots), "--results", str(res), "--players", "2"])
    assert result.exit_code == 1
    assert "replays: cannot create the replay folders" in str(result.exception)
    assert (res / "replays").read_text() == "not a folder\n"


def test_every_example_bot_plays_a_whole_tournament(tmp_path: Path) -> None:
    """`arena run --bots example_bots/` with the mcts bot in its deterministic mode (a
    small fixed number of playouts) so that the test is quick and the table repeatable."""
    bots = tmp_path / "example_bots"
    shutil.copytree(EXAMPLES, bots, ignore=shutil.ignore_patterns("__pycache__"))
    toml = bots / "mcts" / "bot.toml"
    toml.write_text(toml.read_text() + 'env = { MCTS_ITERATIONS = "40" }\n')
    expected = {"random", "greedy", "minimal", "mcts"}
    if shutil.which("node"):
        expected.add("js-greedy")
    if shutil.which("cc"):
        expected.add("c-greedy")
    doc = run_cli("--bots", str(bots), "--results", str(tmp_path / "res"))
    assert {r["bot"] for r in doc["rows"]} == expected, doc["skipped"]
    assert doc["run"]["void"] == 0
    assert doc["run"]["played"] == doc["run"]["total"] == 4 * math.comb(len(expected), 4)
    assert all(sum(r["faults"].values()) == 0 for r in doc["rows"])
    ranks = {r["bot"]: r["rank"] for r in doc["rows"]}
    assert ranks["greedy"] < ranks["random"]


def test_ratings_are_kept_per_format_and_the_leaderboard_picks_the_format(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots")
    res = tmp_path / "res"
    two = run_cli("--bots", str(bots), "--results", str(res), "--variant", "dummy")
    three = run_cli("--bots", str(bots), "--results", str(res), "--players", "3", "--variant", "alternate")
    assert two["format"] == {"players": 2, "variant": "dummy"} and two["games"] == 6
    assert three["format"] == {"players": 3, "variant": "alternate"} and three["games"] == 3
    latest = json.loads(CliRunner().invoke(app, ["leaderboard", str(res), "--json"]).stdout)
    assert latest["format"] == three["format"]
    picked = json.loads(CliRunner().invoke(app, ["leaderboard", str(res), "--players", "2", "--json"]).stdout)
    assert picked["tournament"] == two["tournament"] and picked["rows"] == two["rows"]
    missing = CliRunner().invoke(app, ["leaderboard", str(res), "--players", "5"])
    assert missing.exit_code == 1 and "no tournament of this format" in str(missing.exception)
    # Dummy games store the two bot seats only.
    with open_store(res) as store:
        assert all(len(g.seats) == 2 for g in store.games(two["tournament"]))


@pytest.mark.skipif(shutil.which("cc") is None, reason="the C example bot needs cc")
def test_relative_folders_work_for_bots_with_a_build_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's command: `arena run --bots example_bots/` with the default, relative
    results folder, where the C bot is built (in the sandbox) from a relative cache path."""
    make_bots(tmp_path / "bots", ("random", "c-greedy"))
    monkeypatch.chdir(tmp_path)
    doc = run_cli("--bots", "bots", "--results", "res", "--players", "2")
    assert doc["skipped"] == []
    assert {r["bot"] for r in doc["rows"]} == {"random", "c-greedy"}
    assert (tmp_path / "res" / "build").is_dir()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('sandbox = "strcit"', "c3.toml: sandbox must be one of none, limits, strict, not 'strcit'"),
        ('seatings = "al"', "c3.toml: seatings must be one of rotations, all, not 'al'"),
        ('variant = "basic"', "c3.toml: variant must be one of standard, alternate, dummy, not 'basic'"),
        ("deals = 0", "c3.toml: deals must be at least 1, not 0"),
        ("players = 9", "c3.toml: players must be from 2 to 5, not 9"),
        ("jobs = 0", "c3.toml: jobs must be at least 1, not 0"),
        ("turn-ms = 0", "c3.toml: turn-ms must be at least 1, not 0"),
        ("time_scale = nan", "c3.toml: time_scale must be at least 0.001, not nan"),
        ('anchor = "greedy"', "c3.toml: anchor takes BOT=ELO"),
        ('cluster = "local:0"', "c3.toml: cluster takes a scheduler address"),
        ('[limits]\nmemory_mb = "big"', "c3.toml: the run's caps on bots' limits: limit 'memory_mb' must be a positive whole number, not 'big'"),
    ],
)
def test_a_bad_value_in_the_config_file_names_the_file_and_the_key(tmp_path: Path, line: str, message: str) -> None:
    make_bots(tmp_path / "bots", ("random", "greedy"))
    cfg = tmp_path / "c3.toml"
    cfg.write_text(f'bots = "bots"\nresults = "out"\n{line}\n')
    result = CliRunner().invoke(app, ["run", "--config", str(cfg)])
    assert result.exit_code == 1, result.output
    assert str(result.exception).startswith(f"{tmp_path}/{message}"), str(result.exception)
    assert not (tmp_path / "out").exists()  # refused before anything was made


def test_the_same_mistake_as_a_flag_names_the_flag(tmp_path: Path) -> None:
    make_bots(tmp_path / "bots", ("random", "greedy"))
    cfg = tmp_path / "c3.toml"
    cfg.write_text('bots = "bots"\nresults = "out"\nseatings = "all"\n')
    for flag in (["--seatings", "al"], ["--sandbox", "strcit"]):
        result = CliRunner().invoke(app, ["run", "--config", str(cfg), *flag])
        assert result.exit_code == 1, result.output
        assert str(result.exception).startswith(f"{flag[0]} must be one of"), str(result.exception)


def test_a_bot_given_as_the_bots_folder_is_named_before_anything_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_bots(tmp_path / "small", ("random", "greedy"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "--bots", "small/greedy", "--results", "RESULTS"])
    assert result.exit_code == 1
    assert str(result.exception) == (
        "small/greedy is a bot (it has a bot.toml); --bots takes the folder that holds the bots, e.g. --bots small"
    )
    assert not (tmp_path / "RESULTS").exists()  # no store, no build cache
    # The folder that holds it still plays.
    assert run_cli("--bots", "small", "--results", "RESULTS", "--players", "2")["run"]["played"] == 2


def test_a_format_that_cannot_be_is_refused_before_any_bot_starts(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots", ("random", "greedy"))
    (bots / "slowstart.py").write_text("import time\ntime.sleep(30)\n")  # would hold the run for its hello timeout
    t = time.monotonic()
    result = CliRunner().invoke(app, ["run", "--bots", str(bots), "--results", str(tmp_path / "res"), "--variant", "dummy", "--players", "3"])
    assert result.exit_code == 1 and "the dummy variant is for 2 players (R15), not 3" in str(result.exception)
    assert time.monotonic() - t < 10
