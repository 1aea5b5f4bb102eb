"""`arena doctor`: what this machine gives a bot. The sandbox level a run would use and
why, what a bot sees of the host under ``strict``, and each language toolchain: where it
is, and whether it starts inside that sandbox (its version, asked there)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.bots import BotStartError
from arena.bots import toolchains as tc
from arena.bots._cgroup import support as cgroup_support
from arena.bots.build import run_build
from arena.bots.sandbox import DEFAULT_LIMITS, Level, Sandbox, SandboxSettings
from arena.bots.strict import resolve_level, strict_support, visible_roots
from arena.text import printable

#: How long one toolchain's version may take to come (a cold JVM: about a second).
PROBE_TIMEOUT_S = 30.0
_PROBE_OUTPUT = 16 * 1024


@dataclass(slots=True)
class ToolchainCheck:
    name: str
    program: str  # where the arena's PATH (with the found toolchains) has it, or ""
    version: str = ""  # its first line, asked inside the sandbox
    runs: bool = False  # it started and answered inside the sandbox
    problem: str = ""  # why not, when it was found but does not run

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "program": self.program or None, "version": self.version or None,
                "runs": self.runs, "problem": self.problem or None}


@dataclass(slots=True)
class DoctorReport:
    level: str
    why: str  # why that level (a warning when strict is not available)
    root: bool
    cgroups: list[str]  # which controllers the arena can use
    found: list[str]  # toolchain folders the arena found itself (shown to every bot)
    exposed: list[str]  # the operator's ([sandbox] expose, toolchains, ARENA_TOOLCHAINS)
    visible: list[str]  # what a strict bot sees of the host, read-only
    etc: list[str]  # of /etc, what it sees (the fixed few and the toolchains' links)
    toolchains: list[ToolchainCheck] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sandbox": {"level": self.level, "why": self.why, "root": self.root, "cgroups": self.cgroups},
            "found": self.found, "exposed": self.exposed, "visible": self.visible, "etc": self.etc,
            "toolchains": [t.to_dict() for t in self.toolchains],
        }


def _why(level: Level, warning: str | None) -> str:
    if warning:
        return warning
    if level is Level.STRICT:
        who = "the arena is root: each bot runs as a user id of its own" if os.geteuid() == 0 else "a user namespace"
        return f"bubblewrap works here ({who}); bots see only what is listed below, with no network"
    return ""


def diagnose(exposed: tuple[str, ...] | None = None, *, probe: bool = True) -> DoctorReport:
    """What a bot gets on this machine (``exposed``: the operator's folders; default:
    ``ARENA_TOOLCHAINS``). With ``probe``, each toolchain found is started once inside
    the sandbox the machine gives (its version asked), within the build limits."""
    level, warning = resolve_level(None)
    settings = SandboxSettings(level) if exposed is None else SandboxSettings(level, toolchains=tuple(exposed))
    cg = cgroup_support()
    cgroups = [name for name in ("pids", "memory", "cpuacct") if getattr(cg, name, None) is not None]
    with tempfile.TemporaryDirectory(prefix="arena-doctor-") as folder:
        os.chmod(folder, 0o755)  # a root arena's strict bot enters it as "other"
        here = Path(folder)
        view = Sandbox(Level.STRICT, DEFAULT_LIMITS, here, toolchains=settings.toolchains)
        roots = [str(r) for r in visible_roots(view) if r != here and not str(r).startswith("/etc")]
        etc = [str(r) for r in visible_roots(view) if str(r).startswith("/etc")]
        report = DoctorReport(
            level.value, _why(level, warning), os.geteuid() == 0, cgroups, list(tc.found_homes()),
            list(settings.toolchains), list(dict.fromkeys(roots)), etc,
        )
        path = tc.toolchain_path(os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"))
        env = {"PATH": path, "LANG": "C.UTF-8", **tc.toolchain_env(cache=None)}
        for found in tc.probe_toolchains(path):
            check = ToolchainCheck(found.name, found.program)
            report.toolchains.append(check)
            if found.program and probe:
                _probe(check, found.argv, settings, here, env)
    return report


def _probe(check: ToolchainCheck, argv: tuple[str, ...], settings: SandboxSettings, here: Path, env: dict[str, str]) -> None:
    policy = settings.for_build(here) if settings.level is not Level.NONE else None
    try:
        result = run_build(check.name, policy, list(argv), here, dict(env), PROBE_TIMEOUT_S, output_cap=_PROBE_OUTPUT)
    except BotStartError as exc:
        check.problem = printable(exc.reason, limit=400)
        return
    text = result.output.decode(errors="replace")
    first = printable(tc.first_line(text), limit=200)
    if result.returncode == 0:
        check.runs, check.version = True, first
    elif result.returncode is None:
        check.problem = f"no answer within {PROBE_TIMEOUT_S:g} s"
    else:
        check.problem = f"exit status {result.returncode}: {first}" + (f" ({result.explanation})" if result.explanation else "")


def strict_missing() -> str:
    """What stops ``strict`` here, or ``""``."""
    s = strict_support()
    return "" if s.ok else s.missing


def explain_bot(path: Path, settings: SandboxSettings | None, build_cache: Path) -> dict[str, Any]:
    """What one bot gets (``arena validate --explain``): the level, what it sees when it
    plays and when it builds, what of it is writable, the variables the arena sets for its
    toolchains, and its limits in a game and in a build. Nothing is started."""
    from dataclasses import asdict

    from arena.bots.manifest import find_bot

    manifest = find_bot(path)
    level = settings.level if settings is not None else Level.NONE
    settings = settings or SandboxSettings(Level.NONE)
    base = build_cache.resolve() / f"{manifest.name}-{manifest.content_hash}-{settings.build_key()}" / "src"
    cache = build_cache.resolve() / "cache" / manifest.name
    game = settings.for_bot(base, manifest.limits)
    build = settings.for_build(base, cache)
    assert game is not None
    out: dict[str, Any] = {
        "bot": manifest.name, "sandbox": level.value, "runs_from": str(base),
        "game_limits": asdict(game.limits),
    }
    if level is Level.STRICT:
        out["sees"] = list(dict.fromkeys(str(r) for r in visible_roots(game)))
        out["tmp"] = f"a private /tmp of {game.limits.tmp_mb} MB (also its HOME)"
    elif level is Level.LIMITS:
        out["sees"] = ["everything the arena's user can read (limits isolates nothing)"]
    else:
        out["sees"] = ["everything the arena's user can read (no sandbox)"]
    if manifest.build is not None:
        out["build"] = {
            "command": list(manifest.build),
            "writable": [str(base), str(cache)],
            "limits": {k: v for k, v in asdict(build.limits).items() if k != "cpu_s"},
            "timeout_s": min(manifest.build_timeout_s, settings.build_timeout_s),
            "env": tc.toolchain_env(cache=cache),
        }
    out["env"] = tc.toolchain_env(cache=None)
    return out
