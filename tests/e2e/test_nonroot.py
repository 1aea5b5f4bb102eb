"""Strict without root: a whole ``arena play`` run by an ordinary user, with a hostile bot.

The test runs as root and starts the arena as an unprivileged user (``arenauser``, made
when missing), with a Python that user can run (a virtual environment made from that
user's ``python3``: root's own Python may sit in a folder others cannot read) and a copy
of the arena's packages. It checks what that user's run gets: ``strict``, with the one
warning saying what is weaker than as root; a bot that cannot read the user's home, the
other bot's folder or the network, whose fork bomb is capped per bot (other processes of
the same user do not count) and whose memory is capped.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.bots import _cgroup, strict
from arena.game.replay import read_replay

ROOT = Path(__file__).resolve().parents[2]
USER = "arenauser"
MINIMAL = ROOT / "example_bots" / "minimal" / "bot.py"

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")
as_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="runs the arena as another user: needs root (the non-root run itself is CI's second pass)"
)
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")

def _dependencies() -> list[str]:
    """The arena's own dependencies, as pyproject.toml lists them (so that this copy of the
    arena runs with what an install would give it)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["project"]["dependencies"])


# Before hello: each probe says what it found on stderr (REPORT key=value), where the test
# reads it from the replay; then the bot plays as the minimal example bot does.
PROBE = textwrap.dedent('''\
    import os, runpy, socket, sys, time

    def report(key, value):
        sys.stderr.write(f"REPORT {key}={value}\\n")
        sys.stderr.flush()

    secret, other_bot, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    report("uid", os.getuid())
    try:  # every process this user id may signal: in its own PID namespace, none but itself
        os.kill(-1, 9)
        report("kill_all", "sent")
    except OSError as e:
        report("kill_all", f"blocked {type(e).__name__}")
    try:
        report("home", "ALLOWED " + open(secret).read()[:40])
    except OSError as e:
        report("home", f"blocked {type(e).__name__}")
    try:
        report("other_bot", f"ALLOWED {os.listdir(other_bot)}")
    except OSError as e:
        report("other_bot", f"blocked {type(e).__name__}")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        report("network", "ALLOWED")
    except OSError as e:
        report("network", f"blocked {type(e).__name__}")
    children = []
    try:
        for _ in range(1000):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
        report("forks", f"{len(children)} uncapped")
    except OSError as e:
        report("forks", f"{len(children)} {type(e).__name__}")
    for pid in children:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    hog = []
    try:
        for _ in range(512):  # up to 4 GiB, in touched 8 MiB blocks
            hog.append(bytearray(8 << 20))
        report("memory", f"{8 * len(hog)} uncapped")
    except MemoryError:
        report("memory", f"{8 * len(hog)} MemoryError")
    del hog
    runpy.run_path("player.py", run_name="__main__")
''')


def _user_home() -> Path:
    try:
        return Path(pwd.getpwnam(USER).pw_dir)
    except KeyError:
        proc = subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER], capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.skip(f"no user {USER!r}, and it cannot be made: {proc.stderr.strip()}")
        return Path(pwd.getpwnam(USER).pw_dir)


