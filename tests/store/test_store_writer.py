"""The writer process: what it is handed reaches the store and the replay folder, even
when the arena dies without closing it; its failures come back as errors."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from arena.errors import ArenaError
from arena.store.database import NewGame
from arena.store.opening import open_store
from arena.store.writer import _HEADER, StoreWriter, _encode


def _store(root: Path) -> tuple[list[int], str]:
    with open_store(root) as store:
        bots = [store.bot(f"b{i}", "1", f"hash{i}", f"bots/b{i}").id for i in range(2)]
        return bots, store.tournament("t1", 2, "standard", {"deals": 1}).id


def _row(i: int, bots: list[int]) -> NewGame:
    return NewGame(
        id=f"{i:016x}", status="complete", set_id="s", seed=i, players=2, variant="standard", rules="1",
        time_settings={"turn_ms": 1000}, duration_s=0.5, replay=f"replays/00/{i:016x}.json.gz", bot_ids=bots,
        points=[3, 1], puddings=[0, 1], ranks=[1, 2], autopilot=[False, False], faults=[{}, {"timeout": 1}],
        mean_ms=[1.0, 2.0], max_ms=[1.5, 2.5],
    )


def _frame(tid: str, row: NewGame) -> tuple[str, NewGame, str, bytes]:
    return tid, row, row.replay, b'{"game_id": "%s"}' % row.id.encode()


def test_every_game_handed_over_is_recorded_and_the_writer_ends(tmp_path: Path) -> None:
    bots, tid = _store(tmp_path)
    writer = StoreWriter(tmp_path, lambda item: _frame(tid, item[0]))
    for i in range(70):  # more than one group commit
        writer.submit(_row(i, bots))
    writer.close()
    writer.close()  # idempotent
    assert writer.error is None and writer.games == 70 and writer.cpu > 0
    with open_store(tmp_path, create=False) as store:
        games = store.games("t1")
    assert [g.id for g in games] == [f"{i:016x}" for i in range(70)]
    assert gzip.decompress((tmp_path / games[5].replay).read_bytes()) == b'{"game_id": "0000000000000005"}'
    assert games[5].seats[1].faults == {"timeout": 1}


def test_the_writer_commits_what_it_has_when_the_arena_dies(tmp_path: Path) -> None:
    """The arena killed (its end of the pipe closed without a word): the games already
    sent are committed, and the writer exits; a Ctrl-C to the process group does not
    stop it first."""
    bots, tid = _store(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "arena.store.writer", str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    for i in range(3):
        frame = _encode(_frame(tid, _row(i, bots)))
        proc.stdin.write(_HEADER.pack(len(frame)) + frame)
    proc.stdin.flush()
    _wait_until_ignored(proc.pid, signal.SIGINT)
    os.kill(proc.pid, signal.SIGINT)
    proc.stdin.close()
    assert proc.wait(timeout=20) == 0
    assert proc.stdout is not None and b'"done"' in proc.stdout.read()
    proc.stdout.close()
    with open_store(tmp_path, create=False) as store:
        assert len(store.games()) == 3


def _wait_until_ignored(pid: int, sig: int, timeout: float = 30.0) -> None:
    """Until the process ignores ``sig`` (its SigIgn mask in /proc): it has started and set
    its handlers, however slow the machine."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        mask = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:")), 16)
        if mask & (1 << (sig - 1)):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never ignored signal {sig}")


def test_a_failure_comes_back_naming_the_game(tmp_path: Path) -> None:
    bots, tid = _store(tmp_path)
    (tmp_path / "replays" / "00" / f"{1:016x}.json.gz" / "keep").mkdir(parents=True)  # a folder where a replay goes
    writer = StoreWriter(tmp_path, lambda item: _frame(tid, item[0]))
    for i in range(3):
        writer.submit(_row(i, bots))
    writer.close()
    assert isinstance(writer.error, ArenaError) and f"cannot record game {1:016x}" in str(writer.error)
    with open_store(tmp_path, create=False) as store:
        assert [g.id for g in store.games()] == [f"{0:016x}"]  # the one before it is kept


def test_a_writer_that_cannot_open_the_store_says_so(tmp_path: Path) -> None:
    writer = StoreWriter(tmp_path / "nowhere", lambda item: item[0])
    writer.close()
    assert writer.error is not None and "no results database" in str(writer.error)


def test_a_game_that_cannot_be_prepared_is_named(tmp_path: Path) -> None:
    _store(tmp_path)

    class Game:
        game_id = "feedfacefeedface"

    def prepare(item: tuple[object, ...]) -> tuple[str, NewGame, str, bytes]:
        raise ValueError("no row")

    writer = StoreWriter(tmp_path, prepare)
    writer.submit("t1", None, Game(), None)
    writer.close()
    assert writer.error is not None and "cannot record game feedfacefeedface: ValueError: no row" in str(writer.error)


def test_a_writer_killed_under_the_arena_is_reported_not_waited_for(tmp_path: Path) -> None:
    """The writer process dies (the OOM killer, a stray kill): the arena is told, by an
    error naming the writer and its exit, and nothing hangs."""
    bots, tid = _store(tmp_path)
    writer = StoreWriter(tmp_path, lambda item: _frame(tid, item[0]))
    writer.submit(_row(0, bots))
    _wait_until_ignored(writer._proc.pid, signal.SIGINT)  # up and running
    os.kill(writer._proc.pid, signal.SIGKILL)
    writer._proc.wait(timeout=10)
    for i in range(1, 4):
        writer.submit(_row(i, bots))
    t = time.monotonic()
    writer.close()
    assert time.monotonic() - t < 10
    assert writer.error is not None and "store writer exited with status -9" in str(writer.error)
