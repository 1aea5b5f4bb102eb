"""What decides a tournament: :class:`RunSettings`, made from `arena run`'s options
(:func:`settings_from`) and from a competition's TOML file (:func:`load_config`), every
value checked where it is read so that a mistake names the flag, or the file and key.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.bots.sandbox import Level, Limits, SandboxSettings
from arena.bots.strict import resolve_level
from arena.engine import Variant
from arena.errors import ArenaError
from arena.game.ids import time_dict
from arena.game.players import DEFAULT_TIME, TimeSettings

SEATINGS = ("rotations", "all")


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Everything that decides a tournament (and where it is written)."""

    bots_dir: Path
    results: Path = Path("results")
    players: int | None = None  # default: 4, or the number of bots if fewer
    variant: Variant = Variant.STANDARD
    deals: int = 1
    seatings: str = "rotations"
    games: int | None = None
    seed: int = 0
    gauntlet: str | None = None
    jobs: int | None = None  # default: about cores ÷ seats per game, at least 1
    time: TimeSettings = DEFAULT_TIME
    name: str | None = None  # the tournament's id; default derived from the settings
    sandbox: SandboxSettings | None = None  # None: strict where the machine supports it, else limits
    cluster: str | None = None  # play the games on Dask: a scheduler's address or local:N (arena.executors.cluster)
    record: bool = True  # False: play the games without storing them (only for measuring the store's cost)

    def format_players(self, n_bots: int) -> int:
        if self.players is not None:
            return self.players
        if self.variant is Variant.DUMMY:
            return 2
        return max(2, min(4, n_bots))

    def schedule_config(self, players: int) -> dict[str, Any]:
        """The settings that decide which games are played (the tournament's identity)."""
        return {
            "players": players,
            "variant": self.variant.value,
            "deals": self.deals,
            "seatings": self.seatings,
            "games": self.games,
            "seed": self.seed,
            "gauntlet": self.gauntlet,
            "time": time_dict(self.time),
        }

    def tournament_id(self, players: int) -> str:
        if self.name:
            return self.name
        digest = hashlib.blake2b(json.dumps(self.schedule_config(players), sort_keys=True).encode(), digest_size=3)
        base = self.bots_dir.resolve().name or "bots"
        return f"{base}-{players}p-{self.variant.value}-{digest.hexdigest()}"


def default_jobs(seats: int) -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, seats))


def default_sandbox() -> SandboxSettings:
    """``strict`` where the machine supports it, else ``limits`` (logging why, once)."""
    level, warning = resolve_level(None)
    if warning:
        _log_once(warning)
    return SandboxSettings(level)


_warned: set[str] = set()


def _log_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        logging.getLogger(__name__).warning("%s", message)


# -- the config file --------------------------------------------------------------------

_CONFIG_KEYS: dict[str, type | tuple[type, ...]] = {
    "bots": str,
    "results": str,
    "players": int,
    "variant": str,
    "deals": int,
    "seatings": str,
    "games": int,
    "seed": int,
    "gauntlet": str,
    "jobs": int,
    "hello_ms": int,
    "turn_ms": int,
    "bank_ms": int,
    "time_scale": (int, float),
    "no_timeout": bool,
    "name": str,
    "anchor": str,
    "sandbox": (str, dict),
    "limits": dict,
    "toolchains": list,
    "build_timeout_s": (int, float),
    "build_mb": int,
    "build_files": int,
    "build_memory_mb": int,
    "build_processes": int,
    "build_tmp_mb": int,
    "cluster": str,
}