def as_user(command: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["su", "-s", "/bin/sh", USER, "-c", command], capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def user_env() -> Iterator[tuple[Path, Path]]:
    """(a folder the user owns, the Python it runs the arena with), with a copy of the
    arena's packages in that folder's ``src``."""
    if shutil.which("su") is None:
        pytest.skip("su is not installed")
    _user_home()
    python = as_user("command -v python3").stdout.strip()
    if not python:
        pytest.skip(f"{USER} has no python3 on its PATH")
    ok = as_user(f"{python} -c 'import sys; sys.exit(sys.version_info < (3, 11))'")
    if ok.returncode != 0:
        pytest.skip(f"{USER}'s {python} is older than Python 3.11")
    work = Path(tempfile.mkdtemp(prefix="sushigo-nonroot-"))
    try:
        os.chmod(work, 0o755)
        venv = work / "venv"
        made = subprocess.run([python, "-m", "venv", str(venv)], capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"cannot make a virtual environment with {python}: {made.stderr.strip()[-300:]}")
        deps = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *_dependencies()],
            capture_output=True, text=True, timeout=600, env={**os.environ, "PIP_ROOT_USER_ACTION": "ignore"},
        )
        if deps.returncode != 0:
            pytest.skip(f"cannot install the arena's dependencies for {USER}: {deps.stderr.strip()[-300:]}")
        for package in ("arena", "protocol"):
            shutil.copytree(ROOT / package, work / "src" / package, ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run(["chown", "-R", f"{USER}:", str(work)], check=True)
        yield work, venv / "bin" / "python"
    finally:
        shutil.rmtree(work, ignore_errors=True)


@linux
@as_root
@needs_bwrap
def test_an_ordinary_users_run_is_strict_and_its_hostile_bot_is_contained(user_env: tuple[Path, Path]) -> None:
    work, python = user_env
    home = _user_home()
    secret = home / f"sushigo-secret-{os.getpid()}.txt"
    secret.write_text("the user's own secret")
    shutil.chown(secret, USER, USER)
    secret.chmod(0o600)
    bots = work / f"bots-{os.getpid()}"
    probe, other = bots / "probe", bots / "other"
    for bot in (probe, other):
        bot.mkdir(parents=True)
        shutil.copy(MINIMAL, bot / ("player.py" if bot == probe else "bot.py"))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    (probe / "bot.py").write_text(PROBE)
    run = ["{python}", "bot.py", str(secret), str(other), str(port)]
    (probe / "bot.toml").write_text(f'name = "probe"\nrun = {json.dumps(run)}\n')
    (other / "bot.toml").write_text('name = "other"\nrun = ["{python}", "bot.py"]\n')
    replay = work / f"game-{os.getpid()}.json.gz"
    subprocess.run(["chown", "-R", f"{USER}:", str(bots)], check=True)
    # 80 other processes of the same user run meanwhile: the bot's process cap is its own,
    # not shared with them (an RLIMIT_NPROC set before bwrap would count them all).
    command = (
        f"cd {work} && for i in $(seq 80); do sleep 120 </dev/null >/dev/null 2>&1 & others=\"$others $!\"; done; "
        f"PYTHONPATH={work / 'src'} COLUMNS=200 {python} -m arena play {probe} {other} --replay {replay}; "
        "status=$?; kill $others; exit $status"
    )
    try:
        proc = as_user(command)
    finally:
        secret.unlink()
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "Traceback" not in out
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing reached the host's loopback
    listener.close()

    # The one warning: strict without root, what it keeps and what it gives up here.
    warning = " ".join(out.split())
    assert warning.count("sandbox: strict without root:") == 1, out
    assert "bots run as your own user id (each in a user namespace of its own)" in warning
    assert "a process cap per bot by RLIMIT_NPROC in its user namespace" in warning
    # What the user's arena finds of cgroups decides the rest of the list.
    probe_cgroups = "from arena.bots import _cgroup; s = _cgroup.support(); print(s.memory is None, s.unified or s.cpuacct)"
    found = as_user(f"cd {work} && PYTHONPATH={work / 'src'} {python} -c '{probe_cgroups}'").stdout.split()
    no_memory, no_cpu = found[0] == "True", found[1] == "None"
    assert ("memory_mb caps each process of a bot (RLIMIT_DATA), not its processes together" in warning) == no_memory
    assert ("CPU time is read from /proc, not from a cgroup" in warning) == no_cpu
    if shutil.which("systemd-run"):
        exact = f"`systemd-run --user --scope -p Delegate=yes -- {python} -m arena play {probe} {other} --replay {replay}`"
        assert exact in warning, warning

    record = read_replay(replay)
    seat = next(s.seat for s in record.seats if s.bot == "probe")
    assert record.status == "complete"
    # Its kill(-1, SIGKILL) reached neither the other bot nor the arena (same user id).
    assert [f for f in record.faults if f.seat != seat] == [], record.faults
    assert [u.sandbox for u in record.usage] == ["strict", "strict"]
    reports = dict(
        line[len("REPORT "):].split("=", 1) for line in record.stderr[seat].splitlines() if line.startswith("REPORT ")
    )
    # No user id of its own (a root arena's pool): the user's own, mapped into its namespace.
    assert int(reports["uid"]) == pwd.getpwnam(USER).pw_uid, reports
    assert reports["home"].startswith("blocked"), reports
    assert reports["other_bot"].startswith("blocked"), reports
    assert reports["network"].startswith("blocked"), reports
    forks, why = reports["forks"].split()
    # 64 processes per bot (the default): bwrap's process 1 and the bot itself among them.
    assert why == "BlockingIOError" and 50 <= int(forks) <= 63, reports
    reached, why = reports["memory"].split()
    assert why == "MemoryError" and int(reached) <= 512, reports  # memory_mb 512 (the default)


@linux
@as_root
@needs_bwrap
def test_in_a_cgroup_delegated_to_the_user_bots_get_cgroups_and_the_warning_says_less(
    user_env: tuple[Path, Path],
) -> None:
    """What ``systemd-run --user --scope -p Delegate=yes`` hands a user, made by hand: a
    group of the unified hierarchy that the user owns, the arena started inside it."""
    work, python = user_env
    mount = next((m for fstype, m, root, _ in _cgroup._mounts() if fstype == "cgroup2" and root == "/"), None)
    if mount is None:
        pytest.skip("no cgroup v2 hierarchy is mounted")
    group = mount / f"sushigo-test-delegated-{os.getpid()}"
    try:
        group.mkdir()
    except OSError as exc:
        pytest.skip(f"cannot make a cgroup v2 group to delegate: {exc}")
    try:
        for name in ("", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"):  # what Delegate=yes hands over
            os.chown(group / name, pwd.getpwnam(USER).pw_uid, pwd.getpwnam(USER).pw_gid)
        bots = work / f"delegated-{os.getpid()}"
        bots.mkdir()
        for name in ("greedy", "c-greedy" if shutil.which("cc") else "minimal"):
            shutil.copytree(ROOT / "example_bots" / name, bots / name, ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run(["chown", "-R", f"{USER}:", str(bots)], check=True)
        replay = bots / "game.json.gz"
        inner = (
            f"cd {bots} && PYTHONPATH={work / 'src'} COLUMNS=200 {python} -m arena play {' '.join(str(p) for p in bots.iterdir())} "
            f"--replay {replay}"
        )
        proc = subprocess.run(
            ["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec su -s /bin/sh {USER} -c "$0"', inner],
            capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
        )
        out = " ".join((proc.stdout + proc.stderr).split())
        assert proc.returncode == 0, out[-3000:]
        assert "sandbox: strict without root:" in out
        assert "CPU time is read from /proc" not in out and "systemd-run" not in out  # cpu.stat counts it now
        record = read_replay(replay)
        assert record.status == "complete" and not record.faults, record.faults
        assert all(u.sandbox == "strict" and u.cpu_ms and u.cpu_ms > 0 for u in record.usage), record.usage
        assert not list(group.glob("sushigo-arena-*"))  # the arena's groups are gone with it
    finally:
        for child in sorted(group.rglob("*"), key=lambda p: -len(p.parts)):
            if child.is_dir():
                with contextlib.suppress(OSError):
                    child.rmdir()
        with contextlib.suppress(OSError):
            group.rmdir()


# -- the warning's text, for what a machine has or lacks ----------------------------------------

@linux
def test_the_warning_lists_only_what_is_weaker_here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "argv", ["/opt/x/arena/__main__.py", "run", "--bots", "my bots\x1b[2J"])
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # no user manager's socket there yet
    everything = _cgroup.CgroupSupport(unified=tmp_path, memory=tmp_path, memory_v2=True, pids=tmp_path, pids_v2=True)
    text = strict._non_root_weaker(everything)  # cgroups with every controller: only the user id is left
    assert "bots run as your own user id" in text and text.endswith("not as a user id of their own each.")

    text = strict._non_root_weaker(_cgroup.CgroupSupport(unified=tmp_path))  # a delegated v2 group
    assert "memory_mb caps each process of a bot (RLIMIT_DATA), not its processes together" in text
    assert text.endswith(" A memory cap for a bot's processes together needs a root arena.")
    assert "/proc" not in text and "systemd-run" not in text

    text = strict._non_root_weaker(_cgroup.CgroupSupport())  # no cgroup at all
    assert "CPU time is read from /proc, not from a cgroup" in text
    if shutil.which("systemd-run") is None:
        assert text.endswith("For CPU time counted by a cgroup, run it in a cgroup v2 group delegated to your user.")
        return
    # The exact command of this run, quoted for a shell, its escape sequence made visible.
    command = f"`systemd-run --user --scope -p Delegate=yes -- {sys.executable} -m arena run --bots 'my bots\\x1b[2J'`"
    monkeypatch.setattr(_cgroup, "v2_mounted", lambda: False)
    text = strict._non_root_weaker(_cgroup.CgroupSupport())
    assert text.endswith(f"For CPU time counted by a cgroup, run it as {command} where a systemd user manager runs "
                         "with cgroup v2 (here no cgroup v2 hierarchy is mounted and no systemd user manager runs for you).")
    monkeypatch.setattr(_cgroup, "v2_mounted", lambda: True)
    (tmp_path / "systemd").mkdir()
    (tmp_path / "systemd" / "private").write_text("")  # where a user manager listens
    text = strict._non_root_weaker(_cgroup.CgroupSupport())
    assert text.endswith(f"For CPU time counted by a cgroup, run it in a delegated scope: {command}")
