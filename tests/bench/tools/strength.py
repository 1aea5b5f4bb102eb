"""Measure bots' strength: many games through the real referee, win shares with 95% intervals.

    python3 tests/bench/tools/strength.py example_bots/mcts example_bots/greedy --games 200
    python3 tests/bench/tools/strength.py example_bots/{random,greedy,mcts,minimal} --games 200
    python3 tests/bench/tools/strength.py A B --players 2 --variant dummy --games 100 --json

One bot per seat: every deal is played once in each rotation of the bots round the
table, so each bot sits in every seat equally and meets the same cards (on odd deals
the order round the table is reversed, so who passes to whom changes too).
``--games`` is rounded up to a multiple of the number of bots.
Bot processes are started once (built if their bot.toml says so) and reused for
every game, one game at a time, with the referee's default time budgets unless
told otherwise.

A win is a first place; a first place shared by k bots counts 1/k for each. The
interval is Wilson's 95% score interval over games (the rotations of one deal are
not independent, so it is a little optimistic). Also shown per bot: the mean
score, faults, and its decision times as the referee measured them (median, 99th
percentile and worst; on a busy machine the worst says more about the machine).
Exit status 1 if any game was void or a bot faulted.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[3]  # the repository: tests/bench/tools/ is three below it
sys.path.insert(0, str(ROOT))

from arena.bots import BotError  # noqa: E402
from arena.bots.manifest import find_bot  # noqa: E402
from arena.bots.prepare import prepare_bot
from arena.engine import GameConfig  # noqa: E402
from arena.game.players import TimeSettings, open_pool  # noqa: E402
from arena.game.referee import play_game  # noqa: E402
from arena.game.record import GameRecord


@dataclass
class Tally:
    name: str
    games: int = 0
    wins: float = 0.0
    score: float = 0.0
    faults: int = 0
    decision_ms: list[float] = field(default_factory=list)  # every decision, as the referee timed it

    def share(self) -> tuple[float, float, float]:
        return (self.wins / self.games, *wilson(self.wins, self.games)) if self.games else (0.0, 0.0, 0.0)

    def row(self) -> dict[str, object]:
        share, low, high = self.share()
        return {
            "bot": self.name,
            "games": self.games,
            "wins": self.wins,
            "win_share": round(share, 4),
            "ci95": [round(low, 4), round(high, 4)],
            "mean_score": round(self.score / max(1, self.games), 2),
            "faults": self.faults,
            "decisions": len(self.decision_ms),
            "decision_ms": {q: round(percentile(self.decision_ms, p), 2) for q, p in (("median", 50), ("p99", 99), ("max", 100))},
        }


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``wins / n``."""
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def seating(deal: int, rotation: int, bots: int) -> list[int]:
    """Which bot (an index into the list given) sits at each seat: the bots in the order
    given round the table, turned ``rotation`` seats; on odd deals in the reverse order,
    so that who passes to whom changes too."""
    if deal % 2:
        return [(rotation - seat) % bots for seat in range(bots)]
    return [(seat + rotation) % bots for seat in range(bots)]


