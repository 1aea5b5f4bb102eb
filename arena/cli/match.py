"""`arena match A B`: is B better than A? (arena.match does the work; this gathers the options,
shows a status line after every pair and prints the verdict.)"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.live import Live
from rich.markup import escape
from rich.text import Text

from arena.cli.console import err, out, say_waiting
from arena.cli.options import JsonOption, SandboxOption, sandbox_settings, with_time_options
from arena.engine import Variant
from arena.errors import ArenaError
from arena.text import NAME_LIMIT, printable

if TYPE_CHECKING:
    from rich.console import Console

    from arena.bench.match import MatchBench
    from arena.game.players import TimeSettings
    from arena.match.progress import MatchPlan, MatchStatus, MatchSummary
    from arena.runs.common import Entrant


def _elo(value: float) -> str:
    """An Elo with its sign (every figure of the estimate is finite: see arena.match.stats.estimate)."""
    return f"{round(value, 1) + 0.0:+.1f}"  # (+ 0.0: never "-0.0")


def status_text(status: MatchStatus) -> str:
    """One line: pairs, LLR and its bounds, Elo with its 95% interval, LOS."""
    e = status.estimate
    return (
        f"pair {status.pairs}/{status.max_pairs} · LLR {status.llr:+.2f} ({status.lower:+.2f}, {status.upper:+.2f}) · "
        f"Elo {_elo(e.elo)} [{_elo(e.elo_low)}, {_elo(e.elo_high)}] · nElo {_elo(e.nelo)} · "
        f"LOS {100 * e.los:.1f}% · {status.verdict}"
    )


class MatchConsoleReporter:
    """A match's progress on stderr: a status line redrawn after every pair on a terminal,
    a plain line per pair otherwise; nothing with ``quiet``."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet
        self.fancy = err.is_terminal and not quiet
        self.live: Live | None = None
        self.t0 = time.monotonic()

    def bot_ready(self, bot: Entrant) -> None:
        if self.quiet:
            return
        version = printable(bot.manifest.version or bot.row.hash[:8], limit=NAME_LIMIT)
        name = printable(bot.name, limit=NAME_LIMIT)
        err.print(
            f"[green]✓[/green] {escape(name)} [dim]{escape(version)} · started in {bot.startup_ms:.0f} ms[/dim]",
            highlight=False,
        )

    def planned(self, plan: MatchPlan) -> None:
        self.t0 = time.monotonic()
        if self.quiet:
            return
        field = f" against {', '.join(plan.opponents)}" if plan.opponents else ""
        test = f"SPRT {plan.sprt.text()}" if plan.sprt is not None else f"{plan.max_pairs} pairs (no --sprt)"
        err.print(
            f"match [bold]{escape(plan.match_id)}[/bold]: B {escape(plan.b)} vs A {escape(plan.a)}{escape(field)}, "
            f"{plan.players} players, {plan.variant}; {escape(test)}; at most {plan.max_pairs} pairs "
            f"({plan.counted} already in the store), {plan.jobs} game(s) at a time",
            highlight=False,
        )
        if self.fancy:
            self.live = Live(Text("waiting for the first pair…"), console=err, refresh_per_second=8, transient=True)
            self.live.start()

    def pair_done(self, status: MatchStatus) -> None:
        if self.quiet:
            return
        line = status_text(status)
        if self.live is not None:
            rate = status.pairs / max(1e-9, time.monotonic() - self.t0)
            self.live.update(Text(f"{line} · {rate:.2f} pairs/s"), refresh=True)  # drawn now, not at the next tick
        else:
            err.print(line, highlight=False, markup=False)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


def _verdict_words(summary: MatchSummary) -> str:
    spec = summary.sprt
    v = summary.status.verdict
    unit = "normalized Elo" if spec is None or spec.model == "normalized" else "Elo"
    judge = spec if spec is not None else None
    if v == "H1":
        elo1 = judge.elo1 if judge is not None else 10.0
        return f"H1: {summary.b} is better than {summary.a} (by at least {elo1:g} {unit}, as the test asked)"
    if v == "H0":
        elo1 = judge.elo1 if judge is not None else 10.0
        return f"H0: {summary.b} is not better than {summary.a} by {elo1:g} {unit} (the test's elo1)"
    if summary.interrupted:
        return "none yet: the match was stopped before the test decided"
    return f"none: no verdict after {summary.status.pairs} pairs (the --games cap)"


def print_match(summary: MatchSummary, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary.to_dict()))
        return
    s, e = summary.status, summary.status.estimate
    field = f" against {', '.join(summary.opponents)}" if summary.opponents else ""
    out.print(
        f"[bold]{escape(summary.match_id)}[/bold] · B {escape(summary.b)} vs A {escape(summary.a)}{escape(field)} · "
        f"{summary.players} players, {summary.variant}",
        highlight=False,
    )
    out.print(f"verdict  {escape(_verdict_words(summary))}", highlight=False)
    out.print(
        f"LLR      {s.llr:+.3f} (H0 at {s.lower:+.3f}, H1 at {s.upper:+.3f}) · {s.pairs} pairs, {2 * s.pairs} games",
        highlight=False,
    )
    out.print(
        f"Elo      {_elo(e.elo)} (95%: {_elo(e.elo_low)} to {_elo(e.elo_high)}) · normalized "
        f"{_elo(e.nelo)} · LOS {100 * e.los:.1f}% · B's mean pair score {e.score:.3f}",
        highlight=False,
    )
    if e.adjusted:
        same = "exactly ½ (B did what A did in every game)" if e.score == 0.5 else f"{e.score:.3f}"
        out.print(
            f"note     every pair's result was {same}: no spread to measure, so Elo, its interval and LOS are "
            "those of the pairs with half a pair won and half a pair lost added (docs/match.md)",
            highlight=False,
        )
    steps = len(summary.counts) - 1
    cells = " ".join(f"{j / steps:.2f}:{c}" for j, c in enumerate(summary.counts) if c)
    out.print(f"pairs    by B's pair score (½ = as good as A): {cells or 'none yet'}", highlight=False)
    extra = f", {summary.recovered} recovered from replay files" if summary.recovered else ""
    err.print(
        f"{summary.played} game(s) played now, {summary.already} pair(s) already in the store{extra}, in "
        f"{summary.seconds:.1f} s · results in {escape(str(summary.results))} (`arena games -t {escape(summary.match_id)}`)",
        highlight=False,
    )


