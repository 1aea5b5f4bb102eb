"""The store against what users and the machine do to it: two runs on one results folder
at once, a run killed outright, two bot folders with identical files, and a database
with a page overwritten. Real `python3 -m arena` processes, real bot folders, real files."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import proc_helpers
import pytest
from proc_helpers import STRICT, needs_strict

from arena.game.replay import read_replay
from arena.store.database import DB_NAME
from arena.store.lock import LOCK_NAME, results_lock
from arena.store.opening import open_store
from arena.store.writer import StoreWriter

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
ENV = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}


def make_bots(folder: Path, names: tuple[str, ...] = ("random", "greedy", "minimal")) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copytree(EXAMPLES / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def add_slow_bot(bots: Path, sleep_s: float = 0.01) -> None:
    """A bot that waits ``sleep_s`` before every reply: a run that lasts a few seconds."""
    folder = bots / "slow"
    folder.mkdir()
    shutil.copyfile(ROOT / "tests" / "data" / "bots" / "testbot.py", folder / "testbot.py")
    (folder / "bot.toml").write_text(
        f'name = "slow"\nrun = ["{{python}}", "testbot.py", "--mode", "slow", "--sleep", "{sleep_s}"]\n'
    )


def arena(*args: str, cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "arena", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=cwd
    )


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out.decode(), err.decode()


def count_complete(res: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{res / DB_NAME}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT count(*) FROM games WHERE status = 'complete'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def wait_for_games(res: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while count_complete(res) < n:
        assert proc.poll() is None, finish(proc)
        assert time.monotonic() < end, "the run recorded no game in time"
        time.sleep(0.02)


def assert_rows_match_replays(res: Path) -> list[str]:
    """Every complete game's row says what its replay file says: the same game, the
    same bot (name and content hash) in every seat, the same points and ranks."""
    with open_store(res, create=False) as store:
        games = store.games()
    assert games, "no game recorded"
    for g in games:
        replay = read_replay(res / g.replay)
        assert replay.game_id == g.id
        seats = replay.seats[: g.players]
        assert [(s.bot.name, s.bot.hash) for s in g.seats] == [(s.bot, s.hash) for s in seats], g.id
        assert [s.points for s in g.seats] == replay.result.scores[: g.players], g.id
        assert [s.rank for s in g.seats] == replay.result.ranks[: g.players], g.id
    ids = [g.id for g in games]
    assert len(set(ids)) == len(ids)
    return ids


def lock_is_free(res: Path) -> bool:
    fd = os.open(res / LOCK_NAME, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # (releases it again if taken)
    return True


RUN = ("run", "--players", "2", "--deals", "3", "--seed", "4", "--no-report", "--json")


# -- two runs on one folder ---------------------------------------------------------------


@needs_strict
def test_a_second_run_on_the_folder_waits_naming_the_first_then_plays_nothing_twice(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots", ("random", "greedy"))
    add_slow_bot(bots)
    res = tmp_path / "res"
    first = arena(*RUN, "--bots", str(bots), "--results", str(res))
    wait_for_games(res, 1, first)
    second = arena(*RUN, "--bots", str(bots), "--results", str(res))
    code1, out1, err1 = finish(first)
    code2, out2, err2 = finish(second)
    assert (code1, code2) == (0, 0), (err1, err2)
    said = " ".join(err2.split())
    assert f"waiting for {res}: arena run (pid {first.pid}) since " in said and "Ctrl-C to stop" in said
    run1, run2 = json.loads(out1)["run"], json.loads(out2)["run"]
    assert run1["played"] == run1["total"] == 18
    assert (run2["played"], run2["already"]) == (0, 18)  # it waited, then found everything played
    assert len(assert_rows_match_replays(res)) == 18
    verify = subprocess.run([sys.executable, "-m", "arena", "verify", str(res / "replays")], env=ENV, capture_output=True)
    assert verify.returncode == 0, verify.stderr


@needs_strict
def test_two_runs_started_together_on_a_new_folder_share_the_games(tmp_path: Path) -> None:
    """Started at the same instant on a folder that does not exist yet: the store is
    made once, every game is played once, by one of them."""
    bots = make_bots(tmp_path / "bots")
    res = tmp_path / "res"  # (its parent exists: a missing parent is refused, see test_results_folder.py)
    procs = [arena(*RUN, "--bots", str(bots), "--results", str(res)) for _ in range(2)]
    done = [finish(p) for p in procs]
    assert [c for c, _, _ in done] == [0, 0], [e for _, _, e in done]
    runs = [json.loads(o)["run"] for _, o, _ in done]
    assert sorted(r["played"] for r in runs) == [0, 18]
    assert len(assert_rows_match_replays(res)) == 18


_OPEN_AT = """
import sys, time
from pathlib import Path
from arena.store.opening import open_store
start = float(sys.argv[2])
while time.time() < start:
    pass
