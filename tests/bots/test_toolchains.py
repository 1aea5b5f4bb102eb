"""Every toolchain builds and plays under the default strict sandbox: real builds (javac,
cargo, go, cc, node, a virtual environment with a wheel installed offline), each skipped
with its reason where the toolchain is missing; the build cache keyed by the level and
what is shown; the operator's [sandbox] expose (and a bot that cannot widen it); a failed
build's message; validate and submit with --results; arena doctor."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
import trio
from proc_helpers import STRICT, needs_strict

from arena.bots import toolchains
from arena.bots.manifest import ManifestError, find_bot
from arena.bots.prepare import BuildError, prepare_bot
from arena.bots.sandbox import DEFAULT_BUILD_LIMITS, Level, SandboxSettings
from arena.engine import GameConfig
from arena.game.players import DEFAULT_TIME, open_pool
from arena.game.referee import play_game
from arena.tournament.settings import load_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
BOTS = Path(__file__).resolve().parents[1] / "data" / "toolchain_bots"
# The JVM starts in about a second; a bot's first answer may take that.
TIME = replace(DEFAULT_TIME, turn_ms=2000, bank_ms=4000, hello_ms=20000)
# As root and as an ordinary user alike (CI runs this file both ways).
STRICT_ANY = pytest.mark.skipif(not STRICT.ok, reason=f"strict sandbox unavailable: {STRICT.missing}")


def need(*programs: str) -> None:
    """Skip, saying which, when a toolchain's program is not on the arena's PATH."""
    path = toolchains.toolchain_path(os.environ.get("PATH", ""))
    missing = [p for p in programs if shutil.which(p, path=path) is None]
    if missing:
        pytest.skip(f"toolchain missing: {', '.join(missing)} not found on PATH")


def copy_bot(name: str, dest: Path) -> Path:
    bot = dest / name
    shutil.copytree(BOTS / name if (BOTS / name).exists() else EXAMPLES / name, bot)
    os.chmod(dest, 0o755)
    return bot


def play(specs: list):  # noqa: ANN001, ANN201
    async def main():  # noqa: ANN202
        async with open_pool() as pool:
            players = [pool.player(s) for s in specs]
            return await play_game(players, GameConfig(len(specs)), seed=5, time_settings=TIME)

    return trio.run(main)


def build_and_play(bot: Path, tmp_path: Path, settings: SandboxSettings | None = None) -> None:
    """Build ``bot`` at strict, then play a whole game against the minimal bot: no fault."""
    settings = settings or SandboxSettings(Level.STRICT)
    spec = prepare_bot(find_bot(bot), tmp_path / "build", settings)
    other = prepare_bot(find_bot(EXAMPLES / "minimal"), tmp_path / "build", settings)
    record = play([spec, other])
    assert record.status == "complete", record.void_reason
    assert record.replay.faults == [], [(f.seat, f.kind, f.message) for f in record.replay.faults]
    assert [u.sandbox for u in record.replay.usage] == ["strict", "strict"]


# -- each toolchain, built and played under strict, as root or not ------------------------------------


@pytest.mark.slow
@STRICT_ANY
def test_a_java_bot_builds_with_javac_and_plays_under_strict(tmp_path: Path) -> None:
    need("javac", "java")
    build_and_play(copy_bot("java", tmp_path), tmp_path)


@pytest.mark.slow
@STRICT_ANY
def test_a_rust_bot_builds_with_rustups_cargo_and_plays_under_strict(tmp_path: Path) -> None:
    if toolchains.rustup_homes() is None:
        pytest.skip("toolchain missing: no rustup home (~/.rustup with ~/.cargo/bin) for the arena's user")
    need("cargo")
    build_and_play(copy_bot("rust", tmp_path), tmp_path)


@pytest.mark.slow
@STRICT_ANY
def test_a_rust_bot_builds_with_debians_cargo(tmp_path: Path) -> None:
    if not os.path.isfile("/usr/bin/cargo"):
        pytest.skip("toolchain missing: Debian's cargo (/usr/bin/cargo) is not installed")
    bot = copy_bot("rust", tmp_path)
    # The system's alone: rustup's proxies off the PATH, so cargo runs the system's rustc too.
    toml = (bot / "bot.toml").read_text().replace(
        'build = ["cargo", "build", "--release", "--offline"]',
        'build = ["sh", "-c", "rustc --version && cargo build --release --offline"]\nenv = { PATH = "/usr/bin:/bin" }',
    )
    (bot / "bot.toml").write_text(toml)
    build_and_play(bot, tmp_path)
    log = next((tmp_path / "build").glob("rust-first-*/build.log")).read_text()
    system = subprocess.run(["/usr/bin/rustc", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert system in log and "Finished" in log


@pytest.mark.slow
@STRICT_ANY
def test_a_go_bot_builds_with_its_cache_in_the_bots_build_cache_and_plays_under_strict(tmp_path: Path) -> None:
    need("go")
    # Inside a git repository: Go would stamp VCS data (and run git) but for -buildvcs=false.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=False, capture_output=True)
    build_and_play(copy_bot("go", tmp_path), tmp_path)
    cache = tmp_path / "build" / "cache" / "go-first" / "go-build"
    assert cache.is_dir() and any(cache.iterdir())  # GOCACHE went to the bot's persistent build cache
    assert os.stat(cache).st_uid == os.getuid()  # handed back to the arena's user after the build
    # At limits the build sees the repository around it: Go would run git and stamp its VCS data.
    spec = prepare_bot(find_bot(tmp_path / "go"), tmp_path / "build", SandboxSettings(Level.LIMITS))
    stamped = subprocess.run(["go", "version", "-m", str(spec.cwd / "bot")], capture_output=True, text=True, check=True)
    assert "vcs" not in stamped.stdout  # no VCS data stamped, so no git run


CHECKSUM = "0" * 64  # a vendored crate's .cargo-checksum.json "package" and its Cargo.lock entry agree


@pytest.mark.slow
@STRICT_ANY
def test_a_rust_bot_with_a_vendored_crate_builds_offline_under_strict(tmp_path: Path) -> None:
    """What `cargo vendor` makes: vendor/CRATE with its checksum file, and .cargo/config.toml
    replacing crates.io with it; `cargo build --offline` needs no network."""
    if toolchains.rustup_homes() is None and not os.path.isfile("/usr/bin/cargo"):
        pytest.skip("toolchain missing: no cargo")
    need("cargo")
    bot = copy_bot("rust", tmp_path)
    toml = (bot / "Cargo.toml").read_text().replace("[dependencies]\n", '[dependencies]\ntiny = "0.1"\n')
    (bot / "Cargo.toml").write_text(toml)
    crate = bot / "vendor" / "tiny"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text('[package]\nname = "tiny"\nversion = "0.1.0"\nedition = "2021"\n')
    (crate / "src" / "lib.rs").write_text('pub fn hello() -> &\'static str { "tiny" }\n')
    (crate / ".cargo-checksum.json").write_text(json.dumps({"files": {}, "package": CHECKSUM}))
    (bot / ".cargo").mkdir()
    (bot / ".cargo" / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "vendored-sources"\n\n[source.vendored-sources]\ndirectory = "vendor"\n'
    )
    (bot / "Cargo.lock").write_text(
        'version = 3\n\n[[package]]\nname = "rust-first"\nversion = "0.1.0"\ndependencies = [\n "tiny",\n]\n\n'
        '[[package]]\nname = "tiny"\nversion = "0.1.0"\n'
        f'source = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{CHECKSUM}"\n'
    )
    build_and_play(bot, tmp_path)
    log = next((tmp_path / "build").glob("rust-first-*/build.log")).read_text()
    assert "Compiling tiny v0.1.0" in log


@pytest.mark.slow
@STRICT_ANY
def test_a_go_bot_with_a_vendored_module_builds_offline_under_strict(tmp_path: Path) -> None:
    """What `go mod vendor` makes: vendor/modules.txt and the module's sources."""
    need("go")
    bot = copy_bot("go", tmp_path)
    (bot / "go.mod").write_text((bot / "go.mod").read_text() + "\nrequire example.com/tiny v0.1.0\n")
    (bot / "vendor" / "example.com" / "tiny").mkdir(parents=True)
    (bot / "vendor" / "modules.txt").write_text("# example.com/tiny v0.1.0\n## explicit\nexample.com/tiny\n")
    (bot / "vendor" / "example.com" / "tiny" / "tiny.go").write_text('package tiny\n\nfunc Name() string { return "tiny" }\n')
    main = (bot / "main.go").read_text()
    main = main.replace('\t"strings"\n)', '\t"strings"\n\n\t"example.com/tiny"\n)').replace(
        'case "shutdown":', 'case "debug-" + tiny.Name():\n\t\t\tcontinue\n\t\tcase "shutdown":'
    )
    (bot / "main.go").write_text(main)
    build_and_play(bot, tmp_path)


