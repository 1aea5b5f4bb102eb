"""The public pages and their JSON twins: the leaderboard, each bot's page, the games list, the
replay viewer, and the stream of change events that keeps an open page live.

Every page is drawn on the server (usable without JavaScript); ``live.js`` listens to
``/api/events`` and, when the store changed, fetches the same page again and puts its new
``<main>`` in place: one way of drawing, whether a page is loaded or refreshed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.params import Parameter
from litestar.response import ServerSentEvent, Template
from litestar.response.sse import ServerSentEventMessage

from arena.report.figures import script_json
from arena.web.data import NotFoundError, PublicData

TournamentQuery = Annotated[
    str | None, Parameter(query="tournament", max_length=200, description="A tournament id (default: the ladder's).")
]
LimitQuery = Annotated[int, Parameter(ge=1, le=500, description="At most this many games.")]
BotQuery = Annotated[str | None, Parameter(query="bot", max_length=200, description="Only games where this bot sat (name or name@hash).")]


def data_of(request: Request) -> PublicData:
    return request.app.state.data


def viewer_of(request: Request) -> tuple[set[str], bool]:
    """The bot names whose stderr and debug values this request may read, and whether all."""
    viewer = getattr(request.app.state, "viewer", None)
    return viewer(request) if viewer is not None else (set(), False)


def page(request: Request, name: str, **context: Any) -> Template:
    """A page of the site, with what every page's frame shows."""
    whoami = getattr(request.app.state, "whoami", None)
    context.setdefault("team", whoami(request) if whoami is not None else None)
    context.setdefault("title", request.app.state.title)
    context.setdefault("site", request.app.state.title)
    return Template(template_name=name, context=context)


def json_bytes(body: bytes) -> Response[bytes]:
    return Response(body, media_type="application/json")


def anonymous(request: Request) -> bool:
    """A request with no session and no token: it gets what everyone gets."""
    return "authorization" not in request.headers and not any(k.startswith("arena_") for k in request.cookies)


def render(request: Request, name: str, **context: Any) -> bytes:
    """A page drawn here (not by the framework after the handler), so that it can be kept."""
    whoami = getattr(request.app.state, "whoami", None)
    context.setdefault("team", whoami(request) if whoami is not None else None)
    context.setdefault("title", request.app.state.title)
    context.setdefault("site", request.app.state.title)
    return request.app.template_engine.get_template(name).render(**context).encode()


async def kept_response(request: Request, key: Any, build: Any, media_type: str) -> Response[bytes]:
    """What ``build()`` (run in a worker thread) returns, kept for anonymous requests while
    the store is unchanged: 50 clients asking for the leaderboard cost one computation, and
    each of them a look-up in the event loop, with no thread."""
    data = data_of(request)
    shared = anonymous(request)
    if shared:
        body = data.response(key)
        if body is not None:
            return Response(body, media_type=media_type)
    version = data.data_version()
    body = await asyncio.to_thread(build)
    if shared:
        data.keep_response(key, version, body)
    return Response(body, media_type=media_type)


# -- the leaderboard ------------------------------------------------------------------------


@get("/api/leaderboard", tags=["public"], summary="The leaderboard")
async def api_leaderboard(request: Request, tournament: TournamentQuery = None) -> Response[bytes]:
    """The same object as `arena leaderboard --tournament T --json` (T: the ladder's tournament
    unless `tournament` names another): `tournament`, `format`, `games`, `rows` (each with
    `rank`, `bot`, `version`, `key`, `elo`, `elo_low`, `elo_high`, `games`, `wins`, ...), `skipped`."""
    data = data_of(request)
    return await kept_response(
        request, ("api/leaderboard", tournament), lambda: data.leaderboard_json(data.tournament_id(tournament)),
        "application/json",
    )


@get("/", include_in_schema=False)
async def leaderboard_page(request: Request, tournament: TournamentQuery = None) -> Response[bytes]:
    data = data_of(request)

    def build() -> bytes:
        try:
            tid = data.tournament_id(tournament)
        except NotFoundError as exc:
            if tournament is not None:
                raise
            return render(request, "leaderboard.html", board=None, empty=str(exc), tournaments=[])
        board = data.leaderboard(tid).to_dict()
        return render(request, "leaderboard.html", board=board, tid=tid, tournaments=data.tournaments(), live=True)

    return await kept_response(request, ("page /", tournament), build, "text/html; charset=utf-8")


# -- a bot ----------------------------------------------------------------------------------


def bot_figures(data: PublicData, tid: str, name: str) -> dict[str, Any]:
    """A bot's page as data: its leaderboard row, rating over time, head to head, recent games."""
    board = data.leaderboard(tid, h2h=True)
    rows = [r for r in board.rows if name in (r["key"], r["bot"])]
    if not rows:
        raise NotFoundError(f"no bot {name!r} in the leaderboard of {tid}")
    row = rows[0]
    key = row["key"]
    timeline = data.timeline(tid)
    series = (timeline.get("elo") or {}).get(key) or []
    marks = timeline.get("games") or []
    labels = {r["key"]: r["label"] for r in board.rows}
    h2h = [
        {"opponent": labels.get(other, other), "key": other, "wins": w, "draws": d, "losses": lo}
        for other, (w, d, lo) in sorted((board.h2h or {}).get(key, {}).items())
    ]
    return {
        "tournament": tid,
        "bot": row["bot"],
        "key": key,
        "row": row,
        "rating": [{"games": g, "elo": e} for g, e in zip(marks, series, strict=False) if e is not None],
        "head_to_head": h2h,
        "recent_games": data.recent_games(tid, limit=20, bot=key),
    }


