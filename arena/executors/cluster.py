"""The Dask executor: game jobs played as Dask tasks on many machines (`arena run --cluster`).

The caller's machine keeps everything but the games: it finds, builds and greets the
bots, decides the games and records them. Only the games move: each job is a task
(:func:`arena.executors.cluster_task.run_game`) that Dask places on a worker with enough
free ``seats`` (a worker resource: one per core), given plain data, the job and the
bundles of its bots. Each bot folder is bundled once, by content hash, and sent to a
worker once; a worker unpacks and builds it once per machine.

Failures: Dask runs a dead worker's games again elsewhere; a game whose task fails
(or that keeps killing workers, Dask's ``KilledWorker``) is tried again until it has
failed :data:`MAX_FAILURES` times, then reported void with the reasons, so that the
caller records it and plays it again later, never drops it. Stopping (:meth:`DaskExecutor.hurry`
or a cancelled caller) stops sending games and cancels the ones not finished (they are
never reported).

Dask is an optional dependency (the ``cluster`` extra): nothing imports this module
unless a run asks for a cluster, and then :func:`require_dask` says what to install.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import queue
import secrets
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from arena import __version__
from arena.bots import BotError
from arena.bots.bundle import bundle_bot
from arena.bots.sandbox import SandboxSettings
from arena.engine import RULES_VERSION
from arena.errors import ArenaError
from arena.executors.jobs import GameJob, OnRecord, void_record
from arena.executors.worker_game import decode_record
from arena.game.ids import time_dict
from arena.game.record import GameRecord

#: A game is recorded void (and reported) after failing this many times on workers.
MAX_FAILURES = 3
CONNECT_TIMEOUT_S = 10
WORKER_WAIT_S = 60
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")
EXTRA = "pip install 'sushigo-arena[cluster]'"


@dataclass(frozen=True, slots=True)
class ClusterTarget:
    """Where the games go: a scheduler's address, or a LocalCluster of N worker processes."""

    address: str | None = None
    local_workers: int = 0

    def __str__(self) -> str:
        return self.address or f"local:{self.local_workers}"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def parse_cluster(value: str) -> ClusterTarget:
    """``tcp://HOST:PORT`` (or ``tls://``, or ``HOST:PORT``), ``local:N``, or ``local``
    (one worker process per core). Raises :class:`ArenaError` naming the value."""
    text = value.strip()
    usage = "--cluster takes a scheduler address (tcp://HOST:8786, tls://HOST:8786) or local:N (N worker processes here)"
    if text == "local":
        return ClusterTarget(local_workers=_cores())
    if text.startswith("local:"):
        n = text.removeprefix("local:")
        if not n.isdigit() or int(n) < 1:
            raise ArenaError(f"{usage}; in {value!r}, N must be a whole number of at least 1")
        return ClusterTarget(local_workers=int(n))
    scheme, sep, rest = text.rpartition("://")
    if sep and scheme not in SCHEMES:
        raise ArenaError(f"{usage}; {value!r} has the unknown scheme {scheme!r} (known: {', '.join(SCHEMES)})")
    host, colon, port = rest.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise ArenaError(f"{usage}, not {value!r}")
    return ClusterTarget(address=text if sep else f"tcp://{text}")


def check_reachable(target: ClusterTarget, timeout_s: float = 5.0) -> None:
    """Fail early (before building and greeting the bots) if nothing listens at the
    scheduler's address: a TCP connection, then closed; Dask connects for real later."""
    if target.address is None:
        return
    rest = target.address.split("://", 1)[-1]
    host, _, port = rest.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ArenaError(
            f"cannot reach the Dask scheduler at {target.address}: {exc.strerror or exc} — is `dask scheduler` "
            "running there, and is its port open to this machine?"
        ) from None


def require_dask() -> None:
    """Fail at once, saying what to install, if Dask's distributed scheduler is missing."""
    try:
        import distributed  # noqa: F401
    except ImportError as exc:
        raise ArenaError(
            f"--cluster needs Dask's distributed scheduler, which is not installed ({exc}): {EXTRA}"
        ) from None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    address: str
    seats: float
    threads: int
    cores: int
    games: int  # games it runs at once


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """The cluster a run plays on, for the progress display."""

    target: str
    scheduler: str
    dashboard: str | None
    workers: list[WorkerInfo]
    seats_per_game: int  # the `seats` each game asks for: its bots, capped at the biggest worker
    slots: int  # games at once over the whole cluster

    @property
    def oversubscribed(self) -> list[WorkerInfo]:
        """Workers that declare more seats than they have cores (their games are timed unfairly)."""
        return [w for w in self.workers if w.seats > w.cores]