@pytest.mark.slow
@STRICT_ANY
def test_a_go_bot_builds_with_usr_local_go(tmp_path: Path) -> None:
    if not os.path.isfile("/usr/local/go/bin/go"):
        pytest.skip("toolchain missing: /usr/local/go is not installed")
    bot = copy_bot("go", tmp_path)
    (bot / "bot.toml").write_text((bot / "bot.toml").read_text().replace('["go"', '["/usr/local/go/bin/go"'))
    build_and_play(bot, tmp_path)


@STRICT_ANY
def test_a_c_bot_and_a_node_bot_build_and_play_under_strict(tmp_path: Path) -> None:
    need("cc", "node")
    settings = SandboxSettings(Level.STRICT)
    specs = [prepare_bot(find_bot(EXAMPLES / n), tmp_path / "build", settings) for n in ("c-greedy", "js-greedy")]
    record = play(specs)
    assert record.status == "complete" and record.replay.faults == []


def _wheel(folder: Path) -> Path:
    """A pure-Python wheel of a one-module package, written by hand (no network, no tools)."""
    folder.mkdir()
    path = folder / "tinydep-1.0-py3-none-any.whl"
    files = {
        "tinydep.py": "def first(items):\n    return items[0]\n",
        "tinydep-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinydep\nVersion: 1.0\n",
        "tinydep-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in files) + "tinydep-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in {**files, "tinydep-1.0.dist-info/RECORD": record}.items():
            z.writestr(name, text)
    return path


VENV_BOT = """\
import json, sys
import tinydep  # installed into the bot's own .venv from its wheelhouse

for line in sys.stdin:
    msg = json.loads(line)
    kind, re = msg["type"], msg.get("id")
    if kind == "hello":
        print(json.dumps({"type": "hello", "re": re, "version": 1, "name": "venv-first", "bot_version": "1"}), flush=True)
    elif kind == "game_start":
        print(json.dumps({"type": "ready", "re": re}), flush=True)
    elif kind == "act":
        print(json.dumps({"type": "action", "re": re, **tinydep.first(msg["legal"])}), flush=True)
    elif kind == "game_over":
        print(json.dumps({"type": "ack", "re": re}), flush=True)
    elif kind == "shutdown":
        break
"""


@pytest.mark.slow
@STRICT_ANY
def test_a_python_bot_with_a_virtual_environment_built_offline_from_a_wheelhouse_plays_under_strict(tmp_path: Path) -> None:
    bot = tmp_path / "venv-first"
    bot.mkdir()
    _wheel(bot / "wheels")
    (bot / "bot.py").write_text(VENV_BOT)
    (bot / "build.sh").write_text(
        "set -e\npython3 -m venv .venv\n.venv/bin/python -m pip install --no-index --find-links wheels tinydep\n"
    )
    (bot / "bot.toml").write_text('name = "venv-first"\nbuild = ["sh", "build.sh"]\nrun = [".venv/bin/python", "bot.py"]\n')
    os.chmod(tmp_path, 0o755)
    build_and_play(bot, tmp_path)


@STRICT_ANY
def test_a_bot_folder_holding_its_virtual_environment_is_taken_and_plays_under_strict(tmp_path: Path) -> None:
    """`python3 -m venv .venv` in the bot's folder: .venv/bin/python is an absolute link to the
    arena's Python, which every sandbox shows; it is kept as a link."""
    bot = tmp_path / "venv-inside"
    bot.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bot / ".venv")], check=True)
    shutil.copy(EXAMPLES / "minimal" / "bot.py", bot / "bot.py")
    (bot / "bot.toml").write_text('name = "venv-inside"\nrun = [".venv/bin/python", "bot.py"]\n')
    os.chmod(tmp_path, 0o755)
    assert any(os.path.isabs(os.readlink(p)) for p in (bot / ".venv" / "bin").iterdir() if p.is_symlink())
    build_and_play(bot, tmp_path)


