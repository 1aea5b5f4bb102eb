"""The bot sandbox (arena/bots/sandbox.py, strict.py, jail.py, build.py): every example
bot plays under each level with its CPU time and peak memory measured; the limits level
without cgroups; the build step's confinement; limits in bot.toml and the caps; choosing
the level."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import proc_helpers
import pytest
import trio
from proc_helpers import STRICT, needs_strict

from arena.bots import _cgroup
from arena.bots.manifest import ManifestError, find_bot
from arena.bots.prepare import prepare_bot
from arena.bots.sandbox import DEFAULT_BUILD_LIMITS, DEFAULT_LIMITS, Level, Limits, SandboxSettings
from arena.bots.strict import resolve_level
from arena.engine import GameConfig
from arena.errors import ArenaError
from arena.game.players import DEFAULT_TIME, open_pool
from arena.game.referee import play_game

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
HOSTILE = Path(__file__).resolve().parents[1] / "data" / "hostile_bots" / "hostile.py"
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")
FAST = replace(DEFAULT_TIME, turn_ms=300, bank_ms=600, hello_ms=5000)


def hostile_bot(folder: Path, name: str, behaviour: str, trigger: int, **limits: float) -> Path:
    bot = folder / name
    bot.mkdir(parents=True)
    shutil.copy(HOSTILE, bot / "bot.py")
    text = f'name = "{name}"\nrun = ["{{python}}", "bot.py", "{behaviour}", "{trigger}"]\n'
    if limits:
        text += "[limits]\n" + "".join(f"{k} = {v}\n" for k, v in limits.items())
    (bot / "bot.toml").write_text(text)
    return bot


def in_folder(folder: Path) -> list[int]:
    """Live processes whose working folder is inside ``folder``."""
    return list(proc_helpers.processes_in(folder))


def play(specs: list, seed: int = 3):  # noqa: ANN001, ANN201
    async def main():  # noqa: ANN202
        async with open_pool() as pool:
            players = [pool.player(s) for s in specs]
            return await play_game(players, GameConfig(len(specs)), seed=seed, time_settings=FAST)

    return trio.run(main)


@linux
@pytest.mark.parametrize("level", [Level.LIMITS, Level.STRICT])
def test_every_example_bot_plays_in_the_sandbox_with_its_usage_measured(level: Level, tmp_path: Path) -> None:
    if level is Level.STRICT and not STRICT.ok:
        pytest.skip(STRICT.missing)
    if shutil.which("node") is None or shutil.which("cc") is None:
        pytest.skip("node and cc are needed for the JavaScript and C bots")
    settings = SandboxSettings(level)
    names = ["c-greedy", "greedy", "js-greedy", "mcts", "minimal"]
    specs = [prepare_bot(find_bot(EXAMPLES / n), tmp_path / "build", settings) for n in names]
    mcts = names.index("mcts")
    specs[mcts] = replace(specs[mcts], env={**specs[mcts].env, "MCTS_ITERATIONS": "50"})
    record = play(specs)
    assert record.status == "complete", record.void_reason
    assert record.replay.faults == [], [(f.seat, f.kind, f.message) for f in record.replay.faults]
    for seat, usage in enumerate(record.replay.usage):
        assert usage.seat == seat and usage.sandbox == level.value
        assert usage.cpu_ms is not None and usage.cpu_ms > 0
        assert usage.peak_mb is not None and usage.peak_mb > 0
        assert usage.limits == {
            "memory_mb": 512, "cpu_s": 60.0, "processes": 64, "tmp_mb": 64, "open_files": 256,
        }


def test_without_a_sandbox_nothing_is_measured(tmp_path: Path) -> None:
    spec = prepare_bot(find_bot(EXAMPLES / "minimal"), tmp_path)
    record = play([spec, replace(spec, name="minimal2")])
    assert [(u.sandbox, u.cpu_ms, u.peak_mb) for u in record.replay.usage] == [("none", None, None)] * 2


@linux
def test_limits_without_cgroups_caps_memory_and_ends_a_double_forked_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no cgroup can be made, the limits level still caps memory (RLIMIT_DATA),
    measures CPU time from /proc, and the arena still ends an escaped grandchild."""
    monkeypatch.setattr(_cgroup, "_support", _cgroup.CgroupSupport())
    bots = tmp_path / "bots"
    settings = SandboxSettings(Level.LIMITS)
    hog = prepare_bot(find_bot(hostile_bot(bots, "hog", "memory_hog", 2, memory_mb=64)), tmp_path, settings)
    forker = prepare_bot(find_bot(hostile_bot(bots, "forker", "double_fork", 1)), tmp_path, settings)
    record = play([hog, forker])
    assert record.status == "complete"
    crash = [f for f in record.replay.faults if f.seat == 0 and f.kind == "crash"]
    assert crash and (crash[0].round, crash[0].turn) == (1, 2)
    assert "MemoryError" in crash[0].message
    assert [f for f in record.replay.faults if f.seat == 1] == []
    assert record.replay.usage[1].cpu_ms is not None and record.replay.usage[1].sandbox == "limits"
    assert in_folder(tmp_path) == []  # the bots ran from their copies in the cache, tmp_path
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("sushigo-bot-*-hog-*"))  # its temp folder is gone


