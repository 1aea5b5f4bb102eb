"""A match's bots: A, B and the opponents found from what the user typed (a path, or the name
of an example bot), their names checked (two bots of one name would mix their games and
ratings), and the match's id from their identities."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

import arena
from arena.bots import BotError
from arena.bots.manifest import BotManifest, find_bot
from arena.errors import ArenaError
from arena.game.ids import seat_identity, time_dict
from arena.game.players import TimeSettings

__all__ = ["check_names", "example_bots_folder", "match_id", "resolve_bot"]


def example_bots_folder() -> Path:
    """Where the example bots are: beside the arena package, in its source tree."""
    return Path(arena.__file__).resolve().parents[1] / "example_bots"


def resolve_bot(text: str, what: str) -> BotManifest:
    """The bot ``text`` names, for ``what`` (e.g. ``--opponent``): a path to a bot, or the
    name of an example bot. An error naming ``what`` and the text otherwise."""
    path = Path(text)
    examples = example_bots_folder()
    if not os.path.lexists(path) and "/" not in text and (examples / text).is_dir():
        path = examples / text
    if not os.path.lexists(path):
        known = sorted(p.name for p in examples.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))) if examples.is_dir() else []
        also = f", nor an example bot ({', '.join(known)})" if known else ""
        raise ArenaError(f"{what} {text!r}: no such bot (not a file or folder{also})")
    try:
        return find_bot(path)
    except BotError as exc:
        raise ArenaError(f"{what} {text!r}: {exc}") from None


def check_names(a: BotManifest, b: BotManifest, opponents: Sequence[BotManifest]) -> None:
    """A and B must be two bots of two names; an opponent may be A or B itself (the same
    files), but not another bot of one of their names."""
    if a.path == b.path or (a.name == b.name and a.content_hash == b.content_hash):
        raise ArenaError(
            f"A and B are the same bot ({a.name}, {a.path}): to test a bot against itself, copy it and give the "
            "copy another name in its bot.toml"
        )
    if a.name == b.name:
        raise ArenaError(
            f"A ({a.path}) and B ({b.path}) are both named {a.name!r}: give one of them another name in its bot.toml, "
            "so that their games and ratings never mix"
        )
    seen = {a.name: a, b.name: b}
    for m in opponents:
        other = seen.get(m.name)
        if other is not None and other.content_hash != m.content_hash:
            raise ArenaError(
                f"--opponent {m.path}: named {m.name!r} like {other.path}, but a different bot: give it another name "
                "in its bot.toml"
            )
        seen.setdefault(m.name, m)


def match_id(
    a: BotManifest, b: BotManifest, opponents: Sequence[BotManifest], players: int, variant: str, seed: int,
    ts: TimeSettings,
) -> str:
    """The match's tournament id: the bots' names (for a reader) and a hash of everything
    that decides its games (bots' identities, format, seed, time settings)."""
    decided = {
        "a": seat_identity(a.name, a.content_hash),
        "b": seat_identity(b.name, b.content_hash),
        "opponents": [seat_identity(m.name, m.content_hash) for m in opponents],
        "players": players,
        "variant": variant,
        "seed": seed,
        "time": time_dict(ts),
    }
    digest = hashlib.blake2b(json.dumps(decided, sort_keys=True).encode(), digest_size=3).hexdigest()
    return f"match-{b.name}-vs-{a.name}-{players}p-{variant}-{digest}"