@dataclass(slots=True)
class _Pending:
    job: GameJob
    failures: list[str] = field(default_factory=list)
    delivered: bool = False


class ClusterLostError(ArenaError):
    """The client gave up on the scheduler (Dask tries to reconnect for a while first):
    the games sent are lost, the ones already reported are not."""

    def __init__(self, scheduler: str) -> None:
        super().__init__(f"lost the Dask scheduler at {scheduler}")
        self.scheduler = scheduler


class DaskExecutor:
    """An :class:`~arena.executors.jobs.Executor` that plays each game as a Dask task
    on the cluster at ``target``, its bots confined by ``sandbox`` as they would be here.
    ``local_cache``: where a LocalCluster's workers keep unpacked and built bots (a
    scheduler's own workers use theirs). ``on_ready`` is told, in the trio thread, the
    cluster once its workers are checked and the games it will run at once."""

    def __init__(
        self,
        target: ClusterTarget,
        sandbox: SandboxSettings,
        *,
        local_cache: Path | None = None,
        on_ready: Callable[[ClusterInfo, int], None] | None = None,
    ) -> None:
        self.target = target
        self.sandbox = sandbox
        self.local_cache = local_cache
        self.on_ready = on_ready
        self.stop = threading.Event()

    def hurry(self) -> None:
        self.stop.set()  # stop sending games; the ones not finished are cancelled

    async def play(
        self,
        jobs: Iterable[GameJob],
        on_record: OnRecord,
        *,
        concurrency: int | None = None,
        keep_going: Callable[[], bool] | None = None,
    ) -> None:
        """``concurrency``: games sent at once (default: twice the games the cluster
        runs at once, so that each worker has a queue and no idle gap). ``jobs`` are taken
        one at a time as the window has room (the first one at once: its format sizes the
        games' seats)."""
        require_dask()
        todo = iter(jobs)
        first = next(todo, None)
        if first is None:
            return  # nothing to play: no cluster started
        session = _Session(self, first, itertools.chain((first,), todo), on_record, concurrency, keep_going or (lambda: True))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_stop_when_cancelled, self.stop)
            try:
                await trio.to_thread.run_sync(session.run)
            finally:
                nursery.cancel_scope.cancel()


async def _stop_when_cancelled(stop: threading.Event) -> None:
    """The session's thread cannot be cancelled: a cancelled caller stops it instead."""
    try:
        await trio.sleep_forever()
    finally:
        stop.set()


