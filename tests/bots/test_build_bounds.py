"""What a bot's build may leave on the arena's disk (``build_mb``, ``build_files``), and the
results folder's lock held by ``arena store key import``: real bots, real builds (real
``bwrap`` under strict), real ``arena`` commands."""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.bots import build
from arena.bots.build import BUILD_DEPTH_CAP
from arena.bots.manifest import find_bot
from arena.bots.prepare import BuildError, prepare_bot
from arena.bots.sandbox import Level, SandboxSettings
from arena.bots.strict import strict_support

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = (ROOT / "example_bots" / "minimal" / "bot.py").read_text()
STRICT = strict_support()
needs_strict = pytest.mark.skipif(not STRICT.ok, reason=f"strict sandbox unavailable: {STRICT.missing}")
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")
LEVELS = [pytest.param("strict", marks=needs_strict), pytest.param("limits", marks=linux)]
_MiB = 1024 * 1024


def building_bot(folder: Path, name: str, build: str) -> Path:
    """A bot that plays like the minimal example, with ``build`` (Python code) as its build step."""
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(MINIMAL.replace('"name": "minimal"', f'"name": "{name}"'))
    (folder / "build.py").write_text(build)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\nbuild = ["{{python}}", "build.py"]\nrun = ["{{python}}", "bot.py"]\n'
    )
    return folder


# Writes 2 MiB files, 20 MiB a second, until stopped: only a look while it runs ends it (before
# the run's 20 s cap on build time).
FILLER = (
    "import itertools, time\nfor i in itertools.count():\n    open(f'f{i}', 'wb').write(b'x' * (2 << 20))\n"
    "    time.sleep(0.1)\n"
)
# Thousands of empty files, each far under any size cap.
SWARM = "import os\nfor i in range(5000):\n    os.close(os.open(f'e{i}', os.O_CREAT | os.O_WRONLY))\n"
# 3 MiB and a few files: under the caps, kept.
MODEST = "import os\nos.mkdir('out')\nopen('out/blob', 'wb').write(os.urandom(3 << 20))\nopen('ok', 'w').write('built')\n"


def _run(bots: Path, results: Path, config: Path, level: str) -> tuple[dict, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "run", "--bots", str(bots), "--results", str(results), "--config", str(config),
         "--players", "2", "--games", "2", "--time-scale", "0.5", "--sandbox", level, "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=240, env={**os.environ, "COLUMNS": "500"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout), proc.stderr


@pytest.mark.parametrize("level", LEVELS)
def test_a_build_over_its_folder_caps_is_stopped_skipped_and_removed_while_others_play(tmp_path: Path, level: str) -> None:
    bots = tmp_path / "bots"
    for name, code in (("filler", FILLER), ("swarm", SWARM), ("modest", MODEST)):
        building_bot(bots / name, name, code)
    building_bot(bots / "plain", "plain", "pass\n")
    config = tmp_path / "arena.toml"
    config.write_text("build_mb = 8\nbuild_timeout_s = 20\n[limits]\nbuild_files = 200\n")
    results = tmp_path / "res"
    doc, _ = _run(bots, results, config, level)

    skipped = {s["bot"]: s["reason"] for s in doc["skipped"]}
    assert set(skipped) == {"filler", "swarm"}, skipped
    assert re.search(r"bot filler: build stopped: its build folder grew over the run's cap of 8 MB \(build_mb\)", skipped["filler"])
    assert "bot swarm: build stopped: its build folder grew over the run's cap of 200 files (build_files)" in skipped["swarm"]
    assert "\n" not in skipped["filler"] and "\n" not in skipped["swarm"]
    assert {r["bot"] for r in doc["rows"]} == {"modest", "plain"}  # the others play on
    cache = results / "build"
    for name in ("filler", "swarm"):
        (folder,) = cache.glob(f"{name}-*")
        assert not (folder / "src").exists() and not (folder / "built.ok").exists(), sorted(folder.iterdir())
        assert sum(f.stat().st_size for f in folder.rglob("*")) < 1 * _MiB  # only its (small) log is left
        assert "the arena stopped the build" in (folder / "build.log").read_text()
    (kept,) = cache.glob("modest-*")
    assert (kept / "built.ok").exists() and (kept / "src" / "out" / "blob").stat().st_size == 3 << 20
    assert (kept / "src" / "ok").read_text() == "built"


@pytest.mark.parametrize("level", LEVELS)
def test_a_build_that_writes_over_the_cap_between_two_looks_is_caught_when_it_ends(
    tmp_path: Path, level: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build, "BUILD_CHECK_INTERVAL", 3600.0)  # no look while it runs: only the one after
    bot = building_bot(tmp_path / "bots" / "burst", "burst", "open('big', 'wb').write(b'x' * (12 << 20))\n")
    settings = SandboxSettings(level=Level(level), build_mb=8, build_files=100)
    with pytest.raises(BuildError, match=r"bot burst: build stopped: its build folder grew over the run's cap of 8 MB \(build_mb\)"):
        prepare_bot(find_bot(bot), tmp_path / "cache", settings)
    (folder,) = (tmp_path / "cache").glob("burst-*")
    assert not (folder / "src").exists() and not (folder / "built.ok").exists()


@pytest.mark.parametrize("level", LEVELS)
def test_a_build_nesting_folders_past_any_name_length_is_stopped_and_removed(tmp_path: Path, level: str) -> None:
    # 200 levels of 200-character names: paths of 40 000 characters, ten times what a path may be.
    deep = "import os\nfor i in range(200):\n    os.mkdir('d' * 200)\n    os.chdir('d' * 200)\nopen('f', 'w').write('x')\n"
    bot = building_bot(tmp_path / "bots" / "deep", "deep", deep)
    settings = SandboxSettings(level=Level(level))
    with pytest.raises(BuildError, match=rf"bot deep: build stopped: its build folder nests folders over {BUILD_DEPTH_CAP} deep"):
        prepare_bot(find_bot(bot), tmp_path / "cache", settings)
    (folder,) = (tmp_path / "cache").glob("deep-*")
    assert not (folder / "src").exists()


# -- arena store key import and a running arena run ------------------------------------------------

KEY = "11" * 32


def _arena(*args: str, results: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args, str(results)], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "500"},
    )


