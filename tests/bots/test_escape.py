"""Untrusted bots cannot escape the sandbox through what they supply (arena/bots/sandbox.py,
strict.py and build.py, the env/run/build fields of arena/bots/manifest.py), nor make a
build run without bounds:

- a bot's environment reaches the bot's own program only: never bwrap, setpriv or any
  helper of the arena (a preloaded library of the bot's, compiled here, tells which
  programs it was loaded into); bot.toml may not set the variables that make other
  programs run code (``LD_*``, ``BASH_ENV``…), and ``arena validate`` says so;
- what ``strict`` shows comes from a fixed list plus the operator's toolchain folders:
  a bot's ``PATH`` or argv[0] never binds a host folder (a secret beside the bots and
  another bot's files stay out of reach);
- a build step: its output is kept as a capped tail (in memory and in its log), its time
  is the operator's cap over the bot's wish, and Ctrl-C or SIGTERM during it ends its
  whole tree and the run exits 130.

Every test starts real processes: real bots in real sandboxes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import proc_helpers
import pytest
import trio
from proc_helpers import STRICT, needs_strict

from arena.bots import BotSpec, BotStartError, open_bot
from arena.bots.build import BUILD_OUTPUT_CAP
from arena.bots.manifest import ManifestError, find_bot
from arena.bots.prepare import BuildError, prepare_bot
from arena.bots.sandbox import Level, SandboxSettings
from arena.errors import ArenaError

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = ROOT / "example_bots" / "minimal"
needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="a C compiler (cc) is needed")
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")


def write_bot(folder: Path, toml: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(textwrap.dedent(toml))
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


def arena(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )


def leftovers(folder: Path, wait: float = 5.0) -> dict[int, str]:
    """Processes still working inside ``folder`` after up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while (left := proc_helpers.processes_in(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


async def first_line(spec: BotSpec) -> bytes:
    """Start the bot, read one line from it, end it."""
    async with open_bot(spec) as bot:
        with trio.fail_after(30):
            return await bot.receive_line()


async def stderr_after_exit(spec: BotSpec) -> str:
    async with open_bot(spec) as bot:
        with trio.fail_after(30):
            while bot.alive:
                await trio.sleep(0.02)
        await bot.aclose()
        return bot.stderr_tail()


# -- 1. the environment of a bot reaches its own program only --------------------------------

PRELOAD_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/* Runs in every program this library is loaded into: says which, and as whom, on stderr
   and in a marker file at a host path that only the outside of the sandbox can see. */
__attribute__((constructor)) static void loaded(void) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    int fd = open(MARKER, O_WRONLY | O_CREAT | O_APPEND, 0666);
    if (fd >= 0) {
        dprintf(fd, "%s uid=%d\n", exe, (int)getuid());
        close(fd);
    }
    dprintf(2, "PRELOADED %s uid=%d\n", exe, (int)getuid());
}
"""


def preload_library(folder: Path, marker: Path) -> Path:
    """A shared library whose constructor reports where it runs (compiled with cc)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "x.c").write_text(PRELOAD_C)
    so = folder / "x.so"
    subprocess.run(
        ["cc", "-shared", "-fPIC", f'-DMARKER="{marker}"', "-o", str(so), str(folder / "x.c")],
        check=True, capture_output=True, timeout=60,
    )
    return so


