"""What a Dask worker runs for `arena run --cluster` (see :mod:`arena.cluster`).

:func:`run_game` is one game as one Dask task. The task gets plain data: a job (a
dict) and the bundles of the game's bots (bytes, which Dask moves to the worker once
and keeps while the run needs them). It unpacks each bundle into this machine's cache
(once per content hash), then plays the game in a process of its own
(``python -m arena.worker_game``), waiting for it in the task's thread, and returns
that process's output untouched. So the bots never belong to a Dask thread (a pool
thread that ends would take a parent-death signal with it): they are children of the
game process, which gets SIGKILL if the worker process dies, and they get SIGKILL when
it does. A dead worker's game is thus gone with all its bots, and Dask runs the task
again elsewhere.

Only this module and :mod:`arena.cluster` touch Dask; a local run never imports them.
"""

from __future__ import annotations

import os
import platform
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

from arena import __version__
from arena.bots._proctree import child_setup_hook, children_of, read_stat
from arena.bots.bundle import unpack_bundle
from arena.bots.sandbox import resolve_level
from arena.engine import RULES_VERSION
from arena.worker_game import GameJob, SeatBot

#: Where a worker keeps unpacked and built bots, unless the job names a place (a
#: LocalCluster uses the run's results folder): this variable, else the user's cache.
CACHE_ENV = "SUSHIGO_ARENA_CACHE"

#: TEST-ONLY crash injection, read on the worker: ``MARKER:N``. The first worker process
#: that starts a game after having started N games, and that manages to create the file
#: MARKER (only one ever can), waits until that game's bots run, freezes the game,
#: writes ``pid starttime`` of the game process and of each bot into MARKER, and kills
#: its own process with SIGKILL, as a machine failure would. Tests use it to prove that
#: such a game is played again elsewhere, recorded once, and that its processes die with
#: the worker. Never set it outside tests.
CRASH_ENV = "ARENA_TEST_CRASH_WORKER"

STDERR_TAIL_CHARS = 2000
_games_started = 0  # in this worker process: for CRASH_ENV only


class GameProcessError(RuntimeError):
    """The game process failed on this worker (not a bot's fault: those are in the record)."""


def default_cache() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sushigo-arena"


def worker_facts() -> dict[str, Any]:
    """What the run checks on every worker before it sends games there."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    missing = {}
    for level in ("limits", "strict"):
        try:
            resolve_level(level)
        except ValueError as exc:
            missing[level] = str(exc)
    return {
        "arena": __version__,
        "rules": RULES_VERSION,
        "python": platform.python_version(),
        "cores": cores,
        "sandbox_missing": missing,  # level -> why this machine cannot run bots at it
    }


def identity(value: bytes) -> bytes:
    """A bundle as a task's result: unlike scattered data, Dask can compute it again
    if every worker holding it dies."""
    return value


def _where() -> str:
    try:
        from distributed import get_worker

        return f"worker {get_worker().address}"
    except (ImportError, ValueError):
        return f"host {socket.gethostname()}"


def run_game(job: dict[str, Any], *bundles: bytes) -> bytes:
    """Play one game on this worker; returns the game process's output, a
    :class:`arena.worker_game.GameOutcome` as JSON. ``job`` holds the game (id, seed,
    players, variant, time settings, the bot of each seat), the content hash of each
    bot, the names of the bots whose ``bundles`` follow, the rules version the run
    expects, and optionally the cache folder. Raises :class:`GameProcessError` if this
    machine cannot play it (wrong rules version, a bot that does not unpack or build,
    the game process killed)."""
    if job["rules"] != RULES_VERSION:
        raise GameProcessError(
            f"{_where()} plays rules {RULES_VERSION}, the run needs {job['rules']}: install the same arena version there"
        )
    cache = Path(job["cache"]) if job.get("cache") else default_cache()
    paths: dict[str, str] = {}
    for name, data in zip(job["bundles"], bundles, strict=True):
        manifest = unpack_bundle(data, name, job["hashes"][name], cache / "bots")
        paths[name] = str(manifest.path)
    game = GameJob(
        game_id=job["game_id"],
        seed=job["seed"],
        players=job["players"],
        variant=job["variant"],
        time=job["time"],
        seats=[SeatBot(name=n, path=paths[n], content_hash=job["hashes"][n]) for n in job["seats"]],
        build_cache=str(cache / "build"),
        sandbox=job["sandbox"],
    )
    crash_marker = _crash_due()
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.worker_game"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a Ctrl-C at the worker's terminal reaches the worker, which decides
        preexec_fn=child_setup_hook(os.getpid()),  # SIGKILL when this thread's process dies
    )
    if crash_marker is not None:
        _crash_mid_game(proc, msgspec.json.encode(game), crash_marker, job["players"])
    out, err = proc.communicate(msgspec.json.encode(game))
    if proc.returncode != 0:
        tail = err.decode(errors="replace").strip()[-STDERR_TAIL_CHARS:]
        how = f"was killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exited with status {proc.returncode}"
        raise GameProcessError(f"game {job['game_id']} on {_where()}: the game process {how}" + (f": {tail}" if tail else ""))
    return out


# -- test-only crash injection (CRASH_ENV) ------------------------------------------------


def _crash_due() -> Path | None:
    global _games_started
    spec = os.environ.get(CRASH_ENV)
    if not spec:
        return None
    marker, _, after = spec.rpartition(":")
    _games_started += 1
    if _games_started <= int(after):
        return None
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return None  # some worker already crashed: once is the point
    return Path(marker)


def _crash_mid_game(proc: subprocess.Popen[bytes], job: bytes, marker: Path, bots: int) -> None:
    assert proc.stdin is not None
    proc.stdin.write(job)
    proc.stdin.close()
    while proc.poll() is None and len(children_of(proc.pid)) < bots:
        time.sleep(0.002)  # the bots start after the builds; then the game is under way
    os.kill(proc.pid, signal.SIGSTOP)  # it cannot finish now: the crash is mid-game
    lines = []
    for pid in [proc.pid, *children_of(proc.pid)]:
        stat = read_stat(pid)
        if stat is not None:
            lines.append(f"{pid} {stat.starttime}\n")
    marker.write_text("".join(lines))
    os.kill(os.getpid(), signal.SIGKILL)
