"""The language toolchains a bot may build and run with, as the arena finds them, and what
each needs from the sandbox beyond ``/usr``.

The arena itself, never a bot, decides all of it:

- :func:`found_homes`: toolchain folders outside ``/usr`` found on this machine where
  looking is cheap (rustup's homes of the arena's user, ``/usr/local/go``); shown
  read-only to every bot under ``strict``, beside the operator's ``[sandbox] expose``.
  Of ``~/.cargo`` only ``bin`` is shown (the rustup proxies): ``~/.cargo`` may hold
  registry credentials (``credentials.toml``).
- :func:`etc_links`: the files of ``/etc`` that a toolchain under ``/usr`` (or a shown
  one) links into, e.g. Debian's OpenJDK, whose ``conf/security/java.security``,
  ``lib/jvm.cfg`` and ``lib/security/cacerts`` are links into ``/etc``; ``strict`` shows
  ``/etc`` only in part, so these are shown read-only too (only what others may read).
- :func:`toolchain_env`: the environment a build (and a bot) gets for them: rustup's
  ``RUSTUP_HOME`` and ``CARGO_HOME`` (its proxies look under ``$HOME``, which the sandbox
  replaces), and for a build the per-bot build cache (``GOCACHE``, cargo's, npm's, pip's)
  and Go's ``-buildvcs=false`` (no git) and a ``GOMAXPROCS`` within the build's process
  cap. A bot's own ``env`` still comes after, so it may change these; it cannot make the
  sandbox show more.
- :func:`probe_toolchains`: each toolchain's program and version, for ``arena doctor``.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import stat
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Toolchain",
    "etc_links",
    "found_homes",
    "probe_toolchains",
    "rustup_homes",
    "toolchain_env",
    "toolchain_path",
]

#: How many entries one look for links into /etc walks in one folder tree (a JDK has a
#: few hundred); a larger tree is looked at no further.
_LINK_SCAN_CAP = 20_000
#: The most GOMAXPROCS a build gets: ``go build`` runs that many compilers at once, each
#: with about as many threads, all within the build's process cap.
BUILD_GOMAXPROCS = 4
_JVM = Path("/usr/lib/jvm")


def _user_home() -> Path | None:
    try:
        return Path(pwd.getpwuid(os.geteuid()).pw_dir)
    except (KeyError, OSError):
        return None


@functools.cache
def rustup_homes() -> tuple[Path, Path] | None:
    """(RUSTUP_HOME, CARGO_HOME) of the arena's user, when rustup is installed there
    (``$RUSTUP_HOME``/``$CARGO_HOME``, else ``~/.rustup`` and ``~/.cargo`` of the user the
    arena runs as), real paths; None otherwise."""
    home = _user_home()
    rustup = os.environ.get("RUSTUP_HOME") or (str(home / ".rustup") if home else "")
    cargo = os.environ.get("CARGO_HOME") or (str(home / ".cargo") if home else "")
    if not (rustup and cargo and os.path.isabs(rustup) and os.path.isabs(cargo)):
        return None
    r, c = Path(os.path.realpath(rustup)), Path(os.path.realpath(cargo))
    if not _whole_installation(r) or not _whole_installation(c / "bin"):
        return None  # e.g. RUSTUP_HOME=/ or a home folder itself: never shown to every bot
    if (r / "toolchains").is_dir() and (c / "bin").is_dir():
        return r, c
    return None


def _whole_installation(path: Path) -> bool:
    """Whether ``path`` may be shown to every bot as a toolchain found: not ``/``, not a
    top-level folder, not the user's home itself."""
    home = _user_home()
    return len(path.parts) > 2 and (home is None or path != Path(os.path.realpath(home)))