open_store(Path(sys.argv[1])).close()
"""


def test_processes_making_one_store_at_once_make_it_once(tmp_path: Path) -> None:
    """The schema is made in one transaction whose version is read inside it: no
    'table meta already exists' when a reader opens a store a run is making."""
    for attempt in range(2):
        root = tmp_path / f"store{attempt}"
        start = time.time() + 0.4
        procs = [
            subprocess.Popen([sys.executable, "-c", _OPEN_AT, str(root), str(start)], env=ENV, stderr=subprocess.PIPE)
            for _ in range(4)
        ]
        errors = [p.communicate(timeout=30)[1].decode() for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, errors
        with open_store(root, create=False) as store:
            assert store.tournaments() == []


@needs_strict
def test_a_killed_run_releases_the_folder_and_the_next_run_finishes_it(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots", ("random", "greedy"))
    add_slow_bot(bots)
    res = tmp_path / "res"
    first = arena(*RUN, "--bots", str(bots), "--results", str(res))
    wait_for_games(res, 2, first)
    assert not lock_is_free(res)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    # The OS releases the lock once the arena and its writer (which records what it was
    # handed, then exits) are gone.
    deadline = time.monotonic() + 10
    while not lock_is_free(res):
        assert time.monotonic() < deadline, "the lock of a killed run was not released"
        time.sleep(0.02)
    # Its bots die with it (bwrap's parent-death signal ends each sandbox): within a second or so.
    deadline = time.monotonic() + 5
    while proc_helpers.processes_in(res / "build"):  # where its bots ran: their copies
        assert time.monotonic() < deadline, proc_helpers.processes_in(res / "build")
        time.sleep(0.05)
    second = arena(*RUN, "--bots", str(bots), "--results", str(res))
    code, out, err = finish(second)
    assert code == 0, err
    assert "waiting for" not in err
    run = json.loads(out)["run"]
    assert run["already"] >= 2 and run["already"] + run["played"] == 18
    assert len(assert_rows_match_replays(res)) == 18


def test_the_store_writer_holds_the_lock_until_it_has_exited(tmp_path: Path) -> None:
    """The writer shares the arena's lock: while it lives, nobody else takes the folder,
    even once the arena's own handle on the lock is closed."""
    res = tmp_path / "res"
    open_store(res).close()
    with results_lock(res, "a test") as lock:
        writer = StoreWriter(res, lambda item: item, lock_fd=lock.fd)  # noqa: ARG005
    # The arena's handle is closed; the writer's is not.
    time.sleep(0.2)
    assert writer._proc.poll() is None  # noqa: SLF001 - the process under test
    assert not lock_is_free(res)
    writer.close()
    writer._proc.wait(timeout=10)  # noqa: SLF001
    assert lock_is_free(res)
    assert writer.error is None


def test_a_lock_held_elsewhere_names_its_holder_and_waits(tmp_path: Path) -> None:
    res = tmp_path / "res"
    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys, time; from pathlib import Path; from arena.store.lock import results_lock\n"
            "with results_lock(Path(sys.argv[1]), 'arena store rebuild'):\n"
            "    print('held', flush=True); time.sleep(1.0)\n"
        ), str(res)],
        stdout=subprocess.PIPE, env=ENV,
    )
    assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
    said: list[str] = []
    t0 = time.monotonic()
    with results_lock(res, "arena run", on_wait=said.append):
        waited = time.monotonic() - t0
    holder.wait(timeout=10)
    assert len(said) == 1 and said[0].startswith(f"waiting for {res}: arena store rebuild (pid {holder.pid}) since ")
    assert waited > 0.3


# -- bot folders with identical files ------------------------------------------------------


