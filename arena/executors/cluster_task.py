"""What a Dask worker runs for `arena run --cluster` (see :mod:`arena.executors.cluster`).

:func:`run_game` is one game as one Dask task. The task gets plain data: a job (a
dict) and the bundles of the game's bots (bytes, which Dask moves to the worker once
and keeps while the run needs them). It unpacks each bundle into this machine's cache
(once per content hash), then has the game played in a process of its own, forked by
this worker's zygote (:func:`arena.executors.worker_game.serve`, started once per worker process
with the arena already imported, so a game starts in milliseconds), waits for it in
the task's thread, and returns its output untouched. So the bots never belong to a Dask
thread (a pool thread that ends would take a parent-death signal with it): they are
children of the game process; it gets SIGKILL when the zygote ends, and the zygote ends
when the worker process does (a pipe only the worker holds reaches its end). A dead
worker's games are thus gone with all their bots, and Dask runs the tasks again
elsewhere.

Only this module and :mod:`arena.executors.cluster` touch Dask; a local run never imports them.
"""

from __future__ import annotations

import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from arena import __version__
from arena.bots._proctree import children_of, read_stat
from arena.bots.bundle import unpack_bundle
from arena.bots.manifest import BotManifest
from arena.bots.strict import resolve_level
from arena.engine import RULES_VERSION
from arena.executors.worker_game import ProcessJob, encode_job

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
    """Play one game on this worker; returns the game process's output, the
    :class:`~arena.game.record.GameRecord` as JSON (:func:`arena.executors.worker_game.decode_record`). ``job`` holds the game (id, seed,
    :class:`~arena.game.record.GameRecord` as JSON (:func:`arena.worker_game.decode_record`). ``job`` holds the game (id, seed,
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
    bots = {
        name: _unpacked(data, name, job["hashes"][name], cache / "bots")
        for name, data in zip(job["bundles"], bundles, strict=True)
    }
    game = ProcessJob(
        game_id=job["game_id"],
        seed=job["seed"],
        ids=job.get("ids"),
        players=job["players"],
        variant=job["variant"],
        time=job["time"],
        seats=[bots[n] for n in job["seats"]],
        build_cache=str(cache / "build"),
        sandbox=job["sandbox"],
    )
    crash_marker = _crash_due()
    with zygote().connect() as conn:
        conn.sendall(encode_job(game))
        conn.shutdown(socket.SHUT_WR)
        reply = conn.makefile("rb")
        pid_line = reply.readline()
        if crash_marker is not None and pid_line:
            _crash_mid_game(int(pid_line), crash_marker, job["players"])
        status_line = reply.readline()
        payload = reply.read()
    if not status_line:
        raise GameProcessError(
            f"game {job['game_id']} on {_where()}: the game process {pid_line.decode().strip() or '(not started)'} "
            "ended without a result (killed?)"
        )
    if status_line != b"0\n":
        tail = payload.decode(errors="replace").strip()[-STDERR_TAIL_CHARS:]
        raise GameProcessError(f"game {job['game_id']} on {_where()}: {tail}")
    return payload


_known: dict[tuple[str, str, Path], BotManifest] = {}  # this process's unpacked bots
_known_lock = threading.Lock()


def _unpacked(data: bytes, name: str, content_hash: str, cache: Path) -> BotManifest:
    """The bot of a bundle, unpacked (and its files hashed) once per worker process."""
    key = (name, content_hash, cache)
    with _known_lock:
        manifest = _known.get(key)
    if manifest is None:
        manifest = unpack_bundle(data, name, content_hash, cache)
        with _known_lock:
            _known[key] = manifest
    return manifest


class _Zygote:
    """This worker process's zygote (:func:`arena.executors.worker_game.serve`): started on first
    use, from whichever task thread, and tied to the process rather than that thread
    (it watches a pipe only this process holds, not a parent-death signal, which would
    follow the thread). Started again if it died."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._path: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._alive_w: int | None = None

    def connect(self) -> socket.socket:
        error: OSError | None = None
        for _ in range(2):
            path = self._ensure()
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                conn.connect(path)
                return conn
            except OSError as exc:
                conn.close()
                error = exc
                self._forget(path)
        raise GameProcessError(f"{_where()}: cannot start games: its game zygote does not answer ({error})")

    def _forget(self, path: str) -> None:
        with self._lock:
            if self._path == path and self._proc is not None:
                if self._proc.poll() is None:
                    self._proc.kill()
                    self._proc.wait()
                shutil.rmtree(os.path.dirname(path), ignore_errors=True)  # it cannot clean up now
                self._path = None

    def _ensure(self) -> str:
        with self._lock:
            if self._path is not None and self._proc is not None and self._proc.poll() is None:
                return self._path
            if self._path is not None:  # it died, and could not clean up
                shutil.rmtree(os.path.dirname(self._path), ignore_errors=True)
            folder = tempfile.mkdtemp(prefix="arena-zygote-")  # 0700: only this user may ask for games
            path = os.path.join(folder, "games.sock")
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(path)
            listener.listen(64)
            alive_r, alive_w = os.pipe()
            try:
                self._proc = subprocess.Popen(
                    [sys.executable, "-m", "arena.executors.worker_game", "--zygote", str(listener.fileno()), str(alive_r)],
                    pass_fds=(listener.fileno(), alive_r),
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            finally:
                listener.close()
                os.close(alive_r)
            if self._alive_w is not None:
                os.close(self._alive_w)  # the previous zygote, if still there, may go
            self._alive_w = alive_w  # held until this process ends: then the zygote ends
            self._path = path
            return path


_the_zygote = _Zygote()


def zygote() -> _Zygote:
    """This process's zygote (started on first use)."""
    return _the_zygote


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


def _crash_mid_game(game_pid: int, marker: Path, bots: int) -> None:
    while read_stat(game_pid) is not None and len(children_of(game_pid)) < bots:
        time.sleep(0.002)  # the bots start after the builds; then the game is under way
    os.kill(game_pid, signal.SIGSTOP)  # it cannot finish now: the crash is mid-game
    lines = []
    for pid in [game_pid, *children_of(game_pid)]:
        stat = read_stat(pid)
        if stat is not None:
            lines.append(f"{pid} {stat.starttime}\n")
    marker.write_text("".join(lines))
    os.kill(os.getpid(), signal.SIGKILL)
