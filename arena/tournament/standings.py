"""Leaderboards from the store: the rows `arena leaderboard`, `arena run` and the report
show, as plain data (the CLI draws them; ``--json`` prints them).

Ratings are per format (player count and variant): a leaderboard is built from the
games of one format only, the tournament's unless another is asked for.

A leaderboard is computed once per state of the store: the rated part (rows, games,
head-to-head) is kept in the store beside what it depends on (:meth:`Store.standings_key`,
and a digest of the options asked), and read back while they match. A kept document that
does not decode, strictly, to what this arena writes, or is too large, is ignored and
computed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from arena import __version__
from arena.errors import ArenaError
from arena.store.database import BotRow, GameRow, Store, TournamentRow
from arena.store.errors import StoreError, os_error_text, rebuild_hint
from arena.text import LINE_LIMIT, NAME_LIMIT, plural, printable

if TYPE_CHECKING:
    from arena.tournament.ratings import GameResult, ResultColumns

# The ratings (and numpy, which they import) are imported where a leaderboard is computed:
# a kept one is read without them, and `arena leaderboard` starts that much sooner.

#: A kept standings document larger than this is not read (a store's cache is no one's
#: to trust: 200 bots' rows and head-to-head take about 1 MiB).
CACHE_LIMIT = 32 * 1024 * 1024
#: Changes when the document's layout or the way it is computed does: older ones then miss.
CACHE_FORMAT = 1

@dataclass(frozen=True, slots=True)
class Standings:
    """One leaderboard: what it covers, its rows (sorted by rank) and the skipped bots."""

    tournament: str | None  # None: every game of the format in the store
    players: int
    variant: str
    games: int
    rows: list[dict[str, Any]]
    skipped: list[dict[str, str]]
    h2h: dict[str, dict[str, list[float]]] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tournament": self.tournament,
            "format": {"players": self.players, "variant": self.variant},
            "games": self.games,
            "rows": self.rows,
            "skipped": self.skipped,
        }
        if self.h2h is not None:
            out["h2h"] = self.h2h
            out["h2h_los"] = self.h2h_los()
        return out

    def h2h_los(self) -> dict[str, dict[str, float]]:
        """Per pair of bots of the head to head, the likelihood that the row bot is the better
        (:func:`los_from_counts` of its wins, draws and losses against the column bot)."""
        from arena.tournament.ratings import los_from_counts

        return {
            a: {b: round(los_from_counts(*wdl), 4) for b, wdl in row.items()} for a, row in (self.h2h or {}).items()
        }


def results_of(games: Sequence[GameRow]) -> list[GameResult]:
    """The store's games as the ratings module takes them (bot versions as keys)."""
    from arena.tournament.ratings import GameResult

    return [
        GameResult(
            game_id=g.id,
            set_id=g.set_id,
            seats=tuple(s.bot.key for s in g.seats),
            ranks=tuple(s.rank for s in g.seats),
            points=tuple(s.points for s in g.seats),
            autopilot=tuple(s.autopilot for s in g.seats),
            faults=tuple(s.faults for s in g.seats),
        )
        for g in games
    ]


def current_games(store: Store, tournament_id: str, games: Sequence[GameRow]) -> list[GameRow]:
    """The tournament's games among the bot versions of its latest run: a bot whose files
    changed since is a new version, and the old version's games leave the tournament's
    table (they stay in the history: ``arena leaderboard --all``). Every game, if the
    tournament has no recorded entrants."""
    ids = store.entrant_ids(tournament_id)
    if not ids:
        return list(games)
    return [g for g in games if all(s.bot.id in ids for s in g.seats)]


def _not_played(store: Store, tournament_id: str, shown: set[str]) -> list[dict[str, str]]:
    """The tournament's entrants that have no row in its table, each with the reason: a
    bot is never missing from a leaderboard without a word."""
    missing = []
    for e in store.entrants(tournament_id):
        if e["bot"] in shown:
            continue
        void = len(store.games(tournament_id, status="void", bot=e["bot"]))
        if void:
            reason = f"every game it sat in was void ({void})"
        else:
            reason = "no game of it is recorded yet (the run stopped before its games; the same command plays them)"
        missing.append({**e, "reason": reason, "status": "not ranked"})
    return missing