@needs_strict
def test_two_bot_folders_with_identical_files_are_two_bots_in_every_seating(tmp_path: Path) -> None:
    bots = make_bots(tmp_path / "bots", ("random",))
    twin = bots / "twin-a"
    shutil.copytree(EXAMPLES / "greedy", twin, ignore=shutil.ignore_patterns("__pycache__"))
    toml = twin / "bot.toml"
    toml.write_text("".join(line for line in toml.read_text().splitlines(keepends=True) if not line.startswith("name")))
    shutil.copytree(twin, bots / "twin-b")  # the same files: the same content hash
    res = tmp_path / "res"
    code, out, err = finish(arena(*RUN, "--bots", str(bots), "--results", str(res)))
    assert code == 0, err
    doc = json.loads(out)
    hashes = {r["bot"]: r["hash"] for r in doc["rows"]}
    assert hashes["twin-a"] == hashes["twin-b"]
    assert doc["run"]["played"] == doc["run"]["total"] == 18
    ids = assert_rows_match_replays(res)
    assert len(ids) == 18  # the store holds every game the run reported
    assert doc["games"] == 18 and all(r["games"] == 12 for r in doc["rows"])


# -- a damaged database --------------------------------------------------------------------


def _page_of(db: Path, table: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    finally:
        conn.close()


def _damage(db: Path, page: int) -> bytes:
    """Overwrite that page (1-based) of the file with garbage; returns the damaged file."""
    size = 4096
    with db.open("r+b") as f:
        f.seek((page - 1) * size)
        f.write(bytes((i * 131 + 7) % 256 for i in range(size)))
    return db.read_bytes()


def _leaderboard(res: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "arena", "leaderboard", str(res), "--json"], env=ENV, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _one_clear_error(proc: subprocess.Popen, db: Path) -> str:
    code, out, err = finish(proc)
    assert code == 1, (out, err)
    assert "Traceback" not in err and err.startswith("error: "), err
    text = " ".join(err.split())
    assert str(db) in text and "damaged" in text and f"arena store rebuild {db.parent}" in text, text
    return text


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    """A tournament played once for the tests below (each works on a copy): its bots,
    its results folder and its leaderboard."""
    if not STRICT.ok:
        pytest.skip(f"strict sandbox unavailable: {STRICT.missing}")
    base = tmp_path_factory.mktemp("played")
    bots = make_bots(base / "bots")
    res = base / "res"
    code, _, err = finish(arena(*RUN, "--bots", str(bots), "--results", str(res)))
    assert code == 0, err
    return bots, res, _leaderboard(res)


@needs_strict
@pytest.mark.parametrize("where", ["games", "game_seats", "first page"])
def test_a_damaged_database_is_one_clear_error_and_the_replays_rebuild_it(
    tmp_path: Path, where: str, played: tuple[Path, Path, dict]
) -> None:
    bots, original, before = played
    res = tmp_path / "res"
    shutil.copytree(original, res)
    args = (*RUN, "--bots", str(bots), "--results", str(res))
    db = res / DB_NAME
    exported = subprocess.run([sys.executable, "-m", "arena", "store", "key", "export", str(res)], env=ENV, capture_output=True)
    assert exported.returncode == 0, exported.stderr
    key = exported.stdout.decode().strip()
    with sqlite3.connect(db) as conn:  # a setting of the store's own (as a deal key is)
        conn.execute("INSERT INTO meta (key, value) VALUES ('a_setting', 'kept')")
    conn.close()
    assert not (res / f"{DB_NAME}-wal").exists()  # (everything is in the file itself)
    damaged = _damage(db, 1 if where == "first page" else _page_of(db, where))
    _one_clear_error(arena("leaderboard", str(res)), db)
    _one_clear_error(arena(*args), db)
    assert db.read_bytes() == damaged  # neither touched it

    rebuilt = subprocess.run([sys.executable, "-m", "arena", "store", "rebuild", str(res), "--json"], env=ENV, capture_output=True)
    assert rebuilt.returncode == 0, rebuilt.stderr
    report = json.loads(rebuilt.stdout)
    assert report["games"] == 18 and report["old_damaged"] and report["not_recovered"] == [] and report["lost"] == []
    aside = Path(report["moved_to"])
    assert aside.parent == res and aside.name.startswith(f"{DB_NAME}.damaged-") and aside.read_bytes() == damaged
    if where == "first page":
        # Nothing of the old file could be read: every game is back, but which tournament
        # it belongs to only the same run says again, without playing anything.
        # The deal key went with it: the one exported before brings the games back.
        assert report["unlinked"] == 18 and report["meta_lost"]
        imported = subprocess.run([sys.executable, "-m", "arena", "store", "key", "import", key, str(res)], env=ENV, capture_output=True)
        assert imported.returncode == 0, imported.stderr
        code, out, err = finish(arena(*args))
        assert code == 0, err
        assert json.loads(out)["run"]["played"] == 0
    else:
        assert report["unlinked"] == 0 and not report["meta_lost"] and report["kept_meta"] == ["a_setting", "deal_key"]
        with open_store(res, create=False) as store:
            assert store.meta_items()["a_setting"] == "kept"
    after = _leaderboard(res)
    assert after == before
    assert len(assert_rows_match_replays(res)) == 18


@needs_strict
def test_rebuild_names_the_replays_it_could_not_recover_and_keeps_the_rest(
    tmp_path: Path, played: tuple[Path, Path, dict]
) -> None:
    bots, original, _ = played
    res = tmp_path / "res"
    shutil.copytree(original, res)
    args = (*RUN, "--bots", str(bots), "--results", str(res))
    with open_store(res, create=False) as store:
        games = store.games()
    cut, moved = games[2], games[5]
    (res / cut.replay).write_bytes((res / cut.replay).read_bytes()[:200])  # cut short
    stray = res / "replays" / "00" / f"{'0' * 16}.json.gz"
    shutil.copyfile(res / moved.replay, stray)  # a game under another game's name
    proc = arena("store", "rebuild", str(res))
    code, out, err = finish(proc)
    assert code == 1 and "Traceback" not in err, err
    text = " ".join(err.split())
    assert f"not recovered: {res / cut.replay}" in text
    assert str(stray) in text and f"it holds game '{moved.id}'" in text
    assert f"1 game(s) of the old database have no usable replay: {cut.id}" in text
    assert "moved aside to" in text and "before-rebuild" in text  # the old file was sound: kept as it was
    with open_store(res, create=False) as store:
        assert {g.id for g in store.games()} == {g.id for g in games} - {cut.id}
    assert_rows_match_replays(res)
    # The next run plays the one game that could not be recovered, and only it.
    code, out, err = finish(arena(*args))
    assert code == 0, err
    assert json.loads(out)["run"]["played"] == 1


@needs_strict
def test_a_value_no_arena_wrote_is_named_as_damage_too(tmp_path: Path, played: tuple[Path, Path, dict]) -> None:
    """A record whose bytes were changed inside a sound page: SQLite's check cannot see
    it, reading it can."""
    _, original, _ = played
    res = tmp_path / "res"
    shutil.copytree(original, res)
    with sqlite3.connect(res / DB_NAME) as conn:
        conn.execute("UPDATE game_seats SET faults = '{\"timeout\": ' WHERE rowid = 3")
    conn.close()
    for command in ("leaderboard", "games"):
        code, out, err = finish(arena(command, str(res)))
        text = " ".join(err.split())
        assert code == 1 and "Traceback" not in err and err.startswith("error: "), err
        assert f"{res / DB_NAME}: the database is damaged" in text and f"arena store rebuild {res}" in text, text


def test_another_thread_of_the_process_waits_for_the_lock_too(tmp_path: Path) -> None:
    import threading

    res = tmp_path / "res"
    order: list[str] = []
    with results_lock(res, "arena run"):
        with results_lock(res, "arena run"):  # the same thread: re-entrant
            pass

        def other() -> None:
            with results_lock(res, "arena run", on_wait=lambda message: order.append("waits")):
                order.append("holds")

        thread = threading.Thread(target=other)
        thread.start()
        time.sleep(0.3)
        order.append("released")
    thread.join(timeout=10)
    assert order == ["waits", "released", "holds"]


def test_rebuild_of_a_folder_that_holds_no_results_is_refused_and_makes_nothing(tmp_path: Path) -> None:
    for folder, said in ((tmp_path / "missing", "no such results folder"), (tmp_path, "nothing to rebuild here")):
        code, _, err = finish(arena("store", "rebuild", str(folder)))
        assert code == 1 and err.startswith("error: ") and "Traceback" not in err, err
        assert f"{folder}: {said}" in " ".join(err.split())
    assert not (tmp_path / "missing").exists() and list(tmp_path.iterdir()) == []
