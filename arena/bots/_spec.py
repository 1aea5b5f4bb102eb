"""What it takes to start a bot: :class:`BotSpec`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .sandbox import Sandbox

__all__ = ["BotSpec", "minimal_env"]


def minimal_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a bot gets when its spec has ``env=None``: ``PATH``, ``HOME`` and
    ``LANG`` from ``environ`` (default: the arena's), ``LANG`` defaulting to ``C.UTF-8``,
    plus ``PYTHONPATH`` if set, so that ``{python}`` bots find the installed packages."""
    environ = os.environ if environ is None else environ
    env = {"PATH": environ.get("PATH", os.defpath), "LANG": environ.get("LANG", "C.UTF-8")}
    for name in ("HOME", "PYTHONPATH"):
        if name in environ:
            env[name] = environ[name]
    return env


@dataclass(frozen=True)
class BotSpec:
    """How to start one bot: run ``argv`` (never through a shell) in ``cwd``.

    ``env`` is the complete environment of the bot; ``None`` means :func:`minimal_env`.
    ``argv`` may be given as any sequence of strings; it is stored as a tuple.
    ``sandbox`` is how it is confined (:mod:`arena.bots.sandbox`); ``None``: not at all.
    """

    name: str
    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] | None = field(default=None, hash=False)
    sandbox: Sandbox | None = None

    def __post_init__(self) -> None:
        if isinstance(self.argv, str | bytes):
            raise TypeError("argv must be a sequence of arguments, not one string")
        argv = tuple(os.fspath(a) for a in self.argv)
        if not argv:
            raise ValueError(f"bot {self.name!r}: argv is empty")
        object.__setattr__(self, "argv", argv)
        object.__setattr__(self, "cwd", Path(self.cwd))