@linux
@needs_cc
@pytest.mark.parametrize("level", [Level.LIMITS, Level.STRICT])
def test_a_bots_ld_preload_runs_in_the_bots_own_program_only(level: Level, tmp_path: Path) -> None:
    """The launcher chain (bwrap, setpriv, env) is exec'd with an environment the arena
    builds: the bot's LD_PRELOAD is loaded into the bot's program and nowhere else. Under
    strict it cannot even reach the host path it would write (the outside is not shown)."""
    if level is Level.STRICT and not STRICT.ok:
        pytest.skip(STRICT.missing)
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = outside / "marker"
    bot = tmp_path / "bots" / "preloader"
    so = preload_library(bot, marker)
    program = Path(os.path.realpath("/usr/bin/true"))
    spec = BotSpec(
        name="preloader", argv=("/usr/bin/true",), cwd=bot, env={"PATH": "/usr/bin:/bin", "LD_PRELOAD": str(so)},
        sandbox=SandboxSettings(level).for_bot(bot),
    )
    stderr = trio.run(stderr_after_exit, spec)
    loaded_into = [line.split()[1:] for line in stderr.splitlines() if line.startswith("PRELOADED ")]
    assert loaded_into, f"the bot's own program did not get its LD_PRELOAD: {stderr!r}"
    assert {exe for exe, _uid in loaded_into} == {str(program)}, stderr  # not bwrap, setpriv or env
    if level is Level.STRICT:
        assert not marker.exists(), marker.read_text()  # nothing ran outside the sandbox
        if os.geteuid() == 0:
            assert all(uid != "uid=0" for _exe, uid in loaded_into), stderr  # and nothing as root in it
    else:  # limits: no confinement of files; the bot itself wrote it, and only the bot
        assert {line.split()[0] for line in marker.read_text().splitlines()} == {str(program)}


REFUSED = [
    "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "ld_preload", "GLIBC_TUNABLES", "GCONV_PATH", "BASH_ENV", "ENV",
    "BASH_FUNC_evil%%", "SHELLOPTS", "PS4", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONWARNINGS",
    "PERL5OPT", "RUBYOPT", "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
]


@pytest.mark.parametrize("key", REFUSED)
def test_bot_toml_may_not_set_a_variable_that_runs_code_elsewhere(key: str, tmp_path: Path) -> None:
    bot = write_bot(tmp_path / "b", f'name = "b"\nrun = ["./bot"]\n[env]\n"{key}" = "./x"\nMODEL = "v3"\n')
    with pytest.raises(ManifestError) as caught:
        find_bot(bot)
    message = str(caught.value)
    assert message.startswith(f"{bot / 'bot.toml'}: field 'env': {key!r} is refused: ")
    assert "docs/sandbox.md" in message and "\n" not in message


@pytest.mark.parametrize("key", ["A=B", "-u", "1X", "", "X Y"])
def test_bot_toml_env_names_must_be_plain(key: str, tmp_path: Path) -> None:
    bot = write_bot(tmp_path / "b", f'name = "b"\nrun = ["./bot"]\n[env]\n"{key}" = "1"\n')
    with pytest.raises(ManifestError, match=rf"bot\.toml: field 'env': {key!r} is refused: a variable's name must be"):
        find_bot(bot)


def test_bot_toml_refuses_nul_bytes_and_oversized_fields(tmp_path: Path) -> None:
    bot = tmp_path / "b"
    cases = {
        'run = ["./bot"]\nenv = { A = "x\\u0000y" }\n': r"field 'env': 'A' is refused: its value holds a NUL byte",
        'run = ["./bot", "a\\u0000b"]\n': r"field 'run': an argument cannot hold a NUL byte",
        'run = ["./bot"]\nbuild = ["cc", "x\\u0000"]\n': r"field 'build': an argument cannot hold a NUL byte",
        f'run = ["./bot"]\nenv = {{ A = "{"x" * 20000}", B = "{"x" * 20000}" }}\n': r"field 'env' is over 32 KiB",
        f'run = ["./bot", "{"y" * 40000}"]\n': r"field 'run' is over 32 KiB",
    }
    for toml, message in cases.items():
        write_bot(bot, 'name = "b"\n' + toml)
        with pytest.raises(ManifestError, match=message):
            find_bot(bot)


