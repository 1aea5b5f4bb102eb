"""A bot's identity (name + content hash) pins the code it runs: every bot runs from a
verified copy of exactly its hashed files (arena/bots/prepare.py ``prepare_bot`` /
``run_copy``), made once per content hash, atomically; files the hash leaves out (caches,
version control) are never there to be run, and everything else is hashed. Real bot
processes, real crafted files (sourceless and unchecked .pyc), real ``bwrap``."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
import trio
from proc_helpers import needs_strict

from arena.authoring.play import play_one
from arena.authoring.validate import validate_bot
from arena.bots.bundle import bundle_bot, unpack_bundle
from arena.bots.files import copy_bot, hash_bot
from arena.bots.manifest import ManifestError, content_hash, find_bot
from arena.bots.prepare import COPIED, BotCopyError, prepare_bot
from arena.bots.sandbox import Level, SandboxSettings
from arena.engine import GameConfig
from arena.executors.worker_game import ProcessJob, decode_record, encode_job, run_job
from arena.game.ids import time_dict
from arena.game.players import DEFAULT_TIME, open_pool
from arena.tournament.runner import run_tournament
from arena.tournament.settings import RunSettings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
FAST = replace(DEFAULT_TIME, turn_ms=300, bank_ms=600, hello_ms=10_000)
LEVELS = [
    pytest.param(None, id="none"),
    pytest.param(Level.LIMITS, id="limits"),
    pytest.param(Level.STRICT, id="strict", marks=needs_strict),
]

# A bare protocol bot that tells, in its hello's name, what it runs and sees: the strategy
# module it imports (wherever Python finds it), whether a module planted beside it is
# importable, and the files of its working folder. It plays the first legal entry.
OBSERVER = textwrap.dedent('''\
    import json, os, sys

    def seen():
        out = []
        try:
            import strategy
            out.append("strategy=" + strategy.NAME)
        except ImportError:
            out.append("strategy=none")
        try:
            import planted  # noqa: F401
            out.append("planted")
        except ImportError:
            pass
        out.append("files=" + ",".join(sorted(f for f in os.listdir(".") if f != "__pycache__")))
        return ";".join(out)

    def send(m):
        sys.stdout.write(json.dumps(m) + "\\n")
        sys.stdout.flush()

    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            send({"type": "hello", "re": msg["id"], "version": 1, "name": seen()})
        elif kind == "game_start":
            send({"type": "ready", "re": msg["id"]})
        elif kind == "act":
            if os.environ.get("TRIPWIRE") and "strategy=honest" not in seen():
                sys.exit("code that is not in the content hash ran: " + seen())
            send({"type": "action", "re": msg["id"], **msg["legal"][0]})
        elif kind == "game_over":
            send({"type": "ack", "re": msg["id"]})
        else:
            break
''')


def observer(folder: Path, name: str, *, tripwire: bool = False) -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(OBSERVER)
    env = '\nenv = { TRIPWIRE = "1" }\n' if tripwire else "\n"
    (folder / "bot.toml").write_text(f'name = "{name}"\nversion = "1"\nrun = ["{{python}}", "bot.py"]{env}')
    return folder


def compile_to(where: Path, source: str, **how: object) -> None:
    """Compile ``source`` into the .pyc file ``where`` (from a file elsewhere: no source beside it)."""
    src = where.parent.parent / f".{where.name}.src.py" if where.parent.name == "__pycache__" else where.with_suffix(".src.tmp")
    src.write_text(source)
    try:
        py_compile.compile(str(src), cfile=str(where), doraise=True, **how)  # type: ignore[arg-type]
    finally:
        src.unlink()


def settings(level: Level | None) -> SandboxSettings | None:
    return SandboxSettings(level) if level is not None else None


def hello_name(spec) -> str:  # noqa: ANN001
    """Start the bot of ``spec``; the name it gives in its hello."""
    async def main() -> str:
        async with open_pool() as pool:
            player = pool.player(spec)
            try:
                return (await player.start(FAST)).name
            finally:
                await player.close()

    return trio.run(main)


def seen_by(bot: Path, cache: Path, level: Level | None = None) -> str:
    return hello_name(prepare_bot(find_bot(bot), cache, settings(level)))


# -- the reported hole: a sourceless .pyc ------------------------------------------------------------


def test_a_sourceless_pyc_is_hashed_and_is_what_runs(tmp_path: Path) -> None:
    """The repro: bot.py imports strategy, which is only strategy.pyc. Two strategies are
    two versions of the bot, and each runs as its own."""
    bot = observer(tmp_path / "bots" / "sneaky", "sneaky")
    compile_to(bot / "strategy.pyc", 'NAME = "first"\n')
    first = find_bot(bot)
    assert seen_by(bot, tmp_path / "build") == "strategy=first;files=bot.py,bot.toml,strategy.pyc"
    compile_to(bot / "strategy.pyc", 'NAME = "last"\n')
    last = find_bot(bot)
    assert last.content_hash != first.content_hash
    assert seen_by(bot, tmp_path / "build") == "strategy=last;files=bot.py,bot.toml,strategy.pyc"
    assert hello_name(prepare_bot(first, tmp_path / "build")) == "strategy=first;files=bot.py,bot.toml,strategy.pyc"


def test_a_new_strategy_pyc_is_a_new_version_that_a_resumed_run_plays_again(tmp_path: Path) -> None:
    """End to end: what the store keys results by changes with the .pyc, so resuming
    the run replays the sneaky bot's games instead of keeping the other program's."""
    bots = tmp_path / "bots"
    bot = observer(bots / "sneaky", "sneaky")
    shutil.copytree(EXAMPLES / "minimal", bots / "minimal", ignore=shutil.ignore_patterns("__pycache__"))
    run = RunSettings(bots_dir=bots, results=tmp_path / "res", players=2, games=2, jobs=1, time=FAST,
                      sandbox=SandboxSettings(Level.LIMITS))
    compile_to(bot / "strategy.pyc", 'NAME = "first"\n')
    once = run_tournament(run)
    assert (once.played, once.already) == (2, 0)
    assert run_tournament(run).already == 2  # the same bots: nothing to play
    compile_to(bot / "strategy.pyc", 'NAME = "last"\n')
    again = run_tournament(run)
    assert (again.played, again.already) == (2, 0)
    assert {e.row.hash for e in once.entrants} != {e.row.hash for e in again.entrants}


# -- what the hash leaves out is never there to be run ----------------------------------------------


def test_an_unchecked_pyc_in_pycache_never_runs_in_place_of_its_source(tmp_path: Path) -> None:
    """__pycache__ is not hashed. Python would import an 'unchecked-hash' .pyc there
    without looking at the source; the copy has no __pycache__, so the source runs."""
    bot = observer(tmp_path / "bot", "pycache")
    (bot / "strategy.py").write_text('NAME = "honest"\n')
    cached = Path(importlib.util.cache_from_source(str(bot / "strategy.py")))
    cached.parent.mkdir()
    compile_to(cached, 'NAME = "planted"\n', invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    direct = subprocess.run(  # the crafted file is real: run in its own folder, the bot runs it
        [sys.executable, "-c", "import strategy; print(strategy.NAME)"], cwd=bot, capture_output=True, text=True, check=True
    )
    assert direct.stdout.strip() == "planted"
    before = content_hash(bot)
    shutil.rmtree(cached.parent)
    assert content_hash(bot) == before  # not part of the bot
    cached.parent.mkdir()
    compile_to(cached, 'NAME = "planted"\n', invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    assert seen_by(bot, tmp_path / "build").startswith("strategy=honest;")


def test_code_under_git_is_not_copied_and_node_modules_is_hashed_and_copied(tmp_path: Path) -> None:
    git_bot = tmp_path / "git-bot"
    git_bot.mkdir()
    (git_bot / ".git").mkdir()
    (git_bot / ".git" / "x.py").write_text("print('from .git')\n")
    (git_bot / "bot.toml").write_text('name = "git-bot"\nrun = ["{python}", ".git/x.py"]\n')
    before = content_hash(git_bot)
    (git_bot / ".git" / "x.py").write_text("print('other code')\n")
    assert content_hash(git_bot) == before  # version control is not part of a bot ...
    spec = prepare_bot(find_bot(git_bot), tmp_path / "build")
    assert not (spec.cwd / ".git").exists()  # ... so it is not there to be run
    assert sorted(p.name for p in spec.cwd.iterdir()) == ["bot.toml"]

    js = tmp_path / "js-bot"
    (js / "node_modules").mkdir(parents=True)
    (js / "node_modules" / "x.py").write_text(OBSERVER)  # imports strategy from beside it
    (js / "node_modules" / "strategy.py").write_text('NAME = "honest"\n')
    (js / "bot.toml").write_text('name = "js-bot"\nrun = ["{python}", "node_modules/x.py"]\n')
    first = content_hash(js)
    assert seen_by(js, tmp_path / "build").startswith("strategy=honest;")
    (js / "node_modules" / "strategy.py").write_text('NAME = "other"\n')
    assert content_hash(js) != first  # a JS bot's packages are its code
    assert seen_by(js, tmp_path / "build").startswith("strategy=other;")


def test_a_link_into_a_folder_that_is_not_copied_is_refused(tmp_path: Path) -> None:
    bot = observer(tmp_path / "linky", "linky")
    (bot / ".git").mkdir()
    (bot / ".git" / "strategy.py").write_text('NAME = "hidden"\n')
    (bot / "strategy.py").symlink_to(".git/strategy.py")
    with pytest.raises(ManifestError, match=r"strategy\.py is a link to '\.git/strategy\.py', into \.git, which is not part of the bot"):
        find_bot(bot)
    (bot / "strategy.py").unlink()
    (bot / "strategy.py").symlink_to(".git/../bot.py")  # through it: its copy would lead nowhere
    with pytest.raises(ManifestError, match=r"into \.git, which is not part of the bot"):
        find_bot(bot)


@pytest.mark.parametrize("level", LEVELS)
def test_a_bot_runs_from_its_copy_and_never_sees_a_file_put_in_its_folder(tmp_path: Path, level: Level | None) -> None:
    bot = observer(tmp_path / "bots" / "watcher", "watcher")
    (bot / "__pycache__").mkdir()
    (bot / "__pycache__" / "planted.cpython-311.pyc").write_bytes(b"not part of the bot")
    manifest = find_bot(bot)
    spec = prepare_bot(manifest, tmp_path / "build", settings(level))
    assert spec.cwd == (tmp_path / "build").resolve() / f"watcher-{manifest.content_hash}" / "src"
    (bot / "planted.py").write_text("X = 1\n")  # after it was read: not in its hash
    assert hello_name(spec) == "strategy=none;files=bot.py,bot.toml"
    # Read again, the folder is another bot, whose copy holds it.
    assert seen_by(bot, tmp_path / "build", level) == "strategy=none;planted;files=bot.py,bot.toml,planted.py"


@pytest.mark.parametrize("level", LEVELS)
def test_a_single_file_bot_runs_alone_in_its_copy(tmp_path: Path, level: Level | None) -> None:
    folder = tmp_path / "bots"
    folder.mkdir()
    solo = folder / "solo.py"
    solo.write_text(OBSERVER)
    (folder / "strategy.py").write_text('NAME = "a sibling, not part of the bot"\n')
    spec = prepare_bot(find_bot(solo), tmp_path / "build", settings(level))
    assert hello_name(spec) == "strategy=none;files=solo.py"
    assert os.access(spec.cwd / "solo.py", os.X_OK)  # the copy's mode is not the original's: it is not hashed


def test_files_that_change_between_reading_and_copying_are_refused(tmp_path: Path) -> None:
    bot = observer(tmp_path / "bot", "changing")
    manifest = find_bot(bot)
    (bot / "strategy.py").write_text('NAME = "late"\n')
    with pytest.raises(BotCopyError, match=r"bot changing: its files changed since they were read"):
        prepare_bot(manifest, tmp_path / "build")
    assert [p.name for p in (tmp_path / "build").iterdir()] == []  # no copy, no temporary left
    os.mkfifo(bot / "pipe")
    with pytest.raises(BotCopyError, match=r"bot changing: cannot copy its files to run them: .*pipe is a FIFO"):
        prepare_bot(manifest, tmp_path / "build")


# -- the hash itself: two different bots never share one ---------------------------------------------


def test_a_file_cannot_pose_as_the_next_file_nor_an_empty_folder_go_unseen(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for bot in (one, two):
        observer(bot, "twin")
    (two / "data").write_bytes(b"W")
    (two / "strategy.py").write_text('NAME = "x"\n')
    # One file whose bytes spell the end of "data" and the whole entry of "strategy.py".
    (one / "data").write_bytes(b"W\0strategy.py\0-\0" + (two / "strategy.py").read_bytes())
    assert content_hash(one) != content_hash(two)
    (one / "data").unlink()
    (one / "strategy.py").write_text('NAME = "x"\n')
    (one / "data").write_bytes(b"W")
    assert content_hash(one) == content_hash(two)  # the same files: the same bot
    (one / "empty" / "inner").mkdir(parents=True)
    assert content_hash(one) != content_hash(two)  # os.path.isdir("empty") is something a bot can test
    copy = tmp_path / "copy"
    assert copy_bot(one, copy) == content_hash(one) == hash_bot(copy)
    assert (copy / "empty" / "inner").is_dir()


def test_example_bots_keep_their_content_hash() -> None:
    """Text files, no empty folders, no .pyc outside __pycache__: their hash is the old one."""
    old = {"greedy": "633a586a410b07c6", "minimal": "453dc0a6b1a57905", "js-greedy": "063a757af8927e6e",
           "c-greedy": "92f37d19fa296b0f", "random": "8f9d20b0cbd332e3"}
    assert {name: content_hash(EXAMPLES / name) for name in old} == old


# -- once per content hash, atomically -----------------------------------------------------------------


def test_the_copy_is_made_once_and_reused_by_every_later_prepare(tmp_path: Path) -> None:
    bot = observer(tmp_path / "a" / "same", "same")
    twin = tmp_path / "b" / "same"
    shutil.copytree(bot, twin)
    first = prepare_bot(find_bot(bot), tmp_path / "build")
    base = first.cwd.parent
    marker = (base / COPIED).read_text()
    assert marker.strip() == content_hash(bot)
    ino = os.stat(first.cwd / "bot.py").st_ino
    again = prepare_bot(find_bot(twin), tmp_path / "build", SandboxSettings(Level.LIMITS))  # other folder, same files
    assert again.cwd == first.cwd and os.stat(again.cwd / "bot.py").st_ino == ino
    assert [p.name for p in (tmp_path / "build").iterdir()] == [base.name]


RACER = textwrap.dedent('''\
    import os, sys, time
    from pathlib import Path
    from arena.bots import manifest, prepare

    bot, cache, me, others = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    real_rename = os.rename

    def rename_when_all_copied(src, dst):
        # Each process has its whole copy before any renames: one must lose the race.
        if Path(src).name.endswith(".tmp"):
            print("copied, renaming")
            (cache / f"ready-{me}").touch()
            deadline = time.monotonic() + 30
            while len(list(cache.glob("ready-*"))) < others and time.monotonic() < deadline:
                time.sleep(0.005)
        return real_rename(src, dst)

    os.rename = rename_when_all_copied
    spec = prepare.prepare_bot(manifest.find_bot(bot), cache)
    print(spec.cwd)
''')


def test_processes_copying_at_once_leave_one_whole_copy_that_all_use(tmp_path: Path) -> None:
    bot = observer(tmp_path / "racer", "racer")
    for i in range(200):  # enough files that a copy takes a while
        (bot / "lib" / f"m{i // 50}").mkdir(parents=True, exist_ok=True)
        (bot / "lib" / f"m{i // 50}" / f"f{i}.py").write_text(f"X = {i}\n" * 50)
    cache = tmp_path / "build"
    cache.mkdir()
    script = tmp_path / "racer.py"
    script.write_text(RACER)
    n = 3
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen([sys.executable, str(script), str(bot), str(cache), str(i), str(n)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        for i in range(n)
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0] * n, [err for _, err in outs]
    assert all(out.startswith("copied, renaming\n") for out, _ in outs)  # each made a whole copy: a real race
    where = {out.splitlines()[-1] for out, _ in outs}
    manifest = find_bot(bot)
    assert where == {str(cache.resolve() / f"racer-{manifest.content_hash}" / "src")}
    for p in cache.glob("ready-*"):
        p.unlink()
    assert [p.name for p in cache.iterdir()] == [f"racer-{manifest.content_hash}"]  # no temporary left
    assert hash_bot(Path(where.pop())) == manifest.content_hash


def test_a_folder_in_the_way_of_the_copy_is_named_not_run(tmp_path: Path) -> None:
    bot = observer(tmp_path / "bot", "blocked")
    manifest = find_bot(bot)
    squatter = tmp_path / "build" / f"blocked-{manifest.content_hash}" / "src"
    squatter.mkdir(parents=True)
    (squatter / "bot.py").write_text("print('not the bot')\n")
    with pytest.raises(BotCopyError, match=rf"bot blocked: its run copy .*blocked-{manifest.content_hash} is in the way"):
        prepare_bot(manifest, tmp_path / "build")


# -- every way a bot is started ------------------------------------------------------------------------


def tripwire_bot(folder: Path, name: str) -> Path:
    """A bot that plays well only if the strategy.py it was hashed with is what runs; a
    planted unchecked .pyc in __pycache__ (not hashed) would make it exit."""
    bot = observer(folder, name, tripwire=True)
    (bot / "strategy.py").write_text('NAME = "honest"\n')
    cached = Path(importlib.util.cache_from_source(str(bot / "strategy.py")))
    cached.parent.mkdir()
    compile_to(cached, 'NAME = "planted"\n', invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    return bot


def test_validate_play_and_a_cluster_game_all_run_the_hashed_copy(tmp_path: Path) -> None:
    bot = tripwire_bot(tmp_path / "bots" / "wired", "wired")
    report = validate_bot(bot, FAST, build_cache=tmp_path / "build", sandbox=SandboxSettings(Level.LIMITS))
    assert report.passed, [(c.name, c.message) for c in report.failed]

    outcome = play_one([bot, EXAMPLES / "minimal"], GameConfig(2), 7, FAST, replay_path=None, build_cache=tmp_path / "build")
    assert outcome.record.status == "complete" and outcome.record.replay.faults == []

    # A cluster worker's game process: the bundle unpacked in its cache, then played.
    manifest = find_bot(bot)
    unpacked = unpack_bundle(bundle_bot(manifest), "wired", manifest.content_hash, tmp_path / "worker" / "bots")
    assert not (unpacked.path / "__pycache__").exists()
    minimal = find_bot(EXAMPLES / "minimal")
    job = ProcessJob(game_id="0123456789abcdef", seed=7, players=2, variant="standard", time=time_dict(FAST),
                  seats=[unpacked, minimal], build_cache=str(tmp_path / "worker" / "build"))
    status, payload = run_job(encode_job(job))
    assert status == 0, payload
    record = decode_record(payload)
    assert record.status == "complete" and record.replay.faults == []
    assert (tmp_path / "worker" / "build" / f"wired-{manifest.content_hash}" / COPIED).is_file()


def test_a_cache_inside_the_bots_own_folder_is_refused_not_hashed_into_the_bot(tmp_path: Path) -> None:
    """`arena validate .` from inside a bot's folder: results/build would become part of
    the bot (another hash, and copies of copies on each run); it is refused, naming why."""
    bot = observer(tmp_path / "mine", "mine")
    before = content_hash(bot)
    with pytest.raises(BotCopyError, match=r"bot mine: its run copy would go into .*mine/results/build, inside the bot's own folder"):
        prepare_bot(find_bot(bot), bot / "results" / "build")
    assert content_hash(bot) == before and not (bot / "results").exists()