@functools.cache
def found_homes() -> tuple[str, ...]:
    """Toolchain folders outside ``/usr`` that every bot is shown (read-only) without the
    operator naming them: rustup's home and cargo's ``bin`` of the arena's user, and
    ``/usr/local/go``. Looked for once per process."""
    out: list[str] = []
    homes = rustup_homes()
    if homes is not None:
        out += [str(homes[0]), str(homes[1] / "bin")]
    if os.path.isfile("/usr/local/go/bin/go") and _whole_installation(Path(os.path.realpath("/usr/local/go"))):
        out.append(os.path.realpath("/usr/local/go"))
    return tuple(out)


def toolchain_path(path: str) -> str:
    """A bot's ``PATH`` with the found toolchains' program folders after its own entries
    (so ``cargo`` and ``go`` are found even when the arena's PATH lacks them)."""
    entries = path.split(os.pathsep) if path else []
    extra = []
    homes = rustup_homes()
    if homes is not None:
        extra.append(str(homes[1] / "bin"))
    if os.path.isfile("/usr/local/go/bin/go"):
        extra.append("/usr/local/go/bin")
    return os.pathsep.join(entries + [e for e in extra if e not in entries])


def _readable_by_others(path: str) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    if stat.S_ISDIR(st.st_mode):
        return st.st_mode & (stat.S_IROTH | stat.S_IXOTH) == (stat.S_IROTH | stat.S_IXOTH)
    return stat.S_ISREG(st.st_mode) and bool(st.st_mode & stat.S_IROTH)


def _links_into_etc(top: Path) -> list[str]:
    """The /etc paths that links under ``top`` point to (at most :data:`_LINK_SCAN_CAP`
    entries looked at; links are never followed on the way)."""
    found: list[str] = []
    seen = 0
    pending = [str(top)]
    while pending and seen < _LINK_SCAN_CAP:
        folder = pending.pop()
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    seen += 1
                    if seen >= _LINK_SCAN_CAP:
                        break
                    try:
                        if entry.is_symlink():
                            target = os.readlink(entry.path)
                            full = os.path.normpath(os.path.join(folder, target))
                            if full.startswith("/etc/"):
                                found.append(full)
                        elif entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                    except OSError:
                        continue
        except OSError:
            continue
    return found


# Debian's OpenSSL links its certificates and configuration into /etc (never its private keys).
_SSL_LINKS = ("/usr/lib/ssl/cert.pem", "/usr/lib/ssl/certs", "/usr/lib/ssl/openssl.cnf")


@functools.cache
def _etc_links_cached(shown: tuple[str, ...]) -> tuple[str, ...]:
    targets: list[str] = []
    trees = [_JVM] if _JVM.is_dir() else []
    trees += [Path(t) for t in shown if (Path(t) / "release").is_file()]  # a JDK shown from elsewhere
    for tree in trees:
        targets += _links_into_etc(tree)
    for link in _SSL_LINKS:
        try:
            target = os.path.normpath(os.path.join(os.path.dirname(link), os.readlink(link)))
        except OSError:
            continue
        if target.startswith("/etc/"):
            targets.append(target)
    # One folder of /etc whose every entry others may read is shown whole (one bind, not
    # one per file: each costs a start of the sandbox some 0.5 ms); otherwise file by file.
    wanted: list[str] = []
    for target in sorted(dict.fromkeys(targets)):
        top = "/".join(target.split("/")[:3])
        wanted.append(top if top != target and _all_readable(top) else target)
    out: list[str] = []
    for target in sorted(dict.fromkeys(wanted)):
        if any(target.startswith(t + "/") for t in out):
            continue  # within a folder already listed
        # Only what anyone on the machine may read; nothing under a folder others cannot enter.
        real = os.path.realpath(target)
        if _readable_by_others(real) and os.access(os.path.dirname(real), os.X_OK):
            out.append(target)
    return tuple(out)


def _all_readable(folder: str, cap: int = 2000) -> bool:
    """Whether others may read everything in ``folder`` (no links out of it, at most
    ``cap`` entries looked at: a larger folder is not shown whole)."""
    if os.path.islink(folder) or not _readable_by_others(folder):
        return False
    seen = 0
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            seen += 1
            path = os.path.join(root, name)
            if seen > cap or os.path.islink(path) or not _readable_by_others(path):
                return False
    return True