def _lock_held(results: Path) -> bool:
    try:
        fd = os.open(results / "arena.lock", os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_key_import_waits_for_a_running_run_then_refuses_the_store_it_filled(tmp_path: Path) -> None:
    """The run's bots wait at start-up (inside the run's lock) until the import has said it
    waits for the run; then the run plays its games and lets go, and the import refuses the
    store they filled. No race with the clock: each step waits for the one before."""
    go = tmp_path / "go"
    bots = tmp_path / "bots"
    for name in ("slow", "slower"):
        (bots / name).mkdir(parents=True)
        held = f"import os, time\nwhile not os.path.exists({str(go)!r}):\n    time.sleep(0.02)\n" + MINIMAL.replace(
            '"name": "minimal"', f'"name": "{name}"'
        )
        (bots / name / "bot.py").write_text(held)
        (bots / name / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\nrun = ["{{python}}", "bot.py"]\n')
    results = tmp_path / "res"
    run = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", "--bots", str(bots), "--results", str(results), "--players", "2",
         "--games", "2", "--sandbox", "none", "--no-report", "--hello-ms", "600000"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    importer = None
    try:
        deadline = time.monotonic() + 120
        while not ((results / "arena.db").exists() and _lock_held(results)):
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.02)
        before = _arena("store", "key", "export", results=results)
        assert before.returncode == 0, before.stderr
        importer = subprocess.Popen(
            [sys.executable, "-m", "arena", "store", "key", "import", KEY, str(results)], cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "500"},
        )
        assert importer.stderr is not None
        first = importer.stderr.readline()  # it says so before it waits
        go.touch()  # the bots start: the run plays and lets go of the lock
        rest, err_rest = importer.communicate(timeout=120)
        imported = subprocess.CompletedProcess(importer.args, importer.returncode, rest, first + err_rest)
        out, err = run.communicate(timeout=120)
    finally:
        go.touch()
        for proc in (run, importer):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert run.returncode == 0, err
    assert "waiting for" in imported.stderr and "arena run" in imported.stderr, imported.stderr
    assert imported.returncode == 1 and "Traceback" not in imported.stderr
    assert "holds 2 game(s) dealt with its own key" in imported.stderr, imported.stderr
    after = _arena("store", "key", "export", results=results)
    assert after.stdout == before.stdout and KEY not in after.stdout  # the key that dealt the games stays
    again = subprocess.run(
        [sys.executable, "-m", "arena", "run", "--bots", str(bots), "--results", str(results), "--players", "2",
         "--games", "2", "--sandbox", "none", "--no-report", "--hello-ms", "600000"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # (the same time settings: they are part of every game's id)
    assert again.returncode == 0 and "0 to play" in again.stderr + again.stdout, again.stderr


def test_key_import_into_a_folder_with_no_game_succeeds_and_is_what_export_prints(tmp_path: Path) -> None:
    results = tmp_path / "fresh"
    imported = _arena("store", "key", "import", KEY, results=results)
    assert imported.returncode == 0, imported.stderr
    assert "waiting" not in imported.stderr
    assert _arena("store", "key", "export", results=results).stdout.strip() == KEY
    assert not _lock_held(results)  # let go once done