@with_time_options
def match_command(
    a: Annotated[str, typer.Argument(help="A, the bot to beat: a bot's folder or file, or an example bot's name.", metavar="A")],
    b: Annotated[str, typer.Argument(help="B, the candidate: is it better than A?", metavar="B")],
    opponent: Annotated[
        list[str] | None,
        typer.Option("--opponent", "-o", help="With 3 to 5 players, the bots at the table besides A or B (repeatable; cycled over the seats). Default: the example greedy and random bots."),
    ] = None,
    players: Annotated[int, typer.Option("--players", "-p", min=2, max=5, help="Seats per game.")] = 2,
    variant: Annotated[Variant, typer.Option(help="Rules variant.")] = Variant.STANDARD,
    sprt: Annotated[
        str | None,
        typer.Option(help="Stop as soon as the answer is clear: KEY=VALUE pairs joined by commas, of elo0 (default 0), elo1 (10), alpha (0.05), beta (0.05) and model (normalized, or logistic): the Elo of B over A. Without it, a fixed number of games.",
            metavar="elo0=0,elo1=10,..."),
    ] = None,
    games: Annotated[
        int | None,
        typer.Option(min=2, help="Games (two per pair): the number to play without --sprt (default 200), the cap with it (default 10000)."),
    ] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, help="Games at once (default: cores ÷ seats, at least 1).")] = None,
    seed: Annotated[int, typer.Option(min=0, help="The match's seed: same seed and bots, same deals and games.")] = 0,
    results: Annotated[Path, typer.Option("--results", "-r", help="The results folder.")] = Path("results"),
    sandbox: SandboxOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    json_output: JsonOption = False,
    *,
    times: TimeSettings,
) -> None:
    """Is B better than A? Pairs of games on the same deal (B in A's seat), scored as
    pairs and tested with an SPRT; resumable (run the same command again)."""
    from arena.match.runner import MatchSettings, check_settings, run_match
    from arena.match.stats import parse_sprt

    spec = None
    if sprt is not None:
        try:
            spec = parse_sprt(sprt)
        except ValueError as exc:
            raise ArenaError(str(exc)) from None
    level = sandbox_settings(sandbox)
    settings = MatchSettings(
        a=a, b=b, opponents=tuple(opponent or ()), players=players, variant=variant, sprt=spec, games=games,
        seed=seed, jobs=jobs, time=times, results=results, sandbox=level,
    )
    check_settings(settings)
    reporter = MatchConsoleReporter(quiet=quiet or json_output)
    try:
        summary = run_match(settings, reporter, on_wait=say_waiting)
    except KeyboardInterrupt:
        reporter.close()
        err.print("\n[yellow]interrupted[/yellow] before the games started; nothing was lost.", highlight=False)
        raise typer.Exit(130) from None
    finally:
        reporter.close()
    print_match(summary, as_json=json_output)
    if summary.interrupted:
        err.print(
            f"[yellow]interrupted:[/yellow] {summary.status.pairs} pair(s) counted and every finished game is safe in "
            "the store; run the same command again to resume the test.",
            highlight=False,
        )
        raise typer.Exit(130)


def print_bench_match(console: Console, r: MatchBench, *, as_json: bool) -> None:
    """`arena bench match`: the two designs side by side, and the ratio."""
    if as_json:
        print(json.dumps(r.to_dict()))
        return

    def games(value: float | None) -> str:
        return "∞ (no difference to resolve)" if value is None else f"{value:,.0f}"

    field = f" against {', '.join(r.opponents)}" if r.opponents else ""
    console.print(
        f"B {escape(r.b)} vs A {escape(r.a)}{escape(field)}, {r.players} players: {r.pairs} pairs in {r.seconds:.1f} s",
        highlight=False,
    )
    console.print(f"B's mean score minus A's: {r.mean_difference:+.4f}", highlight=False)
    console.print(
        f"paired   (twin games):        sd {r.paired_sd:.4f} per unit · {games(r.paired_games)} games to resolve it",
        highlight=False,
    )
    console.print(
        f"unpaired (independent deals): sd {r.unpaired_sd:.4f} per unit · {games(r.unpaired_games)} games to resolve it",
        highlight=False,
    )
    console.print(
        f"ratio    unpaired ÷ paired games: {r.ratio:.2f} (95%: {r.ratio_low:.2f} to {r.ratio_high:.2f}, resampled pairs)",
        highlight=False,
    )


#: The commands of this module by name, for the app to register.
COMMANDS = {"match": match_command}
