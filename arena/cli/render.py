"""Rich rendering of games and replays for the terminal (play, replay, the human seat),
and SafeConsole, the console class every command prints through."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.table import Table
from rich.text import Span, Text

from arena.game.replay import FaultRecord, Replay
from arena.text import LINE_LIMIT, NAME_LIMIT, has_unsafe, printable, unsafe_positions, visible_json

#: How much of a bot's debug value one decision shows (the replay keeps up to 4 KiB of it).
DEBUG_LIMIT = 300
#: How much of a bot's stderr the game view shows: its last lines, each cut.
STDERR_LINES = 20
STDERR_LINE_LIMIT = 240


class SafeConsole(Console):
    """A rich console through which no text drives the terminal: every control character,
    bidi control or line separator in what it prints (a bot's version or stderr, a seat
    name read from a replay, an error message quoting a file) comes out as a visible
    escape (:func:`arena.text.printable`), while the console's own styles and cursor
    controls work as usual.

    Strings (markup included, and every table cell given as a string) and :class:`Text`
    objects are made printable before they are laid out, so that the columns fit what is
    shown; whatever else reaches the output (a renderable that yields raw segments) is
    made printable segment by segment. Newlines stay: a text that must be one line is
    made so where it is drawn (``printable(name)``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._nested = threading.local()  # a live display renders from its own thread

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(printable(text, multiline=True), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        if isinstance(renderable, Text) and has_unsafe(renderable.plain):
            renderable = printable_text(renderable)
        segments = super().render(renderable, options)
        if getattr(self._nested, "depth", 0):
            return segments  # the outermost render looks at every segment once
        return self._printable_segments(segments)

    def _printable_segments(self, segments: Iterable[Segment]) -> Iterator[Segment]:
        self._nested.depth = getattr(self._nested, "depth", 0) + 1
        try:
            for segment in segments:
                if segment.control is None and has_unsafe(segment.text):
                    segment = Segment(printable(segment.text, multiline=True), segment.style)
                yield segment
        finally:
            self._nested.depth -= 1


class ConsoleLogHandler(logging.Handler):
    """Log records printed through a console (a :class:`SafeConsole`), one line each."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.console.print(Text(printable(self.format(record), multiline=True)), highlight=False)
        except Exception:  # logging must never raise into the caller
            self.handleError(record)


def printable_text(text: Text, *, multiline: bool = True) -> Text:
    """A copy of ``text`` made :func:`~arena.text.printable`, its styles kept on the same
    characters (an escape takes the style of the character it shows)."""
    positions = unsafe_positions(text.plain, multiline=multiline)
    if not positions:
        return text
    new = text.blank_copy()
    for piece in text.divide(sorted({*positions, *(i + 1 for i in positions)})):
        if len(piece.plain) == 1 and has_unsafe(piece.plain, multiline=multiline):
            shown = printable(piece.plain, multiline=multiline)
            escape = Text(shown, style=piece.style)
            escape.spans = [Span(0, len(shown), span.style) for span in piece.spans]
            new.append_text(escape)
        else:
            new.append_text(piece)
    return new


def name_text(name: str, style: str = "") -> Text:
    """A bot's or a seat's name as one short line (it came from a bot.toml or a replay)."""
    return Text(printable(name, limit=NAME_LIMIT), style=style)


SHORT = {
    "tempura": "tempura",
    "sashimi": "sashimi",
    "dumpling": "dumpling",
    "maki1": "maki1",
    "maki2": "maki2",
    "maki3": "maki3",
    "salmon_nigiri": "salmon",
    "squid_nigiri": "squid",
    "egg_nigiri": "egg",
    "pudding": "pudding",
    "wasabi": "wasabi",
    "chopsticks": "chopsticks",
}
STYLE = {
    "tempura": "yellow",
    "sashimi": "green",
    "dumpling": "cyan",
    "maki1": "red",
    "maki2": "red",
    "maki3": "red",
    "salmon_nigiri": "bright_red",
    "squid_nigiri": "magenta",
    "egg_nigiri": "bright_yellow",
    "pudding": "bright_magenta",
    "wasabi": "bright_green",
    "chopsticks": "bright_blue",
}
FAULT_STYLE = "bold red"


def card_text(kind: str, on_wasabi: bool = False) -> Text:
    label = SHORT.get(kind) or printable(kind, limit=NAME_LIMIT)  # an unknown kind comes from a file
    if on_wasabi:
        return Text.assemble(("wasabi+", STYLE["wasabi"]), (label, STYLE.get(kind, "")))
    return Text(label, style=STYLE.get(kind, ""))


def cards_text(kinds: list[str], wasabi_flags: list[bool] | None = None) -> Text:
    out = Text()
    for i, kind in enumerate(kinds):
        if i:
            out.append(" ")
        out.append_text(card_text(kind, bool(wasabi_flags and wasabi_flags[i])))
    return out


def seat_label(replay: Replay, seat: int) -> str:
    info = replay.seats[seat]
    return f"{seat} {printable(info.bot, limit=NAME_LIMIT)}"


def result_table(replay: Replay) -> Table:
    title = f"Game {printable(replay.game_id, limit=NAME_LIMIT)} · {printable(replay.variant, limit=NAME_LIMIT)} · seed {replay.seed}"
    table = Table(title=Text(title), title_justify="left")
    for col, justify in (("rank", "right"), ("seat", "right"), ("bot", "left"), ("points", "right"),
                         ("by round", "left"), ("puddings", "right"), ("pudding", "right"), ("faults", "left")):
        table.add_column(col, justify=justify, no_wrap=col != "faults")  # type: ignore[arg-type]
    if replay.result is None:
        return table
    res = replay.result
    faults: dict[int, dict[str, int]] = {}
    for f in replay.faults:
        faults.setdefault(f.seat, {}).setdefault(f.kind, 0)
        faults[f.seat][f.kind] += 1
    order = sorted(range(len(replay.seats)), key=lambda s: (res.ranks[s], s))
    for s in order:
        rounds = " / ".join(str(r.points[s]) for r in replay.rounds)
        fault_text = Text(", ".join(f"{k} {v}" for k, v in sorted(faults.get(s, {}).items())), style=FAULT_STYLE)
        if res.autopilot[s]:
            fault_text.append(" (ended on autopilot)", style=FAULT_STYLE)
        rank = str(res.ranks[s]) if s < replay.config["players"] else "–"
        table.add_row(
            rank, str(s), name_text(replay.seats[s].bot), str(res.scores[s]), rounds, str(res.puddings[s]),
            f"{res.pudding_points[s]:+d}" if res.pudding_points[s] else "", fault_text,
        )
    return table


def outside_faults(replay: Replay) -> tuple[list[FaultRecord], list[FaultRecord]]:
    """The faults outside any turn (round 0), split into those of the start (hello,
    game_start: before the first turn) and the others (game_over: after the last turn)."""
    before: list[FaultRecord] = []
    after: list[FaultRecord] = []
    for f in replay.faults:
        if f.round == 0:
            (before if f.message.startswith(_START_PREFIXES) else after).append(f)
    return before, after


_START_PREFIXES = ("game_start:", "hello:")


def render_outside_faults(console: Console, replay: Replay, faults: list[FaultRecord], title: str) -> None:
    """A short block of faults outside the turns: seat, bot, kind and message of each."""
    if not faults:
        return
    console.print(Text(title, style="bold"))
    for f in faults:
        bot = replay.seats[f.seat].bot if 0 <= f.seat < len(replay.seats) else "?"
        line = Text(f"  seat {f.seat} {printable(bot, limit=NAME_LIMIT)} · ")
        line.append(printable(f.kind, limit=NAME_LIMIT), style=FAULT_STYLE)
        line.append(f": {printable(f.message, limit=LINE_LIMIT)}", style="red")
        console.print(line)


def render_game(console: Console, replay: Replay, *, verbose: bool = False, only: tuple[int, int] | None = None) -> None:
    """Print a game: the faults of its start, every turn (when ``verbose`` or ``only``),
    the faults after its last turn, then the result. With ``only`` (one turn), the faults
    outside the turns are left out."""
    before, after = outside_faults(replay) if only is None else ([], [])
    render_outside_faults(console, replay, before, "Before the first turn")
    if verbose or only is not None:
        render_turns(console, replay, only=only)
    render_outside_faults(console, replay, after, "After the last turn" if verbose else "Outside the turns")
    if verbose and only is None:
        render_stderr(console, replay)
    if replay.status == "void":
        reason = (replay.void_reason.splitlines() or [""])[0]
        console.print(Text(f"The game was void (not rated): {printable(reason, limit=LINE_LIMIT)}", style=FAULT_STYLE))
        return
    console.print(result_table(replay))


def debug_text(debug: Any, limit: int = DEBUG_LIMIT) -> str:
    """A bot's debug value as one line of JSON (a string as it is), cut to ``limit``
    characters, every character that could drive a terminal escaped."""
    if isinstance(debug, str):
        return printable(debug, limit=limit)
    try:
        encoded = json.dumps(debug, ensure_ascii=False, separators=(", ", ": "))
    except RecursionError:  # nested near the decoder's depth limit: compact, from C
        try:
            encoded = msgspec.json.encode(debug).decode()
        except (RecursionError, TypeError, ValueError):
            return "(a value nested too deeply to show)"
    except (TypeError, ValueError):  # not JSON data (a replay's values are)
        return "(a value that is not JSON)"
    return printable(visible_json(encoded[: limit + 1]), limit=limit)


def stderr_tail(text: str, lines: int = STDERR_LINES, width: int = STDERR_LINE_LIMIT) -> tuple[list[str], int]:
    """The last ``lines`` lines of ``text``, each made printable and cut to ``width``
    characters, and how many lines came before them."""
    all_lines = text.rstrip().splitlines()
    tail = all_lines[-lines:]
    return [printable(line, limit=width) for line in tail], len(all_lines) - len(tail)


def render_stderr(console: Console, replay: Replay) -> None:
    """What each seat's bot wrote to stderr during the game (the tail the replay keeps),
    its last lines; nothing when no bot wrote anything."""
    if not any(text.strip() for text in replay.stderr):
        return
    console.rule(Text("What each bot wrote to stderr (the last part)"))
    for seat, text in enumerate(replay.stderr):
        if seat >= len(replay.seats) or seat >= replay.config["players"]:
            break
        label = Text(f"seat {seat_label(replay, seat)}: ", style="bold")
        if not text.strip():
            console.print(label + Text("nothing", style="dim"))
            continue
        lines, before = stderr_tail(text)
        more = f" (the last {len(lines)} lines; {before} before them)" if before else ""
        console.print(label + Text(f"{len(text):,} characters kept{more}", style="dim"))
        console.print(Text("\n".join(lines), style="dim"))


def shown_turns(replay: Replay) -> dict[int, list[int]]:
    """Per round, the turns :func:`render_turns` can show (the last card, played for
    everyone, included), in order."""
    turns: dict[int, list[int]] = {}
    for ev in replay.event_dicts():
        if ev["type"] in ("reveal", "last_card"):
            turns.setdefault(ev["round"], []).append(ev["turn"])
    return turns


def render_turns(console: Console, replay: Replay, *, only: tuple[int, int] | None = None) -> None:
    kinds = replay.cards
    seats = len(replay.seats)
    tableaus: list[list[int]] = [[] for _ in range(seats)]
    on_wasabi: set[int] = set()
    puddings = [0] * seats
    turns = {(t.round, t.turn): t for t in replay.turns}
    faults = {(f.round, f.turn, f.seat): f for f in replay.faults}
    shown = False
    for ev in replay.event_dicts():
        kind = ev["type"]
        if kind == "round_start":
            if only is None or only[0] == ev["round"]:
                console.rule(Text(printable(f"Round {ev['round']} · passing {ev['direction']} · {ev['hand_size']} cards")))
        elif kind in ("reveal", "last_card"):
            rnd, turn = ev["round"], ev["turn"]
            if kind == "reveal":
                entered = {p["seat"]: [c["id"] for c in p["cards"]] for p in ev["plays"]}
                for p in ev["plays"]:
                    tableaus[p["seat"]].extend(c["id"] for c in p["cards"])
                    if p["chopsticks_returned"] is not None:
                        tableaus[p["seat"]].remove(p["chopsticks_returned"])
            else:
                entered = {c["seat"]: [c["id"]] for c in ev["cards"]}
                for c in ev["cards"]:
                    tableaus[c["seat"]].append(c["id"])
            on_wasabi.update(w["nigiri"] for w in ev["wasabi"])
            if only is not None and (rnd, turn) != only:
                continue
            shown = True
            record = turns.get((rnd, turn))
            title = f"Round {rnd} turn {turn}" + (" (last card, played for everyone)" if kind == "last_card" else "")
            if record is not None and record.controller is not None:
                title += f" · seat {record.controller} controls the dummy"
            table = Table(title=Text(title), title_justify="left", show_lines=False, expand=False)
            table.add_column("seat", no_wrap=True)
            table.add_column("hand")
            table.add_column("took")
            table.add_column("time", justify="right", no_wrap=True)
            table.add_column("tableau")
            debugs: list[tuple[int, Any]] = []
            for s in range(seats):
                elapsed = ""
                hand = Text("")
                took = cards_text([kinds[c] for c in entered.get(s, [])])
                if record is not None:
                    hand = cards_text([kinds[c] for c in record.hands[s]]) if s < len(record.hands) else Text("")
                    action = next((a for a in record.actions if a.seat == s), None)
                    if action is not None and action.elapsed_ms is not None:
                        elapsed = _ms(action.elapsed_ms)
                    if action is not None and action.debug is not None:
                        debugs.append((s, action.debug))
                    if action is not None and action.status not in ("ok", "auto"):
                        took.append(f"  [{printable(action.status, limit=NAME_LIMIT)}]", style=FAULT_STYLE)
                    if action is not None and action.dummy_card is not None:
                        took.append("  → dummy: ")
                        took.append_text(card_text(kinds[action.dummy_card]))
                fault = faults.get((rnd, turn, s))
                if fault is not None:
                    took.append(f"\n{printable(fault.message, limit=LINE_LIMIT)}", style="red")
                tab = cards_text([kinds[c] for c in tableaus[s]], [c in on_wasabi for c in tableaus[s]])
                if puddings[s]:
                    tab.append(f"  (+{puddings[s]} pudding kept)", style="dim")
                table.add_row(Text(seat_label(replay, s)), hand, took, elapsed, tab)
            console.print(table)
            for s, debug in debugs:
                console.print(Text.assemble((f"  seat {seat_label(replay, s)} debug: ", "dim"), debug_text(debug)))
        elif kind == "round_end":
            for s in range(seats):
                puddings[s] += sum(1 for c in tableaus[s] if kinds[c] == "pudding")
            if only is None or only[0] == ev["round"]:
                parts = [f"{seat_label(replay, s)}: {ev['points'][s]:+d} (total {ev['scores'][s]})" for s in range(seats)]
                console.print(Text(f"Round {ev['round']} scored — " + " · ".join(parts), style="bold"))
            tableaus = [[] for _ in range(seats)]
            on_wasabi.clear()
        elif kind == "game_end" and only is None:
            parts = [f"{seat_label(replay, s)}: {ev['pudding_points'][s]:+d}" for s in range(seats)]
            console.print(Text("Puddings — " + " · ".join(parts), style="bold"))
    if only is not None and not shown:
        console.print(Text(f"No turn {only[0]}.{only[1]} in this game", style=FAULT_STYLE))


def replay_summary(replay: Replay) -> dict[str, Any]:
    """The plain summary of a replay, for --json output."""
    return {
        "game_id": replay.game_id,
        "status": replay.status,
        "seed": replay.seed,
        "variant": replay.variant,
        "players": replay.players,
        "seats": [{"seat": s.seat, "bot": s.bot, "version": s.version, "hash": s.hash} for s in replay.seats],
        "rounds": [{"tableaus": r.tableaus, "points": r.points} for r in replay.rounds],
        "result": None
        if replay.result is None
        else {
            "scores": replay.result.scores,
            "puddings": replay.result.puddings,
            "ranks": replay.result.ranks,
            "autopilot": replay.result.autopilot,
        },
        "faults": [{"seat": f.seat, "round": f.round, "turn": f.turn, "kind": f.kind, "message": f.message} for f in replay.faults],
    }


def _play_text(kinds: list[str], cards: list[int], dummy_card: int | None) -> Text:
    out = Text()
    for i, c in enumerate(cards):
        if i:
            out.append(", ")
        out.append_text(card_text(kinds[c]) if 0 <= c < len(kinds) else Text("?", style=FAULT_STYLE))
        out.append(f" #{c}", style="dim")
    if dummy_card is not None:
        out.append("  → dummy: ")
        out.append_text(card_text(kinds[dummy_card]) if 0 <= dummy_card < len(kinds) else Text("?", style=FAULT_STYLE))
        out.append(f" #{dummy_card}", style="dim")
    return out


def _ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.2f} ms" if value < 10 else f"{value:,.0f} ms"


def render_ask(console: Console, report: Any) -> None:
    """Print an :class:`arena.authoring.ask.AskReport`: the position, the bot's answer and time,
    and what the recorded bot did there."""
    act, kinds = report.act, report.kinds
    console.print(
        Text.assemble(
            "Asked ", (printable(report.bot, limit=NAME_LIMIT), "bold"),
            f" for seat {report.seat} at round {report.round} turn {report.turn} ",
            (printable(f"of game {report.game_id} ({report.file})"), "dim"),
        )
    )
    hand = Text("hand: ")
    hand.append_text(_play_text(kinds, [c.id for c in act.hand], None))
    console.print(hand)
    deadline = f"{act.time_ms} ms to answer" if act.time_ms else "no deadline"
    extra = " · it controls the dummy: the answer names the dummy's card" if act.dummy else ""
    console.print(f"{len(act.legal)} legal plays · {deadline}{extra}", highlight=False)
    table = Table(show_header=True, title_justify="left")
    for col in ("", "bot", "played", "status", "time"):
        table.add_column(col, justify="right" if col == "time" else "left")
    if report.answer is not None:
        played = _play_text(kinds, list(report.answer.cards), report.answer.dummy_card)
    else:
        played = Text("no answer", style=FAULT_STYLE)
    status = Text("✓ legal", style="green") if report.legal else Text(
        f"✗ {report.status}: {printable(report.message, limit=LINE_LIMIT)}", style=FAULT_STYLE
    )
    elapsed = _ms(report.elapsed_ms)
    table.add_row("answer", name_text(report.bot), played, status, elapsed)
    rec = report.recorded
    rec_status = Text(printable(rec.status, limit=NAME_LIMIT), style="" if rec.status == "ok" else FAULT_STYLE)
    if rec.message:
        rec_status.append(f": {printable(rec.message, limit=LINE_LIMIT)}")
    rec_elapsed = _ms(rec.elapsed_ms)
    table.add_row("recorded", name_text(report.recorded_bot), _play_text(kinds, rec.cards, rec.dummy_card), rec_status, rec_elapsed)
    console.print(table)
    if report.answer is not None and report.answer.debug is not None:
        console.print(Text.assemble(("its debug value: ", "bold"), debug_text(report.answer.debug)))
    if rec.debug is not None:
        console.print(Text.assemble(("recorded debug value: ", "bold"), debug_text(rec.debug)))
    if report.answer is not None and report.legal:
        same = "the same play as in the recorded game" if report.same_as_recorded else "a different play from the recorded game"
        console.print(same, highlight=False)
    if report.stderr.strip():
        console.print(Text("the bot's stderr:", style="bold"))
        tail = "\n".join(printable(line, limit=LINE_LIMIT) for line in report.stderr.rstrip().splitlines()[-20:])
        console.print(Text(tail, style="dim"))
    console.print(Text("--json prints the act itself, as sent", style="dim"))
