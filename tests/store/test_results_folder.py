"""Results folders the machine gets in the way of: a path whose parent is missing, a
folder that is read-only, a disk that fills up in the middle of a run. Real `python3 -m
arena` processes, real mounts (a read-only bind mount and a small tmpfs, made as root)
or real permissions (``chmod -R a-w`` when the tests run as an ordinary user)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_store_safety import ENV as SAFETY_ENV
from test_store_safety import assert_rows_match_replays, make_bots

from arena.store.database import DB_NAME

RUN = ("run", "--players", "3", "--seed", "4", "--no-report")
ENV = {**SAFETY_ENV, "COLUMNS": "1000"}  # one line per message: none is wrapped


def arena(*args: str, cwd: Path | None = None, timeout: float = 300) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, env=ENV, cwd=cwd, timeout=timeout, check=False
    )
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def one_error(err: str) -> str:
    """The one error line of a failed command (long lines are wrapped by the console)."""
    assert "Traceback" not in err, err
    assert err.startswith("error: ") or "\nerror: " in err, err
    assert sum(1 for line in err.splitlines() if line.startswith("error: ")) == 1, err
    return " ".join(err[err.index("error: ") :].split())


def complete_games(res: Path) -> int:
    conn = sqlite3.connect(f"file:{res / DB_NAME}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM games WHERE status = 'complete'").fetchone()[0]
    finally:
        conn.close()


def _mount(*args: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", *args], capture_output=True, check=False).returncode == 0


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


@contextlib.contextmanager
def read_only_view(folder: Path, where: Path) -> Iterator[Path]:
    """``folder`` as a folder this process cannot write: a read-only bind mount at ``where``
    as root (root ignores permissions), else ``chmod -R a-w`` of the folder itself."""
    if os.geteuid() == 0:
        where.mkdir()
        if not _mount("--bind", str(folder), str(where)):
            pytest.skip("root, but `mount --bind` is refused here (no read-only view can be made)")
        try:
            if not _mount("-o", "remount,bind,ro", str(where)):
                pytest.skip("root, but a bind mount cannot be made read-only here")
            yield where
        finally:
            _umount(where)
        return
    subprocess.run(["chmod", "-R", "a-w", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(folder)], check=True)


# -- a missing parent --------------------------------------------------------------------


def test_a_results_path_whose_parent_is_missing_is_one_error_naming_it_and_makes_nothing(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots")
    res = tmp_path / "mistyped" / "results"
    code, _, err = arena(*RUN, "--bots", str(bots), "--results", str(res))
    assert code == 1
    line = one_error(err)
    assert str(res) in line and f"parent folder {tmp_path / 'mistyped'} does not exist" in line
    assert not (tmp_path / "mistyped").exists()


def test_a_results_path_under_a_file_is_one_error_naming_it(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots")
    (tmp_path / "a-file").write_text("not a folder\n")
    res = tmp_path / "a-file" / "results"
    code, _, err = arena(*RUN, "--bots", str(bots), "--results", str(res))
    assert code == 1
    assert "is not a folder" in one_error(err) and str(res) in one_error(err)


# -- a read-only folder ------------------------------------------------------------------


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("played")
    bots = make_bots(base / "bots")
    code, _, err = arena(*RUN, "--bots", str(bots), "--results", str(base / "res"))
    assert code == 0, err
    return base, bots


def test_readers_work_on_a_read_only_results_folder_and_say_nothing(
    tmp_path: Path, played: tuple[Path, Path]
) -> None:
    base, bots = played
    res = tmp_path / "res"
    shutil.copytree(base / "res", res)
    expected = {cmd: arena(cmd, str(res), "--json")[1] for cmd in ("leaderboard", "games")}
    key = arena("store", "key", "export", str(res))[1]
    before = sorted(p.name for p in res.iterdir())
    with read_only_view(res, tmp_path / "ro") as ro:
        for cmd in ("leaderboard", "games"):
            code, out, err = arena(cmd, str(ro), "--json")
            assert (code, err) == (0, ""), (cmd, err)
            doc, want = json.loads(out), json.loads(expected[cmd])
            if cmd == "games":  # the replay paths are named under the folder given
                for g in (*doc["games"], *want["games"]):
                    g["replay"] = Path(g["replay"]).name
            assert doc == want, cmd
        code, out, err = arena("leaderboard", str(ro))
        assert code == 0 and "greedy" in out and err == ""
        assert arena("store", "key", "export", str(ro)) == (0, key, "")
        code, out, err = arena("verify", str(ro))
        assert code == 0 and "3 replay(s) verified" in out, err
        assert "not checked against a store" not in err  # the store was read
        code, out, err = arena("report", str(ro), "--out", str(tmp_path / "site"))
        assert code == 0, err
        assert (tmp_path / "site" / "index.html").is_file()
        # Without --out the report would go inside the folder: one error saying where else.
        code, _, err = arena("report", str(ro))
        assert code == 1 and "--out DIR" in one_error(err)
        # A run writes the folder: one error naming it, and why.
        code, _, err = arena(*RUN, "--bots", str(bots), "--results", str(ro))
        assert code == 1
        line = one_error(err)
        assert f"{ro}: the results folder is read-only" in line
    assert sorted(p.name for p in res.iterdir()) == before  # nothing was made beside the database


def test_a_read_only_folder_whose_wal_was_left_by_a_killed_writer_says_what_may_be_missing(
    tmp_path: Path, played: tuple[Path, Path]
) -> None:
    """A writer killed with changes still in ``arena.db-wal`` and no ``-shm`` beside it (a
    folder copied without it, then made read-only): the readers still read, and say that
    the newest games may be missing."""
    base, _ = played
    work, res = tmp_path / "work", tmp_path / "res"
    shutil.copytree(base / "res", work)
    conn = sqlite3.connect(work / DB_NAME)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("INSERT INTO meta (key, value) VALUES ('left-in-the-wal', '1')")
    conn.commit()
    try:
        shutil.copytree(work, res, ignore=shutil.ignore_patterns("*-shm"))
    finally:
        conn.close()
    assert (res / f"{DB_NAME}-wal").stat().st_size > 0
    with read_only_view(res, tmp_path / "ro") as ro:
        code, out, err = arena("leaderboard", str(ro), "--json")
        assert code == 0, err
        assert len(json.loads(out)["rows"]) == 3
        assert "arena.db-wal" in err and "newest games may be missing" in " ".join(err.split())
        assert "Traceback" not in err


# -- a full disk -------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)):
        pytest.skip("a small disk needs root and a tmpfs mount (`mount -t tmpfs -o size=2m`), refused here")
    try:
        yield disk
    finally:
        _umount(disk)


def test_a_disk_that_fills_up_mid_run_stops_it_cleanly_and_keeps_every_game_recorded(
    tmp_path: Path, small_disk: Path
) -> None:
    bots = make_bots(tmp_path / "bots")
    res = small_disk / "res"
    args = (*RUN, "--deals", "150", "--jobs", "2", "--bots", str(bots), "--results", str(res))  # 450 games
    code, _, err = arena(*args)
    assert code == 1
    line = one_error(err)
    assert f"{res}: the disk is full" in line and "the run stopped there" in line
    recorded = complete_games(res)
    assert 0 < recorded < 450
    assert f"the {recorded} game(s) it recorded before are kept" in line
    assert len(assert_rows_match_replays(res)) == recorded  # every row with its replay
    # A second run on the full disk: one error, nothing lost.
    code, _, err = arena(*args)
    assert code == 1 and "the disk is full" in one_error(err)
    assert complete_games(res) == recorded
    # Room again: the same command plays only the rest (the replays written before the
    # failure but not yet recorded are recorded from their files).
    assert _mount("-o", "remount,size=64m", str(small_disk))
    code, _, err = arena(*args, "--json")
    assert code == 0, err
    assert complete_games(res) == 450
    assert len(assert_rows_match_replays(res)) == 450


def test_a_replay_that_no_longer_fits_stops_the_writer_with_the_games_before_it_recorded(tmp_path: Path) -> None:
    """The disk fills while a replay is written (not the database): the games before it
    are committed, and the error names the folder, the game and the full disk."""
    import os as _os

    from test_store_writer import _frame, _row, _store

    from arena.store.opening import open_store
    from arena.store.writer import StoreWriter

    bots, tid = _store(tmp_path)
    folder = tmp_path / "replays" / "00"
    folder.mkdir(parents=True)
    if not _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)):
        pytest.skip("a small disk needs root and a tmpfs mount, refused here")
    try:
        big = _os.urandom(24_000)  # incompressible: two fit in 64 KB, three do not

        def frame(item: tuple) -> tuple:
            tid_, row, rel, _ = _frame(tid, item[0])
            return tid_, row, rel, big

        writer = StoreWriter(tmp_path, frame)
        for i in range(6):
            writer.submit(_row(i, bots))
        writer.close()
        assert writer.error is not None
        message = str(writer.error)
        with open_store(tmp_path, create=False) as store:
            kept = [g.id for g in store.games()]
        assert 1 <= len(kept) < 6 and kept == [f"{i:016x}" for i in range(len(kept))]
        assert message.startswith(f"{tmp_path}: the disk is full: cannot record game {len(kept):016x}")
        assert f"the {len(kept)} game(s) it recorded before are kept" in message
    finally:
        _umount(folder)


def test_a_file_size_limit_mid_run_stops_it_cleanly_and_keeps_every_game_recorded(tmp_path: Path) -> None:
    """The same promise where no small disk can be mounted (an ordinary user): a file size
    limit (RLIMIT_FSIZE, the soft one: bots get limits of their own) that the database's
    files reach in the middle of the run."""
    import resource

    bots = make_bots(tmp_path / "bots")
    res = tmp_path / "res"
    args = (*RUN, "--deals", "150", "--jobs", "2", "--bots", str(bots), "--results", str(res))  # 450 games

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (600_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    proc = subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, env=ENV, preexec_fn=limit,
                          timeout=300, check=False)
    assert proc.returncode == 1, proc.stderr.decode()[-3000:]
    line = one_error(proc.stderr.decode())
    assert line.startswith(f"error: {res}: cannot record game") and "the run stopped there" in line
    assert "StoreError" not in line
    recorded = complete_games(res)
    assert 0 < recorded < 450 and f"the {recorded} game(s) it recorded before are kept" in line
    assert len(assert_rows_match_replays(res)) == recorded
    code, _, err = arena(*args)
    assert code == 0, err
    assert len(assert_rows_match_replays(res)) == complete_games(res) == 450


# -- every bot in the table, or listed with its reason -------------------------------------


def test_a_capped_run_seats_every_bot_and_says_what_the_cap_came_to(tmp_path: Path) -> None:
    """7 bots at 4-player tables, --games 3: fewer than one duplicate set (4 games), and one
    set would leave 3 bots out. The run plays 8 games, says so and why, and ranks all 7."""
    bots = tmp_path / "bots"
    bots.mkdir()
    for i in range(7):
        shutil.copytree(Path(__file__).resolve().parents[2] / "example_bots" / "random", bots / f"r{i}")
        toml = bots / f"r{i}" / "bot.toml"
        toml.write_text(toml.read_text().replace('name = "random"', f'name = "r{i}"'))
    code, out, err = arena("run", "--bots", str(bots), "--results", str(tmp_path / "res"), "--games", "3", "--no-report")
    assert code == 0, err
    note = (
        "--games 3 comes to 8 games: a duplicate set is 4 games (4 players, every rotation of the seats), "
        "and 2 sets are the fewest in which every one of the 7 bots plays"
    )
    assert f"note: {note}" in " ".join(err.split())
    assert "8 game(s) played" in err
    code, out, err = arena("leaderboard", str(tmp_path / "res"), "--json")
    doc = json.loads(out)
    assert sorted(r["bot"] for r in doc["rows"]) == [f"r{i}" for i in range(7)] and doc["skipped"] == []
    assert sum(r["games"] for r in doc["rows"]) == 8 * 4


def test_an_entrant_without_a_recorded_game_is_listed_with_its_reason(tmp_path: Path, played: tuple[Path, Path]) -> None:
    """A bot that took part but has no game in the table (the run was stopped before its
    first game ended) is named under the table, with why, in leaderboard and its JSON."""
    from arena.store.opening import open_store

    base, _ = played
    res = tmp_path / "res"
    shutil.copytree(base / "res", res)
    with open_store(res, create=False) as store:
        t = store.latest_tournament()
        assert t is not None
        late = store.bot("late", "1", "0" * 64, str(tmp_path / "late"))
        rows = list(store.bots().values())
        store.set_entrants(t.id, rows, [])
    code, out, err = arena("leaderboard", str(res), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [r["bot"] for r in doc["rows"]] and "late" not in [r["bot"] for r in doc["rows"]]
    (entry,) = [s for s in doc["skipped"] if s["bot"] == late.name]
    assert entry["status"] == "not ranked" and entry["reason"].startswith("no game of it is recorded yet")
    code, out, _ = arena("leaderboard", str(res))
    assert "not ranked late: no game of it is recorded yet" in " ".join(out.split())
