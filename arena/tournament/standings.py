"""Leaderboards from the store: the rows `arena leaderboard`, `arena run` and the report
show, as plain data (the CLI draws them; ``--json`` prints them).

Ratings are per format (player count and variant): a leaderboard is built from the
games of one format only, the tournament's unless another is asked for.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.store.database import BotRow, GameRow, Store, TournamentRow
from arena.store.errors import StoreError, os_error_text
from arena.text import LINE_LIMIT, NAME_LIMIT, plural, printable
from arena.tournament.ratings import GameResult, head_to_head, leaderboard


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
        return out


def results_of(games: Sequence[GameRow]) -> list[GameResult]:
    """The store's games as the ratings module takes them (bot versions as keys)."""
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
    of every game of that format in the store (the ladder's whole history)."""
    t = pick_tournament(store, tournament_id, players, variant) if not all_games or players is None else None
    fmt_players = players if players is not None else t.players  # type: ignore[union-attr]
    fmt_variant = variant if variant is not None else (t.variant if t else "standard")
    results, versions, usage = _rated(
        store, None if all_games else t.id, players=fmt_players, variant=fmt_variant,  # type: ignore[union-attr]
        entrants=None if all_games else store.entrant_ids(t.id),  # type: ignore[union-attr]
    )
    rows = []
    if results:
        if anchor is not None:
            anchor = (_resolve_key(anchor[0], versions), anchor[1])
        for row in leaderboard(results, bootstrap=bootstrap, seed=seed, anchor=anchor):
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
        for (a, b), (w, d, lo) in head_to_head(results).items():
            matrix.setdefault(a, {})[b] = [w, d, lo]
    skipped = store.skipped(t.id) if t is not None and not all_games else []
    if t is not None and not all_games:
        skipped += _not_played(store, t.id, {r["bot"] for r in rows})
    return Standings(None if all_games else t.id, fmt_players, fmt_variant, len(results), rows, skipped, matrix)  # type: ignore[union-attr]


def _rated(
    store: Store, tournament_id: str | None, *, players: int, variant: str, entrants: set[int] | None
) -> tuple[list[GameResult], dict[str, BotRow], dict[str, dict[str, float | None]]]:
    """The games a leaderboard rates, read lean (no replay, seed or timing columns): as the
    ratings take them, the bot version of every key, and per key the mean CPU milliseconds
    per game and the highest peak memory (MiB) where its sandbox measured them (None: never).
    With ``entrants`` (a tournament's latest bot versions), only the games among them, as
    :func:`current_games` picks them (every game if there are none)."""
    bots = store.bots()
    results: list[GameResult] = []
    versions: dict[str, BotRow] = {}
    cpu: dict[str, list[float]] = {}
    peak: dict[str, float] = {}

    def close(game_id: str, set_id: str, seats: list[tuple]) -> None:
        if entrants and not all(seat[2] in entrants for seat in seats):
            return
        keys = []
        for seat in seats:
            bot = bots[seat[2]]
            key = bot.key
            versions.setdefault(key, bot)
            keys.append(key)
            if seat[7] is not None:
                cpu.setdefault(key, []).append(seat[7])
            if seat[8] is not None:
                peak[key] = max(peak.get(key, 0.0), seat[8])
        results.append(
            GameResult(
                game_id=game_id,
                set_id=set_id,
                seats=tuple(keys),
                ranks=tuple(seat[3] for seat in seats),
                points=tuple(seat[4] for seat in seats),
                autopilot=tuple(seat[5] for seat in seats),
                faults=tuple(seat[6] for seat in seats),
            )
        )

    current: list[tuple] = []
    for seat in store.rated_seats(tournament_id, players=players, variant=variant):
        if current and seat[0] != current[0][0]:
            close(current[0][0], current[0][1], current)
            current = []
        current.append(seat)
    if current:
        close(current[0][0], current[0][1], current)
    usage = {
        k: {
            "cpu_ms": round(sum(cpu[k]) / len(cpu[k]), 1) if k in cpu else None,
            "peak_mb": round(peak[k], 1) if k in peak else None,
        }
        for k in set(cpu) | set(peak)
    }
    return results, versions, usage


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
