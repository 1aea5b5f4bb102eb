"""A competition's settings (:class:`Competition`), read from its TOML file by
:func:`load_competition`. Every key is checked where it is read: an unknown key, a wrong
type or a value out of range is an error naming the file and the key, and the server and
the ladder refuse to start on it.

The file::

    name = "Class of 2027"            # the title of the pages
    invite_code = "sushi-2027"        # optional: teams may register themselves with it

    [game]                            # as `arena run`'s config (its keys; see docs/competition.md)
    players = 4
    variant = "standard"
    turn_ms = 1000
    sandbox = "strict"

    [uploads]
    max_bytes = 10_000_000            # the archive as uploaded
    max_files = 2000                  # members of the archive
    max_unpacked_bytes = 100_000_000  # what it unpacks to (decompression bombs)
    per_hour = 10                     # per team

    [challenges]
    per_hour = 10
    max_games = 20                    # per challenge
    max_queued = 50                   # challenges waiting, over all teams

    [ladder]
    seed = 0
    deals = 1                         # duplicate deals per set (each played in every seat rotation)
    jobs = 0                          # games at once; 0: as the cores allow
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import msgspec

from arena.bots.sandbox import SandboxSettings
from arena.competition.errors import CompetitionError
from arena.game.players import TimeSettings
from arena.engine import Variant
from arena.tournament.settings import RunSettings, config_from_table, default_sandbox, settings_from

#: `arena run`'s settings a competition may set in [game]; the others (the bots, the
#: results folder, a fixed number of games...) are the ladder's to decide.
GAME_KEYS = frozenset({
    "players", "variant", "hello_ms", "turn_ms", "bank_ms", "time_scale", "no_timeout", "sandbox", "limits",
    "toolchains", "build_timeout_s", "build_mb", "build_files", "build_memory_mb", "build_processes",
    "build_tmp_mb", "cluster",
})


class Competition(msgspec.Struct, frozen=True, kw_only=True):
    """A competition's settings. ``game`` holds `arena run`'s settings as the file gives
    them (turned into a run's by :meth:`run_settings`)."""

    name: str = "Sushi Go! Arena"
    players: int = 4
    variant: str = "standard"
    invite_code: str | None = None
    upload_max_bytes: int = 10_000_000
    upload_max_files: int = 2000
    upload_max_unpacked_bytes: int = 100_000_000
    uploads_per_hour: int = 10
    challenges_per_hour: int = 10
    challenge_max_games: int = 20
    challenge_max_queued: int = 50
    seed: int = 0
    deals: int = 1
    jobs: int = 0
    game: dict[str, Any] = {}
    source: str | None = None  # the file read, None for the defaults

    def run_settings(self, bots_dir: Path, results: Path, name: str) -> RunSettings:
        """The settings of one tournament the ladder plays: this competition's players,
        variant, time and sandbox (strict where the machine has it)."""
        options = {**self.game, "players": self.players, "variant": self.variant}
        return settings_from(options, base=RunSettings(bots_dir=bots_dir, results=results, name=name, seed=self.seed))

    def sandbox(self) -> SandboxSettings:
        """The sandbox bots are validated and played in (strict where the machine has it)."""
        return self.run_settings(Path("."), Path("."), "ladder").sandbox or default_sandbox()

    def time(self) -> TimeSettings:
        return self.run_settings(Path("."), Path("."), "ladder").time


_TABLES: dict[str, dict[str, tuple[str, type, int, int]]] = {
    # table -> key -> (field, type, minimum, maximum)
    "uploads": {
        "max_bytes": ("upload_max_bytes", int, 1, 1 << 31),
        "max_files": ("upload_max_files", int, 1, 100_000),
        "max_unpacked_bytes": ("upload_max_unpacked_bytes", int, 1, 1 << 34),
        "per_hour": ("uploads_per_hour", int, 1, 100_000),
    },
    "challenges": {
        "per_hour": ("challenges_per_hour", int, 1, 100_000),
        "max_games": ("challenge_max_games", int, 1, 10_000),
        "max_queued": ("challenge_max_queued", int, 1, 100_000),
    },
    "ladder": {
        "seed": ("seed", int, 0, (1 << 63) - 1),
        "deals": ("deals", int, 1, 100),
        "jobs": ("jobs", int, 0, 256),
    },
}
_TOP = ("name", "invite_code", "game", *_TABLES)


def load_competition(path: Path | None) -> Competition:
    """The competition of the TOML file at ``path`` (None: the defaults, see
    :class:`Competition`). Raises :class:`CompetitionError` naming the file and the key."""
    if path is None:
        return Competition()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CompetitionError(f"{path}: cannot read the competition file: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CompetitionError(f"{path}: not valid TOML: {exc}") from None
    fields: dict[str, Any] = {"source": str(path)}
    for key, value in data.items():
        if key not in _TOP:
            raise CompetitionError(f"{path}: unknown key {key!r} (known: {', '.join(_TOP)})")
        if key in ("name", "invite_code"):
            if not isinstance(value, str) or not value.strip() or len(value) > 200 or not value.isprintable():
                raise CompetitionError(f"{path}: {key} must be a non-empty line of text of at most 200 characters")
            fields[key] = value
        elif not isinstance(value, dict):
            raise CompetitionError(f"{path}: {key} must be a table ([{key}]), not {type(value).__name__}")
        elif key == "game":
            fields["game"] = _game_table(path, value)
        else:
            for sub, item in value.items():
                spec = _TABLES[key].get(sub)
                if spec is None:
                    raise CompetitionError(f"{path}: unknown key {key}.{sub} (known: {', '.join(_TABLES[key])})")
                field, kind, low, high = spec
                if isinstance(item, bool) or not isinstance(item, kind) or not low <= item <= high:
                    raise CompetitionError(f"{path}: {key}.{sub} must be a whole number from {low} to {high}, not {item!r}")
                fields[field] = item
    game = fields.get("game", {})
    fields["players"] = game.get("players", 4)
    fields["variant"] = game.get("variant", Variant.STANDARD.value)
    if fields["variant"] == Variant.DUMMY.value and "players" not in game:
        fields["players"] = 2
    competition = Competition(**fields)
    try:
        competition.run_settings(Path("."), Path("."), "ladder")
    except CompetitionError:
        raise
    except Exception as exc:  # a combination settings_from refuses (it names the setting)
        raise CompetitionError(f"{path}: [game]: {exc}") from None
    return competition


def _game_table(path: Path, table: dict[str, Any]) -> dict[str, Any]:
    for key in table:
        if key.replace("-", "_") not in GAME_KEYS:
            raise CompetitionError(f"{path}: unknown key game.{key} (known: {', '.join(sorted(GAME_KEYS))})")
    try:
        return config_from_table(path, dict(table))
    except CompetitionError:
        raise
    except Exception as exc:  # ArenaError naming the key
        raise CompetitionError(f"{str(exc).replace(f'{path}: ', f'{path}: game.', 1)}") from None