def test_arena_validate_refuses_an_ld_preload_bot_naming_the_file_and_the_key(tmp_path: Path) -> None:
    """`arena validate` (and so `arena submit`, which validates first) reads bot.toml
    through the same check: one clear message, no traceback, nothing started."""
    bot = write_bot(tmp_path / "evil", 'name = "evil"\nrun = ["{python}", "bot.py"]\nenv = { LD_PRELOAD = "./x.so" }\n')
    shutil.copy(MINIMAL / "bot.py", bot / "bot.py")
    for command in (["validate", str(bot)], ["submit", str(bot), "--bots", str(tmp_path / "pool")]):
        # (wide: at 80 columns the table ends a long temporary path with "…", the longer
        # the user's name the sooner)
        proc = subprocess.run(
            [sys.executable, "-m", "arena", *command], capture_output=True, text=True, timeout=120, cwd=ROOT,
            env={**os.environ, "COLUMNS": "200"},
        )
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1, out
        assert "'LD_PRELOAD' is refused: the dynamic loader reads it" in out
        assert str(bot / "bot.toml") in out.replace("\n", "").replace(" ", "") or "bot.toml" in out
        assert "Traceback" not in out
    assert not (tmp_path / "pool" / "evil").exists()


# -- 2. what strict shows is the arena's and the operator's choice ---------------------------

PEEK = """\
import json, os, sys
seen = {}
for path in sys.argv[1:]:
    try:
        seen[path] = sorted(os.listdir(path)) if os.path.isdir(path) else open(path).read()
    except OSError as exc:
        seen[path] = type(exc).__name__
print(json.dumps(seen), flush=True)
"""