class _Session:
    """The cluster side of one :meth:`DaskExecutor.play`; :meth:`run` is called in a
    thread of its own and talks to trio (``on_record``) through ``trio.from_thread``."""

    def __init__(
        self,
        executor: DaskExecutor,
        first: GameJob,
        todo: Iterator[GameJob],
        on_record: OnRecord,
        concurrency: int | None,
        keep_going: Callable[[], bool],
    ) -> None:
        self.executor = executor
        self.todo = todo
        self.target = executor.target
        self.config = first.config  # every job of a run has its format
        self.on_record = on_record
        self.concurrency = concurrency
        self.keep_going = keep_going
        self.stop = executor.stop
        self.client: Any = None
        self.cluster: Any = None
        self.token = secrets.token_hex(4)  # task keys of this run

    # -- the cluster -----------------------------------------------------------------

    def run(self) -> None:
        try:
            info = self.open()
            if info is None or self.stop.is_set():
                return
            window = self.concurrency or 2 * info.slots  # a queue on each worker: no idle gap
            if self.executor.on_ready is not None:
                trio.from_thread.run_sync(self.executor.on_ready, info, min(window, info.slots))
            self.play(info, window)
        finally:
            self.close()

    def open(self) -> ClusterInfo | None:
        """Start or reach the cluster and check its workers (None: stopped meanwhile)."""
        from distributed import Client

        if self.target.address is None:
            self.cluster = trio.from_thread.run_sync(self._start_local_cluster)
            self.client = Client(self.cluster, set_as_default=False)
            address = self.cluster.scheduler_address
        else:
            address = self.target.address
            try:
                self.client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise ArenaError(
                    f"cannot reach the Dask scheduler at {address}: {exc} — is `dask scheduler` running there, "
                    "and is its port open to this machine?"
                ) from None
            self._wait_for_workers(address)
            if self.stop.is_set():
                return None
        return self._check_workers(address)

    def _start_local_cluster(self) -> Any:
        """A LocalCluster whose processes ignore SIGINT: a Ctrl-C at the terminal (sent
        to the whole foreground process group) is the arena's to handle, which then
        closes the cluster. Runs in the main thread: only it may change signal handlers."""
        from distributed import LocalCluster

        n = self.target.local_workers
        seats = max(1, _cores() // n)
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited by the processes started now
        try:
            return LocalCluster(
                n_workers=n,
                threads_per_worker=seats,
                processes=True,
                resources={"seats": seats},
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
        except Exception as exc:  # noqa: BLE001 - Dask's own errors, told as the run's
            raise ArenaError(f"--cluster {self.target}: cannot start {n} local Dask worker process(es): {exc}") from None
        finally:
            signal.signal(signal.SIGINT, previous)

    def _wait_for_workers(self, address: str) -> None:
        deadline = time.monotonic() + WORKER_WAIT_S
        while not self.stop.is_set():
            if self.client.scheduler_info().get("workers"):
                return
            if time.monotonic() > deadline:
                raise ArenaError(
                    f"no worker has joined the Dask scheduler at {address} in {WORKER_WAIT_S} s: start some with "
                    f"`dask worker {address} --nthreads CORES --resources \"seats=CORES\"`"
                )
            time.sleep(0.5)

    def _check_workers(self, address: str) -> ClusterInfo:
        scheduler = self.client.scheduler_info()
        workers = scheduler["workers"]
        if not workers:
            raise ArenaError(f"Dask scheduler at {address}: its workers left before the first game")
        facts = self.client.run(_worker_facts(), workers=list(workers), on_error="return")
        wrong = []
        for addr in sorted(workers):
            fact = facts.get(addr)
            if isinstance(fact, BaseException) or not isinstance(fact, dict):
                wrong.append(f"{addr} cannot run the arena ({type(fact).__name__}: {fact}): {EXTRA} there")
            elif (fact["arena"], fact["rules"]) != (__version__, RULES_VERSION):
                wrong.append(
                    f"{addr} runs arena {fact['arena']} (rules {fact['rules']}), this run needs arena {__version__} "
                    f"(rules {RULES_VERSION})"
                )
            elif (level := self.executor.sandbox.level.value) in fact["sandbox_missing"]:
                wrong.append(f"{addr} cannot run bots in the {level} sandbox: {fact['sandbox_missing'][level]}")
        if wrong:
            raise ArenaError(f"Dask scheduler at {address}: " + "; ".join(wrong))
        unseated = sorted(a for a, w in workers.items() if "seats" not in (w.get("resources") or {}))
        if unseated:
            raise ArenaError(
                f"Dask scheduler at {address}: worker(s) {', '.join(unseated)} have no `seats` resource, so no game "
                f"would ever run there; start each worker with one seat per core: "
                f"dask worker {address} --nthreads CORES --resources \"seats=CORES\""
            )
        biggest = max(w["resources"]["seats"] for w in workers.values())
        if biggest < 1:
            raise ArenaError(f"Dask scheduler at {address}: no worker has a whole seat (the largest has seats={biggest})")
        per_game = max(1, min(self.config.players, int(biggest)))
        infos = []
        for addr in sorted(workers):
            w = workers[addr]
            seats = w["resources"]["seats"]
            infos.append(
                WorkerInfo(addr, seats, w["nthreads"], facts[addr]["cores"], min(w["nthreads"], int(seats // per_game)))
            )
        dashboard = None
        if self.target.address is not None and "dashboard" in (scheduler.get("services") or {}):
            with contextlib.suppress(Exception):
                dashboard = self.client.dashboard_link
        return ClusterInfo(
            target=str(self.target),
            scheduler=address,
            dashboard=dashboard,
            workers=infos,
            seats_per_game=per_game,
            slots=max(1, sum(w.games for w in infos)),
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.client is not None:
                self.client.close()
        with contextlib.suppress(Exception):
            if self.cluster is not None:
                self.cluster.close()

    # -- the games -------------------------------------------------------------------

    def play(self, info: ClusterInfo, window: int) -> None:
        from distributed import KilledWorker

        from arena.executors.cluster_task import identity, run_game

        client = self.client
        bundles: dict[str, Any] = {}  # by bot: one a bot, made when its first game is sent
        hashes: dict[str, str] = {}

        def bundle(seat: Any) -> Any:
            name, manifest = seat.name, seat.manifest
            if name not in bundles:
                try:
                    data = bundle_bot(manifest)
                except (OSError, BotError) as exc:
                    raise ArenaError(f"bot {name}: cannot bundle {manifest.path} for the workers: {exc}") from None
                bundles[name] = client.submit(
                    identity, data, key=f"arena-bundle-{name}-{manifest.content_hash}", pure=False
                )
                hashes[name] = manifest.content_hash
            return bundles[name]

        local_cache = self.executor.local_cache
        cache = str(local_cache.resolve()) if self.target.address is None and local_cache is not None else None
        resources = {"seats": info.seats_per_game}
        finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
        pending: dict[Any, _Pending] = {}
        base_job = {
            "cache": cache,
            "rules": RULES_VERSION,
            "sandbox": self.executor.sandbox,  # the level and caps: bots are confined on workers as here
        }

        def submit(item: _Pending) -> None:
            game = item.job
            seats = list({seat.name: seat for seat in game.seats}.values())
            names = [seat.name for seat in seats]
            futures = [bundle(seat) for seat in seats]
            job = {
                **base_job, "hashes": {n: hashes[n] for n in names}, "players": game.config.players, "variant": game.config.variant.value,
                "time": time_dict(game.time), "game_id": game.game_id, "seed": game.seed, "ids": game.ids,
                "seats": [seat.name for seat in game.seats], "bundles": names,
            }
            future = client.submit(
                run_game, job, *futures,
                key=f"arena-game-{game.game_id}-{self.token}-{len(item.failures) + 1}", resources=resources, pure=False,
            )
            pending[future] = item
            future.add_done_callback(finished.put)

        queue_iter = self.todo

        def refill() -> None:
            while len(pending) < window and not self.stop.is_set() and self.keep_going():
                nxt = next(queue_iter, None)
                if nxt is None:
                    return
                submit(_Pending(nxt))

        refill()
        try:
            while pending and not self.stop.is_set():
                if not self.keep_going():
                    return  # the caller stops: the games sent are cancelled
                try:
                    first = finished.get(timeout=0.2)
                except queue.Empty:
                    self._check_connected(info)
                    continue
                batch = [first]
                while True:
                    try:
                        batch.append(finished.get_nowait())
                    except queue.Empty:
                        break
                batch = [f for f in batch if f in pending]
                ok = [f for f in batch if f.status == "finished"]
                results: dict[Any, Any] = {}
                if ok:
                    try:
                        results = dict(zip(ok, client.gather(ok), strict=True))
                    except Exception:  # noqa: BLE001 - one result lost with its worker: fetch one by one
                        for f in ok:
                            try:
                                results[f] = f.result()
                            except Exception as exc:  # noqa: BLE001 - counted as a failure of the game
                                results[f] = exc
                if any(f.status == "cancelled" for f in batch):
                    self._check_connected(info)  # we cancel nothing ourselves before stopping
                for f in batch:
                    item = pending.pop(f)
                    outcome: Any = results.get(f)
                    if outcome is None:
                        outcome = f.exception() if f.status == "error" else RuntimeError(f"the task was {f.status}")
                    if isinstance(outcome, bytes):
                        try:
                            record = decode_record(outcome)
                        except Exception as exc:  # noqa: BLE001 - a worker's output we cannot read
                            outcome = RuntimeError(f"unreadable result from the worker: {exc}")
                        else:
                            self.deliver(item, record)
                            continue
                    item.failures.append(_describe(outcome))
                    if isinstance(outcome, KilledWorker) or len(item.failures) >= MAX_FAILURES:
                        self.deliver(item, failed_record(item.job, item.failures))
                    else:
                        submit(item)
                refill()
        finally:
            if pending:
                with contextlib.suppress(Exception):
                    client.cancel(list(pending))

    def _check_connected(self, info: ClusterInfo) -> None:
        if self.client.status in ("closing", "closed"):
            raise ClusterLostError(info.scheduler)

    def deliver(self, item: _Pending, record: GameRecord) -> None:
        if item.delivered:
            return  # a game is reported once, whatever ran twice (a flag on its job, not a set of every game)
        item.delivered = True
        trio.from_thread.run_sync(self.on_record, item.job, record)


def failed_record(job: GameJob, failures: Sequence[str]) -> GameRecord:
    """The void record of a game that kept failing on the workers: nobody is blamed,
    the reasons are kept, and the next run plays it again."""
    reason = f"failed {len(failures)} time(s) on the cluster: " + " | ".join(failures)
    return void_record(job, reason)


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:600]}"


def _worker_facts() -> Callable[[], dict[str, Any]]:
    from arena.executors.cluster_task import worker_facts

    return worker_facts
