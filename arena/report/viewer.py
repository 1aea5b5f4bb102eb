"""One game as the replay viewer (``assets/viewer.js``) draws it: the card table of
``cards.js`` (the engine's cards and how each kind is drawn: label, colour, ink) and
:func:`game_view`, a replay turned into the viewer's data and checked as it goes
(:class:`GameDataError` when its turns and events disagree)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.engine.cards import (
    CHOPSTICKS,
    DECK_COUNTS,
    DUMPLING,
    KIND_INDEX,
    KINDS,
    MAKI_SYMBOLS,
    NIGIRI_VALUE,
    SASHIMI,
    TEMPURA,
    WASABI_FACTOR,
)
from arena.engine.scoring import maki_points, maki_symbols, set_points
from arena.game.replay import Replay

#: Bumped whenever the shape of ``data.js`` or of a game file changes.
REPORT_FORMAT = 1


#: The Okabe–Ito palette: eight colours that people with the common forms of colour
#: blindness can still tell apart. Bots are drawn in this order in the plots.
OKABE_ITO: dict[str, str] = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}

#: How a card kind is drawn: a short label and its colour. The label always names the
#: card, so that the colour is never the only cue. Values, counts and maki symbols are
#: not here: they come from :mod:`arena.engine.cards`.
CARD_LOOK: dict[str, tuple[str, str]] = {
    "tempura": ("tempura", OKABE_ITO["orange"]),
    "sashimi": ("sashimi", OKABE_ITO["green"]),
    "dumpling": ("dumpling", OKABE_ITO["sky"]),
    "maki1": ("maki", OKABE_ITO["vermillion"]),
    "maki2": ("maki", OKABE_ITO["vermillion"]),
    "maki3": ("maki", OKABE_ITO["vermillion"]),
    "salmon_nigiri": ("salmon", OKABE_ITO["yellow"]),
    "squid_nigiri": ("squid", OKABE_ITO["yellow"]),
    "egg_nigiri": ("egg", OKABE_ITO["yellow"]),
    "pudding": ("pudding", OKABE_ITO["purple"]),
    "wasabi": ("wasabi", OKABE_ITO["blue"]),
    "chopsticks": ("chop\u00adsticks", "#FFFFFF"),  # a soft hyphen: it breaks there on a narrow card
}

#: The parts of a round's score, in the order the viewer shows them (pudding is scored at
#: the end of the game only).
SCORE_PARTS = ("maki", "tempura", "sashimi", "dumpling", "nigiri")
FAULT_STATUSES = frozenset({"timeout", "illegal", "malformed", "protocol", "crash"})


class GameDataError(ValueError):
    """A replay that was read but does not hold up (events and turns disagree, say)."""


# -- the card table ------------------------------------------------------------------------


def _luminance(colour: str) -> float:
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def ink_for(colour: str) -> str:
    """Black or white text, whichever contrasts more with ``colour`` (WCAG ratio)."""
    lum = _luminance(colour)
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#FFFFFF"


def card_table() -> dict[str, Any]:
    """The card table as the pages use it, straight from the engine's, plus how to draw it."""
    missing = set(KINDS) ^ set(CARD_LOOK)
    if missing:  # a new card kind needs a look before the report can draw it
        raise AssertionError(f"CARD_LOOK and the engine's card kinds differ: {sorted(missing)}")
    kinds = []
    for k, name in enumerate(KINDS):
        label, colour = CARD_LOOK[name]
        kinds.append(
            {
                "name": name,
                "label": label,
                "count": DECK_COUNTS[k],
                "maki": MAKI_SYMBOLS[k],
                "nigiri": NIGIRI_VALUE[k],
                "colour": colour,
                "ink": ink_for(colour),
            }
        )
    return {
        "kinds": kinds,
        "wasabi_factor": WASABI_FACTOR,
        "score_parts": list(SCORE_PARTS),
        "palette": list(OKABE_ITO.values()),
        "fault_statuses": sorted(FAULT_STATUSES),
    }


# -- one game, for the viewer --------------------------------------------------------------


