"""The admin's pages and routes (a team made with ``arena team add NAME --admin``): the ladder's
state (paused, waiting and why, games played and in flight, queues), pause and resume, the
teams, the validation queue and the latest submissions and challenges of every team, and the
ladder's standings to publish, as CSV or JSON. Any other team gets 403."""

from __future__ import annotations

import csv
import io
from typing import Annotated, Any

import msgspec
from litestar import Request, Response, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body, Parameter
from litestar.response import Redirect, Template

from arena.competition.errors import Forbidden
from arena.web.public import data_of, page
from arena.web.teams import CsrfForm, TeamsPart, Viewer, checked_form, part_of, submission_doc


def _admin(viewer: Viewer) -> Viewer:
    if not viewer.is_admin:
        raise Forbidden(f"team {viewer.name} is not the admin")
    return viewer


def admin_figures(part: TeamsPart) -> dict[str, Any]:
    """What the admin's page shows: every team, the queue's counts by status, the latest submissions."""
    return {
        "ladder": part.ladder.state().to_dict(),
        "teams": [t.to_dict() for t in part.teams.list()],
        "queue": part.submissions.counts(),
        "submissions": [submission_doc(s) for s in part.submissions.recent(50)],
        "challenges": [c.to_dict() for c in part.ladder.challenges(None, limit=50)],
    }


@get("/admin", include_in_schema=False, sync_to_thread=True)
def admin_page(request: Request) -> Template:
    part = part_of(request)
    viewer = _admin(part.page_viewer(request))
    return page(request, "admin.html", admin=admin_figures(part), team=viewer, live=True)


@get("/api/admin", tags=["admin"], summary="The ladder, teams and queues", sync_to_thread=True)
def api_admin(request: Request) -> dict[str, Any]:
    """The ladder's state (`ladder`: `paused`, `waiting`, `games_played`, `games_in_flight`,
    `queues`, ...), every team (`teams`), the validation queue's counts by status (`queue`),
    the latest submissions and challenges of every team. The admin only: 403 for another team."""
    part = part_of(request)
    _admin(part.api_viewer(request))
    return admin_figures(part)


STANDINGS_COLUMNS = ("rank", "bot", "version", "key", "elo", "elo_low", "elo_high", "games", "wins", "mean_points", "mean_rank")


def standings_csv(board: dict[str, Any]) -> str:
    """The leaderboard's rows as CSV, one per bot (a cell that a spreadsheet would read as a
    formula is quoted with a leading apostrophe)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*STANDINGS_COLUMNS, "faults"])
    for r in board["rows"]:
        cells = [r[c] for c in STANDINGS_COLUMNS] + [sum(r["faults"].values())]
        writer.writerow(["'" + c if isinstance(c, str) and c[:1] in ("=", "+", "-", "@", "\t", "\r") else c for c in cells])
    return buf.getvalue()


@get("/api/admin/standings", tags=["admin"], summary="Export the standings", sync_to_thread=True)
def api_standings(
    request: Request,
    format: Annotated[str, Parameter(query="format", pattern="^(json|csv)$", description="json or csv")] = "json",  # noqa: A002
) -> Response[Any]:
    """The ladder's leaderboard to publish: `format=json` (the object of `GET /api/leaderboard`)
    or `format=csv` (one row per bot). The admin only (a session or a bearer token)."""
    part = part_of(request)
    _admin(part.api_viewer(request))
    data = data_of(request)
    tid = data.tournament_id(None)
    body = data.leaderboard_json(tid)
    if format == "csv":
        text = standings_csv(msgspec.json.decode(body))
        return Response(text, media_type="text/csv; charset=utf-8",
                        headers={"content-disposition": f'attachment; filename="{tid}-standings.csv"'})
    return Response(body, media_type="application/json",
                    headers={"content-disposition": f'attachment; filename="{tid}-standings.json"'})


def _pause(part: TeamsPart, paused: bool) -> dict[str, Any]:
    if paused:
        part.ladder.pause()
    else:
        part.ladder.resume()
    return part.ladder.state().to_dict()


@post("/admin/pause", include_in_schema=False, sync_to_thread=True)
def admin_pause(request: Request, data: Annotated[CsrfForm, Body(media_type=RequestEncodingType.URL_ENCODED)]) -> Any:
    _admin(checked_form(request, data.csrf))
    _pause(part_of(request), True)
    return Redirect("/admin", status_code=303)


@post("/admin/resume", include_in_schema=False, sync_to_thread=True)
def admin_resume(request: Request, data: Annotated[CsrfForm, Body(media_type=RequestEncodingType.URL_ENCODED)]) -> Any:
    _admin(checked_form(request, data.csrf))
    _pause(part_of(request), False)
    return Redirect("/admin", status_code=303)


@post("/api/admin/pause", tags=["admin"], summary="Pause the ladder", status_code=200, sync_to_thread=True)
def api_pause(request: Request) -> dict[str, Any]:
    """The ladder starts no new ranked set (what is being played finishes); its state after."""
    part = part_of(request)
    _admin(part.api_viewer(request, cookie_too=False))
    return _pause(part, True)


@post("/api/admin/resume", tags=["admin"], summary="Resume the ladder", status_code=200, sync_to_thread=True)
def api_resume(request: Request) -> dict[str, Any]:
    """The ladder plays again; its state after."""
    part = part_of(request)
    _admin(part.api_viewer(request, cookie_too=False))
    return _pause(part, False)


ROUTES = [admin_page, api_admin, api_standings, admin_pause, admin_resume, api_pause, api_resume]