def pick_tournament(
    store: Store, tournament_id: str | None, players: int | None = None, variant: str | None = None
) -> TournamentRow:
    """The tournament asked for, or the latest one (of that format, if one is given)."""
    if tournament_id is None and (players is not None or variant is not None):
        fitting = [
            t for t in store.tournaments()
            if (players is None or t.players == players) and (variant is None or t.variant == variant)
        ]
        if not fitting:
            fmt = f"{players or 'any'} players, {variant or 'any variant'}"
            raise ArenaError(f"{store.path}: no tournament of this format ({fmt})")
        return fitting[-1]
    if tournament_id is not None:
        t = store.get_tournament(tournament_id)
        if t is None:
            known = ", ".join(x.id for x in store.tournaments()) or "none"
            raise ArenaError(f"{store.path}: no tournament {tournament_id!r} (known: {known})")
        return t
    t = store.latest_tournament()
    if t is None:
        raise ArenaError(f"{store.path}: no tournament recorded yet (run `arena run --bots DIR` first)")
    return t


def standings(
    store: Store,
    tournament_id: str | None = None,
    *,
    all_games: bool = False,
    players: int | None = None,
    variant: str | None = None,
    h2h: bool = False,
    bootstrap: int = 200,
    seed: int = 0,
    anchor: tuple[str, float] | None = None,
) -> Standings:
    """The leaderboard of a tournament (default: the latest one), or with ``all_games``
    of every game of that format in the store (the ladder's whole history).

    Read from the store's cache when nothing it depends on has changed since it was computed
    (the games, the tournament's entrants, the options); else computed, and kept when the
    store may be written (one opened read-only computes and writes nothing)."""
    t = pick_tournament(store, tournament_id, players, variant) if not all_games or players is None else None
    fmt_players = players if players is not None else t.players  # type: ignore[union-attr]
    fmt_variant = variant if variant is not None else (t.variant if t else "standard")
    scope = None if all_games else t.id  # type: ignore[union-attr]
    entrants = None if all_games else store.entrant_ids(t.id)  # type: ignore[union-attr]
    options = _options_digest(
        players=fmt_players, variant=fmt_variant, entrants=sorted(entrants or ()), h2h=h2h, bootstrap=bootstrap,
        seed=seed, anchor=list(anchor) if anchor is not None else None,
    )
    key = store.standings_key(scope)
    cached = _decode(store.cached_standings(scope, options, key, CACHE_LIMIT))
    if cached is not None:
        games, rows, matrix = cached.games, [msgspec.structs.asdict(r) for r in cached.rows], cached.h2h
    else:
        games, rows, matrix = _compute(
            store, scope, players=fmt_players, variant=fmt_variant, entrants=entrants, h2h=h2h, bootstrap=bootstrap,
            seed=seed, anchor=anchor,
        )
        document = _CACHED.encode(_Cached(games, [_CachedRow(**r) for r in rows], matrix))
        if len(document) <= CACHE_LIMIT:
            store.cache_standings(scope, options, key, document)
    skipped = store.skipped(t.id) if t is not None and not all_games else []
    if t is not None and not all_games:
        skipped += _not_played(store, t.id, {r["bot"] for r in rows})
    return Standings(scope, fmt_players, fmt_variant, games, rows, skipped, matrix)


