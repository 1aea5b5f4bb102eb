"""`arena match` end to end, with real bot processes: greedy reaches H1 against random with
two and four players; the pairs are stored like any games (games, leaderboard, verify see
them); a match killed or interrupted mid-way resumes to the same verdict without playing a
game twice; what a user can get wrong is one clear line; A against a renamed copy of A
does not accept H1 more often than alpha (slow)."""

from __future__ import annotations

import json
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
from arena.match.schedule import pair_at
from arena.store.database import DB_NAME
from arena.store.opening import open_store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
ENV = {
    **os.environ, "NO_COLOR": "1",
    "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
}
FIELDS = {"verdict", "llr", "llr_lower", "llr_upper", "elo", "elo_low", "elo_high", "los", "pairs", "games"}


def match(*args: str, code: int = 0) -> dict:
    result = CliRunner().invoke(app, ["match", *args, "--sandbox", "none", "--json"], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def stored_ids(results: Path) -> list[str]:
    with open_store(results, create=False) as store:
        return sorted(g.id for g in store.games(status="complete"))


def test_greedy_reaches_h1_against_random_two_players(tmp_path: Path) -> None:
    res = tmp_path / "res"
    doc = match("random", "greedy", "--sprt", "elo0=0,elo1=50", "--results", str(res))
    assert FIELDS <= doc.keys()
    assert doc["verdict"] == "H1" and doc["llr"] >= doc["llr_upper"]
    assert doc["pairs"] <= 40 and doc["games"] == 2 * doc["pairs"] == doc["played"]
    assert doc["los"] > 0.99
    # The pairs are games of the store like any others, in a tournament of the match's id.
    listed = CliRunner().invoke(app, ["games", str(res), "-t", doc["match"], "--json"])
    assert listed.exit_code == 0, listed.output
    assert len(json.loads(listed.stdout)["games"]) == doc["games"]
    board = CliRunner().invoke(app, ["leaderboard", str(res), "-t", doc["match"], "--json"])
    assert board.exit_code == 0, board.output
    assert [r["bot"] for r in json.loads(board.stdout)["rows"]] == ["greedy", "random"]
    verified = CliRunner().invoke(app, ["verify", str(res / "replays")])
    assert verified.exit_code == 0, verified.output
    # Run again: nothing to play, the same verdict from the stored pairs.
    again = match("random", "greedy", "--sprt", "elo0=0,elo1=50", "--results", str(res))
    assert again["played"] == 0 and again["already"] == doc["pairs"]
    assert {k: again[k] for k in FIELDS} == {k: doc[k] for k in FIELDS}


def test_greedy_reaches_h1_against_random_four_players(tmp_path: Path) -> None:
    """B replaces A at a table of the default opponents (the example greedy and random)."""
    doc = match("random", "greedy", "-p", "4", "--sprt", "elo0=0,elo1=50", "--results", str(tmp_path / "res"), "-j", "1")
    assert doc["verdict"] == "H1" and doc["pairs"] <= 60
    assert doc["opponents"] == ["greedy", "random"] and len(doc["counts"]) == 13
    assert doc["elo"] > 0 and doc["elo_low"] > 0


def test_a_fixed_match_plays_its_games_and_judges_at_the_end(tmp_path: Path) -> None:
    doc = match("random", "greedy", "--games", "6", "--results", str(tmp_path / "res"))
    assert doc["pairs"] == 3 and doc["played"] == 6 and doc["sprt"] is None
    assert doc["verdict"] in ("H1", "H0", "none")


def test_piped_progress_is_a_plain_line_per_pair_and_the_verdict_on_stdout(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "match", "random", "greedy", "--games", "6", "--results", str(tmp_path / "res"),
         "--sandbox", "none"],
        capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("pair ")]
    assert [line.split()[1] for line in lines] == ["1/3", "2/3", "3/3"]
    assert all("LLR" in line and "LOS" in line for line in lines)
    assert "\x1b" not in proc.stderr  # no cursor movement or colour when piped
    assert proc.stdout.splitlines()[1].startswith("verdict ")