def host_with_secrets(tmp_path: Path) -> dict[str, Path]:
    """A secret file beside the bots folder, another bot with its sources, and a host
    folder with a program in it: all outside what a bot may see."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("the operator's secret")
    other = write_bot(tmp_path / "bots" / "other", 'name = "other"\nrun = ["./prog"]\n', {"strategy.py": "SECRET = 42\n"})
    hostdir = tmp_path / "hostdir"
    hostdir.mkdir()
    for folder in (other, hostdir):
        prog = folder / "prog"
        prog.write_text(f"#!{sys.executable}\n" + PEEK)
        prog.chmod(0o755)
    return {"secret": secret, "other": other, "hostdir": hostdir}


@needs_strict
@pytest.mark.parametrize("path_value", ["/:/usr/bin", "/usr/bin:/", "{other}:/usr/bin", "{hostdir}:/usr/bin:/bin"])
def test_a_bots_path_never_widens_what_strict_shows(path_value: str, tmp_path: Path) -> None:
    host = host_with_secrets(tmp_path)
    path_value = path_value.format(other=host["other"], hostdir=host["hostdir"])
    peek_at = [str(host["secret"]), str(host["other"] / "strategy.py"), str(host["other"]), str(tmp_path)]
    toml = f'name = "peek"\nrun = ["python3", "peek.py", {", ".join(json.dumps(p) for p in peek_at)}]\nenv = {{ PATH = "{path_value}" }}\n'
    bot = write_bot(tmp_path / "bots" / "peek", toml, {"peek.py": PEEK})
    spec = prepare_bot(find_bot(bot), tmp_path / "cache", SandboxSettings(Level.STRICT))
    seen = json.loads(trio.run(first_line, spec))
    assert seen[str(host["secret"])] == "FileNotFoundError"
    assert seen[str(host["other"] / "strategy.py")] == "FileNotFoundError"
    assert seen[str(host["other"])] == "FileNotFoundError"
    assert seen[str(tmp_path)] == ["cache"]  # only the way down to the bot's own copy, in the cache


@needs_strict
def test_a_program_found_only_outside_the_view_is_a_clear_start_error(tmp_path: Path) -> None:
    """argv[0] in another bot's folder (through PATH or by its path) or in a host folder
    is refused at start, naming the bot and the program and how the operator adds a
    toolchain folder; nothing of it is bound."""
    host = host_with_secrets(tmp_path)
    runs = {
        "by-path": (f'run = ["{host["hostdir"] / "prog"}"]\n', host["hostdir"]),
        "via-PATH": (f'run = ["prog"]\nenv = {{ PATH = "{host["other"]}:/usr/bin" }}\n', host["other"]),
        "relative": ('run = ["../other/prog"]\n', host["other"]),
    }
    for name, (toml, folder) in runs.items():
        bot = write_bot(tmp_path / "bots" / name, f'name = "{name}"\n' + toml)
        spec = prepare_bot(find_bot(bot), tmp_path / "cache", SandboxSettings(Level.STRICT))
        with pytest.raises(BotStartError) as caught:
            trio.run(first_line, spec)
        message = str(caught.value)
        if name == "relative":  # the bot runs from its copy in the cache: ../other leads nowhere there
            assert message.startswith(f"bot {name!r}: cannot start: '../other/prog' not found")
            continue
        assert message.startswith(f"bot {name!r}: cannot start: its program ")
        assert "outside what the strict sandbox shows" in message
        assert f'toolchains = ["{folder}"]' in message and "ARENA_TOOLCHAINS" in message


@needs_strict
def test_an_operators_toolchain_folder_is_shown_and_nothing_beside_it(tmp_path: Path) -> None:
    host = host_with_secrets(tmp_path)
    peek_at = [str(host["secret"]), str(host["other"] / "strategy.py"), str(host["hostdir"])]
    bot = write_bot(tmp_path / "bots" / "tool", f'name = "tool"\nrun = ["prog", {", ".join(json.dumps(p) for p in peek_at)}]\n'
                    f'env = {{ PATH = "{host["hostdir"]}:/usr/bin" }}\n')
    settings = SandboxSettings(Level.STRICT, toolchains=(str(host["hostdir"]),))
    seen = json.loads(trio.run(first_line, prepare_bot(find_bot(bot), tmp_path / "cache", settings)))
    assert seen[str(host["hostdir"])] == ["prog"]
    assert seen[str(host["secret"])] == "FileNotFoundError"
    assert seen[str(host["other"] / "strategy.py")] == "FileNotFoundError"


def test_a_competition_config_sets_toolchains_and_the_build_cap(tmp_path: Path) -> None:
    from arena.tournament.settings import RunSettings, load_config, settings_from

    (tmp_path / "node-20").mkdir()
    config = tmp_path / "cup.toml"
    config.write_text('bots = "bots"\ntoolchains = ["node-20"]\nbuild_timeout_s = 90\n')
    options = load_config(config)
    sandbox = settings_from(options, base=RunSettings(bots_dir=tmp_path)).sandbox
    assert sandbox is not None
    assert sandbox.toolchains == (str(tmp_path / "node-20"),) and sandbox.build_timeout_s == 90
    config.write_text('bots = "bots"\n[limits]\nmemory_mb = 256\nbuild_timeout_s = 45\n')  # with the other caps
    sandbox = settings_from(load_config(config), base=RunSettings(bots_dir=tmp_path)).sandbox
    assert sandbox is not None and sandbox.build_timeout_s == 45 and sandbox.caps.memory_mb == 256
    for text, message in {
        "[limits]\nbuild_timeout_s = true\n": r"cup\.toml: limits\.build_timeout_s must be a positive, finite number",
        'toolchains = ["nowhere"]\n': r"cup\.toml: toolchains must list the folders .* 'nowhere' is not a folder",
        "toolchains = [3]\n": r"cup\.toml: toolchains must list the folders .* 3 is not a folder",
        "build_timeout_s = inf\n": r"cup\.toml: build_timeout_s must be a positive, finite number of seconds, not inf",
        "build_timeout_s = -1\n": r"cup\.toml: build_timeout_s must be a positive, finite number",
    }.items():
        config.write_text(text)
        with pytest.raises(ArenaError, match=message):
            load_config(config)


# -- 6. a build step's bounds ----------------------------------------------------------------

@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "0", "-5", "true", '"60"'])
def test_build_timeout_must_be_a_positive_finite_number(value: str, tmp_path: Path) -> None:
    bot = write_bot(tmp_path / "b", f'name = "b"\nrun = ["./bot"]\nbuild = ["true"]\nbuild_timeout_s = {value}\n')
    with pytest.raises(ManifestError, match=r"bot\.toml: field 'build_timeout_s' must be a positive, finite number of seconds"):
        find_bot(bot)


@needs_strict
def test_a_build_that_asks_for_1e12_seconds_gets_the_operators_cap(tmp_path: Path) -> None:
    bot = write_bot(
        tmp_path / "sleeper",
        'name = "sleeper"\nrun = ["true"]\nbuild = ["{python}", "-c", "import time; time.sleep(3600)"]\nbuild_timeout_s = 1e12\n',
    )
    cache = tmp_path / "cache"
    t0 = time.monotonic()
    with pytest.raises(BuildError) as caught:
        prepare_bot(find_bot(bot), cache, SandboxSettings(Level.STRICT, build_timeout_s=1.5))
    took = time.monotonic() - t0
    assert 1.5 <= took < 15
    message = str(caught.value)
    assert message.startswith("bot sleeper: build timed out after 1.5 s (the run's cap; the bot asks 1e+12 s) at sandbox level strict (log: ")
    log = next(cache.glob("sleeper-*/build.log"))
    assert log.read_text().startswith("the bot asks 1e+12 s for its build (build_timeout_s); the run's cap is 1.5 s")
    assert leftovers(cache) == {}


BLABBER = "import os\nchunk = b'x' * 65536\nwhile True:\n    os.write(1, chunk)\n"

MEASURE = """\
import resource, sys
from pathlib import Path
from arena.bots.manifest import find_bot
from arena.bots.prepare import BuildError, prepare_bot
from arena.bots.sandbox import Level, SandboxSettings
try:
    prepare_bot(find_bot(Path(sys.argv[1])), Path(sys.argv[2]), SandboxSettings(Level(sys.argv[3])))