def _compute(
    store: Store, scope: str | None, *, players: int, variant: str, entrants: set[int] | None, h2h: bool,
    bootstrap: int, seed: int, anchor: tuple[str, float] | None,
) -> tuple[int, list[dict[str, Any]], dict[str, dict[str, list[float]]] | None]:
    """The rated part of a leaderboard, computed: the number of games, the rows, the
    head-to-head matrix (with ``h2h``)."""
    from arena.tournament.ratings import head_to_head

    cols, versions, usage = _rated(store, scope, players=players, variant=variant, entrants=entrants)
    rows = []
    if cols.games:
        if anchor is not None:
            anchor = (_resolve_key(anchor[0], versions), anchor[1])
        for row in leaderboard(cols, bootstrap=bootstrap, seed=seed, anchor=anchor):
            bot = versions[row.bot]
            rows.append(
                {
                    "rank": row.rank,
                    "bot": bot.name,
                    "version": bot.version,
                    "hash": bot.hash,
                    "key": row.bot,
                    "elo": round(row.elo, 1),
                    "elo_low": round(row.low, 1),
                    "elo_high": round(row.high, 1),
                    "games": row.games,
                    "wins": round(row.wins, 3),
                    "win_share": round(row.win_share, 4),
                    "mean_points": round(row.mean_points, 2),
                    "mean_rank": round(row.mean_rank, 3),
                    "points_vs_table": round(row.points_vs_table, 2),
                    "faults": dict(sorted(row.faults.items())),
                    **usage.get(row.bot, {"cpu_ms": None, "peak_mb": None}),
                }
            )
    # Two versions of one bot: show the hash so that the rows can be told apart.
    names = [r["bot"] for r in rows]
    for r in rows:
        r["label"] = r["key"] if names.count(r["bot"]) > 1 else r["bot"]
    matrix = None
    if h2h:
        matrix = {}
        for (a, b), (w, d, lo) in head_to_head(cols).items():
            matrix.setdefault(a, {})[b] = [w, d, lo]
    return cols.games, rows, matrix