def load_config(path: Path) -> dict[str, Any]:
    """A competition's settings from a TOML file: any of `arena run`'s options, by
    their long names with ``_`` for ``-`` (``turn_ms = 500``), at the top level or
    under ``[run]``. Paths are relative to the file's folder. Unknown keys and wrong
    types are errors naming the file and the key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ArenaError(f"{path}: cannot read the config file: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ArenaError(f"{path}: not valid TOML: {exc}") from None
    if isinstance(data.get("run"), dict):
        data = {**{k: v for k, v in data.items() if k != "run"}, **data["run"]}
    return config_from_table(path, data)


def config_from_table(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """:func:`load_config` of a table already read from the file at ``path`` (a competition's
    file holds these settings in a table of its own); errors name ``path`` and the key."""
    if isinstance(data.get("sandbox"), dict):
        data = _sandbox_table(path, data)
    out: dict[str, Any] = {}
    for key, value in data.items():
        norm = key.replace("-", "_")
        if norm not in _CONFIG_KEYS:
            known = ", ".join(sorted(_CONFIG_KEYS))
            raise ArenaError(f"{path}: unknown setting {key!r} (known: {known})")
        want = _CONFIG_KEYS[norm]
        if isinstance(value, bool) and want is not bool or not isinstance(value, want):
            names = " or ".join(t.__name__ for t in (want if isinstance(want, tuple) else (want,)))
            raise ArenaError(f"{path}: setting {key!r} must be {names}, not {type(value).__name__} ({value!r})")
        if norm == "limits" and isinstance(value, dict) and value.keys() & _BUILD_CAPS:
            # The caps on a bot's build may also sit with the other caps.
            value = dict(value)
            for name in sorted(value.keys() & _BUILD_CAPS):
                cap = value.pop(name)
                if name != "build_timeout_s" and (isinstance(cap, bool) or not isinstance(cap, int)):
                    raise ArenaError(f"{path}: limits.{name} must be a positive whole number, not {cap!r}")
                _check_config_value(path, f"limits.{name}", name, cap)
                out[name] = cap
        _check_config_value(path, key, norm, value)
        if norm in ("bots", "results"):
            value = str((path.parent / value).resolve()) if not Path(value).is_absolute() else value
        if norm == "toolchains":
            value = [str((path.parent / v).resolve()) for v in value]
        out[norm] = value
    return out


def _sandbox_table(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """A config's ``[sandbox]`` table (``level = "strict"``, ``expose = [...]``: host
    folders shown read-only to every bot) folded into the flat settings: ``level`` is
    ``sandbox``, ``expose`` adds to ``toolchains`` (its older name)."""
    table = data["sandbox"]
    unknown = sorted(set(table) - {"level", "expose"})
    if unknown:
        raise ArenaError(f"{path}: unknown setting {unknown[0]!r} in the sandbox table (known: expose, level)")
    flat = {k: v for k, v in data.items() if k != "sandbox"}
    if "level" in table:
        flat["sandbox"] = table["level"]
    if "expose" in table:
        expose = table["expose"]
        if not isinstance(expose, list):
            raise ArenaError(f"{path}: sandbox.expose must be a list of folders, not {type(expose).__name__} ({expose!r})")
        for v in expose:
            if not isinstance(v, str) or not (path.parent / v).is_dir():
                raise ArenaError(f"{path}: sandbox.expose must list folders to show every bot, and {v!r} is not a folder")
            if os.path.realpath(path.parent / v) == "/":
                raise ArenaError(f"{path}: sandbox.expose lists '/': that would show every bot the whole machine")
        old = flat.get("toolchains", [])
        flat["toolchains"] = [*(old if isinstance(old, list) else [old]), *expose]
    return flat


# The caps on a bot's build step (also accepted within [limits]).
_BUILD_CAPS = {"build_timeout_s", "build_mb", "build_files", "build_memory_mb", "build_processes", "build_tmp_mb"}
#: The build limits apart from a bot's game limits, and the field of Limits each sets.
_BUILD_LIMITS = {"build_memory_mb": "memory_mb", "build_processes": "processes", "build_tmp_mb": "tmp_mb"}

# The bounds of `arena run`'s options, for the same settings given in a config file.
_CONFIG_MINIMUM: dict[str, int | float] = {
    "build_mb": 1, "build_files": 1, "build_memory_mb": 16, "build_processes": 8, "build_tmp_mb": 1,
    "deals": 1, "games": 1, "seed": 0, "jobs": 1, "hello_ms": 1, "turn_ms": 1, "bank_ms": 0, "time_scale": 0.001,
}
_CONFIG_CHOICES: dict[str, tuple[str, ...]] = {
    "variant": tuple(v.value for v in Variant),
    "seatings": SEATINGS,
    "sandbox": tuple(lv.value for lv in Level),
}


def _check_config_value(path: Path, key: str, norm: str, value: Any) -> None:
    """A config file's value checked where it is read, so that a mistake in it is
    reported as the file's and the key's (the same mistake as a flag names the flag)."""
    where = f"{path}: {key}"
    if norm in _CONFIG_CHOICES and value not in _CONFIG_CHOICES[norm]:
        raise ArenaError(f"{where} must be one of {', '.join(_CONFIG_CHOICES[norm])}, not {value!r}")
    if norm == "toolchains":
        for v in value:
            if not isinstance(v, str) or not (path.parent / v).is_dir():
                raise ArenaError(f"{where} must list the folders of toolchains to show every bot, and {v!r} is not a folder")
    if norm == "build_timeout_s" and (isinstance(value, bool) or not (isinstance(value, int | float) and 0 < value < math.inf)):
        raise ArenaError(f"{where} must be a positive, finite number of seconds, not {value!r}")
    if norm == "players" and not 2 <= value <= 5:
        raise ArenaError(f"{where} must be from 2 to 5, not {value!r}")
    if norm in _CONFIG_MINIMUM and not value >= _CONFIG_MINIMUM[norm]:  # `not >=`: NaN too
        raise ArenaError(f"{where} must be at least {_CONFIG_MINIMUM[norm]:g}, not {value!r}")
    if norm == "limits":
        try:
            # (No "[limits]" in the message: the CLI prints errors as Rich markup, which would eat it.)
            Limits.from_table(value, f"{path}: the run's caps on bots' limits")
        except ValueError as exc:
            raise ArenaError(str(exc)) from None
    if norm == "anchor":
        bot, sep, elo = value.partition("=")
        try:
            if not sep or not bot or not math.isfinite(float(elo)):
                raise ValueError
        except ValueError:
            raise ArenaError(f"{where} takes BOT=ELO, e.g. {key} = \"greedy=1500\"; not {value!r}") from None
    if norm == "cluster":
        from arena.executors.cluster import parse_cluster  # Dask itself is imported only to play

        try:
            parse_cluster(value)
        except ArenaError as exc:
            raise ArenaError(f"{path}: {key}{str(exc).removeprefix('--cluster')}") from None




def settings_from(options: Mapping[str, Any], *, base: RunSettings | None = None) -> RunSettings:
    """RunSettings from option values (None = not given), over ``base``."""
    s = base or RunSettings(bots_dir=Path("."))
    changes: dict[str, Any] = {}
    for key in ("players", "deals", "seatings", "games", "seed", "gauntlet", "jobs", "name", "cluster"):
        if options.get(key) is not None:
            changes[key] = options[key]
    if options.get("bots") is not None:
        changes["bots_dir"] = Path(options["bots"])
    if options.get("results") is not None:
        changes["results"] = Path(options["results"])
    if options.get("variant") is not None:
        try:
            changes["variant"] = Variant(options["variant"])
        except ValueError:
            raise ArenaError(
                f"variant must be one of {', '.join(v.value for v in Variant)}, not {options['variant']!r}"
            ) from None
    if any(options.get(k) is not None for k in ("sandbox", "limits", "toolchains", *_BUILD_CAPS)):
        base_sandbox = s.sandbox or SandboxSettings()
        try:
            level = resolve_level(options["sandbox"])[0] if options.get("sandbox") is not None else base_sandbox.level
            caps = Limits.from_table(options["limits"], "the run's caps on bots' limits", base_sandbox.caps) if options.get("limits") else base_sandbox.caps
        except ValueError as exc:
            raise ArenaError(str(exc)) from None
        toolchains = tuple(options["toolchains"]) if options.get("toolchains") is not None else base_sandbox.toolchains
        build_cap = float(min(options.get("build_timeout_s") or base_sandbox.build_timeout_s, 10**15))
        build_size = {k: min(int(options[k]), 10**9) for k in ("build_mb", "build_files") if options.get(k) is not None}
        build_limits = replace(
            base_sandbox.build_limits,
            **{field_: min(int(options[k]), 10**6) for k, field_ in _BUILD_LIMITS.items() if options.get(k) is not None},
        )
        changes["sandbox"] = replace(
            base_sandbox, level=level, caps=caps, toolchains=toolchains, build_timeout_s=build_cap,
            build_limits=build_limits, **build_size
        )
    time_changes = {k: options[k] for k in ("hello_ms", "turn_ms", "bank_ms", "time_scale", "no_timeout") if options.get(k) is not None}
    if time_changes:
        try:
            changes["time"] = replace(s.time, **time_changes)
        except ValueError as exc:
            raise ArenaError(str(exc)) from None
    return replace(s, **changes)