except BuildError as exc:
    print("ERROR", exc)
print("MAXRSS_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@linux
@pytest.mark.parametrize("level", ["limits", "strict"])
def test_endless_build_output_stays_bounded_in_memory_and_on_disk(level: str, tmp_path: Path) -> None:
    if level == "strict" and not STRICT.ok:
        pytest.skip(STRICT.missing)
    bot = write_bot(
        tmp_path / "blabber", 'name = "blabber"\nrun = ["true"]\nbuild = ["{python}", "blabber.py"]\nbuild_timeout_s = 3\n',
        {"blabber.py": BLABBER},
    )
    cache = tmp_path / "cache"
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, str(bot), str(cache), level], capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert lines["ERROR"].startswith("bot blabber: build timed out after 3 s (its build_timeout_s)")
    log = next(cache.glob("blabber-*/build.log"))
    text = log.read_text()
    dropped = int(text.split(" bytes dropped")[0].rsplit(" ", 1)[1])
    assert dropped > 16 * 1024 * 1024  # it did print without end (at least 16 MiB in 3 s)...
    assert log.stat().st_size <= BUILD_OUTPUT_CAP + 100  # ...and only the tail is on disk
    assert text.endswith("x" * 1000)
    assert int(lines["MAXRSS_KB"]) < 200 * 1024, "the arena kept the build's output in memory"
    assert leftovers(cache) == {}


def slow_build_bots(bots: Path) -> None:
    for name in ("alpha", "beta"):
        shutil.copytree(MINIMAL, bots / name)
        (bots / name / "bot.toml").write_text(f'name = "{name}"\nrun = ["{{python}}", "bot.py"]\n')
    write_bot(
        bots / "sleeper",
        'name = "sleeper"\nrun = ["true"]\nbuild = ["{python}", "-c", "import time; time.sleep(3600)"]\nbuild_timeout_s = 3600\n',
    )