def leaderboard(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - the ratings' own
    """:func:`arena.tournament.ratings.leaderboard` (the fit and its bootstrap), imported when a
    leaderboard is computed."""
    from arena.tournament.ratings import leaderboard as fit

    return fit(*args, **kwargs)


def _options_digest(**options: Any) -> str:
    """What a kept leaderboard was asked with, as a short digest (with the arena's version and
    the document's format: another arena computes its own)."""
    text = json.dumps({**options, "arena": __version__, "format": CACHE_FORMAT}, sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


class _CachedRow(msgspec.Struct, forbid_unknown_fields=True):
    """A leaderboard row as kept: the fields of a row, in its order."""

    rank: int
    bot: str
    version: str
    hash: str
    key: str
    elo: float
    elo_low: float
    elo_high: float
    games: int
    wins: float
    win_share: float
    mean_points: float
    mean_rank: float
    points_vs_table: float
    faults: dict[str, int]
    cpu_ms: float | None
    peak_mb: float | None
    label: str


class _Cached(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    games: int
    rows: list[_CachedRow]
    h2h: dict[str, dict[str, list[float]]] | None


# MessagePack keeps every float as it is (NaN too: an interval without bootstrap).
_CACHED = msgspec.msgpack.Encoder()
_CACHED_DECODER = msgspec.msgpack.Decoder(_Cached)


def _decode(document: bytes | None) -> _Cached | None:
    """A kept document, or None if there is none or it is not exactly what this arena writes."""
    if document is None:
        return None
    try:
        cached = _CACHED_DECODER.decode(document)
    except msgspec.DecodeError:  # its ValidationError too
        return None
    if cached.games < 0 or [r.rank for r in cached.rows] != list(range(1, len(cached.rows) + 1)):
        return None
    return cached


def _rated(
    store: Store, tournament_id: str | None, *, players: int, variant: str, entrants: set[int] | None
) -> tuple[ResultColumns, dict[str, BotRow], dict[str, dict[str, float | None]]]:
    """The games a leaderboard rates, read lean (no replay, seed or timing columns; columns,
    not an object per seat): as the ratings take them, the bot version of every key, and per
    key the mean CPU milliseconds per game and the highest peak memory (MiB) where its
    sandbox measured them (None: never). With ``entrants`` (a tournament's latest bot
    versions), only the games among them, as :func:`current_games` picks them (every game if
    there are none)."""
    from arena.tournament.ratings import ResultColumns, usage_by_bot

    (first_set, bot, rank, points, autopilot, cpu, peak), faults = store.rated_columns(
        tournament_id, players=players, variant=variant
    )
    bots = store.bots()
    unknown = set(bot) - set(bots)
    if unknown:
        raise StoreError(
            f"{store.path}: the database is damaged (a seat of bot id {min(unknown)}, which has no bot row); "
            f"{rebuild_hint(store.root)}"
        )
    cols, seen, (cpu_kept, peak_kept) = ResultColumns.of_seat_columns(
        first_set=first_set, bot=bot, rank=rank, points=points, autopilot=autopilot, faults=faults,
        keys={i: b.key for i, b in bots.items()}, entrants=entrants, values=(cpu, peak),
    )
    versions: dict[str, BotRow] = {}
    for bot_id in seen:  # a key's version: its first seat's, in game order
        versions.setdefault(bots[bot_id].key, bots[bot_id])
    usage = {
        key: {
            "cpu_ms": round(mean, 1) if mean is not None else None,
            "peak_mb": round(top, 1) if top is not None else None,
        }
        for key, (mean, top) in usage_by_bot(cols, cpu_kept, peak_kept).items()
    }
    return cols, versions, usage


def _resolve_key(name: str, versions: dict[str, Any]) -> str:
    if name in versions:
        return name
    matches = [k for k, b in versions.items() if b.name == name]
    if not matches:
        raise ArenaError(f"--anchor: no bot {name!r} in these games (bots: {', '.join(sorted(versions))})")
    if len(matches) > 1:
        raise ArenaError(f"--anchor: {name!r} has several versions here ({', '.join(matches)}): name one")
    return matches[0]


def _md(text: str, limit: int = NAME_LIMIT) -> str:
    """Text from a bot or the store as Markdown that stays where it is put: one printable
    line (no control character reaches whoever reads the file in a terminal, no newline
    or ``|`` leaves its table cell)."""
    return _MD_ESCAPED.sub(r"\\\\", printable(text, limit=limit)).replace("|", "\\|")


# A backslash that Markdown would read as escaping the punctuation after it.
_MD_ESCAPED = re.compile(r"\\(?=[!-/:-@\[-`{-~])")


def markdown(st: Standings) -> str:
    """The leaderboard as a Markdown table (written beside the database). What came from
    the bots (names, versions, the reasons a bot was skipped) is shown printable."""
    title = f"# Leaderboard: {_md(st.tournament or 'all games', LINE_LIMIT)}\n\n"
    head = f"{st.players} players, {_md(st.variant)}, {plural(st.games, 'game')}.\n\n"
    lines = [
        "| # | bot | version | Elo | 95% interval | games | wins | mean points | mean rank | CPU ms/game | peak MB | faults |",
        "|--:|:----|:--------|----:|:------------:|------:|-----:|------------:|----------:|------------:|--------:|:-------|",
    ]
    for r in st.rows:
        lines.append(
            f"| {r['rank']} | {_md(r['label'])} | {_md(r['version'])} | {r['elo']:.0f} | {r['elo_low']:.0f} – {r['elo_high']:.0f} "
            f"| {r['games']} | {r['wins']:g} | {r['mean_points']:.1f} | {r['mean_rank']:.2f} "
            f"| {_num(r.get('cpu_ms'))} | {_num(r.get('peak_mb'))} | {fault_summary(r['faults'])} |"
        )
    text = title + head + "\n".join(lines) + "\n"
    if st.skipped:
        text += "\nNot in the table:\n\n" + "".join(
            f"- {_md(s['bot'])} ({s.get('status', 'skipped')}): {_md(s['reason'], LINE_LIMIT)}\n" for s in st.skipped
        )
    return text


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def fault_summary(faults: dict[str, int]) -> str:
    """``"0"``, or the total and the count of each kind: ``"3 (crash 2, timeout 1)"``."""
    total = sum(faults.values())
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(faults.items()) if v)
    return f"{total} ({kinds})" if total else "0"


def write_leaderboard_files(st: Standings, folder: Path) -> tuple[Path, Path]:
    """leaderboard.json and leaderboard.md beside the database, written atomically."""
    paths = []
    for name, text in (("leaderboard.json", json.dumps(st.to_dict(), indent=2) + "\n"), ("leaderboard.md", markdown(st))):
        path = folder / name
        tmp = folder / f".{name}.tmp"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise StoreError(f"{path}: cannot write the leaderboard: {os_error_text(exc)} (the games are recorded)") from None
        paths.append(path)
    return paths[0], paths[1]
