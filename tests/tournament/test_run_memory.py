"""A long run's bookkeeping stays bounded when its store's writer falls behind: the games
wait for the writer instead of piling up, finished, in the arena (real processes: the
writer is stopped with SIGSTOP, as a loaded disk or machine would hold it up)."""

from __future__ import annotations

import os
import shutil
import signal
import threading
from pathlib import Path

import pytest

import arena.store.writer as writer_module
from arena.bench.scale import _settings
from arena.bench.tournament import make_instant_bots
from arena.store.opening import open_store
from arena.tournament.runner import WRITER_BACKLOG, run_tournament

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="the instant bots are compiled with cc")


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_stalled_writer_holds_the_games_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    bots = make_instant_bots(tmp_path, 12)
    settings = _settings(bots, tmp_path / "results", 400, jobs=jobs)
    backlog: list[int] = []
    resumed = threading.Event()
    stalled: list[int] = []
    submit = writer_module.StoreWriter.submit

    def resume(pid: int) -> None:
        if not resumed.is_set():
            resumed.set()
            os.kill(pid, signal.SIGCONT)

    def watched(self: writer_module.StoreWriter, *item: object) -> None:
        submit(self, *item)
        backlog.append(self.backlog)
        pid = self._proc.pid
        if len(backlog) == 10:  # the writer stops: as if its disk stalled for a while
            os.kill(pid, signal.SIGSTOP)
            stalled.append(pid)
            # It goes on once far more games wait than the run may hold, or after 15 s.
            threading.Timer(15, resume, (pid,)).start()
        if stalled and self.backlog > 3 * WRITER_BACKLOG:
            resume(pid)

    monkeypatch.setattr(writer_module.StoreWriter, "submit", watched)
    try:
        summary = run_tournament(settings)
    finally:
        if stalled:
            resume(stalled[0])
    assert stalled and summary.played == 400 and not summary.void
    # At most the limit, plus the games that were in flight when the hand-out stopped.
    assert max(backlog) <= WRITER_BACKLOG + jobs, max(backlog)
    with open_store(settings.results, create=False) as store:
        assert len(list(store.games())) == 400  # and nothing was lost