@needs_strict
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_a_build_ends_its_tree_and_the_run_exits_130(sig: signal.Signals, tmp_path: Path) -> None:
    bots, results = tmp_path / "bots", tmp_path / "results"
    slow_build_bots(bots)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", "--bots", str(bots), "--results", str(results), "--players", "2",
         "--sandbox", "strict", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 60
        while not any("time.sleep(3600)" in cmd for cmd in proc_helpers.processes_in(results / "build").values()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the build never started"
            time.sleep(0.05)
        t0 = time.monotonic()
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=20)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = stderr.decode(errors="replace")
    assert proc.returncode == 130, text
    assert "interrupted" in text and "Traceback" not in text
    assert took < 10
    assert leftovers(results) == {}
    assert leftovers(bots) == {}


@needs_strict
def test_a_run_skips_only_the_bots_that_break_the_rules_with_one_line_each(tmp_path: Path) -> None:
    """In a real `arena run`: a build over the operator's cap, an LD_PRELOAD in bot.toml
    and a program outside the view each skip their bot with a one-line reason; the
    others play."""
    bots, results = tmp_path / "bots", tmp_path / "results"
    slow_build_bots(bots)
    write_bot(bots / "preload", 'name = "preload"\nrun = ["true"]\nenv = { LD_PRELOAD = "./x.so" }\n')
    host = host_with_secrets(tmp_path / "host")
    write_bot(bots / "hidden", f'name = "hidden"\nrun = ["{host["hostdir"] / "prog"}"]\n')
    config = tmp_path / "cup.toml"
    config.write_text("build_timeout_s = 1\n")
    proc = arena("run", "--bots", str(bots), "--results", str(results), "--players", "2", "--deals", "1",
                 "--sandbox", "strict", "--config", str(config), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    assert {r["bot"] for r in doc["rows"]} == {"alpha", "beta"}
    assert doc["run"]["played"] > 0 and doc["run"]["void"] == 0
    reasons = {s["bot"]: s["reason"] for s in doc["skipped"]}
    assert set(reasons) == {"sleeper", "preload", "hidden"}, reasons
    assert all("\n" not in r for r in reasons.values())
    assert "build timed out after 1 s (the run's cap; the bot asks 3600 s)" in reasons["sleeper"]
    assert "'LD_PRELOAD' is refused" in reasons["preload"]
    assert "outside what the strict sandbox shows" in reasons["hidden"]
    assert leftovers(results) == {}


def test_toolchains_may_come_from_the_operators_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARENA_TOOLCHAINS", f"{tmp_path / 'jdk'}:relative/ignored::{tmp_path / 'node'}")
    assert SandboxSettings().toolchains == (str(tmp_path / "jdk"), str(tmp_path / "node"))
    assert SandboxSettings().for_bot(tmp_path).toolchains == (str(tmp_path / "jdk"), str(tmp_path / "node"))


@needs_strict
@pytest.mark.skipif(os.geteuid() != 0, reason="only a root arena runs a bot as a user of its own")
def test_a_bot_folder_others_cannot_enter_still_runs_from_its_copy(tmp_path: Path) -> None:
    """The strict bot's user may enter only what lets "other" in: the copy the bot runs
    from is made so (folders 0755, files 0644 or 0755), whatever the modes of its folder."""
    bot = write_bot(tmp_path / "bots" / "closed", 'name = "closed"\nrun = ["{python}", "peek.py"]\n', {"peek.py": PEEK})
    bot.chmod(0o700)
    (bot / "peek.py").chmod(0o600)
    spec = prepare_bot(find_bot(bot), tmp_path / "cache", SandboxSettings(Level.STRICT))
    assert json.loads(trio.run(first_line, spec)) == {}