def test_a_and_bs_games_in_a_pair_share_the_deal_and_the_seat() -> None:
    """Pair i: the same deal; in four-player pairs B sits where A sat, among the same opponents."""
    key = b"k" * 32
    for i in range(8):
        pair = pair_at(i, "A", "B", ["g", "r"], players=4, seed=1, key=key)
        a_game, b_game = pair.games
        assert a_game[pair.seat] == "A" and b_game[pair.seat] == "B" and pair.seat == i % 4
        assert [s for j, s in enumerate(a_game) if j != pair.seat] == [s for j, s in enumerate(b_game) if j != pair.seat]
        two = pair_at(i, "A", "B", [], players=2, seed=1, key=key)
        assert two.games[0][two.seat] == "A" and two.games[1] == tuple(reversed(two.games[0]))
    assert pair_at(3, "A", "B", [], players=2, seed=1, key=key).seed != pair_at(4, "A", "B", [], players=2, seed=1, key=key).seed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["random", "random"], "A and B are the same bot (random"),
        (["random", "greedy", "-p", "3", "-o", "no-such-bot"], "--opponent 'no-such-bot': no such bot"),
        (["random", "greedy", "--sprt", "elo0=0,elo1=lots"], "--sprt 'elo0=0,elo1=lots': elo1 must be a number"),
        (["random", "greedy", "--sprt", "elo0=3,elo1=1"], "elo0 (3) must be below elo1 (1)"),
        (["random", "greedy", "-o", "greedy"], "--opponent is for matches of 3 to 5 players"),
        (["random", "greedy", "--games", "5"], "--games 5: a match plays whole pairs"),
        (["random", "greedy", "--variant", "dummy", "-p", "3"], "dummy"),
        (["nowhere/mybot", "greedy"], "A 'nowhere/mybot': no such bot (not a file or folder"),
        (["random", "greedy", "--sprt", "alpha=0.7"], "--sprt 'alpha=0.7': alpha must be between 0 and 0.5"),
    ],
)
def test_what_a_user_gets_wrong_is_one_clear_line(tmp_path: Path, args: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "match", *args, "--results", str(tmp_path / "res"), "--sandbox", "none"],
        capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_bot_that_cannot_start_stops_the_match_naming_it(tmp_path: Path) -> None:
    silent = tmp_path / "silent"
    silent.mkdir()
    shutil.copyfile(ROOT / "tests" / "data" / "bots" / "testbot.py", silent / "testbot.py")
    (silent / "bot.toml").write_text('name = "silent"\nrun = ["{python}", "testbot.py", "--mode", "hello_silent"]\n')
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "match", "random", str(silent), "--hello-ms", "5000", "--results",
         str(tmp_path / "res"), "--sandbox", "none"],
        capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith("error: silent (")
    assert "cannot start (timeout)" in proc.stderr and "Traceback" not in proc.stderr


def test_a_results_folder_holding_another_tournament_of_the_matchs_id_is_refused(tmp_path: Path) -> None:
    """The match's id names its bots and format and hashes the rest: a tournament of that id
    that is not this match (here the store's row crafted to another config) is one line naming
    the database and the id, and nothing of the store is changed."""
    res = tmp_path / "res"
    doc = match("random", "greedy", "--games", "2", "--results", str(res))
    with sqlite3.connect(res / DB_NAME) as conn:
        conn.execute(
            "UPDATE tournaments SET config = ? WHERE id = ?", (json.dumps({"players": 2, "bots_dir": "bots"}), doc["match"])
        )
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "match", "random", "greedy", "--games", "2", "--results", str(res),
         "--sandbox", "none"],
        capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert str(res / DB_NAME) in line and doc["match"] in line and "not a match" in line, line
    with open_store(res, create=False) as store:
        assert store.get_tournament(doc["match"]).config == {"players": 2, "bots_dir": "bots"}