@needs_strict
def test_build_step_writes_only_its_build_folder(tmp_path: Path) -> None:
    bot = tmp_path / "bots" / "builder"
    bot.mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    (bot / "main.py").write_text("import sys\nsys.exit(0)\n")
    (bot / "build.py").write_text(
        "open('built.txt', 'w').write('ok')\n"
        f"try:\n    open({str(outside)!r}, 'w').write('x')\n    print('OUTSIDE WRITTEN')\n"
        "except OSError as e:\n    print('outside blocked:', e)\n"
    )
    (bot / "bot.toml").write_text('name = "builder"\nrun = ["{python}", "main.py"]\nbuild = ["{python}", "build.py"]\n')
    spec = prepare_bot(find_bot(bot), tmp_path / "cache", SandboxSettings(Level.STRICT))
    assert (spec.cwd / "built.txt").read_text() == "ok"
    assert not outside.exists()
    log = (spec.cwd.parent / "build.log").read_text()
    if os.geteuid() == 0:
        assert "outside blocked" in log
    else:  # the build owns the folders the sandbox makes on the way to its own: its write lands in its private /tmp
        assert "outside blocked" in log or ("OUTSIDE WRITTEN" in log and outside.is_relative_to("/tmp"))
    assert not (bot / "built.txt").exists()  # the bot's own folder is never touched
    assert os.stat(spec.cwd / "built.txt").st_uid == os.getuid()  # handed back to the arena's user
    assert spec.sandbox is not None and not spec.sandbox.writable  # the bot itself runs read-only


@needs_strict
def test_a_build_over_its_limits_fails_naming_the_limit(tmp_path: Path) -> None:
    bot = tmp_path / "hungry"
    bot.mkdir()
    (bot / "build.py").write_text("x = []\nwhile True:\n    x.append(bytearray(8 << 20))\n")
    (bot / "bot.toml").write_text(
        'name = "hungry"\nrun = ["true"]\nbuild = ["{python}", "build.py"]\n'
    )
    # A build's limits are the run's build limits, not the bot's game [limits].
    settings = SandboxSettings(Level.STRICT, build_limits=replace(DEFAULT_BUILD_LIMITS, memory_mb=48))
    with pytest.raises(Exception, match=r"bot hungry: build failed .*(memory limit of 48 MB|MemoryError)"):
        prepare_bot(find_bot(bot), tmp_path / "cache", settings)


