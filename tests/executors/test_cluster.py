"""`arena run --cluster`: the games of a tournament played as Dask tasks.

On one machine, with a LocalCluster of 2 worker processes (``--cluster local:2``): the
same tournament and seed give the same games and the same leaderboard as a local run;
a worker killed in the middle of a game (the test-only crash injection of
:mod:`arena.executors.cluster_task`) still yields every game exactly once, and takes the game's
processes with it; a bot with a build step is built on the workers; a game that keeps
failing on the workers is recorded void with the reason, never dropped. Without
``--cluster`` nothing imports Dask, and without Dask ``--cluster`` says what to install.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.bots.bundle import BundleError, bundle_bot, unpack_bundle
from arena.bots.manifest import content_hash, find_bot
from arena.bots.sandbox import Level, SandboxSettings
from arena.cli.app import app
from arena.errors import ArenaError
from arena.executors.cluster import ClusterTarget, parse_cluster
from arena.executors.cluster_task import CRASH_ENV
from arena.store.database import DB_NAME
from arena.store.opening import open_store
from arena.tournament.runner import run_tournament
from arena.tournament.settings import RunSettings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
BOTS = ("random", "greedy", "minimal", "c-greedy")  # c-greedy: a build step (cc)
ARGS = ("--players", "3", "--deals", "1", "--seed", "5")  # 4 tables x 3 rotations: 12 games
GAMES = 12
STABLE = ("rank", "bot", "version", "hash", "elo", "elo_low", "elo_high", "games", "wins", "mean_points", "mean_rank", "faults")

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="the build-step bot needs a C compiler")


def run_cli(*args: str) -> dict:
    result = CliRunner().invoke(app, ["run", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def stable_rows(doc: dict) -> list[dict]:
    """The leaderboard without what the machine decides (time and memory measured)."""
    return [{k: row[k] for k in STABLE} for row in doc["rows"]]


def stored_games(results: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(results / DB_NAME) as conn:
        return sorted(conn.execute("SELECT id, status FROM games"))


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, list[tuple[str, str]]]:
    """The bots, and the reference: the same tournament played locally."""
    if shutil.which("cc") is None:
        pytest.skip("the build-step bot needs a C compiler")
    base = tmp_path_factory.mktemp("cluster")
    bots = base / "bots"
    for name in BOTS:
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    doc = run_cli("--bots", str(bots), "--results", str(base / "local"), *ARGS)
    assert doc["run"]["played"] == GAMES and doc["run"]["void"] == 0
    return bots, doc, stored_games(base / "local")


def with_local_key(bots: Path, res: Path) -> Path:
    """A fresh results folder ``res`` with the deal key of the local reference run (made next
    to ``bots``): the same seed then deals the same games."""
    with open_store(bots.parent / "local") as local, open_store(res) as fresh:
        fresh.import_deal_key(local.deal_key().hex())
    return res


# -- the parts ---------------------------------------------------------------------------


def test_cluster_addresses_and_local_clusters_are_understood() -> None:
    assert parse_cluster("tcp://10.0.0.5:8786") == ClusterTarget(address="tcp://10.0.0.5:8786")
    assert parse_cluster("tls://sched.example:8786") == ClusterTarget(address="tls://sched.example:8786")
    assert parse_cluster("sched:8786") == ClusterTarget(address="tcp://sched:8786")
    assert parse_cluster("local:3") == ClusterTarget(local_workers=3)
    assert parse_cluster("local").local_workers >= 1
    for bad, says in [("local:0", "at least 1"), ("local:x", "at least 1"), ("http://h:1", "unknown scheme 'http'"), ("sched", "not 'sched'")]:
        with pytest.raises(ArenaError, match=says):
            parse_cluster(bad)


def test_a_bundle_carries_a_bot_exactly_and_refuses_anything_else(tmp_path: Path) -> None:
    bot = tmp_path / "src" / "mybot"
    shutil.copytree(EXAMPLES / "random", bot)
    (bot / "tool.sh").write_text("#!/bin/sh\n")
    (bot / "tool.sh").chmod(0o755)
    (bot / "__pycache__").mkdir()
    (bot / "__pycache__" / "x.pyc").write_bytes(b"skipped, as by the content hash")
    manifest = find_bot(bot)
    data = bundle_bot(manifest)
    assert bundle_bot(manifest) == data  # no times or owners inside
    got = unpack_bundle(data, "random", manifest.content_hash, tmp_path / "cache")
    assert got.name == "random" and got.content_hash == manifest.content_hash == content_hash(got.path)
    assert os.access(got.path / "tool.sh", os.X_OK) and not (got.path / "__pycache__").exists()
    assert unpack_bundle(data, "random", manifest.content_hash, tmp_path / "cache").path == got.path  # once
    with pytest.raises(BundleError, match="content hash"):
        unpack_bundle(data, "random", "0" * 16, tmp_path / "other")
    with pytest.raises(BundleError, match="not a readable archive|cannot unpack"):
        unpack_bundle(b"not a tar", "random", manifest.content_hash, tmp_path / "bad")
    evil = tmp_path / "evil.tar.gz"
    subprocess.run(["tar", "-czf", str(evil), "-P", "--transform", "s,^,../,", "-C", str(bot), "bot.py"], check=True)
    with pytest.raises(BundleError, match="not a plain relative file"):
        unpack_bundle(evil.read_bytes(), "random", manifest.content_hash, tmp_path / "evil")


def test_a_dead_zygote_is_replaced_and_a_bad_job_is_answered_with_the_reason() -> None:
    from arena.executors.cluster_task import zygote

    def ask(data: bytes) -> tuple[int, bytes, bytes]:
        with zygote().connect() as conn:
            conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)
            reply = conn.makefile("rb")
            pid, status, payload = int(reply.readline()), reply.readline(), reply.read()
        return pid, status, payload

    pid, status, payload = ask(b"{}")
    assert status == b"2\n" and b"not a game job" in payload
    assert pid != os.getpid()
    first = zygote()._proc
    assert first is not None
    first.kill()
    first.wait()
    pid, status, payload = ask(b"[]")  # a new zygote forks the game process
    assert status == b"2\n" and zygote()._proc is not first


def test_a_local_run_never_imports_dask(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    for name in ("random", "minimal"):
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    code = (
        "import sys\n"
        "from arena.cli.app import app\n"
        f"try:\n    app(['run', '--bots', {str(bots)!r}, '--results', {str(tmp_path / 'res')!r}, '--players', '2', '-q'])\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "assert not loaded, loaded\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open_store(tmp_path / "res", create=False) as store:
        assert len(store.games()) == 2


def test_without_dask_cluster_fails_at_once_naming_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    with pytest.raises(ArenaError, match=r"pip install 'sushigo-arena\[cluster\]'"):
        run_tournament(RunSettings(bots_dir=tmp_path / "no-bots-needed", results=tmp_path / "res", cluster="local:2"))
    assert not (tmp_path / "res").exists()  # before any work


def test_a_scheduler_that_cannot_be_reached_is_named_before_any_work(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ArenaError, match=rf"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"):
        run_tournament(RunSettings(bots_dir=tmp_path / "bots", results=tmp_path / "res", cluster=f"127.0.0.1:{port}"))
    assert not (tmp_path / "res").exists()


def test_workers_without_seats_are_named(tmp_path: Path) -> None:
    from distributed import LocalCluster

    bots = tmp_path / "bots"
    for name in ("random", "minimal"):
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    with LocalCluster(n_workers=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None) as cluster:
        worker = next(iter(cluster.scheduler.workers))
        with pytest.raises(ArenaError, match=rf"worker\(s\) {worker} have no `seats` resource.*--resources \"seats=CORES\""):
            run_tournament(RunSettings(bots_dir=bots, results=tmp_path / "res", players=2, cluster=cluster.scheduler_address))


def test_workers_that_cannot_provide_the_runs_sandbox_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from distributed import LocalCluster

    import arena.executors.cluster_task

    def no_limits(level: str) -> None:
        raise ValueError(f"no {level} here: this worker lacks what it takes")

    monkeypatch.setattr(arena.executors.cluster_task, "resolve_level", no_limits)  # the workers below run in this process
    bots = tmp_path / "bots"
    for name in ("random", "minimal"):
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    settings = RunSettings(
        bots_dir=bots, results=tmp_path / "res", players=2, sandbox=SandboxSettings(Level.LIMITS)
    )
    with LocalCluster(
        n_workers=1, processes=False, protocol="tcp", host="127.0.0.1", resources={"seats": 1}, dashboard_address=None
    ) as cluster:
        worker = next(iter(cluster.scheduler.workers))
        with pytest.raises(ArenaError, match=rf"{worker} cannot run bots in the limits sandbox: no limits here"):
            run_tournament(replace(settings, cluster=cluster.scheduler_address))


# -- whole runs on a LocalCluster --------------------------------------------------------


@needs_cc
def test_a_cluster_run_plays_the_local_runs_games_with_the_same_leaderboard(tmp_path: Path, local_run) -> None:  # noqa: ANN001
    bots, reference, games = local_run
    res = with_local_key(bots, tmp_path / "res")
    doc = run_cli("--bots", str(bots), "--results", str(res), *ARGS, "--cluster", "local:2")
    assert doc["run"]["played"] == GAMES and doc["run"]["void"] == 0
    assert stored_games(res) == games
    assert stable_rows(doc) == stable_rows(reference)
    assert {r["bot"] for r in doc["rows"]} == set(BOTS)
    assert all(sum(r["faults"].values()) == 0 for r in doc["rows"])
    # The C bot was built on the workers, from its bundle, in their cache.
    built = list((res / "worker-cache" / "build").glob("c-greedy-*/built.ok"))
    assert len(built) == 1 and (built[0].parent / "src" / "bot").is_file()
    verify = CliRunner().invoke(app, ["verify", str(res / "replays"), "--json"])
    checked = json.loads(verify.stdout)
    assert {k: checked[k] for k in ("checked", "failed", "failures")} == {"checked": GAMES, "failed": 0, "failures": []}
    again = run_cli("--bots", str(bots), "--results", str(res), *ARGS, "--cluster", "local:2")
    assert (again["run"]["played"], again["run"]["already"]) == (0, GAMES)


@needs_cc
def test_a_worker_killed_mid_game_still_yields_every_game_exactly_once(
    tmp_path: Path, local_run, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
) -> None:
    bots, reference, games = local_run
    marker = tmp_path / "crashed"
    monkeypatch.setenv(CRASH_ENV, f"{marker}:2")  # the first worker to start its 3rd game dies in it
    res = with_local_key(bots, tmp_path / "res")
    config = tmp_path / "arena.toml"
    config.write_text('[run]\ncluster = "local:2"\n')  # the config file's key, this time
    doc = run_cli("--bots", str(bots), "--results", str(res), *ARGS, "--config", str(config))
    assert marker.is_file(), "no worker was killed"
    assert doc["run"]["played"] == GAMES and doc["run"]["void"] == 0
    assert stored_games(res) == games  # each id once (the primary key), all complete
    with sqlite3.connect(res / DB_NAME) as conn:
        assert conn.execute("SELECT COUNT(*) FROM tournament_games").fetchone() == (GAMES,)
    assert stable_rows(doc) == stable_rows(reference)
    # The killed game's process and its bots died with the worker.
    procs = [tuple(map(int, line.split())) for line in marker.read_text().splitlines()]
    assert len(procs) >= 1 + 3, procs  # the game process and its three bots
    deadline = time.monotonic() + 30
    while alive := [p for p, start in procs if _running(p, start)]:
        assert time.monotonic() < deadline, f"still running after their worker died: {alive}"
        time.sleep(0.1)


def test_a_game_that_keeps_failing_on_the_workers_is_recorded_void_and_reported(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    for name in ("random", "minimal"):
        shutil.copytree(EXAMPLES / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
    picky = bots / "picky"
    shutil.copytree(EXAMPLES / "random", picky, ignore=shutil.ignore_patterns("__pycache__"))
    # Builds here, but not in a worker's cache: as a bot needing a tool only this machine has.
    (picky / "bot.toml").write_text(
        'name = "picky"\nrun = ["{python}", "bot.py"]\n'
        "build = [\"sh\", \"-c\", \"case $PWD in *worker-cache*) echo no compiler on this worker; exit 1;; esac\"]\n"
    )
    res = tmp_path / "res"
    summary = run_tournament(RunSettings(bots_dir=bots, results=res, players=2, cluster="local:2"))
    # 3 tables x 2 rotations; the 4 with picky fail on every try.
    assert (summary.played, summary.void, summary.total) == (2, 4, 6)
    assert len(summary.void_reasons) == 4
    assert all("failed 3 time(s) on the cluster" in r for r in summary.void_reasons)
    with open_store(res, create=False) as store:
        rows = store.games(status=None)
    void = [g for g in rows if g.status == "void"]
    assert len(void) == 4 and all("picky" in {s.bot.name for s in g.seats} for g in void)
    assert all("no compiler on this worker" in g.void_reason for g in void)
    # Void games are not done: the next run tries them again (and here fails them again).
    again = run_tournament(RunSettings(bots_dir=bots, results=res, players=2, cluster="local:2"))
    assert (again.already, again.void) == (2, 4)


def _running(pid: int, start: int) -> bool:
    """Whether the process that started at ``start`` still runs (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[19]) == start and fields[0] != "Z"