def test_two_bots_of_one_name_are_refused(tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere" / "random"
    shutil.copytree(EXAMPLES / "greedy", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "bot.toml").write_text((copy / "bot.toml").read_text().replace('name = "greedy"', 'name = "random"'))
    result = CliRunner().invoke(app, ["match", "random", str(copy), "--results", str(tmp_path / "res")])
    assert result.exit_code == 1
    assert "both named 'random'" in str(result.exception)


# -- stopped and resumed --------------------------------------------------------------------


def _count_complete(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT count(*) FROM games WHERE status = 'complete'").fetchone()[0]
    except sqlite3.Error:
        return 0


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


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("how", ["sigkill", "sigint"])
def test_a_match_stopped_mid_way_resumes_to_the_same_verdict_playing_no_game_twice(tmp_path: Path, how: str) -> None:
    """A real `arena match` process, stopped once 6 games are stored (SIGKILL: no goodbye at
    all; SIGINT: Ctrl-C), then run again: the same verdict, LLR and games as a match never
    stopped (the same deal key), and every game played once: the games played after the stop,
    those stored before it and those recovered from replay files add up to the reference's."""
    args = ["random", "greedy", "--sprt", "elo0=0,elo1=50", "--seed", "4", "-j", "1", "--sandbox", "none", "--json"]
    ref = tmp_path / "ref"
    reference = match(*args[:-3], "--results", str(ref))
    res = tmp_path / "res"
    with open_store(ref) as src, open_store(res) as dst:
        dst.import_deal_key(src.deal_key().hex())
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "match", *args, "--results", str(res)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=tmp_path,
    )
    end = time.monotonic() + 120
    while _count_complete(res / DB_NAME) < 6:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the match did not record games in time"
        time.sleep(0.02)
    bots = _children_of(proc.pid)
    if how == "sigkill":
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    else:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert b"run the same command again to resume" in err
        assert json.loads(out)["interrupted"] is True
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in bots):
        assert time.monotonic() < deadline, f"processes left behind: {bots}"
        time.sleep(0.05)
    time.sleep(0.5)  # the killed match's writer commits what it was handed, then exits
    kept = len(stored_ids(res))
    assert 6 <= kept < reference["games"]
    resumed = match(*args[:-3], "--results", str(res))
    assert {k: resumed[k] for k in FIELDS | {"counts"}} == {k: reference[k] for k in FIELDS | {"counts"}}
    assert resumed["stored"] + resumed["recovered"] + resumed["played"] == reference["played"]
    assert stored_ids(res) == stored_ids(ref)


def test_pairs_with_one_twin_stored_are_completed_and_counted_once(tmp_path: Path) -> None:
    """With three players A's game of a pair does not involve B: a second match of the same A,
    opponents and seed finds every A game in the store (each pair half played), plays only
    B's twins, and counts each pair once."""
    res = tmp_path / "res"
    first = match("random", "greedy", "-p", "3", "--games", "6", "--results", str(res))
    assert first["played"] == 6 and first["stored"] == 0
    second = match("random", "minimal", "-p", "3", "--games", "6", "--results", str(res))
    assert second["stored"] == 3 and second["played"] == 3 and second["pairs"] == 3 and second["already"] == 0
    assert sum(second["counts"]) == 3
    assert len(stored_ids(res)) == 9


# -- A against itself -----------------------------------------------------------------------


@pytest.mark.slow
def test_a_against_a_renamed_copy_of_a_accepts_h1_no_more_often_than_alpha(tmp_path: Path) -> None:
    """random against a copy of random named random2, 2 players, 12 matches of different
    seeds with wide bounds (elo0=0, elo1=150, alpha = beta = 0.1, so that each ends in a few
    dozen pairs). The copy plays other moves (its game_start seed differs with the game), so
    the pairs are noise about ½. H1 may come up by chance at rate alpha: more than 4 of 12
    would happen with probability under 1% if the rate were alpha (binomial)."""
    copy = tmp_path / "bots" / "random2"
    shutil.copytree(EXAMPLES / "random", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "bot.toml").write_text((copy / "bot.toml").read_text().replace('name = "random"', 'name = "random2"'))
    verdicts = []
    for seed in range(12):
        doc = match(
            "random", str(copy), "--sprt", "elo0=0,elo1=150,alpha=0.1,beta=0.1", "--seed", str(seed),
            "--games", "400", "--results", str(tmp_path / "res"),
        )
        verdicts.append(doc["verdict"])
    assert verdicts.count("H1") <= 4, verdicts