def test_limits_in_bot_toml_are_checked_and_held_within_the_caps(tmp_path: Path) -> None:
    bot = tmp_path / "b"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "b"\nrun = ["x"]\n[limits]\nmemory_mb = 4096\ncpu_s = 2.5\n')
    m = find_bot(bot)
    assert m.limits == replace(DEFAULT_LIMITS, memory_mb=4096, cpu_s=2.5)
    caps = Limits(memory_mb=1024, cpu_s=100, processes=8, tmp_mb=16, open_files=64)
    policy = SandboxSettings(Level.LIMITS, caps).for_bot(bot, m.limits)
    assert policy.limits == Limits(memory_mb=1024, cpu_s=2.5, processes=8, tmp_mb=16, open_files=64)
    assert m.limits.over(caps) == ["memory_mb 4096 > 1024", "processes 64 > 8", "tmp_mb 64 > 16", "open_files 256 > 64"]
    (bot / "bot.toml").write_text('name = "b"\nrun = ["x"]\n[limits]\nmemory = 10\n')
    with pytest.raises(ManifestError, match=r"bot\.toml: unknown limit 'memory'"):
        find_bot(bot)
    (bot / "bot.toml").write_text('name = "b"\nrun = ["x"]\n[limits]\nprocesses = -1\n')
    with pytest.raises(ManifestError, match=r"bot\.toml: limit 'processes' must be a positive whole number, not -1"):
        find_bot(bot)
    (bot / "bot.toml").write_text('name = "b"\nrun = ["x"]\nlimits = 5\n')
    with pytest.raises(ManifestError, match=r"\[limits\] must be a table"):
        find_bot(bot)


def test_choosing_the_level() -> None:
    with pytest.raises(ValueError, match="--sandbox must be one of none, limits, strict, not 'jail'"):
        resolve_level("jail")
    if not sys.platform.startswith("linux"):
        level, warning = resolve_level(None)
        assert level is Level.NONE and warning and "Linux" in warning
        return
    level, warning = resolve_level("limits")
    if os.geteuid() == 0:  # bots at limits are root too: said once
        assert level is Level.LIMITS and warning and "so do its bots" in warning and "--sandbox strict" in warning
    else:
        assert (level, warning) == (Level.LIMITS, None)
    assert resolve_level("none") == (Level.NONE, None)
    level, warning = resolve_level(None)
    if STRICT.ok and os.geteuid() == 0:
        assert (level, warning) == (Level.STRICT, None)
    elif STRICT.ok:  # without root, strict says once what it gives up (tests/e2e/test_nonroot.py checks the text)
        assert level is Level.STRICT and warning and warning.startswith("sandbox: strict without root:")
        assert resolve_level("strict") == (level, warning)
    else:
        assert level is Level.LIMITS and warning and STRICT.missing in warning
        with pytest.raises(ValueError, match="--sandbox strict is not available"):
            resolve_level("strict")


def test_without_strict_support_a_run_falls_back_to_limits_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from arena.bots import strict
    from arena.cli.app import app

    missing = "bubblewrap (bwrap) is not installed: install it with `apt-get install bubblewrap`"
    monkeypatch.setattr(strict, "_strict", strict.StrictSupport(False, missing))
    monkeypatch.chdir(tmp_path)
    bot = str(EXAMPLES / "minimal")
    result = CliRunner().invoke(app, ["play", bot, bot, "--json"])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("warning:") == 1
    assert "strict is not available (bubblewrap (bwrap) is not installed" in " ".join(result.stderr.split())
    assert "--sandbox limits" in result.stderr
    summary = json.loads(result.stdout)
    assert summary["status"] == "complete"
    asked = CliRunner().invoke(app, ["play", bot, bot, "--sandbox", "strict"])
    assert isinstance(asked.exception, ArenaError)
    assert str(asked.exception).startswith("--sandbox strict is not available: bubblewrap (bwrap) is not installed")



def test_a_competition_config_sets_the_level_and_the_caps(tmp_path: Path) -> None:
    from arena.tournament.settings import RunSettings, load_config, settings_from

    config = tmp_path / "cup.toml"
    config.write_text('bots = "bots"\nsandbox = "limits"\n[limits]\nmemory_mb = 128\nprocesses = 8\n')
    options = load_config(config)
    settings = settings_from(options, base=RunSettings(bots_dir=Path(options["bots"])))
    assert settings.sandbox == SandboxSettings(Level.LIMITS, replace(SandboxSettings().caps, memory_mb=128, processes=8))
    config.write_text('bots = "bots"\n[limits]\nmemory_gb = 1\n')
    with pytest.raises(ArenaError, match="the run's caps on bots' limits: unknown limit 'memory_gb'"):
        settings_from(load_config(config))