def _only(counts: Sequence[int], kind: int) -> list[int]:
    return [c if k == kind else 0 for k, c in enumerate(counts)]


def round_breakdown(counts: Sequence[int], nigiri: int, maki: int) -> dict[str, int]:
    """One seat's round points by part, with the engine's own scoring functions applied to
    each kind alone (``nigiri`` already holds the wasabi tripling, ``maki`` the majority
    points of the table)."""
    return {
        "maki": maki,
        "tempura": set_points(_only(counts, TEMPURA), 0),
        "sashimi": set_points(_only(counts, SASHIMI), 0),
        "dumpling": set_points(_only(counts, DUMPLING), 0),
        "nigiri": nigiri,
    }


def _act(action: Any) -> dict[str, Any]:
    """What the viewer says of one action besides its time: the usual ``ok`` is ``{}``."""
    out: dict[str, Any] = {}
    if action.status != "ok":
        out["status"] = action.status
    if action.message:
        out["message"] = action.message
    if action.debug is not None:
        out["debug"] = action.debug
    return out


def game_view(replay: Replay) -> dict[str, Any]:
    """Everything the viewer shows of one game, as steps it can walk forwards and back.

    Steps: one ``turn`` per turn record (the hands before the choice, the cards that
    entered each tableau, nigiri placed on wasabi, chopsticks returned, each seat's
    status, time and debug value); one ``end`` per round (the last cards played for the
    players, the points by part); one ``over`` (puddings and the final ranking). A replay
    whose turns and events disagree raises :class:`GameDataError` saying where.
    """
    seats = len(replay.seats)
    try:
        kind_of = [KIND_INDEX[name] for name in replay.cards]
    except KeyError as exc:
        raise GameDataError(f"unknown card kind {exc.args[0]!r} (rules {replay.rules_version})") from None
    turns = {(t.round, t.turn): t for t in replay.turns}
    steps: list[dict[str, Any]] = []
    counts = [[0] * len(KINDS) for _ in range(seats)]
    nigiri = [0] * seats

    def enter(seat: int, card: int, on_wasabi: set[int]) -> None:
        if not 0 <= card < len(kind_of):
            raise GameDataError(f"card {card} is not in this game's deck")
        kind = kind_of[card]
        counts[seat][kind] += 1
        if NIGIRI_VALUE[kind]:
            nigiri[seat] += NIGIRI_VALUE[kind] * (WASABI_FACTOR if card in on_wasabi else 1)

    def check_seat(seat: Any, where: str) -> int:
        if not isinstance(seat, int) or not 0 <= seat < seats:
            raise GameDataError(f"{where}: seat {seat!r} is not at this table")
        return seat

    dealt: list[dict[str, Any]] = []
    for ev in replay.event_dicts():
        if not isinstance(ev, dict):
            raise GameDataError(f"an event is not an object: {ev!r}")
        typ = ev.get("type")
        if typ == "round_start":
            dealt.append({"round": ev["round"], "direction": ev["direction"], "hand_size": ev["hand_size"]})
        elif typ == "reveal":
            rnd, turn_no = ev["round"], ev["turn"]
            where = f"round {rnd} turn {turn_no}"
            record = turns.pop((rnd, turn_no), None)
            if record is None:
                raise GameDataError(f"{where}: cards were revealed but there is no turn record")
            wasabi = [[w["seat"], w["nigiri"], w["wasabi"]] for w in ev.get("wasabi", [])]
            on_wasabi = {w[1] for w in wasabi}
            plays: list[list[int]] = [[] for _ in range(seats)]
            returned = []
            for play in ev["plays"]:
                seat = check_seat(play["seat"], where)
                plays[seat] = [c["id"] for c in play["cards"]]
                for card in plays[seat]:
                    enter(seat, card, on_wasabi)
                back = play.get("chopsticks_returned")
                if back is not None:
                    returned.append([seat, back])
                    counts[seat][CHOPSTICKS] -= 1
            # Per seat: the answer's time, and (only when there is something to say) the
            # action's status, message and debug value; None for a seat that did not act.
            acts: list[dict[str, Any] | None] = [None] * seats
            times: list[float | None] = [None] * seats
            for action in record.actions:
                seat = check_seat(action.seat, where)
                acts[seat] = _act(action)
                times[seat] = None if action.elapsed_ms is None else round(action.elapsed_ms, 2)
            step: dict[str, Any] = {
                "kind": "turn", "round": rnd, "turn": turn_no, "hands": record.hands, "plays": plays, "ms": times,
            }
            if any(acts):
                step["acts"] = acts
            if record.controller is not None:
                step["controller"] = record.controller
            if wasabi:
                step["wasabi"] = wasabi
            if returned:
                step["returned"] = returned
            steps.append(step)
        elif typ == "last_card":
            rnd = ev["round"]
            wasabi = [[w["seat"], w["nigiri"], w["wasabi"]] for w in ev.get("wasabi", [])]
            on_wasabi = {w[1] for w in wasabi}
            plays = [[] for _ in range(seats)]
            for c in ev["cards"]:
                seat = check_seat(c["seat"], f"round {rnd}, last cards")
                plays[seat].append(c["id"])
                enter(seat, c["id"], on_wasabi)
            step = {"kind": "end", "round": rnd, "plays": plays}
            if wasabi:
                step["wasabi"] = wasabi
            steps.append(step)
        elif typ == "round_end":
            rnd = ev["round"]
            if not (steps and steps[-1]["kind"] == "end" and steps[-1]["round"] == rnd):
                steps.append({"kind": "end", "round": rnd, "plays": [[] for _ in range(seats)]})
            maki = maki_points([maki_symbols(c) for c in counts])
            if maki != list(ev["maki_points"]):
                raise GameDataError(f"round {rnd}: maki points {ev['maki_points']} but the tableaus give {maki}")
            parts = [round_breakdown(counts[s], nigiri[s], maki[s]) for s in range(seats)]
            for s in range(seats):
                if sum(parts[s].values()) != ev["points"][s]:
                    raise GameDataError(
                        f"round {rnd}: seat {s} scored {ev['points'][s]} but its cards give {parts[s]}"
                    )
            steps[-1].update(
                points=list(ev["points"]), maki_symbols=list(ev["maki_symbols"]), breakdown=parts,
                scores=list(ev["scores"]),
            )
            counts = [[0] * len(KINDS) for _ in range(seats)]
            nigiri = [0] * seats
        elif typ == "game_end":
            steps.append(
                {
                    "kind": "over",
                    "scores": list(ev["scores"]),
                    "puddings": list(ev["puddings"]),
                    "pudding_points": list(ev["pudding_points"]),
                    "ranks": replay.result.ranks if replay.result is not None else list(ev["ranks"]),
                }
            )
    if turns:
        (rnd, turn_no), _ = min(turns.items())
        raise GameDataError(f"round {rnd} turn {turn_no}: a turn record without revealed cards")
    result = None
    if replay.result is not None:
        r = replay.result
        result = {
            "scores": r.scores, "puddings": r.puddings, "ranks": r.ranks, "rules_ranks": r.rules_ranks,
            "pudding_points": r.pudding_points, "autopilot": r.autopilot,
        }
    return {
        "format": REPORT_FORMAT,
        "id": replay.game_id,
        "seed": str(replay.seed),  # JavaScript numbers would round a 64-bit seed
        "variant": replay.variant,
        "players": replay.config.get("players", seats),
        "rules_version": replay.rules_version,
        "arena_version": replay.arena_version,
        "status": replay.status,
        "void_reason": replay.void_reason,
        "seats": [{"bot": s.bot, "version": s.version, "hash": s.hash} for s in replay.seats],
        "cards": kind_of,
        "rounds": dealt,
        "steps": steps,
        "faults": [{"seat": f.seat, "round": f.round, "turn": f.turn, "kind": f.kind, "message": f.message} for f in replay.faults],
        "stderr": list(replay.stderr),
        "result": result,
        "timing": {
            "started": replay.timing.get("started"),
            "duration_s": replay.timing.get("duration_s"),
            "mean_ms": replay.timing.get("mean_ms"),
            "max_ms": replay.timing.get("max_ms"),
        },
    }