@get("/api/bots/{name:str}", sync_to_thread=True, tags=["public"], summary="One bot")
def api_bot(request: Request, name: str, tournament: TournamentQuery = None) -> dict[str, Any]:
    """A bot's leaderboard row, its Elo after each mark of games (`rating`), its wins, draws
    and losses against each opponent (`head_to_head`) and its recent games. `name`: the bot's
    name, or name@hash for one version."""
    data = data_of(request)
    return bot_figures(data, data.tournament_id(tournament), name)


@get("/bots/{name:str}", sync_to_thread=True, include_in_schema=False)
def bot_page(request: Request, name: str, tournament: TournamentQuery = None) -> Template:
    data = data_of(request)
    figures = bot_figures(data, data.tournament_id(tournament), name)
    return page(request, "bot.html", bot=figures, chart=rating_chart(figures["rating"]), live=True)


def rating_chart(points: list[dict[str, Any]], width: int = 600, height: int = 200) -> dict[str, Any] | None:
    """The rating over time as an SVG polyline's numbers (drawn without JavaScript)."""
    if len(points) < 2:
        return None
    xs = [p["games"] for p in points]
    ys = [p["elo"] for p in points]
    lo, hi = min(ys) - 20, max(ys) + 20
    x0, x1 = xs[0], xs[-1] if xs[-1] > xs[0] else xs[0] + 1
    pad = 30

    def x(v: float) -> float:
        return round(pad + (v - x0) / (x1 - x0) * (width - 2 * pad), 1)

    def y(v: float) -> float:
        return round(height - pad - (v - lo) / (hi - lo) * (height - 2 * pad), 1)

    return {
        "width": width, "height": height, "points": " ".join(f"{x(a)},{y(b)}" for a, b in zip(xs, ys, strict=True)),
        "low": round(lo), "high": round(hi), "first": xs[0], "last": xs[-1], "pad": pad,
    }


# -- games ----------------------------------------------------------------------------------


@get("/api/games", sync_to_thread=True, tags=["public"], summary="Recent games")
def api_games(
    request: Request, tournament: TournamentQuery = None, limit: LimitQuery = 50, bot: BotQuery = None
) -> dict[str, Any]:
    """The tournament's latest games, newest first, each with its seats (bot, points, rank,
    faults) and its replay links: `replay` (the viewer's page) and `replay_data` (its JSON)."""
    data = data_of(request)
    tid = data.tournament_id(tournament)
    return {"tournament": tid, "games": data.recent_games(tid, limit=limit, bot=bot)}


@get("/games", sync_to_thread=True, include_in_schema=False)
def games_page(request: Request, tournament: TournamentQuery = None, bot: BotQuery = None) -> Template:
    data = data_of(request)
    try:
        tid = data.tournament_id(tournament)
    except NotFoundError as exc:
        if tournament is not None:
            raise
        return page(request, "games.html", games=[], empty=str(exc))
    return page(request, "games.html", games=data.recent_games(tid, limit=100, bot=bot), tid=tid, bot=bot, live=True)


@get("/api/games/{game_id:str}/replay", sync_to_thread=True, tags=["public"], summary="One game's replay")
def api_replay(request: Request, game_id: str) -> dict[str, Any]:
    """What the replay viewer shows of one game: every step, the faults, the result. Each
    seat's stderr and debug values only for its own team (and the admin)."""
    own, everything = viewer_of(request)
    return data_of(request).game_view(game_id, own_bots=own, everything=everything)


@get("/games/{game_id:str}", sync_to_thread=True, include_in_schema=False)
def replay_page(request: Request, game_id: str) -> Template:
    row, tournaments = data_of(request).game(game_id)
    return page(request, "replay.html", game=row, tournaments=tournaments)


@get("/games/{game_id:str}/data.js", sync_to_thread=True, include_in_schema=False)
def replay_script(request: Request, game_id: str) -> Response[str]:
    """The game's view as the report's viewer reads it (a script: the page's policy allows no
    inline one). Never cached: what it shows depends on who asks."""
    own, everything = viewer_of(request)
    view = data_of(request).game_view(game_id, own_bots=own, everything=everything)
    body = f"window.ARENA_GAMES={{{script_json(game_id)}:{script_json(view)}}};"
    return Response(body, media_type="text/javascript", headers={"cache-control": "private, no-store"})


# -- live updates ---------------------------------------------------------------------------

#: How often an open event stream looks for a change, and the least time between two events.
EVENT_POLL_S = 1.0


@get("/api/events", tags=["public"], summary="Change events (server-sent)")
async def api_events(request: Request) -> ServerSentEvent:
    """A server-sent event stream: a `change` event (data: `{"version": N}`, a number that
    differs from the last) whenever the
    store changed (games recorded, submissions moving through the queue), at most one a second.
    Pages fetch themselves again on it."""
    data = data_of(request)

    async def changes() -> AsyncIterator[ServerSentEventMessage]:
        last = data.data_version()
        yield ServerSentEventMessage(event="ready", data=json.dumps({"version": _number(last)}), retry=3000)
        while True:
            # (A client that goes away ends the stream: the response listens for its disconnect.)
            await asyncio.sleep(EVENT_POLL_S)
            version = data.data_version()
            if version != last:
                last = version
                yield ServerSentEventMessage(event="change", data=json.dumps({"version": _number(version)}))

    return ServerSentEvent(changes(), headers={"cache-control": "no-store", "x-accel-buffering": "no"})


def _number(stamp: tuple[int, ...]) -> int:
    """The store's change stamp as one number for a client (it only compares them)."""
    return hash(stamp) & 0xFFFFFFFFFFFF


ROUTES = [
    api_leaderboard, leaderboard_page, api_bot, bot_page, api_games, games_page, api_replay, replay_page,
    replay_script, api_events,
]
