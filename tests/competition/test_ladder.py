"""The ladder's process through real games: it waits (and says why) with fewer bots than
seats, pauses, serves challenges first and never rates them, counts only whole sets, and
after a kill -9 mid-set finishes that set without playing a recorded game again."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from competition_helpers import RANDOM, bot_files, tar_gz, write_config

from arena.competition import CompetitionError, Ladder, Submissions, Teams, load_competition, run_ladder
from arena.competition.ladder import LADDER, PENDING
from arena.competition.validation import validate_next

ROOT = Path(__file__).resolve().parents[2]


def _competition(tmp_path: Path, text: str = ""):
    return load_competition(write_config(tmp_path / "c.toml", "players = 2\n" + text))


def _teams(results: Path, competition, names: list[str]) -> dict[str, object]:
    teams, subs, out = Teams(results), Submissions(results, competition), {}
    for name in names:
        team, _ = teams.add(name)
        subs.submit(team, "b.tar.gz", io.BytesIO(tar_gz(bot_files(f"{name}-bot", RANDOM))))
        out[name] = team
    while validate_next(results, competition) is not None:
        pass
    return out


def _ladder_games(results: Path, tournament: str = LADDER) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(results / "arena.db")
    try:
        return conn.execute(
            "SELECT g.id, g.set_id, g.finished FROM games g JOIN tournament_games t ON t.game_id = g.id "
            "WHERE t.tournament_id = ? ORDER BY g.id", (tournament,),
        ).fetchall()
    finally:
        conn.close()


def test_it_waits_for_enough_bots_and_says_so(tmp_path):
    config = write_config(tmp_path / "c.toml")  # 4 players by default
    competition = load_competition(config)
    results = tmp_path / "r"
    _teams(results, competition, ["alpha", "beta"])
    run_ladder(results, competition, max_turns=0, stop=_after_turns(1))
    state = Ladder(results, competition).state()
    assert state.waiting == "waiting for bots: 2 accepted, 4 needed for a table"
    assert state.accepted_bots == 2 and state.games_played == 0


class _after_turns:
    """A stop that is set after the loop has looked at it ``n`` times."""

    def __init__(self, n: int) -> None:
        self.left = n

    def is_set(self) -> bool:
        self.left -= 1
        return self.left < 0


def test_pause_challenges_first_and_unranked(tmp_path):
    competition = _competition(tmp_path, "[challenges]\nmax_games = 3\n")
    results = tmp_path / "r"
    teams = _teams(results, competition, ["alpha", "beta", "gamma"])
    ladder = Ladder(results, competition)
    ladder.pause()
    run_ladder(results, competition, stop=_after_turns(1))
    assert ladder.state().paused and ladder.state().waiting == "paused by the organiser"
    assert _ladder_games(results) == []
    with pytest.raises(CompetitionError, match="1 to 3 games"):
        ladder.challenge(teams["alpha"], ["beta"], 4)
    with pytest.raises(CompetitionError):
        ladder.challenge(teams["alpha"], ["alpha-bot"], 1)
    challenge = ladder.challenge(teams["alpha"], ["beta-bot"], 2)
    assert challenge.status == "queued" and challenge.opponents == ["beta"]
    ladder.resume()
    run_ladder(results, competition, max_turns=2)  # the challenge first, then one ranked set
    done = ladder.challenges(teams["alpha"].id)[0]
    assert (done.status, done.played, done.tournament) == ("done", 2, f"challenge-{challenge.id}")
    ranked = _ladder_games(results)
    assert len(ranked) == 2  # one whole set of two seat rotations
    challenge_games = set(g[0] for g in _ladder_games(results, f"challenge-{challenge.id}"))
    assert len(challenge_games) == 2 and not challenge_games & {g[0] for g in ranked}
    state = ladder.state()
    assert state.games_played == 2 and state.waiting is None and state.challenge_queue == 0
    # `arena leaderboard` shows the ladder, the tournament touched last
    shown = subprocess.run(
        [sys.executable, "-m", "arena", "leaderboard", str(results), "--json"], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
    )
    assert shown.returncode == 0 and '"tournament": "ladder"' in shown.stdout.replace(": ", ": ")


def test_a_new_version_replaces_the_old_in_the_ladder(tmp_path):
    competition = _competition(tmp_path)
    results = tmp_path / "r"
    teams = _teams(results, competition, ["alpha", "beta"])
    run_ladder(results, competition, max_turns=1)
    subs = Submissions(results, competition)
    subs.submit(teams["alpha"], "v2.tar.gz", io.BytesIO(tar_gz(bot_files("alpha-bot", RANDOM, extra={"v": b"2"}))))
    run_ladder(results, competition, max_turns=2)  # validate v2, then a set with it
    versions = {s.version for s in subs.accepted() if s.team == "alpha"}
    assert versions == {2}
    store_entrants = sqlite3.connect(results / "arena.db").execute(
        "SELECT b.name, b.hash FROM tournament_bots t JOIN bots b ON b.id = t.bot_id WHERE t.tournament_id = ?", (LADDER,)
    ).fetchall()
    v2 = next(s for s in subs.accepted() if s.team == "alpha").bot_key
    assert sorted(f"{n}@{h[:8]}" for n, h in store_entrants) == sorted([v2, next(s.bot_key for s in subs.accepted() if s.team == "beta")])
    assert len(_ladder_games(results)) == 4  # the old version's games stay in the history


def _start(results: Path, config: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", "ladder", "--results", str(results), "--config", str(config)],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _wait(predicate, timeout: float = 240.0) -> None:
    give_up = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > give_up:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def test_kill_9_mid_set_loses_no_game_and_plays_none_twice(tmp_path):
    config = write_config(tmp_path / "c.toml", "players = 2\n[ladder]\ndeals = 4\njobs = 1\n")
    competition = load_competition(config)
    results = tmp_path / "r"
    _teams(results, competition, ["alpha", "beta", "gamma"])
    proc = _start(results, config)
    try:
        _wait(lambda: len(_ladder_games(results)) >= 8 and 1 <= len(_ladder_games(results, PENDING)) < 8)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = {g[0]: g[2] for g in _ladder_games(results, PENDING)}
    counted_before = len(_ladder_games(results))
    assert counted_before % 8 == 0  # only whole sets count, the killed one not yet
    proc = _start(results, config)
    try:
        _wait(lambda: len(_ladder_games(results)) >= counted_before + 16)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    games = _ladder_games(results)
    after = {g[0]: g[2] for g in games}
    assert all(after[g] == finished for g, finished in before.items())  # the killed set finished, not replayed
    # Every set whole: 4 deals, each a duplicate set of the 2 seat rotations.
    assert len(games) % 8 == 0 and all(n == 2 for n in Counter(g[1] for g in games).values())
    replays = list((results / "replays").rglob("*.json.gz"))
    total = sqlite3.connect(results / "arena.db").execute("SELECT count(*) FROM games").fetchone()[0]
    assert len(replays) == total  # one replay per game, none written twice


def test_the_ladder_refuses_a_bad_settings_file_naming_the_key(tmp_path):
    config = tmp_path / "competition.toml"
    config.write_text("[uploads]\nmax_bytes = -5\n")
    ran = subprocess.run(
        [sys.executable, "-m", "arena", "ladder", "--results", str(tmp_path / "r"), "--config", str(config)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
    )
    assert ran.returncode == 1
    assert "competition.toml: uploads.max_bytes must be a whole number" in ran.stderr
    assert "Traceback" not in ran.stderr and not (tmp_path / "r").exists()


def test_challenges_are_capped_per_team_and_in_all(tmp_path):
    from arena.competition import RateLimited

    competition = _competition(tmp_path, "[challenges]\nper_hour = 2\nmax_queued = 3\n")
    results = tmp_path / "r"
    teams = _teams(results, competition, ["alpha", "beta", "gamma"])
    ladder = Ladder(results, competition)
    for _ in range(2):
        ladder.challenge(teams["alpha"], ["beta"], 1)
    with pytest.raises(RateLimited) as caught:
        ladder.challenge(teams["alpha"], ["gamma"], 1)
    assert caught.value.retry_after > 3000
    ladder.challenge(teams["beta"], ["gamma"], 1)
    with pytest.raises(RateLimited, match="queue is full"):
        ladder.challenge(teams["gamma"], ["alpha"], 1)
    assert ladder.state().challenge_queue == 3
    assert [c.team_id for c in ladder.challenges()] == [teams["beta"].id, teams["alpha"].id, teams["alpha"].id]
    assert ladder.state().to_dict()["queues"] == {"validation": 0, "challenges": 3}