def test_a_link_into_anything_but_the_system_or_the_arenas_python_is_still_refused(tmp_path: Path) -> None:
    bot = tmp_path / "linky"
    bot.mkdir()
    (bot / "bot.py").write_text("print('hi')\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    (bot / "data").symlink_to(secret)
    (bot / "bot.toml").write_text('name = "linky"\nrun = ["{python}", "bot.py"]\n')
    with pytest.raises(ManifestError, match=r"data is a link to .*secret\.txt.*an absolute path outside the system"):
        find_bot(bot)
    (bot / "data").unlink()
    (bot / "data").symlink_to("/etc/passwd")  # absolute, and /etc is not the system view
    with pytest.raises(ManifestError, match=r"data is a link to '/etc/passwd'"):
        find_bot(bot)


# -- build limits apart from game limits --------------------------------------------------------

THREADS = """\
import threading, time
ts = [threading.Thread(target=time.sleep, args=(1,)) for _ in range(100)]
for t in ts: t.start()
for t in ts: t.join()
with open("/tmp/big", "wb") as f:
    f.write(b"x" * (100 << 20))  # more than a bot's 64 MB /tmp
print("built")
"""


@needs_strict
def test_a_build_gets_its_own_process_cap_and_temp_space_not_the_bots_game_limits(tmp_path: Path) -> None:
    bot = tmp_path / "threads"
    bot.mkdir()
    (bot / "build.py").write_text(THREADS)
    (bot / "bot.py").write_text((EXAMPLES / "minimal" / "bot.py").read_text())
    (bot / "bot.toml").write_text(
        'name = "threads"\nbuild = ["{python}", "build.py"]\nrun = ["{python}", "bot.py"]\n[limits]\nprocesses = 16\ntmp_mb = 16\n'
    )
    spec = prepare_bot(find_bot(bot), tmp_path / "build", SandboxSettings(Level.STRICT))
    assert "built" in (spec.cwd.parent / "build.log").read_text()
    assert spec.sandbox is not None and spec.sandbox.limits.processes == 16  # the game keeps its own
    # and the run's build cap holds: 100 threads over a cap of 32 fail the build
    small = SandboxSettings(Level.STRICT, build_limits=replace(DEFAULT_BUILD_LIMITS, processes=32))
    (bot / "build.py").write_text(THREADS.replace("print", "print('again');print"))
    with pytest.raises(BuildError, match=r"bot threads: build failed .* at sandbox level strict"):
        prepare_bot(find_bot(bot), tmp_path / "build2", small)


def test_build_limits_are_read_from_the_runs_config(tmp_path: Path) -> None:
    from arena.tournament.settings import settings_from

    cfg = tmp_path / "arena.toml"
    cfg.write_text("build_processes = 1024\n[limits]\nbuild_tmp_mb = 2048\nbuild_memory_mb = 4096\n")
    s = settings_from(load_config(cfg))
    assert s.sandbox is not None
    assert (s.sandbox.build_limits.processes, s.sandbox.build_limits.tmp_mb, s.sandbox.build_limits.memory_mb) == (1024, 2048, 4096)


# -- the build cache is keyed by what decides a build ---------------------------------------------


@needs_strict
def test_a_build_made_at_limits_is_not_reused_at_strict(tmp_path: Path) -> None:
    """The build sees the host at limits and only the view at strict: reusing one for the
    other let validate pass while run skipped the bot."""
    outside = tmp_path / "host-only.txt"
    outside.write_text("x")
    bot = tmp_path / "peek"
    bot.mkdir()
    (bot / "build.py").write_text(f"open({str(outside)!r}).read()\nopen('built', 'w').write('ok')\n")
    (bot / "bot.toml").write_text('name = "peek"\nbuild = ["{python}", "build.py"]\nrun = ["true"]\n')
    cache = tmp_path / "build"
    made = prepare_bot(find_bot(bot), cache, SandboxSettings(Level.LIMITS))
    assert (made.cwd / "built").is_file() and "-limits-" in made.cwd.parent.name
    with pytest.raises(BuildError, match=r"bot peek: build failed .* at sandbox level strict .*No such file"):
        prepare_bot(find_bot(bot), cache, SandboxSettings(Level.STRICT))
    # and a folder shown to every bot is part of the key too
    a = SandboxSettings(Level.STRICT, toolchains=()).build_key()
    b = SandboxSettings(Level.STRICT, toolchains=(str(tmp_path),)).build_key()
    assert a != b and a.startswith("strict-") and b.startswith("strict-")


# -- [sandbox] expose ------------------------------------------------------------------------------


@needs_strict
def test_sandbox_expose_shows_a_folder_read_only_and_a_bot_cannot_widen_it(tmp_path: Path) -> None:
    shared = tmp_path / "shared-sdk"
    shared.mkdir()
    (shared / "lib.txt").write_text("from the operator\n")
    os.chmod(tmp_path, 0o755)
    cfg = tmp_path / "arena.toml"
    cfg.write_text('[sandbox]\nlevel = "strict"\nexpose = ["shared-sdk"]\n')
    options = load_config(cfg)
    assert options["toolchains"] == [str(shared)] and options["sandbox"] == "strict"
    bot = tmp_path / "reader"
    bot.mkdir()
    (bot / "build.py").write_text(
        f"print(open({str(shared / 'lib.txt')!r}).read().strip())\n"
        f"try:\n    open({str(shared / 'new.txt')!r}, 'w')\nexcept OSError as e:\n    print('read-only:', e.strerror)\n"
    )
    (bot / "bot.toml").write_text('name = "reader"\nbuild = ["{python}", "build.py"]\nrun = ["true"]\n')
    spec = prepare_bot(find_bot(bot), tmp_path / "build", SandboxSettings(Level.STRICT, toolchains=tuple(options["toolchains"])))
    log = (spec.cwd.parent / "build.log").read_text()
    assert "from the operator" in log and "read-only: Read-only file system" in log
    assert not (shared / "new.txt").exists()
    # Unshown, the same build fails with a hint naming the folder and [sandbox] expose.
    with pytest.raises(BuildError, match=r"hint: .*shared-sdk/lib\.txt exists on this machine .*\[sandbox\] expose"):
        prepare_bot(find_bot(bot), tmp_path / "build", SandboxSettings(Level.STRICT, toolchains=()))
    # A bot.toml has no way to ask for it: an unknown field, refused.
    (bot / "bot.toml").write_text(
        f'name = "reader"\nbuild = ["{{python}}", "build.py"]\nrun = ["true"]\n[sandbox]\nexpose = ["{shared}"]\n'
    )
    with pytest.raises(ManifestError, match=r"sandbox"):
        find_bot(bot)


def test_sandbox_expose_is_checked_where_it_is_read(tmp_path: Path) -> None:
    from arena.errors import ArenaError

    cfg = tmp_path / "arena.toml"
    cfg.write_text('[sandbox]\nexpose = ["missing"]\n')
    with pytest.raises(ArenaError, match=r"arena\.toml: sandbox\.expose must list folders .*'missing' is not a folder"):
        load_config(cfg)
    cfg.write_text('[sandbox]\nexpose = ["/"]\n')
    with pytest.raises(ArenaError, match=r"the whole machine"):
        load_config(cfg)
    cfg.write_text('[sandbox]\nshow = ["/opt"]\n')
    with pytest.raises(ArenaError, match=r"unknown setting 'show' in the sandbox table"):
        load_config(cfg)
    (tmp_path / "t").mkdir()
    cfg.write_text('toolchains = ["t"]\n')  # the older name still works
    assert load_config(cfg)["toolchains"] == [str(tmp_path / "t")]


# -- a failed build's message ----------------------------------------------------------------------


@needs_strict
def test_a_failed_build_shows_its_first_error_lines_the_level_and_a_hint_for_a_hidden_path(tmp_path: Path) -> None:
    hidden = tmp_path / "host-config"
    hidden.mkdir()
    (hidden / "settings.cfg").write_text("x")
    bot = tmp_path / "trace"
    bot.mkdir()
    script = (
        "import sys\n"
        f"print('Exception in thread main: java.lang.Error: cannot read {hidden / 'settings.cfg'}: No such file or directory')\n"
        "for i in range(40):\n    print(f'\\tat Main.step{i}(Main.java:{i})')\n"
        "sys.exit(1)\n"
    )
    (bot / "build.py").write_text(script)
    (bot / "bot.toml").write_text('name = "trace"\nbuild = ["{python}", "build.py"]\nrun = ["true"]\n')
    with pytest.raises(BuildError) as info:
        prepare_bot(find_bot(bot), tmp_path / "build", SandboxSettings(Level.STRICT, toolchains=()))
    message = str(info.value)
    assert "exit status 1 at sandbox level strict (log: " in message
    first = message.index("java.lang.Error: cannot read")
    assert first < message.index("Main.step39")  # the cause first, then the tail's last line
    assert "Main.step20" not in message  # not the whole trace
    assert f"hint: {hidden / 'settings.cfg'} exists on this machine but the strict sandbox does not show it" in message
    assert f'[sandbox] expose = ["{hidden}"]' in message


# -- validate and submit: --results, and the level they used --------------------------------------


def _arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


def test_validate_and_submit_build_into_results_and_say_their_level(tmp_path: Path) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    results = tmp_path / "elsewhere"
    bot = EXAMPLES / "c-greedy"
    if shutil.which("cc") is None:
        pytest.skip("toolchain missing: cc")
    proc = _arena("validate", str(bot), "--results", str(results), "--json", cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    level = "strict" if STRICT.ok else "limits"
    assert report["sandbox"] == level
    assert any(p.name.startswith("c-greedy-") for p in (results / "build").iterdir())
    assert not (work / "results").exists()  # nothing written where it ran from
    proc = _arena("validate", str(bot), "--results", str(results), cwd=work)
    assert proc.returncode == 0 and f"sandbox: {level}" in proc.stdout
    proc = _arena("submit", str(bot), "--bots", str(tmp_path / "bots"), "--results", str(results), cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"sandbox: {level}" in proc.stdout and (tmp_path / "bots" / "c-greedy" / "bot.toml").is_file()
    assert not (work / "results").exists()


def test_validate_names_a_results_folder_it_cannot_use(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    proc = _arena("validate", str(EXAMPLES / "minimal"), "--results", str(blocker), cwd=tmp_path)
    assert proc.returncode == 1
    assert "cannot make the build folder" in proc.stderr and str(blocker) in proc.stderr
    assert "Traceback" not in proc.stderr


# -- arena doctor ----------------------------------------------------------------------------------


def test_doctor_prints_the_level_what_a_bot_sees_and_the_toolchains(tmp_path: Path) -> None:
    shared = tmp_path / "opt-sdk"
    shared.mkdir()
    cfg = tmp_path / "arena.toml"
    cfg.write_text('[sandbox]\nexpose = ["opt-sdk"]\n')
    proc = _arena("doctor", "--json", "--config", str(cfg), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    level = "strict" if STRICT.ok else "limits"
    assert report["sandbox"]["level"] == level and report["sandbox"]["why"]
    assert "/usr" in report["visible"] and str(shared) in report["visible"] and str(shared) in report["exposed"]
    names = {t["name"]: t for t in report["toolchains"]}
    assert {"C", "Python", "Node", "Java (javac)", "Rust (cargo)", "Go"} <= names.keys()
    python = names["Python"]
    assert python["program"] and python["runs"] and python["version"].startswith("Python 3")
    for t in report["toolchains"]:
        assert t["runs"] == bool(t["version"]) and (t["runs"] or not t["program"] or t["problem"])
    text = _arena("doctor", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert f"sandbox: {level}" in text.stdout and "what a strict bot sees" in text.stdout
    assert "Python 3" in text.stdout and "[sandbox] expose" in text.stdout
    assert "\x1b[" not in text.stdout


# -- the whole way: `arena run --bots DIR` at the default level ------------------------------------


@pytest.mark.slow
@STRICT_ANY
def test_java_rust_and_go_bots_play_a_run_at_the_default_level(tmp_path: Path) -> None:
    """The issue's end: bots in Java, Rust and Go build and play in `arena run --bots DIR`
    with no flags but the folder, at the default level (strict here), with no fault."""
    need("javac", "java", "cargo", "go")
    bots = tmp_path / "bots"
    bots.mkdir()
    for name in ("java", "rust", "go"):
        copy_bot(name, bots)
    copy_bot("minimal", bots)
    os.chmod(tmp_path, 0o755)
    proc = _arena("run", "--bots", str(bots), "--results", str(tmp_path / "res"), "--games", "4", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    board = json.loads((tmp_path / "res" / "leaderboard.json").read_text())
    assert board["skipped"] == []
    rows = {r["bot"]: r for r in board["rows"]}
    assert rows.keys() == {"java-first", "rust-first", "go-first", "minimal"}
    assert {k: (r["games"], bool(r["faults"])) for k, r in rows.items()} == dict.fromkeys(rows, (4, False)), proc.stdout
    assert "--sandbox limits" not in proc.stderr  # strict was there: no fallback to limits


def test_validate_explain_says_what_one_bot_sees_and_may_write(tmp_path: Path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("toolchain missing: cc")
    results = tmp_path / "res"
    proc = _arena("validate", str(EXAMPLES / "c-greedy"), "--explain", "--json", "--results", str(results), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    info = json.loads(proc.stdout)["explain"]
    assert info["bot"] == "c-greedy" and info["sandbox"] == json.loads(proc.stdout)["sandbox"]
    build = info["build"]
    cache = str((results / "build" / "cache" / "c-greedy").resolve())
    assert cache in build["writable"] and build["env"]["GOCACHE"].startswith(cache)
    assert build["limits"]["processes"] == DEFAULT_BUILD_LIMITS.processes
    assert info["game_limits"]["processes"] == 64
    if info["sandbox"] == "strict":
        assert "/usr" in info["sees"] and info["runs_from"] in info["sees"] and cache not in info["sees"]
    text = _arena("validate", str(EXAMPLES / "c-greedy"), "--explain", "--results", str(results), cwd=tmp_path)
    assert text.returncode == 0 and "limits in a game:" in text.stdout and "GOFLAGS=-buildvcs=false" in text.stdout


SECOND_LOOK = """\
import os, sys
mine = os.environ["GOCACHE"]
os.makedirs(mine, exist_ok=True)
open(os.path.join(mine, "kept"), "a").write("x")
print("own cache:", sorted(os.listdir(mine)))
other = sys.argv[1]
print("other's cache:", "seen" if os.path.exists(other) else "hidden")
"""


@needs_strict
def test_the_build_cache_persists_for_its_bot_and_no_other_build_or_game_sees_it(tmp_path: Path) -> None:
    cache_root = (tmp_path / "build" / "cache").resolve()
    os.chmod(tmp_path, 0o755)

    def bot(name: str, version: str) -> Path:
        folder = tmp_path / f"{name}-{version}"
        folder.mkdir()
        (folder / "build.py").write_text(SECOND_LOOK)
        (folder / "bot.py").write_text(
            f"import os, sys\nsys.stderr.write('game sees cache: ' + str(os.path.exists({str(cache_root)!r})))\n"
            + (EXAMPLES / "minimal" / "bot.py").read_text()
        )
        other = cache_root / ("b" if name == "a" else "a")
        (folder / "bot.toml").write_text(
            f'name = "{name}"\nversion = "{version}"\nbuild = ["{{python}}", "build.py", "{other}"]\nrun = ["{{python}}", "bot.py"]\n'
        )
        return folder

    settings = SandboxSettings(Level.STRICT)
    a1 = prepare_bot(find_bot(bot("a", "1")), tmp_path / "build", settings)
    assert "own cache: ['kept']" in (a1.cwd.parent / "build.log").read_text()
    b = prepare_bot(find_bot(bot("b", "1")), tmp_path / "build", settings)
    assert "other's cache: hidden" in (b.cwd.parent / "build.log").read_text()
    a2 = prepare_bot(find_bot(bot("a", "2")), tmp_path / "build", settings)  # a new version: the same cache
    assert a2.cwd != a1.cwd and "own cache: ['kept']" in (a2.cwd.parent / "build.log").read_text()
    assert (cache_root / "a" / "go-build" / "kept").read_text() == "xx"
    record = play([a2, b])
    assert record.status == "complete" and record.replay.faults == []
    assert record.replay.stderr[0].startswith("game sees cache: False")  # a game never sees the build cache


def test_a_rustup_home_is_found_only_as_a_whole_installation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found toolchains are shown to every bot: never '/', a top-level folder or a home."""
    fake = tmp_path / "rustup"
    (fake / "toolchains").mkdir(parents=True)
    (tmp_path / "cargo" / "bin").mkdir(parents=True)
    (tmp_path / "cargo" / "credentials.toml").write_text("token = 'secret'\n")
    try:
        monkeypatch.setenv("RUSTUP_HOME", str(fake))
        monkeypatch.setenv("CARGO_HOME", str(tmp_path / "cargo"))
        toolchains.rustup_homes.cache_clear()
        toolchains.found_homes.cache_clear()
        found = toolchains.found_homes()
        assert str(fake) in found and str(tmp_path / "cargo" / "bin") in found
        assert str(tmp_path / "cargo") not in found  # ~/.cargo may hold registry credentials
        monkeypatch.setenv("RUSTUP_HOME", "/")
        toolchains.rustup_homes.cache_clear()
        toolchains.found_homes.cache_clear()
        assert toolchains.rustup_homes() is None and "/" not in toolchains.found_homes()
    finally:
        monkeypatch.undo()
        toolchains.rustup_homes.cache_clear()
        toolchains.found_homes.cache_clear()


def test_a_bot_with_its_virtual_environment_travels_in_a_bundle_to_a_worker(tmp_path: Path) -> None:
    """A cluster worker unpacks the same absolute link a bot folder may hold, and the same
    hash comes out; a bundle's link into /etc is still refused."""
    import io
    import tarfile

    from arena.bots.bundle import BundleError, bundle_bot, unpack_bundle

    bot = tmp_path / "venv-bot"
    bot.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bot / ".venv")], check=True)
    shutil.copy(EXAMPLES / "minimal" / "bot.py", bot / "bot.py")
    (bot / "bot.toml").write_text('name = "venv-bot"\nrun = [".venv/bin/python", "bot.py"]\n')
    manifest = find_bot(bot)
    back = unpack_bundle(bundle_bot(manifest), "venv-bot", manifest.content_hash, tmp_path / "worker")
    assert back.content_hash == manifest.content_hash
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        link = tarfile.TarInfo("x/passwd")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    with pytest.raises(BundleError, match=r"a link to '/etc/passwd' that does not stay inside"):
        unpack_bundle(data.getvalue(), "x", "0" * 16, tmp_path / "worker2")


@needs_strict
def test_validate_takes_the_runs_config_so_it_builds_as_the_run_does(tmp_path: Path) -> None:
    shared = tmp_path / "sdk"
    shared.mkdir()
    (shared / "part.txt").write_text("shared part\n")
    os.chmod(tmp_path, 0o755)
    bot = tmp_path / "needs-sdk"
    bot.mkdir()
    (bot / "build.py").write_text(f"print(open({str(shared / 'part.txt')!r}).read())\n")
    shutil.copy(EXAMPLES / "minimal" / "bot.py", bot / "bot.py")
    (bot / "bot.toml").write_text('name = "needs-sdk"\nbuild = ["{python}", "build.py"]\nrun = ["{python}", "bot.py"]\n')
    cfg = tmp_path / "cup.toml"
    cfg.write_text('[sandbox]\nlevel = "strict"\nexpose = ["sdk"]\n')
    results = tmp_path / "res"
    without = _arena("validate", str(bot), "--results", str(results), "--json", cwd=tmp_path)
    assert without.returncode == 1
    build = next(c for c in json.loads(without.stdout)["checks"] if c["name"] == "build")
    assert "[sandbox] expose" in build["message"] and str(shared / "part.txt") in build["message"]
    with_config = _arena("validate", str(bot), "--config", str(cfg), "--results", str(results), "--json", cwd=tmp_path)
    assert with_config.returncode == 0, with_config.stdout + with_config.stderr
    assert json.loads(with_config.stdout)["sandbox"] == "strict"