def etc_links(shown: Iterable[str] = ()) -> tuple[str, ...]:
    """The paths in ``/etc`` that the JDKs (``/usr/lib/jvm``, or a shown folder with a
    JDK's ``release`` file) and the system's OpenSSL link to, that others may read: shown
    read-only under ``strict``, at the same path. Looked for once per set of folders."""
    return _etc_links_cached(tuple(shown))


def toolchain_env(*, cache: Path | None, cpus: int | None = None) -> dict[str, str]:
    """The variables the arena sets for the toolchains (before the bot's own ``env``):
    rustup's homes, and for a build (``cache``: its persistent per-bot build cache) where
    Go, cargo, npm and pip keep their caches, with Go's VCS stamping (it runs git) off, its
    toolchain downloads off and its parallelism bounded."""
    env: dict[str, str] = {}
    homes = rustup_homes()
    if homes is not None:
        env["RUSTUP_HOME"] = str(homes[0])
        env["CARGO_HOME"] = str(homes[1])
    if cache is None:
        return env
    cpus = cpus or os.cpu_count() or 1
    env.update({
        "GOCACHE": str(cache / "go-build"),
        "GOPATH": str(cache / "go"),
        "GOFLAGS": "-buildvcs=false",
        "GOTOOLCHAIN": "local",
        "GOPROXY": "off",
        "GOMAXPROCS": str(max(1, min(cpus, BUILD_GOMAXPROCS))),
        "CARGO_NET_OFFLINE": "true",
        "npm_config_cache": str(cache / "npm"),
        "npm_config_update_notifier": "false",
        "PIP_CACHE_DIR": str(cache / "pip"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "XDG_CACHE_HOME": str(cache / "xdg"),
    })
    if homes is not None:
        # Cargo's own home (registry, git checkouts, its locks) must be writable: the
        # cache's; rustup's proxies find the toolchains through RUSTUP_HOME alone.
        env["CARGO_HOME"] = str(cache / "cargo")
    return env


@dataclass(frozen=True, slots=True)
class Toolchain:
    """A toolchain as ``arena doctor`` reports it: its name, the program found, and the
    first line of its version (``""`` when it was not found)."""

    name: str
    program: str  # the path found, or "" when it was not
    version: str = ""
    argv: tuple[str, ...] = ()  # how its version is asked


# (name, program, version arguments): what a bot's build or run usually starts.
_PROGRAMS = (
    ("C", "cc", ("--version",)),
    ("C++", "c++", ("--version",)),
    ("Python", "python3", ("--version",)),
    ("Node", "node", ("--version",)),
    ("Java (javac)", "javac", ("-version",)),
    ("Java (java)", "java", ("-version",)),
    ("Rust (cargo)", "cargo", ("--version",)),
    ("Rust (rustc)", "rustc", ("--version",)),
    ("Go", "go", ("version",)),
)


def probe_toolchains(path: str) -> list[Toolchain]:
    """Each known toolchain's program as looked up on ``path`` (unconfined: where it is;
    whether a bot can run it is for the caller to try), without starting it."""
    out = []
    for name, program, args in _PROGRAMS:
        found = shutil.which(program, path=path)
        out.append(Toolchain(name, found or "", "", (program, *args)))
    return out


def first_line(text: str, limit: int = 200) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def version_unconfined(argv: tuple[str, ...], env: Mapping[str, str], timeout: float = 20.0) -> str:
    """The first line a program prints for its version, run as the arena (no sandbox)."""
    try:
        proc = subprocess.run(list(argv), stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, env=dict(env))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"(cannot run: {exc})"
    return first_line((proc.stdout[:4096] + b"\n" + proc.stderr[:4096]).decode(errors="replace"))