async def run_match(
    paths: list[Path], config: GameConfig, games: int, seed: int, ts: TimeSettings, build_cache: Path, progress: bool
) -> tuple[list[Tally], list[GameRecord]]:
    manifests = [find_bot(p) for p in paths]
    specs = [prepare_bot(m, build_cache) for m in manifests]
    names = [m.name if [x.name for x in manifests].count(m.name) == 1 else f"{m.name}#{i}" for i, m in enumerate(manifests)]
    tallies = [Tally(n) for n in names]
    bad: list[GameRecord] = []
    rotations = len(paths)
    deals = -(-games // rotations)
    started = time.monotonic()
    async with open_pool() as pool:
        players = [pool.player(s, version=m.version, content_hash=m.content_hash) for s, m in zip(specs, manifests, strict=True)]
        for deal in range(deals):
            for rotation in range(rotations):
                seats = seating(deal, rotation, len(paths))
                record = await play_game([players[b] for b in seats], config, seed + deal, time_settings=ts)
                if record.status != "complete" or any(sum(f.values()) for f in record.faults):
                    bad.append(record)
                if record.status != "complete":
                    continue
                first = [s for s in range(config.players) if record.ranks[s] == 1]
                for s, b in enumerate(seats):
                    t = tallies[b]
                    t.games += 1
                    t.wins += 1 / len(first) if s in first else 0.0
                    t.score += record.scores[s]
                    t.faults += sum(record.faults[s].values())
                for turn in record.replay.turns:
                    for action in turn.actions:
                        if action.elapsed_ms is not None and action.seat < config.players:
                            tallies[seats[action.seat]].decision_ms.append(action.elapsed_ms)
            tty = sys.stderr.isatty()
            if progress and (tty or (deal + 1) % max(1, deals // 10) == 0 or deal + 1 == deals):
                done = (deal + 1) * rotations
                shares = "  ".join(f"{t.name} {t.wins / max(1, t.games):.3f}" for t in tallies)
                line = f"{done}/{deals * rotations} games, {time.monotonic() - started:.0f} s: {shares}"
                print(f"\r{line}" if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)
    if progress and sys.stderr.isatty():
        print(file=sys.stderr)
    return tallies, bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bots", nargs="+", type=Path, help="bot folders or files, as for `arena play`")
    parser.add_argument("--games", type=int, default=200, help="games to play (rounded up to whole rotations)")
    parser.add_argument("--players", type=int, help="players per game (default: one per bot given)")
    parser.add_argument("--variant", default="standard", choices=["standard", "alternate", "dummy"])
    parser.add_argument("--seed", type=int, default=1, help="seed of the first deal; deal k uses seed + k")
    parser.add_argument("--turn-ms", type=int, default=TimeSettings().turn_ms)
    parser.add_argument("--bank-ms", type=int, default=TimeSettings().bank_ms)
    parser.add_argument("--build-cache", type=Path, default=ROOT / "results" / "build")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    args = parser.parse_args(argv)
    players = args.players or len(args.bots)
    if players != len(args.bots):
        parser.error(f"{len(args.bots)} bots for {players}-player games: give one bot per seat")
    try:
        config = GameConfig(players, args.variant)
    except ValueError as exc:
        parser.error(str(exc))
    if args.games < 1:
        parser.error("--games must be at least 1")
    ts = TimeSettings(turn_ms=args.turn_ms, bank_ms=args.bank_ms)
    try:
        tallies, bad = trio.run(run_match, args.bots, config, args.games, args.seed, ts, args.build_cache, not args.quiet)
    except BotError as exc:
        print(f"strength: {exc}", file=sys.stderr)
        return 1
    rows = [t.row() for t in tallies]
    if args.json:
        print(json.dumps({"players": players, "variant": args.variant, "seed": args.seed, "bots": rows,
                          "problems": [problem(r) for r in bad]}))
    else:
        print(f"{players}-player {args.variant}, {tallies[0].games} games each, seeds from {args.seed}")
        print(f"{'bot':<12} {'wins':>6} {'share':>6}  {'95% interval':<15} {'score':>6} {'faults':>6}  decision ms: median, p99, max")
        for r in rows:
            low, high = r["ci95"]  # type: ignore[misc]
            ms = r["decision_ms"]  # type: ignore[index]
            print(f"{r['bot']:<12} {r['wins']:>6g} {r['win_share']:>6.3f}  [{low:.3f}, {high:.3f}]  "
                  f"{r['mean_score']:>6} {r['faults']:>6}  {ms['median']:>7.1f} {ms['p99']:>7.1f} {ms['max']:>7.1f}")
        for r in bad:
            print(f"problem: {problem(r)}", file=sys.stderr)
    return 1 if bad else 0


def problem(record: GameRecord) -> str:
    if record.status != "complete":
        return f"game {record.game_id} (seed {record.seed}) void: {record.void_reason.splitlines()[0]}"
    faulted = {record.bots[s]: f for s, f in enumerate(record.faults) if sum(f.values())}
    return f"game {record.game_id} (seed {record.seed}): faults {faulted}"


if __name__ == "__main__":
    sys.exit(main())
